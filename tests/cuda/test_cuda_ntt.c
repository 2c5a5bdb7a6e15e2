/*
 * test_cuda_ntt.c — device NTT, inverse NTT, odd-coset step and the whole h
 * computation against the CPU (common/crypto/ntt.h) on random inputs, plus a naive
 * O(n^2) DFT with snarkjs's root at 2^10 as an independent oracle.
 * Sizes 2^10..2^CZK_CUDA_TEST_MAX_LOG (default 20; scripts/gpu-run.sh raises it to 24).
 * Exit 77 without a GPU.
 */
#include "common/crypto/ntt.h"
#include "tests/cuda/cuda_test_util.h"

static void rand_vec(czk_fr *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tu_rand_fr(&a[i]);
}

static void check_eq(const czk_fr *x, const czk_fr *y, size_t n, const char *what, unsigned lg)
{
    for (size_t i = 0; i < n; i++)
        CHECK(czk_fr_eq(&x[i], &y[i]), "%s 2^%u: mismatch at %zu", what, lg, i);
}

int main(void)
{
    tu_seed();
    unsigned max_log = tu_env_uint("CZK_CUDA_TEST_MAX_LOG", 20);
    czk_cuda_ctx *ctx = tu_ctx(max_log, 1024, 0);
    size_t nmax = (size_t)1 << max_log;
    czk_fr *a = malloc(nmax * sizeof *a), *g = malloc(nmax * sizeof *g), *c = malloc(nmax * sizeof *c);
    czk_fr *b = malloc(nmax * sizeof *b), *cc = malloc(nmax * sizeof *cc), *h = malloc(nmax * sizeof *h);
    CHECK(a && g && c && b && cc && h, "oom");

    /* the convention: w_{2^10} is snarkjs's (docs/file-formats.md, "Roots of unity") */
    czk_fr w, ws;
    czk_fr_root_of_unity(&w, 10);
    czk_fr_from_mont(&ws, &w);
    const czk_fr w10 = {{0xd58a5af42d010ff9ULL, 0x79efd6b0570bf109ULL, 0x3ed6d55a6350721dULL, 0x2f27b09858f43cefULL}};
    CHECK(czk_fr_eq(&ws, &w10), "root of unity 2^10 is not snarkjs's");

    /* naive DFT at 2^10: out_k = sum_j a_j w^(jk) */
    {
        size_t n = 1024;
        rand_vec(a, n);
        memcpy(g, a, n * sizeof *a);
        CHECK(czk_cuda_ntt(ctx, g, 10, 0) == 0, "gpu ntt: %s", czk_cuda_last_error());
        czk_fr wk = CZK_FR_ONE;
        for (size_t k = 0; k < n; k++) {
            czk_fr acc = CZK_FR_ZERO, p = CZK_FR_ONE, t;
            for (size_t j = 0; j < n; j++) {
                czk_fr_mul(&t, &a[j], &p);
                czk_fr_add(&acc, &acc, &t);
                czk_fr_mul(&p, &p, &wk);
            }
            CHECK(czk_fr_eq(&acc, &g[k]), "ntt 2^10 differs from the naive DFT at %zu", k);
            czk_fr_mul(&wk, &wk, &w);
        }
        printf("ntt 2^10 = naive DFT\n");
    }

    /* every size from 2^1: single passes of every width (k = 1..10: the
     * radix-2 kernel below k = 4, the radix-4 one from 4 up, odd and even k) */
    for (unsigned lg = 1; lg <= max_log; lg += (lg < 16 ? 1 : 2)) {
        size_t n = (size_t)1 << lg;
        rand_vec(a, n);
        /* forward */
        memcpy(g, a, n * sizeof *a);
        memcpy(c, a, n * sizeof *a);
        CHECK(czk_cuda_ntt(ctx, g, lg, 0) == 0, "gpu ntt: %s", czk_cuda_last_error());
        CHECK(czk_ntt(c, lg, 0) == 0, "cpu ntt");
        check_eq(g, c, n, "ntt", lg);
        /* inverse, back to the input */
        CHECK(czk_cuda_ntt(ctx, g, lg, 1) == 0, "gpu intt: %s", czk_cuda_last_error());
        check_eq(g, a, n, "intt(ntt(x))", lg);
        memcpy(g, a, n * sizeof *a);
        memcpy(c, a, n * sizeof *a);
        CHECK(czk_cuda_ntt(ctx, g, lg, 1) == 0, "gpu intt: %s", czk_cuda_last_error());
        CHECK(czk_intt(c, lg, 0) == 0, "cpu intt");
        check_eq(g, c, n, "intt", lg);
        /* odd coset */
        memcpy(c, a, n * sizeof *a);
        CHECK(czk_cuda_upload_async(ctx, CZK_CUDA_BUF_A, 0, a, n, NULL, NULL) == 0, "upload");
        CHECK(czk_cuda_ntt_to_odd_coset_dev(ctx, lg) == 0, "gpu odd coset: %s", czk_cuda_last_error());
        CHECK(czk_cuda_download(ctx, CZK_CUDA_BUF_A, 0, g, n) == 0, "download");
        CHECK(czk_ntt_to_odd_coset(c, lg, 0) == 0, "cpu odd coset");
        check_eq(g, c, n, "odd coset", lg);
        /* h = a*b - c at the odd coset, standard form */
        rand_vec(b, n);
        rand_vec(cc, n);
        memset(h, 0xa5, n * sizeof *h);
        CHECK(czk_cuda_compute_h(ctx, a, b, cc, h, lg) == 0, "gpu h: %s", czk_cuda_last_error());
        memcpy(g, a, n * sizeof *a);
        CHECK(czk_ntt_to_odd_coset(g, lg, 0) == 0, "cpu odd coset a");
        CHECK(czk_ntt_to_odd_coset(b, lg, 0) == 0, "cpu odd coset b");
        CHECK(czk_ntt_to_odd_coset(cc, lg, 0) == 0, "cpu odd coset c");
        for (size_t i = 0; i < n; i++) {
            czk_fr t;
            czk_fr_mul(&t, &g[i], &b[i]);
            czk_fr_sub(&t, &t, &cc[i]);
            czk_fr_from_mont(&t, &t);
            CHECK(czk_fr_eq(&t, &h[i]), "h 2^%u: mismatch at %zu", lg, i);
        }
        printf("ntt/intt/odd-coset/h 2^%u ok\n", lg);
    }
    czk_cuda_ctx_free(ctx);
    free(a), free(g), free(c), free(b), free(cc), free(h);
    return 0;
}
