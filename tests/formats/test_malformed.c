/*
 * test_malformed.c — hostile and damaged files: every reader must return
 * -EINVAL with a message naming the file, and never crash (this test is also
 * built with ASan/UBSan by the fuzz build).
 *
 * usage: test_malformed zkey|wtns|r1cs FILE   (FILE: a valid BLS12-381 file)
 *
 * Mutations: every truncation length, one appended byte, flipped bytes in the
 * file header and each section header, a duplicated section, a section whose
 * size covers the next one (overlap), a missing section, wrong magic and
 * version, bn128-sized / wrong primes, counts that overflow or disagree with
 * the section sizes, out-of-range values (witness >= r, coordinate >= q,
 * points off the curve, coefficient indices out of range), and random byte
 * mutations (only "no crash, message when refused" is asserted for those).
 */
#include "tests/formats/fmt_test.h"

#define NAME "mut.file"

static enum fmt_kind kind;
static const uint8_t R_LE[32] = {
    0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0xfe, 0x5b, 0xfe, 0xff, 0x02, 0xa4, 0xbd, 0x53,
    0x05, 0xd8, 0xa1, 0x09, 0x08, 0xd8, 0x39, 0x33, 0x48, 0x7d, 0x9d, 0x29, 0x53, 0xa7, 0xed, 0x73};
static const uint8_t BN128_R_LE[32] = {
    0x01, 0x00, 0x00, 0xf0, 0x93, 0xf5, 0xe1, 0x43, 0x91, 0x70, 0xb9, 0x79, 0x48, 0xe8, 0x33, 0x28,
    0x5d, 0x58, 0x81, 0x81, 0xb6, 0x45, 0x50, 0xb8, 0x29, 0xa0, 0x31, 0xe1, 0x72, 0x4e, 0x64, 0x30};
static unsigned n_checked;

/* the reader must refuse b with a message naming the file (and containing substr) */
static void expect_fail(const fmt_buf *b, const char *what, const char *substr)
{
    czk_error e;
    int rc = fmt_try_open(kind, b->p, b->n, NAME, &e);

    n_checked++;
    if (getenv("FMT_VERBOSE"))
        printf("%s: %s\n", what, e.msg);
    CHECK(rc == -EINVAL, "%s: expected -EINVAL, got %d (%s)", what, rc, e.msg);
    CHECK(e.code == rc && e.msg[0] && strstr(e.msg, NAME), "%s: message \"%s\"", what, e.msg);
    if (substr)
        CHECK(strstr(e.msg, substr), "%s: message \"%s\" lacks \"%s\"", what, e.msg, substr);
}

static void expect_ok(const fmt_buf *b, const char *what)
{
    czk_error e;
    int rc = fmt_try_open(kind, b->p, b->n, NAME, &e);

    n_checked++;
    CHECK(rc == 0, "%s: expected success, got %d (%s)", what, rc, e.msg);
}

/* no crash; a refusal carries a message */
static void expect_no_crash(const fmt_buf *b, const char *what)
{
    czk_error e;
    int rc = fmt_try_open(kind, b->p, b->n, NAME, &e);

    n_checked++;
    CHECK(rc == 0 || (rc < 0 && e.code == rc && e.msg[0]), "%s: rc %d, message \"%s\"", what, rc,
          e.msg);
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }

static void generic(const fmt_buf *orig)
{
    fmt_sec s[64];
    int ns = fmt_sections(orig->p, orig->n, s, 64);
    char what[128];
    uint64_t rng = 12345;

    CHECK(ns > 0, "seed file has sections");
    expect_ok(orig, "unmodified file");

    /* every truncation of a small file; of a big one, every length near the
     * start and the end and a dense sample in between */
    for (size_t len = 0; len < orig->n;
         len += (orig->n <= 16384 || len < 4096 || orig->n - len <= 4096) ? 1 : 61) {
        fmt_buf b = {orig->p, len};
        snprintf(what, sizeof(what), "truncated to %zu", len);
        expect_fail(&b, what, NULL);
    }

    /* one byte appended */
    {
        fmt_buf b = {malloc(orig->n + 1), orig->n + 1};
        memcpy(b.p, orig->p, orig->n);
        b.p[orig->n] = 0;
        expect_fail(&b, "trailing byte", "after the last");
        free(b.p);
    }

    /* flipped bytes in the file header: magic, version, nSections all matter */
    for (size_t i = 0; i < 12; i++)
        for (int m = 0; m < 3; m++) {
            static const uint8_t masks[3] = {0x01, 0x80, 0xff};
            fmt_buf b = fmt_dup(orig->p, orig->n);
            b.p[i] ^= masks[m];
            snprintf(what, sizeof(what), "header byte %zu ^ 0x%02x", i, masks[m]);
            expect_fail(&b, what, NULL);
            free(b.p);
        }
    /* flipped bytes in each section header: sizes must be refused, ids must not crash */
    for (int k = 0; k < ns; k++)
        for (size_t i = 0; i < 12; i++) {
            fmt_buf b = fmt_dup(orig->p, orig->n);
            b.p[s[k].hdr_off + i] ^= 0x01 << (i % 8);
            snprintf(what, sizeof(what), "section %u header byte %zu flipped", s[k].id, i);
            if (i >= 4)
                expect_fail(&b, what, NULL);
            else
                expect_no_crash(&b, what);
            free(b.p);
        }

    /* wrong magic, wrong version */
    {
        fmt_buf b = fmt_dup(orig->p, orig->n);
        memcpy(b.p, kind == FMT_ZKEY ? "wtns" : "zkey", 4);
        expect_fail(&b, "wrong magic", "magic");
        memcpy(b.p, orig->p, 4);
        put32(b.p + 4, get32(orig->p + 4) + 1);
        expect_fail(&b, "wrong version", "version");
        free(b.p);
    }

    /* duplicate: append a copy of the first section */
    {
        size_t len = 12 + s[0].size;
        fmt_buf b = {malloc(orig->n + len), orig->n + len};
        memcpy(b.p, orig->p, orig->n);
        memcpy(b.p + orig->n, orig->p + s[0].hdr_off, len);
        put32(b.p + 8, (uint32_t)ns + 1);
        expect_fail(&b, "duplicated section", "twice");
        free(b.p);
    }

    /* overlap: a section's size also covers the next section */
    for (int k = 0; k + 1 < ns; k++) {
        fmt_buf b = fmt_dup(orig->p, orig->n);
        put64(b.p + s[k].hdr_off + 4, s[k].size + 12 + s[k + 1].size);
        snprintf(what, sizeof(what), "section %u covers section %u", s[k].id, s[k + 1].id);
        expect_fail(&b, what, NULL);
        put32(b.p + 8, (uint32_t)ns - 1);
        snprintf(what, sizeof(what), "section %u swallows section %u", s[k].id, s[k + 1].id);
        expect_fail(&b, what, NULL);
        free(b.p);
    }

    /* a missing required section: drop section 1 (every format needs it) */
    {
        const fmt_sec *s1 = fmt_find(s, ns, 1);
        size_t len = 12 + s1->size;
        fmt_buf b = {malloc(orig->n - len), orig->n - len};
        memcpy(b.p, orig->p, s1->hdr_off);
        memcpy(b.p + s1->hdr_off, orig->p + s1->hdr_off + len, orig->n - s1->hdr_off - len);
        put32(b.p + 8, (uint32_t)ns - 1);
        expect_fail(&b, "section 1 removed", "missing");
        free(b.p);
    }

    /* random mutations: 1-4 bytes set to random or boundary values */
    for (int it = 0; it < 3000; it++) {
        fmt_buf b = fmt_dup(orig->p, orig->n);
        int nm = 1 + (int)(t_splitmix(&rng) % 4);
        for (int m = 0; m < nm; m++) {
            size_t at = t_splitmix(&rng) % b.n;
            uint64_t r = t_splitmix(&rng);
            if (r % 3 == 0)
                b.p[at] = (uint8_t)(r >> 8);
            else if (r % 3 == 1)
                b.p[at] ^= (uint8_t)(1u << ((r >> 8) % 8));
            else if (at + 4 <= b.n)
                put32(b.p + at, (r >> 8) % 2 ? 0xffffffffu : 0);
        }
        snprintf(what, sizeof(what), "random mutation %d", it);
        expect_no_crash(&b, what);
        free(b.p);
    }
}

static fmt_buf with_u32(const fmt_buf *o, size_t off, uint32_t v)
{
    fmt_buf b = fmt_dup(o->p, o->n);
    put32(b.p + off, v);
    return b;
}

#define FAIL_U32(off, v, what, substr)                                                         \
    do {                                                                                       \
        fmt_buf b_ = with_u32(orig, (off), (v));                                               \
        expect_fail(&b_, (what), (substr));                                                    \
        free(b_.p);                                                                            \
    } while (0)

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static void zkey_specific(const fmt_buf *orig)
{
    fmt_sec s[64];
    int ns = fmt_sections(orig->p, orig->n, s, 64);
    const fmt_sec *s1 = fmt_find(s, ns, 1), *s2 = fmt_find(s, ns, 2), *s4 = fmt_find(s, ns, 4);
    size_t h = s2->off, dims = h + 4 + 48 + 4 + 32;
    uint32_t nv = get32(orig->p + dims), np = get32(orig->p + dims + 4);
    uint32_t dom = get32(orig->p + dims + 8), ncoef = get32(orig->p + s4->off);
    static const uint8_t Q_LE[48] = {
        0xab, 0xaa, 0xff, 0xff, 0xff, 0xff, 0xfe, 0xb9, 0xff, 0xff, 0x53, 0xb1, 0xfe, 0xff, 0xab, 0x1e,
        0x24, 0xf6, 0xb0, 0xf6, 0xa0, 0xd2, 0x30, 0x67, 0xbf, 0x12, 0x85, 0xf3, 0x84, 0x4b, 0x77, 0x64,
        0xd7, 0xac, 0x4b, 0x43, 0xb6, 0xa7, 0x1b, 0x4b, 0x9a, 0xe6, 0x7f, 0x39, 0xea, 0x11, 0x01, 0x1a};

    CHECK(memcmp(orig->p + h + 4, Q_LE, 48) == 0, "seed zkey has BLS12-381's q");
    FAIL_U32(s1->off, 2, "protocol plonk", "groth16");
    FAIL_U32(h, 32, "n8q = 32", "bn128-sized");
    FAIL_U32(h + 4 + 48, 48, "n8r = 48", "n8r");
    {
        fmt_buf b = fmt_dup(orig->p, orig->n);
        b.p[h + 4 + 10] ^= 1;
        expect_fail(&b, "q changed", "prime q");
        memcpy(b.p + h + 4, orig->p + h + 4, 48);
        memcpy(b.p + h + 4 + 48 + 4, BN128_R_LE, 32);
        expect_fail(&b, "r = bn128's", "bn128");
        free(b.p);
    }
    FAIL_U32(dims, 0xffffffffu, "nVars = 2^32-1", NULL);
    FAIL_U32(dims, nv + 1, "nVars + 1", "section 5");
    FAIL_U32(dims + 4, 0xffffffffu, "nPublic = 2^32-1", "nPublic");
    FAIL_U32(dims + 4, nv, "nPublic = nVars", "nPublic");
    FAIL_U32(dims + 4, np + 1, "nPublic + 1", "section 3");
    FAIL_U32(dims + 8, 0x80000000u, "domainSize = 2^31", "section 9");
    FAIL_U32(dims + 8, dom + 1, "domainSize not a power of two", "power of two");
    FAIL_U32(dims + 8, 0, "domainSize = 0", "power of two");
    FAIL_U32(s4->off, 0xffffffffu, "nCoefs = 2^32-1", "nCoefs");
    FAIL_U32(s4->off, ncoef - 1, "nCoefs - 1", "nCoefs");
    FAIL_U32(s4->off + 4, 2, "coef matrix 2", "matrix");
    FAIL_U32(s4->off + 4 + 4, dom, "coef constraint = domainSize", "constraint");
    FAIL_U32(s4->off + 4 + 8, nv, "coef signal = nVars", "signal");
    {
        fmt_buf b = fmt_dup(orig->p, orig->n);
        memcpy(b.p + s4->off + 4 + 12, R_LE, 32);
        expect_fail(&b, "coef value = r", "value");
        free(b.p);
    }
    /* header points: alpha1 y flipped; gamma2 x.c1 = q */
    {
        fmt_buf b = fmt_dup(orig->p, orig->n);
        size_t pts = dims + 12;
        b.p[pts + 48] ^= 1;
        expect_fail(&b, "alpha1 off curve", "alpha1");
        memcpy(b.p, orig->p, orig->n);
        memcpy(b.p + pts + 96 + 96 + 192 + 48, Q_LE, 48);
        expect_fail(&b, "gamma2 x.c1 = q", "x.c1 is not below q");
        free(b.p);
    }
    /* first non-infinity point of each point section: off curve, x = q, and infinity (valid) */
    for (uint32_t id = 3; id <= 9; id++) {
        const fmt_sec *ps = fmt_find(s, ns, id);
        size_t psz = id == 7 ? 192 : 96, at;
        char what[96];

        if (id == 4)
            continue;
        for (at = 0; at + psz <= ps->size; at += psz)
            if (!all_zero(orig->p + ps->off + at, psz))
                break;
        if (at + psz > ps->size)
            continue;
        fmt_buf b = fmt_dup(orig->p, orig->n);
        b.p[ps->off + at + psz - 1] ^= 0x01; /* a bit of y (y.c1 for G2) */
        snprintf(what, sizeof(what), "section %u point %zu off curve", id, at / psz);
        expect_fail(&b, what, "not on the G");
        memcpy(b.p, orig->p, orig->n);
        memcpy(b.p + ps->off + at, Q_LE, 48);
        snprintf(what, sizeof(what), "section %u point %zu x = q", id, at / psz);
        expect_fail(&b, what, "not below q");
        memset(b.p + ps->off + at, 0, psz);
        snprintf(what, sizeof(what), "section %u point %zu set to infinity", id, at / psz);
        expect_ok(&b, what);
        free(b.p);
    }
}

static void wtns_specific(const fmt_buf *orig)
{
    fmt_sec s[64];
    int ns = fmt_sections(orig->p, orig->n, s, 64);
    const fmt_sec *s1 = fmt_find(s, ns, 1), *s2 = fmt_find(s, ns, 2);
    uint32_t n = get32(orig->p + s1->off + 36);

    CHECK(n >= 2, "seed witness has at least two values");
    FAIL_U32(s1->off, 48, "n8 = 48", "n8=48");
    FAIL_U32(s1->off + 36, 0xffffffffu, "nWitness = 2^32-1", "nWitness");
    FAIL_U32(s1->off + 36, 0, "nWitness = 0", "nWitness");
    FAIL_U32(s1->off + 36, n - 1, "nWitness - 1", "nWitness");
    {
        fmt_buf b = fmt_dup(orig->p, orig->n);
        memcpy(b.p + s1->off + 4, BN128_R_LE, 32);
        expect_fail(&b, "bn128 prime", "bn128");
        memcpy(b.p, orig->p, orig->n);
        memcpy(b.p + s2->off + 32, R_LE, 32);
        expect_fail(&b, "w[1] = r", "value 1 is not below r");
        memset(b.p + s2->off + 32, 0xff, 32);
        expect_fail(&b, "w[1] = 2^256-1", "value 1");
        memcpy(b.p + s2->off + 32, R_LE, 32);
        b.p[s2->off + 32] = 0; /* r - 1 */
        expect_ok(&b, "w[1] = r-1");
        memcpy(b.p, orig->p, orig->n);
        b.p[s2->off] = 2;
        expect_fail(&b, "w[0] = 2", "w[0]");
        free(b.p);
    }
}

static void r1cs_specific(const fmt_buf *orig)
{
    fmt_sec s[64];
    int ns = fmt_sections(orig->p, orig->n, s, 64);
    const fmt_sec *s1 = fmt_find(s, ns, 1), *s2 = fmt_find(s, ns, 2), *s3 = fmt_find(s, ns, 3);
    size_t h = s1->off + 36;
    uint32_t nw = get32(orig->p + h), nc = get32(orig->p + h + 24);

    FAIL_U32(s1->off, 48, "n8 = 48", "n8=48");
    {
        fmt_buf b = fmt_dup(orig->p, orig->n);
        memcpy(b.p + s1->off + 4, BN128_R_LE, 32);
        expect_fail(&b, "bn128 prime", "bn128");
        free(b.p);
    }
    FAIL_U32(h, 0, "nWires = 0", "nWires");
    FAIL_U32(h + 4, 0x80000000u, "nPubOut = 2^31", "nWires");
    {
        fmt_buf b = with_u32(orig, h + 4, 0x80000000u);
        put32(b.p + h + 8, 0x80000000u); /* the u32 sum wraps to 0 */
        expect_fail(&b, "nPubOut + nPubIn wraps", "nWires");
        free(b.p);
    }
    FAIL_U32(h + 24, 0xffffffffu, "nConstraints = 2^32-1", "nConstraints");
    FAIL_U32(h + 24, nc - 1, "nConstraints - 1", "left after");
    FAIL_U32(h + 24, nc + 1, "nConstraints + 1", NULL);
    FAIL_U32(s2->off, 0xffffffffu, "nTerms = 2^32-1", "terms need");
    /* first term of the first non-empty combination */
    {
        size_t pos = s2->off;
        while (get32(orig->p + pos) == 0)
            pos += 4;
        FAIL_U32(pos + 4, nw, "wire = nWires", "wire");
        fmt_buf b = fmt_dup(orig->p, orig->n);
        memcpy(b.p + pos + 8, R_LE, 32);
        expect_fail(&b, "coefficient = r", "coefficient");
        free(b.p);
    }
    if (s3) {
        fmt_buf b = fmt_dup(orig->p, orig->n);
        put64(b.p + s3->off, 0xffffffffffffffffull);
        expect_fail(&b, "label >= nLabels", "label");
        free(b.p);
    }
}

int main(int argc, char **argv)
{
    fmt_buf orig;

    if (argc != 3) {
        fprintf(stderr, "usage: %s zkey|wtns|r1cs FILE\n", argv[0]);
        return 2;
    }
    kind = !strcmp(argv[1], "zkey") ? FMT_ZKEY : !strcmp(argv[1], "wtns") ? FMT_WTNS : FMT_R1CS;
    orig = fmt_read_file(argv[2]);
    generic(&orig);
    if (kind == FMT_ZKEY)
        zkey_specific(&orig);
    else if (kind == FMT_WTNS)
        wtns_specific(&orig);
    else
        r1cs_specific(&orig);

    /* open errors */
    {
        czk_error e = {0};
        czk_wtns w;
        int rc = czk_wtns_open(&w, "/nonexistent/dir/x.wtns", &e);
        CHECK(rc == -ENOENT && strstr(e.msg, "/nonexistent/dir/x.wtns"), "ENOENT: %d %s", rc,
              e.msg);
        rc = czk_wtns_open(&w, "/", &e);
        CHECK(rc < 0 && e.msg[0], "directory: %d %s", rc, e.msg);
    }
    printf("%s %s: %u malformed variants checked, %d failures\n", argv[1], argv[2], n_checked,
           t_failures);
    free(orig.p);
    return t_failures ? 1 : 0;
}
