/*
 * groth16_api_tmpl.h — the Groth16 prover's types and stages for one curve,
 * declared by groth16.h once for BLS12-381 (czk_groth16_*, czk_fr, ...) and
 * once for BN254 (czk_groth16_bn254_*, czk_bn254_fr, ...) with the names of
 * g16_names_*.h.  Not a header of its own: groth16.h is the contract.
 * For BN254, "the zkey's points" are z->bn (formats.h) and w is the
 * witness's w_bn; everything else reads the same.  Every function takes a
 * key of its own curve (z->curve); prove checks it (-EINVAL naming the key
 * and both curves), the stages rely on the caller.
 */

/* what the compute stage hands to the finalizer (the snarkjs MSM results) */
typedef struct G16(msm_out) {
    CV(g1_aff) a;   /* A·w */
    CV(g1_aff) b1;  /* B1·w */
    CV(g1_aff) c;   /* C·w[nPublic+1..] + H·h */
    CV(g2_aff) b2;  /* B2·w */
} G16(msm_out);

/* the part of the proving key the finalize stage needs */
typedef struct G16(params) {
    CV(g1_aff) alpha1, beta1, delta1;
    CV(g2_aff) beta2, delta2;
} G16(params);

typedef struct G16(proof) {
    CV(g1_aff) a;   /* pi_a */
    CV(g2_aff) b;   /* pi_b */
    CV(g1_aff) c;   /* pi_c */
} G16(proof);

/* ---- stage 1: synth ----
 * a[row] = sum coef*w[signal] over the zkey's section-4 entries of matrix 0,
 * b likewise for matrix 1, c[row] = a[row]*b[row]; rows >= the rows used are 0.
 * a, b, c: z->domain_size elements each (Montgomery form out), w: z->n_vars
 * standard-form values.  Rows are split across threads at row boundaries when
 * section 4 is sorted by row (snarkjs writes it so); otherwise one thread.
 * z comes from czk_zkey_open, which range-checked every coefficient. */
int G16(build_abc)(const czk_zkey *z, const CV(fr) *w, CV(fr) *a, CV(fr) *b, CV(fr) *c, int nthreads);

/* ---- stage 2: compute ----
 * h step alone: a, b, c (Montgomery, n = 2^log_n) are taken to the odd coset
 * in place, then h[j] = a[j]*b[j] - c[j] in standard form is written to h
 * (h may alias a). */
int G16(compute_h)(CV(fr) *a, CV(fr) *b, CV(fr) *c, CV(fr) *h, unsigned log_n, int nthreads);
/* the MSMs given the witness w and h (both standard form) */
int G16(msms)(const czk_zkey *z, const CV(fr) *w, const CV(fr) *h, G16(msm_out) *out, int nthreads);
/* both of the above; a, b, c are clobbered (h is left in a) */
int G16(compute)(const czk_zkey *z, CV(fr) *a, CV(fr) *b, CV(fr) *c,
                 const CV(fr) *w, G16(msm_out) *out, int nthreads);

/* ---- stage 3: finalize ---- */
void G16(params_from_zkey)(G16(params) *p, const czk_zkey *z);
/* r, s in Montgomery form (as CV(fr_random) returns them); r = s = 0 gives the
 * unblinded proof (tests compare it with expectations).  Constant time: no
 * branch or memory address depends on r, s or m (the _ct functions of
 * curve.h); the proof equals the one the variable-time formulas give. */
void G16(finalize)(const G16(params) *p, const G16(msm_out) *m,
                   const CV(fr) *r, const CV(fr) *s, G16(proof) *proof);
/* with fresh r, s from the OS CSPRNG (wiped afterwards); -errno when getrandom fails */
int G16(finalize_random)(const G16(params) *p, const G16(msm_out) *m, G16(proof) *proof);

/* ---- all three in one process ----
 * r, s: NULL for fresh random blinding, else fixed values (Montgomery).
 * pub: when non-NULL receives the z->n_public public signals w[1..nPublic]
 * (standard form).  Names are used in error messages only. */
int G16(prove)(const czk_zkey *z, const char *zkey_name,
               const czk_wtns *w, const char *wtns_name,
        const CV(fr) *r, const CV(fr) *s,
        G16(proof) *proof, CV(fr) *pub, int nthreads, czk_error *e);

