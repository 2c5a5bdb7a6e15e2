/*
 * msm_reduce_x8_tmpl.h — the bucket running sums of msm_tmpl.h in 8 lanes
 * (AVX-512 IFMA), included by msm_tmpl.h inside its G1 / G2 instance when
 * msm.c defines VX (the 8-lane coordinate type) and its operations:
 * VX_MUL VX_SQR VX_ADD VX_SUB (canonical in and out), VX_BLEND(r, mask, a, b),
 * VX_SET1, VX_GATHER(r, ptrs, off), VX_STORE / VX_LOAD (8 scalar elements),
 * VX_IS_ZERO (lane mask).  Private to msm.c: not a contract header.
 */

/*
 * The running-sum reduction with 8 lanes (AVX-512 IFMA): lane L runs the
 * running sum over its eighth of the buckets, [L s, (L + 1) s) with s = nb/8,
 * from the top, which leaves T_L = the sum of those buckets and
 * S_L = sum_k (k + 1) bucket[L s + k]; the window sum is then
 * sum_L S_L + s * sum_L L T_L (a running sum over the lanes and log2(s)
 * doublings).  Only the affine buckets are summed here (msm_reduce adds the
 * rare XYZZ side buckets).  A step where some lane meets P = +-Q (possible
 * with repeated bases) is redone with the scalar complete formulas.
 */
#define XYZZX8 CAT(xyzzx8, SUF)
typedef struct XYZZX8 { VX x, y, zz, zzz; } XYZZX8;

/* r = p + (bx, by) in the lanes of m (a lane where p is infinity takes the
 * point); returns the lanes where p = +-(bx, by), left to the caller */
CZK_IFMA static __mmask8 F(x8_add_aff)(XYZZX8 *r, const XYZZX8 *p, const VX *bx, const VX *by, __mmask8 m)
{
    VX u2, s2, P, R, pp, ppp, q, t, x3, y3, zz3, zzz3, one;
    __mmask8 inf = VX_IS_ZERO(&p->zz), gen = m & (__mmask8)~inf, fresh = m & inf;

    VX_MUL(&u2, bx, &p->zz);
    VX_MUL(&s2, by, &p->zzz);
    VX_SUB(&P, &u2, &p->x);
    VX_SUB(&R, &s2, &p->y);
    VX_SQR(&pp, &P);
    VX_MUL(&ppp, &P, &pp);
    VX_MUL(&q, &p->x, &pp);
    VX_SQR(&x3, &R);
    VX_SUB(&x3, &x3, &ppp);
    VX_ADD(&t, &q, &q);
    VX_SUB(&x3, &x3, &t);
    VX_SUB(&t, &q, &x3);
    VX_MUL(&t, &R, &t);
    VX_MUL(&y3, &p->y, &ppp);
    VX_SUB(&y3, &t, &y3);
    VX_MUL(&zz3, &p->zz, &pp);
    VX_MUL(&zzz3, &p->zzz, &ppp);
    VX_SET1(&one, &FE_ONE);
    VX_BLEND(&r->x, gen, &p->x, &x3);
    VX_BLEND(&r->y, gen, &p->y, &y3);
    VX_BLEND(&r->zz, gen, &p->zz, &zz3);
    VX_BLEND(&r->zzz, gen, &p->zzz, &zzz3);
    VX_BLEND(&r->x, fresh, &r->x, bx);
    VX_BLEND(&r->y, fresh, &r->y, by);
    VX_BLEND(&r->zz, fresh, &r->zz, &one);
    VX_BLEND(&r->zzz, fresh, &r->zzz, &one);
    return VX_IS_ZERO(&P) & gen;
}

/* acc += q (add-2008-s) in every lane; returns the lanes where acc = +-q */
CZK_IFMA static __mmask8 F(x8_add)(XYZZX8 *acc, const XYZZX8 *q)
{
    VX u1, u2, s1, s2, P, R, pp, ppp, qq, t, x3, y3, zz3, zzz3;
    __mmask8 qinf = VX_IS_ZERO(&q->zz), ainf = VX_IS_ZERO(&acc->zz);
    __mmask8 gen = (__mmask8)(~qinf & ~ainf), take = (__mmask8)(~qinf & ainf);

    VX_MUL(&u1, &acc->x, &q->zz);
    VX_MUL(&u2, &q->x, &acc->zz);
    VX_MUL(&s1, &acc->y, &q->zzz);
    VX_MUL(&s2, &q->y, &acc->zzz);
    VX_SUB(&P, &u2, &u1);
    VX_SUB(&R, &s2, &s1);
    VX_SQR(&pp, &P);
    VX_MUL(&ppp, &P, &pp);
    VX_MUL(&qq, &u1, &pp);
    VX_SQR(&x3, &R);
    VX_SUB(&x3, &x3, &ppp);
    VX_ADD(&t, &qq, &qq);
    VX_SUB(&x3, &x3, &t);
    VX_SUB(&t, &qq, &x3);
    VX_MUL(&t, &R, &t);
    VX_MUL(&y3, &s1, &ppp);
    VX_SUB(&y3, &t, &y3);
    VX_MUL(&zz3, &acc->zz, &q->zz);
    VX_MUL(&zz3, &zz3, &pp);
    VX_MUL(&zzz3, &acc->zzz, &q->zzz);
    VX_MUL(&zzz3, &zzz3, &ppp);
    VX_BLEND(&acc->x, gen, &acc->x, &x3);
    VX_BLEND(&acc->y, gen, &acc->y, &y3);
    VX_BLEND(&acc->zz, gen, &acc->zz, &zz3);
    VX_BLEND(&acc->zzz, gen, &acc->zzz, &zzz3);
    VX_BLEND(&acc->x, take, &acc->x, &q->x);
    VX_BLEND(&acc->y, take, &acc->y, &q->y);
    VX_BLEND(&acc->zz, take, &acc->zz, &q->zz);
    VX_BLEND(&acc->zzz, take, &acc->zzz, &q->zzz);
    return VX_IS_ZERO(&P) & gen;
}

CZK_IFMA static void F(x8_to_scalar)(XYZZ r[8], const XYZZX8 *a)
{
    FE t[8];
    int i;

    VX_STORE(t, &a->x);
    for (i = 0; i < 8; i++)
        r[i].x = t[i];
    VX_STORE(t, &a->y);
    for (i = 0; i < 8; i++)
        r[i].y = t[i];
    VX_STORE(t, &a->zz);
    for (i = 0; i < 8; i++)
        r[i].zz = t[i];
    VX_STORE(t, &a->zzz);
    for (i = 0; i < 8; i++)
        r[i].zzz = t[i];
}

CZK_IFMA static void F(x8_from_scalar)(XYZZX8 *r, const XYZZ a[8])
{
    FE t[8];
    int i;

    for (i = 0; i < 8; i++)
        t[i] = a[i].x;
    VX_LOAD(&r->x, t);
    for (i = 0; i < 8; i++)
        t[i] = a[i].y;
    VX_LOAD(&r->y, t);
    for (i = 0; i < 8; i++)
        t[i] = a[i].zz;
    VX_LOAD(&r->zz, t);
    for (i = 0; i < 8; i++)
        t[i] = a[i].zzz;
    VX_LOAD(&r->zzz, t);
}

/* sum_b (b + 1) * bk[off + b] over the affine buckets, nb a power of two >= 8 */
CZK_IFMA static void F(msm_reduce_x8)(XYZZ *out, const struct F(msm_ws) *w, size_t off, size_t nb)
{
    static const AFF zero_pt; /* read by the lanes of empty buckets, ignored */
    const size_t s = nb / 8;
    XYZZX8 run, sum, nrun, nsum;
    XYZZ rs[8], ss[8], acc, r2, t;
    size_t k, i;
    int L;

    memset(&run, 0, sizeof(run));
    memset(&sum, 0, sizeof(sum));
    for (k = s; k-- > 0;) {
        const char *p[8];
        unsigned m = 0;
        VX bx, by;
        __mmask8 bad;
        for (L = 0; L < 8; L++) {
            size_t b = off + (size_t)L * s + k;
            unsigned u = w->used[b] & 1u;
            p[L] = u ? (const char *)&w->bk[b] : (const char *)&zero_pt;
            m |= u << L;
        }
        VX_GATHER(&bx, p, 0);
        VX_GATHER(&by, p, sizeof(FE));
        bad = F(x8_add_aff)(&nrun, &run, &bx, &by, (__mmask8)m);
        nsum = sum;
        bad |= F(x8_add)(&nsum, &nrun);
        if (__builtin_expect(bad != 0, 0)) {
            /* redo the step with the complete scalar formulas */
            F(x8_to_scalar)(rs, &run);
            F(x8_to_scalar)(ss, &sum);
            for (L = 0; L < 8; L++) {
                size_t b = off + (size_t)L * s + k;
                if (w->used[b] & 1)
                    F(xyzz_add_aff)(&rs[L], &w->bk[b], false);
                F(xyzz_add)(&ss[L], &rs[L]);
            }
            F(x8_from_scalar)(&run, rs);
            F(x8_from_scalar)(&sum, ss);
        } else {
            run = nrun;
            sum = nsum;
        }
    }
    F(x8_to_scalar)(rs, &run);
    F(x8_to_scalar)(ss, &sum);
    F(xyzz_set_inf)(&acc);
    for (L = 0; L < 8; L++)
        F(xyzz_add)(&acc, &ss[L]);
    F(xyzz_set_inf)(&r2);
    F(xyzz_set_inf)(&t);
    for (L = 7; L >= 1; L--) {
        F(xyzz_add)(&r2, &rs[L]);
        F(xyzz_add)(&t, &r2);
    }
    for (i = s; i > 1; i >>= 1)
        F(xyzz_dbl)(&t, &t);
    F(xyzz_add)(&acc, &t);
    *out = acc;
}
