/*
 * pairing_tower.c — BLS12-381's extension tower above Fp2 (pairing.h):
 * Fp6 = Fp2[v]/(v^3 - xi), xi = 1 + u, and Fp12 = Fp6[w]/(w^2 - v), so that
 * w^6 = xi; the M-type twist's sparse line product is czk_fp12_mul_014.
 * The code is tower_tmpl.h, shared with BN254 (bn254_tower.c).
 * Representation: everything is in the Montgomery form of field.h.
 */
#include "common/crypto/pairing.h"

#define TW(name) czk_##name
#define TWC(name) CZK_##name
#define TW_MUL_XI czk_fp2_mul_nr
#define TW_FP_LIMBS CZK_FP_LIMBS
#define TW_FP_MOD CZK_FP_MOD
/* 2^384 mod q (CZK_FP_ONE) */
#define TW_FP_ONE_LIMBS                                                           \
    { 0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,        \
      0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL }
#define TW_TWIST_M 1
#include "common/crypto/tower_tmpl.h"
