/*
 * ntt_tmpl.h — radix-2 NTT over a scalar field, written once and included by
 * ntt.c (BLS12-381's Fr) and bn254_ntt.c (BN254's Fr).  Private to those
 * files: not a contract header (ntt.h and bn254_ntt.h are).
 *
 * Forward transform: bit-reversal permutation, then iterative decimation-in-
 * time butterflies.  The first CACHE_LOG stages run block by block (a block of
 * 2^CACHE_LOG elements, 512 KiB, stays in L2 for all of them; blocks are
 * independent, so they are the unit of parallel work); the remaining stages
 * sweep the whole array, each split into contiguous butterfly ranges.
 * The inverse transform is the forward one followed by the index reversal
 * i -> -i mod n and a multiplication by 1/n, fused with the coset shift for
 * the odd-coset transform.
 *
 * Twiddles: one table per field, tw[j] = w_N^j (j < N/2) for the largest N
 * seen so far; a stage of half-size m reads it with stride N/(2m).  The table
 * is built under a mutex and only ever replaced by a larger one; replaced
 * tables are kept (never freed) because a concurrent transform may still be
 * reading them, so the memory held is at most twice the largest table.
 *
 * Roots of unity: w[S] = 5^((r-1)/2^S) with S the 2-adicity (5 is snarkjs'
 * generator for both fields), w[k-1] = w[k]^2.
 *
 * The including file includes its field's implementation header (the inline
 * _i operations), common/base/log.h and common/crypto/par.h, and defines:
 *   NT(name)        the public name: NT(ntt) -> czk_ntt / czk_bn254_ntt,
 *                   NT(fr_root_of_unity), NT(intt), NT(ntt_scale_powers),
 *                   NT(ntt_to_odd_coset) (prototypes in its header)
 *   NT_PFX          a string put before "ntt" in log lines ("" or "bn254 ")
 *   NT_FR           the element type: NT_LIMBS 64-bit limbs, Montgomery form,
 *                   R = 2^(64 NT_LIMBS), fully reduced
 *   NT_MUL NT_ADD NT_SUB   inline r = a op b (r may alias)
 *   NT_SQR NT_POW NT_INV NT_FROM_U64   as the field header's _sqr, _pow,
 *                   _inv (-EDOM on 0), _from_u64
 *   NT_ZERO NT_MOD  the zero element and the modulus (plain integer)
 *   NT_TWO_ADICITY  S with 2^S || r - 1 (1..63)
 *   NT_MAX_LOG      the largest transform accepted (<= 28 and <= S)
 * and, where frx8.h has lanes (CZK_HAVE_FPX8), optionally:
 *   NT_X8_T, NT_X8(name)   the field's eight-lane type and functions
 *                   (czk_frx8 / czk_frx8_##name): stages of half-size 8 and
 *                   up then run eight butterflies at once while
 *                   czk_fpx8_enabled() (CZK_NO_IFMA=1 keeps the scalar
 *                   code).  The lane operations give the same canonical
 *                   results as NT_MUL, NT_ADD and NT_SUB, so both paths
 *                   produce the same words.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CACHE_LOG 14        /* elements per cache block: 2^14 * 32 B = 512 KiB */
#define PAR_MIN_LOG 12      /* smaller transforms run on the calling thread */

_Static_assert(NT_MAX_LOG <= 28 && NT_MAX_LOG <= NT_TWO_ADICITY,
               "bitrev takes 32-bit indices and the roots exist up to 2^NT_TWO_ADICITY");

/* ---- roots of unity ---- */

static NT_FR roots[NT_TWO_ADICITY + 1];     /* roots[k]: primitive 2^k-th root (Montgomery) */
static pthread_once_t roots_once = PTHREAD_ONCE_INIT;

static void roots_init(void)
{
    uint64_t t[NT_LIMBS];
    NT_FR five;
    int i, k;

    /* t = (r - 1) / 2^32; r is odd so r - 1 only clears bit 0 */
    for (i = 0; i < NT_LIMBS; i++) {
        uint64_t lo = NT_MOD.l[i], hi = i + 1 < NT_LIMBS ? NT_MOD.l[i + 1] : 0;
        if (i == 0)
            lo &= ~(uint64_t)1;
        t[i] = (lo >> NT_TWO_ADICITY) | (hi << (64 - NT_TWO_ADICITY));
    }
    NT_FROM_U64(&five, 5);
    NT_POW(&roots[NT_TWO_ADICITY], &five, t, NT_LIMBS);
    for (k = NT_TWO_ADICITY; k > 0; k--)
        NT_SQR(&roots[k - 1], &roots[k]);
}

void NT(fr_root_of_unity)(NT_FR *w, unsigned log_n)
{
    pthread_once(&roots_once, roots_init);
    if (log_n > NT_TWO_ADICITY) {
        *w = NT_ZERO;   /* no such root; callers check log_n first */
        return;
    }
    *w = roots[log_n];
}

/* ---- twiddle table ---- */

struct tw_table {
    NT_FR *tw;         /* tw[j] = w_N^j, j < N/2 */
    unsigned log;       /* N = 2^log */
};

static pthread_mutex_t tw_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tw_table tw_cur;
/* replaced tables, kept alive for transforms still reading them; sizes
 * strictly grow, so there are at most NT_MAX_LOG of them */
static NT_FR *tw_retired[NT_MAX_LOG + 1];
static unsigned tw_nretired;

struct tw_build {
    NT_FR *tw;
    NT_FR w;
};

static void tw_build_range(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct tw_build *b = arg;
    uint64_t e = begin;
    NT_FR x;
    size_t j;

    NT_POW(&x, &b->w, &e, 1);
    for (j = begin; j < end; j++) {
        b->tw[j] = x;
        NT_MUL(&x, &x, &b->w);
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

        b.tw = aligned_alloc(64, half * sizeof(NT_FR));
        if (!b.tw) {
            czk_err("could not allocate the " NT_PFX "ntt twiddle table for 2^%u: out of memory", log);
            rc = -ENOMEM;
        } else {
            NT(fr_root_of_unity)(&b.w, log);
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
    NT_FR *a;
    unsigned log_n;
    const NT_FR *tw;
    unsigned tw_log;
    unsigned blk_log;   /* stages done per block */
    size_t m;           /* half-size of the current global stage */
    bool x8;            /* stages of half-size >= 8 in lanes */
};

static void bitrev_range(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct ntt_ctx *c = arg;
    size_t i;

    for (i = begin; i < end; i++) {
        size_t j = bitrev(i, c->log_n);
        if (i < j) {
            NT_FR t = c->a[i];
            c->a[i] = c->a[j];
            c->a[j] = t;
        }
    }
}

static inline void butterfly(NT_FR *x, NT_FR *y, const NT_FR *w)
{
    NT_FR t;

    NT_MUL(&t, y, w);
    NT_SUB(y, x, &t);
    NT_ADD(x, x, &t);
}

#if defined(CZK_HAVE_FPX8) && defined(NT_X8_T)
#define NT_HAVE_X8 1
/* butterfly(&x[l], &y[l], &tw[l * stride]) for l = 0..7, in lanes */
CZK_IFMA static void butterflies_x8(NT_FR *x, NT_FR *y, const NT_FR *tw, size_t stride)
{
    NT_X8_T vx, vy, vw, t;

    NT_X8(load)(&vx, x);
    NT_X8(load)(&vy, y);
    if (stride == 1) {
        NT_X8(load)(&vw, tw);
    } else {
        const char *p[8];
        for (int l = 0; l < 8; l++)
            p[l] = (const char *)(tw + l * stride);
        NT_X8(gather_p)(&vw, p, 0);
    }
    NT_X8(mul)(&t, &vy, &vw);
    NT_X8(sub)(&vy, &vx, &t);
    NT_X8(add)(&vx, &vx, &t);
    NT_X8(store)(x, &vx);
    NT_X8(store)(y, &vy);
}
#define NT_LANES(c) ((c)->x8)
#else
#define butterflies_x8(x, y, tw, stride) ((void)0)
#define NT_LANES(c) false
#endif

/* the stages of half-size 1 .. 2^(blk_log-1) inside blocks [begin, end) */
static void block_range(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct ntt_ctx *c = arg;
    size_t blk = (size_t)1 << c->blk_log, b, m, k, j;

    for (b = begin; b < end; b++) {
        NT_FR *a = c->a + b * blk;
        for (m = 1; m < blk; m <<= 1) {
            size_t stride = ((size_t)1 << c->tw_log) / (2 * m);
            if (m == 1) {
                for (k = 0; k < blk; k += 2) {
                    NT_FR t = a[k + 1];
                    NT_SUB(&a[k + 1], &a[k], &t);
                    NT_ADD(&a[k], &a[k], &t);
                }
                continue;
            }
            if (m >= 8 && NT_LANES(c)) {
                for (k = 0; k < blk; k += 2 * m)
                    for (j = 0; j < m; j += 8)
                        butterflies_x8(&a[k + j], &a[k + j + m], &c->tw[j * stride], stride);
                continue;
            }
            for (k = 0; k < blk; k += 2 * m) {
                NT_FR t = a[k + m];
                NT_SUB(&a[k + m], &a[k], &t);
                NT_ADD(&a[k], &a[k], &t);
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
        if (NT_LANES(c))
            for (; j + 8 <= stop; j += 8)
                butterflies_x8(&c->a[k + j], &c->a[k + j + m], &c->tw[j * stride], stride);
        for (; j < stop; j++)
            butterfly(&c->a[k + j], &c->a[k + j + m], &c->tw[j * stride]);
    }
}

static int ntt_forward(NT_FR *a, unsigned log_n, int nthreads)
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
#ifdef NT_HAVE_X8
    c.x8 = czk_fpx8_enabled();
#else
    c.x8 = false;
#endif
    czk_par_for(n, th, bitrev_range, &c);
    czk_par_for(n >> c.blk_log, th, block_range, &c);
    for (c.m = (size_t)1 << c.blk_log; c.m < n; c.m <<= 1)
        czk_par_for(n / 2, th, stage_range, &c);
    return 0;
}

/* ---- index reversal with scaling: a[i] <- a[-i mod n] * c0 * g^i ---- */

struct rev_ctx {
    NT_FR *a;
    size_t n;
    NT_FR c0, g, ginv;
    int plain;          /* g == 1: multiply by c0 only */
};

static void rev_range(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct rev_ctx *c = arg;
    NT_FR plo, phi, x, y;
    size_t i;
    uint64_t e;

    /* work item t is the pair (i, n - i) with i = t + 1, so i runs over [1, n/2] */
    begin++;
    end++;
    if (!c->plain) {
        e = begin;
        NT_POW(&plo, &c->g, &e, 1);
        NT_MUL(&plo, &plo, &c->c0);
        e = c->n - begin;
        NT_POW(&phi, &c->g, &e, 1);
        NT_MUL(&phi, &phi, &c->c0);
    }
    for (i = begin; i < end; i++) {
        size_t j = c->n - i;
        x = c->a[i];
        y = c->a[j];
        if (c->plain) {
            NT_MUL(&c->a[i], &y, &c->c0);
            if (j != i)
                NT_MUL(&c->a[j], &x, &c->c0);
        } else {
            NT_MUL(&c->a[i], &y, &plo);
            if (j != i)
                NT_MUL(&c->a[j], &x, &phi);
            NT_MUL(&plo, &plo, &c->g);
            NT_MUL(&phi, &phi, &c->ginv);
        }
    }
}

/* inverse transform, then a[i] *= g^i (g NULL: no shift) */
static int ntt_inverse_shift(NT_FR *a, unsigned log_n, const NT_FR *g, int nthreads)
{
    struct rev_ctx c;
    size_t n = (size_t)1 << log_n;
    int rc;

    rc = ntt_forward(a, log_n, nthreads);
    if (rc)
        return rc;
    c.a = a;
    c.n = n;
    NT_FROM_U64(&c.c0, n);
    NT_INV(&c.c0, &c.c0);
    c.plain = g == NULL;
    if (g) {
        c.g = *g;
        if (NT_INV(&c.ginv, g))
            return -EDOM;
    }
    NT_MUL(&a[0], &a[0], &c.c0);
    if (n > 1)
        czk_par_for(n / 2, log_n >= PAR_MIN_LOG ? nthreads : 1, rev_range, &c);
    return 0;
}

/* ---- coset scaling: a[i] *= g^i ---- */

struct scale_ctx {
    NT_FR *a;
    NT_FR g;
};

static void scale_range(void *arg, size_t begin, size_t end, unsigned worker)
{
    struct scale_ctx *c = arg;
    NT_FR p;
    uint64_t e = begin;
    size_t i;

    NT_POW(&p, &c->g, &e, 1);
    for (i = begin; i < end; i++) {
        NT_MUL(&c->a[i], &c->a[i], &p);
        NT_MUL(&p, &p, &c->g);
    }
}

/* ---- public entry points ---- */

static int check_args(const NT_FR *a, unsigned log_n, const char *what)
{
    if (!a) {
        czk_err("%s: null vector", what);
        return -EINVAL;
    }
    if (log_n > NT_MAX_LOG) {
        czk_err("%s: size 2^%u exceeds the supported 2^%u", what, log_n, NT_MAX_LOG);
        return -EINVAL;
    }
    return 0;
}

int NT(ntt)(NT_FR *a, unsigned log_n, int nthreads)
{
    int rc = check_args(a, log_n, NT_PFX "ntt");

    return rc ? rc : ntt_forward(a, log_n, nthreads);
}

int NT(intt)(NT_FR *a, unsigned log_n, int nthreads)
{
    int rc = check_args(a, log_n, NT_PFX "intt");

    return rc ? rc : ntt_inverse_shift(a, log_n, NULL, nthreads);
}

int NT(ntt_scale_powers)(NT_FR *a, size_t n, const NT_FR *g, int nthreads)
{
    struct scale_ctx c;

    if ((!a && n) || !g)
        return -EINVAL;
    c.a = a;
    c.g = *g;
    return czk_par_for(n, n >= ((size_t)1 << PAR_MIN_LOG) ? nthreads : 1, scale_range, &c);
}

int NT(ntt_to_odd_coset)(NT_FR *a, unsigned log_n, int nthreads)
{
    NT_FR g;
    int rc = check_args(a, log_n, NT_PFX "odd coset ntt");

    if (rc)
        return rc;
    if (log_n + 1 > NT_TWO_ADICITY) {
        czk_err(NT_PFX "odd coset ntt: size 2^%u needs a 2^%u-th root of unity; the field has none",
                log_n, log_n + 1);
        return -EINVAL;
    }
    NT(fr_root_of_unity)(&g, log_n + 1);
    rc = ntt_inverse_shift(a, log_n, &g, nthreads);
    return rc ? rc : ntt_forward(a, log_n, nthreads);
}
