/*
 * bench_field.c — quick timing loops for the field and curve hot paths:
 * ns per Fp/Fr mul and sqr, Fp inversion, G1/G2 mixed add, add, dbl,
 * variable-base mul and fixed-base mul, and the throughput of independent Fp
 * multiplications: scalar czk_fp_mul against the 8-lane AVX-512 IFMA code
 * (common/crypto/fpx8.h), the pairing, and one-thread NTT and G1 MSM at
 * 2^16; then the same lines for BN254 (fp/fr mul, G1/G2 mul, pairing, NTT,
 * MSM G1).  Times are the calling thread's CPU time (the build host is
 * shared), so the NTT and MSM run on one thread.
 * Usage: bench_field [fb_window_bits | --mul-only | --pairing-only]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto/bn254_curve.h"
#include "common/crypto/bn254_msm.h"
#include "common/crypto/bn254_ntt.h"
#include "common/crypto/bn254_pairing.h"
#include "common/crypto/curve.h"
#include "common/crypto/field.h"
#include "common/crypto/fpx8.h"
#include "common/crypto/msm.h"
#include "common/crypto/ntt.h"
#include "common/crypto/pairing.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: the build host is shared */
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define BENCH(name, iters, body)                                                   \
    do {                                                                           \
        double t0_ = now_ns();                                                     \
        for (long i_ = 0; i_ < (iters); i_++) {                                    \
            body;                                                                  \
        }                                                                          \
        double dt_ = now_ns() - t0_;                                               \
        printf("%-28s %10.1f ns\n", name, dt_ / (double)(iters));                  \
    } while (0)

/* ns per multiplication when 64 independent products are available (the
 * situation of the batch-affine MSM flush): scalar, then 8-lane IFMA */
static void bench_mul_throughput(void)
{
    enum { N = 64, REPS = 20000 };
    static czk_fp a[N], b[N], r[N];
    double t0, ts, tv;
    size_t i;
    unsigned k;

    for (i = 0; i < N; i++) {
        czk_fp_from_u64(&a[i], 0x9e3779b97f4a7c15ULL * (i + 1));
        czk_fp_from_u64(&b[i], 0x6a09e667f3bcc909ULL * (i + 3));
        czk_fp_inv(&a[i], &a[i]);
        czk_fp_inv(&b[i], &b[i]);
        r[i] = a[i];
    }
    t0 = now_ns();
    for (k = 0; k < REPS; k++)
        for (i = 0; i < N; i++)
            czk_fp_mul(&r[i], &r[i], &b[i]);
    ts = (now_ns() - t0) / ((double)N * REPS);
    printf("%-28s %10.2f ns\n", "fp_mul (64 independent)", ts);
    t0 = now_ns();
    if (czk_fpx8_mul_n(r, a, b, N, REPS) != 0) {
        printf("%-28s %13s\n", "fpx8_mul (ifma, per elem)", "skipped: no AVX-512 IFMA or CZK_NO_IFMA set");
        return;
    }
    tv = (now_ns() - t0) / ((double)N * REPS);
    printf("%-28s %10.2f ns  (%.2fx the scalar throughput)\n", "fpx8_mul (ifma, per elem)", tv, ts / tv);
}

#define LOG_N 16
#define N_BIG ((size_t)1 << LOG_N)

/* a scalar from a counter (below 2^253, so below both r) */
static void mix_scalar(uint64_t l[4], uint64_t i)
{
    for (int j = 0; j < 4; j++) {
        uint64_t z = (i + 1) * 0x9e3779b97f4a7c15ULL + (uint64_t)j * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 30)) * 0x94d049bb133111ebULL;
        l[j] = z ^ (z >> 31);
    }
    l[3] >>= 3;
}

static void bench_pairing_bls(void)
{
    czk_fp12 f;
    czk_g1_aff p = CZK_G1_GEN;
    czk_g2_aff q = CZK_G2_GEN;

    BENCH("pairing", 200, czk_pairing(&f, &p, &q));
    BENCH("fp12_mul", 200000, czk_fp12_mul(&f, &f, &f));
}

/* BLS12-381 NTT and G1 MSM at 2^16 on one thread */
static int bench_big_bls(void)
{
    czk_fr *a = malloc(N_BIG * sizeof(*a)), *sc = malloc(N_BIG * sizeof(*sc));
    czk_g1 *jac = malloc(N_BIG * sizeof(*jac)), cur, step, r;
    czk_g1_aff *bases = malloc(N_BIG * sizeof(*bases));
    czk_fp *scr = malloc(N_BIG * sizeof(*scr));
    czk_fr k = {{0x0123456789abcdefULL, 0xfedcba9876543210ULL, 0x0f1e2d3c4b5a6978ULL, 0x1122334455667788ULL}};
    size_t i;
    double t0;

    if (!a || !sc || !jac || !bases || !scr)
        return -1;
    for (i = 0; i < N_BIG; i++) {
        mix_scalar(sc[i].l, i);
        czk_fr_to_mont(&a[i], &sc[i]);
    }
    czk_g1_mul_aff(&cur, &CZK_G1_GEN, &k);
    czk_g1_dbl(&step, &cur);
    for (i = 0; i < N_BIG; i++) {
        jac[i] = cur;
        czk_g1_add(&cur, &cur, &step);
    }
    czk_g1_batch_to_aff(bases, jac, N_BIG, scr);
    t0 = now_ns();
    czk_ntt(a, LOG_N, 1);
    printf("%-28s %10.2f ms\n", "ntt 2^16 (1 thread)", (now_ns() - t0) / 1e6);
    t0 = now_ns();
    czk_msm_g1(&r, bases, sc, N_BIG, 1);
    printf("%-28s %10.2f ms\n", "msm g1 2^16 (1 thread)", (now_ns() - t0) / 1e6);
    free(a);
    free(sc);
    free(jac);
    free(bases);
    free(scr);
    return czk_g1_is_inf(&r) ? 1 : 0;
}

static int bench_bn254(void)
{
    czk_bn254_fp a, b;
    czk_bn254_fr fa, fb;
    czk_bn254_fr k = {{0x0123456789abcdefULL, 0xfedcba9876543210ULL, 0x0f1e2d3c4b5a6978ULL, 0x1122334455667788ULL}};
    czk_bn254_g1 p, q;
    czk_bn254_g2 p2, q2;
    czk_bn254_fp12 f;
    size_t i;
    double t0;

    printf("---- bn254 ----\n");
    czk_bn254_fp_from_u64(&a, 123456789);
    czk_bn254_fp_from_u64(&b, 987654321);
    czk_bn254_fp_inv(&a, &a);
    czk_bn254_fp_inv(&b, &b);
    czk_bn254_fr_from_u64(&fa, 5);
    czk_bn254_fr_from_u64(&fb, 7);
    czk_bn254_fr_inv(&fa, &fa);
    BENCH("bn254 fp_mul (dep. chain)", 10000000, czk_bn254_fp_mul(&a, &a, &b));
    BENCH("bn254 fr_mul (dep. chain)", 10000000, czk_bn254_fr_mul(&fa, &fa, &fb));
    czk_bn254_g1_mul_aff(&p, &CZK_BN254_G1_GEN, &k);
    q = p;
    BENCH("bn254 g1_mul (256-bit)", 2000, czk_bn254_g1_mul(&q, &q, &k));
    czk_bn254_g2_mul_aff(&p2, &CZK_BN254_G2_GEN, &k);
    q2 = p2;
    BENCH("bn254 g2_mul (256-bit)", 1000, czk_bn254_g2_mul(&q2, &q2, &k));
    BENCH("bn254 pairing", 200, czk_bn254_pairing(&f, &CZK_BN254_G1_GEN, &CZK_BN254_G2_GEN));
    BENCH("bn254 fp12_mul", 200000, czk_bn254_fp12_mul(&f, &f, &f));

    {
        czk_bn254_fr *v = malloc(N_BIG * sizeof(*v)), *sc = malloc(N_BIG * sizeof(*sc));
        czk_bn254_g1 *jac = malloc(N_BIG * sizeof(*jac)), cur, step, r;
        czk_bn254_g1_aff *bases = malloc(N_BIG * sizeof(*bases));
        czk_bn254_fp *scr = malloc(N_BIG * sizeof(*scr));

        if (!v || !sc || !jac || !bases || !scr)
            return -1;
        for (i = 0; i < N_BIG; i++) {
            mix_scalar(sc[i].l, i);
            czk_bn254_fr_to_mont(&v[i], &sc[i]);
        }
        cur = p;
        czk_bn254_g1_dbl(&step, &p);
        for (i = 0; i < N_BIG; i++) {
            jac[i] = cur;
            czk_bn254_g1_add(&cur, &cur, &step);
        }
        czk_bn254_g1_batch_to_aff(bases, jac, N_BIG, scr);
        t0 = now_ns();
        czk_bn254_ntt(v, LOG_N, 1);
        printf("%-28s %10.2f ms\n", "bn254 ntt 2^16 (1 thread)", (now_ns() - t0) / 1e6);
        t0 = now_ns();
        czk_bn254_msm_g1(&r, bases, sc, N_BIG, 1);
        printf("%-28s %10.2f ms\n", "bn254 msm g1 2^16 (1 thr.)", (now_ns() - t0) / 1e6);
        q = r;
        free(v);
        free(sc);
        free(jac);
        free(bases);
        free(scr);
    }
    /* keep results alive */
    return czk_bn254_fp_is_zero(&a) && czk_bn254_fr_is_zero(&fa) && czk_bn254_g1_is_inf(&q) &&
           czk_bn254_g2_is_inf(&q2) && czk_bn254_fp12_is_one(&f) ? 2 : 0;
}

int main(int argc, char **argv)
{
    unsigned w = argc > 1 ? (unsigned)atoi(argv[1]) : 12;

    if (argc > 1 && !strcmp(argv[1], "--pairing-only")) {
        bench_pairing_bls();
        printf("---- bn254 ----\n");
        BENCH("bn254 pairing", 200, {
            czk_bn254_fp12 f;
            czk_bn254_pairing(&f, &CZK_BN254_G1_GEN, &CZK_BN254_G2_GEN);
        });
        return 0;
    }
    bench_mul_throughput();
    if (argc > 1 && !strcmp(argv[1], "--mul-only"))
        return 0;
    czk_fp a, b;
    czk_fr fa, fb;
    czk_fp_from_u64(&a, 123456789);
    czk_fp_from_u64(&b, 987654321);
    czk_fp_inv(&a, &a);
    czk_fp_inv(&b, &b);
    czk_fr_from_u64(&fa, 5);
    czk_fr_from_u64(&fb, 7);
    czk_fr_inv(&fa, &fa);

    BENCH("fp_mul (dependent chain)", 10000000, czk_fp_mul(&a, &a, &b));
    BENCH("fp_sqr (dependent chain)", 10000000, czk_fp_sqr(&a, &a));
    BENCH("fp_add", 10000000, czk_fp_add(&a, &a, &b));
    BENCH("fr_mul (dependent chain)", 10000000, czk_fr_mul(&fa, &fa, &fb));
    BENCH("fp_inv", 20000, czk_fp_inv(&a, &a));
    BENCH("fr_inv", 20000, czk_fr_inv(&fa, &fa));
    BENCH("fp_sqrt (pow)", 2000, (void)czk_fp_sqrt(&b, &a));
    czk_fp2 x2 = {a, b}, y2 = {b, a};
    BENCH("fp2_mul", 5000000, czk_fp2_mul(&x2, &x2, &y2));
    BENCH("fp2_sqr", 5000000, czk_fp2_sqr(&x2, &x2));

    czk_g1 p, q;
    czk_g1_aff pa;
    czk_fr k = {{0x0123456789abcdefULL, 0xfedcba9876543210ULL, 0x0f1e2d3c4b5a6978ULL, 0x1122334455667788ULL}};
    czk_g1_mul_aff(&p, &CZK_G1_GEN, &k);
    czk_g1_to_aff(&pa, &p);
    q = p;
    BENCH("g1_add_aff (mixed)", 2000000, czk_g1_add_aff(&q, &q, &pa));
    BENCH("g1_add (jacobian)", 2000000, czk_g1_add(&q, &q, &p));
    BENCH("g1_dbl", 2000000, czk_g1_dbl(&q, &q));
    BENCH("g1_mul (256-bit scalar)", 2000, czk_g1_mul(&q, &q, &k));
    BENCH("g1_aff_in_subgroup", 2000, (void)czk_g1_aff_in_subgroup(&pa));

    czk_g2 p2, q2;
    czk_g2_aff pa2;
    czk_g2_mul_aff(&p2, &CZK_G2_GEN, &k);
    czk_g2_to_aff(&pa2, &p2);
    q2 = p2;
    BENCH("g2_add_aff (mixed)", 1000000, czk_g2_add_aff(&q2, &q2, &pa2));
    BENCH("g2_dbl", 1000000, czk_g2_dbl(&q2, &q2));
    BENCH("g2_mul (256-bit scalar)", 1000, czk_g2_mul(&q2, &q2, &k));
    BENCH("g2_aff_in_subgroup", 1000, (void)czk_g2_aff_in_subgroup(&pa2));
    BENCH("g1_to_aff", 20000, czk_g1_to_aff(&pa, &q));

    czk_g1_fb *t1;
    czk_g2_fb *t2;
    double t0 = now_ns();
    if (czk_g1_fb_new(&t1, &CZK_G1_GEN, w) < 0 || (printf("g1_fb_new w=%-2u %19.1f ms\n", w, (now_ns() - t0) / 1e6), 0) ||
        (t0 = now_ns(), czk_g2_fb_new(&t2, &CZK_G2_GEN, w) < 0)) {
        fprintf(stderr, "bench_field: fb_new failed\n");
        return 1;
    }
    printf("g2_fb_new w=%-2u %19.1f ms\n", w, (now_ns() - t0) / 1e6);
    BENCH("g1_fb_mul", 20000, (k.l[0] += 0x9e3779b97f4a7c15ULL, czk_g1_fb_mul(&q, t1, &k)));
    BENCH("g2_fb_mul", 10000, (k.l[1] += 0x9e3779b97f4a7c15ULL, czk_g2_fb_mul(&q2, t2, &k)));
    czk_g1_fb_free(t1);
    czk_g2_fb_free(t2);
    bench_pairing_bls();
    if (bench_big_bls() < 0 || bench_bn254() < 0) {
        fprintf(stderr, "bench_field: out of memory\n");
        return 1;
    }
    /* keep results alive */
    return czk_fp_is_zero(&a) && czk_g1_is_inf(&q) && czk_g2_is_inf(&q2) && czk_fr_is_zero(&fa) ? 2 : 0;
}
