/*
 * fpx8.h — eight independent Fp operations at once with AVX-512 IFMA
 * (vpmadd52luq / vpmadd52huq): what every field shares (the run-time switch
 * czk_fpx8_enabled(), CZK_IFMA, the 8x8 transpose) and BLS12-381's
 * instance of fpx_tmpl.h, czk_fpx8 (Fp) and czk_fp2x8 (Fp2).  BN254's
 * instance is bn254_fpx8.h.  Private to common/: not a contract header.
 * Used by the MSMs (msm_ifma.c: the batch-affine flush; msm_reduce_x8_tmpl.h:
 * the bucket running sums) and by the zkey point checks (zkey.c).
 *
 * BLS12-381: 8 limbs of 52 bits (416 bits), the values the Montgomery
 * residues of czk_fp (x 2^384 mod q), so the product divides by
 * 2^384 = 2^(7*52) * 2^20: seven 52-bit reduction steps and one 20-bit step,
 * then a 20-bit right shift of the limbs.  q / 2^384 < 0.102, so a product
 * of values below 3q comes out below 1.92 q: the full products accept
 * a b < 9 q^2 and the lazy differences (below 3q) are product operands.
 * The result of a product is below 2^402 relative to its window (column 7
 * up), so the window's ninth limb ends at zero (FPX_WIDE 0).
 *
 * Every function is compiled for avx512f/ifma/vl/bw/dq through the
 * CZK_IFMA attribute (no global -march flag: the library runs on CPUs
 * without IFMA).  Call them only after czk_fpx8_enabled() returned true;
 * code using them carries CZK_IFMA itself so that they inline.
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

#define CZK_FPX8_M52 0xfffffffffffffULL

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

#define CZK_FPX8_UNLIKELY(x) __builtin_expect(!!(x), 0)
#if defined(__clang__)
#define CZK_FPX8_UNROLL _Pragma("unroll")
#else
#define CZK_FPX8_UNROLL _Pragma("GCC unroll 16")
#endif

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

#else /* not x86-64: the scalar field code is the only path */

static inline bool czk_fpx8_enabled(void) { return false; }

#endif /* x86-64 */

/* ---- BLS12-381: czk_fpx8, czk_fp2x8 ---- */

/* q and 2q in radix 2^52, -q^-1 mod 2^52 */
static const uint64_t czk_fpx8_q_[8] __attribute__((aligned(64), unused)) = {
    0xeffffffffaaabULL, 0xfeb153ffffb9fULL, 0x6b0f6241eabffULL, 0x12bf6730d2a0fULL,
    0x764774b84f385ULL, 0x1ba7b6434bacdULL, 0x1ea397fe69a4bULL, 0x1a011ULL};
static const uint64_t czk_fpx8_2q_[8] __attribute__((aligned(64), unused)) = {
    0xdffffffff5556ULL, 0xfd62a7ffff73fULL, 0xd61ec483d57ffULL, 0x257ece61a541eULL,
    0xec8ee9709e70aULL, 0x374f6c869759aULL, 0x3d472ffcd3496ULL, 0x34022ULL};

#define FPX_T czk_fpx8
#define FP2X_T czk_fp2x8
#define FPX(n) czk_fpx8_##n
#define FP2X(n) czk_fp2x8_##n
#define FPX_FE czk_fp
#define FPX_FE2 czk_fp2
#define FPX_NL 8
#define FPX_NW 6
#define FPX_Q czk_fpx8_q_
#define FPX_2Q czk_fpx8_2q_
#define FPX_QINV 0x3fffcfffcfffdULL
#define FPX_TOP_BITS 20
#define FPX_WIDE 0
#define FPX_SUB_OP_LAZY 1
#ifdef CZK_FPX8_DEFINE
#define FPX_DEFINE_OOL 1
#endif
#include "common/crypto/fpx_tmpl.h"

#endif
