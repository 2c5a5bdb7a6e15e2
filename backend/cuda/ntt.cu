/*
 * ntt.cu — NTT over Fr on the device with snarkjs's roots of unity, and the
 * Groth16 h step, for both curves: BLS12-381 (fr_t, w[32] = 5^((r-1)/2^32))
 * and BN254 (bn_fr_t, w[28] = 5^((r-1)/2^28)), w[k-1] = w[k]^2.  The kernels
 * are templates over the field F; each curve has its own twiddle table in the
 * context (ntt_tab).
 *
 * Structure: radix-2 stages grouped into passes of up to NTT_KMAX stages;
 * one block loads the 2^k elements a pass couples (stride 2^lo) into shared
 * memory (limb-major, conflict-free), runs the k butterfly stages there, and
 * writes back: ceil(log n / NTT_KMAX) passes over memory per transform.
 * Each element is one 32-byte sector, so strided access wastes no bandwidth.
 *   - DIF (Gentleman-Sande) passes: natural order in, bit-reversed out.
 *   - DIT (Cooley-Tukey) passes: bit-reversed in, natural order out.
 * The odd-coset step of snarkjs (iNTT, times w_{2n}^i, NTT) is DIF-inverse,
 * a scaling by ninv * w_{2n}^brev(i) at the bit-reversed positions, then DIT-forward,
 * so no permutation pass is needed.
 * The natural-order transforms (czk_cuda_ntt_dev) fold the bit reversal into
 * their first DIT pass, which gathers its input at bit-reversed positions and
 * writes a second buffer (ctx->ntt_tmp); the last pass writes back.  Without
 * that buffer (CZK_CUDA_NTT_FUSE=0, or its allocation failed) a separate tiled
 * bit-reversal pass runs first and the passes work in place.
 * Twiddles: one table per curve, tw[h + j] = w_{2h}^j for every power of two
 * h up to 2^max_log_n (BN254: up to 2^min(max_log_n, 27), its Fr having no
 * root of order 2^29), 2 * 2^max_log_n elements, independent of the transform
 * size; inverse twiddles are w_{2h}^-j = -tw[2h - j] (j > 0), so one table
 * serves both.  The contexts of one device share their tables (tw_get /
 * tw_put).
 */
#include <pthread.h>
#include <stdlib.h>

#include "backend/cuda/internal.cuh"
#include "backend/cuda/ntt_kernels.cuh"


/* the constants and the twiddle table of one curve, levels h up to 2^log; on
 * failure whatever was allocated is in *consts / *tw for the caller to free */
template <class F> static int tw_init(F **consts, F **tw, unsigned log, cudaStream_t s)
{
    size_t n = (size_t)1 << log;
    CZK_CU(cudaMalloc((void **)consts, 66 * sizeof(F)));
    CZK_CU(cudaMalloc((void **)tw, 2 * n * sizeof(F)));
    k_ntt_consts<F><<<1, 1, 0, s>>>(*consts);
    CZK_CU_LAUNCH("k_ntt_consts");
    k_tw_one<F><<<1, 1, 0, s>>>(*tw);
    CZK_CU_LAUNCH("k_tw_one");
    unsigned lg = 0;
    for (size_t h = 1; h < n; h *= 2, lg++) {
        unsigned blocks = (unsigned)((h + 255) / 256);
        k_tw_level<F><<<blocks, 256, 0, s>>>(*tw, *consts, h, lg + 2);
        CZK_CU_LAUNCH("k_tw_level");
    }
    CZK_CU(cudaStreamSynchronize(s));
    return 0;
}

/* The tables are read-only after they are built, so the contexts of one
 * device share one per curve and size (gpud runs two contexts per GPU),
 * counted by references under a lock. */
struct tw_shared {
    int device;
    unsigned curve, log;
    void *consts, *tw;
    unsigned refs;
};
#define TW_SHARED_MAX 64
static pthread_mutex_t tw_mu = PTHREAD_MUTEX_INITIALIZER;
static tw_shared tw_reg[TW_SHARED_MAX];

/* a reference to the tables of (device, curve, log), built on first use */
template <class F>
static int tw_get(int device, unsigned curve, unsigned log, F **consts, F **tw, cudaStream_t s)
{
    int rc = 0, free_slot = -1;
    pthread_mutex_lock(&tw_mu);
    for (int i = 0; i < TW_SHARED_MAX; i++) {
        tw_shared *e = &tw_reg[i];
        if (!e->refs) {
            if (free_slot < 0)
                free_slot = i;
            continue;
        }
        if (e->device == device && e->curve == curve && e->log == log) {
            e->refs++;
            *consts = (F *)e->consts;
            *tw = (F *)e->tw;
            pthread_mutex_unlock(&tw_mu);
            return 0;
        }
    }
    if (free_slot < 0) {
        pthread_mutex_unlock(&tw_mu);
        return czk_cuda_errf_(-ENOMEM, "ntt: more than %d twiddle tables in one process", TW_SHARED_MAX);
    }
    F *c = NULL, *t = NULL;
    rc = tw_init<F>(&c, &t, log, s);
    if (rc) {
        cudaFree(c);
        cudaFree(t);
    } else {
        tw_reg[free_slot] = {device, curve, log, c, t, 1};
        *consts = c;
        *tw = t;
    }
    pthread_mutex_unlock(&tw_mu);
    return rc;
}

/* drops a reference taken by tw_get (tw NULL: none) */
static void tw_put(void *tw)
{
    if (!tw)
        return;
    pthread_mutex_lock(&tw_mu);
    for (int i = 0; i < TW_SHARED_MAX; i++) {
        tw_shared *e = &tw_reg[i];
        if (e->refs && e->tw == tw) {
            if (--e->refs == 0) {
                cudaFree(e->tw);
                cudaFree(e->consts);
                *e = tw_shared{};
            }
            break;
        }
    }
    pthread_mutex_unlock(&tw_mu);
}

int czk_cuda_ntt_init_(czk_cuda_ctx *ctx)
{
    int rc;
    if ((ctx->curves & CZK_CUDA_CURVE_BLS12_381) &&
        (rc = tw_get<fr_t>(ctx->device, CZK_CUDA_CURVE_BLS12_381, ctx->max_log_n, &ctx->ninv, &ctx->tw,
                           ctx->st[0])))
        return rc;
    if (ctx->curves & CZK_CUDA_CURVE_BN254) {
        /* the top level holds w_{2^(log+1)}: BN254's Fr has 2^28-th roots at most */
        ctx->bn_tw_log = ctx->max_log_n < 27 ? ctx->max_log_n : 27;
        if ((rc = tw_get<bn_fr_t>(ctx->device, CZK_CUDA_CURVE_BN254, ctx->bn_tw_log, &ctx->bn_ninv, &ctx->bn_tw,
                                  ctx->st[0])))
            return rc;
    }
    return 0;
}

void czk_cuda_ntt_free_(czk_cuda_ctx *ctx)
{
    tw_put(ctx->tw);
    tw_put(ctx->bn_tw);
    ctx->tw = ctx->ninv = NULL;
    ctx->bn_tw = ctx->bn_ninv = NULL;
}

/* one curve's tables as the transforms see them: twiddles and constants,
 * the largest NTT and the largest odd coset / h (its w_{2n} in the table) */
template <class F> struct ntt_tab {
    const F *tw, *consts;
    unsigned max_log, coset_log;
};

static int ntt_tables(czk_cuda_ctx *ctx, ntt_tab<fr_t> *t)
{
    if (!ctx->tw)
        return czk_cuda_errf_(-EINVAL, "ntt: context created without BLS12-381");
    *t = {ctx->tw, ctx->ninv, ctx->max_log_n, ctx->max_log_n};
    return 0;
}

static int ntt_tables(czk_cuda_ctx *ctx, ntt_tab<bn_fr_t> *t)
{
    if (!ctx->bn_tw)
        return czk_cuda_errf_(-EINVAL, "ntt: context created without BN254");
    *t = {ctx->bn_tw, ctx->bn_ninv, ctx->max_log_n, ctx->bn_tw_log};
    return 0;
}

/* butterflies per thread and stage for a pass of k stages: CZK_CUDA_NTT_BPT=1
 * or 2 forces one; by default 2 from k = 9 up (blocks of 128 threads or more)
 * and 1 below */
static int ntt_bpt(unsigned k)
{
    static int v = -1;
    if (v < 0) {
        const char *e = getenv("CZK_CUDA_NTT_BPT");
        v = (e && *e == '1') ? 1 : (e && *e == '2') ? 2 : 0;
    }
    if (k < 2)
        return 1;
    if (v)
        return v;
    return k >= 9 ? 2 : 1;
}

template <bool DIT, bool INV, bool GATHER, class F>
static int ntt_launch(const F *src, F *dst, const F *tw, unsigned lo, unsigned k, unsigned log_n, cudaStream_t s)
{
    unsigned threads = 1u << (k - 1);
    size_t blocks = ((size_t)1 << log_n) >> k;
    size_t shm = ((size_t)8 << k) * sizeof(uint32_t);
    if (ntt_bpt(k) == 2)
        k_ntt_pass<F, DIT, INV, 2, GATHER><<<(unsigned)blocks, threads / 2, shm, s>>>(src, dst, tw, lo, k, log_n);
    else
        k_ntt_pass<F, DIT, INV, 1, GATHER><<<(unsigned)blocks, threads, shm, s>>>(src, dst, tw, lo, k, log_n);
    CZK_CU_LAUNCH("k_ntt_pass");
    return 0;
}

/* in-place passes over a: DIT from the low bits up, DIF from the high bits down */
template <bool DIT, bool INV, class F> static int ntt_passes(F *a, const F *tw, unsigned log_n, cudaStream_t s)
{
    unsigned ks[32];
    int p = ntt_split(log_n, ks, NTT_KMAX);
    unsigned los[8], lo = 0;
    for (int i = 0; i < p; i++) {
        los[i] = lo;
        lo += ks[i];
    }
    for (int q = 0; q < p; q++) {
        int i = DIT ? q : p - 1 - q;
        int rc = ntt_launch<DIT, INV, false>(a, a, tw, los[i], ks[i], log_n, s);
        if (rc)
            return rc;
    }
    return 0;
}

/* DIT passes from natural order in a to natural order in a, with the bit
 * reversal folded into the first pass: a -> tmp (gathering), tmp in place,
 * tmp -> a (the last pass); one pass is a -> a (a single block) */
template <bool INV, class F>
static int ntt_dit_gather(F *a, F *tmp, const F *tw, unsigned log_n, cudaStream_t s)
{
    unsigned ks[32];
    int p = ntt_split(log_n, ks, NTT_KMAX);
    unsigned lo = 0;
    for (int q = 0; q < p; q++) {
        const F *src = q == 0 ? a : tmp;
        F *dst = q == p - 1 ? a : tmp;
        int rc = q == 0 ? ntt_launch<true, INV, true>(src, dst, tw, lo, ks[q], log_n, s)
                        : ntt_launch<true, INV, false>(src, dst, tw, lo, ks[q], log_n, s);
        if (rc)
            return rc;
        lo += ks[q];
    }
    return 0;
}

/* the out-of-place buffer for ntt_dit_gather, allocated once at the context's
 * largest size; NULL (and the separate bit reversal) when that fails or when
 * CZK_CUDA_NTT_FUSE=0 (comparisons) */
static fr_t *ntt_tmp(czk_cuda_ctx *ctx)
{
    static int fuse = -1;
    if (fuse < 0) {
        const char *e = getenv("CZK_CUDA_NTT_FUSE");
        fuse = (e && *e == '0') ? 0 : 1;
    }
    if (!fuse)
        return NULL;
    if (!ctx->ntt_tmp) {
        size_t n = (size_t)1 << ctx->max_log_n;
        if (cudaMalloc((void **)&ctx->ntt_tmp, n * sizeof(fr_t)) != cudaSuccess) {
            cudaGetLastError();
            ctx->ntt_tmp = NULL;
            return NULL;
        }
        ctx->ntt_tmp_len = n;
    }
    return ctx->ntt_tmp;
}

/* CZK_CUDA_NTT_BREV=0: the older one-swap-per-thread bit reversal (comparisons) */
static int bitrev(fr_t *a, unsigned log_n, cudaStream_t s)
{
    static int tiles = -1;
    if (tiles < 0) {
        const char *e = getenv("CZK_CUDA_NTT_BREV");
        tiles = (e && *e == '0') ? 0 : 1;
    }
    size_t n = (size_t)1 << log_n;
    if (tiles && log_n >= 2 * BR_R) {
        k_bitrev_tiles<<<(unsigned)(n >> (2 * BR_R)), 1u << (2 * BR_R), 0, s>>>(a, log_n);
        CZK_CU_LAUNCH("k_bitrev_tiles");
    } else {
        k_bitrev<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(a, log_n, n);
        CZK_CU_LAUNCH("k_bitrev");
    }
    return 0;
}

/* the tables of F's curve and a size check: log_n within 1..max (the NTT)
 * or 1..coset_log (odd coset, h) */
template <class F> static int ntt_prep(czk_cuda_ctx *ctx, ntt_tab<F> *t, unsigned log_n, int coset)
{
    int rc = ntt_tables(ctx, t);
    if (rc)
        return rc;
    unsigned max = coset ? t->coset_log : t->max_log;
    if (log_n < 1 || log_n > max)
        return czk_cuda_errf_(-EINVAL, "%s size 2^%u outside 2^1..2^%u of this context", coset ? "odd coset" : "ntt",
                              log_n, max);
    return 0;
}

/* the odd-coset step on one vector, on stream s */
template <class F> static int odd_coset(const ntt_tab<F> &t, F *a, unsigned log_n, cudaStream_t s)
{
    size_t n = (size_t)1 << log_n;
    int rc = ntt_passes<false, true>(a, t.tw, log_n, s);
    if (rc)
        return rc;
    k_coset_scale<F><<<grid_for(n, 256), 256, 0, s>>>(a, t.tw, t.consts, log_n, n);
    CZK_CU_LAUNCH("k_coset_scale");
    return ntt_passes<true, false>(a, t.tw, log_n, s);
}

template <class F> static int ntt_dev(czk_cuda_ctx *ctx, unsigned log_n, int inverse)
{
    ntt_tab<F> t = {};
    int rc = ntt_prep(ctx, &t, log_n, 0);
    if (rc)
        return rc;
    CZK_CU(cudaSetDevice(ctx->device));
    size_t n = (size_t)1 << log_n;
    cudaStream_t s = ctx->st[0];
    F *a = (F *)ctx->buf[CZK_CUDA_BUF_A];
    CZK_CU(cudaStreamWaitEvent(s, ctx->buf_ready[CZK_CUDA_BUF_A], 0));
    F *tmp = (F *)ntt_tmp(ctx);
    if (!tmp && (rc = bitrev((fr_t *)a, log_n, s)))
        return rc;
    if (inverse) {
        rc = tmp ? ntt_dit_gather<true>(a, tmp, t.tw, log_n, s) : ntt_passes<true, true>(a, t.tw, log_n, s);
        if (rc)
            return rc;
        k_scale<F><<<grid_for(n, 256), 256, 0, s>>>(a, t.consts, log_n, n);
        CZK_CU_LAUNCH("k_scale");
        return 0;
    }
    return tmp ? ntt_dit_gather<false>(a, tmp, t.tw, log_n, s) : ntt_passes<true, false>(a, t.tw, log_n, s);
}

template <class F> static int odd_coset_dev(czk_cuda_ctx *ctx, unsigned log_n)
{
    ntt_tab<F> t = {};
    int rc = ntt_prep(ctx, &t, log_n, 1);
    if (rc)
        return rc;
    CZK_CU(cudaSetDevice(ctx->device));
    CZK_CU(cudaStreamWaitEvent(ctx->st[0], ctx->buf_ready[CZK_CUDA_BUF_A], 0));
    return odd_coset(t, (F *)ctx->buf[CZK_CUDA_BUF_A], log_n, ctx->st[0]);
}

template <class F> static int compute_h_dev(czk_cuda_ctx *ctx, unsigned log_n)
{
    ntt_tab<F> t = {};
    int rc = ntt_prep(ctx, &t, log_n, 1);
    if (rc)
        return rc;
    CZK_CU(cudaSetDevice(ctx->device));
    size_t n = (size_t)1 << log_n;
    /* a, b, c on three streams, each after its upload */
    for (int i = 0; i < 3; i++) {
        CZK_CU(cudaStreamWaitEvent(ctx->st[i], ctx->buf_ready[i], 0));
        rc = odd_coset(t, (F *)ctx->buf[i], log_n, ctx->st[i]);
        if (rc)
            return rc;
    }
    for (int i = 1; i < 3; i++) {
        CZK_CU(cudaEventRecord(ctx->done[i], ctx->st[i]));
        CZK_CU(cudaStreamWaitEvent(ctx->st[0], ctx->done[i], 0));
    }
    k_h_join<F><<<grid_for(n, 256), 256, 0, ctx->st[0]>>>((F *)ctx->buf[0], (const F *)ctx->buf[1],
                                                          (const F *)ctx->buf[2], n);
    CZK_CU_LAUNCH("k_h_join");
    return 0;
}

/* host wrappers: copy in, compute, copy out (32-byte elements of either curve) */
template <class F> static int ntt_host(czk_cuda_ctx *ctx, void *a, unsigned log_n, int inverse)
{
    ntt_tab<F> t = {};
    int rc = ntt_prep(ctx, &t, log_n, 0);
    if (rc)
        return rc;
    size_t n = (size_t)1 << log_n;
    if ((rc = czk_cuda_upload_async(ctx, CZK_CUDA_BUF_A, 0, (const czk_fr *)a, n, NULL, NULL)) ||
        (rc = ntt_dev<F>(ctx, log_n, inverse)))
        return rc;
    return czk_cuda_download(ctx, CZK_CUDA_BUF_A, 0, (czk_fr *)a, n);
}

template <class F>
static int compute_h_host(czk_cuda_ctx *ctx, const void *a, const void *b, const void *c, void *h, unsigned log_n)
{
    ntt_tab<F> t = {};
    int rc = ntt_prep(ctx, &t, log_n, 1);
    if (rc)
        return rc;
    size_t n = (size_t)1 << log_n;
    if ((rc = czk_cuda_upload_async(ctx, CZK_CUDA_BUF_A, 0, (const czk_fr *)a, n, NULL, NULL)) ||
        (rc = czk_cuda_upload_async(ctx, CZK_CUDA_BUF_B, 0, (const czk_fr *)b, n, NULL, NULL)) ||
        (rc = czk_cuda_upload_async(ctx, CZK_CUDA_BUF_C, 0, (const czk_fr *)c, n, NULL, NULL)) ||
        (rc = compute_h_dev<F>(ctx, log_n)))
        return rc;
    return czk_cuda_download(ctx, CZK_CUDA_BUF_A, 0, (czk_fr *)h, n);
}

extern "C" int czk_cuda_ntt_dev(czk_cuda_ctx *ctx, unsigned log_n, int inverse)
{
    return ntt_dev<fr_t>(ctx, log_n, inverse);
}
extern "C" int czk_cuda_ntt_to_odd_coset_dev(czk_cuda_ctx *ctx, unsigned log_n)
{
    return odd_coset_dev<fr_t>(ctx, log_n);
}
extern "C" int czk_cuda_compute_h_dev(czk_cuda_ctx *ctx, unsigned log_n) { return compute_h_dev<fr_t>(ctx, log_n); }
extern "C" int czk_cuda_ntt(czk_cuda_ctx *ctx, czk_fr *a, unsigned log_n, int inverse)
{
    return ntt_host<fr_t>(ctx, a, log_n, inverse);
}
extern "C" int czk_cuda_compute_h(czk_cuda_ctx *ctx, const czk_fr *a, const czk_fr *b, const czk_fr *c, czk_fr *h,
                                  unsigned log_n)
{
    return compute_h_host<fr_t>(ctx, a, b, c, h, log_n);
}

extern "C" int czk_cuda_bn254_ntt_dev(czk_cuda_ctx *ctx, unsigned log_n, int inverse)
{
    return ntt_dev<bn_fr_t>(ctx, log_n, inverse);
}
extern "C" int czk_cuda_bn254_ntt_to_odd_coset_dev(czk_cuda_ctx *ctx, unsigned log_n)
{
    return odd_coset_dev<bn_fr_t>(ctx, log_n);
}
extern "C" int czk_cuda_bn254_compute_h_dev(czk_cuda_ctx *ctx, unsigned log_n)
{
    return compute_h_dev<bn_fr_t>(ctx, log_n);
}
extern "C" int czk_cuda_bn254_ntt(czk_cuda_ctx *ctx, czk_bn254_fr *a, unsigned log_n, int inverse)
{
    return ntt_host<bn_fr_t>(ctx, a, log_n, inverse);
}
extern "C" int czk_cuda_bn254_compute_h(czk_cuda_ctx *ctx, const czk_bn254_fr *a, const czk_bn254_fr *b,
                                        const czk_bn254_fr *c, czk_bn254_fr *h, unsigned log_n)
{
    return compute_h_host<bn_fr_t>(ctx, a, b, c, h, log_n);
}
