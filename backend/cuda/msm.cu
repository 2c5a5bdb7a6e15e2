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
 *  3. bucket sums, batch-affine (msm_ba.cuh, the default when the workspace
 *     has its scratch): each bucket's points summed as a binary tree in
 *     affine coordinates, one inversion per level shared by all its
 *     additions, into the dense bucket array.  Otherwise (CZK_CUDA_MSM_BA=0,
 *     comparisons) in XYZZ: first level (k_acc_seg, G2: k_acc_seg_g2p): the sorted
 *     pairs with a real key are cut into equal slices, one per resident thread
 *     (or lane pair), regardless of bucket boundaries; each thread sums its
 *     slice in XYZZ with mixed additions (negating y for negative digits,
 *     skipping all-zero infinity bases) and emits one partial sum per bucket
 *     piece.  Later levels cut the runs of partial sums into tasks of at most L
 *     and add them (full XYZZ additions) until each bucket has one sum; those
 *     are scattered into a dense bucket array.  (CZK_CUDA_MSM_SEG=0 selects the
 *     older first level, tasks of at most L pairs per bucket.)
 *  4. per window, sum_b (b+1)*B_b in levels (msm_wsum_kernels.cuh): a
 *     lane group reduces a block of buckets to its sum and its weighted sum,
 *     the next level reduces the block sums with the block index as weight
 *     (see k_bucket_lvl); the nwin window sums go to the host, which runs Horner
 *     over the windows (c doublings each: a serial chain a CPU core runs
 *     faster).
 * G2 runs every level on lane pairs, one Fp2 component per thread
 * (ec_pair.cuh): a whole G2 point per thread needs more registers than a
 * thread has.
 * All scratch lives in the context's workspace, sized at creation.
 * The plan, the kernels and the driver are msm_kernels.cuh, shared with
 * BN254 (bn254_msm.cu); this file holds the workspace, the bases (both
 * curves) and BLS12-381's kernel choices and entry points.
 */
#include "backend/cuda/msm_kernels.cuh"

extern "C" unsigned czk_cuda_msm_window_bits(size_t n, int g2, unsigned curve)
{
    return plan_for(n, g2, curve).c;
}

/* ---- workspace ---- */

int czk_cuda_msm_init_(czk_cuda_ctx *ctx)
{
    struct czk_msm_ws *ws = &ctx->msm;
    size_t nmax = ctx->max_msm_n ? ctx->max_msm_n : 1;
    /* within an octave the plan is fixed and pairs grow with n: the maximum is at the
     * top of each octave (or at nmax) */
    size_t cap_pairs = 0, cap_buckets = 0, nsh = 0;
    ba_shape sh[64 * 8]; /* bit lengths x groups x curves x plans */
    for (unsigned k = 1; k <= bitlen(nmax) && k <= 64; k++) {
        size_t top = ((size_t)1 << k) - 1;
        if (top > nmax)
            top = nmax;
        for (int g2 = 0; g2 <= ctx->enable_g2; g2++) {
            for (unsigned curve = CZK_CUDA_CURVE_BLS12_381; curve <= CZK_CUDA_CURVE_BN254; curve <<= 1) {
                if (!(ctx->curves & curve))
                    continue;
                /* the plain plan and (cfg.msm_tables) that of a full fixed-base table */
                const msm_plan plans[2] = {plan_for(top, g2, curve), plan_make(top, tab_c_for(top, g2, curve), 1)};
                const size_t fb = curve == CZK_CUDA_CURVE_BN254 ? (g2 ? sizeof(bn_fp2_t) : sizeof(bn_fp_t))
                                                                : (g2 ? sizeof(fp2_t) : sizeof(fp_t));
                for (int pi = 0; pi < (ctx->msm_tables ? 2 : 1); pi++) {
                    const msm_plan &p = plans[pi];
                    sh[nsh++] = {p.pairs, p.nbuckets, fb};
                    if (p.pairs > cap_pairs)
                        cap_pairs = p.pairs;
                    if (p.nbuckets > cap_buckets)
                        cap_buckets = p.nbuckets;
                }
            }
        }
    }
    if (cap_pairs >= ((size_t)1 << 31) || (nmax << 1) >= ((size_t)1 << 32))
        return czk_cuda_errf_(-EINVAL, "max_msm_n %zu too large for 32-bit sort keys (%zu pairs)", nmax, cap_pairs);
    ws->cap_pairs = cap_pairs;
    ws->cap_buckets = cap_buckets;
    ws->cap_parts = cap_buckets + 1 + task_target(ctx) + 64;
    /* the largest bucket point of the curves the context serves */
    ws->pt_bytes = 0;
    if (ctx->curves & CZK_CUDA_CURVE_BLS12_381)
        ws->pt_bytes = ctx->enable_g2 ? sizeof(xyzz_t<fp2_t>) : sizeof(xyzz_t<fp_t>);
    if (ctx->curves & CZK_CUDA_CURVE_BN254) {
        const size_t bn = ctx->enable_g2 ? sizeof(xyzz_t<bn_fp2_t>) : sizeof(xyzz_t<bn_fp_t>);
        if (bn > ws->pt_bytes)
            ws->pt_bytes = bn;
    }
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
    CZK_CU(cudaMalloc((void **)&ws->counters, 8 * sizeof(uint32_t)));
    CZK_CU(cudaMalloc(&ws->result, 64 * sizeof(jac_t<fp2_t>)));
    CZK_CU(cudaMallocHost(&ws->host_result, 64 * sizeof(jac_t<fp2_t>)));
    CZK_CU(cudaMallocHost((void **)&ws->host_counters, 8 * sizeof(uint32_t)));
    /* CUB scratch: the largest of the three primitives at full capacity */
    size_t b1 = 0, b2 = 0, b3 = 0;
    {
        cub::DoubleBuffer<uint32_t> dk(ws->keys[0], ws->keys[1]), dv(ws->vals[0], ws->vals[1]);
        CZK_CU(cub::DeviceRadixSort::SortPairs(nullptr, b1, dk, dv, (int)cap_pairs, 0, 32, ctx->st[0]));
    }
    CZK_CU(cub::DeviceRunLengthEncode::Encode(nullptr, b2, ws->keys[1], ws->run_keys, ws->run_cnt, ws->counters,
                                              (int)(cap_pairs > ws->cap_parts ? cap_pairs : ws->cap_parts),
                                              ctx->st[0]));
    CZK_CU(cub::DeviceScan::ExclusiveSum(nullptr, b3, ws->run_cnt, ws->run_start, (int)cap_runs, ctx->st[0]));
    ws->cub_bytes = b1 > b2 ? b1 : b2;
    if (b3 > ws->cub_bytes)
        ws->cub_bytes = b3;
    CZK_CU(cudaMalloc(&ws->cub_tmp, ws->cub_bytes));
    return ba_init(ws, sh, nsh);
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
    cudaFree(ws->counters);
    cudaFree(ws->result);
    cudaFree(ws->cub_tmp);
    if (ws->host_counters)
        cudaFreeHost(ws->host_counters);
    if (ws->host_result)
        cudaFreeHost(ws->host_result);
    ba_free(ws);
    cudaGetLastError();
}

/* ---- BLS12-381's kernel choices (msm_kernels.cuh, msm_group) ---- */

template <>
struct msm_group<fp_t>
    : msm_group_base<fp_t, czk_g1, CZK_CUDA_CURVE_BLS12_381, 0, czk_g1_set_inf, czk_g1_dbl, czk_g1_add> {
    static const void *level0_seg(unsigned segmode, unsigned &lanes, unsigned &bs)
    {
        lanes = 1;
        bs = 128;
        return segmode == 1   ? (const void *)k_acc_seg<fp_t, false, 0>
               : segmode == 3 ? (const void *)k_acc_seg<fp_t, false, 4>
               : segmode == 4 ? (const void *)k_acc_seg<fp_t, true, 4>
               : segmode == 5 ? (const void *)k_acc_seg<fp_t, true, 3>
                              : (const void *)k_acc_seg<fp_t, true, 0>;
    }
};

/* G2 level-0 kernel: lane pairs with 2 (default), 3 or 4 blocks per SM, or
 * 0 for the one-thread-per-task kernel (CZK_CUDA_MSM_G2P, for comparisons) */
static unsigned msm_g2p(void)
{
    static const unsigned g2p = env_uint("CZK_CUDA_MSM_G2P", 2);
    return g2p;
}

template <>
struct msm_group<fp2_t>
    : msm_group_base<fp2_t, czk_g2, CZK_CUDA_CURVE_BLS12_381, 1, czk_g2_set_inf, czk_g2_dbl, czk_g2_add> {
    static const void *level0_seg(unsigned segmode, unsigned &lanes, unsigned &bs)
    {
        const unsigned g2p = msm_g2p();
        /* segmented G2 level 0 (CZK_CUDA_MSM_G2K): 0 = schoolbook pair products (CZK_CUDA_MSM_G2P blocks
         * of 128 per SM), 1 = Karatsuba pairs (the default; 2 blocks of 128 per SM, or 3 with G2P=3),
         * 2 = 1 with the next base prefetched, 3 = 1 in 3 blocks of 96 (9 warps per SM), 4 = 1 in 5 blocks
         * of 64 (10 warps), 5 = 1 with lazily reduced Fp2 products (the default; 2 blocks of 128 per SM, or
         * 3 with G2P=3) */
        static const unsigned g2k = env_uint("CZK_CUDA_MSM_G2K", 5);
        if (!g2p)
            return NULL;
        lanes = 2;
        bs = g2k == 3 ? 96 : g2k == 4 ? 64 : 128;
        return g2k == 5   ? (g2p == 3 ? (const void *)k_acc_seg_g2p<fp_t, 3, 2, false>
                                      : (const void *)k_acc_seg_g2p<fp_t, 2, 2, false>)
               : g2k == 2 ? (const void *)k_acc_seg_g2p<fp_t, 2, 1, true>
               : g2k == 3 ? (const void *)k_acc_seg_g2p<fp_t, 3, 1, false, 96>
               : g2k == 4 ? (const void *)k_acc_seg_g2p<fp_t, 5, 1, false, 64>
               : g2k      ? (g2p == 3 ? (const void *)k_acc_seg_g2p<fp_t, 3, 1, false>
                                      : (const void *)k_acc_seg_g2p<fp_t, 2, 1, false>)
               : g2p == 2 ? (const void *)k_acc_seg_g2p<fp_t, 2, 0, false>
               : g2p == 4 ? (const void *)k_acc_seg_g2p<fp_t, 4, 0, false>
                          : (const void *)k_acc_seg_g2p<fp_t, 3, 0, false>;
    }
    static void level0_tasks(const czk_msm_ws *ws, const base_src<aff_t<fp2_t>> &bases, uint32_t tasks, uint32_t L,
                             uint32_t *out_keys, xyzz_t<fp2_t> *out, cudaStream_t s)
    {
        const unsigned g2p = msm_g2p();
        if (!g2p) {
            msm_group_base::level0_tasks(ws, bases, tasks, L, out_keys, out, s);
            return;
        }
        unsigned gr = grid_for((size_t)tasks * 2, 128);
        if (g2p == 2)
            k_acc_aff_g2p<fp_t, 2><<<gr, 128, 0, s>>>(ws->vals[1], bases, ws->run_keys, ws->run_cnt, ws->run_start,
                                                      ws->task_off, ws->counters, L, out_keys, out);
        else if (g2p == 4)
            k_acc_aff_g2p<fp_t, 4><<<gr, 128, 0, s>>>(ws->vals[1], bases, ws->run_keys, ws->run_cnt, ws->run_start,
                                                      ws->task_off, ws->counters, L, out_keys, out);
        else
            k_acc_aff_g2p<fp_t, 3><<<gr, 128, 0, s>>>(ws->vals[1], bases, ws->run_keys, ws->run_cnt, ws->run_start,
                                                      ws->task_off, ws->counters, L, out_keys, out);
    }
};

/* ---- bases (both curves) ---- */

const char *czk_cuda_curve_name_(unsigned curve)
{
    return curve == CZK_CUDA_CURVE_BN254 ? "BN254" : curve == CZK_CUDA_CURVE_BLS12_381 ? "BLS12-381" : "?";
}

extern "C" size_t czk_cuda_point_bytes(unsigned curve, int g2)
{
    return curve == CZK_CUDA_CURVE_BN254 ? (g2 ? sizeof(aff_t<bn_fp2_t>) : sizeof(aff_t<bn_fp_t>))
                                         : (g2 ? sizeof(aff_t<fp2_t>) : sizeof(aff_t<fp_t>));
}

/* a bases handle over dev (NULL: allocate n points here), with pts (may be
 * NULL when dev already holds them) copied in on the copy stream */
int czk_cuda_bases_new_(czk_cuda_ctx *ctx, czk_cuda_bases **out, void *dev, const void *pts, size_t n,
                        unsigned curve, int g2)
{
    *out = NULL;
    size_t pt = czk_cuda_point_bytes(curve, g2);
    czk_cuda_bases *b = (czk_cuda_bases *)calloc(1, sizeof *b);
    if (!b)
        return -ENOMEM;
    b->ctx = ctx;
    b->curve = curve;
    b->g2 = g2;
    b->borrowed = dev != NULL;
    b->n = n;
    b->pts = dev;
    cudaError_t e = cudaSetDevice(ctx->device);
    if (e == cudaSuccess && !dev)
        e = cudaMalloc(&b->pts, (n ? n : 1) * pt);
    if (e == cudaSuccess && pts && n)
        e = cudaMemcpyAsync(b->pts, pts, n * pt, cudaMemcpyHostToDevice, ctx->copy);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(ctx->copy);
    if (e != cudaSuccess) {
        int rc = czk_cuda_fail_(dev ? "upload of msm bases into given device memory" : "upload of msm bases",
                                __FILE__, __LINE__, e);
        if (!dev)
            cudaFree(b->pts);
        free(b);
        return rc;
    }
    *out = b;
    return 0;
}

extern "C" int czk_cuda_bases_upload_g1(czk_cuda_ctx *ctx, czk_cuda_bases **b, const czk_g1_aff *pts, size_t n)
{
    return czk_cuda_bases_new_(ctx, b, NULL, pts, n, CZK_CUDA_CURVE_BLS12_381, 0);
}
extern "C" int czk_cuda_bases_upload_g2(czk_cuda_ctx *ctx, czk_cuda_bases **b, const czk_g2_aff *pts, size_t n)
{
    return czk_cuda_bases_new_(ctx, b, NULL, pts, n, CZK_CUDA_CURVE_BLS12_381, 1);
}
extern "C" int czk_cuda_bases_place(czk_cuda_ctx *ctx, czk_cuda_bases **out, void *dev, const void *pts, size_t n,
                                    int g2)
{
    return czk_cuda_bases_new_(ctx, out, dev, pts, n, CZK_CUDA_CURVE_BLS12_381, g2);
}

extern "C" void czk_cuda_bases_free(czk_cuda_bases *b)
{
    if (!b)
        return;
    if (cudaSetDevice(b->ctx->device) == cudaSuccess) {
        if (!b->borrowed)
            cudaFree(b->pts);
        cudaFree(b->tab);
    }
    cudaGetLastError();
    free(b);
}

int czk_cuda_tab_build_bls_(czk_cuda_bases *b, unsigned rows, unsigned c)
{
    return b->g2 ? tab_build<fp2_t>(b, rows, c) : tab_build<fp_t>(b, rows, c);
}

extern "C" int czk_cuda_bases_precompute(czk_cuda_bases *b, unsigned rows, unsigned c)
{
    return b->curve == CZK_CUDA_CURVE_BN254 ? czk_cuda_tab_build_bn_(b, rows, c) : czk_cuda_tab_build_bls_(b, rows, c);
}

static void tab_plan_out(size_t n, size_t pt, unsigned c, unsigned ncls, unsigned rows, czk_cuda_table_plan *out)
{
    out->c = c;
    out->rows = rows;
    out->bucket_windows = ncls;
    out->windows = nwin_for(c);
    out->bytes = tab_bytes(n, pt, rows);
    out->peak_bytes = tab_peak(n, pt, rows);
}

extern "C" int czk_cuda_bases_table_plan(const czk_cuda_bases *b, unsigned rows, unsigned c, czk_cuda_table_plan *out)
{
    unsigned ncls = 0;
    memset(out, 0, sizeof *out);
    if (tab_shape(b->n, b->g2, b->curve, rows, c, ncls, rows) < 0)
        return -EINVAL;
    tab_plan_out(b->n, czk_cuda_point_bytes(b->curve, b->g2), c, ncls, rows, out);
    return 0;
}

extern "C" int czk_cuda_table_fit(size_t n, int g2, unsigned curve, size_t mem, size_t cap_buckets,
                                  czk_cuda_table_plan *out)
{
    unsigned c = 0, ncls = 0, rows = 0;
    memset(out, 0, sizeof *out);
    const size_t pt = czk_cuda_point_bytes(curve, g2);
    const int r = tab_fit(n, g2, curve, pt, mem, cap_buckets, c, ncls, rows);
    if (r < 0)
        return r;
    tab_plan_out(n, pt, c, ncls, rows, out);
    return 0;
}

extern "C" int czk_cuda_bases_table_fit(const czk_cuda_bases *b, size_t mem, czk_cuda_table_plan *out)
{
    return czk_cuda_table_fit(b->n, b->g2, b->curve, mem, 0, out);
}

extern "C" int czk_cuda_msm_used_table(const czk_cuda_ctx *ctx) { return ctx->msm.last_tab; }

extern "C" void czk_cuda_msm_keep_digits(czk_cuda_ctx *ctx, int on)
{
    ctx->msm.keep = on != 0;
    if (!on)
        ctx->msm.sorted.valid = 0;
}

extern "C" int czk_cuda_msm_kept_digits(const czk_cuda_ctx *ctx) { return ctx->msm.last_kept; }

extern "C" unsigned czk_cuda_bases_table_rows(const czk_cuda_bases *b)
{
    return __atomic_load_n(&b->tab, __ATOMIC_ACQUIRE) ? b->tab_rows : 0;
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
    return msm_host<fp_t>(ctx, b, scalars, n, r);
}
extern "C" int czk_cuda_msm_g2_host(czk_cuda_ctx *ctx, const czk_cuda_bases *b, const czk_fr *scalars, size_t n,
                                    czk_g2 *r)
{
    return msm_host<fp2_t>(ctx, b, scalars, n, r);
}
