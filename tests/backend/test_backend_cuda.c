/*
 * test_backend_cuda.c — the cuda backend (backend/backend_cuda.c) against the
 * cpu backend (backend/cpu/backend_cpu.c, itself checked against GMP and
 * snarkjs in tests/groth16), through the backend.h interface gpud uses.
 *
 *   test_backend_cuda open
 *       czk_backend_open without a GPU: "cuda" alone fails with -ENODEV and a
 *       message, "cuda" with fallback and "auto" give the cpu backend.  With a
 *       GPU: "cuda" and "auto" open the cuda backend.  Runs everywhere.
 *   test_backend_cuda probe
 *       exit 0 when a GPU is usable, 77 otherwise (for the shell tests).
 *   test_backend_cuda compare ZKEY WTNS [ZKEY WTNS ...]
 *       exit 77 without a GPU.  For each key: a, b, c built from the witness
 *       (the synth's stage) into a registered slot-like buffer; the cpu
 *       backend and both contexts of a 2-context cuda backend must give the
 *       same czk_groth16_any_msm_out and public signals -- with context 1 copying
 *       in while context 0 computes (the double-buffered path) -- and again
 *       for random (unsatisfying) a, b, c, w, which the MSMs do not care about.
 *   test_backend_cuda mock   (only in the build against tests/backend/mock_cuda.c)
 *       the cuda backend's use of czk_cuda.h on a host stand-in: -ENOMEM when
 *       the keys do not fit (and the fallback to cpu), pools registered once at
 *       create and unregistered at destroy, one completion callback per copy;
 *       a kernel error the device recovers from fails compute with -EIO, a
 *       sticky one (every later sync fails too) with -ENODEV, "the device is
 *       lost" (backend.h: gpud takes the device out of service), and the
 *       context proves correctly once the mock device works again;
 *       device_mem reports the mock's used and total memory.
 *
 * Built twice: test_backend_cuda (the real czkcuda, GPU tests skip without a
 * GPU) and test_backend_cuda_mock (CZK_TEST_MOCK_CUDA: backend_cuda.c over
 * mock_cuda.c, so `compare` runs everywhere and checks the orchestration --
 * buffers, offsets, forms, callbacks -- against the cpu backend).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/crypto/curve.h"
#include "common/formats/formats.h"
#include "common/groth16/groth16.h"
#include "backend/backend.h"
#include "tests/backend/bk_test.h"
#ifdef CZK_HAVE_CUDA_BACKEND
#include "backend/cuda/czk_cuda.h"
#endif

static int have_gpu(void)
{
#ifdef CZK_HAVE_CUDA_BACKEND
    int n = 0;
    return czk_cuda_device_count(&n) == 0 && n > 0;
#else
    return 0;
#endif
}

#ifdef CZK_HAVE_CUDA_BACKEND
/* a canonical element of curve's Fr (< r: the top limb of r is 0x73eda753...
 * for BLS12-381, 0x30644e72... for BN254; both Fr are 4 x 64-bit words) */
static void rnd_fr(czk_fr *x, czk_curve_id curve)
{
    for (int i = 0; i < CZK_FR_LIMBS; i++)
        x->l[i] = t_rand64();
    x->l[CZK_FR_LIMBS - 1] &= curve == CZK_CURVE_BN254 ? 0x0fffffffffffffffull : 0x3fffffffffffffffull;
}
#endif

static int test_open(void)
{
    czk_backend_config bc;
    czk_zkey z;
    const czk_zkey *zp = &z;
    const czk_backend_ops *ops;
    czk_backend *b;
    czk_error e = {0};
    int r;

    /* a tiny real key so create has a circuit to size for */
    const char *zk = getenv("CZK_TEST_ZKEY");
    CHECK(zk, "CZK_TEST_ZKEY not set");
    CHECK(czk_zkey_open(&z, zk, &e) == 0, "%s", e.msg);
    memset(&bc, 0, sizeof(bc));
    bc.n_circuits = 1;
    bc.zkeys = &zp;
    bc.threads = 1;
    bc.contexts = 1;

    CHECK(czk_backend_find("nosuch", &e) == NULL && e.code == -ENOTSUP && strstr(e.msg, "nosuch"),
          "unknown backend: %s", e.msg);
    r = czk_backend_open("cpu", 0, &bc, &ops, &b, &e);
    CHECK(r == 0 && ops == &czk_backend_cpu_ops && b, "cpu: %d %s", r, e.msg);
    ops->destroy(b);
#ifdef CZK_HAVE_CUDA_BACKEND
    if (!have_gpu()) {
        memset(&e, 0, sizeof(e));
        r = czk_backend_open("cuda", 0, &bc, &ops, &b, &e);
        CHECK(r == -ENODEV && !b && strstr(e.msg, "GPU"), "cuda without a GPU: %d \"%s\"", r, e.msg);
        r = czk_backend_open("cuda", 1, &bc, &ops, &b, &e);
        CHECK(r == 0 && ops == &czk_backend_cpu_ops && b, "cuda with fallback: %d %s", r, e.msg);
        ops->destroy(b);
        r = czk_backend_open("auto", 0, &bc, &ops, &b, &e);
        CHECK(r == 0 && ops == &czk_backend_cpu_ops && b, "auto without a GPU: %d %s", r, e.msg);
        ops->destroy(b);
        fprintf(stderr, "no GPU: cuda fails with -ENODEV, falls back to cpu when allowed\n");
    } else {
        r = czk_backend_open("cuda", 0, &bc, &ops, &b, &e);
        CHECK(r == 0 && ops == &czk_backend_cuda_ops && b, "cuda with a GPU: %d %s", r, e.msg);
        CHECK(ops->contexts(b) == 1, "contexts %u", ops->contexts(b));
        ops->destroy(b);
        r = czk_backend_open("auto", 0, &bc, &ops, &b, &e);
        CHECK(r == 0 && ops == &czk_backend_cuda_ops, "auto with a GPU: %d %s", r, e.msg);
        ops->destroy(b);
        fprintf(stderr, "GPU present: cuda and auto open the cuda backend\n");
    }
#else
    r = czk_backend_open("cuda", 1, &bc, &ops, &b, &e);
    CHECK(r == -ENOTSUP, "cuda not built: %d", r);
#endif
    czk_zkey_close(&z);
    return 0;
}

#ifdef CZK_HAVE_CUDA_BACKEND
typedef struct {
    const czk_backend_ops *ops;
    czk_backend *b;
    unsigned ctx;
    czk_groth16_any_msm_out out;
    czk_fr *pub;
    czk_error e;
    int rc;
} compute_job;

static void *compute_thread(void *arg)
{
    compute_job *j = arg;
    j->rc = j->ops->compute(j->b, j->ctx, 0, &j->out, j->pub, &j->e);
    return NULL;
}

static void same_out(const czk_groth16_any_msm_out *x, const czk_groth16_any_msm_out *y, const czk_fr *px, const czk_fr *py,
                     uint32_t npub, const char *what)
{
    static const char *const names[CZK_G16_N_PTS] = {"A·w", "B1·w", "B2·w", "C·w + H·h"};
    CHECK(x->curve == y->curve, "%s: results of two curves", what);
    /* canonical affine coordinates: equal points have equal bytes */
    for (unsigned k = 0; k < CZK_G16_N_PTS; k++)
        CHECK(!memcmp(czk_groth16_any_point(x, k), czk_groth16_any_point(y, k),
                      czk_groth16_any_point_bytes(x->curve, k)),
              "%s: %s differs", what, names[k]);
    if (x->curve == CZK_CURVE_BLS12_381)
        CHECK(czk_g1_aff_eq(&x->u.bls.a, &y->u.bls.a) && czk_g2_aff_eq(&x->u.bls.b2, &y->u.bls.b2),
              "%s: equal bytes but unequal points", what);
    CHECK(!memcmp(px, py, npub * sizeof(czk_fr)), "%s: public signals differ", what);
}

/* the slot payload at buf: a, b, c (n each) then w (nv) */
static void slot_input(czk_backend_input *in, const czk_fr *buf, size_t n, size_t nv)
{
    memset(in, 0, sizeof(*in));
    in->a = (const uint8_t *)buf;
    in->b = (const uint8_t *)(buf + n);
    in->c = (const uint8_t *)(buf + 2 * n);
    in->w = (const uint8_t *)(buf + 3 * n);
    in->domain_size = n;
    in->n_vars = nv;
}

static void compare_one(const char *zkey_path, const char *wtns_path)
{
    czk_zkey z;
    czk_wtns w;
    const czk_zkey *zp = &z;
    czk_error e = {0};
    czk_backend_config bc;
    czk_backend_region reg;
    czk_backend *cpu = NULL, *cuda = NULL;
    const czk_backend_ops *cuda_ops;
    czk_backend_input in;
    czk_groth16_any_msm_out ocpu;
    size_t n, nv, bytes;
    czk_fr *buf, *pcpu;
    compute_job j0;
    pthread_t th;

    CHECK(czk_zkey_open_curves(&z, zkey_path, CZK_CURVES_ALL, &e) == 0, "%s", e.msg);
    CHECK(czk_wtns_open_curves(&w, wtns_path, CZK_CURVES_ALL, &e) == 0, "%s", e.msg);
    CHECK(czk_groth16_check_witness(&z, zkey_path, &w, wtns_path, &e) == 0, "%s", e.msg);
    n = z.domain_size;
    nv = z.n_vars;
    bytes = ((3 * n + nv) * sizeof(czk_fr) + 4095) & ~(size_t)4095;
    buf = aligned_alloc(4096, bytes);
    pcpu = calloc(z.n_public + 1, sizeof(czk_fr));
    j0.pub = calloc(z.n_public + 1, sizeof(czk_fr));
    czk_fr *p1 = calloc(z.n_public + 1, sizeof(czk_fr));
    CHECK(buf && pcpu && j0.pub && p1, "oom");

    memset(&bc, 0, sizeof(bc));
    bc.n_circuits = 1;
    bc.zkeys = &zp;
    bc.threads = 2;
    bc.contexts = 1;
    CHECK(czk_backend_cpu_ops.create(&cpu, &bc, &e) == 0, "cpu create: %s", e.msg);
    bc.contexts = 2;
    reg.base = buf;
    reg.len = bytes;
    bc.regions = &reg;
    bc.n_regions = 1;
    /* the MSMs over fixed-base tables, as czk-gpud runs them (the plain MSMs:
     * tests/cuda, czk prove in cuda_vs_cpu.sh) */
    static const unsigned char tables_on = 1;
    bc.tables_on = &tables_on;
    CHECK(czk_backend_open("cuda", 0, &bc, &cuda_ops, &cuda, &e) == 0 && cuda_ops == &czk_backend_cuda_ops,
          "cuda create: %s", e.msg);
    CHECK(cuda_ops->contexts(cuda) == 2, "2 contexts");

    slot_input(&in, buf, n, nv);

    for (int round = 0; round < 2; round++) {
        const char *what = round == 0 ? "witness" : "random vectors";
        if (round == 0) {
            CHECK(czk_groth16_any_build_abc(&z, w.w, buf, buf + n, buf + 2 * n, 2) == 0, "build_abc");
            memcpy(buf + 3 * n, w.w, nv * sizeof(czk_fr));
        } else {
            for (size_t i = 0; i < 3 * n + nv; i++)
                rnd_fr(&buf[i], z.curve);
        }
        in.job = 100 + (uint64_t)round;
        CHECK(czk_backend_cpu_ops.copy_in(cpu, 0, 0, &in, &e) == 0, "cpu copy_in: %s", e.msg);
        CHECK(czk_backend_cpu_ops.compute(cpu, 0, 0, &ocpu, pcpu, &e) == 0, "cpu compute: %s", e.msg);

        /* context 0 computes while context 1 copies the same slot in */
        CHECK(cuda_ops->copy_in(cuda, 0, 0, &in, &e) == 0, "cuda copy_in ctx 0: %s", e.msg);
        j0.ops = cuda_ops;
        j0.b = cuda;
        j0.ctx = 0;
        memset(&j0.e, 0, sizeof(j0.e));
        CHECK(pthread_create(&th, NULL, compute_thread, &j0) == 0, "pthread_create");
        CHECK(cuda_ops->copy_in(cuda, 1, 0, &in, &e) == 0, "cuda copy_in ctx 1: %s", e.msg);
        pthread_join(th, NULL);
        CHECK(j0.rc == 0, "cuda compute ctx 0: %s", j0.e.msg);
        czk_groth16_any_msm_out o1;
        CHECK(cuda_ops->compute(cuda, 1, 0, &o1, p1, &e) == 0, "cuda compute ctx 1: %s", e.msg);
        same_out(&j0.out, &ocpu, j0.pub, pcpu, z.n_public, what);
        same_out(&o1, &ocpu, p1, pcpu, z.n_public, what);
        /* a context computes what it holds once: h overwrote its a */
        CHECK(cuda_ops->compute(cuda, 1, 0, &o1, p1, &e) == -EINVAL, "second compute without copy_in");
        fprintf(stderr, "%s (domain %zu, %zu vars): cuda == cpu on the %s\n", zkey_path, n, nv, what);
    }
    {
        /* backend.h remove_key (gpud's reload): the circuit has no key until
         * add_key gives it one again, and then proves as before */
        czk_groth16_any_msm_out o1;
        CHECK(cuda_ops->remove_key != NULL, "the cuda backend can replace keys");
        cuda_ops->remove_key(cuda, 0);
        CHECK(cuda_ops->copy_in(cuda, 1, 0, &in, &e) == -EINVAL, "copy_in without a key: %s", e.msg);
        CHECK(cuda_ops->add_key(cuda, 0, &z, &e) == 0, "add_key after remove_key: %s", e.msg);
        CHECK(cuda_ops->add_key(cuda, 0, &z, &e) == -EEXIST, "a second add_key");
        /* p1 holds round 1's public signals: poison it and o1 so a compute that writes nothing fails */
        memset(&o1, 0xa5, sizeof(o1));
        memset(p1, 0xa5, (z.n_public + 1) * sizeof(czk_fr));
        CHECK(cuda_ops->copy_in(cuda, 1, 0, &in, &e) == 0 && cuda_ops->compute(cuda, 1, 0, &o1, p1, &e) == 0,
              "after the key came back: %s", e.msg);
        same_out(&o1, &ocpu, p1, pcpu, z.n_public, "random vectors after remove_key and add_key");
    }
#ifdef CZK_TEST_MOCK_CUDA
    {
        /* backend.h: a CUDA failure the device recovers from is the
         * partition's own (-EIO, the device stays in service); a sticky one
         * (every later call fails too) is the device's: -ENODEV */
        extern int mock_cuda_fail_h, mock_cuda_sticky;
        extern size_t mock_cuda_mem_free;
        czk_groth16_any_msm_out o1;
        uint64_t used = 0, total = 0;
        int r;

        mock_cuda_fail_h = 1;
        CHECK(cuda_ops->copy_in(cuda, 1, 0, &in, &e) == 0, "copy_in: %s", e.msg);
        r = cuda_ops->compute(cuda, 1, 0, &o1, p1, &e);
        CHECK(r == -EIO && e.code == -EIO && !strstr(e.msg, "lost"), "a one-off kernel error: %d %s", r, e.msg);
        mock_cuda_fail_h = 1;
        mock_cuda_sticky = 1;
        CHECK(cuda_ops->copy_in(cuda, 1, 0, &in, &e) == 0, "copy_in: %s", e.msg);
        r = cuda_ops->compute(cuda, 1, 0, &o1, p1, &e);
        CHECK(r == -ENODEV && e.code == -ENODEV && strstr(e.msg, "device is lost") && strstr(e.msg, "injected"),
              "a sticky error: %d %s", r, e.msg);
        mock_cuda_sticky = 0;
        /* the device recovered in the mock: the context proves again */
        memset(&o1, 0xa5, sizeof(o1));
        memset(p1, 0xa5, (z.n_public + 1) * sizeof(czk_fr));
        CHECK(cuda_ops->copy_in(cuda, 1, 0, &in, &e) == 0 && cuda_ops->compute(cuda, 1, 0, &o1, p1, &e) == 0,
              "after the errors: %s", e.msg);
        same_out(&o1, &ocpu, p1, pcpu, z.n_public, "random vectors after the errors");
        CHECK(cuda_ops->device_mem && cuda_ops->device_mem(cuda, 0, &used, &total) == 0 &&
                  total == 2 * mock_cuda_mem_free && used == total - mock_cuda_mem_free,
              "device_mem: used %llu total %llu", (unsigned long long)used, (unsigned long long)total);
        CHECK(cuda_ops->device_mem(cuda, 7, &used, &total) < 0, "device_mem of a device that is not there");
        CHECK(!czk_backend_cpu_ops.device_mem, "the cpu backend reports no device memory");
    }
#endif
    cuda_ops->destroy(cuda);
    czk_backend_cpu_ops.destroy(cpu);
    free(buf);
    free(pcpu);
    free(j0.pub);
    free(p1);
    czk_wtns_close(&w);
    czk_zkey_close(&z);
}
#endif

#ifdef CZK_TEST_MOCK_CUDA
extern int mock_cuda_devices, mock_cuda_foreign;
extern size_t mock_cuda_mem_free, mock_cuda_mem_free_dev1;
extern unsigned long mock_cuda_registered, mock_cuda_callbacks;

/* two GPUs, the second without room for the key: the key is resident on the
 * first only, whose contexts serve the circuit (and prove it as the cpu
 * backend does); the second's contexts do not serve it and refuse its copy */
static void partial_residency(const char *zkey_path, const char *wtns_path)
{
    czk_zkey z;
    czk_wtns w;
    const czk_zkey *zp = &z;
    czk_error e = {0};
    czk_backend_config bc;
    czk_backend *cpu = NULL, *cuda = NULL;
    const czk_backend_ops *ops;
    czk_backend_input in;
    czk_groth16_any_msm_out ocpu, ocuda;
    czk_fr *buf, *pcpu, *pcuda;
    size_t n, nv;

    CHECK(czk_zkey_open(&z, zkey_path, &e) == 0 && czk_wtns_open(&w, wtns_path, &e) == 0, "%s", e.msg);
    n = z.domain_size;
    nv = z.n_vars;
    buf = calloc(3 * n + nv, sizeof(czk_fr));
    pcpu = calloc(z.n_public + 1, sizeof(czk_fr));
    pcuda = calloc(z.n_public + 1, sizeof(czk_fr));
    CHECK(buf && pcpu && pcuda, "oom");
    CHECK(czk_groth16_build_abc(&z, w.w, buf, buf + n, buf + 2 * n, 1) == 0, "build_abc");
    memcpy(buf + 3 * n, w.w, nv * sizeof(czk_fr));
    slot_input(&in, buf, n, nv);
    memset(&bc, 0, sizeof(bc));
    bc.n_circuits = 1;
    bc.zkeys = &zp;
    bc.threads = 1;
    bc.contexts = 1;
    CHECK(czk_backend_cpu_ops.create(&cpu, &bc, &e) == 0 && czk_backend_cpu_ops.copy_in(cpu, 0, 0, &in, &e) == 0 &&
              czk_backend_cpu_ops.compute(cpu, 0, 0, &ocpu, pcpu, &e) == 0,
          "cpu: %s", e.msg);
    mock_cuda_devices = 2;
    mock_cuda_mem_free_dev1 = (size_t)1 << 20;
    bc.contexts = 4; /* context i on GPU i % 2 */
    CHECK(czk_backend_open("cuda", 0, &bc, &ops, &cuda, &e) == 0, "create with one GPU short of memory: %s", e.msg);
    CHECK(ops->serves, "the cuda backend says which contexts serve a circuit");
    /* the mock's PCI addresses are in no sysfs: no NUMA node is known */
    CHECK(ops->device_numa && ops->device_numa(cuda, 0) == -1 && ops->device_numa(cuda, 9) == -1,
          "device_numa of devices sysfs does not know");
    for (unsigned ctx = 0; ctx < 4; ctx++) {
        int on0 = ops->device_of(cuda, ctx) == 0;
        CHECK(ops->serves(cuda, ctx, 0) == on0, "context %u (GPU %u) serves: %d", ctx, ops->device_of(cuda, ctx),
              ops->serves(cuda, ctx, 0));
        if (!on0) {
            memset(&e, 0, sizeof(e));
            CHECK(ops->copy_in(cuda, ctx, 0, &in, &e) == -EINVAL && strstr(e.msg, "not resident"),
                  "copy_in on a GPU without the key: %s", e.msg);
            continue;
        }
        memset(&ocuda, 0xa5, sizeof(ocuda));
        CHECK(ops->copy_in(cuda, ctx, 0, &in, &e) == 0 && ops->compute(cuda, ctx, 0, &ocuda, pcuda, &e) == 0,
              "context %u: %s", ctx, e.msg);
        same_out(&ocuda, &ocpu, pcuda, pcpu, z.n_public, "partial residency");
    }
    ops->remove_key(cuda, 0);
    CHECK(!ops->serves(cuda, 0, 0), "a removed key is served nowhere");
    ops->destroy(cuda);
    /* room on neither GPU: -ENOMEM saying so */
    mock_cuda_mem_free = (size_t)1 << 20;
    CHECK(czk_backend_open("cuda", 0, &bc, &ops, &cuda, &e) == -ENOMEM && strstr(e.msg, "fit on no GPU"),
          "no room anywhere: %s", e.msg);
    mock_cuda_mem_free = (size_t)8 << 30;
    mock_cuda_mem_free_dev1 = 0;
    mock_cuda_devices = 1;
    czk_backend_cpu_ops.destroy(cpu);
    free(buf);
    free(pcpu);
    free(pcuda);
    czk_wtns_close(&w);
    czk_zkey_close(&z);
}

extern unsigned mock_cuda_tables, mock_cuda_rows_min, mock_cuda_rows_max;
extern size_t mock_cuda_fit_mem_max;

/* the fixed-base tables: built for every MSM of a circuit that asks for them
 * when the GPU has room beyond table_reserve, for none without room or
 * without tables_on; the circuit is served either way */
static void tables_policy(const char *zkey_path)
{
    czk_zkey z;
    const czk_zkey *zp = &z;
    czk_error e = {0};
    czk_backend_config bc;
    const czk_backend_ops *ops;
    czk_backend *b;
    static const unsigned char on = 1;
    unsigned before;

    CHECK(czk_zkey_open(&z, zkey_path, &e) == 0, "%s", e.msg);
    memset(&bc, 0, sizeof(bc));
    bc.n_circuits = 1;
    bc.zkeys = &zp;
    bc.threads = 1;
    bc.contexts = 1;
    before = mock_cuda_tables;
    CHECK(czk_backend_open("cuda", 0, &bc, &ops, &b, &e) == 0, "%s", e.msg);
    CHECK(mock_cuda_tables == before, "tables built without tables_on");
    CHECK(ops->serves(b, 0, 0), "no tables: the circuit is served");
    ops->destroy(b);
    bc.tables_on = &on;
    mock_cuda_fit_mem_max = 0;
    mock_cuda_rows_min = ~0u;
    CHECK(czk_backend_open("cuda", 0, &bc, &ops, &b, &e) == 0, "%s", e.msg);
    CHECK(mock_cuda_tables == before + 5, "%u tables for the 5 MSMs", mock_cuda_tables - before);
    CHECK(mock_cuda_rows_min == 12, "room for all: a table of %u rows", mock_cuda_rows_min);
    ops->destroy(b);
    /* room for 4 rows of the largest G1 section: the tables offered exactly
     * what the reserve leaves, B2's (G2, twice the bytes) at least 2 rows */
    {
        const size_t no_reserve = mock_cuda_fit_mem_max;
        const size_t g1_max = (z.n_vars > z.domain_size ? z.n_vars : z.domain_size) * sizeof(czk_g1_aff);
        CHECK(no_reserve > 4 * g1_max && no_reserve < mock_cuda_mem_free, "offered %zu of %zu bytes", no_reserve,
              mock_cuda_mem_free);
        bc.table_reserve = no_reserve - 4 * g1_max;
        mock_cuda_fit_mem_max = 0;
        mock_cuda_rows_min = ~0u;
        mock_cuda_rows_max = 0;
        before = mock_cuda_tables;
        CHECK(czk_backend_open("cuda", 0, &bc, &ops, &b, &e) == 0, "%s", e.msg);
        CHECK(mock_cuda_fit_mem_max == 4 * g1_max, "offered %zu bytes, %zu left by the reserve", mock_cuda_fit_mem_max,
              4 * g1_max);
        CHECK(mock_cuda_tables == before + 5 && mock_cuda_rows_min >= 2 && mock_cuda_rows_min < 12 &&
                  mock_cuda_rows_max <= 12,
              "%u partial tables, rows %u..%u", mock_cuda_tables - before, mock_cuda_rows_min, mock_cuda_rows_max);
        CHECK(ops->serves(b, 0, 0), "partial tables: the circuit is served");
        ops->destroy(b);
        bc.table_reserve = 0;
    }
    /* czk-gpud's way (defer_keys, add_key): built on a thread of their own */
    bc.defer_keys = 1;
    before = mock_cuda_tables;
    CHECK(czk_backend_open("cuda", 0, &bc, &ops, &b, &e) == 0 && ops->add_key(b, 0, &z, &e) == 0, "%s", e.msg);
    CHECK(ops->serves(b, 0, 0), "served while the tables are built");
    for (int i = 0; i < 6000 && mock_cuda_tables != before + 5; i++) /* waits for the thread, up to a minute */
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    CHECK(mock_cuda_tables == before + 5, "%u tables built in the background", mock_cuda_tables - before);
    ops->remove_key(b, 0); /* joins the (finished) build */
    ops->destroy(b);
    bc.defer_keys = 0;
    /* a reserve larger than the free memory: no table, the circuit still served */
    bc.table_reserve = mock_cuda_mem_free;
    before = mock_cuda_tables;
    CHECK(czk_backend_open("cuda", 0, &bc, &ops, &b, &e) == 0, "%s", e.msg);
    CHECK(mock_cuda_tables == before, "%u tables built into the reserve", mock_cuda_tables - before);
    CHECK(ops->serves(b, 0, 0), "tables left out: the circuit is served");
    ops->destroy(b);
    czk_zkey_close(&z);
}

static int test_mock(const char *zkey_path, const char *wtns_path)
{
    czk_zkey z;
    const czk_zkey *zp = &z;
    czk_error e = {0};
    czk_backend_config bc;
    czk_backend_region reg[2];
    const czk_backend_ops *ops;
    czk_backend *b;
    static char pool0[1 << 16], pool1[3 << 12];
    int r;

    CHECK(czk_zkey_open(&z, zkey_path, &e) == 0, "%s", e.msg);
    memset(&bc, 0, sizeof(bc));
    bc.n_circuits = 1;
    bc.zkeys = &zp;
    bc.threads = 1;
    reg[0].base = pool0;
    reg[0].len = sizeof(pool0);
    reg[1].base = pool1;
    reg[1].len = sizeof(pool1);
    bc.regions = reg;
    bc.n_regions = 2;
    /* default contexts: two per GPU, pools registered once */
    mock_cuda_devices = 2;
    r = czk_backend_open("cuda", 0, &bc, &ops, &b, &e);
    CHECK(r == 0 && ops == &czk_backend_cuda_ops && ops->contexts(b) == 4, "2 GPUs: %d %s", r, e.msg);
    CHECK(mock_cuda_registered == sizeof(pool0) + sizeof(pool1), "registered %lu bytes", mock_cuda_registered);
    ops->destroy(b);
    CHECK(mock_cuda_registered == 0, "still registered after destroy: %lu", mock_cuda_registered);
    mock_cuda_devices = 1;
    /* keys that do not fit: -ENOMEM naming the sizes, or the cpu backend with fallback */
    mock_cuda_mem_free = (size_t)1 << 20;
    r = czk_backend_open("cuda", 0, &bc, &ops, &b, &e);
    CHECK(r == -ENOMEM && !b && strstr(e.msg, "MiB") && strstr(e.msg, "free"), "too small: %d %s", r, e.msg);
    CHECK(mock_cuda_registered == 0, "a failed create left %lu bytes registered", mock_cuda_registered);
    r = czk_backend_open("cuda", 1, &bc, &ops, &b, &e);
    CHECK(r == 0 && ops == &czk_backend_cpu_ops, "fallback on -ENOMEM: %d %s", r, e.msg);
    ops->destroy(b);
    mock_cuda_mem_free = (size_t)8 << 30;
    /* no GPU */
    mock_cuda_devices = 0;
    r = czk_backend_open("auto", 0, &bc, &ops, &b, &e);
    CHECK(r == 0 && ops == &czk_backend_cpu_ops, "auto without GPU: %d %s", r, e.msg);
    ops->destroy(b);
    mock_cuda_devices = 1;
    /* a GPU of an architecture the kernels were not built for: "cuda" fails
     * naming it, with fallback (and "auto") the cpu backend runs; the same
     * for czk setup's accelerator */
    mock_cuda_foreign = 1;
    r = czk_backend_open("cuda", 0, &bc, &ops, &b, &e);
    CHECK(r == -ENOEXEC && !b && strstr(e.msg, "sm_80") && strstr(e.msg, "CZK_CUDA_ARCH"), "foreign GPU: %d %s", r,
          e.msg);
    CHECK(mock_cuda_registered == 0, "a failed create left %lu bytes registered", mock_cuda_registered);
    r = czk_backend_open("cuda", 1, &bc, &ops, &b, &e);
    CHECK(r == 0 && ops == &czk_backend_cpu_ops, "fallback on a foreign GPU: %d %s", r, e.msg);
    ops->destroy(b);
    r = czk_backend_open("auto", 0, &bc, &ops, &b, &e);
    CHECK(r == 0 && ops == &czk_backend_cpu_ops, "auto with a foreign GPU: %d %s", r, e.msg);
    ops->destroy(b);
    {
        czk_setup_accel acc;
        memset(&e, 0, sizeof(e));
        r = czk_backend_setup_accel("cuda", &acc, &e);
        CHECK(r == -ENOEXEC && !acc.gen_mul && strstr(e.msg, "sm_80"), "setup on a foreign GPU: %d %s", r, e.msg);
        r = czk_backend_setup_accel("auto", &acc, &e);
        CHECK(r == 0 && !acc.gen_mul, "auto setup on a foreign GPU: %d (want the cpu)", r);
        mock_cuda_foreign = 0;
        r = czk_backend_setup_accel("cuda", &acc, &e);
        CHECK(r == 1 && acc.gen_mul, "setup on the mock GPU: %d %s", r, e.msg);
    }
    czk_zkey_close(&z);
    partial_residency(zkey_path, wtns_path);
    tables_policy(zkey_path);
    /* the real comparison, counting callbacks: one per copy_in */
    unsigned long before = mock_cuda_callbacks;
    compare_one(zkey_path, wtns_path);
    /* 2 rounds of 2 copies, 1 after remove_key and add_key, then 3 around the injected errors */
    CHECK(mock_cuda_callbacks - before == 8, "%lu completion callbacks for 8 copies", mock_cuda_callbacks - before);
    fprintf(stderr, "mock: ok\n");
    return 0;
}
#endif

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "open"))
        return test_open();
#ifdef CZK_TEST_MOCK_CUDA
    if (argc == 4 && !strcmp(argv[1], "mock"))
        return test_mock(argv[2], argv[3]);
#endif
    if (argc >= 2 && !strcmp(argv[1], "probe"))
        return have_gpu() ? 0 : 77;
    if (argc >= 4 && !strcmp(argv[1], "compare") && argc % 2 == 0) {
        if (!have_gpu()) {
            fprintf(stderr, "no GPU: skipped\n");
            return 77;
        }
#ifdef CZK_HAVE_CUDA_BACKEND
        t_seed("test_backend_cuda compare");
        for (int i = 2; i + 1 < argc; i += 2)
            compare_one(argv[i], argv[i + 1]);
        fprintf(stderr, "ok\n");
        return 0;
#endif
    }
    fprintf(stderr, "usage: test_backend_cuda open | probe | compare ZKEY WTNS [ZKEY WTNS ...]\n");
    return 2;
}
