/*
 * test_roundtrip.c — write-then-read with random data for the three writers:
 * czk_wtns_write, the streaming czk_r1cs_writer and czk_zkey_write.  What is
 * read back must equal what was written, field by field; writers must refuse
 * invalid input with a message, leave no temp file behind, and never replace
 * an existing file when they fail (atomic rename).
 *
 * usage: test_roundtrip [seed]
 */
#include "tests/formats/fmt_test.h"

#include <dirent.h>
#include <time.h>
#include <sys/stat.h>

static char dir[4096];
static uint64_t rng;

static void rand_fr(czk_fr *r)
{
    /* a uniformly random value < r: Montgomery form of a random element */
    if (czk_fr_random(r)) {
        fprintf(stderr, "czk_fr_random failed\n");
        exit(2);
    }
}

static unsigned count_dir_entries(void)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    unsigned n = 0;

    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

/* patch `len` bytes at `off` of the file at path */
static void patch_file(const char *path, long off, const void *bytes, size_t len)
{
    FILE *f = fopen(path, "r+b");
    CHECK(f && fseek(f, off, SEEK_SET) == 0 && fwrite(bytes, 1, len, f) == len, "patching %s", path);
    if (f)
        fclose(f);
}

/*
 * czk_wtns_open_header + czk_wtns_load_into (the synthesizer's path): the
 * values land in the caller's buffer, equal to what was written; a buffer
 * too small or misaligned, a second load, a value >= r and w[0] != 1 are
 * refused naming the file; the file at path is left as written.
 */
static void test_wtns_into(const char *path, const czk_fr *w, uint32_t n)
{
    const long sec2 = 76; /* 12-byte container header, section 1 (12 + 40 bytes), section 2's 12 */
    uint8_t *buf = aligned_alloc(64, ((size_t)n * 32 + 127) & ~(size_t)63);
    char bad_path[4300];
    czk_error e = {0};
    czk_wtns rd;
    fmt_buf orig = fmt_read_file(path);
    FILE *f;
    int rc;

    rc = czk_wtns_open_header(&rd, path, CZK_CURVES_ALL, &e);
    CHECK(rc == 0 && rd.n_witness == n && rd.w == NULL && rd.curve == CZK_CURVE_BLS12_381, "header: %d %s", rc,
          e.msg);
    if (!rc) {
        rc = czk_wtns_load_into(&rd, buf, (size_t)n * 32 - 1, path, &e);
        CHECK(rc == -EINVAL && strstr(e.msg, path) && rd.w == NULL, "short buffer refused: %d %s", rc, e.msg);
        rc = czk_wtns_load_into(&rd, buf + 4, (size_t)n * 32, path, &e);
        CHECK(rc == -EINVAL && rd.w == NULL, "misaligned buffer refused: %d %s", rc, e.msg);
        memset(buf, 0xa5, (size_t)n * 32 + 64);
        rc = czk_wtns_load_into(&rd, buf, (size_t)n * 32, path, &e);
        CHECK(rc == 0 && rd.w == (const czk_fr *)buf && !memcmp(buf, w, (size_t)n * 32), "load_into: %d %s", rc,
              e.msg);
        CHECK(buf[(size_t)n * 32] == 0xa5, "load_into wrote past the values");
        rc = czk_wtns_load_into(&rd, buf, (size_t)n * 32, path, &e);
        CHECK(rc == -EINVAL, "second load refused: %d", rc);
        czk_wtns_close(&rd);
        CHECK(buf[0] == 1 && !memcmp(buf, w, 32), "close left the caller's buffer alone");
    }
    /* a value >= r, then w[0] = 2: the header still opens, the values are refused */
    snprintf(bad_path, sizeof(bad_path), "%s.bad", path);
    f = fopen(bad_path, "wb");
    CHECK(f && fwrite(orig.p, 1, orig.n, f) == orig.n, "copy %s", bad_path);
    if (f)
        fclose(f);
    {
        uint32_t k = n - 1;
        uint8_t ff[32];
        memset(ff, 0xff, sizeof(ff));
        patch_file(bad_path, sec2 + 32L * k, ff, sizeof(ff));
        rc = czk_wtns_open_header(&rd, bad_path, CZK_CURVES_ALL, &e);
        CHECK(rc == 0, "header of the patched file: %s", e.msg);
        if (!rc) {
            char want[64];
            snprintf(want, sizeof(want), "value %u is not below r", k);
            rc = czk_wtns_load_into(&rd, buf, (size_t)n * 32, bad_path, &e);
            CHECK(rc == -EINVAL && strstr(e.msg, bad_path) && strstr(e.msg, k ? want : "not below r"),
                  "value >= r refused: %d %s", rc, e.msg);
            czk_wtns_close(&rd);
        }
        if (k) {
            uint8_t two = 2;
            patch_file(bad_path, sec2 + 32L * k, w[k].l, 32);
            patch_file(bad_path, sec2, &two, 1);
            rc = czk_wtns_open_header(&rd, bad_path, CZK_CURVES_ALL, &e);
            if (!rc) {
                rc = czk_wtns_load_into(&rd, buf, (size_t)n * 32, bad_path, &e);
                CHECK(rc == -EINVAL && strstr(e.msg, "w[0] is not 1"), "w[0] = 2 refused: %d %s", rc, e.msg);
                czk_wtns_close(&rd);
            }
        }
    }
    unlink(bad_path);
    free(orig.p);
    free(buf);
}

static void test_wtns(int round)
{
    char path[4200];
    uint32_t n = 1 + (uint32_t)(t_splitmix(&rng) % 300);
    czk_fr *w = aligned_alloc(64, ((size_t)n * 32 + 63) & ~(size_t)63);
    czk_error e = {0};
    czk_wtns rd;
    int rc;

    snprintf(path, sizeof(path), "%s/w%d.wtns", dir, round);
    memset(w, 0, (size_t)n * 32);
    w[0].l[0] = 1;
    for (uint32_t i = 1; i < n; i++)
        rand_fr(&w[i]);
    if (n > 2) {
        w[1] = CZK_FR_MOD;
        w[1].l[0] -= 1; /* r - 1: largest valid value */
        memset(&w[2], 0, 32);
    }
    rc = czk_wtns_write(path, w, n, &e);
    CHECK(rc == 0, "wtns write: %s", e.msg);
    rc = czk_wtns_open(&rd, path, &e);
    CHECK(rc == 0, "wtns read: %s", e.msg);
    if (!rc) {
        CHECK(rd.n_witness == n, "wtns n %u vs %u", rd.n_witness, n);
        CHECK(memcmp(rd.w, w, (size_t)n * 32) == 0, "wtns values differ");
        czk_wtns_close(&rd);
    }
    test_wtns_into(path, w, n);
    /* refusals leave the existing file alone */
    if (n > 1) {
        fmt_buf before = fmt_read_file(path), after;
        czk_fr save = w[n - 1];
        w[n - 1] = CZK_FR_MOD;
        rc = czk_wtns_write(path, w, n, &e);
        CHECK(rc == -EINVAL && strstr(e.msg, path), "wtns value r refused: %d %s", rc, e.msg);
        w[n - 1] = save;
        w[0].l[0] = 2;
        rc = czk_wtns_write(path, w, n, &e);
        CHECK(rc == -EINVAL && e.msg[0], "wtns w[0] != 1 refused: %d", rc);
        w[0].l[0] = 1;
        after = fmt_read_file(path);
        CHECK(before.n == after.n && !memcmp(before.p, after.p, before.n), "file kept");
        free(before.p);
        free(after.p);
    }
    free(w);
}

struct r1cs_model {
    uint32_t nc;
    czk_r1cs_term *t[3];   /* all terms per matrix, constraint after constraint */
    uint32_t *cnt[3];      /* per constraint term counts */
    uint32_t seen, bad;
    size_t pos[3];
};

static int r1cs_cmp_cb(void *ctx, uint32_t ci, const czk_r1cs_term *a, uint32_t na,
                       const czk_r1cs_term *b, uint32_t nb, const czk_r1cs_term *c, uint32_t nc)
{
    struct r1cs_model *m = ctx;
    const czk_r1cs_term *got[3] = {a, b, c};
    uint32_t n[3] = {na, nb, nc};

    if (ci != m->seen++) {
        m->bad++;
        return 0;
    }
    for (int k = 0; k < 3; k++) {
        if (n[k] != m->cnt[k][ci] ||
            memcmp(got[k], m->t[k] + m->pos[k], (size_t)n[k] * sizeof(czk_r1cs_term)))
            m->bad++;
        m->pos[k] += m->cnt[k][ci];
    }
    return 0;
}

static void test_r1cs(int round)
{
    char path[4200];
    uint32_t pub_out = (uint32_t)(t_splitmix(&rng) % 3), pub_in = (uint32_t)(t_splitmix(&rng) % 3);
    uint32_t prv = (uint32_t)(t_splitmix(&rng) % 3);
    uint32_t nw = 1 + pub_out + pub_in + prv + (uint32_t)(t_splitmix(&rng) % 40);
    struct r1cs_model m = {.nc = (uint32_t)(t_splitmix(&rng) % 60)};
    czk_r1cs_writer *wr;
    czk_error e = {0};
    czk_r1cs rd;
    int rc;

    snprintf(path, sizeof(path), "%s/c%d.r1cs", dir, round);
    for (int k = 0; k < 3; k++) {
        m.t[k] = malloc(sizeof(czk_r1cs_term) * (m.nc * 6 + 1));
        m.cnt[k] = calloc(m.nc + 1, sizeof(uint32_t));
    }
    rc = czk_r1cs_writer_open(&wr, path, nw, pub_out, pub_in, prv, &e);
    CHECK(rc == 0, "r1cs writer open: %s", e.msg);
    if (rc)
        return;
    for (uint32_t ci = 0; ci < m.nc; ci++) {
        const czk_r1cs_term *lc[3];
        for (int k = 0; k < 3; k++) {
            uint32_t n = (uint32_t)(t_splitmix(&rng) % 6);
            czk_r1cs_term *t = m.t[k] + m.pos[k];
            for (uint32_t i = 0; i < n; i++) {
                czk_fr c;
                rand_fr(&c);
                if (t_splitmix(&rng) % 5 == 0)
                    memset(&c, 0, sizeof(c));
                t[i].wire = (uint32_t)(t_splitmix(&rng) % nw);
                memcpy(&t[i].coef, &c, sizeof(c));
            }
            m.cnt[k][ci] = n;
            lc[k] = t;
            m.pos[k] += n;
        }
        rc = czk_r1cs_writer_add(wr, lc[0], m.cnt[0][ci], lc[1], m.cnt[1][ci], lc[2], m.cnt[2][ci]);
        CHECK(rc == 0, "r1cs add %u", ci);
    }
    rc = czk_r1cs_writer_close(wr, &e);
    CHECK(rc == 0, "r1cs close: %s", e.msg);
    rc = czk_r1cs_open(&rd, path, &e);
    CHECK(rc == 0, "r1cs read: %s", e.msg);
    if (!rc) {
        CHECK(rd.n_wires == nw && rd.n_pub_out == pub_out && rd.n_pub_in == pub_in &&
                  rd.n_prv_in == prv && rd.n_constraints == m.nc && rd.n_labels == nw,
              "r1cs header read back differs");
        memset(m.pos, 0, sizeof(m.pos));
        CHECK(czk_r1cs_foreach(&rd, r1cs_cmp_cb, &m) == 0, "foreach");
        CHECK(m.seen == m.nc && m.bad == 0, "r1cs constraints read back differ (%u bad)", m.bad);
        czk_r1cs_close(&rd);
    }
    /* a bad term is reported at close, and the existing file stays */
    {
        fmt_buf before = fmt_read_file(path), after;
        czk_r1cs_term t = {.wire = nw};
        rc = czk_r1cs_writer_open(&wr, path, nw, pub_out, pub_in, prv, &e);
        CHECK(rc == 0, "reopen");
        if (!rc) {
            CHECK(czk_r1cs_writer_add(wr, &t, 1, NULL, 0, NULL, 0) == -EINVAL, "wire refused");
            rc = czk_r1cs_writer_close(wr, &e);
            CHECK(rc == -EINVAL && strstr(e.msg, "wire"), "close reports: %d %s", rc, e.msg);
        }
        after = fmt_read_file(path);
        CHECK(before.n == after.n && !memcmp(before.p, after.p, before.n), "r1cs file kept");
        free(before.p);
        free(after.p);
        rc = czk_r1cs_writer_open(&wr, path, 2, 1, 1, 0, &e);
        CHECK(rc == -EINVAL && e.msg[0], "too few wires refused: %d", rc);
    }
    for (int k = 0; k < 3; k++) {
        free(m.t[k]);
        free(m.cnt[k]);
    }
}

static void rand_g1(czk_g1_aff *p)
{
    czk_fr k, ks;
    czk_g1 j;

    if (t_splitmix(&rng) % 4 == 0) {
        memset(p, 0, sizeof(*p));
        return;
    }
    rand_fr(&k);
    czk_fr_from_mont(&ks, &k);
    czk_g1_mul_aff(&j, &CZK_G1_GEN, &ks);
    czk_g1_to_aff(p, &j);
}

static void rand_g2(czk_g2_aff *p)
{
    czk_fr k, ks;
    czk_g2 j;

    if (t_splitmix(&rng) % 4 == 0) {
        memset(p, 0, sizeof(*p));
        return;
    }
    rand_fr(&k);
    czk_fr_from_mont(&ks, &k);
    czk_g2_mul_aff(&j, &CZK_G2_GEN, &ks);
    czk_g2_to_aff(p, &j);
}

static void test_zkey(int round)
{
    char path[4200];
    czk_zkey_spec s = {0};
    czk_g1_aff *ic, *a, *b1, *c, *h;
    czk_g2_aff *b2;
    czk_zkey_coef *co;
    czk_error e = {0};
    czk_zkey z;
    int rc;

    snprintf(path, sizeof(path), "%s/k%d.zkey", dir, round);
    s.n_public = (uint32_t)(t_splitmix(&rng) % 4);
    s.n_vars = s.n_public + 1 + (uint32_t)(t_splitmix(&rng) % 12);
    s.domain_size = 1u << (3 + t_splitmix(&rng) % 3);
    s.n_coefs = (uint32_t)(t_splitmix(&rng) % 40);
    ic = malloc(sizeof(*ic) * (s.n_public + 1));
    a = malloc(sizeof(*a) * s.n_vars);
    b1 = malloc(sizeof(*b1) * s.n_vars);
    b2 = malloc(sizeof(*b2) * s.n_vars);
    c = malloc(sizeof(*c) * s.n_vars);
    h = malloc(sizeof(*h) * s.domain_size);
    co = malloc(sizeof(*co) * (s.n_coefs + 1));
    rand_g1(&s.alpha1);
    rand_g1(&s.beta1);
    rand_g1(&s.delta1);
    rand_g2(&s.beta2);
    s.gamma2 = CZK_G2_GEN;
    rand_g2(&s.delta2);
    for (uint32_t i = 0; i <= s.n_public; i++)
        rand_g1(&ic[i]);
    for (uint32_t i = 0; i < s.n_vars; i++) {
        rand_g1(&a[i]);
        rand_g1(&b1[i]);
        rand_g2(&b2[i]);
        rand_g1(&c[i]);
    }
    for (uint32_t i = 0; i < s.domain_size; i++)
        rand_g1(&h[i]);
    for (uint32_t i = 0; i < s.n_coefs; i++) {
        czk_fr v;
        rand_fr(&v);
        co[i].matrix = (uint32_t)(t_splitmix(&rng) % 2);
        co[i].constraint = (uint32_t)(t_splitmix(&rng) % s.domain_size);
        co[i].signal = (uint32_t)(t_splitmix(&rng) % s.n_vars);
        memcpy(&co[i].value, &v, sizeof(v));
    }
    s.ic = ic, s.a = a, s.b1 = b1, s.b2 = b2, s.c = c, s.h = h, s.coefs = co;
    rc = czk_zkey_write(path, &s, &e);
    CHECK(rc == 0, "zkey write: %s", e.msg);
    rc = czk_zkey_open(&z, path, &e);
    CHECK(rc == 0, "zkey read: %s", e.msg);
    if (!rc) {
        uint32_t nc = s.n_vars - s.n_public - 1;
        CHECK(z.n_vars == s.n_vars && z.n_public == s.n_public && z.domain_size == s.domain_size &&
                  (1u << z.log_domain) == s.domain_size && z.n_coefs == s.n_coefs,
              "zkey header counts differ");
        CHECK(czk_g1_aff_eq(&z.alpha1, &s.alpha1) && czk_g1_aff_eq(&z.beta1, &s.beta1) &&
                  czk_g1_aff_eq(&z.delta1, &s.delta1) && czk_g2_aff_eq(&z.beta2, &s.beta2) &&
                  czk_g2_aff_eq(&z.gamma2, &s.gamma2) && czk_g2_aff_eq(&z.delta2, &s.delta2),
              "zkey header points differ");
        CHECK(!memcmp(z.ic, ic, sizeof(*ic) * (s.n_public + 1)), "IC differs");
        CHECK(!memcmp(z.a, a, sizeof(*a) * s.n_vars), "A differs");
        CHECK(!memcmp(z.b1, b1, sizeof(*b1) * s.n_vars), "B1 differs");
        CHECK(!memcmp(z.b2, b2, sizeof(*b2) * s.n_vars), "B2 differs");
        CHECK(!nc || !memcmp(z.c, c, sizeof(*c) * nc), "C differs");
        CHECK(!memcmp(z.h, h, sizeof(*h) * s.domain_size), "H differs");
        CHECK(!s.n_coefs || !memcmp(z.coefs, co, sizeof(*co) * s.n_coefs), "coefficients differ");
        czk_zkey_close(&z);
    }
    /* the writer refuses inconsistent specs */
    {
        czk_zkey_spec bad = s;
        bad.domain_size = 3;
        CHECK(czk_zkey_write(path, &bad, &e) == -EINVAL && e.msg[0], "domain 3 refused");
        bad = s;
        bad.n_vars = s.n_public;
        CHECK(czk_zkey_write(path, &bad, &e) == -EINVAL, "nVars <= nPublic refused");
        if (s.n_coefs) {
            co[0].signal = s.n_vars;
            CHECK(czk_zkey_write(path, &s, &e) == -EINVAL && strstr(e.msg, "coefficient"),
                  "coefficient signal refused: %s", e.msg);
        }
        /* the file written above is untouched */
        rc = czk_zkey_open(&z, path, &e);
        CHECK(rc == 0, "zkey still readable: %s", e.msg);
        if (!rc)
            czk_zkey_close(&z);
    }
    free(ic), free(a), free(b1), free(b2), free(c), free(h), free(co);
}

int main(int argc, char **argv)
{
    const char *tmp = getenv("TMPDIR");
    unsigned before;

    rng = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
    printf("seed %llu\n", (unsigned long long)rng);
    snprintf(dir, sizeof(dir), "%s/czk-fmt-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    for (int round = 0; round < 20; round++) {
        test_wtns(round);
        test_r1cs(round);
        if (round < 8)
            test_zkey(round);
    }
    /* exactly the files written: no temp files left behind */
    before = count_dir_entries();
    CHECK(before == 20 + 20 + 8, "%u files in %s (temp files left?)", before, dir);
    {
        char cmd[4200];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (!t_failures && system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", dir);
    }
    printf("round trips: %d failures\n", t_failures);
    return t_failures ? 1 : 0;
}
