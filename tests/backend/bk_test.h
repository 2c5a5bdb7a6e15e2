/*
 * bk_test.h — what the backend and trace tests share: a CHECK macro that
 * prints the location and message and exits 1 at the first failure, and a
 * xorshift64 generator over rng (each test seeds rng itself, nonzero).
 */
#ifndef CZK_TESTS_BACKEND_BK_TEST_H
#define CZK_TESTS_BACKEND_BK_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (!(cond)) {                                                        \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                     \
            fprintf(stderr, "\n");                                            \
            exit(1);                                                          \
        }                                                                     \
    } while (0)

static uint64_t rng;

static inline uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

#endif
