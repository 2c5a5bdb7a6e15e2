/*
 * test_cuda_bn254_field.c — the device BN254 fields (backend/cuda/ff.cuh:
 * bn_fp_t, bn_fr_t, bn_fp2_t) against the CPU ones (common/crypto/
 * bn254_field.h, checked against ffjavascript): Fp and Fr products, squares,
 * sums and differences, Fp2 products, on random elements and the edge values
 * 0, 1 and p - 1 (Montgomery forms) in every pairing.  Also the context's
 * curve mask: unknown bits are refused, a BLS12-381-only context refuses
 * BN254 NTTs and a BN254-only one BLS12-381 NTTs.  Exit 77 without a GPU.
 */
#include "tests/cuda/cuda_test_util.h"

#define N 4096

/* a[i], b[i]: edge pairs first (every pair of 0, 1, p - 1, 2), then random
 * with p - 1 among the b */
#define DEF_FILL(NAME, T, ZERO, ONE, ADD, NEG, RAND)                          \
    static void NAME(T *a, T *b)                                              \
    {                                                                         \
        T e[4], one = ONE;                                                    \
        e[0] = ZERO;                                                          \
        e[1] = one;                                                           \
        NEG(&e[2], &one);                                                     \
        ADD(&e[3], &one, &one);                                               \
        for (size_t i = 0; i < N; i++) {                                      \
            if (i < 16) {                                                     \
                a[i] = e[i % 4];                                              \
                b[i] = e[i / 4];                                              \
            } else {                                                          \
                RAND(&a[i]);                                                  \
                RAND(&b[i]);                                                  \
                if (i % 97 == 0)                                              \
                    b[i] = e[2];                                              \
            }                                                                 \
        }                                                                     \
    }
DEF_FILL(fill_fp, czk_bn254_fp, CZK_BN254_FP_ZERO, CZK_BN254_FP_ONE, czk_bn254_fp_add, czk_bn254_fp_neg, tu_rand_bn_fp)
DEF_FILL(fill_fr, czk_bn254_fr, CZK_BN254_FR_ZERO, CZK_BN254_FR_ONE, czk_bn254_fr_add, czk_bn254_fr_neg, tu_rand_bn_fr)

static const char *opname[4] = {"add", "sub", "sqr", "mul"};

/* NAME(ctx, a, b, r): the device's a + b, a - b, a^2 and a b (r poisoned
 * first) against the CPU's, element by element */
#define DEF_CHECKS(NAME, T, GPU_MUL, GPU_OP, ADD, SUB, SQR, MUL, EQ)                                    \
    static void NAME(czk_cuda_ctx *ctx, const T *a, const T *b, T *r)                                  \
    {                                                                                                   \
        for (int op = 0; op < 4; op++) {                                                                \
            memset(r, 0xa5, N * sizeof *r);                                                             \
            int rc = op == 3 ? GPU_MUL(ctx, r, a, b, N) : GPU_OP(ctx, r, a, b, N, op);                  \
            CHECK(rc == 0, #NAME " %s: %s", opname[op], czk_cuda_last_error());                         \
            for (size_t i = 0; i < N; i++) {                                                            \
                T t;                                                                                    \
                if (op == 0)                                                                            \
                    ADD(&t, &a[i], &b[i]);                                                              \
                else if (op == 1)                                                                       \
                    SUB(&t, &a[i], &b[i]);                                                              \
                else if (op == 2)                                                                       \
                    SQR(&t, &a[i]);                                                                     \
                else                                                                                    \
                    MUL(&t, &a[i], &b[i]);                                                              \
                CHECK(EQ(&t, &r[i]), #NAME " %s differs at %zu", opname[op], i);                        \
            }                                                                                           \
        }                                                                                               \
    }
DEF_CHECKS(check_fp, czk_bn254_fp, czk_cuda_test_bn254_fp_mul, czk_cuda_test_bn254_fp_op, czk_bn254_fp_add,
           czk_bn254_fp_sub, czk_bn254_fp_sqr, czk_bn254_fp_mul, czk_bn254_fp_eq)
DEF_CHECKS(check_fr, czk_bn254_fr, czk_cuda_test_bn254_fr_mul, czk_cuda_test_bn254_fr_op, czk_bn254_fr_add,
           czk_bn254_fr_sub, czk_bn254_fr_sqr, czk_bn254_fr_mul, czk_bn254_fr_eq)

int main(void)
{
    tu_seed();
    czk_cuda_ctx *ctx = tu_ctx_curves(10, 1024, 0, CZK_CUDA_CURVE_BN254);
    static czk_bn254_fp a[N], b[N], r[N];
    static czk_bn254_fr x[N], y[N], z[N];
    static czk_bn254_fp2 a2[N], b2[N], r2[N];

    for (int round = 0; round < 4; round++) {
        fill_fp(a, b);
        check_fp(ctx, a, b, r);
        fill_fr(x, y);
        check_fr(ctx, x, y, z);
        /* Fp2: components from the Fp sets, so edge components meet */
        fill_fp(a, b);
        for (size_t i = 0; i < N; i++) {
            a2[i].c0 = a[i];
            a2[i].c1 = b[(i * 7 + 3) % N];
            b2[i].c0 = b[i];
            b2[i].c1 = a[(i * 5 + 1) % N];
        }
        memset(r2, 0xa5, sizeof r2);
        CHECK(czk_cuda_test_bn254_fp2_mul(ctx, r2, a2, b2, N) == 0, "fp2 mul: %s", czk_cuda_last_error());
        for (size_t i = 0; i < N; i++) {
            czk_bn254_fp2 t;
            czk_bn254_fp2_mul(&t, &a2[i], &b2[i]);
            CHECK(czk_bn254_fp2_eq(&t, &r2[i]), "fp2 mul differs at %zu", i);
        }
    }
    printf("bn254 fp/fr mul, sqr, add, sub and fp2 mul: %d x %d elements ok\n", 4, N);

    /* curve masks */
    czk_bn254_fr v[4];
    for (int i = 0; i < 4; i++)
        tu_rand_bn_fr(&v[i]);
    CHECK(czk_cuda_ntt(ctx, (czk_fr *)v, 2, 0) == -EINVAL, "BLS12-381 ntt ran on a BN254-only context");
    czk_cuda_ctx_free(ctx);
    czk_cuda_cfg bad = {.device = 0, .max_log_n = 4, .max_msm_n = 16, .curves = 4};
    CHECK(czk_cuda_ctx_new(&ctx, &bad) == -EINVAL && ctx == NULL, "unknown curve bit accepted");
    ctx = tu_ctx(4, 16, 0);
    CHECK(czk_cuda_bn254_ntt(ctx, v, 2, 0) == -EINVAL, "BN254 ntt ran on a BLS12-381-only context");
    czk_cuda_ctx_free(ctx);
    printf("curve masks ok\n");
    return 0;
}
