/*
 * backend.h — the compute backend behind czk-gpud: h (NTTs) and the MSMs of
 * one partition, given the a, b, c, w vectors a synth wrote into a pool slot.
 *
 * A backend owns `contexts` independent sets of buffers (host or device).
 * gpud runs one worker thread per context; a context is used by one thread at
 * a time, so backends need no locks.  For each partition the worker calls
 *   copy_in(ctx, circuit, slot payload)   -> the slot may be released after this
 *   compute(ctx, circuit, out, pub)       -> the four MSM points, public signals
 * copy_in must not keep any pointer into the slot: gpud hands the slot back to
 * the synth as soon as copy_in returns (DESIGN.md "A partition's life", step 4).
 * Both run on worker threads, never on gpud's event-loop thread.
 *
 * Implementations: "cpu" (gpud/cpu/backend_cpu.c: memcpy into preallocated
 * buffers, then czk_groth16_compute_h + czk_groth16_msms).  A CUDA backend
 * plugs in by adding a czk_backend_ops to the table in gpud/backend.c.
 */
#ifndef CZK_GPUD_BACKEND_H
#define CZK_GPUD_BACKEND_H

#include <stdint.h>

#include "common/error.h"
#include "common/formats.h"
#include "common/groth16.h"

typedef struct czk_backend czk_backend;

typedef struct czk_backend_config {
    unsigned n_circuits;
    const czk_zkey *const *zkeys; /* [n_circuits], mapped by gpud for the backend's lifetime */
    int threads;                  /* CPU threads for compute (0: all online CPUs) */
    unsigned contexts;            /* requested contexts (0: the backend's default) */
} czk_backend_config;

/* the slot payload: a, b, c (domain_size Fr, Montgomery) and w (n_vars Fr, standard) */
typedef struct czk_backend_input {
    const uint8_t *a, *b, *c, *w;
    uint64_t domain_size, n_vars;
} czk_backend_input;

typedef struct czk_backend_ops {
    const char *name;
    int (*create)(czk_backend **out, const czk_backend_config *cfg, czk_error *e);
    void (*destroy)(czk_backend *b);
    unsigned (*contexts)(const czk_backend *b);
    /* copies the slot payload into context ctx; circuit indexes cfg->zkeys */
    int (*copy_in)(czk_backend *b, unsigned ctx, unsigned circuit, const czk_backend_input *in, czk_error *e);
    /* computes the partition copied into ctx: out gets the MSM results, pub the
     * circuit's n_public public signals w[1..n_public] (standard form) */
    int (*compute)(czk_backend *b, unsigned ctx, unsigned circuit, czk_groth16_msm_out *out, czk_fr *pub,
                   czk_error *e);
} czk_backend_ops;

/* "cpu", "cuda" or "auto" (the best one built in); NULL with e set when unknown */
const czk_backend_ops *czk_backend_find(const char *name, czk_error *e);

extern const czk_backend_ops czk_backend_cpu_ops;

#endif
