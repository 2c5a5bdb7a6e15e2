/*
 * test_bn254_pairing.c — BN254's tower, final exponentiation and optimal ate
 * pairing (common/crypto/bn254_pairing.h):
 *   - Fp12 multiplication, squaring and the sparse line product against a
 *     GMP schoolbook product of polynomials in w over Fp2 with w^6 = 9 + u;
 *     inversion, conjugation, the Frobenius map against exponentiation by p
 *     (p from GMP), cyclotomic squaring in the cyclotomic subgroup;
 *   - the final exponentiation against f^((p^6-1)(p^2+1) h) with the
 *     hard-part exponent h derived here by GMP from u, and h checked to be
 *     2u(6u^2+3u+1) (p^4-p^2+1)/r with 2u(6u^2+3u+1) coprime to r;
 *   - bilinearity e(aP, bQ) = e(P, Q)^(ab), non-degeneracy, e^r = 1, the
 *     multi-pairing product check (more pairs than one Miller batch,
 *     infinity pairs).
 * The comparison with an independent implementation (ffjavascript) is
 * test_bn254_oracle.  Usage: test_bn254_pairing [iterations]
 */
#include <errno.h>
#include <stdlib.h>

#include "common/crypto/bn254_pairing.h"
#include "tests/bn254/bn_util.h"

#define BN_U 4965661367192848881ULL

static czk_bn254_fp2 *coef(czk_bn254_fp12 *a, int k)
{
    czk_bn254_fp6 *h = k % 2 ? &a->c1 : &a->c0;
    return k / 2 == 0 ? &h->c0 : k / 2 == 1 ? &h->c1 : &h->c2;
}

static void rand_fp12(czk_bn254_fp12 *a)
{
    g_fp2 g;
    g2_init(&g);
    for (int k = 0; k < 6; k++) {
        g2_rand(&g);
        fp2_set(coef(a, k), &g);
    }
    g2_clear(&g);
}

/* GMP: c = a b in Fp2[w]/(w^6 - xi) */
static void gmp_fp12_mul(czk_bn254_fp12 *c, czk_bn254_fp12 *a, czk_bn254_fp12 *b)
{
    g_fp2 ga[6], gb[6], acc[11], t, xi;
    g2_init(&t); g2_init(&xi);
    mpz_set_ui(xi.c0, 9);
    mpz_set_ui(xi.c1, 1);
    for (int k = 0; k < 6; k++) {
        g2_init(&ga[k]); g2_init(&gb[k]);
        fp2_get(&ga[k], coef(a, k));
        fp2_get(&gb[k], coef(b, k));
    }
    for (int k = 0; k < 11; k++)
        g2_init(&acc[k]);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) {
            g2_mul(&t, &ga[i], &gb[j]);
            g2_add(&acc[i + j], &acc[i + j], &t);
        }
    for (int k = 10; k >= 6; k--) {
        g2_mul(&t, &acc[k], &xi);
        g2_add(&acc[k - 6], &acc[k - 6], &t);
    }
    for (int k = 0; k < 6; k++)
        fp2_set(coef(c, k), &acc[k]);
    for (int k = 0; k < 6; k++) {
        g2_clear(&ga[k]); g2_clear(&gb[k]);
    }
    for (int k = 0; k < 11; k++)
        g2_clear(&acc[k]);
    g2_clear(&t); g2_clear(&xi);
}

static void mpz_pow_fp12(czk_bn254_fp12 *r, const czk_bn254_fp12 *a, const mpz_t e)
{
    size_t n = (mpz_sizeinbase(e, 2) + 63) / 64;
    uint64_t *l = calloc(n, sizeof(uint64_t));
    size_t cnt = 0;
    mpz_export(l, &cnt, -1, sizeof(uint64_t), 0, 0, e);
    czk_bn254_fp12_pow(r, a, l, n);
    free(l);
}

/* f^((p^6 - 1)(p^2 + 1)) through conj/inv/frobenius (as the easy part) */
static void easy_part(czk_bn254_fp12 *r, const czk_bn254_fp12 *f)
{
    czk_bn254_fp12 t, i;
    czk_bn254_fp12_conj(&t, f);
    czk_bn254_fp12_inv(&i, f);
    czk_bn254_fp12_mul(&t, &t, &i);
    czk_bn254_fp12_frobenius(&i, &t, 2);
    czk_bn254_fp12_mul(r, &i, &t);
}

static void test_tower(int iters)
{
    mpz_t e;
    mpz_init(e);
    CHECK(czk_bn254_fp_eq(&CZK_BN254_FP12_ONE.c0.c0.c0, &CZK_BN254_FP_ONE) &&
              czk_bn254_fp_eq(&CZK_BN254_FP6_ONE.c0.c0, &CZK_BN254_FP_ONE),
          "FP6_ONE / FP12_ONE hold 2^256 mod p");
    for (int it = 0; it < iters; it++) {
        czk_bn254_fp12 a, b, c, d, t;
        rand_fp12(&a);
        rand_fp12(&b);

        czk_bn254_fp12_mul(&c, &a, &b);
        gmp_fp12_mul(&d, &a, &b);
        CHECK(czk_bn254_fp12_eq(&c, &d), "fp12 mul vs GMP it=%d", it);
        czk_bn254_fp12_sqr(&c, &a);
        gmp_fp12_mul(&d, &a, &a);
        CHECK(czk_bn254_fp12_eq(&c, &d), "fp12 sqr vs GMP it=%d", it);

        /* sparse line element o0 + o1 w + o3 v w (w^3 = v w) */
        memset(&t, 0, sizeof(t));
        *coef(&t, 0) = *coef(&b, 0);
        *coef(&t, 1) = *coef(&b, 1);
        *coef(&t, 3) = *coef(&b, 3);
        czk_bn254_fp12_mul_034(&c, &a, coef(&b, 0), coef(&b, 1), coef(&b, 3));
        gmp_fp12_mul(&d, &a, &t);
        CHECK(czk_bn254_fp12_eq(&c, &d), "fp12 mul_034 vs GMP it=%d", it);

        CHECK(czk_bn254_fp12_inv(&c, &a) == 0, "fp12 inv it=%d", it);
        czk_bn254_fp12_mul(&c, &c, &a);
        CHECK(czk_bn254_fp12_is_one(&c), "fp12 a * a^-1 == 1 it=%d", it);

        /* Frobenius = power p, p^2, p^3; conj = power p^6 */
        czk_bn254_fp12_frobenius(&c, &a, 1);
        mpz_pow_fp12(&d, &a, bn_p);
        CHECK(czk_bn254_fp12_eq(&c, &d), "fp12 frobenius 1 = a^p it=%d", it);
        if (it < 3) {
            for (unsigned k = 2; k <= 3; k++) {
                mpz_pow_ui(e, bn_p, k);
                czk_bn254_fp12_frobenius(&c, &a, k);
                mpz_pow_fp12(&d, &a, e);
                CHECK(czk_bn254_fp12_eq(&c, &d), "fp12 frobenius %u it=%d", k, it);
            }
        }
        memset(&c, 0xa5, sizeof(c)); /* c, d hold the equal frobenius and power from above */
        memset(&d, 0x5a, sizeof(d));
        czk_bn254_fp12_frobenius(&c, &a, 6);
        czk_bn254_fp12_conj(&d, &a);
        CHECK(czk_bn254_fp12_eq(&c, &d), "fp12 conj = frobenius 6 it=%d", it);

        /* cyclotomic squaring on an element of the cyclotomic subgroup */
        easy_part(&t, &a);
        czk_bn254_fp12_cyclotomic_sqr(&c, &t);
        czk_bn254_fp12_sqr(&d, &t);
        CHECK(czk_bn254_fp12_eq(&c, &d), "cyclotomic sqr it=%d", it);
    }
    mpz_clear(e);
}

static void test_final_exp(int iters)
{
    mpz_t h, phi, t, e, l, k, n, u, c;
    mpz_inits(h, phi, t, e, l, k, n, u, c, NULL);
    mpz_set_ui(u, BN_U);
    /* L = 12u^3 + 6u^2 + 4u, K = 12u^3 + 6u^2 + 6u, N = 12u^3 + 12u^2 + 6u + 1 */
    mpz_pow_ui(t, u, 3);
    mpz_mul_ui(l, t, 12);
    mpz_pow_ui(t, u, 2);
    mpz_addmul_ui(l, t, 6);
    mpz_set(k, l);
    mpz_addmul_ui(l, u, 4);
    mpz_addmul_ui(k, u, 6);
    mpz_set(n, k);
    mpz_addmul_ui(n, t, 6);
    mpz_add_ui(n, n, 1);
    /* h = N + p L + p^2 K + p^3 (L - 1) */
    mpz_set(h, n);
    mpz_addmul(h, bn_p, l);
    mpz_pow_ui(t, bn_p, 2);
    mpz_addmul(h, t, k);
    mpz_pow_ui(t, bn_p, 3);
    mpz_sub_ui(l, l, 1);
    mpz_addmul(h, t, l);
    /* h = 2u(6u^2 + 3u + 1) (p^4 - p^2 + 1) / r */
    mpz_pow_ui(phi, bn_p, 4);
    mpz_pow_ui(t, bn_p, 2);
    mpz_sub(phi, phi, t);
    mpz_add_ui(phi, phi, 1);
    CHECK(mpz_divisible_p(phi, bn_r), "r divides p^4 - p^2 + 1");
    mpz_divexact(phi, phi, bn_r);
    CHECK(mpz_divisible_p(h, phi), "(p^4 - p^2 + 1)/r divides h");
    mpz_divexact(c, h, phi);
    mpz_mul_ui(t, u, 6);
    mpz_mul(t, t, u);
    mpz_addmul_ui(t, u, 3);
    mpz_add_ui(t, t, 1);
    mpz_mul(t, t, u);
    mpz_mul_2exp(t, t, 1);
    CHECK(mpz_cmp(c, t) == 0, "h / ((p^4-p^2+1)/r) = 2u(6u^2+3u+1)");
    mpz_gcd(t, c, bn_r);
    CHECK(mpz_cmp_ui(t, 1) == 0, "the extra factor is coprime to r");

    /* e = (p^6 - 1)(p^2 + 1) h */
    mpz_pow_ui(e, bn_p, 6);
    mpz_sub_ui(e, e, 1);
    mpz_pow_ui(t, bn_p, 2);
    mpz_add_ui(t, t, 1);
    mpz_mul(e, e, t);
    mpz_mul(e, e, h);
    for (int it = 0; it < iters; it++) {
        czk_bn254_fp12 f, a, b;
        rand_fp12(&f);
        czk_bn254_final_exp(&a, &f);
        mpz_pow_fp12(&b, &f, e);
        CHECK(czk_bn254_fp12_eq(&a, &b), "final_exp = f^((p^6-1)(p^2+1)h) it=%d", it);
        mpz_pow_fp12(&b, &a, bn_r);
        CHECK(czk_bn254_fp12_is_one(&b), "final_exp(f)^r = 1 it=%d", it);
    }
    mpz_clears(h, phi, t, e, l, k, n, u, c, NULL);
}

/* the 4 limbs of v mod r as a plain exponent */
static void exp_limbs(uint64_t l[4], const mpz_t v)
{
    mpz_t t;
    mpz_init(t);
    mpz_mod(t, v, bn_r);
    t_mpz_to_limbs(l, t, 4);
    mpz_clear(t);
}

static void g1_times(czk_bn254_g1_aff *r, const czk_bn254_fr *k)
{
    czk_bn254_g1 j;
    czk_bn254_g1_mul_aff(&j, &CZK_BN254_G1_GEN, k);
    czk_bn254_g1_to_aff(r, &j);
}
static void g2_times(czk_bn254_g2_aff *r, const czk_bn254_fr *k)
{
    czk_bn254_g2 j;
    czk_bn254_g2_mul_aff(&j, &CZK_BN254_G2_GEN, k);
    czk_bn254_g2_to_aff(r, &j);
}

static void test_pairing(int iters)
{
    czk_bn254_fp12 e11, e, f;
    mpz_t a, b, ab;
    uint64_t l[4];
    mpz_inits(a, b, ab, NULL);

    czk_bn254_pairing(&e11, &CZK_BN254_G1_GEN, &CZK_BN254_G2_GEN);
    CHECK(!czk_bn254_fp12_is_one(&e11), "e(G1, G2) != 1 (non-degenerate)");
    mpz_pow_fp12(&f, &e11, bn_r);
    CHECK(czk_bn254_fp12_is_one(&f), "e(G1, G2)^r = 1");

    for (int it = 0; it < iters; it++) {
        czk_bn254_fr ka, kb, kab;
        czk_bn254_g1_aff P, Pab, negP;
        czk_bn254_g2_aff Q;
        rand_scalar(&ka, a);
        rand_scalar(&kb, b);
        mpz_mul(ab, a, b);
        mpz_mod(ab, ab, bn_r);
        t_mpz_to_limbs(kab.l, ab, 4);
        g1_times(&P, &ka);
        g2_times(&Q, &kb);
        g1_times(&Pab, &kab);

        czk_bn254_pairing(&e, &P, &Q);
        exp_limbs(l, ab);
        czk_bn254_fp12_pow(&f, &e11, l, 4);
        CHECK(czk_bn254_fp12_eq(&e, &f), "e(aP, bQ) = e(P, Q)^(ab) it=%d", it);
        czk_bn254_pairing(&f, &Pab, &CZK_BN254_G2_GEN);
        CHECK(czk_bn254_fp12_eq(&e, &f), "e(aP, bQ) = e(abP, Q) it=%d", it);

        /* e(aP, bQ) e(-abP, Q) = 1, with infinity pairs mixed in */
        czk_bn254_g1_aff_neg(&negP, &Pab);
        czk_bn254_g1_aff ps[3] = {P, {{{0}}, {{0}}}, negP};
        czk_bn254_g2_aff qs[3] = {Q, CZK_BN254_G2_GEN, CZK_BN254_G2_GEN};
        CHECK(czk_bn254_pairing_product_is_one(ps, qs, 3), "product check accepts it=%d", it);
        ps[2] = Pab;
        CHECK(mpz_sgn(ab) == 0 || !czk_bn254_pairing_product_is_one(ps, qs, 3),
              "product check rejects it=%d", it);
        CHECK(!czk_bn254_fp12_is_one(&e) || mpz_sgn(ab) == 0, "e(aP, bQ) != 1 it=%d", it);
    }

    /* more pairs than one Miller batch (16): sum_i a_i b_i = 0 */
    enum { NP = 19 };
    czk_bn254_g1_aff ps[NP];
    czk_bn254_g2_aff qs[NP];
    mpz_t acc;
    mpz_init(acc);
    for (int i = 0; i < NP - 1; i++) {
        czk_bn254_fr ka, kb;
        /* pair 3 is negated below: its a b must not be 0 mod r, and the
         * generator draws 0 now and then */
        do {
            rand_scalar(&ka, a);
            rand_scalar(&kb, b);
        } while (i == 3 && (mpz_sgn(a) == 0 || mpz_sgn(b) == 0));
        g1_times(&ps[i], &ka);
        g2_times(&qs[i], &kb);
        mpz_addmul(acc, a, b);
    }
    mpz_neg(acc, acc);
    mpz_mod(acc, acc, bn_r);
    czk_bn254_fr kc;
    t_mpz_to_limbs(kc.l, acc, 4);
    g1_times(&ps[NP - 1], &kc);
    qs[NP - 1] = CZK_BN254_G2_GEN;
    CHECK(czk_bn254_pairing_product_is_one(ps, qs, NP), "19-pair product is one");
    czk_bn254_g1_aff_neg(&ps[3], &ps[3]);
    CHECK(!czk_bn254_pairing_product_is_one(ps, qs, NP), "19-pair product with a flipped sign");
    /* the product of separate Miller loops is the multi-Miller loop */
    czk_bn254_fp12 m1, m2, m;
    czk_bn254_miller_loop(&m, ps, qs, 2);
    czk_bn254_miller_loop(&m1, ps, qs, 1);
    czk_bn254_miller_loop(&m2, ps + 1, qs + 1, 1);
    czk_bn254_fp12_mul(&m1, &m1, &m2);
    czk_bn254_final_exp(&m, &m);
    czk_bn254_final_exp(&m1, &m1);
    CHECK(czk_bn254_fp12_eq(&m, &m1), "multi-Miller loop = product of Miller loops after final exp");
    mpz_clear(acc);
    mpz_clears(a, b, ab, NULL);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 8;
    t_seed("test_bn254_pairing");
    bn_init();
    test_tower(iters * 4);
    test_final_exp(iters / 2 + 1);
    test_pairing(iters);
    if (t_failures) {
        fprintf(stderr, "test_bn254_pairing: %d failures\n", t_failures);
        return 1;
    }
    printf("test_bn254_pairing: ok\n");
    return 0;
}
