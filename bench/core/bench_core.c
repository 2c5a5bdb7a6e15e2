/*
 * bench_core.c — throughput of the CPU crypto core: G1 and G2 MSM (full-size
 * random scalars below r, distinct random bases) and the Fr NTT, at chosen
 * sizes and thread counts.  Prints one table row per (op, size, threads):
 * wall time (best of --reps runs), elements per second, per thread, and the
 * process CPU time of that run with elements per CPU-second (the per-core
 * rate that stays meaningful when other jobs share the machine).
 *
 *   bench_core [--sizes 16,20] [--threads 1,2] [--g2-max 20] [--reps 2] [--bits]
 *
 * --bits uses circom-like scalars (50% zero, 40% one, 10% full size) instead.
 * The MSMs use the AVX-512 IFMA field code where the CPU has it; set
 * CZK_NO_IFMA=1 for the scalar code (the first line printed says which).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto/curve.h"
#include "common/crypto/field.h"
#include "common/crypto/fpx8.h"
#include "common/base/log.h"
#include "common/crypto/msm.h"
#include "tests/common/points.h"
#include "common/crypto/ntt.h"

static uint64_t rng = 0x1234567887654321ULL;

static uint64_t rand64(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rand_scalar(czk_fr *k, int bits)
{
    if (bits) {
        unsigned p = (unsigned)(rand64() % 10);
        memset(k, 0, sizeof(*k));
        if (p < 5)
            return;
        if (p < 9) {
            k->l[0] = 1;
            return;
        }
    }
    do {
        for (int i = 0; i < 4; i++)
            k->l[i] = rand64();
        k->l[3] &= 0x7fffffffffffffffULL;
    } while (k->l[3] >= CZK_FR_MOD.l[3]);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* t: best wall time; cpu: process CPU time of that run */
static void row(const char *op, unsigned lg, int th, double t, double cpu, size_t n)
{
    printf("| %-6s | 2^%-2u | %7d | %9.4f | %12.0f | %12.0f | %9.4f | %12.0f |\n", op, lg, th, t,
           (double)n / t, (double)n / t / th, cpu, (double)n / cpu);
    fflush(stdout);
}

static int parse_list(const char *s, unsigned *out, int max)
{
    int k = 0;
    while (*s && k < max) {
        out[k++] = (unsigned)strtoul(s, (char **)&s, 10);
        if (*s == ',')
            s++;
    }
    return k;
}

static czk_g1_aff *g1_bases(size_t n)
{
    czk_g1 q, x;
    czk_fr k;

    rand_scalar(&k, 0);
    czk_g1_mul_aff(&x, &CZK_G1_GEN, &k);
    rand_scalar(&k, 0);
    czk_g1_mul_aff(&q, &CZK_G1_GEN, &k);
    return t_g1_walk(n, &x, &q);
}

static czk_g2_aff *g2_bases(size_t n)
{
    czk_g2 q, x;
    czk_fr k;

    rand_scalar(&k, 0);
    czk_g2_mul_aff(&x, &CZK_G2_GEN, &k);
    rand_scalar(&k, 0);
    czk_g2_mul_aff(&q, &CZK_G2_GEN, &k);
    return t_g2_walk(n, &x, &q);
}

int main(int argc, char **argv)
{
    unsigned sizes[8] = {16, 20}, threads[8] = {1, 2};
    int nsizes = 2, nthreads = 2, reps = 2, bits = 0;
    unsigned g2_max = 20;

    czk_log_init("bench_core", CZK_LOG_INFO);

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            nsizes = parse_list(argv[++i], sizes, 8);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = parse_list(argv[++i], threads, 8);
        else if (!strcmp(argv[i], "--g2-max") && i + 1 < argc)
            g2_max = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--bits"))
            bits = 1;
        else {
            fprintf(stderr, "usage: %s [--sizes 16,20] [--threads 1,2] [--g2-max 20] [--reps 2] [--bits]\n",
                    argv[0]);
            return 2;
        }
    }
    printf("msm field code: %s\n", czk_fpx8_enabled() ? "AVX-512 IFMA, 8 lanes" : "scalar (no IFMA, or CZK_NO_IFMA set)");
    printf("scalars: %s\n\n", bits ? "circom-like (50% zero, 40% one, 10% full)" : "full-size random below r");
    printf("| op     | size | threads |  wall (s) |   elements/s | per thread/s |   cpu (s) | per cpu-s    |\n");
    printf("|--------|------|---------|-----------|--------------|--------------|-----------|--------------|\n");
    for (int si = 0; si < nsizes; si++) {
        unsigned lg = sizes[si];
        size_t n = (size_t)1 << lg;
        czk_fr *k = malloc(n * sizeof(czk_fr)), *a = malloc(n * sizeof(czk_fr));
        czk_fr *a0 = malloc(n * sizeof(czk_fr));

        for (size_t i = 0; i < n; i++)
            rand_scalar(&k[i], bits);
        for (size_t i = 0; i < n; i++) {
            czk_fr t;
            rand_scalar(&t, 0);
            czk_fr_to_mont(&a0[i], &t);
        }
        /* NTT (forward, in place) */
        for (int ti = 0; ti < nthreads; ti++) {
            double best = 1e30, bcpu = 0;
            for (int r = 0; r < reps; r++) {
                memcpy(a, a0, n * sizeof(czk_fr));
                double t0 = now(), c0 = cpu_now();
                if (czk_ntt(a, lg, (int)threads[ti]))
                    return 1;
                double t = now() - t0, ct = cpu_now() - c0;
                if (t < best) {
                    best = t;
                    bcpu = ct;
                }
            }
            row("ntt", lg, (int)threads[ti], best, bcpu, n);
        }
        /* G1 */
        {
            czk_g1_aff *b = g1_bases(n);
            czk_g1 res, first;
            for (int ti = 0; ti < nthreads; ti++) {
                double best = 1e30, bcpu = 0;
                for (int r = 0; r < reps; r++) {
                    double t0 = now(), c0 = cpu_now();
                    if (czk_msm_g1(&res, b, k, n, (int)threads[ti]))
                        return 1;
                    double t = now() - t0, ct = cpu_now() - c0;
                    if (t < best) {
                        best = t;
                        bcpu = ct;
                    }
                }
                if (ti == 0)
                    first = res;
                else if (!czk_g1_eq(&first, &res))
                    fprintf(stderr, "g1 msm: thread counts disagree\n");
                row("msm_g1", lg, (int)threads[ti], best, bcpu, n);
            }
            free(b);
        }
        /* G2 */
        if (lg <= g2_max) {
            czk_g2_aff *b = g2_bases(n);
            czk_g2 res, first;
            for (int ti = 0; ti < nthreads; ti++) {
                double best = 1e30, bcpu = 0;
                for (int r = 0; r < reps; r++) {
                    double t0 = now(), c0 = cpu_now();
                    if (czk_msm_g2(&res, b, k, n, (int)threads[ti]))
                        return 1;
                    double t = now() - t0, ct = cpu_now() - c0;
                    if (t < best) {
                        best = t;
                        bcpu = ct;
                    }
                }
                if (ti == 0)
                    first = res;
                else if (!czk_g2_eq(&first, &res))
                    fprintf(stderr, "g2 msm: thread counts disagree\n");
                row("msm_g2", lg, (int)threads[ti], best, bcpu, n);
            }
            free(b);
        }
        free(k);
        free(a);
        free(a0);
    }
    return 0;
}
