/*
 * bn254_msm.h — multi-scalar multiplication sum_i k_i * P_i on BN254's G1
 * and G2 (bn254_curve.h): the same Pippenger code as BLS12-381's msm.h
 * (signed digits, batch-affine buckets, multi-threaded, cheap scalars 0 and
 * 1).  Bases are affine (zkey layout; all-zero bytes = infinity, skipped).
 * Scalars are czk_bn254_fr in STANDARD form (plain integers < 2^256; values
 * >= r are accepted and act as integers).  Both MSMs use an endomorphism
 * (GLV): on G1 (cofactor 1) it acts as lambda on every curve point; G2
 * bases must lie in the order-r subgroup (every zkey point does), where
 * psi acts as [p mod r].
 * nthreads as par.h (0: all cores).  Errors: -EINVAL (null arguments),
 * -ENOMEM (plan or bucket memory, logged once).  Variable time, like
 * msm.h: the running time depends on the scalars and the bases.  Scratch
 * blocks of 1 MiB and more are kept for the next MSM as msm.h's are (a
 * cache of its own, at most 512 MiB, reclaimable by the kernel).
 */
#ifndef CZK_BN254_MSM_H
#define CZK_BN254_MSM_H

#include "common/crypto/bn254_curve.h"

/* phi(P) = (beta x, y) = [lambda] P on G1, the endomorphism the G1 MSM
 * uses, lambda = 0xb3c4d79d41a917585bfc41088d8daaa78b17ea66b99c90dd.
 * P affine, not infinity.  Errors: -EINVAL (null), -ENOTSUP (the built-in
 * constants failed their check against czk_bn254_g1_mul_aff, logged once;
 * the MSM then runs without the endomorphism). */
int czk_bn254_g1_endo(czk_bn254_g1_aff *r, const czk_bn254_g1_aff *p);

/* psi(Q) = (conj(x) xi^((p-1)/3), conj(y) xi^((p-1)/2)) = [p mod r] Q on
 * G2's order-r subgroup, the endomorphism the G2 MSM uses; Q affine, not
 * infinity.  Errors as czk_bn254_g1_endo. */
int czk_bn254_g2_endo(czk_bn254_g2_aff *r, const czk_bn254_g2_aff *p);

int czk_bn254_msm_g1(czk_bn254_g1 *r, const czk_bn254_g1_aff *bases, const czk_bn254_fr *scalars, size_t n,
                     int nthreads);
int czk_bn254_msm_g2(czk_bn254_g2 *r, const czk_bn254_g2_aff *bases, const czk_bn254_fr *scalars, size_t n,
                     int nthreads);

#endif
