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
#include "common/crypto/bn254_field.h"
#include "common/crypto/field.h"

/* `czk setup`: the r1cs's prime picks the curve (BLS12-381 or BN254);
 * fresh secrets, key written atomically to zkey_path, secrets and every
 * derived secret scalar wiped before returning */
int czk_setup_dev(const char *r1cs_path, const char *zkey_path, int nthreads, czk_error *e);

#include "common/groth16/g16_names_bls12_381.h"
#include "common/groth16/setup_api_tmpl.h"
#include "common/groth16/g16_names_bn254.h"
#include "common/groth16/setup_api_tmpl.h"
#include "common/groth16/g16_names_undef.h"

#endif
