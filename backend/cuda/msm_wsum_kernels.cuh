/*
 * msm_wsum_kernels.cuh — the window reduction of the Pippenger MSM
 * (msm_kernels.cuh, step 4): per bucket window, sum_i (i + 1) B_i over its
 * buckets B, in levels.  Device code only (no CUB, no host driver), so the
 * CPU emulator (tests/cuda/emu) runs it as well.
 *
 * Two forms of one level, the same sums, each over the point operations of
 * wsum_g1 (a lane holds a point) or wsum_g2 (a lane pair holds a G2 point,
 * one Fp2 component a lane):
 *   k_bucket_lvl     one lane (or pair) per output point carrying the
 *                    running sum S, the weighted sum T and the loaded bucket,
 *                    three XYZZ points (a BLS12-381 G1 one spills);
 *   k_bucket_lvl_pp  the default (CZK_CUDA_MSM_LVL_PP): the two
 *                    chains of an output on two stages, S on stage 0 and T on
 *                    stage 1 one step behind, which takes each S from stage 0
 *                    by shuffle; every stage holds one accumulator and one
 *                    operand.  A stage is a lane (G1) or a lane pair (G2).
 */
#ifndef CZK_CUDA_MSM_WSUM_KERNELS_CUH
#define CZK_CUDA_MSM_WSUM_KERNELS_CUH

#include "backend/cuda/ec_pair.cuh"

/* The point operations of the window reduction's kernels, on what one lane
 * holds of a point: wsum_g1 a whole XYZZ point a lane (W = 1; G1, or G2 one
 * thread a point), wsum_g2 one Fp2 component of a G2 point a lane, the two
 * lanes of a pair computing together (W = 2, ec_pair.cuh; LZ: lazily reduced
 * Karatsuba products, as in the first level) */
template <class F> struct wsum_g1 {
    typedef xyzz_t<F> mem; /* a point in memory */
    typedef xyzz_t<F> reg; /* what one lane holds of it */
    static constexpr unsigned W = 1;
    __device__ __forceinline__ reg ld(const mem *a, size_t i) const { return ld_global(a + i); }
    __device__ __forceinline__ void st(mem *a, size_t i, const reg &p) const { st_global(a + i, p); }
    __device__ __forceinline__ void add(reg &p, const reg &q) const { xyzz_add(p, q); }
    __device__ __forceinline__ void dbl(reg &p) const { xyzz_dbl(p); }
};
template <class B, bool LZ> struct wsum_g2 {
    typedef xyzz_t<fp2x<B>> mem;
    typedef xyzz_t<B> reg;
    static constexpr unsigned W = 2;
    p2ctx k;
    __device__ __forceinline__ wsum_g2() : k(p2_ctx()) {}
    __device__ __forceinline__ reg ld(const mem *a, size_t i) const { return p2_ld_xyzz(k, a, i); }
    __device__ __forceinline__ void st(mem *a, size_t i, const reg &p) const { p2_st_xyzz(k, a, (uint32_t)i, p); }
    __device__ __forceinline__ void add(reg &p, const reg &q) const { p2_xyzz_add<LZ>(k, p, q); }
    __device__ __forceinline__ void dbl(reg &p) const { p2_xyzz_dbl<LZ>(k, p); }
};

/*
 * One level of the window reduction, sum over i of (i + w1) B_i for each
 * bucket window's n_in points B (buckets at the first level), split by
 * blocks of L: with i = u L + k,
 *     sum_i (i + w1) B_i = sum_u T_u + L sum_u u S_u,
 *     S_u = sum_k B_{uL+k},  T_u = sum_k (k + w1) B_{uL+k},
 * so the next level reduces the S_u with weights u (w1 = 0) and n_in / L
 * points.  Each level's T_u, scaled by 2^shift (the product of the block
 * sizes of the levels before), is added to the sum of its block's Q from the
 * level before: the level whose output is one point per window leaves that
 * window's whole sum in Q.  Every output runs 2L + L additions and shift
 * doublings, so the first level (most of the work) has many short chains
 * instead of a few long ones.  Q_in is NULL at the first level.
 *
 * k_bucket_lvl: W lanes (O::W) per output point carry its running sum S, its
 * weighted sum T and the loaded bucket (three XYZZ points: a BLS12-381 G1
 * one spills); launched with lvl_lanes<O> m_out threads.
 */
template <class O> constexpr unsigned lvl_lanes = O::W;
/* k_bucket_lvl_pp's lanes an output point: its two stages of O::W */
template <class O> constexpr unsigned lvl_pp_lanes = 2 * O::W;

template <class O>
__global__ void __launch_bounds__(128) k_bucket_lvl(const typename O::mem *S_in, const typename O::mem *Q_in,
                                                    uint32_t n_in, unsigned L, unsigned w1, unsigned shift,
                                                    uint32_t m_out, typename O::mem *S_out, typename O::mem *Q_out)
{
    const uint32_t g = (blockIdx.x * blockDim.x + threadIdx.x) / lvl_lanes<O>;
    if (g >= m_out) /* the lanes of a point leave together */
        return;
    const O o;
    const uint32_t n_out = n_in / L;
    const size_t first = (size_t)(g / n_out) * n_in + (size_t)(g % n_out) * L;
    typename O::reg S, T;
    xyzz_set_inf(S);
    xyzz_set_inf(T);
    for (int k = (int)L - 1; k >= 1; k--) {
        o.add(S, o.ld(S_in, first + k));
        o.add(T, S);
    }
    o.add(S, o.ld(S_in, first));
    if (w1)
        o.add(T, S);
    for (unsigned i = 0; i < shift; i++)
        o.dbl(T);
    if (Q_in)
        for (unsigned k = 0; k < L; k++)
            o.add(T, o.ld(Q_in, first + k));
    o.st(S_out, g, S);
    o.st(Q_out, g, T);
}

/* p as held by lane src (of the lanes in mask) */
template <class F> FF_DEV xyzz_t<F> wsum_shfl(const xyzz_t<F> &p, unsigned mask, unsigned src)
{
    xyzz_t<F> r;
#pragma unroll
    for (int j = 0; j < ff_traits<F>::N; j++) {
        r.x.v[j] = __shfl_sync(mask, p.x.v[j], src);
        r.y.v[j] = __shfl_sync(mask, p.y.v[j], src);
        r.zz.v[j] = __shfl_sync(mask, p.zz.v[j], src);
        r.zzz.v[j] = __shfl_sync(mask, p.zzz.v[j], src);
    }
    return r;
}

/* k_bucket_lvl's sums (same arguments and outputs) on a group of 2 W lanes
 * per output point, launched with 2 W m_out threads (blocks a multiple of
 * 2 W, so a group never spans two warps).  Stage 0 (the group's first W
 * lanes) adds B_(L-1), ..., B_0 into S; at step i stage 1 adds the S stage 0
 * had after step i - 1, so T = S_(L-1) + ... + S_1 (+ S_0 when w1) with
 * S_k = B_k + ... + B_(L-1): L + 1 steps of one addition on each stage.
 * Then T is doubled shift times (stage 0 doubles its copy alongside, its S
 * already stored), each stage adds half of the block's Q_in, and stage 1
 * adds stage 0's half and stores Q.  MINB: blocks an SM the registers must
 * allow (__launch_bounds__). */
template <class O, int MINB = 1>
__global__ void __launch_bounds__(128, MINB) k_bucket_lvl_pp(const typename O::mem *S_in, const typename O::mem *Q_in,
                                                       uint32_t n_in, unsigned L, unsigned w1, unsigned shift,
                                                       uint32_t m_out, typename O::mem *S_out, typename O::mem *Q_out)
{
    constexpr unsigned G = lvl_pp_lanes<O>;
    const uint32_t g = (blockIdx.x * blockDim.x + threadIdx.x) / G;
    if (g >= m_out) /* a group's lanes leave together */
        return;
    const unsigned lane = threadIdx.x & 31, base = lane & ~(G - 1);
    const unsigned mask = ((1u << G) - 1) << base;
    const unsigned src = base | (lane & (O::W - 1)); /* this component's lane on stage 0 */
    const bool st1 = (lane & O::W) != 0;
    const O o;
    const uint32_t n_out = n_in / L;
    const size_t first = (size_t)(g / n_out) * n_in + (size_t)(g % n_out) * L;
    typename O::reg acc, op;
    xyzz_set_inf(acc);
    for (unsigned i = 0; i <= L; i++) {
        op = wsum_shfl(acc, mask, src); /* stage 0's S_(L-i) */
        bool act;
        if (!st1) {
            act = i < L;
            if (act)
                op = o.ld(S_in, first + (L - 1 - i));
        } else {
            act = i >= 1 && (i < L || w1);
        }
        if (act)
            o.add(acc, op);
    }
    if (!st1)
        o.st(S_out, g, acc);
    for (unsigned i = 0; i < shift; i++)
        o.dbl(acc);
    if (Q_in) {
        if (!st1)
            xyzz_set_inf(acc);
        for (unsigned k = st1 ? 1 : 0; k < L; k += 2)
            o.add(acc, o.ld(Q_in, first + k));
        op = wsum_shfl(acc, mask, src);
        if (st1)
            o.add(acc, op);
    }
    if (st1)
        o.st(Q_out, g, acc);
}

/* The levels of the window reduction over ncls windows of nb buckets each
 * (nb a power of two): seg buckets a group at the first level (weights from
 * 1), then blocks of 8 (or what is left), each level's T scaled by the
 * block sizes of the levels before, alternating between parts[0] and
 * parts[1] (each at least 2 ncls nb / seg points).  lvl(S_in, Q_in, n_in, L,
 * w1, shift, m_out, S_out, Q_out) runs one level (a kernel above) and returns
 * 0, or < 0 to stop with that result; on 0, *sums is the last level's Q, the
 * ncls window sums.  Host code: msm_kernels.cuh's driver launches the levels,
 * the emulator's test runs them. */
template <class P, class LVL>
static inline int wsum_levels(const P *buckets, unsigned ncls, uint32_t nb, unsigned seg, P *const parts[2],
                              const P **sums, LVL lvl)
{
    const P *S_in = buckets, *Q_in = NULL;
    uint32_t n_in = nb;
    unsigned L = seg, w1 = 1, shift = 0;
    int buf = 0;
    for (;;) {
        const uint32_t n_out = n_in / L, m_out = ncls * n_out;
        P *S_out = parts[buf], *Q_out = S_out + m_out;
        const int r = lvl(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out);
        if (r < 0)
            return r;
        S_in = S_out;
        Q_in = Q_out;
        n_in = n_out;
        buf = 1 - buf;
        if (n_in == 1)
            break;
        shift += (unsigned)__builtin_ctz(L);
        w1 = 0;
        L = n_in < 8 ? n_in : 8;
    }
    *sums = Q_in;
    return 0;
}

#endif
