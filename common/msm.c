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
 *   2. Cut each general scalar into `windows` signed digits of c bits
 *      (d in [-2^(c-1), 2^(c-1)], carry to the next window); with
 *      windows * c >= 256 the top window never carries out of a 255-bit value.
 *   3. Pippenger: a task is (window, part of the general list); each thread
 *      owns one bucket array of 2^(c-1) XYZZ points, adds +-P into bucket |d|
 *      with mixed additions, then reduces with a running sum.  c and the
 *      number of parts are chosen from a cost model so that the tasks spread
 *      evenly over the threads.
 *   4. Horner over the windows, plus the ones sum and 2^255 * hi sum.
 * The curve arithmetic lives in msm_tmpl.h, instantiated for G1 and G2.
 *
 * Threads write only their own buckets, their own task results and their own
 * slices of the plan arrays; czk_par_for's join publishes them.
 */
#include "common/msm.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/field_impl.h"
#include "common/field_fast.h"
#include "common/log.h"
#include "common/par.h"

#define MSM_MAX_C 15          /* digits must fit int16_t: |d| <= 2^14 */
#define MSM_MIN_C 2
#define MSM_SERIAL_BELOW 512  /* fewer general terms than this: one thread */
#define MSM_BATCH_MIN 4096    /* batch-affine accumulation from this many general terms */
#define MSM_MAX_GROUP 4       /* windows sharing one batch of inversions (bucket arrays stay in L2) */

enum { CL_SKIP = 0, CL_ONE = 1, CL_GEN = 2, CL_GEN_HI = 3 };

struct msm_plan {
    size_t n, m;              /* terms, general terms */
    unsigned c, windows, parts, threads;
    unsigned groups, group;   /* windows are processed in groups of at most `group` */
    bool batch;               /* batch-affine buckets (else XYZZ buckets) */
    size_t batch_cap;         /* pending additions per inversion (batch mode) */
    uint32_t *idx;            /* m: base index of each general term */
    int16_t *dig;             /* windows * m, window-major */
    uint32_t *ones;           /* bases with scalar 1 */
    size_t n_ones;
    uint32_t *hi;             /* bases whose scalar has bit 255 set */
    size_t n_hi;
    uint8_t *cls;             /* n: class of each term */
    size_t *slot_cnt;         /* threads * 3: general, ones, hi per slot */
};

typedef bool (*msm_is_inf_fn)(const void *bases, size_t i);

struct plan_ctx {
    struct msm_plan *pl;
    const void *bases;
    msm_is_inf_fn is_inf;
    const czk_fr *sc;
};

static inline bool fr_is_zero_raw(const czk_fr *k)
{
    return (k->l[0] | k->l[1] | k->l[2] | k->l[3]) == 0;
}

static inline bool fr_is_one_raw(const czk_fr *k)
{
    return k->l[0] == 1 && (k->l[1] | k->l[2] | k->l[3]) == 0;
}

static void plan_classify(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct plan_ctx *c = arg;
    struct msm_plan *pl = c->pl;
    size_t s, i;

    for (s = begin; s < end; s++) {
        size_t lo = pl->n * s / pl->threads, hi = pl->n * (s + 1) / pl->threads;
        size_t cg = 0, co = 0, ch = 0;
        for (i = lo; i < hi; i++) {
            const czk_fr *k = &c->sc[i];
            uint8_t cl;
            if (fr_is_zero_raw(k) || c->is_inf(c->bases, i))
                cl = CL_SKIP;
            else if (fr_is_one_raw(k))
                cl = CL_ONE;
            else if (k->l[3] >> 63)
                cl = CL_GEN_HI;
            else
                cl = CL_GEN;
            pl->cls[i] = cl;
            cg += cl >= CL_GEN;
            co += cl == CL_ONE;
            ch += cl == CL_GEN_HI;
        }
        pl->slot_cnt[3 * s] = cg;
        pl->slot_cnt[3 * s + 1] = co;
        pl->slot_cnt[3 * s + 2] = ch;
    }
}

/* signed c-bit digits of the low 255 bits of k */
static inline void scalar_digits(int16_t *out, size_t stride, const czk_fr *k, unsigned c, unsigned windows)
{
    uint64_t l[5] = {k->l[0], k->l[1], k->l[2], k->l[3] & ~((uint64_t)1 << 63), 0};
    const uint64_t mask = ((uint64_t)1 << c) - 1, half = (uint64_t)1 << (c - 1);
    uint64_t carry = 0;
    unsigned w;

    for (w = 0; w < windows; w++) {
        unsigned pos = w * c, li = pos / 64, off = pos % 64;
        uint64_t v = l[li] >> off;
        int64_t d;
        if (off + c > 64)
            v |= l[li + 1] << (64 - off);
        v = (v & mask) + carry;
        if (v > half) {
            d = (int64_t)v - (int64_t)((uint64_t)1 << c);
            carry = 1;
        } else {
            d = (int64_t)v;
            carry = 0;
        }
        out[(size_t)w * stride] = (int16_t)d;
    }
}

static void plan_fill(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct plan_ctx *c = arg;
    struct msm_plan *pl = c->pl;
    size_t s, i, t;

    for (s = begin; s < end; s++) {
        size_t lo = pl->n * s / pl->threads, hi = pl->n * (s + 1) / pl->threads;
        size_t og = 0, oo = 0, oh = 0;
        for (t = 0; t < s; t++) {
            og += pl->slot_cnt[3 * t];
            oo += pl->slot_cnt[3 * t + 1];
            oh += pl->slot_cnt[3 * t + 2];
        }
        for (i = lo; i < hi; i++) {
            switch (pl->cls[i]) {
            case CL_ONE:
                pl->ones[oo++] = (uint32_t)i;
                break;
            case CL_GEN_HI:
                pl->hi[oh++] = (uint32_t)i;
                /* the low 255 bits are a general term too */
                __attribute__((fallthrough));
            case CL_GEN:
                pl->idx[og] = (uint32_t)i;
                scalar_digits(pl->dig + og, pl->m, &c->sc[i], pl->c, pl->windows);
                og++;
                break;
            default:
                break;
            }
        }
    }
}

/* pending additions per window per inversion: few enough that a bucket
 * is rarely hit twice in one batch (about pw / (2 nb) of the additions) */
static size_t per_window_pending(size_t nb)
{
    size_t pw = nb / 16;
    return pw < 16 ? 16 : pw > 256 ? 256 : pw;
}

/*
 * Choose the window width c, the split of the general list into parts and
 * the grouping of windows into tasks, minimising the modelled wall time:
 * rounds of tasks over the threads, each task costing, per window, one
 * bucket addition per term (batch-affine: cost_batch plus a share of one
 * inversion, cost_inv, and a full mixed addition for conflicts) and a
 * running-sum reduction of about 2.4 mixed additions per bucket.
 */
static void plan_shape(struct msm_plan *pl, double cost_batch, double cost_inv)
{
    double best = -1;
    unsigned c, parts, groups;

    pl->batch = pl->m >= MSM_BATCH_MIN;
    pl->c = MSM_MIN_C;
    pl->windows = (256 + MSM_MIN_C - 1) / MSM_MIN_C;
    pl->parts = 1;
    pl->groups = pl->windows;
    for (c = MSM_MIN_C; c <= MSM_MAX_C; c++) {
        unsigned windows = (256 + c - 1) / c;
        size_t nb = (size_t)1 << (c - 1);
        for (parts = 1; parts <= 4 * pl->threads; parts *= 2) {
            double per_part = (double)pl->m / parts;
            if (parts > 1 && per_part < 64)
                break;
            for (groups = (windows + MSM_MAX_GROUP - 1) / MSM_MAX_GROUP; groups <= windows; groups++) {
                unsigned gsize = (windows + groups - 1) / groups;
                size_t tasks = (size_t)groups * parts;
                size_t rounds = (tasks + pl->threads - 1) / pl->threads;
                double add = 1.0, cost;
                if (pl->batch) {
                    double pw = (double)per_window_pending(nb);
                    double conflict = pw / (2.0 * (double)nb);
                    add = cost_batch * (1 - conflict) + conflict + cost_inv / (pw * gsize);
                }
                cost = (double)rounds * gsize * (per_part * add + 2.4 * (double)nb + 8);
                if (best < 0 || cost < best) {
                    best = cost;
                    pl->c = c;
                    pl->windows = windows;
                    pl->parts = parts;
                    pl->groups = groups;
                }
            }
        }
    }
    pl->group = (pl->windows + pl->groups - 1) / pl->groups;
    pl->batch_cap = pl->group * per_window_pending((size_t)1 << (pl->c - 1));
}

static void msm_plan_free(struct msm_plan *pl)
{
    free(pl->idx);
    free(pl->dig);
    free(pl->ones);
    free(pl->hi);
    free(pl->cls);
    free(pl->slot_cnt);
    memset(pl, 0, sizeof(*pl));
}

static int msm_plan_build(struct msm_plan *pl, const void *bases, msm_is_inf_fn is_inf,
                          const czk_fr *scalars, size_t n, int nthreads, double cost_batch,
                          double cost_inv)
{
    struct plan_ctx pc = {pl, bases, is_inf, scalars};
    size_t s;

    memset(pl, 0, sizeof(*pl));
    if (n > UINT32_MAX) {
        czk_err("msm of %zu points: more than 2^32 - 1 terms is not supported", n);
        return -E2BIG;
    }
    pl->n = n;
    pl->threads = (unsigned)czk_par_threads(nthreads);
    if (n < MSM_SERIAL_BELOW)
        pl->threads = 1;
    pl->cls = malloc(n ? n : 1);
    pl->slot_cnt = calloc(3 * (size_t)pl->threads, sizeof(size_t));
    if (!pl->cls || !pl->slot_cnt)
        goto nomem;
    czk_par_for(pl->threads, pl->threads, plan_classify, &pc);
    for (s = 0; s < pl->threads; s++) {
        pl->m += pl->slot_cnt[3 * s];
        pl->n_ones += pl->slot_cnt[3 * s + 1];
        pl->n_hi += pl->slot_cnt[3 * s + 2];
    }
    plan_shape(pl, cost_batch, cost_inv);
    pl->idx = malloc((pl->m ? pl->m : 1) * sizeof(uint32_t));
    pl->dig = malloc((pl->m ? pl->m : 1) * pl->windows * sizeof(int16_t));
    pl->ones = malloc((pl->n_ones ? pl->n_ones : 1) * sizeof(uint32_t));
    pl->hi = malloc((pl->n_hi ? pl->n_hi : 1) * sizeof(uint32_t));
    if (!pl->idx || !pl->dig || !pl->ones || !pl->hi)
        goto nomem;
    czk_par_for(pl->threads, pl->threads, plan_fill, &pc);
    czk_debug("msm plan: n=%zu general=%zu ones=%zu hi=%zu c=%u windows=%u groups=%u parts=%u "
              "threads=%u %s", n, pl->m, pl->n_ones, pl->n_hi, pl->c, pl->windows, pl->groups,
              pl->parts, pl->threads, pl->batch ? "batch-affine" : "xyzz");
    if (pl->m < MSM_SERIAL_BELOW)
        pl->threads = pl->n_ones + pl->n_hi >= MSM_SERIAL_BELOW ? pl->threads : 1;
    return 0;
nomem:
    czk_err("msm of %zu points: out of memory for the scalar plan", n);
    msm_plan_free(pl);
    return -ENOMEM;
}

/* ---- G1 ---- */
#define SUF g1
#define FE czk_fp
#define FE_ADD czk_fp_add_f
#define FE_SUB czk_fp_sub_f
#define FE_DBL czk_fp_dbl_f
#define FE_NEG czk_fp_neg_f
#define FE_MUL czk_fp_mul
#define FE_SQR czk_fp_sqr
#define FE_IS_ZERO czk_fp_is_zero_i
#define FE_EQ czk_fp_eq_i
#define FE_INV czk_fp_inv
#define FE_COST_BATCH 0.62, 95.0
#define FE_ONE CZK_FP_ONE
#define AFF czk_g1_aff
#define JAC czk_g1
#define JAC_SET_INF czk_g1_set_inf
#include "common/msm_tmpl.h"
#undef SUF
#undef FE
#undef FE_ADD
#undef FE_SUB
#undef FE_DBL
#undef FE_NEG
#undef FE_MUL
#undef FE_SQR
#undef FE_IS_ZERO
#undef FE_EQ
#undef FE_INV
#undef FE_COST_BATCH
#undef FE_ONE
#undef AFF
#undef JAC
#undef JAC_SET_INF

/* ---- G2 ---- */
#define SUF g2
#define FE czk_fp2
#define FE_ADD czk_fp2_add_f
#define FE_SUB czk_fp2_sub_f
#define FE_DBL czk_fp2_dbl_f
#define FE_NEG czk_fp2_neg_f
#define FE_MUL czk_fp2_mul_f
#define FE_SQR czk_fp2_sqr_f
#define FE_IS_ZERO czk_fp2_is_zero_i
#define FE_EQ czk_fp2_eq_i
#define FE_INV czk_fp2_inv
#define FE_COST_BATCH 0.62, 33.0
#define FE_ONE CZK_FP2_ONE
#define AFF czk_g2_aff
#define JAC czk_g2
#define JAC_SET_INF czk_g2_set_inf
#include "common/msm_tmpl.h"

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
