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
#define CA czk_bn254_g1_aff
#define CF czk_bn254_fp
#define CF_ONE CZK_BN254_FP_ONE
#include "common/crypto/curve_tmpl_impl.h"

#define CG czk_bn254_g2
#define CA czk_bn254_g2_aff
#define CF czk_bn254_fp2
#define CF_ONE CZK_BN254_FP2_ONE
#include "common/crypto/curve_tmpl_impl.h"

#endif
