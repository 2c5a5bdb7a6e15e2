/*
 * test_util.h — what the C tests share: CHECK, which reports the failing
 * expression (and an optional printf-style message), DIE for a failure the
 * test cannot go on from, and a seeded splitmix64 generator whose seed comes
 * from CZK_TEST_SEED or the clock and is printed, so a failing run can be
 * replayed.  Header-only (each test is one program); include it as
 * "tests/common/test_util.h".
 *
 * CHECK(cond) or CHECK(cond, "fmt", ...): by default a failure is counted
 * (t_failures; the test exits 1 at its end when it is nonzero) and the test
 * goes on, so one run reports every mismatch.  Suites whose later steps
 * depend on the earlier ones (ipc, journal, backend, cuda) define
 * T_STOP_AT_FAILURE before the first include: CHECK then exits 1 at once,
 * naming the process (forked children report their own failures).
 */
/* a stopping suite's header included after another that counts: CHECK would count */
#if defined(T_STOP_AT_FAILURE) && defined(T_UTIL_STOPS) && !T_UTIL_STOPS
#error "tests/common/test_util.h was first included without T_STOP_AT_FAILURE"
#endif
#ifndef CZK_TESTS_COMMON_TEST_UTIL_H
#define CZK_TESTS_COMMON_TEST_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef T_STOP_AT_FAILURE
#define T_UTIL_STOPS 1
#else
#define T_UTIL_STOPS 0
#endif

static int t_failures;

/* CHECK's report: "file:line: check failed: expr[: message]"; fmt is " "
 * followed by the caller's format (so that CHECK(cond) needs none) */
static void t_check_failed_(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), unused));
static void t_check_failed_(const char *file, int line, const char *expr, const char *fmt, ...)
{
    if (T_UTIL_STOPS || t_failures < 20) {
        fprintf(stderr, "%s:%d: check failed: %s", file, line, expr);
        if (fmt[1]) {
            va_list ap;
            va_start(ap, fmt);
            fputc(':', stderr);
            vfprintf(stderr, fmt, ap);
            va_end(ap);
        }
        if (T_UTIL_STOPS)
            fprintf(stderr, " (pid %d)", (int)getpid());
        fputc('\n', stderr);
    }
    t_failures++;
    if (T_UTIL_STOPS)
        exit(1);
}

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond))                                                                      \
            t_check_failed_(__FILE__, __LINE__, #cond, " " __VA_ARGS__);                  \
    } while (0)

/* a failure the test cannot go on from: report it and exit 1 */
#define DIE(...)                                                                          \
    do {                                                                                  \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                   \
        fprintf(stderr, __VA_ARGS__);                                                     \
        fprintf(stderr, "\n");                                                            \
        exit(1);                                                                          \
    } while (0)

/* one splitmix64 step of *state (tests that keep their own streams) */
static inline uint64_t t_splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t t_rng_state;

static inline uint64_t t_rand64(void) { return t_splitmix(&t_rng_state); }

/* seed from CZK_TEST_SEED or the clock; printed so a failure can be replayed */
static inline void t_seed(const char *name)
{
    const char *s = getenv("CZK_TEST_SEED");
    t_rng_state = s ? strtoull(s, NULL, 0) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
    printf("%s: seed 0x%llx (set CZK_TEST_SEED to replay)\n", name, (unsigned long long)t_rng_state);
    fflush(stdout); /* before a test forks */
}

#endif
