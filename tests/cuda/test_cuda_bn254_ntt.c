/*
 * test_cuda_bn254_ntt.c — the device BN254 NTT (snarkjs "bn128" roots),
 * inverse NTT, odd-coset step and h against the CPU (common/crypto/
 * bn254_ntt.h, czk_groth16_bn254_compute_h) on random inputs, plus a naive
 * O(n^2) DFT with the CPU's root of unity at 2^8 (tests/cuda/ntt_check.h).
 * The context serves both curves, so the BLS12-381 transform is checked to
 * still agree with its CPU version next to BN254's tables.
 * Sizes 2^1..2^CZK_CUDA_TEST_MAX_LOG (default 20).  Exit 77 without a GPU.
 */
#include "common/crypto/bn254_ntt.h"
#include "common/crypto/ntt.h"
#include "common/groth16/groth16.h"
#include "tests/cuda/ntt_check.h"

static void rand_fr(czk_bn254_fr *x) { tu_rand_bn_fr(x); }

DEF_NTT_CHECKS(bn254, czk_bn254_fr, rand_fr, czk_bn254_fr_eq, CZK_BN254_FR_ONE, CZK_BN254_FR_ZERO, czk_bn254_fr_mul,
               czk_bn254_fr_add, czk_bn254_fr_root_of_unity, czk_cuda_bn254_ntt, czk_cuda_bn254_ntt_to_odd_coset_dev,
               czk_cuda_bn254_compute_h, czk_bn254_ntt, czk_bn254_intt, czk_bn254_ntt_to_odd_coset,
               czk_groth16_bn254_compute_h)

int main(void)
{
    tu_seed();
    unsigned max_log = tu_env_uint("CZK_CUDA_TEST_MAX_LOG", 20);
    if (max_log < 12)
        max_log = 12;
    czk_cuda_ctx *ctx = tu_ctx_curves(max_log, 1024, 0, CZK_CUDA_CURVE_BLS12_381 | CZK_CUDA_CURVE_BN254);
    czk_bn254_fr *a = malloc(256 * sizeof *a), *g = malloc(256 * sizeof *g);
    CHECK(a && g, "oom");
    bn254_naive(ctx, a, g, 8);
    free(a), free(g);
    bn254_sizes(ctx, max_log);

    /* the BLS12-381 transform of the same context still matches its CPU version */
    size_t n = (size_t)1 << 12;
    czk_fr *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    CHECK(x && y, "oom");
    for (size_t i = 0; i < n; i++)
        tu_rand_fr(&x[i]);
    memcpy(y, x, n * sizeof *x);
    CHECK(czk_cuda_ntt(ctx, x, 12, 0) == 0, "gpu bls ntt: %s", czk_cuda_last_error());
    CHECK(czk_ntt(y, 12, 0) == 0, "cpu bls ntt");
    for (size_t i = 0; i < n; i++)
        CHECK(czk_fr_eq(&x[i], &y[i]), "bls12-381 ntt 2^12 next to bn254: mismatch at %zu", i);
    free(x), free(y);
    printf("bls12-381 ntt 2^12 in a two-curve context ok\n");
    czk_cuda_ctx_free(ctx);
    return 0;
}
