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

#define NTT_KMAX 10

/* w[32] = 5^((r-1)/2^32) in Montgomery form, and 1/2 in Montgomery form */
__constant__ static const uint32_t c_w32[8] = {0x0c17f47c, 0x9cab6d5c, 0xfd4b71e5, 0x1ce1e93d,
                                               0x471dd505, 0x0d6db230, 0x743a3b6a, 0x3f0ee990};
__constant__ static const uint32_t c_inv2[8] = {0xffffffff, 0x00000000, 0x0001a401, 0xac425bfd,
                                                0xf65e27fa, 0xccc627f7, 0xd66282b7, 0x0c1258ac};
/* BN254: w[28] = 5^((r-1)/2^28) (CZK_BN254_FR_ROOT_2_28) and 1/2, Montgomery */
__constant__ static const uint32_t c_bn_w28[8] = {0x80d13d9c, 0x636e7355, 0x2445ffd6, 0xa22bf374,
                                                  0x1eb203d8, 0x56452ac0, 0x2963f9e7, 0x1860ef94};
__constant__ static const uint32_t c_bn_inv2[8] = {0x1ffffffe, 0x783c14d8, 0x0c8d1edd, 0xaf982f6f,
                                                   0xfcfd4f45, 0x8f5f7492, 0x3d9cbfac, 0x1f37631a};

/* the 2-adicity of the field, its primitive 2^ADICITY-th root and 1/2 */
template <class F> struct ntt_field;
template <> struct ntt_field<fr_t> {
    static constexpr int ADICITY = 32;
    static __device__ __forceinline__ const uint32_t *w_top() { return c_w32; }
    static __device__ __forceinline__ const uint32_t *inv2() { return c_inv2; }
};
template <> struct ntt_field<bn_fr_t> {
    static constexpr int ADICITY = 28;
    static __device__ __forceinline__ const uint32_t *w_top() { return c_bn_w28; }
    static __device__ __forceinline__ const uint32_t *inv2() { return c_bn_inv2; }
};

/* consts[0..32] = 2^-k, consts[33..65] = w[k] (zero above the 2-adicity) */
template <class F> __global__ void k_ntt_consts(F *consts)
{
    F x, inv2;
    for (int j = 0; j < 8; j++) {
        x.v[j] = ntt_field<F>::w_top()[j];
        inv2.v[j] = ntt_field<F>::inv2()[j];
    }
    for (int k = 32; k >= 0; k--) {
        if (k > ntt_field<F>::ADICITY) {
            set_zero(consts[33 + k]);
            continue;
        }
        consts[33 + k] = x;
        sqr(x, x);
    }
    set_one(x);
    for (int k = 0; k <= 32; k++) {
        consts[k] = x;
        mul(x, x, inv2);
    }
}

/* level 2h of the twiddle table from level h: w_{4h}^{2j} = w_{2h}^j, w_{4h}^{2j+1} = w_{2h}^j w_{4h} */
template <class F> __global__ void k_tw_level(F *tw, const F *consts, size_t h, unsigned log4h)
{
    size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (j >= h)
        return;
    F x = tw[h + j], w = consts[33 + log4h], y;
    mul(y, x, w);
    tw[2 * h + 2 * j] = x;
    tw[2 * h + 2 * j + 1] = y;
}

template <class F> __global__ void k_tw_one(F *tw)
{
    F one;
    set_one(one);
    tw[1] = one;
    F z;
    set_zero(z);
    tw[0] = z;
}

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

/* shared memory holds 2^k elements limb-major: word l of element i at sh[l * S + i] */
template <class F> FF_DEV F sh_load(const uint32_t *sh, unsigned S, unsigned i)
{
    F x;
#pragma unroll
    for (int l = 0; l < 8; l++)
        x.v[l] = sh[l * S + i];
    return x;
}
template <class F> FF_DEV void sh_store(uint32_t *sh, unsigned S, unsigned i, const F &x)
{
#pragma unroll
    for (int l = 0; l < 8; l++)
        sh[l * S + i] = x.v[l];
}

/* w_{2h}^j or its inverse, from the table */
template <bool INV, class F> FF_DEV F twiddle(const F *tw, size_t h, size_t j)
{
    if (!INV || j == 0)
        return ld_global(tw + h + j);
    F w = ld_global(tw + 2 * h - j), r;
    neg(r, w);
    return r;
}

/* One pass of k radix-2 stages over the index bits [lo, lo + k).  Each
 * thread runs BPT butterflies of a stage (blockDim = 2^(k-1) / BPT): with 2,
 * the two multiplications are independent work for the same warp.  The pass
 * reads src and writes dst (the same buffer for an in-place pass).
 * GATHER (first DIT pass, lo == 0, src != dst unless one block covers the
 * whole transform): the input is src in natural order and the pass reads it at
 * bit-reversed positions, which folds the bit-reversal permutation into the
 * pass.  Block b handles positions c 2^k + i with c = brev(b) on log_n - k
 * bits, whose sources are brev_k(i) 2^(log_n - k) + b: the blocks that run at
 * the same time read neighbouring elements of each stride-2^(log_n - k) row. */
template <class F, bool DIT, bool INV, int BPT, bool GATHER>
__global__ void __launch_bounds__(512)
    k_ntt_pass(const F *src, F *dst, const F *tw, unsigned lo, unsigned k, unsigned log_n)
{
    extern __shared__ uint32_t sh[];
    const unsigned S = 1u << k;
    const size_t b = blockIdx.x;
    const size_t lowmask = ((size_t)1 << lo) - 1;
    const unsigned hk = log_n - k; /* GATHER: bits above the pass */
    const size_t base = GATHER ? (hk ? (size_t)(__brev((unsigned)b) >> (32 - hk)) << k : 0)
                               : (b & lowmask) | ((b >> lo) << (lo + k));
    /* GATHER: element i of this block comes from src + gsrc(i) */
#define GSRC(i) ((((size_t)(__brev((unsigned)(i)) >> (32 - k))) << hk) | b)
    /* The stage of half-size 1 on the lowest index bits (lo == 0, m == 0) has
     * the twiddle 1 everywhere: it is done without multiplications while
     * loading (DIT, the first stage) or while storing (DIF, the last), so the
     * stage loop below keeps its registers. */
    const bool unit = lo == 0;
    if (DIT && unit) {
        for (unsigned u = threadIdx.x; u < S / 2; u += blockDim.x) {
            F x0, x1, y;
            if (GATHER) {
                x0 = ld_global(src + GSRC(2 * u));
                x1 = ld_global(src + GSRC(2 * u + 1));
            } else {
                x0 = ld_global(src + base + 2 * u);
                x1 = ld_global(src + base + 2 * u + 1);
            }
            add(y, x0, x1);
            sh_store(sh, S, 2 * u, y);
            sub(y, x0, x1);
            sh_store(sh, S, 2 * u + 1, y);
        }
    } else {
        for (unsigned j = threadIdx.x; j < S; j += blockDim.x)
            sh_store(sh, S, j, ld_global(src + (GATHER ? GSRC(j) : base + ((size_t)j << lo))));
    }
#undef GSRC
    __syncthreads();
    const unsigned s_begin = DIT && unit ? 1 : 0, s_end = !DIT && unit ? k - 1 : k;
    for (unsigned s = s_begin; s < s_end; s++) {
        const unsigned m = DIT ? s : k - 1 - s; /* local half-size 2^m */
        const unsigned hl = 1u << m;
        const size_t h = (size_t)hl << lo;
        unsigned i0[BPT];
        F y0[BPT], y1[BPT];
#pragma unroll
        for (int q = 0; q < BPT; q++) {
            const unsigned t = threadIdx.x + q * blockDim.x;
            i0[q] = ((t >> m) << (m + 1)) | (t & (hl - 1));
            F x0 = sh_load<F>(sh, S, i0[q]), x1 = sh_load<F>(sh, S, i0[q] + hl);
            const size_t jj = ((size_t)(t & (hl - 1)) << lo) | (b & lowmask);
            F w = twiddle<INV>(tw, h, jj);
            if (DIT) {
                mul(x1, x1, w);
                add(y0[q], x0, x1);
                sub(y1[q], x0, x1);
            } else {
                add(y0[q], x0, x1);
                sub(y1[q], x0, x1);
                mul(y1[q], y1[q], w);
            }
        }
#pragma unroll
        for (int q = 0; q < BPT; q++) {
            sh_store(sh, S, i0[q], y0[q]);
            sh_store(sh, S, i0[q] + hl, y1[q]);
        }
        __syncthreads();
    }
    if (!DIT && unit) {
        for (unsigned u = threadIdx.x; u < S / 2; u += blockDim.x) {
            F x0 = sh_load<F>(sh, S, 2 * u), x1 = sh_load<F>(sh, S, 2 * u + 1), y;
            add(y, x0, x1);
            st_global(dst + base + 2 * u, y);
            sub(y, x0, x1);
            st_global(dst + base + 2 * u + 1, y);
        }
    } else {
        for (unsigned j = threadIdx.x; j < S; j += blockDim.x)
            st_global(dst + base + ((size_t)j << lo), sh_load<F>(sh, S, j));
    }
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

/* split log_n stages into passes of at most NTT_KMAX; ks[] from the low bits up */
static int ntt_split(unsigned log_n, unsigned ks[8])
{
    int p = (int)((log_n + NTT_KMAX - 1) / NTT_KMAX);
    for (int i = 0; i < p; i++)
        ks[i] = log_n / p + ((unsigned)i < log_n % p ? 1 : 0);
    return p;
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
    unsigned ks[8];
    int p = ntt_split(log_n, ks);
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
    unsigned ks[8];
    int p = ntt_split(log_n, ks);
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

__global__ void k_bitrev(fr_t *a, unsigned log_n, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    size_t j = __brev((unsigned)i) >> (32 - log_n);
    if (i < j) {
        fr_t x = ld_global(a + i), y = ld_global(a + j);
        st_global(a + i, y);
        st_global(a + j, x);
    }
}

template <class F> __global__ void k_scale(F *a, const F *consts, unsigned log_n, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    F x = ld_global(a + i), c = consts[log_n];
    mul(x, x, c);
    st_global(a + i, x);
}

/* bit-reversed coefficients (times n) -> times ninv * w_{2n}^brev(pos) */
template <class F> __global__ void k_coset_scale(F *a, const F *tw, const F *consts, unsigned log_n, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    size_t e = log_n ? (__brev((unsigned)i) >> (32 - log_n)) : 0;
    F x = ld_global(a + i), w = ld_global(tw + n + e), c = consts[log_n];
    mul(w, w, c);
    mul(x, x, w);
    st_global(a + i, x);
}

template <class F> __global__ void k_h_join(F *a, const F *b, const F *c, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    F x = ld_global(a + i), y = ld_global(b + i), z = ld_global(c + i);
    mul(x, x, y);
    sub(x, x, z);
    from_mont(x, x);
    st_global(a + i, x);
}

/* Bit reversal by tiles: write i = (x, m, y) with x the top BR_R bits, y the
 * low BR_R bits and m the L - 2 BR_R bits between; brev(i) = (brev y, brev m,
 * brev x).  Block m owns the two tiles {(x, m, y)} and {(x, brev m, y)} (one
 * when m is its own reverse, none when m > brev m): each thread reads its two
 * sources, the block synchronises, and each thread writes two consecutive-y
 * (coalesced) elements.  Every element is read and written once, against
 * scattered single-element swaps in k_bitrev.  The loads are plain coherent
 * ones, not ld_global's __ldg: a read-only load whose value is used only after
 * the barrier may legally be moved below it, past other threads' stores (that
 * gave wrong results from 2^18 up; docs/bench-gpu.md, "Third round"). */
#define BR_R 4
__global__ void __launch_bounds__(1u << (2 * BR_R)) k_bitrev_tiles(fr_t *a, unsigned log_n)
{
    const unsigned lm = log_n - 2 * BR_R;
    const uint32_t m = blockIdx.x;
    const uint32_t mr = lm ? (__brev(m) >> (32 - lm)) : 0;
    if (m > mr)
        return;
    const unsigned x = threadIdx.x >> BR_R, y = threadIdx.x & ((1u << BR_R) - 1);
    const unsigned xr = __brev(x) >> (32 - BR_R), yr = __brev(y) >> (32 - BR_R);
    const unsigned hs = log_n - BR_R; /* shift of the top field */
    /* destination (x, m, y) takes the element at (yr, mr, xr), and (x, mr, y) the one at (yr, m, xr) */
    const size_t d0 = ((size_t)x << hs) | ((size_t)m << BR_R) | y;
    const size_t d1 = ((size_t)x << hs) | ((size_t)mr << BR_R) | y;
    const size_t s0 = ((size_t)yr << hs) | ((size_t)mr << BR_R) | xr;
    const size_t s1 = ((size_t)yr << hs) | ((size_t)m << BR_R) | xr;
    const uint4 *a4 = reinterpret_cast<const uint4 *>(a);
    uint4 v0a = a4[2 * s0], v0b = a4[2 * s0 + 1], v1a = v0a, v1b = v0b;
    if (m != mr) {
        v1a = a4[2 * s1];
        v1b = a4[2 * s1 + 1];
    }
    __syncthreads();
    fr_t v0, v1;
    reinterpret_cast<uint4 *>(&v0)[0] = v0a;
    reinterpret_cast<uint4 *>(&v0)[1] = v0b;
    reinterpret_cast<uint4 *>(&v1)[0] = v1a;
    reinterpret_cast<uint4 *>(&v1)[1] = v1b;
    st_global(a + d0, v0);
    if (m != mr)
        st_global(a + d1, v1);
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

static inline unsigned grid_for(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

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
