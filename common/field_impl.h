/*
 * field_impl.h — private, header-only fast paths of the field arithmetic in
 * field.h, for the hot loops of field*.c, curve*.c, msm and ntt.
 *
 * Same representation as field.h: 64-bit limbs, least significant first;
 * czk_fp is Montgomery with R = 2^384, czk_fr Montgomery with R = 2^256, all
 * values fully reduced (< modulus) on input and output.  Every function
 * allows its output to alias its inputs.
 *
 * Multiplication is CIOS Montgomery in the "no final carry" form: both moduli
 * have a top limb below 2^63 - 1, so the running total never needs an extra
 * limb (the trick gnark-crypto and blst use).  The loops have constant trip
 * counts and are fully unrolled by the compiler.
 */
#ifndef CZK_FIELD_IMPL_H
#define CZK_FIELD_IMPL_H

#include <stdint.h>
#include <string.h>

#include "common/field.h"

typedef unsigned __int128 czk_u128;

#define CZK_INLINE static inline __attribute__((always_inline))
#if defined(__GNUC__) && !defined(__clang__)
#define CZK_UNROLL _Pragma("GCC unroll 8")
#else
#define CZK_UNROLL _Pragma("unroll")
/* ---- helpers shared by field_fp.c and field_fr.c (field_util.c) ---- */
/* decimal string of the n-limb integer a; out must hold 20*n+1 bytes */
void czk_field_to_dec_(char *out, const uint64_t *a, int n);
/* parse a decimal string of at most max_digits digits into n limbs (< m);
 * -EINVAL on empty, non-digit or too long input, -ERANGE when >= m */
int czk_field_from_dec_(uint64_t *out, const char *s, const uint64_t *m, int n, size_t max_digits);
/* a < m as n-limb integers */
int czk_field_lt_(const uint64_t *a, const uint64_t *m, int n);

#endif

/* moduli (plain integers) and -m^-1 mod 2^64 */
static const uint64_t czk_fp_q_[6] = {
    0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL,
    0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
static const uint64_t czk_fr_r_[4] = {
    0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL,
    0x73eda753299d7d48ULL};
#define CZK_FP_QINV_ 0x89f3fffcfffcfffdULL
#define CZK_FR_RINV_ 0xfffffffeffffffffULL

/* ---- generic n-limb helpers (n is a compile-time constant at every call) ---- */

CZK_INLINE uint64_t czk_addc_(uint64_t a, uint64_t b, uint64_t *carry)
{
    czk_u128 t = (czk_u128)a + b + *carry;
    *carry = (uint64_t)(t >> 64);
    return (uint64_t)t;
}

CZK_INLINE uint64_t czk_subb_(uint64_t a, uint64_t b, uint64_t *borrow)
{
    czk_u128 t = (czk_u128)a - b - *borrow;
    *borrow = (uint64_t)(t >> 64) & 1;
    return (uint64_t)t;
}

/* out = t - m if t >= m else t (t < 2m, m's top bit clear so t fits n limbs) */
CZK_INLINE void czk_mod_reduce1_(uint64_t *out, const uint64_t *t, const uint64_t *m, const int n)
{
    uint64_t s[8], br = 0;
    CZK_UNROLL
    for (int i = 0; i < n; i++)
        s[i] = czk_subb_(t[i], m[i], &br);
    uint64_t keep = -br; /* all ones: t < m, keep t */
    CZK_UNROLL
    for (int i = 0; i < n; i++)
        out[i] = (t[i] & keep) | (s[i] & ~keep);
}

CZK_INLINE void czk_mod_add_(uint64_t *out, const uint64_t *a, const uint64_t *b,
                             const uint64_t *m, const int n)
{
    uint64_t t[8], c = 0;
    CZK_UNROLL
    for (int i = 0; i < n; i++)
        t[i] = czk_addc_(a[i], b[i], &c);
    czk_mod_reduce1_(out, t, m, n);
}

CZK_INLINE void czk_mod_sub_(uint64_t *out, const uint64_t *a, const uint64_t *b,
                             const uint64_t *m, const int n)
{
    uint64_t t[8], br = 0;
    CZK_UNROLL
    for (int i = 0; i < n; i++)
        t[i] = czk_subb_(a[i], b[i], &br);
    uint64_t mask = -br, c = 0;
    CZK_UNROLL
    for (int i = 0; i < n; i++)
        out[i] = czk_addc_(t[i], m[i] & mask, &c);
}

CZK_INLINE void czk_mod_neg_(uint64_t *out, const uint64_t *a, const uint64_t *m, const int n)
{
    uint64_t nz = 0, br = 0, t[8];
    CZK_UNROLL
    for (int i = 0; i < n; i++)
        nz |= a[i];
    uint64_t mask = -(uint64_t)(nz != 0);
    CZK_UNROLL
    for (int i = 0; i < n; i++)
        t[i] = czk_subb_(m[i], a[i], &br);
    CZK_UNROLL
    for (int i = 0; i < n; i++)
        out[i] = t[i] & mask;
}

/* Montgomery product a*b/2^(64n) mod m, CIOS without the extra carry limb. */
CZK_INLINE void czk_mont_mul_(uint64_t *out, const uint64_t *a, const uint64_t *b,
                              const uint64_t *m, uint64_t minv, const int n)
{
    uint64_t t[8] = {0};
    CZK_UNROLL
    for (int i = 0; i < n; i++) {
        czk_u128 p = (czk_u128)a[0] * b[i] + t[0];
        uint64_t A = (uint64_t)(p >> 64);
        uint64_t t0 = (uint64_t)p;
        uint64_t k = t0 * minv;
        czk_u128 c = (czk_u128)k * m[0] + t0;
        uint64_t C = (uint64_t)(c >> 64);
        CZK_UNROLL
        for (int j = 1; j < n; j++) {
            p = (czk_u128)a[j] * b[i] + t[j] + A;
            A = (uint64_t)(p >> 64);
            c = (czk_u128)k * m[j] + (uint64_t)p + C;
            C = (uint64_t)(c >> 64);
            t[j - 1] = (uint64_t)c;
        }
        t[n - 1] = C + A;
    }
    czk_mod_reduce1_(out, t, m, n);
}

/* Montgomery square: the off-diagonal products once, doubled, then a
 * separate Montgomery reduction of the 2n-limb square. */
CZK_INLINE void czk_mont_sqr_(uint64_t *out, const uint64_t *a, const uint64_t *m,
                              uint64_t minv, const int n)
{
    uint64_t w[16] = {0};
    /* off-diagonal a[i]*a[j], i < j */
    CZK_UNROLL
    for (int i = 0; i < n - 1; i++) {
        uint64_t c = 0;
        CZK_UNROLL
        for (int j = i + 1; j < n; j++) {
            czk_u128 p = (czk_u128)a[i] * a[j] + w[i + j] + c;
            w[i + j] = (uint64_t)p;
            c = (uint64_t)(p >> 64);
        }
        w[i + n] = c;
    }
    /* double */
    w[2 * n - 1] = w[2 * n - 2] >> 63;
    CZK_UNROLL
    for (int i = 2 * n - 2; i > 0; i--)
        w[i] = (w[i] << 1) | (w[i - 1] >> 63);
    w[0] <<= 1;
    /* add the diagonal */
    uint64_t c = 0;
    CZK_UNROLL
    for (int i = 0; i < n; i++) {
        czk_u128 p = (czk_u128)a[i] * a[i];
        w[2 * i] = czk_addc_(w[2 * i], (uint64_t)p, &c);
        w[2 * i + 1] = czk_addc_(w[2 * i + 1], (uint64_t)(p >> 64), &c);
    }
    /* Montgomery reduction, n rounds; carries go into a separate word so
     * the upper half never overflows (value < m^2 < m * 2^(64n)). */
    uint64_t hi_carry = 0;
    CZK_UNROLL
    for (int i = 0; i < n; i++) {
        uint64_t k = w[i] * minv;
        uint64_t cc = 0;
        CZK_UNROLL
        for (int j = 0; j < n; j++) {
            czk_u128 p = (czk_u128)k * m[j] + w[i + j] + cc;
            w[i + j] = (uint64_t)p;
            cc = (uint64_t)(p >> 64);
        }
        /* add cc + previous carry into w[i+n] */
        czk_u128 s = (czk_u128)w[i + n] + cc + hi_carry;
        w[i + n] = (uint64_t)s;
        hi_carry = (uint64_t)(s >> 64);
    }
    /* result w[n..2n-1] < 2m (hi_carry is 0 because 2m < 2^(64n)) */
    czk_mod_reduce1_(out, w + n, m, n);
}

/* ---- Fp ---- */
CZK_INLINE void czk_fp_add_i(czk_fp *r, const czk_fp *a, const czk_fp *b)
{ czk_mod_add_(r->l, a->l, b->l, czk_fp_q_, 6); }
CZK_INLINE void czk_fp_sub_i(czk_fp *r, const czk_fp *a, const czk_fp *b)
{ czk_mod_sub_(r->l, a->l, b->l, czk_fp_q_, 6); }
CZK_INLINE void czk_fp_dbl_i(czk_fp *r, const czk_fp *a)
{ czk_mod_add_(r->l, a->l, a->l, czk_fp_q_, 6); }
CZK_INLINE void czk_fp_neg_i(czk_fp *r, const czk_fp *a)
{ czk_mod_neg_(r->l, a->l, czk_fp_q_, 6); }
CZK_INLINE void czk_fp_mul_i(czk_fp *r, const czk_fp *a, const czk_fp *b)
{ czk_mont_mul_(r->l, a->l, b->l, czk_fp_q_, CZK_FP_QINV_, 6); }
CZK_INLINE void czk_fp_sqr_i(czk_fp *r, const czk_fp *a)
{ czk_mont_sqr_(r->l, a->l, czk_fp_q_, CZK_FP_QINV_, 6); }
CZK_INLINE int czk_fp_is_zero_i(const czk_fp *a)
{ return (a->l[0] | a->l[1] | a->l[2] | a->l[3] | a->l[4] | a->l[5]) == 0; }
CZK_INLINE int czk_fp_eq_i(const czk_fp *a, const czk_fp *b)
{
    return ((a->l[0] ^ b->l[0]) | (a->l[1] ^ b->l[1]) | (a->l[2] ^ b->l[2]) |
            (a->l[3] ^ b->l[3]) | (a->l[4] ^ b->l[4]) | (a->l[5] ^ b->l[5])) == 0;
}

/* ---- Fr ---- */
CZK_INLINE void czk_fr_add_i(czk_fr *r, const czk_fr *a, const czk_fr *b)
{ czk_mod_add_(r->l, a->l, b->l, czk_fr_r_, 4); }
CZK_INLINE void czk_fr_sub_i(czk_fr *r, const czk_fr *a, const czk_fr *b)
{ czk_mod_sub_(r->l, a->l, b->l, czk_fr_r_, 4); }
CZK_INLINE void czk_fr_dbl_i(czk_fr *r, const czk_fr *a)
{ czk_mod_add_(r->l, a->l, a->l, czk_fr_r_, 4); }
CZK_INLINE void czk_fr_neg_i(czk_fr *r, const czk_fr *a)
{ czk_mod_neg_(r->l, a->l, czk_fr_r_, 4); }
CZK_INLINE void czk_fr_mul_i(czk_fr *r, const czk_fr *a, const czk_fr *b)
{ czk_mont_mul_(r->l, a->l, b->l, czk_fr_r_, CZK_FR_RINV_, 4); }
CZK_INLINE void czk_fr_sqr_i(czk_fr *r, const czk_fr *a)
{ czk_mont_sqr_(r->l, a->l, czk_fr_r_, CZK_FR_RINV_, 4); }
CZK_INLINE int czk_fr_is_zero_i(const czk_fr *a)
{ return (a->l[0] | a->l[1] | a->l[2] | a->l[3]) == 0; }
CZK_INLINE int czk_fr_eq_i(const czk_fr *a, const czk_fr *b)
{
    return ((a->l[0] ^ b->l[0]) | (a->l[1] ^ b->l[1]) | (a->l[2] ^ b->l[2]) |
            (a->l[3] ^ b->l[3])) == 0;
}

/* ---- Fp2 = Fp[u]/(u^2+1) ---- */
CZK_INLINE void czk_fp2_add_i(czk_fp2 *r, const czk_fp2 *a, const czk_fp2 *b)
{ czk_fp_add_i(&r->c0, &a->c0, &b->c0); czk_fp_add_i(&r->c1, &a->c1, &b->c1); }
CZK_INLINE void czk_fp2_sub_i(czk_fp2 *r, const czk_fp2 *a, const czk_fp2 *b)
{ czk_fp_sub_i(&r->c0, &a->c0, &b->c0); czk_fp_sub_i(&r->c1, &a->c1, &b->c1); }
CZK_INLINE void czk_fp2_dbl_i(czk_fp2 *r, const czk_fp2 *a)
{ czk_fp_dbl_i(&r->c0, &a->c0); czk_fp_dbl_i(&r->c1, &a->c1); }
CZK_INLINE void czk_fp2_neg_i(czk_fp2 *r, const czk_fp2 *a)
{ czk_fp_neg_i(&r->c0, &a->c0); czk_fp_neg_i(&r->c1, &a->c1); }
/* Karatsuba: 3 Fp multiplications */
CZK_INLINE void czk_fp2_mul_i(czk_fp2 *r, const czk_fp2 *a, const czk_fp2 *b)
{
    czk_fp v0, v1, s, t;
    czk_fp_mul_i(&v0, &a->c0, &b->c0);
    czk_fp_mul_i(&v1, &a->c1, &b->c1);
    czk_fp_add_i(&s, &a->c0, &a->c1);
    czk_fp_add_i(&t, &b->c0, &b->c1);
    czk_fp_mul_i(&s, &s, &t);
    czk_fp_sub_i(&s, &s, &v0);
    czk_fp_sub_i(&r->c1, &s, &v1);
    czk_fp_sub_i(&r->c0, &v0, &v1);
}
/* (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u: 2 Fp multiplications */
CZK_INLINE void czk_fp2_sqr_i(czk_fp2 *r, const czk_fp2 *a)
{
    czk_fp s, d, p;
    czk_fp_add_i(&s, &a->c0, &a->c1);
    czk_fp_sub_i(&d, &a->c0, &a->c1);
    czk_fp_mul_i(&p, &a->c0, &a->c1);
    czk_fp_mul_i(&r->c0, &s, &d);
    czk_fp_dbl_i(&r->c1, &p);
}
CZK_INLINE int czk_fp2_is_zero_i(const czk_fp2 *a)
{ return czk_fp_is_zero_i(&a->c0) && czk_fp_is_zero_i(&a->c1); }
CZK_INLINE int czk_fp2_eq_i(const czk_fp2 *a, const czk_fp2 *b)
{ return czk_fp_eq_i(&a->c0, &b->c0) && czk_fp_eq_i(&a->c1, &b->c1); }

/* ---- helpers shared by field_fp.c and field_fr.c (field_util.c) ---- */
/* decimal string of the n-limb integer a; out must hold 20*n+1 bytes */
void czk_field_to_dec_(char *out, const uint64_t *a, int n);
/* parse a decimal string of at most max_digits digits into n limbs (< m);
 * -EINVAL on empty, non-digit or too long input, -ERANGE when >= m */
int czk_field_from_dec_(uint64_t *out, const char *s, const uint64_t *m, int n, size_t max_digits);
/* a < m as n-limb integers */
int czk_field_lt_(const uint64_t *a, const uint64_t *m, int n);

#endif
