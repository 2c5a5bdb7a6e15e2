/*
 * curve_impl.h — private, header-only point arithmetic of curve.h for hot
 * loops (msm, fixed-base tables): czk_g1_*_i over Fp and czk_g2_*_i over Fp2,
 * generated from curve_tmpl_impl.h.  Same representation as curve.h:
 * Jacobian (X/Z^2, Y/Z^3) with Z == 0 for infinity, affine infinity = all
 * zero.  Affine inputs must be on the curve with canonical coordinates.
 * Field multiplications go through the out-of-line czk_fp_mul / czk_fp2_mul
 * (each an unrolled CIOS body): inlining them into every point formula made
 * the code many times larger for no measurable gain.
 *   _dbl_i, _add_i (complete), _add_aff_i (mixed, complete), _neg_i,
 *   _from_aff_i, _set_inf_i, _is_inf_i, _aff_is_inf_i.
 */
#ifndef CZK_CURVE_IMPL_H
#define CZK_CURVE_IMPL_H

#include <string.h>

#include "common/crypto/curve.h"
#include "common/crypto/field_impl.h"

#define CG czk_g1
#define CJ czk_g1
#define CA czk_g1_aff
#define CF czk_fp
#define CF_ADD czk_fp_add_i
#define CF_SUB czk_fp_sub_i
#define CF_DBL czk_fp_dbl_i
#define CF_NEG czk_fp_neg_i
#define CF_MUL czk_fp_mul
#define CF_SQR czk_fp_sqr
#define CF_ISZERO czk_fp_is_zero_i
#define CF_EQ czk_fp_eq_i
#define CF_ONE CZK_FP_ONE
#include "common/crypto/curve_tmpl_impl.h"
#undef CG
#undef CJ
#undef CA
#undef CF
#undef CF_ADD
#undef CF_SUB
#undef CF_DBL
#undef CF_NEG
#undef CF_MUL
#undef CF_SQR
#undef CF_ISZERO
#undef CF_EQ
#undef CF_ONE

#define CG czk_g2
#define CJ czk_g2
#define CA czk_g2_aff
#define CF czk_fp2
#define CF_ADD czk_fp2_add_i
#define CF_SUB czk_fp2_sub_i
#define CF_DBL czk_fp2_dbl_i
#define CF_NEG czk_fp2_neg_i
#define CF_MUL czk_fp2_mul
#define CF_SQR czk_fp2_sqr
#define CF_ISZERO czk_fp2_is_zero_i
#define CF_EQ czk_fp2_eq_i
#define CF_ONE CZK_FP2_ONE
#include "common/crypto/curve_tmpl_impl.h"
#undef CG
#undef CJ
#undef CA
#undef CF
#undef CF_ADD
#undef CF_SUB
#undef CF_DBL
#undef CF_NEG
#undef CF_MUL
#undef CF_SQR
#undef CF_ISZERO
#undef CF_EQ
#undef CF_ONE

#endif
