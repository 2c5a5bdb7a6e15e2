/*
 * bench_build_abc.c — time of build_abc (a = A·w, b = B·w, c = a∘b) on one
 * key and witness, into buffers touched once beforehand (as a synthesizer's
 * slot is), the median of REPS calls after one warm-up.  Prints one line:
 *     build_abc CURVE 2^LOG THREADS threads MODE: median MS ms (min MS)
 * MODE is "ifma" or "scalar" (CZK_NO_IFMA=1 selects the scalar products);
 * bench_build_abc.sh runs both and prints the table.
 *     bench_build_abc ZKEY WTNS [THREADS [REPS]]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/clock.h"
#include "common/crypto/frx8.h"
#include "common/formats/formats.h"
#include "common/groth16/any.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    czk_error e = {0};
    czk_zkey z;
    czk_wtns w;
    int threads = argc > 3 ? atoi(argv[3]) : 0, reps = argc > 4 ? atoi(argv[4]) : 7, i;
    double t[64];
    size_t n;
    char *abc;

    if (argc < 3 || reps < 1 || reps > 64) {
        fprintf(stderr, "usage: bench_build_abc ZKEY WTNS [THREADS [REPS (1..64)]]\n");
        return 2;
    }
    if (czk_zkey_open_curves(&z, argv[1], CZK_CURVES_ALL, &e) || czk_wtns_open_curves(&w, argv[2], CZK_CURVES_ALL, &e)) {
        fprintf(stderr, "bench_build_abc: %s\n", e.msg);
        return 1;
    }
    n = z.domain_size;
    abc = malloc(3 * n * 32);
    if (!abc) {
        fprintf(stderr, "bench_build_abc: out of memory\n");
        return 1;
    }
    memset(abc, 0, 3 * n * 32);
    const void *wv = z.curve == CZK_CURVE_BN254 ? (const void *)w.w_bn : (const void *)w.w;
    for (i = -1; i < reps; i++) {
        uint64_t t0 = czk_mono_ns();
        if (czk_groth16_any_build_abc(&z, wv, abc, abc + 32 * n, abc + 64 * n, threads)) {
            fprintf(stderr, "bench_build_abc: build_abc failed\n");
            return 1;
        }
        if (i >= 0)
            t[i] = (double)(czk_mono_ns() - t0) * 1e-6;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_d);
    printf("build_abc %s 2^%d %d threads %s: median %.1f ms (min %.1f)\n",
           z.curve == CZK_CURVE_BN254 ? "BN254" : "BLS12-381", __builtin_ctzll(n), threads,
           czk_fpx8_enabled() ? "ifma" : "scalar", t[reps / 2], t[0]);
    free(abc);
    czk_wtns_close(&w);
    czk_zkey_close(&z);
    return 0;
}
