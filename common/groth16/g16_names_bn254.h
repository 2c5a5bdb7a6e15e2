/*
 * g16_names_bn254.h — the BN254 (snarkjs "bn128") names for the Groth16
 * templates of this folder; the list is in g16_names_bls12_381.h.
 */
#include "common/groth16/g16_names_undef.h"

#define CV(x) czk_bn254_##x
#define CVU(x) CZK_BN254_##x
#define G16(x) czk_groth16_bn254_##x
#define JS(x) czk_json_bn254_##x
#define ST(x) czk_setup_bn254_##x
#define ZKP(z) (&(z)->bn)
#define WTW(w) ((w)->w_bn)
#define CV_ID CZK_CURVE_BN254
#define CV_NAME "BN254"
#define CV_SNARKJS "bn128"
#define CV_G1_EQ "y^2 = x^3 + 3"
#define CV_G2_EQ "y^2 = x^3 + 3/(9 + u)"
#define CV_FP_DEC_MAX CZK_BN254_DEC_MAX
#define CV_FR_DEC_MAX CZK_BN254_DEC_MAX
#define CV_NTT_MAX_LOG CZK_BN254_NTT_MAX_LOG
#define ANYU(m) ((m).u.bn)
