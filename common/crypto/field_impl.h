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
 * limb (the trick gnark-crypto and blst use).  Portable C (constant trip
 * counts, unrolled by the compiler) and, on x86-64 with BMI2 + ADX (the
 * library is built with -mbmi2 -madx), mulx/adcx/adox inline assembly.
 * Squaring is a multiplication.  Measured on the 2-core build host (AMD
 * EPYC, shared): Fp mul ~24 ns, Fr mul ~15 ns (bench/field/bench_field).
 * Reductions, negation and subtraction select by mask, never by branch; the
 * czk_ct_* helpers (barrier, zero mask, conditional move) serve the _ct
 * functions of field.h and curve.h.  The per-field inline operations
 * (czk_fp_add_i ... czk_fp2_eq_i) are instantiated from field_tmpl_impl.h
 * and fp2_tmpl_impl.h, as BN254's are in bn254_field_impl.h.
 */
#ifndef CZK_FIELD_IMPL_H
#define CZK_FIELD_IMPL_H

#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "common/crypto/field.h"

typedef unsigned __int128 czk_u128;

#define CZK_INLINE static inline __attribute__((always_inline))
#if defined(__GNUC__) && !defined(__clang__)
#define CZK_UNROLL _Pragma("GCC unroll 8")
#else
#define CZK_UNROLL _Pragma("unroll")
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

/* add / subtract with carry (carry and borrow are 0 or 1); on x86-64 the
 * intrinsics become adc / sbb chains, which __int128 arithmetic does not */
CZK_INLINE uint64_t czk_addc_(uint64_t a, uint64_t b, uint64_t *carry)
{
#if defined(__x86_64__)
    unsigned long long r;
    *carry = _addcarry_u64((unsigned char)*carry, a, b, &r);
    return r;
#else
    czk_u128 t = (czk_u128)a + b + *carry;
    *carry = (uint64_t)(t >> 64);
    return (uint64_t)t;
#endif
}

CZK_INLINE uint64_t czk_subb_(uint64_t a, uint64_t b, uint64_t *borrow)
{
#if defined(__x86_64__)
    unsigned long long r;
    *borrow = _subborrow_u64((unsigned char)*borrow, a, b, &r);
    return r;
#else
    czk_u128 t = (czk_u128)a - b - *borrow;
    *borrow = (uint64_t)(t >> 64) & 1;
    return (uint64_t)t;
#endif
}

/* ---- constant-time helpers (the *_ct functions are built from these) ----
 * A value barrier hides a word from the optimiser, so a mask computed from
 * secret data cannot be turned back into a branch or a conditional load. */
CZK_INLINE uint64_t czk_ct_barrier_(uint64_t v)
{
    __asm__("" : "+r"(v));
    return v;
}

/* all ones when the n words at a are all zero, else 0; no branch */
CZK_INLINE uint64_t czk_ct_zero_mask_(const uint64_t *a, size_t n)
{
    uint64_t acc = 0;
    for (size_t i = 0; i < n; i++)
        acc |= a[i];
    acc = czk_ct_barrier_(acc);
    return ((acc | (0 - acc)) >> 63) - 1;
}

/* r[i] = mask ? a[i] : r[i] for n words, mask all ones or 0; no branch */
CZK_INLINE void czk_ct_cmov_(uint64_t *r, const uint64_t *a, uint64_t mask, size_t n)
{
    mask = czk_ct_barrier_(mask);
    for (size_t i = 0; i < n; i++)
        r[i] ^= (r[i] ^ a[i]) & mask;
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
    uint64_t mask = ~czk_ct_zero_mask_(&nz, 1);
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

/* x86-64 with BMI2 + ADX: the same CIOS in mulx/adcx/adox assembly.  Define
 * CZK_NO_ASM to force the portable C above.  The blocks were generated by a
 * short script; the pattern, for n limbs, per word b[i]:
 *   row:        t += a * b[i]; for each j, mulx a[j] gives (lo, hi); lo is
 *               added to t[j] on the OF chain (adox), hi to t[j+1] on the CF
 *               chain (adcx); the top word A collects hi(a[n-1] b[i]) + CF + OF.
 *   reduction:  k = t[0] * minv; for each j, mulx m[j] gives (lo, hi); the
 *               old t[j+1] is added (adcx) into the register holding hi of
 *               m[j-1] and lo of m[j] (adox), which becomes the new t[j];
 *               the new t[n-1] = hi(k m[n-1]) + CF + OF + A.
 *   The register holding t[0] is free after each reduction and becomes the
 *   next round's scratch hi ("h"), so names rotate from round to round.
 * The result is < 2m and gets the same final conditional subtraction. */
#if defined(__x86_64__) && defined(__BMI2__) && defined(__ADX__) && !defined(CZK_NO_ASM)
#define CZK_FIELD_ASM 1
static const uint64_t czk_fp_qinv_ = CZK_FP_QINV_;
static const uint64_t czk_fr_rinv_ = CZK_FR_RINV_;

/* out[0..5] = a*b/2^384 mod m, not yet reduced below m (out < 2m) */
CZK_INLINE void czk_fp_mont_mul_asm_(uint64_t *out, const uint64_t *a, const uint64_t *b)
{
    uint64_t v_t0, v_t1, v_t2, v_t3, v_t4, v_t5, v_h, v_A, v_lo;
    __asm__(
        "mov 0(%[b]), %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx 0(%[a]), %[t0], %[t1]\n\t"
        "mulx 8(%[a]), %[lo], %[t2]\n\t"
        "adcx %[lo], %[t1]\n\t"
        "mulx 16(%[a]), %[lo], %[t3]\n\t"
        "adcx %[lo], %[t2]\n\t"
        "mulx 24(%[a]), %[lo], %[t4]\n\t"
        "adcx %[lo], %[t3]\n\t"
        "mulx 32(%[a]), %[lo], %[t5]\n\t"
        "adcx %[lo], %[t4]\n\t"
        "mulx 40(%[a]), %[lo], %[A]\n\t"
        "adcx %[lo], %[t5]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[A]\n\t"
        "mov %[qinv], %%rdx\n\t"
        "imul %[t0], %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx %[q0], %[lo], %[h]\n\t"
        "adcx %[t0], %[lo]\n\t"
        "adcx %[t1], %[h]\n\t"
        "mulx %[q1], %[lo], %[t1]\n\t"
        "adox %[lo], %[h]\n\t"
        "adcx %[t2], %[t1]\n\t"
        "mulx %[q2], %[lo], %[t2]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[t3], %[t2]\n\t"
        "mulx %[q3], %[lo], %[t3]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[t4], %[t3]\n\t"
        "mulx %[q4], %[lo], %[t4]\n\t"
        "adox %[lo], %[t3]\n\t"
        "adcx %[t5], %[t4]\n\t"
        "mulx %[q5], %[lo], %[t5]\n\t"
        "adox %[lo], %[t4]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[t5]\n\t"
        "adox %[A], %[t5]\n\t"
        "mov 8(%[b]), %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx 0(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[h]\n\t"
        "adcx %[A], %[t1]\n\t"
        "mulx 8(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[A], %[t2]\n\t"
        "mulx 16(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[A], %[t3]\n\t"
        "mulx 24(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t3]\n\t"
        "adcx %[A], %[t4]\n\t"
        "mulx 32(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t4]\n\t"
        "adcx %[A], %[t5]\n\t"
        "mulx 40(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t5]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[A]\n\t"
        "adox %[lo], %[A]\n\t"
        "mov %[qinv], %%rdx\n\t"
        "imul %[h], %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx %[q0], %[lo], %[t0]\n\t"
        "adcx %[h], %[lo]\n\t"
        "adcx %[t1], %[t0]\n\t"
        "mulx %[q1], %[lo], %[t1]\n\t"
        "adox %[lo], %[t0]\n\t"
        "adcx %[t2], %[t1]\n\t"
        "mulx %[q2], %[lo], %[t2]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[t3], %[t2]\n\t"
        "mulx %[q3], %[lo], %[t3]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[t4], %[t3]\n\t"
        "mulx %[q4], %[lo], %[t4]\n\t"
        "adox %[lo], %[t3]\n\t"
        "adcx %[t5], %[t4]\n\t"
        "mulx %[q5], %[lo], %[t5]\n\t"
        "adox %[lo], %[t4]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[t5]\n\t"
        "adox %[A], %[t5]\n\t"
        "mov 16(%[b]), %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx 0(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t0]\n\t"
        "adcx %[A], %[t1]\n\t"
        "mulx 8(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[A], %[t2]\n\t"
        "mulx 16(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[A], %[t3]\n\t"
        "mulx 24(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t3]\n\t"
        "adcx %[A], %[t4]\n\t"
        "mulx 32(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t4]\n\t"
        "adcx %[A], %[t5]\n\t"
        "mulx 40(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t5]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[A]\n\t"
        "adox %[lo], %[A]\n\t"
        "mov %[qinv], %%rdx\n\t"
        "imul %[t0], %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx %[q0], %[lo], %[h]\n\t"
        "adcx %[t0], %[lo]\n\t"
        "adcx %[t1], %[h]\n\t"
        "mulx %[q1], %[lo], %[t1]\n\t"
        "adox %[lo], %[h]\n\t"
        "adcx %[t2], %[t1]\n\t"
        "mulx %[q2], %[lo], %[t2]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[t3], %[t2]\n\t"
        "mulx %[q3], %[lo], %[t3]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[t4], %[t3]\n\t"
        "mulx %[q4], %[lo], %[t4]\n\t"
        "adox %[lo], %[t3]\n\t"
        "adcx %[t5], %[t4]\n\t"
        "mulx %[q5], %[lo], %[t5]\n\t"
        "adox %[lo], %[t4]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[t5]\n\t"
        "adox %[A], %[t5]\n\t"
        "mov 24(%[b]), %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx 0(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[h]\n\t"
        "adcx %[A], %[t1]\n\t"
        "mulx 8(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[A], %[t2]\n\t"
        "mulx 16(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[A], %[t3]\n\t"
        "mulx 24(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t3]\n\t"
        "adcx %[A], %[t4]\n\t"
        "mulx 32(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t4]\n\t"
        "adcx %[A], %[t5]\n\t"
        "mulx 40(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t5]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[A]\n\t"
        "adox %[lo], %[A]\n\t"
        "mov %[qinv], %%rdx\n\t"
        "imul %[h], %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx %[q0], %[lo], %[t0]\n\t"
        "adcx %[h], %[lo]\n\t"
        "adcx %[t1], %[t0]\n\t"
        "mulx %[q1], %[lo], %[t1]\n\t"
        "adox %[lo], %[t0]\n\t"
        "adcx %[t2], %[t1]\n\t"
        "mulx %[q2], %[lo], %[t2]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[t3], %[t2]\n\t"
        "mulx %[q3], %[lo], %[t3]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[t4], %[t3]\n\t"
        "mulx %[q4], %[lo], %[t4]\n\t"
        "adox %[lo], %[t3]\n\t"
        "adcx %[t5], %[t4]\n\t"
        "mulx %[q5], %[lo], %[t5]\n\t"
        "adox %[lo], %[t4]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[t5]\n\t"
        "adox %[A], %[t5]\n\t"
        "mov 32(%[b]), %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx 0(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t0]\n\t"
        "adcx %[A], %[t1]\n\t"
        "mulx 8(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[A], %[t2]\n\t"
        "mulx 16(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[A], %[t3]\n\t"
        "mulx 24(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t3]\n\t"
        "adcx %[A], %[t4]\n\t"
        "mulx 32(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t4]\n\t"
        "adcx %[A], %[t5]\n\t"
        "mulx 40(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t5]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[A]\n\t"
        "adox %[lo], %[A]\n\t"
        "mov %[qinv], %%rdx\n\t"
        "imul %[t0], %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx %[q0], %[lo], %[h]\n\t"
        "adcx %[t0], %[lo]\n\t"
        "adcx %[t1], %[h]\n\t"
        "mulx %[q1], %[lo], %[t1]\n\t"
        "adox %[lo], %[h]\n\t"
        "adcx %[t2], %[t1]\n\t"
        "mulx %[q2], %[lo], %[t2]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[t3], %[t2]\n\t"
        "mulx %[q3], %[lo], %[t3]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[t4], %[t3]\n\t"
        "mulx %[q4], %[lo], %[t4]\n\t"
        "adox %[lo], %[t3]\n\t"
        "adcx %[t5], %[t4]\n\t"
        "mulx %[q5], %[lo], %[t5]\n\t"
        "adox %[lo], %[t4]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[t5]\n\t"
        "adox %[A], %[t5]\n\t"
        "mov 40(%[b]), %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx 0(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[h]\n\t"
        "adcx %[A], %[t1]\n\t"
        "mulx 8(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[A], %[t2]\n\t"
        "mulx 16(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[A], %[t3]\n\t"
        "mulx 24(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t3]\n\t"
        "adcx %[A], %[t4]\n\t"
        "mulx 32(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t4]\n\t"
        "adcx %[A], %[t5]\n\t"
        "mulx 40(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t5]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[A]\n\t"
        "adox %[lo], %[A]\n\t"
        "mov %[qinv], %%rdx\n\t"
        "imul %[h], %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx %[q0], %[lo], %[t0]\n\t"
        "adcx %[h], %[lo]\n\t"
        "adcx %[t1], %[t0]\n\t"
        "mulx %[q1], %[lo], %[t1]\n\t"
        "adox %[lo], %[t0]\n\t"
        "adcx %[t2], %[t1]\n\t"
        "mulx %[q2], %[lo], %[t2]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[t3], %[t2]\n\t"
        "mulx %[q3], %[lo], %[t3]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[t4], %[t3]\n\t"
        "mulx %[q4], %[lo], %[t4]\n\t"
        "adox %[lo], %[t3]\n\t"
        "adcx %[t5], %[t4]\n\t"
        "mulx %[q5], %[lo], %[t5]\n\t"
        "adox %[lo], %[t4]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[t5]\n\t"
        "adox %[A], %[t5]\n\t"
        : [t0] "=&r"(v_t0), [t1] "=&r"(v_t1), [t2] "=&r"(v_t2), [t3] "=&r"(v_t3), [t4] "=&r"(v_t4), [t5] "=&r"(v_t5), [h] "=&r"(v_h), [A] "=&r"(v_A), [lo] "=&r"(v_lo)
        : [a] "r"(a), [b] "r"(b), "m"(*(const uint64_t(*)[6])a), "m"(*(const uint64_t(*)[6])b), [q0] "m"(czk_fp_q_[0]), [q1] "m"(czk_fp_q_[1]), [q2] "m"(czk_fp_q_[2]), [q3] "m"(czk_fp_q_[3]), [q4] "m"(czk_fp_q_[4]), [q5] "m"(czk_fp_q_[5]), [qinv] "m"(czk_fp_qinv_)
        : "rdx", "cc");
    out[0] = v_t0;
    out[1] = v_t1;
    out[2] = v_t2;
    out[3] = v_t3;
    out[4] = v_t4;
    out[5] = v_t5;
}

/* out[0..3] = a*b/2^256 mod m, not yet reduced below m (out < 2m), for any
 * 4-limb modulus m with top limb below 2^63 - 1 and minv = -m^-1 mod 2^64
 * (BLS12-381's Fr here; BN254's Fp and Fr in bn254_field_impl.h).  m and
 * minv are memory operands: with the static constant tables of the callers
 * they become the same RIP-relative operands a fixed modulus would. */
CZK_INLINE void czk_mont4_mul_asm_(uint64_t *out, const uint64_t *a, const uint64_t *b,
                                   const uint64_t *m, const uint64_t *minv)
{
    uint64_t v_t0, v_t1, v_t2, v_t3, v_h, v_A, v_lo;
    __asm__(
        "mov 0(%[b]), %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx 0(%[a]), %[t0], %[t1]\n\t"
        "mulx 8(%[a]), %[lo], %[t2]\n\t"
        "adcx %[lo], %[t1]\n\t"
        "mulx 16(%[a]), %[lo], %[t3]\n\t"
        "adcx %[lo], %[t2]\n\t"
        "mulx 24(%[a]), %[lo], %[A]\n\t"
        "adcx %[lo], %[t3]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[A]\n\t"
        "mov %[qinv], %%rdx\n\t"
        "imul %[t0], %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx %[q0], %[lo], %[h]\n\t"
        "adcx %[t0], %[lo]\n\t"
        "adcx %[t1], %[h]\n\t"
        "mulx %[q1], %[lo], %[t1]\n\t"
        "adox %[lo], %[h]\n\t"
        "adcx %[t2], %[t1]\n\t"
        "mulx %[q2], %[lo], %[t2]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[t3], %[t2]\n\t"
        "mulx %[q3], %[lo], %[t3]\n\t"
        "adox %[lo], %[t2]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[t3]\n\t"
        "adox %[A], %[t3]\n\t"
        "mov 8(%[b]), %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx 0(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[h]\n\t"
        "adcx %[A], %[t1]\n\t"
        "mulx 8(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[A], %[t2]\n\t"
        "mulx 16(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[A], %[t3]\n\t"
        "mulx 24(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t3]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[A]\n\t"
        "adox %[lo], %[A]\n\t"
        "mov %[qinv], %%rdx\n\t"
        "imul %[h], %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx %[q0], %[lo], %[t0]\n\t"
        "adcx %[h], %[lo]\n\t"
        "adcx %[t1], %[t0]\n\t"
        "mulx %[q1], %[lo], %[t1]\n\t"
        "adox %[lo], %[t0]\n\t"
        "adcx %[t2], %[t1]\n\t"
        "mulx %[q2], %[lo], %[t2]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[t3], %[t2]\n\t"
        "mulx %[q3], %[lo], %[t3]\n\t"
        "adox %[lo], %[t2]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[t3]\n\t"
        "adox %[A], %[t3]\n\t"
        "mov 16(%[b]), %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx 0(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t0]\n\t"
        "adcx %[A], %[t1]\n\t"
        "mulx 8(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[A], %[t2]\n\t"
        "mulx 16(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[A], %[t3]\n\t"
        "mulx 24(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t3]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[A]\n\t"
        "adox %[lo], %[A]\n\t"
        "mov %[qinv], %%rdx\n\t"
        "imul %[t0], %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx %[q0], %[lo], %[h]\n\t"
        "adcx %[t0], %[lo]\n\t"
        "adcx %[t1], %[h]\n\t"
        "mulx %[q1], %[lo], %[t1]\n\t"
        "adox %[lo], %[h]\n\t"
        "adcx %[t2], %[t1]\n\t"
        "mulx %[q2], %[lo], %[t2]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[t3], %[t2]\n\t"
        "mulx %[q3], %[lo], %[t3]\n\t"
        "adox %[lo], %[t2]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[t3]\n\t"
        "adox %[A], %[t3]\n\t"
        "mov 24(%[b]), %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx 0(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[h]\n\t"
        "adcx %[A], %[t1]\n\t"
        "mulx 8(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[A], %[t2]\n\t"
        "mulx 16(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t2]\n\t"
        "adcx %[A], %[t3]\n\t"
        "mulx 24(%[a]), %[lo], %[A]\n\t"
        "adox %[lo], %[t3]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[A]\n\t"
        "adox %[lo], %[A]\n\t"
        "mov %[qinv], %%rdx\n\t"
        "imul %[h], %%rdx\n\t"
        "xor %[lo], %[lo]\n\t"
        "mulx %[q0], %[lo], %[t0]\n\t"
        "adcx %[h], %[lo]\n\t"
        "adcx %[t1], %[t0]\n\t"
        "mulx %[q1], %[lo], %[t1]\n\t"
        "adox %[lo], %[t0]\n\t"
        "adcx %[t2], %[t1]\n\t"
        "mulx %[q2], %[lo], %[t2]\n\t"
        "adox %[lo], %[t1]\n\t"
        "adcx %[t3], %[t2]\n\t"
        "mulx %[q3], %[lo], %[t3]\n\t"
        "adox %[lo], %[t2]\n\t"
        "mov $0, %[lo]\n\t"
        "adcx %[lo], %[t3]\n\t"
        "adox %[A], %[t3]\n\t"
        : [t0] "=&r"(v_t0), [t1] "=&r"(v_t1), [t2] "=&r"(v_t2), [t3] "=&r"(v_t3), [h] "=&r"(v_h), [A] "=&r"(v_A), [lo] "=&r"(v_lo)
        : [a] "r"(a), [b] "r"(b), "m"(*(const uint64_t(*)[4])a), "m"(*(const uint64_t(*)[4])b), [q0] "m"(m[0]), [q1] "m"(m[1]), [q2] "m"(m[2]), [q3] "m"(m[3]), [qinv] "m"(*minv)
        : "rdx", "cc");
    out[0] = v_t0;
    out[1] = v_t1;
    out[2] = v_t2;
    out[3] = v_t3;
}

#endif

/* ---- Fp, Fr and Fp2 = Fp[u]/(u^2+1): field_tmpl_impl.h, fp2_tmpl_impl.h ---- */
#define FI czk_fp
#define FI_N 6
#define FI_M czk_fp_q_
#define FI_MINV CZK_FP_QINV_
#define FI_MUL_ASM(t, a, b) czk_fp_mont_mul_asm_(t, a, b)
#include "common/crypto/field_tmpl_impl.h"

#define FI czk_fr
#define FI_N 4
#define FI_M czk_fr_r_
#define FI_MINV CZK_FR_RINV_
#define FI_MUL_ASM(t, a, b) czk_mont4_mul_asm_(t, a, b, czk_fr_r_, &czk_fr_rinv_)
#include "common/crypto/field_tmpl_impl.h"

#define F2 czk_fp2
#define F2B czk_fp
#include "common/crypto/fp2_tmpl_impl.h"

/* ---- helpers shared by the prime fields of both curves (field_util.c) ---- */
/* decimal string of the n-limb integer a; out must hold 20*n+1 bytes */
void czk_field_to_dec_(char *out, const uint64_t *a, int n);
/* parse a decimal string of at most max_digits digits into n limbs (< m);
 * -EINVAL on empty, non-digit or too long input, -ERANGE when >= m */
int czk_field_from_dec_(uint64_t *out, const char *s, const uint64_t *m, int n, size_t max_digits);
/* out = 1/y mod m for plain n-limb integers, 0 < y < m, m odd (binary GCD);
 * minv = -m^-1 mod 2^64.  -EDOM when the GCD did not reach 1 in the proven
 * step count (y == 0 or not invertible); callers fall back or fail. */
int czk_field_inv_(uint64_t *out, const uint64_t *y, const uint64_t *m, uint64_t minv, int n);
/* a < m as n-limb integers */
int czk_field_lt_(const uint64_t *a, const uint64_t *m, int n);

#endif
