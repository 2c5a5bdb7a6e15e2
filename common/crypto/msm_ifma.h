/*
 * msm_ifma.h — the batch-affine bucket additions of msm.c (BLS12-381) and
 * bn254_msm.c (BN254) done 8 at a time with AVX-512 IFMA (G1 in lanes of
 * Fp, G2 in lanes of Fp2: fpx8.h, bn254_fpx8.h).  Private to those two.
 *
 * Each function does what msm_tmpl.h's scalar F(msm_flush) does, with the
 * same canonical results: for j < cnt, bk[pidx[j]] += (pneg[j] ? -1 : 1) *
 * *pbase[j], all affine, where the bucket indexes pidx[j] are distinct.
 * An addition whose base has the bucket's x (+-the bucket's point) is left
 * out: its index j goes to same[] (room for cnt), the count is returned,
 * and the caller adds it with complete formulas.
 * scratch: czk_msm_ifma_scratch_bytes_*(cap) bytes, 64-byte aligned, for up
 * to cap additions.  Call only when czk_fpx8_enabled().
 */
#ifndef CZK_MSM_IFMA_H
#define CZK_MSM_IFMA_H

#include <stddef.h>
#include <stdint.h>

#include "common/crypto/bn254_curve.h"
#include "common/crypto/curve.h"

size_t czk_msm_ifma_scratch_bytes_g1(size_t cap);
size_t czk_msm_ifma_scratch_bytes_g2(size_t cap);
size_t czk_msm_ifma_flush_g1(czk_g1_aff *bk, const uint32_t *pidx, const czk_g1_aff *const *pbase,
                             const uint8_t *pneg, size_t cnt, void *scratch, uint32_t *same);
size_t czk_msm_ifma_flush_g2(czk_g2_aff *bk, const uint32_t *pidx, const czk_g2_aff *const *pbase,
                             const uint8_t *pneg, size_t cnt, void *scratch, uint32_t *same);

size_t czk_msm_ifma_scratch_bytes_bn254_g1(size_t cap);
size_t czk_msm_ifma_scratch_bytes_bn254_g2(size_t cap);
size_t czk_msm_ifma_flush_bn254_g1(czk_bn254_g1_aff *bk, const uint32_t *pidx,
                                   const czk_bn254_g1_aff *const *pbase, const uint8_t *pneg, size_t cnt,
                                   void *scratch, uint32_t *same);
size_t czk_msm_ifma_flush_bn254_g2(czk_bn254_g2_aff *bk, const uint32_t *pidx,
                                   const czk_bn254_g2_aff *const *pbase, const uint8_t *pneg, size_t cnt,
                                   void *scratch, uint32_t *same);

#endif
