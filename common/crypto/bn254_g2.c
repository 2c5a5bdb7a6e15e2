/*
 * bn254_g2.c — G2 of BN254: the order-r subgroup of the D-type twist
 * y^2 = x^3 + 3/xi over Fp2, xi = 9 + u (bn254_curve.h).  The generic point
 * code comes from the same template as BLS12-381's (curve_pub_tmpl_impl.h);
 * this file holds the generator, the twist constant and the subgroup check.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto/bn254_curve_impl.h"
#include "common/base/log.h"

/* the EIP-197 / snarkjs generator:
 * x = 10857046999023057135944570762232829481370756359578518086990519993285655852781
 *   + 11559732032986387107991004021392285783925812861821192530917403151452391805634 u
 * y = 8495653923123431417604973247489272438418190587263600148770280649306958101930
 *   + 4082367875863433681332203403145435568316851327593401208105741076214120093531 u
 * in Montgomery form */
const czk_bn254_g2_aff CZK_BN254_G2_GEN = {
    {{{0x8e83b5d102bc2026ULL, 0xdceb1935497b0172ULL, 0xfbb8264797811adfULL, 0x19573841af96503bULL}},
     {{0xafb4737da84c6140ULL, 0x6043dd5a5802d8c4ULL, 0x09e950fc52a02f86ULL, 0x14fef0833aea7b6bULL}}},
    {{{0x619dfa9d886be9f6ULL, 0xfe7fd297f59e9b78ULL, 0xff9e1a62231b7dfeULL, 0x28fd7eebae9e4206ULL}},
     {{0x64095b56c71856eeULL, 0xdc57f922327d3cbbULL, 0x55f935be33351076ULL, 0x0da4a0e693fd6482ULL}}}};

/* b' = 3 / (9 + u) =
 *   19485874751759354771024239261021720505790618469301721065564631296452457478373
 *   + 266929791119991161246907387137283842545076965332900288569378510910307636690 u */
const czk_bn254_fp2 CZK_BN254_G2_B = {
    {{0x3bf938e377b802a8ULL, 0x020b1b273633535dULL, 0x26b7edf049755260ULL, 0x2514c6324384a86dULL}},
    {{0x38e7ecccd1dcff67ULL, 0x65f0b37d93ce0d3eULL, 0xd749d0dd22ac00aaULL, 0x0141b9ce4a688d4dULL}}};
/* 3 b' */
static const czk_bn254_fp2 G2_B3 = {
    {{0x3baa927cb62e0d6aULL, 0xd71e7c52d1b664fdULL, 0x03873e63d95d4664ULL, 0x0e75b5b1082ab8f4ULL}},
    {{0xaab7c6667596fe35ULL, 0x31d21a78bb6a27baULL, 0x85dd7297680401ffULL, 0x03c52d6adf39a7e9ULL}}};

static bool fp2_canon_(const czk_bn254_fp2 *a)
{
    return czk_bn254_fp_is_canonical(&a->c0) && czk_bn254_fp_is_canonical(&a->c1);
}
static void g2_mul_b3_(czk_bn254_fp2 *r, const czk_bn254_fp2 *a) { czk_bn254_fp2_mul(r, a, &G2_B3); }

#define CG czk_bn254_g2
#define CA czk_bn254_g2_aff
#define CF czk_bn254_fp2
#define CF_ONE CZK_BN254_FP2_ONE
#define CF_CANON fp2_canon_
#define CG_NAME "bn254 g2"
#define CF_MUL_B3 g2_mul_b3_
#define CB CZK_BN254_G2_B
#define CG_SCALAR czk_bn254_fr
#define CG_NO_MUL_ABSU
#define CG_WITH_MUL_VT
#include "common/crypto/curve_pub_tmpl_impl.h"

/* r P == 0 with the variable-time multiplication by the public r (a point of
 * the twist outside G2 has a component of order dividing the cofactor
 * 2p - r, which is coprime to r, so it survives) */
bool czk_bn254_g2_aff_in_subgroup(const czk_bn254_g2_aff *p)
{
    czk_bn254_g2 t;
    if (!czk_bn254_g2_aff_on_curve(p))
        return false;
    if (czk_bn254_g2_aff_is_inf_i(p))
        return true;
    czk_bn254_g2_from_aff_i(&t, p);
    czk_bn254_g2_mul_vt(&t, &t, &CZK_BN254_FR_MOD);
    return czk_bn254_g2_is_inf_i(&t);
}
