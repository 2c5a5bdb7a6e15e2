/*
 * gencircuit.h — synthetic satisfiable circuits for tests and benchmarks
 * (`czk gen-circuit`): an .r1cs and a matching .wtns of any size, with a mix
 * resembling real circuits: a chosen fraction of the wires are bits (boolean
 * constraints b*b = b or b*(1-b) = 0, as in hash circuits), the rest are
 * full-width products and some linear-only rows (A = B = empty), with 2-4
 * terms per linear combination.
 *
 * Wire layout (circom order): 0 = ONE, 1..K public inputs, then 2 private
 * inputs, then one wire per constraint, defined by that constraint.  So
 * nWires = N + K + 3 and domain = next power of two >= N + K + 1.
 * The r1cs is streamed to disk; memory is the witness (32 bytes a wire).
 * Same seed and options, same files.
 */
#ifndef CZK_GENCIRCUIT_H
#define CZK_GENCIRCUIT_H

#include <stdint.h>

#include "common/base/error.h"
#include "common/formats/formats.h"

#define CZK_GENCIRCUIT_PRIVATE_INPUTS 2

typedef struct czk_gencircuit_opts {
    uint32_t n_constraints;  /* N >= 1 */
    uint32_t n_public;       /* K public inputs */
    double bit_fraction;     /* in [0, 1]: share of constraint wires that are bits */
    uint64_t seed;
    czk_curve_id curve;      /* the r1cs's and wtns's prime (0: BLS12-381) */
} czk_gencircuit_opts;

int czk_gencircuit(const czk_gencircuit_opts *o, const char *r1cs_path, const char *wtns_path,
                   czk_error *e);

#endif
