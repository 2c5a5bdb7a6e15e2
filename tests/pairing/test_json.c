/*
 * test_json.c — the snarkjs JSON readers on malformed input and the writers
 * on edge cases, without fixtures: a valid proof / public / vk text is made
 * from random points with the writers, then mutated one field at a time with
 * jansson; each mutation must give -EINVAL with a message naming the field.
 * Also: infinity ["0","1","0"] round trips, the 2-element affine form is
 * accepted, points on the curve but outside the subgroup are rejected (G1
 * and G2), and a real bn128 verification key is rejected by its curve field.
 */
#include <errno.h>
#include <jansson.h>
#include <sys/stat.h>

#include "common/groth16/json.h"
#include "pt_util.h"

#define Q_DEC "4002409555221667393417789825735904156556882819939007885332058136124031650490837864442687629129015664037894272559787"
#define R_DEC "52435875175521478286361004658787426549025467963815546656624069043513313456129"

enum kind { PROOF, PUBLIC, VK };
static const char *kind_name[] = {"proof.json", "public.json", "verification_key.json"};

static int parse(enum kind k, const char *text, czk_error *e)
{
    int rc;
    if (k == PROOF) {
        czk_groth16_proof p;
        rc = czk_json_proof_parse(&p, text, strlen(text), kind_name[k], e);
    } else if (k == PUBLIC) {
        czk_fr *pub = NULL;
        size_t n = 0;
        rc = czk_json_public_parse(&pub, &n, text, strlen(text), kind_name[k], e);
        free(pub);
    } else {
        czk_groth16_vk vk = {0};
        rc = czk_json_vk_parse(&vk, text, strlen(text), kind_name[k], e);
        czk_groth16_vk_free(&vk);
    }
    return rc;
}

static int n_cases;

/* root is consumed */
static void expect_err(enum kind k, json_t *root, const char *frag, const char *what)
{
    czk_error e = {0};
    char *text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    int rc = parse(k, text, &e);
    n_cases++;
    CHECK(rc == -EINVAL, "%s: %s must be rejected with -EINVAL (rc %d, msg \"%s\")", kind_name[k], what, rc, e.msg);
    CHECK(rc != 0 && strstr(e.msg, frag) != NULL, "%s: %s: message \"%s\" must mention \"%s\"", kind_name[k], what,
          e.msg, frag);
    free(text);
    json_decref(root);
}

static void expect_err_text(enum kind k, const char *text, const char *frag, const char *what)
{
    czk_error e = {0};
    int rc = parse(k, text, &e);
    n_cases++;
    CHECK(rc == -EINVAL && strstr(e.msg, frag) != NULL, "%s: %s: rc %d msg \"%s\" (want -EINVAL mentioning \"%s\")",
          kind_name[k], what, rc, e.msg, frag);
}

static json_t *load(const char *text)
{
    json_t *r = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!r) {
        fprintf(stderr, "writer output is not JSON\n");
        exit(1);
    }
    return r;
}

/* a point on E(Fp) that is (almost surely) outside G1 */
static void off_subgroup_g1(czk_g1_aff *p)
{
    for (;;) {
        czk_fp t, four;
        pt_rand_fp(&p->x);
        czk_fp_sqr(&t, &p->x);
        czk_fp_mul(&t, &t, &p->x);
        czk_fp_from_u64(&four, 4);
        czk_fp_add(&t, &t, &four);
        if (czk_fp_sqrt(&p->y, &t) == 0 && czk_g1_aff_on_curve(p) && !czk_g1_aff_in_subgroup(p))
            return;
    }
}

static void off_subgroup_g2(czk_g2_aff *p)
{
    for (;;) {
        czk_fp2 t, b;
        pt_rand_fp2(&p->x);
        czk_fp2_sqr(&t, &p->x);
        czk_fp2_mul(&t, &t, &p->x);
        czk_fp_from_u64(&b.c0, 4);
        czk_fp_from_u64(&b.c1, 4);
        czk_fp2_add(&t, &t, &b);
        if (czk_fp2_sqrt(&p->y, &t) == 0 && czk_g2_aff_on_curve(p) && !czk_g2_aff_in_subgroup(p))
            return;
    }
}

static json_t *jstr(const char *s) { return json_string(s); }

int main(void)
{
    czk_groth16_proof proof, back;
    czk_groth16_vk vk = {0};
    czk_g1 t1;
    czk_g2 t2;
    czk_fr k, pub[3];
    czk_error e = {0};
    char *ptext, *pubtext, *vktext;
    json_t *r;

    t_seed("test_json");

    /* valid objects from random points */
    pt_rand_scalar(&k);
    czk_g1_mul_aff(&t1, &CZK_G1_GEN, &k);
    czk_g1_to_aff(&proof.a, &t1);
    pt_rand_scalar(&k);
    czk_g2_mul_aff(&t2, &CZK_G2_GEN, &k);
    czk_g2_to_aff(&proof.b, &t2);
    pt_rand_scalar(&k);
    czk_g1_mul_aff(&t1, &CZK_G1_GEN, &k);
    czk_g1_to_aff(&proof.c, &t1);
    for (int i = 0; i < 3; i++)
        pt_rand_scalar(&pub[i]);
    pub[2].l[0] = 7, pub[2].l[1] = pub[2].l[2] = pub[2].l[3] = 0;

    vk.n_public = 2;
    vk.alpha1 = proof.a;
    vk.beta2 = proof.b;
    vk.gamma2 = CZK_G2_GEN;
    vk.delta2 = proof.b;
    czk_pairing(&vk.alphabeta, &vk.alpha1, &vk.beta2);
    vk.ic = malloc(3 * sizeof(czk_g1_aff));
    vk.ic[0] = proof.c;
    vk.ic[1] = CZK_G1_GEN;
    memset(&vk.ic[2], 0, sizeof(vk.ic[2])); /* infinity is a valid IC point */

    ptext = czk_json_proof_dump(&proof);
    pubtext = czk_json_public_dump(pub, 3);
    vktext = czk_json_vk_dump(&vk);
    CHECK(ptext && pubtext && vktext, "writers produce text");

    /* the valid texts parse back to the same values */
    CHECK(czk_json_proof_parse(&back, ptext, strlen(ptext), "p", &e) == 0, "valid proof parses: %s", e.msg);
    CHECK(czk_g1_aff_eq(&back.a, &proof.a) && czk_g2_aff_eq(&back.b, &proof.b) && czk_g1_aff_eq(&back.c, &proof.c),
          "proof round trip");
    {
        czk_fr *pb = NULL;
        size_t n = 0;
        CHECK(czk_json_public_parse(&pb, &n, pubtext, strlen(pubtext), "p", &e) == 0, "public parses: %s", e.msg);
        CHECK(n == 3 && pb && memcmp(pb, pub, sizeof(pub)) == 0, "public round trip (standard form)");
        free(pb);
        CHECK(strstr(pubtext, "\"7\"") != NULL, "public signal 7 is written as \"7\"");
    }
    {
        czk_groth16_vk v2 = {0};
        CHECK(czk_json_vk_parse(&v2, vktext, strlen(vktext), "v", &e) == 0, "vk parses: %s", e.msg);
        CHECK(v2.n_public == 2 && czk_fp12_eq(&v2.alphabeta, &vk.alphabeta) && czk_g1_aff_is_inf(&v2.ic[2]) &&
                  czk_g1_aff_eq(&v2.ic[0], &vk.ic[0]) && czk_g2_aff_eq(&v2.gamma2, &CZK_G2_GEN),
              "vk round trip incl. an infinity IC point");
        czk_groth16_vk_free(&v2);
        CHECK(strstr(vktext, "[\n   \"0\",\n   \"1\",\n   \"0\"\n  ]") != NULL, "infinity written as [\"0\",\"1\",\"0\"]");
    }
    /* infinity in a proof, and the 2-element affine form */
    {
        czk_groth16_proof inf = proof;
        char *t;
        memset(&inf.a, 0, sizeof(inf.a));
        memset(&inf.b, 0, sizeof(inf.b));
        t = czk_json_proof_dump(&inf);
        CHECK(t && czk_json_proof_parse(&back, t, strlen(t), "p", &e) == 0 && czk_g1_aff_is_inf(&back.a) &&
                  czk_g2_aff_is_inf(&back.b),
              "infinity proof points round trip: %s", e.msg);
        free(t);
        r = load(ptext);
        json_array_remove(json_object_get(r, "pi_a"), 2);
        json_array_remove(json_object_get(r, "pi_b"), 2);
        t = json_dumps(r, 0);
        CHECK(czk_json_proof_parse(&back, t, strlen(t), "p", &e) == 0 && czk_g1_aff_eq(&back.a, &proof.a) &&
                  czk_g2_aff_eq(&back.b, &proof.b),
              "2-element affine points accepted: %s", e.msg);
        free(t);
        json_decref(r);
    }

    /* ---- proof.json ---- */
    expect_err_text(PROOF, "{\"pi_a\": [", "invalid JSON", "truncated text");
    expect_err_text(PROOF, "", "invalid JSON", "empty text");
    expect_err_text(PROOF, "[1, 2]", "top level", "array at the top level");
    r = load(ptext); json_object_del(r, "protocol"); expect_err(PROOF, r, "protocol", "missing protocol");
    r = load(ptext); json_object_set_new(r, "protocol", jstr("plonk")); expect_err(PROOF, r, "protocol", "protocol plonk");
    r = load(ptext); json_object_set_new(r, "protocol", json_integer(1)); expect_err(PROOF, r, "protocol", "protocol number");
    r = load(ptext); json_object_set_new(r, "curve", jstr("bn128")); expect_err(PROOF, r, "curve", "curve bn128");
    r = load(ptext); json_object_del(r, "pi_a"); expect_err(PROOF, r, "pi_a: missing", "missing pi_a");
    r = load(ptext); json_object_set_new(r, "pi_c", jstr("1")); expect_err(PROOF, r, "pi_c: expected an array", "pi_c string");
    r = load(ptext); json_array_append_new(json_object_get(r, "pi_a"), jstr("1")); expect_err(PROOF, r, "pi_a", "pi_a of 4");
    r = load(ptext); json_array_clear(json_object_get(r, "pi_a")); expect_err(PROOF, r, "pi_a", "pi_a empty");
    r = load(ptext); json_array_set_new(json_object_get(r, "pi_a"), 0, json_integer(5)); expect_err(PROOF, r, "pi_a[0]", "coordinate as number");
    r = load(ptext); json_array_set_new(json_object_get(r, "pi_a"), 1, jstr("12a")); expect_err(PROOF, r, "pi_a[1]", "non-decimal");
    r = load(ptext); json_array_set_new(json_object_get(r, "pi_a"), 1, jstr("")); expect_err(PROOF, r, "pi_a[1]", "empty string");
    r = load(ptext); json_array_set_new(json_object_get(r, "pi_a"), 1, jstr("-1")); expect_err(PROOF, r, "pi_a[1]", "negative");
    r = load(ptext); json_array_set_new(json_object_get(r, "pi_a"), 1, jstr("0x10")); expect_err(PROOF, r, "pi_a[1]", "hex");
    r = load(ptext); json_array_set_new(json_object_get(r, "pi_a"), 0, jstr(Q_DEC)); expect_err(PROOF, r, "pi_a[0]: coordinate is not below", "x == q");
    r = load(ptext); json_array_set_new(json_object_get(r, "pi_a"), 2, jstr("2")); expect_err(PROOF, r, "pi_a", "z == 2");
    r = load(ptext); json_array_set_new(json_object_get(r, "pi_a"), 2, jstr("0")); expect_err(PROOF, r, "pi_a", "z == 0, not infinity");
    {
        czk_groth16_proof bad = proof;
        char *t;
        czk_fp_add(&bad.a.y, &bad.a.y, &CZK_FP_ONE);
        t = czk_json_proof_dump(&bad);
        expect_err_text(PROOF, t, "pi_a: point is not on the curve", "pi_a off the curve");
        free(t);
        bad = proof;
        memset(&bad.c, 0, sizeof(bad.c));
        t = czk_json_proof_dump(&bad);
        r = load(t);
        json_array_set_new(json_object_get(r, "pi_c"), 1, jstr("0"));
        json_array_set_new(json_object_get(r, "pi_c"), 2, jstr("1"));
        expect_err(PROOF, r, "pi_c: point is not on the curve", "(0, 0) affine");
        free(t);
        bad = proof;
        off_subgroup_g1(&bad.c);
        t = czk_json_proof_dump(&bad);
        expect_err_text(PROOF, t, "pi_c: point is not in the order-r subgroup", "pi_c outside G1");
        free(t);
        bad = proof;
        off_subgroup_g2(&bad.b);
        t = czk_json_proof_dump(&bad);
        expect_err_text(PROOF, t, "pi_b: point is not in the order-r subgroup", "pi_b outside G2");
        free(t);
        bad = proof;
        czk_fp_add(&bad.b.y.c1, &bad.b.y.c1, &CZK_FP_ONE);
        t = czk_json_proof_dump(&bad);
        expect_err_text(PROOF, t, "pi_b: point is not on the curve", "pi_b off the curve");
        free(t);
    }
    r = load(ptext); json_array_set_new(json_object_get(r, "pi_b"), 0, jstr("1")); expect_err(PROOF, r, "pi_b[0]", "pi_b[0] string");
    r = load(ptext); json_array_remove(json_array_get(json_object_get(r, "pi_b"), 1), 1); expect_err(PROOF, r, "pi_b[1]", "pi_b[1] of 1");
    r = load(ptext); json_array_set_new(json_array_get(json_object_get(r, "pi_b"), 1), 1, jstr(Q_DEC)); expect_err(PROOF, r, "pi_b[1][1]", "pi_b y.c1 == q");
    r = load(ptext); json_array_set_new(json_array_get(json_object_get(r, "pi_b"), 2), 1, jstr("1")); expect_err(PROOF, r, "pi_b", "pi_b z = 1 + u");
    expect_err_text(PROOF, "{\"protocol\": \"groth16\", \"protocol\": \"groth16\"}", "invalid JSON", "duplicate key");

    /* ---- public.json ---- */
    expect_err_text(PUBLIC, "{\"a\": 1}", "expected an array", "object instead of array");
    expect_err_text(PUBLIC, "[\"1\", 2]", "[1]", "number element");
    expect_err_text(PUBLIC, "[\"1\", \"x\"]", "[1]: not a decimal", "non-decimal element");
    expect_err_text(PUBLIC, "[\"" R_DEC "\"]", "[0]: value is not below", "signal == r");
    expect_err_text(PUBLIC, "[[\"1\"]]", "[0]", "nested array");
    {
        czk_fr *pb = (czk_fr *)1;
        size_t n = 5;
        CHECK(czk_json_public_parse(&pb, &n, "[]", 2, "p", &e) == 0 && n == 0, "empty public.json is valid");
    }

    /* ---- verification_key.json ---- */
    r = load(vktext); json_object_set_new(r, "curve", jstr("bn128")); expect_err(VK, r, "curve", "curve bn128");
    r = load(vktext); json_object_del(r, "curve"); expect_err(VK, r, "curve: missing", "missing curve");
    r = load(vktext); json_object_set_new(r, "protocol", jstr("fflonk")); expect_err(VK, r, "protocol", "protocol fflonk");
    r = load(vktext); json_object_set_new(r, "nPublic", jstr("2")); expect_err(VK, r, "nPublic", "nPublic string");
    r = load(vktext); json_object_set_new(r, "nPublic", json_integer(-1)); expect_err(VK, r, "nPublic", "nPublic -1");
    r = load(vktext); json_object_set_new(r, "nPublic", json_integer(3)); expect_err(VK, r, "IC", "nPublic != IC - 1");
    r = load(vktext); json_object_del(r, "IC"); expect_err(VK, r, "IC: missing", "missing IC");
    r = load(vktext); json_array_set_new(json_object_get(r, "IC"), 1, jstr("5")); expect_err(VK, r, "IC[1]", "IC[1] string");
    r = load(vktext); json_object_del(r, "vk_gamma_2"); expect_err(VK, r, "vk_gamma_2: missing", "missing gamma2");
    r = load(vktext); json_array_set_new(json_object_get(r, "vk_delta_2"), 0, jstr("1")); expect_err(VK, r, "vk_delta_2[0]", "delta2 shape");
    r = load(vktext); json_array_remove(json_object_get(r, "vk_alphabeta_12"), 1); expect_err(VK, r, "vk_alphabeta_12", "alphabeta [1]");
    r = load(vktext); json_array_remove(json_array_get(json_object_get(r, "vk_alphabeta_12"), 1), 2); expect_err(VK, r, "vk_alphabeta_12[1]", "alphabeta [2][2]");
    r = load(vktext);
    json_array_set_new(json_array_get(json_array_get(json_object_get(r, "vk_alphabeta_12"), 0), 2), 1, jstr(Q_DEC));
    expect_err(VK, r, "vk_alphabeta_12[0][2][1]", "alphabeta value == q");
    {
        czk_groth16_vk bad = vk;
        czk_g1_aff ic[3];
        char *t;
        memcpy(ic, vk.ic, sizeof(ic));
        bad.ic = ic;
        off_subgroup_g1(&ic[1]);
        t = czk_json_vk_dump(&bad);
        expect_err_text(VK, t, "IC[1]: point is not in the order-r subgroup", "IC[1] outside G1");
        free(t);
        bad.ic = vk.ic;
        off_subgroup_g2(&bad.gamma2);
        t = czk_json_vk_dump(&bad);
        expect_err_text(VK, t, "vk_gamma_2: point is not in the order-r subgroup", "gamma2 outside G2");
        free(t);
    }
    /* a real snarkjs bn128 key: the curve field must stop it */
    {
        char path[600];
        struct stat st;
        snprintf(path, sizeof(path), "%s/tiny_bn128/verification_key.json", pt_fixture_dir());
        if (stat(path, &st) == 0) {
            czk_groth16_vk v2 = {0};
            int rc = czk_json_vk_read(&v2, path, &e);
            n_cases++;
            CHECK(rc == -EINVAL && strstr(e.msg, "curve") && strstr(e.msg, "bn128"), "bn128 vk rejected: rc %d %s", rc,
                  e.msg);
            czk_groth16_vk_free(&v2);
        }
    }
    /* files */
    {
        czk_groth16_vk v2 = {0};
        int rc = czk_json_vk_read(&v2, "/nonexistent/czk/verification_key.json", &e);
        CHECK(rc == -ENOENT && strstr(e.msg, "/nonexistent/czk/verification_key.json"), "missing file: rc %d %s", rc,
              e.msg);
    }

    free(ptext);
    free(pubtext);
    free(vktext);
    czk_groth16_vk_free(&vk);
    if (t_failures) {
        fprintf(stderr, "test_json: %d checks failed (%d malformed cases)\n", t_failures, n_cases);
        return 1;
    }
    fprintf(stderr, "test_json: ok (%d malformed cases rejected with the field named)\n", n_cases);
    return 0;
}
