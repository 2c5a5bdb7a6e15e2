/*
 * json.h — snarkjs JSON files for Groth16 over BLS12-381 (jansson):
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
 * "protocol": "groth16" and "curve": "bls12381" (required in proof.json
 * and verification_key.json; proof.json may omit "curve"), nPublic equal to
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

/* parse from memory; name is the file name used in error messages */
int czk_json_proof_parse(czk_groth16_proof *p, const char *text, size_t len,
                         const char *name, czk_error *e);
/* *pub is malloc'd (free()); *n may be 0 (then *pub may be NULL) */
int czk_json_public_parse(czk_fr **pub, size_t *n, const char *text, size_t len,
                          const char *name, czk_error *e);
/* vk->ic is malloc'd: release with czk_groth16_vk_free */
int czk_json_vk_parse(czk_groth16_vk *vk, const char *text, size_t len,
                      const char *name, czk_error *e);

/* the same, reading the file at path (at most 256 MiB) */
int czk_json_proof_read(czk_groth16_proof *p, const char *path, czk_error *e);
int czk_json_public_read(czk_fr **pub, size_t *n, const char *path, czk_error *e);
int czk_json_vk_read(czk_groth16_vk *vk, const char *path, czk_error *e);

/* text in snarkjs layout, malloc'd and NUL-terminated (free()); NULL on ENOMEM */
char *czk_json_proof_dump(const czk_groth16_proof *p);
char *czk_json_public_dump(const czk_fr *pub_std, size_t n);
char *czk_json_vk_dump(const czk_groth16_vk *vk);

/* atomic file writers */
int czk_json_proof_write(const char *path, const czk_groth16_proof *p, czk_error *e);
int czk_json_public_write(const char *path, const czk_fr *pub_std, size_t n, czk_error *e);
int czk_json_vk_write(const char *path, const czk_groth16_vk *vk, czk_error *e);

#endif
