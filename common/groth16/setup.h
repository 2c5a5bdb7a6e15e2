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

#include <stddef.h>

#include "common/base/error.h"
#include "common/crypto/bn254_field.h"
#include "common/crypto/field.h"
#include "common/formats/formats.h"

/*
 * Where the bulk fixed-base multiplications (4V + n in G1, V in G2) run.
 * NULL (or gen_mul NULL): on the CPU's tables.  Otherwise gen_mul(arg, curve,
 * g2, base, k, n, out) sets out[i] = k[i] base for n scalars k of the
 * curve's Fr in Montgomery form and base the curve's generator of G1 (g2 0)
 * or G2, out in the zkey's affine layout (a zero scalar: all-zero bytes),
 * and returns 0 or -errno; on an error the setup logs it (naming `name`)
 * and, with fallback set, does that multiplication on the CPU instead, else
 * fails.  czk setup's GPU one: backend/backend.h, czk_backend_setup_accel.
 */
typedef struct czk_setup_accel {
    const char *name;
    int (*gen_mul)(void *arg, czk_curve_id curve, int g2, const void *base, const void *k, size_t n, void *out);
    void *arg;
    int fallback;
} czk_setup_accel;

/* `czk setup`: the r1cs's prime picks the curve (BLS12-381 or BN254);
 * fresh secrets, key written atomically to zkey_path, secrets and every
 * derived secret scalar wiped before returning; accel may be NULL */
int czk_setup_dev(const char *r1cs_path, const char *zkey_path, int nthreads, const czk_setup_accel *accel,
                  czk_error *e);

#include "common/groth16/g16_names_bls12_381.h"
#include "common/groth16/setup_api_tmpl.h"
#include "common/groth16/g16_names_bn254.h"
#include "common/groth16/setup_api_tmpl.h"
#include "common/groth16/g16_names_undef.h"

#endif
