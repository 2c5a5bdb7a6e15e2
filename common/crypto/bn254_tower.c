/*
 * bn254_tower.c — BN254's extension tower above Fp2 (bn254_pairing.h):
 * Fp6 = Fp2[v]/(v^3 - xi), xi = 9 + u, and Fp12 = Fp6[w]/(w^2 - v), so
 * w^6 = xi; the D-type twist's sparse line product is
 * czk_bn254_fp12_mul_034.  The code is tower_tmpl.h, shared with
 * BLS12-381 (pairing_tower.c).
 * Representation: Montgomery form throughout (bn254_field.h).
 */
#include "common/crypto/bn254_pairing.h"

#define TW(name) czk_bn254_##name
#define TWC(name) CZK_BN254_##name
#define TW_MUL_XI czk_bn254_fp2_mul_xi
#define TW_FP_LIMBS CZK_BN254_LIMBS
#define TW_FP_MOD CZK_BN254_FP_MOD
/* 2^256 mod p (CZK_BN254_FP_ONE) */
#define TW_FP_ONE_LIMBS                                                           \
    { 0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL, 0x666ea36f7879462cULL,        \
      0x0e0a77c19a07df2fULL }
#include "common/crypto/tower_tmpl.h"
