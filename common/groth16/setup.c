/*
 * setup.c — development Groth16 setup (see setup.h): .r1cs in, snarkjs .zkey
 * out, with toxic waste drawn here and wiped before return.
 *
 * Work, for n = domain size and V = nVars:
 *   - Lagrange values L_i(tau) for the size-n domain and the odd points of the
 *     size-2n domain, each as factor * x/(tau - x), O(n) with chunked batch
 *     inversion (one inversion per chunk, chunks in parallel);
 *   - A_j(tau), B_j(tau), C_j(tau) by one pass over the r1cs constraints, which
 *     also emits section 4 (coef * R^2, A terms then B terms per constraint,
 *     then the nPublic+1 public-input rows);
 *   - 4V + n fixed-base G1 multiplications and V in G2 from window tables,
 *     normalised to affine in blocks with one inversion per block; or, with
 *     an accelerator (setup.h: `czk setup` uses the GPU when there is one),
 *     the same multiplications there.
 * Every buffer that holds a function of the secrets is wiped before free.
 * The work is setup_tmpl.h, compiled once per curve; the r1cs's prime picks
 * which one czk_setup_dev runs.
 *
 * Timing: the inversions of secrets (1/delta, the batch inversions of
 * tau - x) and the five multiplications of the generators by alpha, beta and
 * delta are the constant-time ones of field.h / curve.h; powers of tau use a
 * public exponent.  The bulk multiplications stay on the VARIABLE-TIME
 * fixed-base tables (a row per window chosen by the secret-derived scalar,
 * additions skipped for zero digits) with a variable-time batch
 * normalisation: a masked scan of 2^(w-1) rows per window would cost several
 * times the setup, which is development-only.
 */
#include "common/base/clock.h"
#include "common/groth16/setup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "common/crypto/bn254_curve.h"
#include "common/crypto/bn254_ntt.h"
#include "common/crypto/curve.h"
#include "common/formats/formats.h"
#include "common/base/log.h"
#include "common/crypto/ntt.h"
#include "common/crypto/par.h"

#define SETUP_BLOCK 1024 /* points normalised per batch inversion */

static double now_s(void) { return (double)czk_mono_ns() * 1e-9; }

/* wipe then free; every array in this file is secret-derived */
static void wipe_free(void *p, size_t bytes)
{
    if (p) {
        explicit_bzero(p, bytes);
        free(p);
    }
}

static void *alloc_zero(size_t count, size_t size)
{
    return calloc(count ? count : 1, size);
}

/* table windows: bigger tables pay off only for many multiplications */
static unsigned fb_window(size_t count)
{
    if (count >= (1u << 20))
        return 16;
    if (count >= (1u << 16))
        return 13;
    if (count >= (1u << 12))
        return 10;
    return 8;
}

/* Montgomery's trick with one constant-time inversion; every input is
 * non-zero (the Lagrange denominators tau - x: secrets_ok rules out zero),
 * so no branch or select is needed.  out may alias in. */
static void bn254_fr_batch_inv_ct(czk_bn254_fr *out, const czk_bn254_fr *in, size_t n, czk_bn254_fr *scratch)
{
    czk_bn254_fr acc = CZK_BN254_FR_ONE, inv, x;

    for (size_t i = 0; i < n; i++) {
        scratch[i] = acc;
        czk_bn254_fr_mul(&acc, &acc, &in[i]);
    }
    czk_bn254_fr_inv_ct(&inv, &acc);
    for (size_t i = n; i-- > 0;) {
        x = in[i];
        czk_bn254_fr_mul(&out[i], &inv, &scratch[i]);
        czk_bn254_fr_mul(&inv, &inv, &x);
    }
    explicit_bzero(&acc, sizeof(acc));
    explicit_bzero(&inv, sizeof(inv));
    explicit_bzero(&x, sizeof(x));
}

#include "common/groth16/g16_names_bls12_381.h"
#define ST_BATCH_INV_CT czk_fr_batch_inv_ct
#include "common/groth16/setup_tmpl.h"
#undef ST_BATCH_INV_CT
#include "common/groth16/g16_names_bn254.h"
#define ST_BATCH_INV_CT bn254_fr_batch_inv_ct
#include "common/groth16/setup_tmpl.h"
#undef ST_BATCH_INV_CT
#include "common/groth16/g16_names_undef.h"

int czk_setup_dev(const char *r1cs_path, const char *zkey_path, int nthreads, const czk_setup_accel *accel,
                  czk_error *e)
{
    czk_r1cs r1cs;
    czk_curve_id curve;
    int rc;

    /* the r1cs's prime picks the curve (the setup opens it again to read it) */
    if ((rc = czk_r1cs_open_curves(&r1cs, r1cs_path, CZK_CURVES_ALL, e)))
        return rc;
    curve = r1cs.curve;
    czk_r1cs_close(&r1cs);
    if (curve == CZK_CURVE_BN254) {
        czk_setup_bn254_secrets s;
        if ((rc = czk_setup_bn254_secrets_random(&s)))
            return czk_errorf(e, rc, "setup: cannot draw secrets from getrandom: %s", strerror(-rc));
        rc = czk_setup_bn254_with_secrets(r1cs_path, zkey_path, &s, nthreads, accel, e);
        explicit_bzero(&s, sizeof(s));
        return rc;
    }
    czk_setup_secrets s;
    if ((rc = czk_setup_secrets_random(&s)))
        return czk_errorf(e, rc, "setup: cannot draw secrets from getrandom: %s", strerror(-rc));
    rc = czk_setup_with_secrets(r1cs_path, zkey_path, &s, nthreads, accel, e);
    explicit_bzero(&s, sizeof(s));
    return rc;
}
