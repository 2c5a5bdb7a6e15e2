/*
 * test_msm_scratch.c — MSMs that run after other MSMs in the same process,
 * on both curves: the MSM scratch (msm_plan_impl.h's msm_alloc) is kept
 * between calls and handed out again with the previous MSM's contents, so
 * every result here must not depend on what ran before.  Per group (BLS12-381
 * G1 and G2, BN254 G1 and G2), with sizes where the scratch blocks are big
 * enough to be kept (1 MiB and up):
 *   1. an MSM of n terms, 2. one of about n/3 terms with other scalars (it
 *   gets the first one's larger blocks, stale), 3. the first one again,
 *   which must give the same point as 1, 4. two MSMs at once from two
 *   threads (the cache under concurrency);
 * every result against an oracle that needs no MSM: the bases are a walk
 * x0 + i q, so sum k_i (x0 + i q) = (sum k_i) x0 + (sum i k_i) q, the two
 * sums taken mod r.  Scalars: random below 2^253 (< r on both curves) with
 * zeros and ones mixed in.  Exit 0 pass, 1 fail.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto/bn254_curve.h"
#include "common/crypto/bn254_field.h"
#include "common/crypto/bn254_msm.h"
#include "common/crypto/curve.h"
#include "common/crypto/field.h"
#include "common/crypto/msm.h"
#include "tests/common/points.h"
#include "tests/common/test_util.h"

static void rand_scalars(uint64_t (*k)[4], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned pick = (unsigned)(t_rand64() % 16);
        memset(k[i], 0, sizeof(k[i]));
        if (pick == 0)
            continue;                          /* zero */
        if (pick == 1) {
            k[i][0] = 1;                       /* one */
            continue;
        }
        for (int j = 0; j < 4; j++)
            k[i][j] = t_rand64();
        k[i][3] &= 0x1fffffffffffffffULL;     /* below 2^253 < r */
    }
}

/* bn254 walk, like points.h's */
static czk_bn254_g1_aff *bn_g1_walk(size_t n, const czk_bn254_g1 *x0, const czk_bn254_g1 *q)
{
    czk_bn254_g1_aff *b = malloc(n * sizeof(*b));
    czk_bn254_g1 *p = malloc(n * sizeof(*p)), x = *x0;
    czk_bn254_fp *scratch = malloc(n * sizeof(*scratch));

    if (!b || !p || !scratch)
        exit(2);
    for (size_t i = 0; i < n; i++) {
        p[i] = x;
        czk_bn254_g1_add(&x, &x, q);
    }
    czk_bn254_g1_batch_to_aff(b, p, n, scratch);
    free(p);
    free(scratch);
    return b;
}

static czk_bn254_g2_aff *bn_g2_walk(size_t n, const czk_bn254_g2 *x0, const czk_bn254_g2 *q)
{
    czk_bn254_g2_aff *b = malloc(n * sizeof(*b));
    czk_bn254_g2 *p = malloc(n * sizeof(*p)), x = *x0;
    czk_bn254_fp2 *scratch = malloc(n * sizeof(*scratch));

    if (!b || !p || !scratch)
        exit(2);
    for (size_t i = 0; i < n; i++) {
        p[i] = x;
        czk_bn254_g2_add(&x, &x, q);
    }
    czk_bn254_g2_batch_to_aff(b, p, n, scratch);
    free(p);
    free(scratch);
    return b;
}

/*
 * One group's run, NAME(n): FR the scalar type, JAC / AFF the points and
 * their operations, FR_* the scalar field's, WALK(n, x0, q) the bases,
 * MSM the MSM under test.
 */
#define SCRATCH_TEST(NAME, FR, JAC, AFF, GEN, MUL_AFF, ADD, EQ, IS_INF, TO_AFF, FR_TO_MONT, FR_FROM_MONT, FR_ADD, \
                     FR_MUL, WALK, MSM)                                                                                 \
    struct NAME##_job {                                                                                            \
        const AFF *b;                                                                                              \
        const FR *k;                                                                                               \
        size_t n;                                                                                                  \
        JAC r;                                                                                                     \
        int rc;                                                                                                    \
    };                                                                                                             \
                                                                                                                   \
    static void *NAME##_thread(void *arg)                                                                          \
    {                                                                                                              \
        struct NAME##_job *j = arg;                                                                                \
        j->rc = MSM(&j->r, j->b, j->k, j->n, 1);                                                                   \
        return NULL;                                                                                               \
    }                                                                                                              \
                                                                                                                   \
    /* (sum k_i) x0 + (sum i k_i) q */                                                                             \
    static void NAME##_oracle(JAC *r, const AFF *x0, const AFF *q, const FR *k, size_t n)                          \
    {                                                                                                              \
        FR s0, s1, t, im, std;                                                                                     \
        JAC a;                                                                                                     \
        memset(&s0, 0, sizeof(s0));                                                                                \
        memset(&s1, 0, sizeof(s1));                                                                                \
        for (size_t i = 0; i < n; i++) {                                                                           \
            FR ki, iv;                                                                                             \
            FR_TO_MONT(&ki, &k[i]);                                                                                \
            memset(&iv, 0, sizeof(iv));                                                                            \
            iv.l[0] = i;                                                                                           \
            FR_TO_MONT(&im, &iv);                                                                                  \
            FR_ADD(&s0, &s0, &ki);                                                                                 \
            FR_MUL(&t, &ki, &im);                                                                                  \
            FR_ADD(&s1, &s1, &t);                                                                                  \
        }                                                                                                          \
        FR_FROM_MONT(&std, &s0);                                                                                   \
        MUL_AFF(r, x0, &std);                                                                                      \
        FR_FROM_MONT(&std, &s1);                                                                                   \
        MUL_AFF(&a, q, &std);                                                                                      \
        ADD(r, r, &a);                                                                                             \
    }                                                                                                              \
                                                                                                                   \
    static void NAME(size_t n)                                                                                     \
    {                                                                                                              \
        FR *k1 = malloc(n * sizeof(FR)), *k2 = malloc(n * sizeof(FR)), e;                                          \
        JAC x0, q, r1, r2, r3, want1, want2;                                                                       \
        AFF *b, ax0, aq;                                                                                           \
        size_t n2 = n / 3 + 5;                                                                                     \
        if (!k1 || !k2)                                                                                            \
            exit(2);                                                                                               \
        memset(&e, 0, sizeof(e));                                                                                  \
        e.l[0] = t_rand64();                                                                                       \
        e.l[1] = t_rand64();                                                                                       \
        MUL_AFF(&x0, &GEN, &e);                                                                                    \
        e.l[0] = t_rand64();                                                                                       \
        MUL_AFF(&q, &GEN, &e);                                                                                     \
        b = WALK(n, &x0, &q);                                                                                      \
        TO_AFF(&ax0, &x0);                                                                                         \
        TO_AFF(&aq, &q);                                                                                           \
        rand_scalars((uint64_t(*)[4])k1, n);                                                                       \
        rand_scalars((uint64_t(*)[4])k2, n);                                                                       \
        NAME##_oracle(&want1, &ax0, &aq, k1, n);                                                                   \
        NAME##_oracle(&want2, &ax0, &aq, k2, n2);                                                                  \
        CHECK(MSM(&r1, b, k1, n, 2) == 0, #NAME " n=%zu", n);                                                      \
        CHECK(EQ(&r1, &want1), #NAME ": first MSM of %zu terms", n);                                               \
        CHECK(MSM(&r2, b, k2, n2, 2) == 0, #NAME " n=%zu", n2);                                                    \
        CHECK(EQ(&r2, &want2), #NAME ": MSM of %zu terms after one of %zu", n2, n);                                \
        CHECK(MSM(&r3, b, k1, n, 2) == 0, #NAME " n=%zu", n);                                                      \
        CHECK(EQ(&r3, &r1) && EQ(&r3, &want1), #NAME ": the first MSM again");                                     \
        CHECK(!IS_INF(&r1) && !IS_INF(&r2), #NAME ": results at infinity");                                        \
        {                                                                                                          \
            struct NAME##_job j[2] = {{.b = b, .k = k1, .n = n, .rc = -1}, {.b = b, .k = k2, .n = n2, .rc = -1}};      \
            pthread_t t[2];                                                                                        \
            int ok[2];                                                                                             \
            for (int i = 0; i < 2; i++)                                                                            \
                ok[i] = pthread_create(&t[i], NULL, NAME##_thread, &j[i]) == 0;                                    \
            for (int i = 0; i < 2; i++) {                                                                          \
                if (ok[i])                                                                                         \
                    pthread_join(t[i], NULL);                                                                      \
                else                                                                                               \
                    NAME##_thread(&j[i]);                                                                          \
            }                                                                                                      \
            CHECK(j[0].rc == 0 && EQ(&j[0].r, &want1), #NAME ": concurrent MSM 1");                                \
            CHECK(j[1].rc == 0 && EQ(&j[1].r, &want2), #NAME ": concurrent MSM 2");                                \
        }                                                                                                          \
        free(b);                                                                                                   \
        free(k1);                                                                                                  \
        free(k2);                                                                                                  \
    }

SCRATCH_TEST(bls_g1, czk_fr, czk_g1, czk_g1_aff, CZK_G1_GEN, czk_g1_mul_aff, czk_g1_add, czk_g1_eq, czk_g1_is_inf,
             czk_g1_to_aff, czk_fr_to_mont, czk_fr_from_mont, czk_fr_add, czk_fr_mul, t_g1_walk, czk_msm_g1)
SCRATCH_TEST(bls_g2, czk_fr, czk_g2, czk_g2_aff, CZK_G2_GEN, czk_g2_mul_aff, czk_g2_add, czk_g2_eq, czk_g2_is_inf,
             czk_g2_to_aff, czk_fr_to_mont, czk_fr_from_mont, czk_fr_add, czk_fr_mul, t_g2_walk, czk_msm_g2)
SCRATCH_TEST(bn_g1, czk_bn254_fr, czk_bn254_g1, czk_bn254_g1_aff, CZK_BN254_G1_GEN, czk_bn254_g1_mul_aff,
             czk_bn254_g1_add, czk_bn254_g1_eq, czk_bn254_g1_is_inf, czk_bn254_g1_to_aff, czk_bn254_fr_to_mont,
             czk_bn254_fr_from_mont, czk_bn254_fr_add, czk_bn254_fr_mul, bn_g1_walk, czk_bn254_msm_g1)
SCRATCH_TEST(bn_g2, czk_bn254_fr, czk_bn254_g2, czk_bn254_g2_aff, CZK_BN254_G2_GEN, czk_bn254_g2_mul_aff,
             czk_bn254_g2_add, czk_bn254_g2_eq, czk_bn254_g2_is_inf, czk_bn254_g2_to_aff, czk_bn254_fr_to_mont,
             czk_bn254_fr_from_mont, czk_bn254_fr_add, czk_bn254_fr_mul, bn_g2_walk, czk_bn254_msm_g2)

int main(void)
{
    t_seed("test_msm_scratch");
    /* sizes with kept blocks: base copies and digits of 1 MiB and more */
    bls_g1(1u << 16);
    bn_g1(1u << 16);
    bls_g2(1u << 13);
    bn_g2(1u << 13);
    /* and the groups again, now that every cache holds blocks */
    bn_g1(3u << 14);
    bls_g1(3u << 14);
    if (t_failures) {
        fprintf(stderr, "test_msm_scratch: %d failure(s)\n", t_failures);
        return 1;
    }
    printf("test_msm_scratch: ok\n");
    return 0;
}
