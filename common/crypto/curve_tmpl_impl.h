/*
 * curve_tmpl_impl.h — template of the inline Jacobian point arithmetic for
 * y^2 = x^3 + b (a = 0), instantiated by curve_impl.h for G1 (over Fp) and G2
 * (over Fp2), and by bn254_curve_impl.h for BN254's.  The includer defines:
 *   CG      function prefix, also the Jacobian type (czk_g1), CA the affine type,
 *   CF      the coordinate field type, also its function prefix (the
 *           operations' names follow: curve_field_ops_impl.h),
 *   CF_ONE  an lvalue of the field's one.
 * The macros are undefined at the end.
 * Formulas (explicit-formulas database, a = 0): dbl-2009-l, add-2007-bl,
 * madd-2007-bl, each made complete by branching on the exceptional cases
 * (infinity operands, equal points, opposite points).  Outputs may alias inputs.
 */
#define CG_CAT_(a, b) a##b
#define CG_CAT(a, b) CG_CAT_(a, b)
#define CGF(name) CG_CAT(CG, name)
#include "common/crypto/curve_field_ops_impl.h"

static inline int CGF(_aff_is_inf_i)(const CA *p) { return CF_ISZERO(&p->x) && CF_ISZERO(&p->y); }
static inline int CGF(_is_inf_i)(const CJ *p) { return CF_ISZERO(&p->z); }

static inline void CGF(_set_inf_i)(CJ *r)
{
    r->x = CF_ONE;
    r->y = CF_ONE;
    memset(&r->z, 0, sizeof(r->z));
}

static inline void CGF(_from_aff_i)(CJ *r, const CA *p)
{
    if (CGF(_aff_is_inf_i)(p)) {
        CGF(_set_inf_i)(r);
        return;
    }
    r->x = p->x;
    r->y = p->y;
    r->z = CF_ONE;
}

static inline void CGF(_neg_i)(CJ *r, const CJ *p)
{
    r->x = p->x;
    CF_NEG(&r->y, &p->y);
    r->z = p->z;
}

/* dbl-2009-l: 2M + 5S; infinity maps to infinity through Z3 = 2 Y1 Z1 */
static inline void CGF(_dbl_i)(CJ *r, const CJ *p)
{
    CF A, B, C, D, E, F, t;
    CF_SQR(&A, &p->x);
    CF_SQR(&B, &p->y);
    CF_SQR(&C, &B);
    CF_ADD(&D, &p->x, &B);
    CF_SQR(&D, &D);
    CF_SUB(&D, &D, &A);
    CF_SUB(&D, &D, &C);
    CF_DBL(&D, &D);
    CF_DBL(&E, &A);
    CF_ADD(&E, &E, &A);
    CF_SQR(&F, &E);
    CF_MUL(&t, &p->y, &p->z); /* before r->y is written (r may alias p) */
    CF_DBL(&r->z, &t);
    CF_DBL(&t, &D);
    CF_SUB(&r->x, &F, &t);
    CF_SUB(&t, &D, &r->x);
    CF_MUL(&t, &E, &t);
    CF_DBL(&C, &C);
    CF_DBL(&C, &C);
    CF_DBL(&C, &C);
    CF_SUB(&r->y, &t, &C);
}

/* add-2007-bl: 11M + 5S, complete via branches */
static inline void CGF(_add_i)(CJ *r, const CJ *a, const CJ *b)
{
    if (CGF(_is_inf_i)(a)) {
        *r = *b;
        return;
    }
    if (CGF(_is_inf_i)(b)) {
        *r = *a;
        return;
    }
    CF z1z1, z2z2, u1, u2, s1, s2, h, rr, i, j, v, t, x3, y3, z3;
    CF_SQR(&z1z1, &a->z);
    CF_SQR(&z2z2, &b->z);
    CF_MUL(&u1, &a->x, &z2z2);
    CF_MUL(&u2, &b->x, &z1z1);
    CF_MUL(&s1, &a->y, &b->z);
    CF_MUL(&s1, &s1, &z2z2);
    CF_MUL(&s2, &b->y, &a->z);
    CF_MUL(&s2, &s2, &z1z1);
    CF_SUB(&h, &u2, &u1);
    CF_SUB(&rr, &s2, &s1);
    if (CF_ISZERO(&h)) {
        if (CF_ISZERO(&rr))
            CGF(_dbl_i)(r, a);
        else
            CGF(_set_inf_i)(r);
        return;
    }
    CF_DBL(&i, &h);
    CF_SQR(&i, &i);
    CF_MUL(&j, &h, &i);
    CF_DBL(&rr, &rr);
    CF_MUL(&v, &u1, &i);
    CF_SQR(&x3, &rr);
    CF_SUB(&x3, &x3, &j);
    CF_DBL(&t, &v);
    CF_SUB(&x3, &x3, &t);
    CF_SUB(&t, &v, &x3);
    CF_MUL(&y3, &rr, &t);
    CF_MUL(&t, &s1, &j);
    CF_DBL(&t, &t);
    CF_SUB(&y3, &y3, &t);
    CF_ADD(&z3, &a->z, &b->z);
    CF_SQR(&z3, &z3);
    CF_SUB(&z3, &z3, &z1z1);
    CF_SUB(&z3, &z3, &z2z2);
    CF_MUL(&r->z, &z3, &h);
    r->x = x3;
    r->y = y3;
}

/* madd-2007-bl (b affine, Z2 = 1): 7M + 4S, complete via branches */
static inline void CGF(_add_aff_i)(CJ *r, const CJ *a, const CA *b)
{
    if (CGF(_aff_is_inf_i)(b)) {
        *r = *a;
        return;
    }
    if (CGF(_is_inf_i)(a)) {
        CGF(_from_aff_i)(r, b);
        return;
    }
    CF z1z1, u2, s2, h, hh, rr, i, j, v, t, x3, y3;
    CF_SQR(&z1z1, &a->z);
    CF_MUL(&u2, &b->x, &z1z1);
    CF_MUL(&s2, &b->y, &a->z);
    CF_MUL(&s2, &s2, &z1z1);
    CF_SUB(&h, &u2, &a->x);
    CF_SUB(&rr, &s2, &a->y);
    if (CF_ISZERO(&h)) {
        if (CF_ISZERO(&rr))
            CGF(_dbl_i)(r, a);
        else
            CGF(_set_inf_i)(r);
        return;
    }
    CF_SQR(&hh, &h);
    CF_DBL(&i, &hh);
    CF_DBL(&i, &i);
    CF_MUL(&j, &h, &i);
    CF_DBL(&rr, &rr);
    CF_MUL(&v, &a->x, &i);
    CF_SQR(&x3, &rr);
    CF_SUB(&x3, &x3, &j);
    CF_DBL(&t, &v);
    CF_SUB(&x3, &x3, &t);
    CF_SUB(&t, &v, &x3);
    CF_MUL(&y3, &rr, &t);
    CF_MUL(&t, &a->y, &j);
    CF_DBL(&t, &t);
    CF_SUB(&y3, &y3, &t);
    CF_ADD(&t, &a->z, &h);
    CF_SQR(&t, &t);
    CF_SUB(&t, &t, &z1z1);
    CF_SUB(&r->z, &t, &hh);
    r->x = x3;
    r->y = y3;
}

#undef CGF
#include "common/crypto/curve_field_ops_undef_impl.h"
