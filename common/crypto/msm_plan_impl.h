/*
 * msm_plan_impl.h — the curve-independent half of the Pippenger MSM: the
 * scalar plan (classification of the terms, GLV split, signed-digit
 * recoding) and the choice of window width, window groups and parts from a
 * cost model.  Private, header-only, included by msm.c (BLS12-381) and
 * bn254_msm.c (BN254) before msm_tmpl.h; see msm.c for the whole plan.
 *
 * The including file defines MSM_SCALAR, the scalar type: four 64-bit limbs
 * .l[0..3], least significant first, STANDARD form (plain integers < 2^256),
 * and MSM_GLV_LATTICE when its endomorphism's eigenvalue is not a 128-bit
 * number (BN254): struct glv_params is then a lattice basis and the halves
 * of a scalar may be negative (see glv_split below).
 */
#ifndef CZK_MSM_PLAN_IMPL_H
#define CZK_MSM_PLAN_IMPL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/base/bigbuf.h"
#include "common/base/log.h"
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

/*
 * Scratch memory that an MSM writes in full (digits, base copies, affine
 * buckets).  They are czk_bigbuf blocks (from CZK_BIGBUF_MAP_MIN bytes on
 * their own mapping, 2 MiB aligned, with MADV_HUGEPAGE); mapped ones are
 * kept for the next MSM when freed:
 * a proof runs five MSMs of about the same shape, and fresh memory is
 * expensive (measured at 2^16 on BN254: the 4 KiB page faults of the MSM
 * scratch, which glibc hands back to the kernel between MSMs, were ~10% of
 * the proof; huge pages halve that cost, reuse removes it).  Kept blocks
 * are marked MADV_FREE, so under memory pressure the kernel takes their
 * pages back instead of swapping them (a kept block then comes back as
 * fresh zero pages); at most MSM_KEEP_BLOCKS blocks and MSM_KEEP_BYTES
 * bytes are kept, per including file (one cache for BLS12-381, one for
 * BN254).  Without transparent huge pages the mappings use 4 KiB pages.
 * msm_alloc returns 64-byte aligned memory with unspecified contents (not
 * zeroed), NULL when out of memory; msm_free(NULL) does nothing; both are
 * thread-safe.
 */
#define MSM_KEEP_BLOCKS 32
#define MSM_KEEP_BYTES ((size_t)512 << 20)

static struct {
    pthread_mutex_t mu;
    size_t n, bytes;
    struct { uint8_t *p; size_t len; } b[MSM_KEEP_BLOCKS];
} msm_keep = {PTHREAD_MUTEX_INITIALIZER, 0, 0, {{NULL, 0}}};

/* the smallest kept block of at least len bytes, taken out of the cache
 * (blocks are msm_alloc's: data pointer and data length) */
static uint8_t *msm_keep_take(size_t len, size_t *got)
{
    uint8_t *p = NULL;
    size_t i, best = MSM_KEEP_BLOCKS;

    pthread_mutex_lock(&msm_keep.mu);
    for (i = 0; i < msm_keep.n; i++)
        if (msm_keep.b[i].len >= len && (best == MSM_KEEP_BLOCKS || msm_keep.b[i].len < msm_keep.b[best].len))
            best = i;
    if (best < MSM_KEEP_BLOCKS) {
        p = msm_keep.b[best].p;
        *got = msm_keep.b[best].len;
        msm_keep.bytes -= *got;
        msm_keep.b[best] = msm_keep.b[--msm_keep.n];
    }
    pthread_mutex_unlock(&msm_keep.mu);
    return p;
}

/* keep a block (true) or refuse it when the cache is full (false) */
static bool msm_keep_put(uint8_t *p, size_t len)
{
    bool kept = false;

#ifdef MADV_FREE
    madvise(p, len, MADV_FREE);
#endif
    pthread_mutex_lock(&msm_keep.mu);
    if (msm_keep.n < MSM_KEEP_BLOCKS && len <= MSM_KEEP_BYTES - msm_keep.bytes) {
        msm_keep.b[msm_keep.n].p = p;
        msm_keep.b[msm_keep.n].len = len;
        msm_keep.n++;
        msm_keep.bytes += len;
        kept = true;
    }
    pthread_mutex_unlock(&msm_keep.mu);
    return kept;
}

static void *msm_alloc(size_t bytes)
{
    size_t len;
    uint8_t *p;

    if ((len = czk_bigbuf_map_len(bytes)) && (p = msm_keep_take(len, &len)))
        return p;
    return czk_bigbuf_alloc(bytes);
}

static void msm_free(void *p)
{
    size_t len;

    if (!p)
        return;
    len = czk_bigbuf_mapped(p);
    if (!len || !msm_keep_put(p, len))
        czk_bigbuf_free(p);
}

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
    const MSM_SCALAR *sc;
};

static inline bool fr_is_zero_raw(const MSM_SCALAR *k)
{
    return (k->l[0] | k->l[1] | k->l[2] | k->l[3]) == 0;
}

static inline bool fr_is_one_raw(const MSM_SCALAR *k)
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
            const MSM_SCALAR *k = &c->sc[i];
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

/* signed c-bit digits of k (4 limbs, below 2^255), negated when neg (the
 * digits of -k); branch-free, as the carries are random */
static inline void scalar_digits(int16_t *out, const uint64_t k[4], unsigned c, unsigned windows, bool neg)
{
    uint64_t l[5] = {k[0], k[1], k[2], k[3], 0};
    const uint64_t mask = ((uint64_t)1 << c) - 1, half = (uint64_t)1 << (c - 1);
    const int64_t sgn = -(int64_t)neg;
    uint64_t carry = 0;
    unsigned w;

    for (w = 0; w < windows; w++) {
        unsigned pos = w * c, li = pos / 64, off = pos % 64;
        uint64_t v = l[li] >> off;
        int64_t d;
        if (off + c > 64)
            v |= l[li + 1] << (64 - off);
        v = (v & mask) + carry;
        carry = v > half;
        d = (int64_t)v - (int64_t)(carry << c);
        out[w] = (int16_t)((d ^ sgn) - sgn);
    }
}

/*
 * GLV: an endomorphism phi that acts as multiplication by a 128-bit d on the
 * group lets a scalar s < 2^255 become s1 + s2 d with s2 = floor(s / d) < 2^128
 * and s1 = s mod d < 2^128, so s P = s1 P + s2 phi(P): twice the terms, half
 * the windows, half the bucket reductions.
 * BLS12-381 has such d on both groups (msm.c holds them and the
 * endomorphisms).  BN254's eigenvalue on G1 is a 192-bit number, so
 * bn254_msm.c uses the lattice split (MSM_GLV_LATTICE, after this one) on
 * both groups.
 */
#ifndef MSM_GLV_LATTICE
struct glv_params {
    uint64_t d[2];            /* the eigenvalue */
    uint64_t mu[3];           /* floor(2^256 / d), 129 bits */
};

static __attribute__((unused)) void glv_split(uint64_t s1[4], uint64_t s2[4], const uint64_t s[4],
                                              const struct glv_params *gp)
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
#else
/*
 * GLV with a lattice basis (Gallant-Lambert-Vanstone, section 4): for an
 * eigenvalue lambda of any size, v1 = (a1, b1) and v2 = (a2, b2) with
 * a + b lambda = 0 mod r and a1 b2 - a2 b1 = r, entries below 2^128.
 * Writing (s, 0) = x1 v1 + x2 v2 (x1 = s b2 / r, x2 = -s b1 / r) and
 * c = floor(x) (within 1.5 of x: g below is floored, s < 2^255):
 *   s1 = s - c1 a1 - c2 a2,  s2 = -c1 b1 - c2 b2,  s1 + s2 lambda = s mod r,
 * |s1| < 1.5 (|a1| + |a2|) and |s2| < 1.5 (|b1| + |b2|); with BN254's bases
 * (entries below 2^126.8 and 2^64.7) both are below 2^127.5, so the digits
 * of plan_shape's 129-bit case cover them.  s1 P + s2 phi(P) = s P needs
 * P of order r.  Products are taken mod 2^256 (two's complement: the true
 * values are small).
 */
struct glv_params {
    uint64_t g1[3], g2[3];    /* floor(b2 2^256 / r), floor(-b1 2^256 / r); b2 >= 0 >= b1 */
    uint64_t a1[4], b1[4], a2[4], b2[4]; /* the basis, two's complement mod 2^256 */
};

/* floor(s g / 2^256), s < 2^255, g < 2^192: three limbs */
static inline void glv_mulhi(uint64_t c[3], const uint64_t s[4], const uint64_t g[3])
{
    typedef unsigned __int128 u128;
    uint64_t prod[7] = {0};
    int i, j;

    for (i = 0; i < 4; i++) {
        uint64_t carry = 0;
        for (j = 0; j < 3; j++) {
            u128 p = (u128)s[i] * g[j] + prod[i + j] + carry;
            prod[i + j] = (uint64_t)p;
            carry = (uint64_t)(p >> 64);
        }
        prod[i + 3] = carry;
    }
    c[0] = prod[4];
    c[1] = prod[5];
    c[2] = prod[6];
}

/* acc -= c v mod 2^256 */
static inline void glv_submul(uint64_t acc[4], const uint64_t c[3], const uint64_t v[4])
{
    typedef unsigned __int128 u128;
    uint64_t t[4] = {0}, br = 0;
    int i, j;

    for (i = 0; i < 3; i++) {
        uint64_t carry = 0;
        for (j = 0; i + j < 4; j++) {
            u128 p = (u128)c[i] * v[j] + t[i + j] + carry;
            t[i + j] = (uint64_t)p;
            carry = (uint64_t)(p >> 64);
        }
    }
    for (i = 0; i < 4; i++) {
        u128 d = (u128)acc[i] - t[i] - br;
        acc[i] = (uint64_t)d;
        br = (uint64_t)(d >> 64) & 1;
    }
}

/* |x| of a two's complement value; returns whether it was negative */
static inline bool glv_abs(uint64_t x[4])
{
    uint64_t carry = 1;
    int i;

    if (!(x[3] >> 63))
        return false;
    for (i = 0; i < 4; i++) {
        x[i] = ~x[i] + carry;
        carry = carry && x[i] == 0;
    }
    return true;
}

/* s1, s2 = |the halves| < 2^128; bit 0 of the result: s1 negative, bit 1: s2 negative */
static unsigned glv_split(uint64_t s1[4], uint64_t s2[4], const uint64_t s[4], const struct glv_params *gp)
{
    uint64_t c1[3], c2[3];
    unsigned neg;

    glv_mulhi(c1, s, gp->g1);
    glv_mulhi(c2, s, gp->g2);
    memcpy(s1, s, 4 * sizeof(uint64_t));
    glv_submul(s1, c1, gp->a1);
    glv_submul(s1, c2, gp->a2);
    memset(s2, 0, 4 * sizeof(uint64_t));
    glv_submul(s2, c1, gp->b1);
    glv_submul(s2, c2, gp->b2);
    neg = glv_abs(s1);
    neg |= (unsigned)glv_abs(s2) << 1;
    return neg;
}

#endif

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
                const MSM_SCALAR *k = &c->sc[i];
                uint64_t l[4] = {k->l[0], k->l[1], k->l[2], k->l[3] & ~((uint64_t)1 << 63)};
                pl->idx[og] = (uint32_t)i;
                if (pl->glv) {
                    uint64_t s1[4], s2[4];
#ifndef MSM_GLV_LATTICE
                    const unsigned neg = 0;
                    glv_split(s1, s2, l, pl->glv);
#else
                    const unsigned neg = glv_split(s1, s2, l, pl->glv);
#endif
                    scalar_digits(pl->dig + og * pl->windows, s1, pl->c, pl->windows, neg & 1);
                    scalar_digits(pl->dig + (pl->m + og) * pl->windows, s2, pl->c, pl->windows, neg & 2);
                } else {
                    scalar_digits(pl->dig + og * pl->windows, l, pl->c, pl->windows, false);
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
    msm_free(pl->idx);
    msm_free(pl->dig);
    msm_free(pl->ones);
    msm_free(pl->hi);
    msm_free(pl->cls);
    free(pl->slot_cnt);
    memset(pl, 0, sizeof(*pl));
}

static int msm_plan_build(struct msm_plan *pl, const void *bases, msm_is_inf_fn is_inf,
                          const MSM_SCALAR *scalars, size_t n, int nthreads, const struct glv_params *glv,
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
    pl->cls = msm_alloc(n ? n : 1);
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
    pl->idx = msm_alloc((pl->m ? pl->m : 1) * sizeof(uint32_t));
    pl->dig = msm_alloc((pl->M ? pl->M : 1) * pl->windows * sizeof(int16_t));
    pl->ones = msm_alloc((pl->n_ones ? pl->n_ones : 1) * sizeof(uint32_t));
    pl->hi = msm_alloc((pl->n_hi ? pl->n_hi : 1) * sizeof(uint32_t));
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

#endif
