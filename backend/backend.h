/*
 * backend.h — the compute backend behind czk-gpud: h (NTTs) and the MSMs of
 * one partition, given the a, b, c, w vectors a synth wrote into a pool slot.
 *
 * A backend owns `contexts` independent sets of buffers (host or device),
 * sized at create from the circuits' sizes; each circuit's key points come
 * with add_key (at create for the single-process tools), which gpud calls
 * from a loader thread per circuit while other circuits compute.
 * gpud runs one worker thread per context; a context is used by one thread at
 * a time, so backends need no locks.  For each partition the worker calls
 *   copy_in(ctx, circuit, slot payload)   -> the slot may be released after this
 *   compute(ctx, circuit, out, pub)       -> the four MSM points, public signals
 * copy_in must not keep any pointer into the slot: gpud hands the slot back to
 * the synth as soon as copy_in returns (docs/design.md, "A partition's life", step 7).
 * Both run on worker threads, never on gpud's event-loop thread.
 *
 * Errors of copy_in and compute: -ENODEV says the compute device of ctx is
 * lost (the cuda backend: a sticky CUDA error such as a lost device, an
 * uncorrectable ECC error or a kernel fault, after which every call on that
 * device fails); gpud then takes every context of that device out of service
 * and proves the partition elsewhere.  Any other -errno is the partition's
 * own failure (bad input, a transient error) and the device stays in service.
 *
 * Implementations: "cpu" (backend/cpu/backend_cpu.c: memcpy into preallocated
 * buffers, then czk_groth16_compute_h + czk_groth16_msms) and, when built
 * with CUDA, "cuda" (backend/backend_cuda.c: async H2D copies from the
 * registered pool into per-context device buffers, h and the MSMs against
 * device-resident key points).  czk_backend_open picks one by name and falls
 * back from cuda to cpu (logged) when asked to.
 */
#ifndef CZK_GPUD_BACKEND_H
#define CZK_GPUD_BACKEND_H

#include <stdint.h>

#include "common/base/digest.h"
#include "common/base/error.h"
#include "common/formats/formats.h"
#include "common/groth16/any.h"
#include "common/groth16/setup.h"

typedef struct czk_backend czk_backend;

/* host memory slots are copied from (gpud's pools): a backend that DMAs
 * registers it once in create (cudaHostRegister) and unregisters in destroy */
typedef struct czk_backend_region {
    void *base;
    size_t len;
} czk_backend_region;

typedef struct czk_backend_config {
    unsigned n_circuits;
    /* [n_circuits], valid until destroy.  defer_keys 0 (czk prove, tests):
     * each holds its points (czk_zkey_open, or czk_zkey_load with
     * CZK_ZKEY_POINTS) and create adds every one of them as add_key would,
     * failing as add_key would.  defer_keys 1 (czk-gpud): create reads only
     * their sizes (n_vars, n_public, domain_size: a header-only load is
     * enough), an entry may be NULL for a circuit that is never added, and
     * each circuit gets its points later through add_key. */
    const czk_zkey *const *zkeys;
    int defer_keys;
    int threads;                  /* CPU threads for compute (0: all online CPUs) */
    unsigned contexts;            /* requested contexts (0: the backend's default) */
    const czk_backend_region *regions; /* [n_regions], may be NULL; valid until destroy */
    unsigned n_regions;
    /* fixed-base MSM tables (GPU backends): [n_circuits] nonzero builds them
     * for that circuit (NULL: for none, e.g. a one-proof czk prove, where
     * building costs more than it saves); built after the key is resident,
     * while the device keeps table_reserve bytes free beyond the keys of the
     * circuits still to be added */
    const unsigned char *tables_on;
    size_t table_reserve;
} czk_backend_config;

/* the slot payload: a, b, c (domain_size Fr, Montgomery) and w (n_vars Fr, standard) */
typedef struct czk_backend_input {
    const uint8_t *a, *b, *c, *w;
    uint64_t domain_size, n_vars;
    uint64_t job;       /* for trace records (common/runtime/trace.h) only */
    uint32_t partition;
} czk_backend_input;

typedef struct czk_backend_ops {
    const char *name;
    int (*create)(czk_backend **out, const czk_backend_config *cfg, czk_error *e);
    void (*destroy)(czk_backend *b);
    unsigned (*contexts)(const czk_backend *b);
    /* copies the slot payload into context ctx; circuit indexes cfg->zkeys */
    int (*copy_in)(czk_backend *b, unsigned ctx, unsigned circuit, const czk_backend_input *in, czk_error *e);
    /* computes the partition copied into ctx: out gets the MSM results on the
     * circuit's curve (out->curve set), pub the circuit's n_public public
     * signals w[1..n_public] (standard form; for a BN254 circuit they are
     * czk_bn254_fr values, of the same size and layout as czk_fr) */
    int (*compute)(czk_backend *b, unsigned ctx, unsigned circuit, czk_groth16_any_msm_out *out, czk_fr *pub,
                   czk_error *e);
    /* optional: the compute device of context ctx (a GPU index); contexts on
     * one device take turns to compute (gpud/worker.c) while the others copy.
     * NULL: all contexts share one device (the CPU backend's cores). */
    unsigned (*device_of)(const czk_backend *b, unsigned ctx);
    /*
     * Gives circuit its key points: z was loaded with CZK_ZKEY_POINTS and
     * has the sizes of cfg->zkeys[circuit].  Until it returned 0, copy_in
     * and compute of that circuit fail with -EINVAL.
     *
     * Threading: callable from any thread (gpud: the circuit's loader
     * thread), while worker threads copy_in and compute partitions of other
     * circuits on any context; calls for different circuits may overlap (the
     * backend serialises what must be).  Never called twice for a circuit,
     * nor for a circuit while a context holds one of its partitions; the
     * caller publishes the circuit to its workers after the return (gpud:
     * through its loop), which orders what add_key wrote before their use.
     *
     * Ownership: the caller owns z.  With keeps_host_points set the backend
     * reads z's points until destroy (z must outlive the backend); without
     * it nothing of z is used after the return (the cuda backend copies the
     * points to device memory) and the caller may close z at once.
     *
     * -ENOMEM when the points do not fit (the cuda backend: e gives the bytes
     * needed and free on the device), -EINVAL for sizes other than the
     * config's; the backend stays usable for the other circuits.
     */
    int (*add_key)(czk_backend *b, unsigned circuit, const czk_zkey *z, czk_error *e);
    /*
     * Optional (NULL: never resumes): instead of add_key, takes back the key
     * points a previous czk-gpud left in device memory (the cuda backend:
     * systemd's fd store, backend/keymem.h).  z needs only its header, sizes
     * and ident (a header-only czk_zkey_load): the stored copy is used when
     * it was made from the same key id and the same file (stamp) with the
     * same sizes.  Returns 1 when the circuit has its key (add_key must not
     * follow), 0 when nothing usable was stored (add_key follows), or
     * -errno.  Same threading rules as add_key.
     */
    int (*resume_key)(czk_backend *b, unsigned circuit, const czk_zkey *z, czk_error *e);
    /*
     * Optional (NULL: a circuit's key is replaced only by a restart): forgets
     * circuit's key points (device memory freed, a stored copy in the fd store
     * dropped; keeps_host_points: the backend lets go of z's address), so
     * that add_key or resume_key may give the circuit another key of the
     * config's sizes (gpud's reload, docs/design.md "Reloading a key").
     * Called only while no context holds a partition of the circuit, and
     * never while add_key or resume_key of the circuit runs; same threading
     * as add_key otherwise.
     */
    void (*remove_key)(czk_backend *b, unsigned circuit);
    int keeps_host_points;
    /*
     * Optional (NULL: not known, as for the cpu backend): the memory of
     * compute device dev (a device_of value) in bytes, *used (by anyone, not
     * only this backend) and *total.  0, or -errno when it cannot be read.
     * Callable from any thread while the workers compute (gpud: its loop
     * thread, once a second for each device in service); never called for a
     * device whose copy_in or compute returned -ENODEV.
     */
    int (*device_mem)(const czk_backend *b, unsigned dev, uint64_t *used, uint64_t *total);
    /*
     * Optional (NULL: every context serves every circuit with a key): 1 when
     * context ctx can prove circuit's partitions, 0 when not (the cuda
     * backend: the circuit's key points are not resident on ctx's GPU, which
     * add_key left out for lack of memory, logged).  gpud gives a partition
     * only to a context that serves its circuit.  Called on gpud's loop
     * thread while workers compute; its answer for a circuit changes only in
     * add_key, resume_key and remove_key, which gpud orders before its use.
     */
    int (*serves)(const czk_backend *b, unsigned ctx, unsigned circuit);
    /*
     * Optional (NULL: not known): the NUMA node nearest compute device dev
     * (the cuda backend: the GPU's PCI device in sysfs), or -1 when not known.
     * gpud prefers a device on the node of the pool a READY slot is in, so a
     * synth's partitions cross no socket link on their way to the GPU.
     * Called once per device after create.
     */
    int (*device_numa)(const czk_backend *b, unsigned dev);
} czk_backend_ops;

/*
 * The names under which a backend keeps a circuit's key memory in systemd's
 * fd store are "key-<gpu><suffix>", the suffix "-" and the first 24 hex
 * digits of the key id (backend/keymem.h); gpud looks for the suffix to know
 * whether a restart may resume a key (gpud/keys.c).  out: CZK_KEYMEM_SUFFIX bytes.
 */
#define CZK_KEYMEM_SUFFIX 26
static inline void czk_keymem_suffix(const uint8_t *key_id, char out[CZK_KEYMEM_SUFFIX])
{
    out[0] = '-';
    czk_hex(key_id, 12, out + 1);
}

/* "cpu", "cuda" or "auto" (the best one built in); NULL with e set when unknown */
const czk_backend_ops *czk_backend_find(const char *name, czk_error *e);

/* Finds name (as czk_backend_find) and creates it into *ops / *out.  When the
 * chosen backend is not "cpu" and its create fails with -ENODEV (no GPU),
 * -ENOEXEC (a GPU the kernels were not built for) or, with the keys given at
 * create (defer_keys 0), -ENOMEM (a proving key does not fit in device
 * memory), and fallback is set (always for "auto"), logs a warning naming the
 * reason and creates "cpu" instead; *ops says which one runs.  With
 * defer_keys a key that does not fit fails only its add_key. */
int czk_backend_open(const char *name, int fallback, const czk_backend_config *cfg, const czk_backend_ops **ops,
                     czk_backend **out, czk_error *e);

extern const czk_backend_ops czk_backend_cpu_ops;
/*
 * Where `czk setup` runs the key's point multiplications (common/groth16/
 * setup.h's czk_setup_accel): for name "cuda" or "auto" with a usable GPU
 * (device 0 of CUDA_VISIBLE_DEVICES) in a czk built with the cuda backend,
 * fills *accel (falling back to the CPU for "auto") and returns 1; returns 0
 * with *accel zeroed when the setup runs on the CPU ("cpu", or "auto"
 * without a GPU, or with one the kernels were not built for, which is
 * logged); -ENODEV (no GPU) or -ENOEXEC (not built for it) with e set for
 * "cuda", and
 * czk_backend_find's error for a name not built into this czk.
 */
int czk_backend_setup_accel(const char *name, czk_setup_accel *accel, czk_error *e);

#ifdef CZK_HAVE_CUDA_BACKEND
extern const czk_backend_ops czk_backend_cuda_ops;
/* czk_backend_setup_accel's GPU part (backend_cuda.c): 1, -ENODEV or -ENOEXEC */
int czk_backend_cuda_setup_accel_(czk_setup_accel *accel, int fallback, czk_error *e);
#endif

#endif
