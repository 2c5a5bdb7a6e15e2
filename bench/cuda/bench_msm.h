/*
 * bench_msm.h — one group's MSM timings for bench_cuda.c, as a macro
 * instantiated once per curve and group:
 *   DEF_BENCH_MSM(NAME, GRP, G2, FR, AFF, JAC, FPX, GEN, MUL_AFF, ADD, DBL, BATCH, EQ, UPLOAD, MSM, MSM_HOST,
 *                 CPU_MSM, MUL_IMAD, RAND_FR, CURVE)
 * defines static void NAME(ctx, const void *sc (FR), const unsigned *logs, int nl, unsigned cpu_log, int reps,
 * double *tm): GRP "msm g1"..., G2 0 or 1, FR the scalar type, AFF / JAC / FPX the affine, Jacobian and
 * coordinate types, GEN the affine generator, MUL_AFF ... EQ the CPU curve functions, UPLOAD / MSM /
 * MSM_HOST the czk_cuda_* entry points, CPU_MSM the CPU MSM, MUL_IMAD the multiply-adds of one
 * base-field product (for the floor), RAND_FR(FR *) a random scalar below r, CURVE the
 * CZK_CUDA_CURVE_* (the window size the MSM picks).
 * Bases are distinct: thread t of the host's cores walks p, p + q, p + 2q, ...
 * from its own random multiples p, q of the generator (one addition per
 * point, then a batch conversion to affine).  Each size runs plain, then
 * (CZK_BENCH_TABLE, default 1) over bases of that size with a full fixed-base
 * table (czk_cuda_bases_precompute; its build time in the notes); the CPU run
 * at 2^cpu_log also checks the result.  CZK_BENCH_MSM_LESS=D times n = 2^k - D
 * terms instead of 2^k (a partition's n sits just below a power of two).
 * Needs bench_cuda.c's helpers (die, row, median, now_ms, msm_floor_ms, bench_threads).
 */
#ifndef CZK_BENCH_MSM_H
#define CZK_BENCH_MSM_H

#include <pthread.h>

/* the points [lo, hi) of a distinct-bases array, from multiples k1 G, k2 G */
struct bench_gen {
    void *out;
    size_t lo, hi;
    uint64_t k1[4], k2[4]; /* scalars of the curve (FR), as limbs */
};

#define DEF_BENCH_MSM(NAME, GRP, G2, FR, AFF, JAC, FPX, GEN, MUL_AFF, ADD, DBL, BATCH, EQ, UPLOAD, MSM, MSM_HOST, \
                      CPU_MSM, MUL_IMAD, RAND_FR, CURVE)                                                     \
static void *NAME##_gen(void *arg)                                                                           \
{                                                                                                            \
    struct bench_gen *g = arg;                                                                               \
    AFF *out = g->out;                                                                                       \
    enum { CH = 4096 };                                                                                      \
    JAC p, q, *j = malloc(CH * sizeof *j);                                                                   \
    FPX *scr = malloc(CH * sizeof *scr);                                                                     \
    if (!j || !scr)                                                                                          \
        die("malloc", -12);                                                                                  \
    MUL_AFF(&p, &GEN, (const FR *)g->k1);                                                                    \
    MUL_AFF(&q, &GEN, (const FR *)g->k2);                                                                    \
    for (size_t i = g->lo; i < g->hi; i += CH) {                                                             \
        size_t m = g->hi - i < CH ? g->hi - i : CH;                                                          \
        for (size_t k = 0; k < m; k++) {                                                                     \
            j[k] = p;                                                                                        \
            ADD(&p, &p, &q);                                                                                 \
        }                                                                                                    \
        BATCH(out + i, j, m, scr);                                                                           \
    }                                                                                                        \
    free(j), free(scr);                                                                                      \
    return NULL;                                                                                             \
}                                                                                                            \
static void NAME(czk_cuda_ctx *ctx, const void *scv, const unsigned *logs, int nl, unsigned cpu_log, int reps, \
                 double *tm)                                                                                \
{                                                                                                            \
    const FR *sc = (const FR *)scv;                                                                          \
    size_t nb = 1;                                                                                           \
    for (int i = 0; i < nl; i++)                                                                             \
        nb = ((size_t)1 << logs[i]) > nb ? ((size_t)1 << logs[i]) : nb;                                      \
    if (cpu_log && ((size_t)1 << cpu_log) > nb)                                                              \
        nb = (size_t)1 << cpu_log;                                                                           \
    AFF *b = malloc(nb * sizeof *b);                                                                         \
    if (!b)                                                                                                  \
        die("malloc", -12);                                                                                  \
    {                                                                                                        \
        unsigned nt = bench_threads();                                                                       \
        pthread_t th[256];                                                                                   \
        struct bench_gen g[256];                                                                             \
        double s = now_ms();                                                                                 \
        for (unsigned t = 0; t < nt; t++) {                                                                  \
            g[t].out = b;                                                                                    \
            g[t].lo = nb * t / nt;                                                                           \
            g[t].hi = nb * (t + 1) / nt;                                                                     \
            RAND_FR((FR *)g[t].k1);                                                                          \
            RAND_FR((FR *)g[t].k2);                                                                          \
            if (pthread_create(&th[t], NULL, NAME##_gen, &g[t]))                                             \
                die("pthread_create", -1);                                                                   \
        }                                                                                                    \
        for (unsigned t = 0; t < nt; t++)                                                                    \
            pthread_join(th[t], NULL);                                                                       \
        printf("%s: %zu distinct bases in %.0f ms (%u threads)\n", GRP, nb, now_ms() - s, nt);              \
    }                                                                                                        \
    czk_cuda_bases *db;                                                                                      \
    int rc;                                                                                                  \
    if ((rc = UPLOAD(ctx, &db, b, nb)))                                                                      \
        die("upload " GRP " bases", rc);                                                                     \
    if ((rc = czk_cuda_upload_async(ctx, CZK_CUDA_BUF_W, 0, (const czk_fr *)sc, nb, NULL, NULL)))            \
        die("upload scalars", rc);                                                                           \
    const int table = getenv("CZK_BENCH_TABLE") ? atoi(getenv("CZK_BENCH_TABLE")) : 1;                      \
    const size_t less = getenv("CZK_BENCH_MSM_LESS") ? strtoull(getenv("CZK_BENCH_MSM_LESS"), NULL, 0) : 0;  \
    for (int i = 0; i < nl; i++) {                                                                           \
        size_t n = (size_t)1 << logs[i];                                                                     \
        n -= less < n ? less : 0;                                                                            \
        unsigned c = czk_cuda_msm_window_bits(n, G2, CURVE);                                                 \
        JAC r;                                                                                               \
        if ((rc = MSM(ctx, db, 0, CZK_CUDA_BUF_W, 0, n, &r)))                                                \
            die(GRP, rc);                                                                                    \
        for (int t = 0; t < reps; t++) {                                                                     \
            double s = now_ms();                                                                             \
            MSM(ctx, db, 0, CZK_CUDA_BUF_W, 0, n, &r);                                                       \
            tm[t] = now_ms() - s;                                                                            \
        }                                                                                                    \
        char note[96];                                                                                       \
        snprintf(note, sizeof note, "c=%u, scalars on device, n = 2^%u - %zu", c, logs[i],                   \
                 ((size_t)1 << logs[i]) - n);                                                                \
        row(GRP, logs[i], median(tm, reps), msm_floor_ms(n, G2, MUL_IMAD, c, 0), note);                      \
        double s = now_ms();                                                                                 \
        MSM_HOST(ctx, db, sc, n, &r);                                                                        \
        row(GRP " (+scalar H2D)", logs[i], now_ms() - s, msm_floor_ms(n, G2, MUL_IMAD, c, 0),                \
            "pageable host scalars, 1 run");                                                                 \
        if (!table)                                                                                          \
            continue;                                                                                        \
        czk_cuda_bases *dt;                                                                                  \
        czk_cuda_table_plan tp;                                                                              \
        JAC rt;                                                                                              \
        if ((rc = UPLOAD(ctx, &dt, b, n)) || (rc = czk_cuda_bases_table_plan(dt, 0, 0, &tp)))               \
            die("upload " GRP " bases for a table", rc);                                                     \
        s = now_ms();                                                                                        \
        if ((rc = czk_cuda_bases_precompute(dt, 0, 0)))                                                      \
            die(GRP " table", rc);                                                                           \
        double build = now_ms() - s;                                                                         \
        if ((rc = MSM(ctx, dt, 0, CZK_CUDA_BUF_W, 0, n, &rt)))                                               \
            die(GRP " with a table", rc);                                                                    \
        if (!EQ(&rt, &r)) {                                                                                  \
            fprintf(stderr, "bench_cuda: %s 2^%u with a table differs from without\n", GRP, logs[i]);        \
            exit(1);                                                                                         \
        }                                                                                                    \
        for (int t = 0; t < reps; t++) {                                                                     \
            s = now_ms();                                                                                    \
            MSM(ctx, dt, 0, CZK_CUDA_BUF_W, 0, n, &rt);                                                      \
            tm[t] = now_ms() - s;                                                                            \
        }                                                                                                    \
        snprintf(note, sizeof note, "table c=%u, %u rows (%.1f GiB), built in %.0f ms", tp.c, tp.rows,       \
                 (double)tp.bytes / 1073741824.0, build);                                                    \
        row(GRP " (table)", logs[i], median(tm, reps), msm_floor_ms(n, G2, MUL_IMAD, tp.c, 1), note);         \
        czk_cuda_bases_free(dt);                                                                             \
    }                                                                                                        \
    if (cpu_log) {                                                                                           \
        size_t n = (size_t)1 << cpu_log;                                                                     \
        JAC r, gr;                                                                                           \
        double s = now_ms();                                                                                 \
        CPU_MSM(&r, b, sc, n, 0);                                                                            \
        row("cpu " GRP " (all cores)", cpu_log, now_ms() - s, 0, "CPU msm, 1 run");                          \
        if ((rc = czk_cuda_upload_async(ctx, CZK_CUDA_BUF_W, 0, (const czk_fr *)sc, n, NULL, NULL)) ||       \
            (rc = MSM(ctx, db, 0, CZK_CUDA_BUF_W, 0, n, &gr)))                                               \
            die(GRP, rc);                                                                                    \
        if (!EQ(&gr, &r)) {                                                                                  \
            fprintf(stderr, "bench_cuda: gpu and cpu %s differ at 2^%u\n", GRP, cpu_log);                    \
            exit(1);                                                                                         \
        }                                                                                                    \
    }                                                                                                        \
    czk_cuda_bases_free(db);                                                                                 \
    free(b);                                                                                                 \
}

#endif
