/*
 * test_cuda_ec.c — the device point arithmetic (backend/cuda/ec.cuh) against
 * the CPU curve code, branch by branch (ec_kernels.cu): the XYZZ addition
 * (plain, doubling with equal and with different coordinates, P + (-P), a
 * point added to itself, infinity on either side), the mixed addition
 * (plain, doubling, P + (-P), onto infinity) and the doubling (of a point,
 * of infinity), for BLS12-381 and BN254, G1 and G2 (G2 also on lane pairs,
 * ec_pair.cuh, as the first level and the window reduction run it), on random points P, R,
 * with the threads of a warp taking different branches at once: a BN254 G2
 * window reduction once faulted when one thread of a warp added P + (-P)
 * while the others added distinct points (docs/bench-gpu.md).  Exit 77
 * without a GPU.
 */
#include "tests/cuda/cuda_test_util.h"
#include "tests/cuda/ec_kernels.h"

#define TRIALS 16

/* want[k][0..2]: the results of kind k (ec_kernels.h) */
#define DEF_GROUP(NAME, BN, G2, AFF, JAC, FR, RAND_FR, GEN, MUL_AFF, TO_AFF, ADD, DBL, NEG, SET_INF, EQ)         \
    static void NAME(const char *grp)                                                                       \
    {                                                                                                        \
        static JAC got[3 * TU_EC_THREADS];                                                                   \
        for (int trial = 0; trial < TRIALS; trial++) {                                                       \
            FR k;                                                                                            \
            JAC pj, rj, p2, pr, inf, np, np2;                                                                \
            AFF in[2];                                                                                       \
            RAND_FR(&k);                                                                                     \
            MUL_AFF(&pj, &GEN, &k);                                                                          \
            RAND_FR(&k);                                                                                     \
            MUL_AFF(&rj, &GEN, &k);                                                                          \
            TO_AFF(&in[0], &pj);                                                                             \
            TO_AFF(&in[1], &rj);                                                                             \
            DBL(&p2, &pj);                                                                                   \
            ADD(&pr, &pj, &rj);                                                                              \
            SET_INF(&inf);                                                                                   \
            NEG(&np, &pj);                                                                                   \
            NEG(&np2, &p2);                                                                                  \
            const JAC *want[TU_EC_KINDS][3] = {{&p2, &p2, &p2},   {&p2, &pr, &p2},    {&inf, &inf, &inf},      \
                                               {&pr, &pj, &np2},  {&p2, &p2, &p2},    {&pj, &inf, &inf},      \
                                               {&pj, &pr, &p2},   {&inf, &np, &inf}};                         \
            CHECK(tu_ec_kinds(BN, G2, in, got) == 0, "%s: device point arithmetic: %s", grp, tu_ec_error());  \
            for (int t = 0; t < TU_EC_THREADS; t++)                                                          \
                for (int o = 0; o < 3; o++)                                                                  \
                    CHECK(EQ(&got[3 * t + o], want[t % TU_EC_KINDS][o]),                                     \
                          "%s trial %d: thread %d (kind %d): the %s differs from the CPU", grp, trial, t,     \
                          t % TU_EC_KINDS, o == 0 ? "addition" : o == 1 ? "mixed addition" : "doubling");     \
        }                                                                                                    \
        printf("%s: %d kinds x %d threads x %d random point pairs ok\n", grp, TU_EC_KINDS,                   \
               TU_EC_THREADS / TU_EC_KINDS, TRIALS);                                                         \
    }
DEF_GROUP(bls_g1, 0, 0, czk_g1_aff, czk_g1, czk_fr, tu_rand_fr, CZK_G1_GEN, czk_g1_mul_aff, czk_g1_to_aff, czk_g1_add,
          czk_g1_dbl, czk_g1_neg, czk_g1_set_inf, czk_g1_eq)
DEF_GROUP(bls_g2, 0, 1, czk_g2_aff, czk_g2, czk_fr, tu_rand_fr, CZK_G2_GEN, czk_g2_mul_aff, czk_g2_to_aff, czk_g2_add,
          czk_g2_dbl, czk_g2_neg, czk_g2_set_inf, czk_g2_eq)
DEF_GROUP(bls_g2p, 0, 2, czk_g2_aff, czk_g2, czk_fr, tu_rand_fr, CZK_G2_GEN, czk_g2_mul_aff, czk_g2_to_aff, czk_g2_add,
          czk_g2_dbl, czk_g2_neg, czk_g2_set_inf, czk_g2_eq)
DEF_GROUP(bn_g1, 1, 0, czk_bn254_g1_aff, czk_bn254_g1, czk_bn254_fr, tu_rand_bn_fr, CZK_BN254_G1_GEN,
          czk_bn254_g1_mul_aff, czk_bn254_g1_to_aff, czk_bn254_g1_add, czk_bn254_g1_dbl, czk_bn254_g1_neg,
          czk_bn254_g1_set_inf, czk_bn254_g1_eq)
DEF_GROUP(bn_g2, 1, 1, czk_bn254_g2_aff, czk_bn254_g2, czk_bn254_fr, tu_rand_bn_fr, CZK_BN254_G2_GEN,
          czk_bn254_g2_mul_aff, czk_bn254_g2_to_aff, czk_bn254_g2_add, czk_bn254_g2_dbl, czk_bn254_g2_neg,
          czk_bn254_g2_set_inf, czk_bn254_g2_eq)
DEF_GROUP(bn_g2p, 1, 2, czk_bn254_g2_aff, czk_bn254_g2, czk_bn254_fr, tu_rand_bn_fr, CZK_BN254_G2_GEN,
          czk_bn254_g2_mul_aff, czk_bn254_g2_to_aff, czk_bn254_g2_add, czk_bn254_g2_dbl, czk_bn254_g2_neg,
          czk_bn254_g2_set_inf, czk_bn254_g2_eq)

int main(void)
{
    tu_seed();
    int n = 0;
    if (czk_cuda_device_count(&n) != 0 || n == 0) {
        printf("no cuda device (%s): skipping\n", czk_cuda_last_error());
        return 77;
    }
    bls_g1("bls12-381 g1");
    bls_g2("bls12-381 g2");
    bls_g2p("bls12-381 g2 (lane pairs)");
    bn_g1("bn254 g1");
    bn_g2("bn254 g2");
    bn_g2p("bn254 g2 (lane pairs)");
    return 0;
}
