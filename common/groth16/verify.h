/*
 * verify.h — Groth16 verification in the snarkjs convention
 * (snarkjs/src/groth16_verify.js): public signals must be < r,
 *     cpub = IC_0 + sum_i IC_i * pub_i,
 * and the proof is valid when
 *     e(-pi_a, pi_b) * e(cpub, gamma2) * e(pi_c, delta2) * e(alpha1, beta2) == 1,
 * computed as one multi-Miller loop and one final exponentiation.
 *
 * Representations: points are affine as in curve.h (Montgomery coordinates,
 * all-zero bytes = infinity); public signals are czk_fr in STANDARD form
 * (plain integers, like the witness values they are).
 */
#ifndef CZK_VERIFY_H
#define CZK_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "common/base/error.h"
#include "common/formats/formats.h"
#include "common/groth16/groth16.h"
#include "common/crypto/bn254_pairing.h"
#include "common/crypto/pairing.h"

/* BLS12-381: czk_groth16_vk, czk_groth16_verify, ...; BN254:
 * czk_groth16_bn254_vk, czk_groth16_bn254_verify, ... (the contracts are in
 * verify_api_tmpl.h).  A key of the other curve: -EINVAL from vk_from_zkey. */
#include "common/groth16/g16_names_bls12_381.h"
#include "common/groth16/verify_api_tmpl.h"
#include "common/groth16/g16_names_bn254.h"
#include "common/groth16/verify_api_tmpl.h"
#include "common/groth16/g16_names_undef.h"

#endif
