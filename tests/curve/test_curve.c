/*
 * test_curve.c — G1 and G2 arithmetic against an independent affine GMP
 * implementation (oracle.h): generators, r*G == inf, scalar multiples on
 * random scalars, add/dbl/mixed-add consistency and exceptional cases,
 * batch_to_aff, on-curve and subgroup checks (including a curve point outside
 * the subgroup found by trying x values), fixed-base tables vs plain mul.
 */
#include <errno.h>
#include <string.h>

#include "common/crypto/curve.h"
#include "../field/test_util.h"
#include "tests/common/curve_oracle.h"

static o_f2 o_b1, o_b2; /* 4 and 4(1+u) */

/* the idx-th x = 1, 2, ... with x^3 + 4 a square; y from GMP (q = 3 mod 4) */
static int g1_find_non_subgroup(czk_g1_aff *p, int idx)
{
    mpz_t x, rhs, y, e;
    int found = 0;
    mpz_inits(x, rhs, y, e, NULL);
    mpz_add_ui(e, o_q, 1);
    mpz_fdiv_q_2exp(e, e, 2);
    for (unsigned long xi = 1; xi < 1000 && !found; xi++) {
        mpz_set_ui(x, xi);
        mpz_pow_ui(rhs, x, 3);
        mpz_add_ui(rhs, rhs, 4);
        mpz_mod(rhs, rhs, o_q);
        if (mpz_legendre(rhs, o_q) != 1)
            continue;
        if (idx-- > 0)
            continue;
        mpz_powm(y, rhs, e, o_q);
        o_to_mont(p->x.l, x);
        o_to_mont(p->y.l, y);
        found = 1;
    }
    mpz_clears(x, rhs, y, e, NULL);
    return found;
}

/* the idx-th x = c + u, c = 1, 2, ..., with a y; y from czk_fp2_sqrt, checked
 * by the oracle's on-curve test */
static int g2_find_non_subgroup(czk_g2_aff *p, int idx)
{
    o_f2 x, rhs;
    int found = 0;
    o_f2_init(&x);
    o_f2_init(&rhs);
    for (unsigned long c = 1; c < 1000 && !found; c++) {
        mpz_set_ui(x.a, c);
        mpz_set_ui(x.b, 1);
        o_f2_mul(&rhs, &x, &x);
        o_f2_mul(&rhs, &rhs, &x);
        o_f2_add(&rhs, &rhs, &o_b2);
        czk_fp2 r, y;
        o_to_mont(r.c0.l, rhs.a);
        o_to_mont(r.c1.l, rhs.b);
        if (czk_fp2_sqrt(&y, &r) != 0 || idx-- > 0)
            continue;
        o_to_mont(p->x.c0.l, x.a);
        o_to_mont(p->x.c1.l, x.b);
        p->y = y;
        found = 1;
    }
    o_f2_clear(&x);
    o_f2_clear(&rhs);
    return found;
}

#define TG czk_g1
#define TGEN G1
#define TJ czk_g1
#define TA czk_g1_aff
#define TF czk_fp
#define TF_MUL czk_fp_mul
#define TF_SQR czk_fp_sqr
#define T_TO_O g1_to_o
#define T_FROM_O g1_from_o
#define T_COFACTOR_HEX "396c8c005555e1568c00aaab0000aaab"
#define TB o_b1
#define T_FIND_NON_SUBGROUP g1_find_non_subgroup
#define T_GEN_HEX {"17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb", "0", \
                   "08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1", "0"}
#include "test_curve_tmpl.h"
#undef TG
#undef TGEN
#undef TJ
#undef TA
#undef TF
#undef TF_MUL
#undef TF_SQR
#undef T_TO_O
#undef T_FROM_O
#undef T_COFACTOR_HEX
#undef TB
#undef T_FIND_NON_SUBGROUP
#undef T_GEN_HEX

#define TG czk_g2
#define TGEN G2
#define TJ czk_g2
#define TA czk_g2_aff
#define TF czk_fp2
#define TF_MUL czk_fp2_mul
#define TF_SQR czk_fp2_sqr
#define T_TO_O g2_to_o
#define T_FROM_O g2_from_o
#define T_COFACTOR_HEX "5d543a95414e7f1091d50792876a202cd91de4547085abaa68a205b2e5a7ddfa628f1cb4d9e82ef21537e293a6691ae1616ec6e786f0c70cf1c38e31c7238e5"
#define TB o_b2
#define T_FIND_NON_SUBGROUP g2_find_non_subgroup
#define T_GEN_HEX {"024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8", \
                   "13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e", \
                   "0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801", \
                   "0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79be"}
#include "test_curve_tmpl.h"

int main(int argc, char **argv)
{
    int nmul = argc > 1 ? atoi(argv[1]) : 24;
    int nfb = argc > 2 ? atoi(argv[2]) : 12;
    t_seed("test_curve");
    o_init();
    o_f2_init(&o_b1);
    o_f2_init(&o_b2);
    mpz_set_ui(o_b1.a, 4);
    mpz_set_ui(o_b2.a, 4);
    mpz_set_ui(o_b2.b, 4);
    test_czk_g1(nmul, nfb);
    test_czk_g2(nmul, nfb);
    if (t_failures) {
        fprintf(stderr, "test_curve: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_curve: ok\n");
    return 0;
}
