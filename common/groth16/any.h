/*
 * any.h — Groth16 over the curve a key names, picked at run time: what the
 * daemons use, since one czk-gpud serves circuits of both curves through the
 * same pools, backends and finalizer.  Each function dispatches on the key's
 * (or the result's) curve to the czk_groth16_* (BLS12-381) or
 * czk_groth16_bn254_* (BN254) function of groth16.h / verify.h / json.h and
 * has its contract; only what differs is stated here.
 *
 * Between the daemons (slots, RESULT):
 *  - field elements are 32-byte values, czk_fr or czk_bn254_fr (both 4 x 64-bit
 *    words, the same size and layout): slot vectors in the form groth16.h
 *    says, public signals in standard form; on the wire (RESULT) each public
 *    signal v is the curve's fr_to_bytes_le(v) (czk_fr_to_bytes_le or
 *    czk_bn254_fr_to_bytes_le; the curve's fr_from_bytes_le gives v back);
 *  - points are the curve's affine structs as bytes (czk_g1_aff: 96 bytes,
 *    czk_g2_aff: 192; czk_bn254_g1_aff: 64, czk_bn254_g2_aff: 128).
 */
#ifndef CZK_GROTH16_ANY_H
#define CZK_GROTH16_ANY_H

#include <stddef.h>
#include <stdint.h>

#include "common/base/error.h"
#include "common/formats/formats.h"
#include "common/groth16/groth16.h"
#include "common/groth16/verify.h"

/* one partition's MSM results on either curve */
typedef struct czk_groth16_any_msm_out {
    czk_curve_id curve;
    union {
        czk_groth16_msm_out bls;       /* curve == CZK_CURVE_BLS12_381 */
        czk_groth16_bn254_msm_out bn;  /* curve == CZK_CURVE_BN254 */
    } u;
} czk_groth16_any_msm_out;

/* RESULT carries the four points in this order */
enum { CZK_G16_PT_A = 0, CZK_G16_PT_B1 = 1, CZK_G16_PT_B2 = 2, CZK_G16_PT_C = 3, CZK_G16_N_PTS = 4 };

/* bytes of point k (CZK_G16_PT_*) of curve c's results; 0 for another curve */
size_t czk_groth16_any_point_bytes(czk_curve_id c, unsigned k);
/* the address of point k of m (czk_groth16_any_point_bytes(m->curve, k) bytes) */
const void *czk_groth16_any_point(const czk_groth16_any_msm_out *m, unsigned k);
/* m from the four points as bytes (RESULT): -EBADMSG with e naming the
 * first point whose length is not curve c's; c must be a known curve */
int czk_groth16_any_msm_out_set(czk_groth16_any_msm_out *m, czk_curve_id c, const uint8_t *const pts[CZK_G16_N_PTS],
                                const uint32_t len[CZK_G16_N_PTS], czk_error *e);
/* swaps the A and C results (a fault-injection aid: a wrong but well-formed result) */
void czk_groth16_any_msm_out_swap_ac(czk_groth16_any_msm_out *m);

/* ---- the stages, on z->curve; vectors are 32-byte elements (see above) ---- */
int czk_groth16_any_build_abc(const czk_zkey *z, const void *w, void *a, void *b, void *c, int nthreads);
int czk_groth16_any_compute_h(czk_curve_id curve, void *a, void *b, void *c, void *h, unsigned log_n,
                              int nthreads);
/* out->curve is set to z->curve */
int czk_groth16_any_msms(const czk_zkey *z, const void *w, const void *h, czk_groth16_any_msm_out *out,
                         int nthreads);

/* ---- finalizing, for the finalizer ---- */

/* the part of a key the finalizer keeps: finalize parameters and the
 * verification key (its IC is malloc'd: czk_groth16_any_key_free) */
typedef struct czk_groth16_any_key {
    czk_curve_id curve;
    uint32_t n_public;
    union {
        struct {
            czk_groth16_params params;
            czk_groth16_vk vk;
        } bls;
        struct {
            czk_groth16_bn254_params params;
            czk_groth16_bn254_vk vk;
        } bn;
    } u;
} czk_groth16_any_key;

/* from a key loaded with at least its header and IC (any `what`) */
int czk_groth16_any_key_from_zkey(czk_groth16_any_key *k, const czk_zkey *z, czk_error *e);
void czk_groth16_any_key_free(czk_groth16_any_key *k);
/* verification_key.json text (malloc'd), NULL when out of memory */
char *czk_groth16_any_vk_dump(const czk_groth16_any_key *k);

/* the wire bytes (32 each, see above) of n public signals of curve c */
void czk_groth16_any_pub_to_bytes(czk_curve_id c, uint8_t *out, const void *pub, uint32_t n);
/* public.json text of n public signals given as wire bytes: -EBADMSG with e naming the first one that is not below
 * the curve's r, -ENOMEM */
int czk_groth16_any_public_dump(czk_curve_id c, const uint8_t *pub, uint32_t n, char **text, czk_error *e);

/*
 * The proof of m (m->curve must be k's) with fresh r, s (finalize_random),
 * checked against k's verification key with the public signals pub
 * (k->n_public values, as for public_dump) when verify is set, as
 * proof.json text (*text, malloc'd).  -EBADMSG when it does not verify (e
 * says why), -EINVAL for a result of the other curve, -ENOMEM, or
 * finalize_random's error (no randomness from the OS).
 */
int czk_groth16_any_prove(const czk_groth16_any_key *k, const czk_groth16_any_msm_out *m, const uint8_t *pub,
                          int verify, char **text, czk_error *e);
/* 1 when proof.json text ptext verifies against k with pub (wire bytes), else 0 */
int czk_groth16_any_proof_verifies(const czk_groth16_any_key *k, const char *ptext, size_t plen, const uint8_t *pub);

#endif
