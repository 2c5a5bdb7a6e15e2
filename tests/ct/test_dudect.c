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
 * Targets (the secret in parentheses):
 *   fp_inv_ct, fp2_inv_ct, fr_inv_ct   the Fermat inversions (the value)
 *   g1_mul_ct, g2_mul_ct               scalar multiplication (the scalar)
 *   g1_to_aff_ct, g2_to_aff_ct         the finalize normalisation (Z)
 *   finalize                           czk_groth16_finalize (r and s)
 *   fp_inv, g1_to_aff                  the VARIABLE-TIME binary-GCD inversion
 *                                      and the normalisation finalize used
 *                                      before, to show the test catches a leak
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

/* ---- inputs ---- */

static void rand_fp(czk_fp *a)
{
    for (int i = 0; i < 6; i++)
        a->l[i] = t_rand64();
    a->l[5] &= 0x0fffffffffffffffULL; /* < q */
}

static void rand_fr(czk_fr *a)
{
    for (int i = 0; i < 4; i++)
        a->l[i] = t_rand64();
    a->l[3] &= 0x3fffffffffffffffULL; /* < r */
}

/* the fixed values, drawn once */
static czk_fp g_fix_fp;
static czk_fp2 g_fix_fp2;
static czk_fr g_fix_fr, g_fix_k, g_fix_r, g_fix_s;
static czk_g1_aff g_p1;
static czk_g2_aff g_p2;
static czk_g1 g_fix_j1;
static czk_g2 g_fix_j2;
static czk_groth16_params g_params;
static czk_groth16_msm_out g_msm;

static void g1_rand_aff(czk_g1_aff *a)
{
    czk_fr k;
    czk_g1 p;
    rand_fr(&k);
    czk_g1_mul_aff(&p, &CZK_G1_GEN, &k);
    czk_g1_to_aff(a, &p);
}

static void g2_rand_aff(czk_g2_aff *a)
{
    czk_fr k;
    czk_g2 p;
    rand_fr(&k);
    czk_g2_mul_aff(&p, &CZK_G2_GEN, &k);
    czk_g2_to_aff(a, &p);
}

/* (x l^2, y l^3, l): the same point with Z = l */
static void g1_scaled(czk_g1 *r, const czk_g1_aff *a, const czk_fp *l)
{
    czk_fp l2, l3;
    czk_fp_sqr(&l2, l);
    czk_fp_mul(&l3, &l2, l);
    czk_fp_mul(&r->x, &a->x, &l2);
    czk_fp_mul(&r->y, &a->y, &l3);
    r->z = *l;
}

static void g2_scaled(czk_g2 *r, const czk_g2_aff *a, const czk_fp2 *l)
{
    czk_fp2 l2, l3;
    czk_fp2_sqr(&l2, l);
    czk_fp2_mul(&l3, &l2, l);
    czk_fp2_mul(&r->x, &a->x, &l2);
    czk_fp2_mul(&r->y, &a->y, &l3);
    r->z = *l;
}

static void setup_fixed(void)
{
    g1_rand_aff(&g_p1);
    g2_rand_aff(&g_p2);
    g1_rand_aff(&g_params.alpha1);
    g1_rand_aff(&g_params.beta1);
    g1_rand_aff(&g_params.delta1);
    g2_rand_aff(&g_params.beta2);
    g2_rand_aff(&g_params.delta2);
    g1_rand_aff(&g_msm.a);
    g1_rand_aff(&g_msm.b1);
    g1_rand_aff(&g_msm.c);
    g2_rand_aff(&g_msm.b2);
    if (g_special) {
        g_fix_fp = CZK_FP_ONE;
        g_fix_fp2 = CZK_FP2_ONE;
        g_fix_fr = CZK_FR_ONE;
        memset(&g_fix_k, 0, sizeof(g_fix_k));
        memset(&g_fix_r, 0, sizeof(g_fix_r));
        memset(&g_fix_s, 0, sizeof(g_fix_s));
        g1_scaled(&g_fix_j1, &g_p1, &CZK_FP_ONE);
        g2_scaled(&g_fix_j2, &g_p2, &CZK_FP2_ONE);
    } else {
        czk_fp l;
        czk_fp2 l2;
        rand_fp(&g_fix_fp);
        rand_fp(&g_fix_fp2.c0);
        rand_fp(&g_fix_fp2.c1);
        rand_fr(&g_fix_fr);
        rand_fr(&g_fix_k);
        rand_fr(&g_fix_r);
        rand_fr(&g_fix_s);
        rand_fp(&l);
        g1_scaled(&g_fix_j1, &g_p1, &l);
        rand_fp(&l2.c0);
        rand_fp(&l2.c1);
        g2_scaled(&g_fix_j2, &g_p2, &l2);
    }
}

/* ---- targets: gen fills one input of class cls (0 fixed, 1 random) ---- */

static volatile uint64_t g_sink;

static void sink(const void *p, size_t n)
{
    const uint64_t *w = p;
    uint64_t acc = 0;
    for (size_t i = 0; i < n / 8; i++)
        acc ^= w[i];
    g_sink ^= acc;
}

static void gen_fp(void *in, int cls)
{
    if (cls)
        rand_fp(in);
    else
        memcpy(in, &g_fix_fp, sizeof(czk_fp));
}
static void run_fp_inv_ct(const void *in)
{
    czk_fp r;
    czk_fp_inv_ct(&r, in);
    sink(&r, sizeof(r));
}
static void run_fp_inv(const void *in)
{
    czk_fp r;
    czk_fp_inv(&r, in);
    sink(&r, sizeof(r));
}

static void gen_fp2(void *in, int cls)
{
    czk_fp2 *a = in;
    if (cls) {
        rand_fp(&a->c0);
        rand_fp(&a->c1);
    } else {
        *a = g_fix_fp2;
    }
}
static void run_fp2_inv_ct(const void *in)
{
    czk_fp2 r;
    czk_fp2_inv_ct(&r, in);
    sink(&r, sizeof(r));
}

static void gen_fr(void *in, int cls)
{
    if (cls)
        rand_fr(in);
    else
        memcpy(in, &g_fix_fr, sizeof(czk_fr));
}
static void run_fr_inv_ct(const void *in)
{
    czk_fr r;
    czk_fr_inv_ct(&r, in);
    sink(&r, sizeof(r));
}

static void gen_k(void *in, int cls)
{
    if (cls)
        rand_fr(in);
    else
        memcpy(in, &g_fix_k, sizeof(czk_fr));
}
static void run_g1_mul_ct(const void *in)
{
    czk_g1 r, p;
    czk_g1_from_aff(&p, &g_p1);
    czk_g1_mul_ct(&r, &p, in);
    sink(&r, sizeof(r));
}
static void run_g2_mul_ct(const void *in)
{
    czk_g2 r, p;
    czk_g2_from_aff(&p, &g_p2);
    czk_g2_mul_ct(&r, &p, in);
    sink(&r, sizeof(r));
}

static void gen_j1(void *in, int cls)
{
    if (cls) {
        czk_fp l;
        rand_fp(&l);
        g1_scaled(in, &g_p1, &l);
    } else {
        memcpy(in, &g_fix_j1, sizeof(czk_g1));
    }
}
static void run_g1_to_aff_ct(const void *in)
{
    czk_g1_aff r;
    czk_g1_to_aff_ct(&r, in);
    sink(&r, sizeof(r));
}

static void run_g1_to_aff(const void *in)
{
    czk_g1_aff r;
    czk_g1_to_aff(&r, in);
    sink(&r, sizeof(r));
}

static void gen_j2(void *in, int cls)
{
    if (cls) {
        czk_fp2 l;
        rand_fp(&l.c0);
        rand_fp(&l.c1);
        g2_scaled(in, &g_p2, &l);
    } else {
        memcpy(in, &g_fix_j2, sizeof(czk_g2));
    }
}
static void run_g2_to_aff_ct(const void *in)
{
    czk_g2_aff r;
    czk_g2_to_aff_ct(&r, in);
    sink(&r, sizeof(r));
}

static void gen_rs(void *in, int cls)
{
    czk_fr *rs = in;
    if (cls) {
        rand_fr(&rs[0]);
        rand_fr(&rs[1]);
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

struct target {
    const char *name;
    size_t in_size;
    void (*gen)(void *in, int cls);
    void (*run)(const void *in);
    long n_default; /* measurements, warm-up batch excluded */
};

static const struct target targets[] = {
    { "fp_inv_ct", sizeof(czk_fp), gen_fp, run_fp_inv_ct, 200000 },
    { "fp2_inv_ct", sizeof(czk_fp2), gen_fp2, run_fp2_inv_ct, 200000 },
    { "fr_inv_ct", sizeof(czk_fr), gen_fr, run_fr_inv_ct, 200000 },
    { "g1_mul_ct", sizeof(czk_fr), gen_k, run_g1_mul_ct, 40000 },
    { "g2_mul_ct", sizeof(czk_fr), gen_k, run_g2_mul_ct, 20000 },
    { "g1_to_aff_ct", sizeof(czk_g1), gen_j1, run_g1_to_aff_ct, 200000 },
    { "g2_to_aff_ct", sizeof(czk_g2), gen_j2, run_g2_to_aff_ct, 200000 },
    { "finalize", 2 * sizeof(czk_fr), gen_rs, run_finalize, 10000 },
    { "fp_inv", sizeof(czk_fp), gen_fp, run_fp_inv, 200000 },
    { "g1_to_aff", sizeof(czk_g1), gen_j1, run_g1_to_aff, 200000 },
};

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
    const struct target *sel[sizeof(targets) / sizeof(targets[0])];

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
            size_t j;
            for (j = 0; j < sizeof(targets) / sizeof(targets[0]); j++)
                if (!strcmp(argv[i], targets[j].name))
                    break;
            if (j == sizeof(targets) / sizeof(targets[0]) ||
                ntargets == (int)(sizeof(sel) / sizeof(sel[0])))
                goto usage;
            sel[ntargets++] = &targets[j];
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
