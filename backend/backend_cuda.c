/*
 * backend_cuda.c — the CUDA compute backend of czk-gpud and `czk prove
 * --backend cuda` (backend.h), on top of the C interface backend/cuda/czk_cuda.h
 * only (no CUDA header here).
 *
 * At create, once: the contexts and the page-locked pools (below), sized from
 * the circuits' sizes; with the keys given at create (defer_keys 0) their
 * points are added then, as add_key does.
 *
 * Curves: each circuit's key names its curve (BLS12-381 or BN254); the
 * contexts serve the curves of the configured circuits (czk_cuda_cfg.curves)
 * and each call below goes to that curve's kernels (czk_cuda_* or
 * czk_cuda_bn254_*); buffers hold 32-byte Fr elements of either.
 *
 * add_key (gpud: from the circuit's loader thread, while other contexts
 * compute): every GPU with room gets the circuit's point sections A, B1, B2,
 * C, H (czk_cuda_bases_*), shared by the contexts of that GPU, uploaded
 * through a small loader context of that GPU (its own copy stream: the upload
 * never waits for, nor delays, the streams of the computing contexts).  A GPU
 * where they do not fit in the device memory free at that moment (less a
 * margin) is left out, logged with the bytes needed and free, and its
 * contexts do not serve the circuit (`serves`); when no GPU has room the
 * circuit fails with -ENOMEM saying so; the others are not affected.  add_key calls are serialised by a mutex
 * (the DMA engine is the limit, and the free-memory check must see the
 * previous upload).  Nothing of the host copy is kept (keeps_host_points 0).
 * -ENODEV at create when there is no GPU, -ENOEXEC when a GPU cannot run the
 * kernels of this build (czk_cuda_device_check; czk_backend_open falls back
 * to the cpu backend for both).
 *
 *  - `contexts` czk_cuda contexts (default two per GPU), each with its own
 *    preallocated device vectors A, B, C, W and MSM workspace.  gpud runs one
 *    worker per context, so with two per GPU the copy of partition k+1 into
 *    one context's buffers overlaps the compute of partition k in the other's
 *    (double buffering); nothing is allocated per partition;
 *  - gpud's pools are page-locked with czk_cuda_host_register (one call
 *    per slot, so no copy straddles two registrations) so copies run at full PCIe speed straight from the slots.
 *
 * copy_in queues four async H2D copies (a, b, c into A, B, C; w into W) on the
 * context's copy stream with a completion callback on the last one; the
 * callback (a CUDA thread) posts the context's semaphore and the worker thread,
 * waiting on it, returns -- gpud then frees the slot and sends RELEASE at once
 * (worker.c posts to the loop through its task stack + eventfd).  So the slot
 * is released when its copy completes, not when the proof is done, and no
 * device-wide synchronisation happens on this path.
 *
 * compute: h on the device (compute_h_dev of the circuit's curve, h left in A, standard
 * form), waited for with a context-stream sync (for its trace record), then
 * the five MSMs (each returns when its result is on the host): A·w, B1·w,
 * B2·w, C·w[nPublic+1..] from W, H·h from A; C·w + H·h and the conversion to
 * affine on the host.  h and each MSM are trace records (common/runtime/trace.h);
 * gpud's worker records the copy and the whole compute around them.
 *
 * Each context (device buffers, semaphore, host copy of the public signals)
 * is used by the one worker thread gpud gives it to.  A circuit's device
 * points are written once by add_key before gpud dispatches any partition of
 * it (backend.h) and read-only after; the mutex only orders add_key calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/crypto/curve.h"
#include "common/base/log.h"
#include "common/runtime/trace.h"
#include "backend/backend.h"
#include "backend/cuda/czk_cuda.h"
#include "backend/cuda/czk_cuda_topo.h"
#include "backend/keymem.h"

#define CUDA_CONTEXTS_PER_GPU 2
#define HOST_REGISTER_CHUNK ((size_t)1 << 30)
/* a single cudaHostRegister of 512 GiB or more fails (r580 drivers); stay well below */
#define HOST_REGISTER_ONE_CALL_MAX ((size_t)256 << 30)
#define HOST_REGISTER_STEP(len) ((len) <= HOST_REGISTER_ONE_CALL_MAX ? (len) : HOST_REGISTER_CHUNK)
/* device memory left free after the key points: kernels' stacks, CUB, the driver */
#define DEVICE_MEM_MARGIN ((size_t)256 << 20)

typedef struct cuda_keys {
    czk_cuda_bases *a, *b1, *b2, *c, *h;
    czk_keymem km;  /* the memory a, ... h live in, when it is fd-shareable (km.vm.ptr set) */
    size_t c_lead;  /* infinity points leading c (km's section C: keymem.h), 0 when c is the zkey's C */
    int resident;   /* the points are on this GPU: its contexts serve the circuit */
    /* the fixed-base tables' build (tables_start), on its own thread for czk-gpud */
    pthread_t tab_th;
    int tab_started;   /* tab_th runs or has run: joined by keys_free */
    atomic_int tab_stop; /* keys_free: end after the table in progress */
    size_t tab_keep;   /* device memory the tables leave free */
} cuda_keys;

typedef struct cuda_gpu {
    int device;
    czk_cuda_ctx *loader; /* small context whose copy stream uploads the bases (freed after them) */
    cuda_keys *keys;      /* [n_circuits] */
} cuda_gpu;

/* a circuit's sizes, from cfg->zkeys at create */
typedef struct cuda_circuit {
    uint32_t n_vars, n_public, domain_size, log_domain;
    czk_curve_id curve;
    int configured; /* cfg->zkeys[i] was given */
    int has_key;    /* add_key succeeded: written before gpud publishes the circuit */
} cuda_circuit;

typedef struct cuda_ctx {
    czk_cuda_ctx *cc;
    unsigned gpu;        /* index into b->gpus */
    sem_t copied;        /* posted by the copy-completion callback */
    int sem_ok;
    czk_fr *pub;         /* n_public of the partition held (host copy) */
    int loaded;          /* a partition of `circuit` is in the device buffers */
    unsigned circuit;
    uint64_t job;        /* trace ids of the partition held */
    uint32_t partition;
} cuda_ctx;

struct czk_backend {
    czk_backend_config cfg;
    cuda_circuit *circ; /* [n_circuits] */
    pthread_mutex_t add_mu; /* serialises add_key */
    cuda_gpu *gpus;
    unsigned n_gpus;
    cuda_ctx *ctx;
    unsigned n;
    czk_backend_region *regs; /* registered host regions */
    unsigned n_regs;
};

static const char *cuda_err(void)
{
    const char *s = czk_cuda_last_error();
    return s && s[0] ? s : "cuda failure";
}

static int is_bn(const cuda_circuit *z) { return z->curve == CZK_CURVE_BN254; }

/* device memory of a key's points (C as keymem lays it out, led by the
 * public inputs' infinity points: a few points more than keys_upload's) */
static size_t key_bytes(const cuda_circuit *z)
{
    size_t nv = z->n_vars;
    size_t g1 = czk_groth16_any_point_bytes(z->curve, CZK_G16_PT_A);
    size_t g2 = czk_groth16_any_point_bytes(z->curve, CZK_G16_PT_B2);
    return nv * g1 * 3 + nv * g2 + (size_t)z->domain_size * g1;
}

/* drop: the fd store's copy goes too (a replaced key); else it stays for the next gpud */
static void keys_free(cuda_keys *k, int drop)
{
    if (k->tab_started) {
        atomic_store(&k->tab_stop, 1);
        pthread_join(k->tab_th, NULL);
    }
    czk_cuda_bases_free(k->a);
    czk_cuda_bases_free(k->b1);
    czk_cuda_bases_free(k->b2);
    czk_cuda_bases_free(k->c);
    czk_cuda_bases_free(k->h);
    czk_keymem_free(&k->km, drop);
    memset(k, 0, sizeof(*k));
}

static void cuda_destroy(czk_backend *b)
{
    if (!b)
        return;
    for (unsigned g = 0; b->gpus && g < b->n_gpus; g++)
        for (unsigned c = 0; b->gpus[g].keys && c < b->cfg.n_circuits; c++)
            keys_free(&b->gpus[g].keys[c], 0);
    for (unsigned i = 0; b->ctx && i < b->n; i++) {
        czk_cuda_ctx_free(b->ctx[i].cc);
        if (b->ctx[i].sem_ok)
            sem_destroy(&b->ctx[i].copied);
        free(b->ctx[i].pub);
    }
    for (unsigned g = 0; b->gpus && g < b->n_gpus; g++)
        czk_cuda_ctx_free(b->gpus[g].loader);
    for (unsigned i = 0; i < b->n_regs; i++)
        czk_cuda_host_unregister(b->regs[i].base, b->regs[i].len, HOST_REGISTER_STEP(b->regs[i].len));
    for (unsigned g = 0; b->gpus && g < b->n_gpus; g++)
        free(b->gpus[g].keys);
    pthread_mutex_destroy(&b->add_mu);
    free(b->regs);
    free(b->gpus);
    free(b->ctx);
    free(b->circ);
    free(b);
}

/* the five point arrays of z in keymem section order (A, B1, B2, C, H), on its curve */
static void key_points(const czk_zkey *z, const void *pts[CZK_KEYMEM_SECTIONS])
{
    int bn = z->curve == CZK_CURVE_BN254;
    pts[CZK_KEYMEM_A] = bn ? (const void *)z->bn.a : (const void *)z->a;
    pts[CZK_KEYMEM_B1] = bn ? (const void *)z->bn.b1 : (const void *)z->b1;
    pts[CZK_KEYMEM_B2] = bn ? (const void *)z->bn.b2 : (const void *)z->b2;
    pts[CZK_KEYMEM_C] = bn ? (const void *)z->bn.c : (const void *)z->c;
    pts[CZK_KEYMEM_H] = bn ? (const void *)z->bn.h : (const void *)z->h;
}

/* section C of m: the lead's infinity points (all zero), then z's C points */
static int c_section_write(czk_keymem *m, const czk_zkey *z, const void *pts)
{
    const size_t pt = czk_groth16_any_point_bytes(z->curve, CZK_G16_PT_C), lead = CZK_KEYMEM_C_LEAD(z);
    void *zero = calloc(lead, pt);
    int r = zero ? czk_cuda_vmm_write(&m->vm, m->off[CZK_KEYMEM_C], zero, lead * pt) : -ENOMEM;
    free(zero);
    if (r >= 0)
        r = czk_cuda_vmm_write(&m->vm, m->off[CZK_KEYMEM_C] + lead * pt, pts, (m->n[CZK_KEYMEM_C] - lead) * pt);
    return r;
}

/* the five bases of k over its key memory's sections; with z's points
 * (z->loaded has them) they are copied there first, else the memory already
 * holds them (a resumed key) */
static int keys_place(cuda_gpu *gpu, cuda_keys *k, const czk_zkey *z)
{
    int up = (z->loaded & CZK_ZKEY_POINTS) != 0, r = 0;
    czk_keymem *m = &k->km;
    const void *pts[CZK_KEYMEM_SECTIONS];
    czk_cuda_bases **out[CZK_KEYMEM_SECTIONS] = {&k->a, &k->b1, &k->b2, &k->c, &k->h};

    key_points(z, pts);
    k->c_lead = CZK_KEYMEM_C_LEAD(z);
    for (int s = 0; s < CZK_KEYMEM_SECTIONS && r >= 0; s++) {
        void *dev = czk_keymem_section(m, s);
        const void *src = up ? pts[s] : NULL;
        if (s == CZK_KEYMEM_C && src) {
            if ((r = c_section_write(m, z, src)) < 0)
                break;
            src = NULL;
        }
        r = z->curve == CZK_CURVE_BN254
                ? czk_cuda_bn254_bases_place(gpu->loader, out[s], dev, src, m->n[s], s == CZK_KEYMEM_B2)
                : czk_cuda_bases_place(gpu->loader, out[s], dev, src, m->n[s], s == CZK_KEYMEM_B2);
    }
    return r;
}

/* the five bases of k uploaded into memory of their own (no fd store) */
static int keys_upload(cuda_gpu *gpu, cuda_keys *k, const czk_zkey *z)
{
    size_t npriv = (size_t)z->n_vars - z->n_public - 1;
    const size_t n[CZK_KEYMEM_SECTIONS] = {z->n_vars, z->n_vars, z->n_vars, npriv, z->domain_size};
    const void *pts[CZK_KEYMEM_SECTIONS];
    czk_cuda_bases **out[CZK_KEYMEM_SECTIONS] = {&k->a, &k->b1, &k->b2, &k->c, &k->h};
    int r = 0;

    key_points(z, pts);
    k->c_lead = 0;
    for (int s = 0; s < CZK_KEYMEM_SECTIONS && r >= 0; s++) {
        int g2 = s == CZK_KEYMEM_B2;
        if (z->curve == CZK_CURVE_BN254)
            r = g2 ? czk_cuda_bn254_bases_upload_g2(gpu->loader, out[s], pts[s], n[s])
                   : czk_cuda_bn254_bases_upload_g1(gpu->loader, out[s], pts[s], n[s]);
        else
            r = g2 ? czk_cuda_bases_upload_g2(gpu->loader, out[s], pts[s], n[s])
                   : czk_cuda_bases_upload_g1(gpu->loader, out[s], pts[s], n[s]);
    }
    return r;
}

/* add_key and resume_key: circuit was configured at create, with a key of
 * z's curve; 0 or -EINVAL with e saying which */
static int key_admissible(const czk_backend *b, unsigned circuit, const czk_zkey *z, czk_error *e)
{
    if (circuit >= b->cfg.n_circuits || !b->circ[circuit].configured)
        return czk_errorf(e, -EINVAL, "cuda backend: circuit %u was not configured at create", circuit);
    if (z->curve != b->circ[circuit].curve)
        return czk_errorf(e, -EINVAL, "cuda backend: circuit %u: the key is for %s, at create it was for %s",
                          circuit, czk_curve_name(z->curve), czk_curve_name(b->circ[circuit].curve));
    return 0;
}

/* 1 when gpu has need bytes free for key points (plus the margin); else 0
 * with why (may be NULL) saying how much it has */
static int room_for(const czk_backend *b, const cuda_gpu *gpu, size_t need, char why[384])
{
    czk_cuda_dev_info info;
    (void)b;
    if (czk_cuda_device_info(gpu->device, &info) < 0) {
        if (why)
            snprintf(why, 384, "querying GPU %d failed: %s", gpu->device, cuda_err());
        return 0;
    }
    if (need + DEVICE_MEM_MARGIN <= info.mem_free)
        return 1;
    if (why)
        snprintf(why, 384, "they need %zu MiB on GPU %d (%s), which has %zu MiB free of %zu MiB (+%zu MiB margin)",
                 need >> 20, gpu->device, info.name, info.mem_free >> 20, info.mem_total >> 20, DEVICE_MEM_MARGIN >> 20);
    return 0;
}

/* the number of GPUs holding circuit's points; with on, their list ("0,1") */
static unsigned resident_on(const czk_backend *b, unsigned circuit, char *on, size_t n)
{
    unsigned cnt = 0;
    size_t len = 0;
    if (on && n)
        on[0] = 0;
    for (unsigned g = 0; g < b->n_gpus; g++) {
        if (!b->gpus[g].keys[circuit].resident)
            continue;
        if (on && len < n)
            len += (size_t)snprintf(on + len, n - len, "%s%d", cnt ? "," : "", b->gpus[g].device);
        cnt++;
    }
    return cnt;
}

/* Fixed-base MSM tables (czk_cuda_bases_precompute) for circuit's key on gpu,
 * once its points are resident: B2 first (the slowest MSM, and a G2 table
 * saves the most time per byte), then H, A, B1, C; each the fastest that
 * leaves k->tab_keep free (czk_cuda_bases_table_fit: a full table, else one
 * of fewer rows).  What gets none runs without (same proofs, slower); logged
 * either way.  Ends early when keys_free asks. */
static void tables_build(cuda_gpu *gpu, unsigned circuit)
{
    cuda_keys *k = &gpu->keys[circuit];
    czk_cuda_bases *order[CZK_KEYMEM_SECTIONS] = {k->b2, k->h, k->a, k->b1, k->c};
    static const char *const name[CZK_KEYMEM_SECTIONS] = {"B2", "H", "A", "B1", "C"};
    char built[256] = "", left[160] = "";
    size_t keep = k->tab_keep, total = 0, lb = 0, ll = 0;
    uint64_t t0 = czk_trace_now();

    for (int i = 0; i < CZK_KEYMEM_SECTIONS && !atomic_load(&k->tab_stop); i++) {
        czk_cuda_table_plan tp;
        czk_cuda_dev_info info;
        int r = czk_cuda_device_info(gpu->device, &info);
        if (r == 0)
            r = czk_cuda_bases_table_fit(order[i], info.mem_free > keep ? info.mem_free - keep : 0, &tp);
        if (r == 0 && (r = czk_cuda_bases_precompute(order[i], tp.rows, tp.c)) < 0)
            czk_warn("cuda backend: circuit %u: the %s MSM's table on GPU %d failed (the MSM runs without): %s",
                     circuit, name[i], gpu->device, cuda_err());
        if (r == 0) {
            char rows[32] = ""; /* a partial table's share of the rows */
            if (tp.rows < tp.windows)
                snprintf(rows, sizeof(rows), "%u of %u rows, ", tp.rows, tp.windows);
            total += tp.bytes;
            lb += (size_t)snprintf(built + lb, sizeof(built) - lb, "%s%s (c=%u, %s%zu MiB)", lb ? ", " : "", name[i],
                                   tp.c, rows, tp.bytes >> 20);
        } else {
            ll += (size_t)snprintf(left + ll, sizeof(left) - ll, "%s%s", ll ? ", " : "", name[i]);
        }
        if (lb >= sizeof(built))
            lb = sizeof(built) - 1;
        if (ll >= sizeof(left))
            ll = sizeof(left) - 1;
    }
    czk_info("cuda backend: circuit %u: MSM tables on GPU %d: %s%s%s (%zu MiB, %.1f s)", circuit, gpu->device,
             lb ? built : "none", ll ? "; without (short of device memory, or failed): " : "", ll ? left : "",
             total >> 20, (double)(czk_trace_now() - t0) / 1e9);
}

typedef struct tables_job {
    cuda_gpu *gpu;
    unsigned circuit;
} tables_job;

static void *tables_main(void *arg)
{
    tables_job j = *(tables_job *)arg;
    free(arg);
    tables_build(j.gpu, j.circuit);
    return NULL;
}

/* The tables of circuit's key, resident on gpu, when cfg.tables_on asks for
 * them: they keep free the margin, cfg.table_reserve and the points of the
 * configured circuits that have no key yet.  Built here (defer_keys 0: czk
 * prove, tests) or on a thread of their own (czk-gpud: the circuit is served
 * meanwhile, each MSM using its table from the moment it is complete, so a
 * restart is not held up by seconds of table building).  add_mu held. */
static void tables_start(czk_backend *b, cuda_gpu *gpu, unsigned circuit)
{
    cuda_keys *k = &gpu->keys[circuit];
    tables_job *j;

    if (!b->cfg.tables_on || !b->cfg.tables_on[circuit])
        return;
    k->tab_keep = DEVICE_MEM_MARGIN + b->cfg.table_reserve;
    for (unsigned c = 0; c < b->cfg.n_circuits; c++)
        if (c != circuit && b->circ[c].configured && !b->circ[c].has_key)
            k->tab_keep += key_bytes(&b->circ[c]);
    atomic_store(&k->tab_stop, 0);
    if (!b->cfg.defer_keys) {
        tables_build(gpu, circuit);
        return;
    }
    if (!(j = malloc(sizeof(*j)))) {
        czk_warn("cuda backend: circuit %u: no memory to start the MSM tables' build: none built", circuit);
        return;
    }
    j->gpu = gpu;
    j->circuit = circuit;
    if (pthread_create(&k->tab_th, NULL, tables_main, j) != 0) {
        free(j);
        czk_warn("cuda backend: circuit %u: cannot start the MSM tables' build: none built", circuit);
        return;
    }
    k->tab_started = 1;
}

/* backend.h resume_key: every GPU's key memory of this circuit back from
 * the fd store (keymem.h), or nothing */
static int cuda_resume_key(czk_backend *b, unsigned circuit, const czk_zkey *z, czk_error *e)
{
    cuda_circuit *ci;
    int r = 1;

    if (key_admissible(b, circuit, z, e) < 0)
        return -EINVAL;
    ci = &b->circ[circuit];
    if (ci->has_key || z->n_vars != ci->n_vars || z->n_public != ci->n_public || z->domain_size != ci->domain_size)
        return 0;
    pthread_mutex_lock(&b->add_mu);
    for (unsigned g = 0; g < b->n_gpus && r == 1; g++) {
        cuda_gpu *gpu = &b->gpus[g];
        cuda_keys *k = &gpu->keys[circuit];
        if ((r = czk_keymem_attach(gpu->device, z, &k->km, e)) == 1) {
            if (keys_place(gpu, k, z) < 0) {
                r = czk_errorf(e, -EIO, "cuda backend: circuit %u: %s", circuit, cuda_err());
            } else {
                k->resident = 1;
                tables_start(b, gpu, circuit);
            }
        } else if (r == 0 && !room_for(b, gpu, key_bytes(ci), NULL)) {
            r = 1; /* the previous gpud left it out here for lack of memory, as add_key would */
        }
    }
    if (r == 1 && !resident_on(b, circuit, NULL, 0))
        r = 0; /* stored nowhere */
    if (r != 1)
        for (unsigned g = 0; g < b->n_gpus; g++)
            keys_free(&b->gpus[g].keys[circuit], 0);
    else
        ci->has_key = 1;
    pthread_mutex_unlock(&b->add_mu);
    if (r == 1) {
        char on[128];
        resident_on(b, circuit, on, sizeof(on));
        czk_info("cuda backend: circuit %u: %zu MiB of key points resident on GPU(s) %s, kept from the previous "
                 "czk-gpud (fd store)",
                 circuit, key_bytes(ci) >> 20, on);
    }
    return r;
}

static int cuda_add_key(czk_backend *b, unsigned circuit, const czk_zkey *z, czk_error *e)
{
    cuda_circuit *ci;
    size_t need;
    char short_of[384] = "";
    int r = 0;
    unsigned g;

    if (key_admissible(b, circuit, z, e) < 0)
        return -EINVAL;
    ci = &b->circ[circuit];
    if (!(z->loaded & CZK_ZKEY_POINTS) || z->n_vars != ci->n_vars || z->n_public != ci->n_public ||
        z->domain_size != ci->domain_size)
        return czk_errorf(e, -EINVAL, "cuda backend: the key of circuit %u has other sizes than at create, or no points",
                          circuit);
    if (ci->has_key)
        return czk_errorf(e, -EEXIST, "cuda backend: circuit %u has its key already", circuit);
    need = key_bytes(ci);
    pthread_mutex_lock(&b->add_mu);
    for (g = 0; g < b->n_gpus && !r; g++) {
        cuda_gpu *gpu = &b->gpus[g];
        cuda_keys *k = &gpu->keys[circuit];
        char why[384];
        if (!room_for(b, gpu, need, why)) {
            /* another GPU may hold it: this one's contexts do not serve the circuit */
            czk_warn("cuda backend: circuit %u: key points not made resident on GPU %d: %s", circuit, gpu->device,
                     why);
            snprintf(short_of, sizeof(short_of), "%s", why);
            continue;
        }
        if (czk_cuda_vmm_supported(gpu->device)) {
            /* one fd-shareable allocation, kept in the fd store once complete (keymem.h) */
            if ((r = czk_keymem_alloc(gpu->device, z, &k->km, e)) < 0)
                break;
            r = keys_place(gpu, k, z);
            if (r == 0)
                r = czk_keymem_seal(&k->km, z, e) < 0 ? -EIO : 0;
        } else {
            r = keys_upload(gpu, k, z);
        }
        if (r < 0) {
            r = czk_errorf(e, r, "cuda backend: uploading the points of circuit %u (%zu MiB) to GPU %d failed: %s",
                           circuit, need >> 20, gpu->device, e->msg[0] ? e->msg : cuda_err());
            break;
        }
        k->resident = 1;
        tables_start(b, gpu, circuit);
    }
    if (!r && !resident_on(b, circuit, NULL, 0))
        r = czk_errorf(e, -ENOMEM, "cuda backend: the key points of circuit %u fit on no GPU: %s: configure fewer or "
                       "smaller circuits or fewer gpud contexts",
                       circuit, short_of);
    if (r < 0) /* nothing half-done stays behind */
        for (unsigned k = 0; k < b->n_gpus; k++)
            keys_free(&b->gpus[k].keys[circuit], 0);
    else
        ci->has_key = 1;
    pthread_mutex_unlock(&b->add_mu);
    if (!r) {
        char on[128];
        resident_on(b, circuit, on, sizeof(on));
        czk_info("cuda backend: circuit %u: %zu MiB of key points resident on GPU(s) %s of %u", circuit, need >> 20,
                 on, b->n_gpus);
    }
    return r;
}

static void cuda_remove_key(czk_backend *b, unsigned circuit)
{
    if (circuit >= b->cfg.n_circuits || !b->circ[circuit].configured)
        return;
    pthread_mutex_lock(&b->add_mu);
    for (unsigned g = 0; g < b->n_gpus; g++)
        keys_free(&b->gpus[g].keys[circuit], 1);
    b->circ[circuit].has_key = 0;
    pthread_mutex_unlock(&b->add_mu);
    czk_info("cuda backend: circuit %u: key points freed", circuit);
}

/* one pool region's page-locking, on its own thread (register_regions) */
typedef struct reg_job {
    const czk_backend_region *rg;
    int rc;
    char why[160];
    pthread_t th;
    int started;
} reg_job;

static void *reg_main(void *arg)
{
    reg_job *j = arg;
    /* one registration per region (a copy must not straddle two), in
     * chunks only past the driver's single-call limit */
    j->rc = czk_cuda_host_register(j->rg->base, j->rg->len, HOST_REGISTER_STEP(j->rg->len));
    if (j->rc < 0)
        snprintf(j->why, sizeof(j->why), "%s", cuda_err());
    return NULL;
}

/* page-locks the pools' regions once (DMA straight from the slots), all at
 * once on one thread each: pinning costs ~0.1 s/GB on one thread and the
 * regions are independent, so a restart does not wait for them in turn.  A
 * region that cannot be locked is copied from at pageable speed (warned). */
static void register_regions(czk_backend *b, const czk_backend_config *cfg)
{
    reg_job *jobs = calloc(cfg->n_regions ? cfg->n_regions : 1, sizeof(*jobs));
    if (!jobs) {
        czk_warn("cuda backend: out of memory: the pools are not page-locked");
        return;
    }
    for (unsigned i = 0; i < cfg->n_regions; i++) {
        jobs[i].rg = &cfg->regions[i];
        if (!jobs[i].rg->base || !jobs[i].rg->len)
            continue;
        jobs[i].started = pthread_create(&jobs[i].th, NULL, reg_main, &jobs[i]) == 0;
        if (!jobs[i].started)
            reg_main(&jobs[i]);
    }
    for (unsigned i = 0; i < cfg->n_regions; i++) {
        const czk_backend_region *rg = jobs[i].rg;
        if (jobs[i].started)
            pthread_join(jobs[i].th, NULL);
        if (!rg->base || !rg->len)
            continue;
        if (jobs[i].rc < 0) {
            czk_warn("cuda backend: could not page-lock host region %u (%zu MiB): %s; copies from it run at pageable "
                     "speed (check `ulimit -l` / LimitMEMLOCK=)",
                     i, rg->len >> 20, jobs[i].why);
            continue;
        }
        b->regs[b->n_regs++] = *rg;
    }
    free(jobs);
}

static int cuda_create(czk_backend **out, const czk_backend_config *cfg, czk_error *e)
{
    czk_backend *b;
    czk_cuda_cfg cc, lc;
    uint64_t max_domain = 0, max_vars = 0;
    uint32_t max_public = 0;
    unsigned max_log = 1, curves = 0;
    int ndev = 0, r;

    *out = NULL;
    if ((r = czk_cuda_device_count(&ndev)) < 0)
        return czk_errorf(e, r, "cuda backend: no usable GPU (%s)", cuda_err());
    if (cfg->n_circuits == 0)
        return czk_errorf(e, -EINVAL, "cuda backend: no circuits");
    b = calloc(1, sizeof(*b));
    if (!b)
        return czk_errorf(e, -ENOMEM, "cuda backend: out of memory");
    pthread_mutex_init(&b->add_mu, NULL);
    b->cfg = *cfg;
    b->n_gpus = (unsigned)ndev;
    b->n = cfg->contexts ? cfg->contexts : CUDA_CONTEXTS_PER_GPU * b->n_gpus;
    if (b->n < b->n_gpus)
        b->n_gpus = b->n; /* fewer contexts than GPUs: use the first ones */
    b->circ = calloc(cfg->n_circuits, sizeof(*b->circ));
    b->gpus = calloc(b->n_gpus, sizeof(*b->gpus));
    b->ctx = calloc(b->n, sizeof(*b->ctx));
    if (!b->circ || !b->gpus || !b->ctx) {
        cuda_destroy(b);
        return czk_errorf(e, -ENOMEM, "cuda backend: out of memory");
    }
    for (unsigned i = 0; i < cfg->n_circuits; i++) {
        const czk_zkey *z = cfg->zkeys[i];
        cuda_circuit *ci = &b->circ[i];
        if (!z)
            continue; /* never added (defer_keys) */
        ci->configured = 1;
        ci->curve = z->curve;
        curves |= z->curve == CZK_CURVE_BN254 ? CZK_CUDA_CURVE_BN254 : CZK_CUDA_CURVE_BLS12_381;
        ci->n_vars = z->n_vars;
        ci->n_public = z->n_public;
        ci->domain_size = z->domain_size;
        ci->log_domain = z->log_domain;
        if (z->domain_size > max_domain)
            max_domain = z->domain_size;
        if (z->n_vars > max_vars)
            max_vars = z->n_vars;
        if (z->n_public > max_public)
            max_public = z->n_public;
        if (z->log_domain > max_log)
            max_log = z->log_domain;
    }
    if (max_log > CZK_CUDA_MAX_LOG_N) {
        r = czk_errorf(e, -EINVAL, "cuda backend: a circuit has domain 2^%u, the GPU code supports up to 2^%d", max_log,
                       CZK_CUDA_MAX_LOG_N);
        cuda_destroy(b);
        return r;
    }
    memset(&cc, 0, sizeof(cc));
    cc.max_log_n = max_log;
    cc.max_msm_n = max_vars > max_domain ? max_vars : max_domain;
    cc.enable_g2 = 1;
    cc.msm_table_dense_pm = CZK_CUDA_TABLE_DENSE_PM;
    cc.curves = curves;
    for (unsigned i = 0; cfg->tables_on && i < cfg->n_circuits; i++)
        cc.msm_tables |= cfg->tables_on[i] != 0;

    /* contexts first (their buffers and MSM workspace are needed anyway);
     * the key points go into what is left, circuit by circuit (add_key) */
    for (unsigned i = 0; i < b->n; i++) {
        cuda_ctx *c = &b->ctx[i];
        c->gpu = i % b->n_gpus;
        cc.device = (int)c->gpu;
        b->gpus[c->gpu].device = cc.device;
        if ((r = czk_cuda_ctx_new(&c->cc, &cc)) < 0) {
            r = czk_errorf(e, r, "cuda backend: context %u on GPU %d (domain 2^%u, MSMs of %zu terms): %s", i,
                           cc.device, max_log, cc.max_msm_n, cuda_err());
            cuda_destroy(b);
            return r;
        }
        if (sem_init(&c->copied, 0, 0) < 0) {
            r = czk_errorf(e, -errno, "cuda backend: sem_init: %s", strerror(errno));
            cuda_destroy(b);
            return r;
        }
        c->sem_ok = 1;
        c->pub = calloc(max_public + 1, sizeof(czk_fr));
        if (!c->pub) {
            cuda_destroy(b);
            return czk_errorf(e, -ENOMEM, "cuda backend: out of memory");
        }
    }
    /* one loader context per GPU, with the smallest buffers: only its copy
     * stream is used (add_key) */
    memset(&lc, 0, sizeof(lc));
    lc.max_log_n = 1;
    lc.max_msm_n = 2;
    lc.curves = curves;
    for (unsigned g = 0; g < b->n_gpus; g++) {
        cuda_gpu *gpu = &b->gpus[g];
        czk_cuda_dev_info info;
        lc.device = gpu->device;
        if ((r = czk_cuda_ctx_new(&gpu->loader, &lc)) < 0) {
            r = czk_errorf(e, r, "cuda backend: the key loader context on GPU %d: %s", gpu->device, cuda_err());
            cuda_destroy(b);
            return r;
        }
        gpu->keys = calloc(cfg->n_circuits, sizeof(*gpu->keys));
        if (!gpu->keys) {
            cuda_destroy(b);
            return czk_errorf(e, -ENOMEM, "cuda backend: out of memory");
        }
        if (czk_cuda_device_info(gpu->device, &info) == 0)
            czk_info("cuda backend: GPU %d %s (sm %d.%d, %d SMs): %zu MiB free for key points", gpu->device,
                     info.name, info.cc_major, info.cc_minor, info.sm_count, info.mem_free >> 20);
    }
    if (!cfg->defer_keys)
        for (unsigned i = 0; i < cfg->n_circuits; i++)
            if (b->circ[i].configured && (r = cuda_add_key(b, i, cfg->zkeys[i], e)) < 0) {
                cuda_destroy(b);
                return r;
            }
    /* page-lock the pools once: DMA straight from the slots */
    if (cfg->n_regions) {
        b->regs = calloc(cfg->n_regions, sizeof(*b->regs));
        if (!b->regs) {
            cuda_destroy(b);
            return czk_errorf(e, -ENOMEM, "cuda backend: out of memory");
        }
    }
    register_regions(b, cfg);
    czk_info("cuda backend: %u context(s) on %u GPU(s), buffers for domain 2^%u and MSMs of %zu terms, %u of %u host "
             "region(s) page-locked",
             b->n, b->n_gpus, max_log, cc.max_msm_n, b->n_regs, cfg->n_regions);
    *out = b;
    return 0;
}

static unsigned cuda_contexts(const czk_backend *b) { return b->n; }

static unsigned cuda_device_of(const czk_backend *b, unsigned ctx) { return ctx < b->n ? b->ctx[ctx].gpu : 0; }

/* A failed CUDA call on context c: a sticky error (lost device, uncorrectable
 * ECC, illegal address, kernel fault) leaves the device unusable, and every
 * later call fails with it, so one more synchronisation of c's streams tells
 * it from an error the device recovered from (that one was consumed when it
 * was reported).  The sticky kind is -ENODEV (backend.h: gpud takes the
 * device out of service); the others stay as they were. */
static int device_error(cuda_ctx *c, int r)
{
    return r == -EIO && czk_cuda_sync(c->cc) < 0 ? -ENODEV : r;
}

/* backend.h device_numa: sysfs's numa_node of the GPU's PCI device (-1
 * there, on a host without NUMA, and when it cannot be read) */
static int cuda_device_numa(const czk_backend *b, unsigned dev)
{
    char id[32], path[96], buf[16];
    ssize_t n;
    int fd, node;

    if (dev >= b->n_gpus || czk_cuda_device_pci_id(b->gpus[dev].device, id, sizeof(id)) < 0)
        return -1;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", id);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    node = atoi(buf);
    return node >= 0 && node < 1024 ? node : -1;
}

static int cuda_device_mem(const czk_backend *b, unsigned dev, uint64_t *used, uint64_t *total)
{
    size_t mfree, mtotal;
    int r;

    if (dev >= b->n_gpus)
        return -EINVAL;
    if ((r = czk_cuda_mem_info(b->gpus[dev].device, &mfree, &mtotal)) < 0)
        return r;
    *total = mtotal;
    *used = mtotal > mfree ? mtotal - mfree : 0;
    return 0;
}

/* CUDA's callback thread: the copies of this context are complete */
static void copy_done(void *arg)
{
    cuda_ctx *c = arg;
    sem_post(&c->copied);
}

static int cuda_serves(const czk_backend *b, unsigned ctx, unsigned circuit)
{
    return ctx < b->n && circuit < b->cfg.n_circuits && b->circ[circuit].has_key &&
           b->gpus[b->ctx[ctx].gpu].keys[circuit].resident;
}

static int cuda_copy_in(czk_backend *b, unsigned ctx, unsigned circuit, const czk_backend_input *in, czk_error *e)
{
    cuda_ctx *c;
    const cuda_circuit *z;
    int r;

    if (ctx >= b->n || circuit >= b->cfg.n_circuits || !b->circ[circuit].has_key)
        return czk_errorf(e, -EINVAL, "cuda backend: context %u / circuit %u out of range, or the circuit has no key",
                          ctx, circuit);
    c = &b->ctx[ctx];
    z = &b->circ[circuit];
    c->loaded = 0;
    if (!b->gpus[c->gpu].keys[circuit].resident)
        return czk_errorf(e, -EINVAL, "cuda backend: circuit %u's key points are not resident on GPU %d (context %u)",
                          circuit, b->gpus[c->gpu].device, ctx);
    if (in->domain_size != z->domain_size || in->n_vars != z->n_vars)
        return czk_errorf(e, -EINVAL, "slot holds domain %llu and %llu variables, the circuit has %u and %u",
                          (unsigned long long)in->domain_size, (unsigned long long)in->n_vars, z->domain_size,
                          z->n_vars);
    c->job = in->job;
    c->partition = in->partition;
    /* the public signals are the only host-side data compute needs */
    memcpy(c->pub, in->w + sizeof(czk_fr), (size_t)z->n_public * sizeof(czk_fr));
    if ((r = czk_cuda_upload_async(c->cc, CZK_CUDA_BUF_A, 0, (const czk_fr *)in->a, z->domain_size, NULL, NULL)) < 0 ||
        (r = czk_cuda_upload_async(c->cc, CZK_CUDA_BUF_B, 0, (const czk_fr *)in->b, z->domain_size, NULL, NULL)) < 0 ||
        (r = czk_cuda_upload_async(c->cc, CZK_CUDA_BUF_C, 0, (const czk_fr *)in->c, z->domain_size, NULL, NULL)) < 0 ||
        (r = czk_cuda_upload_async(c->cc, CZK_CUDA_BUF_W, 0, (const czk_fr *)in->w, z->n_vars, copy_done, c)) < 0) {
        czk_errorf(e, r, "cuda backend: queueing the copy of job %llu partition %u: %s", (unsigned long long)in->job,
                   in->partition, cuda_err());
        /* copies already queued may still read the slot, which gpud hands
         * back when we return: wait for them (error path only); a wait that
         * fails as well is a sticky error: the device is lost */
        if (czk_cuda_sync(c->cc) < 0 && r == -EIO)
            e->code = r = -ENODEV;
        return r;
    }
    while (sem_wait(&c->copied) < 0)
        if (errno != EINTR)
            return czk_errorf(e, -errno, "cuda backend: sem_wait: %s", strerror(errno));
    {
        /* the DMA alone, by device timing, for the trace (h2d rate) */
        double ms;
        uint64_t t1 = czk_trace_now();
        if (czk_cuda_copy_ms(c->cc, &ms) == 0 && ms >= 0 && ms * 1e6 < (double)t1)
            czk_trace_add(c->job, c->partition, CZK_TRACE_H2D, t1 - (uint64_t)(ms * 1e6), t1);
    }
    c->loaded = 1;
    c->circuit = circuit;
    return 0;
}

/* h into buffer A; the sync waits for this context's streams only (for the
 * h trace record and its errors), never for the whole device */
static int h_and_wait(czk_cuda_ctx *cc, const cuda_circuit *z)
{
    int r = is_bn(z) ? czk_cuda_bn254_compute_h_dev(cc, z->log_domain) : czk_cuda_compute_h_dev(cc, z->log_domain);
    return r < 0 ? r : czk_cuda_sync(cc);
}

/* the five MSMs of a partition whose h is in buffer A and w in buffer W, on
 * the curve of z; MSM(stage, what, call) runs and traces each.  A, B1 and B2
 * read the witness, and so does C where its section is led by the public
 * inputs' infinity points (k->c_lead): one sort of its digits serves them all
 * (where their plans agree); else C reads the private part only */
#define CUDA_MSMS(G1, G2, MSM_G1, MSM_G2, G1_ADD, G1_AFF, G2_AFF, out)                                        \
    do {                                                                                                           \
        G1 pa, pb1, pc, ph;                                                                                        \
        G2 pb2;                                                                                                    \
        czk_cuda_msm_keep_digits(c->cc, 1);                                                                        \
        MSM(CZK_TRACE_MSM_A, "the A MSM", MSM_G1(c->cc, k->a, 0, CZK_CUDA_BUF_W, 0, z->n_vars, &pa));             \
        MSM(CZK_TRACE_MSM_B1, "the B1 MSM", MSM_G1(c->cc, k->b1, 0, CZK_CUDA_BUF_W, 0, z->n_vars, &pb1));         \
        MSM(CZK_TRACE_MSM_B2, "the B2 MSM", MSM_G2(c->cc, k->b2, 0, CZK_CUDA_BUF_W, 0, z->n_vars, &pb2));         \
        if (k->c_lead)                                                                                             \
            MSM(CZK_TRACE_MSM_C, "the C MSM", MSM_G1(c->cc, k->c, 0, CZK_CUDA_BUF_W, 0, z->n_vars, &pc));         \
        czk_cuda_msm_keep_digits(c->cc, 0);                                                                        \
        if (!k->c_lead)                                                                                            \
            MSM(CZK_TRACE_MSM_C, "the C MSM",                                                                      \
                MSM_G1(c->cc, k->c, 0, CZK_CUDA_BUF_W, (size_t)z->n_public + 1, npriv, &pc));                     \
        MSM(CZK_TRACE_MSM_H, "the H MSM", MSM_G1(c->cc, k->h, 0, CZK_CUDA_BUF_A, 0, z->domain_size, &ph));        \
        G1_ADD(&pc, &pc, &ph);                                                                                     \
        G1_AFF(&(out)->a, &pa);                                                                                    \
        G1_AFF(&(out)->b1, &pb1);                                                                                  \
        G1_AFF(&(out)->c, &pc);                                                                                    \
        G2_AFF(&(out)->b2, &pb2);                                                                                  \
    } while (0)

static int cuda_compute(czk_backend *b, unsigned ctx, unsigned circuit, czk_groth16_any_msm_out *res, czk_fr *pub,
                        czk_error *e)
{
    cuda_ctx *c;
    const cuda_circuit *z;
    const cuda_keys *k;
    size_t npriv;
    uint64_t t;
    int r;

    if (ctx >= b->n || circuit >= b->cfg.n_circuits)
        return czk_errorf(e, -EINVAL, "cuda backend: context %u / circuit %u out of range", ctx, circuit);
    c = &b->ctx[ctx];
    if (!c->loaded || c->circuit != circuit)
        return czk_errorf(e, -EINVAL, "cuda backend: context %u does not hold a partition of circuit %u", ctx, circuit);
    c->loaded = 0; /* h overwrites A: the partition can be computed once */
    z = &b->circ[circuit];
    k = &b->gpus[c->gpu].keys[circuit];
    npriv = (size_t)z->n_vars - z->n_public - 1;
    memset(res, 0, sizeof(*res));
    res->curve = z->curve;

#define MSM(stage, what, call)                                                                                     \
    do {                                                                                                           \
        t = czk_trace_now();                                                                                       \
        if ((r = (call)) < 0) {                                                                                    \
            char why_[512];                                                                                        \
            snprintf(why_, sizeof(why_), "%s", cuda_err());                                                        \
            r = device_error(c, r);                                                                                \
            return czk_errorf(e, r, "cuda backend: %s of job %llu partition %u failed: %s%s", what,              \
                              (unsigned long long)c->job, c->partition, why_,                                      \
                              r == -ENODEV ? " (a sticky error: the device is lost)" : "");                        \
        }                                                                                                          \
        czk_trace_add(c->job, c->partition, stage, t, czk_trace_now());                                          \
    } while (0)

    czk_cuda_msm_keep_digits(c->cc, 0); /* the buffers were written since any earlier MSM */
    MSM(CZK_TRACE_H, "computing h", h_and_wait(c->cc, z));
    if (is_bn(z))
        CUDA_MSMS(czk_bn254_g1, czk_bn254_g2, czk_cuda_bn254_msm_g1, czk_cuda_bn254_msm_g2, czk_bn254_g1_add,
                  czk_bn254_g1_to_aff, czk_bn254_g2_to_aff, &res->u.bn);
    else
        CUDA_MSMS(czk_g1, czk_g2, czk_cuda_msm_g1, czk_cuda_msm_g2, czk_g1_add, czk_g1_to_aff, czk_g2_to_aff,
                  &res->u.bls);
#undef MSM
    memcpy(pub, c->pub, (size_t)z->n_public * sizeof(czk_fr));
    return 0;
}

const czk_backend_ops czk_backend_cuda_ops = {
    .name = "cuda",
    .create = cuda_create,
    .destroy = cuda_destroy,
    .contexts = cuda_contexts,
    .copy_in = cuda_copy_in,
    .compute = cuda_compute,
    .device_of = cuda_device_of,
    .serves = cuda_serves,
    .device_numa = cuda_device_numa,
    .add_key = cuda_add_key,
    .resume_key = cuda_resume_key,
    .remove_key = cuda_remove_key,
    .keeps_host_points = 0,
    .device_mem = cuda_device_mem,
};

/* ---- czk setup's point multiplications (backend.h, czk_backend_setup_accel) ---- */

static int setup_gen_mul(void *arg, czk_curve_id curve, int g2, const void *base, const void *k, size_t n, void *out)
{
    (void)arg;
    return czk_cuda_gen_mul(0, curve == CZK_CURVE_BN254 ? CZK_CUDA_CURVE_BN254 : CZK_CUDA_CURVE_BLS12_381, g2, base,
                            k, n, out);
}

int czk_backend_cuda_setup_accel_(czk_setup_accel *accel, int fallback, czk_error *e)
{
    int ndev = 0, r;

    if (czk_cuda_device_count(&ndev) || ndev == 0)
        return czk_errorf(e, -ENODEV, "no usable GPU (%s)",
                          czk_cuda_last_error()[0] ? czk_cuda_last_error() : "no cuda device");
    if ((r = czk_cuda_device_check(0)) < 0)
        return czk_errorf(e, r, "%s", czk_cuda_last_error());
    *accel = (czk_setup_accel){ .name = "GPU 0", .gen_mul = setup_gen_mul, .fallback = fallback };
    return 1;
}
