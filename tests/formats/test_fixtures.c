/*
 * test_fixtures.c — read real snarkjs/circom files (tests/fixtures/<name>)
 * with the czk readers and check them against independent oracles:
 *
 *   - r1cs counts equal what `snarkjs r1cs info` printed (passed as args);
 *   - the witness satisfies every r1cs constraint (GMP arithmetic mod r) and
 *     w[1..nPublic] equals public.json;
 *   - zkey nVars/nPublic/domainSize agree with the r1cs; section 4 equals the
 *     r1cs A and B terms in order with value = coef * 2^512 mod r (GMP), then
 *     the nPublic+1 public-input rows (0, nConstraints+i, i, 2^512 mod r);
 *   - the zkey header points and IC equal verification_key.json (snarkjs's
 *     own export; Montgomery -> standard conversion done with GMP);
 *   - A / B1 / B2 points are infinity exactly for the wires that occur in no
 *     A (resp. B) term and are not public.
 *
 * usage: test_fixtures DIR nWires nConstraints nPrvIn nPubIn nLabels nPubOut
 *        test_fixtures --wrong-curve DIR   (bn128 files: every plain reader refuses)
 *        test_fixtures --bn254 DIR         (bn128 files: the _curves readers take them;
 *            the key's points satisfy BN254's curve equations in GMP, the counts agree,
 *            the BLS12-381 fields stay empty, and czk_zkey_write gives the same bytes back)
 */
#include "tests/formats/fmt_test.h"

#include <gmp.h>
#include <jansson.h>

static mpz_t R_MOD, Q_MOD, R2_512, RINV_Q;

static void mpz_from_le(mpz_t z, const void *p, size_t n)
{
    mpz_import(z, n, -1, 1, 0, 0, p);
}

static void init_consts(void)
{
    mpz_inits(R_MOD, Q_MOD, R2_512, RINV_Q, NULL);
    mpz_from_le(R_MOD, &CZK_FR_MOD, 32);
    mpz_from_le(Q_MOD, &CZK_FP_MOD, 48);
    /* cross-check the field constants against the published values */
    mpz_t t;
    mpz_init_set_str(t, "73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001", 16);
    CHECK(mpz_cmp(t, R_MOD) == 0, "CZK_FR_MOD is not BLS12-381's r");
    mpz_set_str(t, "1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffff"
                   "b9feffffffffaaab", 16);
    CHECK(mpz_cmp(t, Q_MOD) == 0, "CZK_FP_MOD is not BLS12-381's q");
    mpz_set_ui(R2_512, 1);
    mpz_mul_2exp(R2_512, R2_512, 512);
    mpz_mod(R2_512, R2_512, R_MOD);
    mpz_set_ui(t, 1);
    mpz_mul_2exp(t, t, 384);
    mpz_invert(RINV_Q, t, Q_MOD);
    mpz_clear(t);
}

/* ---- r1cs walk: witness satisfaction and zkey coefficient correspondence ---- */

struct walk {
    const czk_wtns *w;
    const czk_zkey *z;
    uint32_t k;            /* next zkey coefficient */
    uint8_t *in_a, *in_b;  /* wire occurs in some A / B term */
    uint32_t bad_sat, bad_coef;
};

static void lc_eval(mpz_t acc, const czk_wtns *w, const czk_r1cs_term *t, uint32_t n)
{
    mpz_t c, v;

    mpz_inits(c, v, NULL);
    mpz_set_ui(acc, 0);
    for (uint32_t i = 0; i < n; i++) {
        czk_r1cs_term term;
        memcpy(&term, &t[i], sizeof(term));
        mpz_from_le(c, &term.coef, 32);
        mpz_from_le(v, &w->w[term.wire], 32);
        mpz_addmul(acc, c, v);
    }
    mpz_mod(acc, acc, R_MOD);
    mpz_clears(c, v, NULL);
}

static void match_coefs(struct walk *s, uint32_t ci, const czk_r1cs_term *t, uint32_t n,
                        uint32_t matrix)
{
    mpz_t want, got;

    mpz_inits(want, got, NULL);
    for (uint32_t i = 0; i < n; i++, s->k++) {
        czk_r1cs_term term;
        czk_zkey_coef zc;

        memcpy(&term, &t[i], sizeof(term));
        (matrix ? s->in_b : s->in_a)[term.wire] = 1;
        if (s->k >= s->z->n_coefs) {
            s->bad_coef++;
            continue;
        }
        memcpy(&zc, &s->z->coefs[s->k], sizeof(zc));
        mpz_from_le(want, &term.coef, 32);
        mpz_mul(want, want, R2_512);
        mpz_mod(want, want, R_MOD);
        mpz_from_le(got, &zc.value, 32);
        if (zc.matrix != matrix || zc.constraint != ci || zc.signal != term.wire ||
            mpz_cmp(want, got) != 0) {
            if (s->bad_coef++ < 5)
                fprintf(stderr, "coef %u: zkey (%u,%u,%u) vs r1cs (%u,%u,%u) or value differs\n",
                        s->k, zc.matrix, zc.constraint, zc.signal, matrix, ci, term.wire);
        }
    }
    mpz_clears(want, got, NULL);
}

static int walk_cb(void *ctx, uint32_t ci, const czk_r1cs_term *a, uint32_t na,
                   const czk_r1cs_term *b, uint32_t nb, const czk_r1cs_term *c, uint32_t nc)
{
    struct walk *s = ctx;
    mpz_t va, vb, vc;

    mpz_inits(va, vb, vc, NULL);
    lc_eval(va, s->w, a, na);
    lc_eval(vb, s->w, b, nb);
    lc_eval(vc, s->w, c, nc);
    mpz_mul(va, va, vb);
    mpz_sub(va, va, vc);
    mpz_mod(va, va, R_MOD);
    if (mpz_sgn(va) != 0 && s->bad_sat++ < 5)
        fprintf(stderr, "constraint %u not satisfied by the witness\n", ci);
    mpz_clears(va, vb, vc, NULL);
    match_coefs(s, ci, a, na, 0);
    match_coefs(s, ci, b, nb, 1);
    return 0;
}

/* ---- verification key comparison ---- */

static bool fp_matches(const czk_fp *mont, json_t *dec)
{
    mpz_t x, want;
    bool ok;

    if (!json_is_string(dec))
        return false;
    mpz_inits(x, want, NULL);
    mpz_from_le(x, mont, 48);
    mpz_mul(x, x, RINV_Q);
    mpz_mod(x, x, Q_MOD);
    ok = mpz_set_str(want, json_string_value(dec), 10) == 0 && mpz_cmp(x, want) == 0;
    mpz_clears(x, want, NULL);
    return ok;
}

static bool g1_matches(const czk_g1_aff *p, json_t *j)
{
    return json_is_array(j) && fp_matches(&p->x, json_array_get(j, 0)) &&
           fp_matches(&p->y, json_array_get(j, 1)) &&
           !strcmp(json_string_value(json_array_get(j, 2)) ?: "", "1");
}

static bool g2_matches(const czk_g2_aff *p, json_t *j)
{
    json_t *x = json_array_get(j, 0), *y = json_array_get(j, 1);
    return fp_matches(&p->x.c0, json_array_get(x, 0)) && fp_matches(&p->x.c1, json_array_get(x, 1)) &&
           fp_matches(&p->y.c0, json_array_get(y, 0)) && fp_matches(&p->y.c1, json_array_get(y, 1));
}

static void check_vkey(const char *dir, const czk_zkey *z)
{
    char path[4096];
    json_error_t jerr;
    json_t *vk, *ic;

    snprintf(path, sizeof(path), "%s/verification_key.json", dir);
    vk = json_load_file(path, 0, &jerr);
    CHECK(vk, "cannot load %s: %s", path, jerr.text);
    if (!vk)
        return;
    CHECK(json_integer_value(json_object_get(vk, "nPublic")) == z->n_public, "vk nPublic");
    CHECK(g1_matches(&z->alpha1, json_object_get(vk, "vk_alpha_1")), "alpha1 differs from vk");
    CHECK(g2_matches(&z->beta2, json_object_get(vk, "vk_beta_2")), "beta2 differs from vk");
    CHECK(g2_matches(&z->gamma2, json_object_get(vk, "vk_gamma_2")), "gamma2 differs from vk");
    CHECK(g2_matches(&z->delta2, json_object_get(vk, "vk_delta_2")), "delta2 differs from vk");
    /* gamma = 1 in snarkjs: gamma2 is the G2 generator */
    CHECK(czk_g2_aff_eq(&z->gamma2, &CZK_G2_GEN), "gamma2 is not the generator");
    ic = json_object_get(vk, "IC");
    CHECK(json_array_size(ic) == (size_t)z->n_public + 1, "IC count %zu", json_array_size(ic));
    for (uint32_t i = 0; i <= z->n_public && i < json_array_size(ic); i++)
        CHECK(g1_matches(&z->ic[i], json_array_get(ic, i)), "IC[%u] differs from vk", i);
    json_decref(vk);
}

static void check_public(const char *dir, const czk_wtns *w, uint32_t n_public)
{
    char path[4096];
    json_error_t jerr;
    json_t *pub;
    mpz_t a, b;

    snprintf(path, sizeof(path), "%s/public.json", dir);
    pub = json_load_file(path, 0, &jerr);
    CHECK(pub && json_array_size(pub) == n_public, "public.json: %s", pub ? "count" : jerr.text);
    if (!pub)
        return;
    mpz_inits(a, b, NULL);
    for (uint32_t i = 0; i < n_public && i < json_array_size(pub); i++) {
        mpz_from_le(a, &w->w[i + 1], 32);
        CHECK(mpz_set_str(b, json_string_value(json_array_get(pub, i)) ?: "x", 10) == 0 &&
                  mpz_cmp(a, b) == 0,
              "w[%u] differs from public.json[%u]", i + 1, i);
    }
    mpz_clears(a, b, NULL);
    json_decref(pub);
}

static int wrong_curve(const char *dir)
{
    static const char *files[3] = {"circuit.zkey", "witness.wtns", "circuit.r1cs"};
    char path[4096];
    czk_error e;

    for (int i = 0; i < 3; i++) {
        int rc;
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        memset(&e, 0, sizeof(e));
        if (i == 0) {
            czk_zkey z;
            rc = czk_zkey_open(&z, path, &e);
        } else if (i == 1) {
            czk_wtns w;
            rc = czk_wtns_open(&w, path, &e);
        } else {
            czk_r1cs r;
            rc = czk_r1cs_open(&r, path, &e);
        }
        printf("%s -> %d: %s\n", files[i], rc, e.msg);
        CHECK(rc == -EINVAL && e.code == rc, "%s: expected -EINVAL, got %d", files[i], rc);
        CHECK(strstr(e.msg, "BLS12-381") && strstr(e.msg, path), "%s: message: %s", files[i],
              e.msg);
    }
    CHECK(strstr(e.msg, "bn128"), "the r1cs message names bn128: %s", e.msg);
    return t_failures ? 1 : 0;
}

/* (Montgomery bytes of x, y) on y^2 = x^3 + 3 mod q, in GMP; infinity counts */
static bool bn_g1_on_curve_gmp(const czk_bn254_g1_aff *p, const mpz_t q, const mpz_t rinv)
{
    static const czk_bn254_g1_aff inf;
    mpz_t x, y, l, r;
    bool ok;

    if (!memcmp(p, &inf, sizeof(inf)))
        return true;
    mpz_inits(x, y, l, r, NULL);
    mpz_from_le(x, &p->x, 32);
    mpz_from_le(y, &p->y, 32);
    mpz_mul(x, x, rinv);
    mpz_mod(x, x, q);
    mpz_mul(y, y, rinv);
    mpz_mod(y, y, q);
    mpz_mul(l, y, y);
    mpz_mod(l, l, q);
    mpz_pow_ui(r, x, 3);
    mpz_add_ui(r, r, 3);
    mpz_mod(r, r, q);
    ok = mpz_cmp(l, r) == 0;
    mpz_clears(x, y, l, r, NULL);
    return ok;
}

static int bn254_files(const char *dir)
{
    char zp[4096], wp[4096], rp[4096], tmp[4096];
    czk_zkey z, z2;
    czk_wtns w;
    czk_r1cs r;
    czk_error e = {0};
    mpz_t q, rinv;

    snprintf(zp, sizeof(zp), "%s/circuit.zkey", dir);
    snprintf(wp, sizeof(wp), "%s/witness.wtns", dir);
    snprintf(rp, sizeof(rp), "%s/circuit.r1cs", dir);
    if (czk_zkey_open_curves(&z, zp, CZK_CURVES_ALL, &e) || czk_wtns_open_curves(&w, wp, CZK_CURVES_ALL, &e) ||
        czk_r1cs_open_curves(&r, rp, CZK_CURVES_ALL, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    CHECK(z.curve == CZK_CURVE_BN254 && w.curve == CZK_CURVE_BN254 && r.curve == CZK_CURVE_BN254, "curves");
    CHECK(z.n_vars == r.n_wires && w.n_witness == r.n_wires, "nVars %u, nWitness %u, nWires %u", z.n_vars,
          w.n_witness, r.n_wires);
    CHECK(z.n_public == r.n_pub_out + r.n_pub_in, "nPublic %u", z.n_public);
    CHECK(!z.a && !z.b1 && !z.b2 && !z.c && !z.h && !z.ic && z.bn.a && z.bn.b2 && z.bn.h && z.bn.ic,
          "BN254 points in z.bn only");
    {
        czk_zkey zb;
        czk_error eb = {0};
        int rc = czk_zkey_open_curves(&zb, zp, CZK_CURVES_BLS12_381, &eb);
        CHECK(rc == -EINVAL && strstr(eb.msg, zp), "BLS12-381-only reader: %d %s", rc, eb.msg);
    }

    /* the points against BN254's G1 equation, with GMP (q from the file's own header is not
     * trusted: the published value) */
    mpz_inits(q, rinv, NULL);
    mpz_set_str(q, "21888242871839275222246405745257275088696311157297823662689037894645226208583", 10);
    mpz_set_ui(rinv, 1);
    mpz_mul_2exp(rinv, rinv, 256);
    CHECK(mpz_invert(rinv, rinv, q), "2^256 invertible mod q");
    CHECK(bn_g1_on_curve_gmp(&z.bn.alpha1, q, rinv) && bn_g1_on_curve_gmp(&z.bn.beta1, q, rinv) &&
              bn_g1_on_curve_gmp(&z.bn.delta1, q, rinv),
          "header G1 points on y^2 = x^3 + 3");
    for (uint32_t i = 0; i <= z.n_public; i++)
        CHECK(bn_g1_on_curve_gmp(&z.bn.ic[i], q, rinv), "IC[%u]", i);
    for (uint32_t i = 0; i < z.n_vars; i++)
        CHECK(bn_g1_on_curve_gmp(&z.bn.a[i], q, rinv) && bn_g1_on_curve_gmp(&z.bn.b1[i], q, rinv), "A/B1[%u]", i);
    for (uint32_t i = 0; i < z.domain_size; i++)
        CHECK(bn_g1_on_curve_gmp(&z.bn.h[i], q, rinv), "H[%u]", i);
    mpz_clears(q, rinv, NULL);

    /* the writer: the same key written again reads back the same */
    /* one file per process: ctest runs the BN254 fixtures of this program side by side */
    snprintf(tmp, sizeof(tmp), "%s/bn254_roundtrip.%ld.zkey", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (long)getpid());
    {
        czk_zkey_spec sp = {.n_vars = z.n_vars, .n_public = z.n_public, .domain_size = z.domain_size,
                            .n_coefs = z.n_coefs, .coefs = z.coefs, .curve = CZK_CURVE_BN254, .bn = z.bn};
        CHECK(czk_zkey_write(tmp, &sp, &e) == 0, "write: %s", e.msg);
    }
    if (czk_zkey_open_curves(&z2, tmp, CZK_CURVES_ALL, &e) == 0) {
        uint64_t np = z.n_public, nv = z.n_vars;
        CHECK(z2.curve == CZK_CURVE_BN254 && z2.n_coefs == z.n_coefs &&
                  !memcmp(z2.coefs, z.coefs, (size_t)z.n_coefs * sizeof(czk_zkey_coef)),
              "coefficients");
        CHECK(!memcmp(&z2.bn.alpha1, &z.bn.alpha1, sizeof(z.bn.alpha1)) &&
                  !memcmp(&z2.bn.delta2, &z.bn.delta2, sizeof(z.bn.delta2)) &&
                  !memcmp(&z2.bn.gamma2, &z.bn.gamma2, sizeof(z.bn.gamma2)),
              "header points");
        CHECK(!memcmp(z2.bn.ic, z.bn.ic, (np + 1) * sizeof(*z.bn.ic)) &&
                  !memcmp(z2.bn.b2, z.bn.b2, nv * sizeof(*z.bn.b2)) &&
                  !memcmp(z2.bn.c, z.bn.c, (nv - np - 1) * sizeof(*z.bn.c)) &&
                  !memcmp(z2.bn.h, z.bn.h, (size_t)z.domain_size * sizeof(*z.bn.h)),
              "point sections");
        CHECK(czk_zkey_points_bytes(&z2) == nv * (64 * 2 + 128) + (nv - np - 1) * 64 + (uint64_t)z.domain_size * 64,
              "points bytes");
        czk_zkey_close(&z2);
    } else {
        CHECK(0, "reopen: %s", e.msg);
    }
    unlink(tmp);
    czk_r1cs_close(&r);
    czk_wtns_close(&w);
    czk_zkey_close(&z);
    return t_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    char path[4096];
    czk_error e = {0};
    czk_r1cs r;
    czk_wtns w;
    czk_zkey z;
    uint32_t want[6], n_public, dom;
    struct walk s = {0};

    init_consts();
    if (argc == 3 && !strcmp(argv[1], "--wrong-curve"))
        return wrong_curve(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "--bn254"))
        return bn254_files(argv[2]);
    if (argc != 8) {
        fprintf(stderr, "usage: %s DIR nWires nConstraints nPrvIn nPubIn nLabels nPubOut\n",
                argv[0]);
        return 2;
    }
    for (int i = 0; i < 6; i++)
        want[i] = (uint32_t)strtoul(argv[i + 2], NULL, 10);

    snprintf(path, sizeof(path), "%s/circuit.r1cs", argv[1]);
    if (czk_r1cs_open(&r, path, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    CHECK(r.n_wires == want[0], "nWires %u", r.n_wires);
    CHECK(r.n_constraints == want[1], "nConstraints %u", r.n_constraints);
    CHECK(r.n_prv_in == want[2], "nPrvIn %u", r.n_prv_in);
    CHECK(r.n_pub_in == want[3], "nPubIn %u", r.n_pub_in);
    CHECK(r.n_labels == want[4], "nLabels %llu", (unsigned long long)r.n_labels);
    CHECK(r.n_pub_out == want[5], "nPubOut %u", r.n_pub_out);

    snprintf(path, sizeof(path), "%s/witness.wtns", argv[1]);
    if (czk_wtns_open(&w, path, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    CHECK(w.n_witness == r.n_wires, "nWitness %u", w.n_witness);
    CHECK(((uintptr_t)w.w & 7) == 0, "witness values aligned");

    snprintf(path, sizeof(path), "%s/circuit.zkey", argv[1]);
    if (czk_zkey_open(&z, path, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    n_public = r.n_pub_out + r.n_pub_in;
    for (dom = 1; dom < r.n_constraints + n_public + 1; dom *= 2)
        ;
    CHECK(z.n_vars == r.n_wires, "zkey nVars %u", z.n_vars);
    CHECK(z.n_public == n_public, "zkey nPublic %u", z.n_public);
    CHECK(z.domain_size == dom && (1u << z.log_domain) == dom, "domainSize %u (want %u)",
          z.domain_size, dom);

    s.w = &w;
    s.z = &z;
    s.in_a = calloc(r.n_wires, 1);
    s.in_b = calloc(r.n_wires, 1);
    CHECK(czk_r1cs_foreach(&r, walk_cb, &s) == 0, "foreach");
    CHECK(s.bad_sat == 0, "%u constraints not satisfied", s.bad_sat);
    CHECK(s.bad_coef == 0, "%u coefficients differ from the r1cs", s.bad_coef);
    /* the public-input rows */
    for (uint32_t i = 0; i <= n_public; i++, s.k++) {
        czk_zkey_coef zc;
        mpz_t got;
        if (s.k >= z.n_coefs)
            break;
        memcpy(&zc, &z.coefs[s.k], sizeof(zc));
        mpz_init(got);
        mpz_from_le(got, &zc.value, 32);
        CHECK(zc.matrix == 0 && zc.constraint == r.n_constraints + i && zc.signal == i &&
                  mpz_cmp(got, R2_512) == 0,
              "public row %u: (%u,%u,%u)", i, zc.matrix, zc.constraint, zc.signal);
        mpz_clear(got);
        s.in_a[i] = 1;
    }
    CHECK(s.k == z.n_coefs, "zkey has %u coefficients, r1cs + public rows give %u", z.n_coefs, s.k);

    for (uint32_t j = 0; j < z.n_vars; j++) {
        CHECK(czk_g1_aff_is_inf(&z.a[j]) == !s.in_a[j], "A[%u] infinity vs r1cs", j);
        CHECK(czk_g1_aff_is_inf(&z.b1[j]) == !s.in_b[j], "B1[%u] infinity vs r1cs", j);
        CHECK(czk_g2_aff_is_inf(&z.b2[j]) == !s.in_b[j], "B2[%u] infinity vs r1cs", j);
    }
    for (int k = 0; k < 6; k++) {
        const void *p[] = {z.ic, z.a, z.b1, z.b2, z.c, z.h};
        CHECK(((uintptr_t)p[k] & 7) == 0, "point section %d aligned", k);
    }
    check_vkey(argv[1], &z);
    check_public(argv[1], &w, n_public);

    printf("%s: nWires %u, nConstraints %u, nPublic %u, domain %u, nCoefs %u: %s\n", argv[1],
           r.n_wires, r.n_constraints, n_public, z.domain_size, z.n_coefs,
           t_failures ? "FAIL" : "ok");
    free(s.in_a);
    free(s.in_b);
    czk_zkey_close(&z);
    czk_wtns_close(&w);
    czk_r1cs_close(&r);
    return t_failures ? 1 : 0;
}
