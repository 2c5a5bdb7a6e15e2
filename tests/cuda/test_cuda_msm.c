/*
 * test_cuda_msm.c — device G1/G2 MSM against the CPU: a naive sum of scalar
 * multiplications for n <= 2^10 (independent of any Pippenger code) and
 * czk_msm_g1/g2 at every size.  Scalar sets: random, 0/1-heavy, all zero,
 * all one, all 2^256-1 (scalars act as integers), and scalars in [r, 2^256)
 * (random ones, and r, r+1, 2r-1, 2r, 2^256-1 at fixed places; all bases are
 * in the order-r subgroup, so the result must also equal the MSM of the
 * scalars reduced mod r, checked to 2^12); bases include infinity and
 * repeated points (exercises the doubling branch).  Bases are uploaded once
 * and reused, and an offset MSM checks base_off/scalar_off.  The same checks
 * run over bases with fixed-base tables (all rows; 3 rows at c = 8, wider
 * above 2^16), at the bases' size and at 2^10 over 2^max bases, and a
 * context that uses a table only for dense scalars (msm_table_dense_pm)
 * picks it by the scalars.
 * Bucket sums as the context picks them (batch-affine by default; ctest also
 * runs it with CZK_CUDA_MSM_BA=0 and in 1 MiB chunks).
 * Sizes 2^10..2^CZK_CUDA_TEST_MSM_MAX_LOG (default 12; G2 stops 2 lower).
 * Exit 77 without a GPU.
 */
#include "common/crypto/msm.h"
#include "tests/cuda/cuda_test_util.h"

enum { S_RANDOM = TU_S_RANDOM, S_OVER = TU_S_COMMON, S_COUNT };
static const char *s_name[] = {"random", "0/1-heavy", "all-zero", "all-one", "all-max", ">= r"};

/* x = a + b as 256-bit integers; returns the carry out */
static unsigned add256(czk_fr *x, const czk_fr *a, const czk_fr *b)
{
    unsigned __int128 c = 0;
    for (int i = 0; i < 4; i++) {
        c += (unsigned __int128)a->l[i] + b->l[i];
        x->l[i] = (uint64_t)c;
        c >>= 64;
    }
    return (unsigned)c;
}

/* x mod r for any 256-bit x, by repeated subtraction (independent of the device code) */
static void reduce256(czk_fr *x)
{
    while (!czk_fr_is_canonical(x)) {
        uint64_t borrow = 0;
        for (int i = 0; i < 4; i++) {
            uint64_t a = x->l[i], b = CZK_FR_MOD.l[i];
            x->l[i] = a - b - borrow;
            borrow = (a < b) || (a == b && borrow);
        }
    }
}

static void rand_scalar_r(uint64_t l[4]) { tu_rand_fr((czk_fr *)l); }

/* S_OVER: a random 256-bit value, plus r when below r (below 2r < 2^256) */
static void rand_over(uint64_t l[4])
{
    czk_fr *x = (czk_fr *)l;
    for (int j = 0; j < 4; j++)
        x->l[j] = tu_rand();
    if (czk_fr_is_canonical(x))
        CHECK(add256(x, x, &CZK_FR_MOD) == 0, "r + x overflowed");
}

static void make_scalars(czk_fr *s, size_t n, int kind)
{
    tu_scalars(s, n, kind, rand_scalar_r, rand_over);
    if (kind == S_OVER && n >= 8) {
        /* r, r + 1, 2r - 1, 2r, 2^256 - 1 (index 1 has an infinity base) */
        czk_fr one = {{1, 0, 0, 0}}, two_r;
        CHECK(add256(&two_r, &CZK_FR_MOD, &CZK_FR_MOD) == 0, "2r overflowed");
        s[0] = CZK_FR_MOD;
        add256(&s[2], &CZK_FR_MOD, &one);
        s[3] = two_r;
        s[3].l[0] -= 1; /* 2r - 1: the low word of 2r is 0xfffffffe00000002 */
        s[4] = two_r;
        memset(&s[6], 0xff, sizeof s[6]);
        for (size_t i = 0; i < n; i++)
            CHECK(!czk_fr_is_canonical(&s[i]), ">= r scalar %zu is below r", i);
    }
}

static void rand_scalar(czk_fr *k) { tu_rand_fr(k); }

static void make_g1(czk_g1_aff *out, size_t n)
{
    czk_g1 q[4], p;
    czk_fr k;
    for (int i = 0; i < 4; i++) {
        rand_scalar(&k);
        czk_g1_mul_aff(&q[i], &CZK_G1_GEN, &k);
    }
    rand_scalar(&k);
    czk_g1_mul_aff(&p, &CZK_G1_GEN, &k);
    czk_g1 *jac = malloc(n * sizeof *jac);
    czk_fp *scratch = malloc(n * sizeof *scratch);
    CHECK(jac && scratch, "oom");
    for (size_t i = 0; i < n; i++) {
        czk_g1_add(&p, &p, &q[i & 3]);
        jac[i] = p;
    }
    /* doubling and P + (-P) inside one bucket task: with all-one scalars the
     * first task sums bases 0, 2, 3, ... in order, so acc = P0, then P0 again
     * (acc == q: the doubling branch), then -2 P0 (acc == -q: infinity) */
    jac[2] = jac[0];
    czk_g1_dbl(&jac[3], &jac[0]);
    czk_g1_neg(&jac[3], &jac[3]);
    /* and as adjacent pairs, which the batch-affine bucket sums
     * (CZK_CUDA_MSM_BA) add to each other first: 8 + 9 doubles, 10 + 11 is
     * infinity */
    jac[9] = jac[8];
    czk_g1_neg(&jac[11], &jac[10]);
    czk_g1_batch_to_aff(out, jac, n, scratch);
    /* infinity bases and a repeated base */
    memset(&out[1], 0, sizeof out[1]);
    memset(&out[n / 2], 0, sizeof out[0]);
    out[5] = out[3];
    out[n - 1] = out[3];
    free(jac);
    free(scratch);
}

static void make_g2(czk_g2_aff *out, size_t n)
{
    czk_g2 q[4], p;
    czk_fr k;
    for (int i = 0; i < 4; i++) {
        rand_scalar(&k);
        czk_g2_mul_aff(&q[i], &CZK_G2_GEN, &k);
    }
    rand_scalar(&k);
    czk_g2_mul_aff(&p, &CZK_G2_GEN, &k);
    czk_g2 *jac = malloc(n * sizeof *jac);
    czk_fp2 *scratch = malloc(n * sizeof *scratch);
    CHECK(jac && scratch, "oom");
    for (size_t i = 0; i < n; i++) {
        czk_g2_add(&p, &p, &q[i & 3]);
        jac[i] = p;
    }
    /* doubling and P + (-P) inside one bucket task: with all-one scalars the
     * first task sums bases 0, 2, 3, ... in order, so acc = P0, then P0 again
     * (acc == q: the doubling branch), then -2 P0 (acc == -q: infinity) */
    jac[2] = jac[0];
    czk_g2_dbl(&jac[3], &jac[0]);
    czk_g2_neg(&jac[3], &jac[3]);
    /* and as adjacent pairs, which the batch-affine bucket sums
     * (CZK_CUDA_MSM_BA) add to each other first: 8 + 9 doubles, 10 + 11 is
     * infinity */
    jac[9] = jac[8];
    czk_g2_neg(&jac[11], &jac[10]);
    czk_g2_batch_to_aff(out, jac, n, scratch);
    memset(&out[1], 0, sizeof out[1]);
    memset(&out[n / 2], 0, sizeof out[0]);
    out[5] = out[3];
    out[n - 1] = out[3];
    free(jac);
    free(scratch);
}

static void naive_g1(czk_g1 *r, const czk_g1_aff *b, const czk_fr *s, size_t n)
{
    czk_g1_set_inf(r);
    for (size_t i = 0; i < n; i++) {
        czk_g1 t;
        czk_g1_mul_aff(&t, &b[i], &s[i]);
        czk_g1_add(r, r, &t);
    }
}

static void naive_g2(czk_g2 *r, const czk_g2_aff *b, const czk_fr *s, size_t n)
{
    czk_g2_set_inf(r);
    for (size_t i = 0; i < n; i++) {
        czk_g2 t;
        czk_g2_mul_aff(&t, &b[i], &s[i]);
        czk_g2_add(r, r, &t);
    }
}

/* every scalar set at 2^lg against the CPU (and the naive sum at 2^10 for
 * the sets NAIVE_SETS accepts, the reduced scalars to 2^12), then an offset
 * MSM; tag names the table.  One definition per group (G1 and G2 types). */
#define DEF_CHECK(NAME, GRP, AFF, JAC, MSM_HOST, MSM_DEV, CPU_MSM, NAIVE, EQ, NAIVE_SETS)                   \
    static void NAME(czk_cuda_ctx *ctx, const czk_cuda_bases *db, const AFF *b, czk_fr *s, czk_fr *sr,       \
                     unsigned lg, const char *tag)                                                          \
    {                                                                                                        \
        size_t n = (size_t)1 << lg;                                                                          \
        for (int kind = 0; kind < S_COUNT; kind++) {                                                         \
            make_scalars(s, n, kind);                                                                        \
            JAC gpu, cpu;                                                                                    \
            memset(&gpu, 0xa5, sizeof gpu);                                                                  \
            CHECK(MSM_HOST(ctx, db, s, n, &gpu) == 0, "gpu msm " GRP ": %s", czk_cuda_last_error());         \
            CHECK(CPU_MSM(&cpu, b, s, n, 0) == 0, "cpu msm " GRP);                                           \
            CHECK(EQ(&gpu, &cpu), "msm " GRP " 2^%u %s%s: gpu != " #CPU_MSM, lg, s_name[kind], tag);         \
            CHECK(czk_cuda_msm_used_table(ctx) == (tag[0] != 0), "msm " GRP " 2^%u%s: table used: %d", lg,   \
                  tag, czk_cuda_msm_used_table(ctx));                                                        \
            if (lg == 10 && (NAIVE_SETS)) {                                                                  \
                JAC nv;                                                                                      \
                NAIVE(&nv, b, s, n);                                                                         \
                CHECK(EQ(&gpu, &nv), "msm " GRP " 2^%u %s: gpu != naive sum", lg, s_name[kind]);             \
            }                                                                                                \
            if (kind == S_OVER && lg <= 12) {                                                                \
                JAC red;                                                                                     \
                for (size_t i = 0; i < n; i++) {                                                             \
                    sr[i] = s[i];                                                                            \
                    reduce256(&sr[i]);                                                                       \
                }                                                                                            \
                CHECK(CPU_MSM(&red, b, sr, n, 0) == 0, "cpu msm " GRP " reduced");                           \
                CHECK(EQ(&gpu, &red), "msm " GRP " 2^%u %s: gpu != " #CPU_MSM " of the scalars mod r", lg,   \
                      s_name[kind]);                                                                         \
            }                                                                                                \
            printf("msm " GRP " 2^%u %s%s ok\n", lg, s_name[kind], tag);                                     \
        }                                                                                                    \
        /* offsets: bases [7, n), scalars from BUF_W offset 3 */                                            \
        make_scalars(s, n, S_RANDOM);                                                                        \
        CHECK(czk_cuda_upload_async(ctx, CZK_CUDA_BUF_W, 0, s, n, NULL, NULL) == 0, "upload scalars");       \
        JAC gpu, cpu;                                                                                        \
        CHECK(MSM_DEV(ctx, db, 7, CZK_CUDA_BUF_W, 3, n - 7, &gpu) == 0, "gpu msm offsets: %s",               \
              czk_cuda_last_error());                                                                        \
        CHECK(CPU_MSM(&cpu, b + 7, s + 3, n - 7, 0) == 0, "cpu msm offsets");                                \
        CHECK(EQ(&gpu, &cpu), "msm " GRP " 2^%u%s with offsets differs", lg, tag);                           \
    }
DEF_CHECK(check_g1, "g1", czk_g1_aff, czk_g1, czk_cuda_msm_g1_host, czk_cuda_msm_g1, czk_msm_g1, naive_g1, czk_g1_eq, 1)
DEF_CHECK(check_g2, "g2", czk_g2_aff, czk_g2, czk_cuda_msm_g2_host, czk_cuda_msm_g2, czk_msm_g2, naive_g2, czk_g2_eq,
          kind == S_RANDOM || kind == TU_S_BITS || kind == S_OVER)

/* fixed-base tables (czk_cuda_bases_precompute): all rows at the default
 * window, and 3 rows at c = 8 (11 bucket windows).  Above 2^16 bases the
 * 3-row table takes the plain plan's window at 2^max_log (c = its bit
 * length less 9), whose sort pairs the workspace holds: c = 8 would need
 * 33 pairs per term there, more than the workspace sized for the plain and
 * full-table plans, and msm_run would (correctly) run the plain plan. */
static struct {
    unsigned rows, c;
    char tag[40];
} tables[] = {{0, 0, " (full table)"}, {3, 8, ""}};

/* czk_cuda_bases_table_fit in room for half the full table's rows (row 0 is
 * the bases: half - 1 rows' memory): a partial table (fewer rows than
 * windows) whose MSMs equal the CPU's; under one row's memory, none */
static void check_fit(czk_cuda_ctx *ctx, const czk_g1_aff *b1, czk_fr *s, czk_fr *sr, unsigned lg)
{
    czk_cuda_bases *db;
    czk_cuda_table_plan full, tp;
    const size_t n = (size_t)1 << lg;
    CHECK(czk_cuda_bases_upload_g1(ctx, &db, b1, n) == 0, "upload g1 bases: %s", czk_cuda_last_error());
    CHECK(czk_cuda_bases_table_plan(db, 0, 0, &full) == 0, "plan: %s", czk_cuda_last_error());
    CHECK(czk_cuda_bases_table_fit(db, SIZE_MAX, &tp) == 0 && tp.rows == full.rows && tp.c == full.c,
          "fit with room: %u rows c=%u, the full table has %u c=%u", tp.rows, tp.c, full.rows, full.c);
    const unsigned half = full.rows / 2;
    const size_t scratch = full.peak_bytes - full.bytes;
    const size_t mem = (half - 1) * n * sizeof(czk_g1_aff) + scratch;
    CHECK(czk_cuda_bases_table_fit(db, mem, &tp) == 0, "fit in %u rows: none", half);
    CHECK(tp.rows >= 2 && tp.rows <= half && tp.rows < tp.windows && tp.peak_bytes <= mem,
          "fit in %u rows: %u of %u rows, %zu bytes", half, tp.rows, tp.windows, tp.peak_bytes);
    CHECK(czk_cuda_bases_table_fit(db, n * sizeof(czk_g1_aff) - 1 + scratch, &tp) == -ENOSPC,
          "a table in under 1 row's memory");
    CHECK(czk_cuda_bases_table_fit(db, mem, &tp) == 0 && czk_cuda_bases_precompute(db, tp.rows, tp.c) == 0,
          "partial table: %s", czk_cuda_last_error());
    char tag[64];
    snprintf(tag, sizeof tag, " (fitted table: %u of %u rows, c=%u)", tp.rows, tp.windows, tp.c);
    check_g1(ctx, db, b1, s, sr, lg, tag);
    czk_cuda_bases_free(db);
}

/* czk_cuda_msm_keep_digits: MSMs over the same scalars and plan (full tables
 * of 512 points: the same window for G1 and G2) reuse the digits, any other
 * offset or count sorts again, off sorts again; every result equals the CPU */
static void check_kept(czk_cuda_ctx *ctx, const czk_g1_aff *b1, const czk_g2_aff *b2, czk_fr *s)
{
    const size_t n = 512;
    czk_cuda_bases *da, *db, *dq;
    CHECK(czk_cuda_bases_upload_g1(ctx, &da, b1, n) == 0 && czk_cuda_bases_upload_g1(ctx, &db, b1 + n, n) == 0 &&
              czk_cuda_bases_upload_g2(ctx, &dq, b2, n) == 0,
          "upload: %s", czk_cuda_last_error());
    CHECK(czk_cuda_bases_precompute(da, 0, 0) == 0 && czk_cuda_bases_precompute(db, 0, 0) == 0 &&
              czk_cuda_bases_precompute(dq, 0, 0) == 0,
          "tables: %s", czk_cuda_last_error());
    make_scalars(s, n, S_RANDOM);
    CHECK(czk_cuda_upload_async(ctx, CZK_CUDA_BUF_W, 0, s, n, NULL, NULL) == 0, "upload scalars");
    static const struct {
        int g2, on, kept;
        unsigned which; /* 0: da, 1: db, 2: dq */
        size_t off;
    } step[] = {{0, 1, 0, 0, 0}, {0, 1, 1, 1, 0}, {1, 1, 1, 2, 0}, {0, 1, 0, 0, 1},
                {0, 1, 1, 1, 1}, {0, 1, 0, 1, 0}, {0, 0, 0, 0, 0}, {0, 0, 0, 1, 0}};
    for (size_t i = 0; i < sizeof step / sizeof step[0]; i++) {
        czk_cuda_msm_keep_digits(ctx, step[i].on);
        const size_t m = n - step[i].off;
        if (step[i].g2) {
            czk_g2 gpu, cpu;
            CHECK(czk_cuda_msm_g2(ctx, dq, 0, CZK_CUDA_BUF_W, step[i].off, m, &gpu) == 0, "msm: %s",
                  czk_cuda_last_error());
            CHECK(czk_msm_g2(&cpu, b2, s + step[i].off, m, 0) == 0 && czk_g2_eq(&gpu, &cpu), "kept step %zu: g2 != cpu",
                  i);
        } else {
            czk_g1 gpu, cpu;
            CHECK(czk_cuda_msm_g1(ctx, step[i].which ? db : da, 0, CZK_CUDA_BUF_W, step[i].off, m, &gpu) == 0,
                  "msm: %s", czk_cuda_last_error());
            CHECK(czk_msm_g1(&cpu, b1 + (step[i].which ? n : 0), s + step[i].off, m, 0) == 0 && czk_g1_eq(&gpu, &cpu),
                  "kept step %zu: g1 != cpu", i);
        }
        CHECK(czk_cuda_msm_used_table(ctx), "kept step %zu: no table", i);
        CHECK(czk_cuda_msm_kept_digits(ctx) == step[i].kept, "kept step %zu: digits kept %d, want %d", i,
              czk_cuda_msm_kept_digits(ctx), step[i].kept);
    }
    czk_cuda_msm_keep_digits(ctx, 0);
    czk_cuda_bases_free(da);
    czk_cuda_bases_free(db);
    czk_cuda_bases_free(dq);
    printf("msm 2^9: digits kept across G1 and G2 MSMs of the same scalars ok\n");
}

int main(void)
{
    tu_seed();
    unsigned max_log = tu_env_uint("CZK_CUDA_TEST_MSM_MAX_LOG", 12);
    if (max_log < 10)
        max_log = 10;
    size_t nmax = (size_t)1 << max_log;
    if (max_log > 16)
        tables[1].c = max_log - 8;
    snprintf(tables[1].tag, sizeof tables[1].tag, " (3-row table, c=%u)", tables[1].c);
    czk_cuda_ctx *ctx = tu_ctx(10, nmax, 1);

    czk_fr *s = malloc(nmax * sizeof *s);
    czk_fr *sr = malloc(((size_t)1 << 12) * sizeof *sr); /* scalars mod r, to 2^12 */
    czk_g1_aff *b1 = malloc(nmax * sizeof *b1);
    CHECK(s && sr && b1, "oom");
    make_g1(b1, nmax);
    czk_cuda_bases *db1;
    CHECK(czk_cuda_bases_upload_g1(ctx, &db1, b1, nmax) == 0, "upload g1 bases: %s", czk_cuda_last_error());
    for (unsigned lg = 10; lg <= max_log; lg += 2)
        check_g1(ctx, db1, b1, s, sr, lg, "");
    czk_cuda_bases_free(db1);
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        CHECK(czk_cuda_bases_upload_g1(ctx, &db1, b1, nmax) == 0, "upload g1 bases: %s", czk_cuda_last_error());
        CHECK(czk_cuda_bases_precompute(db1, tables[t].rows, tables[t].c) == 0, "g1 table%s: %s", tables[t].tag,
              czk_cuda_last_error());
        CHECK(czk_cuda_bases_table_rows(db1) > 1, "g1 table%s has no rows", tables[t].tag);
        CHECK(czk_cuda_bases_precompute(db1, 0, 0) == -EBUSY, "a second table was accepted");
        check_g1(ctx, db1, b1, s, sr, max_log, tables[t].tag);
        check_g1(ctx, db1, b1, s, sr, 10, tables[t].tag);
        czk_cuda_bases_free(db1);
    }
    /* the table only for dense scalars: a context with msm_table_dense_pm
     * runs sparse ones (0/1-heavy: 10% above 1; all zero; all one) plain */
    {
        czk_cuda_cfg dc = {.device = 0, .max_log_n = 10, .max_msm_n = 1024, .msm_tables = 1,
                           .msm_table_dense_pm = CZK_CUDA_TABLE_DENSE_PM};
        czk_cuda_ctx *dctx;
        CHECK(czk_cuda_ctx_new(&dctx, &dc) == 0, "dense-choice context: %s", czk_cuda_last_error());
        czk_cuda_bases *dt;
        CHECK(czk_cuda_bases_upload_g1(dctx, &dt, b1, 1024) == 0, "upload: %s", czk_cuda_last_error());
        CHECK(czk_cuda_bases_precompute(dt, 0, 0) == 0, "table: %s", czk_cuda_last_error());
        for (int kind = 0; kind < S_COUNT; kind++) {
            const int dense = kind == S_RANDOM || kind == TU_S_MAX || kind == S_OVER;
            make_scalars(s, 1024, kind);
            czk_g1 gpu, cpu;
            CHECK(czk_cuda_msm_g1_host(dctx, dt, s, 1024, &gpu) == 0, "gpu msm: %s", czk_cuda_last_error());
            CHECK(czk_msm_g1(&cpu, b1, s, 1024, 0) == 0, "cpu msm");
            CHECK(czk_g1_eq(&gpu, &cpu), "msm g1 2^10 %s, table by density: gpu != czk_msm_g1", s_name[kind]);
            CHECK(czk_cuda_msm_used_table(dctx) == dense, "msm g1 2^10 %s: table used %d, want %d", s_name[kind],
                  czk_cuda_msm_used_table(dctx), dense);
        }
        czk_cuda_bases_free(dt);
        czk_cuda_ctx_free(dctx);
        printf("msm g1 2^10: table for dense scalars only ok\n");
    }
    check_fit(ctx, b1, s, sr, max_log);

    unsigned max_log2 = max_log >= 12 ? max_log - 2 : 10;
    size_t nmax2 = (size_t)1 << max_log2;
    czk_g2_aff *b2 = malloc(nmax2 * sizeof *b2);
    CHECK(b2, "oom");
    make_g2(b2, nmax2);
    czk_cuda_bases *db2;
    CHECK(czk_cuda_bases_upload_g2(ctx, &db2, b2, nmax2) == 0, "upload g2 bases: %s", czk_cuda_last_error());
    for (unsigned lg = 10; lg <= max_log2; lg += 2)
        check_g2(ctx, db2, b2, s, sr, lg, "");
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        czk_cuda_bases *dt;
        CHECK(czk_cuda_bases_upload_g2(ctx, &dt, b2, nmax2) == 0, "upload g2 bases: %s", czk_cuda_last_error());
        CHECK(czk_cuda_bases_precompute(dt, tables[t].rows, tables[t].c) == 0, "g2 table%s: %s", tables[t].tag,
              czk_cuda_last_error());
        check_g2(ctx, dt, b2, s, sr, max_log2, tables[t].tag);
        czk_cuda_bases_free(dt);
    }
    check_kept(ctx, b1, b2, s);
    free(b1);
    /* a G1 context refuses G2 bases */
    czk_g2 dummy;
    CHECK(czk_cuda_msm_g1(ctx, db2, 0, CZK_CUDA_BUF_W, 0, 16, (czk_g1 *)&dummy) == -EINVAL,
          "G2 bases accepted by the G1 msm");
    czk_cuda_bases_free(db2);
    free(b2);
    free(sr);
    free(s);
    czk_cuda_ctx_free(ctx);
    return 0;
}
