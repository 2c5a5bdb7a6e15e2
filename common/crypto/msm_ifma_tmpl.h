/*
 * msm_ifma_tmpl.h — the batch-affine flush of msm_ifma.c, included once for
 * G1 (lanes of Fp) and once for G2 (lanes of Fp2).  Private to msm_ifma.c.
 *
 * Before including, msm_ifma.c defines:
 *   SUF        name suffix (g1 / g2)
 *   AFF, FE    the affine point type and its scalar coordinate type
 *   VX         the 8-lane coordinate type; VX_MUL VX_SQR VX_SUB (canonical),
 *              VX_GATHER(r, ptrs, off), VX_SCATTER(ptrs, off, mask, a),
 *              VX_EQ(a, b): the lanes where a = b (canonical)
 *   VX_MUL_LAZY(r, a, b)        a product below 2q (G2: canonical)
 *   VX_CSUB_LAZY(r, a, neg, b)  (neg ? -a : a) - b (+ 2q), below 3q
 *                               (G2: canonical)
 *   VX_CHAIN_OF(n, px, bx) the Fp value whose inverse the chain computes:
 *                          G1 px - bx (lazy, below 3q), G2 its norm
 *                          (px - bx)(px - bx)^p = d0^2 + d1^2 (canonical)
 *   VX_INV_OF(r, ninv, px, bx)  1 / (px - bx) from 1 / n: G1 ninv itself,
 *                          G2 conj(px - bx) ninv
 *
 * Lanes: addition j is lane j % 8 of step j / 8.  The inversions go through
 * Fp in both groups (G2 inverts norms: 2 Fp products fewer per addition
 * than chaining Fp2 products).  Two chains of prefix products (even and odd
 * steps) keep two independent vector products in flight; their 16 lane
 * products are inverted together by a scalar Montgomery batch inversion,
 * one field inversion in all.
 */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define G(name) CAT(name, SUF)

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
    return ((cap + 7) / 8) * 2 * sizeof(czk_fpx8);
}

CZK_IFMA size_t G(czk_msm_ifma_flush)(AFF *bk, const uint32_t *pidx, const AFF *const *pbase,
                                      const uint8_t *pneg, size_t cnt, void *scratch, uint32_t *same)
{
    const size_t S = (cnt + 7) / 8;
    czk_fpx8 *pref = scratch, *nrm = pref + S, one, acc[2], inv[2];
    czk_fp lane[16], pre[16], t;
    size_t s, nsame = 0;
    int i;

    if (!cnt)
        return 0;
    czk_fpx8_set1(&one, &CZK_FP_ONE);
    acc[0] = one;
    acc[1] = one;
    /* forward: den = px - bx, prefix products per lane and chain */
    for (s = 0; s < S; s++) {
        char *pb[8];
        const char *pp[8];
        __mmask8 neg, m = G(step_ptrs)(pb, pp, &neg, bk, pidx, pbase, pneg, s, cnt);
        VX bx, px;
        czk_fpx8 n;
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
        VX_CHAIN_OF(&n, &px, &bx);
        if (m != 0xff)
            czk_fpx8_blend(&n, m, &one, &n);
        nrm[s] = n;
        pref[s] = acc[s & 1];
        if (s < 2)
            acc[s & 1] = n;
        else
            czk_fpx8_mul_lazy_ool(&acc[s & 1], &acc[s & 1], &n);
    }
    /* invert the 16 lane products: one scalar inversion */
    czk_fpx8_canon3(&acc[0], &acc[0]);
    czk_fpx8_canon3(&acc[1], &acc[1]);
    czk_fpx8_store(lane, &acc[0]);
    czk_fpx8_store(lane + 8, &acc[1]);
    pre[0] = lane[0];
    for (i = 1; i < 16; i++)
        czk_fp_mul_i(&pre[i], &pre[i - 1], &lane[i]);
    (void)czk_fp_inv(&t, &pre[15]); /* never 0: x coordinates differ, padding lanes are 1 */
    for (i = 15; i > 0; i--) {
        czk_fp d = lane[i];
        czk_fp_mul_i(&lane[i], &t, &pre[i - 1]);
        czk_fp_mul_i(&t, &t, &d);
    }
    lane[0] = t;
    czk_fpx8_load(&inv[0], lane);
    czk_fpx8_load(&inv[1], lane + 8);
    /* backward: lambda = (py - by) / (px - bx), the new bucket */
    for (s = S; s-- > 0;) {
        char *pb[8];
        const char *pp[8];
        __mmask8 neg, m = G(step_ptrs)(pb, pp, &neg, bk, pidx, pbase, pneg, s, cnt);
        VX bx, by, px, py, dinv, lam, x3, y3;
        czk_fpx8 invd, *ic = &inv[s & 1];
        if (s >= FLUSH_AHEAD)
            G(prefetch_step)(bk, pidx, pbase, s - FLUSH_AHEAD, cnt);
        VX_GATHER(&bx, (const char *const *)pb, 0);
        VX_GATHER(&px, pp, 0);
        VX_GATHER(&by, (const char *const *)pb, sizeof(FE));
        VX_GATHER(&py, pp, sizeof(FE));
        m &= (__mmask8)~VX_EQ(&px, &bx);
        if (s >= 2) {
            czk_fpx8_mul_lazy_ool(&invd, ic, &pref[s]);
            czk_fpx8_mul_lazy_ool(ic, ic, &nrm[s]);
        } else {
            invd = *ic;
        }
        VX_INV_OF(&dinv, &invd, &px, &bx);
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
