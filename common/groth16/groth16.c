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
 * run them in different processes.  The stages allocate only small scratch
 * (build_abc's chunk table, the MSM plans); czk_groth16_prove allocates a, b, c.
 */
#include "common/base/clock.h"
#include "common/groth16/groth16.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/base/log.h"
#include "common/crypto/msm.h"
#include "common/crypto/ntt.h"
#include "common/crypto/par.h"

static double now_s(void) { return (double)czk_mono_ns() * 1e-9; }

int czk_groth16_check_witness(const czk_zkey *z, const char *zkey_name,
                              const czk_wtns *w, const char *wtns_name, czk_error *e)
{
    /* the reader checked each value (< r, w[0] = 1); only the pairing is left */
    if (w->n_witness != z->n_vars)
        return czk_errorf(e, -EINVAL,
                          "witness \"%s\" has %u values but proving key \"%s\" expects nVars = %u "
                          "(witness computed for another circuit?)",
                          wtns_name, w->n_witness, zkey_name, z->n_vars);
    return 0;
}

/* ---- stage 1 ---- */

struct abc_ctx {
    const czk_zkey_coef *coefs;
    const size_t *split;  /* chunk k covers coefs [split[k], split[k+1]) */
    const czk_fr *w;
    czk_fr *a, *b, *c;
};

static void abc_zero(void *vctx, size_t begin, size_t end, unsigned worker)
{
    struct abc_ctx *x = vctx;

    memset(x->a + begin, 0, (end - begin) * sizeof(czk_fr));
    memset(x->b + begin, 0, (end - begin) * sizeof(czk_fr));
}

static void abc_accumulate(void *vctx, size_t kbegin, size_t kend, unsigned worker)
{
    struct abc_ctx *x = vctx;
    size_t i, end = x->split[kend];

    for (i = x->split[kbegin]; i < end; i++) {
        const czk_zkey_coef *k = &x->coefs[i];
        czk_fr v, t;
        czk_fr *dst = k->matrix == 0 ? x->a : x->b;
        uint32_t row = k->constraint, sig = k->signal;

        memcpy(&v, &k->value, sizeof(v));           /* entries are unaligned */
        czk_fr_mul(&t, &v, &x->w[sig]);             /* R^2 coef * w / R = Montgomery(coef*w) */
        czk_fr_add(&dst[row], &dst[row], &t);
    }
}

static void abc_product(void *vctx, size_t begin, size_t end, unsigned worker)
{
    struct abc_ctx *x = vctx;

    for (size_t i = begin; i < end; i++)
        czk_fr_mul(&x->c[i], &x->a[i], &x->b[i]);
}

int czk_groth16_build_abc(const czk_zkey *z, const czk_fr *w,
                          czk_fr *a, czk_fr *b, czk_fr *c, int nthreads)
{
    struct abc_ctx x = { .coefs = z->coefs, .w = w, .a = a, .b = b, .c = c };
    size_t n = z->n_coefs, nchunks, k;
    size_t *split;
    bool sorted = true;
    int rc;

    /* indices were range-checked by czk_zkey_open; only the order is ours to check */
    for (size_t i = 1; i < n && sorted; i++)
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

    rc = czk_par_for(z->domain_size, nthreads, abc_zero, &x);
    if (!rc)
        rc = czk_par_for(nchunks, nthreads, abc_accumulate, &x);
    if (!rc)
        rc = czk_par_for(z->domain_size, nthreads, abc_product, &x);
    free(split);
    return rc;
}

/* ---- stage 2 ---- */

struct h_ctx { const czk_fr *a, *b, *c; czk_fr *h; };

static void h_join(void *vctx, size_t begin, size_t end, unsigned worker)
{
    struct h_ctx *x = vctx;

    for (size_t i = begin; i < end; i++) {
        czk_fr t;

        czk_fr_mul(&t, &x->a[i], &x->b[i]);
        czk_fr_sub(&t, &t, &x->c[i]);
        czk_fr_from_mont(&x->h[i], &t);
    }
}

int czk_groth16_compute_h(czk_fr *a, czk_fr *b, czk_fr *c, czk_fr *h,
                          unsigned log_n, int nthreads)
{
    struct h_ctx x = { a, b, c, h };
    int rc;

    if ((rc = czk_ntt_to_odd_coset(a, log_n, nthreads)) ||
        (rc = czk_ntt_to_odd_coset(b, log_n, nthreads)) ||
        (rc = czk_ntt_to_odd_coset(c, log_n, nthreads)))
        return rc;
    return czk_par_for((size_t)1 << log_n, nthreads, h_join, &x);
}

int czk_groth16_msms(const czk_zkey *z, const czk_fr *w, const czk_fr *h,
                     czk_groth16_msm_out *out, int nthreads)
{
    czk_g1 pa, pb1, pc, ph;
    czk_g2 pb2;
    size_t npriv = (size_t)z->n_vars - z->n_public - 1;
    int rc;

    if ((rc = czk_msm_g1(&pa, z->a, w, z->n_vars, nthreads)) ||
        (rc = czk_msm_g1(&pb1, z->b1, w, z->n_vars, nthreads)) ||
        (rc = czk_msm_g2(&pb2, z->b2, w, z->n_vars, nthreads)) ||
        (rc = czk_msm_g1(&pc, z->c, w + z->n_public + 1, npriv, nthreads)) ||
        (rc = czk_msm_g1(&ph, z->h, h, z->domain_size, nthreads)))
        return rc;
    czk_g1_add(&pc, &pc, &ph);
    czk_g1_to_aff(&out->a, &pa);
    czk_g1_to_aff(&out->b1, &pb1);
    czk_g1_to_aff(&out->c, &pc);
    czk_g2_to_aff(&out->b2, &pb2);
    return 0;
}

int czk_groth16_compute(const czk_zkey *z, czk_fr *a, czk_fr *b, czk_fr *c,
                        const czk_fr *w, czk_groth16_msm_out *out, int nthreads)
{
    int rc = czk_groth16_compute_h(a, b, c, a, z->log_domain, nthreads);

    return rc ? rc : czk_groth16_msms(z, w, a, out, nthreads);
}

/* ---- stage 3 ---- */

void czk_groth16_params_from_zkey(czk_groth16_params *p, const czk_zkey *z)
{
    p->alpha1 = z->alpha1;
    p->beta1 = z->beta1;
    p->delta1 = z->delta1;
    p->beta2 = z->beta2;
    p->delta2 = z->delta2;
}

/* Every step touches r, s or the witness-derived MSM results, so all of it is
 * constant time: Montgomery products for r, s and r*s, the _ct scalar
 * multiplications and complete additions of curve.h, and the Fermat inversions
 * of _to_aff_ct (Z depends on r and s).  The sums are taken in another order
 * than the formulas read; the affine results are the same points. */
void czk_groth16_finalize(const czk_groth16_params *p, const czk_groth16_msm_out *m,
                          const czk_fr *r, const czk_fr *s, czk_groth16_proof *proof)
{
    czk_fr r_std, s_std, rs, rs_std;
    czk_g1 pi_a, b1, pi_c, t;
    czk_g2 pi_b;

    czk_fr_from_mont(&r_std, r);
    czk_fr_from_mont(&s_std, s);
    czk_fr_mul(&rs, r, s);
    czk_fr_from_mont(&rs_std, &rs);

    /* pi_a = r*delta1 + alpha1 + A·w */
    czk_g1_mul_aff_ct(&pi_a, &p->delta1, &r_std);
    czk_g1_add_aff_ct(&pi_a, &pi_a, &p->alpha1);
    czk_g1_add_aff_ct(&pi_a, &pi_a, &m->a);

    /* pi_b = s*delta2 + beta2 + B2·w */
    czk_g2_mul_aff_ct(&pi_b, &p->delta2, &s_std);
    czk_g2_add_aff_ct(&pi_b, &pi_b, &p->beta2);
    czk_g2_add_aff_ct(&pi_b, &pi_b, &m->b2);

    /* b1 = s*delta1 + beta1 + B1·w */
    czk_g1_mul_aff_ct(&b1, &p->delta1, &s_std);
    czk_g1_add_aff_ct(&b1, &b1, &p->beta1);
    czk_g1_add_aff_ct(&b1, &b1, &m->b1);

    /* pi_c = -r*s*delta1 + (C·w + H·h) + s*pi_a + r*b1 */
    czk_g1_mul_aff_ct(&pi_c, &p->delta1, &rs_std);
    czk_g1_neg(&pi_c, &pi_c);
    czk_g1_add_aff_ct(&pi_c, &pi_c, &m->c);
    czk_g1_mul_ct(&t, &pi_a, &s_std);
    czk_g1_add_ct(&pi_c, &pi_c, &t);
    czk_g1_mul_ct(&t, &b1, &r_std);
    czk_g1_add_ct(&pi_c, &pi_c, &t);

    czk_g1_to_aff_ct(&proof->a, &pi_a);
    czk_g2_to_aff_ct(&proof->b, &pi_b);
    czk_g1_to_aff_ct(&proof->c, &pi_c);

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

int czk_groth16_finalize_random(const czk_groth16_params *p, const czk_groth16_msm_out *m,
                                czk_groth16_proof *proof)
{
    czk_fr r, s;
    int rc;

    /* r first, then s, as snarkjs draws them */
    if ((rc = czk_fr_random(&r)) || (rc = czk_fr_random(&s)))
        return rc;
    czk_groth16_finalize(p, m, &r, &s, proof);
    explicit_bzero(&r, sizeof(r));
    explicit_bzero(&s, sizeof(s));
    return 0;
}

/* ---- all in one ---- */

int czk_groth16_prove(const czk_zkey *z, const char *zkey_name,
                      const czk_wtns *w, const char *wtns_name,
                      const czk_fr *r, const czk_fr *s,
                      czk_groth16_proof *proof, czk_fr *pub, int nthreads, czk_error *e)
{
    size_t n = z->domain_size, bytes = n * sizeof(czk_fr);
    czk_fr *abc;
    czk_groth16_msm_out m;
    czk_groth16_params p;
    double t0 = now_s(), t1, t2;
    int rc;

    if ((rc = czk_groth16_check_witness(z, zkey_name, w, wtns_name, e)))
        return rc;
    abc = aligned_alloc(64, 3 * bytes);
    if (!abc)
        return czk_errorf(e, -ENOMEM, "proving with \"%s\": cannot allocate %zu MiB for a, b, c",
                          zkey_name, 3 * bytes >> 20);
    rc = czk_groth16_build_abc(z, w->w, abc, abc + n, abc + 2 * n, nthreads);
    if (rc) {
        czk_errorf(e, rc, "proving with \"%s\": building a, b, c failed: %s", zkey_name,
                   strerror(-rc));
        goto out;
    }
    t1 = now_s();
    rc = czk_groth16_compute_h(abc, abc + n, abc + 2 * n, abc, z->log_domain, nthreads);
    t2 = now_s();
    if (!rc)
        rc = czk_groth16_msms(z, w->w, abc, &m, nthreads);
    if (rc) {
        czk_errorf(e, rc, "proving with \"%s\": NTT/MSM failed: %s", zkey_name, strerror(-rc));
        goto out;
    }
    czk_info("prove: build_abc %.3f s, h %.3f s, msm %.3f s", t1 - t0, t2 - t1, now_s() - t2);
    czk_groth16_params_from_zkey(&p, z);
    if (r && s) {
        czk_groth16_finalize(&p, &m, r, s, proof);
    } else if ((rc = czk_groth16_finalize_random(&p, &m, proof))) {
        czk_errorf(e, rc, "cannot draw blinding scalars from getrandom: %s", strerror(-rc));
        goto out;
    }
    if (pub)
        memcpy(pub, w->w + 1, (size_t)z->n_public * sizeof(czk_fr));
out:
    /* a, b, c and h are functions of the private witness */
    explicit_bzero(abc, 3 * bytes);
    free(abc);
    return rc;
}
