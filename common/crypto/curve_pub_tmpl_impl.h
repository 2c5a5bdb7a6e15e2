/*
 * curve_pub_tmpl_impl.h — template of the public point functions of curve.h
 * and bn254_curve.h, included once by each of curve_g1.c, curve_g2.c,
 * bn254_g1.c and bn254_g2.c.  The includer defines, besides the macros of
 * curve_tmpl_impl.h (CG, CA, CF, CF_ONE; the field operations' names follow
 * from CF: curve_field_ops_impl.h, with CF_INV returning 0 or -EDOM and
 * CF_INV_CT the constant-time inversion, void, 0 -> 0, behind _to_aff_ct):
 * CG_NAME (a string for log lines), CF_CANON (coordinates are canonical
 * integers < q) and CB (the curve constant b, an lvalue).  Group-specific
 * parts (generators, subgroup checks) stay in the .c files.
 * CF_MUL_B3 multiplies by 3b (the complete formulas of _mul need it).
 * Optional: CG_SCALAR, the type of the scalars (4 limbs, standard form;
 * czk_fr when not defined), CG_NO_MUL_ABSU to leave out _mul_absu_ (by
 * BLS12-381's |u|, for its subgroup checks), CG_WITH_MUL_VT to add the
 * variable-time _mul_vt (public points and scalars only).
 */
#ifndef CG_SCALAR
#define CG_SCALAR czk_fr
#endif
#define CG_CAT_(a, b) a##b
#define CG_CAT(a, b) CG_CAT_(a, b)
#define CGF(name) CG_CAT(CG, name)
#include "common/crypto/curve_field_ops_impl.h"

bool CGF(_aff_is_inf)(const CA *p) { return CGF(_aff_is_inf_i)(p); }

bool CGF(_aff_on_curve)(const CA *p)
{
    CF l, r;
    if (CGF(_aff_is_inf_i)(p))
        return true;
    if (!CF_CANON(&p->x) || !CF_CANON(&p->y))
        return false;
    CF_SQR(&l, &p->y);
    CF_SQR(&r, &p->x);
    CF_MUL(&r, &r, &p->x);
    CF_ADD(&r, &r, &CB);
    return CF_EQ(&l, &r);
}

bool CGF(_aff_eq)(const CA *a, const CA *b) { return CF_EQ(&a->x, &b->x) && CF_EQ(&a->y, &b->y); }

void CGF(_aff_neg)(CA *r, const CA *p)
{
    r->x = p->x;
    CF_NEG(&r->y, &p->y); /* infinity (0, 0) stays all zero */
}

void CGF(_set_inf)(CJ *r) { CGF(_set_inf_i)(r); }
bool CGF(_is_inf)(const CJ *p) { return CGF(_is_inf_i)(p); }
void CGF(_from_aff)(CJ *r, const CA *p) { CGF(_from_aff_i)(r, p); }
void CGF(_dbl)(CJ *r, const CJ *p) { CGF(_dbl_i)(r, p); }
void CGF(_add)(CJ *r, const CJ *a, const CJ *b) { CGF(_add_i)(r, a, b); }
void CGF(_add_aff)(CJ *r, const CJ *a, const CA *b) { CGF(_add_aff_i)(r, a, b); }
void CGF(_neg)(CJ *r, const CJ *p) { CGF(_neg_i)(r, p); }

void CGF(_to_aff)(CA *r, const CJ *p)
{
    CF zi, zi2;
    if (CGF(_is_inf_i)(p)) {
        memset(r, 0, sizeof(*r));
        return;
    }
    CF_INV(&zi, &p->z);
    CF_SQR(&zi2, &zi);
    CF_MUL(&r->x, &p->x, &zi2);
    CF_MUL(&zi2, &zi2, &zi);
    CF_MUL(&r->y, &p->y, &zi2);
}

/* Montgomery's trick over the Z coordinates; infinities are skipped */
void CGF(_batch_to_aff)(CA *out, const CJ *in, size_t n, CF *scratch)
{
    CF acc = CF_ONE, inv, zi, zi2;

    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc;
        if (!CGF(_is_inf_i)(&in[i]))
            CF_MUL(&acc, &acc, &in[i].z);
    }
    CF_INV(&inv, &acc); /* product of non-zero values: invertible */
    for (size_t i = n; i-- > 0;) {
        if (CGF(_is_inf_i)(&in[i])) {
            memset(&out[i], 0, sizeof(out[i]));
            continue;
        }
        CF_MUL(&zi, &inv, &scratch[i]);
        CF_MUL(&inv, &inv, &in[i].z);
        CF_SQR(&zi2, &zi);
        CF_MUL(&out[i].x, &in[i].x, &zi2);
        CF_MUL(&zi2, &zi2, &zi);
        CF_MUL(&out[i].y, &in[i].y, &zi2);
    }
}

bool CGF(_eq)(const CJ *a, const CJ *b)
{
    int ia = CGF(_is_inf_i)(a), ib = CGF(_is_inf_i)(b);
    if (ia || ib)
        return ia && ib;
    CF z1z1, z2z2, l, r;
    CF_SQR(&z1z1, &a->z);
    CF_SQR(&z2z2, &b->z);
    CF_MUL(&l, &a->x, &z2z2);
    CF_MUL(&r, &b->x, &z1z1);
    if (!CF_EQ(&l, &r))
        return false;
    CF_MUL(&z1z1, &z1z1, &a->z);
    CF_MUL(&z2z2, &z2z2, &b->z);
    CF_MUL(&l, &a->y, &z2z2);
    CF_MUL(&r, &b->y, &z1z1);
    return CF_EQ(&l, &r);
}

/* ---- constant time (the _ct functions of curve.h) ----
 * Homogeneous projective coordinates (x = X/Z, y = Y/Z, identity (0, 1, 0))
 * with the complete, branch-free formulas of Renes, Costello and Batina,
 * "Complete addition formulas for prime order elliptic curves" (2016),
 * algorithms 7 (addition, 12M) and 9 (doubling, 6M + 2S) for a = 0; they
 * are complete on the whole curve because neither G1's nor G2's curve has a
 * point of order 2.  Points enter and leave in the Jacobian coordinates of
 * curve.h; the conversions select the identity by mask.  Multiplication is a
 * fixed 4-bit window over all 64 nibbles with a masked table scan: the
 * sequence of operations and memory accesses depends on neither the scalar
 * nor the point (the finalizer's blinding scalars are secret).  The homogeneous
 * points live in CJ structs but are never handed out. */
static void CGF(_ct_add_)(CJ *r, const CJ *p, const CJ *q)
{
    CF t0, t1, t2, t3, t4, x3, y3, z3;
    CF_MUL(&t0, &p->x, &q->x);
    CF_MUL(&t1, &p->y, &q->y);
    CF_MUL(&t2, &p->z, &q->z);
    CF_ADD(&t3, &p->x, &p->y);
    CF_ADD(&t4, &q->x, &q->y);
    CF_MUL(&t3, &t3, &t4);
    CF_ADD(&t4, &t0, &t1);
    CF_SUB(&t3, &t3, &t4);
    CF_ADD(&t4, &p->y, &p->z);
    CF_ADD(&x3, &q->y, &q->z);
    CF_MUL(&t4, &t4, &x3);
    CF_ADD(&x3, &t1, &t2);
    CF_SUB(&t4, &t4, &x3);
    CF_ADD(&x3, &p->x, &p->z);
    CF_ADD(&y3, &q->x, &q->z);
    CF_MUL(&x3, &x3, &y3);
    CF_ADD(&y3, &t0, &t2);
    CF_SUB(&y3, &x3, &y3);
    CF_DBL(&x3, &t0);
    CF_ADD(&t0, &x3, &t0);
    CF_MUL_B3(&t2, &t2);
    CF_ADD(&z3, &t1, &t2);
    CF_SUB(&t1, &t1, &t2);
    CF_MUL_B3(&y3, &y3);
    CF_MUL(&x3, &t4, &y3);
    CF_MUL(&t2, &t3, &t1);
    CF_SUB(&x3, &t2, &x3);
    CF_MUL(&y3, &y3, &t0);
    CF_MUL(&t1, &t1, &z3);
    CF_ADD(&y3, &t1, &y3);
    CF_MUL(&t0, &t0, &t3);
    CF_MUL(&z3, &z3, &t4);
    CF_ADD(&z3, &z3, &t0);
    r->x = x3;
    r->y = y3;
    r->z = z3;
}

static void CGF(_ct_dbl_)(CJ *r, const CJ *p)
{
    CF t0, t1, t2, x3, y3, z3;
    CF_SQR(&t0, &p->y);
    CF_DBL(&z3, &t0);
    CF_DBL(&z3, &z3);
    CF_DBL(&z3, &z3);
    CF_MUL(&t1, &p->y, &p->z);
    CF_SQR(&t2, &p->z);
    CF_MUL_B3(&t2, &t2);
    CF_MUL(&x3, &t2, &z3);
    CF_ADD(&y3, &t0, &t2);
    CF_MUL(&z3, &t1, &z3);
    CF_DBL(&t1, &t2);
    CF_ADD(&t2, &t1, &t2);
    CF_SUB(&t0, &t0, &t2);
    CF_MUL(&y3, &t0, &y3);
    CF_ADD(&y3, &x3, &y3);
    CF_MUL(&t1, &p->x, &p->y);
    CF_MUL(&x3, &t0, &t1);
    CF_DBL(&x3, &x3);
    r->x = x3;
    r->y = y3;
    r->z = z3;
}

/* r = tbl[idx] for idx < 16, reading every entry (mask select) */
static void CGF(_ct_select_)(CJ *r, const CJ tbl[16], unsigned idx)
{
    uint64_t *out = (uint64_t *)r;
    const size_t words = sizeof(CJ) / sizeof(uint64_t);
    for (size_t w = 0; w < words; w++)
        out[w] = 0;
    for (unsigned i = 0; i < 16; i++) {
        uint64_t mask = ((uint64_t)(i ^ idx) - 1) >> 63; /* 1 when equal */
        mask = -czk_ct_barrier_(mask);
        const uint64_t *in = (const uint64_t *)&tbl[i];
        for (size_t w = 0; w < words; w++)
            out[w] |= in[w] & mask;
    }
}

#define CG_WORDS_(x) (sizeof(x) / sizeof(uint64_t))

/* Jacobian (X, Y, Z) -> homogeneous (X Z, Y, Z^3); any Z == 0 -> (0, 1, 0)
 * (the identity of the complete formulas needs Y != 0) */
static void CGF(_ct_from_jac_)(CJ *h, const CJ *p)
{
    CF z2;
    uint64_t inf = czk_ct_zero_mask_((const uint64_t *)&p->z, CG_WORDS_(CF));
    CF_MUL(&h->x, &p->x, &p->z);
    h->y = p->y;
    czk_ct_cmov_((uint64_t *)&h->y, (const uint64_t *)&CF_ONE, inf, CG_WORDS_(CF));
    CF_SQR(&z2, &p->z);
    CF_MUL(&h->z, &z2, &p->z);
}

/* homogeneous (X, Y, Z) -> Jacobian (X Z, Y Z^2, Z); Z == 0 -> (1, 1, 0),
 * the infinity of _set_inf */
static void CGF(_ct_to_jac_)(CJ *r, const CJ *h)
{
    CF z2, z = h->z;
    uint64_t inf = czk_ct_zero_mask_((const uint64_t *)&z, CG_WORDS_(CF));
    CF_MUL(&r->x, &h->x, &z);
    CF_SQR(&z2, &z);
    CF_MUL(&r->y, &h->y, &z2);
    r->z = z;
    czk_ct_cmov_((uint64_t *)&r->x, (const uint64_t *)&CF_ONE, inf, CG_WORDS_(CF));
    czk_ct_cmov_((uint64_t *)&r->y, (const uint64_t *)&CF_ONE, inf, CG_WORDS_(CF));
}

/* affine -> homogeneous (x, y, 1); all-zero infinity -> (0, 1, 0) */
static void CGF(_ct_from_aff_)(CJ *h, const CA *p)
{
    uint64_t inf = czk_ct_zero_mask_((const uint64_t *)p, CG_WORDS_(CA));
    h->x = p->x;
    h->y = p->y;
    h->z = CF_ONE;
    czk_ct_cmov_((uint64_t *)&h->y, (const uint64_t *)&CF_ONE, inf, CG_WORDS_(CF));
    /* Z = 1 & ~inf: zero for infinity */
    for (size_t w = 0; w < CG_WORDS_(CF); w++)
        ((uint64_t *)&h->z)[w] &= ~inf;
}

/* k * h for homogeneous h, k any 256-bit integer */
static void CGF(_ct_mul_)(CJ *acc, const CJ *h, const CG_SCALAR *k_std)
{
    CJ tbl[16], sel;

    memset(&tbl[0], 0, sizeof(tbl[0]));
    tbl[0].y = CF_ONE;
    tbl[1] = *h;
    for (int i = 2; i < 16; i++)
        CGF(_ct_add_)(&tbl[i], &tbl[i - 1], &tbl[1]);
    *acc = tbl[0];
    for (int li = 3; li >= 0; li--) {
        for (int sh = 60; sh >= 0; sh -= 4) {
            CGF(_ct_dbl_)(acc, acc);
            CGF(_ct_dbl_)(acc, acc);
            CGF(_ct_dbl_)(acc, acc);
            CGF(_ct_dbl_)(acc, acc);
            CGF(_ct_select_)(&sel, tbl, (unsigned)(k_std->l[li] >> sh) & 15);
            CGF(_ct_add_)(acc, acc, &sel);
        }
    }
    explicit_bzero(tbl, sizeof(tbl));
    explicit_bzero(&sel, sizeof(sel));
}

void CGF(_mul_ct)(CJ *r, const CJ *p, const CG_SCALAR *k_std)
{
    CJ h, acc;
    CGF(_ct_from_jac_)(&h, p);
    CGF(_ct_mul_)(&acc, &h, k_std);
    CGF(_ct_to_jac_)(r, &acc);
    explicit_bzero(&acc, sizeof(acc));
}

void CGF(_mul_aff_ct)(CJ *r, const CA *p, const CG_SCALAR *k_std)
{
    CJ h, acc;
    CGF(_ct_from_aff_)(&h, p);
    CGF(_ct_mul_)(&acc, &h, k_std);
    CGF(_ct_to_jac_)(r, &acc);
    explicit_bzero(&acc, sizeof(acc));
}

void CGF(_add_ct)(CJ *r, const CJ *a, const CJ *b)
{
    CJ ha, hb;
    CGF(_ct_from_jac_)(&ha, a);
    CGF(_ct_from_jac_)(&hb, b);
    CGF(_ct_add_)(&ha, &ha, &hb);
    CGF(_ct_to_jac_)(r, &ha);
}

void CGF(_add_aff_ct)(CJ *r, const CJ *a, const CA *b)
{
    CJ ha, hb;
    CGF(_ct_from_jac_)(&ha, a);
    CGF(_ct_from_aff_)(&hb, b);
    CGF(_ct_add_)(&ha, &ha, &hb);
    CGF(_ct_to_jac_)(r, &ha);
}

/* 1/Z by CF_INV_CT, which maps Z = 0 to 0: infinity comes out all zero */
void CGF(_to_aff_ct)(CA *r, const CJ *p)
{
    CF zi, zi2, zi3;
    CF_INV_CT(&zi, &p->z);
    CF_SQR(&zi2, &zi);
    CF_MUL(&zi3, &zi2, &zi);
    CF_MUL(&r->x, &p->x, &zi2);
    CF_MUL(&r->y, &p->y, &zi3);
}

/* the constant-time code (public scalars gain nothing from a faster path here) */
void CGF(_mul)(CJ *r, const CJ *p, const CG_SCALAR *k_std) { CGF(_mul_ct)(r, p, k_std); }

#undef CG_WORDS_

#ifndef CG_NO_MUL_ABSU
/* r = |u| p with u = -0xd201000000010000 the BLS12-381 parameter (Hamming
 * weight 6: 63 doublings and 5 additions), for the subgroup checks */
static void CGF(_mul_absu_)(CJ *r, const CJ *p)
{
    const uint64_t absu = 0xd201000000010000ULL;
    CJ acc = *p;
    for (int bit = 62; bit >= 0; bit--) {
        CGF(_dbl_i)(&acc, &acc);
        if ((absu >> bit) & 1)
            CGF(_add_i)(&acc, &acc, p);
    }
    *r = acc;
}
#endif

#ifdef CG_WITH_MUL_VT
/* r = k p by a fixed 4-bit window, leading zero nibbles skipped: the time
 * depends on the scalar and the point (the branches of _add_i), so public
 * values only */
void CGF(_mul_vt)(CJ *r, const CJ *p, const CG_SCALAR *k_std)
{
    CJ tbl[16], acc;
    bool started = false;

    CGF(_set_inf_i)(&tbl[0]);
    tbl[1] = *p;
    for (int i = 2; i < 16; i++)
        CGF(_add_i)(&tbl[i], &tbl[i - 1], p);
    CGF(_set_inf_i)(&acc);
    for (int li = 3; li >= 0; li--) {
        for (int sh = 60; sh >= 0; sh -= 4) {
            unsigned nib = (unsigned)(k_std->l[li] >> sh) & 15;
            if (started) {
                CGF(_dbl_i)(&acc, &acc);
                CGF(_dbl_i)(&acc, &acc);
                CGF(_dbl_i)(&acc, &acc);
                CGF(_dbl_i)(&acc, &acc);
            }
            if (nib) {
                CGF(_add_i)(&acc, &acc, &tbl[nib]);
                started = true;
            }
        }
    }
    *r = acc;
}
#endif

void CGF(_mul_aff)(CJ *r, const CA *p, const CG_SCALAR *k_std) { CGF(_mul_aff_ct)(r, p, k_std); }

/* ---- fixed-base tables ----
 * A built table is read-only: any number of threads may call _fb_mul on it.
 * Signed windows of w bits: k = sum_i d_i 2^(w i) with |d_i| <= 2^(w-1), so
 * window i stores the affine multiples j * 2^(w i) * B for j = 1 .. 2^(w-1)
 * and a negative digit uses the negated point.  nwin = floor(256 / w) + 1
 * windows cover every k < 2^256 (the top window absorbs the last carry). */
struct CG_CAT(CG, _fb) {
    unsigned w, nwin;
    size_t half; /* 2^(w-1) points per window */
    CA pts[];
};

#define CZK_FB_MIN_BITS 2
#define CZK_FB_MAX_BITS 20

int CGF(_fb_new)(CG_CAT(CG, _fb) **out, const CA *base, unsigned window_bits)
{
    *out = NULL;
    if (window_bits < CZK_FB_MIN_BITS || window_bits > CZK_FB_MAX_BITS) {
        czk_err("%s fixed-base table: window of %u bits is outside %d..%d", CG_NAME, window_bits,
                CZK_FB_MIN_BITS, CZK_FB_MAX_BITS);
        return -EINVAL;
    }
    unsigned w = window_bits, nwin = 256 / w + 1;
    size_t half = (size_t)1 << (w - 1);
    size_t bytes = sizeof(CG_CAT(CG, _fb)) + (size_t)nwin * half * sizeof(CA);
    CG_CAT(CG, _fb) *t = malloc(bytes);
    CJ *tmp = malloc(half * sizeof(CJ));
    CF *scratch = malloc(half * sizeof(CF));
    if (t == NULL || tmp == NULL || scratch == NULL) {
        czk_err("%s fixed-base table: could not allocate %zu bytes for %u-bit windows", CG_NAME, bytes, w);
        free(t);
        free(tmp);
        free(scratch);
        return -ENOMEM;
    }
    t->w = w;
    t->nwin = nwin;
    t->half = half;

    CA bi = *base; /* 2^(w i) B, affine */
    for (unsigned i = 0; i < nwin; i++) {
        CA *row = t->pts + (size_t)i * half;
        CGF(_from_aff_i)(&tmp[0], &bi);
        for (size_t j = 1; j < half; j++)
            CGF(_add_aff_i)(&tmp[j], &tmp[j - 1], &bi);
        CGF(_batch_to_aff)(row, tmp, half, scratch);
        if (i + 1 < nwin) {
            CJ next;
            CGF(_dbl_i)(&next, &tmp[half - 1]); /* 2 * 2^(w-1) * bi */
            CGF(_to_aff)(&bi, &next);
        }
    }
    free(tmp);
    free(scratch);
    *out = t;
    return 0;
}

static inline uint64_t CGF(_fb_bits_)(const CG_SCALAR *k, unsigned pos, unsigned w)
{
    if (pos >= 256)
        return 0;
    unsigned limb = pos / 64, off = pos % 64;
    uint64_t v = k->l[limb] >> off;
    if (off + w > 64 && limb + 1 < 4)
        v |= k->l[limb + 1] << (64 - off);
    return v & (((uint64_t)1 << w) - 1);
}

void CGF(_fb_mul)(CJ *r, const CG_CAT(CG, _fb) *t, const CG_SCALAR *k_std)
{
    CJ acc;
    CA neg;
    uint64_t carry = 0;
    const uint64_t half = t->half, full = (uint64_t)1 << t->w;

    CGF(_set_inf_i)(&acc);
    for (unsigned i = 0; i < t->nwin; i++) {
        uint64_t v = CGF(_fb_bits_)(k_std, i * t->w, t->w) + carry;
        carry = 0;
        if (v == 0)
            continue;
        const CA *row = t->pts + (size_t)i * half;
        if (v <= half || i + 1 == t->nwin) {
            CGF(_add_aff_i)(&acc, &acc, &row[v - 1]);
        } else {
            carry = 1;
            if (v == full)
                continue;
            const CA *p = &row[full - v - 1];
            neg.x = p->x;
            CF_NEG(&neg.y, &p->y);
            CGF(_add_aff_i)(&acc, &acc, &neg);
        }
    }
    *r = acc;
}

void CGF(_fb_free)(CG_CAT(CG, _fb) *t) { free(t); }

#undef CGF
#include "common/crypto/curve_field_ops_undef_impl.h"
