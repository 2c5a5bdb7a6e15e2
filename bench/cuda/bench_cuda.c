/*
 * bench_cuda.c — timings of the CUDA backend (MSM G1/G2, NTT, h) against
 * their integer-multiply floors (docs/bench-gpu.md, "Floors") and
 * against the CPU backend at a size the CPU can do.  Prints one table.
 *
 * Sizes come from the environment (log2 sizes, space separated):
 *   CZK_BENCH_MSM_G1 (default "20 24"), CZK_BENCH_MSM_G2 ("20 24"),
 *   CZK_BENCH_NTT ("20 24 27"), CZK_BENCH_H ("20 24"), CZK_BENCH_REPS (5),
 *   CZK_BENCH_CPU_MSM_LOG (16, 0 = skip), CZK_BENCH_CPU_NTT_LOG (20, 0 = skip).
 * MSM bases are 2^16 distinct random points repeated (generating 2^24
 * distinct points on the CPU would take minutes; bucket work does not depend
 * on which points they are).  Scalars are uniform random below r.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto/msm.h"
#include "common/crypto/ntt.h"
#include "backend/cuda/czk_cuda.h"

static uint64_t rs = 0x1234567887654321ULL;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}
static void rand_fr(czk_fr *x)
{
    do {
        for (int i = 0; i < 4; i++)
            x->l[i] = rnd();
        x->l[3] &= 0x7fffffffffffffffULL;
    } while (!czk_fr_is_canonical(x));
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_d);
    return v[n / 2];
}

static int parse_logs(const char *env, const char *dflt, unsigned *out, int max)
{
    const char *s = getenv(env);
    if (!s)
        s = dflt;
    int n = 0;
    char *end;
    while (*s && n < max) {
        unsigned long v = strtoul(s, &end, 10);
        if (end == s)
            break;
        out[n++] = (unsigned)v;
        s = end;
        while (*s == ' ' || *s == ',')
            s++;
    }
    return n;
}

#define UNIQ (1u << 16)

static void die(const char *what, int rc)
{
    fprintf(stderr, "bench_cuda: %s failed: %d (%s)\n", what, rc, czk_cuda_last_error());
    exit(1);
}

static double imad_rate; /* 32-bit multiply-adds per second */
static char rows[64][160];
static int nrows;

static void row(const char *op, unsigned lg, double ms, double floor_ms, const char *note)
{
    snprintf(rows[nrows++], sizeof rows[0], "| %-22s | 2^%-2u | %10.2f | %9.2f | %5.1fx | %s |", op, lg, ms, floor_ms,
             floor_ms > 0 ? ms / floor_ms : 0.0, note);
    printf("%s\n", rows[nrows - 1]);
    fflush(stdout);
}

/* floor of an MSM: mixed adds (9.6 Fp muls of ~532 IMAD each, x3 for G2) for every
 * nonzero digit plus two full adds (13.6 muls) per bucket in the reduction */
static double msm_floor_ms(size_t n, int g2)
{
    unsigned c = czk_cuda_msm_window_bits(n, g2), nw = (257 + c - 1) / c;
    double mul = 532.0 * (g2 ? 3 : 1);
    double imad = (double)n * nw * 9.6 * mul + (double)nw * (double)(1u << (c - 1)) * 2 * 13.6 * mul;
    return imad / imad_rate * 1e3;
}

/* floor of one NTT: (n/2) log n Fr muls of ~257 IMAD, or its memory passes, whichever is larger */
static double ntt_floor_ms(unsigned lg)
{
    double n = (double)((size_t)1 << lg);
    double comp = n / 2 * lg * 257 / imad_rate;
    double passes = ceil(lg / 10.0);
    double mem = passes * 2 * n * 32 / 4.3e12;
    return (comp > mem ? comp : mem) * 1e3;
}

int main(void)
{
    int ndev;
    if (czk_cuda_device_count(&ndev) != 0) {
        printf("bench_cuda: %s: skipping\n", czk_cuda_last_error());
        return 77;
    }
    czk_cuda_dev_info di;
    if (czk_cuda_device_info(0, &di))
        die("device info", -1);
    imad_rate = (double)di.sm_count * 64 * di.clock_khz * 1e3;
    printf("device: %s, %d SMs, %.0f MHz, %.1f GiB; IMAD floor rate %.2f T/s\n", di.name, di.sm_count,
           di.clock_khz / 1e3, di.mem_total / 1073741824.0, imad_rate / 1e12);

    unsigned g1[8], g2[8], nt[8], hh[8];
    int ng1 = parse_logs("CZK_BENCH_MSM_G1", "20 24", g1, 8);
    int ng2 = parse_logs("CZK_BENCH_MSM_G2", "20 24", g2, 8);
    int nnt = parse_logs("CZK_BENCH_NTT", "20 24 27", nt, 8);
    int nh = parse_logs("CZK_BENCH_H", "20 24", hh, 8);
    int reps = getenv("CZK_BENCH_REPS") ? atoi(getenv("CZK_BENCH_REPS")) : 5;
    if (reps < 1)
        reps = 1;
    unsigned cpu_msm = getenv("CZK_BENCH_CPU_MSM_LOG") ? atoi(getenv("CZK_BENCH_CPU_MSM_LOG")) : 16;
    unsigned cpu_ntt = getenv("CZK_BENCH_CPU_NTT_LOG") ? atoi(getenv("CZK_BENCH_CPU_NTT_LOG")) : 20;

    unsigned max_msm = 16, max_ntt = 10;
    for (int i = 0; i < ng1; i++)
        max_msm = g1[i] > max_msm ? g1[i] : max_msm;
    for (int i = 0; i < ng2; i++)
        max_msm = g2[i] > max_msm ? g2[i] : max_msm;
    for (int i = 0; i < nnt; i++)
        max_ntt = nt[i] > max_ntt ? nt[i] : max_ntt;
    for (int i = 0; i < nh; i++)
        max_ntt = hh[i] > max_ntt ? hh[i] : max_ntt;
    size_t nmax = (size_t)1 << max_msm;

    czk_cuda_cfg cfg = {.device = 0, .max_log_n = max_ntt, .max_msm_n = nmax, .enable_g2 = ng2 > 0};
    czk_cuda_ctx *ctx;
    double t0 = now_ms();
    int rc = czk_cuda_ctx_new(&ctx, &cfg);
    if (rc)
        die("context", rc);
    printf("context (NTT 2^%u, MSM 2^%u%s): %.0f ms\n", max_ntt, max_msm, ng2 ? ", G2" : "", now_ms() - t0);

    czk_fr *sc = malloc(nmax * sizeof *sc);
    if (!sc)
        die("malloc", -12);
    for (size_t i = 0; i < nmax; i++)
        rand_fr(&sc[i]);
    double *tm = malloc(reps * sizeof *tm);

    if (ng1) {
        czk_g1_aff *b = malloc(nmax * sizeof *b);
        czk_g1 *j = malloc(UNIQ * sizeof *j), p, q;
        czk_fp *scr = malloc(UNIQ * sizeof *scr);
        czk_fr k;
        rand_fr(&k);
        czk_g1_mul_aff(&q, &CZK_G1_GEN, &k);
        p = q;
        for (unsigned i = 0; i < UNIQ; i++) {
            czk_g1_add(&p, &p, &q);
            czk_g1_dbl(&q, &q);
            j[i] = p;
        }
        czk_g1_batch_to_aff(b, j, UNIQ, scr);
        for (size_t i = UNIQ; i < nmax; i++)
            b[i] = b[i % UNIQ];
        czk_cuda_bases *db;
        if ((rc = czk_cuda_bases_upload_g1(ctx, &db, b, nmax)))
            die("upload g1", rc);
        if ((rc = czk_cuda_upload_async(ctx, CZK_CUDA_BUF_W, 0, sc, nmax, NULL, NULL)))
            die("upload scalars", rc);
        for (int i = 0; i < ng1; i++) {
            size_t n = (size_t)1 << g1[i];
            czk_g1 r;
            if ((rc = czk_cuda_msm_g1(ctx, db, 0, CZK_CUDA_BUF_W, 0, n, &r)))
                die("msm g1", rc);
            for (int t = 0; t < reps; t++) {
                double s = now_ms();
                czk_cuda_msm_g1(ctx, db, 0, CZK_CUDA_BUF_W, 0, n, &r);
                tm[t] = now_ms() - s;
            }
            char note[64];
            snprintf(note, sizeof note, "c=%u, scalars on device", czk_cuda_msm_window_bits(n, 0));
            row("msm g1", g1[i], median(tm, reps), msm_floor_ms(n, 0), note);
            double s = now_ms();
            czk_cuda_msm_g1_host(ctx, db, sc, n, &r);
            row("msm g1 (+scalar H2D)", g1[i], now_ms() - s, msm_floor_ms(n, 0), "pageable host scalars, 1 run");
        }
        if (cpu_msm) {
            size_t n = (size_t)1 << cpu_msm;
            czk_g1 r;
            czk_msm_g1(&r, b, sc, n, 0);
            double s = now_ms();
            czk_msm_g1(&r, b, sc, n, 0);
            row("cpu msm g1 (all cores)", cpu_msm, now_ms() - s, 0, "czk_msm_g1, 1 run");
            czk_g1 gr;
            czk_cuda_msm_g1(ctx, db, 0, CZK_CUDA_BUF_W, 0, n, &gr);
            if (!czk_g1_eq(&gr, &r)) {
                fprintf(stderr, "bench_cuda: gpu and cpu msm g1 differ at 2^%u\n", cpu_msm);
                return 1;
            }
        }
        czk_cuda_bases_free(db);
        free(b), free(j), free(scr);
    }

    if (ng2) {
        size_t n2 = 1;
        for (int i = 0; i < ng2; i++)
            n2 = ((size_t)1 << g2[i]) > n2 ? ((size_t)1 << g2[i]) : n2;
        czk_g2_aff *b = malloc(n2 * sizeof *b);
        unsigned uniq = n2 < UNIQ ? (unsigned)n2 : UNIQ;
        czk_g2 *j = malloc(uniq * sizeof *j), p, q;
        czk_fp2 *scr = malloc(uniq * sizeof *scr);
        czk_fr k;
        rand_fr(&k);
        czk_g2_mul_aff(&q, &CZK_G2_GEN, &k);
        p = q;
        for (unsigned i = 0; i < uniq; i++) {
            czk_g2_add(&p, &p, &q);
            czk_g2_dbl(&q, &q);
            j[i] = p;
        }
        czk_g2_batch_to_aff(b, j, uniq, scr);
        for (size_t i = uniq; i < n2; i++)
            b[i] = b[i % uniq];
        czk_cuda_bases *db;
        if ((rc = czk_cuda_bases_upload_g2(ctx, &db, b, n2)))
            die("upload g2", rc);
        if ((rc = czk_cuda_upload_async(ctx, CZK_CUDA_BUF_W, 0, sc, n2, NULL, NULL)))
            die("upload scalars", rc);
        for (int i = 0; i < ng2; i++) {
            size_t n = (size_t)1 << g2[i];
            czk_g2 r;
            if ((rc = czk_cuda_msm_g2(ctx, db, 0, CZK_CUDA_BUF_W, 0, n, &r)))
                die("msm g2", rc);
            for (int t = 0; t < reps; t++) {
                double s = now_ms();
                czk_cuda_msm_g2(ctx, db, 0, CZK_CUDA_BUF_W, 0, n, &r);
                tm[t] = now_ms() - s;
            }
            char note[64];
            snprintf(note, sizeof note, "c=%u, scalars on device", czk_cuda_msm_window_bits(n, 1));
            row("msm g2", g2[i], median(tm, reps), msm_floor_ms(n, 1), note);
        }
        if (cpu_msm && ((size_t)1 << (cpu_msm - 2)) <= n2) {
            size_t n = (size_t)1 << (cpu_msm - 2);
            czk_g2 r;
            double s = now_ms();
            czk_msm_g2(&r, b, sc, n, 0);
            row("cpu msm g2 (all cores)", cpu_msm - 2, now_ms() - s, 0, "czk_msm_g2, 1 run");
        }
        czk_cuda_bases_free(db);
        free(b), free(j), free(scr);
    }

    if (nnt || nh) {
        size_t nn = (size_t)1 << max_ntt;
        czk_fr *a = malloc(nn * sizeof *a);
        for (size_t i = 0; i < nn; i++)
            a[i] = sc[i % nmax];
        for (int bf = 0; bf < 3; bf++)
            czk_cuda_upload_async(ctx, bf, 0, a, nn, NULL, NULL);
        czk_cuda_sync(ctx);
        for (int i = 0; i < nnt; i++) {
            czk_cuda_ntt_dev(ctx, nt[i], 0);
            czk_cuda_sync(ctx);
            for (int t = 0; t < reps; t++) {
                double s = now_ms();
                czk_cuda_ntt_dev(ctx, nt[i], 0);
                czk_cuda_sync(ctx);
                tm[t] = now_ms() - s;
            }
            row("ntt (forward, natural)", nt[i], median(tm, reps), ntt_floor_ms(nt[i]), "bit reversal folded into pass 1");
            czk_cuda_ntt_to_odd_coset_dev(ctx, nt[i]);
            czk_cuda_sync(ctx);
            for (int t = 0; t < reps; t++) {
                double s = now_ms();
                czk_cuda_ntt_to_odd_coset_dev(ctx, nt[i]);
                czk_cuda_sync(ctx);
                tm[t] = now_ms() - s;
            }
            row("odd coset (intt+ntt)", nt[i], median(tm, reps), 2 * ntt_floor_ms(nt[i]), "2 transforms + scale");
        }
        for (int i = 0; i < nh; i++) {
            czk_cuda_compute_h_dev(ctx, hh[i]);
            czk_cuda_sync(ctx);
            for (int t = 0; t < reps; t++) {
                double s = now_ms();
                czk_cuda_compute_h_dev(ctx, hh[i]);
                czk_cuda_sync(ctx);
                tm[t] = now_ms() - s;
            }
            row("h (6 transforms, dev)", hh[i], median(tm, reps), 6 * ntt_floor_ms(hh[i]), "a,b,c resident");
            size_t n = (size_t)1 << hh[i];
            czk_fr *h = malloc(n * sizeof *h);
            double s = now_ms();
            czk_cuda_compute_h(ctx, a, a, a, h, hh[i]);
            row("h (+H2D/D2H)", hh[i], now_ms() - s, 6 * ntt_floor_ms(hh[i]), "pageable host memory, 1 run");
            free(h);
        }
        if (cpu_ntt) {
            size_t n = (size_t)1 << cpu_ntt;
            czk_fr *c = malloc(n * sizeof *c);
            memcpy(c, sc, (n < nmax ? n : nmax) * sizeof *c);
            double s = now_ms();
            czk_ntt(c, cpu_ntt, 0);
            row("cpu ntt (all cores)", cpu_ntt, now_ms() - s, 0, "czk_ntt, 1 run");
            free(c);
        }
        free(a);
    }

    printf("\n| operation              | size | median ms  | floor ms  | /floor | notes |\n");
    printf("|------------------------|------|------------|-----------|--------|-------|\n");
    for (int i = 0; i < nrows; i++)
        printf("%s\n", rows[i]);
    czk_cuda_ctx_free(ctx);
    free(sc);
    free(tm);
    return 0;
}
