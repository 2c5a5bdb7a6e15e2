/*
 * test_fixtures.c — the prover stages on a snarkjs/circom fixture
 * (tests/fixtures/<name>/: circuit.r1cs, circuit.zkey, witness.wtns,
 * verification_key.json, public.json):
 *   - build_abc equals A·w, B·w per row computed with GMP from the r1cs
 *     (plus the public-input rows), with 1 and 2 threads and with section 4
 *     shuffled;
 *   - h + MSMs + finalize with r = s = 0, with fixed r, s and with random
 *     r, s verify with czk_groth16_verify against snarkjs' own
 *     verification_key.json and with a direct pairing check;
 *   - pi_a(r,s) - pi_a(0,0) = r delta1 and pi_b(r,s) - pi_b(0,0) = s delta2;
 *   - the public signals equal snarkjs' public.json;
 *   - a witness with one value changed gives a proof that does not verify.
 * usage: test_groth16_fixtures FIXTURE_DIR
 */
#include "tests/groth16/g16_test.h"

#include <errno.h>

#include "common/formats/formats.h"
#include "common/groth16/groth16.h"
#include "common/groth16/json.h"
#include "common/groth16/verify.h"

static char path_buf[4][4096];

static const char *fx(int slot, const char *dir, const char *file)
{
    snprintf(path_buf[slot], sizeof(path_buf[slot]), "%s/%s", dir, file);
    return path_buf[slot];
}

/* GMP oracle for A_T / B_T rows */
struct oracle { mpz_t *at, *bt; const czk_fr *w; };

static int oracle_row(void *ctx, uint32_t index, const czk_r1cs_term *a, uint32_t na,
                      const czk_r1cs_term *b, uint32_t nb, const czk_r1cs_term *c, uint32_t nc)
{
    struct oracle *o = ctx;

    g_lc_value(o->at[index], a, na, o->w);
    g_lc_value(o->bt[index], b, nb, o->w);
    return 0;
}

static void check_abc(const czk_zkey *z, const czk_r1cs *r1cs, const czk_fr *w)
{
    size_t n = z->domain_size;
    struct oracle o = { malloc(n * sizeof(mpz_t)), malloc(n * sizeof(mpz_t)), w };
    mpz_t got, prod;

    for (size_t i = 0; i < n; i++)
        mpz_init(o.at[i]), mpz_init(o.bt[i]);
    CHECK(czk_r1cs_foreach(r1cs, oracle_row, &o) == 0, "r1cs walk failed");
    for (uint32_t i = 0; i <= z->n_public; i++)
        g_fr_to_mpz(o.at[r1cs->n_constraints + i], &w[i]);
    mpz_inits(got, prod, NULL);
    /* a copy of the key with section 4 shuffled (not sorted by row: the
     * single-thread path) */
    czk_zkey zs = *z;
    czk_zkey_coef *shuffled = malloc((size_t)z->n_coefs * sizeof(*shuffled));

    memcpy(shuffled, z->coefs, (size_t)z->n_coefs * sizeof(*shuffled));
    for (uint32_t i = z->n_coefs; i > 1; i--) {
        uint32_t j = (uint32_t)(t_rand64() % i);
        czk_zkey_coef t = shuffled[i - 1];

        shuffled[i - 1] = shuffled[j];
        shuffled[j] = t;
    }
    zs.coefs = shuffled;
    CHECK(z->coef_order == CZK_COEF_ORDER_BY_ROW, "the reader did not find section 4 by row");
    /* variants 2 and 3: the shuffled key with its order left to build_abc
     * (as for a key filled by other code) and as the reader would mark it */
    for (int variant = 0; variant < 4; variant++) {
        int nthreads = variant == 0 ? 1 : 2;
        const czk_zkey *zk = variant >= 2 ? &zs : z;

        zs.coef_order = variant == 2 ? CZK_COEF_ORDER_UNKNOWN : CZK_COEF_ORDER_OTHER;
        czk_fr *abc = malloc(3 * n * sizeof(czk_fr));
        size_t bad = 0;

        memset(abc, 0xa5, 3 * n * sizeof(czk_fr));   /* build_abc must clear unused rows */
        CHECK(czk_groth16_build_abc(zk, w, abc, abc + n, abc + 2 * n, nthreads) == 0, "build_abc");
        for (size_t i = 0; i < n; i++) {
            g_mont_to_mpz(got, &abc[i]);
            bad += mpz_cmp(got, o.at[i]) != 0;
            g_mont_to_mpz(got, &abc[n + i]);
            bad += mpz_cmp(got, o.bt[i]) != 0;
            mpz_mul(prod, o.at[i], o.bt[i]);
            mpz_mod(prod, prod, g_r);
            g_mont_to_mpz(got, &abc[2 * n + i]);
            bad += mpz_cmp(got, prod) != 0;
        }
        CHECK(bad == 0, "build_abc (%d threads%s): %zu of %zu values differ from the r1cs oracle",
              nthreads, variant == 2 ? ", shuffled section 4" : variant == 3 ? ", shuffled, marked unsorted" : "",
              bad, 3 * n);
        free(abc);
    }
    free(shuffled);
    for (size_t i = 0; i < n; i++)
        mpz_clear(o.at[i]), mpz_clear(o.bt[i]);
    free(o.at);
    free(o.bt);
    mpz_clears(got, prod, NULL);
}

/* the three stages, as the pipeline runs them */
static void staged_proof(const czk_zkey *z, const czk_fr *w, const czk_fr *r, const czk_fr *s,
                         czk_groth16_proof *proof)
{
    size_t n = z->domain_size;
    czk_fr *abc = malloc(3 * n * sizeof(czk_fr));
    czk_groth16_msm_out m;
    czk_groth16_params p;

    CHECK(czk_groth16_build_abc(z, w, abc, abc + n, abc + 2 * n, 2) == 0, "build_abc");
    CHECK(czk_groth16_compute(z, abc, abc + n, abc + 2 * n, w, &m, 2) == 0, "compute");
    czk_groth16_params_from_zkey(&p, z);
    czk_groth16_finalize(&p, &m, r, s, proof);
    free(abc);
}

static bool verifies(const czk_groth16_vk *vk, const czk_zkey *z, const czk_groth16_proof *pr,
                     const czk_fr *pub)
{
    czk_error e = { 0 };
    int rc = czk_groth16_verify(vk, pr, pub, z->n_public, &e);
    bool direct = g_pairing_verify(z->ic, z->n_public, pub, &z->alpha1, &z->beta2, &z->gamma2,
                                   &z->delta2, &pr->a, &pr->b, &pr->c);

    CHECK((rc == 0) == direct, "czk_groth16_verify (%d: %s) and the direct pairing check (%d) "
          "disagree", rc, e.msg, direct);
    return rc == 0;
}

int main(int argc, char **argv)
{
    const char *dir;
    czk_zkey z;
    czk_wtns w;
    czk_r1cs r1cs;
    czk_groth16_vk vk_file = { 0 }, vk_key = { 0 };
    czk_groth16_proof p0, p1, p2, p3;
    czk_fr r, s, *pub_json = NULL, *pub = NULL, *wbad;
    size_t n_pub_json = 0;
    czk_error e = { 0 };

    if (argc != 2)
        DIE("usage: %s FIXTURE_DIR", argv[0]);
    dir = argv[1];
    g_init_r();
    t_seed("groth16_fixtures");
    if (czk_zkey_open(&z, fx(0, dir, "circuit.zkey"), &e) ||
        czk_wtns_open(&w, fx(1, dir, "witness.wtns"), &e) ||
        czk_r1cs_open(&r1cs, fx(2, dir, "circuit.r1cs"), &e) ||
        czk_json_vk_read(&vk_file, fx(3, dir, "verification_key.json"), &e) ||
        czk_groth16_vk_from_zkey(&vk_key, &z, &e))
        DIE("%s", e.msg);
    CHECK(czk_groth16_check_witness(&z, "zkey", &w, "wtns", &e) == 0, "%s", e.msg);
    if (czk_json_public_read(&pub_json, &n_pub_json, fx(3, dir, "public.json"), &e))
        DIE("%s", e.msg);

    check_abc(&z, &r1cs, w.w);

    /* r = s = 0 */
    memset(&r, 0, sizeof(r));
    memset(&s, 0, sizeof(s));
    staged_proof(&z, w.w, &r, &s, &p0);
    CHECK(verifies(&vk_file, &z, &p0, w.w + 1), "r = s = 0 proof does not verify with snarkjs' vkey");
    CHECK(verifies(&vk_key, &z, &p0, w.w + 1), "r = s = 0 proof does not verify with the derived vkey");

    /* fixed r, s: blinding moves pi_a by r delta1 and pi_b by s delta2 */
    czk_fr_from_u64(&r, 123);
    czk_fr_from_u64(&s, 456);
    staged_proof(&z, w.w, &r, &s, &p1);
    CHECK(verifies(&vk_file, &z, &p1, w.w + 1), "(123, 456) proof does not verify");
    {
        czk_fr k;
        czk_g1 t, a0;
        czk_g2 t2, b0;
        czk_g1_aff want1;
        czk_g2_aff want2;

        memset(&k, 0, sizeof(k));
        k.l[0] = 123;
        czk_g1_mul_aff(&t, &z.delta1, &k);
        czk_g1_from_aff(&a0, &p0.a);
        czk_g1_add(&t, &t, &a0);
        czk_g1_to_aff(&want1, &t);
        CHECK(czk_g1_aff_eq(&want1, &p1.a), "pi_a(123,456) != pi_a(0,0) + 123 delta1");
        memset(&k, 0, sizeof(k));
        k.l[0] = 456;
        czk_g2_mul_aff(&t2, &z.delta2, &k);
        czk_g2_from_aff(&b0, &p0.b);
        czk_g2_add(&t2, &t2, &b0);
        czk_g2_to_aff(&want2, &t2);
        CHECK(czk_g2_aff_eq(&want2, &p1.b), "pi_b(123,456) != pi_b(0,0) + 456 delta2");
    }

    /* random r, s through the one-call prover */
    pub = malloc(((size_t)z.n_public + 1) * sizeof(*pub));
    CHECK(czk_groth16_prove(&z, "zkey", &w, "wtns", NULL, NULL, &p2, pub, 2, &e) == 0, "%s", e.msg);
    CHECK(verifies(&vk_file, &z, &p2, pub), "random-blinding proof does not verify");
    CHECK(czk_groth16_prove(&z, "zkey", &w, "wtns", NULL, NULL, &p3, NULL, 1, &e) == 0, "%s", e.msg);
    CHECK(verifies(&vk_file, &z, &p3, pub), "second random-blinding proof does not verify");
    CHECK(!czk_g1_aff_eq(&p2.a, &p3.a) && !czk_g1_aff_eq(&p2.c, &p3.c),
          "two randomly blinded proofs are equal");
    CHECK(n_pub_json == z.n_public, "public.json has %zu signals, zkey nPublic %u", n_pub_json,
          z.n_public);
    for (size_t i = 0; i < n_pub_json && i < z.n_public; i++)
        CHECK(czk_fr_eq(&pub[i], &pub_json[i]), "public signal %zu differs from snarkjs' public.json", i);

    /* a private wire that occurs in A or B, plus a random value */
    wbad = malloc((size_t)z.n_vars * sizeof(czk_fr));
    memcpy(wbad, w.w, (size_t)z.n_vars * sizeof(czk_fr));
    {
        czk_fr delta_w;
        size_t k = 0;

        for (uint32_t i = 0; i < z.n_coefs && !k; i++)
            if (z.coefs[i].signal > z.n_public)
                k = z.coefs[i].signal;
        CHECK(k != 0, "no private wire in section 4");
        g_rand_fr_std(&delta_w);
        czk_fr_add(&wbad[k], &wbad[k], &delta_w);
    }
    memset(&r, 0, sizeof(r));
    memset(&s, 0, sizeof(s));
    staged_proof(&z, wbad, &r, &s, &p1);
    CHECK(!verifies(&vk_file, &z, &p1, wbad + 1), "a proof from a wrong witness verifies");
    czk_fr_from_u64(&r, 7);
    czk_fr_from_u64(&s, 9);
    staged_proof(&z, wbad, &r, &s, &p1);
    CHECK(!verifies(&vk_file, &z, &p1, wbad + 1), "a blinded proof from a wrong witness verifies");
    /* and the right proof with a wrong public signal */
    if (z.n_public > 0) {
        czk_fr one_std = { { 1, 0, 0, 0 } };

        czk_fr_add(&pub[0], &pub[0], &one_std);
        CHECK(!verifies(&vk_file, &z, &p2, pub), "a proof verifies with a changed public signal");
    }

    /* witness/key mismatch is refused with both names */
    {
        czk_wtns shorter = w;

        shorter.n_witness--;
        CHECK(czk_groth16_check_witness(&z, "K.zkey", &shorter, "W.wtns", &e) == -EINVAL &&
              strstr(e.msg, "K.zkey") && strstr(e.msg, "W.wtns"),
              "a short witness is not refused by name: %s", e.msg);
    }

    free(wbad);
    free(pub);
    free(pub_json);
    czk_groth16_vk_free(&vk_file);
    czk_groth16_vk_free(&vk_key);
    czk_r1cs_close(&r1cs);
    czk_wtns_close(&w);
    czk_zkey_close(&z);
    if (t_failures)
        fprintf(stderr, "%s: %d failures\n", dir, t_failures);
    else
        printf("%s: ok\n", dir);
    return t_failures ? 1 : 0;
}
