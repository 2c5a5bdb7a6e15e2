/*
 * genmul.cu — many multiples of one point on the device: out[i] = k[i] P,
 * for `czk setup` (the generators times the key's secret-derived scalars,
 * common/groth16/setup.h).
 *
 * A table of d 2^(8j) P for the 32 byte positions j and d = 1..255 (8160
 * points, built on the device: double-and-add per entry, then affine) makes
 * each multiple 32 mixed XYZZ additions, one per byte of the scalar, then
 * affine with one inversion per TAB_BATCH points (k_tab_norm).  The scalars
 * go through the device in chunks of CHUNK; the device memory is the call's
 * own (allocated and freed here, none of a context's).
 *
 * Variable time: the table entry read depends on the scalar's bytes.  The
 * caller decides whether that is acceptable (a development setup's secrets
 * are not secret from whoever runs it; setup.h).  The scalars' device copy
 * is zeroed before it is freed.
 */
#include "backend/cuda/msm_kernels.cuh"

#define GM_ROWS 32 /* byte positions of a 256-bit scalar */
#define GM_ENTRIES 256
#define GM_TABLE (GM_ROWS * GM_ENTRIES)
#define GM_CHUNK ((size_t)1 << 20)

/* entry (j, d) = d 2^(8j) P in XYZZ (d = 0: infinity) */
template <class F> __global__ void k_gm_table(const aff_t<F> *base, xyzz_t<F> *out)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= GM_TABLE)
        return;
    const unsigned j = i / GM_ENTRIES, d = i % GM_ENTRIES;
    const aff_t<F> p = *base;
    xyzz_t<F> b, acc;
    b.x = p.x;
    b.y = p.y;
    set_one(b.zz);
    set_one(b.zzz);
    for (unsigned k = 0; k < 8 * j; k++)
        xyzz_dbl(b);
    xyzz_set_inf(acc);
    for (int bit = 7; bit >= 0; bit--) {
        xyzz_dbl(acc);
        if ((d >> bit) & 1)
            xyzz_add(acc, b);
    }
    out[i] = acc;
}

/* out[i] = k[i] P for Montgomery-form scalars k (of the curve's Fr R) */
template <class F, class R>
__global__ void __launch_bounds__(128) k_gm_mul(const R *k, uint32_t n, const aff_t<F> *table, xyzz_t<F> *out)
{
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    R s;
    from_mont(s, k[i]);
    xyzz_t<F> acc;
    xyzz_set_inf(acc);
    for (unsigned j = 0; j < GM_ROWS; j++) {
        const unsigned d = (s.v[j / 4] >> (8 * (j % 4))) & 0xffu;
        if (d)
            xyzz_add_aff(acc, ld_global(table + j * GM_ENTRIES + d));
    }
    st_global(out + i, acc);
}

template <class F, class R>
static int gen_mul(int device, const void *base, const void *k, size_t n, void *out)
{
    const size_t chunk = n < GM_CHUNK ? n : GM_CHUNK, scr_n = chunk > GM_TABLE ? chunk : GM_TABLE;
    const size_t pt = sizeof(aff_t<F>);
    aff_t<F> *d_base = NULL, *d_table = NULL, *d_out = NULL;
    xyzz_t<F> *d_scr = NULL;
    R *d_k = NULL;
    cudaStream_t s = NULL;
    cudaError_t e;
    int rc = 0;

    if (n == 0)
        return 0;
    if ((e = cudaSetDevice(device)) != cudaSuccess)
        return czk_cuda_errf_(-ENODEV, "fixed-base multiples: device %d: %s", device, cudaGetErrorString(e));
    if ((e = cudaMalloc(&d_base, pt)) != cudaSuccess || (e = cudaMalloc(&d_table, GM_TABLE * pt)) != cudaSuccess ||
        (e = cudaMalloc(&d_out, chunk * pt)) != cudaSuccess ||
        (e = cudaMalloc(&d_scr, scr_n * sizeof(xyzz_t<F>))) != cudaSuccess ||
        (e = cudaMalloc(&d_k, chunk * sizeof(R))) != cudaSuccess) {
        rc = czk_cuda_errf_(-ENOMEM, "fixed-base multiples: %zu MiB of device memory: %s",
                            (pt + GM_TABLE * pt + chunk * (pt + sizeof(R)) + scr_n * sizeof(xyzz_t<F>)) >> 20,
                            cudaGetErrorString(e));
        cudaGetLastError();
        goto out;
    }
    if ((e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) != cudaSuccess)
        goto fail;
    if ((e = cudaMemcpyAsync(d_base, base, pt, cudaMemcpyHostToDevice, s)) != cudaSuccess)
        goto fail;
    k_gm_table<F><<<grid_for(GM_TABLE, 128), 128, 0, s>>>(d_base, d_scr);
    k_tab_norm<F><<<grid_for(GM_TABLE / TAB_BATCH, 128), 128, 0, s>>>(d_scr, GM_TABLE, GM_TABLE / TAB_BATCH,
                                                                      d_table);
    if ((e = cudaGetLastError()) != cudaSuccess)
        goto fail;
    for (size_t off = 0; off < n; off += chunk) {
        const uint32_t cnt = (uint32_t)(n - off < chunk ? n - off : chunk);
        const uint32_t th = (cnt + TAB_BATCH - 1) / TAB_BATCH;
        if ((e = cudaMemcpyAsync(d_k, (const R *)k + off, cnt * sizeof(R), cudaMemcpyHostToDevice, s)) != cudaSuccess)
            goto fail;
        k_gm_mul<F, R><<<grid_for(cnt, 128), 128, 0, s>>>(d_k, cnt, d_table, d_scr);
        k_tab_norm<F><<<grid_for(th, 128), 128, 0, s>>>(d_scr, cnt, th, d_out);
        if ((e = cudaGetLastError()) != cudaSuccess ||
            (e = cudaMemcpyAsync((aff_t<F> *)out + off, d_out, cnt * pt, cudaMemcpyDeviceToHost, s)) != cudaSuccess ||
            (e = cudaStreamSynchronize(s)) != cudaSuccess)
            goto fail;
    }
    if ((e = cudaMemsetAsync(d_k, 0, chunk * sizeof(R), s)) != cudaSuccess ||
        (e = cudaMemsetAsync(d_scr, 0, scr_n * sizeof(xyzz_t<F>), s)) != cudaSuccess ||
        (e = cudaStreamSynchronize(s)) != cudaSuccess)
        goto fail;
    goto out;
fail:
    rc = czk_cuda_fail_("fixed-base multiples", __FILE__, __LINE__, e);
out:
    if (s)
        cudaStreamDestroy(s);
    cudaFree(d_base);
    cudaFree(d_table);
    cudaFree(d_out);
    cudaFree(d_scr);
    cudaFree(d_k);
    return rc;
}

extern "C" int czk_cuda_gen_mul(int device, unsigned curve, int g2, const void *base, const void *k_mont, size_t n,
                                void *out)
{
    if (!base || (n && (!k_mont || !out)))
        return czk_cuda_errf_(-EINVAL, "fixed-base multiples: NULL argument");
    if (curve == CZK_CUDA_CURVE_BLS12_381)
        return g2 ? gen_mul<fp2_t, fr_t>(device, base, k_mont, n, out) : gen_mul<fp_t, fr_t>(device, base, k_mont, n, out);
    if (curve == CZK_CUDA_CURVE_BN254)
        return g2 ? gen_mul<bn_fp2_t, bn_fr_t>(device, base, k_mont, n, out)
                  : gen_mul<bn_fp_t, bn_fr_t>(device, base, k_mont, n, out);
    return czk_cuda_errf_(-EINVAL, "fixed-base multiples: unknown curve %u", curve);
}
