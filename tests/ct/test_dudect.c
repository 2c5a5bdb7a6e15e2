/*
 * test_dudect.c — a dudect-style timing test of the constant-time code
 * (Reparaz, Balasch, Verbauwhede, "Dude, is my code constant time?", 2017):
 * each target is timed many times on two classes of secret input, a FIXED
 * value and RANDOM values, the class of every measurement drawn at random so
 * both classes see the same machine state; Welch's t statistic then compares
 * the two timing distributions, raw and cropped at several upper percentiles
 * (the percentiles come from a warm-up batch that is not counted).  A target
 * fails when max |t| exceeds the threshold (10, dudect's "definitely not
 * constant time").
 *
 * Targets (the secret in parentheses), for BLS12-381 and, with the prefix
 * bn254_, for BN254 (dudect_curve_tmpl.h):
 *   fp_inv_ct, fp2_inv_ct, fr_inv_ct   the Fermat inversions (the value)
 *   g1_mul_ct, g2_mul_ct               scalar multiplication (the scalar)
 *   g1_to_aff_ct, g2_to_aff_ct         the finalize normalisation (Z)
 *   fp_inv, g1_to_aff                  the VARIABLE-TIME binary-GCD inversion
 *                                      and the normalisation finalize used
 *                                      before, to show the test catches a leak
 * and finalize, czk_groth16_finalize (r and s; BLS12-381).
 *
 * usage: test_dudect [-n MEASUREMENTS] [-t THRESHOLD] [--fixed random|special]
 *                    [--expect-leak] TARGET...
 *   --fixed special: the fixed class is an edge value (1 for inversions, the
 *     scalar 0 and r, s = 0, Z = 1) instead of a fixed random value.
 *   --expect-leak: pass only when every target leaks (|t| > threshold), for
 *     checking the harness against the variable-time inversion.
 * Cycles come from rdtsc between lfences on x86-64, else CLOCK_MONOTONIC.
 * Exit 0 pass, 1 fail, 2 usage.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "common/crypto/bn254_curve.h"
#include "common/crypto/curve.h"
#include "common/crypto/field.h"
#include "common/groth16/groth16.h"
#include "tests/common/test_util.h"

#define BATCH 4096   /* measurements per batch (inputs prepared before timing) */
#define NCROP 10     /* cropped tests besides the raw one */

static inline uint64_t now_ticks(void)
{
#if defined(__x86_64__)
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

static bool g_special;

/* ---- inputs and targets ---- */

struct target {
    const char *name;
    size_t in_size;
    void (*gen)(void *in, int cls);
    void (*run)(const void *in);
    long n_default; /* measurements, warm-up batch excluded */
};

static volatile uint64_t g_sink;

static void sink(const void *p, size_t n)
{
    const uint64_t *w = p;
    uint64_t acc = 0;
    for (size_t i = 0; i < n / 8; i++)
        acc ^= w[i];
    g_sink ^= acc;
}

#define NTARGETS_CURVE 9

#define DC_SUF bls
#define DC_NAME ""
#define DC_FP czk_fp
#define DC_FP2 czk_fp2
#define DC_FR czk_fr
#define DC_G1 czk_g1
#define DC_G2 czk_g2
#define DC_FP_ONE CZK_FP_ONE
#define DC_FP2_ONE CZK_FP2_ONE
#define DC_FR_ONE CZK_FR_ONE
#define DC_G1_GEN CZK_G1_GEN
#define DC_G2_GEN CZK_G2_GEN
#define DC_FP_LIMBS 6
#define DC_FP_TOP 0x0fffffffffffffffULL
#define DC_FR_TOP 0x3fffffffffffffffULL
#include "tests/ct/dudect_curve_tmpl.h"

#define DC_SUF bn254
#define DC_NAME "bn254_"
#define DC_FP czk_bn254_fp
#define DC_FP2 czk_bn254_fp2
#define DC_FR czk_bn254_fr
#define DC_G1 czk_bn254_g1
#define DC_G2 czk_bn254_g2
#define DC_FP_ONE CZK_BN254_FP_ONE
#define DC_FP2_ONE CZK_BN254_FP2_ONE
#define DC_FR_ONE CZK_BN254_FR_ONE
#define DC_G1_GEN CZK_BN254_G1_GEN
#define DC_G2_GEN CZK_BN254_G2_GEN
#define DC_FP_LIMBS 4
#define DC_FP_TOP 0x1fffffffffffffffULL
#define DC_FR_TOP 0x1fffffffffffffffULL
#include "tests/ct/dudect_curve_tmpl.h"

/* czk_groth16_finalize (BLS12-381): the fixed class's r, s and the public
 * inputs, drawn once */
static czk_fr g_fix_r, g_fix_s;
static czk_groth16_params g_params;
static czk_groth16_msm_out g_msm;

static void setup_fixed(void)
{
    setup_fixed_bls(g_special);
    setup_fixed_bn254(g_special);
    g1_rand_aff_bls(&g_params.alpha1);
    g1_rand_aff_bls(&g_params.beta1);
    g1_rand_aff_bls(&g_params.delta1);
    g2_rand_aff_bls(&g_params.beta2);
    g2_rand_aff_bls(&g_params.delta2);
    g1_rand_aff_bls(&g_msm.a);
    g1_rand_aff_bls(&g_msm.b1);
    g1_rand_aff_bls(&g_msm.c);
    g2_rand_aff_bls(&g_msm.b2);
    if (g_special) {
        memset(&g_fix_r, 0, sizeof(g_fix_r));
        memset(&g_fix_s, 0, sizeof(g_fix_s));
    } else {
        rand_fr_bls(&g_fix_r);
        rand_fr_bls(&g_fix_s);
    }
}

static void gen_rs(void *in, int cls)
{
    czk_fr *rs = in;
    if (cls) {
        rand_fr_bls(&rs[0]);
        rand_fr_bls(&rs[1]);
    } else {
        rs[0] = g_fix_r;
        rs[1] = g_fix_s;
    }
}
static void run_finalize(const void *in)
{
    const czk_fr *rs = in;
    czk_groth16_proof pr;
    czk_groth16_finalize(&g_params, &g_msm, &rs[0], &rs[1], &pr);
    sink(&pr, sizeof(pr));
}

static const struct target target_finalize = {
    "finalize", 2 * sizeof(czk_fr), gen_rs, run_finalize, 10000
};

/* every target by name */
static const struct target *find_target(const char *name)
{
    for (int i = 0; i < NTARGETS_CURVE; i++) {
        if (!strcmp(name, targets_bls[i].name))
            return &targets_bls[i];
        if (!strcmp(name, targets_bn254[i].name))
            return &targets_bn254[i];
    }
    return !strcmp(name, target_finalize.name) ? &target_finalize : NULL;
}

/* ---- statistics ---- */

struct welch { double n[2], mean[2], m2[2]; };

static void welch_push(struct welch *w, int cls, double x)
{
    double d = x - w->mean[cls];
    w->n[cls] += 1;
    w->mean[cls] += d / w->n[cls];
    w->m2[cls] += d * (x - w->mean[cls]);
}

static double welch_t(const struct welch *w)
{
    if (w->n[0] < 2 || w->n[1] < 2)
        return 0;
    double v0 = w->m2[0] / (w->n[0] - 1), v1 = w->m2[1] / (w->n[1] - 1);
    double den = sqrt(v0 / w->n[0] + v1 / w->n[1]);
    return den > 0 ? (w->mean[0] - w->mean[1]) / den : 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* time one batch: classes drawn at random, inputs made before the clock runs */
static void measure(const struct target *tg, unsigned char *in, int *cls, uint64_t *dt, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        cls[i] = (int)(t_rand64() & 1);
        tg->gen(in + i * tg->in_size, cls[i]);
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t t0 = now_ticks();
        tg->run(in + i * tg->in_size);
        dt[i] = now_ticks() - t0;
    }
}

/* max |t| over the raw and cropped tests; *crop_out tells which (-1 raw) */
static double run_target(const struct target *tg, long n, int *crop_out, double *mean_out)
{
    unsigned char *in = malloc(BATCH * tg->in_size);
    int *cls = malloc(BATCH * sizeof(int));
    uint64_t *dt = malloc(BATCH * sizeof(uint64_t)), *sorted = malloc(BATCH * sizeof(uint64_t));
    struct welch w[NCROP + 1];
    uint64_t cut[NCROP];
    double best = 0;

    if (!in || !cls || !dt || !sorted) {
        fprintf(stderr, "test_dudect: out of memory\n");
        exit(1);
    }
    memset(w, 0, sizeof(w));
    /* warm-up batch: caches, branch predictors, frequency; sets the crops */
    measure(tg, in, cls, dt, BATCH);
    memcpy(sorted, dt, BATCH * sizeof(uint64_t));
    qsort(sorted, BATCH, sizeof(uint64_t), cmp_u64);
    for (int k = 0; k < NCROP; k++) {
        double p = 1 - pow(0.5, 10.0 * (k + 1) / NCROP); /* 0.5 .. 0.999 */
        cut[k] = sorted[(size_t)(p * (BATCH - 1))];
    }
    for (long done = 0; done < n; done += BATCH) {
        size_t m = (size_t)(n - done < BATCH ? n - done : BATCH);
        measure(tg, in, cls, dt, m);
        for (size_t i = 0; i < m; i++) {
            welch_push(&w[NCROP], cls[i], (double)dt[i]);
            for (int k = 0; k < NCROP; k++)
                if (dt[i] <= cut[k])
                    welch_push(&w[k], cls[i], (double)dt[i]);
        }
    }
    *crop_out = -1;
    for (int k = 0; k <= NCROP; k++) {
        /* a cropped test counts once both classes have a fair number of samples */
        if (w[k].n[0] < 1000 || w[k].n[1] < 1000)
            continue;
        double t = fabs(welch_t(&w[k]));
        if (t > best) {
            best = t;
            *crop_out = k < NCROP ? k : -1;
        }
    }
    *mean_out = (w[NCROP].mean[0] + w[NCROP].mean[1]) / 2;
    free(in);
    free(cls);
    free(dt);
    free(sorted);
    return best;
}

int main(int argc, char **argv)
{
    long n = 0;
    double threshold = 10;
    bool expect_leak = false;
    int ntargets = 0, failed = 0;
    const struct target *sel[2 * NTARGETS_CURVE + 1];

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            n = atol(argv[++i]);
        } else if (!strcmp(argv[i], "-t") && i + 1 < argc) {
            threshold = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--fixed") && i + 1 < argc) {
            i++;
            if (!strcmp(argv[i], "special"))
                g_special = true;
            else if (strcmp(argv[i], "random"))
                goto usage;
        } else if (!strcmp(argv[i], "--expect-leak")) {
            expect_leak = true;
        } else {
            const struct target *tg = find_target(argv[i]);
            if (!tg || ntargets == (int)(sizeof(sel) / sizeof(sel[0])))
                goto usage;
            sel[ntargets++] = tg;
        }
    }
    if (ntargets == 0)
        goto usage;
    (void)t_failures; /* this test reports t values, not CHECKs */
    t_seed("test_dudect");
    setup_fixed();
    for (int i = 0; i < ntargets; i++) {
        int crop;
        double mean, t = run_target(sel[i], n > 0 ? n : sel[i]->n_default, &crop, &mean);
        bool leak = t > threshold;
        bool ok = expect_leak ? leak : !leak;
        char where[32];
        if (crop < 0)
            snprintf(where, sizeof(where), "raw");
        else
            snprintf(where, sizeof(where), "crop %d", crop);
        printf("%-13s fixed=%s n=%ld mean=%.0f ticks max|t|=%.2f (%s) threshold %.1f: %s%s\n",
               sel[i]->name, g_special ? "special" : "random", n > 0 ? n : sel[i]->n_default, mean, t,
               where, threshold,
               leak ? "LEAKS" : "no leak detected", ok ? "" : expect_leak ? " (leak expected)" : "");
        fflush(stdout);
        failed += !ok;
    }
    return failed ? 1 : 0;
usage:
    fprintf(stderr, "usage: test_dudect [-n MEASUREMENTS] [-t THRESHOLD] [--fixed random|special] "
                    "[--expect-leak] TARGET...\n");
    return 2;
}
