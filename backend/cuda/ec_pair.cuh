/*
 * ec_pair.cuh — G2 bucket additions with each Fp2 value spread over the two
 * threads of a lane pair (lane 2k holds component c0, lane 2k+1 holds c1).
 *
 * One thread holding a whole XYZZ G2 point needs more than the 255 registers
 * a thread can have (4 Fp2 coordinates, the affine input and the Karatsuba
 * temporaries), so the one-thread G2 kernels spill and run at 8 warps per SM.
 * Split over a pair, each thread holds G1-sized state.  A product costs each
 * thread two Fp multiplications (schoolbook: c0 = a0 b0 - a1 b1 on lane 0,
 * c1 = a1 b0 + a0 b1 on lane 1) after exchanging operands with __shfl_xor; a
 * square costs one ((a0+a1)(a0-a1) on lane 0, 2 a0 a1 on lane 1).  Branch
 * conditions (is zero) are combined over the pair, so both threads of a pair
 * always take the same path; shuffles use the pair's two-lane mask, so pairs
 * in one warp may diverge from each other.  The fastest form (p2_mul2, the
 * default G2 first level): each lane computes a whole Fp2 product of an
 * independent pair by Karatsuba with lazy reduction, three plain products and
 * two reductions.
 * Everything is a template over the base field B of Fp2 (fp_t for
 * BLS12-381, bn_fp_t for BN254).
 */
#ifndef CZK_CUDA_EC_PAIR_CUH
#define CZK_CUDA_EC_PAIR_CUH

#include "backend/cuda/ec.cuh"

struct p2ctx {
    unsigned mask; /* the two lanes of this pair */
    unsigned c;    /* component held by this thread: 0 or 1 */
};

FF_DEV p2ctx p2_ctx()
{
    p2ctx x;
    unsigned lane = threadIdx.x & 31;
    x.mask = 3u << (lane & 30u);
    x.c = lane & 1u;
    return x;
}

template <class B> FF_DEV B p2_other(const p2ctx &k, const B &a)
{
    B r;
#pragma unroll
    for (int j = 0; j < ff_traits<B>::N; j++)
        r.v[j] = __shfl_xor_sync(k.mask, a.v[j], 1);
    return r;
}

template <class B> FF_DEV B p2_sel(bool s, const B &a, const B &b)
{
    B r;
#pragma unroll
    for (int j = 0; j < ff_traits<B>::N; j++)
        r.v[j] = s ? a.v[j] : b.v[j];
    return r;
}

/* this lane's component of affine G2 base i (4 Fp words: x.c0 x.c1 y.c0 y.c1) */
template <class B> FF_DEV aff_t<B> p2_ld_aff(const p2ctx &k, const aff_t<fp2x<B>> *bases, uint32_t i)
{
    const B *P = reinterpret_cast<const B *>(bases) + 4 * (size_t)i;
    aff_t<B> p;
    p.x = ld_global(P + k.c);
    p.y = ld_global(P + 2 + k.c);
    return p;
}

/* this lane's component of an XYZZ G2 sum into out[i] */
template <class B> FF_DEV void p2_st_xyzz(const p2ctx &k, xyzz_t<fp2x<B>> *out, uint32_t i, const xyzz_t<B> &acc)
{
    B *O = reinterpret_cast<B *>(out + i);
    st_global(O + k.c, acc.x);
    st_global(O + 2 + k.c, acc.y);
    st_global(O + 4 + k.c, acc.zz);
    st_global(O + 6 + k.c, acc.zzz);
}

/* this lane's component of XYZZ G2 point in[i] */
template <class B> FF_DEV xyzz_t<B> p2_ld_xyzz(const p2ctx &k, const xyzz_t<fp2x<B>> *in, size_t i)
{
    const B *P = reinterpret_cast<const B *>(in + i);
    xyzz_t<B> r;
    r.x = ld_global(P + k.c);
    r.y = ld_global(P + 2 + k.c);
    r.zz = ld_global(P + 4 + k.c);
    r.zzz = ld_global(P + 6 + k.c);
    return r;
}

/* the affine point infinity (all four words zero), agreed over the pair */
template <class B> FF_DEV bool p2_aff_is_inf(const p2ctx &k, const aff_t<B> &p)
{
    unsigned z = (is_zero(p.x) && is_zero(p.y)) ? 1u : 0u;
    return (z & __shfl_xor_sync(k.mask, z, 1)) != 0;
}

/* both components zero */
template <class B> FF_DEV bool p2_is_zero(const p2ctx &k, const B &a)
{
    unsigned z = is_zero(a) ? 1u : 0u;
    return (z & __shfl_xor_sync(k.mask, z, 1)) != 0;
}

/* r = a * b in Fp2 (r may alias a or b): both lanes take b0 and b1 from the
 * pair, then lane c computes a_c b0 and a_(1-c) b1 */
template <class B> FF_DEV void p2_mul(const p2ctx &k, B &r, const B &a, const B &b)
{
    const unsigned base = (threadIdx.x & 31) & ~1u;
    B b0, b1;
#pragma unroll
    for (int j = 0; j < ff_traits<B>::N; j++) {
        b0.v[j] = __shfl_sync(k.mask, b.v[j], base);
        b1.v[j] = __shfl_sync(k.mask, b.v[j], base + 1);
    }
    B x, y;
    mul(x, a, b0);                 /* lane 0: a0 b0, lane 1: a1 b0 */
    mul(y, p2_other(k, a), b1);    /* lane 0: a1 b1, lane 1: a0 b1 */
    B s, d;
    add(s, x, y);
    sub(d, x, y);
    r = p2_sel(k.c != 0, s, d);
}

/* r = a * b in Fp2 with one reduction per lane (r may alias a or b): lane 0
 * c0 = redc(a0 b0 + a1 (p - b1)), lane 1 c1 = redc(a1 b0 + a0 b1), each the
 * sum of two plain products (mul_wide_eo), below 2 p^2 < p 2^(32N), which is
 * mont_redc_eo's bound; a1 (p - b1) = -a1 b1 mod p.  Two plain products and
 * one reduction per lane against p2_mul's two Montgomery products, and two
 * operand exchanges against three. */
template <class B> FF_DEV void p2_mul_lz(const p2ctx &k, B &r, const B &a, const B &b)
{
    constexpr int N = ff_traits<B>::N;
    const bool one = k.c != 0;
    const B ao = p2_other(k, a), bo = p2_other(k, b);
    B nb;
    neg(nb, bo);
    const B y0 = p2_sel(one, bo, b), y1 = p2_sel(one, b, nb);
    uint32_t W[2 * N], X[2 * N];
    mul_wide_eo<N>(W, a.v, y0.v);  /* lane 0: a0 b0, lane 1: a1 b0 */
    mul_wide_eo<N>(X, ao.v, y1.v); /* lane 0: a1 (p - b1), lane 1: a0 b1 */
    add_words<2 * N>(W, W, X);
    mont_redc_eo<N>(r.v, W, ff_traits<B>::mod(), ff_traits<B>::ninv);
}

/* p2_mul_lz (LZ) or p2_mul */
template <bool LZ, class B> FF_DEV void p2_mulx(const p2ctx &k, B &r, const B &a, const B &b)
{
    if (LZ)
        p2_mul_lz(k, r, a, b);
    else
        p2_mul(k, r, a, b);
}

/* r = a^2 in Fp2: lane 0 (a0+a1)(a0-a1), lane 1 2 a0 a1 */
template <class B> FF_DEV void p2_sqr(const p2ctx &k, B &r, const B &a)
{
    const bool one = k.c != 0;
    B ao = p2_other(k, a);
    B s, d;
    add(s, a, ao);
    sub(d, a, ao);
    B x;
    mul(x, p2_sel(one, a, s), p2_sel(one, ao, d));
    B x2;
    dbl(x2, x);
    r = p2_sel(one, x2, x);
}

/* (ra, rb) = (a b, e f) in Fp2 by Karatsuba, two independent products at
 * once: lane 0 computes all of a b and lane 1 all of e f, three Fp
 * multiplications each (x0 y0, x1 y1, (x0 + x1)(y0 + y1)) instead of the four
 * that two p2_mul calls cost each lane.  Lane 0 gets a1, b1 from lane 1 and
 * lane 1 gets e0, f0 from lane 0; afterwards lane 0 sends (a b).c1 and lane 1
 * sends (e f).c0.  Outputs may alias inputs (all are read before either is
 * written).  LAZY: the three products unreduced and two reductions
 * (fp2_mul_lazy), about 2.5 multiplications' worth of multiply instructions
 * instead of 3. */
template <bool LAZY = false, class B>
FF_DEV void p2_mul2(const p2ctx &k, B &ra, B &rb, const B &a, const B &b, const B &e, const B &f)
{
    const bool one = k.c != 0;
    const B rx = p2_other(k, p2_sel(one, a, e)), ry = p2_other(k, p2_sel(one, b, f));
    const B x0 = p2_sel(one, rx, a), x1 = p2_sel(one, e, rx);
    const B y0 = p2_sel(one, ry, b), y1 = p2_sel(one, f, ry);
    B r0, r1;
    if (LAZY) {
        fp2_mul_lazy<ff_traits<B>::N>(r0.v, r1.v, x0.v, x1.v, y0.v, y1.v, ff_traits<B>::mod(), ff_traits<B>::ninv);
    } else {
        B sx, sy, m0, m1, m2;
        add(sx, x0, x1);
        add(sy, y0, y1);
        mul(m0, x0, y0);
        mul(m1, x1, y1);
        mul(m2, sx, sy);
        sub(r0, m0, m1);            /* c0 = x0 y0 - x1 y1 */
        sub(r1, m2, m0);
        sub(r1, r1, m1);            /* c1 = (x0 + x1)(y0 + y1) - x0 y0 - x1 y1 */
    }
    const B rr = p2_other(k, p2_sel(one, r0, r1));
    ra = p2_sel(one, rr, r0);
    rb = p2_sel(one, r1, rr);
}

/* the Montgomery one of Fp2, this thread's component */
template <class B> FF_DEV void p2_set_one(const p2ctx &k, B &r)
{
    set_one(r);
    if (k.c)
        set_zero(r);
}

/* mdbl-2008-s-1 from an affine point: p <- 2q */
template <class B> FF_DEV void p2_xyzz_dbl_aff(const p2ctx &k, xyzz_t<B> &p, const aff_t<B> &q)
{
    B u, v, w, s, m, t;
    dbl(u, q.y);
    p2_sqr(k, v, u);
    p2_mul(k, w, u, v);
    p2_mul(k, s, q.x, v);
    p2_sqr(k, m, q.x);
    dbl(t, m);
    add(m, m, t);
    p2_sqr(k, t, m);
    sub(t, t, s);
    sub(t, t, s);
    sub(s, s, t);
    p2_mul(k, s, m, s);
    p2_mul(k, u, w, q.y);
    sub(p.y, s, u);
    p.x = t;
    p.zz = v;
    p.zzz = w;
}

/* madd-2008-s: p <- p + q, q affine and not infinity (same steps as
 * xyzz_add_aff, with X1 overwritten by Q = X1 PP to save a temporary).
 * KARA 1: the eight products go in four independent pairs through p2_mul2
 * (U2 | S2, PPP | Q, ZZ | ZZZ, R (Q - X3) | Y1 PPP): 14 Fp multiplications
 * per lane instead of 18; KARA 2: the same pairs with lazy reduction
 * (p2_mul2<true>). */
template <int KARA = 0, class B> FF_DEV void p2_xyzz_add_aff(const p2ctx &k, xyzz_t<B> &p, const aff_t<B> &q)
{
    constexpr bool LZ = KARA == 2;
    if (p2_is_zero(k, p.zz)) {
        p.x = q.x;
        p.y = q.y;
        p2_set_one(k, p.zz);
        p2_set_one(k, p.zzz);
        return;
    }
    B pp, r, t, ppp;
    if (KARA) {
        p2_mul2<LZ>(k, pp, r, q.x, p.zz, q.y, p.zzz);
    } else {
        p2_mul(k, pp, q.x, p.zz);
        p2_mul(k, r, q.y, p.zzz);
    }
    sub(pp, pp, p.x);       /* P = U2 - X1 */
    sub(r, r, p.y);         /* R = S2 - Y1 */
    if (p2_is_zero(k, pp)) {
        if (p2_is_zero(k, r))
            p2_xyzz_dbl_aff(k, p, q);
        else
            xyzz_set_inf(p);
        return;
    }
    p2_sqr(k, t, pp);       /* PP */
    if (KARA) {
        p2_mul2<LZ>(k, ppp, p.x, pp, t, p.x, t); /* PPP, Q = X1 PP */
        p2_mul2<LZ>(k, p.zz, p.zzz, p.zz, t, p.zzz, ppp);
    } else {
        p2_mul(k, ppp, pp, t);  /* PPP */
        p2_mul(k, p.x, p.x, t); /* Q = X1 PP */
        p2_mul(k, p.zz, p.zz, t);
        p2_mul(k, p.zzz, p.zzz, ppp);
    }
    p2_sqr(k, t, r);
    sub(t, t, ppp);
    sub(t, t, p.x);
    sub(t, t, p.x);         /* X3 = R^2 - PPP - 2Q */
    sub(pp, p.x, t);
    if (KARA) {
        p2_mul2<LZ>(k, pp, r, r, pp, p.y, ppp); /* R (Q - X3), Y1 PPP */
    } else {
        p2_mul(k, pp, r, pp);   /* R (Q - X3) */
        p2_mul(k, r, p.y, ppp); /* Y1 PPP */
    }
    sub(p.y, pp, r);
    p.x = t;
}

/* dbl-2008-s-1: p <- 2p (p may be infinity), the six products in three
 * Karatsuba pairs (p2_mul2<LZ>: lazily reduced by default) */
template <bool LZ = true, class B> FF_DEV void p2_xyzz_dbl(const p2ctx &k, xyzz_t<B> &p)
{
    if (p2_is_zero(k, p.zz))
        return;
    B u, v, w, s, m, t;
    dbl(u, p.y);                           /* U = 2Y */
    p2_sqr(k, v, u);                       /* V = U^2 */
    p2_mul2<LZ>(k, w, s, u, v, p.x, v);  /* W = U V, S = X V */
    p2_sqr(k, m, p.x);
    dbl(t, m);
    add(m, m, t);                          /* M = 3 X^2 */
    p2_sqr(k, t, m);
    sub(t, t, s);
    sub(t, t, s);                          /* X3 = M^2 - 2S */
    sub(s, s, t);
    p2_mul2<LZ>(k, s, u, m, s, w, p.y);  /* M (S - X3), W Y */
    sub(p.y, s, u);                        /* Y3 = M (S - X3) - W Y */
    p.x = t;
    p2_mul2<LZ>(k, p.zz, p.zzz, p.zz, v, p.zzz, w); /* ZZ3 = ZZ V, ZZZ3 = ZZZ W */
}

/* add-2008-s: p <- p + q (either may be infinity), the twelve products in six
 * Karatsuba pairs (p2_mul2<LZ>); the same steps as xyzz_add */
template <bool LZ = true, class B> FF_DEV void p2_xyzz_add(const p2ctx &k, xyzz_t<B> &p, const xyzz_t<B> &q)
{
    if (p2_is_zero(k, q.zz))
        return;
    if (p2_is_zero(k, p.zz)) {
        p = q;
        return;
    }
    B u1, s1, pp, r, t, ppp;
    p2_mul2<LZ>(k, u1, pp, p.x, q.zz, q.x, p.zz);   /* U1 = X1 ZZ2, U2 = X2 ZZ1 */
    sub(pp, pp, u1);                                   /* P = U2 - U1 */
    p2_mul2<LZ>(k, s1, r, p.y, q.zzz, q.y, p.zzz);  /* S1 = Y1 ZZZ2, S2 = Y2 ZZZ1 */
    sub(r, r, s1);                                     /* R = S2 - S1 */
    if (p2_is_zero(k, pp)) {
        if (p2_is_zero(k, r))
            p2_xyzz_dbl<LZ>(k, p);
        else
            xyzz_set_inf(p);
        return;
    }
    p2_sqr(k, t, pp);                                  /* PP */
    p2_mul2<LZ>(k, ppp, p.zz, pp, t, p.zz, q.zz);   /* PPP = P PP, ZZ1 ZZ2 */
    p2_mul2<LZ>(k, p.zzz, u1, p.zzz, q.zzz, u1, t); /* ZZZ1 ZZZ2, Q = U1 PP */
    p2_mul2<LZ>(k, p.zz, p.zzz, p.zz, t, p.zzz, ppp); /* ZZ3 = ZZ1 ZZ2 PP, ZZZ3 = ZZZ1 ZZZ2 PPP */
    p2_sqr(k, t, r);
    sub(t, t, ppp);
    sub(t, t, u1);
    sub(t, t, u1);                                     /* X3 = R^2 - PPP - 2Q */
    sub(u1, u1, t);
    p2_mul2<LZ>(k, u1, s1, r, u1, s1, ppp);         /* R (Q - X3), S1 PPP */
    sub(p.y, u1, s1);
    p.x = t;
}

#endif
