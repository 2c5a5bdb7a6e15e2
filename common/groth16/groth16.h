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

#include "common/crypto/curve.h"
#include "common/base/error.h"
#include "common/formats/formats.h"

/* what the compute stage hands to the finalizer (the snarkjs MSM results) */
typedef struct czk_groth16_msm_out {
    czk_g1_aff a;   /* A·w */
    czk_g1_aff b1;  /* B1·w */
    czk_g1_aff c;   /* C·w[nPublic+1..] + H·h */
    czk_g2_aff b2;  /* B2·w */
} czk_groth16_msm_out;

/* the part of the proving key the finalize stage needs */
typedef struct czk_groth16_params {
    czk_g1_aff alpha1, beta1, delta1;
    czk_g2_aff beta2, delta2;
} czk_groth16_params;

typedef struct czk_groth16_proof {
    czk_g1_aff a;   /* pi_a */
    czk_g2_aff b;   /* pi_b */
    czk_g1_aff c;   /* pi_c */
} czk_groth16_proof;

/* -EINVAL with a message naming both files and both counts unless the
 * witness has exactly nVars values (czk_wtns_open checked the values) */
int czk_groth16_check_witness(const czk_zkey *z, const char *zkey_name,
                              const czk_wtns *w, const char *wtns_name, czk_error *e);

/* ---- stage 1: synth ----
 * a[row] = sum coef*w[signal] over the zkey's section-4 entries of matrix 0,
 * b likewise for matrix 1, c[row] = a[row]*b[row]; rows >= the rows used are 0.
 * a, b, c: z->domain_size elements each (Montgomery form out), w: z->n_vars
 * standard-form values.  Rows are split across threads at row boundaries when
 * section 4 is sorted by row (snarkjs writes it so); otherwise one thread.
 * z comes from czk_zkey_open, which range-checked every coefficient. */
int czk_groth16_build_abc(const czk_zkey *z, const czk_fr *w,
                          czk_fr *a, czk_fr *b, czk_fr *c, int nthreads);

/* ---- stage 2: compute ----
 * h step alone: a, b, c (Montgomery, n = 2^log_n) are taken to the odd coset
 * in place, then h[j] = a[j]*b[j] - c[j] in standard form is written to h
 * (h may alias a). */
int czk_groth16_compute_h(czk_fr *a, czk_fr *b, czk_fr *c, czk_fr *h,
                          unsigned log_n, int nthreads);
/* the MSMs given the witness w and h (both standard form) */
int czk_groth16_msms(const czk_zkey *z, const czk_fr *w, const czk_fr *h,
                     czk_groth16_msm_out *out, int nthreads);
/* both of the above; a, b, c are clobbered (h is left in a) */
int czk_groth16_compute(const czk_zkey *z, czk_fr *a, czk_fr *b, czk_fr *c,
                        const czk_fr *w, czk_groth16_msm_out *out, int nthreads);

/* ---- stage 3: finalize ---- */
void czk_groth16_params_from_zkey(czk_groth16_params *p, const czk_zkey *z);
/* r, s in Montgomery form (as czk_fr_random returns them); r = s = 0 gives the
 * unblinded proof (tests compare it with expectations).  Constant time: no
 * branch or memory address depends on r, s or m (the _ct functions of
 * curve.h); the proof equals the one the variable-time formulas give. */
void czk_groth16_finalize(const czk_groth16_params *p, const czk_groth16_msm_out *m,
                          const czk_fr *r, const czk_fr *s, czk_groth16_proof *proof);
/* with fresh r, s from the OS CSPRNG (wiped afterwards); -errno when getrandom fails */
int czk_groth16_finalize_random(const czk_groth16_params *p, const czk_groth16_msm_out *m,
                                czk_groth16_proof *proof);

/* ---- all three in one process ----
 * r, s: NULL for fresh random blinding, else fixed values (Montgomery).
 * pub: when non-NULL receives the z->n_public public signals w[1..nPublic]
 * (standard form).  Names are used in error messages only. */
int czk_groth16_prove(const czk_zkey *z, const char *zkey_name,
                      const czk_wtns *w, const char *wtns_name,
                      const czk_fr *r, const czk_fr *s,
                      czk_groth16_proof *proof, czk_fr *pub, int nthreads, czk_error *e);

#endif
