/*
 * bench_cuda.c — timings of the CUDA backend (MSM G1/G2, NTT, h) against
 * their integer-multiply floors (docs/bench-gpu.md, "Floors") and
 * against the CPU backend at a size the CPU can do.  Prints one table.
 *
 * bench_cuda [--curve bls12-381|bn254]: BLS12-381 by default; bn254 times
 * the BN254 (snarkjs "bn128") kernels on a BN254-only context.
 * Sizes come from the environment (log2 sizes, space separated):
 *   CZK_BENCH_MSM_G1 (default "20 24"; bn254 "20 21 22 23 24"),
 *   CZK_BENCH_MSM_G2 (likewise), CZK_BENCH_NTT ("20 24 27"; bn254
 *   "20 21 22 23 24"), CZK_BENCH_H ("20 24"), CZK_BENCH_REPS (5),
 *   CZK_BENCH_CPU_MSM_LOG (16, 0 = skip; G2 runs 2 lower),
 *   CZK_BENCH_CPU_NTT_LOG (20, 0 = skip), CZK_BENCH_BITS (share of the
 *   MSM scalars that are 0 or 1, default 0), CZK_BENCH_MSM_LESS (MSMs of
 *   2^k - D terms, default 0).
 * MSM bases are distinct points (bench_msm.h), each size also with a full
 * fixed-base table (CZK_BENCH_TABLE=0 skips those rows).  Scalars are
 * uniform random below r.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/crypto/bn254_msm.h"
#include "common/crypto/bn254_ntt.h"
#include "common/crypto/msm.h"
#include "common/crypto/ntt.h"
#include "common/groth16/groth16.h"
#include "backend/cuda/czk_cuda.h"
#include "bench/cuda/bench_msm.h"

static uint64_t rs = 0x1234567887654321ULL;
static uint64_t rnd(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return rs;
}
/* uniform below r by rejection: 4 random limbs, the top one masked to r's bit length */
#define RAND_BELOW(x, top_mask, canonical)                                    \
    do {                                                                      \
        for (int i_ = 0; i_ < 4; i_++)                                        \
            (x)->l[i_] = rnd();                                               \
        (x)->l[3] &= (top_mask);                                              \
    } while (!canonical(x))
static void rand_fr(czk_fr *x) { RAND_BELOW(x, 0x7fffffffffffffffULL, czk_fr_is_canonical); }
static void rand_bn_fr(czk_bn254_fr *x) { RAND_BELOW(x, 0x3fffffffffffffffULL, czk_bn254_fr_is_canonical); }

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

/* threads for generating bases: the online cores, at most 256 */
static unsigned bench_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : n > 256 ? 256u : (unsigned)n;
}

static void die(const char *what, int rc)
{
    fprintf(stderr, "bench_cuda: %s failed: %d (%s)\n", what, rc, czk_cuda_last_error());
    exit(1);
}

static double imad_rate; /* 32-bit multiply-adds per second */
static char rows[64][256];
static int nrows;

static void row(const char *op, unsigned lg, double ms, double floor_ms, const char *note)
{
    snprintf(rows[nrows++], sizeof rows[0], "| %-22s | 2^%-2u | %10.2f | %9.2f | %5.1fx | %s |", op, lg, ms, floor_ms,
             floor_ms > 0 ? ms / floor_ms : 0.0, note);
    printf("%s\n", rows[nrows - 1]);
    fflush(stdout);
}

/* floor of an MSM at window c: mixed adds (9.6 Fp muls of mul_imad IMAD
 * each, x3 for G2: BLS12-381's 12-word Fp ~532, BN254's 8-word ~257) for every
 * nonzero digit plus two full adds (13.6 muls) per bucket in the reduction,
 * of every window (bucket_windows 0) or of bucket_windows (a table) */
static double msm_floor_ms(size_t n, int g2, double mul_imad, unsigned c, unsigned bucket_windows)
{
    unsigned nw = (257 + c - 1) / c, bw = bucket_windows ? bucket_windows : nw;
    double mul = mul_imad * (g2 ? 3 : 1);
    double imad = (double)n * nw * 9.6 * mul + (double)bw * (double)(1u << (c - 1)) * 2 * 13.6 * mul;
    return imad / imad_rate * 1e3;
}

/* floor of one NTT: (n/2) log n Fr muls of ~257 IMAD (8-word Fr, both curves),
 * or its memory passes, whichever is larger */
static double ntt_floor_ms(unsigned lg)
{
    double n = (double)((size_t)1 << lg);
    double comp = n / 2 * lg * 257 / imad_rate;
    double passes = ceil(lg / 10.0);
    double mem = passes * 2 * n * 32 / 4.3e12;
    return (comp > mem ? comp : mem) * 1e3;
}

/* ---- MSM, one instance per curve and group ---- */
DEF_BENCH_MSM(bls_g1, "msm g1", 0, czk_fr, czk_g1_aff, czk_g1, czk_fp, CZK_G1_GEN, czk_g1_mul_aff, czk_g1_add,
              czk_g1_dbl, czk_g1_batch_to_aff, czk_g1_eq, czk_cuda_bases_upload_g1, czk_cuda_msm_g1,
              czk_cuda_msm_g1_host, czk_msm_g1, 532.0, rand_fr, CZK_CUDA_CURVE_BLS12_381)
DEF_BENCH_MSM(bls_g2, "msm g2", 1, czk_fr, czk_g2_aff, czk_g2, czk_fp2, CZK_G2_GEN, czk_g2_mul_aff, czk_g2_add,
              czk_g2_dbl, czk_g2_batch_to_aff, czk_g2_eq, czk_cuda_bases_upload_g2, czk_cuda_msm_g2,
              czk_cuda_msm_g2_host, czk_msm_g2, 532.0, rand_fr, CZK_CUDA_CURVE_BLS12_381)
DEF_BENCH_MSM(bn_g1, "msm g1", 0, czk_bn254_fr, czk_bn254_g1_aff, czk_bn254_g1, czk_bn254_fp, CZK_BN254_G1_GEN,
              czk_bn254_g1_mul_aff, czk_bn254_g1_add, czk_bn254_g1_dbl, czk_bn254_g1_batch_to_aff, czk_bn254_g1_eq,
              czk_cuda_bn254_bases_upload_g1, czk_cuda_bn254_msm_g1, czk_cuda_bn254_msm_g1_host, czk_bn254_msm_g1,
              257.0, rand_bn_fr, CZK_CUDA_CURVE_BN254)
DEF_BENCH_MSM(bn_g2, "msm g2", 1, czk_bn254_fr, czk_bn254_g2_aff, czk_bn254_g2, czk_bn254_fp2, CZK_BN254_G2_GEN,
              czk_bn254_g2_mul_aff, czk_bn254_g2_add, czk_bn254_g2_dbl, czk_bn254_g2_batch_to_aff, czk_bn254_g2_eq,
              czk_cuda_bn254_bases_upload_g2, czk_cuda_bn254_msm_g2, czk_cuda_bn254_msm_g2_host, czk_bn254_msm_g2,
              257.0, rand_bn_fr, CZK_CUDA_CURVE_BN254)

/* ---- NTT and h, through one curve's entry points ---- */
struct ntt_fns {
    int (*ntt_fwd_dev)(czk_cuda_ctx *ctx, unsigned log_n); /* forward NTT of buffer A */
    int (*coset_dev)(czk_cuda_ctx *ctx, unsigned log_n);
    int (*h_dev)(czk_cuda_ctx *ctx, unsigned log_n);
    int (*h_host)(czk_cuda_ctx *ctx, const void *a, void *h, unsigned log_n); /* h of (a, a, a) */
    int (*cpu_ntt)(void *a, unsigned log_n);
};

static int bls_ntt_fwd(czk_cuda_ctx *ctx, unsigned lg) { return czk_cuda_ntt_dev(ctx, lg, 0); }
static int bn_ntt_fwd(czk_cuda_ctx *ctx, unsigned lg) { return czk_cuda_bn254_ntt_dev(ctx, lg, 0); }
static int bls_h_host(czk_cuda_ctx *ctx, const void *a, void *h, unsigned lg)
{
    return czk_cuda_compute_h(ctx, a, a, a, h, lg);
}
static int bls_cpu_ntt(void *a, unsigned lg) { return czk_ntt(a, lg, 0); }
static int bn_h_host(czk_cuda_ctx *ctx, const void *a, void *h, unsigned lg)
{
    return czk_cuda_bn254_compute_h(ctx, a, a, a, h, lg);
}
static int bn_cpu_ntt(void *a, unsigned lg) { return czk_bn254_ntt(a, lg, 0); }

/* median of reps timed runs of op(ctx, lg) after one warm-up, each to completion */
static double time_dev(int (*op)(czk_cuda_ctx *, unsigned), czk_cuda_ctx *ctx, unsigned lg, int reps, double *tm)
{
    op(ctx, lg);
    czk_cuda_sync(ctx);
    for (int t = 0; t < reps; t++) {
        double s = now_ms();
        op(ctx, lg);
        czk_cuda_sync(ctx);
        tm[t] = now_ms() - s;
    }
    return median(tm, reps);
}

/* sc: nmax random 32-byte Fr elements of the curve */
static void bench_ntt(czk_cuda_ctx *ctx, const struct ntt_fns *f, const czk_fr *sc, size_t nmax, unsigned max_ntt,
                      const unsigned *nt, int nnt, const unsigned *hh, int nh, int reps, unsigned cpu_ntt, double *tm)
{
    size_t nn = (size_t)1 << max_ntt;
    czk_fr *a = malloc(nn * sizeof *a);
    if (!a)
        die("malloc", -12);
    for (size_t i = 0; i < nn; i++)
        a[i] = sc[i % nmax];
    for (int bf = 0; bf < 3; bf++)
        czk_cuda_upload_async(ctx, bf, 0, a, nn, NULL, NULL);
    czk_cuda_sync(ctx);
    for (int i = 0; i < nnt; i++) {
        row("ntt (forward, natural)", nt[i], time_dev(f->ntt_fwd_dev, ctx, nt[i], reps, tm), ntt_floor_ms(nt[i]),
            "bit reversal folded into pass 1");
        row("odd coset (intt+ntt)", nt[i], time_dev(f->coset_dev, ctx, nt[i], reps, tm), 2 * ntt_floor_ms(nt[i]),
            "2 transforms + scale");
    }
    for (int i = 0; i < nh; i++) {
        row("h (6 transforms, dev)", hh[i], time_dev(f->h_dev, ctx, hh[i], reps, tm), 6 * ntt_floor_ms(hh[i]),
            "a,b,c resident");
        size_t n = (size_t)1 << hh[i];
        czk_fr *h = malloc(n * sizeof *h);
        double s = now_ms();
        f->h_host(ctx, a, h, hh[i]);
        row("h (+H2D/D2H)", hh[i], now_ms() - s, 6 * ntt_floor_ms(hh[i]), "pageable host memory, 1 run");
        free(h);
    }
    if (cpu_ntt) {
        size_t n = (size_t)1 << cpu_ntt;
        czk_fr *c = malloc(n * sizeof *c);
        memcpy(c, sc, (n < nmax ? n : nmax) * sizeof *c);
        double s = now_ms();
        f->cpu_ntt(c, cpu_ntt);
        row("cpu ntt (all cores)", cpu_ntt, now_ms() - s, 0, "CPU ntt, 1 run");
        free(c);
    }
    free(a);
}

/* one curve: its context, entry points and default sizes */
struct curve_bench {
    const char *name;
    unsigned curves;
    const char *dflt_msm, *dflt_ntt;
    void (*rand_fr)(czk_fr *x); /* a random Fr element of the curve (32 bytes) */
    void (*msm_g1)(czk_cuda_ctx *, const void *, const unsigned *, int, unsigned, int, double *);
    void (*msm_g2)(czk_cuda_ctx *, const void *, const unsigned *, int, unsigned, int, double *);
    struct ntt_fns ntt;
};

static void bn_rand_fr32(czk_fr *x) { rand_bn_fr((czk_bn254_fr *)x); }

static const struct curve_bench BLS = {
    "bls12-381", CZK_CUDA_CURVE_BLS12_381, "20 24", "20 24 27", rand_fr, bls_g1, bls_g2,
    {bls_ntt_fwd, czk_cuda_ntt_to_odd_coset_dev, czk_cuda_compute_h_dev, bls_h_host, bls_cpu_ntt}};
static const struct curve_bench BN254 = {
    "bn254", CZK_CUDA_CURVE_BN254, "20 21 22 23 24", "20 21 22 23 24", bn_rand_fr32, bn_g1, bn_g2,
    {bn_ntt_fwd, czk_cuda_bn254_ntt_to_odd_coset_dev, czk_cuda_bn254_compute_h_dev, bn_h_host,
     bn_cpu_ntt}};

int main(int argc, char **argv)
{
    const struct curve_bench *cv = &BLS;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--curve") && i + 1 < argc) {
            const char *c = argv[++i];
            if (!strcmp(c, "bn254") || !strcmp(c, "bn128"))
                cv = &BN254;
            else if (strcmp(c, "bls12-381") && strcmp(c, "bls12381")) {
                fprintf(stderr, "bench_cuda: unknown curve (bls12-381 or bn254)\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: bench_cuda [--curve bls12-381|bn254]\n");
            return 2;
        }
    }
    int ndev;
    if (czk_cuda_device_count(&ndev) != 0) {
        printf("bench_cuda: %s: skipping\n", czk_cuda_last_error());
        return 77;
    }
    czk_cuda_dev_info di;
    if (czk_cuda_device_info(0, &di))
        die("device info", -1);
    imad_rate = (double)di.sm_count * 64 * di.clock_khz * 1e3;
    printf("device: %s, %d SMs, %.0f MHz, %.1f GiB; IMAD floor rate %.2f T/s; curve %s\n", di.name, di.sm_count,
           di.clock_khz / 1e3, di.mem_total / 1073741824.0, imad_rate / 1e12, cv->name);

    unsigned g1[8], g2[8], nt[8], hh[8];
    int ng1 = parse_logs("CZK_BENCH_MSM_G1", cv->dflt_msm, g1, 8);
    int ng2 = parse_logs("CZK_BENCH_MSM_G2", cv->dflt_msm, g2, 8);
    int nnt = parse_logs("CZK_BENCH_NTT", cv->dflt_ntt, nt, 8);
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
    if (cpu_msm > max_msm)
        max_msm = cpu_msm;
    size_t nmax = (size_t)1 << max_msm;

    czk_cuda_cfg cfg = {.device = 0,
                        .max_log_n = max_ntt,
                        .max_msm_n = nmax,
                        .enable_g2 = ng2 > 0,
                        .curves = cv->curves,
                        .msm_tables = 1};
    czk_cuda_ctx *ctx;
    double t0 = now_ms();
    int rc = czk_cuda_ctx_new(&ctx, &cfg);
    if (rc)
        die("context", rc);
    printf("context (NTT 2^%u, MSM 2^%u%s): %.0f ms\n", max_ntt, max_msm, ng2 ? ", G2" : "", now_ms() - t0);

    czk_fr *sc = malloc(nmax * sizeof *sc);
    double *tm = malloc(reps * sizeof *tm);
    if (!sc || !tm)
        die("malloc", -12);
    /* CZK_BENCH_BITS=F: a share F of the scalars 0 or 1 (a hash circuit's witness), the rest random */
    double bits = getenv("CZK_BENCH_BITS") ? atof(getenv("CZK_BENCH_BITS")) : 0.0;
    for (size_t i = 0; i < nmax; i++) {
        if ((double)(rnd() >> 11) / 9007199254740992.0 < bits) {
            memset(&sc[i], 0, sizeof sc[i]);
            sc[i].l[0] = rnd() & 1;
        } else {
            cv->rand_fr(&sc[i]);
        }
    }
    if (bits > 0)
        printf("scalars: %.0f%% 0 or 1\n", bits * 100);

    if (ng1)
        cv->msm_g1(ctx, sc, g1, ng1, cpu_msm, reps, tm);
    if (ng2)
        cv->msm_g2(ctx, sc, g2, ng2, cpu_msm >= 2 ? cpu_msm - 2 : 0, reps, tm);
    if (nnt || nh)
        bench_ntt(ctx, &cv->ntt, sc, nmax, max_ntt, nt, nnt, hh, nh, reps, cpu_ntt, tm);

    printf("\n| operation (%-9s)    | size | median ms  | floor ms  | /floor | notes |\n", cv->name);
    printf("|------------------------|------|------------|-----------|--------|-------|\n");
    for (int i = 0; i < nrows; i++)
        printf("%s\n", rows[i]);
    czk_cuda_ctx_free(ctx);
    free(sc);
    free(tm);
    return 0;
}
