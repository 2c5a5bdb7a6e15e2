/*
 * test_field_ct.c — the constant-time inversions of field.h against GMP
 * (mpz_invert, mpz_powm) and against the variable-time ones on random and
 * edge inputs: czk_fp_inv_ct, czk_fr_inv_ct, czk_fp2_inv_ct (0 -> 0 for all
 * three) and czk_fr_batch_inv_ct (zeros stay zero, equal to czk_fr_batch_inv).
 * usage: test_field_ct [iterations]
 */
#include <errno.h>
#include <string.h>

#include "common/crypto/field.h"
#include "test_util.h"

#define Q_HEX "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab"
#define R_HEX "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001"

static mpz_t g_q, g_r;

/* Montgomery limbs of v mod m (R = 2^(64n)) and back */
static void to_mont(uint64_t *l, const mpz_t v, const mpz_t m, int n)
{
    mpz_t t;
    mpz_init(t);
    mpz_mul_2exp(t, v, 64 * (unsigned)n);
    mpz_mod(t, t, m);
    t_mpz_to_limbs(l, t, n);
    mpz_clear(t);
}

static void from_mont(mpz_t v, const uint64_t *l, const mpz_t m, int n)
{
    mpz_t rinv;
    mpz_init(rinv);
    mpz_setbit(rinv, 64 * (unsigned)n);
    mpz_invert(rinv, rinv, m);
    t_limbs_to_mpz(v, l, n);
    mpz_mul(v, v, rinv);
    mpz_mod(v, v, m);
    mpz_clear(rinv);
}

/* expected 1/a mod m by mpz_invert, 0 for a == 0; cross-checked with a^(m-2) */
static void want_inv(mpz_t w, const mpz_t a, const mpz_t m)
{
    mpz_t e, p;
    mpz_inits(e, p, NULL);
    if (mpz_sgn(a) == 0)
        mpz_set_ui(w, 0);
    else
        mpz_invert(w, a, m);
    mpz_sub_ui(e, m, 2);
    mpz_powm(p, a, e, m);
    CHECK(mpz_cmp(p, w) == 0, "GMP: powm(a, m-2) != invert(a)");
    mpz_clears(e, p, NULL);
}

static void test_fp(int iters)
{
    mpz_t a, w, got;
    mpz_inits(a, w, got, NULL);
    for (int it = 0; it < iters; it++) {
        czk_fp x, y, v;
        if (it == 0)
            mpz_set_ui(a, 0);
        else if (it == 1)
            mpz_set_ui(a, 1);
        else if (it == 2)
            mpz_sub_ui(a, g_q, 1);
        else
            t_rand_mod(a, g_q, 6);
        to_mont(x.l, a, g_q, 6);
        want_inv(w, a, g_q);
        czk_fp_inv_ct(&y, &x);
        from_mont(got, y.l, g_q, 6);
        CHECK(mpz_cmp(got, w) == 0, "fp_inv_ct vs GMP it=%d", it);
        int rc = czk_fp_inv(&v, &x);
        CHECK(rc == (mpz_sgn(a) ? 0 : -EDOM) && memcmp(&v, &y, sizeof(v)) == 0,
              "fp_inv_ct == fp_inv it=%d", it);
        czk_fp_inv_ct(&x, &x); /* aliased */
        CHECK(memcmp(&x, &y, sizeof(x)) == 0, "fp_inv_ct aliased it=%d", it);
    }
    mpz_clears(a, w, got, NULL);
}

static void test_fr(int iters)
{
    mpz_t a, w, got;
    mpz_inits(a, w, got, NULL);
    for (int it = 0; it < iters; it++) {
        czk_fr x, y, v;
        if (it == 0)
            mpz_set_ui(a, 0);
        else if (it == 1)
            mpz_set_ui(a, 1);
        else if (it == 2)
            mpz_sub_ui(a, g_r, 1);
        else
            t_rand_mod(a, g_r, 4);
        to_mont(x.l, a, g_r, 4);
        want_inv(w, a, g_r);
        czk_fr_inv_ct(&y, &x);
        from_mont(got, y.l, g_r, 4);
        CHECK(mpz_cmp(got, w) == 0, "fr_inv_ct vs GMP it=%d", it);
        int rc = czk_fr_inv(&v, &x);
        CHECK(rc == (mpz_sgn(a) ? 0 : -EDOM) && memcmp(&v, &y, sizeof(v)) == 0,
              "fr_inv_ct == fr_inv it=%d", it);
        czk_fr_inv_ct(&x, &x);
        CHECK(memcmp(&x, &y, sizeof(x)) == 0, "fr_inv_ct aliased it=%d", it);
    }
    mpz_clears(a, w, got, NULL);
}

/* 1/(a0 + a1 u) = (a0 - a1 u)/(a0^2 + a1^2) computed in GMP */
static void test_fp2(int iters)
{
    mpz_t a0, a1, n, w0, w1, g0, g1;
    mpz_inits(a0, a1, n, w0, w1, g0, g1, NULL);
    for (int it = 0; it < iters; it++) {
        czk_fp2 x, y, v;
        t_rand_mod(a0, g_q, 6);
        t_rand_mod(a1, g_q, 6);
        if (it == 0)
            mpz_set_ui(a0, 0), mpz_set_ui(a1, 0);
        if (it == 1)
            mpz_set_ui(a1, 0);
        if (it == 2)
            mpz_set_ui(a0, 0);
        to_mont(x.c0.l, a0, g_q, 6);
        to_mont(x.c1.l, a1, g_q, 6);
        mpz_mul(n, a0, a0);
        mpz_addmul(n, a1, a1);
        mpz_mod(n, n, g_q);
        bool zero = mpz_sgn(n) == 0; /* both halves drawn as 0: t_rand_mod favours edge values */
        if (zero) {
            mpz_set_ui(w0, 0);
            mpz_set_ui(w1, 0);
        } else {
            mpz_invert(n, n, g_q);
            mpz_mul(w0, a0, n);
            mpz_mod(w0, w0, g_q);
            mpz_mul(w1, a1, n);
            mpz_neg(w1, w1);
            mpz_mod(w1, w1, g_q);
        }
        czk_fp2_inv_ct(&y, &x);
        from_mont(g0, y.c0.l, g_q, 6);
        from_mont(g1, y.c1.l, g_q, 6);
        CHECK(mpz_cmp(g0, w0) == 0 && mpz_cmp(g1, w1) == 0, "fp2_inv_ct vs GMP it=%d", it);
        int rc = czk_fp2_inv(&v, &x);
        CHECK(rc == (zero ? -EDOM : 0) && memcmp(&v, &y, sizeof(v)) == 0,
              "fp2_inv_ct == fp2_inv it=%d", it);
        czk_fp2_inv_ct(&x, &x);
        CHECK(memcmp(&x, &y, sizeof(x)) == 0, "fp2_inv_ct aliased it=%d", it);
    }
    mpz_clears(a0, a1, n, w0, w1, g0, g1, NULL);
}

static void test_fr_batch(void)
{
    enum { N = 67 };
    czk_fr in[N], out[N], ref[N], scratch[N];
    mpz_t a, w, got;
    mpz_inits(a, w, got, NULL);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            t_rand_mod(a, g_r, 4);
            if (round == 1 && i % 5 == 0)
                mpz_set_ui(a, 0);
            if (round == 2)
                mpz_set_ui(a, 0); /* all zero */
            to_mont(in[i].l, a, g_r, 4);
        }
        czk_fr_batch_inv_ct(out, in, N, scratch);
        czk_fr_batch_inv(ref, in, N, scratch);
        for (int i = 0; i < N; i++) {
            from_mont(a, in[i].l, g_r, 4);
            want_inv(w, a, g_r);
            from_mont(got, out[i].l, g_r, 4);
            CHECK(mpz_cmp(got, w) == 0, "fr_batch_inv_ct[%d] vs GMP round %d", i, round);
            CHECK(memcmp(&out[i], &ref[i], sizeof(out[i])) == 0,
                  "fr_batch_inv_ct[%d] == fr_batch_inv round %d", i, round);
        }
        memcpy(ref, out, sizeof(out));
        czk_fr_batch_inv_ct(in, in, N, scratch); /* aliased */
        CHECK(memcmp(in, ref, sizeof(in)) == 0, "fr_batch_inv_ct aliased round %d", round);
    }
    mpz_clears(a, w, got, NULL);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    t_seed("test_field_ct");
    mpz_inits(g_q, g_r, NULL);
    mpz_set_str(g_q, Q_HEX, 16);
    mpz_set_str(g_r, R_HEX, 16);
    test_fp(iters);
    test_fr(iters);
    test_fp2(iters / 2);
    test_fr_batch();
    mpz_clears(g_q, g_r, NULL);
    if (t_failures) {
        fprintf(stderr, "test_field_ct: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_field_ct: ok\n");
    return 0;
}
