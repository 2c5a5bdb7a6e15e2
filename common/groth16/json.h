/*
 * json.h — snarkjs JSON files for Groth16 over BLS12-381 and BN254 (jansson):
 * proof.json, public.json and verification_key.json
 * (docs/file-formats.md section 7).
 *
 * Encoding: every number is a JSON string holding the decimal value of the
 * standard-form (not Montgomery) integer.  G1 = [x, y, "1"], G2 =
 * [[x.c0, x.c1], [y.c0, y.c1], ["1", "0"]]; infinity is ["0", "1", "0"]
 * (G2: [["0","0"], ["1","0"], ["0","0"]]); readers also accept the
 * two-element affine form [x, y] (snarkjs' fromObject does).
 *
 * Readers take untrusted text and check everything before returning: JSON
 * syntax, types, array shapes, decimal strings, coordinates < q, public
 * signals < r, every point on its curve AND in the order-r subgroup,
 * "protocol": "groth16" and "curve": "bls12381" ("bn128" for the BN254
 * functions; required in verification_key.json, proof.json may omit it),
 * nPublic equal to
 * the IC count - 1.  Errors return -EINVAL (-ENOENT etc. for files) with a
 * message naming the file and the field, e.g.
 *     proof.json: pi_b[1][0]: not a decimal string
 * Unknown extra keys are ignored.  vk_alphabeta_12 is read as given (its
 * consistency with e(alpha1, beta2) is not checked here).
 *
 * Writers produce exactly what snarkjs writes (JSON.stringify(x, null, 1):
 * one-space indent, snarkjs key order, no trailing newline); the *_write
 * functions replace the file atomically (temp file, fsync, rename).
 *
 * Public signals are czk_fr in STANDARD form (as in verify.h).
 */
#ifndef CZK_JSON_H
#define CZK_JSON_H

#include <stddef.h>

#include "common/base/error.h"
#include "common/groth16/verify.h"

/* upper bound on public signals / IC points a reader accepts */
#define CZK_JSON_MAX_PUBLIC (1u << 24)

/* The "curve" of a proof.json / verification_key.json: "bls12381" or
 * absent -> BLS12-381, "bn128" -> BN254; another value or type, or text that
 * is not a JSON object: -EINVAL naming the file (and the value, printable
 * characters only).  What picks the curve of `czk verify`. */
int czk_json_curve_parse(czk_curve_id *curve, const char *text, size_t len, const char *name, czk_error *e);
int czk_json_curve_read(czk_curve_id *curve, const char *path, czk_error *e);

/* BLS12-381: czk_json_* (the "curve" must be "bls12381"); BN254:
 * czk_json_bn254_* with czk_groth16_bn254_* and czk_bn254_fr (the "curve"
 * must be "bn128") */
#include "common/groth16/g16_names_bls12_381.h"
#include "common/groth16/json_api_tmpl.h"
#include "common/groth16/g16_names_bn254.h"
#include "common/groth16/json_api_tmpl.h"
#include "common/groth16/g16_names_undef.h"

#endif
