/*
 * points.h — test and benchmark inputs on the curves: n distinct affine
 * points x, x + q, x + 2q, ... (one Jacobian walk, one batch conversion).
 * Used by tests/msm/test_msm_ifma.c and bench/core/bench_core.c; the callers
 * pick x and q (random multiples of the generator) and mix in their own
 * repeats and negations.  Exits with status 2 when out of memory.
 */
#ifndef CZK_TESTS_COMMON_POINTS_H
#define CZK_TESTS_COMMON_POINTS_H

#include <stdlib.h>

#include "common/crypto/curve.h"

static inline czk_g1_aff *t_g1_walk(size_t n, const czk_g1 *x0, const czk_g1 *q)
{
    czk_g1_aff *b = malloc(n * sizeof(*b));
    czk_g1 *p = malloc(n * sizeof(*p)), x = *x0;
    czk_fp *scratch = malloc(n * sizeof(czk_fp));

    if (!b || !p || !scratch)
        exit(2);
    for (size_t i = 0; i < n; i++) {
        p[i] = x;
        czk_g1_add(&x, &x, q);
    }
    czk_g1_batch_to_aff(b, p, n, scratch);
    free(p);
    free(scratch);
    return b;
}

static inline czk_g2_aff *t_g2_walk(size_t n, const czk_g2 *x0, const czk_g2 *q)
{
    czk_g2_aff *b = malloc(n * sizeof(*b));
    czk_g2 *p = malloc(n * sizeof(*p)), x = *x0;
    czk_fp2 *scratch = malloc(n * sizeof(czk_fp2));

    if (!b || !p || !scratch)
        exit(2);
    for (size_t i = 0; i < n; i++) {
        p[i] = x;
        czk_g2_add(&x, &x, q);
    }
    czk_g2_batch_to_aff(b, p, n, scratch);
    free(p);
    free(scratch);
    return b;
}

#endif
