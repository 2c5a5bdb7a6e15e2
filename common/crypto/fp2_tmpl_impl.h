/*
 * fp2_tmpl_impl.h — template of the inline operations of a quadratic
 * extension Fp2 = Fp[u]/(u^2 + 1) (coordinates c0 + c1*u), instantiated by
 * field_impl.h for BLS12-381 and by bn254_field_impl.h for BN254.  The
 * includer defines:
 *   F2   the Fp2 type, also the function prefix (czk_fp2 makes czk_fp2_add_i ...),
 *   F2B  the base field type, also its prefix (czk_fp), whose _i operations
 *        (field_tmpl_impl.h) must be defined.
 * It defines F2_add_i, _sub_i, _dbl_i, _neg_i, _mul_i (Karatsuba, 3 base
 * multiplications), _sqr_i (complex squaring, 2), _is_zero_i and _eq_i, then
 * undefines its inputs.  Outputs may alias inputs.
 */
#define F2_CAT_(a, b) a##b
#define F2_CAT(a, b) F2_CAT_(a, b)
#define F2F(name) F2_CAT(F2, name)
#define F2BF(name) F2_CAT(F2B, name)

CZK_INLINE void F2F(_add_i)(F2 *r, const F2 *a, const F2 *b)
{ F2BF(_add_i)(&r->c0, &a->c0, &b->c0); F2BF(_add_i)(&r->c1, &a->c1, &b->c1); }
CZK_INLINE void F2F(_sub_i)(F2 *r, const F2 *a, const F2 *b)
{ F2BF(_sub_i)(&r->c0, &a->c0, &b->c0); F2BF(_sub_i)(&r->c1, &a->c1, &b->c1); }
CZK_INLINE void F2F(_dbl_i)(F2 *r, const F2 *a)
{ F2BF(_dbl_i)(&r->c0, &a->c0); F2BF(_dbl_i)(&r->c1, &a->c1); }
CZK_INLINE void F2F(_neg_i)(F2 *r, const F2 *a)
{ F2BF(_neg_i)(&r->c0, &a->c0); F2BF(_neg_i)(&r->c1, &a->c1); }
/* Karatsuba: 3 Fp multiplications */
CZK_INLINE void F2F(_mul_i)(F2 *r, const F2 *a, const F2 *b)
{
    F2B v0, v1, s, t;
    F2BF(_mul_i)(&v0, &a->c0, &b->c0);
    F2BF(_mul_i)(&v1, &a->c1, &b->c1);
    F2BF(_add_i)(&s, &a->c0, &a->c1);
    F2BF(_add_i)(&t, &b->c0, &b->c1);
    F2BF(_mul_i)(&s, &s, &t);
    F2BF(_sub_i)(&s, &s, &v0);
    F2BF(_sub_i)(&r->c1, &s, &v1);
    F2BF(_sub_i)(&r->c0, &v0, &v1);
}
/* (a0 + a1 u)^2 = (a0 + a1)(a0 - a1) + 2 a0 a1 u: 2 Fp multiplications */
CZK_INLINE void F2F(_sqr_i)(F2 *r, const F2 *a)
{
    F2B s, d, p;
    F2BF(_add_i)(&s, &a->c0, &a->c1);
    F2BF(_sub_i)(&d, &a->c0, &a->c1);
    F2BF(_mul_i)(&p, &a->c0, &a->c1);
    F2BF(_mul_i)(&r->c0, &s, &d);
    F2BF(_dbl_i)(&r->c1, &p);
}
CZK_INLINE int F2F(_is_zero_i)(const F2 *a)
{ return F2BF(_is_zero_i)(&a->c0) && F2BF(_is_zero_i)(&a->c1); }
CZK_INLINE int F2F(_eq_i)(const F2 *a, const F2 *b)
{ return F2BF(_eq_i)(&a->c0, &b->c0) && F2BF(_eq_i)(&a->c1, &b->c1); }

#undef F2F
#undef F2BF
#undef F2
#undef F2B
