/*
 * cuda_test_util.h — shared helpers of the GPU-vs-CPU tests: skip (77) when no
 * GPU is present, a seeded PRNG, random field elements and curve points.
 */
#ifndef CZK_CUDA_TEST_UTIL_H
#define CZK_CUDA_TEST_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto/curve.h"
#include "common/crypto/field.h"
#include "backend/cuda/czk_cuda.h"

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

static uint64_t tu_rng_s[4];

static inline uint64_t tu_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** */
static inline uint64_t tu_rand(void)
{
    uint64_t *s = tu_rng_s;
    uint64_t r = tu_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = tu_rotl(s[3], 45);
    return r;
}

static inline void tu_seed(void)
{
    uint64_t seed = getenv("CZK_TEST_SEED") ? strtoull(getenv("CZK_TEST_SEED"), NULL, 0)
                                            : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    fprintf(stderr, "seed 0x%llx (set CZK_TEST_SEED to repeat)\n", (unsigned long long)seed);
    for (int i = 0; i < 4; i++) {
        seed += 0x9e3779b97f4a7c15ULL;
        uint64_t z = seed;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        tu_rng_s[i] = z ^ (z >> 31);
    }
}

/* uniform below the modulus by rejection; the raw limbs are a valid Montgomery value */
static inline void tu_rand_fr(czk_fr *x)
{
    do {
        for (int i = 0; i < 4; i++)
            x->l[i] = tu_rand();
        x->l[3] &= 0x7fffffffffffffffULL;
    } while (!czk_fr_is_canonical(x));
}

static inline void tu_rand_fp(czk_fp *x)
{
    do {
        for (int i = 0; i < 6; i++)
            x->l[i] = tu_rand();
        x->l[5] &= 0x1fffffffffffffffULL;
    } while (!czk_fp_is_canonical(x));
}

/* exit 77 unless a GPU is present; otherwise a context */
static inline czk_cuda_ctx *tu_ctx(unsigned max_log_n, size_t max_msm_n, int g2)
{
    int n;
    if (czk_cuda_device_count(&n) != 0 || n == 0) {
        printf("no cuda device (%s): skipping\n", czk_cuda_last_error());
        exit(77);
    }
    czk_cuda_cfg cfg = {.device = 0, .max_log_n = max_log_n, .max_msm_n = max_msm_n, .enable_g2 = g2};
    czk_cuda_ctx *ctx;
    int rc = czk_cuda_ctx_new(&ctx, &cfg);
    CHECK(rc == 0, "czk_cuda_ctx_new: %d (%s)", rc, czk_cuda_last_error());
    return ctx;
}

static inline unsigned tu_env_uint(const char *name, unsigned dflt)
{
    const char *s = getenv(name);
    return s && *s ? (unsigned)strtoul(s, NULL, 0) : dflt;
}

#endif
