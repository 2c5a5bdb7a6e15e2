/*
 * bench_ff.cu — throughput of the device field products on the H200
 * (docs/bench-gpu.md, "Field products" and "Field products on the FP64
 * pipe").  Four tables:
 *  1. per field width, the even/odd CIOS product (mont_mul_eo, what mul()
 *     runs) against the one-level Karatsuba product (mont_mul_kara), and the
 *     lazily reduced Fp2 product with its three wide products by schoolbook
 *     (mul_wide_eo) or by Karatsuba (mul_wide_kara), all with the modulus in
 *     constant memory as the kernels have it; last, mont_mul_eo reading the
 *     modulus through a pointer (what this table measured before);
 *  2. ff_dfma.cuh's FP64-pipe product (52-bit limbs) against mont_mul_eo;
 *  3. G1 mixed additions (ec.cuh's madd-2008-s) over ff.cuh's fields and
 *     over ff_dfma.cuh's, at 3 and 4 blocks of 128 per SM;
 *  4. the same additions over ff.cuh with some of their ten products on the
 *     FP64 pipe (mul_fp64).
 * Every thread runs independent chains from the same random inputs for each
 * variant; the variants of a row must agree (word for word, or after
 * reduction and the change of Montgomery radix), printed as "same".  Exit 0,
 * or 1 when a row's variants disagree or CUDA fails, 77 without a GPU.
 *
 * bench_ff [reps [madds]]: chain length per thread (default 2000), mixed
 * additions per thread (default 400).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "backend/cuda/ec.cuh"
#include "bench/cuda/ff_dfma.cuh"

/* fp2_mul_lazy with the wide products by schoolbook (K false) or Karatsuba */
template <int N, bool K>
static __device__ __forceinline__ void fp2_lazy(uint32_t *r0, uint32_t *r1, const uint32_t *x0, const uint32_t *x1,
                                                const uint32_t *y0, const uint32_t *y1, const uint32_t *mod,
                                                uint32_t ninv)
{
    uint32_t sx[N], sy[N], W0[2 * N], W1[2 * N], D[2 * N];
    add_words<N>(sx, x0, x1);
    add_words<N>(sy, y0, y1);
    if (K) {
        mul_wide_kara<N>(W0, x0, y0);
        mul_wide_kara<N>(W1, x1, y1);
    } else {
        mul_wide_eo<N>(W0, x0, y0);
        mul_wide_eo<N>(W1, x1, y1);
    }
    D[0] = ff_sub_cc(W0[0], W1[0]);
#pragma unroll
    for (int k = 1; k < 2 * N; k++)
        D[k] = ff_subc_cc(W0[k], W1[k]);
    const uint32_t br = ff_subc(0u, 0u);
    add_words<2 * N>(W0, W0, W1);
    D[N] = ff_add_cc(D[N], mod[0] & br);
#pragma unroll
    for (int j = 1; j < N - 1; j++)
        D[N + j] = ff_addc_cc(D[N + j], mod[j] & br);
    D[2 * N - 1] = ff_addc(D[2 * N - 1], mod[N - 1] & br);
    mont_redc_eo<N>(r0, D, mod, ninv);
    if (K)
        mul_wide_kara<N>(W1, sx, sy);
    else
        mul_wide_eo<N>(W1, sx, sy);
    W1[0] = ff_sub_cc(W1[0], W0[0]);
#pragma unroll
    for (int k = 1; k < 2 * N - 1; k++)
        W1[k] = ff_subc_cc(W1[k], W0[k]);
    W1[2 * N - 1] = ff_subc(W1[2 * N - 1], W0[2 * N - 1]);
    mont_redc_eo<N>(r1, W1, mod, ninv);
}

/* V & 3 = 0: mont_mul_eo, 1: mont_mul_kara (four chains of products per
 * thread); 2: Fp2 lazy schoolbook, 3: Fp2 lazy Karatsuba (two chains of Fp2
 * products).  V & 4: the modulus from constant memory, as the kernels' mul()
 * has it, instead of through the pointer mod (global memory). */
template <int N, int V> __global__ void __launch_bounds__(256) k_chain(uint32_t *io, const uint32_t *gmod, uint32_t ninv, int reps)
{
    const size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    const uint32_t *mod = (V & 4) ? (N == 8 ? c_bn_fp_mod : c_fp_mod) : gmod;
    uint32_t x[4][N], y[N];
#pragma unroll
    for (int c = 0; c < 4; c++)
#pragma unroll
        for (int j = 0; j < N; j++)
            x[c][j] = io[(t * 5 + c) * N + j];
#pragma unroll
    for (int j = 0; j < N; j++)
        y[j] = io[(t * 5 + 4) * N + j];
    for (int i = 0; i < reps; i++) {
        if ((V & 3) == 0) {
#pragma unroll
            for (int c = 0; c < 4; c++)
                mont_mul_eo<N>(x[c], x[c], y, mod, ninv);
        } else if ((V & 3) == 1) {
#pragma unroll
            for (int c = 0; c < 4; c++)
                mont_mul_kara<N>(x[c], x[c], y, mod, ninv);
        } else {
            fp2_lazy<N, (V & 3) == 3>(x[0], x[1], x[0], x[1], y, x[2], mod, ninv);
            fp2_lazy<N, (V & 3) == 3>(x[2], x[3], x[2], x[3], y, x[0], mod, ninv);
        }
    }
#pragma unroll
    for (int c = 0; c < 4; c++)
#pragma unroll
        for (int j = 0; j < N; j++)
            io[(t * 5 + c) * N + j] = x[c][j];
}

/* four chains x = x y per thread, as k_chain; words in, words out
 * (the top limbs of a value below 2p fit N words) */
template <int N, int M>
__global__ void __launch_bounds__(256) k_chain_dfma(uint32_t *io, const dfma_mod<M> md, int reps)
{
    const size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    double x[4][M], y[M];
#pragma unroll
    for (int c = 0; c < 4; c++)
        dfma_load<N, M>(x[c], io + (t * 5 + c) * N);
    dfma_load<N, M>(y, io + (t * 5 + 4) * N);
    for (int i = 0; i < reps; i++) {
#pragma unroll
        for (int c = 0; c < 4; c++)
            dfma_mont_mul<M>(x[c], x[c], y, md);
    }
#pragma unroll
    for (int c = 0; c < 4; c++)
        dfma_store<N, M>(io + (t * 5 + c) * N, x[c]);
}

static int cuda_failed(const char *what)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        return 0;
    fprintf(stderr, "bench_ff: %s: %s\n", what, cudaGetErrorString(e));
    return 1;
}

/* one variant over blocks x 256 threads: ms of the timed launch (after a
 * short warm-up) and the chains' final values in out */
/* the chains' inputs: T threads x 5 values of N words, every one below p */
template <int N> static std::vector<uint32_t> inputs(const uint32_t *hmod, size_t T)
{
    std::vector<uint32_t> h(T * 5 * N);
    uint64_t rs = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < h.size(); i++) {
        rs ^= rs << 13;
        rs ^= rs >> 7;
        rs ^= rs << 17;
        h[i] = (uint32_t)rs;
    }
    for (size_t e = 0; e < T * 5; e++)
        h[e * N + N - 1] &= hmod[N - 1] >> 1;
    return h;
}

template <int N, int V>
static float run(const uint32_t *hmod, uint32_t ninv, unsigned blocks, int reps, std::vector<uint32_t> &out, int *err,
                 const std::vector<uint32_t> *in = NULL)
{
    const size_t T = (size_t)blocks * 256, words = T * 5 * N;
    const std::vector<uint32_t> h = in ? *in : inputs<N>(hmod, T);
    uint32_t *d = NULL, *dm = NULL;
    float ms = 0;
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaMalloc(&d, words * 4);
    cudaMalloc(&dm, N * 4);
    cudaMemcpy(dm, hmod, N * 4, cudaMemcpyHostToDevice);
    cudaMemcpy(d, h.data(), words * 4, cudaMemcpyHostToDevice);
    k_chain<N, V><<<blocks, 256>>>(d, dm, ninv, 8);
    cudaMemcpy(d, h.data(), words * 4, cudaMemcpyHostToDevice);
    cudaEventRecord(a);
    k_chain<N, V><<<blocks, 256>>>(d, dm, ninv, reps);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b);
    out.assign(words, 0);
    cudaMemcpy(out.data(), d, words * 4, cudaMemcpyDeviceToHost);
    *err |= cuda_failed("kernel");
    cudaFree(d);
    cudaFree(dm);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms;
}

template <int N>
static int row(const char *name, const uint32_t *mod, uint32_t ninv, unsigned blocks, int reps)
{
    std::vector<uint32_t> o0, o1, o2, o3, op;
    int err = 0;
    const double prods = (double)blocks * 256 * reps * 4, f2 = (double)blocks * 256 * reps * 2;
    float m0 = run<N, 4>(mod, ninv, blocks, reps, o0, &err), m1 = run<N, 5>(mod, ninv, blocks, reps, o1, &err);
    float m2 = run<N, 6>(mod, ninv, blocks, reps, o2, &err), m3 = run<N, 7>(mod, ninv, blocks, reps, o3, &err);
    float mp = run<N, 0>(mod, ninv, blocks, reps, op, &err);
    printf("| %s | %.2f G/s | %.2f G/s | %.3f | %s | %.2f G/s | %.2f G/s | %.3f | %s | %.2f G/s |\n", name,
           prods / m0 / 1e6, prods / m1 / 1e6, m1 / m0, o0 == o1 && o0 == op ? "same" : "DIFFER", f2 / m2 / 1e6,
           f2 / m3 / 1e6, m3 / m2, o2 == o3 ? "same" : "DIFFER", prods / mp / 1e6);
    return err || o0 != o1 || o0 != op || o2 != o3;
}

/* --- the DFMA row: mont_mul_eo (R = 2^(32N)) against dfma_mont_mul
 * (R = 2^(52M)) on the same chains; the eo chains multiply by
 * y 2^(32N - 52M) mod p so both compute x y^reps R'^-reps, compared after
 * reduction to [0, p) --- */

template <int N> static bool geq(const uint32_t *a, const uint32_t *p)
{
    for (int i = N - 1; i >= 0; i--)
        if (a[i] != p[i])
            return a[i] > p[i];
    return true;
}

template <int N> static void sub_p(uint32_t *a, const uint32_t *p)
{
    uint64_t br = 0;
    for (int i = 0; i < N; i++) {
        const uint64_t d = (uint64_t)a[i] - p[i] - br;
        a[i] = (uint32_t)d;
        br = (d >> 32) & 1;
    }
}

/* a = a / 2 mod p (a < p) */
template <int N> static void half_mod(uint32_t *a, const uint32_t *p)
{
    uint32_t top = 0;
    if (a[0] & 1) {
        uint64_t c = 0;
        for (int i = 0; i < N; i++) {
            const uint64_t s = (uint64_t)a[i] + p[i] + c;
            a[i] = (uint32_t)s;
            c = s >> 32;
        }
        top = (uint32_t)c;
    }
    for (int i = 0; i < N; i++)
        a[i] = (a[i] >> 1) | ((i + 1 < N ? a[i + 1] : top) << 31);
}

template <int N, int M> static void words_to_52(uint64_t *l, const uint32_t *w)
{
    for (int k = 0; k < M; k++) {
        l[k] = 0;
        for (int bit = 0; bit < 52; bit++) {
            const int b = 52 * k + bit;
            if (b / 32 < N && (w[b / 32] >> (b % 32) & 1))
                l[k] |= 1ull << bit;
        }
    }
}

template <int N, int M>
static float run_dfma(const dfma_mod<M> &md, unsigned blocks, int reps, const std::vector<uint32_t> &h,
                      std::vector<uint32_t> &out, int *err)
{
    const size_t words = h.size();
    uint32_t *d = NULL;
    float ms = 0;
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaMalloc(&d, words * 4);
    cudaMemcpy(d, h.data(), words * 4, cudaMemcpyHostToDevice);
    k_chain_dfma<N, M><<<blocks, 256>>>(d, md, 8);
    cudaMemcpy(d, h.data(), words * 4, cudaMemcpyHostToDevice);
    cudaEventRecord(a);
    k_chain_dfma<N, M><<<blocks, 256>>>(d, md, reps);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b);
    out.assign(words, 0);
    cudaMemcpy(out.data(), d, words * 4, cudaMemcpyDeviceToHost);
    *err |= cuda_failed("dfma kernel");
    cudaFree(d);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms;
}

template <int N, int M>
static int row_dfma(const char *name, const uint32_t *mod, uint32_t ninv, unsigned blocks, int reps)
{
    const size_t T = (size_t)blocks * 256;
    const std::vector<uint32_t> h = inputs<N>(mod, T);
    std::vector<uint32_t> hy = h, o0, o1;
    for (size_t t = 0; t < T; t++)
        for (int s = 0; s < 52 * M - 32 * N; s++)
            half_mod<N>(&hy[(t * 5 + 4) * N], mod);
    dfma_mod<M> md;
    uint64_t pl[M];
    words_to_52<N, M>(pl, mod);
    for (int k = 0; k < M; k++)
        md.p[k] = (double)pl[k];
    const uint64_t p0 = (uint64_t)mod[0] | (uint64_t)mod[1] << 32;
    uint64_t inv = p0; /* p0^-1 mod 2^64 by Newton (3 correct bits to start) */
    for (int i = 0; i < 6; i++)
        inv *= 2 - p0 * inv;
    md.np = (0 - inv) & DFMA_M52;
    int err = 0;
    const double prods = (double)T * reps * 4;
    const float m0 = run<N, 4>(mod, ninv, blocks, reps, o0, &err, &hy);
    const float m1 = run_dfma<N, M>(md, blocks, reps, h, o1, &err);
    size_t bad = 0;
    for (size_t t = 0; t < T; t++)
        for (int c = 0; c < 4; c++) {
            uint32_t *u = &o0[(t * 5 + c) * N], *v = &o1[(t * 5 + c) * N];
            for (int k = 0; k < 4 && geq<N>(u, mod); k++)
                sub_p<N>(u, mod);
            for (int k = 0; k < 4 && geq<N>(v, mod); k++)
                sub_p<N>(v, mod);
            bad += memcmp(u, v, N * 4) != 0;
        }
    printf("| %s | %.2f G/s | %.2f G/s | %.3f | %s |\n", name, prods / m0 / 1e6, prods / m1 / 1e6, m0 / m1,
           bad ? "DIFFER" : "same");
    if (bad)
        fprintf(stderr, "bench_ff: %s: %zu of %zu dfma chains differ from mont_mul_eo\n", name, bad, T * 4);
    return err || bad;
}

/* --- mixed additions (madd-2008-s) over ff.cuh's fields and over
 * ff_dfma.cuh's, on the same points: each thread adds reps points drawn from
 * a table of npts (a power of 2) into an XYZZ sum with A::add --- */

/* ec.cuh's xyzz_add_aff, products of F's own */
struct madd_ec {
    template <class F> static __device__ __forceinline__ void add(xyzz_t<F> &p, const aff_t<F> &q)
    {
        xyzz_add_aff(p, q);
    }
};

template <class F, class A, int MINB>
__global__ void __launch_bounds__(128, MINB) k_madd(const aff_t<F> *pts, uint32_t npts, xyzz_t<F> *out, int reps)
{
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    xyzz_t<F> p;
    const aff_t<F> q0 = pts[t & (npts - 1)];
    p.x = q0.x;
    p.y = q0.y;
    set_one(p.zz);
    set_one(p.zzz);
    uint32_t idx = t * 2654435761u;
    for (int i = 0; i < reps; i++) {
        idx = idx * 1664525u + 1013904223u;
        A::add(p, pts[(idx >> 8) & (npts - 1)]);
    }
    out[t] = p;
}

/* ms of k_madd<F, A, MINB> over blocks x 128 threads (after a short
 * warm-up), the threads' sums in out */
template <class F, class A, int MINB>
static float run_madd(const std::vector<F> &hp, unsigned blocks, int reps, std::vector<F> &out, int *err)
{
    const size_t T = (size_t)blocks * 128;
    F *dp = NULL, *dout = NULL;
    float ms = 0;
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaMalloc(&dp, hp.size() * sizeof(F));
    cudaMalloc(&dout, T * 4 * sizeof(F));
    cudaMemcpy(dp, hp.data(), hp.size() * sizeof(F), cudaMemcpyHostToDevice);
    const uint32_t npts = (uint32_t)(hp.size() / 2);
    k_madd<F, A, MINB><<<blocks, 128>>>((const aff_t<F> *)dp, npts, (xyzz_t<F> *)dout, 4);
    cudaEventRecord(a);
    k_madd<F, A, MINB><<<blocks, 128>>>((const aff_t<F> *)dp, npts, (xyzz_t<F> *)dout, reps);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b);
    out.resize(T * 4);
    cudaMemcpy(out.data(), dout, T * 4 * sizeof(F), cudaMemcpyDeviceToHost);
    *err |= cuda_failed("madd kernel");
    cudaFree(dp);
    cudaFree(dout);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms;
}

/* a = 2a mod p (a < p) */
template <int N> static void dbl_mod(uint32_t *a, const uint32_t *p)
{
    uint32_t top = a[N - 1] >> 31;
    for (int i = N - 1; i > 0; i--)
        a[i] = (a[i] << 1) | (a[i - 1] >> 31);
    a[0] <<= 1;
    if (top || geq<N>(a, p))
        sub_p<N>(a, p);
}

template <int N, int M> static void l52_to_words(uint32_t *w, const uint64_t *l)
{
    memset(w, 0, N * 4);
    for (int k = 0; k < M; k++)
        for (int bit = 0; bit < 52; bit++) {
            const int b = 52 * k + bit;
            if (l[k] >> bit & 1)
                w[b / 32] |= 1u << (b % 32);
        }
}

static const char *mask_name(unsigned m)
{
    static char buf[64];
    char *p = buf;
    *p = 0;
    for (int n = 1; n <= 10; n++)
        if (m >> (n - 1) & 1)
            p += sprintf(p, "%s%d", p == buf ? "" : ",", n);
    return p == buf ? "none" : buf;
}

/* the hybrid rows, printed after the other tables */
static char hyb_buf[8192];

/* madd-2008-s as ec.cuh's xyzz_add_aff with product n (1..10, in the order
 * below) on the FP64 pipe when bit n-1 of MASK is set, the rest on ff.cuh's */
template <class FW, class FD, unsigned MASK>
static __device__ __forceinline__ void madd_hyb(xyzz_t<FW> &p, const aff_t<FW> &q)
{
#define HM(n, r, a, b)                                                                                                 \
    do {                                                                                                               \
        if (MASK >> ((n) - 1) & 1)                                                                                     \
            mul_fp64<FW, FD>(r, a, b);                                                                                 \
        else                                                                                                           \
            mul(r, a, b);                                                                                              \
    } while (0)
    if (is_zero(p.zz)) {
        p.x = q.x;
        p.y = q.y;
        set_one(p.zz);
        set_one(p.zzz);
        return;
    }
    FW pp, r, t, ppp;
    HM(1, pp, q.x, p.zz);
    sub(pp, pp, p.x);
    HM(2, r, q.y, p.zzz);
    sub(r, r, p.y);
    if (is_zero(pp)) {
        if (is_zero(r))
            xyzz_dbl_aff(p, q);
        else
            xyzz_set_inf(p);
        return;
    }
    HM(3, t, pp, pp);
    HM(4, ppp, pp, t);
    HM(5, p.x, p.x, t);
    HM(6, p.zz, p.zz, t);
    HM(7, p.zzz, p.zzz, ppp);
    HM(8, t, r, r);
    sub(t, t, ppp);
    sub(t, t, p.x);
    sub(t, t, p.x);
    sub(pp, p.x, t);
    HM(9, pp, r, pp);
    HM(10, ppp, p.y, ppp);
    sub(p.y, pp, ppp);
    p.x = t;
#undef HM
}

/* madd_hyb as k_madd's addition */
template <class FD, unsigned MASK> struct madd_mixed {
    template <class FW> static __device__ __forceinline__ void add(xyzz_t<FW> &p, const aff_t<FW> &q)
    {
        madd_hyb<FW, FD, MASK>(p, q);
    }
};

/* one hybrid row of hyb_buf: k_madd at 3 blocks per SM with madd_hyb, its
 * sums compared with base's word for word */
template <class FW, class FD, unsigned MASK>
static void run_hyb(const char *name, const std::vector<FW> &hp, unsigned blocks, int reps, float base_ms,
                    const std::vector<FW> &base, int *bad)
{
    std::vector<FW> out;
    const float ms = run_madd<FW, madd_mixed<FD, MASK>, 3>(hp, blocks, reps, out, bad);
    const bool same = out.size() == base.size() && memcmp(out.data(), base.data(), out.size() * sizeof(FW)) == 0;
    *bad |= !same;
    const size_t used = strlen(hyb_buf);
    snprintf(hyb_buf + used, sizeof(hyb_buf) - used, "| %s | %s | %.3f G/s | %.3f | %s |\n", name, mask_name(MASK),
             (double)blocks * 128 * reps / ms / 1e6, base_ms / ms, same ? "same" : "DIFFER");
}

/* hybrid rows, printed after the tables (against ff.cuh's madd at 3 blocks per SM) */
template <class FW, class FD>
static void hyb_rows(const char *name, const std::vector<FW> &pw, unsigned blocks, int reps, float base_ms,
                     const std::vector<FW> &base, int *err)
{
    /* products: 1 q.x ZZ, 2 q.y ZZZ, 3 P^2, 4 P PP, 5 X PP, 6 ZZ PP, 7 ZZZ PPP, 8 R^2, 9 R (Q - X3), 10 Y PPP */
    run_hyb<FW, FD, 0x000>(name, pw, blocks, reps, base_ms, base, err);
    run_hyb<FW, FD, 0x002>(name, pw, blocks, reps, base_ms, base, err);
    run_hyb<FW, FD, 0x012>(name, pw, blocks, reps, base_ms, base, err);
    run_hyb<FW, FD, 0x092>(name, pw, blocks, reps, base_ms, base, err);
    run_hyb<FW, FD, 0x292>(name, pw, blocks, reps, base_ms, base, err);
    run_hyb<FW, FD, 0x2aa>(name, pw, blocks, reps, base_ms, base, err);
}

/* FW: ff.cuh's field (N words), FD: ff_dfma.cuh's (M limbs) */
template <class FW, class FD, int N, int M>
static int row_madd(const char *name, const uint32_t *mod, unsigned blocks, int reps)
{
    const size_t npts = 1u << 16, T = (size_t)blocks * 128, S = 4096;
    std::vector<uint32_t> raw = inputs<N>(mod, npts * 2 / 5 + 1);
    std::vector<FW> pw(npts * 2), ow;
    std::vector<FD> pd(npts * 2), od;
    for (size_t i = 0; i < npts * 2; i++) {
        uint32_t w[N];
        memcpy(w, &raw[i * N], N * 4);
        memcpy(pw[i].v, w, N * 4);
        for (int s = 0; s < 52 * M - 32 * N; s++) /* the same value, R = 2^(52M) */
            dbl_mod<N>(w, mod);
        words_to_52<N, M>(pd[i].v, w);
    }
    int err = 0;
    std::vector<FW> ow4;
    std::vector<FD> od4;
    const float mw = run_madd<FW, madd_ec, 3>(pw, blocks, reps, ow, &err);
    const float mw4 = run_madd<FW, madd_ec, 4>(pw, blocks, reps, ow4, &err);
    const float md = run_madd<FD, madd_ec, 3>(pd, blocks, reps, od, &err);
    const float md4 = run_madd<FD, madd_ec, 4>(pd, blocks, reps, od4, &err);
    size_t bad = 0;
    for (size_t e = 0; e < S * 4; e++) {
        uint32_t u[N], v[N];
        memcpy(u, ow[e].v, N * 4);
        l52_to_words<N, M>(v, od[e].v);
        for (int k = 0; k < 2 && geq<N>(u, mod); k++)
            sub_p<N>(u, mod);
        for (int k = 0; k < 2 && geq<N>(v, mod); k++)
            sub_p<N>(v, mod);
        for (int s = 0; s < 52 * M - 32 * N; s++)
            dbl_mod<N>(u, mod);
        bad += memcmp(u, v, N * 4) != 0;
        bad += memcmp(&ow[e], &ow4[e], sizeof(FW)) != 0 || memcmp(&od[e], &od4[e], sizeof(FD)) != 0;
    }
    const double adds = (double)T * reps;
    printf("| %s | %.3f / %.3f G/s | %.3f / %.3f G/s | %.3f | %s |\n", name, adds / mw / 1e6, adds / mw4 / 1e6,
           adds / md / 1e6, adds / md4 / 1e6, (mw < mw4 ? mw : mw4) / (md < md4 ? md : md4), bad ? "DIFFER" : "same");
    if (bad)
        fprintf(stderr, "bench_ff: %s: %zu of %zu sampled coordinates differ\n", name, bad, S * 4);
    hyb_rows<FW, FD>(name, pw, blocks, reps, mw, ow, &err);
    return err || bad;
}

int main(int argc, char **argv)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
        printf("bench_ff: no cuda device: skipping\n");
        return 77;
    }
    const int reps = argc > 1 ? atoi(argv[1]) : 2000;
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    const unsigned blocks = (unsigned)prop.multiProcessorCount * 8;
    const uint32_t bn_p[8] = {0xd87cfd47, 0x3c208c16, 0x6871ca8d, 0x97816a91,
                              0x8181585d, 0xb85045b6, 0xe131a029, 0x30644e72};
    const uint32_t bls_p[12] = {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0,
                                0xf38512bf, 0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea};
    printf("%s, %u blocks x 256 threads, chains of %d products\n\n", prop.name, blocks, reps);
    printf("| field | mont_mul_eo | mont_mul_kara | ratio | | Fp2 lazy (schoolbook) | Fp2 lazy (Karatsuba halves) | ratio | "
           "| mont_mul_eo, modulus through a pointer |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    int bad = row<8>("BN254 Fp (8 words)", bn_p, CZK_BN_FP_NINV32, blocks, reps);
    bad |= row<12>("BLS12-381 Fp (12 words)", bls_p, CZK_FP_NINV32, blocks, reps);
    printf("\n| field | mont_mul_eo (32-bit words, modulus in constant memory) | dfma_mont_mul (52-bit limbs, DFMA) | speed ratio | |\n");
    printf("| --- | --- | --- | --- | --- |\n");
    bad |= row_dfma<8, 5>("BN254 Fp (5 limbs)", bn_p, CZK_BN_FP_NINV32, blocks, reps);
    bad |= row_dfma<12, 8>("BLS12-381 Fp (8 limbs)", bls_p, CZK_FP_NINV32, blocks, reps);
    const int mreps = argc > 2 ? atoi(argv[2]) : 400;
    printf("\n| G1 mixed additions (madd-2008-s), %u blocks x 128, %d per thread | ff.cuh, 3 / 4 blocks per SM | ff_dfma.cuh, 3 / 4 blocks per SM | speed ratio (best of each) | |\n",
           (unsigned)prop.multiProcessorCount * 16, mreps);
    printf("| --- | --- | --- | --- | --- |\n");
    bad |= row_madd<bn_fp_t, bn_fp52_t, 8, 5>("BN254", bn_p, (unsigned)prop.multiProcessorCount * 16, mreps);
    bad |= row_madd<fp_t, bls_fp52_t, 12, 8>("BLS12-381", bls_p, (unsigned)prop.multiProcessorCount * 16, mreps);
    printf("\n| G1 mixed additions with some products on the FP64 pipe (mul_fp64), 3 blocks per SM | products on "
           "the FP64 pipe | rate | speed ratio against ff.cuh | |\n| --- | --- | --- | --- | --- |\n%s",
           hyb_buf);
    return bad;
}
