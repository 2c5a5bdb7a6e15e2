/*
 * ec_kernels.cu — the device point arithmetic of backend/cuda/ec.cuh on
 * chosen operands for test_cuda_ec.c: every branch of the XYZZ addition, the
 * mixed addition and the doubling, taken by different threads of one warp
 * at one call site each (the threads diverge inside the addition), for the
 * four groups (BLS12-381 and BN254, G1 and G2).  One call site per operation
 * keeps the inlined G2 code small enough to compile quickly.
 */
#include <cuda_runtime.h>

#include "backend/cuda/ec.cuh"
#include "tests/cuda/ec_kernels.h"

/* thread t, kind k = t % TU_EC_KINDS: the operands of its addition a + b,
 * mixed addition m + q and doubling of d (the results in ec_kernels.h).
 * X is P with ZZ = l^2, ZZZ = l^3 for l = R.x (coordinates unlike lift(P)). */
template <class F> __global__ void k_ec_kinds(const aff_t<F> *in, jac_t<F> *out)
{
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    const aff_t<F> P = in[0], R = in[1];
    aff_t<F> nP = P;
    neg(nP.y, P.y);
    xyzz_t<F> L, X, I, NX;
    L.x = P.x;
    L.y = P.y;
    set_one(L.zz);
    set_one(L.zzz);
    sqr(X.zz, R.x);
    mul(X.zzz, X.zz, R.x);
    mul(X.x, P.x, X.zz);
    mul(X.y, P.y, X.zzz);
    xyzz_set_inf(I);
    NX = X;
    neg(NX.y, X.y);
    xyzz_t<F> a, b, m, d;
    aff_t<F> q;
    xyzz_t<F> LR;
    LR.x = R.x;
    LR.y = R.y;
    LR.zz = L.zz;
    LR.zzz = L.zzz;
    switch (t % TU_EC_KINDS) {
    case 0: a = L, b = L, m = X, q = P, d = X; break;    /* 2P (equal coordinates), 2P, 2P */
    case 1: a = X, b = L, m = X, q = R, d = L; break;    /* 2P (different coordinates), P + R, 2P */
    case 2: a = X, b = NX, m = X, q = nP, d = I; break;  /* infinity, infinity, infinity */
    case 3: a = L, b = LR, m = I, q = P, d = NX; break;  /* P + R, P, -2P */
    case 4: a = X, b = X, m = L, q = P, d = X; break;    /* 2P (the same point twice), 2P, 2P */
    case 5: a = I, b = X, m = NX, q = P, d = I; break;   /* P, infinity, infinity */
    case 6: a = X, b = I, m = L, q = R, d = L; break;    /* P, P + R, 2P */
    default: a = I, b = I, m = I, q = nP, d = I; break;  /* infinity, -P, infinity */
    }
    xyzz_add(a, b);
    xyzz_add_aff(m, q);
    xyzz_dbl(d);
    xyzz_to_jac(out[3 * t], a);
    xyzz_to_jac(out[3 * t + 1], m);
    xyzz_to_jac(out[3 * t + 2], d);
}

template <class F> static int run(const void *pr, void *out)
{
    aff_t<F> *din = NULL;
    jac_t<F> *dout = NULL;
    const size_t nout = 3 * TU_EC_THREADS;
    int rc = -1;
    if (cudaMalloc(&din, 2 * sizeof(aff_t<F>)) != cudaSuccess || cudaMalloc(&dout, nout * sizeof(jac_t<F>)) != cudaSuccess)
        goto out;
    if (cudaMemcpy(din, pr, 2 * sizeof(aff_t<F>), cudaMemcpyHostToDevice) != cudaSuccess)
        goto out;
    k_ec_kinds<F><<<TU_EC_THREADS / 64, 64>>>(din, dout);
    if (cudaDeviceSynchronize() != cudaSuccess)
        goto out;
    if (cudaMemcpy(out, dout, nout * sizeof(jac_t<F>), cudaMemcpyDeviceToHost) != cudaSuccess)
        goto out;
    rc = 0;
out:
    cudaFree(din);
    cudaFree(dout);
    return rc;
}

extern "C" int tu_ec_kinds(int curve_bn254, int g2, const void *pr, void *out)
{
    if (curve_bn254)
        return g2 ? run<bn_fp2_t>(pr, out) : run<bn_fp_t>(pr, out);
    return g2 ? run<fp2_t>(pr, out) : run<fp_t>(pr, out);
}

extern "C" const char *tu_ec_error(void) { return cudaGetErrorString(cudaGetLastError()); }
