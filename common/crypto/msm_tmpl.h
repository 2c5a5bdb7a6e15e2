/*
 * msm_tmpl.h — the curve-specific half of msm.c, included once for G1 (over
 * Fp) and once for G2 (over Fp2).  Private to msm.c: not a contract header.
 *
 * Before including, msm.c (BLS12-381) or bn254_msm.c (BN254) includes
 * msm_plan_impl.h (the plan, MSM_SCALAR: the scalar type) and defines:
 *   SUF            name suffix (g1 / g2)
 *   FE             the coordinate field type; FE_ADD FE_SUB FE_DBL FE_NEG
 *                  FE_MUL FE_SQR FE_INV FE_IS_ZERO FE_EQ, FE_ONE (Montgomery one),
 *                  FE_COST_BATCH: "a, i, b", the costs of a batch-affine
 *                  addition and of an inversion in mixed XYZZ additions, and
 *                  the most bytes of affine buckets per window
 *   AFF / JAC      the curve's affine and Jacobian point types, JAC_SET_INF
 *   HAVE_ENDO      (optional) 1 when ENDO_READY() (the glv_params, or NULL
 *                  when unusable) and ENDO_APPLY(out, in) give an
 *                  endomorphism phi = [d]; without it no endomorphism is used
 *   FE_FLUSH_X8    (optional) the AVX-512 IFMA flush (msm_ifma.h),
 *                  FE_FLUSH_X8_BYTES its scratch size, FE_COST_BATCH_X8 the
 *                  costs to plan with when it is in use (czk_fpx8_enabled());
 *                  without it the scalar flush and running sums always run
 *   VX ...         (x86-64 only) the 8-lane coordinate type and operations
 *                  of the vector running sums, msm_reduce_x8_tmpl.h
 * and undefines them all at the end.
 *
 * Buckets and partial sums use XYZZ coordinates (x = X/ZZ, y = Y/ZZZ,
 * ZZ^3 = ZZZ^2; ZZ = 0 is infinity): a mixed addition from an affine base
 * costs 8M + 2S (EFD madd-2008-s), a full addition 12M + 2S (add-2008-s).
 * Every addition here is complete: equal inputs fall through to doubling,
 * opposite inputs give infinity.
 */

#ifndef HAVE_ENDO
#define HAVE_ENDO 0
#define ENDO_READY() NULL
#endif

#ifdef FE_FLUSH_X8
#define MSM_X8_ON() czk_fpx8_enabled()
#else
#define MSM_X8_ON() 0
#endif

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define XYZZ CAT(xyzz, SUF)
#define F(name) CAT(name, SUF)

typedef struct XYZZ { FE x, y, zz, zzz; } XYZZ;

static inline void F(xyzz_set_inf)(XYZZ *r)
{
    memset(r, 0, sizeof(*r));
}

static inline bool F(xyzz_is_inf)(const XYZZ *p)
{
    return FE_IS_ZERO(&p->zz);
}

static inline void F(xyzz_from_aff)(XYZZ *r, const AFF *p, bool neg)
{
    r->x = p->x;
    if (neg)
        FE_NEG(&r->y, &p->y);
    else
        r->y = p->y;
    r->zz = FE_ONE;
    r->zzz = FE_ONE;
}

/* r = 2 * (x, y) for an affine point (mdbl-2008-s) */
static void F(xyzz_dbl_aff)(XYZZ *r, const FE *x, const FE *y)
{
    FE u, v, w, s, m, t;

    FE_DBL(&u, y);
    FE_SQR(&v, &u);
    FE_MUL(&w, &u, &v);
    FE_MUL(&s, x, &v);
    FE_SQR(&m, x);
    FE_DBL(&t, &m);
    FE_ADD(&m, &m, &t);
    FE_SQR(&r->x, &m);
    FE_DBL(&t, &s);
    FE_SUB(&r->x, &r->x, &t);
    FE_SUB(&t, &s, &r->x);
    FE_MUL(&t, &m, &t);
    FE_MUL(&u, &w, y);
    FE_SUB(&r->y, &t, &u);
    r->zz = v;
    r->zzz = w;
}

/* r = 2p (dbl-2008-s-1 with a = 0); r may alias p */
static void F(xyzz_dbl)(XYZZ *r, const XYZZ *p)
{
    FE u, v, w, s, m, t, x3;

    if (F(xyzz_is_inf)(p)) {
        F(xyzz_set_inf)(r);
        return;
    }
    FE_DBL(&u, &p->y);
    FE_SQR(&v, &u);
    FE_MUL(&w, &u, &v);
    FE_MUL(&s, &p->x, &v);
    FE_SQR(&m, &p->x);
    FE_DBL(&t, &m);
    FE_ADD(&m, &m, &t);
    FE_SQR(&x3, &m);
    FE_DBL(&t, &s);
    FE_SUB(&x3, &x3, &t);
    FE_SUB(&t, &s, &x3);
    FE_MUL(&t, &m, &t);
    FE_MUL(&u, &w, &p->y);
    FE_SUB(&r->y, &t, &u);
    r->x = x3;
    FE_MUL(&r->zz, &v, &p->zz);
    FE_MUL(&r->zzz, &w, &p->zzz);
}

/* acc += (neg ? -q : q), q affine and not infinity (madd-2008-s) */
static inline void F(xyzz_add_aff)(XYZZ *acc, const AFF *q, bool neg)
{
    FE u2, s2, p, r, pp, ppp, qq, t;

    if (F(xyzz_is_inf)(acc)) {
        F(xyzz_from_aff)(acc, q, neg);
        return;
    }
    FE_MUL(&u2, &q->x, &acc->zz);
    FE_MUL(&s2, &q->y, &acc->zzz);
    if (neg)
        FE_NEG(&s2, &s2);
    FE_SUB(&p, &u2, &acc->x);
    FE_SUB(&r, &s2, &acc->y);
    if (FE_IS_ZERO(&p)) {
        if (FE_IS_ZERO(&r)) {
            FE y;
            if (neg)
                FE_NEG(&y, &q->y);
            else
                y = q->y;
            F(xyzz_dbl_aff)(acc, &q->x, &y);
        } else {
            F(xyzz_set_inf)(acc);
        }
        return;
    }
    FE_SQR(&pp, &p);
    FE_MUL(&ppp, &p, &pp);
    FE_MUL(&qq, &acc->x, &pp);
    FE_SQR(&acc->x, &r);
    FE_SUB(&acc->x, &acc->x, &ppp);
    FE_DBL(&t, &qq);
    FE_SUB(&acc->x, &acc->x, &t);
    FE_SUB(&t, &qq, &acc->x);
    FE_MUL(&t, &r, &t);
    FE_MUL(&acc->y, &acc->y, &ppp);
    FE_SUB(&acc->y, &t, &acc->y);
    FE_MUL(&acc->zz, &acc->zz, &pp);
    FE_MUL(&acc->zzz, &acc->zzz, &ppp);
}

/* acc += q, both XYZZ (add-2008-s) */
static void F(xyzz_add)(XYZZ *acc, const XYZZ *q)
{
    FE u1, u2, s1, s2, p, r, pp, ppp, qq, t;

    if (F(xyzz_is_inf)(q))
        return;
    if (F(xyzz_is_inf)(acc)) {
        *acc = *q;
        return;
    }
    FE_MUL(&u1, &acc->x, &q->zz);
    FE_MUL(&u2, &q->x, &acc->zz);
    FE_MUL(&s1, &acc->y, &q->zzz);
    FE_MUL(&s2, &q->y, &acc->zzz);
    FE_SUB(&p, &u2, &u1);
    FE_SUB(&r, &s2, &s1);
    if (FE_IS_ZERO(&p)) {
        if (FE_IS_ZERO(&r))
            F(xyzz_dbl)(acc, acc);
        else
            F(xyzz_set_inf)(acc);
        return;
    }
    FE_SQR(&pp, &p);
    FE_MUL(&ppp, &p, &pp);
    FE_MUL(&qq, &u1, &pp);
    FE_SQR(&acc->x, &r);
    FE_SUB(&acc->x, &acc->x, &ppp);
    FE_DBL(&t, &qq);
    FE_SUB(&acc->x, &acc->x, &t);
    FE_SUB(&t, &qq, &acc->x);
    FE_MUL(&t, &r, &t);
    FE_MUL(&s1, &s1, &ppp);
    FE_SUB(&acc->y, &t, &s1);
    FE_MUL(&acc->zz, &acc->zz, &q->zz);
    FE_MUL(&acc->zz, &acc->zz, &pp);
    FE_MUL(&acc->zzz, &acc->zzz, &q->zzz);
    FE_MUL(&acc->zzz, &acc->zzz, &ppp);
}

/* XYZZ to Jacobian (x = X/Z^2, y = Y/Z^3): Z = ZZZ, X = X ZZ^2, Y = Y ZZZ^2 */
static void F(xyzz_to_jac)(JAC *r, const XYZZ *p)
{
    FE t;

    if (F(xyzz_is_inf)(p)) {
        JAC_SET_INF(r);
        return;
    }
    FE_SQR(&t, &p->zz);
    FE_MUL(&r->x, &p->x, &t);
    FE_SQR(&t, &p->zzz);
    FE_MUL(&r->y, &p->y, &t);
    r->z = p->zzz;
}

/* all-zero bytes (a zkey's infinity); stops at the first nonzero word, so
 * a finite base costs one read of its first cache line */
static bool F(aff_is_zero)(const AFF *p)
{
    const uint64_t *w = (const uint64_t *)p;
    size_t i;

    for (i = 0; i < sizeof(*p) / sizeof(uint64_t); i++)
        if (w[i])
            return false;
    return true;
}

/* ---- the per-thread pieces, driven by msm.c's plan ---- */

/* one worker's scratch, reused across its tasks */
struct F(msm_ws) {
    XYZZ *ov;            /* group * nb: XYZZ buckets (the only buckets in XYZZ mode) */
    AFF *bk;             /* group * nb: affine buckets (batch-affine mode) */
    uint8_t *used;       /* group * nb: bit 0 affine bucket set, bit 1 XYZZ bucket set */
    uint32_t *stamp;     /* group * nb: batch number of a pending addition */
    uint32_t *pidx;      /* pending additions: bucket, base, sign */
    const AFF **pbase;
    uint8_t *pneg;
    FE *den, *pref;
    void *vscr;          /* scratch of the IFMA flush (NULL: scalar flush) */
    uint32_t *same;      /* IFMA flush: the additions it left to XYZZ */
    uint32_t *ridx;      /* additions to retry in the next batch (bucket busy) */
    const AFF **rbase;
    uint8_t *rneg;
    size_t rcnt;
};

struct F(msm_ctx) {
    const struct msm_plan *pl;
    const AFF *bases;
    const AFF **tb;      /* M: the base of each digit column */
    AFF *endo;           /* m: phi(base) of each general term (glv) */
    struct F(msm_ws) *ws; /* per worker */
    XYZZ *wsum;          /* windows * parts */
    XYZZ *psum;          /* per-thread partial sums of the "ones" and "hi" lists */
    XYZZ *hsum;
};

static void F(msm_ws_free)(struct F(msm_ws) *w)
{
    free(w->ov);
    msm_free(w->bk);
    msm_free(w->used);
    msm_free(w->stamp);
    free(w->pidx);
    free(w->pbase);
    free(w->pneg);
    free(w->den);
    free(w->pref);
    free(w->vscr);
    free(w->same);
    free(w->ridx);
    free(w->rbase);
    free(w->rneg);
}

static int F(msm_ws_alloc)(struct F(msm_ws) *w, const struct msm_plan *pl)
{
    size_t nb = (size_t)pl->group << (pl->c - 1), cap = pl->batch_cap;

    memset(w, 0, sizeof(*w));
    w->ov = malloc(nb * sizeof(XYZZ));
    w->used = msm_alloc(nb);
    if (pl->batch) {
        w->bk = msm_alloc(nb * sizeof(AFF));
        w->stamp = msm_alloc(nb * sizeof(uint32_t));
        w->pidx = malloc(cap * sizeof(uint32_t));
        w->pbase = malloc(cap * sizeof(AFF *));
        w->pneg = malloc(cap);
        w->den = malloc(cap * sizeof(FE));
        w->pref = malloc(cap * sizeof(FE));
        w->ridx = malloc(cap * sizeof(uint32_t));
        w->same = malloc(cap * sizeof(uint32_t));
        w->rbase = malloc(cap * sizeof(AFF *));
        w->rneg = malloc(cap);
#ifdef FE_FLUSH_X8
        if (MSM_X8_ON()) {
            size_t vb = (FE_FLUSH_X8_BYTES(cap) + 63) & ~(size_t)63;
            w->vscr = aligned_alloc(64, vb ? vb : 64);
            if (!w->vscr) {
                F(msm_ws_free)(w);
                return -ENOMEM;
            }
        }
#endif
    }
    if (!w->ov || !w->used ||
        (pl->batch && (!w->bk || !w->stamp || !w->pidx || !w->pbase || !w->pneg || !w->den || !w->pref ||
                       !w->ridx || !w->rbase || !w->rneg || !w->same))) {
        F(msm_ws_free)(w);
        return -ENOMEM;
    }
    return 0;
}

/* the XYZZ side bucket ov[k] += +-p: for additions the affine batch cannot
 * take (+-the bucket's own point) */
static inline void F(msm_ov_add)(struct F(msm_ws) *ws, size_t k, const AFF *p, bool neg)
{
    if (!(ws->used[k] & 2)) {
        F(xyzz_from_aff)(&ws->ov[k], p, neg);
        ws->used[k] |= 2;
    } else {
        F(xyzz_add_aff)(&ws->ov[k], p, neg);
    }
}

/* the pending affine additions bk[pidx[j]] += +-pbase[j], with one inversion
 * (Montgomery's trick); x coordinates differ by construction */
static void F(msm_flush)(struct F(msm_ws) *w, size_t cnt)
{
    FE acc, inv, invd, lam, t, py;
    size_t j;

    if (!cnt)
        return;
#ifdef FE_FLUSH_X8
    if (w->vscr) {
        /* the vector flush leaves out +-the bucket's own point (the queue
         * sends those to XYZZ already; this keeps the flush safe alone) */
        size_t nsame = FE_FLUSH_X8(w->bk, w->pidx, w->pbase, w->pneg, cnt, w->vscr, w->same);
        for (j = 0; j < nsame; j++) {
            size_t i = w->same[j];
            F(msm_ov_add)(w, w->pidx[i], w->pbase[i], w->pneg[i]);
        }
        return;
    }
#endif
    acc = w->den[0];
    for (j = 0; j < cnt; j++) {
        const AFF *b = &w->bk[w->pidx[j]];
        FE_SUB(&w->den[j], &w->pbase[j]->x, &b->x);
        if (j == 0)
            acc = w->den[0];
        else {
            w->pref[j] = acc;
            FE_MUL(&acc, &acc, &w->den[j]);
        }
    }
    FE_INV(&inv, &acc);
    for (j = cnt; j-- > 0;) {
        AFF *b = &w->bk[w->pidx[j]];
        const AFF *p = w->pbase[j];
        if (j) {
            FE_MUL(&invd, &inv, &w->pref[j]);
            FE_MUL(&inv, &inv, &w->den[j]);
        } else {
            invd = inv;
        }
        if (w->pneg[j])
            FE_NEG(&py, &p->y);
        else
            py = p->y;
        FE_SUB(&lam, &py, &b->y);
        FE_MUL(&lam, &lam, &invd);
        FE_SQR(&t, &lam);
        FE_SUB(&t, &t, &b->x);
        FE_SUB(&t, &t, &p->x);          /* x3 */
        FE_SUB(&py, &b->x, &t);
        b->x = t;
        FE_MUL(&py, &py, &lam);
        FE_SUB(&b->y, &py, &b->y);      /* y3 = lam (x1 - x3) - y1 */
    }
}

/* bk[k] += +-p: set an empty bucket, send +-the bucket's own point to the
 * XYZZ side bucket, or queue the affine addition for this batch (cur).
 * Returns 1, doing nothing, when bucket k is already pending in this batch. */
static inline int F(msm_queue)(struct F(msm_ws) *ws, size_t k, const AFF *p, bool neg, uint32_t cur, size_t *cnt)
{
    if (!(ws->used[k] & 1)) {
        ws->bk[k].x = p->x;
        if (neg)
            FE_NEG(&ws->bk[k].y, &p->y);
        else
            ws->bk[k].y = p->y;
        ws->used[k] |= 1;
        return 0;
    }
    if (ws->stamp[k] == cur)
        return 1;
    /* reading the bucket's x here also brings its line in for the flush
     * (measured: leaving the check to the vector flush alone was ~4% slower) */
    if (FE_EQ(&ws->bk[k].x, &p->x)) {
        F(msm_ov_add)(ws, k, p, neg);
        return 0;
    }
    ws->stamp[k] = cur;
    ws->pidx[*cnt] = (uint32_t)k;
    ws->pbase[*cnt] = p;
    ws->pneg[*cnt] = neg;
    (*cnt)++;
    return 0;
}

/* queue the retry list into batch cur while *cnt < limit; what stays (a
 * bucket twice in the list, or no room) is kept, in order */
static void F(msm_retry)(struct F(msm_ws) *ws, uint32_t cur, size_t *cnt, size_t limit)
{
    size_t r, keep = 0;

    for (r = 0; r < ws->rcnt; r++) {
        if (*cnt < limit && !F(msm_queue)(ws, ws->ridx[r], ws->rbase[r], ws->rneg[r], cur, cnt))
            continue;
        ws->ridx[keep] = ws->ridx[r];
        ws->rbase[keep] = ws->rbase[r];
        ws->rneg[keep] = ws->rneg[r];
        keep++;
    }
    ws->rcnt = keep;
}

#ifdef VX
/* r = k p for a small k >= 1 (double and add): the vector running sums'
 * side buckets */
static void F(xyzz_mul_small)(XYZZ *r, const XYZZ *p, size_t k)
{
    int bit = 63 - __builtin_clzll((unsigned long long)k);

    *r = *p;
    while (bit-- > 0) {
        F(xyzz_dbl)(r, r);
        if ((k >> bit) & 1)
            F(xyzz_add)(r, p);
    }
}

#include "common/crypto/msm_reduce_x8_tmpl.h"
#endif

/* running-sum reduction of one window: sum_b (b + 1) * bucket[b] */
static void F(msm_reduce)(XYZZ *out, struct F(msm_ws) *w, size_t off, size_t nb)
{
    XYZZ run, sum;
    size_t b;

#ifdef VX
    /* 8 lanes when the XYZZ side buckets are few (they always are, except
     * for inputs built to repeat points): those are added one by one */
    if (w->vscr && nb >= 64) {
        size_t nov = 0;
        for (b = 0; b < nb; b++)
            nov += (w->used[off + b] >> 1) & 1;
        if (nov <= 64) {
            F(msm_reduce_x8)(out, w, off, nb);
            for (b = 0; nov && b < nb; b++)
                if (w->used[off + b] & 2) {
                    F(xyzz_mul_small)(&sum, &w->ov[off + b], b + 1);
                    F(xyzz_add)(out, &sum);
                    nov--;
                }
            return;
        }
    }
#endif

    F(xyzz_set_inf)(&run);
    F(xyzz_set_inf)(&sum);
    for (b = nb; b-- > 0;) {
        uint8_t u = w->used[off + b];
        if (u & 1)
            F(xyzz_add_aff)(&run, &w->bk[off + b], false);
        if (u & 2)
            F(xyzz_add)(&run, &w->ov[off + b]);
        F(xyzz_add)(&sum, &run);
    }
    *out = sum;
}

/* tasks [begin, end): task t = window group t / parts, part t % parts */
static void F(msm_tasks)(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct F(msm_ctx) *c = arg;
    const struct msm_plan *pl = c->pl;
    struct F(msm_ws) *ws = &c->ws[worker];
    const size_t nb = (size_t)1 << (pl->c - 1), ahead = 8;
    const AFF *const *tb = c->tb;
    size_t t;

    for (t = begin; t < end; t++) {
        size_t g = t / pl->parts, part = t % pl->parts;
        size_t w0 = pl->windows * g / pl->groups, w1 = pl->windows * (g + 1) / pl->groups;
        size_t gw = w1 - w0;
        size_t lo = pl->M * part / pl->parts, hi = pl->M * (part + 1) / pl->parts, i, w;
        const size_t W = pl->windows;
        const int16_t *dig = pl->dig + w0; /* digit w of column i: dig[i * W + w] */

        memset(ws->used, 0, gw * nb);
        if (!pl->batch) {
            for (w = 0; w < gw; w++) {
                const int16_t *dw = dig + w;
                XYZZ *bk = ws->ov + w * nb;
                for (i = lo; i < hi; i++) {
                    int d;
                    size_t k;
                    if (i + ahead < hi && dw[(i + ahead) * W]) {
                        int da = dw[(i + ahead) * W];
                        __builtin_prefetch(&bk[(da < 0 ? -da : da) - 1], 1);
                    }
                    d = dw[i * W];
                    if (!d)
                        continue;
                    k = (size_t)(d < 0 ? -d : d) - 1;
                    if (!ws->used[w * nb + k]) {
                        F(xyzz_from_aff)(&bk[k], tb[i], d < 0);
                        ws->used[w * nb + k] = 2;
                    } else {
                        F(xyzz_add_aff)(&bk[k], tb[i], d < 0);
                    }
                }
            }
        } else {
            uint32_t cur = 1;
            size_t cnt = 0;

            memset(ws->stamp, 0, gw * nb * sizeof(uint32_t));
            ws->rcnt = 0;
            for (i = lo; i < hi; i++) {
                const AFF *p = tb[i];
                if (i + ahead < hi) {
                    __builtin_prefetch(tb[i + ahead]);
                    for (w = 0; w < gw; w++) {
                        int da = dig[(i + ahead) * W + w];
                        if (da)
                            __builtin_prefetch(&ws->bk[w * nb + (size_t)(da < 0 ? -da : da) - 1], 1);
                    }
                }
                for (w = 0; w < gw; w++) {
                    int d = dig[i * W + w];
                    size_t k;
                    if (!d)
                        continue;
                    k = w * nb + (size_t)(d < 0 ? -d : d) - 1;
                    if (F(msm_queue)(ws, k, p, d < 0, cur, &cnt)) {
                        /* pending in this batch already: retry in the next
                         * one (or, with the retry list full, XYZZ) */
                        if (ws->rcnt < pl->batch_cap) {
                            ws->ridx[ws->rcnt] = (uint32_t)k;
                            ws->rbase[ws->rcnt] = p;
                            ws->rneg[ws->rcnt] = d < 0;
                            ws->rcnt++;
                        } else {
                            F(msm_ov_add)(ws, k, p, d < 0);
                        }
                    }
                }
                if (cnt + gw > pl->batch_cap) {
                    F(msm_flush)(ws, cnt);
                    cnt = 0;
                    cur++;
                    F(msm_retry)(ws, cur, &cnt, pl->batch_cap - gw);
                }
            }
            /* the last batch, then the retries left until none is */
            for (;;) {
                F(msm_flush)(ws, cnt);
                cnt = 0;
                if (!ws->rcnt)
                    break;
                cur++;
                F(msm_retry)(ws, cur, &cnt, pl->batch_cap);
            }
        }
        for (w = 0; w < gw; w++)
            F(msm_reduce)(&c->wsum[(w0 + w) * pl->parts + part], ws, w * nb, nb);
    }
}

/* plain sums of the bases listed in ones[] and hi[] (chunk per thread) */
static void F(msm_plain)(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct F(msm_ctx) *c = arg;
    const struct msm_plan *pl = c->pl;
    size_t i, lo, hi;
    XYZZ s;

    /* [begin, end) indexes a thread slot; each slot owns a slice of each list */
    for (; begin < end; begin++) {
        F(xyzz_set_inf)(&s);
        lo = pl->n_ones * begin / pl->threads;
        hi = pl->n_ones * (begin + 1) / pl->threads;
        for (i = lo; i < hi; i++)
            F(xyzz_add_aff)(&s, &c->bases[pl->ones[i]], false);
        c->psum[begin] = s;
        F(xyzz_set_inf)(&s);
        lo = pl->n_hi * begin / pl->threads;
        hi = pl->n_hi * (begin + 1) / pl->threads;
        for (i = lo; i < hi; i++)
            F(xyzz_add_aff)(&s, &c->bases[pl->hi[i]], false);
        c->hsum[begin] = s;
    }
}

/* base pointers of the digit columns; with glv, phi(P) = (beta x, y) too */
static void F(msm_bases)(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct F(msm_ctx) *c = arg;
    const struct msm_plan *pl = c->pl;
    size_t j;

    for (j = begin; j < end; j++) {
        const AFF *p = &c->bases[pl->idx[j]];
        c->tb[j] = p;
#if HAVE_ENDO
        if (pl->glv) {
            ENDO_APPLY(&c->endo[j], p);
            c->tb[pl->m + j] = &c->endo[j];
        }
#endif
    }
}

static bool F(msm_is_inf_cb)(const void *bases, size_t i)
{
    return F(aff_is_zero)((const AFF *)bases + i);
}

/* *out += sum_i k_i P_i over one chunk of terms */
static int F(msm_chunk)(XYZZ *out, const AFF *bases, const MSM_SCALAR *scalars, size_t n, int nthreads)
{
    struct msm_plan pl;
    struct F(msm_ctx) c;
    XYZZ acc, t;
    size_t w, p, i, nws = 0;
    int rc;

#ifdef FE_FLUSH_X8
    if (MSM_X8_ON())
        rc = msm_plan_build(&pl, bases, F(msm_is_inf_cb), scalars, n, nthreads, ENDO_READY(), sizeof(AFF),
                            FE_COST_BATCH_X8);
    else
#endif
        rc = msm_plan_build(&pl, bases, F(msm_is_inf_cb), scalars, n, nthreads, ENDO_READY(), sizeof(AFF),
                            FE_COST_BATCH);
    if (rc)
        return rc;
    memset(&c, 0, sizeof(c));
    c.pl = &pl;
    c.bases = bases;
    c.psum = calloc(pl.threads, sizeof(XYZZ));
    c.hsum = calloc(pl.threads, sizeof(XYZZ));
    if (!c.psum || !c.hsum)
        goto nomem;
    if (pl.m) {
        c.wsum = malloc(pl.windows * pl.parts * sizeof(XYZZ));
        c.ws = calloc(pl.threads, sizeof(*c.ws));
        if (!c.wsum || !c.ws)
            goto nomem;
        for (nws = 0; nws < pl.threads; nws++)
            if (F(msm_ws_alloc)(&c.ws[nws], &pl))
                goto nomem;
    }
    if (pl.m) {
        c.tb = msm_alloc(pl.M * sizeof(AFF *));
        if (!c.tb)
            goto nomem;
#if HAVE_ENDO
        if (pl.glv) {
            c.endo = msm_alloc(pl.m * sizeof(AFF));
            if (!c.endo)
                goto nomem;
        }
#endif
        czk_par_for(pl.m, pl.m >= MSM_SERIAL_BELOW ? pl.threads : 1, F(msm_bases), &c);
    }
    if (pl.n_ones || pl.n_hi)
        czk_par_for(pl.threads, pl.threads, F(msm_plain), &c);
    if (pl.m)
        czk_par_for(pl.groups * pl.parts, pl.threads, F(msm_tasks), &c);

    /* Horner over windows, top first: acc = acc * 2^c + window sum */
    F(xyzz_set_inf)(&acc);
    for (w = pl.m ? pl.windows : 0; w-- > 0;) {
        for (i = 0; i < pl.c && !F(xyzz_is_inf)(&acc); i++)
            F(xyzz_dbl)(&acc, &acc);
        for (p = 0; p < pl.parts; p++)
            F(xyzz_add)(&acc, &c.wsum[w * pl.parts + p]);
    }
    /* scalars >= 2^255: their top bit contributes 2^255 * sum of their bases */
    F(xyzz_set_inf)(&t);
    for (i = 0; i < pl.threads; i++)
        F(xyzz_add)(&t, &c.hsum[i]);
    for (i = 0; i < 255 && !F(xyzz_is_inf)(&t); i++)
        F(xyzz_dbl)(&t, &t);
    F(xyzz_add)(&acc, &t);
    for (i = 0; i < pl.threads; i++)
        F(xyzz_add)(&acc, &c.psum[i]);
    F(xyzz_add)(out, &acc);
    goto out;
nomem:
    czk_err("msm of %zu points: out of memory for buckets", n);
    rc = -ENOMEM;
out:
    for (i = 0; i < nws; i++)
        F(msm_ws_free)(&c.ws[i]);
    free(c.ws);
    msm_free(c.tb);
    msm_free(c.endo);
    free(c.wsum);
    free(c.psum);
    free(c.hsum);
    msm_plan_free(&pl);
    return rc;
}

/* chunks of at most MSM_CHUNK_OF terms bound the plan's memory (digits, base
 * pointers, phi(P) copies) whatever n is; the extra reductions cost little
 * at that size */
static int F(msm_run)(JAC *r, const AFF *bases, const MSM_SCALAR *scalars, size_t n, int nthreads)
{
    const size_t chunk = MSM_CHUNK_OF(sizeof(AFF));
    XYZZ acc;
    size_t off;
    int rc;

    F(xyzz_set_inf)(&acc);
    for (off = 0; off < n; off += chunk) {
        size_t len = n - off < chunk ? n - off : chunk;
        rc = F(msm_chunk)(&acc, bases + off, scalars + off, len, nthreads);
        if (rc)
            return rc;
    }
    F(xyzz_to_jac)(r, &acc);
    return 0;
}

#undef MSM_X8_ON
#undef XYZZ
#undef XYZZX8
#undef F
#undef CAT
#undef CAT_
/* the includer's macros, so the next instantiation starts clean */
#undef SUF
#undef FE
#undef FE_ADD
#undef FE_SUB
#undef FE_DBL
#undef FE_NEG
#undef FE_MUL
#undef FE_SQR
#undef FE_IS_ZERO
#undef FE_EQ
#undef FE_INV
#undef FE_COST_BATCH
#undef FE_COST_BATCH_X8
#undef FE_FLUSH_X8
#undef FE_FLUSH_X8_BYTES
#undef VX
#undef VX_MUL
#undef VX_SQR
#undef VX_ADD
#undef VX_SUB
#undef VX_BLEND
#undef VX_SET1
#undef VX_GATHER
#undef VX_STORE
#undef VX_LOAD
#undef VX_IS_ZERO
#undef FE_ONE
#undef AFF
#undef JAC
#undef JAC_SET_INF
#undef HAVE_ENDO
#undef ENDO_READY
#undef ENDO_APPLY
