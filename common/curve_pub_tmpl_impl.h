/*
 * curve_pub_tmpl_impl.h — template of the public point functions of curve.h,
 * included once by curve_g1.c (G1 over Fp) and once by curve_g2.c (G2 over
 * Fp2).  The includer defines, besides the macros of curve_tmpl_impl.h
 * (CG, CJ, CA, CF, CF_ADD ... CF_ONE): CF_INV (returns 0 or -EDOM),
 * CF_CANON (coordinates are canonical integers < q), CF_ZERO and CB (the
 * curve constant b, an lvalue).  Group-specific parts (generators, subgroup
 * checks) stay in the .c files.
 *
 * Scalar multiplication is not constant-time: callers holding secret scalars
 * (proof blinding) accept the timing of a fixed 4-bit window with a
 * data-dependent skip of zero windows.
 */
#define CG_CAT_(a, b) a##b
#define CG_CAT(a, b) CG_CAT_(a, b)
#define CGF(name) CG_CAT(CG, name)

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

/* fixed 4-bit window, most significant nibble first; k is a plain 256-bit integer */
void CGF(_mul)(CJ *r, const CJ *p, const czk_fr *k_std)
{
    CJ tbl[16], acc;
    bool started = false;

    CGF(_set_inf_i)(&tbl[0]);
    tbl[1] = *p;
    CGF(_dbl_i)(&tbl[2], p);
    for (int i = 3; i < 16; i++)
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

void CGF(_mul_aff)(CJ *r, const CA *p, const czk_fr *k_std)
{
    CJ pj;
    CGF(_from_aff_i)(&pj, p);
    CGF(_mul)(r, &pj, k_std);
}

/* ---- fixed-base tables ----
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
    if (window_bits < CZK_FB_MIN_BITS || window_bits > CZK_FB_MAX_BITS)
        return -EINVAL;
    unsigned w = window_bits, nwin = 256 / w + 1;
    size_t half = (size_t)1 << (w - 1);
    CG_CAT(CG, _fb) *t = malloc(sizeof(*t) + (size_t)nwin * half * sizeof(CA));
    CJ *tmp = malloc(half * sizeof(CJ));
    CF *scratch = malloc(half * sizeof(CF));
    if (t == NULL || tmp == NULL || scratch == NULL) {
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

static inline uint64_t CGF(_fb_bits_)(const czk_fr *k, unsigned pos, unsigned w)
{
    if (pos >= 256)
        return 0;
    unsigned limb = pos / 64, off = pos % 64;
    uint64_t v = k->l[limb] >> off;
    if (off + w > 64 && limb + 1 < 4)
        v |= k->l[limb + 1] << (64 - off);
    return v & (((uint64_t)1 << w) - 1);
}

void CGF(_fb_mul)(CJ *r, const CG_CAT(CG, _fb) *t, const czk_fr *k_std)
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
