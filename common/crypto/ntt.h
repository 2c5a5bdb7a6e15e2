/*
 * ntt.h — radix-2 NTT over Fr with snarkjs's roots of unity (from the
 * non-residue 5, NOT bellman/blst's 7): w[32] = 5^((r-1)/2^32), w[k-1] = w[k]^2.
 * Inputs and outputs are czk_fr in Montgomery form, natural order.
 * BN254's transform, the same code over its Fr, is bn254_ntt.h.
 */
#ifndef CZK_NTT_H
#define CZK_NTT_H

#include "common/crypto/field.h"

#define CZK_NTT_MAX_LOG 28

/* primitive 2^log_n-th root of unity (Montgomery), log_n <= 32 */
void czk_fr_root_of_unity(czk_fr *w, unsigned log_n);
/* in-place forward NTT: a[i] <- sum_j a[j] w^(ij), w = root(log_n) */
int czk_ntt(czk_fr *a, unsigned log_n, int nthreads);
/* in-place inverse NTT (includes the 1/n factor) */
int czk_intt(czk_fr *a, unsigned log_n, int nthreads);
/* a[i] *= g^i (coset shift), g in Montgomery form */
int czk_ntt_scale_powers(czk_fr *a, size_t n, const czk_fr *g, int nthreads);
/* the snarkjs "h" step for one polynomial in place: iNTT, times w_{2n}^i, NTT:
 * evaluations at the odd powers of the 2n-th root */
int czk_ntt_to_odd_coset(czk_fr *a, unsigned log_n, int nthreads);

#endif
