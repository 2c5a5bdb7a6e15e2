/*
 * test_bn254_msm.c — Pippenger MSMs on BN254 (common/crypto/bn254_msm.h)
 * against the plain sum of the terms.
 *
 * Bases are P_i = a_i G with the a_i known (an arithmetic progression built
 * with one point addition per base, then some entries replaced by the
 * point at infinity, by a copy of an earlier base or by its negation, so the
 * same-bucket and opposite-point paths of the buckets run).  G has order r,
 * so the MSM must equal (sum_i k_i a_i mod r) G: one scalar multiplication,
 * with the exponent computed in GMP.  For small sizes the sum is also
 * computed term by term with GMP affine double-and-add (bn_util.h), and for
 * every size term by term with the curve's own variable-time scalar
 * multiplication (checked against GMP by test_bn254_curve).
 * Scalars are random below r, with 0, 1, r - 1 and values >= r (2^256 - 1,
 * r, top bit set: they act as integers) mixed in; half the copied and
 * negated bases take their original's scalar too, so that P meets P and -P
 * in the same bucket.  Sizes 1, 2, 7, 100, 1000, 4097 on G1 and G2 and 10000
 * on G1 (batch-affine buckets), with 1 and 2 threads, and on bases not in
 * any special form (random curve points on G1, random multiples on G2),
 * then 2^15 on G1 and 2^13 on G2 with few copies.  Where the CPU has AVX-512
 * IFMA this runs the vector flush and running sums (the
 * bn254_test_bn254_msm_noifma run repeats it all on the scalar path,
 * CZK_NO_IFMA=1).  Scalars near fractions j r / 2^s also run: they sit on
 * the rounding boundaries of the GLV split.
 * The endomorphisms the MSMs use (czk_bn254_g1_endo, czk_bn254_g2_endo) are
 * checked on random points against GMP double-and-add by their eigenvalues,
 * computed here from the moduli: lambda a cube root of unity mod r (the
 * one of the two that czk_bn254_g1_endo documents), and p mod r on G2.
 * Usage: test_bn254_msm
 */
#include <errno.h>
#include <stdlib.h>

#include "common/base/log.h"
#include "common/crypto/bn254_msm.h"
#include "tests/bn254/bn_util.h"

/* scalar i: mostly random below r, some edge values */
static void pick_scalar(czk_bn254_fr *k, mpz_t v, size_t i)
{
    switch (t_rand64() % 16) {
    case 0: mpz_set_ui(v, 0); break;
    case 1: mpz_set_ui(v, 1); break;
    case 2: mpz_sub_ui(v, bn_r, 1); break;
    case 3: mpz_set(v, bn_r); break;
    case 4: mpz_set_ui(v, 0); mpz_setbit(v, 256); mpz_sub_ui(v, v, 1); break; /* 2^256 - 1 */
    case 5: t_rand_mod(v, bn_r, 4); mpz_setbit(v, 255); break;                  /* >= 2^255 */
    case 6: /* floor(j r / 2^s) + {-1, 0, 1}: GLV rounding boundaries */
        mpz_mul_ui(v, bn_r, 1 + t_rand64() % 7);
        mpz_fdiv_q_2exp(v, v, 1 + t_rand64() % 40);
        mpz_add_ui(v, v, 1);
        mpz_sub_ui(v, v, t_rand64() % 3);
        break;
    default: t_rand_mod(v, bn_r, 4); break;
    }
    if (i == 0)
        mpz_sub_ui(v, bn_r, 1); /* every run has an r - 1 */
    t_mpz_to_limbs(k->l, v, 4);
}

/* one index in kind_mod gets each of the special kinds below */
static unsigned kind_mod = 32;

/* which base each index gets: 0 fresh, 1 infinity, 2 copy, 3 negated copy */
static int pick_kind(size_t i)
{
    unsigned x = (unsigned)(t_rand64() % kind_mod);
    if (i == 0)
        return 0;
    return x == 0 ? 1 : x == 1 ? 2 : x == 2 ? 3 : 0;
}

#define MT_G czk_bn254_g1
#define MT_AFF czk_bn254_g1_aff
#define MT_FIELD czk_bn254_fp
#define MT_GEN CZK_BN254_G1_GEN
#define MT_MSM czk_bn254_msm_g1
#define MT_GP_FROM gp_from_g1
#define MT_GP_EQ gp_eq_g1
#define MT_SUF g1
#define MT_NAME "g1"
#include "tests/bn254/msm_test_tmpl.h"

#define MT_G czk_bn254_g2
#define MT_AFF czk_bn254_g2_aff
#define MT_FIELD czk_bn254_fp2
#define MT_GEN CZK_BN254_G2_GEN
#define MT_MSM czk_bn254_msm_g2
#define MT_GP_FROM gp_from_g2
#define MT_GP_EQ gp_eq_g2
#define MT_SUF g2
#define MT_NAME "g2"
#include "tests/bn254/msm_test_tmpl.h"

/* all scalars 0, or all bases infinity: the result is infinity */
static void test_degenerate(void)
{
    enum { N = 600 };
    czk_bn254_g1_aff *b1 = calloc(N, sizeof(*b1));
    czk_bn254_fr *sc = calloc(N, sizeof(*sc));
    czk_bn254_g1 r1;
    czk_bn254_g2 r2;
    mpz_t v;

    mpz_init(v);
    for (size_t i = 0; i < N; i++) {
        t_rand_mod(v, bn_r, 4);
        t_mpz_to_limbs(sc[i].l, v, 4);
    }
    /* poisoned before each call (r1 is infinity already after the first):
     * an early return that skips set_inf must fail */
    memset(&r1, 0xa5, sizeof(r1));
    CHECK(czk_bn254_msm_g1(&r1, b1, sc, N, 2) == 0 && czk_bn254_g1_is_inf(&r1), "all bases infinity");
    memset(&r1, 0xa5, sizeof(r1));
    CHECK(czk_bn254_msm_g1(&r1, b1, sc, 0, 2) == 0 && czk_bn254_g1_is_inf(&r1), "empty msm g1");
    memset(&r2, 0xa5, sizeof(r2));
    CHECK(czk_bn254_msm_g2(&r2, NULL, NULL, 0, 2) == 0 && czk_bn254_g2_is_inf(&r2), "empty msm g2");
    for (size_t i = 0; i < N; i++)
        b1[i] = CZK_BN254_G1_GEN;
    memset(sc, 0, N * sizeof(*sc));
    memset(&r1, 0xa5, sizeof(r1));
    CHECK(czk_bn254_msm_g1(&r1, b1, sc, N, 2) == 0 && czk_bn254_g1_is_inf(&r1), "all scalars zero");
    CHECK(czk_bn254_msm_g1(NULL, b1, sc, N, 2) == -EINVAL, "null result");
    CHECK(czk_bn254_msm_g1(&r1, NULL, sc, N, 2) == -EINVAL, "null bases");
    mpz_clear(v);
    free(b1);
    free(sc);
}

/* phi(P) = [lambda] P on random G1 points, psi(Q) = [p mod r] Q on random
 * multiples of G2's generator, against GMP affine double-and-add */
static void test_endo(void)
{
    enum { N = 8 };
    mpz_t lam, e, d, a;
    g_pt gp, want;
    int i, ok1 = 0, ok2 = 0;

    mpz_inits(lam, e, d, a, NULL);
    gp_init(&gp);
    gp_init(&want);
    /* lambda = g^((r-1)/3) for the first g that gives a root != 1, or its
     * square: the smaller (192-bit) root is the one documented */
    mpz_sub_ui(e, bn_r, 1);
    mpz_divexact_ui(e, e, 3);
    for (unsigned long g = 2;; g++) {
        mpz_set_ui(lam, g);
        mpz_powm(lam, lam, e, bn_r);
        if (mpz_cmp_ui(lam, 1))
            break;
    }
    mpz_mul(a, lam, lam);
    mpz_mod(a, a, bn_r);
    if (mpz_cmp(a, lam) < 0)
        mpz_swap(a, lam);
    mpz_mul(a, lam, lam);
    mpz_add(a, a, lam);
    mpz_add_ui(a, a, 1);
    mpz_mod(a, a, bn_r);
    CHECK(mpz_sgn(a) == 0 && mpz_sizeinbase(lam, 2) == 192, "lambda is the 192-bit cube root of unity mod r");
    mpz_mod(d, bn_p, bn_r);
    for (i = 0; i < N; i++) {
        czk_bn254_fr k;
        czk_bn254_g1 p1;
        czk_bn254_g1_aff p1a, e1;
        czk_bn254_g2 q2;
        czk_bn254_g2_aff q2a, e2;

        rand_scalar(&k, a);
        czk_bn254_g1_mul_aff(&p1, &CZK_BN254_G1_GEN, &k);
        czk_bn254_g1_to_aff(&p1a, &p1);
        CHECK(czk_bn254_g1_endo(&e1, &p1a) == 0, "g1 endo available");
        gp_from_g1(&gp, &p1a);
        gp_mul(&want, &gp, lam);
        ok1 += gp_eq_g1(&want, &e1);
        rand_scalar(&k, a);
        czk_bn254_g2_mul_aff(&q2, &CZK_BN254_G2_GEN, &k);
        czk_bn254_g2_to_aff(&q2a, &q2);
        CHECK(czk_bn254_g2_endo(&e2, &q2a) == 0, "g2 endo available");
        gp_from_g2(&gp, &q2a);
        gp_mul(&want, &gp, d);
        ok2 += gp_eq_g2(&want, &e2);
    }
    CHECK(ok1 == N, "phi(P) = lambda P on G1 (%d of %d)", ok1, N);
    CHECK(ok2 == N, "psi(Q) = (p mod r) Q on G2 (%d of %d)", ok2, N);
    CHECK(czk_bn254_g1_endo(NULL, &CZK_BN254_G1_GEN) == -EINVAL, "g1 endo null");
    gp_clear(&gp);
    gp_clear(&want);
    mpz_clears(lam, e, d, a, NULL);
}

int main(void)
{
    static const size_t sizes[] = {1, 2, 7, 100, 1000, 4097};

    czk_log_init("test_bn254_msm", CZK_LOG_WARN); /* CZK_LOG_LEVEL=7 shows the plans */
    t_seed("test_bn254_msm");
    bn_init();
    test_endo();
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        test_g1(sizes[s], (int)(s % 2) + 1, sizes[s] <= 7);
        test_g2(sizes[s], (int)((s + 1) % 2) + 1, sizes[s] <= 7);
    }
    test_g1(10000, 2, 0);
    test_g1(4097, 1, 0);
    test_g2(6000, 2, 0);
    /* few copies: the XYZZ side buckets stay few, so the 8-lane running
     * sums (AVX-512 IFMA) run on these windows, on both groups */
    kind_mod = 2048;
    test_g1(1 << 15, 2, 0);
    test_g2(1 << 13, 2, 0);
    kind_mod = 32;
    test_degenerate();
    if (t_failures) {
        fprintf(stderr, "test_bn254_msm: %d failures\n", t_failures);
        return 1;
    }
    printf("test_bn254_msm: ok\n");
    return 0;
}
