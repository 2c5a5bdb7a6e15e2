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
#include "common/crypto/pairing.h"

/* the contents of snarkjs' verification_key.json */
typedef struct czk_groth16_vk {
    uint32_t n_public;
    czk_g1_aff alpha1;
    czk_g2_aff beta2, gamma2, delta2;
    czk_fp12 alphabeta;   /* e(alpha1, beta2): vk_alphabeta_12 */
    czk_g1_aff *ic;       /* n_public + 1 points, malloc'd, owned by the struct */
} czk_groth16_vk;

/* frees vk->ic and clears the struct (safe on a zeroed struct) */
void czk_groth16_vk_free(czk_groth16_vk *vk);

/* the verification key of an opened zkey, as `snarkjs zkey export
 * verificationkey` derives it (alphabeta computed with the pairing).
 * -ENOMEM when IC cannot be allocated. */
int czk_groth16_vk_from_zkey(czk_groth16_vk *vk, const czk_zkey *z, czk_error *e);

/* Returns 0 when the proof verifies, -EBADMSG when it does not (pairing
 * check failed, or a proof point is not on the curve / not in its
 * subgroup), -EINVAL when n_pub != vk->n_public or a public signal is >= r,
 * another -errno (-ENOMEM) when the public-input MSM (over 64 signals)
 * fails.  e (optional) says which. */
int czk_groth16_verify(const czk_groth16_vk *vk, const czk_groth16_proof *proof,
                       const czk_fr *pub_std, size_t n_pub, czk_error *e);

#endif
