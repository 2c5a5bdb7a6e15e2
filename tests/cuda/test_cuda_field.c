/*
 * test_cuda_field.c — device Fr/Fp/Fp2 Montgomery multiplication and Fp
 * add/sub against the CPU field (common/crypto/field.h) on random and edge inputs.
 * Exit 77 without a GPU.
 */
#include "tests/cuda/cuda_test_util.h"

#define N (1 << 16)

int main(void)
{
    tu_seed();
    czk_cuda_ctx *ctx = tu_ctx(10, 1024, 0);

    /* Fr */
    czk_fr *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *r = malloc(N * sizeof *r);
    CHECK(a && b && r, "oom");
    for (int i = 0; i < N; i++) {
        tu_rand_fr(&a[i]);
        tu_rand_fr(&b[i]);
    }
    /* edge values: 0, 1 (Montgomery), r-1 */
    czk_fr rm1 = CZK_FR_MOD;
    rm1.l[0] -= 1;
    a[0] = CZK_FR_ZERO;
    a[1] = CZK_FR_ONE;
    a[2] = rm1;
    b[2] = rm1;
    b[3] = CZK_FR_ONE;
    memset(r, 0xa5, N * sizeof *r);
    int rc = czk_cuda_test_fr_mul(ctx, r, a, b, N);
    CHECK(rc == 0, "fr mul: %d", rc);
    for (int i = 0; i < N; i++) {
        czk_fr e;
        czk_fr_mul(&e, &a[i], &b[i]);
        CHECK(czk_fr_eq(&e, &r[i]), "fr mul mismatch at %d", i);
    }
    printf("fr mul: %d ok\n", N);

    /* Fp */
    czk_fp *pa = malloc(N * sizeof *pa), *pb = malloc(N * sizeof *pb), *pr = malloc(N * sizeof *pr);
    CHECK(pa && pb && pr, "oom");
    for (int i = 0; i < N; i++) {
        tu_rand_fp(&pa[i]);
        tu_rand_fp(&pb[i]);
    }
    czk_fp pm1 = CZK_FP_MOD;
    pm1.l[0] -= 1;
    pa[0] = CZK_FP_ZERO;
    pa[1] = CZK_FP_ONE;
    pa[2] = pm1;
    pb[2] = pm1;
    pb[3] = CZK_FP_ONE;
    pa[4] = pm1;
    pb[4] = CZK_FP_ONE;
    memset(pr, 0xa5, N * sizeof *pr);
    rc = czk_cuda_test_fp_mul(ctx, pr, pa, pb, N);
    CHECK(rc == 0, "fp mul: %d", rc);
    for (int i = 0; i < N; i++) {
        czk_fp e;
        czk_fp_mul(&e, &pa[i], &pb[i]);
        CHECK(czk_fp_eq(&e, &pr[i]), "fp mul mismatch at %d", i);
    }
    printf("fp mul: %d ok\n", N);
    for (int op = 0; op < 2; op++) {
        memset(pr, 0xa5, N * sizeof *pr);
        rc = czk_cuda_test_fp_addsub(ctx, pr, pa, pb, N, op);
        CHECK(rc == 0, "fp add/sub: %d", rc);
        for (int i = 0; i < N; i++) {
            czk_fp e;
            if (op == 0)
                czk_fp_add(&e, &pa[i], &pb[i]);
            else
                czk_fp_sub(&e, &pa[i], &pb[i]);
            CHECK(czk_fp_eq(&e, &pr[i]), "fp %s mismatch at %d", op ? "sub" : "add", i);
        }
    }
    printf("fp add/sub: %d ok\n", N);

    /* Fp2 */
    czk_fp2 *qa = malloc(N / 2 * sizeof *qa), *qb = malloc(N / 2 * sizeof *qb), *qr = malloc(N / 2 * sizeof *qr);
    CHECK(qa && qb && qr, "oom");
    for (int i = 0; i < N / 2; i++) {
        qa[i].c0 = pa[2 * i];
        qa[i].c1 = pa[2 * i + 1];
        qb[i].c0 = pb[2 * i];
        qb[i].c1 = pb[2 * i + 1];
    }
    memset(qr, 0xa5, N / 2 * sizeof *qr);
    rc = czk_cuda_test_fp2_mul(ctx, qr, qa, qb, N / 2);
    CHECK(rc == 0, "fp2 mul: %d", rc);
    for (int i = 0; i < N / 2; i++) {
        czk_fp2 e;
        czk_fp2_mul(&e, &qa[i], &qb[i]);
        CHECK(czk_fp2_eq(&e, &qr[i]), "fp2 mul mismatch at %d", i);
    }
    printf("fp2 mul: %d ok\n", N / 2);

    czk_cuda_ctx_free(ctx);
    free(a), free(b), free(r), free(pa), free(pb), free(pr), free(qa), free(qb), free(qr);
    return 0;
}
