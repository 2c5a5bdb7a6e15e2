/*
 * msm_kernels.cuh — the Pippenger MSM of backend/cuda shared by the curves:
 * the plan (window size from n), the kernels as templates over the
 * coordinate field F of the group (BLS12-381: fp_t, fp2_t; BN254: bn_fp_t,
 * bn_fp2_t) and the host driver msm_run<F>.  The algorithm is described in
 * msm.cu.  Included by msm.cu (BLS12-381) and bn254_msm.cu (BN254), which
 * compile in parallel; each instantiates only its own kernels.
 *
 * A curve's translation unit specialises msm_group<F> for each group before
 * calling msm_run<F> (the kernel choice of level 0, the host Jacobian type),
 * deriving from msm_group_base (at the end) for all but level0_seg:
 *   static const int g2;            1 for G2
 *   static const unsigned curve;    CZK_CUDA_CURVE_*
 *   static void set_inf(void *r);   r = infinity (host Jacobian)
 *   static void horner(void *r, const void *W, unsigned nwin, unsigned c);
 *                                   r = sum_w 2^(c w) W[w] (host Jacobian)
 *   static const void *level0_seg(unsigned segmode, unsigned &lanes, unsigned &bs);
 *       the segmented level-0 kernel (k_acc_seg's arguments) for
 *       CZK_CUDA_MSM_SEG = segmode (nonzero), its threads per slice and per
 *       block; NULL: use level0_tasks instead
 *   static void level0_tasks(const czk_msm_ws *ws, const base_src<aff_t<F>> &bases, uint32_t tasks, uint32_t L,
 *                            uint32_t *out_keys, xyzz_t<F> *out, cudaStream_t s);
 *       level 0 as one task of at most L pairs per bucket piece (k_acc_aff's work)
 * Only the host code of one curve's TU calls msm_run, so the static
 * (per-process) environment switches below are read once per TU.
 */
#ifndef CZK_CUDA_MSM_KERNELS_CUH
#define CZK_CUDA_MSM_KERNELS_CUH

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cub/cub.cuh>

#include "backend/cuda/internal.cuh"
#include "backend/cuda/msm_ba_kernels.cuh" /* also SENT */
#include "backend/cuda/msm_wsum_kernels.cuh"

template <class F> struct msm_group;

#define L0_MIN 128u /* mixed additions per task at level 0 */
#define LN_MIN 32u  /* full additions per task at later levels */

/* c-bit signed digits in nwin windows; their buckets in ncls bucket windows
 * of nb buckets (ncls = nwin without a table; with a fixed-base table window
 * w adds row w / ncls's points into bucket window w % ncls) */
struct msm_plan {
    unsigned c, nwin, ncls, nb, key_bits;
    size_t pairs, nbuckets;
};

static unsigned bitlen(size_t x)
{
    unsigned b = 0;
    while (x) {
        b++;
        x >>= 1;
    }
    return b;
}

/* Window bits for an n of bit length k: aim at about 2^9 points per bucket.
 * Measured on the H200 (docs/bench-gpu.md): at 2^24, c=16 (17 windows, 512
 * points per bucket) took 236 ms against 359 ms for c=20 (13 windows, 32 per
 * bucket, the "minimise additions" choice): with short buckets the per-thread
 * bucket loops diverge and the many small tasks cost more than the extra
 * window's additions.  At 2^20, c=13 beat c=17 (29 against 47 ms).
 * BN254 (curve CZK_CUDA_CURVE_BN254): one bit more, about 2^8 points per
 * bucket at every size (its 8-word points make the larger bucket sets cheap:
 * at 2^22 c=15 took G1 17.2 / G2 47.5 ms against 19.2 / 52.8 for c=14, at 2^24
 * c=17 58.8 / 160.5 against 60.8 / 165.3 for c=16; docs/bench-gpu.md, "BN254").
 * c_for moves this off a window size whose top window is lopsided. */
static unsigned c_for_bitlen(unsigned k, int g2, unsigned curve)
{
    /* G1 from 2^25 up (bit length 26): about 2^8 points per bucket.  With the
     * segmented first level (fixed work per thread, so short buckets no longer
     * cost divergence) c=19 took 416.8 ms at 2^26 against 437.5 for c=18,
     * while at 2^24 c=16 stayed best (121.9 ms against 123.4 for c=17;
     * docs/bench-gpu.md, "Third round").  G2 keeps the rule above (not
     * measured above 2^24). */
    int c = (int)k - (curve == CZK_CUDA_CURVE_BN254 || (!g2 && k >= 26) ? 8 : 9);
    /* BN254 from bit length 20: at least 15, the narrowest window above 13
     * whose top window is not lopsided; at 2^20 and 2^21 - 14 it took 0.65-0.77
     * of c=13's time, G1 and G2 (H100, docs/bench-gpu.md "Run 54") */
    if (curve == CZK_CUDA_CURVE_BN254 && k >= 20 && c < 15)
        c = 15;
    if (c < 8)
        c = 8;
    if (c > 22)
        c = 22;
    return (unsigned)c;
}

/* CZK_CUDA_MSM_C forces the window size (benchmarks; read once per process) */
static unsigned env_uint(const char *name, unsigned dflt)
{
    const char *s = getenv(name);
    return s && *s ? (unsigned)strtoul(s, NULL, 0) : dflt;
}

static unsigned nwin_for(unsigned c) { return (257 + c - 1) / c; }

/* The largest digit of the top window of c-bit signed digits of scalars below
 * the curve's r (BLS12-381: 255 bits, BN254: 254): the bits of r above the
 * last whole window, plus the carry of the window below; 1 when c divides the
 * bit length (the top window holds the carry alone). */
static unsigned top_digit(unsigned c, unsigned curve)
{
    const bool bn = curve == CZK_CUDA_CURVE_BN254;
    const unsigned bits = bn ? 254 : 255;
    const uint32_t top = bn ? 0x30644e72u : 0x73eda753u; /* r >> 224 */
    const unsigned rem = bits % c;
    return rem ? (top >> (bits - 224 - rem)) + 1 : 1;
}

/* A window size whose top window is lopsided by the first rule: its nonzero
 * digits fall into fewer than 1/32 of the window's 2^(c-1) buckets, so its
 * buckets hold more than 32 times the points of the others (at c=15,
 * BLS12-381 scalars put the carry alone in an 18th window: about 45% of all
 * points into one bucket, a batch-affine run of 14 levels). */
static bool top_lopsided(unsigned c, unsigned curve)
{
    return ((size_t)top_digit(c, curve) << 5) < ((size_t)1 << (c - 1));
}

/* The batch-affine levels ba_buckets (msm_ba.cuh) runs over `pairs` sorted
 * pairs in R bucket runs whose longest holds maxc points, by its stop rule
 * (ba_level_runs) at the default BA_STOP_K.  An estimate: one chunk, every
 * bucket hit. */
static unsigned ba_levels_est(size_t pairs, size_t R, size_t maxc)
{
    size_t bound = pairs;
    unsigned lv = 0;
    for (; (lv == 0 || ((size_t)1 << lv) < maxc) && ba_level_runs(lv, bound, R, maxc, BA_STOP_K); lv++)
        bound = ba_level_bound(bound, R);
    return lv;
}

/* The levels the top window adds to an MSM of n terms at window c with ncls
 * bucket windows (msm_plan's; ncls < the window count: a fixed-base table,
 * whose windows share bucket sets): the top window's nonzero digits take
 * only top_digit values, so each of those buckets collects about
 * n / top_digit points from it alone, where the other windows spread theirs
 * over all 2^(c-1) buckets; the levels the longest run needs beyond those of
 * evenly spread runs.  Measured on the H100 at 2^16..2^21 - 14
 * (docs/bench-gpu.md, "Run 52"): every window it puts at 2 or more extra
 * levels was slower than a neighbour with fewer (up to 3.4 times). */
static unsigned top_extra_levels(size_t n, unsigned c, unsigned ncls, unsigned curve)
{
    const unsigned nwin = nwin_for(c);
    const size_t pairs = n * nwin, nb = (size_t)ncls << (c - 1);
    const size_t R = nb < pairs ? nb : pairs;
    const size_t even = R ? (pairs + R - 1) / R : 1;
    const size_t top = n / top_digit(c, curve) + (ncls < nwin ? even : 0);
    const unsigned l_even = ba_levels_est(pairs, R, even);
    const unsigned l_top = ba_levels_est(pairs, R, top > even ? top : even);
    return l_top > l_even ? l_top - l_even : 0;
}

/* The window size for n terms: c_for_bitlen's, or of it and c+1, c-1, c-2
 * the one whose top window adds the fewest levels (top_extra_levels at the
 * top of n's octave, so that c is a function of n's bit length; ties: in that
 * order).  From bit length 25 on the first rule instead (c+1, else c-1, when c
 * is lopsided and they are not; measured at 2^24 and 2^26, where the pair
 * count runs more levels than the top window needs).  CZK_CUDA_MSM_CTOP=0:
 * c_for_bitlen's alone (benchmarks; read once). */
static unsigned c_for(size_t n, int g2, unsigned curve)
{
    static const unsigned keep = !env_uint("CZK_CUDA_MSM_CTOP", 1);
    const unsigned k = bitlen(n);
    const unsigned c = c_for_bitlen(k, g2, curve);
    if (keep)
        return c;
    if (k > 24) {
        if (!top_lopsided(c, curve))
            return c;
        if (c < 22 && !top_lopsided(c + 1, curve))
            return c + 1;
        if (c > 8 && !top_lopsided(c - 1, curve))
            return c - 1;
        return c;
    }
    const size_t top = ((size_t)1 << k) - 1;
    unsigned best = c, least = top_extra_levels(top, c, nwin_for(c), curve);
    const int step[3] = {1, -1, -2};
    for (int i = 0; i < 3; i++) {
        const int cc = (int)c + step[i];
        if (cc < 8 || cc > 22)
            continue;
        const unsigned e = top_extra_levels(top, (unsigned)cc, nwin_for((unsigned)cc), curve);
        if (e < least)
            best = (unsigned)cc, least = e;
    }
    return best;
}

/* ncls 0: one bucket window per digit window (no table) */
static msm_plan plan_make(size_t n, unsigned c, unsigned ncls)
{
    msm_plan p;
    p.c = c;
    p.nwin = nwin_for(c);
    p.ncls = ncls ? ncls : p.nwin;
    p.nb = 1u << (p.c - 1);
    p.nbuckets = (size_t)p.ncls * p.nb;
    p.key_bits = bitlen(p.nbuckets);
    p.pairs = n * p.nwin;
    return p;
}

[[maybe_unused]] static msm_plan plan_for(size_t n, int g2, unsigned curve)
{
    static unsigned force_c = env_uint("CZK_CUDA_MSM_C", 0);
    return plan_make(n, (force_c >= 4 && force_c <= 24) ? force_c : c_for(n, g2, curve), 0);
}

/* Window bits of a full fixed-base table (every window's multiple stored,
 * one bucket window) for n bases: its bucket reduction runs once instead
 * of once per window, so a wider window than plan_for's pays: fewer windows,
 * fewer additions.  About 2^3 points per bucket and window: measured on the
 * H200 at 2^24 (docs/bench-gpu.md, "Fixed-base tables"), c=22 (12 windows)
 * took G1 98.7 ms against 99.4 for c=20 and 102.0 for c=21 (13 windows
 * either way), 105.3 for c=19, 111.8 for c=18; G2 278.0 against 273.0 for
 * c=20 (one row fewer: 33 against 36 GiB); BN254 G1 48.7 / G2 137.5 at c=22
 * against 50.3 / 138.9 at c=20.  So: 2^(c-1) about n/8 (c = bit length of
 * n - 1, less 2: 22 for 2^23 < n <= 2^24), then the narrowest window with as
 * many windows; then off a lopsided top window: all windows share the one
 * bucket set, so a top window of few digit values piles its n points onto a
 * few buckets (BN254 2^20: c=18 puts n/4 on each of 4 buckets; moving to
 * c=17 halved the MSM, docs/bench-gpu.md "Run 52").  From bit length 16 the
 * window is at least 16: at 2^16 BLS12-381's c=13 put about 320 points on
 * each of 4,096 buckets, more than the batch-affine levels pair before
 * k_ba_finish sums the rest of each run on one thread, and ran 1.5-2.3 times
 * slower than c=16 at twice the n (BN254 2^16-2^17: c=16 1-6% faster than
 * 15; "Run 53").  CZK_CUDA_MSM_TC forces it, CZK_CUDA_MSM_CTOP=0 keeps the
 * first rule alone (benchmarks; read once). */
static unsigned tab_c_for(size_t n, int g2, unsigned curve)
{
    static unsigned force = env_uint("CZK_CUDA_MSM_TC", 0);
    static const unsigned keep = !env_uint("CZK_CUDA_MSM_CTOP", 1);
    if (force >= 4 && force <= 22)
        return force;
    (void)g2;
    const unsigned k = bitlen(n > 1 ? n - 1 : 1);
    int c = (int)k - 2;
    c = c < 8 ? 8 : c > 22 ? 22 : c;
    /* the narrowest window with as many windows (c=21 has c=20's 13, with twice the buckets) */
    while (c > 8 && nwin_for((unsigned)c - 1) == nwin_for((unsigned)c))
        c--;
    if (keep)
        return (unsigned)c;
    if (k >= 16 && c < 16)
        c = 16;
    /* the first of c, c+1, c-1, c-2, c-3 whose top window adds at most one level */
    const int step[5] = {0, 1, -1, -2, -3};
    for (int i = 0; i < 5; i++) {
        const int cc = c + step[i];
        if (cc >= 8 && cc <= 22 && top_extra_levels((size_t)1 << k, (unsigned)cc, 1, curve) <= 1)
            return (unsigned)cc;
    }
    return (unsigned)c;
}


static unsigned task_target(const czk_cuda_ctx *ctx) { return (unsigned)ctx->sm_count * 2048u; }

/* buckets per output point at the first level of the window reduction: the
 * fewest (a power of two) that leave at most CZK_CUDA_MSM_SEGT output points
 * per SM (default 1024: each is a lane group of k_bucket_lvl_pp, 2 or 4
 * threads) */
static unsigned seg_for(const czk_cuda_ctx *ctx, const msm_plan &p)
{
    static unsigned per_sm = env_uint("CZK_CUDA_MSM_SEGT", 1024);
    size_t target = (size_t)ctx->sm_count * per_sm;
    unsigned seg = 1;
    while (seg < p.nb && p.nbuckets / seg > target)
        seg *= 2;
    return seg;
}

/* ---- kernels ---- */

/* window w's digit of scalar i: key in bucket window w % ncls, value the
 * index of base i in table row w / ncls (rows of stride points) */
static __global__ void k_digits(const fr_t *sc, uint32_t n, unsigned c, unsigned nwin, unsigned ncls, uint32_t stride,
                                uint32_t *keys, uint32_t *vals)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    fr_t s = ld_global(sc + i);
    const uint32_t half = 1u << (c - 1), mask = (1u << c) - 1;
    uint32_t carry = 0;
    for (unsigned w = 0; w < nwin; w++) {
        unsigned pos = w * c, word = pos >> 5, sh = pos & 31;
        uint32_t raw = 0;
        if (word < 8) {
            raw = s.v[word] >> sh;
            if (sh && word + 1 < 8)
                raw |= s.v[word + 1] << (32 - sh);
        }
        uint32_t v = (raw & mask) + carry, neg = 0;
        if (v > half) {
            v = (1u << c) - v;
            neg = 1;
            carry = 1;
        } else {
            carry = 0;
        }
        size_t o = (size_t)w * n + i;
        const unsigned cls = w % ncls, row = w / ncls;
        keys[o] = v ? ((cls << (c - 1)) | (v - 1)) : SENT;
        vals[o] = ((row * stride + i) << 1) | neg;
    }
}

/* *cnt += the scalars of sc[0, n) above 1 (as integers; *cnt zeroed before) */
static __global__ void k_dense_cnt(const fr_t *sc, uint32_t n, uint32_t *cnt)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t big = 0;
    if (i < n) {
        fr_t s = ld_global(sc + i);
        uint32_t hi = 0;
#pragma unroll
        for (int j = 1; j < 8; j++)
            hi |= s.v[j];
        big = hi != 0 || s.v[0] > 1;
    }
    big = __popc(__ballot_sync(0xffffffffu, big));
    if ((threadIdx.x & 31) == 0 && big)
        atomicAdd(cnt, big);
}

/* also counts the sentinel runs into counters[3] (zeroed before): after the
 * segmented first level they are not only at the end */
static __global__ void k_task_cnt(const uint32_t *run_keys, const uint32_t *run_cnt, uint32_t *counters,
                           uint32_t m_scan, uint32_t L, uint32_t *tcnt)
{
    uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= m_scan)
        return;
    uint32_t R = counters[0];
    if (r < R && run_keys[r] == SENT)
        atomicAdd(&counters[3], 1u);
    tcnt[r] = (r < R && run_keys[r] != SENT) ? (run_cnt[r] + L - 1) / L : 0;
}

/* counters: [0] runs, [1] tasks, [2] runs that are real buckets, [3] sentinel
 * runs, [4] pairs with a real key (the sorted keys before the sentinels);
 * [5] the scalars above 1 (k_dense_cnt) */
static __global__ void k_task_total(const uint32_t *run_keys, const uint32_t *run_cnt, const uint32_t *run_start,
                             const uint32_t *tcnt, const uint32_t *task_off, uint32_t *counters)
{
    uint32_t R = counters[0];
    if (R == 0) {
        counters[1] = 0;
        counters[2] = 0;
        counters[4] = 0;
        return;
    }
    counters[1] = task_off[R - 1] + tcnt[R - 1];
    counters[2] = R - counters[3];
    counters[4] = run_start[R - 1] + (run_keys[R - 1] == SENT ? 0 : run_cnt[R - 1]);
}

FF_DEV uint32_t find_run(const uint32_t *task_off, uint32_t R, uint32_t t)
{
    uint32_t lo = 0, hi = R - 1;
    while (lo < hi) {
        uint32_t mid = (lo + hi + 1) >> 1;
        if (task_off[mid] <= t)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* task t of a later level (or of the unsegmented first level): the run r it
 * belongs to (returned) and its inputs [st, end), at most L of the run's */
FF_DEV uint32_t task_slice(uint32_t t, uint32_t L, const uint32_t *run_cnt, const uint32_t *run_start,
                           const uint32_t *task_off, const uint32_t *counters, uint32_t &st, uint32_t &end)
{
    const uint32_t r = find_run(task_off, counters[0], t);
    st = run_start[r] + (t - task_off[r]) * L;
    end = run_start[r] + run_cnt[r];
    if (end - st > L)
        end = st + L;
    return r;
}

/* the segmented first level's slice for thread (or lane pair) t of T: the
 * sorted pairs [s, e_end) (M pairs in equal slices of ceil(M / T)) and the
 * output slot of its first piece (t + the run holding s); false when t has
 * no pairs */
FF_DEV bool seg_slice(uint32_t t, uint32_t T, const uint32_t *run_start, const uint32_t *counters, uint32_t &s,
                      uint32_t &e_end, uint32_t &idx)
{
    if (t >= T)
        return false;
    const uint32_t R = counters[0], M = counters[4];
    const uint32_t K = (M + T - 1) / T;
    s = t * K;
    if (s >= M)
        return false;
    e_end = M - s > K ? s + K : M;
    idx = t + find_run(run_start, R, s);
    return true;
}

template <class F>
__global__ void __launch_bounds__(128) k_acc_aff(const uint32_t *vals, const base_src<aff_t<F>> bases, const uint32_t *run_keys,
                                                 const uint32_t *run_cnt, const uint32_t *run_start,
                                                 const uint32_t *task_off, const uint32_t *counters, uint32_t L,
                                                 uint32_t *out_keys, xyzz_t<F> *out)
{
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= counters[1])
        return;
    uint32_t st, end;
    const uint32_t r = task_slice(t, L, run_cnt, run_start, task_off, counters, st, end);
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    for (uint32_t e = st; e < end; e++) {
        uint32_t v = vals[e];
        aff_t<F> p = ld_global(src_at(bases, v >> 1));
        if (aff_is_inf(p))
            continue;
        if (v & 1)
            neg(p.y, p.y);
        xyzz_add_aff(acc, p);
    }
    out_keys[t] = run_keys[r];
    st_global(out + t, acc);
}

/* G1 level 0, segmented: the M pairs with a real key are cut into T equal
 * slices of K = ceil(M/T) consecutive sorted pairs, one per thread, whatever
 * the bucket boundaries (every thread does the same number of additions, so a
 * warp's threads finish together and one wave of resident threads covers the
 * whole level).  A thread emits one partial sum per bucket its slice touches:
 * the piece of run r in thread t goes to slot t + r (increasing in key; the
 * slots no thread writes keep the sentinel key from the memset), and the
 * next levels merge the pieces of each bucket.  PF: load the next base while
 * adding the current one.  MINB: blocks of 128 per SM the registers are capped
 * for (0: no cap). */
template <class F, bool PF, int MINB>
__global__ void __launch_bounds__(128, MINB) k_acc_seg(const uint32_t *keys, const uint32_t *vals, const base_src<aff_t<F>> bases,
                                                 const uint32_t *run_start, const uint32_t *counters, uint32_t T,
                                                 uint32_t *out_keys, xyzz_t<F> *out)
{
    uint32_t s, e_end, idx;
    if (!seg_slice(blockIdx.x * blockDim.x + threadIdx.x, T, run_start, counters, s, e_end, idx))
        return;
    uint32_t cur = keys[s];
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    uint32_t vn = vals[s];
    aff_t<F> pn;
    if (PF)
        pn = ld_global(src_at(bases, vn >> 1));
    for (uint32_t e = s; e < e_end; e++) {
        const uint32_t key = keys[e], v = vn;
        aff_t<F> p;
        if (PF) {
            p = pn;
            if (e + 1 < e_end) {
                vn = vals[e + 1];
                pn = ld_global(src_at(bases, vn >> 1));
            }
        } else {
            p = ld_global(src_at(bases, v >> 1));
            if (e + 1 < e_end)
                vn = vals[e + 1];
        }
        if (key != cur) {
            out_keys[idx] = cur;
            st_global(out + idx, acc);
            idx++;
            cur = key;
            xyzz_set_inf(acc);
        }
        if (aff_is_inf(p))
            continue;
        if (v & 1)
            neg(p.y, p.y);
        xyzz_add_aff(acc, p);
    }
    out_keys[idx] = cur;
    st_global(out + idx, acc);
}

/* G2 level 0, segmented as k_acc_seg, with a lane pair per slice (thread
 * 2t+c holds component c of slice t, as in k_acc_aff_g2p below); both lanes
 * of a pair always take the same branches.  KARA 1: the mixed addition's
 * products by Karatsuba in pairs (p2_mul2, 14 instead of 18 Fp multiplications
 * per lane); KARA 2: the same with lazy reduction (two reductions per Fp2
 * product instead of three).  PF: load the next base while adding the current one (as k_acc_seg).
 * BS threads per block (MINB blocks per SM set the register cap). */
template <class B, int MINB, int KARA, bool PF, int BS = 128>
__global__ void __launch_bounds__(BS, MINB)
    k_acc_seg_g2p(const uint32_t *keys, const uint32_t *vals, const base_src<aff_t<fp2x<B>>> bases, const uint32_t *run_start,
                  const uint32_t *counters, uint32_t T, uint32_t *out_keys, xyzz_t<fp2x<B>> *out)
{
    uint32_t s, e_end, idx;
    if (!seg_slice((blockIdx.x * blockDim.x + threadIdx.x) >> 1, T, run_start, counters, s, e_end, idx))
        return;
    const p2ctx k = p2_ctx();
    uint32_t cur = keys[s];
    xyzz_t<B> acc;
    xyzz_set_inf(acc);
    uint32_t vn = vals[s];
    aff_t<B> pn;
    if (PF)
        pn = p2_ld_aff(k, src_at(bases, vn >> 1), 0);
    for (uint32_t e = s; e < e_end; e++) {
        const uint32_t key = keys[e], v = vn;
        aff_t<B> p;
        if (PF) {
            p = pn;
            if (e + 1 < e_end) {
                vn = vals[e + 1];
                pn = p2_ld_aff(k, src_at(bases, vn >> 1), 0);
            }
        } else {
            p = p2_ld_aff(k, src_at(bases, v >> 1), 0);
            if (e + 1 < e_end)
                vn = vals[e + 1];
        }
        if (key != cur) {
            if (k.c == 0)
                out_keys[idx] = cur;
            p2_st_xyzz(k, out, idx, acc);
            idx++;
            cur = key;
            xyzz_set_inf(acc);
        }
        if (p2_aff_is_inf(k, p))
            continue;
        if (v & 1)
            neg(p.y, p.y);
        p2_xyzz_add_aff<KARA>(k, acc, p);
    }
    if (k.c == 0)
        out_keys[idx] = cur;
    p2_st_xyzz(k, out, idx, acc);
}

/* G2 level 0 with a lane pair per task (ec_pair.cuh): thread 2t+c sums component
 * c of task t.  MINB blocks of 128 per SM: the register cap is 65536/(128 MINB). */
template <class B, int MINB>
__global__ void __launch_bounds__(128, MINB)
    k_acc_aff_g2p(const uint32_t *vals, const base_src<aff_t<fp2x<B>>> bases, const uint32_t *run_keys, const uint32_t *run_cnt,
                  const uint32_t *run_start, const uint32_t *task_off, const uint32_t *counters, uint32_t L,
                  uint32_t *out_keys, xyzz_t<fp2x<B>> *out)
{
    uint32_t gt = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t t = gt >> 1;
    if (t >= counters[1]) /* both lanes of a pair leave together */
        return;
    const p2ctx k = p2_ctx();
    uint32_t st, end;
    const uint32_t r = task_slice(t, L, run_cnt, run_start, task_off, counters, st, end);
    xyzz_t<B> acc;
    xyzz_set_inf(acc);
    for (uint32_t e = st; e < end; e++) {
        uint32_t v = vals[e];
        aff_t<B> p = p2_ld_aff(k, src_at(bases, v >> 1), 0);
        if (p2_aff_is_inf(k, p))
            continue;
        if (v & 1)
            neg(p.y, p.y);
        p2_xyzz_add_aff(k, acc, p);
    }
    if (k.c == 0)
        out_keys[t] = run_keys[r];
    p2_st_xyzz(k, out, t, acc);
}

template <class F>
__global__ void __launch_bounds__(128) k_acc_xyzz(const xyzz_t<F> *in, const uint32_t *run_keys, const uint32_t *run_cnt,
                                                  const uint32_t *run_start, const uint32_t *task_off,
                                                  const uint32_t *counters, uint32_t L, uint32_t *out_keys,
                                                  xyzz_t<F> *out)
{
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= counters[1])
        return;
    uint32_t st, end;
    const uint32_t r = task_slice(t, L, run_cnt, run_start, task_off, counters, st, end);
    xyzz_t<F> acc = ld_global(in + st);
    for (uint32_t e = st + 1; e < end; e++)
        xyzz_add(acc, ld_global(in + e));
    out_keys[t] = run_keys[r];
    st_global(out + t, acc);
}

/* k_acc_xyzz for G2 with a lane pair per task (thread 2t+c holds component c
 * of task t's sum; ec_pair.cuh) */
template <class B, bool LZ>
__global__ void __launch_bounds__(128) k_acc_xyzz_p2(const xyzz_t<fp2x<B>> *in, const uint32_t *run_keys,
                                                     const uint32_t *run_cnt, const uint32_t *run_start,
                                                     const uint32_t *task_off, const uint32_t *counters, uint32_t L,
                                                     uint32_t *out_keys, xyzz_t<fp2x<B>> *out)
{
    const uint32_t t = (blockIdx.x * blockDim.x + threadIdx.x) >> 1;
    if (t >= counters[1]) /* both lanes of a pair leave together */
        return;
    const p2ctx k = p2_ctx();
    uint32_t st, end;
    const uint32_t r = task_slice(t, L, run_cnt, run_start, task_off, counters, st, end);
    xyzz_t<B> acc = p2_ld_xyzz(k, in, st);
    for (uint32_t e = st + 1; e < end; e++)
        p2_xyzz_add<LZ>(k, acc, p2_ld_xyzz(k, in, e));
    if (k.c == 0)
        out_keys[t] = run_keys[r];
    p2_st_xyzz(k, out, t, acc);
}

template <class F>
__global__ void k_scatter(const uint32_t *keys, const xyzz_t<F> *pts, const uint32_t *counters, xyzz_t<F> *dense)
{
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= counters[1])
        return;
    st_global(dense + keys[t], ld_global(pts + t));
}

/* the later levels' merge (k_acc_xyzz) and one level of the window
 * reduction on stream s (msm_wsum_kernels.cuh): k_bucket_lvl_pp by default
 * (CZK_CUDA_MSM_LVL_PP=2: G1's with registers for 3 blocks an SM), 0 the
 * one-group-per-point kernel (k_bucket_lvl: a thread for G1, a lane pair for
 * G2) for comparison.  G2 on lane pairs with lazily reduced Karatsuba
 * products (CZK_CUDA_MSM_LVL_P2=1, the default; 2: Karatsuba products reduced
 * each, fewer registers; 0: one thread per point, k_bucket_lvl) */
static unsigned lvl_pp(void)
{
    static const unsigned v = env_uint("CZK_CUDA_MSM_LVL_PP", 1);
    return v;
}
/* One level of the window reduction in either form, the grid derived from
 * the form's lanes a point (lvl_lanes, lvl_pp_lanes). */
template <class O> struct lvl_form {
    typedef typename O::mem P;
    static void plain(const P *S_in, const P *Q_in, uint32_t n_in, unsigned L, unsigned w1, unsigned shift,
                      uint32_t m_out, P *S_out, P *Q_out, cudaStream_t s)
    {
        k_bucket_lvl<O><<<grid_for(lvl_lanes<O> * (size_t)m_out, 128), 128, 0, s>>>(S_in, Q_in, n_in, L, w1, shift, m_out,
                                                                           S_out, Q_out);
    }
    template <int MINB = 1>
    static void pp(const P *S_in, const P *Q_in, uint32_t n_in, unsigned L, unsigned w1, unsigned shift,
                   uint32_t m_out, P *S_out, P *Q_out, cudaStream_t s)
    {
        k_bucket_lvl_pp<O, MINB><<<grid_for(lvl_pp_lanes<O> * (size_t)m_out, 128), 128, 0, s>>>(S_in, Q_in, n_in, L, w1,
                                                                                        shift, m_out, S_out, Q_out);
    }
};
template <class F> struct lvl_launch {
    static void acc(const xyzz_t<F> *in, const czk_msm_ws *ws, uint32_t tasks, uint32_t L, uint32_t *out_keys,
                    xyzz_t<F> *out, cudaStream_t s)
    {
        k_acc_xyzz<F><<<grid_for(tasks, 128), 128, 0, s>>>(in, ws->run_keys, ws->run_cnt, ws->run_start, ws->task_off,
                                                            ws->counters, L, out_keys, out);
    }
    static void launch(const xyzz_t<F> *S_in, const xyzz_t<F> *Q_in, uint32_t n_in, unsigned L, unsigned w1,
                       unsigned shift, uint32_t m_out, xyzz_t<F> *S_out, xyzz_t<F> *Q_out, cudaStream_t s)
    {
        typedef lvl_form<wsum_g1<F>> g1;
        if (lvl_pp() == 2)
            g1::template pp<3>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out, s);
        else if (lvl_pp())
            g1::template pp<>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out, s);
        else
            g1::plain(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out, s);
    }
};
template <class B> struct lvl_launch<fp2x<B>> {
    static unsigned p2()
    {
        static const unsigned on = env_uint("CZK_CUDA_MSM_LVL_P2", 1);
        return on;
    }
    static void acc(const xyzz_t<fp2x<B>> *in, const czk_msm_ws *ws, uint32_t tasks, uint32_t L, uint32_t *out_keys,
                    xyzz_t<fp2x<B>> *out, cudaStream_t s)
    {
        if (p2() == 1)
            k_acc_xyzz_p2<B, true><<<grid_for(2 * (size_t)tasks, 128), 128, 0, s>>>(
                in, ws->run_keys, ws->run_cnt, ws->run_start, ws->task_off, ws->counters, L, out_keys, out);
        else if (p2() == 2)
            k_acc_xyzz_p2<B, false><<<grid_for(2 * (size_t)tasks, 128), 128, 0, s>>>(
                in, ws->run_keys, ws->run_cnt, ws->run_start, ws->task_off, ws->counters, L, out_keys, out);
        else
            k_acc_xyzz<fp2x<B>><<<grid_for(tasks, 128), 128, 0, s>>>(in, ws->run_keys, ws->run_cnt, ws->run_start,
                                                                     ws->task_off, ws->counters, L, out_keys, out);
    }
    static void launch(const xyzz_t<fp2x<B>> *S_in, const xyzz_t<fp2x<B>> *Q_in, uint32_t n_in, unsigned L,
                       unsigned w1, unsigned shift, uint32_t m_out, xyzz_t<fp2x<B>> *S_out, xyzz_t<fp2x<B>> *Q_out,
                       cudaStream_t s)
    {
        typedef lvl_form<wsum_g2<B, true>> lazy;
        typedef lvl_form<wsum_g2<B, false>> reduced;
        if (p2() == 1 && lvl_pp())
            lazy::template pp<>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out, s);
        else if (p2() == 2 && lvl_pp())
            reduced::template pp<>(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out, s);
        else if (p2() == 1)
            lazy::plain(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out, s);
        else if (p2() == 2)
            reduced::plain(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out, s);
        else
            lvl_form<wsum_g1<fp2x<B>>>::plain(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out, s);
    }
};

/* window sums to Jacobian for the host-side Horner step */
template <class F> __global__ void k_to_jac(const xyzz_t<F> *W, unsigned nwin, jac_t<F> *out)
{
    unsigned w = blockIdx.x * blockDim.x + threadIdx.x;
    if (w >= nwin)
        return;
    jac_t<F> j;
    xyzz_to_jac(j, ld_global(W + w));
    out[w] = j;
}

/* ---- the MSM ---- */

/* Horner over the windows on the host: c doublings per window are a long
 * serial chain, which one CPU core runs several times faster than one GPU
 * thread (about 260 G1 doublings: ~0.3 ms instead of ~3 ms). */
template <class J, void (*DBL)(J *, const J *), void (*ADD)(J *, const J *, const J *)>
static void msm_horner(J *r, const J *W, unsigned nwin, unsigned c)
{
    *r = W[nwin - 1];
    for (int w = (int)nwin - 2; w >= 0; w--) {
        for (unsigned i = 0; i < c; i++)
            DBL(r, r);
        ADD(r, r, &W[w]);
    }
}

static double prof_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* CZK_CUDA_MSM_PROFILE=1: synchronise after each phase and print its time */
#define PHASE(name)                                                           \
    do {                                                                      \
        if (prof) {                                                           \
            CZK_CU(cudaStreamSynchronize(s));                                 \
            double t_ = prof_ms();                                            \
            fprintf(stderr, "msm %s n=%zu c=%u: %-10s %8.3f ms\n", g2 ? "g2" : "g1", n, p.c, name, t_ - t_prev); \
            t_prev = t_;                                                      \
        }                                                                     \
    } while (0)

/* CZK_CUDA_MSM_CHECK=1 (diagnosis): synchronise after each kernel of an MSM
 * and name the kernel, the plan and the level of a fault; check the bucket
 * keys before they index the dense buckets */
#define MSM_LAUNCHED(what)                                                    \
    do {                                                                      \
        CZK_CU_LAUNCH(what);                                                  \
        if (chk) {                                                            \
            cudaError_t e_ = cudaStreamSynchronize(s);                        \
            if (e_ != cudaSuccess)                                            \
                return czk_cuda_errf_(-EIO, "msm %s n=%zu c=%u ncls=%u nb=%u level %d: %s after %s", \
                                      g2 ? "g2" : "g1", n, p.c, p.ncls, p.nb, level, cudaGetErrorString(e_), what); \
        }                                                                     \
    } while (0)

#include "backend/cuda/msm_ba.cuh"

/* p's buffers fit ctx's workspace (the window reduction's levels run in the
 * two partial-sum buffers, whose cap_parts >= cap_buckets + task_target hold
 * the first level's 2 nbuckets / seg points) */
static bool plan_fits(const czk_cuda_ctx *ctx, const msm_plan &p)
{
    const czk_msm_ws *ws = &ctx->msm;
    return p.pairs <= ws->cap_pairs && p.nbuckets <= ws->cap_buckets &&
           2 * ((size_t)p.ncls * p.nb / seg_for(ctx, p)) <= ws->cap_parts;
}

template <class F>
static int msm_run_(czk_cuda_ctx *ctx, const czk_cuda_bases *b, size_t base_off, int sbuf, size_t soff, size_t n,
                    void *host_out)
{
    typedef msm_group<F> G;
    struct czk_msm_ws *ws = &ctx->msm;
    const int g2 = G::g2;
    if (b->g2 != g2 || b->curve != G::curve)
        return czk_cuda_errf_(-EINVAL, "msm: %s %s bases passed to the %s %s msm", czk_cuda_curve_name_(b->curve),
                              b->g2 ? "G2" : "G1", czk_cuda_curve_name_(G::curve), g2 ? "G2" : "G1");
    if (!(ctx->curves & G::curve))
        return czk_cuda_errf_(-EINVAL, "msm: context created without %s", czk_cuda_curve_name_(G::curve));
    if (base_off > b->n || n > b->n - base_off)
        return czk_cuda_errf_(-EINVAL, "msm: %zu terms at base offset %zu, only %zu bases", n, base_off, b->n);
    if (sbuf < 0 || sbuf > 3 || soff > ctx->buf_len[sbuf] || n > ctx->buf_len[sbuf] - soff)
        return czk_cuda_errf_(-EINVAL, "msm: %zu scalars at offset %zu of buffer %d out of range", n, soff, sbuf);
    if (g2 && !ctx->enable_g2)
        return czk_cuda_errf_(-EINVAL, "msm: context created without G2 support");
    if (sizeof(xyzz_t<F>) > ws->pt_bytes)
        return czk_cuda_errf_(-EINVAL, "msm: workspace points of %zu bytes, %zu needed", ws->pt_bytes,
                              sizeof(xyzz_t<F>));
    if (n > ctx->max_msm_n)
        return czk_cuda_errf_(-ENOMEM, "msm: %zu terms, context sized for %zu", n, ctx->max_msm_n);
    CZK_CU(cudaSetDevice(ctx->device));
    cudaStream_t s = ctx->st[0];
    jac_t<F> *res = (jac_t<F> *)ws->result;
    static const int prof = getenv("CZK_CUDA_MSM_PROFILE") != NULL;
    static const int chk = getenv("CZK_CUDA_MSM_CHECK") != NULL;
    int level = 0;
    double t_prev = prof ? prof_ms() : 0;
    if (n == 0) {
        G::set_inf(host_out);
        return 0;
    }
    /* scalars: wait for their upload and for any compute that produced them */
    CZK_CU(cudaStreamWaitEvent(s, ctx->buf_ready[sbuf], 0));
    for (int i = 1; i < CZK_CUDA_NSTREAMS; i++) {
        CZK_CU(cudaEventRecord(ctx->done[i], ctx->st[i]));
        CZK_CU(cudaStreamWaitEvent(s, ctx->done[i], 0));
    }
    /* with a fixed-base table: its window and bucket windows, its rows of b->n points
     * (tab_build publishes tab last, so its fields are set once it is seen);
     * a table plan this workspace cannot hold runs as the plain plan */
    const void *tab = __atomic_load_n(&b->tab, __ATOMIC_ACQUIRE);
    msm_plan p = tab ? plan_make(n, b->tab_c, b->tab_cls) : plan_for(n, g2, G::curve);
    if (tab && !plan_fits(ctx, p))
        tab = NULL;
    if (tab && ctx->msm_table_dense_pm) {
        /* sparse scalars (mostly 0 and 1): the plain plan's smaller bucket
         * reduction wins over the table's one wide reduction */
        CZK_CU(cudaMemsetAsync(ws->counters + 5, 0, sizeof(uint32_t), s));
        k_dense_cnt<<<grid_for(n, 256), 256, 0, s>>>(ctx->buf[sbuf] + soff, (uint32_t)n, ws->counters + 5);
        MSM_LAUNCHED("k_dense_cnt");
        CZK_CU(cudaMemcpyAsync(ws->host_counters + 5, ws->counters + 5, sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
        CZK_CU(cudaStreamSynchronize(s));
        if ((uint64_t)ws->host_counters[5] * 1000 < (uint64_t)n * ctx->msm_table_dense_pm)
            tab = NULL;
    }
    if (!tab)
        p = plan_for(n, g2, G::curve);
    ws->last_tab = tab != NULL;
    /* row 0 of a table is the bases themselves, its rows 1.. follow at tab */
    const uint32_t stride = tab ? (uint32_t)b->n : 0;
    const aff_t<F> *pts = (const aff_t<F> *)b->pts + base_off;
    const base_src<aff_t<F>> bases = {pts, tab ? (const aff_t<F> *)tab + base_off : pts, stride};
    if (p.ncls > 64)
        return czk_cuda_errf_(-EINVAL, "msm: plan for %zu terms has %u bucket windows, at most 64", n, p.ncls);
    if (!plan_fits(ctx, p))
        return czk_cuda_errf_(-ENOMEM, "msm: plan for %zu terms (c=%u, %u bucket windows) exceeds the workspace", n,
                              p.c, p.ncls);
    /* the previous MSM's sorted digits, while the caller keeps them and they
     * are of these scalars and this plan (the bases do not enter them) */
    static const unsigned keep_ok = env_uint("CZK_CUDA_MSM_KEEP", 1); /* 0: always sort (A/B) */
    const auto &so = ws->sorted;
    ws->last_kept = keep_ok && ws->keep && so.valid && so.sbuf == sbuf && so.soff == soff && so.n == n && so.c == p.c &&
                    so.ncls == p.ncls && so.stride == stride;
    ws->sorted.valid = 0;
    size_t tmp = ws->cub_bytes;
    if (!ws->last_kept) {
        k_digits<<<grid_for(n, 256), 256, 0, s>>>(ctx->buf[sbuf] + soff, (uint32_t)n, p.c, p.nwin, p.ncls, stride,
                                                  ws->keys[0], ws->vals[0]);
        MSM_LAUNCHED("k_digits");
        PHASE("digits");
        /* double-buffered: CUB's scratch stays small instead of holding
         * another copy of the pairs (8 bytes a pair of the workspace's
         * largest plan: 2.2 GiB at 2^24); the buffers swap so that the
         * sorted pairs are keys[1] / vals[1] as the levels expect */
        cub::DoubleBuffer<uint32_t> dk(ws->keys[0], ws->keys[1]), dv(ws->vals[0], ws->vals[1]);
        CZK_CU(cub::DeviceRadixSort::SortPairs(ws->cub_tmp, tmp, dk, dv, (int)p.pairs, 0, (int)p.key_bits, s));
        if (dk.Current() != ws->keys[1]) {
            ws->keys[0] = dk.Alternate();
            ws->keys[1] = dk.Current();
            ws->vals[0] = dv.Alternate();
            ws->vals[1] = dv.Current();
        }
        PHASE("sort");
    }
    /* levels of bucket sums until every bucket has one sum */
    const uint32_t *in_keys = ws->keys[1];
    size_t m = p.pairs;
    int cur = 0;
    uint32_t *hc = ws->host_counters;
    const size_t cap_runs = ws->cap_parts + 2;
    /* level 0: CZK_CUDA_MSM_SEG (comparisons) picks the G1 kernel: 2 =
     * segmented with the next base prefetched (k_acc_seg, the default), 1 =
     * segmented without the prefetch, 3 and 4 = 1 and 2 with registers capped
     * for 4 blocks per SM, 5 = 2 capped for 3 blocks, 0 = one task per bucket
     * piece (k_acc_aff); any nonzero value makes G2 use k_acc_seg_g2p (the
     * curve's msm_group<F>::level0_seg maps it to a kernel, and may keep only
     * the default).  CZK_CUDA_MSM_SEGW: waves of resident
     * threads for the segmented kernel (default 1). */
    static const unsigned segmode = env_uint("CZK_CUDA_MSM_SEG", 2);
    static const unsigned segw = env_uint("CZK_CUDA_MSM_SEGW", 1);
    const size_t ba_ch = ba_plan<F>(ws, p);
    if (ba_ch) {
        int rc = ba_buckets<F>(ctx, bases, p, ba_ch, prof, s);
        if (rc)
            return rc;
        PHASE("batch-affine");
    } else for (;;) {
        uint32_t L = level == 0 ? L0_MIN : LN_MIN;
        size_t per = (m + task_target(ctx) - 1) / task_target(ctx);
        if (per > L)
            L = (uint32_t)per;
        tmp = ws->cub_bytes;
        CZK_CU(cub::DeviceRunLengthEncode::Encode(ws->cub_tmp, tmp, in_keys, ws->run_keys, ws->run_cnt, ws->counters,
                                                  (int)m, s));
        uint32_t m_scan = (uint32_t)(m < cap_runs ? m : cap_runs);
        CZK_CU(cudaMemsetAsync(ws->counters + 3, 0, sizeof(uint32_t), s));
        k_task_cnt<<<grid_for(m_scan, 256), 256, 0, s>>>(ws->run_keys, ws->run_cnt, ws->counters, m_scan, L,
                                                         ws->tcnt);
        MSM_LAUNCHED("k_task_cnt");
        tmp = ws->cub_bytes;
        CZK_CU(cub::DeviceScan::ExclusiveSum(ws->cub_tmp, tmp, ws->tcnt, ws->task_off, (int)m_scan, s));
        tmp = ws->cub_bytes;
        CZK_CU(cub::DeviceScan::ExclusiveSum(ws->cub_tmp, tmp, ws->run_cnt, ws->run_start, (int)m_scan, s));
        k_task_total<<<1, 1, 0, s>>>(ws->run_keys, ws->run_cnt, ws->run_start, ws->tcnt, ws->task_off,
                                     ws->counters);
        MSM_LAUNCHED("k_task_total");
        CZK_CU(cudaMemcpyAsync(hc, ws->counters, 5 * sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
        CZK_CU(cudaStreamSynchronize(s));
        uint32_t tasks = hc[1], real_runs = hc[2];
        if (tasks > ws->cap_parts)
            return czk_cuda_errf_(-ENOMEM, "msm: %u tasks at level %d exceed %zu", tasks, level, ws->cap_parts);
        xyzz_t<F> *out = (xyzz_t<F> *)ws->parts[cur];
        unsigned lanes = 1, bs = 128;
        const void *kern = level == 0 && segmode && hc[4] > 0 ? G::level0_seg(segmode, lanes, bs) : NULL;
        if (kern) {
            /* segmented level 0: T slices (whole waves of resident blocks, at
             * least 64 pairs each), T + R output slots */
            int bps = 0;
            CZK_CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, kern, (int)bs, 0));
            if (bps < 1)
                bps = 1;
            size_t T = (size_t)ctx->sm_count * (size_t)bps * (bs / lanes) * (segw ? segw : 1);
            size_t tmax = ((size_t)hc[4] + 63) / 64;
            if (T > tmax)
                T = tmax;
            if (T > task_target(ctx))
                T = task_target(ctx);
            size_t slots = T + hc[0];
            if (slots > ws->cap_parts)
                return czk_cuda_errf_(-ENOMEM, "msm: %zu partial sums at level 0 exceed %zu", slots, ws->cap_parts);
            CZK_CU(cudaMemsetAsync(ws->lvl_keys[cur], 0xff, slots * sizeof(uint32_t), s));
            uint32_t T32 = (uint32_t)T;
            const uint32_t *vals1 = ws->vals[1], *rs = ws->run_start, *cn = ws->counters;
            uint32_t *ok = ws->lvl_keys[cur];
            base_src<aff_t<F>> bp = bases;
            void *op = out;
            void *args[] = {(void *)&in_keys, (void *)&vals1, (void *)&bp, (void *)&rs, (void *)&cn,
                            (void *)&T32, (void *)&ok, (void *)&op};
            CZK_CU(cudaLaunchKernel(kern, dim3(grid_for(T * lanes, bs)), dim3(bs), args, 0, s));
            MSM_LAUNCHED("k_acc_seg");
            PHASE("level0seg");
            in_keys = ws->lvl_keys[cur];
            m = slots;
            cur = 1 - cur;
            level++;
            continue;
        }
        if (tasks) {
            if (level == 0)
                G::level0_tasks(ws, bases, tasks, L, ws->lvl_keys[cur], out, s);
            else
                lvl_launch<F>::acc((const xyzz_t<F> *)ws->parts[1 - cur], ws, tasks, L, ws->lvl_keys[cur], out, s);
            MSM_LAUNCHED("k_acc");
        }
        PHASE(level == 0 ? "level0" : "level>0");
        if (tasks == real_runs) {
            CZK_CU(cudaMemsetAsync(ws->buckets, 0, p.nbuckets * sizeof(xyzz_t<F>), s));
            if (tasks && chk) {
                uint32_t *hk = (uint32_t *)malloc(tasks * sizeof(uint32_t));
                if (!hk)
                    return -ENOMEM;
                CZK_CU(cudaMemcpy(hk, ws->lvl_keys[cur], tasks * sizeof(uint32_t), cudaMemcpyDeviceToHost));
                for (uint32_t t = 0; t < tasks; t++)
                    if (hk[t] >= p.nbuckets) {
                        int rc = czk_cuda_errf_(-EIO, "msm %s n=%zu c=%u: bucket key %u of task %u/%u at level %d, %zu buckets",
                                                g2 ? "g2" : "g1", n, p.c, hk[t], t, tasks, level, p.nbuckets);
                        free(hk);
                        return rc;
                    }
                free(hk);
            }
            if (tasks) {
                k_scatter<F><<<grid_for(tasks, 256), 256, 0, s>>>(ws->lvl_keys[cur], out, ws->counters,
                                                                  (xyzz_t<F> *)ws->buckets);
                MSM_LAUNCHED("k_scatter");
            }
            break;
        }
        in_keys = ws->lvl_keys[cur];
        m = tasks;
        cur = 1 - cur;
        level++;
    }
    /* window sums: the levels of wsum_levels, in the two partial-sum
     * buffers (free once the buckets are scattered) */
    xyzz_t<F> *const parts[2] = {(xyzz_t<F> *)ws->parts[0], (xyzz_t<F> *)ws->parts[1]};
    const xyzz_t<F> *w0 = NULL;
    const int wr = wsum_levels<xyzz_t<F>>(
        (const xyzz_t<F> *)ws->buckets, p.ncls, p.nb, seg_for(ctx, p), parts, &w0,
        [&](const xyzz_t<F> *S_in, const xyzz_t<F> *Q_in, uint32_t n_in, unsigned L, unsigned w1, unsigned shift,
            uint32_t m_out, xyzz_t<F> *S_out, xyzz_t<F> *Q_out) -> int {
            lvl_launch<F>::launch(S_in, Q_in, n_in, L, w1, shift, m_out, S_out, Q_out, s);
            MSM_LAUNCHED("k_bucket_lvl");
            return 0;
        });
    if (wr < 0)
        return wr;
    PHASE("window_sums");
    k_to_jac<F><<<1, 64, 0, s>>>(w0, p.ncls, res);
    MSM_LAUNCHED("k_to_jac");
    CZK_CU(cudaMemcpyAsync(ws->host_result, res, p.ncls * sizeof(jac_t<F>), cudaMemcpyDeviceToHost, s));
    CZK_CU(cudaStreamSynchronize(s));
    G::horner(host_out, ws->host_result, p.ncls, p.c);
    PHASE("final");
    /* keys[1] and vals[1] are read-only after the sort: still these digits */
    if (ws->keep)
        ws->sorted = {1, sbuf, soff, n, p.c, p.ncls, stride};
    return 0;
}

/* msm_run_; a failed MSM ends keep_digits (the caller's scope may be left) */
template <class F>
static int msm_run(czk_cuda_ctx *ctx, const czk_cuda_bases *b, size_t base_off, int sbuf, size_t soff, size_t n,
                   void *host_out)
{
    const int r = msm_run_<F>(ctx, b, base_off, sbuf, soff, n, host_out);
    if (r < 0) {
        ctx->msm.keep = 0;
        ctx->msm.sorted.valid = 0;
    }
    return r;
}

/* ---- fixed-base tables ----
 * Row j of a table over n bases P holds 2^(j ncls c) P (affine, the bases'
 * layout; infinity stays all-zero), so window w's digits of an MSM over the
 * bases index row w / ncls and share bucket window w % ncls (k_digits): one
 * bucket reduction per bucket window instead of per window.  Row 0 is the
 * bases themselves, so the table's memory holds rows 1.. (base_src reads
 * both).  Rows are made one from the other: ncls c doublings in XYZZ
 * (k_tab_dbl), then affine with one inversion per TAB_BATCH points
 * (k_tab_norm). */

/* out[i] = 2^d in[i], d >= 1 */
template <class F> __global__ void k_tab_dbl(const aff_t<F> *in, uint32_t n, unsigned d, xyzz_t<F> *out)
{
    uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    aff_t<F> p = ld_global(in + i);
    xyzz_t<F> q;
    if (aff_is_inf(p)) {
        xyzz_set_inf(q);
    } else {
        xyzz_dbl_aff(q, p);
        for (unsigned k = 1; k < d; k++)
            xyzz_dbl(q);
    }
    st_global(out + i, q);
}

#define TAB_BATCH 16
/* out[i] = in[i] in affine coordinates: thread t of T converts the points
 * t + k T (k < TAB_BATCH) with one inversion, by Montgomery's trick over their
 * ZZZ (1/ZZ = (ZZ/ZZZ)^2 since ZZ^3 = ZZZ^2) */
template <class F>
__global__ void __launch_bounds__(128) k_tab_norm(const xyzz_t<F> *in, uint32_t n, uint32_t T, aff_t<F> *out)
{
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= T)
        return;
    F pre[TAB_BATCH], acc;
    set_one(acc);
    unsigned m = 0;
    for (uint32_t i = t; i < n && m < TAB_BATCH; i += T, m++) {
        const F z = in[i].zzz;
        if (!is_zero(z))
            mul(acc, acc, z);
        pre[m] = acc;
    }
    F ia;
    inv(ia, acc);
    for (int k = (int)m - 1; k >= 0; k--) {
        const uint32_t i = t + (uint32_t)k * T;
        const xyzz_t<F> q = ld_global(in + i);
        aff_t<F> a;
        if (is_zero(q.zzz)) {
            set_zero(a.x);
            set_zero(a.y);
        } else {
            F iz, u;
            if (k)
                mul(iz, ia, pre[k - 1]);
            else
                iz = ia;
            mul(ia, ia, q.zzz);
            mul(u, q.zz, iz);
            sqr(u, u);
            mul(a.x, q.x, u);
            mul(a.y, q.y, iz);
        }
        st_global(out + i, a);
    }
}

/* the shape of a table over n bases asked with rows (0: all) and window c
 * (0: tab_c_for): its window, bucket windows ceil(windows / rows) and the
 * rows those need; -EINVAL for a window outside 4..22 */
[[maybe_unused]] static int tab_shape(size_t n, int g2, unsigned curve, unsigned rows, unsigned &c,
                                      unsigned &ncls, unsigned &nrows)
{
    if (!c)
        c = tab_c_for(n, g2, curve);
    if (c < 4 || c > 22)
        return czk_cuda_errf_(-EINVAL, "msm table: window of %u bits (4..22)", c);
    const unsigned nwin = nwin_for(c);
    if (!rows || rows > nwin)
        rows = nwin;
    ncls = (nwin + rows - 1) / rows;
    nrows = (nwin + ncls - 1) / ncls;
    return 0;
}

/* An MSM plan's time in units of one bucket addition: its n x windows
 * additions (and as many sort pairs), and about 8 additions' time a bucket
 * for the bucket reduction (a full BLS12-381 G1 table at 2^24 on the H200:
 * 5.8 ms of window sums for its 2^21 buckets against 69.8 ms for its
 * 12 x 2^24 additions; docs/bench-gpu.md, "Run 48"). */
static double plan_cost(size_t n, const msm_plan &p) { return (double)n * p.nwin + 8.0 * (double)p.nbuckets; }

/* device memory a table of rows rows over n points of pt bytes adds (its
 * rows past row 0, the bases), and what it needs to be built (those and
 * tab_build's scratch of up to 2^20 Jacobian-sized points) */
static size_t tab_bytes(size_t n, size_t pt, unsigned rows) { return rows ? (size_t)(rows - 1) * n * pt : 0; }
static size_t tab_peak(size_t n, size_t pt, unsigned rows)
{
    return tab_bytes(n, pt, rows) + (n < ((size_t)1 << 20) ? n : ((size_t)1 << 20)) * 2 * pt;
}

/* The table to build over n bases of pt bytes in at most mem bytes of free
 * device memory, for MSMs in a workspace of cap_buckets buckets (0: as many
 * as the full table's plan has, which a context created with cfg.msm_tables
 * holds for n up to its max_msm_n): the default full table (tab_shape's rows
 * 0, c 0) when it fits both; otherwise the partial one (at least 2 rows, a
 * window no wider than the full table's, no more windows than the plain plan,
 * so no more sort pairs, and at most 64 bucket windows) of least plan_cost,
 * the fewest rows among equals, when it costs under 97% of the plain plan.
 * -ENOSPC when none does (not an error: nothing is logged).
 * CZK_CUDA_MSM_TAB_FIT=0: the full table or none (A/B). */
[[maybe_unused]] static int tab_fit(size_t n, int g2, unsigned curve, size_t pt, size_t mem, size_t cap_buckets,
                                    unsigned &c, unsigned &ncls, unsigned &rows)
{
    unsigned c0 = 0, ncls0 = 0, rows0 = 0;
    if (n == 0 || tab_shape(n, g2, curve, 0, c0, ncls0, rows0) < 0)
        return czk_cuda_errf_(-EINVAL, "msm table over %zu bases: no plan", n);
    const size_t full_buckets = plan_make(n, c0, ncls0).nbuckets;
    if (!cap_buckets)
        cap_buckets = full_buckets;
    if (tab_peak(n, pt, rows0) <= mem && full_buckets <= cap_buckets) {
        c = c0, ncls = ncls0, rows = rows0;
        return 0;
    }
    static const unsigned partial = env_uint("CZK_CUDA_MSM_TAB_FIT", 1);
    const msm_plan plain = plan_for(n, g2, curve);
    double best = 0.97 * plan_cost(n, plain);
    bool found = false;
    for (unsigned cc = 4; partial && cc <= c0; cc++) {
        const unsigned nwin = nwin_for(cc);
        if (nwin > plain.nwin)
            continue; /* more windows than the plain plan: never cheaper */
        for (unsigned k = cc == c0 ? 2 : 1; k <= nwin && k <= 64; k++) {
            const unsigned r = (nwin + k - 1) / k, kk = (nwin + r - 1) / r;
            if (r < 2 || kk != k || (size_t)r * n >= ((size_t)1 << 31))
                continue; /* no table, another k's shape, or too many points */
            const msm_plan p = plan_make(n, cc, k);
            const double cost = plan_cost(n, p);
            if (p.nbuckets > cap_buckets || tab_peak(n, pt, r) > mem || cost > best || (found && cost == best && r >= rows))
                continue;
            best = cost, found = true;
            c = cc, ncls = k, rows = r;
        }
    }
    return found ? 0 : -ENOSPC;
}

/* rows (0: all) rows of b's table at window c (0: tab_c_for); with fewer
 * rows than windows, ceil(windows / rows) bucket windows.  Built on b's
 * context's copy stream while other contexts may run MSMs over b (they use
 * the table from the moment it is published). */
template <class F> static int tab_build(czk_cuda_bases *b, unsigned rows, unsigned c)
{
    typedef msm_group<F> G;
    czk_cuda_ctx *ctx = b->ctx;
    const size_t n = b->n, pt = sizeof(aff_t<F>);
    unsigned ncls;
    if (__atomic_load_n(&b->tab, __ATOMIC_ACQUIRE))
        return czk_cuda_errf_(-EBUSY, "msm table: the bases already have one");
    if (tab_shape(n, G::g2, G::curve, rows, c, ncls, rows) < 0)
        return -EINVAL;
    if (n == 0 || rows < 2 || (size_t)rows * n >= ((size_t)1 << 31))
        return czk_cuda_errf_(-EINVAL, "msm table: %u rows of %zu bases (at least 2 rows and 1 base, at most 2^31 "
                              "points)", rows, n);
    CZK_CU(cudaSetDevice(ctx->device));
    void *tab = NULL, *scr = NULL;
    const size_t chunk = n < ((size_t)1 << 20) ? n : ((size_t)1 << 20);
    cudaError_t e = cudaMalloc(&tab, tab_bytes(n, pt, rows));
    if (e == cudaSuccess)
        e = cudaMalloc(&scr, chunk * sizeof(xyzz_t<F>));
    if (e != cudaSuccess) {
        cudaFree(tab);
        cudaGetLastError();
        return czk_cuda_errf_(-ENOMEM, "msm table: %u rows past the bases' of %zu %s points (%zu MiB): %s", rows - 1,
                              n, G::g2 ? "G2" : "G1", tab_bytes(n, pt, rows) >> 20, cudaGetErrorString(e));
    }
    cudaStream_t s = ctx->copy;
    /* row j (j >= 1) at T + (j - 1) n, made from row j - 1 (row 0: the bases) */
    aff_t<F> *T = (aff_t<F> *)tab;
    const aff_t<F> *B0 = (const aff_t<F> *)b->pts;
    for (unsigned j = 1; j < rows && e == cudaSuccess; j++) {
        const aff_t<F> *prev = j == 1 ? B0 : T + (size_t)(j - 2) * n;
        for (size_t off = 0; off < n && e == cudaSuccess; off += chunk) {
            const uint32_t cnt = (uint32_t)(n - off < chunk ? n - off : chunk);
            const uint32_t th = (cnt + TAB_BATCH - 1) / TAB_BATCH;
            k_tab_dbl<F><<<grid_for(cnt, 128), 128, 0, s>>>(prev + off, cnt, ncls * c, (xyzz_t<F> *)scr);
            k_tab_norm<F><<<grid_for(th, 128), 128, 0, s>>>((const xyzz_t<F> *)scr, cnt, th,
                                                            T + (size_t)(j - 1) * n + off);
            e = cudaGetLastError();
        }
    }
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(s);
    cudaFree(scr);
    if (e != cudaSuccess) {
        cudaFree(tab);
        return czk_cuda_fail_("msm table", __FILE__, __LINE__, e);
    }
    b->tab_rows = rows;
    b->tab_c = c;
    b->tab_cls = ncls;
    __atomic_store_n(&b->tab, tab, __ATOMIC_RELEASE);
    return 0;
}

/* The host side of msm_group<F> that every group shares: a specialisation
 * derives from it and adds level0_seg (and may replace level0_tasks).
 * J is the host Jacobian type, INF / DBL / ADD its CPU functions. */
template <class F, class J, unsigned CURVE, int G2, void (*INF)(J *), void (*DBL)(J *, const J *),
          void (*ADD)(J *, const J *, const J *)>
struct msm_group_base {
    static const int g2 = G2;
    static const unsigned curve = CURVE;
    static void set_inf(void *r) { INF((J *)r); }
    static void horner(void *r, const void *W, unsigned nwin, unsigned c)
    {
        msm_horner<J, DBL, ADD>((J *)r, (const J *)W, nwin, c);
    }
    /* one thread per task of at most L pairs (k_acc_aff) */
    static void level0_tasks(const czk_msm_ws *ws, const base_src<aff_t<F>> &bases, uint32_t tasks, uint32_t L,
                             uint32_t *out_keys, xyzz_t<F> *out, cudaStream_t s)
    {
        k_acc_aff<F><<<grid_for(tasks, 128), 128, 0, s>>>(ws->vals[1], bases, ws->run_keys, ws->run_cnt,
                                                          ws->run_start, ws->task_off, ws->counters, L, out_keys, out);
    }
};

/* host scalars (32-byte STANDARD-form elements of the curve's Fr): upload
 * into BUF_W, then the MSM */
template <class F>
static int msm_host(czk_cuda_ctx *ctx, const czk_cuda_bases *b, const void *scalars, size_t n, void *host_out)
{
    int rc = czk_cuda_upload_async(ctx, CZK_CUDA_BUF_W, 0, (const czk_fr *)scalars, n, NULL, NULL);
    return rc ? rc : msm_run<F>(ctx, b, 0, CZK_CUDA_BUF_W, 0, n, host_out);
}

#endif
