/*
 * msm_ifma.c — msm.c's batch-affine bucket additions with AVX-512 IFMA
 * (msm_ifma.h): G1 with 8 lanes of Fp (fpx8.h), G2 with 8 lanes of Fp2 built
 * on them (Karatsuba: 3 lane products per Fp2 product; the inversions go
 * through the Fp norms).  The flush body is msm_ifma_tmpl.h.  Results are
 * bit-identical to the scalar flush.
 */
#include "common/crypto/msm_ifma.h"

#include "common/crypto/field_impl.h"
#include "common/crypto/fpx8.h"

#ifdef CZK_HAVE_FPX8

/* G1: the chain inverts px - bx itself (lazy: below 3q, a valid product input) */
CZK_IFMA_INLINE void g1_chain_of(czk_fpx8 *n, const czk_fpx8 *px, const czk_fpx8 *bx)
{
    czk_fpx8_sub_lazy(n, px, bx);
}

CZK_IFMA_INLINE void g1_inv_of(czk_fpx8 *r, const czk_fpx8 *ninv, const czk_fpx8 *px, const czk_fpx8 *bx)
{
    (void)px;
    (void)bx;
    *r = *ninv;
}

/* G2: d = px - bx = d0 + d1 u, 1/d = (d0 - d1 u) / (d0^2 + d1^2): the chain
 * inverts the Fp norms */
CZK_IFMA_INLINE void g2_chain_of(czk_fpx8 *n, const czk_fp2x8 *px, const czk_fp2x8 *bx)
{
    czk_fp2x8 d;
    czk_fpx8 t;

    czk_fp2x8_sub(&d, px, bx);
    czk_fpx8_sqr_ool(n, &d.c0);
    czk_fpx8_sqr_ool(&t, &d.c1);
    czk_fpx8_add(n, n, &t);
}

CZK_IFMA_INLINE void g2_inv_of(czk_fp2x8 *r, const czk_fpx8 *ninv, const czk_fp2x8 *px, const czk_fp2x8 *bx)
{
    czk_fp2x8 d;

    czk_fp2x8_sub(&d, px, bx);
    czk_fpx8_cneg(&d.c1, &d.c1, 0xff);
    czk_fpx8_mul_ool(&r->c0, &d.c0, ninv);
    czk_fpx8_mul_ool(&r->c1, &d.c1, ninv);
}

/* steps of 8 additions prefetched ahead in the flush */
#ifndef FLUSH_AHEAD
#define FLUSH_AHEAD 3
#endif

/* ---- G1 ---- */
#define SUF g1
#define AFF czk_g1_aff
#define FE czk_fp
#define VX czk_fpx8
#define VX_MUL czk_fpx8_mul_ool
#define VX_SQR czk_fpx8_sqr_ool
#define VX_SUB czk_fpx8_sub
#define VX_MUL_LAZY czk_fpx8_mul_lazy_ool
#define VX_CSUB_LAZY czk_fpx8_csub_lazy
#define VX_EQ czk_fpx8_eq
#define VX_CHAIN_OF g1_chain_of
#define VX_INV_OF g1_inv_of
#define VX_GATHER czk_fpx8_gather_p
#define VX_SCATTER czk_fpx8_scatter_p
#include "common/crypto/msm_ifma_tmpl.h"
#undef SUF
#undef AFF
#undef FE
#undef VX
#undef VX_MUL
#undef VX_SQR
#undef VX_SUB
#undef VX_MUL_LAZY
#undef VX_CSUB_LAZY
#undef VX_EQ
#undef VX_CHAIN_OF
#undef VX_INV_OF
#undef VX_GATHER
#undef VX_SCATTER

/* ---- G2 ---- */
#define SUF g2
#define AFF czk_g2_aff
#define FE czk_fp2
#define VX czk_fp2x8
#define VX_MUL czk_fp2x8_mul_ool
#define VX_SQR czk_fp2x8_sqr_ool
#define VX_SUB czk_fp2x8_sub
#define VX_MUL_LAZY czk_fp2x8_mul_ool
#define VX_CSUB_LAZY czk_fp2x8_csub
#define VX_EQ czk_fp2x8_eq
#define VX_CHAIN_OF g2_chain_of
#define VX_INV_OF g2_inv_of
#define VX_GATHER czk_fp2x8_gather_p
#define VX_SCATTER czk_fp2x8_scatter_p
#include "common/crypto/msm_ifma_tmpl.h"

#else /* no x86-64: never called (czk_fpx8_enabled() is false) */

size_t czk_msm_ifma_scratch_bytes_g1(size_t cap) { (void)cap; return 0; }
size_t czk_msm_ifma_scratch_bytes_g2(size_t cap) { (void)cap; return 0; }
size_t czk_msm_ifma_flush_g1(czk_g1_aff *bk, const uint32_t *pidx, const czk_g1_aff *const *pbase,
                             const uint8_t *pneg, size_t cnt, void *scratch, uint32_t *same)
{ (void)bk; (void)pidx; (void)pbase; (void)pneg; (void)cnt; (void)scratch; (void)same; return 0; }
size_t czk_msm_ifma_flush_g2(czk_g2_aff *bk, const uint32_t *pidx, const czk_g2_aff *const *pbase,
                             const uint8_t *pneg, size_t cnt, void *scratch, uint32_t *same)
{ (void)bk; (void)pidx; (void)pbase; (void)pneg; (void)cnt; (void)scratch; (void)same; return 0; }

#endif
