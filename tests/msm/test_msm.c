/*
 * test_msm.c — czk_msm_g1 / czk_msm_g2 (common/crypto/msm.c) against the naive sum
 * of single scalar multiplications (czk_g*_mul_aff + czk_g*_add from curve.c,
 * which share no code with the MSM's XYZZ buckets and digit recoding).
 *
 * Sizes 0, 1, 2, 3, 100, 1000, 5000 on G1 (G2 up to 2500) with scalar mixes:
 * uniform below r, 0/1-heavy (circom bit witnesses), all zero, all one, one
 * value repeated, small values and powers of two, values near r (r-1, r-2, r,
 * r+1), integers up to 2^256 - 1, and a*lambda + b around the G1 GLV split
 * (lambda = z^2 - 1, 2^128); bases include infinity (all-zero bytes),
 * repeated points and negated pairs (so buckets hit P + P and P + (-P)).
 * Every case runs with 1, 2 and 8 threads and must equal the oracle.
 * --quick skips the slowest G2 cases (the default ctest run; the full run is
 * the "long"-labelled msm_test_msm_full).
 * Exit 0 pass, 1 fail.  CZK_TEST_SEED replays a run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto/curve.h"
#include "common/crypto/field.h"
#include "common/crypto/msm.h"
#include "tests/common/test_util.h"

/* 256-bit integer compare / add / sub on czk_fr limbs (standard form) */
static int u256_cmp(const czk_fr *a, const czk_fr *b)
{
    for (int i = 3; i >= 0; i--)
        if (a->l[i] != b->l[i])
            return a->l[i] < b->l[i] ? -1 : 1;
    return 0;
}

static void u256_add_small(czk_fr *r, const czk_fr *a, int64_t d)
{
    unsigned __int128 c = (unsigned __int128)a->l[0] + (uint64_t)d;
    uint64_t ext = d < 0 ? ~(uint64_t)0 : 0;
    r->l[0] = (uint64_t)c;
    for (int i = 1; i < 4; i++) {
        c = (unsigned __int128)a->l[i] + ext + (uint64_t)(c >> 64);
        r->l[i] = (uint64_t)c;
    }
}

static void rand_below_r(czk_fr *k)
{
    do {
        for (int i = 0; i < 4; i++)
            k->l[i] = t_rand64();
        k->l[3] &= 0x7fffffffffffffffULL;
    } while (u256_cmp(k, &CZK_FR_MOD) >= 0);
}

enum mix { MIX_RANDOM, MIX_BITS, MIX_ZERO, MIX_ONE, MIX_SAME, MIX_SMALL, MIX_NEAR_R, MIX_WIDE, MIX_LAMBDA, MIX_COUNT };
static const char *mix_name[] = {"random", "0/1-heavy", "all-zero", "all-one", "repeated", "small",
                                  "near-r", "up-to-2^256", "a*lambda+b"};

/* the G1 endomorphism eigenvalue the MSM splits scalars by (z^2 - 1) */
static const uint64_t LAMBDA[2] = {0x00000000ffffffffULL, 0xac45a4010001a402ULL};

static void make_scalars(czk_fr *k, size_t n, enum mix mix)
{
    czk_fr same;
    rand_below_r(&same);
    for (size_t i = 0; i < n; i++) {
        memset(&k[i], 0, sizeof(k[i]));
        switch (mix) {
        case MIX_RANDOM:
            rand_below_r(&k[i]);
            break;
        case MIX_BITS: {
            unsigned p = (unsigned)(t_rand64() % 10);
            if (p < 5)
                k[i].l[0] = 0;
            else if (p < 9)
                k[i].l[0] = 1;
            else
                rand_below_r(&k[i]);
            break;
        }
        case MIX_ZERO:
            break;
        case MIX_ONE:
            k[i].l[0] = 1;
            break;
        case MIX_SAME:
            k[i] = same;
            break;
        case MIX_SMALL: {
            unsigned p = (unsigned)(t_rand64() % 4);
            if (p == 0)
                k[i].l[0] = 2 + t_rand64() % 40;
            else if (p == 1)
                k[i].l[t_rand64() % 4] = (uint64_t)1 << (t_rand64() % 64);
            else if (p == 2)
                k[i].l[0] = t_rand64();
            else
                k[i].l[3] = (uint64_t)1 << 62;
            break;
        }
        case MIX_NEAR_R:
            u256_add_small(&k[i], &CZK_FR_MOD, (int64_t)(t_rand64() % 5) - 3); /* r-3 .. r+1 */
            break;
        case MIX_WIDE: {
            unsigned p = (unsigned)(t_rand64() % 4);
            for (int j = 0; j < 4; j++)
                k[i].l[j] = t_rand64();
            if (p == 0)
                memset(&k[i], 0xff, sizeof(k[i])); /* 2^256 - 1 */
            else if (p == 1)
                k[i].l[3] |= (uint64_t)1 << 63;   /* >= 2^255 */
            break;
        }
        case MIX_LAMBDA: {
            /* a * lambda + b with a, b small, at the 2^128 boundaries, or lambda^2 - 1 */
            uint64_t a = t_rand64() % 4 == 0 ? ~(uint64_t)0 : t_rand64() % 5, b = t_rand64() % 3;
            unsigned __int128 p0 = (unsigned __int128)a * LAMBDA[0];
            unsigned __int128 p1 = (unsigned __int128)a * LAMBDA[1] + (uint64_t)(p0 >> 64);
            k[i].l[0] = (uint64_t)p0;
            k[i].l[1] = (uint64_t)p1;
            k[i].l[2] = (uint64_t)(p1 >> 64);
            u256_add_small(&k[i], &k[i], (int64_t)b - 1);
            if (t_rand64() % 8 == 0) {
                memset(&k[i], 0, sizeof(k[i]));
                k[i].l[2] = 1; /* 2^128 */
                u256_add_small(&k[i], &k[i], (int64_t)(t_rand64() % 3) - 1);
            }
            break;
        }
        default:
            break;
        }
    }
}

/* ---- G1 ---- */

/* n bases: a walk P_{i+1} = P_i + Q from random multiples of the generator,
 * with some infinities, repeats and negations mixed in */
static void make_g1_bases(czk_g1_aff *b, size_t n)
{
    czk_g1 p, q;
    czk_fr k;

    rand_below_r(&k);
    czk_g1_mul_aff(&p, &CZK_G1_GEN, &k);
    rand_below_r(&k);
    czk_g1_mul_aff(&q, &CZK_G1_GEN, &k);
    for (size_t i = 0; i < n; i++) {
        unsigned pick = (unsigned)(t_rand64() % 16);
        if (i > 0 && pick == 0) {
            memset(&b[i], 0, sizeof(b[i])); /* infinity */
        } else if (i > 0 && pick == 1) {
            b[i] = b[t_rand64() % i];
        } else if (i > 0 && pick == 2) {
            czk_g1_aff_neg(&b[i], &b[t_rand64() % i]);
        } else {
            czk_g1_to_aff(&b[i], &p);
            czk_g1_add(&p, &p, &q);
        }
    }
}

static void naive_g1(czk_g1 *r, const czk_g1_aff *b, const czk_fr *k, size_t n)
{
    czk_g1 t;
    czk_g1_set_inf(r);
    for (size_t i = 0; i < n; i++) {
        if (czk_g1_aff_is_inf(&b[i]))
            continue;
        czk_g1_mul_aff(&t, &b[i], &k[i]);
        czk_g1_add(r, r, &t);
    }
}

static void test_g1(size_t n, enum mix mix)
{
    czk_g1_aff *b = malloc((n ? n : 1) * sizeof(*b));
    czk_fr *k = malloc((n ? n : 1) * sizeof(*k));
    czk_g1 want, got;
    const int threads[] = {1, 2, 8};

    make_g1_bases(b, n);
    make_scalars(k, n, mix);
    naive_g1(&want, b, k, n);
    for (unsigned t = 0; t < 3; t++) {
        memset(&got, 0xa5, sizeof(got)); /* got holds the last thread count's sum */
        int rc = czk_msm_g1(&got, b, k, n, threads[t]);
        CHECK(rc == 0, "g1 n=%zu %s threads=%d: rc %d", n, mix_name[mix], threads[t], rc);
        CHECK(czk_g1_eq(&got, &want), "g1 n=%zu %s threads=%d: differs from the naive sum", n,
              mix_name[mix], threads[t]);
    }
    free(b);
    free(k);
}

/* ---- G2 ---- */

static void make_g2_bases(czk_g2_aff *b, size_t n)
{
    czk_g2 p, q;
    czk_fr k;

    rand_below_r(&k);
    czk_g2_mul_aff(&p, &CZK_G2_GEN, &k);
    rand_below_r(&k);
    czk_g2_mul_aff(&q, &CZK_G2_GEN, &k);
    for (size_t i = 0; i < n; i++) {
        unsigned pick = (unsigned)(t_rand64() % 16);
        if (i > 0 && pick == 0) {
            memset(&b[i], 0, sizeof(b[i]));
        } else if (i > 0 && pick == 1) {
            b[i] = b[t_rand64() % i];
        } else if (i > 0 && pick == 2) {
            czk_g2_aff_neg(&b[i], &b[t_rand64() % i]);
        } else {
            czk_g2_to_aff(&b[i], &p);
            czk_g2_add(&p, &p, &q);
        }
    }
}

static void naive_g2(czk_g2 *r, const czk_g2_aff *b, const czk_fr *k, size_t n)
{
    czk_g2 t;
    czk_g2_set_inf(r);
    for (size_t i = 0; i < n; i++) {
        if (czk_g2_aff_is_inf(&b[i]))
            continue;
        czk_g2_mul_aff(&t, &b[i], &k[i]);
        czk_g2_add(r, r, &t);
    }
}

static void test_g2(size_t n, enum mix mix)
{
    czk_g2_aff *b = malloc((n ? n : 1) * sizeof(*b));
    czk_fr *k = malloc((n ? n : 1) * sizeof(*k));
    czk_g2 want, got;
    const int threads[] = {1, 2, 8};

    make_g2_bases(b, n);
    make_scalars(k, n, mix);
    naive_g2(&want, b, k, n);
    for (unsigned t = 0; t < 3; t++) {
        memset(&got, 0xa5, sizeof(got)); /* got holds the last thread count's sum */
        int rc = czk_msm_g2(&got, b, k, n, threads[t]);
        CHECK(rc == 0, "g2 n=%zu %s threads=%d: rc %d", n, mix_name[mix], threads[t], rc);
        CHECK(czk_g2_eq(&got, &want), "g2 n=%zu %s threads=%d: differs from the naive sum", n,
              mix_name[mix], threads[t]);
    }
    free(b);
    free(k);
}

/* a handful of hand-made cases with known answers */
static void test_fixed(void)
{
    czk_g1_aff b[4];
    czk_fr k[4];
    czk_g1 got, want;

    /* k*G + (r-k)*G = infinity */
    memset(k, 0, sizeof(k));
    b[0] = CZK_G1_GEN;
    b[1] = CZK_G1_GEN;
    rand_below_r(&k[0]);
    {
        uint64_t br = 0;
        for (int j = 0; j < 4; j++) {
            unsigned __int128 d = (unsigned __int128)CZK_FR_MOD.l[j] - k[0].l[j] - br;
            k[1].l[j] = (uint64_t)d;
            br = (uint64_t)(d >> 64) & 1;
        }
    }
    CHECK(czk_msm_g1(&got, b, k, 2, 1) == 0, "msm failed");
    CHECK(czk_g1_is_inf(&got), "k*G + (r-k)*G is not infinity");
    /* 2*G + 3*(-G) = -G */
    memset(k, 0, sizeof(k));
    k[0].l[0] = 2;
    k[1].l[0] = 3;
    czk_g1_aff_neg(&b[1], &CZK_G1_GEN);
    CHECK(czk_msm_g1(&got, b, k, 2, 2) == 0, "msm failed");
    czk_g1_from_aff(&want, &b[1]);
    CHECK(czk_g1_eq(&got, &want), "2*G + 3*(-G) != -G");
    /* n = 0 and all-infinity bases give infinity */
    CHECK(czk_msm_g1(&got, b, k, 0, 2) == 0 && czk_g1_is_inf(&got), "empty msm is not infinity");
    memset(b, 0, sizeof(b));
    k[0].l[0] = 5;
    memset(&got, 0xa5, sizeof(got)); /* got is infinity already, from the empty msm */
    CHECK(czk_msm_g1(&got, b, k, 4, 2) == 0 && czk_g1_is_inf(&got), "msm of infinities is not infinity");
}

int main(int argc, char **argv)
{
    const size_t g1_sizes[] = {0, 1, 2, 3, 100, 1000, 5000};
    const size_t g2_sizes[] = {1, 2, 3, 100, 1000, 2500};
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;

    t_seed("test_msm");

    test_fixed();
    for (unsigned i = 0; i < sizeof(g1_sizes) / sizeof(g1_sizes[0]); i++)
        for (int m = 0; m < MIX_COUNT; m++) {
            /* the biggest size only with the mixes that matter most, to keep the test fast */
            if (g1_sizes[i] >= 5000 && m != MIX_RANDOM && m != MIX_BITS && m != MIX_WIDE && m != MIX_SAME)
                continue;
            test_g1(g1_sizes[i], (enum mix)m);
        }
    for (unsigned i = 0; i < sizeof(g2_sizes) / sizeof(g2_sizes[0]); i++)
        for (int m = 0; m < MIX_COUNT; m++) {
            /* 2500 terms (5000 GLV halves) reach the batch-affine path; "repeated"
             * sends every term to one bucket per window (the conflict path) */
            if (g2_sizes[i] == 1000 && (quick || (m != MIX_RANDOM && m != MIX_BITS)))
                continue;
            if (g2_sizes[i] == 2500 && m != MIX_RANDOM && (quick || m != MIX_SAME))
                continue;
            test_g2(g2_sizes[i], (enum mix)m);
        }
    if (t_failures) {
        fprintf(stderr, "test_msm: %d check(s) failed\n", t_failures);
        return 1;
    }
    printf("test_msm: all checks passed\n");
    return 0;
}
