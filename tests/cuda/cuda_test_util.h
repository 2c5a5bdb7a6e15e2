/*
 * cuda_test_util.h — shared helpers of the GPU-vs-CPU tests: skip (77) when no
 * GPU is present, CHECK exiting at the first failure (tests/common/test_util.h
 * with T_STOP_AT_FAILURE), a seeded xoshiro256** generator (the seeds that
 * docs/bench-gpu.md records replay with it), random field elements and curve
 * points.
 */
#ifndef CZK_CUDA_TEST_UTIL_H
#define CZK_CUDA_TEST_UTIL_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto/bn254_curve.h"
#include "common/crypto/curve.h"
#include "common/crypto/field.h"
#include "backend/cuda/czk_cuda.h"

#define T_STOP_AT_FAILURE
#include "tests/common/test_util.h"

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

/* uniform below the modulus by rejection (random limbs, top limb masked to
 * the modulus' bit length); the raw limbs are a valid Montgomery value */
#define TU_RAND_BELOW(x, limbs, top_mask, canonical)                          \
    do {                                                                      \
        for (int i_ = 0; i_ < (limbs); i_++)                                  \
            (x)->l[i_] = tu_rand();                                           \
        (x)->l[(limbs) - 1] &= (top_mask);                                    \
    } while (!canonical(x))

static inline void tu_rand_fr(czk_fr *x) { TU_RAND_BELOW(x, 4, 0x7fffffffffffffffULL, czk_fr_is_canonical); }
static inline void tu_rand_fp(czk_fp *x) { TU_RAND_BELOW(x, 6, 0x1fffffffffffffffULL, czk_fp_is_canonical); }
/* BN254: p and r are both 254-bit */
static inline void tu_rand_bn_fr(czk_bn254_fr *x)
{
    TU_RAND_BELOW(x, 4, 0x3fffffffffffffffULL, czk_bn254_fr_is_canonical);
}
static inline void tu_rand_bn_fp(czk_bn254_fp *x)
{
    TU_RAND_BELOW(x, 4, 0x3fffffffffffffffULL, czk_bn254_fp_is_canonical);
}

/* MSM scalar sets shared by the curves (4 limbs, STANDARD form): random
 * below r (rand_r), 0/1-mixed (45% 0, 45% 1, 10% random), all zero, all
 * one, all 2^256 - 1 */
enum { TU_S_RANDOM, TU_S_BITS, TU_S_ZERO, TU_S_ONE, TU_S_MAX, TU_S_COMMON };
static inline void tu_scalar(uint64_t l[4], int kind, void (*rand_r)(uint64_t l[4]))
{
    uint64_t r = tu_rand() % 100;
    memset(l, 0, 4 * sizeof l[0]);
    if (kind == TU_S_RANDOM || (kind == TU_S_BITS && r >= 90))
        rand_r(l);
    else if (kind == TU_S_BITS)
        l[0] = r < 45 ? 0 : 1;
    else if (kind == TU_S_ONE)
        l[0] = 1;
    else if (kind == TU_S_MAX)
        memset(l, 0xff, 4 * sizeof l[0]);
}

/* n scalars of 32 bytes (czk_fr or czk_bn254_fr): the common sets above, or
 * for kind >= TU_S_COMMON each from extra(l) (the test's own set) */
static inline void tu_scalars(void *s, size_t n, int kind, void (*rand_r)(uint64_t l[4]),
                              void (*extra)(uint64_t l[4]))
{
    uint64_t(*v)[4] = (uint64_t(*)[4])s;
    for (size_t i = 0; i < n; i++) {
        if (kind < TU_S_COMMON)
            tu_scalar(v[i], kind, rand_r);
        else
            extra(v[i]);
    }
}

/* exit 77 unless a GPU is present; otherwise a context for the curves
 * (CZK_CUDA_CURVE_* mask, 0: BLS12-381) */
static inline czk_cuda_ctx *tu_ctx_curves(unsigned max_log_n, size_t max_msm_n, int g2, unsigned curves)
{
    int n;
    if (czk_cuda_device_count(&n) != 0 || n == 0) {
        printf("no cuda device (%s): skipping\n", czk_cuda_last_error());
        exit(77);
    }
    czk_cuda_cfg cfg = {.device = 0,
                        .max_log_n = max_log_n,
                        .max_msm_n = max_msm_n,
                        .enable_g2 = g2,
                        .curves = curves,
                        .msm_tables = 1};
    czk_cuda_ctx *ctx;
    int rc = czk_cuda_ctx_new(&ctx, &cfg);
    CHECK(rc == 0, "czk_cuda_ctx_new: %d (%s)", rc, czk_cuda_last_error());
    return ctx;
}

static inline czk_cuda_ctx *tu_ctx(unsigned max_log_n, size_t max_msm_n, int g2)
{
    return tu_ctx_curves(max_log_n, max_msm_n, g2, 0);
}

static inline unsigned tu_env_uint(const char *name, unsigned dflt)
{
    const char *s = getenv(name);
    return s && *s ? (unsigned)strtoul(s, NULL, 0) : dflt;
}

#endif
