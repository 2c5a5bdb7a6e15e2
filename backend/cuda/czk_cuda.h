/*
 * czk_cuda.h — the CUDA backend of czk behind a plain C interface: NTT-based
 * h computation and G1/G2 multi-scalar multiplication on one GPU.
 *
 * No CUDA type appears here; callers (gpud, tests, benchmarks) are C11.
 * Every function returns 0 or -errno: -ENODEV when no usable GPU exists,
 * -ENOMEM when device memory or a preallocated capacity is exhausted,
 * -EINVAL for bad arguments, -EIO for any other CUDA failure.  Failures are
 * logged once where detected (common/base/log.h) and the last message is kept
 * per thread for czk_cuda_last_error().
 *
 * Data layout is the host contract (common/crypto/field.h, curve.h; for BN254
 * bn254_field.h, bn254_curve.h) byte for byte: Fr in Montgomery form for NTT
 * inputs, MSM scalars in STANDARD form, affine bases in the zkey layout
 * (all-zero bytes = infinity, skipped).  Both curves' Fr elements are 32
 * bytes, so the context's buffers hold either: a czk_bn254_fr array goes
 * through czk_cuda_upload_async / czk_cuda_download as (czk_fr *).
 *
 * Threading: a context is used by one host thread at a time (gpud's GPU
 * worker); different contexts may be used concurrently.  All device memory a
 * context needs is allocated by czk_cuda_ctx_new, sized by its config; the
 * hot path allocates nothing.
 */
#ifndef CZK_CUDA_H
#define CZK_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "common/crypto/bn254_curve.h"
#include "common/crypto/curve.h"
#include "common/crypto/field.h"

typedef struct czk_cuda_ctx czk_cuda_ctx;
typedef struct czk_cuda_bases czk_cuda_bases;

typedef struct czk_cuda_dev_info {
    char name[256];
    int sm_count;
    int cc_major, cc_minor;
    int clock_khz;
    size_t mem_total, mem_free;
} czk_cuda_dev_info;

/* number of CUDA devices; -ENODEV when the driver reports none or fails */
int czk_cuda_device_count(int *count);
int czk_cuda_device_info(int device, czk_cuda_dev_info *info);
/* 0 when device can run this build's kernels.  -ENOEXEC when it cannot (its
 * architecture is not among those czkcuda was built for, CZK_CUDA_ARCH, and
 * no PTX in the build compiles for it), with a message naming the GPU, its
 * sm_XY, the build's architectures and the cmake option that fixes it;
 * -ENODEV for a device that does not exist.  czk_cuda_ctx_new checks this
 * first.  czk_cuda_kernel_check_ is the same check of any kernel (tests). */
int czk_cuda_device_check(int device);
int czk_cuda_kernel_check_(int device, const void *kernel);
/* free and total memory of device (cudaMemGetInfo only: cheap enough for a
 * once-a-second gauge, unlike the properties czk_cuda_device_info reads) */
int czk_cuda_mem_info(int device, size_t *mem_free, size_t *mem_total);
/* text of the last failure on this thread ("" when none) */
const char *czk_cuda_last_error(void);

typedef struct czk_cuda_cfg {
    int device;          /* CUDA device index */
    unsigned max_log_n;  /* largest NTT domain, 2^max_log_n (<= CZK_CUDA_MAX_LOG_N) */
    size_t max_msm_n;    /* largest MSM size (G1 and G2) */
    int enable_g2;       /* size MSM scratch for G2 as well (twice the bucket memory) */
    unsigned curves;     /* CZK_CUDA_CURVE_* mask of the curves served; 0: BLS12-381 only */
    int msm_tables;      /* size the MSM workspace for full fixed-base tables of up to max_msm_n
                            points as well (more bucket memory); without, an MSM over a table
                            the workspace cannot hold runs without it */
    unsigned msm_table_dense_pm; /* an MSM over bases with a table uses it only when at least this
                            many per mille of its scalars exceed 1 (counted on the device first);
                            sparser ones run plain, which is faster for them.  0: always the
                            table; CZK_CUDA_TABLE_DENSE_PM: the backend's choice */
} czk_cuda_cfg;

/* the share of scalars above 1 (per mille) from which the backend uses a
 * fixed-base table: measured at 2^24 (docs/bench-gpu.md, "Sparse scalars"),
 * tables pay from about 12% for G1 and 40% for G2; one threshold for both
 * keeps every MSM of a dense partition (the usual case) and of a hash
 * circuit's (about 10%) on its faster side */
#define CZK_CUDA_TABLE_DENSE_PM 500u

/* A context holds NTT twiddles only for the curves in cfg.curves (BN254's
 * up to 2^min(max_log_n, 27), its Fr having 2-adicity 28), 2 * 2^max_log_n
 * elements per curve: one table per device, curve and size, shared by all
 * the contexts that use it; the MSM workspace is shared, sized for the
 * largest point of the curves served.
 * Calls for a curve the context does not serve fail with -EINVAL. */
#define CZK_CUDA_CURVE_BLS12_381 1u
#define CZK_CUDA_CURVE_BN254 2u

#define CZK_CUDA_MAX_LOG_N 28

int czk_cuda_ctx_new(czk_cuda_ctx **ctx, const czk_cuda_cfg *cfg);
void czk_cuda_ctx_free(czk_cuda_ctx *ctx);
/* wait for everything queued on the context */
int czk_cuda_sync(czk_cuda_ctx *ctx);

/* Device vectors owned by the context, each of 2^max_log_n Fr elements
 * (W: max(max_msm_n, 2^max_log_n)). */
enum czk_cuda_buf { CZK_CUDA_BUF_A = 0, CZK_CUDA_BUF_B = 1, CZK_CUDA_BUF_C = 2, CZK_CUDA_BUF_W = 3 };
size_t czk_cuda_buf_len(const czk_cuda_ctx *ctx, int buf);

/* Completion callback: runs on a CUDA-owned thread once the work before it
 * is done; it must not call into CUDA (wake an event loop instead). */
typedef void (*czk_cuda_done_fn)(void *arg);

/* Queue an asynchronous host-to-device copy of n Fr elements into buffer
 * buf at element offset off, on the context's copy stream; cb (may be NULL)
 * runs when the copy has completed, so the host memory may be reused from
 * then on.  Host memory should be registered (czk_cuda_host_register) for
 * full PCIe speed.  Later compute on that buffer waits for the copy. */
int czk_cuda_upload_async(czk_cuda_ctx *ctx, int buf, size_t off, const czk_fr *host, size_t n,
                          czk_cuda_done_fn cb, void *arg);
/* Device time of the uploads queued since the previous call: from the start of
 * the first to the end of the last (CUDA events on the copy stream, so only
 * the DMA itself, without queueing or callback latency).  Waits for the last
 * upload.  -EINVAL when nothing was uploaded since the previous call. */
int czk_cuda_copy_ms(czk_cuda_ctx *ctx, double *ms);
/* synchronous device-to-host copy of n elements of buffer buf from offset off */
int czk_cuda_download(czk_cuda_ctx *ctx, int buf, size_t off, czk_fr *host, size_t n);

/* Page-lock a host region for DMA, in chunks of at most chunk bytes (0: 1 GiB)
 * so huge pools do not hit driver limits.  Unregister with the same arguments. */
int czk_cuda_host_register(void *p, size_t len, size_t chunk);
int czk_cuda_host_unregister(void *p, size_t len, size_t chunk);

/* ---- NTT (snarkjs roots: non-residue 5) ---- */

/* In-place on buffer A, natural order, Montgomery form: forward NTT
 * (inverse != 0: inverse NTT including 1/n). */
int czk_cuda_ntt_dev(czk_cuda_ctx *ctx, unsigned log_n, int inverse);
/* In-place on buffer A: iNTT, times w_{2n}^i, NTT (czk_ntt_to_odd_coset) */
int czk_cuda_ntt_to_odd_coset_dev(czk_cuda_ctx *ctx, unsigned log_n);
/* h from a, b, c already in buffers A, B, C (Montgomery, natural order,
 * evaluations on the size-2^log_n domain): each goes to the odd coset, then
 * h_j = a_j b_j - c_j, converted to STANDARD form, left in buffer A
 * (the H-MSM scalars). */
int czk_cuda_compute_h_dev(czk_cuda_ctx *ctx, unsigned log_n);
/* host convenience wrappers: copy in, compute, copy out */
int czk_cuda_ntt(czk_cuda_ctx *ctx, czk_fr *a, unsigned log_n, int inverse);
int czk_cuda_compute_h(czk_cuda_ctx *ctx, const czk_fr *a, const czk_fr *b, const czk_fr *c,
                       czk_fr *h, unsigned log_n);

/* ---- MSM (Pippenger, signed digits, sorted buckets, XYZZ) ---- */

/* Upload n affine bases once; they stay resident until czk_cuda_bases_free. */
int czk_cuda_bases_upload_g1(czk_cuda_ctx *ctx, czk_cuda_bases **b, const czk_g1_aff *pts, size_t n);
int czk_cuda_bases_upload_g2(czk_cuda_ctx *ctx, czk_cuda_bases **b, const czk_g2_aff *pts, size_t n);
/* The same over device memory the caller owns (dev, at least n points of the
 * group's affine size, e.g. a czk_cuda_vmm section): with pts non-NULL the
 * n points are copied there first (ctx's copy stream, synchronously); with
 * pts NULL dev already holds them.  czk_cuda_bases_free does not free dev. */
int czk_cuda_bases_place(czk_cuda_ctx *ctx, czk_cuda_bases **b, void *dev, const void *pts, size_t n, int g2);
void czk_cuda_bases_free(czk_cuda_bases *b);
size_t czk_cuda_bases_len(const czk_cuda_bases *b);

/* bytes of one affine point of curve (CZK_CUDA_CURVE_*), G1 or G2 */
size_t czk_cuda_point_bytes(unsigned curve, int g2);

/* Fixed-base table: the bases' multiples 2^(j B c) P for rows j, so that
 * window w of an MSM over them reads row w / B and all windows share B
 * bucket windows (B = ceil(windows / rows)): with all rows (B = 1) the
 * buckets are reduced once instead of once per window, which makes a wider
 * window and so fewer windows (fewer additions) pay.  Row 0 is the bases
 * themselves (read where they lie, which must outlive the table): the table
 * adds (rows - 1) x n points of device memory; at least 2 rows (-EINVAL for
 * 1).  Built once per handle
 * (-EBUSY after), on the handle's context, returning when done; MSMs over
 * the handle on other contexts may run meanwhile (without the table) and
 * use it, at its window c, from the moment it is complete.  rows 0: all
 * windows; c 0: the default for n (czk_cuda_bases_table_plan says which).
 * A context created with cfg.msm_tables holds the default full-table plan
 * for n <= its max_msm_n; an MSM whose table plan its workspace cannot hold
 * (another c, fewer rows, or no cfg.msm_tables) runs the plain plan over
 * the bases instead. */
typedef struct czk_cuda_table_plan {
    unsigned c, rows, bucket_windows;
    unsigned windows;  /* the MSM's windows at c (rows = all of them: a full table) */
    size_t bytes;      /* device memory the table adds once built */
    size_t peak_bytes; /* free device memory the build needs */
} czk_cuda_table_plan;
int czk_cuda_bases_table_plan(const czk_cuda_bases *b, unsigned rows, unsigned c, czk_cuda_table_plan *out);
/* The table to build for b within mem bytes of free device memory, for MSMs
 * on contexts created with cfg.msm_tables (their workspace holds the full
 * table's plan): the default full table when it fits mem; otherwise the
 * partial table (fewer rows, so several bucket windows, maybe a narrower
 * window; no more buckets than the full table's nor more windows than the
 * plain plan's) that the backend's cost model says is fastest, if it beats
 * the plain plan by 3% or more; -ENOSPC when no table fits and pays (not an
 * error: nothing is logged).  Build it with czk_cuda_bases_precompute(b,
 * out->rows, out->c).  czk_cuda_table_fit is the rule itself for n bases of
 * curve and group and a workspace of cap_buckets buckets (0: the full
 * table's); host code, needs no GPU. */
int czk_cuda_bases_table_fit(const czk_cuda_bases *b, size_t mem, czk_cuda_table_plan *out);
int czk_cuda_table_fit(size_t n, int g2, unsigned curve, size_t mem, size_t cap_buckets, czk_cuda_table_plan *out);
int czk_cuda_bases_precompute(czk_cuda_bases *b, unsigned rows, unsigned c);
/* rows of b's table, 0 without one */
unsigned czk_cuda_bases_table_rows(const czk_cuda_bases *b);
/* 1 when the last MSM on ctx ran over a fixed-base table */
int czk_cuda_msm_used_table(const czk_cuda_ctx *ctx);
/* Sorted digits kept between MSMs of ctx that read the same scalars (a
 * proof's A, B1 and B2 all read the witness).  Between on (1) and off (0)
 * the caller promises that nothing writes the scalar buffers its MSMs read:
 * no upload and no compute into them.  Meanwhile an MSM over the same
 * scalars (buffer, offset, count) whose plan has the same window, bucket
 * windows and table stride as the MSM before it on ctx skips its digits and
 * sort (the bases may differ, G1 or G2).  Off forgets them; a failed MSM
 * turns it off.  czk_cuda_msm_kept_digits: 1 when the last MSM on ctx
 * reused them. */
void czk_cuda_msm_keep_digits(czk_cuda_ctx *ctx, int on);
int czk_cuda_msm_kept_digits(const czk_cuda_ctx *ctx);

/* r = sum_{i<n} s[off+i] * base[base_off+i], scalars (STANDARD form) taken from
 * device buffer scalar_buf (e.g. BUF_A after compute_h, BUF_W after an upload). */
int czk_cuda_msm_g1(czk_cuda_ctx *ctx, const czk_cuda_bases *b, size_t base_off, int scalar_buf,
                    size_t scalar_off, size_t n, czk_g1 *r);
int czk_cuda_msm_g2(czk_cuda_ctx *ctx, const czk_cuda_bases *b, size_t base_off, int scalar_buf,
                    size_t scalar_off, size_t n, czk_g2 *r);
/* host-scalar convenience: uploads to BUF_W then runs the MSM */
int czk_cuda_msm_g1_host(czk_cuda_ctx *ctx, const czk_cuda_bases *b, const czk_fr *scalars, size_t n,
                         czk_g1 *r);
int czk_cuda_msm_g2_host(czk_cuda_ctx *ctx, const czk_cuda_bases *b, const czk_fr *scalars, size_t n,
                         czk_g2 *r);
/* window size the MSM of curve (CZK_CUDA_CURVE_*) uses for n terms (for benchmarks and logs) */
unsigned czk_cuda_msm_window_bits(size_t n, int g2, unsigned curve);

/* ---- BN254 (snarkjs "bn128"): the same operations over BN254's fields and
 * groups, on a context created with CZK_CUDA_CURVE_BN254 in cfg.curves.
 * NTT roots are snarkjs's (w[28] = 5^((r-1)/2^28), w[k-1] = w[k]^2, as
 * common/crypto/bn254_ntt.h): forward/inverse NTT up to 2^min(max_log_n, 28),
 * odd coset and h up to 2^min(max_log_n, 27).  Buffers as above (32-byte
 * elements).  Bases handles are per curve: passing BLS12-381 bases to a BN254
 * MSM (or back) fails with -EINVAL; czk_cuda_bases_free / _len serve both. ---- */
int czk_cuda_bn254_ntt_dev(czk_cuda_ctx *ctx, unsigned log_n, int inverse);
int czk_cuda_bn254_ntt_to_odd_coset_dev(czk_cuda_ctx *ctx, unsigned log_n);
int czk_cuda_bn254_compute_h_dev(czk_cuda_ctx *ctx, unsigned log_n);
int czk_cuda_bn254_ntt(czk_cuda_ctx *ctx, czk_bn254_fr *a, unsigned log_n, int inverse);
int czk_cuda_bn254_compute_h(czk_cuda_ctx *ctx, const czk_bn254_fr *a, const czk_bn254_fr *b,
                             const czk_bn254_fr *c, czk_bn254_fr *h, unsigned log_n);
int czk_cuda_bn254_bases_upload_g1(czk_cuda_ctx *ctx, czk_cuda_bases **b, const czk_bn254_g1_aff *pts, size_t n);
int czk_cuda_bn254_bases_upload_g2(czk_cuda_ctx *ctx, czk_cuda_bases **b, const czk_bn254_g2_aff *pts, size_t n);
/* as czk_cuda_bases_place, with BN254 point sizes (64 bytes G1, 128 G2) */
int czk_cuda_bn254_bases_place(czk_cuda_ctx *ctx, czk_cuda_bases **b, void *dev, const void *pts, size_t n,
                               int g2);
int czk_cuda_bn254_msm_g1(czk_cuda_ctx *ctx, const czk_cuda_bases *b, size_t base_off, int scalar_buf,
                          size_t scalar_off, size_t n, czk_bn254_g1 *r);
int czk_cuda_bn254_msm_g2(czk_cuda_ctx *ctx, const czk_cuda_bases *b, size_t base_off, int scalar_buf,
                          size_t scalar_off, size_t n, czk_bn254_g2 *r);
int czk_cuda_bn254_msm_g1_host(czk_cuda_ctx *ctx, const czk_cuda_bases *b, const czk_bn254_fr *scalars, size_t n,
                               czk_bn254_g1 *r);
int czk_cuda_bn254_msm_g2_host(czk_cuda_ctx *ctx, const czk_cuda_bases *b, const czk_bn254_fr *scalars, size_t n,
                               czk_bn254_g2 *r);

/* ---- fixed-base multiples (czk setup) ----
 * out[i] = k[i] P for n scalars k of curve's Fr in MONTGOMERY form (as a
 * setup holds them) and one affine point P of G1 (g2 0) or G2 (g2 1) of
 * curve (CZK_CUDA_CURVE_*); out in the zkey's affine layout, a zero scalar
 * giving all-zero bytes (infinity).  Runs on device `device` with device
 * memory of its own (about 64 MiB, freed before the return), needs no
 * context.  VARIABLE TIME: which table entry is read depends on the
 * scalars; for development setups only (common/groth16/setup.h). */
int czk_cuda_gen_mul(int device, unsigned curve, int g2, const void *base, const void *k_mont, size_t n,
                     void *out);

/* ---- self-test entry points (tests compare these with the CPU field) ---- */
int czk_cuda_test_fr_mul(czk_cuda_ctx *ctx, czk_fr *r, const czk_fr *a, const czk_fr *b, size_t n);
int czk_cuda_test_fp_mul(czk_cuda_ctx *ctx, czk_fp *r, const czk_fp *a, const czk_fp *b, size_t n);
int czk_cuda_test_fp2_mul(czk_cuda_ctx *ctx, czk_fp2 *r, const czk_fp2 *a, const czk_fp2 *b, size_t n);
/* op: 0 add, 1 sub (Fp), checks the non-multiplicative paths too */
int czk_cuda_test_fp_addsub(czk_cuda_ctx *ctx, czk_fp *r, const czk_fp *a, const czk_fp *b, size_t n, int op);
/* BN254: products (Fp, Fr, Fp2), squares (op 2) and add/sub (op 0/1) of Fp and Fr */
int czk_cuda_test_bn254_fr_mul(czk_cuda_ctx *ctx, czk_bn254_fr *r, const czk_bn254_fr *a, const czk_bn254_fr *b,
                               size_t n);
int czk_cuda_test_bn254_fp_mul(czk_cuda_ctx *ctx, czk_bn254_fp *r, const czk_bn254_fp *a, const czk_bn254_fp *b,
                               size_t n);
int czk_cuda_test_bn254_fp2_mul(czk_cuda_ctx *ctx, czk_bn254_fp2 *r, const czk_bn254_fp2 *a,
                                const czk_bn254_fp2 *b, size_t n);
/* op: 0 a + b, 1 a - b, 2 a^2 (b unused) */
int czk_cuda_test_bn254_fp_op(czk_cuda_ctx *ctx, czk_bn254_fp *r, const czk_bn254_fp *a, const czk_bn254_fp *b,
                              size_t n, int op);
int czk_cuda_test_bn254_fr_op(czk_cuda_ctx *ctx, czk_bn254_fr *r, const czk_bn254_fr *a, const czk_bn254_fr *b,
                              size_t n, int op);

#ifdef __cplusplus
}
#endif

#endif
