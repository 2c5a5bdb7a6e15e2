/*
 * curve_oracle.h — czk's affine G1 / G2 points (common/crypto/curve.h) to and
 * from points of the GMP oracle (tests/curve/oracle.h: plain integers, G1 as
 * Fp2 points with zero c1 parts), for the tests that check the curve code
 * against it.  Header-only; the caller calls o_init() first.
 */
#ifndef CZK_TESTS_COMMON_CURVE_ORACLE_H
#define CZK_TESTS_COMMON_CURVE_ORACLE_H

#include <string.h>

#include "common/crypto/curve.h"
#include "tests/curve/oracle.h"

static inline void g1_to_o(o_pt *o, const czk_g1_aff *a)
{
    o->inf = czk_g1_aff_is_inf(a);
    o_from_mont(o->x.a, a->x.l);
    mpz_set_ui(o->x.b, 0);
    o_from_mont(o->y.a, a->y.l);
    mpz_set_ui(o->y.b, 0);
}

static inline void g2_to_o(o_pt *o, const czk_g2_aff *a)
{
    o->inf = czk_g2_aff_is_inf(a);
    o_from_mont(o->x.a, a->x.c0.l);
    o_from_mont(o->x.b, a->x.c1.l);
    o_from_mont(o->y.a, a->y.c0.l);
    o_from_mont(o->y.b, a->y.c1.l);
}

/* the oracle's infinity becomes the all-zero affine point */
static inline void g1_from_o(czk_g1_aff *a, const o_pt *o)
{
    memset(a, 0, sizeof(*a));
    if (o->inf)
        return;
    o_to_mont(a->x.l, o->x.a);
    o_to_mont(a->y.l, o->y.a);
}

static inline void g2_from_o(czk_g2_aff *a, const o_pt *o)
{
    memset(a, 0, sizeof(*a));
    if (o->inf)
        return;
    o_to_mont(a->x.c0.l, o->x.a);
    o_to_mont(a->x.c1.l, o->x.b);
    o_to_mont(a->y.c0.l, o->y.a);
    o_to_mont(a->y.c1.l, o->y.b);
}

#endif
