/*
 * bn254_msm.h — multi-scalar multiplication sum_i k_i * P_i on BN254's G1
 * and G2 (bn254_curve.h): the same Pippenger code as BLS12-381's msm.h
 * (signed digits, batch-affine buckets, multi-threaded, cheap scalars 0 and
 * 1).  Bases are affine (zkey layout; all-zero bytes = infinity, skipped).
 * Scalars are czk_bn254_fr in STANDARD form (plain integers < 2^256; values
 * >= r are accepted and act as integers).  Bases need only be on their
 * curves: no endomorphism is used, so no subgroup condition applies.
 * nthreads as par.h (0: all cores).  Errors: -EINVAL (null arguments),
 * -ENOMEM (plan or bucket memory, logged once).  Variable time, like
 * msm.h: the running time depends on the scalars and the bases.
 */
#ifndef CZK_BN254_MSM_H
#define CZK_BN254_MSM_H

#include "common/crypto/bn254_curve.h"

int czk_bn254_msm_g1(czk_bn254_g1 *r, const czk_bn254_g1_aff *bases, const czk_bn254_fr *scalars, size_t n,
                     int nthreads);
int czk_bn254_msm_g2(czk_bn254_g2 *r, const czk_bn254_g2_aff *bases, const czk_bn254_fr *scalars, size_t n,
                     int nthreads);

#endif
