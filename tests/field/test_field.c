/*
 * test_field.c — Fp and Fr arithmetic against GMP on random and edge inputs:
 * add/sub/dbl/neg/mul/sqr/inv/pow, Montgomery conversions, bytes, decimal,
 * plus Fp square roots and sgn0, Fr batch inversion and random elements.
 */
#include <errno.h>
#include <string.h>

#include "common/crypto/field.h"
#include "test_util.h"

#define Q_HEX "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab"
#define R_HEX "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001"

#define TF czk_fp
#define TP czk_fp
#define TN 6
#define TNAME FP
#include "test_field_tmpl.h"
#undef TF
#undef TP
#undef TN
#undef TNAME

#define TF czk_fr
#define TP czk_fr
#define TN 4
#define TNAME FR
#include "test_field_tmpl.h"

static void fp_set_value(czk_fp *x, const mpz_t v, const mpz_t q)
{
    mpz_t t;
    mpz_init(t);
    mpz_mul_2exp(t, v, 384);
    mpz_mod(t, t, q);
    t_mpz_to_limbs(x->l, t, 6);
    mpz_clear(t);
}

static void fp_value(mpz_t v, const czk_fp *x, const mpz_t q)
{
    mpz_t rinv;
    mpz_init(rinv);
    mpz_setbit(rinv, 384);
    mpz_invert(rinv, rinv, q);
    t_limbs_to_mpz(v, x->l, 6);
    mpz_mul(v, v, rinv);
    mpz_mod(v, v, q);
    mpz_clear(rinv);
}

static void test_fp_sqrt(int iters)
{
    mpz_t q, a, got, sq;
    mpz_inits(q, a, got, sq, NULL);
    mpz_set_str(q, Q_HEX, 16);
    int residues = 0, nonresidues = 0;
    for (int it = 0; it < iters; it++) {
        czk_fp x, s;
        t_rand_mod(a, q, 6);
        if (it % 3 == 0) { /* force a square */
            mpz_mul(a, a, a);
            mpz_mod(a, a, q);
        }
        fp_set_value(&x, a, q);
        int rc = czk_fp_sqrt(&s, &x);
        int leg = mpz_legendre(a, q);
        if (leg >= 0) {
            residues++;
            fp_value(got, &s, q);
            mpz_mul(sq, got, got);
            mpz_mod(sq, sq, q);
            CHECK(rc == 0 && mpz_cmp(sq, a) == 0, "sqrt of a residue it=%d", it);
        } else {
            nonresidues++;
            CHECK(rc == -EDOM, "sqrt of a non-residue must give -EDOM it=%d", it);
        }
        CHECK(czk_fp_sgn0(&x) == (mpz_odd_p(a) != 0), "sgn0 it=%d", it);
    }
    CHECK(residues > iters / 4 && nonresidues > iters / 8, "sqrt test saw %d residues, %d non-residues",
          residues, nonresidues);
    mpz_clears(q, a, got, sq, NULL);
}

static void test_fr_batch_inv_random(void)
{
    enum { N = 257 };
    czk_fr in[N], out[N], scratch[N], one;
    for (int i = 0; i < N; i++) {
        if (i % 17 == 3)
            in[i] = CZK_FR_ZERO;
        else
            czk_fr_from_u64(&in[i], t_rand64());
    }
    czk_fr_batch_inv(out, in, N, scratch);
    for (int i = 0; i < N; i++) {
        if (czk_fr_is_zero(&in[i])) {
            CHECK(czk_fr_is_zero(&out[i]), "batch_inv of 0 at %d must be 0", i);
            continue;
        }
        czk_fr_mul(&one, &out[i], &in[i]);
        CHECK(czk_fr_eq(&one, &CZK_FR_ONE), "batch_inv at %d", i);
    }
    /* in place */
    memcpy(out, in, sizeof(in));
    czk_fr_batch_inv(out, out, N, scratch);
    for (int i = 0; i < N; i++) {
        if (czk_fr_is_zero(&in[i]))
            continue;
        czk_fr_mul(&one, &out[i], &in[i]);
        CHECK(czk_fr_eq(&one, &CZK_FR_ONE), "in-place batch_inv at %d", i);
    }
    czk_fr_batch_inv(out, in, 0, scratch); /* n == 0 must be harmless */

    /* random: canonical, distinct, high half hit about half the time */
    mpz_t r, half, v;
    mpz_inits(r, half, v, NULL);
    mpz_set_str(r, R_HEX, 16);
    mpz_fdiv_q_2exp(half, r, 1);
    int high = 0, draws = 2000;
    czk_fr prev = CZK_FR_ZERO;
    for (int i = 0; i < draws; i++) {
        czk_fr x, s;
        CHECK(czk_fr_random(&x) == 0, "czk_fr_random");
        CHECK(czk_fr_is_canonical(&x), "random value (Montgomery) must be < r");
        CHECK(!czk_fr_eq(&x, &prev), "two equal random draws");
        prev = x;
        czk_fr_from_mont(&s, &x);
        t_limbs_to_mpz(v, s.l, 4);
        if (mpz_cmp(v, half) > 0)
            high++;
    }
    CHECK(high > draws * 4 / 10 && high < draws * 6 / 10, "random: %d of %d above r/2", high, draws);
    mpz_clears(r, half, v, NULL);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 3000;
    t_seed("test_field");
    test_czk_fp(Q_HEX, iters);
    test_czk_fr(R_HEX, iters);
    test_fp_sqrt(iters / 3);
    test_fr_batch_inv_random();
    if (t_failures) {
        fprintf(stderr, "test_field: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_field: ok\n");
    return 0;
}
