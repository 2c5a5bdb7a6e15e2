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
#define CA czk_g1_aff
#define CF czk_fp
#define CF_ONE CZK_FP_ONE
#include "common/crypto/curve_tmpl_impl.h"

#define CG czk_g2
#define CA czk_g2_aff
#define CF czk_fp2
#define CF_ONE CZK_FP2_ONE
#include "common/crypto/curve_tmpl_impl.h"

#endif
