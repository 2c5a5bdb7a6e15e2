/*
 * bn254_fp.c — the BN254 base field Fp (bn254_field.h): Montgomery
 * arithmetic on 4 little-endian 64-bit limbs, R = 2^256.  The functions
 * come from the template of every prime field (field_tmpl.h, shared with
 * BLS12-381); this file holds the constants.  p = 3 mod 4, so
 * sqrt(a) = a^((p+1)/4) when it exists.
 */
#include <errno.h>
#include <string.h>

#include "common/crypto/bn254_field_impl.h"

const czk_bn254_fp CZK_BN254_FP_MOD = {{0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL,
                                        0xb85045b68181585dULL, 0x30644e72e131a029ULL}};
const czk_bn254_fp CZK_BN254_FP_ZERO = {{0, 0, 0, 0}};
const czk_bn254_fp CZK_BN254_FP_ONE = {{0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL,
                                        0x666ea36f7879462cULL, 0x0e0a77c19a07df2fULL}};
/* R^2 and R^3 mod p; p - 2; (p + 1) / 4 */
static const czk_bn254_fp FP_R2 = {{0xf32cfc5b538afa89ULL, 0xb5e71911d44501fbULL,
                                    0x47ab1eff0a417ff6ULL, 0x06d89f71cab8351fULL}};
static const czk_bn254_fp FP_R3 = {{0xb1cd6dafda1530dfULL, 0x62f210e6a7283db6ULL,
                                    0xef7f0b0c0ada0afbULL, 0x20fd6e902d592544ULL}};
static const uint64_t FP_PM2[4] = {0x3c208c16d87cfd45ULL, 0x97816a916871ca8dULL,
                                   0xb85045b68181585dULL, 0x30644e72e131a029ULL};
static const uint64_t FP_SQRT_EXP[4] = {0x4f082305b61f3f52ULL, 0x65e05aa45a1c72a3ULL,
                                        0x6e14116da0605617ULL, 0x0c19139cb84c680aULL};

#define BF czk_bn254_fp
#define BF_N 4
#define BF_BYTES CZK_BN254_BYTES
#define BF_DEC_MAX CZK_BN254_DEC_MAX
#define BF_M czk_bn254_p_
#define BF_MINV czk_bn254_pinv_
#define BF_ZERO CZK_BN254_FP_ZERO
#define BF_ONE CZK_BN254_FP_ONE
#define BF_R2 FP_R2
#define BF_R3 FP_R3
#define BF_MM2 FP_PM2
#define BF_SQRT_EXP FP_SQRT_EXP
#include "common/crypto/field_tmpl.h"
