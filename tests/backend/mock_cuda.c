/*
 * mock_cuda.c — a host-memory stand-in for backend/cuda (czk_cuda.h), for
 * testing backend/backend_cuda.c's use of the interface on machines without a
 * GPU: "device" buffers are host arrays, h and the MSMs are the CPU code of
 * common/, and completion callbacks run on another thread (as CUDA's do).
 * It follows the interface's documented semantics (buffer roles, standard
 * vs Montgomery form, offsets, bases as affine points) and checks its
 * arguments, so a wrong buffer, offset or length in backend_cuda.c shows up
 * as a wrong result or a failure.  It says nothing about the kernels.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/groth16/groth16.h"
#include "common/crypto/bn254_msm.h"
#include "common/crypto/msm.h"
#include "backend/cuda/czk_cuda.h"
#include "backend/cuda/czk_cuda_topo.h"
#include "backend/cuda/czk_cuda_vmm.h"
#include "tests/setup_ref.h"

struct czk_cuda_ctx {
    czk_cuda_cfg cfg;
    czk_fr *buf[4];
    size_t len[4];
    pthread_t cb_th;
    int cb_pending;
    double copy_ms; /* host memcpy time of the uploads since the last czk_cuda_copy_ms */
    int copy_open;
    int keep; /* czk_cuda_msm_keep_digits */
};

struct czk_cuda_bases {
    int g2;
    int bn;       /* BN254 points */
    int borrowed; /* czk_cuda_bases_place: pts is not ours */
    size_t n;
    void *pts;
    unsigned tab_rows; /* czk_cuda_bases_precompute: a table "built" (the results do not change) */
};

static __thread char lasterr[256];
int mock_cuda_devices = 1;           /* tests set 0 for "no GPU" */
size_t mock_cuda_mem_free = (size_t)8 << 30;
size_t mock_cuda_mem_free_dev1;      /* non-zero: device 1's free memory (others: mock_cuda_mem_free) */
unsigned mock_cuda_tables;           /* fixed-base tables built (czk_cuda_bases_precompute) */
unsigned long mock_cuda_registered;  /* bytes currently registered */
unsigned long mock_cuda_callbacks;   /* completion callbacks run */
int mock_cuda_fail_h;                /* the next compute_h_dev fails with -EIO (a kernel error), then clears */
int mock_cuda_sticky;                /* every czk_cuda_sync fails with -EIO (a sticky error: the device is lost) */
int mock_cuda_foreign;               /* the GPUs cannot run the kernels (czk_cuda_device_check: -ENOEXEC) */

static int fail(int code, const char *what)
{
    snprintf(lasterr, sizeof(lasterr), "mock: %s", what);
    return code;
}

const char *czk_cuda_last_error(void) { return lasterr; }

int czk_cuda_device_count(int *count)
{
    *count = mock_cuda_devices;
    return mock_cuda_devices ? 0 : fail(-ENODEV, "no cuda device");
}

int czk_cuda_device_info(int device, czk_cuda_dev_info *info)
{
    memset(info, 0, sizeof(*info));
    if (device < 0 || device >= mock_cuda_devices)
        return fail(-ENODEV, "bad device");
    snprintf(info->name, sizeof(info->name), "mock");
    info->mem_free = device == 1 && mock_cuda_mem_free_dev1 ? mock_cuda_mem_free_dev1 : mock_cuda_mem_free;
    info->mem_total = mock_cuda_mem_free * 2;
    return 0;
}

/* an address no sysfs has: the backend's NUMA node is then "not known" */
int czk_cuda_device_pci_id(int device, char *out, size_t n)
{
    if (device < 0 || device >= mock_cuda_devices)
        return fail(-ENODEV, "bad device");
    snprintf(out, n, "ffff:ff:%02x.7", device);
    return 0;
}

int czk_cuda_mem_info(int device, size_t *mem_free, size_t *mem_total)
{
    if (device < 0 || device >= mock_cuda_devices)
        return fail(-ENODEV, "bad device");
    *mem_free = mock_cuda_mem_free;
    *mem_total = mock_cuda_mem_free * 2;
    return 0;
}

int czk_cuda_kernel_check_(int device, const void *kernel)
{
    (void)kernel;
    if (device < 0 || device >= mock_cuda_devices)
        return fail(-ENODEV, "bad device");
    return mock_cuda_foreign ? fail(-ENOEXEC, "GPU 0 (mock) is sm_80, and czk's GPU kernels were built for "
                                             "CZK_CUDA_ARCH=\"90\" only") : 0;
}

int czk_cuda_device_check(int device) { return czk_cuda_kernel_check_(device, NULL); }

int czk_cuda_ctx_new(czk_cuda_ctx **out, const czk_cuda_cfg *cfg)
{
    int r;
    if ((r = czk_cuda_device_check(cfg->device)) < 0) /* as the real one: before anything is allocated */
        return r;
    czk_cuda_ctx *c = calloc(1, sizeof(*c));
    if (!c)
        return -ENOMEM;
    if (cfg->device < 0 || cfg->device >= mock_cuda_devices || cfg->max_log_n < 1 ||
        cfg->max_log_n > CZK_CUDA_MAX_LOG_N) {
        free(c);
        return fail(-EINVAL, "bad cfg");
    }
    c->cfg = *cfg;
    for (int i = 0; i < 4; i++) {
        c->len[i] = (size_t)1 << cfg->max_log_n;
        if (i == CZK_CUDA_BUF_W && cfg->max_msm_n > c->len[i])
            c->len[i] = cfg->max_msm_n;
        c->buf[i] = calloc(c->len[i], sizeof(czk_fr));
        if (!c->buf[i]) {
            czk_cuda_ctx_free(c);
            return -ENOMEM;
        }
    }
    *out = c;
    return 0;
}

static void wait_cb(czk_cuda_ctx *c)
{
    if (c->cb_pending) {
        pthread_join(c->cb_th, NULL);
        c->cb_pending = 0;
    }
}

void czk_cuda_ctx_free(czk_cuda_ctx *c)
{
    if (!c)
        return;
    wait_cb(c);
    for (int i = 0; i < 4; i++)
        free(c->buf[i]);
    free(c);
}

int czk_cuda_sync(czk_cuda_ctx *c)
{
    wait_cb(c);
    if (mock_cuda_sticky)
        return fail(-EIO, "cudaStreamSynchronize: an illegal memory access was encountered (sticky)");
    return 0;
}

size_t czk_cuda_buf_len(const czk_cuda_ctx *c, int buf) { return buf >= 0 && buf < 4 ? c->len[buf] : 0; }

typedef struct {
    czk_cuda_done_fn cb;
    void *arg;
} cb_job;

static void *cb_main(void *p)
{
    cb_job j = *(cb_job *)p;
    free(p);
    __atomic_add_fetch(&mock_cuda_callbacks, 1, __ATOMIC_RELAXED);
    j.cb(j.arg);
    return NULL;
}

int czk_cuda_upload_async(czk_cuda_ctx *c, int buf, size_t off, const czk_fr *host, size_t n, czk_cuda_done_fn cb,
                          void *arg)
{
    if (buf < 0 || buf > 3 || off > c->len[buf] || n > c->len[buf] - off)
        return fail(-EINVAL, "upload out of range");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memcpy(c->buf[buf] + off, host, n * sizeof(czk_fr));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    c->copy_ms = (c->copy_open ? c->copy_ms : 0) + (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
    c->copy_open = 1;
    if (cb) {
        cb_job *j = malloc(sizeof(*j));
        if (!j)
            return -ENOMEM;
        j->cb = cb;
        j->arg = arg;
        wait_cb(c);
        if (pthread_create(&c->cb_th, NULL, cb_main, j)) {
            free(j);
            return fail(-EIO, "pthread_create");
        }
        c->cb_pending = 1;
    }
    return 0;
}

int czk_cuda_copy_ms(czk_cuda_ctx *c, double *ms)
{
    if (!c->copy_open)
        return fail(-EINVAL, "no upload since the last czk_cuda_copy_ms");
    c->copy_open = 0;
    *ms = c->copy_ms;
    return 0;
}

int czk_cuda_download(czk_cuda_ctx *c, int buf, size_t off, czk_fr *host, size_t n)
{
    if (buf < 0 || buf > 3 || off > c->len[buf] || n > c->len[buf] - off)
        return fail(-EINVAL, "download out of range");
    memcpy(host, c->buf[buf] + off, n * sizeof(czk_fr));
    return 0;
}

int czk_cuda_host_register(void *p, size_t len, size_t chunk)
{
    (void)p;
    (void)chunk;
    mock_cuda_registered += len;
    return 0;
}

int czk_cuda_host_unregister(void *p, size_t len, size_t chunk)
{
    (void)p;
    (void)chunk;
    mock_cuda_registered -= len;
    return 0;
}

/* a context serves BLS12-381 when cfg.curves is 0 or names it */
static int serves(const czk_cuda_ctx *c, int bn)
{
    unsigned m = c->cfg.curves ? c->cfg.curves : CZK_CUDA_CURVE_BLS12_381;
    return (m & (bn ? CZK_CUDA_CURVE_BN254 : CZK_CUDA_CURVE_BLS12_381)) != 0;
}

static int h_check(czk_cuda_ctx *c, unsigned log_n, int bn)
{
    if (log_n > c->cfg.max_log_n)
        return fail(-EINVAL, "log_n too large");
    if (!serves(c, bn))
        return fail(-EINVAL, "the context does not serve this curve");
    wait_cb(c); /* "compute waits for the copies" */
    if (mock_cuda_fail_h) {
        mock_cuda_fail_h = 0;
        return fail(-EIO, "launch of the h kernel: injected failure");
    }
    return 0;
}

int czk_cuda_compute_h_dev(czk_cuda_ctx *c, unsigned log_n)
{
    int r = h_check(c, log_n, 0);
    return r ? r : czk_groth16_compute_h(c->buf[0], c->buf[1], c->buf[2], c->buf[0], log_n, 1);
}

int czk_cuda_bn254_compute_h_dev(czk_cuda_ctx *c, unsigned log_n)
{
    int r = h_check(c, log_n, 1);
    czk_bn254_fr *a = (czk_bn254_fr *)c->buf[0], *b = (czk_bn254_fr *)c->buf[1], *cc = (czk_bn254_fr *)c->buf[2];
    return r ? r : czk_groth16_bn254_compute_h(a, b, cc, a, log_n, 1);
}

static int bases_up(czk_cuda_bases **b, const void *pts, size_t n, size_t sz, int g2, int bn)
{
    czk_cuda_bases *x = calloc(1, sizeof(*x));
    if (!x || !(x->pts = malloc((n ? n : 1) * sz))) {
        free(x);
        return -ENOMEM;
    }
    memcpy(x->pts, pts, n * sz);
    x->n = n;
    x->g2 = g2;
    x->bn = bn;
    *b = x;
    return 0;
}

int czk_cuda_bases_upload_g1(czk_cuda_ctx *c, czk_cuda_bases **b, const czk_g1_aff *pts, size_t n)
{
    (void)c;
    return bases_up(b, pts, n, sizeof(czk_g1_aff), 0, 0);
}

int czk_cuda_bases_upload_g2(czk_cuda_ctx *c, czk_cuda_bases **b, const czk_g2_aff *pts, size_t n)
{
    (void)c;
    return bases_up(b, pts, n, sizeof(czk_g2_aff), 1, 0);
}

int czk_cuda_bn254_bases_upload_g1(czk_cuda_ctx *c, czk_cuda_bases **b, const czk_bn254_g1_aff *pts, size_t n)
{
    (void)c;
    return bases_up(b, pts, n, sizeof(czk_bn254_g1_aff), 0, 1);
}

int czk_cuda_bn254_bases_upload_g2(czk_cuda_ctx *c, czk_cuda_bases **b, const czk_bn254_g2_aff *pts, size_t n)
{
    (void)c;
    return bases_up(b, pts, n, sizeof(czk_bn254_g2_aff), 1, 1);
}

static int place(czk_cuda_bases **b, void *dev, const void *pts, size_t n, int g2, int bn)
{
    size_t sz = bn ? (g2 ? sizeof(czk_bn254_g2_aff) : sizeof(czk_bn254_g1_aff))
                   : (g2 ? sizeof(czk_g2_aff) : sizeof(czk_g1_aff));
    czk_cuda_bases *x = calloc(1, sizeof(*x));
    if (!x)
        return -ENOMEM;
    if (pts)
        memcpy(dev, pts, n * sz);
    x->pts = dev;
    x->n = n;
    x->g2 = g2;
    x->bn = bn;
    x->borrowed = 1;
    *b = x;
    return 0;
}

int czk_cuda_bases_place(czk_cuda_ctx *c, czk_cuda_bases **b, void *dev, const void *pts, size_t n, int g2)
{
    (void)c;
    return place(b, dev, pts, n, g2, 0);
}

int czk_cuda_bn254_bases_place(czk_cuda_ctx *c, czk_cuda_bases **b, void *dev, const void *pts, size_t n, int g2)
{
    (void)c;
    return place(b, dev, pts, n, g2, 1);
}

void czk_cuda_bases_free(czk_cuda_bases *b)
{
    if (b && !b->borrowed)
        free(b->pts);
    free(b);
}

/* a table of MOCK_TABLE_ROWS rows: its memory is planned as the real one's */
#define MOCK_TABLE_ROWS 12
static size_t mock_pt(const czk_cuda_bases *b)
{
    return b->bn ? (b->g2 ? sizeof(czk_bn254_g2_aff) : sizeof(czk_bn254_g1_aff))
                 : (b->g2 ? sizeof(czk_g2_aff) : sizeof(czk_g1_aff));
}

int czk_cuda_bases_table_plan(const czk_cuda_bases *b, unsigned rows, unsigned c, czk_cuda_table_plan *out)
{
    memset(out, 0, sizeof(*out));
    out->c = c ? c : 16;
    out->rows = rows && rows < MOCK_TABLE_ROWS ? rows : MOCK_TABLE_ROWS;
    out->bucket_windows = 1;
    out->windows = MOCK_TABLE_ROWS;
    out->bytes = (out->rows - 1) * b->n * mock_pt(b); /* row 0 is the bases */
    out->peak_bytes = out->rows * b->n * mock_pt(b);
    return 0;
}

/* the real rule's shape: the full table when it fits mem, else as many rows
 * as fit (at least 2); records what it was asked */
size_t mock_cuda_fit_mem_max;  /* the most memory a table_fit was offered */
unsigned mock_cuda_rows_min = ~0u, mock_cuda_rows_max;  /* rows of the tables built */
int czk_cuda_bases_table_fit(const czk_cuda_bases *b, size_t mem, czk_cuda_table_plan *out)
{
    const size_t row = b->n * mock_pt(b);
    if (mem > mock_cuda_fit_mem_max)
        mock_cuda_fit_mem_max = mem;
    czk_cuda_bases_table_plan(b, 0, 0, out);
    if (out->peak_bytes <= mem)
        return 0;
    if (mem / row < 2)
        return fail(-ENOSPC, "msm table: none fits");
    czk_cuda_bases_table_plan(b, (unsigned)(mem / row), 0, out);
    out->bucket_windows = (MOCK_TABLE_ROWS + out->rows - 1) / out->rows;
    return 0;
}

int czk_cuda_bases_precompute(czk_cuda_bases *b, unsigned rows, unsigned c)
{
    czk_cuda_table_plan tp;
    if (b->tab_rows)
        return fail(-EBUSY, "msm table: the bases already have one");
    czk_cuda_bases_table_plan(b, rows, c, &tp);
    b->tab_rows = tp.rows;
    if (tp.rows < mock_cuda_rows_min)
        mock_cuda_rows_min = tp.rows;
    if (tp.rows > mock_cuda_rows_max)
        mock_cuda_rows_max = tp.rows;
    mock_cuda_tables++;
    return 0;
}

unsigned czk_cuda_bases_table_rows(const czk_cuda_bases *b) { return b->tab_rows; }

/* kept digits change no result: the flag alone */
void czk_cuda_msm_keep_digits(czk_cuda_ctx *ctx, int on) { ctx->keep = on; }
int czk_cuda_msm_kept_digits(const czk_cuda_ctx *ctx) { return ctx->keep; }

/* czk_cuda_vmm.h over a memfd: "device memory" that outlives its creator
 * while an fd is held, as the real one does */
int czk_cuda_vmm_supported(int device) { return device == 0; }

size_t czk_cuda_vmm_round(int device, size_t bytes)
{
    (void)device;
    return (bytes + 65535) & ~(size_t)65535;
}

static int vmm_map(czk_cuda_vmm *m)
{
    m->ptr = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, 0);
    if (m->ptr == MAP_FAILED) {
        m->ptr = NULL;
        return fail(-errno, "mmap of device memory");
    }
    return 0;
}

int czk_cuda_vmm_alloc(int device, size_t bytes, czk_cuda_vmm *m)
{
    memset(m, 0, sizeof(*m));
    m->device = device;
    m->size = czk_cuda_vmm_round(device, bytes);
    if ((m->fd = memfd_create("czk-mock-vmm", MFD_CLOEXEC)) < 0 || ftruncate(m->fd, (off_t)m->size) < 0)
        return fail(-errno, "memfd for device memory");
    return vmm_map(m);
}

int czk_cuda_vmm_import(int device, int fd, size_t bytes, czk_cuda_vmm *m)
{
    struct stat st;
    memset(m, 0, sizeof(*m));
    m->device = device;
    m->size = bytes;
    if (fstat(fd, &st) < 0 || (size_t)st.st_size != bytes) {
        m->fd = -1;
        return fail(-EINVAL, "device memory fd of another size");
    }
    if ((m->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0)
        return fail(-errno, "dup");
    return vmm_map(m);
}

int czk_cuda_vmm_write(czk_cuda_vmm *m, size_t off, const void *src, size_t n)
{
    if (off > m->size || n > m->size - off)
        return fail(-EINVAL, "write beyond device memory");
    memcpy((char *)m->ptr + off, src, n);
    return 0;
}

int czk_cuda_vmm_read(const czk_cuda_vmm *m, size_t off, void *dst, size_t n)
{
    if (off > m->size || n > m->size - off)
        return fail(-EINVAL, "read beyond device memory");
    memcpy(dst, (const char *)m->ptr + off, n);
    return 0;
}

void czk_cuda_vmm_free(czk_cuda_vmm *m)
{
    if (m->ptr)
        munmap(m->ptr, m->size);
    if (m->fd >= 0)
        close(m->fd);
    memset(m, 0, sizeof(*m));
    m->fd = -1;
}

size_t czk_cuda_bases_len(const czk_cuda_bases *b) { return b->n; }

static int msm_check(czk_cuda_ctx *c, const czk_cuda_bases *b, int g2, int bn, size_t base_off, int sbuf,
                     size_t soff, size_t n)
{
    if (b->g2 != g2)
        return fail(-EINVAL, "G1/G2 bases mixed up");
    if (b->bn != bn || !serves(c, bn))
        return fail(-EINVAL, "bases or context of the other curve");
    if (base_off > b->n || n > b->n - base_off)
        return fail(-EINVAL, "more terms than bases");
    if (sbuf < 0 || sbuf > 3 || soff > c->len[sbuf] || n > c->len[sbuf] - soff)
        return fail(-EINVAL, "scalars out of range");
    if (n > c->cfg.max_msm_n || (g2 && !c->cfg.enable_g2))
        return fail(-ENOMEM, "msm larger than the context");
    wait_cb(c);
    return 0;
}

int czk_cuda_msm_g1(czk_cuda_ctx *c, const czk_cuda_bases *b, size_t base_off, int sbuf, size_t soff, size_t n,
                    czk_g1 *r)
{
    int rc = msm_check(c, b, 0, 0, base_off, sbuf, soff, n);
    return rc ? rc : czk_msm_g1(r, (const czk_g1_aff *)b->pts + base_off, c->buf[sbuf] + soff, n, 1);
}

int czk_cuda_msm_g2(czk_cuda_ctx *c, const czk_cuda_bases *b, size_t base_off, int sbuf, size_t soff, size_t n,
                    czk_g2 *r)
{
    int rc = msm_check(c, b, 1, 0, base_off, sbuf, soff, n);
    return rc ? rc : czk_msm_g2(r, (const czk_g2_aff *)b->pts + base_off, c->buf[sbuf] + soff, n, 1);
}

int czk_cuda_bn254_msm_g1(czk_cuda_ctx *c, const czk_cuda_bases *b, size_t base_off, int sbuf, size_t soff, size_t n,
                          czk_bn254_g1 *r)
{
    int rc = msm_check(c, b, 0, 1, base_off, sbuf, soff, n);
    return rc ? rc
              : czk_bn254_msm_g1(r, (const czk_bn254_g1_aff *)b->pts + base_off,
                                 (const czk_bn254_fr *)(c->buf[sbuf] + soff), n, 1);
}

int czk_cuda_bn254_msm_g2(czk_cuda_ctx *c, const czk_cuda_bases *b, size_t base_off, int sbuf, size_t soff, size_t n,
                          czk_bn254_g2 *r)
{
    int rc = msm_check(c, b, 1, 1, base_off, sbuf, soff, n);
    return rc ? rc
              : czk_bn254_msm_g2(r, (const czk_bn254_g2_aff *)b->pts + base_off,
                                 (const czk_bn254_fr *)(c->buf[sbuf] + soff), n, 1);
}

/* the setup's fixed-base multiples by the CPU's generic multiplication */
int czk_cuda_gen_mul(int device, unsigned curve, int g2, const void *base, const void *k_mont, size_t n, void *out)
{
    if (device != 0 || !base || (n && (!k_mont || !out)) ||
        (curve != CZK_CUDA_CURVE_BLS12_381 && curve != CZK_CUDA_CURVE_BN254))
        return -EINVAL;
    czk_test_gen_mul_ref(curve == CZK_CUDA_CURVE_BN254, g2, base, k_mont, n, out);
    return 0;
}
