/*
 * ctx.cu — device discovery, the per-GPU context (streams, events,
 * preallocated device vectors), host registration of pool memory, async
 * uploads with completion callbacks, error reporting, and the field
 * self-test kernels used by tests/cuda.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/internal.cuh"

extern "C" {
#include "common/base/log.h"
}

static __thread char czk_cuda_lasterr_[512];

int czk_cuda_fail_(const char *expr, const char *file, int line, cudaError_t e)
{
    snprintf(czk_cuda_lasterr_, sizeof czk_cuda_lasterr_, "cuda: %s failed at %s:%d: %s", expr, file,
             line, cudaGetErrorString(e));
    czk_err("%s", czk_cuda_lasterr_);
    switch (e) {
    case cudaErrorMemoryAllocation:
        return -ENOMEM;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
        return -ENODEV;
    case cudaErrorInvalidValue:
        return -EINVAL;
    default:
        return -EIO;
    }
}

int czk_cuda_errf_(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(czk_cuda_lasterr_, sizeof czk_cuda_lasterr_, fmt, ap);
    va_end(ap);
    czk_err("cuda: %s", czk_cuda_lasterr_);
    return code;
}

extern "C" const char *czk_cuda_last_error(void) { return czk_cuda_lasterr_; }

extern "C" int czk_cuda_device_count(int *count)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    *count = 0;
    if (e != cudaSuccess) {
        /* no driver / no device is the normal state of CI: remember, do not log as error */
        snprintf(czk_cuda_lasterr_, sizeof czk_cuda_lasterr_, "no cuda device: %s", cudaGetErrorString(e));
        cudaGetLastError();
        return -ENODEV;
    }
    if (n == 0) {
        snprintf(czk_cuda_lasterr_, sizeof czk_cuda_lasterr_, "no cuda device");
        return -ENODEV;
    }
    *count = n;
    return 0;
}

extern "C" int czk_cuda_device_info(int device, czk_cuda_dev_info *info)
{
    cudaDeviceProp p;
    memset(info, 0, sizeof *info);
    CZK_CU(cudaGetDeviceProperties(&p, device));
    snprintf(info->name, sizeof info->name, "%s", p.name);
    info->sm_count = p.multiProcessorCount;
    info->cc_major = p.major;
    info->cc_minor = p.minor;
    int clk = 0;
    if (cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, device) == cudaSuccess)
        info->clock_khz = clk;
    cudaGetLastError();
    CZK_CU(cudaSetDevice(device));
    CZK_CU(cudaMemGetInfo(&info->mem_free, &info->mem_total));
    return 0;
}

#ifndef CZK_CUDA_ARCH_LIST
#define CZK_CUDA_ARCH_LIST "?"
#endif

/* a kernel of this library: it loads where all of czkcuda's do (one CUDA_ARCHITECTURES for every file) */
static __global__ void k_arch_probe(void) {}

extern "C" int czk_cuda_kernel_check_(int device, const void *kernel)
{
    cudaFuncAttributes fa;
    cudaDeviceProp p;
    cudaError_t e;
    int n, rc;

    if ((rc = czk_cuda_device_count(&n)) < 0)
        return rc;
    if (device < 0 || device >= n)
        return czk_cuda_errf_(-ENODEV, "device %d requested, %d present", device, n);
    CZK_CU(cudaSetDevice(device));
    if ((e = cudaFuncGetAttributes(&fa, kernel)) == cudaSuccess)
        return 0;
    cudaGetLastError(); /* not sticky: the device stays usable for kernels that do load */
    if (e != cudaErrorNoKernelImageForDevice && e != cudaErrorInvalidDeviceFunction)
        return czk_cuda_fail_("cudaFuncGetAttributes", __FILE__, __LINE__, e);
    CZK_CU(cudaGetDeviceProperties(&p, device));
    return czk_cuda_errf_(-ENOEXEC, "GPU %d (%s) is sm_%d%d, and czk's GPU kernels were built for "
                          "CZK_CUDA_ARCH=\"%s\" only: build czk with cmake -DCZK_CUDA_ARCH=%d%d (%s)",
                          device, p.name, p.major, p.minor, CZK_CUDA_ARCH_LIST, p.major, p.minor,
                          cudaGetErrorString(e));
}

extern "C" int czk_cuda_device_check(int device)
{
    return czk_cuda_kernel_check_(device, (const void *)k_arch_probe);
}

extern "C" int czk_cuda_mem_info(int device, size_t *mem_free, size_t *mem_total)
{
    CZK_CU(cudaSetDevice(device));
    CZK_CU(cudaMemGetInfo(mem_free, mem_total));
    return 0;
}

extern "C" int czk_cuda_sync(czk_cuda_ctx *ctx)
{
    CZK_CU(cudaSetDevice(ctx->device));
    for (int i = 0; i < CZK_CUDA_NSTREAMS; i++)
        CZK_CU(cudaStreamSynchronize(ctx->st[i]));
    CZK_CU(cudaStreamSynchronize(ctx->copy));
    return 0;
}

static int ctx_alloc(czk_cuda_ctx *ctx, const czk_cuda_cfg *cfg)
{
    int rc = czk_cuda_device_check(cfg->device); /* counts the devices and range-checks cfg->device too */
    if (rc)
        return rc;
    if (cfg->max_log_n > CZK_CUDA_MAX_LOG_N || cfg->max_log_n < 1)
        return czk_cuda_errf_(-EINVAL, "max_log_n %u outside 1..%d", cfg->max_log_n, CZK_CUDA_MAX_LOG_N);
    ctx->device = cfg->device;
    ctx->max_log_n = cfg->max_log_n;
    ctx->max_msm_n = cfg->max_msm_n;
    ctx->enable_g2 = cfg->enable_g2;
    ctx->msm_tables = cfg->msm_tables;
    ctx->msm_table_dense_pm = cfg->msm_table_dense_pm;
    if (cfg->curves & ~(CZK_CUDA_CURVE_BLS12_381 | CZK_CUDA_CURVE_BN254))
        return czk_cuda_errf_(-EINVAL, "unknown curves in mask 0x%x", cfg->curves);
    ctx->curves = cfg->curves ? cfg->curves : CZK_CUDA_CURVE_BLS12_381;
    CZK_CU(cudaSetDevice(ctx->device));
    CZK_CU(cudaDeviceGetAttribute(&ctx->sm_count, cudaDevAttrMultiProcessorCount, ctx->device));
    for (int i = 0; i < CZK_CUDA_NSTREAMS; i++) {
        CZK_CU(cudaStreamCreateWithFlags(&ctx->st[i], cudaStreamNonBlocking));
        CZK_CU(cudaEventCreateWithFlags(&ctx->done[i], cudaEventDisableTiming));
    }
    CZK_CU(cudaStreamCreateWithFlags(&ctx->copy, cudaStreamNonBlocking));
    for (int i = 0; i < 4; i++)
        CZK_CU(cudaEventCreateWithFlags(&ctx->buf_ready[i], cudaEventDisableTiming));
    CZK_CU(cudaEventCreate(&ctx->cp0));
    CZK_CU(cudaEventCreate(&ctx->cp1));
    size_t n = (size_t)1 << cfg->max_log_n;
    for (int i = 0; i < 4; i++) {
        size_t len = n;
        if (i == CZK_CUDA_BUF_W && cfg->max_msm_n > len)
            len = cfg->max_msm_n;
        CZK_CU(cudaMalloc((void **)&ctx->buf[i], len * sizeof(fr_t)));
        ctx->buf_len[i] = len;
    }
    rc = czk_cuda_ntt_init_(ctx);
    if (rc)
        return rc;
    return czk_cuda_msm_init_(ctx);
}

extern "C" void czk_cuda_ctx_free(czk_cuda_ctx *ctx)
{
    if (!ctx)
        return;
    if (cudaSetDevice(ctx->device) == cudaSuccess)
        cudaDeviceSynchronize();
    czk_cuda_msm_free_(ctx);
    for (int i = 0; i < 4; i++) {
        cudaFree(ctx->buf[i]);
        if (ctx->buf_ready[i])
            cudaEventDestroy(ctx->buf_ready[i]);
    }
    czk_cuda_ntt_free_(ctx);
    cudaFree(ctx->ntt_tmp);
    cudaFree(ctx->test_buf);
    for (int i = 0; i < CZK_CUDA_NSTREAMS; i++) {
        if (ctx->st[i])
            cudaStreamDestroy(ctx->st[i]);
        if (ctx->done[i])
            cudaEventDestroy(ctx->done[i]);
    }
    if (ctx->copy)
        cudaStreamDestroy(ctx->copy);
    if (ctx->cp0)
        cudaEventDestroy(ctx->cp0);
    if (ctx->cp1)
        cudaEventDestroy(ctx->cp1);
    cudaGetLastError();
    free(ctx);
}

extern "C" int czk_cuda_ctx_new(czk_cuda_ctx **out, const czk_cuda_cfg *cfg)
{
    *out = NULL;
    czk_cuda_ctx *ctx = (czk_cuda_ctx *)calloc(1, sizeof *ctx);
    if (!ctx)
        return -ENOMEM;
    int rc = ctx_alloc(ctx, cfg);
    if (rc) {
        czk_cuda_ctx_free(ctx);
        return rc;
    }
    *out = ctx;
    return 0;
}

extern "C" size_t czk_cuda_buf_len(const czk_cuda_ctx *ctx, int buf)
{
    return (buf >= 0 && buf < 4) ? ctx->buf_len[buf] : 0;
}

extern "C" int czk_cuda_upload_async(czk_cuda_ctx *ctx, int buf, size_t off, const czk_fr *host, size_t n,
                                     czk_cuda_done_fn cb, void *arg)
{
    if (buf < 0 || buf > 3 || off > ctx->buf_len[buf] || n > ctx->buf_len[buf] - off)
        return czk_cuda_errf_(-EINVAL, "upload of %zu elements at %zu into buffer %d (length %zu)", n, off,
                              buf, buf >= 0 && buf < 4 ? ctx->buf_len[buf] : 0);
    CZK_CU(cudaSetDevice(ctx->device));
    /* the buffer may still be read by earlier compute: the copy stream waits for it */
    for (int i = 0; i < CZK_CUDA_NSTREAMS; i++) {
        CZK_CU(cudaEventRecord(ctx->done[i], ctx->st[i]));
        CZK_CU(cudaStreamWaitEvent(ctx->copy, ctx->done[i], 0));
    }
    if (!ctx->cp_open) {
        CZK_CU(cudaEventRecord(ctx->cp0, ctx->copy));
        ctx->cp_open = 1;
    }
    CZK_CU(cudaMemcpyAsync(ctx->buf[buf] + off, host, n * sizeof(fr_t), cudaMemcpyHostToDevice, ctx->copy));
    CZK_CU(cudaEventRecord(ctx->buf_ready[buf], ctx->copy));
    CZK_CU(cudaEventRecord(ctx->cp1, ctx->copy));
    if (cb)
        CZK_CU(cudaLaunchHostFunc(ctx->copy, cb, arg));
    return 0;
}

extern "C" int czk_cuda_copy_ms(czk_cuda_ctx *ctx, double *ms)
{
    float f = 0;

    if (!ctx->cp_open)
        return czk_cuda_errf_(-EINVAL, "no upload since the last czk_cuda_copy_ms");
    ctx->cp_open = 0;
    CZK_CU(cudaSetDevice(ctx->device));
    CZK_CU(cudaEventSynchronize(ctx->cp1));
    CZK_CU(cudaEventElapsedTime(&f, ctx->cp0, ctx->cp1));
    *ms = f;
    return 0;
}

extern "C" int czk_cuda_download(czk_cuda_ctx *ctx, int buf, size_t off, czk_fr *host, size_t n)
{
    if (buf < 0 || buf > 3 || off > ctx->buf_len[buf] || n > ctx->buf_len[buf] - off)
        return czk_cuda_errf_(-EINVAL, "download of %zu elements at %zu from buffer %d", n, off, buf);
    CZK_CU(cudaSetDevice(ctx->device));
    CZK_CU(cudaStreamWaitEvent(ctx->st[0], ctx->buf_ready[buf], 0));
    CZK_CU(cudaMemcpyAsync(host, ctx->buf[buf] + off, n * sizeof(fr_t), cudaMemcpyDeviceToHost, ctx->st[0]));
    CZK_CU(cudaStreamSynchronize(ctx->st[0]));
    return 0;
}

static int host_reg(void *p, size_t len, size_t chunk, int reg)
{
    if (chunk == 0)
        chunk = (size_t)1 << 30;
    char *c = (char *)p;
    for (size_t off = 0; off < len; off += chunk) {
        size_t l = len - off < chunk ? len - off : chunk;
        if (reg) {
            cudaError_t e = cudaHostRegister(c + off, l, cudaHostRegisterPortable);
            if (e != cudaSuccess) {
                int rc = czk_cuda_fail_("cudaHostRegister(chunk)", __FILE__, __LINE__, e);
                for (size_t u = 0; u < off; u += chunk)
                    cudaHostUnregister(c + u);
                cudaGetLastError();
                return rc;
            }
        } else {
            CZK_CU(cudaHostUnregister(c + off));
        }
    }
    return 0;
}

extern "C" int czk_cuda_host_register(void *p, size_t len, size_t chunk) { return host_reg(p, len, chunk, 1); }
extern "C" int czk_cuda_host_unregister(void *p, size_t len, size_t chunk) { return host_reg(p, len, chunk, 0); }

/* ---- self-test kernels ---- */

template <class F> __global__ void k_test_mul(F *r, const F *a, const F *b, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        F x = a[i], y = b[i], z;
        mul(z, x, y);
        r[i] = z;
    }
}

/* op 0: a + b, 1: a - b, 2: a^2 */
template <class F> __global__ void k_test_op(F *r, const F *a, const F *b, size_t n, int op)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        F x = a[i], y = b[i], z;
        if (op == 0)
            add(z, x, y);
        else if (op == 1)
            sub(z, x, y);
        else
            sqr(z, x);
        r[i] = z;
    }
}

static int test_scratch(czk_cuda_ctx *ctx, size_t bytes)
{
    if (ctx->test_len >= bytes)
        return 0;
    cudaFree(ctx->test_buf);
    ctx->test_buf = NULL;
    ctx->test_len = 0;
    CZK_CU(cudaMalloc(&ctx->test_buf, bytes));
    ctx->test_len = bytes;
    return 0;
}

/* op < 0: product, else k_test_op's op */
template <class F, class H>
static int run_test_mul(czk_cuda_ctx *ctx, H *r, const H *a, const H *b, size_t n, int op)
{
    static_assert(sizeof(F) == sizeof(H), "host and device layouts agree");
    CZK_CU(cudaSetDevice(ctx->device));
    int rc = test_scratch(ctx, 3 * n * sizeof(F));
    if (rc)
        return rc;
    F *d = (F *)ctx->test_buf;
    cudaStream_t s = ctx->st[0];
    CZK_CU(cudaMemcpyAsync(d + n, a, n * sizeof(F), cudaMemcpyHostToDevice, s));
    CZK_CU(cudaMemcpyAsync(d + 2 * n, b, n * sizeof(F), cudaMemcpyHostToDevice, s));
    unsigned blocks = (unsigned)((n + 127) / 128);
    if (op < 0)
        k_test_mul<F><<<blocks, 128, 0, s>>>(d, d + n, d + 2 * n, n);
    else
        k_test_op<F><<<blocks, 128, 0, s>>>(d, d + n, d + 2 * n, n, op);
    CZK_CU_LAUNCH("test kernel");
    CZK_CU(cudaMemcpyAsync(r, d, n * sizeof(F), cudaMemcpyDeviceToHost, s));
    CZK_CU(cudaStreamSynchronize(s));
    return 0;
}

extern "C" int czk_cuda_test_fr_mul(czk_cuda_ctx *ctx, czk_fr *r, const czk_fr *a, const czk_fr *b, size_t n)
{
    return run_test_mul<fr_t>(ctx, r, a, b, n, -1);
}
extern "C" int czk_cuda_test_fp_mul(czk_cuda_ctx *ctx, czk_fp *r, const czk_fp *a, const czk_fp *b, size_t n)
{
    return run_test_mul<fp_t>(ctx, r, a, b, n, -1);
}
extern "C" int czk_cuda_test_fp2_mul(czk_cuda_ctx *ctx, czk_fp2 *r, const czk_fp2 *a, const czk_fp2 *b, size_t n)
{
    return run_test_mul<fp2_t>(ctx, r, a, b, n, -1);
}
extern "C" int czk_cuda_test_fp_addsub(czk_cuda_ctx *ctx, czk_fp *r, const czk_fp *a, const czk_fp *b, size_t n,
                                       int op)
{
    return run_test_mul<fp_t>(ctx, r, a, b, n, op ? 1 : 0);
}
extern "C" int czk_cuda_test_bn254_fr_mul(czk_cuda_ctx *ctx, czk_bn254_fr *r, const czk_bn254_fr *a,
                                          const czk_bn254_fr *b, size_t n)
{
    return run_test_mul<bn_fr_t>(ctx, r, a, b, n, -1);
}
extern "C" int czk_cuda_test_bn254_fp_mul(czk_cuda_ctx *ctx, czk_bn254_fp *r, const czk_bn254_fp *a,
                                          const czk_bn254_fp *b, size_t n)
{
    return run_test_mul<bn_fp_t>(ctx, r, a, b, n, -1);
}
extern "C" int czk_cuda_test_bn254_fp2_mul(czk_cuda_ctx *ctx, czk_bn254_fp2 *r, const czk_bn254_fp2 *a,
                                           const czk_bn254_fp2 *b, size_t n)
{
    return run_test_mul<bn_fp2_t>(ctx, r, a, b, n, -1);
}
extern "C" int czk_cuda_test_bn254_fp_op(czk_cuda_ctx *ctx, czk_bn254_fp *r, const czk_bn254_fp *a,
                                         const czk_bn254_fp *b, size_t n, int op)
{
    if (op < 0 || op > 2)
        return czk_cuda_errf_(-EINVAL, "test op %d", op);
    return run_test_mul<bn_fp_t>(ctx, r, a, b, n, op);
}
extern "C" int czk_cuda_test_bn254_fr_op(czk_cuda_ctx *ctx, czk_bn254_fr *r, const czk_bn254_fr *a,
                                         const czk_bn254_fr *b, size_t n, int op)
{
    if (op < 0 || op > 2)
        return czk_cuda_errf_(-EINVAL, "test op %d", op);
    return run_test_mul<bn_fr_t>(ctx, r, a, b, n, op);
}
