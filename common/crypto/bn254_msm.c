/*
 * bn254_msm.c — Pippenger MSMs on BN254's G1 (over Fp) and G2 (over Fp2),
 * bn254_msm.h: the plan of msm_plan_impl.h and the bucket code of
 * msm_tmpl.h, the same as BLS12-381's msm.c, instantiated over BN254's
 * 4-limb fields.  Differences from msm.c: no GLV endomorphism (BN254's
 * eigenvalues are not 128-bit numbers, so the one-division split msm.c uses
 * does not apply: every scalar keeps its 254 bits) and no AVX-512 IFMA flush
 * (fpx8.h is BLS12-381's 8 x 52-bit radix; BN254 would need a 5-limb one),
 * so the scalar batch-affine flush and running sums always run.
 *
 * Threads write only their own buckets, their own task results and their own
 * slices of the plan arrays; czk_par_for's join publishes them.
 */
#include "common/crypto/bn254_msm.h"

#include "common/crypto/bn254_field_impl.h"

#define MSM_SCALAR czk_bn254_fr
#include "common/crypto/msm_plan_impl.h"

/* ---- G1 ---- */

#define SUF bn254_g1
#define FE czk_bn254_fp
#define FE_ADD czk_bn254_fp_add_i
#define FE_SUB czk_bn254_fp_sub_i
#define FE_DBL czk_bn254_fp_dbl_i
#define FE_NEG czk_bn254_fp_neg_i
#define FE_MUL czk_bn254_fp_mul_i
#define FE_SQR czk_bn254_fp_sqr_i
#define FE_IS_ZERO czk_bn254_fp_is_zero_i
#define FE_EQ czk_bn254_fp_eq_i
#define FE_INV czk_bn254_fp_inv
#define FE_COST_BATCH 0.62, 30.0, MSM_KIB(512)
#define FE_ONE CZK_BN254_FP_ONE
#define AFF czk_bn254_g1_aff
#define JAC czk_bn254_g1
#define JAC_SET_INF czk_bn254_g1_set_inf
#include "common/crypto/msm_tmpl.h"

/* ---- G2 ---- */

#define SUF bn254_g2
#define FE czk_bn254_fp2
#define FE_ADD czk_bn254_fp2_add_i
#define FE_SUB czk_bn254_fp2_sub_i
#define FE_DBL czk_bn254_fp2_dbl_i
#define FE_NEG czk_bn254_fp2_neg_i
#define FE_MUL czk_bn254_fp2_mul_i
#define FE_SQR czk_bn254_fp2_sqr_i
#define FE_IS_ZERO czk_bn254_fp2_is_zero_i
#define FE_EQ czk_bn254_fp2_eq_i
#define FE_INV czk_bn254_fp2_inv
#define FE_COST_BATCH 0.62, 10.0, MSM_KIB(512)
#define FE_ONE CZK_BN254_FP2_ONE
#define AFF czk_bn254_g2_aff
#define JAC czk_bn254_g2
#define JAC_SET_INF czk_bn254_g2_set_inf
#include "common/crypto/msm_tmpl.h"

int czk_bn254_msm_g1(czk_bn254_g1 *r, const czk_bn254_g1_aff *bases, const czk_bn254_fr *scalars, size_t n,
                     int nthreads)
{
    if (!r || (n && (!bases || !scalars)))
        return -EINVAL;
    return msm_run_bn254_g1(r, bases, scalars, n, nthreads);
}

int czk_bn254_msm_g2(czk_bn254_g2 *r, const czk_bn254_g2_aff *bases, const czk_bn254_fr *scalars, size_t n,
                     int nthreads)
{
    if (!r || (n && (!bases || !scalars)))
        return -EINVAL;
    return msm_run_bn254_g2(r, bases, scalars, n, nthreads);
}
