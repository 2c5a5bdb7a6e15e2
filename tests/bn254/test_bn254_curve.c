/*
 * test_bn254_curve.c — BN254 G1 and G2 (common/crypto/bn254_curve.h) against
 * GMP: the generators (G1 = (1, 2), G2 the EIP-197 generator typed in here in
 * decimal), the twist constant 3/(9+u), the curve equations, order r, point
 * addition/doubling and scalar multiplication against textbook affine
 * double-and-add in GMP, the constant-time forms against the variable-time
 * ones, and the G2 subgroup check on a twist point outside G2.
 * Usage: test_bn254_curve [iterations]
 */
#include <errno.h>
#include <stdlib.h>

#include "tests/bn254/bn_util.h"

static const char *G2X0 = "10857046999023057135944570762232829481370756359578518086990519993285655852781";
static const char *G2X1 = "11559732032986387107991004021392285783925812861821192530917403151452391805634";
static const char *G2Y0 = "8495653923123431417604973247489272438418190587263600148770280649306958101930";
static const char *G2Y1 = "4082367875863433681332203403145435568316851327593401208105741076214120093531";

static g_fp2 gb2; /* b' = 3 / (9 + u) by GMP */

/* y^2 == x^3 + b in GMP (b = 3 for G1: c1 = 0) */
static int gp_on_curve(const g_pt *p, const g_fp2 *b)
{
    g_fp2 l, r;
    g2_init(&l); g2_init(&r);
    g2_mul(&l, &p->y, &p->y);
    g2_mul(&r, &p->x, &p->x);
    g2_mul(&r, &r, &p->x);
    g2_add(&r, &r, b);
    int ok = g2_eq(&l, &r);
    g2_clear(&l); g2_clear(&r);
    return ok;
}

static void test_generators(void)
{
    g_fp2 b1, xi, t;
    g_pt g1, g2, k;
    mpz_t v;
    g2_init(&b1); g2_init(&xi); g2_init(&t);
    gp_init(&g1); gp_init(&g2); gp_init(&k);
    mpz_init(v);

    mpz_set_ui(b1.c0, 3);
    mpz_set_ui(xi.c0, 9);
    mpz_set_ui(xi.c1, 1);
    g2_inv(&gb2, &xi);
    mpz_set_ui(t.c0, 3);
    g2_mul(&gb2, &gb2, &t);
    fp2_get(&t, &CZK_BN254_G2_B);
    CHECK(g2_eq(&t, &gb2), "CZK_BN254_G2_B = 3 / (9 + u)");

    gp_from_g1(&g1, &CZK_BN254_G1_GEN);
    CHECK(mpz_cmp_ui(g1.x.c0, 1) == 0 && mpz_cmp_ui(g1.y.c0, 2) == 0, "G1 generator is (1, 2)");
    CHECK(gp_on_curve(&g1, &b1), "G1 generator on y^2 = x^3 + 3 (GMP)");
    CHECK(czk_bn254_g1_aff_on_curve(&CZK_BN254_G1_GEN) && czk_bn254_g1_aff_in_subgroup(&CZK_BN254_G1_GEN),
          "G1 generator on curve / in G1");

    gp_from_g2(&g2, &CZK_BN254_G2_GEN);
    mpz_set_str(v, G2X0, 10);
    CHECK(mpz_cmp(v, g2.x.c0) == 0, "G2 generator x.c0");
    mpz_set_str(v, G2X1, 10);
    CHECK(mpz_cmp(v, g2.x.c1) == 0, "G2 generator x.c1");
    mpz_set_str(v, G2Y0, 10);
    CHECK(mpz_cmp(v, g2.y.c0) == 0, "G2 generator y.c0");
    mpz_set_str(v, G2Y1, 10);
    CHECK(mpz_cmp(v, g2.y.c1) == 0, "G2 generator y.c1");
    CHECK(gp_on_curve(&g2, &gb2), "G2 generator on the twist (GMP)");
    CHECK(czk_bn254_g2_aff_on_curve(&CZK_BN254_G2_GEN) && czk_bn254_g2_aff_in_subgroup(&CZK_BN254_G2_GEN),
          "G2 generator on curve / in G2");

    /* order r, in GMP and in the library */
    gp_mul(&k, &g1, bn_r);
    CHECK(k.inf, "r G1 = 0 (GMP)");
    gp_mul(&k, &g2, bn_r);
    CHECK(k.inf, "r G2 = 0 (GMP)");
    mpz_sub_ui(v, bn_r, 1);
    gp_mul(&k, &g2, v);
    CHECK(!k.inf, "(r-1) G2 != 0 (GMP)");
    czk_bn254_g1 j1;
    czk_bn254_g2 j2;
    czk_bn254_g1_from_aff(&j1, &CZK_BN254_G1_GEN);
    czk_bn254_g1_mul_vt(&j1, &j1, &CZK_BN254_FR_MOD);
    CHECK(czk_bn254_g1_is_inf(&j1), "r G1 = 0");
    czk_bn254_g2_from_aff(&j2, &CZK_BN254_G2_GEN);
    czk_bn254_g2_mul_ct(&j2, &j2, &CZK_BN254_FR_MOD);
    CHECK(czk_bn254_g2_is_inf(&j2), "r G2 = 0 (ct)");

    /* a non-canonical coordinate is rejected */
    czk_bn254_g1_aff bad = CZK_BN254_G1_GEN;
    bad.x = CZK_BN254_FP_MOD;
    CHECK(!czk_bn254_g1_aff_on_curve(&bad), "x = p is not canonical");
    CHECK(czk_bn254_g1_aff_on_curve(&(czk_bn254_g1_aff){0}), "all-zero infinity counts as on curve");

    mpz_clear(v);
    g2_clear(&b1); g2_clear(&xi); g2_clear(&t);
    gp_clear(&g1); gp_clear(&g2); gp_clear(&k);
}

#define CT_G czk_bn254_g1
#define CT_AFF czk_bn254_g1_aff
#define CT_FIELD czk_bn254_fp
#define CT_GEN CZK_BN254_G1_GEN
#define CT_GP_FROM gp_from_g1
#define CT_GP_EQ gp_eq_g1
#define CT_SUF g1
#define CT_NAME "g1"
#include "tests/bn254/curve_test_tmpl.h"

#define CT_G czk_bn254_g2
#define CT_AFF czk_bn254_g2_aff
#define CT_FIELD czk_bn254_fp2
#define CT_GEN CZK_BN254_G2_GEN
#define CT_GP_FROM gp_from_g2
#define CT_GP_EQ gp_eq_g2
#define CT_SUF g2
#define CT_NAME "g2"
#include "tests/bn254/curve_test_tmpl.h"

/* a point of the twist E'(Fp2) outside G2: random x until x^3 + b' is a
 * square; with cofactor 2p - r about r, such a point is almost never in G2,
 * which GMP confirms (r P != 0); its multiple by the cofactor is in G2 */
static void test_g2_subgroup(int tries)
{
    g_pt gp, gk;
    mpz_t h;
    gp_init(&gp); gp_init(&gk);
    mpz_init(h);
    mpz_mul_2exp(h, bn_p, 1);
    mpz_sub(h, h, bn_r); /* #E'(Fp2) = r (2p - r) */
    int found = 0;

    for (int i = 0; i < tries && found < 3; i++) {
        g_fp2 x, rhs;
        g2_init(&x); g2_init(&rhs);
        g2_rand(&x);
        g2_mul(&rhs, &x, &x);
        g2_mul(&rhs, &rhs, &x);
        g2_add(&rhs, &rhs, &gb2);
        czk_bn254_g2_aff pt;
        czk_bn254_fp2 r;
        fp2_set(&pt.x, &x);
        fp2_set(&r, &rhs);
        if (czk_bn254_fp2_sqrt(&pt.y, &r) == 0) {
            found++;
            gp_from_g2(&gp, &pt);
            gp_mul(&gk, &gp, bn_r);
            CHECK(czk_bn254_g2_aff_on_curve(&pt), "twist point on the curve");
            CHECK(!gk.inf, "GMP: r P != 0 for the random twist point");
            CHECK(!czk_bn254_g2_aff_in_subgroup(&pt), "a twist point outside G2 must be rejected");
            /* clearing the cofactor lands in G2 */
            gp_mul(&gk, &gp, h);
            czk_bn254_g2_aff cleared;
            CHECK(!gk.inf, "h P != 0");
            if (!gk.inf) {
                fp2_set(&cleared.x, &gk.x);
                fp2_set(&cleared.y, &gk.y);
                CHECK(czk_bn254_g2_aff_in_subgroup(&cleared), "h P must be in G2");
            }
            /* a point off the curve is rejected too */
            czk_bn254_fp_add(&pt.y.c0, &pt.y.c0, &CZK_BN254_FP_ONE);
            CHECK(!czk_bn254_g2_aff_on_curve(&pt) && !czk_bn254_g2_aff_in_subgroup(&pt), "off-curve point");
        }
        g2_clear(&x); g2_clear(&rhs);
    }
    CHECK(found == 3, "found %d twist points", found);
    gp_clear(&gp); gp_clear(&gk);
    mpz_clear(h);
}

static void test_fixed_base(int iters)
{
    czk_bn254_g1_fb *t1 = NULL;
    czk_bn254_g2_fb *t2 = NULL;
    mpz_t s;
    mpz_init(s);
    CHECK(czk_bn254_g1_fb_new(&t1, &CZK_BN254_G1_GEN, 5) == 0, "g1 fb table");
    CHECK(czk_bn254_g2_fb_new(&t2, &CZK_BN254_G2_GEN, 4) == 0, "g2 fb table");
    for (int it = 0; t1 && t2 && it < iters; it++) {
        czk_bn254_fr k;
        czk_bn254_g1 a, b;
        czk_bn254_g2 c, d;
        rand_scalar(&k, s);
        czk_bn254_g1_fb_mul(&a, t1, &k);
        czk_bn254_g1_from_aff(&b, &CZK_BN254_G1_GEN);
        czk_bn254_g1_mul_vt(&b, &b, &k);
        CHECK(czk_bn254_g1_eq(&a, &b), "g1 fb_mul it=%d", it);
        czk_bn254_g2_fb_mul(&c, t2, &k);
        czk_bn254_g2_from_aff(&d, &CZK_BN254_G2_GEN);
        czk_bn254_g2_mul_vt(&d, &d, &k);
        CHECK(czk_bn254_g2_eq(&c, &d), "g2 fb_mul it=%d", it);
    }
    czk_bn254_g1_fb_free(t1);
    czk_bn254_g2_fb_free(t2);
    mpz_clear(s);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 24;
    t_seed("test_bn254_curve");
    bn_init();
    g2_init(&gb2);
    test_generators();
    test_g1(iters);
    test_g2(iters);
    test_g2_subgroup(40);
    test_fixed_base(iters);
    if (t_failures) {
        fprintf(stderr, "test_bn254_curve: %d failures\n", t_failures);
        return 1;
    }
    printf("test_bn254_curve: ok\n");
    return 0;
}
