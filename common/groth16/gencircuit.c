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
 * czk_fr_mul(Montgomery, standard) = standard.
 */
#include "common/groth16/gencircuit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* uniform in [0, r), standard form */
static void rng_fr(rng *r, czk_fr *x)
{
    do {
        for (int i = 0; i < CZK_FR_LIMBS; i++)
            x->l[i] = rng_next(r);
        x->l[3] &= 0x7fffffffffffffffull;   /* r < 2^255 */
    } while (!czk_fr_is_canonical(x));
}

static const czk_fr FR_STD_ONE = { { 1, 0, 0, 0 } };

struct gen {
    rng r;
    czk_fr *w;           /* witness, standard form */
    czk_fr minus_one;    /* standard form r - 1 */
};

/* a random coefficient, standard form: 1, -1 or full-width */
static void gen_coef(struct gen *g, czk_fr *c)
{
    uint64_t k = rng_below(&g->r, 4);

    if (k == 0)
        *c = FR_STD_ONE;
    else if (k == 1)
        *c = g->minus_one;
    else
        rng_fr(&g->r, c);
}

/* nt distinct earlier wires (< cur) with random coefficients; returns the
 * value of the linear combination (standard form) */
static void gen_lc(struct gen *g, czk_r1cs_term *t, uint32_t nt, uint32_t cur, czk_fr *val)
{
    memset(val, 0, sizeof(*val));
    for (uint32_t k = 0; k < nt; k++) {
        uint32_t wire;
        bool dup;
        czk_fr c, cm, v;

        do {
            if (rng_below(&g->r, 2) && cur > RECENT)
                wire = cur - 1 - (uint32_t)rng_below(&g->r, RECENT);
            else
                wire = (uint32_t)rng_below(&g->r, cur);
            dup = false;
            for (uint32_t j = 0; j < k; j++)
                dup |= t[j].wire == wire;
        } while (dup);
        gen_coef(g, &c);
        t[k].wire = wire;
        memcpy(&t[k].coef, &c, sizeof(c));
        czk_fr_to_mont(&cm, &c);
        czk_fr_mul(&v, &cm, &g->w[wire]);      /* Montgomery x standard = standard */
        czk_fr_add(val, val, &v);
    }
}

static uint32_t n_terms(struct gen *g, uint32_t cur)
{
    uint32_t nt = 2 + (uint32_t)rng_below(&g->r, MAX_TERMS - 1);

    return nt < cur ? nt : cur;
}

int czk_gencircuit(const czk_gencircuit_opts *o, const char *r1cs_path, const char *wtns_path,
                   czk_error *e)
{
    const uint32_t np = CZK_GENCIRCUIT_PRIVATE_INPUTS;
    uint64_t n_wires64 = (uint64_t)o->n_constraints + o->n_public + np + 1;
    czk_r1cs_writer *wr = NULL;
    struct gen g;
    uint32_t n_wires, first;
    int rc;

    if (o->n_constraints == 0 || n_wires64 > UINT32_MAX)
        return czk_errorf(e, -EINVAL, "gen-circuit: %u constraints and %u publics: need 1 <= "
                          "constraints and constraints + publics + 3 < 2^32",
                          o->n_constraints, o->n_public);
    if (!(o->bit_fraction >= 0.0 && o->bit_fraction <= 1.0))
        return czk_errorf(e, -EINVAL, "gen-circuit: bit fraction %g is not in [0, 1]",
                          o->bit_fraction);
    n_wires = (uint32_t)n_wires64;
    first = o->n_public + np + 1;

    memset(&g, 0, sizeof(g));
    rng_seed(&g.r, o->seed);
    czk_fr_sub(&g.minus_one, &CZK_FR_ZERO, &FR_STD_ONE); /* sub is form-agnostic: r - 1 */
    g.w = malloc((size_t)n_wires * sizeof(czk_fr));
    if (!g.w)
        return czk_errorf(e, -ENOMEM, "gen-circuit: cannot allocate the witness (%u wires, %zu MiB)",
                          n_wires, ((size_t)n_wires * sizeof(czk_fr)) >> 20);
    g.w[0] = FR_STD_ONE;
    for (uint32_t i = 1; i < first; i++)
        rng_fr(&g.r, &g.w[i]);

    rc = czk_r1cs_writer_open(&wr, r1cs_path, n_wires, 0, o->n_public, np, e);
    if (rc)
        goto out;
    for (uint32_t i = 0; i < o->n_constraints; i++) {
        uint32_t x = first + i;
        czk_r1cs_term a[MAX_TERMS], b[MAX_TERMS], c[MAX_TERMS];
        uint32_t na = 0, nb = 0, nc = 0;
        czk_fr va, vb, vc, am;

        if (rng_unit(&g.r) < o->bit_fraction) {
            g.w[x].l[0] = rng_below(&g.r, 2);
            g.w[x].l[1] = g.w[x].l[2] = g.w[x].l[3] = 0;
            a[na++] = (czk_r1cs_term){ x, FR_STD_ONE };
            if (rng_below(&g.r, 2)) {                   /* x * x = x */
                b[nb++] = (czk_r1cs_term){ x, FR_STD_ONE };
                c[nc++] = (czk_r1cs_term){ x, FR_STD_ONE };
            } else {                                    /* x * (1 - x) = 0 */
                b[nb++] = (czk_r1cs_term){ 0, FR_STD_ONE };
                b[nb++] = (czk_r1cs_term){ x, g.minus_one };
            }
        } else if (rng_below(&g.r, 8) == 0) {           /* 0 = sum c_k w_k - x */
            nc = n_terms(&g, x) - 1;
            if (nc == 0)
                nc = 1;
            gen_lc(&g, c, nc, x, &vc);
            g.w[x] = vc;
            c[nc++] = (czk_r1cs_term){ x, g.minus_one };
        } else {                                        /* A*B = x + sum c_k w_k */
            na = n_terms(&g, x);
            nb = n_terms(&g, x);
            nc = n_terms(&g, x) - 1;
            gen_lc(&g, a, na, x, &va);
            gen_lc(&g, b, nb, x, &vb);
            gen_lc(&g, c, nc, x, &vc);
            czk_fr_to_mont(&am, &va);
            czk_fr_mul(&va, &am, &vb);                  /* standard form of A*B */
            czk_fr_sub(&g.w[x], &va, &vc);
            c[nc++] = (czk_r1cs_term){ x, FR_STD_ONE };
        }
        if ((rc = czk_r1cs_writer_add(wr, a, na, b, nb, c, nc)))
            break;
    }
    /* close reports (and cleans up after) any error a failed add recorded */
    {
        int rc2 = czk_r1cs_writer_close(wr, e);
        if (!rc)
            rc = rc2;
    }
    if (rc)
        goto out;
    rc = czk_wtns_write(wtns_path, g.w, n_wires, e);
    if (!rc)
        czk_info("gen-circuit: %u constraints, %u wires, %u public -> \"%s\", \"%s\"",
                 o->n_constraints, n_wires, o->n_public, r1cs_path, wtns_path);
out:
    free(g.w);
    return rc;
}
