/*
 * ec_kernels.cu — the device point arithmetic of backend/cuda/ec.cuh on
 * chosen operands for test_cuda_ec.c: every branch of the XYZZ addition, the
 * mixed addition and the doubling, taken by different threads of one warp
 * at one call site each (the threads diverge inside the addition), for the
 * four groups (BLS12-381 and BN254, G1 and G2), and for G2 the same with
 * the lane-pair arithmetic of ec_pair.cuh (the first level's mixed addition,
 * the window reduction's addition and doubling), pairs of one warp taking
 * different branches.  One call site per operation keeps the inlined G2 code
 * small enough to compile quickly.
 */
#include <cuda_runtime.h>

#include "backend/cuda/ec.cuh"
#include "backend/cuda/ec_pair.cuh"
#include "tests/cuda/ec_kernels.h"

/* the operands of kind k (thread t runs kind t % TU_EC_KINDS): its addition
 * a + b, mixed addition m + q and doubling of d (the results in
 * ec_kernels.h).  X is P with ZZ = l^2, ZZZ = l^3 for l = R.x (coordinates
 * unlike lift(P)). */
template <class F> struct ec_ops {
    xyzz_t<F> a, b, m, d;
    aff_t<F> q;
};

template <class F> static __device__ __forceinline__ ec_ops<F> ec_kind(const aff_t<F> *in, unsigned k)
{
    ec_ops<F> o;
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
    xyzz_t<F> &a = o.a, &b = o.b, &m = o.m, &d = o.d;
    aff_t<F> &q = o.q;
    xyzz_t<F> LR;
    LR.x = R.x;
    LR.y = R.y;
    LR.zz = L.zz;
    LR.zzz = L.zzz;
    switch (k) {
    case 0: a = L, b = L, m = X, q = P, d = X; break;    /* 2P (equal coordinates), 2P, 2P */
    case 1: a = X, b = L, m = X, q = R, d = L; break;    /* 2P (different coordinates), P + R, 2P */
    case 2: a = X, b = NX, m = X, q = nP, d = I; break;  /* infinity, infinity, infinity */
    case 3: a = L, b = LR, m = I, q = P, d = NX; break;  /* P + R, P, -2P */
    case 4: a = X, b = X, m = L, q = P, d = X; break;    /* 2P (the same point twice), 2P, 2P */
    case 5: a = I, b = X, m = NX, q = P, d = I; break;   /* P, infinity, infinity */
    case 6: a = X, b = I, m = L, q = R, d = L; break;    /* P, P + R, 2P */
    default: a = I, b = I, m = I, q = nP, d = I; break;  /* infinity, -P, infinity */
    }
    return o;
}

template <class F> __global__ void k_ec_kinds(const aff_t<F> *in, jac_t<F> *out)
{
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    ec_ops<F> o = ec_kind(in, t % TU_EC_KINDS);
    xyzz_t<F> &a = o.a, &m = o.m, &d = o.d;
    xyzz_add(a, o.b);
    xyzz_add_aff(m, o.q);
    xyzz_dbl(d);
    xyzz_to_jac(out[3 * t], a);
    xyzz_to_jac(out[3 * t + 1], m);
    xyzz_to_jac(out[3 * t + 2], d);
}

/* this lane's component of a G2 value */
template <class B> static __device__ __forceinline__ B comp(const p2ctx &k, const fp2x<B> &x) { return k.c ? x.c1 : x.c0; }
template <class B> static __device__ __forceinline__ xyzz_t<B> comp(const p2ctx &k, const xyzz_t<fp2x<B>> &p)
{
    xyzz_t<B> r;
    r.x = comp(k, p.x);
    r.y = comp(k, p.y);
    r.zz = comp(k, p.zz);
    r.zzz = comp(k, p.zzz);
    return r;
}

/* G2 on lane pairs: pair t (threads 2t, 2t+1) runs kind t % TU_EC_KINDS and
 * stores its three XYZZ results into tmp[3t..3t+2] */
template <class B> __global__ void k_ec_kinds_p2(const aff_t<fp2x<B>> *in, xyzz_t<fp2x<B>> *tmp)
{
    const unsigned t = (blockIdx.x * blockDim.x + threadIdx.x) >> 1;
    const p2ctx k = p2_ctx();
    const ec_ops<fp2x<B>> o = ec_kind(in, t % TU_EC_KINDS);
    xyzz_t<B> a = comp(k, o.a), b = comp(k, o.b), m = comp(k, o.m), d = comp(k, o.d);
    aff_t<B> q;
    q.x = comp(k, o.q.x);
    q.y = comp(k, o.q.y);
    p2_xyzz_add(k, a, b);
    if (!p2_aff_is_inf(k, q)) /* as the first level: an infinite base is skipped */
        p2_xyzz_add_aff<2>(k, m, q);
    p2_xyzz_dbl(k, d);
    p2_st_xyzz(k, tmp, 3 * t, a);
    p2_st_xyzz(k, tmp, 3 * t + 1, m);
    p2_st_xyzz(k, tmp, 3 * t + 2, d);
}

template <class F> __global__ void k_ec_to_jac(const xyzz_t<F> *in, size_t n, jac_t<F> *out)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        xyzz_to_jac(out[i], in[i]);
}

/* the two operands pr to the device, launch(din, dtmp, dout) with dtmp
 * (XYZZ results, converted into dout after it) when with_tmp, the 3 x
 * TU_EC_THREADS Jacobian results back to out */
template <class F, class Launch> static int run_with(const void *pr, void *out, bool with_tmp, Launch launch)
{
    aff_t<F> *din = NULL;
    xyzz_t<F> *dtmp = NULL;
    jac_t<F> *dout = NULL;
    const size_t nout = 3 * TU_EC_THREADS;
    int rc = -1;
    if (cudaMalloc(&din, 2 * sizeof(aff_t<F>)) != cudaSuccess || cudaMalloc(&dout, nout * sizeof(jac_t<F>)) != cudaSuccess ||
        (with_tmp && cudaMalloc(&dtmp, nout * sizeof(xyzz_t<F>)) != cudaSuccess))
        goto out;
    if (cudaMemcpy(din, pr, 2 * sizeof(aff_t<F>), cudaMemcpyHostToDevice) != cudaSuccess)
        goto out;
    launch(din, dtmp, dout);
    if (with_tmp)
        k_ec_to_jac<F><<<(unsigned)((nout + 63) / 64), 64>>>(dtmp, nout, dout);
    if (cudaDeviceSynchronize() != cudaSuccess)
        goto out;
    if (cudaMemcpy(out, dout, nout * sizeof(jac_t<F>), cudaMemcpyDeviceToHost) != cudaSuccess)
        goto out;
    rc = 0;
out:
    cudaFree(din);
    cudaFree(dtmp);
    cudaFree(dout);
    return rc;
}

template <class F> static int run(const void *pr, void *out)
{
    return run_with<F>(pr, out, false, [](const aff_t<F> *din, xyzz_t<F> *, jac_t<F> *dout) {
        k_ec_kinds<F><<<TU_EC_THREADS / 64, 64>>>(din, dout);
    });
}

template <class B> static int run_p2(const void *pr, void *out)
{
    typedef fp2x<B> F;
    return run_with<F>(pr, out, true, [](const aff_t<F> *din, xyzz_t<F> *dtmp, jac_t<F> *) {
        k_ec_kinds_p2<B><<<2 * TU_EC_THREADS / 64, 64>>>(din, dtmp);
    });
}

extern "C" int tu_ec_kinds(int curve_bn254, int g2, const void *pr, void *out)
{
    if (g2 == 2)
        return curve_bn254 ? run_p2<bn_fp_t>(pr, out) : run_p2<fp_t>(pr, out);
    if (curve_bn254)
        return g2 ? run<bn_fp2_t>(pr, out) : run<bn_fp_t>(pr, out);
    return g2 ? run<fp2_t>(pr, out) : run<fp_t>(pr, out);
}

extern "C" const char *tu_ec_error(void) { return cudaGetErrorString(cudaGetLastError()); }
