/*
 * test_cuda_plan.c — the CUDA MSM's window size (czk_cuda_msm_window_bits,
 * host code: needs no GPU, so it runs in every build with the CUDA backend).
 *
 * With c-bit signed digits of scalars below r, the top window holds the bits
 * of r above the last whole window plus the carry of the window below: its
 * largest digit is (r >> (c floor(b / c))) + 1 for r of b bits, computed here
 * with GMP from r's decimal value.  A window whose top digits fall into fewer
 * than 1/32 of its 2^(c-1) buckets is lopsided (one bucket can take ~45% of
 * all points); the rule must not pick one while a neighbouring size has
 * none.  The sizes pinned at the end are the ones measured (docs/bench-gpu.md,
 * "Run 49").
 */
#include <gmp.h>

#include "tests/cuda/cuda_test_util.h"

static const char *R_BLS = "52435875175126190479447740508185965837690552500527637822603658699938581184513";
static const char *R_BN = "21888242871839275222246405745257275088548364400416034343698204186575808495617";

static int lopsided(const mpz_t r, unsigned c)
{
    const unsigned b = (unsigned)mpz_sizeinbase(r, 2);
    mpz_t t;
    mpz_init(t);
    mpz_fdiv_q_2exp(t, r, c * (b / c));
    mpz_add_ui(t, t, 1);
    mpz_mul_2exp(t, t, 5);
    const int lop = mpz_cmp_ui(t, 1ul << (c - 1)) < 0;
    mpz_clear(t);
    return lop;
}

int main(void)
{
    const struct {
        const char *name, *r;
        unsigned curve;
    } cv[2] = {{"BLS12-381", R_BLS, CZK_CUDA_CURVE_BLS12_381}, {"BN254", R_BN, CZK_CUDA_CURVE_BN254}};
    unsigned fine = 0;
    for (int i = 0; i < 2; i++) {
        mpz_t r;
        mpz_init_set_str(r, cv[i].r, 10);
        for (int g2 = 0; g2 <= 1; g2++)
            for (unsigned k = 10; k <= 28; k++) {
                /* the plan is a function of n's bit length k */
                const size_t lo = (size_t)1 << (k - 1), hi = ((size_t)1 << k) - 14;
                const unsigned c = czk_cuda_msm_window_bits(lo, g2, cv[i].curve);
                CHECK(czk_cuda_msm_window_bits(hi, g2, cv[i].curve) == c, "%s g2=%d: c differs within 2^%u..2^%u",
                      cv[i].name, g2, k - 1, k);
                CHECK(c >= 8 && c <= 22, "%s g2=%d 2^%u: c=%u", cv[i].name, g2, k, c);
                if (lopsided(r, c)) {
                    CHECK(lopsided(r, c - 1) && (c == 22 || lopsided(r, c + 1)),
                          "%s g2=%d n < 2^%u: c=%u has a lopsided top window, a neighbour has none", cv[i].name, g2,
                          k, c);
                } else {
                    fine++;
                }
            }
        mpz_clear(r);
    }
    /* the sizes measured (2^k - 14 is the n of a partition of 2^k constraints) */
    CHECK(czk_cuda_msm_window_bits(((size_t)1 << 24) - 14, 0, CZK_CUDA_CURVE_BLS12_381) == 16,
          "BLS12-381 G1 2^24 - 14: c=%u, not 16",
          czk_cuda_msm_window_bits(((size_t)1 << 24) - 14, 0, CZK_CUDA_CURVE_BLS12_381));
    CHECK(czk_cuda_msm_window_bits((size_t)1 << 24, 0, CZK_CUDA_CURVE_BLS12_381) == 16, "BLS12-381 G1 2^24: not 16");
    CHECK(czk_cuda_msm_window_bits(((size_t)1 << 22) - 14, 0, CZK_CUDA_CURVE_BN254) == 15,
          "BN254 G1 2^22 - 14: c=%u, not 15", czk_cuda_msm_window_bits(((size_t)1 << 22) - 14, 0, CZK_CUDA_CURVE_BN254));
    CHECK(fine > 0, "no size has a window without a lopsided top");
    if (t_failures)
        return 1;
    printf("test_cuda_plan: ok\n");
    return 0;
}
