/*
 * msm.c — multi-scalar multiplication sum_i k_i * P_i on G1 and G2 (msm.h).
 *
 * Plan (shared by both groups, built here):
 *   1. Classify every term in parallel: infinity base or zero scalar -> skip;
 *      scalar 1 -> the "ones" list (a plain sum of bases, the common case for
 *      circom witnesses made of bits); anything else -> the general list.
 *      A scalar with bit 255 set (only possible for values >= r) keeps its low
 *      255 bits in the general list and also goes to the "hi" list, whose sum
 *      is multiplied by 2^255 at the end, so every value < 2^256 acts as the
 *      integer it is.
 *   2. GLV: split each general scalar s < 2^255 as s1 + d s2 with s1, s2 <
 *      2^128, where an endomorphism phi acts as [d] (G1: (beta x, y), d =
 *      z^2 - 1; G2: psi^2, d = z^2); the general list then has 2m terms (P
 *      with s1, phi(P) with s2) of 128 bits, so half the windows and half the
 *      bucket reductions.  This needs the bases in the order-r subgroups, as
 *      every zkey point is.
 *   3. Cut each (half-)scalar into `windows` signed digits of c bits
 *      (d in [-2^(c-1), 2^(c-1)], carry to the next window); with
 *      windows * c >= bits + 1 the top window never carries out.
 *   4. Pippenger: a task is (group of windows, part of the general list).
 *      Large MSMs use batch-affine buckets: additions into affine buckets
 *      are queued and done together with one inversion (Montgomery's trick,
 *      about 5M + 1S each instead of 8M + 2S for a mixed XYZZ addition); the
 *      windows of a group share the batch.  An addition whose bucket is
 *      already queued waits in a retry list for the next batch; one whose
 *      base is +-the bucket's point goes to a per-bucket XYZZ accumulator,
 *      so degenerate inputs stay correct.  Small MSMs use XYZZ buckets only.
 *      Each window is then reduced with a running sum.  c, the groups and
 *      the parts come from a cost model so that the tasks spread evenly
 *      over the threads.
 *   With AVX-512 IFMA (czk_fpx8_enabled(): the CPU has it and CZK_NO_IFMA
 *   is not set) the batch flush runs 8 additions at a time in radix 2^52
 *   lanes (msm_ifma.c) and the running sums run in 8 lanes, one eighth of
 *   the buckets each (msm_tmpl.h); the results are the same points.
 *   5. Horner over the windows, plus the ones sum and 2^255 * hi sum.
 * Long inputs run as several such MSMs (MSM_CHUNK_OF terms each), summed.
 * The big scratch arrays (digits, phi(P) copies, affine buckets) come from
 * msm_plan_impl.h's msm_alloc: huge pages, kept for the next MSM, as a
 * proof's five MSMs need about the same.
 * Steps 1-3 (the plan and the cost model) live in msm_plan_impl.h and the
 * curve arithmetic in msm_tmpl.h, instantiated here for G1 and G2 and by
 * bn254_msm.c for BN254; what is BLS12-381's own here is GLV (the
 * eigenvalues and endomorphisms below) and the IFMA flush.
 *
 * Threads write only their own buckets, their own task results and their own
 * slices of the plan arrays; czk_par_for's join publishes them.
 */
#include "common/crypto/msm.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto/field_impl.h"
#include "common/crypto/fpx8.h"
#include "common/base/log.h"
#include "common/crypto/msm_ifma.h"
#include "common/crypto/par.h"

#define MSM_SCALAR czk_fr
#include "common/crypto/msm_plan_impl.h"

/* GLV on BLS12-381 (msm_plan_impl.h):
 *   G1: phi(x, y) = (beta x, y) = [lambda], lambda = z^2 - 1 (z the BLS
 *       parameter; lambda^2 + lambda + 1 = 0 mod r).
 *   G2: psi^2(x, y) = (zeta x, +-y) = [z^2] (psi acts as [p] = [z] on G2),
 *       zeta a cube root of unity in Fp.
 * Which cube root (and sign) is the right one is checked once against
 * czk_g*_mul; if none matches, the endomorphism is not used. */
static const struct glv_params glv_g1 = {
    {0x00000000ffffffffULL, 0xac45a4010001a402ULL},
    {0x63f6e522f6cfee30ULL, 0x7c6becf1e01faaddULL, 0x1ULL},
};
static const struct glv_params glv_g2 = {
    {0x0000000100000000ULL, 0xac45a4010001a402ULL},
    {0x63f6e522f6cfee2eULL, 0x7c6becf1e01faaddULL, 0x1ULL},
};

/* ---- G1 ---- */

/* beta: the cube root of unity in Fp (Montgomery) with (beta x, y) = lambda (x, y);
 * which of the two roots it is gets checked against czk_g1_mul once */
static const czk_fp glv_beta_cand[2] = {
    {{0x30f1361b798a64e8ULL, 0xf3b8ddab7ece5a2aULL, 0x16a8ca3ac61577f7ULL, 0xc26a2ff874fd029bULL,
      0x3636b76660701c6eULL, 0x051ba4ab241b6160ULL}},
    {{0xcd03c9e48671f071ULL, 0x5dab22461fcda5d2ULL, 0x587042afd3851b95ULL, 0x8eb60ebe01bacb9eULL,
      0x03f97d6e83d050d2ULL, 0x18f0206554638741ULL}},
};
static czk_fp glv_beta;
static bool glv_ok;
static pthread_once_t glv_once = PTHREAD_ONCE_INIT;

static void glv_init(void)
{
    czk_fr lam = {{glv_g1.d[0], glv_g1.d[1], 0, 0}};
    czk_g1 want;
    czk_g1_aff want_aff, got;
    int i;

    czk_g1_mul_aff(&want, &CZK_G1_GEN, &lam);
    czk_g1_to_aff(&want_aff, &want);
    for (i = 0; i < 2; i++) {
        czk_fp_mul(&got.x, &CZK_G1_GEN.x, &glv_beta_cand[i]);
        got.y = CZK_G1_GEN.y;
        if (czk_g1_aff_eq(&got, &want_aff)) {
            glv_beta = glv_beta_cand[i];
            glv_ok = true;
            return;
        }
    }
    czk_warn("msm: no cube root of unity matches lambda on G1; the endomorphism is disabled");
}

static const struct glv_params *glv_ready(void)
{
    pthread_once(&glv_once, glv_init);
    return glv_ok ? &glv_g1 : NULL;
}

static inline void glv_apply(czk_g1_aff *r, const czk_g1_aff *p)
{
    czk_fp_mul(&r->x, &p->x, &glv_beta);
    r->y = p->y;
}

#define HAVE_ENDO 1
#define ENDO_READY glv_ready
#define ENDO_APPLY glv_apply
#define SUF g1
#define FE czk_fp
#define FE_ADD czk_fp_add_i
#define FE_SUB czk_fp_sub_i
#define FE_DBL czk_fp_dbl_i
#define FE_NEG czk_fp_neg_i
#define FE_MUL czk_fp_mul
#define FE_SQR czk_fp_sqr
#define FE_IS_ZERO czk_fp_is_zero_i
#define FE_EQ czk_fp_eq_i
#define FE_INV czk_fp_inv
#define FE_COST_BATCH 0.62, 30.0, MSM_KIB(512)
#define FE_COST_BATCH_X8 0.62, 30.0, MSM_KIB(512)
#define FE_FLUSH_X8 czk_msm_ifma_flush_g1
#ifdef CZK_HAVE_FPX8
#define VX czk_fpx8
#define VX_MUL czk_fpx8_mul_ool
#define VX_SQR czk_fpx8_sqr_ool
#define VX_ADD czk_fpx8_add
#define VX_SUB czk_fpx8_sub
#define VX_BLEND czk_fpx8_blend
#define VX_SET1 czk_fpx8_set1
#define VX_GATHER czk_fpx8_gather_p
#define VX_STORE czk_fpx8_store
#define VX_LOAD czk_fpx8_load
#define VX_IS_ZERO czk_fpx8_is_zero
#endif
#define FE_FLUSH_X8_BYTES czk_msm_ifma_scratch_bytes_g1
#define FE_ONE CZK_FP_ONE
#define AFF czk_g1_aff
#define JAC czk_g1
#define JAC_SET_INF czk_g1_set_inf
#include "common/crypto/msm_tmpl.h"

/* ---- G2 ---- */

static czk_fp g2_zeta;
static bool g2_neg_y, g2_endo_ok;
static pthread_once_t g2_endo_once = PTHREAD_ONCE_INIT;

static void g2_endo_init(void)
{
    czk_fr d = {{glv_g2.d[0], glv_g2.d[1], 0, 0}};
    czk_g2 want;
    czk_g2_aff want_aff, got;
    int i, neg;

    czk_g2_mul_aff(&want, &CZK_G2_GEN, &d);
    czk_g2_to_aff(&want_aff, &want);
    for (i = 0; i < 2; i++)
        for (neg = 0; neg < 2; neg++) {
            czk_fp2_mul_fp(&got.x, &CZK_G2_GEN.x, &glv_beta_cand[i]);
            if (neg)
                czk_fp2_neg(&got.y, &CZK_G2_GEN.y);
            else
                got.y = CZK_G2_GEN.y;
            if (czk_g2_aff_eq(&got, &want_aff)) {
                g2_zeta = glv_beta_cand[i];
                g2_neg_y = neg;
                g2_endo_ok = true;
                return;
            }
        }
    czk_warn("msm: no (zeta x, +-y) matches z^2 on G2; the endomorphism is disabled");
}

static const struct glv_params *g2_endo_ready(void)
{
    pthread_once(&g2_endo_once, g2_endo_init);
    return g2_endo_ok ? &glv_g2 : NULL;
}

static inline void g2_endo_apply(czk_g2_aff *r, const czk_g2_aff *p)
{
    czk_fp_mul(&r->x.c0, &p->x.c0, &g2_zeta);
    czk_fp_mul(&r->x.c1, &p->x.c1, &g2_zeta);
    if (g2_neg_y)
        czk_fp2_neg_i(&r->y, &p->y);
    else
        r->y = p->y;
}

#define HAVE_ENDO 1
#define ENDO_READY g2_endo_ready
#define ENDO_APPLY g2_endo_apply
#define SUF g2
#define FE czk_fp2
#define FE_ADD czk_fp2_add_i
#define FE_SUB czk_fp2_sub_i
#define FE_DBL czk_fp2_dbl_i
#define FE_NEG czk_fp2_neg_i
#define FE_MUL czk_fp2_mul
#define FE_SQR czk_fp2_sqr
#define FE_IS_ZERO czk_fp2_is_zero_i
#define FE_EQ czk_fp2_eq_i
#define FE_INV czk_fp2_inv
#define FE_COST_BATCH 0.62, 10.0, MSM_KIB(512)
#define FE_COST_BATCH_X8 0.62, 10.0, MSM_KIB(1024)
#define FE_FLUSH_X8 czk_msm_ifma_flush_g2
#ifdef CZK_HAVE_FPX8
#define VX czk_fp2x8
#define VX_MUL czk_fp2x8_mul_ool
#define VX_SQR czk_fp2x8_sqr_ool
#define VX_ADD czk_fp2x8_add
#define VX_SUB czk_fp2x8_sub
#define VX_BLEND czk_fp2x8_blend
#define VX_SET1 czk_fp2x8_set1
#define VX_GATHER czk_fp2x8_gather_p
#define VX_STORE czk_fp2x8_store
#define VX_LOAD czk_fp2x8_load
#define VX_IS_ZERO czk_fp2x8_is_zero
#endif
#define FE_FLUSH_X8_BYTES czk_msm_ifma_scratch_bytes_g2
#define FE_ONE CZK_FP2_ONE
#define AFF czk_g2_aff
#define JAC czk_g2
#define JAC_SET_INF czk_g2_set_inf
#include "common/crypto/msm_tmpl.h"

int czk_msm_g1(czk_g1 *r, const czk_g1_aff *bases, const czk_fr *scalars, size_t n, int nthreads)
{
    if (!r || (n && (!bases || !scalars)))
        return -EINVAL;
    return msm_run_g1(r, bases, scalars, n, nthreads);
}

int czk_msm_g2(czk_g2 *r, const czk_g2_aff *bases, const czk_fr *scalars, size_t n, int nthreads)
{
    if (!r || (n && (!bases || !scalars)))
        return -EINVAL;
    return msm_run_g2(r, bases, scalars, n, nthreads);
}
