/*
 * bench_field.c — quick timing loops for the field and curve hot paths:
 * ns per Fp/Fr mul and sqr, Fp inversion, G1/G2 mixed add, add, dbl,
 * variable-base mul and fixed-base mul, and the throughput of independent Fp
 * multiplications: scalar czk_fp_mul against the 8-lane AVX-512 IFMA code
 * (common/crypto/fpx8.h).  Usage: bench_field [fb_window_bits | --mul-only]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto/curve.h"
#include "common/crypto/field.h"
#include "common/crypto/fpx8.h"

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

int main(int argc, char **argv)
{
    unsigned w = argc > 1 ? (unsigned)atoi(argv[1]) : 12;

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
    /* keep results alive */
    return czk_fp_is_zero(&a) && czk_g1_is_inf(&q) && czk_g2_is_inf(&q2) && czk_fr_is_zero(&fa) ? 2 : 0;
}
