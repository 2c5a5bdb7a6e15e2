/*
 * bn254_ntt.h — radix-2 NTT over BN254's Fr (bn254_field.h), the same API
 * as ntt.h for BLS12-381, with snarkjs's roots of unity: w[28] =
 * 5^((r-1)/2^28) = CZK_BN254_FR_ROOT_2_28, w[k-1] = w[k]^2.
 * Inputs and outputs are czk_bn254_fr in Montgomery form, natural order.
 * nthreads as par.h (0: all cores).  Errors: -EINVAL (null vector, size
 * beyond CZK_BN254_NTT_MAX_LOG), -ENOMEM (twiddle table), logged once.
 */
#ifndef CZK_BN254_NTT_H
#define CZK_BN254_NTT_H

#include "common/crypto/bn254_field.h"

#define CZK_BN254_NTT_MAX_LOG CZK_BN254_FR_TWO_ADICITY

/* primitive 2^log_n-th root of unity (Montgomery), log_n <= 28 (else zero) */
void czk_bn254_fr_root_of_unity(czk_bn254_fr *w, unsigned log_n);
/* in-place forward NTT: a[i] <- sum_j a[j] w^(ij), w = root(log_n) */
int czk_bn254_ntt(czk_bn254_fr *a, unsigned log_n, int nthreads);
/* in-place inverse NTT (includes the 1/n factor) */
int czk_bn254_intt(czk_bn254_fr *a, unsigned log_n, int nthreads);
/* a[i] *= g^i (coset shift), g in Montgomery form */
int czk_bn254_ntt_scale_powers(czk_bn254_fr *a, size_t n, const czk_bn254_fr *g, int nthreads);
/* the snarkjs "h" step for one polynomial in place: iNTT, times w_{2n}^i, NTT:
 * evaluations at the odd powers of the 2n-th root; log_n <= 27 (the 2n-th
 * root must exist) */
int czk_bn254_ntt_to_odd_coset(czk_bn254_fr *a, unsigned log_n, int nthreads);

#endif
