/*
 * field_fp.c — the BLS12-381 base field Fp (field.h): Montgomery arithmetic
 * on 6 little-endian 64-bit limbs, R = 2^384.  The functions every prime
 * field has (field_tmpl.h, shared with BN254) over the inline operations of
 * field_impl.h; this file holds the constants and sgn0.  q = 3 mod 4, so
 * sqrt(a) = a^((q+1)/4) when it exists.
 */
#include <errno.h>
#include <string.h>

#include "common/crypto/field_impl.h"

const czk_fp CZK_FP_MOD = {{0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
                            0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL}};
const czk_fp CZK_FP_ZERO = {{0, 0, 0, 0, 0, 0}};
const czk_fp CZK_FP_ONE = {{0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL,
                            0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL}};
/* R^2 mod q, to enter Montgomery form */
static const czk_fp FP_R2 = {{0xf4df1f341c341746ULL, 0x0a76e6a609d104f1ULL, 0x8de5476c4c95b6d5ULL,
                              0x67eb88a9939d83c0ULL, 0x9a793e85b519952dULL, 0x11988fe592cae3aaULL}};
/* q - 2 (Fermat inversion) and (q + 1) / 4 (square root, q = 3 mod 4) */
static const uint64_t FP_QM2[6] = {0xb9feffffffffaaa9ULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
                                   0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
static const uint64_t FP_SQRT_EXP[6] = {0xee7fbfffffffeaabULL, 0x07aaffffac54ffffULL,
                                        0xd9cc34a83dac3d89ULL, 0xd91dd2e13ce144afULL,
                                        0x92c6e9ed90d2eb35ULL, 0x0680447a8e5ff9a6ULL};

/* R^3 mod q: the binary GCD inverts the raw integer a*R, giving 1/(a R);
 * a Montgomery product with R^3 turns that into R/a, the Montgomery form of 1/a */
static const czk_fp FP_R3 = {{0xed48ac6bd94ca1e0ULL, 0x315f831e03a7adf8ULL, 0x9a53352a615e29ddULL,
                              0x34c04e5e921e1761ULL, 0x2512d43565724728ULL, 0x0aa6346091755d4dULL}};

#define BF czk_fp
#define BF_N 6
#define BF_BYTES CZK_FP_BYTES
#define BF_DEC_MAX CZK_FP_DEC_MAX
#define BF_M czk_fp_q_
#define BF_MINV CZK_FP_QINV_
#define BF_ZERO CZK_FP_ZERO
#define BF_ONE CZK_FP_ONE
#define BF_R2 FP_R2
#define BF_R3 FP_R3
#define BF_MM2 FP_QM2
#define BF_SQRT_EXP FP_SQRT_EXP
#include "common/crypto/field_tmpl.h"

bool czk_fp_sgn0(const czk_fp *a)
{
    czk_fp t;
    czk_fp_from_mont(&t, a);
    return t.l[0] & 1;
}
