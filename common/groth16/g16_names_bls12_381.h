/*
 * g16_names_bls12_381.h — the BLS12-381 names for the Groth16 templates of
 * this folder (*_tmpl.h); g16_names_bn254.h gives BN254's.  Included once
 * before each instantiation (no include guard: it redefines the names):
 *   CV(x)   crypto names: CV(fr_mul) -> czk_fr_mul, CV(g1_aff) -> czk_g1_aff
 *   CVU(x)  crypto constants: CVU(FR_ONE) -> CZK_FR_ONE
 *   G16(x)  Groth16 names: G16(proof) -> czk_groth16_proof
 *   JS(x)   JSON names: JS(proof_parse) -> czk_json_proof_parse
 *   ST(x)   setup names: ST(secrets) -> czk_setup_secrets
 *   ZKP(z)  the struct holding a czk_zkey's / czk_zkey_spec's points
 *   WTW(w)  a czk_wtns's values
 *   CV_ID, CV_NAME, CV_SNARKJS   the czk_curve_id, "BLS12-381", "bls12381"
 *   CV_G1_EQ, CV_G2_EQ           the curve equations for messages
 *   CV_FP_DEC_MAX, CV_FR_DEC_MAX decimal buffer sizes
 *   CV_NTT_MAX_LOG               the largest NTT
 *   ANYU(m)                      this curve's member of a czk_groth16_any_msm_out (any.h)
 */
#include "common/groth16/g16_names_undef.h"

#define CV(x) czk_##x
#define CVU(x) CZK_##x
#define G16(x) czk_groth16_##x
#define JS(x) czk_json_##x
#define ST(x) czk_setup_##x
#define ZKP(z) (z)
#define WTW(w) ((w)->w)
#define CV_ID CZK_CURVE_BLS12_381
#define CV_NAME "BLS12-381"
#define CV_SNARKJS "bls12381"
#define CV_G1_EQ "y^2 = x^3 + 4"
#define CV_G2_EQ "y^2 = x^3 + 4(1 + u)"
#define CV_FP_DEC_MAX CZK_FP_DEC_MAX
#define CV_FR_DEC_MAX CZK_FR_DEC_MAX
#define CV_NTT_MAX_LOG CZK_NTT_MAX_LOG
#define ANYU(m) ((m).u.bls)
