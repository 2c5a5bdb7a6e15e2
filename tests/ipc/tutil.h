/*
 * tutil.h — what the ipc and journal tests share: tests/common/test_util.h
 * with CHECK exiting at the first failure (T_STOP_AT_FAILURE: later steps
 * depend on earlier ones, and forked children report their own), CHECK_RC for
 * calls that return a negative errno, and random sizes, bytes and patterns
 * from test_util.h's seeded generator (CZK_TEST_SEED replays a run).
 */
#ifndef CZK_TESTS_IPC_TUTIL_H
#define CZK_TESTS_IPC_TUTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define T_STOP_AT_FAILURE
#include "tests/common/test_util.h"

#define CHECK_RC(expr)                                                                                      \
    do {                                                                                                    \
        int rc_ = (expr);                                                                                   \
        if (rc_ < 0) {                                                                                      \
            fprintf(stderr, "%s:%d: %s failed with %d (pid %d)\n", __FILE__, __LINE__, #expr, rc_, (int)getpid()); \
            exit(1);                                                                                        \
        }                                                                                                   \
    } while (0)

static inline uint64_t t_range(uint64_t lo, uint64_t hi) /* inclusive */
{
    if (hi - lo == UINT64_MAX)
        return t_rand64();
    return lo + t_rand64() % (hi - lo + 1);
}

static inline void t_fill(void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)t_rand64();
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
