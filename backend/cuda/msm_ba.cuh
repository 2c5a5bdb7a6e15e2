/*
 * msm_ba.cuh — batch-affine bucket sums for the Pippenger MSM (msm_kernels.cuh).
 *
 * Input: the sorted (key, value) pairs of msm_run's step 2.  Output: the dense
 * XYZZ bucket array, every bucket the sum of its points (infinity where none).
 *
 * The pairs are taken in chunks (as many as the workspace's scratch holds:
 * ba_init, ba_chunk).  In a chunk, each bucket's run of points is summed as a
 * binary tree, one level at a time: a level replaces every run of k points by
 * ceil(k/2), point 2j + 1 added to point 2j, the last one copied when k is
 * odd.  Every addition of a level is independent, so all of them share one
 * inversion (Montgomery's trick across the whole level), and each costs an
 * affine addition: the slope λ = (y2 − y1)/(x2 − x1), x3 = λ² − x1 − x2,
 * y3 = λ(x1 − x3) − y1, i.e. 3 products, plus 3 for the shared inversion
 * (6 against the 8 products and 2 squarings of a mixed XYZZ addition).
 *
 * A level is three steps:
 *   k_ba_pre   thread t of T takes outputs t, t + T, ... (K of them, so a
 *              warp touches consecutive outputs), records each one's operand
 *              codes (OPS), computes its denominator d (x2 − x1; 2 y1 for a
 *              doubling; 1 for a copy, an infinity operand or P + (−P)) and
 *              stores the running product of its d's (P[o]) and the whole
 *              product (TP[t]) (G2: lane pair t, k_ba_pre_p2);
 *   batch_inv  TP[0..T) inverted in place, by the same trick in a tree of
 *              chunks (binv_k: up to BINV_K elements at the wide steps, pairs
 *              near the top), its last ~1000 elements in one block
 *              (k_binv_top: pairs in shared memory) around the level's one
 *              inversion (inv_vt);
 *   k_ba_add   thread t walks its outputs backwards: 1/d_o = 1/P[o] · P[o−T],
 *              1/P[o−T] = 1/P[o] · d_o, and writes the sum (G2: lane pair t,
 *              k_ba_add_p2, each lane one component of every Fp2 value).
 * The first level reads the points through the sorted values from the bases
 * (sign bit: negate y); later levels read the previous level's output.
 * Infinity is the all-zero affine point (not on either curve).  The denominator
 * is never zero: a d that would be (x1 = x2 with y1 ≠ y2, or y1 = 0 for a
 * doubling) means the sum is infinity and d = 1 is used instead, so one bad
 * pair cannot spoil the level's shared inversion.
 * Each level costs about one single-thread inversion on top of its additions,
 * so once a level would add fewer than CZK_CUDA_MSM_BA_STOP thousand pairs
 * (most runs are down to one point) the levels stop, and k_ba_finish sums
 * what is left of each run in XYZZ and writes it into its bucket; the first
 * run of a chunk that continues the previous chunk's last bucket is added to
 * it instead.
 * Not constant time (neither is the rest of the MSM): the work depends on
 * how the digits fall into buckets.
 */
#ifndef CZK_CUDA_MSM_BA_CUH
#define CZK_CUDA_MSM_BA_CUH

#include "backend/cuda/msm_ba_kernels.cuh"

/* G2's kernel choices (benchmarks; read once per process):
 * CZK_CUDA_MSM_P2_LAZY=0 makes k_ba_add_p2 use p2_mul for its two dependent
 * products instead of p2_mul_lz, CZK_CUDA_MSM_BA_PRE2=0 runs G2's k_ba_pre on
 * one thread per walker instead of k_ba_pre_p2 on lane pairs */
static bool ba_p2_lazy(void)
{
    static const bool on = env_uint("CZK_CUDA_MSM_P2_LAZY", 1) != 0;
    return on;
}
static bool ba_pre2(void)
{
    static const bool on = env_uint("CZK_CUDA_MSM_BA_PRE2", 1) != 0;
    return on;
}

/* k_ba_pre's launch: G1 one walker per thread, G2 on lane pairs */
template <bool GATHER, class F>
static void ba_pre_launch(const base_src<aff_t<F>> &src, const uint32_t *vals, const ba_lvl &L, uint32_t K, uint32_t T, F *P,
                          F *TP, uint2 *OPS, cudaStream_t s)
{
    k_ba_pre<F, GATHER><<<grid_for(T, 128), 128, 0, s>>>(src, vals, L, K, T, P, TP, OPS);
}
template <bool GATHER, class B>
static void ba_pre_launch(const base_src<aff_t<fp2x<B>>> &src, const uint32_t *vals, const ba_lvl &L, uint32_t K, uint32_t T,
                          fp2x<B> *P, fp2x<B> *TP, uint2 *OPS, cudaStream_t s)
{
    if (ba_pre2())
        k_ba_pre_p2<B, GATHER><<<grid_for(2 * (size_t)T, 128), 128, 0, s>>>(src, vals, L, K, T, P, TP, OPS);
    else
        k_ba_pre<fp2x<B>, GATHER><<<grid_for(T, 128), 128, 0, s>>>(src, vals, L, K, T, P, TP, OPS);
}

/* k_ba_add's launch: G1 one output per thread, G2 on lane pairs */
template <class F>
static void ba_add_launch(const base_src<aff_t<F>> &src, const ba_lvl &L, uint32_t K, uint32_t T, const F *P, const F *TP,
                          const uint2 *OPS, aff_t<F> *dst, cudaStream_t s)
{
    k_ba_add<F><<<grid_for(T, 128), 128, 0, s>>>(src, L, K, T, P, TP, OPS, dst);
}
template <class B>
static void ba_add_launch(const base_src<aff_t<fp2x<B>>> &src, const ba_lvl &L, uint32_t K, uint32_t T, const fp2x<B> *P,
                          const fp2x<B> *TP, const uint2 *OPS, aff_t<fp2x<B>> *dst, cudaStream_t s)
{
    if (ba_p2_lazy())
        k_ba_add_p2<B, true><<<grid_for(2 * (size_t)T, 128), 128, 0, s>>>(src, L, K, T, P, TP, OPS, dst);
    else
        k_ba_add_p2<B, false><<<grid_for(2 * (size_t)T, 128), 128, 0, s>>>(src, L, K, T, P, TP, OPS, dst);
}

/* ---- the shared inversion (k_binv_*) ---- */

/* the inversion at the tree's top by inv_vt (default; CZK_CUDA_MSM_BA_INV=0:
 * by Fermat's inv); CZK_CUDA_MSM_BINV_FIXED=1: BINV_K elements per thread at
 * every step of the tree (binv_k); CZK_CUDA_MSM_BINV_TOP=0: the tree's steps
 * all in kernels of their own down to one element (else the last
 * binv_top<F>::n in one block, k_binv_top) */
static bool ba_inv_vt(void)
{
    static const bool on = env_uint("CZK_CUDA_MSM_BA_INV", 1) != 0;
    return on;
}
static bool ba_binv_fixed(void)
{
    static const bool on = env_uint("CZK_CUDA_MSM_BINV_FIXED", 0) != 0;
    return on;
}
static bool ba_binv_top(void)
{
    static const bool on = env_uint("CZK_CUDA_MSM_BINV_TOP", 1) != 0;
    return on;
}

template <class F> static void batch_inv(F *x, uint32_t n, F *scr, cudaStream_t s)
{
    if (n == 1 || (ba_binv_top() && n <= binv_top<F>::n)) {
        k_binv_top<F><<<1, BINV_TOP_THREADS, 0, s>>>(x, n, ba_inv_vt());
        return;
    }
    const uint32_t K = binv_k(n, ba_binv_fixed()), up = (n + K - 1) / K;
    F *pre = scr, *u = scr + n;
    k_binv_up<F><<<grid_for(up, 128), 128, 0, s>>>(x, n, K, pre, u);
    batch_inv<F>(u, up, u + up, s);
    k_binv_down<F><<<grid_for(up, 128), 128, 0, s>>>(x, n, K, pre, u);
}

/* ---- the driver ---- */

/* outputs per thread of a level (CZK_CUDA_MSM_BA_K, benchmarks; read once) */
static unsigned ba_k(void)
{
    static const unsigned K = env_uint("CZK_CUDA_MSM_BA_K", 64);
    return K ? K : 64;
}

/* the scratch of ws (init): one chunk of each MSM shape the context can run
 * (sh: its plain and full-table plans, G1 and G2, per curve), capped at
 * CZK_CUDA_MSM_BA_MB MiB (default CZK_CUDA_MSM_BA_MB_DEFAULT) and at a
 * quarter of the device memory free; under the cap, the least that splits
 * every shape into as few chunks as the cap would (ba_even: what the cap
 * holds beyond that is device memory for keys and tables, about 5 GiB at
 * 2^24 with G2); halved while the device cannot give it (to 1/16); without
 * it (or with CZK_CUDA_MSM_BA=0) every MSM runs the XYZZ first level
 * (ba_init and ba_free are inline: only msm.cu's context calls them, and
 * bn254_msm.cu includes this header too) */
#define CZK_CUDA_MSM_BA_MB_DEFAULT 24576u
struct ba_shape {
    size_t pairs, nb, fb; /* pairs into nb buckets, field elements of fb bytes */
};
static inline int ba_init(czk_msm_ws *ws, const ba_shape *sh, size_t nsh)
{
    ws->ba_mem = NULL;
    ws->ba_bytes = 0;
    if (!env_uint("CZK_CUDA_MSM_BA", 1))
        return 0;
    for (int i = 0; i < 2; i++) {
        CZK_CU(cudaMalloc((void **)&ws->ba_cnt[i], (ws->cap_buckets + 1) * 4));
        CZK_CU(cudaMalloc((void **)&ws->ba_start[i], (ws->cap_buckets + 1) * 4));
    }
    size_t cap = (size_t)env_uint("CZK_CUDA_MSM_BA_MB", CZK_CUDA_MSM_BA_MB_DEFAULT) << 20;
    size_t dev_free = 0, dev_total = 0;
    if (cudaMemGetInfo(&dev_free, &dev_total) == cudaSuccess && cap > dev_free / 4)
        cap = dev_free / 4; /* keys and tables come after the context */
    size_t want = 0, b = 0;
    for (size_t i = 0; i < nsh; i++) {
        const size_t w = ba_need(sh[i].pairs, sh[i].nb, sh[i].fb, ba_k());
        want = w > want ? w : want;
    }
    if (want <= cap)
        b = want;
    else
        for (size_t i = 0; i < nsh; i++) {
            const size_t e = ba_even(cap, sh[i].pairs, sh[i].nb, sh[i].fb, ba_k());
            b = e > b ? e : b;
        }
    const size_t least = b / 16;
    for (; b >= least && b > 0; b /= 2) {
        if (cudaMalloc(&ws->ba_mem, b) == cudaSuccess) {
            ws->ba_bytes = b;
            return 0;
        }
        cudaGetLastError();
        ws->ba_mem = NULL;
    }
    return 0;
}

static inline void ba_free(czk_msm_ws *ws)
{
    cudaFree(ws->ba_mem);
    for (int i = 0; i < 2; i++) {
        cudaFree(ws->ba_cnt[i]);
        cudaFree(ws->ba_start[i]);
    }
}

/* the chunk for an MSM of plan p over points with field F in ws's scratch
 * (0: it has none big enough; msm_run runs the XYZZ first level) */
template <class F> static size_t ba_plan(const czk_msm_ws *ws, const msm_plan &p)
{
    return ws->ba_bytes ? ba_chunk(ws->ba_bytes, p.pairs, p.nbuckets, sizeof(F), ba_k()) : 0;
}

/* the buckets of plan p (ws->buckets) from the sorted pairs (ws->keys[1],
 * ws->vals[1]), in chunks of ch pairs */
template <class F>
static int ba_buckets(czk_cuda_ctx *ctx, const base_src<aff_t<F>> &bases, const msm_plan &p, size_t ch, bool prof,
                      cudaStream_t s)
{
    czk_msm_ws *ws = &ctx->msm;
    xyzz_t<F> *buckets = (xyzz_t<F> *)ws->buckets;
    static const unsigned stop_k = env_uint("CZK_CUDA_MSM_BA_STOP", BA_STOP_K);
    const unsigned K = ba_k();
    const size_t nb = p.nbuckets;
    const size_t half = ba_half(ch, nb); /* outputs of a level, at most */
    const size_t tmax = (half + K - 1) / K; /* threads of a level */
    uint32_t *cnt[2] = {ws->ba_cnt[0], ws->ba_cnt[1]}, *start[2] = {ws->ba_start[0], ws->ba_start[1]};
    aff_t<F> *buf[2] = {(aff_t<F> *)ws->ba_mem, (aff_t<F> *)ws->ba_mem + half};
    F *P = (F *)(buf[1] + ba_quarter(ch, nb)), *TP = P + half, *scr = TP + tmax;
    uint2 *OPS = (uint2 *)(scr + binv_scratch(tmax));
    uint32_t *hc = ws->host_counters;

    CZK_CU(cudaMemsetAsync(buckets, 0, nb * sizeof(xyzz_t<F>), s));
    k_ba_real<<<1, 1, 0, s>>>(ws->keys[1], (uint32_t)p.pairs, ws->counters + 6);
    CZK_CU(cudaMemcpyAsync(hc + 6, ws->counters + 6, 4, cudaMemcpyDeviceToHost, s));
    CZK_CU(cudaStreamSynchronize(s));
    const uint32_t M = hc[6];
    double tl = prof ? prof_ms() : 0;
    for (uint32_t off = 0; off < M; off += (uint32_t)ch) {
        const uint32_t m = M - off > ch ? (uint32_t)ch : M - off;
        size_t tmp = ws->cub_bytes;
        CZK_CU(cub::DeviceRunLengthEncode::Encode(ws->cub_tmp, tmp, ws->keys[1] + off, ws->run_keys, cnt[0],
                                                  ws->counters, (int)m, s));
        k_ba_max<<<1, 256, 0, s>>>(cnt[0], ws->counters, ws->counters);
        CZK_CU(cudaMemcpyAsync(hc, ws->counters, 2 * 4, cudaMemcpyDeviceToHost, s));
        CZK_CU(cudaStreamSynchronize(s));
        const uint32_t R = hc[0], maxc = hc[1];
        if (R > nb)
            return czk_cuda_errf_(-EIO, "msm: %u bucket runs in a chunk, %zu buckets", R, nb);
        tmp = ws->cub_bytes;
        CZK_CU(cub::DeviceScan::ExclusiveSum(ws->cub_tmp, tmp, cnt[0], start[0], (int)R, s));
        unsigned levels = 1;
        while (((uint64_t)1 << levels) < maxc)
            levels++;
        base_src<aff_t<F>> src = bases;
        size_t bound = m;
        int a = 0;
        for (unsigned lv = 0; lv < levels; lv++) {
            /* the last levels add few points (most runs are down to one):
             * leave what remains to k_ba_finish once a level would add fewer
             * than stop_k thousand pairs and every run has fewer than BA_RESID
             * points left (a run of the short top window can hold 2^26 / 2^7
             * points) */
            if (!ba_level_runs(lv, bound, R, maxc, stop_k))
                break;
            k_ba_half<<<grid_for(R, 256), 256, 0, s>>>(cnt[a], R, cnt[1 - a]);
            tmp = ws->cub_bytes;
            CZK_CU(cub::DeviceScan::ExclusiveSum(ws->cub_tmp, tmp, cnt[1 - a], start[1 - a], (int)R, s));
            bound = ba_level_bound(bound, R);
            const uint32_t T = (uint32_t)((bound + K - 1) / K);
            /* the run of each output: the sorted keys and values of step 1
             * (free after the sort) hold the head flags and their sums */
            uint32_t *flag = ws->keys[0], *run = ws->vals[0];
            CZK_CU(cudaMemsetAsync(flag, 0, bound * 4, s));
            k_ba_heads<<<grid_for(R, 256), 256, 0, s>>>(start[1 - a], R, flag);
            tmp = 0;
            CZK_CU(cub::DeviceScan::InclusiveSum(NULL, tmp, flag, run, (int)bound, s));
            if (tmp > ws->cub_bytes)
                return czk_cuda_errf_(-ENOMEM, "msm: scan of %zu outputs needs %zu bytes of scratch, %zu", bound, tmp,
                                      ws->cub_bytes);
            tmp = ws->cub_bytes;
            CZK_CU(cub::DeviceScan::InclusiveSum(ws->cub_tmp, tmp, flag, run, (int)bound, s));
            const ba_lvl L = {start[a], cnt[a], start[1 - a], cnt[1 - a], run, R};
            aff_t<F> *dst = buf[lv & 1];
            const uint32_t *vals = ws->vals[1] + off;
            /* with the profile: the level's steps timed apart (a synchronisation each) */
            double ts[4] = {0, 0, 0, 0};
            if (prof) {
                CZK_CU(cudaStreamSynchronize(s));
                ts[0] = prof_ms();
            }
            if (lv == 0)
                ba_pre_launch<true>(src, vals, L, K, T, P, TP, OPS, s);
            else
                ba_pre_launch<false>(src, vals, L, K, T, P, TP, OPS, s);
            if (prof) {
                CZK_CU(cudaStreamSynchronize(s));
                ts[1] = prof_ms();
            }
            batch_inv<F>(TP, T, scr, s);
            if (prof) {
                CZK_CU(cudaStreamSynchronize(s));
                ts[2] = prof_ms();
            }
            ba_add_launch(src, L, K, T, P, TP, OPS, dst, s);
            CZK_CU_LAUNCH("k_ba level");
            src = src_of<aff_t<F>>(dst);
            a = 1 - a;
            if (prof) {
                CZK_CU(cudaStreamSynchronize(s));
                ts[3] = prof_ms();
                fprintf(stderr,
                        "msm ba chunk %u level %u: %.3f ms (R=%u, max %u, T=%u: runs %.3f, pre %.3f, inverse %.3f, "
                        "add %.3f)\n",
                        off, lv, ts[3] - tl, R, maxc, T, ts[0] - tl, ts[1] - ts[0], ts[2] - ts[1], ts[3] - ts[2]);
                tl = ts[3];
            }
        }
        k_ba_finish<F><<<grid_for(R, 128), 128, 0, s>>>(src.r1, start[a], cnt[a], ws->counters, ws->run_keys,
                                                        ws->keys[1], off, buckets);
        CZK_CU_LAUNCH("k_ba_finish");
    }
    return 0;
}

#endif
