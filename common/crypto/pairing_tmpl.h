/*
 * pairing_tmpl.h — the Miller loop of an optimal ate pairing, written once
 * and included by pairing.c (BLS12-381, M-type twist) and bn254_pairing.c
 * (BN254, D-type twist).  G2 points are kept in homogeneous projective
 * coordinates on the twist y^2 = x^3 + b'; every line is scaled by an Fp2
 * factor (which the final exponentiation removes) so that no inversion is
 * needed, and is produced as three Fp2 coefficients:
 *     lc (constant), lx (times xp), ly (times yp)
 * which the twist places in a sparse Fp12 element (PT_MUL_LINE).
 *
 * The includer includes its pairing header and defines:
 *   PT          the public prefix (czk makes czk_miller_loop, czk_pairing,
 *               czk_pairing_product_is_one; its czk_final_exp is defined by
 *               the includer), PT_FP2 / PT_FP12 the Fp2 / Fp12 types, also
 *               their function prefixes, PT_FP2_ONE, PT_FP12_ONE,
 *   PT_G1A, PT_G2A  the affine point types, PT_G1 / PT_G2 their prefixes,
 *   PT_MUL_B(r, a)  r = b' a,
 *   PT_MUL_LINE(f, lc, lx, ly)  f *= the sparse element of the line,
 *   PT_LOOP_TOP     the index of the first loop digit below the top one,
 *   PT_DIGIT(b)     the loop digit b (0, 1, or -1 with PT_SIGNED_DIGITS),
 *   PT_EXP_ABS      |x|, the 64-bit parameter of the curve family, for
 *                   exp_by_neg_x (a^-|x| in the cyclotomic subgroup);
 * and optionally:
 *   PT_SIGNED_DIGITS  the digits may be -1 (a NAF): the loop adds -Q then,
 *   PT_INIT()       a statement run first by the Miller loop (lazy tables).
 * After the loop over the digits, the includer's miller_end(f, t, p, q,
 * idx, m) finishes a batch (conjugation for x < 0, Frobenius steps), with
 * dbl_step, add_step and ell at hand; it is declared here and defined after
 * the include.
 */
#define PT_CAT_(a, b) a##b
#define PT_CAT(a, b) PT_CAT_(a, b)
#define PTF(name) PT_CAT(PT, name)
#define F2(name) PT_CAT(PT_FP2, name)
#define F12(name) PT_CAT(PT_FP12, name)

typedef struct g2_proj { PT_FP2 x, y, z; } g2_proj;

/*
 * T = 2T, and the tangent line at T scaled by 2YZ:
 *   lc = Y^2 - 3b'Z^2,  lx = -3X^2,  ly = 2YZ
 * (with Y^2 Z = X^3 + b'Z^3, (L xT - yT) 2YZ = Y^2 - 3b'Z^2).
 * New point (the x, y of 2T times a common factor):
 *   X3 = 2XY(Y^2 - 9b'Z^2), Y3 = (Y^2 + 9b'Z^2)^2 - 108 b'^2 Z^4, Z3 = 8 Y^3 Z.
 */
static void dbl_step(g2_proj *t, PT_FP2 *lc, PT_FP2 *lx, PT_FP2 *ly)
{
    PT_FP2 xx, yy, zz, w, w3, s, yz;

    F2(_sqr)(&xx, &t->x);
    F2(_sqr)(&yy, &t->y);
    F2(_sqr)(&zz, &t->z);
    PT_MUL_B(&w, &zz);
    F2(_dbl)(&s, &w);
    F2(_add)(&w, &w, &s);               /* W = 3b'Z^2 */
    F2(_mul)(&yz, &t->y, &t->z);

    F2(_sub)(lc, &yy, &w);
    F2(_dbl)(lx, &xx);
    F2(_add)(lx, lx, &xx);
    F2(_neg)(lx, lx);                   /* -3X^2 (times xp in ell) */
    F2(_dbl)(ly, &yz);                  /* 2YZ (times yp in ell) */

    F2(_dbl)(&w3, &w);
    F2(_add)(&w3, &w3, &w);             /* 3W = 9b'Z^2 */

    F2(_mul)(&s, &t->x, &t->y);
    F2(_dbl)(&s, &s);                   /* 2XY */
    F2(_sub)(&t->x, &yy, &w3);
    F2(_mul)(&t->x, &t->x, &s);

    F2(_mul)(&t->z, &yy, &yz);          /* Y^3 Z */
    F2(_dbl)(&t->z, &t->z);
    F2(_dbl)(&t->z, &t->z);
    F2(_dbl)(&t->z, &t->z);

    F2(_add)(&s, &yy, &w3);
    F2(_sqr)(&s, &s);                   /* (Y^2 + 3W)^2 */
    F2(_sqr)(&w, &w);                   /* W^2 */
    F2(_dbl)(&w, &w);
    F2(_dbl)(&w, &w);                   /* 4W^2 */
    F2(_sub)(&s, &s, &w);
    F2(_sub)(&s, &s, &w);
    F2(_sub)(&t->y, &s, &w);            /* - 12 W^2 = -108 b'^2 Z^4 */
}

/*
 * T = T + Q (Q affine, T != +-Q), and the line through T and Q scaled by
 * L = X - xq Z, with H = Y - yq Z (slope H / L):
 *   lc = H xq - L yq,  lx = -H,  ly = L.
 * New point: D = H^2 Z + L^3 - 2 L^2 X, X3 = L D,
 *            Y3 = H (L^2 X - D) - L^3 Y, Z3 = L^3 Z.
 */
static void add_step(g2_proj *t, const PT_G2A *q, PT_FP2 *lc, PT_FP2 *lx, PT_FP2 *ly)
{
    PT_FP2 h, l, l2, l3, l2x, d, s;

    F2(_mul)(&h, &q->y, &t->z);
    F2(_sub)(&h, &t->y, &h);
    F2(_mul)(&l, &q->x, &t->z);
    F2(_sub)(&l, &t->x, &l);

    F2(_mul)(lc, &h, &q->x);
    F2(_mul)(&s, &l, &q->y);
    F2(_sub)(lc, lc, &s);
    F2(_neg)(lx, &h);
    *ly = l;

    F2(_sqr)(&l2, &l);
    F2(_mul)(&l3, &l2, &l);
    F2(_mul)(&l2x, &l2, &t->x);
    F2(_sqr)(&d, &h);
    F2(_mul)(&d, &d, &t->z);
    F2(_add)(&d, &d, &l3);
    F2(_sub)(&d, &d, &l2x);
    F2(_sub)(&d, &d, &l2x);

    F2(_mul)(&t->x, &l, &d);
    F2(_sub)(&s, &l2x, &d);
    F2(_mul)(&s, &s, &h);
    F2(_mul)(&l2x, &l3, &t->y);         /* reuse: L^3 Y */
    F2(_sub)(&t->y, &s, &l2x);
    F2(_mul)(&t->z, &t->z, &l3);
}

/* f *= the line (lc, lx, ly) evaluated at P */
static void ell(PT_FP12 *f, const PT_G1A *p, PT_FP2 *lc, PT_FP2 *lx, PT_FP2 *ly)
{
    F2(_mul_fp)(lx, lx, &p->x);
    F2(_mul_fp)(ly, ly, &p->y);
    PT_MUL_LINE(f, lc, lx, ly);
}

/* up to this many pairs share one Miller loop; more are done in batches */
#define ML_BATCH 16

static void miller_end(PT_FP12 *f, g2_proj *t, const PT_G1A *p, const PT_G2A *q,
                       const size_t *idx, size_t m);

static void miller_batch(PT_FP12 *f, const PT_G1A *p, const PT_G2A *q, size_t n)
{
    g2_proj t[ML_BATCH];
#ifdef PT_SIGNED_DIGITS
    PT_G2A qneg[ML_BATCH];
#endif
    size_t idx[ML_BATCH], m = 0;
    PT_FP2 lc, lx, ly;

    for (size_t i = 0; i < n; i++) {
        if (PT_CAT(PT_G1, _aff_is_inf)(&p[i]) || PT_CAT(PT_G2, _aff_is_inf)(&q[i]))
            continue;
        idx[m] = i;
        t[m].x = q[i].x;
        t[m].y = q[i].y;
        t[m].z = PT_FP2_ONE;
#ifdef PT_SIGNED_DIGITS
        PT_CAT(PT_G2, _aff_neg)(&qneg[m], &q[i]);
#endif
        m++;
    }
    *f = PT_FP12_ONE;
    if (m == 0)
        return;

    /* digits below the top one, most significant first */
    for (int b = PT_LOOP_TOP; b >= 0; b--) {
        if (b != PT_LOOP_TOP)
            F12(_sqr)(f, f);
        for (size_t j = 0; j < m; j++) {
            dbl_step(&t[j], &lc, &lx, &ly);
            ell(f, &p[idx[j]], &lc, &lx, &ly);
        }
        if (PT_DIGIT(b) != 0) {
            for (size_t j = 0; j < m; j++) {
#ifdef PT_SIGNED_DIGITS
                add_step(&t[j], PT_DIGIT(b) > 0 ? &q[idx[j]] : &qneg[j], &lc, &lx, &ly);
#else
                add_step(&t[j], &q[idx[j]], &lc, &lx, &ly);
#endif
                ell(f, &p[idx[j]], &lc, &lx, &ly);
            }
        }
    }
    miller_end(f, t, p, q, idx, m);
}

void PTF(_miller_loop)(PT_FP12 *r, const PT_G1A *p, const PT_G2A *q, size_t n)
{
    PT_FP12 acc = PT_FP12_ONE, f;

#ifdef PT_INIT
    PT_INIT();
#endif
    for (size_t i = 0; i < n; i += ML_BATCH) {
        size_t k = n - i < ML_BATCH ? n - i : ML_BATCH;
        miller_batch(&f, p + i, q + i, k);
        F12(_mul)(&acc, &acc, &f);
    }
    *r = acc;
}

/* r = a^(-|x|) for a in the cyclotomic subgroup (where the conjugate is the
 * inverse) */
static void exp_by_neg_x(PT_FP12 *r, const PT_FP12 *a)
{
    PT_FP12 acc = *a;

    for (int b = 62 - __builtin_clzll(PT_EXP_ABS); b >= 0; b--) {
        F12(_cyclotomic_sqr)(&acc, &acc);
        if ((PT_EXP_ABS >> b) & 1)
            F12(_mul)(&acc, &acc, a);
    }
    F12(_conj)(r, &acc);
}

void PTF(_pairing)(PT_FP12 *r, const PT_G1A *p, const PT_G2A *q)
{
    PT_FP12 f;

    PTF(_miller_loop)(&f, p, q, 1);
    PTF(_final_exp)(r, &f);
}

bool PTF(_pairing_product_is_one)(const PT_G1A *p, const PT_G2A *q, size_t n)
{
    PT_FP12 f;

    PTF(_miller_loop)(&f, p, q, n);
    PTF(_final_exp)(&f, &f);
    return F12(_is_one)(&f);
}

#undef PTF
#undef F2
#undef F12
