/*
 * bn254_g1.c — G1 of BN254: y^2 = x^3 + 3 over Fp, prime order r, cofactor
 * 1 (bn254_curve.h).  The generic point code comes from the same template
 * as BLS12-381's (curve_pub_tmpl_impl.h); this file holds the generator,
 * the curve constant and the subgroup check.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto/bn254_curve_impl.h"
#include "common/base/log.h"

/* (1, 2), Montgomery coordinates */
const czk_bn254_g1_aff CZK_BN254_G1_GEN = {
    {{0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL, 0x666ea36f7879462cULL, 0x0e0a77c19a07df2fULL}},
    {{0xa6ba871b8b1e1b3aULL, 0x14f1d651eb8e167bULL, 0xccdd46def0f28c58ULL, 0x1c14ef83340fbe5eULL}}};

/* b = 3, Montgomery */
static const czk_bn254_fp G1_B = {{0x7a17caa950ad28d7ULL, 0x1f6ac17ae15521b9ULL,
                                   0x334bea4e696bd284ULL, 0x2a1f6744ce179d8eULL}};

/* 3b = 9 by additions */
static void g1_mul_b3_(czk_bn254_fp *r, const czk_bn254_fp *a)
{
    czk_bn254_fp t;
    czk_bn254_fp_dbl_i(&t, a);
    czk_bn254_fp_dbl_i(&t, &t);
    czk_bn254_fp_dbl_i(&t, &t);
    czk_bn254_fp_add_i(r, &t, a);
}

#define CG czk_bn254_g1
#define CA czk_bn254_g1_aff
#define CF czk_bn254_fp
#define CF_ONE CZK_BN254_FP_ONE
#define CF_CANON czk_bn254_fp_is_canonical
#define CG_NAME "bn254 g1"
#define CF_MUL_B3 g1_mul_b3_
#define CB G1_B
#define CG_SCALAR czk_bn254_fr
#define CG_NO_MUL_ABSU
#define CG_WITH_MUL_VT
#include "common/crypto/curve_pub_tmpl_impl.h"

/* E(Fp) has prime order r: every point on the curve is in G1 */
bool czk_bn254_g1_aff_in_subgroup(const czk_bn254_g1_aff *p) { return czk_bn254_g1_aff_on_curve(p); }
