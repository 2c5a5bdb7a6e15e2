/*
 * clock.h — the two clocks czk reads, in nanoseconds.
 *
 * CLOCK_MONOTONIC is the same clock in every process of a host (traces,
 * durations, deadlines); CLOCK_REALTIME is for timestamps shown to people
 * and stored in files.
 */
#ifndef CZK_BASE_CLOCK_H
#define CZK_BASE_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t czk_clock_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t czk_mono_ns(void) { return czk_clock_ns(CLOCK_MONOTONIC); }
static inline uint64_t czk_real_ns(void) { return czk_clock_ns(CLOCK_REALTIME); }

#endif
