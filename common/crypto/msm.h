/*
 * msm.h — multi-scalar multiplication sum_i k_i * P_i on G1 and G2, Pippenger
 * with signed digits, multi-threaded, with cheap handling of scalars 0 and 1.
 * Bases are affine (zkey layout; all-zero bytes = infinity, skipped).
 * Scalars are czk_fr in STANDARD form (plain integers < 2^256; values >= r are
 * accepted and act as integers).
 * G1 bases must lie in the order-r subgroup (every zkey point does): the G1
 * MSM uses the GLV endomorphism, which acts as a scalar only there.
 * Scratch blocks of 1 MiB and more outlive the call, kept for the next MSM
 * (at most 512 MiB, marked MADV_FREE: the kernel reclaims them under memory
 * pressure); thread-safe.
 */
#ifndef CZK_MSM_H
#define CZK_MSM_H

#include "common/crypto/curve.h"

int czk_msm_g1(czk_g1 *r, const czk_g1_aff *bases, const czk_fr *scalars, size_t n, int nthreads);
int czk_msm_g2(czk_g2 *r, const czk_g2_aff *bases, const czk_fr *scalars, size_t n, int nthreads);

#endif
