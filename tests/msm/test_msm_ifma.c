/*
 * test_msm_ifma.c — the AVX-512 IFMA MSM path (common/crypto/fpx8.h, msm_ifma.c,
 * the 8-lane running sums of msm_tmpl.h) against the scalar path at sizes
 * where the batches are full and the vector reduction runs on 4096-bucket
 * windows: G1 with 2^15 terms, G2 with 2^13, 2 threads.  The scalar path
 * (its field code checked against GMP, its MSM against the naive sum in
 * test_msm) is the oracle: this program re-runs itself with CZK_NO_IFMA=1,
 * the child prints its results, the parent compares them with its own.
 * Inputs: distinct bases with runs of repeated and negated points (so that
 * buckets meet +-their own point in the vector flush and reduction), scalars
 * uniform below r with zeros, ones and values >= 2^255 mixed in.
 * Exit 0 pass, 1 fail, 77 skip (no IFMA here, or CZK_NO_IFMA set).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/crypto/curve.h"
#include "common/crypto/field.h"
#include "common/crypto/fpx8.h"
#include "common/crypto/msm.h"
#include "tests/common/points.h"
#include "tests/common/test_util.h"

#define N1 (1u << 15)
#define N2 (1u << 13)

static void rand_scalar(czk_fr *k, size_t i)
{
    unsigned pick = (unsigned)(t_rand64() % 32);
    memset(k, 0, sizeof(*k));
    if (pick == 0)
        return;                       /* zero */
    if (pick == 1) {
        k->l[0] = 1;                  /* one */
        return;
    }
    for (int j = 0; j < 4; j++)
        k->l[j] = t_rand64();
    if (pick != 2)                    /* pick 2: any 256-bit value (bit 255 often set) */
        k->l[3] &= 0x3fffffffffffffffULL;
    (void)i;
}

/* x0 + i q for i < n, then runs of repeats and negations */
static czk_g1_aff *g1_bases(size_t n)
{
    czk_g1 q, x;
    czk_fr k = {{t_rand64(), t_rand64(), 0, 0}};

    czk_g1_mul_aff(&x, &CZK_G1_GEN, &k);
    k.l[0] = t_rand64();
    czk_g1_mul_aff(&q, &CZK_G1_GEN, &k);
    czk_g1_aff *b = t_g1_walk(n, &x, &q);
    for (size_t i = 1; i < n; i++) {
        unsigned pick = (unsigned)(t_rand64() % 64);
        if (pick == 0)
            b[i] = b[i - 1];
        else if (pick == 1)
            czk_g1_aff_neg(&b[i], &b[i - 1]);
        else if (pick == 2)
            b[i] = b[t_rand64() % i];
    }
    return b;
}

static czk_g2_aff *g2_bases(size_t n)
{
    czk_g2 q, x;
    czk_fr k = {{t_rand64(), t_rand64(), 0, 0}};

    czk_g2_mul_aff(&x, &CZK_G2_GEN, &k);
    k.l[0] = t_rand64();
    czk_g2_mul_aff(&q, &CZK_G2_GEN, &k);
    czk_g2_aff *b = t_g2_walk(n, &x, &q);
    for (size_t i = 1; i < n; i++) {
        unsigned pick = (unsigned)(t_rand64() % 64);
        if (pick == 0)
            b[i] = b[i - 1];
        else if (pick == 1)
            czk_g2_aff_neg(&b[i], &b[i - 1]);
    }
    return b;
}

static void put_fp(char *out, size_t cap, const czk_fp *a)
{
    char dec[CZK_FP_DEC_MAX];
    czk_fp_to_dec(dec, a);
    strncat(out, dec, cap - strlen(out) - 2);
    strncat(out, " ", cap - strlen(out) - 1);
}

/* the results of both MSMs as one line of decimals (affine; "inf" for infinity) */
static int results(char *out, size_t cap)
{
    czk_g1_aff *b1 = g1_bases(N1);
    czk_g2_aff *b2 = g2_bases(N2);
    czk_fr *k = malloc(N1 * sizeof(*k));
    czk_g1 r1;
    czk_g2 r2;
    czk_g1_aff a1;
    czk_g2_aff a2;
    size_t i;

    if (!k)
        return -1;
    for (i = 0; i < N1; i++)
        rand_scalar(&k[i], i);
    out[0] = 0;
    if (czk_msm_g1(&r1, b1, k, N1, 2) || czk_msm_g2(&r2, b2, k, N2, 2))
        return -1;
    czk_g1_to_aff(&a1, &r1);
    czk_g2_to_aff(&a2, &r2);
    if (czk_g1_is_inf(&r1))
        strncat(out, "inf ", cap - 1);
    put_fp(out, cap, &a1.x);
    put_fp(out, cap, &a1.y);
    if (czk_g2_is_inf(&r2))
        strncat(out, "inf ", cap - strlen(out) - 1);
    put_fp(out, cap, &a2.x.c0);
    put_fp(out, cap, &a2.x.c1);
    put_fp(out, cap, &a2.y.c0);
    put_fp(out, cap, &a2.y.c1);
    free(b1);
    free(b2);
    free(k);
    return 0;
}

int main(int argc, char **argv)
{
    static char mine[1024], theirs[1024];
    char cmd[64], seed[32];
    FILE *child;
    size_t len;

    t_seed("test_msm_ifma");
    if (argc > 1 && !strcmp(argv[1], "--print")) {
        if (results(mine, sizeof(mine)))
            return 1;
        printf("%s\n", mine);
        return 0;
    }
    if (!czk_fpx8_enabled()) {
        printf("test_msm_ifma: skipped: no AVX-512 IFMA on this CPU or CZK_NO_IFMA set\n");
        return 77;
    }
    snprintf(seed, sizeof(seed), "0x%llx", (unsigned long long)t_rng_state);
    if (results(mine, sizeof(mine))) {
        fprintf(stderr, "test_msm_ifma: the IFMA MSM failed\n");
        return 1;
    }
    /* the same inputs (same seed) on the scalar path, in a child process */
    setenv("CZK_TEST_SEED", seed, 1);
    setenv("CZK_NO_IFMA", "1", 1);
    snprintf(cmd, sizeof(cmd), "/proc/%d/exe --print", (int)getpid());
    child = popen(cmd, "r");
    CHECK(child != NULL, "could not run the scalar-path child");
    if (!child)
        return 1;
    while (fgets(theirs, sizeof(theirs), child) && strncmp(theirs, "test_msm_ifma:", 14) == 0)
        ; /* its seed line */
    CHECK(pclose(child) == 0, "the scalar-path child failed");
    len = strlen(theirs);
    if (len && theirs[len - 1] == '\n')
        theirs[len - 1] = 0;
    CHECK(strlen(mine) > 100 && strcmp(mine, theirs) == 0,
          "IFMA and scalar MSM results differ:\n  ifma:   %s\n  scalar: %s", mine, theirs);
    printf("test_msm_ifma: G1 2^15 and G2 2^13 MSMs equal on both paths: %s\n", t_failures ? "FAILED" : "ok");
    return t_failures ? 1 : 0;
}
