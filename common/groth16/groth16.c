/*
 * groth16.c — the Groth16 prover stages (see groth16.h), following
 * `snarkjs groth16 prove` exactly (docs/file-formats.md section 5):
 *   build_abc  A_T, B_T from section 4, C_T = A_T * B_T pointwise;
 *   compute_h  odd-coset evaluations of A_T, B_T, C_T, h = a*b - c (no
 *              division by Z: the zkey's H points are odd Lagrange points);
 *   msms       A·w, B1·w, B2·w, C·w[nPublic+1..] + H·h;
 *   finalize   pi_a = alpha + A·w + r delta, pi_b = beta + B2·w + s delta,
 *              pi_c = C·w + H·h + s pi_a + r (beta1 + B1·w + s delta1) - rs delta1.
 * Each stage only reads its inputs and writes its outputs, so the pipeline can
 * run them in different processes.  The stages are groth16_tmpl.h, compiled
 * here once for BLS12-381 and once for BN254 (its odd coset is the same
 * scheme over BN254's roots of unity, as snarkjs does for bn128).  The stages allocate only small scratch
 * (build_abc's chunk table, the MSM plans); czk_groth16_prove allocates a, b, c.
 */
#include "common/base/clock.h"
#include "common/groth16/groth16.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/bigbuf.h"
#include "common/base/log.h"
#include "common/crypto/bn254_msm.h"
#include "common/crypto/bn254_field_impl.h"
#include "common/crypto/bn254_ntt.h"
#include "common/crypto/field_impl.h"
#include "common/crypto/frx8.h"
#include "common/crypto/msm.h"
#include "common/crypto/ntt.h"
#include "common/crypto/par.h"

static double now_s(void) { return (double)czk_mono_ns() * 1e-9; }

/* build_abc prefetches the witness value of the coefficient this many
 * entries ahead: the wires of a row are anywhere in w, so without it each
 * term waits on memory once w outgrows the cache; the coefficients
 * themselves stream (2^20 on 2 cores: BN254 0.81 -> 0.27 s, BLS12-381
 * 1.05 -> 0.32 s; 8 to 64 ahead measure alike; docs/bench-prove.md,
 * "build_abc") */
#define CZK_ABC_PREFETCH 16

/* czk_groth16_prove's a, b, c are a czk_bigbuf block (huge pages from 1 MiB:
 * 6 MiB of 4 KiB pages at 2^16 would be 1536 page faults).  abc_free wipes
 * the bytes first (they are functions of the witness): explicit_bzero of
 * resident pages costs a memset, while unmapping alone would leave the
 * values in freed physical memory until the kernel hands the pages out. */
static void abc_free(void *p, size_t bytes)
{
    if (!p)
        return;
    explicit_bzero(p, bytes);
    czk_bigbuf_free(p);
}

int czk_groth16_check_witness(const czk_zkey *z, const char *zkey_name,
                              const czk_wtns *w, const char *wtns_name, czk_error *e)
{
    /* the reader checked each value (< r, w[0] = 1); only the pairing is left */
    if (w->curve != z->curve)
        return czk_errorf(e, -EINVAL,
                          "witness \"%s\" is a %s witness but proving key \"%s\" is for %s "
                          "(circuit compiled for another curve?)",
                          wtns_name, czk_curve_name(w->curve), zkey_name, czk_curve_name(z->curve));
    if (w->n_witness != z->n_vars)
        return czk_errorf(e, -EINVAL,
                          "witness \"%s\" has %u values but proving key \"%s\" expects nVars = %u "
                          "(witness computed for another circuit?)",
                          wtns_name, w->n_witness, zkey_name, z->n_vars);
    return 0;
}

#include "common/groth16/g16_names_bls12_381.h"
#include "common/groth16/groth16_tmpl.h"
#include "common/groth16/g16_names_bn254.h"
#include "common/groth16/groth16_tmpl.h"
#include "common/groth16/g16_names_undef.h"
