/*
 * msm_ifma_tmpl.h — the batch-affine flush of msm_ifma.c, included once per
 * curve and group: BLS12-381 and BN254, G1 (lanes of Fp) and G2 (lanes of
 * Fp2).  Private to msm_ifma.c.
 *
 * Before including, msm_ifma.c defines:
 *   SUF        name suffix (g1, g2, bn254_g1, bn254_g2)
 *   AFF, FE    the affine point type and its scalar coordinate type
 *   FB(n), FB_T, FB_ONE  the scalar base field (czk_fp_##n, ...): its
 *              mul_i and inv, for the one inversion of the batch
 *   VB(n), VB_T          its 8 lanes (fpx_tmpl.h: czk_fpx8_##n, ...)
 *   IFMA_FP2   0: the coordinates are VB_T; 1: they are VX2_T, 8 lanes of
 *              Fp2 with functions VX2(n)
 * and undefines SUF, AFF, FE, IFMA_FP2, VX2, VX2_T at the end (the field's
 * macros stay for the next group).
 *
 * Lanes: addition j is lane j % 8 of step j / 8.  The inversions go through
 * Fp in both groups (G2 inverts norms: 2 Fp products fewer per addition
 * than chaining Fp2 products).  Two chains of prefix products (even and odd
 * steps) keep two independent vector products in flight; their 16 lane
 * products are inverted together by a scalar Montgomery batch inversion,
 * one field inversion in all.
 *
 * Bounds (fpx_tmpl.h: a product of a b < k q^2 is below (k q / R + 1) q).
 * G1 chains px - bx as VB(sub_op): below 3q where the field allows it
 * (BLS12-381, q / R < 0.102: the chain values stay below 3q, the inverses
 * and the slope below 2q), canonical otherwise (BN254, q / R < 0.19: chain
 * values below 1.24q, inverses below 1.29q, the slope below 1.74q, whose
 * square 3.03 q^2 is a valid full product).  G2's chain values are
 * canonical norms and its slope is canonical.
 */

#ifndef VB_MUL
#define VB_MUL VB(mul_ool)
#define VB_MUL_LAZY VB(mul_lazy_ool)
#define VB_SQR VB(sqr_ool)
#endif

#if IFMA_FP2
#define VX VX2_T
#define VX_MUL VX2(mul_ool)
#define VX_SQR VX2(sqr_ool)
#define VX_SUB VX2(sub)
#define VX_MUL_LAZY VX2(mul_ool) /* canonical: the Fp2 products are */
#define VX_CSUB_LAZY VX2(csub)
#define VX_EQ VX2(eq)
#define VX_GATHER VX2(gather_p)
#define VX_SCATTER VX2(scatter_p)
#else
#define VX VB_T
#define VX_MUL VB_MUL
#define VX_SQR VB_SQR
#define VX_SUB VB(sub)
#define VX_MUL_LAZY VB_MUL_LAZY
#define VX_CSUB_LAZY VB(csub_lazy) /* (neg ? -a : a) + 2q - b, below 3q */
#define VX_EQ VB(eq)
#define VX_GATHER VB(gather_p)
#define VX_SCATTER VB(scatter_p)
#endif

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define G(name) CAT(name, SUF)

#if IFMA_FP2
/* d = px - bx = d0 + d1 u, 1/d = (d0 - d1 u) / (d0^2 + d1^2): the chain
 * inverts the Fp norms */
CZK_IFMA_INLINE void G(chain_of)(VB_T *n, const VX *px, const VX *bx)
{
    VX d;
    VB_T t;

    VX2(sub)(&d, px, bx);
    VB_SQR(n, &d.c0);
    VB_SQR(&t, &d.c1);
    VB(add)(n, n, &t);
}

CZK_IFMA_INLINE void G(inv_of)(VX *r, const VB_T *ninv, const VX *px, const VX *bx)
{
    VX d;

    VX2(sub)(&d, px, bx);
    VB(cneg)(&d.c1, &d.c1, 0xff);
    VB_MUL(&r->c0, &d.c0, ninv);
    VB_MUL(&r->c1, &d.c1, ninv);
}
#else
/* the chain inverts px - bx itself */
CZK_IFMA_INLINE void G(chain_of)(VB_T *n, const VX *px, const VX *bx)
{
    VB(sub_op)(n, px, bx);
}

CZK_IFMA_INLINE void G(inv_of)(VX *r, const VB_T *ninv, const VX *px, const VX *bx)
{
    (void)px;
    (void)bx;
    *r = *ninv;
}
#endif

/* the addresses of step s's buckets and bases; the lanes past cnt point at
 * bk[0] (read, never written) */
static inline __mmask8 G(step_ptrs)(char *pb[8], const char *pp[8], __mmask8 *neg, AFF *bk,
                                    const uint32_t *pidx, const AFF *const *pbase, const uint8_t *pneg,
                                    size_t s, size_t cnt)
{
    size_t j0 = 8 * s, left = cnt - j0;
    unsigned i, n = left >= 8 ? 8 : (unsigned)left, ng = 0;

    for (i = 0; i < n; i++) {
        pb[i] = (char *)&bk[pidx[j0 + i]];
        pp[i] = (const char *)pbase[j0 + i];
        ng |= (unsigned)(pneg[j0 + i] != 0) << i;
    }
    for (; i < 8; i++) {
        pb[i] = (char *)bk;
        pp[i] = (const char *)bk;
    }
    *neg = (__mmask8)ng;
    return (__mmask8)((1u << n) - 1);
}

/* bring step s's buckets and bases towards L1 (the buckets of a window
 * group do not fit L2, the gathers would wait on them) */
static inline void G(prefetch_step)(const AFF *bk, const uint32_t *pidx, const AFF *const *pbase, size_t s,
                                    size_t cnt)
{
    size_t j, lo = 8 * s, hi = lo + 8 < cnt ? lo + 8 : cnt;

    for (j = lo; j < hi; j++) {
        const char *b = (const char *)&bk[pidx[j]], *p = (const char *)pbase[j];
        __builtin_prefetch(b, 1);
        __builtin_prefetch(b + sizeof(AFF) - 1, 1);
        __builtin_prefetch(p);
        __builtin_prefetch(p + sizeof(AFF) - 1);
    }
}

size_t G(czk_msm_ifma_scratch_bytes)(size_t cap)
{
    return ((cap + 7) / 8) * 2 * sizeof(VB_T);
}

CZK_IFMA size_t G(czk_msm_ifma_flush)(AFF *bk, const uint32_t *pidx, const AFF *const *pbase,
                                      const uint8_t *pneg, size_t cnt, void *scratch, uint32_t *same)
{
    const size_t S = (cnt + 7) / 8;
    VB_T *pref = scratch, *nrm = pref + S, one, acc[2], inv[2];
    FB_T lane[16], pre[16], t;
    size_t s, nsame = 0;
    int i;

    if (!cnt)
        return 0;
    VB(set1)(&one, &FB_ONE);
    acc[0] = one;
    acc[1] = one;
    /* forward: den = px - bx, prefix products per lane and chain */
    for (s = 0; s < S; s++) {
        char *pb[8];
        const char *pp[8];
        __mmask8 neg, m = G(step_ptrs)(pb, pp, &neg, bk, pidx, pbase, pneg, s, cnt);
        VX bx, px;
        VB_T n;
        if (s + FLUSH_AHEAD < S)
            G(prefetch_step)(bk, pidx, pbase, s + FLUSH_AHEAD, cnt);
        VX_GATHER(&bx, (const char *const *)pb, 0);
        VX_GATHER(&px, pp, 0);
        {
            /* +-the bucket's own point: left to the caller (XYZZ) */
            unsigned z = VX_EQ(&px, &bx) & m;
            m &= (__mmask8)~z;
            while (z) {
                same[nsame++] = (uint32_t)(8 * s + (unsigned)__builtin_ctz(z));
                z &= z - 1;
            }
        }
        G(chain_of)(&n, &px, &bx);
        if (m != 0xff)
            VB(blend)(&n, m, &one, &n);
        nrm[s] = n;
        pref[s] = acc[s & 1];
        if (s < 2)
            acc[s & 1] = n;
        else
            VB_MUL_LAZY(&acc[s & 1], &acc[s & 1], &n);
    }
    /* invert the 16 lane products: one scalar inversion */
    VB(canon3)(&acc[0], &acc[0]);
    VB(canon3)(&acc[1], &acc[1]);
    VB(store)(lane, &acc[0]);
    VB(store)(lane + 8, &acc[1]);
    pre[0] = lane[0];
    for (i = 1; i < 16; i++)
        FB(mul_i)(&pre[i], &pre[i - 1], &lane[i]);
    (void)FB(inv)(&t, &pre[15]); /* never 0: x coordinates differ, padding lanes are 1 */
    for (i = 15; i > 0; i--) {
        FB_T d = lane[i];
        FB(mul_i)(&lane[i], &t, &pre[i - 1]);
        FB(mul_i)(&t, &t, &d);
    }
    lane[0] = t;
    VB(load)(&inv[0], lane);
    VB(load)(&inv[1], lane + 8);
    /* backward: lambda = (py - by) / (px - bx), the new bucket */
    for (s = S; s-- > 0;) {
        char *pb[8];
        const char *pp[8];
        __mmask8 neg, m = G(step_ptrs)(pb, pp, &neg, bk, pidx, pbase, pneg, s, cnt);
        VX bx, by, px, py, dinv, lam, x3, y3;
        VB_T invd, *ic = &inv[s & 1];
        if (s >= FLUSH_AHEAD)
            G(prefetch_step)(bk, pidx, pbase, s - FLUSH_AHEAD, cnt);
        VX_GATHER(&bx, (const char *const *)pb, 0);
        VX_GATHER(&px, pp, 0);
        VX_GATHER(&by, (const char *const *)pb, sizeof(FE));
        VX_GATHER(&py, pp, sizeof(FE));
        m &= (__mmask8)~VX_EQ(&px, &bx);
        if (s >= 2) {
            VB_MUL_LAZY(&invd, ic, &pref[s]);
            VB_MUL_LAZY(ic, ic, &nrm[s]);
        } else {
            invd = *ic;
        }
        G(inv_of)(&dinv, &invd, &px, &bx);
        VX_CSUB_LAZY(&lam, &py, neg, &by);
        VX_MUL_LAZY(&lam, &lam, &dinv);
        VX_SQR(&x3, &lam);
        VX_SUB(&x3, &x3, &bx);
        VX_SUB(&x3, &x3, &px);
        VX_SUB(&y3, &bx, &x3);
        VX_MUL(&y3, &y3, &lam);
        VX_SUB(&y3, &y3, &by);
        VX_SCATTER(pb, 0, m, &x3);
        VX_SCATTER(pb, sizeof(FE), m, &y3);
    }
    return nsame;
}

#undef G
#undef CAT
#undef CAT_
#undef VX
#undef VX_MUL
#undef VX_SQR
#undef VX_SUB
#undef VX_MUL_LAZY
#undef VX_CSUB_LAZY
#undef VX_EQ
#undef VX_GATHER
#undef VX_SCATTER
#undef SUF
#undef AFF
#undef FE
#undef IFMA_FP2
#undef VX2
#undef VX2_T
#undef VB_MUL
#undef VB_MUL_LAZY
#undef VB_SQR
