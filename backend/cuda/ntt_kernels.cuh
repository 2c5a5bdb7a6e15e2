/*
 * ntt_kernels.cuh — the device code of ntt.cu (which describes the transforms):
 * the constants, the twiddle-table and pass kernels, the bit reversals, the
 * scalings and the h join, and the pass split, with no launches and no CUDA
 * runtime calls, so that tests/cuda/test_cuda_ntt_emul can compile them for
 * the CPU (tests/cuda/emu/cuda_emu.h) and check them against the CPU NTT.
 */
#ifndef CZK_CUDA_NTT_KERNELS_CUH
#define CZK_CUDA_NTT_KERNELS_CUH

#include "backend/cuda/ec.cuh"

/* stages per pass at most: 2^NTT_KMAX elements in shared memory, 2^(NTT_KMAX-1)
 * butterflies a stage (k_ntt_pass's launch bound) */
#define NTT_KMAX 10

/* the block's dynamic shared memory (tests/cuda/emu/cuda_emu.h defines its own) */
#ifndef CZK_DYN_SHARED
#define CZK_DYN_SHARED(T, name) extern __shared__ T name[]
#endif

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
    CZK_DYN_SHARED(uint32_t, sh);
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

/* split log_n stages into passes of at most kmax (NTT_KMAX; tests use fewer);
 * ks[] from the low bits up */
static inline int ntt_split(unsigned log_n, unsigned ks[32], unsigned kmax)
{
    int p = (int)((log_n + kmax - 1) / kmax);
    for (int i = 0; i < p; i++)
        ks[i] = log_n / p + ((unsigned)i < log_n % p ? 1 : 0);
    return p;
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

#endif
