/*
 * tutil.h — tiny helpers shared by the ipc tests: CHECK macros that print the
 * failing expression and exit 1, and a seeded xorshift generator (the seed is
 * printed so a failure can be replayed with CZK_TEST_SEED=<seed>).
 */
#ifndef CZK_TESTS_IPC_TUTIL_H
#define CZK_TESTS_IPC_TUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CHECK(cond)                                                                           \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "%s:%d: check failed: %s (pid %d)\n", __FILE__, __LINE__, #cond, \
                    (int)getpid());                                                           \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

#define CHECK_RC(expr)                                                                                      \
    do {                                                                                                    \
        int rc_ = (expr);                                                                                   \
        if (rc_ < 0) {                                                                                      \
            fprintf(stderr, "%s:%d: %s failed with %d (pid %d)\n", __FILE__, __LINE__, #expr, rc_, (int)getpid()); \
            exit(1);                                                                                        \
        }                                                                                                   \
    } while (0)

static uint64_t t_rng_state;

static inline void t_seed(const char *test)
{
    const char *env = getenv("CZK_TEST_SEED");
    t_rng_state = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    if (!t_rng_state)
        t_rng_state = 88172645463325252ull;
    fprintf(stderr, "%s: seed %llu (set CZK_TEST_SEED to replay)\n", test, (unsigned long long)t_rng_state);
}

static inline uint64_t t_rand(void)
{
    uint64_t x = t_rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return t_rng_state = x;
}

static inline uint64_t t_range(uint64_t lo, uint64_t hi) /* inclusive */
{
    if (hi - lo == UINT64_MAX)
        return t_rand();
    return lo + t_rand() % (hi - lo + 1);
}

static inline void t_fill(void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)t_rand();
}

/* deterministic pattern from a seed, for checking shared-memory contents */
static inline void t_pattern(void *p, size_t n, uint64_t seed)
{
    uint64_t *w = p;
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < n / 8; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        w[i] = x;
    }
}

#endif
