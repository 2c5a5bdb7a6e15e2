/*
 * ntt_check.h — the GPU-vs-CPU NTT checks of one curve, shared by
 * test_cuda_ntt.c (BLS12-381) and test_cuda_bn254_ntt.c (BN254).
 * DEF_NTT_CHECKS(PFX, ...) defines
 *   PFX##_naive(ctx, a, g, lg): the device NTT of 2^lg random elements equals
 *       a naive O(n^2) DFT with the CPU's root of unity;
 *   PFX##_sizes(ctx, max_log): at 2^1..2^max_log (every size to 2^16, then
 *       every second) the device NTT, inverse NTT (round trip and against the
 *       CPU), odd coset and h (output poisoned first; against the CPU prover's
 *       compute_h, which transforms its inputs).
 * Parameters: element type FR, RAND(FR *), EQ, ONE, ZERO, MUL, ADD (CPU
 * field), ROOT(FR *, lg), the GPU entry points NTT(ctx, FR *, lg, inv),
 * COSET_DEV(ctx, lg), H(ctx, a, b, c, h, lg), the CPU ones CPU_NTT(FR *, lg, t),
 * CPU_INTT, CPU_COSET and CPU_H(a, b, c, h, lg, t).
 */
#ifndef CZK_CUDA_NTT_CHECK_H
#define CZK_CUDA_NTT_CHECK_H

#include "tests/cuda/cuda_test_util.h"

#define DEF_NTT_CHECKS(PFX, FR, RAND, EQ, ONE, ZERO, MUL, ADD, ROOT, NTT, COSET_DEV, H, CPU_NTT, CPU_INTT,       \
                       CPU_COSET, CPU_H)                                                                         \
    static void PFX##_check_eq(const FR *x, const FR *y, size_t n, const char *what, unsigned lg)               \
    {                                                                                                            \
        for (size_t i = 0; i < n; i++)                                                                           \
            CHECK(EQ(&x[i], &y[i]), #PFX " %s 2^%u: mismatch at %zu", what, lg, i);                              \
    }                                                                                                            \
    static void PFX##_naive(czk_cuda_ctx *ctx, FR *a, FR *g, unsigned lg)                                      \
    {                                                                                                            \
        size_t n = (size_t)1 << lg;                                                                              \
        FR w, wk = ONE;                                                                                          \
        ROOT(&w, lg);                                                                                            \
        for (size_t i = 0; i < n; i++)                                                                           \
            RAND(&a[i]);                                                                                         \
        memcpy(g, a, n * sizeof *a);                                                                             \
        CHECK(NTT(ctx, g, lg, 0) == 0, "gpu ntt: %s", czk_cuda_last_error());                                    \
        for (size_t k = 0; k < n; k++) {                                                                         \
            FR acc = ZERO, p = ONE, t;                                                                           \
            for (size_t j = 0; j < n; j++) {                                                                     \
                MUL(&t, &a[j], &p);                                                                              \
                ADD(&acc, &acc, &t);                                                                             \
                MUL(&p, &p, &wk);                                                                                \
            }                                                                                                    \
            CHECK(EQ(&acc, &g[k]), #PFX " ntt 2^%u differs from the naive DFT at %zu", lg, k);                   \
            MUL(&wk, &wk, &w);                                                                                   \
        }                                                                                                        \
        printf(#PFX " ntt 2^%u = naive DFT\n", lg);                                                              \
    }                                                                                                            \
    static void PFX##_sizes(czk_cuda_ctx *ctx, unsigned max_log)                                                \
    {                                                                                                            \
        size_t nmax = (size_t)1 << max_log;                                                                      \
        FR *a = malloc(nmax * sizeof *a), *g = malloc(nmax * sizeof *g), *c = malloc(nmax * sizeof *c);          \
        FR *b = malloc(nmax * sizeof *b), *cc = malloc(nmax * sizeof *cc), *h = malloc(nmax * sizeof *h);        \
        FR *hc = malloc(nmax * sizeof *hc);                                                                      \
        CHECK(a && g && c && b && cc && h && hc, "oom");                                                         \
        for (unsigned lg = 1; lg <= max_log; lg += (lg < 16 ? 1 : 2)) {                                          \
            size_t n = (size_t)1 << lg;                                                                          \
            for (size_t i = 0; i < n; i++)                                                                       \
                RAND(&a[i]);                                                                                     \
            memcpy(g, a, n * sizeof *a);                                                                         \
            memcpy(c, a, n * sizeof *a);                                                                         \
            CHECK(NTT(ctx, g, lg, 0) == 0, "gpu ntt: %s", czk_cuda_last_error());                                \
            CHECK(CPU_NTT(c, lg, 0) == 0, "cpu ntt");                                                            \
            PFX##_check_eq(g, c, n, "ntt", lg);                                                                  \
            CHECK(NTT(ctx, g, lg, 1) == 0, "gpu intt: %s", czk_cuda_last_error());                               \
            PFX##_check_eq(g, a, n, "intt(ntt(x))", lg);                                                         \
            memcpy(g, a, n * sizeof *a);                                                                         \
            memcpy(c, a, n * sizeof *a);                                                                         \
            CHECK(NTT(ctx, g, lg, 1) == 0, "gpu intt: %s", czk_cuda_last_error());                               \
            CHECK(CPU_INTT(c, lg, 0) == 0, "cpu intt");                                                          \
            PFX##_check_eq(g, c, n, "intt", lg);                                                                 \
            /* odd coset in place on buffer A */                                                                 \
            memcpy(c, a, n * sizeof *a);                                                                         \
            CHECK(czk_cuda_upload_async(ctx, CZK_CUDA_BUF_A, 0, (const czk_fr *)a, n, NULL, NULL) == 0, "upload"); \
            CHECK(COSET_DEV(ctx, lg) == 0, "gpu odd coset: %s", czk_cuda_last_error());                          \
            CHECK(czk_cuda_download(ctx, CZK_CUDA_BUF_A, 0, (czk_fr *)g, n) == 0, "download");                    \
            CHECK(CPU_COSET(c, lg, 0) == 0, "cpu odd coset");                                                    \
            PFX##_check_eq(g, c, n, "odd coset", lg);                                                            \
            /* h = a b - c at the odd coset, standard form */                                                    \
            for (size_t i = 0; i < n; i++) {                                                                     \
                RAND(&b[i]);                                                                                     \
                RAND(&cc[i]);                                                                                    \
            }                                                                                                    \
            memset(h, 0xa5, n * sizeof *h);                                                                      \
            CHECK(H(ctx, a, b, cc, h, lg) == 0, "gpu h: %s", czk_cuda_last_error());                             \
            memcpy(g, a, n * sizeof *a);                                                                         \
            CHECK(CPU_H(g, b, cc, hc, lg, 0) == 0, "cpu h");                                                     \
            PFX##_check_eq(h, hc, n, "h", lg);                                                                   \
            printf(#PFX " ntt/intt/odd-coset/h 2^%u ok\n", lg);                                                  \
        }                                                                                                        \
        free(a), free(g), free(c), free(b), free(cc), free(h), free(hc);                                         \
    }

#endif
