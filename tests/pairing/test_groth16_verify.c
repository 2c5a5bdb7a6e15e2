/*
 * test_groth16_verify.c — the verifier and the JSON files against real
 * snarkjs output (tests/fixtures/<name>/, BLS12-381 fixtures made by
 * snarkjs 0.7.6): for each fixture
 *   - e(alpha1, beta2) == vk_alphabeta_12 of verification_key.json;
 *   - the key derived from circuit.zkey equals verification_key.json
 *     (alpha1, beta2, gamma2, delta2, IC, alphabeta);
 *   - czk_groth16_verify accepts proof.json + public.json and rejects them
 *     with a changed public signal, with each proof point changed, with a
 *     swapped pi_a/pi_c, and with the wrong signal count;
 *   - writers reproduce snarkjs' files byte for byte, and write/read round
 *     trips through files.
 * Skips (77) when no fixture is present.
 */
#include <errno.h>
#include <sys/stat.h>

#include "common/groth16/json.h"
#include "pt_util.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    buf[n] = 0;
    *len = (size_t)n;
    return buf;
}

static bool vk_eq(const czk_groth16_vk *a, const czk_groth16_vk *b)
{
    if (a->n_public != b->n_public || !czk_g1_aff_eq(&a->alpha1, &b->alpha1) ||
        !czk_g2_aff_eq(&a->beta2, &b->beta2) || !czk_g2_aff_eq(&a->gamma2, &b->gamma2) ||
        !czk_g2_aff_eq(&a->delta2, &b->delta2) || !czk_fp12_eq(&a->alphabeta, &b->alphabeta))
        return false;
    for (uint32_t i = 0; i <= a->n_public; i++)
        if (!czk_g1_aff_eq(&a->ic[i], &b->ic[i]))
            return false;
    return true;
}

static void add_g1(czk_g1_aff *r, const czk_g1_aff *a, const czk_g1_aff *b)
{
    czk_g1 t;
    czk_g1_from_aff(&t, a);
    czk_g1_add_aff(&t, &t, b);
    czk_g1_to_aff(r, &t);
}

static void add_g2(czk_g2_aff *r, const czk_g2_aff *a, const czk_g2_aff *b)
{
    czk_g2 t;
    czk_g2_from_aff(&t, a);
    czk_g2_add_aff(&t, &t, b);
    czk_g2_to_aff(r, &t);
}

static int text_eq_file(const char *text, const char *path)
{
    size_t n;
    char *f = slurp(path, &n);
    int ok = f && strlen(text) == n && memcmp(text, f, n) == 0;
    if (f && !ok)
        fprintf(stderr, "--- ours ---\n%.300s\n--- %s ---\n%.300s\n", text, path, f);
    free(f);
    return ok;
}

static int run_fixture(const char *dir, const char *tmpdir)
{
    char pvk[1024], pproof[1024], ppub[1024], pzkey[1024], tmp[1024];
    czk_groth16_vk vk = {0}, vk2 = {0}, vkz = {0};
    czk_groth16_proof proof, proof2, bad;
    czk_fr *pub = NULL, *pub2 = NULL;
    size_t n_pub = 0, n_pub2 = 0;
    czk_error e = {0};
    czk_zkey z;
    czk_fp12 ab;
    char *text;
    int rc;

    snprintf(pvk, sizeof(pvk), "%s/verification_key.json", dir);
    snprintf(pproof, sizeof(pproof), "%s/proof.json", dir);
    snprintf(ppub, sizeof(ppub), "%s/public.json", dir);
    snprintf(pzkey, sizeof(pzkey), "%s/circuit.zkey", dir);

    rc = czk_json_vk_read(&vk, pvk, &e);
    CHECK(rc == 0, "read %s: %s", pvk, e.msg);
    rc = czk_json_proof_read(&proof, pproof, &e);
    CHECK(rc == 0, "read %s: %s", pproof, e.msg);
    rc = czk_json_public_read(&pub, &n_pub, ppub, &e);
    CHECK(rc == 0, "read %s: %s", ppub, e.msg);
    if (t_failures)
        goto out;
    fprintf(stderr, "%s: nPublic %u\n", dir, vk.n_public);

    /* alphabeta */
    czk_pairing(&ab, &vk.alpha1, &vk.beta2);
    CHECK(czk_fp12_eq(&ab, &vk.alphabeta), "%s: e(alpha1, beta2) == vk_alphabeta_12", dir);

    /* vk from the zkey */
    rc = czk_zkey_open(&z, pzkey, &e);
    if (rc == 0) {
        rc = czk_groth16_vk_from_zkey(&vkz, &z, &e);
        CHECK(rc == 0, "vk from zkey: %s", e.msg);
        CHECK(rc == 0 && vk_eq(&vkz, &vk), "%s: vk from circuit.zkey == verification_key.json", dir);
        czk_zkey_close(&z);
        czk_groth16_vk_free(&vkz);
    } else {
        CHECK(0, "open %s: %s", pzkey, e.msg);
    }

    /* accept */
    rc = czk_groth16_verify(&vk, &proof, pub, n_pub, &e);
    CHECK(rc == 0, "%s: snarkjs proof verifies (rc %d: %s)", dir, rc, e.msg);

    /* reject: each public signal changed by +1 (mod r) */
    for (size_t i = 0; i < n_pub; i++) {
        czk_fr saved = pub[i], one_m, m;
        czk_fr_to_mont(&m, &pub[i]);
        czk_fr_from_u64(&one_m, 1);
        czk_fr_add(&m, &m, &one_m);
        czk_fr_from_mont(&pub[i], &m);
        rc = czk_groth16_verify(&vk, &proof, pub, n_pub, &e);
        CHECK(rc == -EBADMSG, "%s: changed public signal %zu must be rejected (rc %d)", dir, i, rc);
        pub[i] = saved;
    }
    /* reject: public signal >= r, wrong count */
    if (n_pub > 0) {
        czk_fr saved = pub[0];
        pub[0] = CZK_FR_MOD;
        rc = czk_groth16_verify(&vk, &proof, pub, n_pub, &e);
        CHECK(rc == -EINVAL, "%s: public signal == r must be an input error (rc %d)", dir, rc);
        pub[0] = saved;
        rc = czk_groth16_verify(&vk, &proof, pub, n_pub - 1, &e);
        CHECK(rc == -EINVAL, "%s: too few public signals must be an input error (rc %d)", dir, rc);
    }
    /* reject: changed proof points (still valid group elements) */
    bad = proof;
    add_g1(&bad.a, &proof.a, &CZK_G1_GEN);
    CHECK(czk_groth16_verify(&vk, &bad, pub, n_pub, &e) == -EBADMSG, "%s: pi_a + G1 rejected", dir);
    bad = proof;
    add_g2(&bad.b, &proof.b, &CZK_G2_GEN);
    CHECK(czk_groth16_verify(&vk, &bad, pub, n_pub, &e) == -EBADMSG, "%s: pi_b + G2 rejected", dir);
    bad = proof;
    add_g1(&bad.c, &proof.c, &CZK_G1_GEN);
    CHECK(czk_groth16_verify(&vk, &bad, pub, n_pub, &e) == -EBADMSG, "%s: pi_c + G1 rejected", dir);
    bad = proof;
    bad.a = proof.c;
    bad.c = proof.a;
    CHECK(czk_groth16_verify(&vk, &bad, pub, n_pub, &e) == -EBADMSG, "%s: swapped pi_a/pi_c rejected", dir);
    bad = proof;
    czk_fp_add(&bad.c.y, &bad.c.y, &CZK_FP_ONE); /* off the curve */
    rc = czk_groth16_verify(&vk, &bad, pub, n_pub, &e);
    CHECK(rc == -EBADMSG && strstr(e.msg, "pi_c"), "%s: pi_c off the curve rejected (rc %d: %s)", dir, rc, e.msg);

    /* writers reproduce snarkjs byte for byte */
    text = czk_json_proof_dump(&proof);
    CHECK(text && text_eq_file(text, pproof), "%s: proof dump == proof.json", dir);
    free(text);
    text = czk_json_public_dump(pub, n_pub);
    CHECK(text && text_eq_file(text, ppub), "%s: public dump == public.json", dir);
    free(text);
    text = czk_json_vk_dump(&vk);
    CHECK(text && text_eq_file(text, pvk), "%s: vk dump == verification_key.json", dir);
    free(text);

    /* file round trips */
    snprintf(tmp, sizeof(tmp), "%s/vk.json", tmpdir);
    CHECK(czk_json_vk_write(tmp, &vk, &e) == 0, "vk write: %s", e.msg);
    CHECK(czk_json_vk_read(&vk2, tmp, &e) == 0 && vk_eq(&vk, &vk2), "vk round trip: %s", e.msg);
    snprintf(tmp, sizeof(tmp), "%s/proof.json", tmpdir);
    CHECK(czk_json_proof_write(tmp, &proof, &e) == 0, "proof write: %s", e.msg);
    CHECK(czk_json_proof_read(&proof2, tmp, &e) == 0 && czk_g1_aff_eq(&proof.a, &proof2.a) &&
              czk_g2_aff_eq(&proof.b, &proof2.b) && czk_g1_aff_eq(&proof.c, &proof2.c),
          "proof round trip: %s", e.msg);
    snprintf(tmp, sizeof(tmp), "%s/public.json", tmpdir);
    CHECK(czk_json_public_write(tmp, pub, n_pub, &e) == 0, "public write: %s", e.msg);
    CHECK(czk_json_public_read(&pub2, &n_pub2, tmp, &e) == 0 && n_pub2 == n_pub &&
              (n_pub == 0 || memcmp(pub, pub2, n_pub * sizeof(czk_fr)) == 0),
          "public round trip: %s", e.msg);

out:
    czk_groth16_vk_free(&vk);
    czk_groth16_vk_free(&vk2);
    free(pub);
    free(pub2);
    return 0;
}

int main(void)
{
    static const char *names[] = {"multi", "linear", "poseidon", "range"};
    const char *fx = pt_fixture_dir();
    char dir[512], tmpdir[] = "/tmp/czk-test-verify-XXXXXX";
    int found = 0;

    t_seed("test_groth16_verify");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        struct stat st;
        snprintf(dir, sizeof(dir), "%s/%s", fx, names[i]);
        char vkp[600];
        snprintf(vkp, sizeof(vkp), "%s/verification_key.json", dir);
        if (stat(vkp, &st) != 0)
            continue;
        found++;
        run_fixture(dir, tmpdir);
    }
    {
        char p[600];
        static const char *files[] = {"vk.json", "proof.json", "public.json"};
        for (int i = 0; i < 3; i++) {
            snprintf(p, sizeof(p), "%s/%s", tmpdir, files[i]);
            unlink(p);
        }
        rmdir(tmpdir);
    }
    if (!found) {
        fprintf(stderr, "test_groth16_verify: no BLS12-381 fixtures under %s, skipping\n", fx);
        return 77;
    }
    if (t_failures) {
        fprintf(stderr, "test_groth16_verify: %d checks failed\n", t_failures);
        return 1;
    }
    fprintf(stderr, "test_groth16_verify: ok (%d fixtures)\n", found);
    return 0;
}
