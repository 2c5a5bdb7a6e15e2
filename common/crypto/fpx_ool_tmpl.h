/*
 * fpx_ool_tmpl.h — the out-of-line part of fpx_tmpl.h: the Fp and Fp2
 * products the large MSM loops call, and the array wrappers of the tests
 * and benchmarks.  Included by fpx_tmpl.h itself, with its parameters,
 * when the includer defines FPX_DEFINE_OOL: fpx8.c (BLS12-381) and
 * bn254_fpx8.c (BN254) do, through CZK_FPX8_DEFINE / CZK_BN254_FPX8_DEFINE.
 * Needs <errno.h>.  Without the Fp2 part under FPX_NO_FP2.
 */

#ifdef CZK_HAVE_FPX8

CZK_IFMA void FPX(mul_ool)(FPX_T *r, const FPX_T *a, const FPX_T *b) { FPX(mul)(r, a, b); }
CZK_IFMA void FPX(mul_lazy_ool)(FPX_T *r, const FPX_T *a, const FPX_T *b) { FPX(mul_lazy)(r, a, b); }
/* r = a^2 through the product code (FPX(sqr) is the inline squaring) */
CZK_IFMA void FPX(sqr_ool)(FPX_T *r, const FPX_T *a) { FPX(mul)(r, a, a); }

#ifndef FPX_NO_FP2
/* (a0 + a1 u)(b0 + b1 u) = a0 b0 - a1 b1 + ((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) u;
 * the lazy sums are below 2q, their product below 4 q^2 < q R */
CZK_IFMA void FP2X(mul_ool)(FP2X_T *r, const FP2X_T *a, const FP2X_T *b)
{
    FPX_T v0, v1, s, t;

    FPX(mul_ool)(&v0, &a->c0, &b->c0);
    FPX(mul_ool)(&v1, &a->c1, &b->c1);
    FPX(add_lazy)(&s, &a->c0, &a->c1);
    FPX(add_lazy)(&t, &b->c0, &b->c1);
    FPX(mul_ool)(&s, &s, &t);
    FPX(sub)(&s, &s, &v0);
    FPX(sub)(&r->c1, &s, &v1);
    FPX(sub)(&r->c0, &v0, &v1);
}

/* (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u; the sum is below 2q, the
 * difference a product operand (FPX(sub_op)) */
CZK_IFMA void FP2X(sqr_ool)(FP2X_T *r, const FP2X_T *a)
{
    FPX_T s, d, p;

    FPX(add_lazy)(&s, &a->c0, &a->c1);
    FPX(sub_op)(&d, &a->c0, &a->c1);
    FPX(mul_ool)(&p, &a->c0, &a->c1);
    FPX(mul_ool)(&r->c0, &s, &d);
    FPX(add)(&r->c1, &p, &p);
}
#endif

/* two independent 8-lane chains per step, as the MSM flush interleaves them */
CZK_IFMA static void FPX(mul_n_)(FPX_FE *r, const FPX_FE *a, const FPX_FE *b, size_t n, unsigned reps)
{
    size_t i;
    unsigned k;

    for (i = 0; i + 16 <= n; i += 16) {
        FPX_T x0, y0, x1, y1;
        FPX(load)(&x0, a + i);
        FPX(load)(&y0, b + i);
        FPX(load)(&x1, a + i + 8);
        FPX(load)(&y1, b + i + 8);
        for (k = 0; k < reps; k++) {
            FPX(mul)(&x0, &x0, &y0);
            FPX(mul)(&x1, &x1, &y1);
        }
        FPX(store)(r + i, &x0);
        FPX(store)(r + i + 8, &x1);
    }
    for (; i < n; i += 8) {
        FPX_T x, y;
        FPX(load)(&x, a + i);
        FPX(load)(&y, b + i);
        for (k = 0; k < reps; k++)
            FPX(mul)(&x, &x, &y);
        FPX(store)(r + i, &x);
    }
}

/* op 0 mul, 1 sqr, 2 add, 3 sub, 4 neg on 8 elements */
CZK_IFMA static void FPX(op8_)(int op, FPX_FE r[8], const FPX_FE a[8], const FPX_FE b[8])
{
    FPX_T x, y;

    FPX(load)(&x, a);
    if (b)
        FPX(load)(&y, b);
    else
        y = x;
    switch (op) {
    case 0: FPX(mul)(&x, &x, &y); break;
    case 1: FPX(sqr)(&x, &x); break;
    case 2: FPX(add)(&x, &x, &y); break;
    case 3: FPX(sub)(&x, &x, &y); break;
    default: FPX(cneg)(&x, &x, 0xff); break;
    }
    FPX(store)(r, &x);
}

#ifndef FPX_NO_FP2
CZK_IFMA static void FP2X(op8_)(int op, FPX_FE2 r[8], const FPX_FE2 a[8], const FPX_FE2 b[8])
{
    FP2X_T x, y;

    FP2X(load)(&x, a);
    if (op == 0) {
        FP2X(load)(&y, b);
        FP2X(mul_ool)(&x, &x, &y);
    } else {
        FP2X(sqr_ool)(&x, &x);
    }
    FP2X(store)(r, &x);
}
#endif

#define FPX_GUARD_()             \
    do {                         \
        if (!czk_fpx8_enabled()) \
            return -ENOTSUP;     \
    } while (0)

int FPX(mul8)(FPX_FE r[8], const FPX_FE a[8], const FPX_FE b[8]) { FPX_GUARD_(); FPX(op8_)(0, r, a, b); return 0; }
int FPX(sqr8)(FPX_FE r[8], const FPX_FE a[8]) { FPX_GUARD_(); FPX(op8_)(1, r, a, NULL); return 0; }
int FPX(add8)(FPX_FE r[8], const FPX_FE a[8], const FPX_FE b[8]) { FPX_GUARD_(); FPX(op8_)(2, r, a, b); return 0; }
int FPX(sub8)(FPX_FE r[8], const FPX_FE a[8], const FPX_FE b[8]) { FPX_GUARD_(); FPX(op8_)(3, r, a, b); return 0; }
int FPX(neg8)(FPX_FE r[8], const FPX_FE a[8]) { FPX_GUARD_(); FPX(op8_)(4, r, a, NULL); return 0; }
#ifndef FPX_NO_FP2
int FP2X(mul8)(FPX_FE2 r[8], const FPX_FE2 a[8], const FPX_FE2 b[8]) { FPX_GUARD_(); FP2X(op8_)(0, r, a, b); return 0; }
int FP2X(sqr8)(FPX_FE2 r[8], const FPX_FE2 a[8]) { FPX_GUARD_(); FP2X(op8_)(1, r, a, NULL); return 0; }
#endif

int FPX(mul_n)(FPX_FE *r, const FPX_FE *a, const FPX_FE *b, size_t n, unsigned reps)
{
    FPX_GUARD_();
    if (n % 8)
        return -EINVAL;
    FPX(mul_n_)(r, a, b, n, reps);
    return 0;
}

#undef FPX_GUARD_

#else /* no x86-64: the scalar code is the only path */

int FPX(mul8)(FPX_FE r[8], const FPX_FE a[8], const FPX_FE b[8]) { (void)r; (void)a; (void)b; return -ENOTSUP; }
int FPX(sqr8)(FPX_FE r[8], const FPX_FE a[8]) { (void)r; (void)a; return -ENOTSUP; }
int FPX(add8)(FPX_FE r[8], const FPX_FE a[8], const FPX_FE b[8]) { (void)r; (void)a; (void)b; return -ENOTSUP; }
int FPX(sub8)(FPX_FE r[8], const FPX_FE a[8], const FPX_FE b[8]) { (void)r; (void)a; (void)b; return -ENOTSUP; }
int FPX(neg8)(FPX_FE r[8], const FPX_FE a[8]) { (void)r; (void)a; return -ENOTSUP; }
#ifndef FPX_NO_FP2
int FP2X(mul8)(FPX_FE2 r[8], const FPX_FE2 a[8], const FPX_FE2 b[8]) { (void)r; (void)a; (void)b; return -ENOTSUP; }
int FP2X(sqr8)(FPX_FE2 r[8], const FPX_FE2 a[8]) { (void)r; (void)a; return -ENOTSUP; }
#endif
int FPX(mul_n)(FPX_FE *r, const FPX_FE *a, const FPX_FE *b, size_t n, unsigned reps)
{ (void)r; (void)a; (void)b; (void)n; (void)reps; return -ENOTSUP; }

#endif
