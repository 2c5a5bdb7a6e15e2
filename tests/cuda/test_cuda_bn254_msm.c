/*
 * test_cuda_bn254_msm.c — the device BN254 G1/G2 MSM against the CPU
 * (czk_bn254_msm_g1/g2, and a naive sum of scalar multiplications up to
 * 1000 terms) at n = 1, 7, 1000 and 2^16 + 3.  Scalar sets: random, 0/1-mixed,
 * all zero, all one, all 2^256 - 1 and uniform 256-bit values (mostly >= r:
 * scalars act as integers).  Bases are random multiples of the generators with infinity
 * bases, repeated bases and a base followed by its double's negation (the
 * doubling and P + (-P) branches of a bucket); one set is all infinity.
 * Offsets (base_off, scalar_off) and the curve checks (BLS12-381 bases
 * refused by the BN254 MSM, the BLS12-381 MSM refused by a BN254-only
 * context) are checked too.  Each set of bases runs plain, with a full
 * fixed-base table and with a 3-row table at c = 10 (9 bucket windows).  Exit 77 without a GPU.
 */
#include "common/crypto/bn254_msm.h"
#include "tests/cuda/cuda_test_util.h"

/* the common sets (cuda_test_util.h), then uniform 256-bit values (most >= r) */
enum { S_RANDOM = TU_S_RANDOM, S_ANY = TU_S_COMMON, S_COUNT };
static const char *s_name[] = {"random", "0/1-mixed", "all-zero", "all-one", "all 2^256-1", "any 256-bit"};

static void rand_scalar_r(uint64_t l[4]) { tu_rand_bn_fr((czk_bn254_fr *)l); }

static void rand_any(uint64_t l[4])
{
    for (int j = 0; j < 4; j++)
        l[j] = tu_rand();
}

static void make_scalars(czk_bn254_fr *s, size_t n, int kind) { tu_scalars(s, n, kind, rand_scalar_r, rand_any); }

/* n affine points: random multiples of the generator, then the special
 * cases at fixed places (those that fit in n) */
#define DEF_BASES(NAME, AFF, JAC, FP, GEN, MUL_AFF, ADD, DBL, NEG, BATCH)                                   \
    static void NAME(AFF *out, size_t n, int all_inf)                                                       \
    {                                                                                                        \
        JAC q[4], p;                                                                                         \
        czk_bn254_fr k;                                                                                      \
        for (int i = 0; i < 4; i++) {                                                                        \
            tu_rand_bn_fr(&k);                                                                               \
            MUL_AFF(&q[i], &GEN, &k);                                                                        \
        }                                                                                                    \
        tu_rand_bn_fr(&k);                                                                                   \
        MUL_AFF(&p, &GEN, &k);                                                                               \
        JAC *jac = malloc(n * sizeof *jac);                                                                  \
        FP *scratch = malloc(n * sizeof *scratch);                                                           \
        CHECK(jac && scratch, "oom");                                                                        \
        for (size_t i = 0; i < n; i++) {                                                                     \
            ADD(&p, &p, &q[i & 3]);                                                                          \
            jac[i] = p;                                                                                      \
        }                                                                                                    \
        if (n >= 4) {                                                                                        \
            jac[2] = jac[0];                                                                                 \
            DBL(&jac[3], &jac[0]);                                                                           \
            NEG(&jac[3], &jac[3]);                                                                           \
        }                                                                                                    \
        if (n >= 12) /* adjacent P, -P: infinity at the first batch-affine level */                         \
            NEG(&jac[11], &jac[10]);                                                                         \
        BATCH(out, jac, n, scratch);                                                                         \
        if (n >= 7) {                                                                                        \
            memset(&out[1], 0, sizeof out[1]);                                                               \
            memset(&out[n / 2 + 1], 0, sizeof out[0]);                                                       \
            out[5] = out[4];                                                                                 \
            out[n - 1] = out[4];                                                                             \
        }                                                                                                    \
        if (all_inf)                                                                                         \
            memset(out, 0, n * sizeof *out);                                                                 \
        free(jac);                                                                                           \
        free(scratch);                                                                                       \
    }
DEF_BASES(make_g1, czk_bn254_g1_aff, czk_bn254_g1, czk_bn254_fp, CZK_BN254_G1_GEN, czk_bn254_g1_mul_aff,
          czk_bn254_g1_add, czk_bn254_g1_dbl, czk_bn254_g1_neg, czk_bn254_g1_batch_to_aff)
DEF_BASES(make_g2, czk_bn254_g2_aff, czk_bn254_g2, czk_bn254_fp2, CZK_BN254_G2_GEN, czk_bn254_g2_mul_aff,
          czk_bn254_g2_add, czk_bn254_g2_dbl, czk_bn254_g2_neg, czk_bn254_g2_batch_to_aff)

/* one group's checks at every size and scalar set; naive sums up to 1000 terms */
#define DEF_RUN(NAME, GRP, AFF, JAC, MAKE, UPLOAD, MSM_HOST, MSM_DEV, CPU_MSM, MUL_AFF, ADD, SET_INF, EQ)        \
    static void NAME(czk_cuda_ctx *ctx, czk_bn254_fr *s)                                                    \
    {                                                                                                        \
        const size_t sizes[] = {1, 7, 1000, ((size_t)1 << 16) + 3};                                         \
        for (int si = 0; si < 4; si++) {                                                                     \
            size_t n = sizes[si];                                                                            \
            for (int tv = 0; tv < (n == 7 ? 2 : 1) * 3; tv++) {                                              \
                const int inf = tv / 3, tab = tv % 3;                                                        \
                static const char *tab_name[] = {"", ", full table", ", 3-row table at c=10"};              \
                AFF *b = malloc(n * sizeof *b);                                                              \
                CHECK(b, "oom");                                                                             \
                MAKE(b, n, inf);                                                                             \
                czk_cuda_bases *db;                                                                          \
                CHECK(UPLOAD(ctx, &db, b, n) == 0, "upload " GRP " bases: %s", czk_cuda_last_error());      \
                if (tab)                                                                                     \
                    CHECK(czk_cuda_bases_precompute(db, tab == 1 ? 0 : 3, tab == 1 ? 0 : 10) == 0,           \
                          GRP " table: %s", czk_cuda_last_error());                                          \
                for (int kind = 0; kind < S_COUNT; kind++) {                                                 \
                    make_scalars(s, n, kind);                                                                \
                    JAC gpu, cpu;                                                                            \
                    memset(&gpu, 0xa5, sizeof gpu);                                                          \
                    CHECK(MSM_HOST(ctx, db, s, n, &gpu) == 0, "gpu msm " GRP ": %s", czk_cuda_last_error()); \
                    CHECK(CPU_MSM(&cpu, b, s, n, 0) == 0, "cpu msm " GRP);                                   \
                    CHECK(EQ(&gpu, &cpu), "msm " GRP " n=%zu %s%s%s: gpu != cpu", n, s_name[kind],           \
                          inf ? " (infinity bases)" : "", tab_name[tab]);                                    \
                    CHECK(czk_cuda_msm_used_table(ctx) == (tab != 0), "msm " GRP " n=%zu%s: table used: %d", \
                          n, tab_name[tab], czk_cuda_msm_used_table(ctx));                                   \
                    if (n <= 1000 && (kind == S_RANDOM || kind == S_ANY)) {                                 \
                        JAC nv, t;                                                                           \
                        SET_INF(&nv);                                                                        \
                        for (size_t i = 0; i < n; i++) {                                                     \
                            MUL_AFF(&t, &b[i], &s[i]);                                                       \
                            ADD(&nv, &nv, &t);                                                               \
                        }                                                                                    \
                        CHECK(EQ(&gpu, &nv), "msm " GRP " n=%zu %s: gpu != naive sum", n, s_name[kind]);     \
                    }                                                                                        \
                }                                                                                            \
                if (n > 16) {                                                                                \
                    /* offsets: bases [7, n), scalars from BUF_W offset 3 */                                \
                    make_scalars(s, n, S_RANDOM);                                                            \
                    CHECK(czk_cuda_upload_async(ctx, CZK_CUDA_BUF_W, 0, (const czk_fr *)s, n, NULL, NULL) == 0, \
                          "upload scalars");                                                                 \
                    JAC gpu, cpu;                                                                            \
                    CHECK(MSM_DEV(ctx, db, 7, CZK_CUDA_BUF_W, 3, n - 7, &gpu) == 0, "gpu msm offsets: %s",   \
                          czk_cuda_last_error());                                                            \
                    CHECK(CPU_MSM(&cpu, b + 7, s + 3, n - 7, 0) == 0, "cpu msm offsets");                    \
                    CHECK(EQ(&gpu, &cpu), "msm " GRP " n=%zu%s with offsets differs", n, tab_name[tab]);     \
                }                                                                                            \
                czk_cuda_bases_free(db);                                                                     \
                free(b);                                                                                     \
                printf("bn254 msm " GRP " n=%zu%s%s: all scalar sets ok\n", n, inf ? " (infinity bases)" : "", \
                       tab_name[tab]);                                                                       \
            }                                                                                                \
        }                                                                                                    \
    }
DEF_RUN(run_g1, "g1", czk_bn254_g1_aff, czk_bn254_g1, make_g1, czk_cuda_bn254_bases_upload_g1,
        czk_cuda_bn254_msm_g1_host, czk_cuda_bn254_msm_g1, czk_bn254_msm_g1, czk_bn254_g1_mul_aff,
        czk_bn254_g1_add, czk_bn254_g1_set_inf, czk_bn254_g1_eq)
DEF_RUN(run_g2, "g2", czk_bn254_g2_aff, czk_bn254_g2, make_g2, czk_cuda_bn254_bases_upload_g2,
        czk_cuda_bn254_msm_g2_host, czk_cuda_bn254_msm_g2, czk_bn254_msm_g2, czk_bn254_g2_mul_aff,
        czk_bn254_g2_add, czk_bn254_g2_set_inf, czk_bn254_g2_eq)

int main(void)
{
    tu_seed();
    size_t nmax = ((size_t)1 << 16) + 3;
    czk_cuda_ctx *ctx = tu_ctx_curves(10, nmax, 1, CZK_CUDA_CURVE_BN254);
    czk_bn254_fr *s = malloc(nmax * sizeof *s);
    CHECK(s, "oom");
    run_g1(ctx, s);
    run_g2(ctx, s);

    /* curve checks: BLS12-381 bases in a BN254 MSM, the BLS12-381 MSM on a BN254-only context */
    czk_g1_aff bls[16];
    czk_g1 jb;
    czk_fr k;
    tu_rand_fr(&k);
    czk_g1_mul_aff(&jb, &CZK_G1_GEN, &k);
    for (int i = 0; i < 16; i++)
        czk_g1_to_aff(&bls[i], &jb);
    czk_cuda_bases *db;
    CHECK(czk_cuda_bases_upload_g1(ctx, &db, bls, 16) == 0, "upload bls bases: %s", czk_cuda_last_error());
    czk_bn254_g1 r1;
    czk_g1 r2;
    make_scalars(s, 16, S_RANDOM);
    CHECK(czk_cuda_bn254_msm_g1_host(ctx, db, s, 16, &r1) == -EINVAL, "BLS12-381 bases accepted by the BN254 msm");
    CHECK(czk_cuda_msm_g1_host(ctx, db, (const czk_fr *)s, 16, &r2) == -EINVAL,
          "BLS12-381 msm ran on a BN254-only context");
    czk_cuda_bases_free(db);
    printf("curve checks ok\n");
    czk_cuda_ctx_free(ctx);
    free(s);
    return 0;
}
