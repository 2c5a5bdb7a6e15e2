/*
 * ff_dfma.cuh — Montgomery arithmetic on the FP64 pipe (an experiment of
 * bench_ff, docs/bench-gpu.md "Field products on the FP64 pipe"): a field
 * element is M limbs of 52 bits, R = 2^(52 M), values kept in [0, 2p).
 *
 * The limb products run as DFMAs (below); their halves are summed as 64-bit
 * integers.  The H200 issues FP64, integer-multiply and integer-ALU
 * instructions to three separate pipes, so this product spreads over three
 * pipes where the 32-bit-word product of ff.cuh fills two.
 *
 * bn_fp52_t / bls_fp52_t carry mul, sqr, add, sub, dbl, is_zero, set_zero and
 * set_one with ec.cuh's signatures, so its point formulas instantiate over
 * them unchanged.
 */
#ifndef CZK_BENCH_FF_DFMA_CUH
#define CZK_BENCH_FF_DFMA_CUH

#include <stdint.h>

#include "backend/cuda/ff.cuh"

/* ---- FP64 (DFMA) Montgomery product over M limbs of 52 bits ----
 *
 * A value is M doubles, each an integer in [0, 2^52); Montgomery's R is
 * 2^(52 M) and inputs and outputs lie in [0, 2p) (4p < R for both fields).
 * One limb product a_i b_j (< 2^104) is split exactly by the FP64 pipe:
 *   h = fma_rz(a, b, 2^104)        = 2^104 + H 2^52,  H = floor(ab / 2^52)
 *   s = h - (2^104 + 2^52)         = (H - 1) 2^52     (exact)
 *   l = fma(a, b, -s)              = 2^52 + L,        L = ab mod 2^52
 * so the bit patterns of h and l are fixed exponent fields plus H and L;
 * they are summed as 64-bit integers into column accumulators that start at
 * minus the exponent fields they will receive (dfma_bias).  Reduction is
 * row by row (SOS): q_i = c_i (-p^-1) mod 2^52 from the column's low bits,
 * q_i p added as further limb products, c_i's carry moved up. */
#define DFMA_HI 0x4670000000000000ull /* bits of 2^104 */
#define DFMA_LO 0x4330000000000000ull /* bits of 2^52 */
#define DFMA_M52 ((1ull << 52) - 1)

template <int M> struct dfma_mod {
    double p[M];
    uint64_t np; /* -p^-1 mod 2^52 */
};

/* pairs (i, j), 0 <= i, j < M, with i + j == k */
static constexpr __host__ __device__ int dfma_pairs(int M, int k)
{
    return k < 0 || k > 2 * M - 2 ? 0 : (k < M ? k + 1 : 2 * M - 1 - k);
}

/* minus the exponent fields column k receives from a b and q p */
static constexpr __host__ __device__ uint64_t dfma_bias(int M, int k)
{
    return 0ull - (uint64_t)(2 * dfma_pairs(M, k - 1)) * DFMA_HI - (uint64_t)(2 * dfma_pairs(M, k)) * DFMA_LO;
}

static __device__ __forceinline__ void dfma_prod(double a, double b, uint64_t &lo, uint64_t &hi)
{
    const double h = __fma_rz(a, b, 0x1p104);
    const double s = __dsub_rn(h, 0x1p104 + 0x1p52);
    const double l = __fma_rn(a, b, -s);
    hi += (uint64_t)__double_as_longlong(h);
    lo += (uint64_t)__double_as_longlong(l);
}

static __device__ __forceinline__ double dfma_from_u52(uint64_t v)
{
    return __dsub_rn(__longlong_as_double((long long)(v | DFMA_LO)), 0x1p52);
}

/* r = x y R^-1 as M limbs below 2^52 (uint64), x and y given as doubles
 * (integers below 2^52 per limb); p's limbs as doubles, np = -p^-1 mod 2^52 */
template <int M>
static __device__ __forceinline__ void dfma_mont_core(uint64_t *r, const double *x, const double *y, const double *p,
                                                      uint64_t np)
{
    uint64_t c[2 * M + 1];
#pragma unroll
    for (int k = 0; k <= 2 * M; k++)
        c[k] = dfma_bias(M, k);
#pragma unroll
    for (int i = 0; i < M; i++)
#pragma unroll
        for (int j = 0; j < M; j++)
            dfma_prod(x[i], y[j], c[i + j], c[i + j + 1]);
#pragma unroll
    for (int i = 0; i < M; i++) {
        const double q = dfma_from_u52((c[i] * np) & DFMA_M52);
#pragma unroll
        for (int j = 0; j < M; j++)
            dfma_prod(q, p[j], c[i + j], c[i + j + 1]);
        c[i + 1] += c[i] >> 52;
    }
#pragma unroll
    for (int k = M; k < 2 * M; k++) {
        r[k - M] = c[k] & DFMA_M52;
        c[k + 1] += c[k] >> 52;
    }
}

/* the same on doubles in and out (bench_ff's product chains) */
template <int M>
static __device__ __forceinline__ void dfma_mont_mul(double *r, const double *a, const double *b, const dfma_mod<M> &md)
{
    uint64_t o[M];
    dfma_mont_core<M>(o, a, b, md.p, md.np);
#pragma unroll
    for (int k = 0; k < M; k++)
        r[k] = dfma_from_u52(o[k]);
}

/* N 32-bit words <-> M 52-bit limbs */
template <int N, int M> static __device__ __forceinline__ void dfma_load(double *d, const uint32_t *w)
{
#pragma unroll
    for (int k = 0; k < M; k++) {
        const int b = 52 * k, i = b / 32, sh = b % 32;
        uint64_t v = (uint64_t)w[i] >> sh;
        if (i + 1 < N)
            v |= (uint64_t)w[i + 1] << (32 - sh);
        if (i + 2 < N && sh > 12)
            v |= (uint64_t)w[i + 2] << (64 - sh);
        d[k] = dfma_from_u52(v & DFMA_M52);
    }
}

template <int N, int M> static __device__ __forceinline__ void dfma_store(uint32_t *w, const double *d)
{
#pragma unroll
    for (int i = 0; i < N; i++)
        w[i] = 0;
#pragma unroll
    for (int k = 0; k < M; k++) {
        const uint64_t v = (uint64_t)__double_as_longlong(__dadd_rn(d[k], 0x1p52)) & DFMA_M52;
        const int b = 52 * k, i = b / 32, sh = b % 32;
        if (i < N)
            w[i] |= (uint32_t)(v << sh);
        if (i + 1 < N)
            w[i + 1] |= (uint32_t)(v >> (32 - sh));
        if (i + 2 < N && sh > 12)
            w[i + 2] |= (uint32_t)(v >> (64 - sh));
    }
}


/* ---- field types over 52-bit limbs (uint64 words, each < 2^52) ---- */

struct bn_fp52_t { uint64_t v[5]; };
struct bls_fp52_t { uint64_t v[8]; };

/* each field's p, 2p and R mod p as limbs, and p's limbs as doubles */
static __constant__ uint64_t c52_bn[3][5] = {
    {0x08c16d87cfd47ull, 0x916871ca8d3c2ull, 0x181585d97816aull, 0xa029b85045b68ull, 0x030644e72e131ull},
    {0x1182db0f9fa8eull, 0x22d0e3951a784ull, 0x302b0bb2f02d5ull, 0x405370a08b6d0ull, 0x060c89ce5c263ull},
    {0x20880f6fce4b4ull, 0x49baa989a8455ull, 0x18f014a498908ull, 0x724f85a9201d8ull, 0x01f16424e1bb7ull}};
static __constant__ double c52_bn_pd[5] = {(double)0x08c16d87cfd47ull, (double)0x916871ca8d3c2ull,
                                           (double)0x181585d97816aull, (double)0xa029b85045b68ull,
                                           (double)0x030644e72e131ull};
static __constant__ uint64_t c52_bls[3][8] = {
    {0xeffffffffaaabull, 0xfeb153ffffb9full, 0x6b0f6241eabffull, 0x12bf6730d2a0full, 0x764774b84f385ull,
     0x1ba7b6434bacdull, 0x1ea397fe69a4bull, 0x000000001a011ull},
    {0xdffffffff5556ull, 0xfd62a7ffff73full, 0xd61ec483d57ffull, 0x257ece61a541eull, 0xec8ee9709e70aull,
     0x374f6c869759aull, 0x3d472ffcd3496ull, 0x0000000034022ull},
    {0x6480ea8e9b9afull, 0x65766c8fe444full, 0x8b540fea96f7dull, 0x3b2ee82efd422ull, 0xa6723e5f0ade5ull,
     0xff6eb6fdd4230ull, 0xe06ef23c24a25ull, 0x0000000014c8eull}};
static __constant__ double c52_bls_pd[8] = {(double)0xeffffffffaaabull, (double)0xfeb153ffffb9full,
                                            (double)0x6b0f6241eabffull, (double)0x12bf6730d2a0full,
                                            (double)0x764774b84f385ull, (double)0x1ba7b6434bacdull,
                                            (double)0x1ea397fe69a4bull, (double)0x000000001a011ull};

template <class F> struct fp52_traits;
template <> struct fp52_traits<bn_fp52_t> {
    static constexpr int M = 5;
    static constexpr uint64_t np = 0x20782e4866389ull;
    static __device__ __forceinline__ const uint64_t *p() { return c52_bn[0]; }
    static __device__ __forceinline__ const uint64_t *p2() { return c52_bn[1]; }
    static __device__ __forceinline__ const uint64_t *one() { return c52_bn[2]; }
    static __device__ __forceinline__ const double *pd() { return c52_bn_pd; }
};
template <> struct fp52_traits<bls_fp52_t> {
    static constexpr int M = 8;
    static constexpr uint64_t np = 0x3fffcfffcfffdull;
    static __device__ __forceinline__ const uint64_t *p() { return c52_bls[0]; }
    static __device__ __forceinline__ const uint64_t *p2() { return c52_bls[1]; }
    static __device__ __forceinline__ const uint64_t *one() { return c52_bls[2]; }
    static __device__ __forceinline__ const double *pd() { return c52_bls_pd; }
};

/* (the third parameter keeps these templates apart from ff.cuh's FF_GEN ones) */
#define FP52 template <class F, int M = fp52_traits<F>::M, bool = true> static __device__ __forceinline__

/* r = a b R^-1, a and b below 8p (BN254) or 2^17 p (BLS12-381): r < 2p */
FP52 void mul(F &r, const F &a, const F &b)
{
    typedef fp52_traits<F> T;
    double x[M], y[M];
#pragma unroll
    for (int k = 0; k < M; k++) {
        x[k] = dfma_from_u52(a.v[k]);
        y[k] = dfma_from_u52(b.v[k]);
    }
    dfma_mont_core<M>(r.v, x, y, T::pd(), T::np);
}
FP52 void sqr(F &r, const F &a) { mul(r, a, a); }

/* a + b, a and b in [0, 2p): the sum less 2p unless that borrows */
FP52 void add(F &r, const F &a, const F &b)
{
    typedef fp52_traits<F> T;
    uint64_t s[M], d[M], c = 0, br = 0;
#pragma unroll
    for (int k = 0; k < M; k++) {
        s[k] = a.v[k] + b.v[k] + c;
        c = s[k] >> 52;
        s[k] &= DFMA_M52;
    }
#pragma unroll
    for (int k = 0; k < M; k++) {
        const uint64_t t = s[k] - T::p2()[k] - br;
        br = t >> 63;
        d[k] = t & DFMA_M52;
    }
#pragma unroll
    for (int k = 0; k < M; k++)
        r.v[k] = br ? s[k] : d[k];
}

/* a - b, a and b in [0, 2p): plus 2p when negative */
FP52 void sub(F &r, const F &a, const F &b)
{
    typedef fp52_traits<F> T;
    uint64_t d[M], e[M], br = 0, c = 0;
#pragma unroll
    for (int k = 0; k < M; k++) {
        const uint64_t t = a.v[k] - b.v[k] - br;
        br = t >> 63;
        d[k] = t & DFMA_M52;
    }
#pragma unroll
    for (int k = 0; k < M; k++) {
        e[k] = d[k] + T::p2()[k] + c;
        c = e[k] >> 52;
        e[k] &= DFMA_M52;
    }
#pragma unroll
    for (int k = 0; k < M; k++)
        r.v[k] = br ? e[k] : d[k];
}
FP52 void dbl(F &r, const F &a) { add(r, a, a); }

/* a in [0, 2p) is zero mod p when it is 0 or p */
FP52 bool is_zero(const F &a)
{
    typedef fp52_traits<F> T;
    uint64_t z = 0, e = 0;
#pragma unroll
    for (int k = 0; k < M; k++) {
        z |= a.v[k];
        e |= a.v[k] ^ T::p()[k];
    }
    return z == 0 || e == 0;
}
FP52 void set_zero(F &r)
{
#pragma unroll
    for (int k = 0; k < M; k++)
        r.v[k] = 0;
}
FP52 void set_one(F &r)
{
#pragma unroll
    for (int k = 0; k < M; k++)
        r.v[k] = fp52_traits<F>::one()[k];
}
#undef FP52

/* ---- one product on the FP64 pipe inside ff.cuh's word arithmetic ---- */

/* bits [b0, b0 + 52) of the N-word integer w (zeros below bit 0) */
template <int N> static __device__ __forceinline__ uint64_t dfma_bits52(const uint32_t *w, int b0)
{
    uint64_t v = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
        const int off = 32 * i - b0;
        if (off > -32 && off < 52)
            v |= off >= 0 ? (uint64_t)w[i] << off : (uint64_t)w[i] >> -off;
    }
    return v & DFMA_M52;
}

/* r = a b 2^(-32N) mod p, fully reduced, for ff.cuh's field FW (operands
 * below p) through FD's FP64 product: a is split times 2^(52M - 32N), which
 * turns FD's R^-1 into FW's; the result (below 2p) leaves as words, less p */
template <class FW, class FD> static __device__ __forceinline__ void mul_fp64(FW &r, const FW &a, const FW &b)
{
    constexpr int N = ff_traits<FW>::N, M = fp52_traits<FD>::M, S = 52 * M - 32 * N;
    double x[M], y[M];
#pragma unroll
    for (int k = 0; k < M; k++) {
        x[k] = dfma_from_u52(dfma_bits52<N>(a.v, 52 * k - S));
        y[k] = dfma_from_u52(dfma_bits52<N>(b.v, 52 * k));
    }
    uint64_t o[M];
    dfma_mont_core<M>(o, x, y, fp52_traits<FD>::pd(), fp52_traits<FD>::np);
    uint32_t t[N];
#pragma unroll
    for (int i = 0; i < N; i++) {
        uint32_t w = 0;
#pragma unroll
        for (int k = 0; k < M; k++) {
            const int off = 52 * k - 32 * i;
            if (off > -52 && off < 32)
                w |= off >= 0 ? (uint32_t)(o[k] << off) : (uint32_t)(o[k] >> -off);
        }
        t[i] = w;
    }
    cond_sub_p<N>(r.v, t, ff_traits<FW>::mod());
}

#endif
