/*
 * test_cuda_plan.c — the CUDA MSM's window size (czk_cuda_msm_window_bits,
 * host code: needs no GPU, so it runs in every build with the CUDA backend).
 *
 * With c-bit signed digits of scalars below r, the top window holds the bits
 * of r above the last whole window plus the carry of the window below: its
 * largest digit is (r >> (c floor(b / c))) + 1 for r of b bits, computed here
 * with GMP from r's decimal value.  A window whose top digits fall into fewer
 * than 1/32 of its 2^(c-1) buckets is lopsided (one bucket can take ~45% of
 * all points); from 2^24 up the rule must not pick one while a neighbouring
 * size has none.  Below, the rule weighs the batch-affine levels the top
 * window adds; there the oracle is the measurement: at 2^16..2^21 - 14 the
 * window of the plain and of the full-table MSM must be one that ran within
 * 5% of the fastest of the rule's old window and its neighbours
 * (docs/bench-gpu.md, "Run 52"-"Run 54", H100; "Run 49" for the other sizes
 * pinned).
 */
#include <errno.h>
#include <gmp.h>
#include <stdint.h>

#include "tests/cuda/cuda_test_util.h"

static const char *R_BLS = "52435875175126190479447740508185965837690552500527637822603658699938581184513";
static const char *R_BN = "21888242871839275222246405745257275088548364400416034343698204186575808495617";

static int lopsided(const mpz_t r, unsigned c)
{
    const unsigned b = (unsigned)mpz_sizeinbase(r, 2);
    mpz_t t;
    mpz_init(t);
    mpz_fdiv_q_2exp(t, r, c * (b / c));
    mpz_add_ui(t, t, 1);
    mpz_mul_2exp(t, t, 5);
    const int lop = mpz_cmp_ui(t, 1ul << (c - 1)) < 0;
    mpz_clear(t);
    return lop;
}

static unsigned nwin(unsigned c) { return (257 + c - 1) / c; }

/* some table no wider than 22 bits, of 2 or more rows, fits mem and cap and
 * has fewer windows than w with no more buckets than nb */
static int better_table(size_t n, size_t pt, size_t mem, size_t cap, unsigned w, size_t nb)
{
    const size_t scratch = (n < ((size_t)1 << 20) ? n : ((size_t)1 << 20)) * 2 * pt;
    for (unsigned c = 4; c <= 22; c++)
        for (unsigned rows = 2; rows <= nwin(c); rows++) {
            const unsigned k = (nwin(c) + rows - 1) / rows;
            if (nwin(c) < w && (size_t)k << (c - 1) <= nb && (size_t)k << (c - 1) <= cap &&
                (rows - 1) * n * pt + scratch <= mem)
                return 1;
        }
    return 0;
}

/* czk_cuda_table_fit, the rule that sizes a fixed-base table to the free
 * memory: with room, the default full table; with less, a table of fewer
 * rows that fits the memory and the workspace's buckets, covers every window,
 * needs fewer windows than the plain MSM and is not dominated (no table that
 * fits has fewer windows and no more buckets); with room for under 2 rows
 * (row 0 is the bases: one row's memory), none; without one, none that would
 * clearly pay fits.  A table's bytes are its rows past row 0. */
static void table_fit(void)
{
    const size_t ns[] = {((size_t)1 << 24) - 11, (size_t)1 << 24, ((size_t)1 << 22) - 14, 100000};
    const unsigned curves[] = {CZK_CUDA_CURVE_BLS12_381, CZK_CUDA_CURVE_BN254};
    for (unsigned ci = 0; ci < 2; ci++)
        for (int g2 = 0; g2 <= 1; g2++)
            for (unsigned ni = 0; ni < sizeof(ns) / sizeof(ns[0]); ni++) {
                const size_t n = ns[ni], pt = czk_cuda_point_bytes(curves[ci], g2);
                czk_cuda_table_plan full, tp;
                CHECK(czk_cuda_table_fit(n, g2, curves[ci], SIZE_MAX, SIZE_MAX, &full) == 0, "n=%zu: %s", n,
                      czk_cuda_last_error());
                CHECK(full.rows == full.windows && full.bucket_windows == 1 && full.windows == nwin(full.c) &&
                          full.bytes == (full.rows - 1) * n * pt && full.peak_bytes > full.bytes,
                      "n=%zu g2=%d: unbounded: c=%u %u of %u rows, %u bucket windows", n, g2, full.c, full.rows,
                      full.windows, full.bucket_windows);
                const size_t cap = (size_t)1 << (full.c - 1); /* a workspace sized for the full table */
                const unsigned plain = nwin(czk_cuda_msm_window_bits(n, g2, curves[ci]));
                for (unsigned q = 0; q <= 4 * (full.rows - 1); q++) {
                    const size_t mem = q * n * pt / 4 + (full.peak_bytes - full.bytes);
                    const int r = czk_cuda_table_fit(n, g2, curves[ci], mem, cap, &tp);
                    if (mem >= full.peak_bytes) {
                        CHECK(r == 0 && tp.rows == full.rows && tp.c == full.c, "n=%zu g2=%d: room for the full "
                              "table, got c=%u %u rows", n, g2, tp.c, tp.rows);
                        continue;
                    }
                    if (q < 4) {
                        CHECK(r == -ENOSPC, "n=%zu g2=%d: a table of %u rows in %u/4 rows' memory", n, g2, tp.rows,
                              q);
                        continue;
                    }
                    if (r != 0) {
                        /* none pays: then none fits with a fifth fewer windows and buckets n / 8 at most */
                        CHECK(!better_table(n, pt, mem, cap, plain * 4 / 5 + 1, n / 8),
                              "n=%zu g2=%d q=%u: no table, but one with 4/5 of the plain %u windows fits", n, g2, q,
                              plain);
                        continue;
                    }
                    const size_t nb = (size_t)tp.bucket_windows << (tp.c - 1);
                    CHECK(tp.peak_bytes <= mem && tp.bytes == (tp.rows - 1) * n * pt && nb <= cap && tp.rows >= 2 &&
                              tp.windows == nwin(tp.c) && tp.rows * tp.bucket_windows >= tp.windows &&
                              tp.bucket_windows == (tp.windows + tp.rows - 1) / tp.rows && tp.windows < plain,
                          "n=%zu g2=%d q=%u: c=%u %u of %u rows, %u bucket windows, %zu of %zu bytes", n, g2, q, tp.c,
                          tp.rows, tp.windows, tp.bucket_windows, tp.peak_bytes, mem);
                    CHECK(!better_table(n, pt, mem, cap, tp.windows, nb), "n=%zu g2=%d q=%u: c=%u (%u windows) is "
                          "dominated", n, g2, q, tp.c, tp.windows);
                }
            }
    /* the 2^24 partition's C MSM in room for 4 rows (3 past the bases'), in a
     * workspace for the full table's 2^21 buckets (cap 0): 13 windows of 20 bits */
    czk_cuda_table_plan tp;
    const size_t n = ((size_t)1 << 24) - 11, pt = czk_cuda_point_bytes(CZK_CUDA_CURVE_BLS12_381, 0);
    CHECK(czk_cuda_table_fit(n, 0, CZK_CUDA_CURVE_BLS12_381, 3 * n * pt + ((size_t)2 << 20) * pt, 0, &tp) == 0 &&
              tp.c == 20 && tp.rows == 4 && tp.bucket_windows == 4,
          "BLS12-381 G1 2^24 in 4 rows: c=%u %u rows %u bucket windows", tp.c, tp.rows, tp.bucket_windows);
}

int main(void)
{
    const struct {
        const char *name, *r;
        unsigned curve;
    } cv[2] = {{"BLS12-381", R_BLS, CZK_CUDA_CURVE_BLS12_381}, {"BN254", R_BN, CZK_CUDA_CURVE_BN254}};
    unsigned fine = 0;
    for (int i = 0; i < 2; i++) {
        mpz_t r;
        mpz_init_set_str(r, cv[i].r, 10);
        for (int g2 = 0; g2 <= 1; g2++)
            for (unsigned k = 10; k <= 28; k++) {
                /* the plan is a function of n's bit length k */
                const size_t lo = (size_t)1 << (k - 1), hi = ((size_t)1 << k) - 14;
                const unsigned c = czk_cuda_msm_window_bits(lo, g2, cv[i].curve);
                CHECK(czk_cuda_msm_window_bits(hi, g2, cv[i].curve) == c, "%s g2=%d: c differs within 2^%u..2^%u",
                      cv[i].name, g2, k - 1, k);
                CHECK(c >= 8 && c <= 22, "%s g2=%d 2^%u: c=%u", cv[i].name, g2, k, c);
                if (k > 24 && lopsided(r, c)) {
                    CHECK(lopsided(r, c - 1) && (c == 22 || lopsided(r, c + 1)),
                          "%s g2=%d n < 2^%u: c=%u has a lopsided top window, a neighbour has none", cv[i].name, g2,
                          k, c);
                } else if (!lopsided(r, c)) {
                    fine++;
                }
            }
        mpz_clear(r);
    }
    /* the sizes measured (2^k - 14 is the n of a partition of 2^k constraints);
     * G1 and G2 had the same fastest windows.  Run 54 moved three: the
     * BLS12-381 table at 2^16 to c=16 (0.61 / 0.38 of c=13's G1 / G2 time),
     * BN254's plain MSMs at 2^20 and 2^21 to c=15 (0.65-0.77 of c=13's) */
    static const struct {
        unsigned curve, k;
        unsigned plain[2], table[2]; /* the windows within 5% of the fastest measured (0: none) */
    } measured[] = {
        {CZK_CUDA_CURVE_BLS12_381, 16, {8, 0}, {16, 0}},  {CZK_CUDA_CURVE_BLS12_381, 17, {8, 0}, {16, 0}},
        {CZK_CUDA_CURVE_BLS12_381, 18, {8, 0}, {16, 0}},  {CZK_CUDA_CURVE_BLS12_381, 19, {8, 0}, {16, 0}},
        {CZK_CUDA_CURVE_BLS12_381, 20, {8, 10}, {16, 0}}, {CZK_CUDA_CURVE_BLS12_381, 21, {13, 0}, {20, 0}},
        {CZK_CUDA_CURVE_BN254, 16, {8, 0}, {15, 16}},     {CZK_CUDA_CURVE_BN254, 17, {8, 0}, {15, 16}},
        {CZK_CUDA_CURVE_BN254, 18, {8, 0}, {16, 17}},     {CZK_CUDA_CURVE_BN254, 19, {10, 0}, {16, 17}},
        {CZK_CUDA_CURVE_BN254, 20, {15, 0}, {16, 17}},    {CZK_CUDA_CURVE_BN254, 21, {15, 0}, {17, 20}},
    };
    for (unsigned i = 0; i < sizeof(measured) / sizeof(measured[0]); i++)
        for (int g2 = 0; g2 <= 1; g2++) {
            const size_t n = ((size_t)1 << measured[i].k) - 14;
            const char *name = measured[i].curve == CZK_CUDA_CURVE_BN254 ? "BN254" : "BLS12-381";
            const unsigned c = czk_cuda_msm_window_bits(n, g2, measured[i].curve);
            CHECK(c == measured[i].plain[0] || c == measured[i].plain[1], "%s g2=%d 2^%u - 14: plain c=%u, not %u or %u",
                  name, g2, measured[i].k, c, measured[i].plain[0], measured[i].plain[1]);
            czk_cuda_table_plan full;
            CHECK(czk_cuda_table_fit(n, g2, measured[i].curve, SIZE_MAX, SIZE_MAX, &full) == 0 &&
                      (full.c == measured[i].table[0] || full.c == measured[i].table[1]),
                  "%s g2=%d 2^%u - 14: table c=%u, not %u or %u", name, g2, measured[i].k, full.c, measured[i].table[0],
                  measured[i].table[1]);
        }
    CHECK(czk_cuda_msm_window_bits(((size_t)1 << 24) - 14, 0, CZK_CUDA_CURVE_BLS12_381) == 16,
          "BLS12-381 G1 2^24 - 14: c=%u, not 16",
          czk_cuda_msm_window_bits(((size_t)1 << 24) - 14, 0, CZK_CUDA_CURVE_BLS12_381));
    CHECK(czk_cuda_msm_window_bits((size_t)1 << 24, 0, CZK_CUDA_CURVE_BLS12_381) == 16, "BLS12-381 G1 2^24: not 16");
    CHECK(czk_cuda_msm_window_bits(((size_t)1 << 22) - 14, 0, CZK_CUDA_CURVE_BN254) == 15,
          "BN254 G1 2^22 - 14: c=%u, not 15", czk_cuda_msm_window_bits(((size_t)1 << 22) - 14, 0, CZK_CUDA_CURVE_BN254));
    CHECK(fine > 0, "no size has a window without a lopsided top");
    table_fit();
    if (t_failures)
        return 1;
    printf("test_cuda_plan: ok\n");
    return 0;
}
