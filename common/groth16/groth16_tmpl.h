/*
 * groth16_tmpl.h — the Groth16 prover stages for one curve, written once and
 * included by groth16.c with the names of g16_names_bls12_381.h and of
 * g16_names_bn254.h (groth16_api_tmpl.h declares them).  Private to
 * groth16.c; what the stages compute is described there.
 */

/* ---- stage 1 ---- */

struct CV(abc_ctx) {
    const czk_zkey_coef *coefs;
    const size_t *split;  /* chunk k covers coefs [split[k], split[k+1]) */
    const CV(fr) *w;
    CV(fr) *a, *b, *c;
};

static void CV(abc_zero)(void *vctx, size_t begin, size_t end, unsigned worker)
{
    struct CV(abc_ctx) *x = vctx;

    memset(x->a + begin, 0, (end - begin) * sizeof(CV(fr)));
    memset(x->b + begin, 0, (end - begin) * sizeof(CV(fr)));
}

/* coefficients [i, end) of one chunk: t = coef * w[signal], then the row's
 * a or b += t.  The value is R^2 coef, w is in standard form, so the product
 * R^2 coef w / R is Montgomery(coef w). */
static void CV(abc_terms)(struct CV(abc_ctx) *x, size_t i, size_t end)
{
    for (; i < end; i++) {
        const czk_zkey_coef *k = &x->coefs[i];
        CV(fr) v, t;
        CV(fr) *dst = k->matrix == 0 ? x->a : x->b;

        if (i + CZK_ABC_PREFETCH < end) /* groth16.c: why */
            __builtin_prefetch(&x->w[x->coefs[i + CZK_ABC_PREFETCH].signal]);
        memcpy(&v, &k->value, sizeof(v)); /* entries are unaligned */
        CV(fr_mul_i)(&t, &v, &x->w[k->signal]);
        CV(fr_add_i)(&dst[k->constraint], &dst[k->constraint], &t);
    }
}

#ifdef CZK_HAVE_FPX8
/* the same, eight products at a time in IFMA lanes (frx8.h: the same
 * canonical residues as CV(fr_mul)); the sums stay scalar, in entry order,
 * since consecutive entries mostly share a row.  Returns where it stopped
 * (fewer than 8 entries before end are left to CV(abc_terms)). */
CZK_IFMA static size_t CV(abc_terms_x8)(struct CV(abc_ctx) *x, size_t i, size_t end)
{
    for (; i + 8 <= end; i += 8) {
        const czk_zkey_coef *k = &x->coefs[i];
        const char *pv[8], *pw[8];
        CV(frx8) v, wv;
        CV(fr) t[8];
        int j;

        if (i + CZK_ABC_PREFETCH + 8 <= end)
            for (j = 0; j < 8; j++)
                __builtin_prefetch(&x->w[x->coefs[i + CZK_ABC_PREFETCH + j].signal]);
        for (j = 0; j < 8; j++) {
            pv[j] = (const char *)&k[j].value;
            pw[j] = (const char *)&x->w[k[j].signal];
        }
        CV(frx8_gather_p)(&v, pv, 0);
        CV(frx8_gather_p)(&wv, pw, 0);
        CV(frx8_mul)(&v, &v, &wv);
        CV(frx8_store)(t, &v);
        for (j = 0; j < 8; j++) {
            CV(fr) *dst = k[j].matrix == 0 ? x->a : x->b;
            CV(fr_add_i)(&dst[k[j].constraint], &dst[k[j].constraint], &t[j]);
        }
    }
    return i;
}

/* c[i] = a[i] b[i] for i in [i, end), eight at a time; returns where it
 * stopped, as CV(abc_terms_x8) */
CZK_IFMA static size_t CV(abc_product_x8)(struct CV(abc_ctx) *x, size_t i, size_t end)
{
    for (; i + 8 <= end; i += 8) {
        CV(frx8) a, b;

        CV(frx8_load)(&a, x->a + i);
        CV(frx8_load)(&b, x->b + i);
        CV(frx8_mul)(&a, &a, &b);
        CV(frx8_store)(x->c + i, &a);
    }
    return i;
}
#endif

static void CV(abc_accumulate)(void *vctx, size_t kbegin, size_t kend, unsigned worker)
{
    struct CV(abc_ctx) *x = vctx;
    size_t i = x->split[kbegin], end = x->split[kend];

#ifdef CZK_HAVE_FPX8
    if (czk_fpx8_enabled())
        i = CV(abc_terms_x8)(x, i, end);
#endif
    CV(abc_terms)(x, i, end);
}

static void CV(abc_product)(void *vctx, size_t begin, size_t end, unsigned worker)
{
    struct CV(abc_ctx) *x = vctx;

#ifdef CZK_HAVE_FPX8
    if (czk_fpx8_enabled())
        begin = CV(abc_product_x8)(x, begin, end);
#endif
    for (size_t i = begin; i < end; i++)
        CV(fr_mul)(&x->c[i], &x->a[i], &x->b[i]);
}

int G16(build_abc)(const czk_zkey *z, const CV(fr) *w, CV(fr) *a, CV(fr) *b, CV(fr) *c, int nthreads)
{
    struct CV(abc_ctx) x = { .coefs = z->coefs, .w = w, .a = a, .b = b, .c = c };
    size_t n = z->n_coefs, nchunks, k;
    size_t *split;
    /* indices were range-checked by czk_zkey_open, which also found their
     * order; a key filled in by other code is checked here */
    bool sorted = z->coef_order != CZK_COEF_ORDER_OTHER;
    int rc;

    for (size_t i = 1; z->coef_order == CZK_COEF_ORDER_UNKNOWN && i < n && sorted; i++)
        sorted = z->coefs[i].constraint >= z->coefs[i - 1].constraint;
    nchunks = sorted ? (size_t)czk_par_threads(nthreads) * 4 : 1;
    if (nchunks > n)
        nchunks = n ? n : 1;
    split = malloc((nchunks + 1) * sizeof(*split));
    if (!split)
        return -ENOMEM;
    /* chunk boundaries moved forward to the next row change, so no two chunks
     * write the same row and the threads need no synchronisation */
    split[0] = 0;
    for (k = 1; k < nchunks; k++) {
        size_t i = n / nchunks * k;

        if (i < split[k - 1])
            i = split[k - 1];
        while (i > 0 && i < n && z->coefs[i].constraint == z->coefs[i - 1].constraint)
            i++;
        split[k] = i;
    }
    split[nchunks] = n;
    x.split = split;

    rc = czk_par_for(z->domain_size, nthreads, CV(abc_zero), &x);
    if (!rc)
        rc = czk_par_for(nchunks, nthreads, CV(abc_accumulate), &x);
    if (!rc)
        rc = czk_par_for(z->domain_size, nthreads, CV(abc_product), &x);
    free(split);
    return rc;
}

/* ---- stage 2 ---- */

struct CV(h_ctx) { const CV(fr) *a, *b, *c; CV(fr) *h; };

static void CV(h_join)(void *vctx, size_t begin, size_t end, unsigned worker)
{
    struct CV(h_ctx) *x = vctx;

    for (size_t i = begin; i < end; i++) {
        CV(fr) t;

        CV(fr_mul)(&t, &x->a[i], &x->b[i]);
        CV(fr_sub)(&t, &t, &x->c[i]);
        CV(fr_from_mont)(&x->h[i], &t);
    }
}

int G16(compute_h)(CV(fr) *a, CV(fr) *b, CV(fr) *c, CV(fr) *h, unsigned log_n, int nthreads)
{
    struct CV(h_ctx) x = { a, b, c, h };
    int rc;

    if ((rc = CV(ntt_to_odd_coset)(a, log_n, nthreads)) ||
        (rc = CV(ntt_to_odd_coset)(b, log_n, nthreads)) ||
        (rc = CV(ntt_to_odd_coset)(c, log_n, nthreads)))
        return rc;
    return czk_par_for((size_t)1 << log_n, nthreads, CV(h_join), &x);
}

int G16(msms)(const czk_zkey *z, const CV(fr) *w, const CV(fr) *h, G16(msm_out) *out, int nthreads)
{
    CV(g1) pa, pb1, pc, ph;
    CV(g2) pb2;
    size_t npriv = (size_t)z->n_vars - z->n_public - 1;
    int rc;

    if ((rc = CV(msm_g1)(&pa, ZKP(z)->a, w, z->n_vars, nthreads)) ||
        (rc = CV(msm_g1)(&pb1, ZKP(z)->b1, w, z->n_vars, nthreads)) ||
        (rc = CV(msm_g2)(&pb2, ZKP(z)->b2, w, z->n_vars, nthreads)) ||
        (rc = CV(msm_g1)(&pc, ZKP(z)->c, w + z->n_public + 1, npriv, nthreads)) ||
        (rc = CV(msm_g1)(&ph, ZKP(z)->h, h, z->domain_size, nthreads)))
        return rc;
    CV(g1_add)(&pc, &pc, &ph);
    CV(g1_to_aff)(&out->a, &pa);
    CV(g1_to_aff)(&out->b1, &pb1);
    CV(g1_to_aff)(&out->c, &pc);
    CV(g2_to_aff)(&out->b2, &pb2);
    return 0;
}

int G16(compute)(const czk_zkey *z, CV(fr) *a, CV(fr) *b, CV(fr) *c,
                 const CV(fr) *w, G16(msm_out) *out, int nthreads)
{
    int rc = G16(compute_h)(a, b, c, a, z->log_domain, nthreads);

    return rc ? rc : G16(msms)(z, w, a, out, nthreads);
}

/* ---- stage 3 ---- */

void G16(params_from_zkey)(G16(params) *p, const czk_zkey *z)
{
    p->alpha1 = ZKP(z)->alpha1;
    p->beta1 = ZKP(z)->beta1;
    p->delta1 = ZKP(z)->delta1;
    p->beta2 = ZKP(z)->beta2;
    p->delta2 = ZKP(z)->delta2;
}

/* Every step touches r, s or the witness-derived MSM results, so all of it is
 * constant time: Montgomery products for r, s and r*s, the _ct scalar
 * multiplications and complete additions of curve.h, and the Fermat inversions
 * of _to_aff_ct (Z depends on r and s).  The sums are taken in another order
 * than the formulas read; the affine results are the same points. */
void G16(finalize)(const G16(params) *p, const G16(msm_out) *m,
                   const CV(fr) *r, const CV(fr) *s, G16(proof) *proof)
{
    CV(fr) r_std, s_std, rs, rs_std;
    CV(g1) pi_a, b1, pi_c, t;
    CV(g2) pi_b;

    CV(fr_from_mont)(&r_std, r);
    CV(fr_from_mont)(&s_std, s);
    CV(fr_mul)(&rs, r, s);
    CV(fr_from_mont)(&rs_std, &rs);

    /* pi_a = r*delta1 + alpha1 + A·w */
    CV(g1_mul_aff_ct)(&pi_a, &p->delta1, &r_std);
    CV(g1_add_aff_ct)(&pi_a, &pi_a, &p->alpha1);
    CV(g1_add_aff_ct)(&pi_a, &pi_a, &m->a);

    /* pi_b = s*delta2 + beta2 + B2·w */
    CV(g2_mul_aff_ct)(&pi_b, &p->delta2, &s_std);
    CV(g2_add_aff_ct)(&pi_b, &pi_b, &p->beta2);
    CV(g2_add_aff_ct)(&pi_b, &pi_b, &m->b2);

    /* b1 = s*delta1 + beta1 + B1·w */
    CV(g1_mul_aff_ct)(&b1, &p->delta1, &s_std);
    CV(g1_add_aff_ct)(&b1, &b1, &p->beta1);
    CV(g1_add_aff_ct)(&b1, &b1, &m->b1);

    /* pi_c = -r*s*delta1 + (C·w + H·h) + s*pi_a + r*b1 */
    CV(g1_mul_aff_ct)(&pi_c, &p->delta1, &rs_std);
    CV(g1_neg)(&pi_c, &pi_c);
    CV(g1_add_aff_ct)(&pi_c, &pi_c, &m->c);
    CV(g1_mul_ct)(&t, &pi_a, &s_std);
    CV(g1_add_ct)(&pi_c, &pi_c, &t);
    CV(g1_mul_ct)(&t, &b1, &r_std);
    CV(g1_add_ct)(&pi_c, &pi_c, &t);

    CV(g1_to_aff_ct)(&proof->a, &pi_a);
    CV(g2_to_aff_ct)(&proof->b, &pi_b);
    CV(g1_to_aff_ct)(&proof->c, &pi_c);

    /* the blinding scalars (and r*delta1 etc.) must not outlive the proof */
    explicit_bzero(&r_std, sizeof(r_std));
    explicit_bzero(&s_std, sizeof(s_std));
    explicit_bzero(&rs, sizeof(rs));
    explicit_bzero(&rs_std, sizeof(rs_std));
    explicit_bzero(&t, sizeof(t));
    explicit_bzero(&b1, sizeof(b1));
    explicit_bzero(&pi_a, sizeof(pi_a));
    explicit_bzero(&pi_b, sizeof(pi_b));
    explicit_bzero(&pi_c, sizeof(pi_c));
}

int G16(finalize_random)(const G16(params) *p, const G16(msm_out) *m, G16(proof) *proof)
{
    CV(fr) r, s;
    int rc;

    /* r first, then s, as snarkjs draws them */
    if ((rc = CV(fr_random)(&r)) || (rc = CV(fr_random)(&s)))
        return rc;
    G16(finalize)(p, m, &r, &s, proof);
    explicit_bzero(&r, sizeof(r));
    explicit_bzero(&s, sizeof(s));
    return 0;
}

/* ---- all in one ---- */

int G16(prove)(const czk_zkey *z, const char *zkey_name,
               const czk_wtns *w, const char *wtns_name,
        const CV(fr) *r, const CV(fr) *s,
        G16(proof) *proof, CV(fr) *pub, int nthreads, czk_error *e)
{
    size_t n = z->domain_size, bytes = n * sizeof(CV(fr));
    CV(fr) *abc;
    G16(msm_out) m;
    G16(params) p;
    double t0 = now_s(), t1, t2;
    int rc;

    if (z->curve != CV_ID)
        return czk_errorf(e, -EINVAL, "proving key \"%s\" is for %s, not %s", zkey_name,
                          czk_curve_name(z->curve), CV_NAME);
    if ((rc = czk_groth16_check_witness(z, zkey_name, w, wtns_name, e)))
        return rc;
    abc = czk_bigbuf_alloc(3 * bytes);
    if (!abc)
        return czk_errorf(e, -ENOMEM, "proving with \"%s\": cannot allocate %zu MiB for a, b, c",
                          zkey_name, 3 * bytes >> 20);
    rc = G16(build_abc)(z, WTW(w), abc, abc + n, abc + 2 * n, nthreads);
    if (rc) {
        czk_errorf(e, rc, "proving with \"%s\": building a, b, c failed: %s", zkey_name,
                   strerror(-rc));
        goto out;
    }
    t1 = now_s();
    rc = G16(compute_h)(abc, abc + n, abc + 2 * n, abc, z->log_domain, nthreads);
    t2 = now_s();
    if (!rc)
        rc = G16(msms)(z, WTW(w), abc, &m, nthreads);
    if (rc) {
        czk_errorf(e, rc, "proving with \"%s\": NTT/MSM failed: %s", zkey_name, strerror(-rc));
        goto out;
    }
    czk_info("prove: build_abc %.3f s, h %.3f s, msm %.3f s", t1 - t0, t2 - t1, now_s() - t2);
    G16(params_from_zkey)(&p, z);
    if (r && s) {
        G16(finalize)(&p, &m, r, s, proof);
    } else if ((rc = G16(finalize_random)(&p, &m, proof))) {
        czk_errorf(e, rc, "cannot draw blinding scalars from getrandom: %s", strerror(-rc));
        goto out;
    }
    if (pub)
        memcpy(pub, WTW(w) + 1, (size_t)z->n_public * sizeof(CV(fr)));
out:
    abc_free(abc, 3 * bytes); /* wiped: a, b, c and h are functions of the private witness */
    return rc;
}
