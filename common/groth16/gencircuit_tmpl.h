/*
 * gencircuit_tmpl.h — the synthetic circuit generator for one curve
 * (gencircuit.c describes it), included by gencircuit.c with the names of
 * g16_names_*.h and GEN_WTNS_WRITE (the czk_wtns_write of that curve).
 * Private to gencircuit.c.
 */

/* uniform in [0, r), standard form */
static void CV(gen_rng_fr)(rng *r, CV(fr) *x)
{
    do {
        for (int i = 0; i < 4; i++)
            x->l[i] = rng_next(r);
        x->l[3] &= 0x7fffffffffffffffull;   /* r < 2^255 */
    } while (!CV(fr_is_canonical)(x));
}

static const CV(fr) CV(gen_std_one) = { { 1, 0, 0, 0 } };

/* a term of the r1cs (its coef holds this curve's scalar bytes) */
static czk_r1cs_term CV(gen_term)(uint32_t wire, const CV(fr) *coef)
{
    czk_r1cs_term t;

    t.wire = wire;
    memcpy(&t.coef, coef, sizeof(*coef));
    return t;
}

struct CV(gen) {
    rng r;
    CV(fr) *w;           /* witness, standard form */
    CV(fr) minus_one;    /* standard form r - 1 */
};

/* a random coefficient, standard form: 1, -1 or full-width */
static void CV(gen_coef)(struct CV(gen) *g, CV(fr) *c)
{
    uint64_t k = rng_below(&g->r, 4);

    if (k == 0)
        *c = CV(gen_std_one);
    else if (k == 1)
        *c = g->minus_one;
    else
        CV(gen_rng_fr)(&g->r, c);
}

/* nt distinct earlier wires (< cur) with random coefficients; returns the
 * value of the linear combination (standard form) */
static void CV(gen_lc)(struct CV(gen) *g, czk_r1cs_term *t, uint32_t nt, uint32_t cur, CV(fr) *val)
{
    memset(val, 0, sizeof(*val));
    for (uint32_t k = 0; k < nt; k++) {
        uint32_t wire;
        bool dup;
        CV(fr) c, cm, v;

        do {
            if (rng_below(&g->r, 2) && cur > RECENT)
                wire = cur - 1 - (uint32_t)rng_below(&g->r, RECENT);
            else
                wire = (uint32_t)rng_below(&g->r, cur);
            dup = false;
            for (uint32_t j = 0; j < k; j++)
                dup |= t[j].wire == wire;
        } while (dup);
        CV(gen_coef)(g, &c);
        t[k] = CV(gen_term)(wire, &c);
        CV(fr_to_mont)(&cm, &c);
        CV(fr_mul)(&v, &cm, &g->w[wire]);      /* Montgomery x standard = standard */
        CV(fr_add)(val, val, &v);
    }
}

static uint32_t CV(gen_n_terms)(struct CV(gen) *g, uint32_t cur)
{
    uint32_t nt = 2 + (uint32_t)rng_below(&g->r, MAX_TERMS - 1);

    return nt < cur ? nt : cur;
}

static int CV(gencircuit_curve)(const czk_gencircuit_opts *o, const char *r1cs_path, const char *wtns_path,
                                czk_error *e)
{
    const uint32_t np = CZK_GENCIRCUIT_PRIVATE_INPUTS;
    uint64_t n_wires64 = (uint64_t)o->n_constraints + o->n_public + np + 1;
    czk_r1cs_writer *wr = NULL;
    struct CV(gen) g;
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
    CV(fr_sub)(&g.minus_one, &CVU(FR_ZERO), &CV(gen_std_one)); /* sub is form-agnostic: r - 1 */
    g.w = malloc((size_t)n_wires * sizeof(CV(fr)));
    if (!g.w)
        return czk_errorf(e, -ENOMEM, "gen-circuit: cannot allocate the witness (%u wires, %zu MiB)",
                          n_wires, ((size_t)n_wires * sizeof(CV(fr))) >> 20);
    g.w[0] = CV(gen_std_one);
    for (uint32_t i = 1; i < first; i++)
        CV(gen_rng_fr)(&g.r, &g.w[i]);

    rc = czk_r1cs_writer_open_curve(&wr, r1cs_path, CV_ID, n_wires, 0, o->n_public, np, e);
    if (rc)
        goto out;
    for (uint32_t i = 0; i < o->n_constraints; i++) {
        uint32_t x = first + i;
        czk_r1cs_term a[MAX_TERMS], b[MAX_TERMS], c[MAX_TERMS];
        uint32_t na = 0, nb = 0, nc = 0;
        CV(fr) va, vb, vc, am;

        if (rng_unit(&g.r) < o->bit_fraction) {
            g.w[x].l[0] = rng_below(&g.r, 2);
            g.w[x].l[1] = g.w[x].l[2] = g.w[x].l[3] = 0;
            a[na++] = CV(gen_term)(x, &CV(gen_std_one));
            if (rng_below(&g.r, 2)) {                   /* x * x = x */
                b[nb++] = CV(gen_term)(x, &CV(gen_std_one));
                c[nc++] = CV(gen_term)(x, &CV(gen_std_one));
            } else {                                    /* x * (1 - x) = 0 */
                b[nb++] = CV(gen_term)(0, &CV(gen_std_one));
                b[nb++] = CV(gen_term)(x, &g.minus_one);
            }
        } else if (rng_below(&g.r, 8) == 0) {           /* 0 = sum c_k w_k - x */
            nc = CV(gen_n_terms)(&g, x) - 1;
            if (nc == 0)
                nc = 1;
            CV(gen_lc)(&g, c, nc, x, &vc);
            g.w[x] = vc;
            c[nc++] = CV(gen_term)(x, &g.minus_one);
        } else {                                        /* A*B = x + sum c_k w_k */
            na = CV(gen_n_terms)(&g, x);
            nb = CV(gen_n_terms)(&g, x);
            nc = CV(gen_n_terms)(&g, x) - 1;
            CV(gen_lc)(&g, a, na, x, &va);
            CV(gen_lc)(&g, b, nb, x, &vb);
            CV(gen_lc)(&g, c, nc, x, &vc);
            CV(fr_to_mont)(&am, &va);
            CV(fr_mul)(&va, &am, &vb);                  /* standard form of A*B */
            CV(fr_sub)(&g.w[x], &va, &vc);
            c[nc++] = CV(gen_term)(x, &CV(gen_std_one));
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
    rc = GEN_WTNS_WRITE(wtns_path, g.w, n_wires, e);
    if (!rc)
        czk_info("gen-circuit: %u constraints, %u wires, %u public -> \"%s\", \"%s\"",
                 o->n_constraints, n_wires, o->n_public, r1cs_path, wtns_path);
out:
    free(g.w);
    return rc;
}
