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
 * The curve arithmetic lives in msm_tmpl.h, instantiated for G1 and G2.
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

#define MSM_MAX_C 15          /* digits must fit int16_t: |d| <= 2^14 */
#define MSM_MIN_C 2
#define MSM_SERIAL_BELOW 512  /* fewer general terms than this: one thread */
#define MSM_BATCH_MIN 4096    /* batch-affine accumulation from this many general terms */
#define MSM_MAX_GROUP 4       /* windows sharing one batch of inversions */
/* terms per Pippenger run, bounding the scratch memory (phi(P) copies,
 * digits, base pointers) to a few hundred MiB whatever n is; tests override
 * MSM_CHUNK to exercise the chunked path */
#ifndef MSM_CHUNK
#define MSM_CHUNK_OF(aff_size) (((size_t)256 << 20) / (aff_size))
#else
#define MSM_CHUNK_OF(aff_size) ((size_t)(MSM_CHUNK))
#endif
/* batch mode: one window's affine buckets at most this big (FE_COST_BATCH's
 * third value), so that the random bucket accesses mostly hit L2.
 * Measured: at 2^20 on G1, c = 13 (384 KiB of buckets) beats c = 15 by
 * ~15-25%; on G2 with the scalar field code c = 12 beats 13, with the IFMA
 * code c = 13 (768 KiB) beats 12 by 11% at 2^16 and 2^18. */
#define MSM_KIB(k) ((size_t)(k) << 10)

enum { CL_SKIP = 0, CL_ONE = 1, CL_GEN = 2, CL_GEN_HI = 3 };

struct msm_plan {
    size_t n, m;              /* terms, general terms */
    const struct glv_params *glv; /* endomorphism split (NULL: none): two 128-bit halves per term */
    size_t M;                 /* digit columns: m, or 2m with glv (column m + j is term j's phi half) */
    unsigned c, windows, parts, threads;
    unsigned groups, group;   /* windows are processed in groups of at most `group` */
    bool batch;               /* batch-affine buckets (else XYZZ buckets) */
    size_t batch_cap;         /* pending additions per inversion (batch mode) */
    uint32_t *idx;            /* m: base index of each general term */
    int16_t *dig;             /* M * windows, column-major: digit w of column i at
                               * i * windows + w (the recoding writes and the
                               * bucket loop reads a column's digits together) */
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

/* signed c-bit digits of k (4 limbs, below 2^255) */
static inline void scalar_digits(int16_t *out, size_t stride, const uint64_t k[4], unsigned c, unsigned windows)
{
    uint64_t l[5] = {k[0], k[1], k[2], k[3], 0};
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


/*
 * GLV: an endomorphism phi that acts as multiplication by a 128-bit d on the
 * group lets a scalar s < 2^255 become s1 + s2 d with s2 = floor(s / d) < 2^128
 * and s1 = s mod d < 2^128, so s P = s1 P + s2 phi(P): twice the terms, half
 * the windows, half the bucket reductions.
 *   G1: phi(x, y) = (beta x, y) = [lambda], lambda = z^2 - 1 (z the BLS
 *       parameter; lambda^2 + lambda + 1 = 0 mod r).
 *   G2: psi^2(x, y) = (zeta x, +-y) = [z^2] (psi acts as [p] = [z] on G2),
 *       zeta a cube root of unity in Fp.
 * Which cube root (and sign) is the right one is checked once against
 * czk_g*_mul; if none matches, the endomorphism is not used.
 */
struct glv_params {
    uint64_t d[2];            /* the eigenvalue */
    uint64_t mu[3];           /* floor(2^256 / d), 129 bits */
};

static const struct glv_params glv_g1 = {
    {0x00000000ffffffffULL, 0xac45a4010001a402ULL},
    {0x63f6e522f6cfee30ULL, 0x7c6becf1e01faaddULL, 0x1ULL},
};
static const struct glv_params glv_g2 = {
    {0x0000000100000000ULL, 0xac45a4010001a402ULL},
    {0x63f6e522f6cfee2eULL, 0x7c6becf1e01faaddULL, 0x1ULL},
};

static void glv_split(uint64_t s1[4], uint64_t s2[4], const uint64_t s[4], const struct glv_params *gp)
{
    const uint64_t *mu = gp->mu, *dv = gp->d;
    typedef unsigned __int128 u128;
    uint64_t prod[7] = {0}, ql[2], t[4];
    int i, j;

    /* q = floor(s * mu / 2^256), at most 2 below floor(s / d) */
    for (i = 0; i < 4; i++) {
        uint64_t carry = 0;
        for (j = 0; j < 3; j++) {
            u128 p = (u128)s[i] * mu[j] + prod[i + j] + carry;
            prod[i + j] = (uint64_t)p;
            carry = (uint64_t)(p >> 64);
        }
        prod[i + 3] += carry;
    }
    ql[0] = prod[4];
    ql[1] = prod[5];
    /* t = q * d (q < 2^128, d < 2^128) */
    {
        u128 p00 = (u128)ql[0] * dv[0], p01 = (u128)ql[0] * dv[1];
        u128 p10 = (u128)ql[1] * dv[0], p11 = (u128)ql[1] * dv[1];
        u128 mid = (p00 >> 64) + (uint64_t)p01 + (uint64_t)p10;
        u128 hi = (p01 >> 64) + (p10 >> 64) + (uint64_t)p11 + (mid >> 64);
        t[0] = (uint64_t)p00;
        t[1] = (uint64_t)mid;
        t[2] = (uint64_t)hi;
        t[3] = (uint64_t)(p11 >> 64) + (uint64_t)(hi >> 64);
    }
    /* s1 = s - t, then fix q up while s1 >= d */
    {
        u128 d;
        uint64_t br = 0;
        for (i = 0; i < 4; i++) {
            d = (u128)s[i] - t[i] - br;
            s1[i] = (uint64_t)d;
            br = (uint64_t)(d >> 64) & 1;
        }
    }
    while (s1[3] || s1[2] || s1[1] > dv[1] || (s1[1] == dv[1] && s1[0] >= dv[0])) {
        u128 d = (u128)s1[0] - dv[0];
        uint64_t br = (uint64_t)(d >> 64) & 1;
        s1[0] = (uint64_t)d;
        d = (u128)s1[1] - dv[1] - br;
        br = (uint64_t)(d >> 64) & 1;
        s1[1] = (uint64_t)d;
        d = (u128)s1[2] - br;
        br = (uint64_t)(d >> 64) & 1;
        s1[2] = (uint64_t)d;
        s1[3] -= br;
        if (++ql[0] == 0)
            ql[1]++;
    }
    s2[0] = ql[0];
    s2[1] = ql[1];
    s2[2] = s2[3] = 0;
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
            case CL_GEN: {
                const czk_fr *k = &c->sc[i];
                uint64_t l[4] = {k->l[0], k->l[1], k->l[2], k->l[3] & ~((uint64_t)1 << 63)};
                pl->idx[og] = (uint32_t)i;
                if (pl->glv) {
                    uint64_t s1[4], s2[4];
                    glv_split(s1, s2, l, pl->glv);
                    scalar_digits(pl->dig + og * pl->windows, 1, s1, pl->c, pl->windows);
                    scalar_digits(pl->dig + (pl->m + og) * pl->windows, 1, s2, pl->c, pl->windows);
                } else {
                    scalar_digits(pl->dig + og * pl->windows, 1, l, pl->c, pl->windows);
                }
                og++;
                break;
            }
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

/* the most windows any thread processes when czk_par_for splits the
 * groups * parts tasks into contiguous chunks (task t: group t / parts;
 * group g holds windows [windows g / groups, windows (g + 1) / groups)) */
static size_t max_thread_windows(unsigned windows, unsigned groups, unsigned parts, unsigned threads)
{
    size_t tasks = (size_t)groups * parts, t = threads < tasks ? threads : tasks;
    size_t chunk = tasks / t, rem = tasks % t, pos = 0, best = 0, i, k;

    for (i = 0; i < t; i++) {
        size_t len = chunk + (i < rem ? 1 : 0), load = 0;
        for (k = pos; k < pos + len; k++) {
            size_t g = k / parts;
            load += (size_t)windows * (g + 1) / groups - (size_t)windows * g / groups;
        }
        pos += len;
        if (load > best)
            best = load;
    }
    return best;
}

/*
 * Choose the window width c, the split of the general list into parts and
 * the grouping of windows into tasks, minimising the modelled wall time:
 * the busiest thread's windows (max_thread_windows), each costing one
 * bucket addition per term (batch-affine: cost_batch plus a share of one
 * inversion, cost_inv, and a full mixed addition for conflicts) and a
 * running-sum reduction of about 2.4 mixed additions per bucket.
 */
static void plan_shape(struct msm_plan *pl, size_t aff_size, double cost_batch, double cost_inv,
                       size_t bucket_bytes)
{
    double best = -1;
    unsigned c, parts, groups;
    unsigned bits = pl->glv ? 129 : 256; /* signed digits need windows * c >= bits + 1 */

    pl->M = pl->glv ? 2 * pl->m : pl->m;
    pl->batch = pl->M >= MSM_BATCH_MIN;
    pl->c = MSM_MIN_C;
    pl->windows = (bits + MSM_MIN_C - 1) / MSM_MIN_C;
    pl->parts = 1;
    pl->groups = pl->windows;
    for (c = MSM_MIN_C; c <= MSM_MAX_C; c++) {
        unsigned windows = (bits + c - 1) / c;
        size_t nb = (size_t)1 << (c - 1);
        if (pl->batch && c > MSM_MIN_C && nb * aff_size > bucket_bytes)
            break;
        for (parts = 1; parts <= 4 * pl->threads; parts *= 2) {
            double per_part = (double)pl->M / parts;
            if (parts > 1 && per_part < 64)
                break;
            for (groups = (windows + MSM_MAX_GROUP - 1) / MSM_MAX_GROUP; groups <= windows; groups++) {
                double gsize = (double)windows / groups, add = 1.0, cost;
                size_t load = max_thread_windows(windows, groups, parts, pl->threads);
                if (pl->batch) {
                    double pw = (double)per_window_pending(nb);
                    double conflict = pw / (2.0 * (double)nb);
                    add = cost_batch * (1 - conflict) + conflict + cost_inv / (pw * gsize);
                }
                cost = (double)load * (per_part * add + 2.4 * (double)nb + 8);
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
                          const czk_fr *scalars, size_t n, int nthreads, const struct glv_params *glv,
                          size_t aff_size,
                          double cost_batch, double cost_inv, size_t bucket_bytes)
{
    struct plan_ctx pc = {pl, bases, is_inf, scalars};
    size_t s;

    memset(pl, 0, sizeof(*pl));
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
    pl->glv = pl->m > 0 ? glv : NULL;
    plan_shape(pl, aff_size, cost_batch, cost_inv, bucket_bytes);
    pl->idx = malloc((pl->m ? pl->m : 1) * sizeof(uint32_t));
    pl->dig = malloc((pl->M ? pl->M : 1) * pl->windows * sizeof(int16_t));
    pl->ones = malloc((pl->n_ones ? pl->n_ones : 1) * sizeof(uint32_t));
    pl->hi = malloc((pl->n_hi ? pl->n_hi : 1) * sizeof(uint32_t));
    if (!pl->idx || !pl->dig || !pl->ones || !pl->hi)
        goto nomem;
    czk_par_for(pl->threads, pl->threads, plan_fill, &pc);
    czk_debug("msm plan: n=%zu general=%zu%s ones=%zu hi=%zu c=%u windows=%u groups=%u parts=%u "
              "threads=%u %s", n, pl->m, pl->glv ? " (glv)" : "", pl->n_ones, pl->n_hi, pl->c, pl->windows, pl->groups,
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
#undef FE_COST_BATCH_X8
#undef FE_FLUSH_X8
#undef FE_FLUSH_X8_BYTES
#undef VX
#undef VX_MUL
#undef VX_SQR
#undef VX_ADD
#undef VX_SUB
#undef VX_BLEND
#undef VX_SET1
#undef VX_GATHER
#undef VX_STORE
#undef VX_LOAD
#undef VX_IS_ZERO
#undef FE_ONE
#undef AFF
#undef JAC
#undef JAC_SET_INF
#undef HAVE_ENDO
#undef ENDO_READY
#undef ENDO_APPLY

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
