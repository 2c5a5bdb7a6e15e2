/*
 * fpx8.c — out-of-line copies of the 8-lane AVX-512 IFMA Fp and Fp2
 * products (fpx8.h), for the large MSM loops, and array wrappers for the
 * tests and benchmarks.  The run-time dispatch, czk_fpx8_enabled(), is in
 * the header; tests and benchmarks set CZK_NO_IFMA=1 to compare the vector
 * path with the scalar one.
 */
#include "common/crypto/fpx8.h"

#include <errno.h>

#ifdef CZK_HAVE_FPX8

CZK_IFMA static void fpx8_mul8(czk_fp r[8], const czk_fp a[8], const czk_fp b[8])
{
    czk_fpx8 x, y;
    czk_fpx8_load(&x, a);
    czk_fpx8_load(&y, b);
    czk_fpx8_mul(&x, &x, &y);
    czk_fpx8_store(r, &x);
}

CZK_IFMA static void fpx8_sqr8(czk_fp r[8], const czk_fp a[8])
{
    czk_fpx8 x;
    czk_fpx8_load(&x, a);
    czk_fpx8_sqr(&x, &x);
    czk_fpx8_store(r, &x);
}

CZK_IFMA static void fpx8_add8(czk_fp r[8], const czk_fp a[8], const czk_fp b[8])
{
    czk_fpx8 x, y;
    czk_fpx8_load(&x, a);
    czk_fpx8_load(&y, b);
    czk_fpx8_add(&x, &x, &y);
    czk_fpx8_store(r, &x);
}

CZK_IFMA static void fpx8_sub8(czk_fp r[8], const czk_fp a[8], const czk_fp b[8])
{
    czk_fpx8 x, y;
    czk_fpx8_load(&x, a);
    czk_fpx8_load(&y, b);
    czk_fpx8_sub(&x, &x, &y);
    czk_fpx8_store(r, &x);
}

CZK_IFMA static void fpx8_neg8(czk_fp r[8], const czk_fp a[8])
{
    czk_fpx8 x;
    czk_fpx8_load(&x, a);
    czk_fpx8_cneg(&x, &x, 0xff);
    czk_fpx8_store(r, &x);
}

/* two independent 8-lane chains per step, as the MSM flush interleaves them */
CZK_IFMA static void fpx8_mul_n(czk_fp *r, const czk_fp *a, const czk_fp *b, size_t n, unsigned reps)
{
    size_t i;
    unsigned k;

    for (i = 0; i + 16 <= n; i += 16) {
        czk_fpx8 x0, y0, x1, y1;
        czk_fpx8_load(&x0, a + i);
        czk_fpx8_load(&y0, b + i);
        czk_fpx8_load(&x1, a + i + 8);
        czk_fpx8_load(&y1, b + i + 8);
        for (k = 0; k < reps; k++) {
            czk_fpx8_mul(&x0, &x0, &y0);
            czk_fpx8_mul(&x1, &x1, &y1);
        }
        czk_fpx8_store(r + i, &x0);
        czk_fpx8_store(r + i + 8, &x1);
    }
    for (; i < n; i += 8) {
        czk_fpx8 x, y;
        czk_fpx8_load(&x, a + i);
        czk_fpx8_load(&y, b + i);
        for (k = 0; k < reps; k++)
            czk_fpx8_mul(&x, &x, &y);
        czk_fpx8_store(r + i, &x);
    }
}

CZK_IFMA void czk_fpx8_mul_ool(czk_fpx8 *r, const czk_fpx8 *a, const czk_fpx8 *b) { czk_fpx8_mul(r, a, b); }
CZK_IFMA void czk_fpx8_mul_lazy_ool(czk_fpx8 *r, const czk_fpx8 *a, const czk_fpx8 *b) { czk_fpx8_mul_lazy(r, a, b); }
CZK_IFMA void czk_fpx8_sqr_ool(czk_fpx8 *r, const czk_fpx8 *a) { czk_fpx8_mul(r, a, a); }

/* (a0 + a1 u)(b0 + b1 u) = a0 b0 - a1 b1 + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) u */
CZK_IFMA void czk_fp2x8_mul_ool(czk_fp2x8 *r, const czk_fp2x8 *a, const czk_fp2x8 *b)
{
    czk_fpx8 v0, v1, s, t;

    czk_fpx8_mul_ool(&v0, &a->c0, &b->c0);
    czk_fpx8_mul_ool(&v1, &a->c1, &b->c1);
    czk_fpx8_add_lazy(&s, &a->c0, &a->c1); /* below 2q: no reduction needed */
    czk_fpx8_add_lazy(&t, &b->c0, &b->c1);
    czk_fpx8_mul_ool(&s, &s, &t);
    czk_fpx8_sub(&s, &s, &v0);
    czk_fpx8_sub(&r->c1, &s, &v1);
    czk_fpx8_sub(&r->c0, &v0, &v1);
}

/* (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u */
CZK_IFMA void czk_fp2x8_sqr_ool(czk_fp2x8 *r, const czk_fp2x8 *a)
{
    czk_fpx8 s, d, p;

    czk_fpx8_add_lazy(&s, &a->c0, &a->c1); /* below 2q */
    czk_fpx8_sub_lazy(&d, &a->c0, &a->c1); /* below 3q: s d < 6 q^2 */
    czk_fpx8_mul_ool(&p, &a->c0, &a->c1);
    czk_fpx8_mul_ool(&r->c0, &s, &d);
    czk_fpx8_add(&r->c1, &p, &p);
}

#define FPX8_GUARD()                   \
    do {                               \
        if (!czk_fpx8_enabled())       \
            return -ENOTSUP;           \
    } while (0)

int czk_fpx8_mul8(czk_fp r[8], const czk_fp a[8], const czk_fp b[8]) { FPX8_GUARD(); fpx8_mul8(r, a, b); return 0; }
int czk_fpx8_sqr8(czk_fp r[8], const czk_fp a[8]) { FPX8_GUARD(); fpx8_sqr8(r, a); return 0; }
int czk_fpx8_add8(czk_fp r[8], const czk_fp a[8], const czk_fp b[8]) { FPX8_GUARD(); fpx8_add8(r, a, b); return 0; }
int czk_fpx8_sub8(czk_fp r[8], const czk_fp a[8], const czk_fp b[8]) { FPX8_GUARD(); fpx8_sub8(r, a, b); return 0; }
int czk_fpx8_neg8(czk_fp r[8], const czk_fp a[8]) { FPX8_GUARD(); fpx8_neg8(r, a); return 0; }

int czk_fpx8_mul_n(czk_fp *r, const czk_fp *a, const czk_fp *b, size_t n, unsigned reps)
{
    FPX8_GUARD();
    if (n % 8)
        return -EINVAL;
    fpx8_mul_n(r, a, b, n, reps);
    return 0;
}

#else /* no x86-64: the scalar code is the only path */

int czk_fpx8_mul8(czk_fp r[8], const czk_fp a[8], const czk_fp b[8]) { (void)r; (void)a; (void)b; return -ENOTSUP; }
int czk_fpx8_sqr8(czk_fp r[8], const czk_fp a[8]) { (void)r; (void)a; return -ENOTSUP; }
int czk_fpx8_add8(czk_fp r[8], const czk_fp a[8], const czk_fp b[8]) { (void)r; (void)a; (void)b; return -ENOTSUP; }
int czk_fpx8_sub8(czk_fp r[8], const czk_fp a[8], const czk_fp b[8]) { (void)r; (void)a; (void)b; return -ENOTSUP; }
int czk_fpx8_neg8(czk_fp r[8], const czk_fp a[8]) { (void)r; (void)a; return -ENOTSUP; }
int czk_fpx8_mul_n(czk_fp *r, const czk_fp *a, const czk_fp *b, size_t n, unsigned reps)
{ (void)r; (void)a; (void)b; (void)n; (void)reps; return -ENOTSUP; }

#endif
