/*
 * curve_field_ops_impl.h — the names of the coordinate field's operations
 * that the curve templates (curve_tmpl_impl.h, curve_pub_tmpl_impl.h) use,
 * derived from the field type CF, which is also its function prefix (czk_fp,
 * czk_fp2, czk_bn254_fp, czk_bn254_fp2): the inline _add_i, _sub_i, _dbl_i,
 * _neg_i, _is_zero_i, _eq_i and the out-of-line _mul, _sqr, _inv, _inv_ct
 * (each an unrolled CIOS body: inlining them into every point formula made
 * the code many times larger for no measurable gain).  CJ, the Jacobian
 * type, defaults to CG.  Included by the templates; they undefine it all at
 * their end (curve_field_ops_undef_impl.h).
 */
#define CF_CAT_(a, b) a##b
#define CF_CAT(a, b) CF_CAT_(a, b)
#ifndef CJ
#define CJ CG
#endif
#define CF_ADD CF_CAT(CF, _add_i)
#define CF_SUB CF_CAT(CF, _sub_i)
#define CF_DBL CF_CAT(CF, _dbl_i)
#define CF_NEG CF_CAT(CF, _neg_i)
#define CF_MUL CF_CAT(CF, _mul)
#define CF_SQR CF_CAT(CF, _sqr)
#define CF_ISZERO CF_CAT(CF, _is_zero_i)
#define CF_EQ CF_CAT(CF, _eq_i)
#define CF_INV CF_CAT(CF, _inv)
#define CF_INV_CT CF_CAT(CF, _inv_ct)
