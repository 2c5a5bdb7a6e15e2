/*
 * bn254_fr.c — the BN254 scalar field Fr (bn254_field.h): Montgomery
 * arithmetic on 4 little-endian 64-bit limbs, R = 2^256.  The functions
 * every prime field has come from field_tmpl.h (shared with BLS12-381, with
 * uniform random elements from getrandom(2)); this file holds the
 * constants, the 2^28-th root of unity and Tonelli-Shanks square roots
 * (r - 1 = 2^28 t).
 */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "common/crypto/bn254_field_impl.h"
#include "common/base/log.h"

const czk_bn254_fr CZK_BN254_FR_MOD = {{0x43e1f593f0000001ULL, 0x2833e84879b97091ULL,
                                        0xb85045b68181585dULL, 0x30644e72e131a029ULL}};
const czk_bn254_fr CZK_BN254_FR_ZERO = {{0, 0, 0, 0}};
const czk_bn254_fr CZK_BN254_FR_ONE = {{0xac96341c4ffffffbULL, 0x36fc76959f60cd29ULL,
                                        0x666ea36f7879462eULL, 0x0e0a77c19a07df2fULL}};
const czk_bn254_fr CZK_BN254_FR_ROOT_2_28 = {{0x636e735580d13d9cULL, 0xa22bf3742445ffd6ULL,
                                              0x56452ac01eb203d8ULL, 0x1860ef942963f9e7ULL}};
static const czk_bn254_fr FR_R2 = {{0x1bb8e645ae216da7ULL, 0x53fe3ab1e35c59e3ULL,
                                    0x8c49833d53bb8085ULL, 0x0216d0b17f4e44a5ULL}};
static const czk_bn254_fr FR_R3 = {{0x5e94d8e1b4bf0040ULL, 0x2a489cbe1cfbb6b8ULL,
                                    0x893cc664a19fcfedULL, 0x0cf8594b7fcc657cULL}};
static const uint64_t FR_RM2[4] = {0x43e1f593efffffffULL, 0x2833e84879b97091ULL,
                                   0xb85045b68181585dULL, 0x30644e72e131a029ULL};
/* (t - 1) / 2 with r - 1 = 2^28 t, t odd */
static const uint64_t FR_TM1_HALF[4] = {0xcdcb848a1f0fac9fULL, 0x0c0ac2e9419f4243ULL,
                                        0x098d014dc2822db4ULL, 0x0000000183227397ULL};

/* _random: r > 2^253, so a 254-bit string is below r with probability
 * r / 2^254 > 1/2 */
#define BF czk_bn254_fr
#define BF_N 4
#define BF_BYTES CZK_BN254_BYTES
#define BF_DEC_MAX CZK_BN254_DEC_MAX
#define BF_M czk_bn254_r_
#define BF_MINV czk_bn254_rinv_
#define BF_ZERO CZK_BN254_FR_ZERO
#define BF_ONE CZK_BN254_FR_ONE
#define BF_R2 FR_R2
#define BF_R3 FR_R3
#define BF_MM2 FR_RM2
#define BF_RANDOM_TOP 0x3f
#define BF_RANDOM_WHAT "bn254 scalar"
#include "common/crypto/field_tmpl.h"

/*
 * Tonelli-Shanks in the form of the "constant-exponent" variant (as in
 * arkworks / ffjavascript's fsqrt): w = a^((t-1)/2), x = a w, b = x w = a^t;
 * while b != 1 find the least i with b^(2^i) = 1, then with
 * g = z^(2^(m-i-1)) (z the root of unity of order 2^m): x *= g, b *= g^2,
 * z = g^2, m = i.  The result is checked by squaring.
 */
int czk_bn254_fr_sqrt(czk_bn254_fr *r, const czk_bn254_fr *a)
{
    czk_bn254_fr w, x, b, z = CZK_BN254_FR_ROOT_2_28, t, g;
    int m = CZK_BN254_FR_TWO_ADICITY;

    if (czk_bn254_fr_is_zero_i(a)) {
        *r = CZK_BN254_FR_ZERO;
        return 0;
    }
    czk_bn254_fr_pow(&w, a, FR_TM1_HALF, 4);
    czk_bn254_fr_mul_i(&x, a, &w);
    czk_bn254_fr_mul_i(&b, &x, &w);
    while (!czk_bn254_fr_eq_i(&b, &CZK_BN254_FR_ONE)) {
        int i = 0;
        t = b;
        while (!czk_bn254_fr_eq_i(&t, &CZK_BN254_FR_ONE)) {
            czk_bn254_fr_sqr_i(&t, &t);
            if (++i == m)
                return -EDOM; /* b's order is 2^m: a is a non-residue */
        }
        g = z;
        for (int j = 0; j < m - i - 1; j++)
            czk_bn254_fr_sqr_i(&g, &g);
        czk_bn254_fr_mul_i(&x, &x, &g);
        czk_bn254_fr_sqr_i(&z, &g);
        czk_bn254_fr_mul_i(&b, &b, &z);
        m = i;
    }
    czk_bn254_fr_sqr_i(&t, &x);
    if (!czk_bn254_fr_eq_i(&t, a))
        return -EDOM;
    *r = x;
    return 0;
}
