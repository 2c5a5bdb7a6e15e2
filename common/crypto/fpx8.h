/*
 * fpx8.h — eight independent Fp (BLS12-381 base field) operations at once
 * with AVX-512 IFMA (vpmadd52luq / vpmadd52huq).  Private to common/: not a
 * contract header.  Used by the MSM (msm_ifma.c: the batch-affine flush;
 * msm_reduce_x8_tmpl.h: the bucket running sums) and by the zkey point
 * checks (zkey.c).  czk_fp2x8 builds 8 lanes of Fp2 on top.
 *
 * Representation: czk_fpx8 holds 8 field elements "lane-sliced": l[k] is a
 * vector of the 8 elements' limb k, radix 2^52, 8 limbs (416 bits), each
 * limb normalised (< 2^52).  The values are the same Montgomery residues as
 * czk_fp (x * 2^384 mod q, fully reduced below q), so conversion to and from
 * czk_fp is bit shuffling only: no domain change.  The Montgomery product
 * divides by 2^384 = 2^(7*52) * 2^20: seven 52-bit reduction steps and one
 * 20-bit step, then a 20-bit right shift of the limbs.
 *
 * Every function here is compiled for avx512f/ifma/vl/bw/dq through the
 * CZK_IFMA attribute (no global -march flag: the library runs on CPUs
 * without IFMA).  Call them only after czk_fpx8_enabled() returned true;
 * code using them carries CZK_IFMA itself so that they inline.
 * Inputs and outputs are canonical (below q) unless a function says
 * "lazy" (below 2q, 3q or 4q as stated; the products accept a b < 9 q^2).
 * Every function allows its output to alias its inputs.
 */
#ifndef CZK_FPX8_H
#define CZK_FPX8_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/crypto/field.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CZK_HAVE_FPX8 1
#include <immintrin.h>

#define CZK_IFMA __attribute__((target("avx512f,avx512ifma,avx512vl,avx512bw,avx512dq")))
#define CZK_IFMA_INLINE static inline __attribute__((always_inline, target("avx512f,avx512ifma,avx512vl,avx512bw,avx512dq")))

typedef struct czk_fpx8 { __m512i l[8]; } czk_fpx8;

#define CZK_FPX8_M52 0xfffffffffffffULL
/* q in radix 2^52, and -q^-1 mod 2^52 */
#define CZK_FPX8_Q0 0xeffffffffaaabULL
#define CZK_FPX8_Q1 0xfeb153ffffb9fULL
#define CZK_FPX8_Q2 0x6b0f6241eabffULL
#define CZK_FPX8_Q3 0x12bf6730d2a0fULL
#define CZK_FPX8_Q4 0x764774b84f385ULL
#define CZK_FPX8_Q5 0x1ba7b6434bacdULL
#define CZK_FPX8_Q6 0x1ea397fe69a4bULL
#define CZK_FPX8_Q7 0x1a011ULL
#define CZK_FPX8_QINV 0x3fffcfffcfffdULL

#define CZK_FPX8_Q_(k) ((k) == 0 ? CZK_FPX8_Q0 : (k) == 1 ? CZK_FPX8_Q1 : (k) == 2 ? CZK_FPX8_Q2 : \
                        (k) == 3 ? CZK_FPX8_Q3 : (k) == 4 ? CZK_FPX8_Q4 : (k) == 5 ? CZK_FPX8_Q5 : \
                        (k) == 6 ? CZK_FPX8_Q6 : CZK_FPX8_Q7)

/* true when the CPU has AVX-512 IFMA (and the F/VL/BW/DQ subsets this code
 * uses) and CZK_NO_IFMA is unset, empty or "0".  Header-only (checked once
 * per translation unit) so that every user links without fpx8.c. */
static inline bool czk_fpx8_enabled(void)
{
    static _Atomic int state; /* 0 not yet known, 1 off, 2 on */
    int s = atomic_load_explicit(&state, memory_order_relaxed);

    if (!s) {
        const char *env = getenv("CZK_NO_IFMA");
        bool off = env && *env && !(env[0] == '0' && env[1] == 0);
        __builtin_cpu_init();
        s = !off && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512ifma") &&
                    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512dq")
                ? 2
                : 1;
        atomic_store_explicit(&state, s, memory_order_relaxed);
    }
    return s == 2;
}

/* 2q in radix 2^52 (the lazy subtraction's offset) */
static const uint64_t czk_fpx8_2q_[8] __attribute__((aligned(64))) = {
    0xdffffffff5556ULL, 0xfd62a7ffff73fULL, 0xd61ec483d57ffULL, 0x257ece61a541eULL,
    0xec8ee9709e70aULL, 0x374f6c869759aULL, 0x3d472ffcd3496ULL, 0x34022ULL};

#define CZK_FPX8_UNLIKELY(x) __builtin_expect(!!(x), 0)
#if defined(__clang__)
#define CZK_FPX8_UNROLL _Pragma("unroll")
#else
#define CZK_FPX8_UNROLL _Pragma("GCC unroll 16")
#endif

/*
 * Carries.  Limbs are kept below 2^52 (the multiplier reads 52 bits only).
 * After an addition or subtraction limb by limb, one parallel pass (each
 * limb keeps its low 52 bits and takes the signed carry of the limb below)
 * almost always normalises: only a carry that ripples on through a limb of
 * all ones (or a borrow through a zero limb) leaves a limb outside [0, 2^52),
 * which is tested for and then fixed by the serial pass.  Values are taken
 * mod 2^416: every caller's value lies in [0, 2^416).
 */
CZK_IFMA_INLINE void czk_fpx8_norm_serial_(__m512i v[8])
{
    const __m512i m52 = _mm512_set1_epi64((long long)CZK_FPX8_M52);
    __m512i c = _mm512_setzero_si512();
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < 8; k++) {
        __m512i x = _mm512_add_epi64(v[k], c);
        c = _mm512_srai_epi64(x, 52);
        v[k] = _mm512_and_si512(x, m52);
    }
}

CZK_IFMA_INLINE void czk_fpx8_norm_(czk_fpx8 *r, const __m512i t[8])
{
    const __m512i m52 = _mm512_set1_epi64((long long)CZK_FPX8_M52);
    __m512i v[8], bad = _mm512_setzero_si512();
    int k;

    v[0] = _mm512_and_si512(t[0], m52);
    CZK_FPX8_UNROLL
    for (k = 1; k < 8; k++) {
        v[k] = _mm512_add_epi64(_mm512_and_si512(t[k], m52), _mm512_srai_epi64(t[k - 1], 52));
        bad = _mm512_or_si512(bad, v[k]);
    }
    if (CZK_FPX8_UNLIKELY(_mm512_test_epi64_mask(bad, _mm512_set1_epi64(~(long long)CZK_FPX8_M52))))
        czk_fpx8_norm_serial_(v);
    CZK_FPX8_UNROLL
    for (k = 0; k < 8; k++)
        r->l[k] = v[k];
}

/* lane-wise r = u - q if u >= q else u, for normalised u < 2q.  The top
 * limbs decide unless they are equal (about 1 in 10^5 per lane), when the
 * exact borrow chain does. */
CZK_IFMA_INLINE void czk_fpx8_reduce1_(czk_fpx8 *r, const __m512i u[8])
{
    const __m512i q7 = _mm512_set1_epi64((long long)CZK_FPX8_Q7);
    __mmask8 ge = _mm512_cmpge_epu64_mask(u[7], q7);
    __m512i t[8];
    int k;

    if (CZK_FPX8_UNLIKELY(_mm512_cmpeq_epu64_mask(u[7], q7))) {
        const __m512i m52 = _mm512_set1_epi64((long long)CZK_FPX8_M52);
        __m512i br = _mm512_setzero_si512();
        CZK_FPX8_UNROLL
        for (k = 0; k < 8; k++) {
            __m512i x = _mm512_add_epi64(_mm512_sub_epi64(u[k], _mm512_set1_epi64((long long)CZK_FPX8_Q_(k))), br);
            br = _mm512_srai_epi64(x, 52);
            t[k] = _mm512_and_si512(x, m52);
        }
        ge = (__mmask8)~_mm512_movepi64_mask(br); /* no borrow out: u >= q */
        CZK_FPX8_UNROLL
        for (k = 0; k < 8; k++)
            r->l[k] = _mm512_mask_blend_epi64(ge, u[k], t[k]);
        return;
    }
    if (!ge) {
        CZK_FPX8_UNROLL
        for (k = 0; k < 8; k++)
            r->l[k] = u[k];
        return;
    }
    CZK_FPX8_UNROLL
    for (k = 0; k < 8; k++)
        t[k] = _mm512_mask_sub_epi64(u[k], ge, u[k], _mm512_set1_epi64((long long)CZK_FPX8_Q_(k)));
    czk_fpx8_norm_(r, t);
}

/* the modulus' limbs, read as broadcast memory operands */
static const uint64_t czk_fpx8_q_[8] __attribute__((aligned(64))) = {
    CZK_FPX8_Q0, CZK_FPX8_Q1, CZK_FPX8_Q2, CZK_FPX8_Q3, CZK_FPX8_Q4, CZK_FPX8_Q5, CZK_FPX8_Q6, CZK_FPX8_Q7};

/* r = a * b / 2^384 (Montgomery product, the same residue as czk_fp_mul),
 * below 2q when a * b < 9 q^2 (then a b / 2^384 < 0.92 q), reduced below q
 * when `full` is set.  Operand scanning: for each limb a_i, t += a_i b,
 * then one Montgomery step clears t's low limb and the window moves up one
 * limb; the last step clears 20 bits only (2^384 = 2^(7*52 + 20)).
 * The result is below 2^402, so the window's ninth limb ends at zero and
 * the top limb below 2^38: only limbs 0..7 are kept. */
CZK_IFMA_INLINE void czk_fpx8_mul_(czk_fpx8 *r, const czk_fpx8 *a, const czk_fpx8 *b, int full)
{
    const __m512i m52 = _mm512_set1_epi64((long long)CZK_FPX8_M52);
    const __m512i qinv = _mm512_set1_epi64((long long)CZK_FPX8_QINV);
    const __m512i zero = _mm512_setzero_si512();
    __m512i t[9], u[8], v[8], bl[8], bad = zero;
    int i, j;

    CZK_FPX8_UNROLL
    for (j = 0; j < 8; j++)
        bl[j] = b->l[j];
    CZK_FPX8_UNROLL
    for (j = 0; j < 9; j++)
        t[j] = zero;
    CZK_FPX8_UNROLL
    for (i = 0; i < 8; i++) {
        const __m512i ai = a->l[i];
        __m512i m;
        CZK_FPX8_UNROLL
    for (j = 0; j < 8; j++) {
            t[j] = _mm512_madd52lo_epu64(t[j], ai, bl[j]);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], ai, bl[j]);
        }
        m = _mm512_madd52lo_epu64(zero, t[0], qinv);
        if (i == 7)
            m = _mm512_and_si512(m, _mm512_set1_epi64((long long)0xfffff));
        CZK_FPX8_UNROLL
    for (j = 0; j < 8; j++) {
            const __m512i qj = _mm512_set1_epi64((long long)czk_fpx8_q_[j]);
            t[j] = _mm512_madd52lo_epu64(t[j], m, qj);
            t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], m, qj);
        }
        if (i < 7) {
            t[1] = _mm512_add_epi64(t[1], _mm512_srli_epi64(t[0], 52));
            CZK_FPX8_UNROLL
    for (j = 0; j < 8; j++)
                t[j] = t[j + 1];
            t[8] = zero;
        }
    }
    /* t[0..7] = columns 7..14 (unsigned): normalise, then shift right by 20 */
    v[0] = _mm512_and_si512(t[0], m52);
    CZK_FPX8_UNROLL
    for (i = 1; i < 8; i++) {
        v[i] = _mm512_add_epi64(_mm512_and_si512(t[i], m52), _mm512_srli_epi64(t[i - 1], 52));
        bad = _mm512_or_si512(bad, v[i]);
    }
    if (CZK_FPX8_UNLIKELY(_mm512_test_epi64_mask(bad, _mm512_set1_epi64(~(long long)CZK_FPX8_M52))))
        czk_fpx8_norm_serial_(v);
    CZK_FPX8_UNROLL
    for (i = 0; i < 7; i++)
        u[i] = _mm512_or_si512(_mm512_srli_epi64(v[i], 20), _mm512_and_si512(_mm512_slli_epi64(v[i + 1], 32), m52));
    u[7] = _mm512_srli_epi64(v[7], 20);
    if (full) {
        czk_fpx8_reduce1_(r, u);
    } else {
        CZK_FPX8_UNROLL
    for (i = 0; i < 8; i++)
            r->l[i] = u[i];
    }
}

/* r = a * b / 2^384 mod q, canonical (a b < 9 q^2, e.g. a, b < 3q) */
CZK_IFMA_INLINE void czk_fpx8_mul(czk_fpx8 *r, const czk_fpx8 *a, const czk_fpx8 *b)
{
    czk_fpx8_mul_(r, a, b, 1);
}

/* the same residue, below 2q only (a b < 9 q^2) */
CZK_IFMA_INLINE void czk_fpx8_mul_lazy(czk_fpx8 *r, const czk_fpx8 *a, const czk_fpx8 *b)
{
    czk_fpx8_mul_(r, a, b, 0);
}

/* r = a^2 / 2^384 mod q, canonical (a < 3q): the cross products once, doubled
 * (200 multiply-adds instead of 264), then the same Montgomery steps */
CZK_IFMA_INLINE void czk_fpx8_sqr(czk_fpx8 *r, const czk_fpx8 *a)
{
    const __m512i m52 = _mm512_set1_epi64((long long)CZK_FPX8_M52);
    const __m512i qinv = _mm512_set1_epi64((long long)CZK_FPX8_QINV);
    const __m512i zero = _mm512_setzero_si512();
    __m512i t[16], v[8], u[8], bad = zero;
    int i, j;

    CZK_FPX8_UNROLL
    for (i = 0; i < 16; i++)
        t[i] = zero;
    CZK_FPX8_UNROLL
    for (i = 0; i < 8; i++)
        CZK_FPX8_UNROLL
    for (j = i + 1; j < 8; j++) {
            t[i + j] = _mm512_madd52lo_epu64(t[i + j], a->l[i], a->l[j]);
            t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], a->l[i], a->l[j]);
        }
    CZK_FPX8_UNROLL
    for (i = 0; i < 16; i++)
        t[i] = _mm512_add_epi64(t[i], t[i]);
    CZK_FPX8_UNROLL
    for (i = 0; i < 8; i++) {
        t[2 * i] = _mm512_madd52lo_epu64(t[2 * i], a->l[i], a->l[i]);
        t[2 * i + 1] = _mm512_madd52hi_epu64(t[2 * i + 1], a->l[i], a->l[i]);
    }
    /* column sums stay below 2^58; seven 52-bit steps and a 20-bit one */
    CZK_FPX8_UNROLL
    for (i = 0; i < 8; i++) {
        __m512i m = _mm512_madd52lo_epu64(zero, t[i], qinv);
        if (i == 7)
            m = _mm512_and_si512(m, _mm512_set1_epi64((long long)0xfffff));
        CZK_FPX8_UNROLL
    for (j = 0; j < 8; j++) {
            const __m512i qj = _mm512_set1_epi64((long long)czk_fpx8_q_[j]);
            t[i + j] = _mm512_madd52lo_epu64(t[i + j], m, qj);
            if (i + j + 1 < 16)
                t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], m, qj);
        }
        if (i < 7)
            t[i + 1] = _mm512_add_epi64(t[i + 1], _mm512_srli_epi64(t[i], 52));
    }
    /* t[7..14] as in czk_fpx8_mul_ (t[15] ends at zero: the value < 2^402) */
    v[0] = _mm512_and_si512(t[7], m52);
    CZK_FPX8_UNROLL
    for (i = 1; i < 8; i++) {
        v[i] = _mm512_add_epi64(_mm512_and_si512(t[7 + i], m52), _mm512_srli_epi64(t[6 + i], 52));
        bad = _mm512_or_si512(bad, v[i]);
    }
    if (CZK_FPX8_UNLIKELY(_mm512_test_epi64_mask(bad, _mm512_set1_epi64(~(long long)CZK_FPX8_M52))))
        czk_fpx8_norm_serial_(v);
    CZK_FPX8_UNROLL
    for (i = 0; i < 7; i++)
        u[i] = _mm512_or_si512(_mm512_srli_epi64(v[i], 20), _mm512_and_si512(_mm512_slli_epi64(v[i + 1], 32), m52));
    u[7] = _mm512_srli_epi64(v[7], 20);
    czk_fpx8_reduce1_(r, u);
}

/* r = a + b mod q (a, b canonical) */
CZK_IFMA_INLINE void czk_fpx8_add(czk_fpx8 *r, const czk_fpx8 *a, const czk_fpx8 *b)
{
    __m512i t[8];
    czk_fpx8 u;
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < 8; k++)
        t[k] = _mm512_add_epi64(a->l[k], b->l[k]);
    czk_fpx8_norm_(&u, t);
    czk_fpx8_reduce1_(r, u.l);
}

/* r = a - b mod q (a, b canonical): a - b, plus q where the top limbs say
 * a < b; equal top limbs (rare) take the exact borrow chain */
CZK_IFMA_INLINE void czk_fpx8_sub(czk_fpx8 *r, const czk_fpx8 *a, const czk_fpx8 *b)
{
    __m512i t[8];
    __mmask8 neg;
    int k;

    if (CZK_FPX8_UNLIKELY(_mm512_cmpeq_epu64_mask(a->l[7], b->l[7]))) {
        const __m512i m52 = _mm512_set1_epi64((long long)CZK_FPX8_M52);
        __m512i br = _mm512_setzero_si512();
        CZK_FPX8_UNROLL
        for (k = 0; k < 8; k++) {
            __m512i x = _mm512_add_epi64(_mm512_sub_epi64(a->l[k], b->l[k]), br);
            br = _mm512_srai_epi64(x, 52);
            t[k] = x;
        }
        neg = _mm512_movepi64_mask(br);
        CZK_FPX8_UNROLL
        for (k = 0; k < 8; k++)
            t[k] = _mm512_and_si512(t[k], m52);
        /* t holds a - b (+ 2^416 where negative), normalised */
        CZK_FPX8_UNROLL
        for (k = 0; k < 8; k++)
            t[k] = _mm512_mask_add_epi64(t[k], neg, t[k], _mm512_set1_epi64((long long)CZK_FPX8_Q_(k)));
        czk_fpx8_norm_(r, t);
        return;
    }
    neg = _mm512_cmplt_epu64_mask(a->l[7], b->l[7]);
    CZK_FPX8_UNROLL
    for (k = 0; k < 8; k++) {
        t[k] = _mm512_sub_epi64(a->l[k], b->l[k]);
        t[k] = _mm512_mask_add_epi64(t[k], neg, t[k], _mm512_set1_epi64((long long)CZK_FPX8_Q_(k)));
    }
    czk_fpx8_norm_(r, t);
}

/* lazy r = a + 2q - b, not reduced: below 4q when a < 2q and b <= 2q */
CZK_IFMA_INLINE void czk_fpx8_sub_lazy(czk_fpx8 *r, const czk_fpx8 *a, const czk_fpx8 *b)
{
    __m512i t[8];
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < 8; k++)
        t[k] = _mm512_sub_epi64(_mm512_add_epi64(a->l[k], _mm512_set1_epi64((long long)czk_fpx8_2q_[k])), b->l[k]);
    czk_fpx8_norm_(r, t);
}

/* lazy r = (neg ? -a : a) + 2q - b per lane: below 3q when a, b < q */
CZK_IFMA_INLINE void czk_fpx8_csub_lazy(czk_fpx8 *r, const czk_fpx8 *a, __mmask8 neg, const czk_fpx8 *b)
{
    const __m512i zero = _mm512_setzero_si512();
    __m512i t[8];
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < 8; k++) {
        __m512i sa = _mm512_mask_sub_epi64(a->l[k], neg, zero, a->l[k]);
        t[k] = _mm512_sub_epi64(_mm512_add_epi64(sa, _mm512_set1_epi64((long long)czk_fpx8_2q_[k])), b->l[k]);
    }
    czk_fpx8_norm_(r, t);
}

/* lazy r = a + b, not reduced (below 2q for canonical a, b) */
CZK_IFMA_INLINE void czk_fpx8_add_lazy(czk_fpx8 *r, const czk_fpx8 *a, const czk_fpx8 *b)
{
    __m512i t[8];
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < 8; k++)
        t[k] = _mm512_add_epi64(a->l[k], b->l[k]);
    czk_fpx8_norm_(r, t);
}

/* r = a mod q for a < 3q (two conditional subtractions) */
CZK_IFMA_INLINE void czk_fpx8_canon3(czk_fpx8 *r, const czk_fpx8 *a)
{
    czk_fpx8 t;
    czk_fpx8_reduce1_(&t, a->l);
    czk_fpx8_reduce1_(r, t.l);
}

/* r = -a mod q in the lanes of mask (0 stays 0), a elsewhere (a canonical) */
CZK_IFMA_INLINE void czk_fpx8_cneg(czk_fpx8 *r, const czk_fpx8 *a, __mmask8 mask)
{
    __m512i nz = _mm512_setzero_si512(), t[8];
    czk_fpx8 d;
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < 8; k++) {
        t[k] = _mm512_sub_epi64(_mm512_set1_epi64((long long)CZK_FPX8_Q_(k)), a->l[k]);
        nz = _mm512_or_si512(nz, a->l[k]);
    }
    czk_fpx8_norm_(&d, t);
    mask &= _mm512_test_epi64_mask(nz, nz);
    CZK_FPX8_UNROLL
    for (k = 0; k < 8; k++)
        r->l[k] = _mm512_mask_blend_epi64(mask, a->l[k], d.l[k]);
}

/* six 64-bit limb vectors (limb k of 8 czk_fp) -> radix 2^52 */
CZK_IFMA_INLINE void czk_fpx8_from_u64x6_(czk_fpx8 *r, const __m512i x[6])
{
    const __m512i m52 = _mm512_set1_epi64((long long)CZK_FPX8_M52);

    r->l[0] = _mm512_and_si512(x[0], m52);
    r->l[1] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(x[0], 52), _mm512_slli_epi64(x[1], 12)), m52);
    r->l[2] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(x[1], 40), _mm512_slli_epi64(x[2], 24)), m52);
    r->l[3] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(x[2], 28), _mm512_slli_epi64(x[3], 36)), m52);
    r->l[4] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(x[3], 16), _mm512_slli_epi64(x[4], 48)), m52);
    r->l[5] = _mm512_and_si512(_mm512_srli_epi64(x[4], 4), m52);
    r->l[6] = _mm512_and_si512(_mm512_or_si512(_mm512_srli_epi64(x[4], 56), _mm512_slli_epi64(x[5], 8)), m52);
    r->l[7] = _mm512_srli_epi64(x[5], 44);
}

/* radix 2^52 -> six 64-bit limb vectors */
CZK_IFMA_INLINE void czk_fpx8_to_u64x6_(__m512i x[6], const czk_fpx8 *a)
{
    x[0] = _mm512_or_si512(a->l[0], _mm512_slli_epi64(a->l[1], 52));
    x[1] = _mm512_or_si512(_mm512_srli_epi64(a->l[1], 12), _mm512_slli_epi64(a->l[2], 40));
    x[2] = _mm512_or_si512(_mm512_srli_epi64(a->l[2], 24), _mm512_slli_epi64(a->l[3], 28));
    x[3] = _mm512_or_si512(_mm512_srli_epi64(a->l[3], 36), _mm512_slli_epi64(a->l[4], 16));
    x[4] = _mm512_or_si512(_mm512_or_si512(_mm512_srli_epi64(a->l[4], 48), _mm512_slli_epi64(a->l[5], 4)),
                           _mm512_slli_epi64(a->l[6], 56));
    x[5] = _mm512_or_si512(_mm512_srli_epi64(a->l[6], 8), _mm512_slli_epi64(a->l[7], 44));
}

/* 8x8 transpose of 64-bit words: o[j] word i = r[i] word j */
CZK_IFMA_INLINE void czk_fpx8_transpose_(__m512i o[8], const __m512i r[8])
{
    __m512i t[8], u[8];
    int i;

    CZK_FPX8_UNROLL
    for (i = 0; i < 4; i++) {
        t[2 * i] = _mm512_unpacklo_epi64(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi64(r[2 * i], r[2 * i + 1]);
    }
    /* u0: words 0,4 of rows 0-3; u1: words 2,6; u2: 1,5; u3: 3,7; u4..u7 the same for rows 4-7 */
    u[0] = _mm512_shuffle_i64x2(t[0], t[2], 0x88);
    u[1] = _mm512_shuffle_i64x2(t[0], t[2], 0xdd);
    u[2] = _mm512_shuffle_i64x2(t[1], t[3], 0x88);
    u[3] = _mm512_shuffle_i64x2(t[1], t[3], 0xdd);
    u[4] = _mm512_shuffle_i64x2(t[4], t[6], 0x88);
    u[5] = _mm512_shuffle_i64x2(t[4], t[6], 0xdd);
    u[6] = _mm512_shuffle_i64x2(t[5], t[7], 0x88);
    u[7] = _mm512_shuffle_i64x2(t[5], t[7], 0xdd);
    o[0] = _mm512_shuffle_i64x2(u[0], u[4], 0x88);
    o[4] = _mm512_shuffle_i64x2(u[0], u[4], 0xdd);
    o[2] = _mm512_shuffle_i64x2(u[1], u[5], 0x88);
    o[6] = _mm512_shuffle_i64x2(u[1], u[5], 0xdd);
    o[1] = _mm512_shuffle_i64x2(u[2], u[6], 0x88);
    o[5] = _mm512_shuffle_i64x2(u[2], u[6], 0xdd);
    o[3] = _mm512_shuffle_i64x2(u[3], u[7], 0x88);
    o[7] = _mm512_shuffle_i64x2(u[3], u[7], 0xdd);
}

/* r = the czk_fp at p[i] + off for each lane i: 8 row loads and a transpose
 * (cheaper than 6 hardware gathers on the machines measured) */
CZK_IFMA_INLINE void czk_fpx8_gather_p(czk_fpx8 *r, const char *const p[8], size_t off)
{
    __m512i rows[8], cols[8];
    int i;

    CZK_FPX8_UNROLL
    for (i = 0; i < 8; i++)
        rows[i] = _mm512_maskz_loadu_epi64(0x3f, p[i] + off);
    czk_fpx8_transpose_(cols, rows);
    czk_fpx8_from_u64x6_(r, cols);
}

/* the czk_fp at p[i] + off = lane i of a, for the lanes in mask */
CZK_IFMA_INLINE void czk_fpx8_scatter_p(char *const p[8], size_t off, __mmask8 mask, const czk_fpx8 *a)
{
    __m512i rows[8], cols[8];
    int i;

    czk_fpx8_to_u64x6_(cols, a);
    cols[6] = _mm512_setzero_si512();
    cols[7] = cols[6];
    czk_fpx8_transpose_(rows, cols);
    CZK_FPX8_UNROLL
    for (i = 0; i < 8; i++)
        if (mask & (1u << i))
            _mm512_mask_storeu_epi64(p[i] + off, 0x3f, rows[i]);
}

/* r = a[0..7] (contiguous czk_fp) */
CZK_IFMA_INLINE void czk_fpx8_load(czk_fpx8 *r, const czk_fp a[8])
{
    const char *p[8];
    CZK_FPX8_UNROLL
    for (int i = 0; i < 8; i++)
        p[i] = (const char *)&a[i];
    czk_fpx8_gather_p(r, p, 0);
}

/* r[0..7] = a (contiguous czk_fp) */
CZK_IFMA_INLINE void czk_fpx8_store(czk_fp r[8], const czk_fpx8 *a)
{
    char *p[8];
    CZK_FPX8_UNROLL
    for (int i = 0; i < 8; i++)
        p[i] = (char *)&r[i];
    czk_fpx8_scatter_p(p, 0, 0xff, a);
}

/* all 8 lanes = x */
CZK_IFMA_INLINE void czk_fpx8_set1(czk_fpx8 *r, const czk_fp *x)
{
    __m512i v[6];
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < 6; k++)
        v[k] = _mm512_set1_epi64((long long)x->l[k]);
    czk_fpx8_from_u64x6_(r, v);
}

/* lanes of mask from b, the others from a */
CZK_IFMA_INLINE void czk_fpx8_blend(czk_fpx8 *r, __mmask8 mask, const czk_fpx8 *a, const czk_fpx8 *b)
{
    int k;

    CZK_FPX8_UNROLL
    for (k = 0; k < 8; k++)
        r->l[k] = _mm512_mask_blend_epi64(mask, a->l[k], b->l[k]);
}

/* lane mask of the zero elements (a canonical) */
CZK_IFMA_INLINE __mmask8 czk_fpx8_is_zero(const czk_fpx8 *a)
{
    __m512i o = a->l[0];
    int k;

    CZK_FPX8_UNROLL
    for (k = 1; k < 8; k++)
        o = _mm512_or_si512(o, a->l[k]);
    return _mm512_testn_epi64_mask(o, o);
}

/* lane mask of a = b (canonical) */
CZK_IFMA_INLINE __mmask8 czk_fpx8_eq(const czk_fpx8 *a, const czk_fpx8 *b)
{
    __m512i o = _mm512_xor_si512(a->l[0], b->l[0]);
    int k;

    CZK_FPX8_UNROLL
    for (k = 1; k < 8; k++)
        o = _mm512_or_si512(o, _mm512_xor_si512(a->l[k], b->l[k]));
    return _mm512_testn_epi64_mask(o, o);
}

/* out of line copies (fpx8.c) for large callers (instruction cache) */
CZK_IFMA void czk_fpx8_mul_ool(czk_fpx8 *r, const czk_fpx8 *a, const czk_fpx8 *b);
CZK_IFMA void czk_fpx8_mul_lazy_ool(czk_fpx8 *r, const czk_fpx8 *a, const czk_fpx8 *b);
CZK_IFMA void czk_fpx8_sqr_ool(czk_fpx8 *r, const czk_fpx8 *a);

/* ---- 8 lanes of Fp2 = Fp[u]/(u^2 + 1) ---- */

typedef struct czk_fp2x8 { czk_fpx8 c0, c1; } czk_fp2x8;

CZK_IFMA_INLINE void czk_fp2x8_add(czk_fp2x8 *r, const czk_fp2x8 *a, const czk_fp2x8 *b)
{
    czk_fpx8_add(&r->c0, &a->c0, &b->c0);
    czk_fpx8_add(&r->c1, &a->c1, &b->c1);
}

CZK_IFMA_INLINE void czk_fp2x8_sub(czk_fp2x8 *r, const czk_fp2x8 *a, const czk_fp2x8 *b)
{
    czk_fpx8_sub(&r->c0, &a->c0, &b->c0);
    czk_fpx8_sub(&r->c1, &a->c1, &b->c1);
}

/* r = a b and r = a^2, canonical in and out: Karatsuba products (fpx8.c), out
 * of line with their Fp products out of line too: the G2 flush with
 * everything inlined outgrew the instruction cache (measured ~10% slower) */
CZK_IFMA void czk_fp2x8_mul_ool(czk_fp2x8 *r, const czk_fp2x8 *a, const czk_fp2x8 *b);
CZK_IFMA void czk_fp2x8_sqr_ool(czk_fp2x8 *r, const czk_fp2x8 *a);

/* lane mask of the zero elements (a canonical) */
CZK_IFMA_INLINE __mmask8 czk_fp2x8_is_zero(const czk_fp2x8 *a)
{
    return czk_fpx8_is_zero(&a->c0) & czk_fpx8_is_zero(&a->c1);
}

CZK_IFMA_INLINE __mmask8 czk_fp2x8_eq(const czk_fp2x8 *a, const czk_fp2x8 *b)
{
    return czk_fpx8_eq(&a->c0, &b->c0) & czk_fpx8_eq(&a->c1, &b->c1);
}

CZK_IFMA_INLINE void czk_fp2x8_cneg(czk_fp2x8 *r, const czk_fp2x8 *a, __mmask8 mask)
{
    czk_fpx8_cneg(&r->c0, &a->c0, mask);
    czk_fpx8_cneg(&r->c1, &a->c1, mask);
}

CZK_IFMA_INLINE void czk_fp2x8_csub(czk_fp2x8 *r, const czk_fp2x8 *a, __mmask8 neg, const czk_fp2x8 *b)
{
    czk_fp2x8 t;
    czk_fp2x8_cneg(&t, a, neg);
    czk_fp2x8_sub(r, &t, b);
}

CZK_IFMA_INLINE void czk_fp2x8_blend(czk_fp2x8 *r, __mmask8 mask, const czk_fp2x8 *a, const czk_fp2x8 *b)
{
    czk_fpx8_blend(&r->c0, mask, &a->c0, &b->c0);
    czk_fpx8_blend(&r->c1, mask, &a->c1, &b->c1);
}

CZK_IFMA_INLINE void czk_fp2x8_set1(czk_fp2x8 *r, const czk_fp2 *x)
{
    czk_fpx8_set1(&r->c0, &x->c0);
    czk_fpx8_set1(&r->c1, &x->c1);
}

CZK_IFMA_INLINE void czk_fp2x8_gather_p(czk_fp2x8 *r, const char *const p[8], size_t off)
{
    czk_fpx8_gather_p(&r->c0, p, off);
    czk_fpx8_gather_p(&r->c1, p, off + sizeof(czk_fp));
}

CZK_IFMA_INLINE void czk_fp2x8_scatter_p(char *const p[8], size_t off, __mmask8 mask, const czk_fp2x8 *a)
{
    czk_fpx8_scatter_p(p, off, mask, &a->c0);
    czk_fpx8_scatter_p(p, off + sizeof(czk_fp), mask, &a->c1);
}

CZK_IFMA_INLINE void czk_fp2x8_store(czk_fp2 r[8], const czk_fp2x8 *a)
{
    char *p[8];
    int i;
    CZK_FPX8_UNROLL
    for (i = 0; i < 8; i++)
        p[i] = (char *)&r[i];
    czk_fp2x8_scatter_p(p, 0, 0xff, a);
}

CZK_IFMA_INLINE void czk_fp2x8_load(czk_fp2x8 *r, const czk_fp2 a[8])
{
    const char *p[8];
    int i;
    CZK_FPX8_UNROLL
    for (i = 0; i < 8; i++)
        p[i] = (const char *)&a[i];
    czk_fp2x8_gather_p(r, p, 0);
}

#else /* not x86-64: the scalar field code is the only path */

static inline bool czk_fpx8_enabled(void) { return false; }

#endif /* x86-64 */

/* AoS wrappers for tests and benchmarks: r[i] = a[i] op b[i] for i < 8.
 * They return -ENOTSUP (and leave r alone) where czk_fpx8_enabled() is false. */
int czk_fpx8_mul8(czk_fp r[8], const czk_fp a[8], const czk_fp b[8]);
int czk_fpx8_sqr8(czk_fp r[8], const czk_fp a[8]);
int czk_fpx8_add8(czk_fp r[8], const czk_fp a[8], const czk_fp b[8]);
int czk_fpx8_sub8(czk_fp r[8], const czk_fp a[8], const czk_fp b[8]);
int czk_fpx8_neg8(czk_fp r[8], const czk_fp a[8]);
/* r[i] = a[i] * b[i] for i < n (n a multiple of 8), `reps` times over, as
 * independent 8-lane products (throughput benchmark); -ENOTSUP as above */
int czk_fpx8_mul_n(czk_fp *r, const czk_fp *a, const czk_fp *b, size_t n, unsigned reps);

#endif
