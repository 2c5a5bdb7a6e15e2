/*
 * ntt.c — radix-2 NTT over Fr with snarkjs's roots of unity (see ntt.h).
 *
 * Forward transform: bit-reversal permutation, then iterative decimation-in-
 * time butterflies.  The first CACHE_LOG stages run block by block (a block of
 * 2^CACHE_LOG elements, 512 KiB, stays in L2 for all of them; blocks are
 * independent, so they are the unit of parallel work); the remaining stages
 * sweep the whole array, each split into contiguous butterfly ranges.
 * The inverse transform is the forward one followed by the index reversal
 * i -> -i mod n and a multiplication by 1/n, fused with the coset shift for
 * czk_ntt_to_odd_coset.
 *
 * Twiddles: one process-wide table tw[j] = w_N^j (j < N/2) for the largest N
 * seen so far; a stage of half-size m reads it with stride N/(2m).  The table
 * is built under a mutex and only ever replaced by a larger one; replaced
 * tables are kept (never freed) because a concurrent transform may still be
 * reading them, so the memory held is at most twice the largest table.
 */
#include "common/crypto/ntt.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto/field_impl.h"
#include "common/base/log.h"
#include "common/crypto/par.h"

#define CACHE_LOG 14        /* elements per cache block: 2^14 * 32 B = 512 KiB */
#define PAR_MIN_LOG 12      /* smaller transforms run on the calling thread */
#define FR_TWO_ADICITY 32

/* ---- roots of unity ---- */

static czk_fr roots[FR_TWO_ADICITY + 1];     /* roots[k]: primitive 2^k-th root (Montgomery) */
static pthread_once_t roots_once = PTHREAD_ONCE_INIT;

static void roots_init(void)
{
    uint64_t t[CZK_FR_LIMBS];
    czk_fr five;
    int i, k;

    /* t = (r - 1) / 2^32; r is odd so r - 1 only clears bit 0 */
    for (i = 0; i < CZK_FR_LIMBS; i++) {
        uint64_t lo = CZK_FR_MOD.l[i], hi = i + 1 < CZK_FR_LIMBS ? CZK_FR_MOD.l[i + 1] : 0;
        if (i == 0)
            lo &= ~(uint64_t)1;
        t[i] = (lo >> FR_TWO_ADICITY) | (hi << (64 - FR_TWO_ADICITY));
    }
    czk_fr_from_u64(&five, 5);
    czk_fr_pow(&roots[FR_TWO_ADICITY], &five, t, CZK_FR_LIMBS);
    for (k = FR_TWO_ADICITY; k > 0; k--)
        czk_fr_sqr(&roots[k - 1], &roots[k]);
}

void czk_fr_root_of_unity(czk_fr *w, unsigned log_n)
{
    pthread_once(&roots_once, roots_init);
    if (log_n > FR_TWO_ADICITY) {
        *w = CZK_FR_ZERO;   /* no such root; callers check log_n first */
        return;
    }
    *w = roots[log_n];
}

/* ---- twiddle table ---- */

struct tw_table {
    czk_fr *tw;         /* tw[j] = w_N^j, j < N/2 */
    unsigned log;       /* N = 2^log */
};

static pthread_mutex_t tw_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tw_table tw_cur;
/* replaced tables, kept alive for transforms still reading them; sizes
 * strictly grow, so there are at most CZK_NTT_MAX_LOG of them */
static czk_fr *tw_retired[CZK_NTT_MAX_LOG + 1];
static unsigned tw_nretired;

struct tw_build {
    czk_fr *tw;
    czk_fr w;
};

static void tw_build_range(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct tw_build *b = arg;
    uint64_t e = begin;
    czk_fr x;
    size_t j;

    czk_fr_pow(&x, &b->w, &e, 1);
    for (j = begin; j < end; j++) {
        b->tw[j] = x;
        czk_fr_mul_i(&x, &x, &b->w);
    }
}

/* a table covering transforms up to 2^log_n; -ENOMEM when it cannot be built */
static int tw_get(struct tw_table *out, unsigned log_n, int nthreads)
{
    int rc = 0;

    pthread_mutex_lock(&tw_lock);
    if (!tw_cur.tw || tw_cur.log < log_n) {
        unsigned log = log_n < CACHE_LOG ? CACHE_LOG : log_n;
        size_t half = (size_t)1 << (log - 1);
        struct tw_build b;

        b.tw = aligned_alloc(64, half * sizeof(czk_fr));
        if (!b.tw) {
            czk_err("could not allocate the ntt twiddle table for 2^%u: out of memory", log);
            rc = -ENOMEM;
        } else {
            czk_fr_root_of_unity(&b.w, log);
            czk_par_for(half, log >= 16 ? nthreads : 1, tw_build_range, &b);
            if (tw_cur.tw)
                tw_retired[tw_nretired++] = tw_cur.tw;
            tw_cur.tw = b.tw;
            tw_cur.log = log;
        }
    }
    *out = tw_cur;
    pthread_mutex_unlock(&tw_lock);
    return rc;
}

/* ---- forward transform ---- */

static inline unsigned bitrev(size_t i, unsigned log_n)
{
    /* log_n <= 28, so the index fits in 32 bits */
    uint32_t x = (uint32_t)i;
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
    x = (x >> 16) | (x << 16);
    return log_n ? x >> (32 - log_n) : 0;
}

struct ntt_ctx {
    czk_fr *a;
    unsigned log_n;
    const czk_fr *tw;
    unsigned tw_log;
    unsigned blk_log;   /* stages done per block */
    size_t m;           /* half-size of the current global stage */
};

static void bitrev_range(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct ntt_ctx *c = arg;
    size_t i;

    for (i = begin; i < end; i++) {
        size_t j = bitrev(i, c->log_n);
        if (i < j) {
            czk_fr t = c->a[i];
            c->a[i] = c->a[j];
            c->a[j] = t;
        }
    }
}

static inline void butterfly(czk_fr *x, czk_fr *y, const czk_fr *w)
{
    czk_fr t;

    czk_fr_mul_i(&t, y, w);
    czk_fr_sub_i(y, x, &t);
    czk_fr_add_i(x, x, &t);
}

/* the stages of half-size 1 .. 2^(blk_log-1) inside blocks [begin, end) */
static void block_range(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct ntt_ctx *c = arg;
    size_t blk = (size_t)1 << c->blk_log, b, m, k, j;

    for (b = begin; b < end; b++) {
        czk_fr *a = c->a + b * blk;
        for (m = 1; m < blk; m <<= 1) {
            size_t stride = ((size_t)1 << c->tw_log) / (2 * m);
            if (m == 1) {
                for (k = 0; k < blk; k += 2) {
                    czk_fr t = a[k + 1];
                    czk_fr_sub_i(&a[k + 1], &a[k], &t);
                    czk_fr_add_i(&a[k], &a[k], &t);
                }
                continue;
            }
            for (k = 0; k < blk; k += 2 * m) {
                czk_fr t = a[k + m];
                czk_fr_sub_i(&a[k + m], &a[k], &t);
                czk_fr_add_i(&a[k], &a[k], &t);
                for (j = 1; j < m; j++)
                    butterfly(&a[k + j], &a[k + j + m], &c->tw[j * stride]);
            }
        }
    }
}

/* one global stage of half-size c->m, butterflies [begin, end) of n/2 */
static void stage_range(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct ntt_ctx *c = arg;
    size_t m = c->m, stride = ((size_t)1 << c->tw_log) / (2 * m), i = begin;

    while (i < end) {
        size_t k = (i / m) * 2 * m, j = i % m, stop = m;
        if (stop - j > end - i)
            stop = j + (end - i);
        i += stop - j;
        for (; j < stop; j++)
            butterfly(&c->a[k + j], &c->a[k + j + m], &c->tw[j * stride]);
    }
}

static int ntt_forward(czk_fr *a, unsigned log_n, int nthreads)
{
    struct ntt_ctx c;
    struct tw_table t;
    size_t n = (size_t)1 << log_n;
    int th = log_n >= PAR_MIN_LOG ? nthreads : 1, rc;

    if (log_n == 0)
        return 0;
    rc = tw_get(&t, log_n, nthreads);
    if (rc)
        return rc;
    c.a = a;
    c.log_n = log_n;
    c.tw = t.tw;
    c.tw_log = t.log;
    c.blk_log = log_n < CACHE_LOG ? log_n : CACHE_LOG;
    czk_par_for(n, th, bitrev_range, &c);
    czk_par_for(n >> c.blk_log, th, block_range, &c);
    for (c.m = (size_t)1 << c.blk_log; c.m < n; c.m <<= 1)
        czk_par_for(n / 2, th, stage_range, &c);
    return 0;
}

/* ---- index reversal with scaling: a[i] <- a[-i mod n] * c0 * g^i ---- */

struct rev_ctx {
    czk_fr *a;
    size_t n;
    czk_fr c0, g, ginv;
    int plain;          /* g == 1: multiply by c0 only */
};

static void rev_range(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct rev_ctx *c = arg;
    czk_fr plo, phi, x, y;
    size_t i;
    uint64_t e;

    /* work item t is the pair (i, n - i) with i = t + 1, so i runs over [1, n/2] */
    begin++;
    end++;
    if (!c->plain) {
        e = begin;
        czk_fr_pow(&plo, &c->g, &e, 1);
        czk_fr_mul_i(&plo, &plo, &c->c0);
        e = c->n - begin;
        czk_fr_pow(&phi, &c->g, &e, 1);
        czk_fr_mul_i(&phi, &phi, &c->c0);
    }
    for (i = begin; i < end; i++) {
        size_t j = c->n - i;
        x = c->a[i];
        y = c->a[j];
        if (c->plain) {
            czk_fr_mul_i(&c->a[i], &y, &c->c0);
            if (j != i)
                czk_fr_mul_i(&c->a[j], &x, &c->c0);
        } else {
            czk_fr_mul_i(&c->a[i], &y, &plo);
            if (j != i)
                czk_fr_mul_i(&c->a[j], &x, &phi);
            czk_fr_mul_i(&plo, &plo, &c->g);
            czk_fr_mul_i(&phi, &phi, &c->ginv);
        }
    }
}

/* inverse transform, then a[i] *= g^i (g NULL: no shift) */
static int ntt_inverse_shift(czk_fr *a, unsigned log_n, const czk_fr *g, int nthreads)
{
    struct rev_ctx c;
    size_t n = (size_t)1 << log_n;
    int rc;

    rc = ntt_forward(a, log_n, nthreads);
    if (rc)
        return rc;
    c.a = a;
    c.n = n;
    czk_fr_from_u64(&c.c0, n);
    czk_fr_inv(&c.c0, &c.c0);
    c.plain = g == NULL;
    if (g) {
        c.g = *g;
        if (czk_fr_inv(&c.ginv, g))
            return -EDOM;
    }
    czk_fr_mul_i(&a[0], &a[0], &c.c0);
    if (n > 1)
        czk_par_for(n / 2, log_n >= PAR_MIN_LOG ? nthreads : 1, rev_range, &c);
    return 0;
}

/* ---- coset scaling: a[i] *= g^i ---- */

struct scale_ctx {
    czk_fr *a;
    czk_fr g;
};

static void scale_range(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct scale_ctx *c = arg;
    czk_fr p;
    uint64_t e = begin;
    size_t i;

    czk_fr_pow(&p, &c->g, &e, 1);
    for (i = begin; i < end; i++) {
        czk_fr_mul_i(&c->a[i], &c->a[i], &p);
        czk_fr_mul_i(&p, &p, &c->g);
    }
}

/* ---- public entry points ---- */

static int check_args(const czk_fr *a, unsigned log_n, const char *what)
{
    if (!a) {
        czk_err("%s: null vector", what);
        return -EINVAL;
    }
    if (log_n > CZK_NTT_MAX_LOG) {
        czk_err("%s: size 2^%u exceeds the supported 2^%u", what, log_n, CZK_NTT_MAX_LOG);
        return -EINVAL;
    }
    return 0;
}

int czk_ntt(czk_fr *a, unsigned log_n, int nthreads)
{
    int rc = check_args(a, log_n, "ntt");

    return rc ? rc : ntt_forward(a, log_n, nthreads);
}

int czk_intt(czk_fr *a, unsigned log_n, int nthreads)
{
    int rc = check_args(a, log_n, "intt");

    return rc ? rc : ntt_inverse_shift(a, log_n, NULL, nthreads);
}

int czk_ntt_scale_powers(czk_fr *a, size_t n, const czk_fr *g, int nthreads)
{
    struct scale_ctx c;

    if ((!a && n) || !g)
        return -EINVAL;
    c.a = a;
    c.g = *g;
    return czk_par_for(n, n >= ((size_t)1 << PAR_MIN_LOG) ? nthreads : 1, scale_range, &c);
}

int czk_ntt_to_odd_coset(czk_fr *a, unsigned log_n, int nthreads)
{
    czk_fr g;
    int rc = check_args(a, log_n, "odd coset ntt");

    if (rc)
        return rc;
    czk_fr_root_of_unity(&g, log_n + 1);
    rc = ntt_inverse_shift(a, log_n, &g, nthreads);
    return rc ? rc : ntt_forward(a, log_n, nthreads);
}
