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
 * Bases are UNIQ distinct random points repeated (bucket work does not depend
 * on which points they are); the CPU run at 2^cpu_log also checks the result.
 * Needs bench_cuda.c's helpers (UNIQ, die, row, median, now_ms, msm_floor_ms).
 */
#ifndef CZK_BENCH_MSM_H
#define CZK_BENCH_MSM_H

#define DEF_BENCH_MSM(NAME, GRP, G2, FR, AFF, JAC, FPX, GEN, MUL_AFF, ADD, DBL, BATCH, EQ, UPLOAD, MSM, MSM_HOST, \
                      CPU_MSM, MUL_IMAD, RAND_FR, CURVE)                                                     \
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
    unsigned uniq = nb < UNIQ ? (unsigned)nb : UNIQ;                                                         \
    JAC *j = malloc(uniq * sizeof *j), p, q;                                                                 \
    FPX *scr = malloc(uniq * sizeof *scr);                                                                   \
    if (!b || !j || !scr)                                                                                    \
        die("malloc", -12);                                                                                  \
    FR k;                                                                                                    \
    RAND_FR(&k);                                                                                             \
    MUL_AFF(&q, &GEN, &k);                                                                                   \
    p = q;                                                                                                   \
    for (unsigned i = 0; i < uniq; i++) {                                                                    \
        ADD(&p, &p, &q);                                                                                     \
        DBL(&q, &q);                                                                                         \
        j[i] = p;                                                                                            \
    }                                                                                                        \
    BATCH(b, j, uniq, scr);                                                                                  \
    for (size_t i = uniq; i < nb; i++)                                                                       \
        b[i] = b[i % uniq];                                                                                  \
    czk_cuda_bases *db;                                                                                      \
    int rc;                                                                                                  \
    if ((rc = UPLOAD(ctx, &db, b, nb)))                                                                      \
        die("upload " GRP " bases", rc);                                                                     \
    if ((rc = czk_cuda_upload_async(ctx, CZK_CUDA_BUF_W, 0, (const czk_fr *)sc, nb, NULL, NULL)))            \
        die("upload scalars", rc);                                                                           \
    for (int i = 0; i < nl; i++) {                                                                           \
        size_t n = (size_t)1 << logs[i];                                                                     \
        JAC r;                                                                                               \
        if ((rc = MSM(ctx, db, 0, CZK_CUDA_BUF_W, 0, n, &r)))                                                \
            die(GRP, rc);                                                                                    \
        for (int t = 0; t < reps; t++) {                                                                     \
            double s = now_ms();                                                                             \
            MSM(ctx, db, 0, CZK_CUDA_BUF_W, 0, n, &r);                                                       \
            tm[t] = now_ms() - s;                                                                            \
        }                                                                                                    \
        char note[64];                                                                                       \
        snprintf(note, sizeof note, "c=%u, scalars on device", czk_cuda_msm_window_bits(n, G2, CURVE));      \
        row(GRP, logs[i], median(tm, reps), msm_floor_ms(n, G2, MUL_IMAD, CURVE), note);                            \
        double s = now_ms();                                                                                 \
        MSM_HOST(ctx, db, sc, n, &r);                                                                        \
        row(GRP " (+scalar H2D)", logs[i], now_ms() - s, msm_floor_ms(n, G2, MUL_IMAD, CURVE),                      \
            "pageable host scalars, 1 run");                                                                 \
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
    free(b), free(j), free(scr);                                                                             \
}

#endif
