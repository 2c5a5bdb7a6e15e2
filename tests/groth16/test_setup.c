/*
 * test_setup.c — the development setup and the generator together:
 *   - a generated circuit, set up with known secrets, gives a key whose every
 *     part matches a GMP computation from the secrets: alpha1, beta1/2,
 *     delta1/2, gamma2 = G2; L_i(tau) (closed form cross-checked with the
 *     product formula), A_j, B1_j, B2_j, IC_j, C_j for sampled wires, H_k =
 *     L^(2n)_(2k+1)(tau)/delta for sampled k, and section 4 = r1cs A/B terms
 *     times R^2 plus the public-input rows;
 *   - proofs with that key (r = s = 0 and random) verify, a wrong witness
 *     does not;
 *   - czk_setup_dev with fresh secrets on circuits with 0, 1 and several
 *     publics gives keys whose proofs verify;
 *   - an accelerator (setup.h's czk_setup_accel; here the CPU's generic
 *     multiplication) gets all five sets of multiplications with the
 *     generators as bases and gives the same key byte for byte; one that
 *     fails is replaced by the CPU with fallback, and without it fails the
 *     setup with its name and leaves no key.
 * usage: test_groth16_setup SCRATCH_DIR
 */
#include "tests/groth16/g16_test.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/formats/formats.h"
#include "common/groth16/gencircuit.h"
#include "common/groth16/groth16.h"
#include "common/groth16/setup.h"
#include "common/groth16/verify.h"
#include "tests/setup_ref.h"

static mpz_t *lag;       /* L_i(tau), size-n domain */
static mpz_t *at, *bt, *ct;
static mpz_t tau, alpha, beta, delta, delta_inv;

struct walk { const czk_zkey *z; uint32_t k; size_t bad; };

static void term_coef(mpz_t c, const czk_r1cs_term *t, uint32_t *wire)
{
    czk_r1cs_term term;
    czk_fr coef;

    memcpy(&term, t, sizeof(term));
    memcpy(&coef, &term.coef, sizeof(coef));
    g_fr_to_mpz(c, &coef);
    *wire = term.wire;
}

/* accumulates A/B/C at tau and compares section 4 entry by entry */
static int walk_row(void *ctx, uint32_t row, const czk_r1cs_term *a, uint32_t na,
                    const czk_r1cs_term *b, uint32_t nb, const czk_r1cs_term *c, uint32_t nc)
{
    struct walk *wk = ctx;
    const czk_r1cs_term *lc[3] = { a, b, c };
    uint32_t nt[3] = { na, nb, nc };
    mpz_t *acc[3] = { at, bt, ct };
    mpz_t cf, want, got, r2;

    mpz_inits(cf, want, got, r2, NULL);
    mpz_set_ui(r2, 1);
    mpz_mul_2exp(r2, r2, 512);
    mpz_mod(r2, r2, g_r);
    for (int m = 0; m < 3; m++) {
        for (uint32_t i = 0; i < nt[m]; i++) {
            uint32_t wire;

            term_coef(cf, &lc[m][i], &wire);
            mpz_addmul(acc[m][wire], cf, lag[row]);
            mpz_mod(acc[m][wire], acc[m][wire], g_r);
            if (m == 2)
                continue;
            /* section 4 entry k: (m, row, wire, coef R^2) */
            const czk_zkey_coef *q = &wk->z->coefs[wk->k++];
            czk_fr v;

            memcpy(&v, &q->value, sizeof(v));
            g_fr_to_mpz(got, &v);
            mpz_mul(want, cf, r2);
            mpz_mod(want, want, g_r);
            if (q->matrix != (uint32_t)m || q->constraint != row || q->signal != wire ||
                mpz_cmp(got, want))
                wk->bad++;
        }
    }
    mpz_clears(cf, want, got, r2, NULL);
    return 0;
}

/* L_i(x) over the points pts[0..n) by the product formula */
static void lagrange_product(mpz_t out, const mpz_t x, mpz_t *pts, size_t n, size_t i)
{
    mpz_t num, den, t;

    mpz_inits(num, den, t, NULL);
    mpz_set_ui(num, 1);
    mpz_set_ui(den, 1);
    for (size_t j = 0; j < n; j++) {
        if (j == i)
            continue;
        mpz_sub(t, x, pts[j]);
        mpz_mul(num, num, t);
        mpz_mod(num, num, g_r);
        mpz_sub(t, pts[i], pts[j]);
        mpz_mul(den, den, t);
        mpz_mod(den, den, g_r);
    }
    mpz_invert(den, den, g_r);
    mpz_mul(out, num, den);
    mpz_mod(out, out, g_r);
    mpz_clears(num, den, t, NULL);
}

static void g1_of(czk_g1_aff *r, const mpz_t k)
{
    czk_fr s;
    czk_g1 p;

    g_mpz_to_fr(&s, k);
    czk_g1_mul_aff(&p, &CZK_G1_GEN, &s);
    czk_g1_to_aff(r, &p);
}

static void g2_of(czk_g2_aff *r, const mpz_t k)
{
    czk_fr s;
    czk_g2 p;

    g_mpz_to_fr(&s, k);
    czk_g2_mul_aff(&p, &CZK_G2_GEN, &s);
    czk_g2_to_aff(r, &p);
}

static void secret_to_mont(czk_fr *m, mpz_t v)
{
    czk_fr s;

    g_rand_fr_std(&s);
    if (s.l[0] == 0 && s.l[1] == 0 && s.l[2] == 0 && s.l[3] == 0)
        s.l[0] = 1;
    g_fr_to_mpz(v, &s);
    czk_fr_to_mont(m, &s);
}

static void check_known_secrets(const char *dir)
{
    char r1cs_path[4096], wtns_path[4096], zkey_path[4096];
    czk_gencircuit_opts o = { .n_constraints = 300, .n_public = 3, .bit_fraction = 0.5,
                              .seed = t_rand64() };
    czk_setup_secrets sec;
    czk_error e = { 0 };
    czk_zkey z;
    czk_r1cs r1cs;
    czk_wtns w;
    czk_groth16_vk vk = { 0 };
    czk_groth16_proof proof;
    czk_fr zero = { { 0 } };
    czk_g1_aff p1;
    czk_g2_aff p2;
    mpz_t wn, w2n, t, k;
    mpz_t *pts;
    size_t n;

    snprintf(r1cs_path, sizeof(r1cs_path), "%s/known.r1cs", dir);
    snprintf(wtns_path, sizeof(wtns_path), "%s/known.wtns", dir);
    snprintf(zkey_path, sizeof(zkey_path), "%s/known.zkey", dir);
    if (czk_gencircuit(&o, r1cs_path, wtns_path, &e))
        DIE("%s", e.msg);
    mpz_inits(tau, alpha, beta, delta, delta_inv, wn, w2n, t, k, NULL);
    secret_to_mont(&sec.tau, tau);
    secret_to_mont(&sec.alpha, alpha);
    secret_to_mont(&sec.beta, beta);
    secret_to_mont(&sec.delta, delta);
    mpz_invert(delta_inv, delta, g_r);
    if (czk_setup_with_secrets(r1cs_path, zkey_path, &sec, 2, NULL, &e))
        DIE("%s", e.msg);
    if (czk_zkey_open(&z, zkey_path, &e) || czk_r1cs_open(&r1cs, r1cs_path, &e) ||
        czk_wtns_open(&w, wtns_path, &e))
        DIE("%s", e.msg);
    n = z.domain_size;
    CHECK(n == 512 && z.n_public == 3 && z.n_vars == 300 + 3 + 3, "header: n %zu nPublic %u nVars %u",
          n, z.n_public, z.n_vars);
    CHECK(z.n_coefs > 0, "no coefficients");

    g1_of(&p1, alpha);
    CHECK(czk_g1_aff_eq(&p1, &z.alpha1), "alpha1");
    g1_of(&p1, beta);
    CHECK(czk_g1_aff_eq(&p1, &z.beta1), "beta1");
    g1_of(&p1, delta);
    CHECK(czk_g1_aff_eq(&p1, &z.delta1), "delta1");
    g2_of(&p2, beta);
    CHECK(czk_g2_aff_eq(&p2, &z.beta2), "beta2");
    g2_of(&p2, delta);
    CHECK(czk_g2_aff_eq(&p2, &z.delta2), "delta2");
    CHECK(czk_g2_aff_eq(&CZK_G2_GEN, &z.gamma2), "gamma2 is not the generator");

    /* L_i(tau), closed form, cross-checked with the product formula */
    g_root(wn, z.log_domain);
    g_root(w2n, z.log_domain + 1);
    lag = malloc(n * sizeof(mpz_t));
    pts = malloc(2 * n * sizeof(mpz_t));
    for (size_t i = 0; i < 2 * n; i++) {
        mpz_init(pts[i]);
        mpz_powm_ui(pts[i], w2n, i, g_r);   /* size-2n domain; even entries = size-n domain */
    }
    {
        mpz_t zn, ninv;

        mpz_inits(zn, ninv, NULL);
        mpz_powm_ui(zn, tau, n, g_r);
        mpz_sub_ui(zn, zn, 1);
        mpz_set_ui(ninv, n);
        mpz_invert(ninv, ninv, g_r);
        mpz_mul(zn, zn, ninv);
        for (size_t i = 0; i < n; i++) {
            mpz_init(lag[i]);
            mpz_sub(t, tau, pts[2 * i]);
            mpz_invert(t, t, g_r);
            mpz_mul(t, t, pts[2 * i]);
            mpz_mul(t, t, zn);
            mpz_mod(lag[i], t, g_r);
        }
        mpz_clears(zn, ninv, NULL);
    }
    {
        mpz_t *dom = malloc(n * sizeof(mpz_t));

        for (size_t i = 0; i < n; i++)
            mpz_init_set(dom[i], pts[2 * i]);
        for (int s = 0; s < 4; s++) {
            size_t i = t_rand64() % n;

            lagrange_product(t, tau, dom, n, i);
            CHECK(mpz_cmp(t, lag[i]) == 0, "oracle: closed-form L_%zu(tau) != product formula", i);
        }
        for (size_t i = 0; i < n; i++)
            mpz_clear(dom[i]);
        free(dom);
    }

    /* A/B/C at tau and section 4 */
    at = malloc(z.n_vars * sizeof(mpz_t));
    bt = malloc(z.n_vars * sizeof(mpz_t));
    ct = malloc(z.n_vars * sizeof(mpz_t));
    for (uint32_t j = 0; j < z.n_vars; j++)
        mpz_inits(at[j], bt[j], ct[j], NULL);
    struct walk wk = { &z, 0, 0 };
    czk_r1cs_foreach(&r1cs, walk_row, &wk);
    CHECK(wk.bad == 0, "%zu section-4 entries differ from the r1cs", wk.bad);
    for (uint32_t i = 0; i <= z.n_public; i++) {
        const czk_zkey_coef *q = &z.coefs[wk.k + i];
        czk_fr v, r2 = CZK_FR_ONE;

        czk_fr_to_mont(&r2, &CZK_FR_ONE);
        memcpy(&v, &q->value, sizeof(v));
        CHECK(q->matrix == 0 && q->constraint == r1cs.n_constraints + i && q->signal == i &&
              czk_fr_eq(&v, &r2), "public-input row %u", i);
        mpz_add(at[i], at[i], lag[r1cs.n_constraints + i]);
        mpz_mod(at[i], at[i], g_r);
    }
    CHECK(wk.k + z.n_public + 1 == z.n_coefs, "nCoefs %u, expected %u", z.n_coefs,
          wk.k + z.n_public + 1);

    /* points of sampled wires: the publics, the first private ones, random ones */
    for (int s = 0; s < 24; s++) {
        uint32_t j = s < 8 ? (uint32_t)s : (uint32_t)(t_rand64() % z.n_vars);

        g1_of(&p1, at[j]);
        CHECK(czk_g1_aff_eq(&p1, &z.a[j]), "A_%u", j);
        g1_of(&p1, bt[j]);
        CHECK(czk_g1_aff_eq(&p1, &z.b1[j]), "B1_%u", j);
        g2_of(&p2, bt[j]);
        CHECK(czk_g2_aff_eq(&p2, &z.b2[j]), "B2_%u", j);
        mpz_mul(k, beta, at[j]);
        mpz_addmul(k, alpha, bt[j]);
        mpz_add(k, k, ct[j]);
        mpz_mod(k, k, g_r);
        if (j <= z.n_public) {
            g1_of(&p1, k);
            CHECK(czk_g1_aff_eq(&p1, &z.ic[j]), "IC_%u", j);
        } else {
            mpz_mul(k, k, delta_inv);
            mpz_mod(k, k, g_r);
            g1_of(&p1, k);
            CHECK(czk_g1_aff_eq(&p1, &z.c[j - z.n_public - 1]), "C_%u", j);
        }
    }
    /* H_k = L^(2n)_(2k+1)(tau) / delta, product formula over the 2n-domain */
    for (int s = 0; s < 3; s++) {
        size_t kk = s == 0 ? 0 : s == 1 ? n - 1 : t_rand64() % n;

        lagrange_product(k, tau, pts, 2 * n, 2 * kk + 1);
        mpz_mul(k, k, delta_inv);
        mpz_mod(k, k, g_r);
        g1_of(&p1, k);
        CHECK(czk_g1_aff_eq(&p1, &z.h[kk]), "H_%zu", kk);
    }

    /* proofs */
    if (czk_groth16_vk_from_zkey(&vk, &z, &e))
        DIE("%s", e.msg);
    CHECK(czk_groth16_prove(&z, zkey_path, &w, wtns_path, &zero, &zero, &proof, NULL, 2, &e) == 0,
          "%s", e.msg);
    CHECK(czk_groth16_verify(&vk, &proof, w.w + 1, z.n_public, &e) == 0,
          "r = s = 0 proof with the known-secret key: %s", e.msg);
    CHECK(czk_groth16_prove(&z, zkey_path, &w, wtns_path, NULL, NULL, &proof, NULL, 2, &e) == 0,
          "%s", e.msg);
    CHECK(czk_groth16_verify(&vk, &proof, w.w + 1, z.n_public, &e) == 0,
          "random proof with the known-secret key: %s", e.msg);
    {
        czk_fr *wbad = malloc(z.n_vars * sizeof(czk_fr));
        czk_wtns wb = w;
        czk_fr delta_w;

        /* the last gate's output plus a random value: breaks its constraint
         * whatever kind it is (a bit plus 1 could still be a bit) */
        memcpy(wbad, w.w, z.n_vars * sizeof(czk_fr));
        g_rand_fr_std(&delta_w);
        czk_fr_add(&wbad[z.n_vars - 1], &wbad[z.n_vars - 1], &delta_w);
        wb.w = wbad;
        CHECK(czk_groth16_prove(&z, zkey_path, &wb, "bad", NULL, NULL, &proof, NULL, 2, &e) == 0,
              "%s", e.msg);
        CHECK(czk_groth16_verify(&vk, &proof, wbad + 1, z.n_public, &e) == -EBADMSG,
              "a proof from a wrong witness verifies");
        free(wbad);
    }

    for (uint32_t j = 0; j < z.n_vars; j++)
        mpz_clears(at[j], bt[j], ct[j], NULL);
    for (size_t i = 0; i < n; i++)
        mpz_clear(lag[i]);
    for (size_t i = 0; i < 2 * n; i++)
        mpz_clear(pts[i]);
    free(at); free(bt); free(ct); free(lag); free(pts);
    mpz_clears(tau, alpha, beta, delta, delta_inv, wn, w2n, t, k, NULL);
    czk_groth16_vk_free(&vk);
    czk_wtns_close(&w);
    czk_r1cs_close(&r1cs);
    czk_zkey_close(&z);
}

/* an accelerator of the CPU's generic (not table) multiplication, counting its calls */
struct accel_log {
    int calls, g2_calls, bad_base, fail;
    size_t n_total;
};

static int cpu_gen_mul(void *arg, czk_curve_id curve, int g2, const void *base, const void *k, size_t n, void *out)
{
    struct accel_log *l = arg;

    l->calls++;
    l->g2_calls += g2 != 0;
    l->n_total += n;
    if (curve != CZK_CURVE_BLS12_381 || base != (g2 ? (const void *)&CZK_G2_GEN : (const void *)&CZK_G1_GEN))
        l->bad_base++;
    if (l->fail)
        return -EIO;
    czk_test_gen_mul_ref(curve == CZK_CURVE_BN254, g2, base, k, n, out);
    return 0;
}

static void check_accel(const char *dir)
{
    char r1cs_path[4096], wtns_path[4096], ref_path[4096], acc_path[4096];
    czk_gencircuit_opts o = { .n_constraints = 150, .n_public = 2, .bit_fraction = 0.4, .seed = t_rand64() };
    struct accel_log log = { 0 };
    czk_setup_accel accel = { .name = "test accelerator", .gen_mul = cpu_gen_mul, .arg = &log };
    czk_setup_secrets sec;
    czk_error e = { 0 };
    czk_zkey z;

    snprintf(r1cs_path, sizeof(r1cs_path), "%s/accel.r1cs", dir);
    snprintf(wtns_path, sizeof(wtns_path), "%s/accel.wtns", dir);
    snprintf(ref_path, sizeof(ref_path), "%s/accel-ref.zkey", dir);
    snprintf(acc_path, sizeof(acc_path), "%s/accel.zkey", dir);
    if (czk_gencircuit(&o, r1cs_path, wtns_path, &e) || czk_setup_secrets_random(&sec) ||
        czk_setup_with_secrets(r1cs_path, ref_path, &sec, 2, NULL, &e) || czk_zkey_open(&z, ref_path, &e))
        DIE("%s", e.msg);
    const size_t want_n = 4 * (size_t)z.n_vars + z.domain_size;
    czk_zkey_close(&z);

    CHECK(czk_setup_with_secrets(r1cs_path, acc_path, &sec, 2, &accel, &e) == 0, "accelerated setup: %s", e.msg);
    CHECK(log.calls == 5 && log.g2_calls == 1 && log.n_total == want_n && !log.bad_base,
          "accelerator: %d calls (%d G2), %zu multiplications (want 5, 1, %zu), %d with another base", log.calls,
          log.g2_calls, log.n_total, want_n, log.bad_base);
    CHECK(czk_test_same_file(ref_path, acc_path), "the accelerated key differs from the CPU's");

    /* a failing accelerator: the CPU takes over with fallback */
    unlink(acc_path);
    log = (struct accel_log){ .fail = 1 };
    accel.fallback = 1;
    CHECK(czk_setup_with_secrets(r1cs_path, acc_path, &sec, 2, &accel, &e) == 0, "fallback: %s", e.msg);
    CHECK(log.calls == 5, "fallback: %d accelerator calls, want 5", log.calls);
    CHECK(czk_test_same_file(ref_path, acc_path), "the key after the fallback differs from the CPU's");

    /* ... and without fallback the setup fails, naming it, and writes nothing */
    unlink(acc_path);
    log = (struct accel_log){ .fail = 1 };
    accel.fallback = 0;
    e = (czk_error){ 0 };
    CHECK(czk_setup_with_secrets(r1cs_path, acc_path, &sec, 2, &accel, &e) == -EIO, "no fallback: rc %d", e.code);
    CHECK(strstr(e.msg, "test accelerator") != NULL, "no fallback: the error does not name the accelerator: %s",
          e.msg);
    CHECK(log.calls == 1, "no fallback: %d accelerator calls after the failure, want 1", log.calls);
    CHECK(access(acc_path, F_OK) != 0, "no fallback: a key was written");
    explicit_bzero(&sec, sizeof(sec));
}

static void check_dev_setup(const char *dir, uint32_t n_constraints, uint32_t n_public, double bits)
{
    char r1cs_path[4096], wtns_path[4096], zkey_path[4096];
    czk_gencircuit_opts o = { .n_constraints = n_constraints, .n_public = n_public,
                              .bit_fraction = bits, .seed = t_rand64() };
    czk_error e = { 0 };
    czk_zkey z;
    czk_wtns w;
    czk_groth16_vk vk = { 0 };
    czk_groth16_proof proof;
    czk_fr *pub = malloc(((size_t)n_public + 1) * sizeof(czk_fr));

    snprintf(r1cs_path, sizeof(r1cs_path), "%s/dev%u.r1cs", dir, n_public);
    snprintf(wtns_path, sizeof(wtns_path), "%s/dev%u.wtns", dir, n_public);
    snprintf(zkey_path, sizeof(zkey_path), "%s/dev%u.zkey", dir, n_public);
    if (czk_gencircuit(&o, r1cs_path, wtns_path, &e) ||
        czk_setup_dev(r1cs_path, zkey_path, 2, NULL, &e) || czk_zkey_open(&z, zkey_path, &e) ||
        czk_wtns_open(&w, wtns_path, &e) || czk_groth16_vk_from_zkey(&vk, &z, &e))
        DIE("%s", e.msg);
    CHECK(czk_groth16_prove(&z, zkey_path, &w, wtns_path, NULL, NULL, &proof, pub, 2, &e) == 0,
          "%s", e.msg);
    CHECK(czk_groth16_verify(&vk, &proof, pub, n_public, &e) == 0,
          "dev setup, %u constraints, %u publics, bits %g: %s", n_constraints, n_public, bits, e.msg);
    CHECK(n_public == 0 || czk_fr_eq(&pub[0], &w.w[1]), "public signal 0 is not wire 1");
    czk_groth16_vk_free(&vk);
    czk_wtns_close(&w);
    czk_zkey_close(&z);
    free(pub);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        DIE("usage: %s SCRATCH_DIR", argv[0]);
    if (mkdir(argv[1], 0755) && errno != EEXIST)
        DIE("cannot create %s: %s", argv[1], strerror(errno));
    g_init_r();
    t_seed("groth16_setup");
    check_known_secrets(argv[1]);
    check_accel(argv[1]);
    check_dev_setup(argv[1], 61, 0, 0.0);    /* 61 + 0 + 1 = 62 rows: domain 64 */
    check_dev_setup(argv[1], 126, 1, 1.0);   /* 128 rows exactly: domain 128 */
    check_dev_setup(argv[1], 200, 7, 0.3);
    if (t_failures)
        fprintf(stderr, "%d failures\n", t_failures);
    return t_failures ? 1 : 0;
}
