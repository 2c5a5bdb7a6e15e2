/*
 * bn254_msm.cu — G1/G2 multi-scalar multiplication over BN254 (snarkjs
 * "bn128") on the device: the Pippenger of msm_kernels.cuh (signed digits,
 * sorted buckets, XYZZ, segmented first level, G2 on lane pairs with lazily
 * reduced Karatsuba products) instantiated for bn_fp_t / bn_fp2_t.  Its own
 * translation unit so it compiles next to msm.cu; only the default kernels of
 * each level are instantiated (CZK_CUDA_MSM_SEG=0 selects the one-task-per-
 * bucket-piece first level; of the other comparison variants only the
 * register caps of the first level exist here).  The workspace and the bases handles are msm.cu's.
 */
#include "backend/cuda/msm_kernels.cuh"

template <>
struct msm_group<bn_fp_t> : msm_group_base<bn_fp_t, czk_bn254_g1, CZK_CUDA_CURVE_BN254, 0, czk_bn254_g1_set_inf,
                                           czk_bn254_g1_dbl, czk_bn254_g1_add> {
    /* segmented, next base prefetched, the registers capped for 4 blocks of
     * 128 per SM (128 instead of 132: 16 warps per SM instead of 12; G1 2^24
     * table 47.6 against 48.5 ms, docs/bench-gpu.md runs 27-28); CZK_CUDA_MSM_SEG=5:
     * uncapped, BLS12-381's default, for comparison */
    static const void *level0_seg(unsigned segmode, unsigned &lanes, unsigned &bs)
    {
        lanes = 1;
        bs = 128;
        return segmode == 5 ? (const void *)k_acc_seg<bn_fp_t, true, 0> : (const void *)k_acc_seg<bn_fp_t, true, 4>;
    }
};

template <>
struct msm_group<bn_fp2_t> : msm_group_base<bn_fp2_t, czk_bn254_g2, CZK_CUDA_CURVE_BN254, 1, czk_bn254_g2_set_inf,
                                            czk_bn254_g2_dbl, czk_bn254_g2_add> {
    /* lane pairs, Karatsuba products with lazy reduction, the registers
     * capped for CZK_CUDA_MSM_G2P = 2 (BLS12-381's default), 3 or 4 blocks of
     * 128 per SM */
    static const void *level0_seg(unsigned segmode, unsigned &lanes, unsigned &bs)
    {
        static const unsigned g2p = env_uint("CZK_CUDA_MSM_G2P", 2);
        lanes = 2;
        bs = 128;
        return g2p == 3   ? (const void *)k_acc_seg_g2p<bn_fp_t, 3, 2, false>
               : g2p == 4 ? (const void *)k_acc_seg_g2p<bn_fp_t, 4, 2, false>
                          : (const void *)k_acc_seg_g2p<bn_fp_t, 2, 2, false>;
    }
};

int czk_cuda_tab_build_bn_(czk_cuda_bases *b, unsigned rows, unsigned c)
{
    return b->g2 ? tab_build<bn_fp2_t>(b, rows, c) : tab_build<bn_fp_t>(b, rows, c);
}

extern "C" int czk_cuda_bn254_bases_upload_g1(czk_cuda_ctx *ctx, czk_cuda_bases **b, const czk_bn254_g1_aff *pts,
                                              size_t n)
{
    static_assert(sizeof(czk_bn254_g1_aff) == sizeof(aff_t<bn_fp_t>), "BN254 G1 affine layout");
    return czk_cuda_bases_new_(ctx, b, NULL, pts, n, CZK_CUDA_CURVE_BN254, 0);
}
extern "C" int czk_cuda_bn254_bases_upload_g2(czk_cuda_ctx *ctx, czk_cuda_bases **b, const czk_bn254_g2_aff *pts,
                                              size_t n)
{
    static_assert(sizeof(czk_bn254_g2_aff) == sizeof(aff_t<bn_fp2_t>), "BN254 G2 affine layout");
    return czk_cuda_bases_new_(ctx, b, NULL, pts, n, CZK_CUDA_CURVE_BN254, 1);
}
extern "C" int czk_cuda_bn254_bases_place(czk_cuda_ctx *ctx, czk_cuda_bases **b, void *dev, const void *pts,
                                          size_t n, int g2)
{
    return czk_cuda_bases_new_(ctx, b, dev, pts, n, CZK_CUDA_CURVE_BN254, g2);
}

extern "C" int czk_cuda_bn254_msm_g1(czk_cuda_ctx *ctx, const czk_cuda_bases *b, size_t base_off, int scalar_buf,
                                     size_t scalar_off, size_t n, czk_bn254_g1 *r)
{
    static_assert(sizeof(czk_bn254_g1) == sizeof(jac_t<bn_fp_t>), "BN254 G1 Jacobian layout");
    return msm_run<bn_fp_t>(ctx, b, base_off, scalar_buf, scalar_off, n, r);
}
extern "C" int czk_cuda_bn254_msm_g2(czk_cuda_ctx *ctx, const czk_cuda_bases *b, size_t base_off, int scalar_buf,
                                     size_t scalar_off, size_t n, czk_bn254_g2 *r)
{
    static_assert(sizeof(czk_bn254_g2) == sizeof(jac_t<bn_fp2_t>), "BN254 G2 Jacobian layout");
    return msm_run<bn_fp2_t>(ctx, b, base_off, scalar_buf, scalar_off, n, r);
}
extern "C" int czk_cuda_bn254_msm_g1_host(czk_cuda_ctx *ctx, const czk_cuda_bases *b, const czk_bn254_fr *scalars,
                                          size_t n, czk_bn254_g1 *r)
{
    return msm_host<bn_fp_t>(ctx, b, scalars, n, r);
}
extern "C" int czk_cuda_bn254_msm_g2_host(czk_cuda_ctx *ctx, const czk_cuda_bases *b, const czk_bn254_fr *scalars,
                                          size_t n, czk_bn254_g2 *r)
{
    return msm_host<bn_fp2_t>(ctx, b, scalars, n, r);
}
