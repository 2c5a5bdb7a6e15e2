/*
 * test_cuda_ntt.c — device NTT, inverse NTT, odd-coset step and the whole h
 * computation against the CPU (common/crypto/ntt.h, czk_groth16_compute_h)
 * on random inputs, plus a naive O(n^2) DFT with snarkjs's root at 2^10 as
 * an independent oracle (tests/cuda/ntt_check.h); again on a second context
 * after the first, whose twiddle tables it shares, is freed.
 * Sizes 2^1..2^CZK_CUDA_TEST_MAX_LOG (default 20; scripts/gpu-run.sh raises it to 24).
 * Exit 77 without a GPU.
 */
#include "common/crypto/ntt.h"
#include "common/groth16/groth16.h"
#include "tests/cuda/ntt_check.h"

static void rand_fr(czk_fr *x) { tu_rand_fr(x); }

DEF_NTT_CHECKS(bls, czk_fr, rand_fr, czk_fr_eq, CZK_FR_ONE, CZK_FR_ZERO, czk_fr_mul, czk_fr_add,
               czk_fr_root_of_unity, czk_cuda_ntt, czk_cuda_ntt_to_odd_coset_dev, czk_cuda_compute_h, czk_ntt,
               czk_intt, czk_ntt_to_odd_coset, czk_groth16_compute_h)

int main(void)
{
    tu_seed();
    unsigned max_log = tu_env_uint("CZK_CUDA_TEST_MAX_LOG", 20);
    if (max_log < 10)
        max_log = 10;
    czk_cuda_ctx *ctx = tu_ctx(max_log, 1024, 0);

    /* the convention: w_{2^10} is snarkjs's (docs/file-formats.md, "Roots of unity") */
    czk_fr w, ws;
    czk_fr_root_of_unity(&w, 10);
    czk_fr_from_mont(&ws, &w);
    const czk_fr w10 = {{0xd58a5af42d010ff9ULL, 0x79efd6b0570bf109ULL, 0x3ed6d55a6350721dULL, 0x2f27b09858f43cefULL}};
    CHECK(czk_fr_eq(&ws, &w10), "root of unity 2^10 is not snarkjs's");

    czk_fr *a = malloc(1024 * sizeof *a), *g = malloc(1024 * sizeof *g);
    CHECK(a && g, "oom");
    bls_naive(ctx, a, g, 10);
    bls_sizes(ctx, max_log);
    /* the contexts of a device share their twiddle tables: a second context
     * of the same size takes the first one's, which must outlive the first */
    czk_cuda_ctx *ctx2 = tu_ctx(max_log, 1024, 0);
    czk_cuda_ctx_free(ctx);
    bls_naive(ctx2, a, g, 10);
    bls_sizes(ctx2, max_log < 16 ? max_log : 16);
    czk_cuda_ctx_free(ctx2);
    free(a), free(g);
    return 0;
}
