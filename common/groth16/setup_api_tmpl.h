/*
 * setup_api_tmpl.h — the development setup's secrets and entry points for
 * one curve, declared by setup.h for BLS12-381 (czk_setup_*) and BN254
 * (czk_setup_bn254_*) with the names of g16_names_*.h; the r1cs must be of
 * that curve.  Not a header of its own: setup.h is the contract.
 */

/* the toxic waste, Montgomery form, all non-zero, tau outside the 2n-domain */
typedef struct ST(secrets) {
    CV(fr) tau, alpha, beta, delta;
} ST(secrets);

/* draw fresh secrets (getrandom) that satisfy the conditions above */
int ST(secrets_random)(ST(secrets) *s);

/* the same with given secrets (tests check the key against them); -EINVAL when
 * they violate the conditions above */
int ST(with_secrets)(const char *r1cs_path, const char *zkey_path,
                     const ST(secrets) *secrets, int nthreads, const czk_setup_accel *accel, czk_error *e);

