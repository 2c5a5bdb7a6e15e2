/*
 * gencircuit.c — synthetic satisfiable r1cs + witness (see gencircuit.h).
 *
 * Each constraint defines one new wire x from earlier wires, and the witness
 * value of x is computed on the spot, so the circuit is satisfied by
 * construction:
 *   bit       (share F)  x in {0,1};  x*x = x  or  x*(1 - x) = 0
 *   linear    (1/8 of the rest)  0 = sum c_k w_k - x        (A = B = empty)
 *   product   (the rest)  (sum a_k w_k)(sum b_k w_k) = x + sum c_k w_k
 * Terms pick earlier wires, half from the last 16 (locality like real
 * circuits), half uniformly; coefficients are 1, -1 or full-width.
 * Witness values are kept in standard form (the .wtns layout); products use
 * czk_fr_mul(Montgomery, standard) = standard.  The generator is
 * gencircuit_tmpl.h, compiled for BLS12-381 and for BN254 (o->curve); both
 * draw the same random stream, so a seed gives the same circuit shape.
 */
#include "common/groth16/gencircuit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto/bn254_field.h"
#include "common/crypto/field.h"
#include "common/formats/formats.h"
#include "common/base/log.h"

#define RECENT 16
#define MAX_TERMS 4

typedef struct rng { uint64_t s[4]; } rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** */
static uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s, res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return res;
}

static void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rng_below(rng *r, uint64_t n)
{
    return (uint64_t)(((unsigned __int128)rng_next(r) * n) >> 64);
}

static double rng_unit(rng *r)
{
    return (rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

#include "common/groth16/g16_names_bls12_381.h"
#define GEN_WTNS_WRITE czk_wtns_write
#include "common/groth16/gencircuit_tmpl.h"
#undef GEN_WTNS_WRITE
#include "common/groth16/g16_names_bn254.h"
#define GEN_WTNS_WRITE czk_wtns_write_bn254
#include "common/groth16/gencircuit_tmpl.h"
#undef GEN_WTNS_WRITE
#include "common/groth16/g16_names_undef.h"

int czk_gencircuit(const czk_gencircuit_opts *o, const char *r1cs_path, const char *wtns_path,
                   czk_error *e)
{
    switch (o->curve) {
    case CZK_CURVE_BLS12_381: return czk_gencircuit_curve(o, r1cs_path, wtns_path, e);
    case CZK_CURVE_BN254: return czk_bn254_gencircuit_curve(o, r1cs_path, wtns_path, e);
    }
    return czk_errorf(e, -EINVAL, "gen-circuit: unknown curve %d", (int)o->curve);
}
