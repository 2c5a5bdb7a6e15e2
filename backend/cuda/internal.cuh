/*
 * internal.cuh — private to backend/cuda: the context structure shared by the
 * .cu files, and CZK_CU, the one checking macro every CUDA runtime call goes
 * through (it logs the expression, file and line and returns a -errno code).
 */
#ifndef CZK_CUDA_INTERNAL_CUH
#define CZK_CUDA_INTERNAL_CUH

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#ifndef _Static_assert
#define _Static_assert static_assert /* the common headers are C11 */
#endif
#include "backend/cuda/czk_cuda.h"
#include "backend/cuda/ec.cuh"
#include "backend/cuda/ff.cuh"

/* log "cuda: <expr> failed at file:line: <cuda error>", remember it, map to -errno */
int czk_cuda_fail_(const char *expr, const char *file, int line, cudaError_t e);
/* log a non-CUDA failure (capacity, argument) and remember it; returns code */
int czk_cuda_errf_(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define CZK_CU(expr)                                                          \
    do {                                                                      \
        cudaError_t czk_e_ = (expr);                                          \
        if (czk_e_ != cudaSuccess)                                            \
            return czk_cuda_fail_(#expr, __FILE__, __LINE__, czk_e_);         \
    } while (0)

/* after a kernel launch: launch-configuration errors, logged with the kernel's name */
#define CZK_CU_LAUNCH(what)                                                   \
    do {                                                                      \
        cudaError_t czk_e_ = cudaGetLastError();                              \
        if (czk_e_ != cudaSuccess)                                            \
            return czk_cuda_fail_("launch of " what, __FILE__, __LINE__, czk_e_); \
    } while (0)

/* blocks of t threads for n items */
static inline unsigned grid_for(size_t n, unsigned t) { return (unsigned)((n + t - 1) / t); }

#define CZK_CUDA_NSTREAMS 3

struct czk_msm_ws {
    size_t cap_pairs;   /* key/value slots */
    size_t cap_parts;   /* partial sums per level (points) */
    size_t cap_buckets; /* dense buckets (points) */
    size_t pt_bytes;    /* bytes of the largest bucket point type (G2 when enabled) */
    uint32_t *keys[2], *vals[2];
    uint32_t *run_keys, *run_cnt, *run_start, *task_off, *tcnt;
    uint32_t *lvl_keys[2];
    void *parts[2];
    void *buckets;
    uint32_t *counters;  /* [0] runs, [1] tasks, [2] real runs, [3] sentinel runs, [4] real pairs (8 slots) */
    uint32_t *host_counters; /* pinned copy of counters */
    void *cub_tmp;
    size_t cub_bytes;
    void *result;        /* per-window Jacobian sums (device) */
    void *host_result;   /* pinned copy */
    int last_tab;        /* the last MSM ran over a fixed-base table */
    /* czk_cuda_msm_keep_digits: keep on, the sorted digits in keys[1] and
     * vals[1] are those of the scalars buf[sbuf][soff, soff + n) at window c
     * with ncls bucket windows and table stride stride (sorted.valid) */
    int keep, last_kept;
    struct {
        int valid, sbuf;
        size_t soff, n;
        unsigned c, ncls;
        uint32_t stride;
    } sorted;
    /* batch-affine bucket sums (msm_ba.cuh): ba_bytes of scratch (0: none,
     * every MSM runs the XYZZ first level), run counts and starts */
    void *ba_mem;
    size_t ba_bytes;
    uint32_t *ba_cnt[2], *ba_start[2];
};

struct czk_cuda_ctx {
    int device;
    int sm_count;
    unsigned max_log_n;
    size_t max_msm_n;
    int enable_g2;
    int msm_tables;           /* cfg.msm_tables: workspace sized for full tables too */
    unsigned msm_table_dense_pm; /* cfg.msm_table_dense_pm */
    unsigned curves;          /* CZK_CUDA_CURVE_* served (cfg's mask, 0 read as BLS12-381) */
    cudaStream_t st[CZK_CUDA_NSTREAMS];
    cudaStream_t copy;
    cudaEvent_t buf_ready[4]; /* recorded after each upload into a buffer */
    cudaEvent_t cp0, cp1;     /* timing: start of the first upload since the last czk_cuda_copy_ms, end of the last */
    int cp_open;              /* cp0 recorded, not yet read */
    cudaEvent_t done[CZK_CUDA_NSTREAMS];
    fr_t *buf[4];
    size_t buf_len[4];
    fr_t *tw;       /* BLS12-381: tw[h + j] = w_{2h}^j, h = 1, 2, ..., 2^max_log_n (NULL without the curve) */
    fr_t *ninv;     /* ninv[k] = 2^-k (Montgomery), k = 0..32, then w[k] at 33 + k; tw and ninv (and
                     * bn_tw, bn_ninv) are shared with the device's other contexts (ntt.cu tw_get) */
    /* BN254 (only with CZK_CUDA_CURVE_BN254): the same tables over its Fr,
     * levels h up to 2^bn_tw_log, bn_tw_log = min(max_log_n, 27) (w_{2h} must
     * exist: 2-adicity 28) */
    bn_fr_t *bn_tw;
    bn_fr_t *bn_ninv;
    unsigned bn_tw_log;
    fr_t *ntt_tmp;  /* czk_cuda_ntt_dev's out-of-place buffer, ntt_tmp_len elements, allocated on first use */
    size_t ntt_tmp_len;
    struct czk_msm_ws msm;
    void *test_buf; /* scratch for the self-test kernels */
    size_t test_len;
};

struct czk_cuda_bases {
    czk_cuda_ctx *ctx;
    unsigned curve; /* CZK_CUDA_CURVE_* */
    int g2;
    int borrowed; /* pts belongs to someone else (czk_cuda_bases_place): not freed here */
    size_t n;
    void *pts;
    /* fixed-base table (czk_cuda_bases_precompute), NULL without one:
     * tab_rows rows of n points, row j = 2^(j * tab_cls * tab_c) * pts;
     * row 0 is pts itself, so tab holds rows 1.. (row j at j - 1);
     * tab is stored last (release) and read first (acquire) */
    void *tab;
    unsigned tab_rows, tab_c, tab_cls;
};

/* ntt.cu: the context's twiddle tables (shared with the other contexts of
 * its device), taken and given back */
int czk_cuda_ntt_init_(czk_cuda_ctx *ctx);
void czk_cuda_ntt_free_(czk_cuda_ctx *ctx);
/* msm.cu */
int czk_cuda_msm_init_(czk_cuda_ctx *ctx);
void czk_cuda_msm_free_(czk_cuda_ctx *ctx);
/* "BLS12-381" / "BN254" for messages */
const char *czk_cuda_curve_name_(unsigned curve);
/* a bases handle of n affine points of the curve and group: over dev (the
 * caller's memory, not freed with the handle) or, dev NULL, over memory
 * allocated here; pts (may be NULL with dev) is copied in first */
/* the fixed-base table of b (msm_kernels.cuh tab_build) for each curve's
 * translation unit: rows rows at window c; 0 or -errno */
int czk_cuda_tab_build_bls_(czk_cuda_bases *b, unsigned rows, unsigned c);
int czk_cuda_tab_build_bn_(czk_cuda_bases *b, unsigned rows, unsigned c);
int czk_cuda_bases_new_(czk_cuda_ctx *ctx, czk_cuda_bases **out, void *dev, const void *pts, size_t n,
                        unsigned curve, int g2);

#endif
