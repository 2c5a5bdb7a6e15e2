/*
 * bench_ff.cu — throughput of the device Montgomery products of
 * backend/cuda/ff.cuh on the H200 (docs/bench-gpu.md, "Field products"):
 * per field width, the even/odd CIOS product (mont_mul_eo, what mul() runs)
 * against the one-level Karatsuba product (mont_mul_kara), and the lazily
 * reduced Fp2 product (fp2_mul_lazy) with its three wide products by
 * schoolbook (mul_wide_eo) or by Karatsuba (mul_wide_kara).  Every thread
 * runs independent chains x = x y from the same random inputs for each
 * variant; the results of the two variants of a row must agree word for
 * word (printed as "same").  Prints one table; exit 0, or 1 when a row's
 * variants disagree or CUDA fails, 77 without a GPU.
 *
 * bench_ff [reps]: chain length per thread (default 2000).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>

#include "backend/cuda/ff.cuh"

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

/* V 0: mont_mul_eo, 1: mont_mul_kara (four chains of products per thread);
 * 2: Fp2 lazy schoolbook, 3: Fp2 lazy Karatsuba (two chains of Fp2 products) */
template <int N, int V> __global__ void __launch_bounds__(256) k_chain(uint32_t *io, const uint32_t *mod, uint32_t ninv, int reps)
{
    const size_t t = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
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
        if (V == 0) {
#pragma unroll
            for (int c = 0; c < 4; c++)
                mont_mul_eo<N>(x[c], x[c], y, mod, ninv);
        } else if (V == 1) {
#pragma unroll
            for (int c = 0; c < 4; c++)
                mont_mul_kara<N>(x[c], x[c], y, mod, ninv);
        } else {
            fp2_lazy<N, V == 3>(x[0], x[1], x[0], x[1], y, x[2], mod, ninv);
            fp2_lazy<N, V == 3>(x[2], x[3], x[2], x[3], y, x[0], mod, ninv);
        }
    }
#pragma unroll
    for (int c = 0; c < 4; c++)
#pragma unroll
        for (int j = 0; j < N; j++)
            io[(t * 5 + c) * N + j] = x[c][j];
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
template <int N, int V>
static float run(const uint32_t *hmod, uint32_t ninv, unsigned blocks, int reps, std::vector<uint32_t> &out, int *err)
{
    const size_t T = (size_t)blocks * 256, words = T * 5 * N;
    std::vector<uint32_t> h(words);
    uint64_t rs = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < words; i++) {
        rs ^= rs << 13;
        rs ^= rs >> 7;
        rs ^= rs << 17;
        h[i] = (uint32_t)rs;
    }
    for (size_t e = 0; e < T * 5; e++) /* every input below p */
        h[e * N + N - 1] &= hmod[N - 1] >> 1;
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
    std::vector<uint32_t> o0, o1, o2, o3;
    int err = 0;
    const double prods = (double)blocks * 256 * reps * 4, f2 = (double)blocks * 256 * reps * 2;
    float m0 = run<N, 0>(mod, ninv, blocks, reps, o0, &err), m1 = run<N, 1>(mod, ninv, blocks, reps, o1, &err);
    float m2 = run<N, 2>(mod, ninv, blocks, reps, o2, &err), m3 = run<N, 3>(mod, ninv, blocks, reps, o3, &err);
    printf("| %s | %.2f G/s | %.2f G/s | %.3f | %s | %.2f G/s | %.2f G/s | %.3f | %s |\n", name, prods / m0 / 1e6,
           prods / m1 / 1e6, m1 / m0, o0 == o1 ? "same" : "DIFFER", f2 / m2 / 1e6, f2 / m3 / 1e6, m3 / m2,
           o2 == o3 ? "same" : "DIFFER");
    return err || o0 != o1 || o2 != o3;
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
    printf("| field | mont_mul_eo | mont_mul_kara | ratio | | Fp2 lazy (schoolbook) | Fp2 lazy (Karatsuba halves) | ratio | |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    int bad = row<8>("BN254 Fp (8 words)", bn_p, CZK_BN_FP_NINV32, blocks, reps);
    bad |= row<12>("BLS12-381 Fp (12 words)", bls_p, CZK_FP_NINV32, blocks, reps);
    return bad;
}
