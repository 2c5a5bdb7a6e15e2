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
 *     normalised to affine in blocks with one inversion per block.
 * Every buffer that holds a function of the secrets is wiped before free.
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

static void fr_pow_u64(czk_fr *r, const czk_fr *a, uint64_t e)
{
    czk_fr_pow(r, a, &e, 1);
}

/* tau^(2n) != 1 means tau - x != 0 for every point x of both domains */
static bool secrets_ok(const czk_setup_secrets *s, uint64_t two_n)
{
    czk_fr t;

    if (czk_fr_is_zero(&s->tau) || czk_fr_is_zero(&s->alpha) || czk_fr_is_zero(&s->beta) ||
        czk_fr_is_zero(&s->delta))
        return false;
    fr_pow_u64(&t, &s->tau, two_n);
    return !czk_fr_eq(&t, &CZK_FR_ONE);
}

int czk_setup_secrets_random(czk_setup_secrets *s)
{
    int rc;

    do {
        if ((rc = czk_fr_random(&s->tau)) || (rc = czk_fr_random(&s->alpha)) ||
            (rc = czk_fr_random(&s->beta)) || (rc = czk_fr_random(&s->delta)))
            return rc;
        /* 2^33 covers every domain up to 2^32: tau is outside all of them */
    } while (!secrets_ok(s, (uint64_t)1 << 33));
    return 0;
}

/* ---- Lagrange values: out[k] = factor * x_k / (tau - x_k), x_k = first * step^k ---- */

struct lag_ctx {
    czk_fr *out, *den, *scratch;
    czk_fr tau, first, step, factor;
};

static void lag_chunk(void *vctx, size_t begin, size_t end, unsigned worker)
{
    struct lag_ctx *x = vctx;
    czk_fr xk, t;
    size_t k;

    fr_pow_u64(&xk, &x->step, begin);
    czk_fr_mul(&xk, &xk, &x->first);
    for (k = begin; k < end; k++) {
        czk_fr_sub(&x->den[k], &x->tau, &xk);
        czk_fr_mul(&xk, &xk, &x->step);
    }
    czk_fr_batch_inv_ct(x->out + begin, x->den + begin, end - begin, x->scratch + begin);
    fr_pow_u64(&xk, &x->step, begin);
    czk_fr_mul(&xk, &xk, &x->first);
    czk_fr_mul(&t, &xk, &x->factor);    /* factor * x_k, advanced by step */
    for (k = begin; k < end; k++) {
        czk_fr_mul(&x->out[k], &x->out[k], &t);
        czk_fr_mul(&t, &t, &x->step);
    }
    explicit_bzero(&xk, sizeof(xk));
    explicit_bzero(&t, sizeof(t));
}

static int lagrange(czk_fr *out, size_t count, const czk_fr *tau, const czk_fr *first,
                    const czk_fr *step, const czk_fr *factor, int nthreads)
{
    struct lag_ctx x = { .out = out, .tau = *tau, .first = *first, .step = *step, .factor = *factor };
    int rc;

    x.den = malloc(count * sizeof(czk_fr));
    x.scratch = malloc(count * sizeof(czk_fr));
    if (!x.den || !x.scratch) {
        rc = -ENOMEM;
    } else {
        rc = czk_par_for(count, nthreads, lag_chunk, &x);
    }
    wipe_free(x.den, count * sizeof(czk_fr));
    wipe_free(x.scratch, count * sizeof(czk_fr));
    explicit_bzero(&x, sizeof(x));
    return rc;
}

/* ---- one pass over the r1cs: A/B/C at tau and section 4 ---- */

struct abc_pass {
    const czk_fr *lag;         /* L_i(tau), n entries */
    czk_fr *at, *bt, *ct;      /* nWires each */
    czk_zkey_coef *coefs;
    size_t n_coefs, cap_coefs;
    czk_error *e;
};

static int push_coef(struct abc_pass *p, uint32_t matrix, uint32_t row, uint32_t wire,
                     const czk_fr *coef_mont)
{
    czk_zkey_coef *k;

    if (p->n_coefs == p->cap_coefs) {
        size_t cap = p->cap_coefs ? p->cap_coefs * 2 : 4096;
        czk_zkey_coef *q = realloc(p->coefs, cap * sizeof(*q));

        if (!q)
            return czk_errorf(p->e, -ENOMEM, "setup: cannot allocate %zu coefficients", cap);
        p->coefs = q;
        p->cap_coefs = cap;
    }
    k = &p->coefs[p->n_coefs++];
    k->matrix = matrix;
    k->constraint = row;
    k->signal = wire;
    czk_fr v;
    czk_fr_to_mont(&v, coef_mont);   /* coef*R -> coef*R^2 */
    memcpy(&k->value, &v, sizeof(v));
    return 0;
}

/* acc[wire] += coef * L_row for each term; section 4 entries when matrix >= 0.
 * Wire ids and coefficients were validated by czk_r1cs_open. */
static int add_lc(struct abc_pass *p, czk_fr *acc, int matrix, uint32_t row,
                  const czk_r1cs_term *terms, uint32_t nt)
{
    for (uint32_t i = 0; i < nt; i++) {
        czk_r1cs_term t;
        czk_fr coef, cm, v;
        int rc;

        memcpy(&t, &terms[i], sizeof(t));
        memcpy(&coef, &t.coef, sizeof(coef));
        czk_fr_to_mont(&cm, &coef);
        czk_fr_mul(&v, &cm, &p->lag[row]);
        czk_fr_add(&acc[t.wire], &acc[t.wire], &v);
        if (matrix >= 0 && (rc = push_coef(p, (uint32_t)matrix, row, t.wire, &cm)))
            return rc;
    }
    return 0;
}

static int abc_constraint(void *ctx, uint32_t index, const czk_r1cs_term *a, uint32_t na,
                          const czk_r1cs_term *b, uint32_t nb, const czk_r1cs_term *c, uint32_t nc)
{
    struct abc_pass *p = ctx;
    int rc;

    if ((rc = add_lc(p, p->at, 0, index, a, na)) || (rc = add_lc(p, p->bt, 1, index, b, nb)) ||
        (rc = add_lc(p, p->ct, -1, index, c, nc)))
        return rc;
    return 0;
}

/* ---- scalar combination for IC and C: k_j = (beta A_j + alpha B_j + C_j) [/ delta] ---- */

struct comb_ctx {
    czk_fr *ct;
    const czk_fr *at, *bt;
    czk_fr alpha, beta, delta_inv;
    size_t n_ic;   /* j < n_ic: no division (gamma = 1) */
};

static void comb_chunk(void *vctx, size_t begin, size_t end, unsigned worker)
{
    struct comb_ctx *x = vctx;

    for (size_t j = begin; j < end; j++) {
        czk_fr t;

        czk_fr_mul(&t, &x->beta, &x->at[j]);
        czk_fr_add(&x->ct[j], &x->ct[j], &t);
        czk_fr_mul(&t, &x->alpha, &x->bt[j]);
        czk_fr_add(&x->ct[j], &x->ct[j], &t);
        if (j >= x->n_ic)
            czk_fr_mul(&x->ct[j], &x->ct[j], &x->delta_inv);
        explicit_bzero(&t, sizeof(t));
    }
}

/* ---- fixed-base multiplication of many scalars, straight to affine ---- */

struct fb_ctx {
    const czk_g1_fb *t1;
    const czk_g2_fb *t2;
    const czk_fr *k;        /* Montgomery scalars */
    czk_g1_aff *out1;
    czk_g2_aff *out2;
    int err;
};

/* multiples of a table's base for a range of scalars, normalised per block
 * with one inversion (a zero scalar gives infinity, which batch_to_aff
 * writes as all-zero bytes) */
#define FB_CHUNK(NAME, J, F, TABLE, OUT, MUL, TOAFF)                              \
    static void NAME(void *vctx, size_t begin, size_t end, unsigned worker)     \
    {                                                                           \
        struct fb_ctx *x = vctx;                                                \
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
                czk_fr s;                                                       \
                                                                                \
                czk_fr_from_mont(&s, &x->k[j]);                                 \
                MUL(&buf[j - b], x->TABLE, &s);                                 \
                explicit_bzero(&s, sizeof(s));                                  \
            }                                                                   \
            TOAFF(x->OUT + b, buf, e - b, scratch);                             \
        }                                                                       \
    out:                                                                        \
        free(buf);                                                              \
        free(scratch);                                                          \
    }

FB_CHUNK(fb_g1_chunk, czk_g1, czk_fp, t1, out1, czk_g1_fb_mul, czk_g1_batch_to_aff)
FB_CHUNK(fb_g2_chunk, czk_g2, czk_fp2, t2, out2, czk_g2_fb_mul, czk_g2_batch_to_aff)

static int fb_g1_many(czk_g1_aff *out, const czk_g1_fb *t, const czk_fr *k, size_t n, int nthreads)
{
    struct fb_ctx x = { .t1 = t, .k = k, .out1 = out };
    int rc = czk_par_for(n, nthreads, fb_g1_chunk, &x);

    return rc ? rc : x.err;
}

static int fb_g2_many(czk_g2_aff *out, const czk_g2_fb *t, const czk_fr *k, size_t n, int nthreads)
{
    struct fb_ctx x = { .t2 = t, .k = k, .out2 = out };
    int rc = czk_par_for(n, nthreads, fb_g2_chunk, &x);

    return rc ? rc : x.err;
}

static void g1_mul_gen(czk_g1_aff *r, const czk_fr *k_mont)
{
    czk_fr s;
    czk_g1 p;

    czk_fr_from_mont(&s, k_mont);
    czk_g1_mul_aff_ct(&p, &CZK_G1_GEN, &s);
    czk_g1_to_aff_ct(r, &p);
    explicit_bzero(&s, sizeof(s));
    explicit_bzero(&p, sizeof(p));
}

static void g2_mul_gen(czk_g2_aff *r, const czk_fr *k_mont)
{
    czk_fr s;
    czk_g2 p;

    czk_fr_from_mont(&s, k_mont);
    czk_g2_mul_aff_ct(&p, &CZK_G2_GEN, &s);
    czk_g2_to_aff_ct(r, &p);
    explicit_bzero(&s, sizeof(s));
    explicit_bzero(&p, sizeof(p));
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

int czk_setup_with_secrets(const char *r1cs_path, const char *zkey_path,
                           const czk_setup_secrets *sec, int nthreads, czk_error *e)
{
    czk_r1cs r1cs;
    struct abc_pass pass = { .e = e };
    czk_zkey_spec spec;
    czk_fr *lag = NULL, *hk = NULL, *at = NULL, *bt = NULL, *ct = NULL;
    czk_g1_aff *pa = NULL, *pb1 = NULL, *pc = NULL, *ph = NULL;
    czk_g2_aff *pb2 = NULL;
    czk_g1_fb *fb1 = NULL;
    czk_g2_fb *fb2 = NULL;
    czk_fr w_n, w_2n, one = CZK_FR_ONE, t, factor, n_fr, delta_inv;
    struct comb_ctx comb;
    uint64_t rows;
    uint32_t n_public, n_vars, log_n;
    size_t n = 0;
    double t0 = now_s();
    int rc;

    czk_warn("DEVELOPMENT SETUP: \"%s\" is for tests and benchmarks only, NOT FOR PRODUCTION "
             "(whoever runs this could keep the toxic waste; use a ceremony such as snarkjs "
             "powersoftau + zkey contribute for real keys)", zkey_path);

    if ((rc = czk_r1cs_open(&r1cs, r1cs_path, e)))
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
    if (log_n > CZK_NTT_MAX_LOG) {
        rc = czk_errorf(e, -EINVAL, "\"%s\": %u constraints + %u publics need a domain beyond 2^%d",
                        r1cs_path, r1cs.n_constraints, n_public, CZK_NTT_MAX_LOG);
        goto out_r1cs;
    }
    n = (size_t)1 << log_n;
    if (!secrets_ok(sec, 2 * (uint64_t)n)) {
        rc = czk_errorf(e, -EINVAL, "setup: secrets are zero or tau lies in the evaluation domain");
        goto out_r1cs;
    }
    czk_info("setup \"%s\": %u constraints, %u wires, %u public, domain 2^%u",
             r1cs_path, r1cs.n_constraints, n_vars, n_public, log_n);

    lag = alloc_zero(n, sizeof(czk_fr));
    hk = alloc_zero(n, sizeof(czk_fr));
    at = alloc_zero(n_vars, sizeof(czk_fr));
    bt = alloc_zero(n_vars, sizeof(czk_fr));
    ct = alloc_zero(n_vars, sizeof(czk_fr));
    pa = alloc_zero(n_vars, sizeof(czk_g1_aff));
    pb1 = alloc_zero(n_vars, sizeof(czk_g1_aff));
    pb2 = alloc_zero(n_vars, sizeof(czk_g2_aff));
    pc = alloc_zero(n_vars, sizeof(czk_g1_aff));
    ph = alloc_zero(n, sizeof(czk_g1_aff));
    if (!lag || !hk || !at || !bt || !ct || !pa || !pb1 || !pb2 || !pc || !ph) {
        rc = czk_errorf(e, -ENOMEM, "setup \"%s\": out of memory for a domain of 2^%u",
                        r1cs_path, log_n);
        goto out;
    }

    /* L_i(tau) = (tau^n - 1)/n * w^i / (tau - w^i) */
    czk_fr_root_of_unity(&w_n, log_n);
    czk_fr_root_of_unity(&w_2n, log_n + 1);
    czk_fr_from_u64(&n_fr, n);
    fr_pow_u64(&t, &sec->tau, n);
    czk_fr_sub(&t, &t, &one);
    czk_fr_inv(&factor, &n_fr);
    czk_fr_mul(&factor, &factor, &t);
    if ((rc = lagrange(lag, n, &sec->tau, &one, &w_n, &factor, nthreads)))
        goto nomem;
    /* H_k = L^(2n)_(2k+1)(tau)/delta = (tau^2n - 1)/(2n delta) * x / (tau - x), x = w_2n w_n^k */
    czk_fr_inv_ct(&delta_inv, &sec->delta);
    fr_pow_u64(&t, &sec->tau, 2 * (uint64_t)n);
    czk_fr_sub(&t, &t, &one);
    czk_fr_dbl(&n_fr, &n_fr);
    czk_fr_inv(&factor, &n_fr);
    czk_fr_mul(&factor, &factor, &t);
    czk_fr_mul(&factor, &factor, &delta_inv);
    if ((rc = lagrange(hk, n, &sec->tau, &w_2n, &w_n, &factor, nthreads)))
        goto nomem;
    czk_info("setup: lagrange values %.1f s", now_s() - t0);

    /* A, B, C at tau plus section 4, then the public-input rows */
    pass.lag = lag;
    pass.at = at;
    pass.bt = bt;
    pass.ct = ct;
    if ((rc = czk_r1cs_foreach(&r1cs, abc_constraint, &pass)))
        goto out;   /* push_coef described it */
    for (uint32_t i = 0; i <= n_public; i++) {
        uint32_t row = r1cs.n_constraints + i;

        czk_fr_add(&at[i], &at[i], &lag[row]);
        if ((rc = push_coef(&pass, 0, row, i, &one)))
            goto out;
    }
    if (pass.n_coefs > UINT32_MAX) {
        rc = czk_errorf(e, -EOVERFLOW, "\"%s\": %zu coefficients exceed the zkey's u32 count",
                        r1cs_path, pass.n_coefs);
        goto out;
    }
    czk_info("setup: %zu coefficients %.1f s", pass.n_coefs, now_s() - t0);

    /* fixed-base tables for the generators */
    if ((rc = czk_g1_fb_new(&fb1, &CZK_G1_GEN, fb_window(4 * (size_t)n_vars + n))) ||
        (rc = czk_g2_fb_new(&fb2, &CZK_G2_GEN, fb_window(n_vars))))
        goto nomem;

    if ((rc = fb_g1_many(pa, fb1, at, n_vars, nthreads)) ||
        (rc = fb_g1_many(pb1, fb1, bt, n_vars, nthreads)) ||
        (rc = fb_g2_many(pb2, fb2, bt, n_vars, nthreads)))
        goto nomem;
    czk_info("setup: A, B1, B2 points %.1f s", now_s() - t0);

    comb = (struct comb_ctx){ .ct = ct, .at = at, .bt = bt, .alpha = sec->alpha, .beta = sec->beta,
                              .delta_inv = delta_inv, .n_ic = (size_t)n_public + 1 };
    rc = czk_par_for(n_vars, nthreads, comb_chunk, &comb);
    explicit_bzero(&comb, sizeof(comb));
    /* ct[0..nPublic] become IC = pc[0..nPublic], the rest C = pc[nPublic+1..] */
    if (rc || (rc = fb_g1_many(pc, fb1, ct, n_vars, nthreads)) ||
        (rc = fb_g1_many(ph, fb1, hk, n, nthreads)))
        goto nomem;
    czk_info("setup: IC, C, H points %.1f s", now_s() - t0);

    memset(&spec, 0, sizeof(spec));
    spec.n_vars = n_vars;
    spec.n_public = n_public;
    spec.domain_size = (uint32_t)n;
    g1_mul_gen(&spec.alpha1, &sec->alpha);
    g1_mul_gen(&spec.beta1, &sec->beta);
    g1_mul_gen(&spec.delta1, &sec->delta);
    g2_mul_gen(&spec.beta2, &sec->beta);
    g2_mul_gen(&spec.delta2, &sec->delta);
    spec.gamma2 = CZK_G2_GEN;
    spec.ic = pc;
    spec.c = pc + n_public + 1;
    spec.a = pa;
    spec.b1 = pb1;
    spec.b2 = pb2;
    spec.h = ph;
    spec.n_coefs = (uint32_t)pass.n_coefs;
    spec.coefs = pass.coefs;
    if ((rc = czk_zkey_write(zkey_path, &spec, e)))
        goto out;
    czk_info("setup: wrote \"%s\" in %.1f s", zkey_path, now_s() - t0);
    goto out;

nomem:   /* the helpers return bare codes (allocation or thread failures) */
    czk_errorf(e, rc, "setup \"%s\": %s", r1cs_path, strerror(-rc));
out:
    explicit_bzero(&t, sizeof(t));
    explicit_bzero(&factor, sizeof(factor));
    explicit_bzero(&delta_inv, sizeof(delta_inv));
    czk_g1_fb_free(fb1);
    czk_g2_fb_free(fb2);
    wipe_free(lag, n * sizeof(czk_fr));
    wipe_free(hk, n * sizeof(czk_fr));
    wipe_free(at, n_vars * sizeof(czk_fr));
    wipe_free(bt, n_vars * sizeof(czk_fr));
    wipe_free(ct, n_vars * sizeof(czk_fr));
    free(pa);
    free(pb1);
    free(pb2);
    free(pc);
    free(ph);
    free(pass.coefs);
out_r1cs:
    czk_r1cs_close(&r1cs);
    return rc;
}

int czk_setup_dev(const char *r1cs_path, const char *zkey_path, int nthreads, czk_error *e)
{
    czk_setup_secrets s;
    int rc = czk_setup_secrets_random(&s);

    if (rc)
        return czk_errorf(e, rc, "setup: cannot draw secrets from getrandom: %s", strerror(-rc));
    rc = czk_setup_with_secrets(r1cs_path, zkey_path, &s, nthreads, e);
    explicit_bzero(&s, sizeof(s));
    return rc;
}
