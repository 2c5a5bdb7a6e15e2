/*
 * groth16.h — the Groth16 prover in the snarkjs convention (so snarkjs
 * verifies our proofs; docs/file-formats.md section 5),
 * split into the three stages the multi-process pipeline runs:
 *
 *   1. synth     czk_groth16_build_abc   a = A·w, b = B·w, c = a∘b   (czk-synth)
 *   2. compute   czk_groth16_compute     h and the five MSMs         (czk-gpud)
 *   3. finalize  czk_groth16_finalize    blinding with r, s          (czk-finalizer)
 *
 * czk_groth16_prove runs all three in one process (the `czk prove` CLI).
 *
 * Representations: a, b, c are domain_size czk_fr in Montgomery form (the
 * pool slot layout); the witness w and h are standard form (MSM scalars).
 * Points passed between stages are affine (zkey layout, all-zero bytes =
 * infinity), so they can travel in messages byte for byte.
 */
#ifndef CZK_GROTH16_H
#define CZK_GROTH16_H

#include <stddef.h>
#include <stdint.h>

#include "common/crypto/bn254_curve.h"
#include "common/crypto/curve.h"
#include "common/base/error.h"
#include "common/formats/formats.h"

/* -EINVAL with a message naming both files unless the witness is of the
 * key's curve (both curves named) and has exactly nVars values (both counts
 * named); czk_wtns_open checked the values.  Either curve. */
int czk_groth16_check_witness(const czk_zkey *z, const char *zkey_name,
                              const czk_wtns *w, const char *wtns_name, czk_error *e);

/* The stages for each curve: BLS12-381 with the names czk_groth16_*,
 * czk_fr, czk_g1_aff, ... and BN254 with czk_groth16_bn254_*, czk_bn254_fr,
 * czk_bn254_g1_aff, ... (groth16_api_tmpl.h holds the contracts). */
#include "common/groth16/g16_names_bls12_381.h"
#include "common/groth16/groth16_api_tmpl.h"
#include "common/groth16/g16_names_bn254.h"
#include "common/groth16/groth16_api_tmpl.h"
#include "common/groth16/g16_names_undef.h"

#endif
