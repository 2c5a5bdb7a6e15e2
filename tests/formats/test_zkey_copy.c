/*
 * test_zkey_copy.c — the zkey reader's point sections, in place and copied:
 * keys of both curves big enough for the reader's parallel, block-wise
 * copy-and-check pass and its huge-page buffer (sections of 9000-16384
 * points), written twice with nCoefs of either parity so that every point
 * section is 8-byte aligned in one file and misaligned in the other.
 *   - open and load: every point pointer is aligned, an aligned section is
 *     used in place, and the points equal the file's bytes;
 *   - one bad point (off the curve) at the first, a middle (second worker's
 *     chunk) or the last index of each section is reported with that index;
 *   - two bad points: the lower index is reported, with its own problem
 *     (a coordinate not below q), though the other one lies in the other
 *     worker's chunk of the parallel pass, which may finish first;
 *   - czk_zkey_load_fd with skip_point_checks copies without checking (the
 *     bad bytes come through as they are), and czk_zkey_check_points then
 *     reports the first bad point;
 *   - coefficients (70000 entries: checked in parallel): a bad matrix,
 *     constraint, signal or value at the first, a middle or the last entry
 *     is reported with that entry, and of two bad entries the lower one;
 *     the entries' row order (czk_zkey_coef_order) is found: BY_ROW when
 *     sorted, OTHER for random rows and for one swapped pair at the start,
 *     the end and across the parallel check's first chunk boundary.
 * Infinity points (all zero) are sprinkled in, so the IFMA path's fallback
 * to the scalar check is taken; ctest runs this with and without CZK_NO_IFMA.
 *     test_zkey_copy
 */
#include <stdbool.h>

#include "common/crypto/bn254_curve.h"
#include "common/crypto/bn254_field.h"
#include "common/crypto/curve.h"
#include "common/crypto/field.h"
#include "common/crypto/par.h"
#include "tests/formats/fmt_test.h"

#define N_PUBLIC 1u
#define N_VARS 9001u /* C: 8999 points, more than the reader's parallel threshold */
#define DOMAIN 16384u
#define N_COEFS 70000u /* more than the reader's parallel threshold for coefficients */

static uint64_t rng = 0x5eed2d0c0b1ull;
static char dir[4096];

/* a random scalar below 2^192 (standard form): enough for distinct random points */
static void rand_k(uint8_t k[32])
{
    memset(k, 0, 32);
    for (int i = 0; i < 3; i++) {
        uint64_t v = t_splitmix(&rng);
        memcpy(k + 8 * i, &v, 8);
    }
}

/* n random points P0 + i Q of one curve's G1 and G2 (raw affine bytes, some infinity) */
static void points_bls(uint8_t *g1, uint8_t *g2, size_t n1, size_t n2)
{
    czk_fr k;
    czk_g1 p1, q1, *j1 = malloc(n1 * sizeof(*j1));
    czk_g2 p2, q2, *j2 = malloc(n2 * sizeof(*j2));
    czk_fp *s1 = malloc(n1 * sizeof(*s1));
    czk_fp2 *s2 = malloc(n2 * sizeof(*s2));

    rand_k((uint8_t *)&k);
    czk_g1_mul_aff(&p1, &CZK_G1_GEN, &k);
    rand_k((uint8_t *)&k);
    czk_g1_mul_aff(&q1, &CZK_G1_GEN, &k);
    for (size_t i = 0; i < n1; i++) {
        j1[i] = p1;
        czk_g1_add(&p1, &p1, &q1);
    }
    czk_g1_batch_to_aff((czk_g1_aff *)g1, j1, n1, s1);
    rand_k((uint8_t *)&k);
    czk_g2_mul_aff(&p2, &CZK_G2_GEN, &k);
    rand_k((uint8_t *)&k);
    czk_g2_mul_aff(&q2, &CZK_G2_GEN, &k);
    for (size_t i = 0; i < n2; i++) {
        j2[i] = p2;
        czk_g2_add(&p2, &p2, &q2);
    }
    czk_g2_batch_to_aff((czk_g2_aff *)g2, j2, n2, s2);
    free(j1);
    free(j2);
    free(s1);
    free(s2);
}

static void points_bn(uint8_t *g1, uint8_t *g2, size_t n1, size_t n2)
{
    czk_bn254_fr k;
    czk_bn254_g1 p1, q1, *j1 = malloc(n1 * sizeof(*j1));
    czk_bn254_g2 p2, q2, *j2 = malloc(n2 * sizeof(*j2));
    czk_bn254_fp *s1 = malloc(n1 * sizeof(*s1));
    czk_bn254_fp2 *s2 = malloc(n2 * sizeof(*s2));

    rand_k((uint8_t *)&k);
    czk_bn254_g1_mul_aff(&p1, &CZK_BN254_G1_GEN, &k);
    rand_k((uint8_t *)&k);
    czk_bn254_g1_mul_aff(&q1, &CZK_BN254_G1_GEN, &k);
    for (size_t i = 0; i < n1; i++) {
        j1[i] = p1;
        czk_bn254_g1_add(&p1, &p1, &q1);
    }
    czk_bn254_g1_batch_to_aff((czk_bn254_g1_aff *)g1, j1, n1, s1);
    rand_k((uint8_t *)&k);
    czk_bn254_g2_mul_aff(&p2, &CZK_BN254_G2_GEN, &k);
    rand_k((uint8_t *)&k);
    czk_bn254_g2_mul_aff(&q2, &CZK_BN254_G2_GEN, &k);
    for (size_t i = 0; i < n2; i++) {
        j2[i] = p2;
        czk_bn254_g2_add(&p2, &p2, &q2);
    }
    czk_bn254_g2_batch_to_aff((czk_bn254_g2_aff *)g2, j2, n2, s2);
    free(j1);
    free(j2);
    free(s1);
    free(s2);
}

/* about one point in 64 set to infinity (all zero) */
static void sprinkle_inf(uint8_t *pts, size_t n, size_t sz)
{
    for (size_t i = 0; i < n; i++)
        if (t_splitmix(&rng) % 64 == 0)
            memset(pts + i * sz, 0, sz);
}

struct curve {
    const char *name;
    czk_curve_id id;
    size_t g1, g2, fp; /* bytes of a G1 point, a G2 point, a coordinate */
    const void *q;     /* the base field's modulus, plain integer */
    const void *r;     /* the group order, plain integer */
    const char *off_curve; /* how the reader words a point off its curve */
};

static const struct curve curves[2] = {
    {"BLS12-381", CZK_CURVE_BLS12_381, sizeof(czk_g1_aff), sizeof(czk_g2_aff), sizeof(czk_fp), &CZK_FP_MOD,
     &CZK_FR_MOD, "not on the G"},
    {"BN254", CZK_CURVE_BN254, sizeof(czk_bn254_g1_aff), sizeof(czk_bn254_g2_aff), sizeof(czk_bn254_fp),
     &CZK_BN254_FP_MOD, &CZK_BN254_FR_MOD, "not on the BN254 G"},
};

/* the point sections 5-9 */
static const struct {
    uint32_t id;
    const char *what;
    uint32_t n;
    bool g2;
} secs[5] = {
    {5, "A", N_VARS, false}, {6, "B1", N_VARS, false}, {7, "B2", N_VARS, true},
    {8, "C", N_VARS - N_PUBLIC - 1, false}, {9, "H", DOMAIN, false},
};

static const void *sec_ptr(const czk_zkey *z, uint32_t id)
{
    bool bn = z->curve == CZK_CURVE_BN254;

    switch (id) {
    case 5: return bn ? (const void *)z->bn.a : z->a;
    case 6: return bn ? (const void *)z->bn.b1 : z->b1;
    case 7: return bn ? (const void *)z->bn.b2 : z->b2;
    case 8: return bn ? (const void *)z->bn.c : z->c;
    case 9: return bn ? (const void *)z->bn.h : z->h;
    }
    return NULL;
}

/* writes a key of curve c with n_coefs coefficients to path; its bytes in *out */
static void write_key(const struct curve *c, uint32_t n_coefs, const char *path, fmt_buf *out)
{
    size_t n1 = DOMAIN, n2 = N_VARS;
    uint8_t *g1 = malloc(n1 * c->g1), *g2 = malloc(n2 * c->g2), *hdr1 = malloc(3 * c->g1),
            *hdr2 = malloc(3 * c->g2);
    czk_zkey_coef *co = calloc(n_coefs, sizeof(*co));
    czk_zkey_spec s = {.n_vars = N_VARS, .n_public = N_PUBLIC, .domain_size = DOMAIN, .n_coefs = n_coefs,
                       .coefs = co, .curve = c->id};
    czk_error e = {0};

    if (c->id == CZK_CURVE_BN254) {
        points_bn(g1, g2, n1, n2);
        points_bn(hdr1, hdr2, 3, 3);
    } else {
        points_bls(g1, g2, n1, n2);
        points_bls(hdr1, hdr2, 3, 3);
    }
    sprinkle_inf(g1, n1, c->g1);
    sprinkle_inf(g2, n2, c->g2);
    for (uint32_t i = 0; i < n_coefs; i++) {
        co[i].matrix = (uint32_t)(t_splitmix(&rng) % 2);
        co[i].constraint = (uint32_t)(t_splitmix(&rng) % DOMAIN);
        co[i].signal = (uint32_t)(t_splitmix(&rng) % N_VARS);
        co[i].value.l[0] = t_splitmix(&rng); /* below either r */
    }
    if (c->id == CZK_CURVE_BN254) {
        czk_zkey_bn254 *b = &s.bn;
        memcpy(&b->alpha1, hdr1, c->g1);
        memcpy(&b->beta1, hdr1 + c->g1, c->g1);
        memcpy(&b->delta1, hdr1 + 2 * c->g1, c->g1);
        memcpy(&b->beta2, hdr2, c->g2);
        memcpy(&b->gamma2, hdr2 + c->g2, c->g2);
        memcpy(&b->delta2, hdr2 + 2 * c->g2, c->g2);
        /* slices of the random arrays at different offsets: A, B1, C, IC differ */
        b->a = (const czk_bn254_g1_aff *)g1;
        b->b1 = (const czk_bn254_g1_aff *)(g1 + 7 * c->g1);
        b->c = (const czk_bn254_g1_aff *)(g1 + 13 * c->g1);
        b->ic = (const czk_bn254_g1_aff *)(g1 + 101 * c->g1);
        b->h = (const czk_bn254_g1_aff *)g1;
        b->b2 = (const czk_bn254_g2_aff *)g2;
    } else {
        memcpy(&s.alpha1, hdr1, c->g1);
        memcpy(&s.beta1, hdr1 + c->g1, c->g1);
        memcpy(&s.delta1, hdr1 + 2 * c->g1, c->g1);
        memcpy(&s.beta2, hdr2, c->g2);
        memcpy(&s.gamma2, hdr2 + c->g2, c->g2);
        memcpy(&s.delta2, hdr2 + 2 * c->g2, c->g2);
        s.a = (const czk_g1_aff *)g1;
        s.b1 = (const czk_g1_aff *)(g1 + 7 * c->g1);
        s.c = (const czk_g1_aff *)(g1 + 13 * c->g1);
        s.ic = (const czk_g1_aff *)(g1 + 101 * c->g1);
        s.h = (const czk_g1_aff *)g1;
        s.b2 = (const czk_g2_aff *)g2;
    }
    if (czk_zkey_write(path, &s, &e)) {
        fprintf(stderr, "writing %s: %s\n", path, e.msg);
        exit(2);
    }
    *out = fmt_read_file(path);
    free(g1);
    free(g2);
    free(hdr1);
    free(hdr2);
    free(co);
}

static void put_file(const char *path, const fmt_buf *b)
{
    FILE *f = fopen(path, "wb");

    if (!f || fwrite(b->p, 1, b->n, f) != b->n || fclose(f)) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
}

/* a key read (open or load): aligned pointers, in place when aligned in the file, the file's points */
static void check_key(const struct curve *c, const czk_zkey *z, const fmt_buf *f, const char *how,
                      unsigned *misaligned)
{
    fmt_sec fs[16];
    int ns = fmt_sections(f->p, f->n, fs, 16);

    CHECK(z->curve == c->id, "%s %s: curve %d", c->name, how, (int)z->curve);
    for (int i = 0; i < 5; i++) {
        const fmt_sec *s = fmt_find(fs, ns, secs[i].id);
        const uint8_t *p = sec_ptr(z, secs[i].id);
        size_t bytes = (size_t)secs[i].n * (secs[i].g2 ? c->g2 : c->g1);
        if (!s || !p) {
            CHECK(0, "%s %s: section %u missing", c->name, how, secs[i].id);
            continue;
        }
        CHECK(s->size == bytes, "%s %s: section %u is %llu bytes, expected %zu", c->name, how, secs[i].id,
              (unsigned long long)s->size, bytes);
        CHECK((uintptr_t)p % 8 == 0, "%s %s: section %u at %p: not 8-byte aligned", c->name, how, secs[i].id,
              (const void *)p);
        if (s->off % 8 == 0)
            CHECK(p == z->map + s->off, "%s %s: section %u is aligned in the file but not used in place",
                  c->name, how, secs[i].id);
        else
            *misaligned |= 1u << secs[i].id;
        CHECK(memcmp(p, f->p + s->off, bytes) == 0, "%s %s: section %u: points differ from the file",
              c->name, how, secs[i].id);
    }
}

/* the file f with point idx of section i off its curve (y + 1) or with x = q */
static fmt_buf corrupt(const struct curve *c, const fmt_buf *f, int i, size_t idx, bool x_is_q)
{
    fmt_sec fs[16];
    int ns = fmt_sections(f->p, f->n, fs, 16);
    const fmt_sec *s = fmt_find(fs, ns, secs[i].id);
    size_t sz = secs[i].g2 ? c->g2 : c->g1;
    fmt_buf b = fmt_dup(f->p, f->n);
    uint8_t *pt = b.p + s->off + idx * sz;

    if (x_is_q) {
        memcpy(pt, c->q, c->fp);
    } else {
        uint8_t *y = pt + sz / 2;
        y[0] ^= 1; /* y +- 1: y^2 changes, x^3 + b does not */
    }
    return b;
}

/* opening path fails naming point idx of section i, and `problem` */
static void expect_bad(const struct curve *c, const char *path, int i, size_t idx, const char *problem,
                       const char *why)
{
    char want[160];
    czk_zkey z;
    czk_error e = {0};
    int rc = czk_zkey_open_curves(&z, path, CZK_CURVES_ALL, &e);

    snprintf(want, sizeof(want), "section %u (%s): point %zu of %u: %s", secs[i].id, secs[i].what, idx,
             secs[i].n, problem);
    CHECK(rc == -EINVAL, "%s, %s: open returned %d (%s)", c->name, why, rc, e.msg);
    if (rc == 0)
        czk_zkey_close(&z);
    CHECK(strstr(e.msg, want) != NULL, "%s, %s: message \"%s\" lacks \"%s\"", c->name, why, e.msg, want);
}

/* field k (0 matrix, 1 constraint, 2 signal, 3 value) of coefficient entry i set to v (value: r) */
static void set_coef(const struct curve *c, fmt_buf *b, uint32_t i, int k, uint32_t v)
{
    fmt_sec fs[16];
    int ns = fmt_sections(b->p, b->n, fs, 16);
    uint8_t *ent = b->p + fmt_find(fs, ns, 4)->off + 4 + (size_t)i * sizeof(czk_zkey_coef);

    if (k < 3)
        memcpy(ent + 4 * k, &v, 4);
    else
        memcpy(ent + 12, c->r, 32);
}

/* bad coefficient entries are reported by entry, the lower of two */
static void check_coefs(const struct curve *c, const fmt_buf *f, uint32_t n, const char *bad)
{
    static const char *const what[4] = {"matrix 2, expected 0 (A) or 1 (B)",
                                        "constraint 16384 is not below domainSize = 16384",
                                        "signal 9001 is not below nVars = 9001", "value is not below r"};
    const uint32_t val[4] = {2, DOMAIN, N_VARS, 0};
    const uint32_t at[3] = {0, n / 2 + 1, n - 1};

    for (int k = 0; k < 4; k++)
        for (int j = 0; j < 4; j++) {
            fmt_buf b = fmt_dup(f->p, f->n);
            uint32_t first = j < 3 ? at[j] : n / 2 - 7;
            char want[160];
            czk_zkey z;
            czk_error e = {0};
            int rc;

            set_coef(c, &b, first, k, val[k]);
            if (j == 3) /* and another field of a later entry, in the other worker's chunk */
                set_coef(c, &b, n - 2, (k + 1) % 4, val[(k + 1) % 4]);
            put_file(bad, &b);
            rc = czk_zkey_open_curves(&z, bad, CZK_CURVES_ALL, &e);
            if (rc == 0)
                czk_zkey_close(&z);
            snprintf(want, sizeof(want), "section 4 (coefficients): entry %u: %s", first, what[k]);
            CHECK(rc == -EINVAL, "%s: coefficient case %d/%d: open returned %d", c->name, k, j, rc);
            CHECK(strstr(e.msg, want) != NULL, "%s: coefficient case %d/%d: \"%s\" lacks \"%s\"", c->name, k, j,
                  e.msg, want);
            free(b.p);
        }
}

static int cmp_row(const void *a, const void *b)
{
    uint32_t x, y;
    memcpy(&x, (const uint8_t *)a + 4, 4);
    memcpy(&y, (const uint8_t *)b + 4, 4);
    return x < y ? -1 : x > y;
}

/* the reader's czk_zkey_coef_order (build_abc splits by rows only when it
 * says BY_ROW): the random rows of write_key are OTHER; sorted by row,
 * BY_ROW; sorted with one pair of different rows swapped, OTHER, for the
 * pair at the start, at the end, and across the first boundary between the
 * chunks of the reader's parallel check (czk_par_for's split, where only
 * the comparison with the previous chunk's last entry can see it) */
static void check_order(const struct curve *c, const fmt_buf *f, uint32_t n, const char *bad)
{
    const size_t t = (size_t)czk_par_threads(0), first = n / t + (n % t ? 1 : 0);
    const uint32_t swap_at[4] = {0, 0, (uint32_t)first - 1, n - 2};

    for (int v = -1; v < 4; v++) {
        fmt_buf b = fmt_dup(f->p, f->n);
        fmt_sec fs[16];
        int ns = fmt_sections(b.p, b.n, fs, 16);
        uint8_t *ent = b.p + fmt_find(fs, ns, 4)->off + 4, tmp[sizeof(czk_zkey_coef)];
        czk_zkey z;
        czk_error e = {0};
        czk_zkey_coef_order want = v == 0 ? CZK_COEF_ORDER_BY_ROW : CZK_COEF_ORDER_OTHER;

        if (v >= 0)
            qsort(ent, n, sizeof(czk_zkey_coef), cmp_row);
        if (v > 0) {
            /* rows j < j + 1 (moving the run of j's row down one, or the
             * run of j + 1's up one: still sorted), then swapped */
            const uint32_t j = swap_at[v];
            uint8_t *p = ent + (size_t)j * sizeof(tmp);
            uint32_t r, k;

            memcpy(&r, p + 4, 4);
            if (cmp_row(p, p + sizeof(tmp)) == 0) {
                const uint32_t nr = r ? r - 1 : r + 1;
                for (k = r ? j : j + 1; k < n; r ? k-- : k++) {
                    uint32_t rk;
                    memcpy(&rk, ent + (size_t)k * sizeof(tmp) + 4, 4);
                    if (rk != r)
                        break;
                    memcpy(ent + (size_t)k * sizeof(tmp) + 4, &nr, 4);
                    if (r && k == 0)
                        break;
                }
            }
            CHECK(cmp_row(p, p + sizeof(tmp)) < 0, "%s: order case %d: no pair of rows to swap", c->name, v);
            memcpy(tmp, p, sizeof(tmp));
            memcpy(p, p + sizeof(tmp), sizeof(tmp));
            memcpy(p + sizeof(tmp), tmp, sizeof(tmp));
        }
        put_file(bad, &b);
        if (czk_zkey_open_curves(&z, bad, CZK_CURVES_ALL, &e)) {
            CHECK(0, "%s: order case %d: open: %s", c->name, v, e.msg);
        } else {
            CHECK(z.coef_order == want, "%s: order case %d: coef_order %d, expected %d", c->name, v,
                  (int)z.coef_order, (int)want);
            czk_zkey_close(&z);
        }
        free(b.p);
    }
}

static void test_curve(const struct curve *c)
{
    unsigned mis[2] = {0, 0};
    char path[4200], bad[4200];

    snprintf(path, sizeof(path), "%s/%s.zkey", dir, c->name);
    snprintf(bad, sizeof(bad), "%s/%s.bad.zkey", dir, c->name);
    for (int par = 0; par < 2; par++) {
        fmt_buf f;
        czk_zkey z, zl;
        czk_error e = {0};
        uint8_t id1[CZK_SHA256_LEN], id2[CZK_SHA256_LEN];

        write_key(c, N_COEFS + (uint32_t)par, path, &f);
        if (czk_zkey_open_curves(&z, path, CZK_CURVES_ALL, &e)) {
            CHECK(0, "%s: open: %s", c->name, e.msg);
            free(f.p);
            continue;
        }
        check_key(c, &z, &f, "open", &mis[par]);
        czk_zkey_id(&z, id1);
        czk_zkey_close(&z);
        if (czk_zkey_load_curves(&zl, path, CZK_ZKEY_ALL, CZK_CURVES_ALL, &e)) {
            CHECK(0, "%s: load: %s", c->name, e.msg);
        } else {
            unsigned m = 0;
            check_key(c, &zl, &f, "load", &m);
            CHECK(m == mis[par], "%s: load and open disagree on the misaligned sections", c->name);
            czk_zkey_id(&zl, id2);
            CHECK(memcmp(id1, id2, sizeof(id1)) == 0, "%s: key ids of open and load differ", c->name);
            czk_zkey_close(&zl);
        }

        for (int i = 0; i < 5; i++) {
            const size_t n = secs[i].n;
            const size_t at[3] = {0, n / 2 + 3, n - 1};
            const char *coord = secs[i].g2 ? "coordinate x.c0 is not below q" : "coordinate x is not below q";
            char off[64], why[128];
            fmt_buf b;

            snprintf(off, sizeof(off), "%s%s", c->off_curve, secs[i].g2 ? "2" : "1");
            for (int k = 0; k < 3; k++) {
                b = corrupt(c, &f, i, at[k], false);
                put_file(bad, &b);
                snprintf(why, sizeof(why), "parity %d, section %u, point %zu off the curve", par, secs[i].id,
                         at[k]);
                expect_bad(c, bad, i, at[k], off, why);
                free(b.p);
            }
            /* two bad points: the lower index wins, whichever chunk checks it */
            {
                fmt_buf b2 = corrupt(c, &f, i, n - 5, false);
                czk_zkey_load_opts o = {.what = CZK_ZKEY_ALL, .skip_point_checks = 1, .curves = CZK_CURVES_ALL};
                unsigned m = 0;
                int fd, rc;

                b = corrupt(c, &b2, i, 1500, true);
                put_file(bad, &b);
                snprintf(why, sizeof(why), "parity %d, section %u, points 1500 and %zu bad", par, secs[i].id,
                         n - 5);
                expect_bad(c, bad, i, 1500, coord, why);
                /* skip_point_checks: copied as they are, then czk_zkey_check_points */
                fd = open(bad, O_RDONLY | O_CLOEXEC);
                rc = fd < 0 ? -errno : czk_zkey_load_fd(&zl, fd, bad, &o, &e);
                if (fd >= 0)
                    close(fd);
                CHECK(rc == 0, "%s, %s: load with skip_point_checks: %d (%s)", c->name, why, rc, e.msg);
                if (rc == 0) {
                    check_key(c, &zl, &b, "load, unchecked", &m);
                    memset(&e, 0, sizeof(e));
                    rc = czk_zkey_check_points(&zl, bad, NULL, &e);
                    CHECK(rc == -EINVAL, "%s, %s: check_points returned %d", c->name, why, rc);
                    snprintf(off, sizeof(off), "section %u (%s): point 1500 of %zu: ", secs[i].id,
                             secs[i].what, n);
                    CHECK(strstr(e.msg, off) != NULL, "%s, %s: check_points said \"%s\"", c->name, why, e.msg);
                    czk_zkey_close(&zl);
                }
                free(b.p);
                free(b2.p);
            }
        }
        check_coefs(c, &f, N_COEFS + (uint32_t)par, bad);
        check_order(c, &f, N_COEFS + (uint32_t)par, bad);
        free(f.p);
    }
    /* the two parities between them put every point section both ways */
    for (int i = 0; i < 5; i++)
        CHECK(((mis[0] >> secs[i].id) & 1) != ((mis[1] >> secs[i].id) & 1),
              "%s: section %u is %s in both files: the test does not cover both paths", c->name, secs[i].id,
              (mis[0] >> secs[i].id) & 1 ? "misaligned" : "aligned");
    unlink(path);
    unlink(bad);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(dir, sizeof(dir), "%s/czk-zkey-copy-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    for (int c = 0; c < 2; c++)
        test_curve(&curves[c]);
    rmdir(dir);
    if (t_failures) {
        fprintf(stderr, "test_zkey_copy: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_zkey_copy: ok\n");
    return 0;
}
