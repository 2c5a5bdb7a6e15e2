/*
 * setup.h — a development Groth16 setup: from an .r1cs, a snarkjs-compatible
 * .zkey made from fresh random toxic waste (tau, alpha, beta, delta; gamma = 1
 * as snarkjs), which is wiped from memory as soon as the key is written.
 *
 * NOT FOR PRODUCTION: whoever ran it could have kept the secrets.  Production
 * keys come from a ceremony (snarkjs powersoftau + zkey contribute).  This is
 * for tests and benchmarks at sizes where the snarkjs ceremony tools are too
 * slow (prepare phase2 takes hours on small machines).
 *
 * The key follows docs/file-formats.md 4.3: domain n = smallest power of two
 * >= nConstraints + nPublic + 1, L_i over the snarkjs roots of unity, the extra
 * public-input rows in A, H_k = L^(2n)_(2k+1)(tau)/delta.
 */
#ifndef CZK_SETUP_H
#define CZK_SETUP_H

#include "common/base/error.h"
#include "common/crypto/field.h"

/* the toxic waste, Montgomery form, all non-zero, tau outside the 2n-domain */
typedef struct czk_setup_secrets {
    czk_fr tau, alpha, beta, delta;
} czk_setup_secrets;

/* draw fresh secrets (getrandom) that satisfy the conditions above */
int czk_setup_secrets_random(czk_setup_secrets *s);

/* `czk setup`: fresh secrets, key written atomically to zkey_path, secrets and
 * every derived secret scalar wiped before returning */
int czk_setup_dev(const char *r1cs_path, const char *zkey_path, int nthreads, czk_error *e);

/* the same with given secrets (tests check the key against them); -EINVAL when
 * they violate the conditions above */
int czk_setup_with_secrets(const char *r1cs_path, const char *zkey_path,
                           const czk_setup_secrets *secrets, int nthreads, czk_error *e);

#endif
