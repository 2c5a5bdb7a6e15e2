/*
 * field_fp.c — the BLS12-381 base field Fp (field.h): Montgomery arithmetic
 * on 6 little-endian 64-bit limbs, R = 2^384.  The hot operations are the
 * inline versions of field_impl.h; this file gives them their public names
 * and adds inversion, square root, powers and the conversions.
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

void czk_fp_add(czk_fp *r, const czk_fp *a, const czk_fp *b) { czk_fp_add_i(r, a, b); }
void czk_fp_sub(czk_fp *r, const czk_fp *a, const czk_fp *b) { czk_fp_sub_i(r, a, b); }
void czk_fp_dbl(czk_fp *r, const czk_fp *a) { czk_fp_dbl_i(r, a); }
void czk_fp_neg(czk_fp *r, const czk_fp *a) { czk_fp_neg_i(r, a); }
void czk_fp_mul(czk_fp *r, const czk_fp *a, const czk_fp *b) { czk_fp_mul_i(r, a, b); }
void czk_fp_sqr(czk_fp *r, const czk_fp *a) { czk_fp_sqr_i(r, a); }
bool czk_fp_is_zero(const czk_fp *a) { return czk_fp_is_zero_i(a); }
bool czk_fp_eq(const czk_fp *a, const czk_fp *b) { return czk_fp_eq_i(a, b); }

/* fixed 4-bit window, most significant first; exponent is a plain integer.
 * Branches and table indices come from the exponent only, never from a, so
 * with a public exponent the time does not depend on the base (czk_fp_inv_ct
 * relies on this). */
void czk_fp_pow(czk_fp *r, const czk_fp *a, const uint64_t *e, size_t e_limbs)
{
    czk_fp tbl[16], acc = CZK_FP_ONE;
    bool started = false;

    tbl[0] = CZK_FP_ONE;
    tbl[1] = *a;
    for (int i = 2; i < 16; i++)
        czk_fp_mul_i(&tbl[i], &tbl[i - 1], a);
    for (size_t li = e_limbs; li-- > 0;) {
        for (int sh = 60; sh >= 0; sh -= 4) {
            unsigned nib = (unsigned)(e[li] >> sh) & 15;
            if (started) {
                czk_fp_sqr_i(&acc, &acc);
                czk_fp_sqr_i(&acc, &acc);
                czk_fp_sqr_i(&acc, &acc);
                czk_fp_sqr_i(&acc, &acc);
            }
            if (nib) {
                czk_fp_mul_i(&acc, &acc, &tbl[nib]);
                started = true;
            }
        }
    }
    *r = acc;
}

/* R^3 mod q: the binary GCD inverts the raw integer a*R, giving 1/(a R);
 * a Montgomery product with R^3 turns that into R/a, the Montgomery form of 1/a */
static const czk_fp FP_R3 = {{0xed48ac6bd94ca1e0ULL, 0x315f831e03a7adf8ULL, 0x9a53352a615e29ddULL,
                              0x34c04e5e921e1761ULL, 0x2512d43565724728ULL, 0x0aa6346091755d4dULL}};

int czk_fp_inv(czk_fp *r, const czk_fp *a)
{
    czk_fp t;
    if (czk_fp_is_zero_i(a)) {
        *r = CZK_FP_ZERO;
        return -EDOM;
    }
    if (czk_field_inv_(t.l, a->l, czk_fp_q_, CZK_FP_QINV_, 6) == 0)
        czk_fp_mul_i(r, &t, &FP_R3);
    else
        czk_fp_pow(r, a, FP_QM2, 6); /* not reached for a prime modulus; kept as a safe path */
    return 0;
}

/* Fermat: a^(q-2) = 1/a for a != 0 and 0 for a == 0, through the fixed
 * window of czk_fp_pow over the public exponent q - 2 (381 squarings and
 * 96 multiplications whatever a is) */
void czk_fp_inv_ct(czk_fp *r, const czk_fp *a) { czk_fp_pow(r, a, FP_QM2, 6); }

int czk_fp_sqrt(czk_fp *r, const czk_fp *a)
{
    czk_fp s, chk;
    czk_fp_pow(&s, a, FP_SQRT_EXP, 6);
    czk_fp_sqr_i(&chk, &s);
    if (!czk_fp_eq_i(&chk, a))
        return -EDOM;
    *r = s;
    return 0;
}

void czk_fp_from_u64(czk_fp *r, uint64_t v)
{
    czk_fp t = {{v, 0, 0, 0, 0, 0}};
    czk_fp_mul_i(r, &t, &FP_R2);
}

void czk_fp_to_mont(czk_fp *r, const czk_fp *std) { czk_fp_mul_i(r, std, &FP_R2); }

void czk_fp_from_mont(czk_fp *std, const czk_fp *a)
{
    static const czk_fp one_plain = {{1, 0, 0, 0, 0, 0}};
    czk_fp_mul_i(std, a, &one_plain);
}

bool czk_fp_is_canonical(const czk_fp *raw) { return czk_field_lt_(raw->l, czk_fp_q_, 6); }

int czk_fp_from_bytes_le(czk_fp *r, const uint8_t b[CZK_FP_BYTES])
{
    czk_fp t;
    for (int i = 0; i < 6; i++) {
        uint64_t v = 0;
        for (int j = 7; j >= 0; j--)
            v = (v << 8) | b[8 * i + j];
        t.l[i] = v;
    }
    if (!czk_fp_is_canonical(&t))
        return -ERANGE;
    czk_fp_to_mont(r, &t);
    return 0;
}

void czk_fp_to_bytes_le(uint8_t b[CZK_FP_BYTES], const czk_fp *a)
{
    czk_fp t;
    czk_fp_from_mont(&t, a);
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 8; j++)
            b[8 * i + j] = (uint8_t)(t.l[i] >> (8 * j));
}

int czk_fp_from_dec(czk_fp *r, const char *s)
{
    czk_fp t;
    int rc = czk_field_from_dec_(t.l, s, czk_fp_q_, 6, CZK_FP_DEC_MAX - 1);
    if (rc < 0)
        return rc;
    czk_fp_to_mont(r, &t);
    return 0;
}

void czk_fp_to_dec(char out[CZK_FP_DEC_MAX], const czk_fp *a)
{
    char buf[20 * 6 + 1];
    czk_fp t;
    czk_fp_from_mont(&t, a);
    czk_field_to_dec_(buf, t.l, 6); /* < q < 10^116: at most 115 digits */
    memcpy(out, buf, strlen(buf) + 1);
}

bool czk_fp_sgn0(const czk_fp *a)
{
    czk_fp t;
    czk_fp_from_mont(&t, a);
    return t.l[0] & 1;
}
