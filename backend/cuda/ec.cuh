/*
 * ec.cuh — G1/G2 point arithmetic on the device, for MSM buckets, as
 * templates over the coordinate field: BLS12-381 (fp_t, fp2_t) and BN254
 * (bn_fp_t, bn_fp2_t), both y^2 = x^3 + b with a = 0 (b is never used).
 *
 * Affine points are the zkey layout (x then y, Montgomery, all-zero bytes =
 * infinity), so a czk_g1_aff / czk_g2_aff array is an aff_t<fp_t> /
 * aff_t<fp2_t> array on the device (czk_bn254_g1_aff / _g2_aff: aff_t<bn_fp_t>
 * / aff_t<bn_fp2_t>).  Buckets use XYZZ coordinates
 * (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2; ZZ == 0 is infinity) with the EFD
 * formulas madd-2008-s, add-2008-s and dbl-2008-s-1 for a = 0; every
 * addition handles the doubling and the P + (-P) cases.  Results leave as
 * Jacobian (X*ZZ^2, Y*ZZZ^2, ZZZ), the czk_g1 / czk_g2 layout.
 * Everything is inlined into the kernels: out-of-line (__noinline__) copies of
 * the additions, called by threads of one warp that took different branches
 * (P + (-P) in one thread, a plain addition in the others), made a BN254 G2
 * window reduction fault with an illegal memory access under CUDA 13.0
 * (docs/bench-gpu.md, "The BN254 G2 fault"); tests/cuda/test_cuda_ec checks
 * each branch, alone and diverging within a warp.
 */
#ifndef CZK_CUDA_EC_CUH
#define CZK_CUDA_EC_CUH

#include "backend/cuda/ff.cuh"

template <class F> struct aff_t { F x, y; };
template <class F> struct xyzz_t { F x, y, zz, zzz; };
template <class F> struct jac_t { F x, y, z; };

static_assert(sizeof(aff_t<fp_t>) == 96, "G1 affine layout");
static_assert(sizeof(aff_t<fp2_t>) == 192, "G2 affine layout");
static_assert(sizeof(jac_t<fp_t>) == 144, "G1 Jacobian layout");
static_assert(sizeof(aff_t<bn_fp_t>) == 64, "BN254 G1 affine layout");
static_assert(sizeof(aff_t<bn_fp2_t>) == 128, "BN254 G2 affine layout");

template <class F> FF_DEV void xyzz_set_inf(xyzz_t<F> &p)
{
    set_zero(p.x);
    set_zero(p.y);
    set_zero(p.zz);
    set_zero(p.zzz);
}
template <class F> FF_DEV bool xyzz_is_inf(const xyzz_t<F> &p) { return is_zero(p.zz); }
template <class F> FF_DEV bool aff_is_inf(const aff_t<F> &p) { return is_zero(p.x) && is_zero(p.y); }

/* dbl-2008-s-1: p <- 2p */
template <class F> FF_DEV void xyzz_dbl(xyzz_t<F> &p)
{
    if (is_zero(p.zz))
        return;
    F u, v, w, s, m, t;
    dbl(u, p.y);            /* U = 2Y */
    sqr(v, u);              /* V = U^2 */
    mul(w, u, v);           /* W = U V */
    mul(s, p.x, v);         /* S = X V */
    sqr(m, p.x);
    dbl(t, m);
    add(m, m, t);           /* M = 3 X^2 */
    sqr(t, m);
    sub(t, t, s);
    sub(t, t, s);           /* X3 = M^2 - 2S */
    sub(s, s, t);
    mul(s, m, s);           /* M (S - X3) */
    mul(u, w, p.y);
    sub(p.y, s, u);         /* Y3 = M (S - X3) - W Y */
    p.x = t;
    mul(p.zz, p.zz, v);
    mul(p.zzz, p.zzz, w);
}

/* mdbl-2008-s-1 from an affine point: p <- 2q */
template <class F> FF_DEV void xyzz_dbl_aff(xyzz_t<F> &p, const aff_t<F> &q)
{
    F u, v, w, s, m, t;
    dbl(u, q.y);
    sqr(v, u);
    mul(w, u, v);
    mul(s, q.x, v);
    sqr(m, q.x);
    dbl(t, m);
    add(m, m, t);
    sqr(t, m);
    sub(t, t, s);
    sub(t, t, s);
    sub(s, s, t);
    mul(s, m, s);
    mul(u, w, q.y);
    sub(p.y, s, u);
    p.x = t;
    p.zz = v;
    p.zzz = w;
}

/* madd-2008-s: p <- p + q, q affine and not infinity */
template <class F> FF_DEV void xyzz_add_aff(xyzz_t<F> &p, const aff_t<F> &q)
{
    if (is_zero(p.zz)) {
        p.x = q.x;
        p.y = q.y;
        set_one(p.zz);
        set_one(p.zzz);
        return;
    }
    F pp, r, t, ppp;
    mul(pp, q.x, p.zz);
    sub(pp, pp, p.x);       /* P = U2 - X1 */
    mul(r, q.y, p.zzz);
    sub(r, r, p.y);         /* R = S2 - Y1 */
    if (is_zero(pp)) {
        if (is_zero(r))
            xyzz_dbl_aff(p, q);
        else
            xyzz_set_inf(p);
        return;
    }
    /* X1 is overwritten by Q = X1 PP and P by R (Q - X3): one temporary fewer */
    sqr(t, pp);             /* PP */
    mul(ppp, pp, t);        /* PPP */
    mul(p.x, p.x, t);       /* Q = X1 PP */
    mul(p.zz, p.zz, t);     /* ZZ3 = ZZ1 PP */
    mul(p.zzz, p.zzz, ppp); /* ZZZ3 = ZZZ1 PPP */
    sqr(t, r);
    sub(t, t, ppp);
    sub(t, t, p.x);
    sub(t, t, p.x);         /* X3 = R^2 - PPP - 2Q */
    sub(pp, p.x, t);
    mul(pp, r, pp);         /* R (Q - X3) */
    mul(ppp, p.y, ppp);     /* Y1 PPP */
    sub(p.y, pp, ppp);
    p.x = t;
}

/* add-2008-s: p <- p + q */
template <class F> FF_DEV void xyzz_add(xyzz_t<F> &p, const xyzz_t<F> &q)
{
    if (is_zero(q.zz))
        return;
    if (is_zero(p.zz)) {
        p = q;
        return;
    }
    F u1, s1, pp, r, t, ppp;
    mul(u1, p.x, q.zz);     /* U1 */
    mul(pp, q.x, p.zz);     /* U2 */
    sub(pp, pp, u1);        /* P = U2 - U1 */
    mul(s1, p.y, q.zzz);    /* S1 */
    mul(r, q.y, p.zzz);     /* S2 */
    sub(r, r, s1);          /* R = S2 - S1 */
    if (is_zero(pp)) {
        if (is_zero(r))
            xyzz_dbl(p);
        else
            xyzz_set_inf(p);
        return;
    }
    sqr(t, pp);             /* PP */
    mul(ppp, pp, t);        /* PPP */
    mul(p.zz, p.zz, q.zz);
    mul(p.zz, p.zz, t);     /* ZZ3 = ZZ1 ZZ2 PP */
    mul(p.zzz, p.zzz, q.zzz);
    mul(p.zzz, p.zzz, ppp); /* ZZZ3 = ZZZ1 ZZZ2 PPP */
    mul(u1, u1, t);         /* Q = U1 PP */
    sqr(t, r);
    sub(t, t, ppp);
    sub(t, t, u1);
    sub(t, t, u1);          /* X3 = R^2 - PPP - 2Q */
    sub(u1, u1, t);
    mul(u1, r, u1);         /* R (Q - X3) */
    mul(s1, s1, ppp);       /* S1 PPP */
    sub(p.y, u1, s1);
    p.x = t;
}

/* Jacobian (X ZZ^2, Y ZZZ^2, ZZZ); infinity leaves as (1, 1, 0) */
template <class F> FF_DEV void xyzz_to_jac(jac_t<F> &r, const xyzz_t<F> &p)
{
    if (is_zero(p.zz)) {
        set_one(r.x);
        set_one(r.y);
        set_zero(r.z);
        return;
    }
    F t;
    sqr(t, p.zz);
    mul(r.x, p.x, t);
    sqr(t, p.zzz);
    mul(r.y, p.y, t);
    r.z = p.zzz;
}

/* vectorised global loads/stores of whole points (16-byte aligned arrays) */
template <class T> FF_DEV T ld_global(const T *p)
{
    static_assert(sizeof(T) % 16 == 0, "16-byte multiple");
    T r;
    const uint4 *s = reinterpret_cast<const uint4 *>(p);
    uint4 *d = reinterpret_cast<uint4 *>(&r);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++)
        d[i] = __ldg(s + i);
    return r;
}
template <class T> FF_DEV void st_global(T *p, const T &v)
{
    static_assert(sizeof(T) % 16 == 0, "16-byte multiple");
    uint4 *d = reinterpret_cast<uint4 *>(p);
    const uint4 *s = reinterpret_cast<const uint4 *>(&v);
#pragma unroll
    for (int i = 0; i < (int)(sizeof(T) / 16); i++)
        d[i] = s[i];
}

#endif
