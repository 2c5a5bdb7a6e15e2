/*
 * test_fp12.c — the Fp6/Fp12 tower against an independent oracle: GMP
 * arithmetic in Fp[w]/(w^12 - 2w^6 + 2), which is the same field written as
 * a flat polynomial ring (w^6 = 1 + u and u^2 = -1 give (w^6 - 1)^2 = -1).
 * Checked on random elements: mul, sqr, inv (Fp6 and Fp12), conj, the
 * sparse line product, Frobenius against exponentiation by q, the
 * cyclotomic squaring, and the final exponentiation against the plain power
 * f^(3 (q^12 - 1) / r) with the exponent computed by GMP.
 */
#include "pt_util.h"

static mpz_t q, r;

typedef struct { mpz_t c[12]; } poly;

static void poly_init(poly *p) { for (int i = 0; i < 12; i++) mpz_init(p->c[i]); }
static void poly_clear(poly *p) { for (int i = 0; i < 12; i++) mpz_clear(p->c[i]); }

/* tower element -> flat coefficients: coef of w^k is c(k%2).c(k/2) = a + b u,
 * and u = w^6 - 1 */
static void flatten(poly *p, const czk_fp12 *x)
{
    const czk_fp2 *c[6] = {&x->c0.c0, &x->c1.c0, &x->c0.c1, &x->c1.c1, &x->c0.c2, &x->c1.c2};
    mpz_t a, b;
    mpz_inits(a, b, NULL);
    for (int i = 0; i < 12; i++)
        mpz_set_ui(p->c[i], 0);
    for (int k = 0; k < 6; k++) {
        pt_fp_to_mpz(a, &c[k]->c0);
        pt_fp_to_mpz(b, &c[k]->c1);
        mpz_add(p->c[k], p->c[k], a);
        mpz_sub(p->c[k], p->c[k], b);
        mpz_add(p->c[k + 6], p->c[k + 6], b);
    }
    for (int i = 0; i < 12; i++)
        mpz_mod(p->c[i], p->c[i], q);
    mpz_clears(a, b, NULL);
}

static void poly_mul(poly *out, const poly *x, const poly *y)
{
    mpz_t t[23];
    for (int i = 0; i < 23; i++)
        mpz_init(t[i]);
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 12; j++)
            mpz_addmul(t[i + j], x->c[i], y->c[j]);
    for (int d = 22; d >= 12; d--) {
        mpz_mod(t[d], t[d], q);
        mpz_addmul_ui(t[d - 6], t[d], 2);
        mpz_submul_ui(t[d - 12], t[d], 2);
    }
    for (int i = 0; i < 12; i++)
        mpz_mod(out->c[i], t[i], q);
    for (int i = 0; i < 23; i++)
        mpz_clear(t[i]);
}

static void poly_pow(poly *out, const poly *x, const mpz_t e)
{
    poly acc;
    poly_init(&acc);
    mpz_set_ui(acc.c[0], 1);
    for (long b = (long)mpz_sizeinbase(e, 2) - 1; b >= 0; b--) {
        poly_mul(&acc, &acc, &acc);
        if (mpz_tstbit(e, (mp_bitcnt_t)b))
            poly_mul(&acc, &acc, x);
    }
    for (int i = 0; i < 12; i++)
        mpz_set(out->c[i], acc.c[i]);
    poly_clear(&acc);
}

static int poly_eq(const poly *x, const poly *y)
{
    for (int i = 0; i < 12; i++)
        if (mpz_cmp(x->c[i], y->c[i]) != 0)
            return 0;
    return 1;
}

/* x as an Fp12 element equals the oracle's p */
static int fp12_is(const czk_fp12 *x, const poly *p)
{
    poly f;
    poly_init(&f);
    flatten(&f, x);
    int ok = poly_eq(&f, p);
    poly_clear(&f);
    return ok;
}

static void pow_mpz(czk_fp12 *out, const czk_fp12 *a, const mpz_t e)
{
    size_t n = (mpz_sizeinbase(e, 2) + 63) / 64;
    uint64_t *l = calloc(n, sizeof(uint64_t));
    pt_mpz_to_limbs(l, e, n);
    czk_fp12_pow(out, a, l, n);
    free(l);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 10;
    poly pa, pb, pc, pd;
    mpz_t e;

    mpz_inits(q, r, e, NULL);
    mpz_set_str(q, PT_Q_HEX, 16);
    mpz_set_str(r, PT_R_HEX, 16);
    poly_init(&pa); poly_init(&pb); poly_init(&pc); poly_init(&pd);
    t_seed("test_fp12");

    CHECK(czk_fp_eq(&CZK_FP12_ONE.c0.c0.c0, &CZK_FP_ONE), "CZK_FP12_ONE must hold CZK_FP_ONE");
    CHECK(czk_fp_eq(&CZK_FP6_ONE.c0.c0, &CZK_FP_ONE), "CZK_FP6_ONE must hold CZK_FP_ONE");
    {
        czk_fp12 one = CZK_FP12_ONE;
        CHECK(czk_fp12_is_one(&one), "is_one(1)");
        mpz_set_ui(pa.c[0], 1);
        for (int i = 1; i < 12; i++) mpz_set_ui(pa.c[i], 0);
        CHECK(fp12_is(&one, &pa), "one flattens to 1");
    }

    for (int it = 0; it < iters; it++) {
        czk_fp12 a, b, c, d;
        czk_fp6 a6, b6, c6;

        pt_rand_fp12(&a);
        pt_rand_fp12(&b);
        flatten(&pa, &a);
        flatten(&pb, &b);

        czk_fp12_mul(&c, &a, &b);
        poly_mul(&pc, &pa, &pb);
        CHECK(fp12_is(&c, &pc), "fp12 mul vs GMP (iteration %d)", it);

        czk_fp12_sqr(&c, &a);
        poly_mul(&pc, &pa, &pa);
        CHECK(fp12_is(&c, &pc), "fp12 sqr vs GMP (iteration %d)", it);

        c = a; /* aliasing */
        czk_fp12_mul(&c, &c, &c);
        CHECK(fp12_is(&c, &pc), "fp12 mul aliased vs GMP");

        CHECK(czk_fp12_inv(&c, &a) == 0, "inv of random element");
        czk_fp12_mul(&d, &c, &a);
        CHECK(czk_fp12_is_one(&d), "a * a^-1 == 1 (iteration %d)", it);
        flatten(&pc, &c);
        poly_mul(&pd, &pc, &pa);
        CHECK(mpz_cmp_ui(pd.c[0], 1) == 0, "a * a^-1 == 1 in GMP");

        /* add/sub */
        czk_fp12_add(&c, &a, &b);
        czk_fp12_sub(&c, &c, &b);
        CHECK(czk_fp12_eq(&c, &a), "(a + b) - b == a");

        /* Fp6 on its own: its elements are c0 of an Fp12 element */
        a6 = a.c0;
        b6 = b.c0;
        czk_fp6_mul(&c6, &a6, &b6);
        {
            czk_fp12 x = {a6, CZK_FP6_ZERO}, y = {b6, CZK_FP6_ZERO}, z = {c6, CZK_FP6_ZERO};
            flatten(&pa, &x); flatten(&pb, &y);
            poly_mul(&pc, &pa, &pb);
            CHECK(fp12_is(&z, &pc), "fp6 mul vs GMP");
            czk_fp6_sqr(&c6, &a6);
            z.c0 = c6;
            poly_mul(&pc, &pa, &pa);
            CHECK(fp12_is(&z, &pc), "fp6 sqr vs GMP");
            czk_fp6_mul_v(&c6, &a6);
            z.c0 = c6;
            mpz_set_ui(pd.c[0], 0);
            for (int i = 0; i < 12; i++) mpz_set_ui(pd.c[i], 0);
            mpz_set_ui(pd.c[2], 1); /* v = w^2 */
            poly_mul(&pc, &pa, &pd);
            CHECK(fp12_is(&z, &pc), "fp6 mul_v vs GMP");
            CHECK(czk_fp6_inv(&c6, &a6) == 0, "fp6 inv");
            czk_fp6_mul(&c6, &c6, &a6);
            CHECK(czk_fp6_eq(&c6, &CZK_FP6_ONE), "fp6 a * a^-1 == 1");
            flatten(&pa, &a);
        }

        /* conj == frobenius^6 */
        czk_fp12_conj(&c, &a);
        mpz_pow_ui(e, q, 6);
        poly_pow(&pc, &pa, e);
        CHECK(fp12_is(&c, &pc), "conj == a^(q^6) vs GMP");
        czk_fp12_frobenius(&d, &a, 6);
        CHECK(czk_fp12_eq(&c, &d), "frobenius(6) == conj");

        /* Frobenius vs a^q, a^(q^2), a^(q^3) */
        czk_fp12_frobenius(&c, &a, 1);
        poly_pow(&pc, &pa, q);
        CHECK(fp12_is(&c, &pc), "frobenius(1) vs a^q (iteration %d)", it);
        czk_fp12_frobenius(&c, &a, 2);
        poly_pow(&pd, &pc, q);
        CHECK(fp12_is(&c, &pd), "frobenius(2) vs a^(q^2)");
        czk_fp12_frobenius(&c, &a, 3);
        poly_pow(&pc, &pd, q);
        CHECK(fp12_is(&c, &pc), "frobenius(3) vs a^(q^3)");

        /* sparse product with o0 + o1 v + o4 v w */
        {
            czk_fp2 o0, o1, o4;
            czk_fp12 s = CZK_FP12_ZERO;
            pt_rand_fp2(&o0); pt_rand_fp2(&o1); pt_rand_fp2(&o4);
            s.c0.c0 = o0; s.c0.c1 = o1; s.c1.c1 = o4;
            czk_fp12_mul(&c, &a, &s);
            czk_fp12_mul_014(&d, &a, &o0, &o1, &o4);
            CHECK(czk_fp12_eq(&c, &d), "mul_014 == mul by the sparse element");
        }

        /* cyclotomic squaring on g = a^((q^6-1)(q^2+1)) */
        {
            czk_fp12 g, t;
            czk_fp12_conj(&g, &a);
            czk_fp12_inv(&t, &a);
            czk_fp12_mul(&g, &g, &t);
            czk_fp12_frobenius(&t, &g, 2);
            czk_fp12_mul(&g, &g, &t);
            czk_fp12_sqr(&c, &g);
            czk_fp12_cyclotomic_sqr(&d, &g);
            CHECK(czk_fp12_eq(&c, &d), "cyclotomic sqr == sqr in the cyclotomic subgroup");
            czk_fp12_conj(&c, &g);
            czk_fp12_mul(&c, &c, &g);
            CHECK(czk_fp12_is_one(&c), "g * conj(g) == 1 in the cyclotomic subgroup");
        }
    }

    /* final exponentiation: f^(3 (q^12 - 1) / r), the power snarkjs computes
     * (wasmcurves/zkcrypto hard part; see pairing.c) */
    {
        czk_fp12 a, fe, p1, p3;
        mpz_t e1, rem;
        mpz_inits(e1, rem, NULL);
        mpz_pow_ui(e1, q, 12);
        mpz_sub_ui(e1, e1, 1);
        mpz_tdiv_qr(e1, rem, e1, r);
        CHECK(mpz_sgn(rem) == 0, "r divides q^12 - 1");
        for (int it = 0; it < 2; it++) {
            pt_rand_fp12(&a);
            czk_final_exp(&fe, &a);
            pow_mpz(&p1, &a, e1);
            mpz_mul_ui(e, e1, 3);
            pow_mpz(&p3, &a, e);
            CHECK(!czk_fp12_eq(&fe, &p1), "final exp is not the textbook f^((q^12 - 1) / r)");
            CHECK(czk_fp12_eq(&fe, &p3), "final exp == f^(3 (q^12 - 1) / r)");
            /* the result has order dividing r */
            pow_mpz(&p1, &fe, r);
            CHECK(czk_fp12_is_one(&p1), "final exp result has order dividing r");
        }
        mpz_clears(e1, rem, NULL);
    }

    poly_clear(&pa); poly_clear(&pb); poly_clear(&pc); poly_clear(&pd);
    mpz_clears(q, r, e, NULL);
    if (t_failures) {
        fprintf(stderr, "test_fp12: %d checks failed\n", t_failures);
        return 1;
    }
    fprintf(stderr, "test_fp12: ok\n");
    return 0;
}
