/*
 * test_util.h — what the C tests share: a CHECK macro that reports the failing
 * expression and counts failures (the test exits 1 when t_failures != 0), DIE
 * for a failure the test cannot go on from, and a seeded splitmix64 generator
 * whose seed comes from CZK_TEST_SEED or the clock and is printed, so a
 * failing run can be replayed.  Header-only (each
 * test is one program); include it as "tests/common/test_util.h".
 */
#ifndef CZK_TESTS_COMMON_TEST_UTIL_H
#define CZK_TESTS_COMMON_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int t_failures;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            if (t_failures++ < 20) {                                                      \
                fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);  \
                fprintf(stderr, __VA_ARGS__);                                             \
                fprintf(stderr, "\n");                                                    \
            }                                                                             \
        }                                                                                 \
    } while (0)

/* a failure the test cannot go on from: report it and exit 1 */
#define DIE(...)                                                                          \
    do {                                                                                  \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                   \
        fprintf(stderr, __VA_ARGS__);                                                     \
        fprintf(stderr, "\n");                                                            \
        exit(1);                                                                          \
    } while (0)

static uint64_t t_rng_state;

static inline uint64_t t_rand64(void)
{
    uint64_t z = (t_rng_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* seed from CZK_TEST_SEED or the clock; printed so a failure can be replayed */
static inline void t_seed(const char *name)
{
    const char *s = getenv("CZK_TEST_SEED");
    t_rng_state = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    printf("%s: seed 0x%llx (set CZK_TEST_SEED to replay)\n", name, (unsigned long long)t_rng_state);
}

#endif
