/*
 * test_fp2.c — Fp2 = Fp[u]/(u^2+1) against the schoolbook formulas computed
 * with GMP: mul, sqr, inv, mul_fp, mul_nr, conj, add/sub/dbl/neg and sqrt
 * (squares and non-squares, told apart by the Legendre symbol of the norm).
 */
#include <errno.h>
#include <string.h>

#include "common/crypto/field.h"
#include "test_util.h"

#define Q_HEX "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab"

static mpz_t q, R, Rinv;

static void set_fp(czk_fp *x, const mpz_t v)
{
    mpz_t t;
    mpz_init(t);
    mpz_mul(t, v, R);
    mpz_mod(t, t, q);
    t_mpz_to_limbs(x->l, t, 6);
    mpz_clear(t);
}

static void get_fp(mpz_t v, const czk_fp *x)
{
    t_limbs_to_mpz(v, x->l, 6);
    CHECK(mpz_cmp(v, q) < 0, "Fp output not reduced");
    mpz_mul(v, v, Rinv);
    mpz_mod(v, v, q);
}

/* compare x with (w0 + w1 u) */
static int fp2_is(const czk_fp2 *x, const mpz_t w0, const mpz_t w1)
{
    mpz_t g0, g1;
    mpz_inits(g0, g1, NULL);
    get_fp(g0, &x->c0);
    get_fp(g1, &x->c1);
    int ok = mpz_cmp(g0, w0) == 0 && mpz_cmp(g1, w1) == 0;
    mpz_clears(g0, g1, NULL);
    return ok;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    mpz_t a0, a1, b0, b1, w0, w1, t, n;
    mpz_inits(q, R, Rinv, a0, a1, b0, b1, w0, w1, t, n, NULL);
    mpz_set_str(q, Q_HEX, 16);
    mpz_setbit(R, 384);
    mpz_mod(R, R, q);
    mpz_invert(Rinv, R, q);
    t_seed("test_fp2");

    {
        mpz_t one, zero;
        mpz_init_set_ui(one, 1);
        mpz_init(zero);
        CHECK(fp2_is(&CZK_FP2_ONE, one, zero), "CZK_FP2_ONE");
        CHECK(fp2_is(&CZK_FP2_ZERO, zero, zero), "CZK_FP2_ZERO");
        mpz_clears(one, zero, NULL);
    }

    int squares = 0, nonsquares = 0;
    for (int it = 0; it < iters; it++) {
        czk_fp2 x, y, z;
        czk_fp f;
        t_rand_mod(a0, q, 6);
        t_rand_mod(a1, q, 6);
        t_rand_mod(b0, q, 6);
        t_rand_mod(b1, q, 6);
        set_fp(&x.c0, a0); set_fp(&x.c1, a1);
        set_fp(&y.c0, b0); set_fp(&y.c1, b1);

        /* mul: (a0 b0 - a1 b1) + (a0 b1 + a1 b0) u */
        czk_fp2_mul(&z, &x, &y);
        mpz_mul(w0, a0, b0); mpz_submul(w0, a1, b1); mpz_mod(w0, w0, q);
        mpz_mul(w1, a0, b1); mpz_addmul(w1, a1, b0); mpz_mod(w1, w1, q);
        CHECK(fp2_is(&z, w0, w1), "mul it=%d", it);
        z = x; czk_fp2_mul(&z, &z, &y);
        CHECK(fp2_is(&z, w0, w1), "mul aliased it=%d", it);

        /* sqr */
        czk_fp2_sqr(&z, &x);
        mpz_mul(w0, a0, a0); mpz_submul(w0, a1, a1); mpz_mod(w0, w0, q);
        mpz_mul(w1, a0, a1); mpz_mul_2exp(w1, w1, 1); mpz_mod(w1, w1, q);
        CHECK(fp2_is(&z, w0, w1), "sqr it=%d", it);

        /* add, sub, dbl, neg, conj */
        czk_fp2_add(&z, &x, &y);
        mpz_add(w0, a0, b0); mpz_mod(w0, w0, q); mpz_add(w1, a1, b1); mpz_mod(w1, w1, q);
        CHECK(fp2_is(&z, w0, w1), "add it=%d", it);
        czk_fp2_sub(&z, &x, &y);
        mpz_sub(w0, a0, b0); mpz_mod(w0, w0, q); mpz_sub(w1, a1, b1); mpz_mod(w1, w1, q);
        CHECK(fp2_is(&z, w0, w1), "sub it=%d", it);
        czk_fp2_dbl(&z, &x);
        mpz_mul_2exp(w0, a0, 1); mpz_mod(w0, w0, q); mpz_mul_2exp(w1, a1, 1); mpz_mod(w1, w1, q);
        CHECK(fp2_is(&z, w0, w1), "dbl it=%d", it);
        czk_fp2_neg(&z, &x);
        mpz_neg(w0, a0); mpz_mod(w0, w0, q); mpz_neg(w1, a1); mpz_mod(w1, w1, q);
        CHECK(fp2_is(&z, w0, w1), "neg it=%d", it);
        czk_fp2_conj(&z, &x);
        CHECK(fp2_is(&z, a0, w1), "conj it=%d", it);

        /* mul_fp by b0 */
        set_fp(&f, b0);
        czk_fp2_mul_fp(&z, &x, &f);
        mpz_mul(w0, a0, b0); mpz_mod(w0, w0, q); mpz_mul(w1, a1, b0); mpz_mod(w1, w1, q);
        CHECK(fp2_is(&z, w0, w1), "mul_fp it=%d", it);

        /* mul_nr: (a0 + a1 u)(1 + u) = (a0 - a1) + (a0 + a1) u */
        czk_fp2_mul_nr(&z, &x);
        mpz_sub(w0, a0, a1); mpz_mod(w0, w0, q); mpz_add(w1, a0, a1); mpz_mod(w1, w1, q);
        CHECK(fp2_is(&z, w0, w1), "mul_nr it=%d", it);

        /* inv: (a0 - a1 u) / (a0^2 + a1^2) */
        int rc = czk_fp2_inv(&z, &x);
        mpz_mul(n, a0, a0); mpz_addmul(n, a1, a1); mpz_mod(n, n, q);
        if (mpz_sgn(n) == 0) {
            CHECK(rc == -EDOM && czk_fp2_is_zero(&z), "inv(0) it=%d", it);
        } else {
            mpz_invert(t, n, q);
            mpz_mul(w0, a0, t); mpz_mod(w0, w0, q);
            mpz_mul(w1, a1, t); mpz_neg(w1, w1); mpz_mod(w1, w1, q);
            CHECK(rc == 0 && fp2_is(&z, w0, w1), "inv it=%d", it);
        }

        /* sqrt: a is a square in Fp2 iff its norm is a square in Fp */
        if (it % 2 == 0) {
            czk_fp2_sqr(&x, &x); /* force a square */
            get_fp(a0, &x.c0);
            get_fp(a1, &x.c1);
            mpz_mul(n, a0, a0); mpz_addmul(n, a1, a1); mpz_mod(n, n, q);
        }
        if (it % 7 == 1) { /* a1 == 0 cases: both residues and non-residues of Fp */
            mpz_set_ui(a1, 0);
            set_fp(&x.c1, a1);
            mpz_mul(n, a0, a0); mpz_mod(n, n, q);
        }
        rc = czk_fp2_sqrt(&z, &x);
        if (mpz_legendre(n, q) >= 0) {
            squares++;
            czk_fp2 s2;
            czk_fp2_sqr(&s2, &z);
            CHECK(rc == 0 && fp2_is(&s2, a0, a1), "sqrt of a square it=%d", it);
        } else {
            nonsquares++;
            CHECK(rc == -EDOM, "sqrt of a non-square must be -EDOM it=%d", it);
        }
        CHECK(czk_fp2_eq(&x, &x) && czk_fp2_is_zero(&x) == (mpz_sgn(a0) == 0 && mpz_sgn(a1) == 0),
              "eq / is_zero it=%d", it);
    }
    CHECK(squares > iters / 3 && nonsquares > iters / 10, "sqrt saw %d squares, %d non-squares", squares,
          nonsquares);
    mpz_clears(q, R, Rinv, a0, a1, b0, b1, w0, w1, t, n, NULL);
    if (t_failures) {
        fprintf(stderr, "test_fp2: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_fp2: ok\n");
    return 0;
}
