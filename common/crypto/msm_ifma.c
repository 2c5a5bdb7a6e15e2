/*
 * msm_ifma.c — the batch-affine bucket additions of msm.c (BLS12-381) and
 * bn254_msm.c (BN254) with AVX-512 IFMA (msm_ifma.h): G1 with 8 lanes of Fp,
 * G2 with 8 lanes of Fp2 built on them (Karatsuba: 3 lane products per Fp2
 * product; the inversions go through the Fp norms).  The lanes are
 * fpx_tmpl.h's (fpx8.h, bn254_fpx8.h), the flush body is msm_ifma_tmpl.h,
 * one instance per curve and group.  Results are bit-identical to the
 * scalar flush.
 */
#include "common/crypto/msm_ifma.h"

#include "common/crypto/bn254_field_impl.h"
#include "common/crypto/bn254_fpx8.h"
#include "common/crypto/field_impl.h"
#include "common/crypto/fpx8.h"

#ifdef CZK_HAVE_FPX8

/* steps of 8 additions prefetched ahead in the flush */
#ifndef FLUSH_AHEAD
#define FLUSH_AHEAD 3
#endif

/* ---- BLS12-381 ---- */
#define FB(n) czk_fp_##n
#define FB_T czk_fp
#define FB_ONE CZK_FP_ONE
#define VB(n) czk_fpx8_##n
#define VB_T czk_fpx8

#define SUF g1
#define AFF czk_g1_aff
#define FE czk_fp
#define IFMA_FP2 0
#include "common/crypto/msm_ifma_tmpl.h"

#define SUF g2
#define AFF czk_g2_aff
#define FE czk_fp2
#define IFMA_FP2 1
#define VX2(n) czk_fp2x8_##n
#define VX2_T czk_fp2x8
#include "common/crypto/msm_ifma_tmpl.h"

#undef FB
#undef FB_T
#undef FB_ONE
#undef VB
#undef VB_T

/* ---- BN254 ---- */
#define FB(n) czk_bn254_fp_##n
#define FB_T czk_bn254_fp
#define FB_ONE CZK_BN254_FP_ONE
#define VB(n) czk_bn254_fpx8_##n
#define VB_T czk_bn254_fpx8

#define SUF bn254_g1
#define AFF czk_bn254_g1_aff
#define FE czk_bn254_fp
#define IFMA_FP2 0
#include "common/crypto/msm_ifma_tmpl.h"

#define SUF bn254_g2
#define AFF czk_bn254_g2_aff
#define FE czk_bn254_fp2
#define IFMA_FP2 1
#define VX2(n) czk_bn254_fp2x8_##n
#define VX2_T czk_bn254_fp2x8
#include "common/crypto/msm_ifma_tmpl.h"

#else /* no x86-64: never called (czk_fpx8_enabled() is false) */

#define MSM_IFMA_NONE_(SUF, AFF)                                                                       \
    size_t czk_msm_ifma_scratch_bytes_##SUF(size_t cap)                                                \
    {                                                                                                  \
        (void)cap;                                                                                     \
        return 0;                                                                                      \
    }                                                                                                  \
    size_t czk_msm_ifma_flush_##SUF(AFF *bk, const uint32_t *pidx, const AFF *const *pbase,            \
                                    const uint8_t *pneg, size_t cnt, void *scratch, uint32_t *same)    \
    {                                                                                                  \
        (void)bk; (void)pidx; (void)pbase; (void)pneg; (void)cnt; (void)scratch; (void)same;           \
        return 0;                                                                                      \
    }
MSM_IFMA_NONE_(g1, czk_g1_aff)
MSM_IFMA_NONE_(g2, czk_g2_aff)
MSM_IFMA_NONE_(bn254_g1, czk_bn254_g1_aff)
MSM_IFMA_NONE_(bn254_g2, czk_bn254_g2_aff)

#endif
