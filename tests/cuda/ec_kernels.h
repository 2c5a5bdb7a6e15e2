/*
 * ec_kernels.h — the device point-arithmetic cases of ec_kernels.cu for
 * test_cuda_ec.c.
 */
#ifndef CZK_TESTS_CUDA_EC_KERNELS_H
#define CZK_TESTS_CUDA_EC_KERNELS_H

#define TU_EC_KINDS 8
#define TU_EC_THREADS 128 /* a multiple of TU_EC_KINDS and of 64 */

#ifdef __cplusplus
extern "C" {
#endif
/* pr: affine P then R (not infinity, P != +-R) in the group's device layout
 * (czk_g1_aff, czk_g2_aff, czk_bn254_g1_aff, czk_bn254_g2_aff); out: 3
 * Jacobian points per thread t of TU_EC_THREADS, for kind k = t % TU_EC_KINDS:
 * an addition, a mixed addition and a doubling, whose results are
 *   k = 0: 2P, 2P, 2P            k = 4: 2P, 2P, 2P
 *   k = 1: 2P, P + R, 2P         k = 5: P, infinity, infinity
 *   k = 2: inf, inf, inf         k = 6: P, P + R, 2P
 *   k = 3: P + R, P, -2P         k = 7: inf, -P, inf
 * g2 2: G2 on lane pairs (ec_pair.cuh), the same kinds and results.
 * 0, or -1 on a CUDA error (tu_ec_error names it). */
int tu_ec_kinds(int curve_bn254, int g2, const void *pr, void *out);
const char *tu_ec_error(void);
#ifdef __cplusplus
}
#endif

#endif
