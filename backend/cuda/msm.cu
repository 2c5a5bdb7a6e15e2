/*
 * msm.cu — G1/G2 multi-scalar multiplication on the device (Pippenger).
 *
 * For n terms with window c (chosen from n, see plan_for):
 *  1. digits: each scalar (STANDARD form, any 256-bit value) is cut into
 *     nwin = ceil(257/c) signed digits in [-2^(c-1), 2^(c-1)]; a nonzero digit d
 *     of window w becomes the pair key = w*2^(c-1) + |d|-1, value = index*2 + sign.
 *     Zero digits get the sentinel key, which sorts last and is dropped.
 *  2. CUB radix sort of the (key, value) pairs: points of one bucket become
 *     contiguous.
 *  3. bucket sums.  First level (k_acc_seg, G2: k_acc_seg_g2p): the sorted
 *     pairs with a real key are cut into equal slices, one per resident thread
 *     (or lane pair), regardless of bucket boundaries; each thread sums its
 *     slice in XYZZ with mixed additions (negating y for negative digits,
 *     skipping all-zero infinity bases) and emits one partial sum per bucket
 *     piece.  Later levels cut the runs of partial sums into tasks of at most L
 *     and add them (full XYZZ additions) until each bucket has one sum; those
 *     are scattered into a dense bucket array.  (CZK_CUDA_MSM_SEG=0 selects the
 *     older first level, tasks of at most L pairs per bucket.)  G2's first
 *     level runs on lane pairs, one Fp2 component per thread (ec_pair.cuh): a
 *     whole G2 point per thread needs more registers than a thread has.
 *  4. per window, sum_b (b+1)*B_b by running sums over segments of buckets in
 *     parallel (segment j adds j*SEG*S_j by double-and-add), then a tree of
 *     group sums; the nwin window sums go to the host, which runs Horner over
 *     the windows (c doublings each: a serial chain a CPU core runs faster).
 * All scratch lives in the context's workspace, sized at creation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cub/cub.cuh>

#include "backend/cuda/ec_pair.cuh"
#include "backend/cuda/internal.cuh"


#define SENT 0xffffffffu
#define L0_MIN 128u /* mixed additions per task at level 0 */
#define LN_MIN 32u  /* full additions per task at later levels */

struct msm_plan {
    unsigned c, nwin, nb, key_bits;
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
 * window's additions.  At 2^20, c=13 beat c=17 (29 against 47 ms). */
static unsigned c_for_bitlen(unsigned k, int g2)
{
    /* G1 from 2^25 up (bit length 26): about 2^8 points per bucket.  With the
     * segmented first level (fixed work per thread, so short buckets no longer
     * cost divergence) c=19 took 416.8 ms at 2^26 against 437.5 for c=18,
     * while at 2^24 c=16 stayed best (121.9 ms against 123.4 for c=17;
     * docs/bench-gpu.md, "Third round").  G2 keeps the rule above (not
     * measured above 2^24). */
    int c = (int)k - (!g2 && k >= 26 ? 8 : 9);
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

static msm_plan plan_for(size_t n, int g2)
{
    msm_plan p;
    static unsigned force_c = env_uint("CZK_CUDA_MSM_C", 0);
    p.c = (force_c >= 4 && force_c <= 24) ? force_c : c_for_bitlen(bitlen(n), g2);
    p.nwin = (257 + p.c - 1) / p.c;
    p.nb = 1u << (p.c - 1);
    p.nbuckets = (size_t)p.nwin * p.nb;
    p.key_bits = bitlen(p.nbuckets);
    p.pairs = n * p.nwin;
    return p;
}

extern "C" unsigned czk_cuda_msm_window_bits(size_t n, int g2) { return plan_for(n, g2).c; }

static unsigned task_target(const czk_cuda_ctx *ctx) { return (unsigned)ctx->sm_count * 2048u; }

/* buckets per thread of the window reduction: enough threads to fill the GPU
 * (CZK_CUDA_MSM_SEGT threads per SM, default 512) */
static unsigned seg_for(const czk_cuda_ctx *ctx, const msm_plan &p)
{
    static unsigned per_sm = env_uint("CZK_CUDA_MSM_SEGT", 512);
    size_t target = (size_t)ctx->sm_count * per_sm;
    unsigned seg = 1;
    while (seg < p.nb && p.nbuckets / seg > target)
        seg *= 2;
    return seg;
}

/* ---- kernels ---- */

__global__ void k_digits(const fr_t *sc, uint32_t n, unsigned c, unsigned nwin, uint32_t *keys, uint32_t *vals)
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
        keys[o] = v ? ((w << (c - 1)) | (v - 1)) : SENT;
        vals[o] = (i << 1) | neg;
    }
}

/* also counts the sentinel runs into counters[3] (zeroed before): after the
 * segmented first level they are not only at the end */
__global__ void k_task_cnt(const uint32_t *run_keys, const uint32_t *run_cnt, uint32_t *counters,
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
 * runs, [4] pairs with a real key (the sorted keys before the sentinels) */
__global__ void k_task_total(const uint32_t *run_keys, const uint32_t *run_cnt, const uint32_t *run_start,
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
__global__ void __launch_bounds__(128) k_acc_aff(const uint32_t *vals, const aff_t<F> *bases, const uint32_t *run_keys,
                                                 const uint32_t *run_cnt, const uint32_t *run_start,
                                                 const uint32_t *task_off, const uint32_t *counters, uint32_t L,
                                                 uint32_t *out_keys, xyzz_t<F> *out)
{
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= counters[1])
        return;
    uint32_t r = find_run(task_off, counters[0], t);
    uint32_t st = run_start[r] + (t - task_off[r]) * L;
    uint32_t end = run_start[r] + run_cnt[r];
    if (end - st > L)
        end = st + L;
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    for (uint32_t e = st; e < end; e++) {
        uint32_t v = vals[e];
        aff_t<F> p = ld_global(bases + (v >> 1));
        if (aff_is_inf(p))
            continue;
        if (v & 1)
            neg(p.y, p.y);
        if constexpr (sizeof(F) == sizeof(fp_t))
            xyzz_add_aff_impl(acc, p);
        else
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
__global__ void __launch_bounds__(128, MINB) k_acc_seg(const uint32_t *keys, const uint32_t *vals, const aff_t<F> *bases,
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
        pn = ld_global(bases + (vn >> 1));
    for (uint32_t e = s; e < e_end; e++) {
        const uint32_t key = keys[e], v = vn;
        aff_t<F> p;
        if (PF) {
            p = pn;
            if (e + 1 < e_end) {
                vn = vals[e + 1];
                pn = ld_global(bases + (vn >> 1));
            }
        } else {
            p = ld_global(bases + (v >> 1));
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
        xyzz_add_aff_impl(acc, p);
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
template <int MINB, int KARA, bool PF, int BS = 128>
__global__ void __launch_bounds__(BS, MINB)
    k_acc_seg_g2p(const uint32_t *keys, const uint32_t *vals, const aff_t<fp2_t> *bases, const uint32_t *run_start,
                  const uint32_t *counters, uint32_t T, uint32_t *out_keys, xyzz_t<fp2_t> *out)
{
    uint32_t s, e_end, idx;
    if (!seg_slice((blockIdx.x * blockDim.x + threadIdx.x) >> 1, T, run_start, counters, s, e_end, idx))
        return;
    const p2ctx k = p2_ctx();
    uint32_t cur = keys[s];
    xyzz_t<fp_t> acc;
    xyzz_set_inf(acc);
    uint32_t vn = vals[s];
    aff_t<fp_t> pn;
    if (PF)
        pn = p2_ld_aff(k, bases, vn >> 1);
    for (uint32_t e = s; e < e_end; e++) {
        const uint32_t key = keys[e], v = vn;
        aff_t<fp_t> p;
        if (PF) {
            p = pn;
            if (e + 1 < e_end) {
                vn = vals[e + 1];
                pn = p2_ld_aff(k, bases, vn >> 1);
            }
        } else {
            p = p2_ld_aff(k, bases, v >> 1);
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
template <int MINB>
__global__ void __launch_bounds__(128, MINB)
    k_acc_aff_g2p(const uint32_t *vals, const aff_t<fp2_t> *bases, const uint32_t *run_keys, const uint32_t *run_cnt,
                  const uint32_t *run_start, const uint32_t *task_off, const uint32_t *counters, uint32_t L,
                  uint32_t *out_keys, xyzz_t<fp2_t> *out)
{
    uint32_t gt = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t t = gt >> 1;
    if (t >= counters[1]) /* both lanes of a pair leave together */
        return;
    const p2ctx k = p2_ctx();
    uint32_t r = find_run(task_off, counters[0], t);
    uint32_t st = run_start[r] + (t - task_off[r]) * L;
    uint32_t end = run_start[r] + run_cnt[r];
    if (end - st > L)
        end = st + L;
    xyzz_t<fp_t> acc;
    xyzz_set_inf(acc);
    for (uint32_t e = st; e < end; e++) {
        uint32_t v = vals[e];
        aff_t<fp_t> p = p2_ld_aff(k, bases, v >> 1);
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
    uint32_t r = find_run(task_off, counters[0], t);
    uint32_t st = run_start[r] + (t - task_off[r]) * L;
    uint32_t end = run_start[r] + run_cnt[r];
    if (end - st > L)
        end = st + L;
    xyzz_t<F> acc = ld_global(in + st);
    for (uint32_t e = st + 1; e < end; e++)
        xyzz_add(acc, ld_global(in + e));
    out_keys[t] = run_keys[r];
    st_global(out + t, acc);
}

template <class F>
__global__ void k_scatter(const uint32_t *keys, const xyzz_t<F> *pts, const uint32_t *counters, xyzz_t<F> *dense)
{
    uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= counters[1])
        return;
    st_global(dense + keys[t], ld_global(pts + t));
}

template <class F>
__global__ void __launch_bounds__(128) k_bucket_seg(const xyzz_t<F> *dense, unsigned nb, unsigned seg, unsigned nseg,
                                                    unsigned nwin, xyzz_t<F> *wsum)
{
    uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= nwin * nseg)
        return;
    uint32_t w = g / nseg, sg = g % nseg;
    const xyzz_t<F> *B = dense + (size_t)w * nb + (size_t)sg * seg;
    xyzz_t<F> S, T, M;
    xyzz_set_inf(S);
    xyzz_set_inf(T);
    for (int b = (int)seg - 1; b >= 0; b--) {
        xyzz_add(S, ld_global(B + b));
        xyzz_add(T, S);
    }
    /* T += (sg*seg) * S */
    uint32_t k = sg * seg;
    xyzz_set_inf(M);
    for (int bit = 31; bit >= 0; bit--) {
        xyzz_dbl(M);
        if ((k >> bit) & 1)
            xyzz_add(M, S);
    }
    xyzz_add(T, M);
    st_global(wsum + g, T);
}

template <class F> __global__ void k_group_sum(const xyzz_t<F> *in, uint32_t m_out, unsigned G, xyzz_t<F> *out)
{
    uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= m_out)
        return;
    xyzz_t<F> acc = ld_global(in + (size_t)g * G);
    for (unsigned i = 1; i < G; i++)
        xyzz_add(acc, ld_global(in + (size_t)g * G + i));
    st_global(out + g, acc);
}

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

/* ---- workspace ---- */

int czk_cuda_msm_init_(czk_cuda_ctx *ctx)
{
    struct czk_msm_ws *ws = &ctx->msm;
    size_t nmax = ctx->max_msm_n ? ctx->max_msm_n : 1;
    /* within an octave the plan is fixed and pairs grow with n: the maximum is at the
     * top of each octave (or at nmax) */
    size_t cap_pairs = 0, cap_buckets = 0, cap_wsum = 0;
    for (unsigned k = 1; k <= bitlen(nmax); k++) {
        size_t top = ((size_t)1 << k) - 1;
        if (top > nmax)
            top = nmax;
        for (int g2 = 0; g2 <= ctx->enable_g2; g2++) {
            msm_plan p = plan_for(top, g2);
            if (p.pairs > cap_pairs)
                cap_pairs = p.pairs;
            if (p.nbuckets > cap_buckets)
                cap_buckets = p.nbuckets;
            size_t ws_n = (size_t)p.nwin * (p.nb / seg_for(ctx, p));
            if (ws_n > cap_wsum)
                cap_wsum = ws_n;
        }
    }
    if (cap_pairs >= ((size_t)1 << 31) || (nmax << 1) >= ((size_t)1 << 32))
        return czk_cuda_errf_(-EINVAL, "max_msm_n %zu too large for 32-bit sort keys (%zu pairs)", nmax, cap_pairs);
    ws->cap_pairs = cap_pairs;
    ws->cap_buckets = cap_buckets;
    ws->cap_parts = cap_buckets + 1 + task_target(ctx) + 64;
    ws->cap_wsum = cap_wsum;
    ws->pt_bytes = ctx->enable_g2 ? sizeof(xyzz_t<fp2_t>) : sizeof(xyzz_t<fp_t>);
    /* runs of a level's input: at most cap_buckets + 1 at level 0, at most
     * cap_parts (one per slot) after the segmented level 0 */
    size_t cap_runs = ws->cap_parts + 2;
    for (int i = 0; i < 2; i++) {
        CZK_CU(cudaMalloc((void **)&ws->keys[i], cap_pairs * 4));
        CZK_CU(cudaMalloc((void **)&ws->vals[i], cap_pairs * 4));
        CZK_CU(cudaMalloc((void **)&ws->lvl_keys[i], ws->cap_parts * 4));
        CZK_CU(cudaMalloc(&ws->parts[i], ws->cap_parts * ws->pt_bytes));
    }
    CZK_CU(cudaMalloc((void **)&ws->run_keys, cap_runs * 4));
    CZK_CU(cudaMalloc((void **)&ws->run_cnt, cap_runs * 4));
    CZK_CU(cudaMalloc((void **)&ws->run_start, cap_runs * 4));
    CZK_CU(cudaMalloc((void **)&ws->task_off, cap_runs * 4));
    CZK_CU(cudaMalloc((void **)&ws->tcnt, cap_runs * 4));
    CZK_CU(cudaMalloc(&ws->buckets, cap_buckets * ws->pt_bytes));
    CZK_CU(cudaMalloc(&ws->wsum, 2 * cap_wsum * ws->pt_bytes));
    CZK_CU(cudaMalloc((void **)&ws->counters, 8 * sizeof(uint32_t)));
    CZK_CU(cudaMalloc(&ws->result, 64 * sizeof(jac_t<fp2_t>)));
    CZK_CU(cudaMallocHost(&ws->host_result, 64 * sizeof(jac_t<fp2_t>)));
    CZK_CU(cudaMallocHost((void **)&ws->host_counters, 8 * sizeof(uint32_t)));
    /* CUB scratch: the largest of the three primitives at full capacity */
    size_t b1 = 0, b2 = 0, b3 = 0;
    CZK_CU(cub::DeviceRadixSort::SortPairs(nullptr, b1, ws->keys[0], ws->keys[1], ws->vals[0], ws->vals[1],
                                           (int)cap_pairs, 0, 32, ctx->st[0]));
    CZK_CU(cub::DeviceRunLengthEncode::Encode(nullptr, b2, ws->keys[1], ws->run_keys, ws->run_cnt, ws->counters,
                                              (int)(cap_pairs > ws->cap_parts ? cap_pairs : ws->cap_parts),
                                              ctx->st[0]));
    CZK_CU(cub::DeviceScan::ExclusiveSum(nullptr, b3, ws->run_cnt, ws->run_start, (int)cap_runs, ctx->st[0]));
    ws->cub_bytes = b1 > b2 ? b1 : b2;
    if (b3 > ws->cub_bytes)
        ws->cub_bytes = b3;
    CZK_CU(cudaMalloc(&ws->cub_tmp, ws->cub_bytes));
    return 0;
}

void czk_cuda_msm_free_(czk_cuda_ctx *ctx)
{
    struct czk_msm_ws *ws = &ctx->msm;
    for (int i = 0; i < 2; i++) {
        cudaFree(ws->keys[i]);
        cudaFree(ws->vals[i]);
        cudaFree(ws->lvl_keys[i]);
        cudaFree(ws->parts[i]);
    }
    cudaFree(ws->run_keys);
    cudaFree(ws->run_cnt);
    cudaFree(ws->run_start);
    cudaFree(ws->task_off);
    cudaFree(ws->tcnt);
    cudaFree(ws->buckets);
    cudaFree(ws->wsum);
    cudaFree(ws->counters);
    cudaFree(ws->result);
    cudaFree(ws->cub_tmp);
    if (ws->host_counters)
        cudaFreeHost(ws->host_counters);
    if (ws->host_result)
        cudaFreeHost(ws->host_result);
    cudaGetLastError();
}

/* ---- the MSM ---- */

/* Horner over the windows on the host: c doublings per window are a long
 * serial chain, which one CPU core runs several times faster than one GPU
 * thread (about 260 G1 doublings: ~0.3 ms instead of ~3 ms). */
static void horner_g1(czk_g1 *r, const czk_g1 *W, unsigned nwin, unsigned c)
{
    *r = W[nwin - 1];
    for (int w = (int)nwin - 2; w >= 0; w--) {
        for (unsigned i = 0; i < c; i++)
            czk_g1_dbl(r, r);
        czk_g1_add(r, r, &W[w]);
    }
}
static void horner_g2(czk_g2 *r, const czk_g2 *W, unsigned nwin, unsigned c)
{
    *r = W[nwin - 1];
    for (int w = (int)nwin - 2; w >= 0; w--) {
        for (unsigned i = 0; i < c; i++)
            czk_g2_dbl(r, r);
        czk_g2_add(r, r, &W[w]);
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

static inline unsigned grid_for(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

template <class F>
static int msm_run(czk_cuda_ctx *ctx, const czk_cuda_bases *b, size_t base_off, int sbuf, size_t soff, size_t n,
                   void *host_out)
{
    struct czk_msm_ws *ws = &ctx->msm;
    const int g2 = sizeof(F) == sizeof(fp2_t);
    if (b->g2 != g2)
        return czk_cuda_errf_(-EINVAL, "msm: %s bases passed to the %s msm", b->g2 ? "G2" : "G1", g2 ? "G2" : "G1");
    if (base_off > b->n || n > b->n - base_off)
        return czk_cuda_errf_(-EINVAL, "msm: %zu terms at base offset %zu, only %zu bases", n, base_off, b->n);
    if (sbuf < 0 || sbuf > 3 || soff > ctx->buf_len[sbuf] || n > ctx->buf_len[sbuf] - soff)
        return czk_cuda_errf_(-EINVAL, "msm: %zu scalars at offset %zu of buffer %d out of range", n, soff, sbuf);
    if (g2 && !ctx->enable_g2)
        return czk_cuda_errf_(-EINVAL, "msm: context created without G2 support");
    if (n > ctx->max_msm_n)
        return czk_cuda_errf_(-ENOMEM, "msm: %zu terms, context sized for %zu", n, ctx->max_msm_n);
    CZK_CU(cudaSetDevice(ctx->device));
    cudaStream_t s = ctx->st[0];
    jac_t<F> *res = (jac_t<F> *)ws->result;
    static const int prof = getenv("CZK_CUDA_MSM_PROFILE") != NULL;
    /* G2 level-0 kernel: lane pairs with 2 (default), 3 or 4 blocks per SM, or
     * 0 for the one-thread-per-task kernel (CZK_CUDA_MSM_G2P, for comparisons) */
    static const unsigned g2p = env_uint("CZK_CUDA_MSM_G2P", 2);
    /* segmented G2 level 0 (CZK_CUDA_MSM_G2K): 0 = schoolbook pair products (CZK_CUDA_MSM_G2P blocks
     * of 128 per SM), 1 = Karatsuba pairs (the default; 2 blocks of 128 per SM, or 3 with G2P=3),
     * 2 = 1 with the next base prefetched, 3 = 1 in 3 blocks of 96 (9 warps per SM), 4 = 1 in 5 blocks
     * of 64 (10 warps), 5 = 1 with lazily reduced Fp2 products (the default; 2 blocks of 128 per SM, or
     * 3 with G2P=3) */
    static const unsigned g2k = env_uint("CZK_CUDA_MSM_G2K", 5);
    double t_prev = prof ? prof_ms() : 0;
    if (n == 0) {
        if (g2)
            czk_g2_set_inf((czk_g2 *)host_out);
        else
            czk_g1_set_inf((czk_g1 *)host_out);
        return 0;
    }
    msm_plan p = plan_for(n, g2);
    if (p.nwin > 64)
        return czk_cuda_errf_(-EINVAL, "msm: %u windows, at most 64", p.nwin);
    if (p.pairs > ws->cap_pairs || p.nbuckets > ws->cap_buckets)
        return czk_cuda_errf_(-ENOMEM, "msm: plan for %zu terms exceeds the workspace", n);
    /* scalars: wait for their upload and for any compute that produced them */
    CZK_CU(cudaStreamWaitEvent(s, ctx->buf_ready[sbuf], 0));
    for (int i = 1; i < CZK_CUDA_NSTREAMS; i++) {
        CZK_CU(cudaEventRecord(ctx->done[i], ctx->st[i]));
        CZK_CU(cudaStreamWaitEvent(s, ctx->done[i], 0));
    }
    const aff_t<F> *bases = (const aff_t<F> *)b->pts + base_off;
    k_digits<<<grid_for(n, 256), 256, 0, s>>>(ctx->buf[sbuf] + soff, (uint32_t)n, p.c, p.nwin, ws->keys[0],
                                              ws->vals[0]);
    CZK_CU_LAUNCH("k_digits");
    PHASE("digits");
    size_t tmp = ws->cub_bytes;
    CZK_CU(cub::DeviceRadixSort::SortPairs(ws->cub_tmp, tmp, ws->keys[0], ws->keys[1], ws->vals[0], ws->vals[1],
                                           (int)p.pairs, 0, (int)p.key_bits, s));
    PHASE("sort");
    /* levels of bucket sums until every bucket has one sum */
    const uint32_t *in_keys = ws->keys[1];
    size_t m = p.pairs;
    int cur = 0, level = 0;
    uint32_t *hc = ws->host_counters;
    const size_t cap_runs = ws->cap_parts + 2;
    /* level 0: CZK_CUDA_MSM_SEG (comparisons) picks the G1 kernel: 2 =
     * segmented with the next base prefetched (k_acc_seg, the default), 1 =
     * segmented without the prefetch, 3 and 4 = 1 and 2 with registers capped
     * for 4 blocks per SM, 5 = 2 capped for 3 blocks, 0 = one task per bucket
     * piece (k_acc_aff); any nonzero value makes G2 use k_acc_seg_g2p.  CZK_CUDA_MSM_SEGW: waves of resident
     * threads for the segmented kernel (default 1). */
    static const unsigned segmode = env_uint("CZK_CUDA_MSM_SEG", 2);
    static const unsigned segw = env_uint("CZK_CUDA_MSM_SEGW", 1);
    for (;;) {
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
        CZK_CU_LAUNCH("k_task_cnt");
        tmp = ws->cub_bytes;
        CZK_CU(cub::DeviceScan::ExclusiveSum(ws->cub_tmp, tmp, ws->tcnt, ws->task_off, (int)m_scan, s));
        tmp = ws->cub_bytes;
        CZK_CU(cub::DeviceScan::ExclusiveSum(ws->cub_tmp, tmp, ws->run_cnt, ws->run_start, (int)m_scan, s));
        k_task_total<<<1, 1, 0, s>>>(ws->run_keys, ws->run_cnt, ws->run_start, ws->tcnt, ws->task_off,
                                     ws->counters);
        CZK_CU_LAUNCH("k_task_total");
        CZK_CU(cudaMemcpyAsync(hc, ws->counters, 5 * sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
        CZK_CU(cudaStreamSynchronize(s));
        uint32_t tasks = hc[1], real_runs = hc[2];
        if (tasks > ws->cap_parts)
            return czk_cuda_errf_(-ENOMEM, "msm: %u tasks at level %d exceed %zu", tasks, level, ws->cap_parts);
        xyzz_t<F> *out = (xyzz_t<F> *)ws->parts[cur];
        if (level == 0 && segmode && hc[4] > 0 && (!g2 || g2p)) {
            /* segmented level 0: T slices (whole waves of resident blocks, at
             * least 64 pairs each), T + R output slots */
            const void *kern;
            unsigned lanes = 1, bs = 128;
            if (!g2)
                kern = segmode == 1   ? (const void *)k_acc_seg<fp_t, false, 0>
                       : segmode == 3 ? (const void *)k_acc_seg<fp_t, false, 4>
                       : segmode == 4 ? (const void *)k_acc_seg<fp_t, true, 4>
                       : segmode == 5 ? (const void *)k_acc_seg<fp_t, true, 3>
                                      : (const void *)k_acc_seg<fp_t, true, 0>;
            else {
                kern = g2k == 5   ? (g2p == 3 ? (const void *)k_acc_seg_g2p<3, 2, false>
                                              : (const void *)k_acc_seg_g2p<2, 2, false>)
                       : g2k == 2 ? (const void *)k_acc_seg_g2p<2, 1, true>
                       : g2k == 3 ? (const void *)k_acc_seg_g2p<3, 1, false, 96>
                       : g2k == 4 ? (const void *)k_acc_seg_g2p<5, 1, false, 64>
                       : g2k      ? (g2p == 3 ? (const void *)k_acc_seg_g2p<3, 1, false>
                                              : (const void *)k_acc_seg_g2p<2, 1, false>)
                       : g2p == 2 ? (const void *)k_acc_seg_g2p<2, 0, false>
                       : g2p == 4 ? (const void *)k_acc_seg_g2p<4, 0, false>
                                  : (const void *)k_acc_seg_g2p<3, 0, false>;
                lanes = 2;
                bs = g2k == 3 ? 96 : g2k == 4 ? 64 : 128;
            }
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
            const void *bp = bases;
            void *op = out;
            void *args[] = {(void *)&in_keys, (void *)&vals1, (void *)&bp, (void *)&rs, (void *)&cn,
                            (void *)&T32, (void *)&ok, (void *)&op};
            CZK_CU(cudaLaunchKernel(kern, dim3(grid_for(T * lanes, bs)), dim3(bs), args, 0, s));
            CZK_CU_LAUNCH("k_acc_seg");
            PHASE("level0seg");
            in_keys = ws->lvl_keys[cur];
            m = slots;
            cur = 1 - cur;
            level++;
            continue;
        }
        if (tasks) {
            if (level == 0 && g2 && g2p) {
                const aff_t<fp2_t> *b2 = (const aff_t<fp2_t> *)bases;
                xyzz_t<fp2_t> *o2 = (xyzz_t<fp2_t> *)out;
                unsigned gr = grid_for((size_t)tasks * 2, 128);
                if (g2p == 2)
                    k_acc_aff_g2p<2><<<gr, 128, 0, s>>>(ws->vals[1], b2, ws->run_keys, ws->run_cnt, ws->run_start,
                                                        ws->task_off, ws->counters, L, ws->lvl_keys[cur], o2);
                else if (g2p == 4)
                    k_acc_aff_g2p<4><<<gr, 128, 0, s>>>(ws->vals[1], b2, ws->run_keys, ws->run_cnt, ws->run_start,
                                                        ws->task_off, ws->counters, L, ws->lvl_keys[cur], o2);
                else
                    k_acc_aff_g2p<3><<<gr, 128, 0, s>>>(ws->vals[1], b2, ws->run_keys, ws->run_cnt, ws->run_start,
                                                        ws->task_off, ws->counters, L, ws->lvl_keys[cur], o2);
            } else if (level == 0)
                k_acc_aff<F><<<grid_for(tasks, 128), 128, 0, s>>>(ws->vals[1], bases, ws->run_keys, ws->run_cnt,
                                                                  ws->run_start, ws->task_off, ws->counters, L,
                                                                  ws->lvl_keys[cur], out);
            else
                k_acc_xyzz<F><<<grid_for(tasks, 128), 128, 0, s>>>((const xyzz_t<F> *)ws->parts[1 - cur],
                                                                   ws->run_keys, ws->run_cnt, ws->run_start,
                                                                   ws->task_off, ws->counters, L, ws->lvl_keys[cur],
                                                                   out);
            CZK_CU_LAUNCH("k_acc");
        }
        PHASE(level == 0 ? "level0" : "level>0");
        if (tasks == real_runs) {
            CZK_CU(cudaMemsetAsync(ws->buckets, 0, p.nbuckets * sizeof(xyzz_t<F>), s));
            if (tasks) {
                k_scatter<F><<<grid_for(tasks, 256), 256, 0, s>>>(ws->lvl_keys[cur], out, ws->counters,
                                                                  (xyzz_t<F> *)ws->buckets);
                CZK_CU_LAUNCH("k_scatter");
            }
            break;
        }
        in_keys = ws->lvl_keys[cur];
        m = tasks;
        cur = 1 - cur;
        level++;
    }
    /* window sums */
    unsigned seg = seg_for(ctx, p), nseg = p.nb / seg;
    xyzz_t<F> *w0 = (xyzz_t<F> *)ws->wsum, *w1 = w0 + ws->cap_wsum;
    k_bucket_seg<F><<<grid_for((size_t)p.nwin * nseg, 128), 128, 0, s>>>((const xyzz_t<F> *)ws->buckets, p.nb, seg,
                                                                         nseg, p.nwin, w0);
    CZK_CU_LAUNCH("k_bucket_seg");
    PHASE("bucket_seg");
    unsigned cur_n = nseg;
    while (cur_n > 1) {
        /* groups of 8: a shallower chain per thread than 32 (more levels, but
         * each a quarter as long; the chain of serial additions is what costs) */
        unsigned G = cur_n < 8 ? cur_n : 8;
        unsigned next = cur_n / G;
        uint32_t m_out = p.nwin * next;
        k_group_sum<F><<<grid_for(m_out, 128), 128, 0, s>>>(w0, m_out, G, w1);
        CZK_CU_LAUNCH("k_group_sum");
        xyzz_t<F> *t = w0;
        w0 = w1;
        w1 = t;
        cur_n = next;
    }
    PHASE("group_sum");
    k_to_jac<F><<<1, 64, 0, s>>>(w0, p.nwin, res);
    CZK_CU_LAUNCH("k_to_jac");
    CZK_CU(cudaMemcpyAsync(ws->host_result, res, p.nwin * sizeof(jac_t<F>), cudaMemcpyDeviceToHost, s));
    CZK_CU(cudaStreamSynchronize(s));
    if (g2)
        horner_g2((czk_g2 *)host_out, (const czk_g2 *)ws->host_result, p.nwin, p.c);
    else
        horner_g1((czk_g1 *)host_out, (const czk_g1 *)ws->host_result, p.nwin, p.c);
    PHASE("final");
    return 0;
}

template <class F>
static int bases_upload(czk_cuda_ctx *ctx, czk_cuda_bases **out, const void *pts, size_t n, int g2)
{
    *out = NULL;
    czk_cuda_bases *b = (czk_cuda_bases *)calloc(1, sizeof *b);
    if (!b)
        return -ENOMEM;
    b->ctx = ctx;
    b->g2 = g2;
    b->n = n;
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e == cudaSuccess)
        e = cudaMalloc(&b->pts, (n ? n : 1) * sizeof(aff_t<F>));
    if (e == cudaSuccess && n)
        e = cudaMemcpyAsync(b->pts, pts, n * sizeof(aff_t<F>), cudaMemcpyHostToDevice, ctx->copy);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(ctx->copy);
    if (e != cudaSuccess) {
        int rc = czk_cuda_fail_("upload of msm bases", __FILE__, __LINE__, e);
        cudaFree(b->pts);
        free(b);
        return rc;
    }
    *out = b;
    return 0;
}

extern "C" int czk_cuda_bases_upload_g1(czk_cuda_ctx *ctx, czk_cuda_bases **b, const czk_g1_aff *pts, size_t n)
{
    return bases_upload<fp_t>(ctx, b, pts, n, 0);
}
extern "C" int czk_cuda_bases_upload_g2(czk_cuda_ctx *ctx, czk_cuda_bases **b, const czk_g2_aff *pts, size_t n)
{
    return bases_upload<fp2_t>(ctx, b, pts, n, 1);
}
extern "C" int czk_cuda_bases_place(czk_cuda_ctx *ctx, czk_cuda_bases **out, void *dev, const void *pts, size_t n,
                                    int g2)
{
    *out = NULL;
    czk_cuda_bases *b = (czk_cuda_bases *)calloc(1, sizeof *b);
    if (!b)
        return -ENOMEM;
    b->ctx = ctx;
    b->g2 = g2;
    b->borrowed = 1;
    b->n = n;
    b->pts = dev;
    if (pts && n) {
        size_t bytes = n * (g2 ? sizeof(aff_t<fp2_t>) : sizeof(aff_t<fp_t>));
        cudaError_t e = cudaSetDevice(ctx->device);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(dev, pts, bytes, cudaMemcpyHostToDevice, ctx->copy);
        if (e == cudaSuccess)
            e = cudaStreamSynchronize(ctx->copy);
        if (e != cudaSuccess) {
            free(b);
            return czk_cuda_fail_("upload of msm bases into given device memory", __FILE__, __LINE__, e);
        }
    }
    *out = b;
    return 0;
}

extern "C" void czk_cuda_bases_free(czk_cuda_bases *b)
{
    if (!b)
        return;
    if (!b->borrowed && cudaSetDevice(b->ctx->device) == cudaSuccess)
        cudaFree(b->pts);
    cudaGetLastError();
    free(b);
}
extern "C" size_t czk_cuda_bases_len(const czk_cuda_bases *b) { return b->n; }

extern "C" int czk_cuda_msm_g1(czk_cuda_ctx *ctx, const czk_cuda_bases *b, size_t base_off, int scalar_buf,
                               size_t scalar_off, size_t n, czk_g1 *r)
{
    static_assert(sizeof(czk_g1) == sizeof(jac_t<fp_t>), "G1 Jacobian layout");
    return msm_run<fp_t>(ctx, b, base_off, scalar_buf, scalar_off, n, r);
}
extern "C" int czk_cuda_msm_g2(czk_cuda_ctx *ctx, const czk_cuda_bases *b, size_t base_off, int scalar_buf,
                               size_t scalar_off, size_t n, czk_g2 *r)
{
    static_assert(sizeof(czk_g2) == sizeof(jac_t<fp2_t>), "G2 Jacobian layout");
    return msm_run<fp2_t>(ctx, b, base_off, scalar_buf, scalar_off, n, r);
}
extern "C" int czk_cuda_msm_g1_host(czk_cuda_ctx *ctx, const czk_cuda_bases *b, const czk_fr *scalars, size_t n,
                                    czk_g1 *r)
{
    int rc = czk_cuda_upload_async(ctx, CZK_CUDA_BUF_W, 0, scalars, n, NULL, NULL);
    return rc ? rc : czk_cuda_msm_g1(ctx, b, 0, CZK_CUDA_BUF_W, 0, n, r);
}
extern "C" int czk_cuda_msm_g2_host(czk_cuda_ctx *ctx, const czk_cuda_bases *b, const czk_fr *scalars, size_t n,
                                    czk_g2 *r)
{
    int rc = czk_cuda_upload_async(ctx, CZK_CUDA_BUF_W, 0, scalars, n, NULL, NULL);
    return rc ? rc : czk_cuda_msm_g2(ctx, b, 0, CZK_CUDA_BUF_W, 0, n, r);
}
