/*
 * bn254_msm.c — Pippenger MSMs on BN254's G1 (over Fp) and G2 (over Fp2),
 * bn254_msm.h: the plan of msm_plan_impl.h and the bucket code of
 * msm_tmpl.h, the same as BLS12-381's msm.c, instantiated over BN254's
 * 4-limb fields.  Differences from msm.c:
 *   - GLV on G1 uses the lattice split (MSM_GLV_LATTICE): BN254's
 *     eigenvalue lambda is a 192-bit number, so the halves come from a
 *     short basis of {(a, b): a + b lambda = 0 mod r} and may be negative;
 *     G2 uses psi (the p-power Frobenius through the twist), which acts as
 *     [p mod r], a 127-bit number, with the same lattice split (one basis
 *     per group);
 *   - the AVX-512 IFMA path (czk_fpx8_enabled(): the CPU has it and
 *     CZK_NO_IFMA is not set) uses BN254's 5 x 52-bit lanes
 *     (bn254_fpx8.h): the batch flush 8 additions at a time (msm_ifma.c)
 *     and the running sums in 8 lanes (msm_tmpl.h), the same points as
 *     the scalar path, as for BLS12-381.
 *
 * Threads write only their own buckets, their own task results and their own
 * slices of the plan arrays; czk_par_for's join publishes them.
 */
#include "common/crypto/bn254_msm.h"

#include <pthread.h>

#include "common/crypto/bn254_field_impl.h"
#include "common/crypto/bn254_fpx8.h"
#include "common/crypto/msm_ifma.h"

#define MSM_SCALAR czk_bn254_fr
#define MSM_GLV_LATTICE 1
#include "common/crypto/msm_plan_impl.h"

/* ---- G1 ---- */

/* GLV on BN254's G1: phi(x, y) = (beta x, y) = [lambda] (x, y) on every
 * point (cofactor 1), beta a cube root of unity in Fp, lambda =
 * 0xb3c4d79d41a917585bfc41088d8daaa78b17ea66b99c90dd (lambda^2 + lambda + 1
 * = 0 mod r).  The basis (a1, b1) = (0x89d3256894d213e3,
 * -0x6f4d8248eeb859fc8211bbeb7d4f1128), (a2, b2) =
 * (0x6f4d8248eeb859fd0be4e1541221250b, 0x89d3256894d213e3) comes from the
 * extended Euclidean algorithm on (r, lambda); a1 b2 - a2 b1 = r. */
static const struct glv_params bn_glv = {
    {0xd91d232ec7e0b3d7ULL, 0x0000000000000002ULL, 0x0000000000000000ULL},
    {0x7a7bd9d4391eb18dULL, 0x4ccef014a773d2cfULL, 0x0000000000000002ULL},
    {0x89d3256894d213e3ULL, 0, 0, 0},
    {0x7dee441482b0eed8ULL, 0x90b27db71147a603ULL, 0xffffffffffffffffULL, 0xffffffffffffffffULL},
    {0x0be4e1541221250bULL, 0x6f4d8248eeb859fdULL, 0, 0},
    {0x89d3256894d213e3ULL, 0, 0, 0},
};
static const czk_bn254_fr bn_glv_lambda = {
    {0x8b17ea66b99c90ddULL, 0x5bfc41088d8daaa7ULL, 0xb3c4d79d41a91758ULL, 0}};
/* beta = 0x59e26bcea0d48bacd4f263f1acdb5c4f5763473177fffffe, Montgomery form */
static const czk_bn254_fp bn_glv_beta = {
    {0x71930c11d782e155ULL, 0xa6bb947cffbe3323ULL, 0xaa303344d4741444ULL, 0x2c3b3f0d26594943ULL}};
static bool bn_glv_ok;
static pthread_once_t bn_glv_once = PTHREAD_ONCE_INIT;

/* the constants are checked once against the curve's own scalar
 * multiplication on the generator; on a mismatch the MSM runs without GLV */
static void bn_glv_init(void)
{
    czk_bn254_g1 want;
    czk_bn254_g1_aff want_aff, got;

    czk_bn254_g1_mul_aff(&want, &CZK_BN254_G1_GEN, &bn_glv_lambda);
    czk_bn254_g1_to_aff(&want_aff, &want);
    czk_bn254_fp_mul(&got.x, &CZK_BN254_G1_GEN.x, &bn_glv_beta);
    got.y = CZK_BN254_G1_GEN.y;
    if (czk_bn254_g1_aff_eq(&got, &want_aff))
        bn_glv_ok = true;
    else
        czk_warn("bn254 msm: (beta x, y) is not lambda (x, y) on G1; the endomorphism is disabled");
}

static const struct glv_params *bn_glv_ready(void)
{
    pthread_once(&bn_glv_once, bn_glv_init);
    return bn_glv_ok ? &bn_glv : NULL;
}

static inline void bn_glv_apply(czk_bn254_g1_aff *r, const czk_bn254_g1_aff *p)
{
    czk_bn254_fp_mul_i(&r->x, &p->x, &bn_glv_beta);
    r->y = p->y;
}

#define HAVE_ENDO 1
#define ENDO_READY bn_glv_ready
#define ENDO_APPLY bn_glv_apply

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
#define FE_COST_BATCH_X8 0.62, 30.0, MSM_KIB(512)
#define FE_FLUSH_X8 czk_msm_ifma_flush_bn254_g1
#define FE_FLUSH_X8_BYTES czk_msm_ifma_scratch_bytes_bn254_g1
#ifdef CZK_HAVE_FPX8
#define VX czk_bn254_fpx8
#define VX_MUL czk_bn254_fpx8_mul_ool
#define VX_SQR czk_bn254_fpx8_sqr_ool
#define VX_ADD czk_bn254_fpx8_add
#define VX_SUB czk_bn254_fpx8_sub
#define VX_BLEND czk_bn254_fpx8_blend
#define VX_SET1 czk_bn254_fpx8_set1
#define VX_GATHER czk_bn254_fpx8_gather_p
#define VX_STORE czk_bn254_fpx8_store
#define VX_LOAD czk_bn254_fpx8_load
#define VX_IS_ZERO czk_bn254_fpx8_is_zero
#endif
#define FE_ONE CZK_BN254_FP_ONE
#define AFF czk_bn254_g1_aff
#define JAC czk_bn254_g1
#define JAC_SET_INF czk_bn254_g1_set_inf
#include "common/crypto/msm_tmpl.h"

/* ---- G2 ---- */

/* GLV on BN254's G2: psi(x, y) = (conj(x) gx, conj(y) gy), gx =
 * xi^((p-1)/3), gy = xi^((p-1)/2), xi = 9 + u, acts as [d] on the
 * order-r subgroup, d = p mod r = 0x6f4d8248eeb859fbf83e9682e87cfd46.
 * Basis (a1, b1) = (d, -1), (a2, b2) = (0x19d797039be763ba7,
 * 0x6f4d8248eeb859fd95b806bca6f338ef), a1 b2 - a2 b1 = r. */
static const struct glv_params bn_glv2 = {
    {0x2cb62031c8e01941ULL, 0x4ccef014a773d2d5ULL, 0x0000000000000002ULL},
    {0x0000000000000005ULL, 0, 0},
    {0xf83e9682e87cfd46ULL, 0x6f4d8248eeb859fbULL, 0, 0},
    {0xffffffffffffffffULL, 0xffffffffffffffffULL, 0xffffffffffffffffULL, 0xffffffffffffffffULL},
    {0x9d797039be763ba7ULL, 0x0000000000000001ULL, 0, 0},
    {0x95b806bca6f338efULL, 0x6f4d8248eeb859fdULL, 0, 0},
};
static const czk_bn254_fr bn_glv2_d = {{0xf83e9682e87cfd46ULL, 0x6f4d8248eeb859fbULL, 0, 0}};
/* gx, gy in Montgomery form */
static const czk_bn254_fp2 bn_psi_x = {
    {{0xb5773b104563ab30ULL, 0x347f91c8a9aa6454ULL, 0x7a007127242e0991ULL, 0x1956bcd8118214ecULL}},
    {{0x6e849f1ea0aa4757ULL, 0xaa1c7b6d89f89141ULL, 0xb6e713cdfae0ca3aULL, 0x26694fbb4e82ebc3ULL}}};
static const czk_bn254_fp2 bn_psi_y = {
    {{0xe4bbdd0c2936b629ULL, 0xbb30f162e133bacbULL, 0x31a9d1b6f9645366ULL, 0x253570bea500f8ddULL}},
    {{0xa1d77ce45ffe77c7ULL, 0x07affd117826d1dbULL, 0x6d16bd27bb7edc6bULL, 0x2c87200285defeccULL}}};
static bool bn_glv2_ok;
static pthread_once_t bn_glv2_once = PTHREAD_ONCE_INIT;

static inline void bn_psi_apply(czk_bn254_g2_aff *r, const czk_bn254_g2_aff *p)
{
    czk_bn254_fp2 t;

    t.c0 = p->x.c0;
    czk_bn254_fp_neg_i(&t.c1, &p->x.c1);
    czk_bn254_fp2_mul_i(&r->x, &t, &bn_psi_x);
    t.c0 = p->y.c0;
    czk_bn254_fp_neg_i(&t.c1, &p->y.c1);
    czk_bn254_fp2_mul_i(&r->y, &t, &bn_psi_y);
}

/* checked once, like G1's, against the curve's scalar multiplication */
static void bn_glv2_init(void)
{
    czk_bn254_g2 want;
    czk_bn254_g2_aff want_aff, got;

    czk_bn254_g2_mul_aff(&want, &CZK_BN254_G2_GEN, &bn_glv2_d);
    czk_bn254_g2_to_aff(&want_aff, &want);
    bn_psi_apply(&got, &CZK_BN254_G2_GEN);
    if (czk_bn254_g2_aff_eq(&got, &want_aff))
        bn_glv2_ok = true;
    else
        czk_warn("bn254 msm: psi is not [p mod r] on G2; the endomorphism is disabled");
}

static const struct glv_params *bn_glv2_ready(void)
{
    pthread_once(&bn_glv2_once, bn_glv2_init);
    return bn_glv2_ok ? &bn_glv2 : NULL;
}

#define HAVE_ENDO 1
#define ENDO_READY bn_glv2_ready
#define ENDO_APPLY bn_psi_apply

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
#define FE_COST_BATCH_X8 0.62, 10.0, MSM_KIB(1024)
#define FE_FLUSH_X8 czk_msm_ifma_flush_bn254_g2
#define FE_FLUSH_X8_BYTES czk_msm_ifma_scratch_bytes_bn254_g2
#ifdef CZK_HAVE_FPX8
#define VX czk_bn254_fp2x8
#define VX_MUL czk_bn254_fp2x8_mul_ool
#define VX_SQR czk_bn254_fp2x8_sqr_ool
#define VX_ADD czk_bn254_fp2x8_add
#define VX_SUB czk_bn254_fp2x8_sub
#define VX_BLEND czk_bn254_fp2x8_blend
#define VX_SET1 czk_bn254_fp2x8_set1
#define VX_GATHER czk_bn254_fp2x8_gather_p
#define VX_STORE czk_bn254_fp2x8_store
#define VX_LOAD czk_bn254_fp2x8_load
#define VX_IS_ZERO czk_bn254_fp2x8_is_zero
#endif
#define FE_ONE CZK_BN254_FP2_ONE
#define AFF czk_bn254_g2_aff
#define JAC czk_bn254_g2
#define JAC_SET_INF czk_bn254_g2_set_inf
#include "common/crypto/msm_tmpl.h"

int czk_bn254_g1_endo(czk_bn254_g1_aff *r, const czk_bn254_g1_aff *p)
{
    if (!r || !p)
        return -EINVAL;
    if (!bn_glv_ready())
        return -ENOTSUP;
    bn_glv_apply(r, p);
    return 0;
}

int czk_bn254_g2_endo(czk_bn254_g2_aff *r, const czk_bn254_g2_aff *p)
{
    if (!r || !p)
        return -EINVAL;
    if (!bn_glv2_ready())
        return -ENOTSUP;
    bn_psi_apply(r, p);
    return 0;
}

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
