/*
 * test_bn254_prove.c — the BN254 (snarkjs "bn128") Groth16 prover on a
 * circom2/snarkjs fixture, against checks that do not use the code under test:
 *   - a, b, c of build_abc (from the zkey's section 4) equal A·w, B·w and
 *     their product evaluated with GMP from the circuit's .r1cs, row by row;
 *   - with fixed random r, s: pi_a = alpha1 + sum w_i A_i + r delta1 and
 *     pi_b = beta2 + sum w_i B2_i + s delta2 recomputed point by point with
 *     the variable-time scalar multiplication (no MSM, no _ct code);
 *   - the proof verifies with the pairing under the verification key snarkjs
 *     exported (verification_key.json) and under czk's own from the zkey,
 *     whose vk_alphabeta_12 equals snarkjs'; the same r, s give the same
 *     proof, another s another one; a negated pi_c and a changed public
 *     signal do not verify;
 *   - a BLS12-381 witness is refused for the BN254 key, naming both files.
 *     test_bn254_prove FIXTURE_DIR [BLS_WITNESS]
 */
#include <errno.h>

#include "common/crypto/bn254_curve.h"
#include "common/groth16/groth16.h"
#include "common/groth16/json.h"
#include "common/groth16/verify.h"
#include "tests/groth16/g16_test.h"

/* The GMP helpers of g16_test.h take czk_fr; BN254's scalars have the same
 * 32-byte layout, and g_r is set to BN254's r below. */
#define AS_FR(p) ((const czk_fr *)(const void *)(p))

/* uniform below r, Montgomery form */
static void rand_fr(czk_bn254_fr *m)
{
    czk_fr s;

    g_rand_fr_std(&s);
    memcpy(m, &s, sizeof(*m));
    czk_bn254_fr_to_mont(m, m);
}

struct rows {
    const czk_bn254_fr *w, *a, *b, *c;
    int bad;
};

/* a, b, c of one row against the r1cs's A, B at w (GMP; Montgomery read by GMP too) */
static int row_check(void *ctx, uint32_t i, const czk_r1cs_term *ta, uint32_t na, const czk_r1cs_term *tb,
                     uint32_t nb, const czk_r1cs_term *tc, uint32_t nc)
{
    struct rows *x = ctx;
    mpz_t va, vb, vc, got;

    (void)tc;
    (void)nc;
    mpz_inits(va, vb, vc, got, NULL);
    g_lc_value(va, ta, na, AS_FR(x->w));
    g_lc_value(vb, tb, nb, AS_FR(x->w));
    mpz_mul(vc, va, vb);
    mpz_mod(vc, vc, g_r);
    g_mont_to_mpz(got, AS_FR(&x->a[i]));
    x->bad += mpz_cmp(got, va) != 0;
    g_mont_to_mpz(got, AS_FR(&x->b[i]));
    x->bad += mpz_cmp(got, vb) != 0;
    g_mont_to_mpz(got, AS_FR(&x->c[i]));
    x->bad += mpz_cmp(got, vc) != 0;
    mpz_clears(va, vb, vc, got, NULL);
    return 0;
}

/* NAIVE(G): base + sum k_i P_i + t * d in group G, one variable-time
 * multiplication at a time (no MSM, no _ct code) */
#define NAIVE(G)                                                                                                  \
    static void naive_##G(czk_bn254_##G##_aff *out, const czk_bn254_##G##_aff *base,                             \
                          const czk_bn254_##G##_aff *pts, const czk_bn254_fr *k_std, size_t n,                  \
                          const czk_bn254_##G##_aff *d, const czk_bn254_fr *t_std)                              \
    {                                                                                                             \
        czk_bn254_##G acc, p, q;                                                                                  \
                                                                                                                  \
        czk_bn254_##G##_from_aff(&acc, base);                                                                     \
        for (size_t i = 0; i <= n; i++) {                                                                         \
            czk_bn254_##G##_from_aff(&p, i < n ? &pts[i] : d);                                                    \
            czk_bn254_##G##_mul_vt(&q, &p, i < n ? &k_std[i] : t_std);                                            \
            czk_bn254_##G##_add(&acc, &acc, &q);                                                                  \
        }                                                                                                         \
        czk_bn254_##G##_to_aff(out, &acc);                                                                        \
    }
NAIVE(g1)
NAIVE(g2)

int main(int argc, char **argv)
{
    char path[3][4096];
    czk_zkey z;
    czk_wtns w;
    czk_r1cs r1cs;
    czk_error e = {0};
    czk_groth16_bn254_vk vk_sj = {0}, vk_cz = {0};
    czk_groth16_bn254_proof p1, p2, p3;
    czk_bn254_fr r, s, s2, r_std, s_std, *pub;
    int rc;

    if (argc < 2) {
        fprintf(stderr, "usage: %s FIXTURE_DIR [BLS_WITNESS]\n", argv[0]);
        return 2;
    }
    t_seed("test_bn254_prove");
    mpz_init(g_r);
    g_fr_to_mpz(g_r, AS_FR(&CZK_BN254_FR_MOD));
    snprintf(path[0], sizeof(path[0]), "%s/circuit.zkey", argv[1]);
    snprintf(path[1], sizeof(path[1]), "%s/witness.wtns", argv[1]);
    snprintf(path[2], sizeof(path[2]), "%s/circuit.r1cs", argv[1]);
    if (czk_zkey_open_curves(&z, path[0], CZK_CURVES_ALL, &e) ||
        czk_wtns_open_curves(&w, path[1], CZK_CURVES_ALL, &e) ||
        czk_r1cs_open_curves(&r1cs, path[2], CZK_CURVES_ALL, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    CHECK(z.curve == CZK_CURVE_BN254 && w.curve == CZK_CURVE_BN254 && r1cs.curve == CZK_CURVE_BN254,
          "curves %d %d %d", z.curve, w.curve, r1cs.curve);
    CHECK(z.a == NULL && z.bn.a != NULL, "a BN254 key leaves the BLS12-381 point fields empty");
    {
        /* the plain (BLS12-381-only) reader refuses it, naming the file */
        czk_zkey zb;
        czk_error eb = {0};
        CHECK(czk_zkey_open(&zb, path[0], &eb) == -EINVAL && strstr(eb.msg, "circuit.zkey"), "%s", eb.msg);
    }

    /* build_abc against the r1cs, with GMP */
    {
        size_t n = z.domain_size;
        czk_bn254_fr *abc = aligned_alloc(64, 3 * n * sizeof(*abc));
        struct rows x = {.w = w.w_bn, .a = abc, .b = abc + n, .c = abc + 2 * n};

        CHECK(abc && czk_groth16_bn254_build_abc(&z, w.w_bn, abc, abc + n, abc + 2 * n, 0) == 0, "build_abc");
        CHECK(czk_r1cs_foreach(&r1cs, row_check, &x) == 0 && x.bad == 0, "%d values of a, b, c differ from GMP's",
              x.bad);
        free(abc);
    }

    /* prove with fixed random r, s */
    rand_fr(&r);
    rand_fr(&s);
    rand_fr(&s2);
    pub = malloc(((size_t)z.n_public + 1) * sizeof(*pub));
    rc = czk_groth16_bn254_prove(&z, path[0], &w, path[1], &r, &s, &p1, pub, 0, &e);
    CHECK(rc == 0, "prove: %s", e.msg);
    rc = czk_groth16_bn254_prove(&z, path[0], &w, path[1], &r, &s, &p2, NULL, 0, &e);
    CHECK(rc == 0 && !memcmp(&p1, &p2, sizeof(p1)), "the same r, s give the same proof");
    rc = czk_groth16_bn254_prove(&z, path[0], &w, path[1], &r, &s2, &p3, NULL, 0, &e);
    CHECK(rc == 0 && memcmp(&p1.b, &p3.b, sizeof(p1.b)) != 0, "another s gives another pi_b");

    czk_bn254_fr_from_mont(&r_std, &r);
    czk_bn254_fr_from_mont(&s_std, &s);
    {
        czk_bn254_g1_aff pa;
        czk_bn254_g2_aff pb;
        naive_g1(&pa, &z.bn.alpha1, z.bn.a, w.w_bn, z.n_vars, &z.bn.delta1, &r_std);
        naive_g2(&pb, &z.bn.beta2, z.bn.b2, w.w_bn, z.n_vars, &z.bn.delta2, &s_std);
        CHECK(czk_bn254_g1_aff_eq(&pa, &p1.a), "pi_a differs from alpha1 + A.w + r delta1 computed naively");
        CHECK(czk_bn254_g2_aff_eq(&pb, &p1.b), "pi_b differs from beta2 + B2.w + s delta2 computed naively");
    }

    /* the pairing check under snarkjs' verification key and czk's */
    snprintf(path[2], sizeof(path[2]), "%s/verification_key.json", argv[1]);
    CHECK(czk_json_bn254_vk_read(&vk_sj, path[2], &e) == 0, "%s", e.msg);
    CHECK(czk_groth16_bn254_vk_from_zkey(&vk_cz, &z, &e) == 0, "%s", e.msg);
    CHECK(czk_bn254_fp12_eq(&vk_sj.alphabeta, &vk_cz.alphabeta), "vk_alphabeta_12 differs from snarkjs'");
    CHECK(czk_groth16_bn254_verify(&vk_sj, &p1, pub, z.n_public, &e) == 0, "snarkjs key: %s", e.msg);
    CHECK(czk_groth16_bn254_verify(&vk_cz, &p1, pub, z.n_public, &e) == 0, "czk key: %s", e.msg);
    CHECK(czk_groth16_bn254_verify(&vk_sj, &p3, pub, z.n_public, &e) == 0, "second s: %s", e.msg);
    p2 = p1;
    czk_bn254_g1_aff_neg(&p2.c, &p2.c);
    CHECK(czk_groth16_bn254_verify(&vk_sj, &p2, pub, z.n_public, &e) == -EBADMSG, "negated pi_c accepted");
    if (z.n_public) {
        size_t i = t_rand64() % z.n_public;
        czk_bn254_fr one = {{1, 0, 0, 0}}, old = pub[i];
        czk_bn254_fr_add(&pub[i], &pub[i], &one); /* standard-form + 1 (below r: the fixture's values are small) */
        CHECK(czk_groth16_bn254_verify(&vk_sj, &p1, pub, z.n_public, &e) == -EBADMSG,
              "public signal %zu + 1 accepted", i);
        pub[i] = old;
    }

    /* a BLS12-381 witness for this key */
    if (argc > 2) {
        czk_wtns wb;
        CHECK(czk_wtns_open_curves(&wb, argv[2], CZK_CURVES_ALL, &e) == 0, "%s", e.msg);
        rc = czk_groth16_check_witness(&z, path[0], &wb, argv[2], &e);
        CHECK(rc == -EINVAL && strstr(e.msg, path[0]) && strstr(e.msg, argv[2]) && strstr(e.msg, "BN254") &&
                  strstr(e.msg, "BLS12-381"),
              "wrong-curve witness: rc %d \"%s\"", rc, e.msg);
        czk_wtns_close(&wb);
    }

    czk_groth16_bn254_vk_free(&vk_sj);
    czk_groth16_bn254_vk_free(&vk_cz);
    free(pub);
    czk_r1cs_close(&r1cs);
    czk_wtns_close(&w);
    czk_zkey_close(&z);
    mpz_clear(g_r);
    if (t_failures) {
        fprintf(stderr, "%d check(s) failed\n", t_failures);
        return 1;
    }
    printf("PASS %s\n", argv[1]);
    return 0;
}
