/*
 * setup_tmpl.h — the development setup for one curve (setup.c describes the
 * work), included by setup.c with the names of g16_names_*.h and
 * ST_BATCH_INV_CT (constant-time batch inversion of non-zero values:
 * out, in, n, scratch).  Private to setup.c; setup.h is the contract.
 */

static void CV(setup_pow_u64)(CV(fr) *r, const CV(fr) *a, uint64_t e)
{
    CV(fr_pow)(r, a, &e, 1);
}

/* tau^(2n) != 1 means tau - x != 0 for every point x of both domains */
static bool CV(setup_secrets_ok)(const ST(secrets) *s, uint64_t two_n)
{
    CV(fr) t;

    if (CV(fr_is_zero)(&s->tau) || CV(fr_is_zero)(&s->alpha) || CV(fr_is_zero)(&s->beta) ||
        CV(fr_is_zero)(&s->delta))
        return false;
    CV(setup_pow_u64)(&t, &s->tau, two_n);
    return !CV(fr_eq)(&t, &CVU(FR_ONE));
}

int ST(secrets_random)(ST(secrets) *s)
{
    int rc;

    do {
        if ((rc = CV(fr_random)(&s->tau)) || (rc = CV(fr_random)(&s->alpha)) ||
            (rc = CV(fr_random)(&s->beta)) || (rc = CV(fr_random)(&s->delta)))
            return rc;
        /* 2^33 covers every domain up to 2^32: tau is outside all of them */
    } while (!CV(setup_secrets_ok)(s, (uint64_t)1 << 33));
    return 0;
}

/* ---- Lagrange values: out[k] = factor * x_k / (tau - x_k), x_k = first * step^k ---- */

struct CV(lag_ctx) {
    CV(fr) *out, *den, *scratch;
    CV(fr) tau, first, step, factor;
};

static void CV(lag_chunk)(void *vctx, size_t begin, size_t end, unsigned worker)
{
    struct CV(lag_ctx) *x = vctx;
    CV(fr) xk, t;
    size_t k;

    CV(setup_pow_u64)(&xk, &x->step, begin);
    CV(fr_mul)(&xk, &xk, &x->first);
    for (k = begin; k < end; k++) {
        CV(fr_sub)(&x->den[k], &x->tau, &xk);
        CV(fr_mul)(&xk, &xk, &x->step);
    }
    ST_BATCH_INV_CT(x->out + begin, x->den + begin, end - begin, x->scratch + begin);
    CV(setup_pow_u64)(&xk, &x->step, begin);
    CV(fr_mul)(&xk, &xk, &x->first);
    CV(fr_mul)(&t, &xk, &x->factor);    /* factor * x_k, advanced by step */
    for (k = begin; k < end; k++) {
        CV(fr_mul)(&x->out[k], &x->out[k], &t);
        CV(fr_mul)(&t, &t, &x->step);
    }
    explicit_bzero(&xk, sizeof(xk));
    explicit_bzero(&t, sizeof(t));
}

static int CV(lagrange)(CV(fr) *out, size_t count, const CV(fr) *tau, const CV(fr) *first,
                        const CV(fr) *step, const CV(fr) *factor, int nthreads)
{
    struct CV(lag_ctx) x = { .out = out, .tau = *tau, .first = *first, .step = *step, .factor = *factor };
    int rc;

    x.den = malloc(count * sizeof(CV(fr)));
    x.scratch = malloc(count * sizeof(CV(fr)));
    if (!x.den || !x.scratch) {
        rc = -ENOMEM;
    } else {
        rc = czk_par_for(count, nthreads, CV(lag_chunk), &x);
    }
    wipe_free(x.den, count * sizeof(CV(fr)));
    wipe_free(x.scratch, count * sizeof(CV(fr)));
    explicit_bzero(&x, sizeof(x));
    return rc;
}

/* ---- one pass over the r1cs: A/B/C at tau and section 4 ----
 * In parallel over chunks of constraints (czk_r1cs_chunks): each chunk writes
 * its section 4 entries from its own offset (A terms then B terms per
 * constraint, in file order), and adds coef * L_row into A/B/C[wire] under
 * the lock of the wire's stripe (additions commute: the sums do not depend
 * on the order). */

#define SETUP_STRIPES 4096u

struct CV(abc_pass) {
    const CV(fr) *lag;         /* L_i(tau), n entries */
    CV(fr) *at, *bt, *ct;      /* nWires each */
    czk_zkey_coef *coefs;      /* section 4: the r1cs's A/B terms, then the public rows */
    const czk_r1cs *r1cs;
    const czk_r1cs_chunk *chunks;
    unsigned char lock[SETUP_STRIPES];
};

/* one chunk's walk: where its next section 4 entry goes */
struct CV(abc_walk) {
    struct CV(abc_pass) *p;
    size_t k;
};

static void CV(set_coef)(czk_zkey_coef *k, uint32_t matrix, uint32_t row, uint32_t wire, const CV(fr) *coef_mont)
{
    CV(fr) v;

    k->matrix = matrix;
    k->constraint = row;
    k->signal = wire;
    CV(fr_to_mont)(&v, coef_mont);   /* coef*R -> coef*R^2 */
    memcpy(&k->value, &v, sizeof(v));
}

/* acc[wire] += coef * L_row for each term; section 4 entries when matrix >= 0.
 * Wire ids and coefficients were validated by czk_r1cs_open. */
static void CV(add_lc)(struct CV(abc_walk) *w, CV(fr) *acc, int matrix, uint32_t row,
                       const czk_r1cs_term *terms, uint32_t nt)
{
    struct CV(abc_pass) *p = w->p;

    for (uint32_t i = 0; i < nt; i++) {
        czk_r1cs_term t;
        CV(fr) coef, cm, v;

        memcpy(&t, &terms[i], sizeof(t));
        memcpy(&coef, &t.coef, sizeof(coef));
        CV(fr_to_mont)(&cm, &coef);
        CV(fr_mul)(&v, &cm, &p->lag[row]);
        unsigned char *l = &p->lock[t.wire % SETUP_STRIPES];
        while (__atomic_test_and_set(l, __ATOMIC_ACQUIRE))
            ;
        CV(fr_add)(&acc[t.wire], &acc[t.wire], &v);
        __atomic_clear(l, __ATOMIC_RELEASE);
        if (matrix >= 0)
            CV(set_coef)(&p->coefs[w->k++], (uint32_t)matrix, row, t.wire, &cm);
    }
}

static int CV(abc_constraint)(void *ctx, uint32_t index, const czk_r1cs_term *a, uint32_t na,
                              const czk_r1cs_term *b, uint32_t nb, const czk_r1cs_term *c, uint32_t nc)
{
    struct CV(abc_walk) *w = ctx;

    CV(add_lc)(w, w->p->at, 0, index, a, na);
    CV(add_lc)(w, w->p->bt, 1, index, b, nb);
    CV(add_lc)(w, w->p->ct, -1, index, c, nc);
    return 0;
}

static void CV(abc_chunks)(void *vctx, size_t begin, size_t end, unsigned worker)
{
    struct CV(abc_pass) *p = vctx;

    (void)worker;
    for (size_t i = begin; i < end; i++) {
        struct CV(abc_walk) w = { .p = p, .k = p->chunks[i].ab_before };

        czk_r1cs_foreach_chunk(p->r1cs, &p->chunks[i], CV(abc_constraint), &w);
    }
}

/* ---- scalar combination for IC and C: k_j = (beta A_j + alpha B_j + C_j) [/ delta] ---- */

struct CV(comb_ctx) {
    CV(fr) *ct;
    const CV(fr) *at, *bt;
    CV(fr) alpha, beta, delta_inv;
    size_t n_ic;   /* j < n_ic: no division (gamma = 1) */
};

static void CV(comb_chunk)(void *vctx, size_t begin, size_t end, unsigned worker)
{
    struct CV(comb_ctx) *x = vctx;

    for (size_t j = begin; j < end; j++) {
        CV(fr) t;

        CV(fr_mul)(&t, &x->beta, &x->at[j]);
        CV(fr_add)(&x->ct[j], &x->ct[j], &t);
        CV(fr_mul)(&t, &x->alpha, &x->bt[j]);
        CV(fr_add)(&x->ct[j], &x->ct[j], &t);
        if (j >= x->n_ic)
            CV(fr_mul)(&x->ct[j], &x->ct[j], &x->delta_inv);
        explicit_bzero(&t, sizeof(t));
    }
}

/* ---- fixed-base multiplication of many scalars, straight to affine ---- */

struct CV(fb_ctx) {
    const CV(g1_fb) *t1;
    const CV(g2_fb) *t2;
    const CV(fr) *k;        /* Montgomery scalars */
    CV(g1_aff) *out1;
    CV(g2_aff) *out2;
    int err;
};

/* multiples of a table's base for a range of scalars, normalised per block
 * with one inversion (a zero scalar gives infinity, which batch_to_aff
 * writes as all-zero bytes) */
#define CV_FB_CHUNK(NAME, J, F, TABLE, OUT, MUL, TOAFF)                              \
    static void NAME(void *vctx, size_t begin, size_t end, unsigned worker)     \
    {                                                                           \
        struct CV(fb_ctx) *x = vctx;                                                \
        J *buf = malloc(SETUP_BLOCK * sizeof(*buf));                            \
        F *scratch = malloc(SETUP_BLOCK * sizeof(*scratch));                    \
                                                                                \
        if (!buf || !scratch) {                                                 \
            __atomic_store_n(&x->err, -ENOMEM, __ATOMIC_RELAXED);               \
            goto out;                                                           \
        }                                                                       \
        for (size_t b = begin; b < end; b += SETUP_BLOCK) {                     \
            size_t e = b + SETUP_BLOCK < end ? b + SETUP_BLOCK : end;           \
                                                                                \
            for (size_t j = b; j < e; j++) {                                    \
                CV(fr) s;                                                       \
                                                                                \
                CV(fr_from_mont)(&s, &x->k[j]);                                 \
                MUL(&buf[j - b], x->TABLE, &s);                                 \
                explicit_bzero(&s, sizeof(s));                                  \
            }                                                                   \
            TOAFF(x->OUT + b, buf, e - b, scratch);                             \
        }                                                                       \
    out:                                                                        \
        free(buf);                                                              \
        free(scratch);                                                          \
    }

CV_FB_CHUNK(CV(fb_g1_chunk), CV(g1), CV(fp), t1, out1, CV(g1_fb_mul), CV(g1_batch_to_aff))
CV_FB_CHUNK(CV(fb_g2_chunk), CV(g2), CV(fp2), t2, out2, CV(g2_fb_mul), CV(g2_batch_to_aff))

static int CV(fb_g1_many)(CV(g1_aff) *out, const CV(g1_fb) *t, const CV(fr) *k, size_t n, int nthreads)
{
    struct CV(fb_ctx) x = { .t1 = t, .k = k, .out1 = out };
    int rc = czk_par_for(n, nthreads, CV(fb_g1_chunk), &x);

    return rc ? rc : x.err;
}

static int CV(fb_g2_many)(CV(g2_aff) *out, const CV(g2_fb) *t, const CV(fr) *k, size_t n, int nthreads)
{
    struct CV(fb_ctx) x = { .t2 = t, .k = k, .out2 = out };
    int rc = czk_par_for(n, nthreads, CV(fb_g2_chunk), &x);

    return rc ? rc : x.err;
}

/* out[i] = k[i] G (k Montgomery) for the generator of G1 (g2 0) or G2:
 * on accel when there is one (its failure logged, then the CPU's tables
 * with accel->fallback), else on the CPU's tables, built here on first use */
struct CV(gen_muls) {
    const czk_setup_accel *accel;
    CV(g1_fb) *fb1;
    CV(g2_fb) *fb2;
    size_t fb1_uses, fb2_uses; /* multiplications each table serves: its window */
    int nthreads;
    czk_error *e;
};

static int CV(gen_mul_many)(struct CV(gen_muls) *g, int g2, void *out, const CV(fr) *k, size_t n, const char *what)
{
    const czk_setup_accel *a = g->accel;
    int rc;

    if (a && a->gen_mul) {
        double t0 = now_s();

        rc = a->gen_mul(a->arg, CV_ID, g2, g2 ? (const void *)&CVU(G2_GEN) : (const void *)&CVU(G1_GEN), k, n, out);
        if (!rc) {
            czk_debug("setup: %s points (%zu) on %s in %.2f s", what, n, a->name, now_s() - t0);
            return 0;
        }
        if (!a->fallback)
            return czk_errorf(g->e, rc, "setup: %s points on %s: %s", what, a->name, strerror(-rc));
        czk_warn("setup: %s points on %s failed (%s); computing them on the CPU", what, a->name, strerror(-rc));
    }
    if (g2) {
        if (!g->fb2 && (rc = CV(g2_fb_new)(&g->fb2, &CVU(G2_GEN), fb_window(g->fb2_uses))))
            return czk_errorf(g->e, rc, "setup: G2 table: %s", strerror(-rc));
        rc = CV(fb_g2_many)(out, g->fb2, k, n, g->nthreads);
    } else {
        if (!g->fb1 && (rc = CV(g1_fb_new)(&g->fb1, &CVU(G1_GEN), fb_window(g->fb1_uses))))
            return czk_errorf(g->e, rc, "setup: G1 table: %s", strerror(-rc));
        rc = CV(fb_g1_many)(out, g->fb1, k, n, g->nthreads);
    }
    return rc ? czk_errorf(g->e, rc, "setup: %s points: %s", what, strerror(-rc)) : 0;
}

static void CV(g1_mul_gen)(CV(g1_aff) *r, const CV(fr) *k_mont)
{
    CV(fr) s;
    CV(g1) p;

    CV(fr_from_mont)(&s, k_mont);
    CV(g1_mul_aff_ct)(&p, &CVU(G1_GEN), &s);
    CV(g1_to_aff_ct)(r, &p);
    explicit_bzero(&s, sizeof(s));
    explicit_bzero(&p, sizeof(p));
}

static void CV(g2_mul_gen)(CV(g2_aff) *r, const CV(fr) *k_mont)
{
    CV(fr) s;
    CV(g2) p;

    CV(fr_from_mont)(&s, k_mont);
    CV(g2_mul_aff_ct)(&p, &CVU(G2_GEN), &s);
    CV(g2_to_aff_ct)(r, &p);
    explicit_bzero(&s, sizeof(s));
    explicit_bzero(&p, sizeof(p));
}

int ST(with_secrets)(const char *r1cs_path, const char *zkey_path,
                     const ST(secrets) *sec, int nthreads, const czk_setup_accel *accel, czk_error *e)
{
    czk_r1cs r1cs;
    struct CV(abc_pass) *pass = NULL;
    czk_r1cs_chunk *chunks = NULL;
    size_t n_chunks, n_coefs = 0;
    uint64_t ab_terms = 0;
    czk_zkey_spec spec;
    CV(fr) *lag = NULL, *hk = NULL, *at = NULL, *bt = NULL, *ct = NULL;
    CV(g1_aff) *pa = NULL, *pb1 = NULL, *pc = NULL, *ph = NULL;
    CV(g2_aff) *pb2 = NULL;
    struct CV(gen_muls) gm = { 0 };
    CV(fr) w_n, w_2n, one = CVU(FR_ONE), t, factor, n_fr, delta_inv;
    struct CV(comb_ctx) comb;
    uint64_t rows;
    uint32_t n_public, n_vars, log_n;
    size_t n = 0;
    double t0 = now_s();
    int rc;

    czk_warn("DEVELOPMENT SETUP: \"%s\" is for tests and benchmarks only, NOT FOR PRODUCTION "
             "(whoever runs this could keep the toxic waste; use a ceremony such as snarkjs "
             "powersoftau + zkey contribute for real keys)", zkey_path);

    if ((rc = czk_r1cs_open_curves(&r1cs, r1cs_path, 1u << CV_ID, e)))
        return rc;
    n_public = r1cs.n_pub_out + r1cs.n_pub_in;
    n_vars = r1cs.n_wires;
    rows = (uint64_t)r1cs.n_constraints + n_public + 1;
    for (log_n = 0; ((uint64_t)1 << log_n) < rows; log_n++)
        ;
    if (n_vars < n_public + 1) {
        rc = czk_errorf(e, -EINVAL, "\"%s\": nWires = %u is less than nPublic + 1 = %u",
                        r1cs_path, n_vars, n_public + 1);
        goto out_r1cs;
    }
    if (log_n > CV_NTT_MAX_LOG) {
        rc = czk_errorf(e, -EINVAL, "\"%s\": %u constraints + %u publics need a domain beyond 2^%d",
                        r1cs_path, r1cs.n_constraints, n_public, CV_NTT_MAX_LOG);
        goto out_r1cs;
    }
    n = (size_t)1 << log_n;
    if (!CV(setup_secrets_ok)(sec, 2 * (uint64_t)n)) {
        rc = czk_errorf(e, -EINVAL, "setup: secrets are zero or tau lies in the evaluation domain");
        goto out_r1cs;
    }
    czk_info("setup \"%s\": %u constraints, %u wires, %u public, domain 2^%u",
             r1cs_path, r1cs.n_constraints, n_vars, n_public, log_n);

    lag = alloc_zero(n, sizeof(CV(fr)));
    hk = alloc_zero(n, sizeof(CV(fr)));
    at = alloc_zero(n_vars, sizeof(CV(fr)));
    bt = alloc_zero(n_vars, sizeof(CV(fr)));
    ct = alloc_zero(n_vars, sizeof(CV(fr)));
    pa = alloc_zero(n_vars, sizeof(CV(g1_aff)));
    pb1 = alloc_zero(n_vars, sizeof(CV(g1_aff)));
    pb2 = alloc_zero(n_vars, sizeof(CV(g2_aff)));
    pc = alloc_zero(n_vars, sizeof(CV(g1_aff)));
    ph = alloc_zero(n, sizeof(CV(g1_aff)));
    if (!lag || !hk || !at || !bt || !ct || !pa || !pb1 || !pb2 || !pc || !ph) {
        rc = czk_errorf(e, -ENOMEM, "setup \"%s\": out of memory for a domain of 2^%u",
                        r1cs_path, log_n);
        goto out;
    }

    /* L_i(tau) = (tau^n - 1)/n * w^i / (tau - w^i) */
    CV(fr_root_of_unity)(&w_n, log_n);
    CV(fr_root_of_unity)(&w_2n, log_n + 1);
    CV(fr_from_u64)(&n_fr, n);
    CV(setup_pow_u64)(&t, &sec->tau, n);
    CV(fr_sub)(&t, &t, &one);
    CV(fr_inv)(&factor, &n_fr);
    CV(fr_mul)(&factor, &factor, &t);
    if ((rc = CV(lagrange)(lag, n, &sec->tau, &one, &w_n, &factor, nthreads)))
        goto nomem;
    /* H_k = L^(2n)_(2k+1)(tau)/delta = (tau^2n - 1)/(2n delta) * x / (tau - x), x = w_2n w_n^k */
    CV(fr_inv_ct)(&delta_inv, &sec->delta);
    CV(setup_pow_u64)(&t, &sec->tau, 2 * (uint64_t)n);
    CV(fr_sub)(&t, &t, &one);
    CV(fr_dbl)(&n_fr, &n_fr);
    CV(fr_inv)(&factor, &n_fr);
    CV(fr_mul)(&factor, &factor, &t);
    CV(fr_mul)(&factor, &factor, &delta_inv);
    if ((rc = CV(lagrange)(hk, n, &sec->tau, &w_2n, &w_n, &factor, nthreads)))
        goto nomem;
    czk_info("setup: lagrange values %.1f s", now_s() - t0);

    /* A, B, C at tau plus section 4, then the public-input rows */
    n_chunks = 64 * (size_t)czk_par_threads(nthreads);
    if (n_chunks > r1cs.n_constraints)
        n_chunks = r1cs.n_constraints ? r1cs.n_constraints : 1;
    if (!(pass = calloc(1, sizeof(*pass))) || !(chunks = calloc(n_chunks, sizeof(*chunks))))
        goto nomem_alloc;
    czk_r1cs_chunks(&r1cs, chunks, n_chunks, &ab_terms);
    n_coefs = ab_terms + n_public + 1;
    if (n_coefs > UINT32_MAX) {
        rc = czk_errorf(e, -EOVERFLOW, "\"%s\": %zu coefficients exceed the zkey's u32 count",
                        r1cs_path, n_coefs);
        goto out;
    }
    if (!(pass->coefs = malloc(n_coefs * sizeof(*pass->coefs))))
        goto nomem_alloc;
    pass->lag = lag;
    pass->at = at;
    pass->bt = bt;
    pass->ct = ct;
    pass->r1cs = &r1cs;
    pass->chunks = chunks;
    if ((rc = czk_par_for(n_chunks, nthreads, CV(abc_chunks), pass)))
        goto nomem;
    for (uint32_t i = 0; i <= n_public; i++) {
        uint32_t row = r1cs.n_constraints + i;

        CV(fr_add)(&at[i], &at[i], &lag[row]);
        CV(set_coef)(&pass->coefs[ab_terms + i], 0, row, i, &one);
    }
    czk_info("setup: %zu coefficients %.1f s", n_coefs, now_s() - t0);

    gm = (struct CV(gen_muls)){ .accel = accel, .fb1_uses = 4 * (size_t)n_vars + n, .fb2_uses = n_vars,
                                .nthreads = nthreads, .e = e };
    if ((rc = CV(gen_mul_many)(&gm, 0, pa, at, n_vars, "A")) ||
        (rc = CV(gen_mul_many)(&gm, 0, pb1, bt, n_vars, "B1")) ||
        (rc = CV(gen_mul_many)(&gm, 1, pb2, bt, n_vars, "B2")))
        goto out;
    czk_info("setup: A, B1, B2 points %.1f s", now_s() - t0);

    comb = (struct CV(comb_ctx)){ .ct = ct, .at = at, .bt = bt, .alpha = sec->alpha, .beta = sec->beta,
                              .delta_inv = delta_inv, .n_ic = (size_t)n_public + 1 };
    rc = czk_par_for(n_vars, nthreads, CV(comb_chunk), &comb);
    explicit_bzero(&comb, sizeof(comb));
    /* ct[0..nPublic] become IC = pc[0..nPublic], the rest C = pc[nPublic+1..] */
    if (rc)
        goto nomem;
    if ((rc = CV(gen_mul_many)(&gm, 0, pc, ct, n_vars, "IC and C")) ||
        (rc = CV(gen_mul_many)(&gm, 0, ph, hk, n, "H")))
        goto out;
    czk_info("setup: IC, C, H points %.1f s", now_s() - t0);

    memset(&spec, 0, sizeof(spec));
    spec.curve = CV_ID;
    spec.n_vars = n_vars;
    spec.n_public = n_public;
    spec.domain_size = (uint32_t)n;
    CV(g1_mul_gen)(&ZKP(&spec)->alpha1, &sec->alpha);
    CV(g1_mul_gen)(&ZKP(&spec)->beta1, &sec->beta);
    CV(g1_mul_gen)(&ZKP(&spec)->delta1, &sec->delta);
    CV(g2_mul_gen)(&ZKP(&spec)->beta2, &sec->beta);
    CV(g2_mul_gen)(&ZKP(&spec)->delta2, &sec->delta);
    ZKP(&spec)->gamma2 = CVU(G2_GEN);
    ZKP(&spec)->ic = pc;
    ZKP(&spec)->c = pc + n_public + 1;
    ZKP(&spec)->a = pa;
    ZKP(&spec)->b1 = pb1;
    ZKP(&spec)->b2 = pb2;
    ZKP(&spec)->h = ph;
    spec.n_coefs = (uint32_t)n_coefs;
    spec.coefs = pass->coefs;
    if ((rc = czk_zkey_write(zkey_path, &spec, e)))
        goto out;
    czk_info("setup: wrote \"%s\" in %.1f s", zkey_path, now_s() - t0);
    goto out;

nomem_alloc:
    rc = -ENOMEM;
nomem:   /* the helpers return bare codes (allocation or thread failures) */
    czk_errorf(e, rc, "setup \"%s\": %s", r1cs_path, strerror(-rc));
out:
    explicit_bzero(&t, sizeof(t));
    explicit_bzero(&factor, sizeof(factor));
    explicit_bzero(&delta_inv, sizeof(delta_inv));
    CV(g1_fb_free)(gm.fb1);
    CV(g2_fb_free)(gm.fb2);
    wipe_free(lag, n * sizeof(CV(fr)));
    wipe_free(hk, n * sizeof(CV(fr)));
    wipe_free(at, n_vars * sizeof(CV(fr)));
    wipe_free(bt, n_vars * sizeof(CV(fr)));
    wipe_free(ct, n_vars * sizeof(CV(fr)));
    free(pa);
    free(pb1);
    free(pb2);
    free(pc);
    free(ph);
    if (pass)
        free(pass->coefs);
    free(pass);
    free(chunks);
out_r1cs:
    czk_r1cs_close(&r1cs);
    return rc;
}


#undef CV_FB_CHUNK
