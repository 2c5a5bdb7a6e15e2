/*
 * bn254_curve_impl.h — private, header-only BN254 point arithmetic for the
 * bn254_*.c files: czk_bn254_g1_*_i over Fp and czk_bn254_g2_*_i over Fp2,
 * generated from the same template as BLS12-381's (curve_tmpl_impl.h).
 * Same representation as bn254_curve.h.
 */
#ifndef CZK_BN254_CURVE_IMPL_H
#define CZK_BN254_CURVE_IMPL_H

#include <string.h>

#include "common/crypto/bn254_curve.h"
#include "common/crypto/bn254_field_impl.h"

#define CG czk_bn254_g1
#define CJ czk_bn254_g1
#define CA czk_bn254_g1_aff
#define CF czk_bn254_fp
#define CF_ADD czk_bn254_fp_add_i
#define CF_SUB czk_bn254_fp_sub_i
#define CF_DBL czk_bn254_fp_dbl_i
#define CF_NEG czk_bn254_fp_neg_i
#define CF_MUL czk_bn254_fp_mul
#define CF_SQR czk_bn254_fp_sqr
#define CF_ISZERO czk_bn254_fp_is_zero_i
#define CF_EQ czk_bn254_fp_eq_i
#define CF_ONE CZK_BN254_FP_ONE
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

#define CG czk_bn254_g2
#define CJ czk_bn254_g2
#define CA czk_bn254_g2_aff
#define CF czk_bn254_fp2
#define CF_ADD czk_bn254_fp2_add_i
#define CF_SUB czk_bn254_fp2_sub_i
#define CF_DBL czk_bn254_fp2_dbl_i
#define CF_NEG czk_bn254_fp2_neg_i
#define CF_MUL czk_bn254_fp2_mul
#define CF_SQR czk_bn254_fp2_sqr
#define CF_ISZERO czk_bn254_fp2_is_zero_i
#define CF_EQ czk_bn254_fp2_eq_i
#define CF_ONE CZK_BN254_FP2_ONE
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
