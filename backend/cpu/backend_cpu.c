/*
 * backend_cpu.c — the CPU compute backend of czk-gpud (backend.h): copies a
 * slot's a, b, c, w into buffers allocated once at start-up (sized for the
 * largest configured circuit), then runs the h step and the MSMs of the
 * circuit's curve (common/groth16/any.h: BLS12-381 or BN254; the buffers hold
 * 32-byte elements of either) with the configured thread count.  Same
 * results as the CUDA backend; used in CI and on hosts without a GPU.
 *
 * The key points stay in the caller's czk_zkey (keeps_host_points): add_key
 * only records the pointer, in the slot of its circuit, which no context
 * reads before gpud publishes the circuit (backend.h); slots of different
 * circuits are different words, so add_key needs no lock.
 * Each context is touched only by the worker thread gpud gives it to.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/groth16/any.h"
#include "common/base/log.h"
#include "backend/backend.h"

typedef struct cpu_ctx {
    czk_fr *a, *b, *c, *w;
    uint64_t domain_size, n_vars;
} cpu_ctx;

struct czk_backend {
    czk_backend_config cfg;
    const czk_zkey **zkeys; /* [n_circuits] the sizes (cfg->zkeys) */
    const czk_zkey **keys;  /* [n_circuits] the points, from add_key; NULL before */
    unsigned n;
    cpu_ctx *ctx;
    uint64_t max_domain, max_vars;
};

static void cpu_destroy(czk_backend *b)
{
    if (!b)
        return;
    for (unsigned i = 0; b->ctx && i < b->n; i++) {
        free(b->ctx[i].a);
        free(b->ctx[i].b);
        free(b->ctx[i].c);
        free(b->ctx[i].w);
    }
    free(b->ctx);
    free(b->zkeys);
    free(b->keys);
    free(b);
}

static void *alloc_fr(uint64_t n)
{
    void *p = NULL;
    size_t sz = (size_t)(n ? n : 1) * sizeof(czk_fr);
    if (posix_memalign(&p, 64, sz))
        return NULL;
    memset(p, 0, sz); /* touch the pages now, not on the first partition */
    return p;
}

static int cpu_create(czk_backend **out, const czk_backend_config *cfg, czk_error *e)
{
    czk_backend *b = calloc(1, sizeof(*b));
    if (!b)
        return czk_errorf(e, -ENOMEM, "cpu backend: out of memory");
    b->cfg = *cfg;
    b->n = cfg->contexts ? cfg->contexts : 1;
    b->zkeys = calloc(cfg->n_circuits ? cfg->n_circuits : 1, sizeof(*b->zkeys));
    b->keys = calloc(cfg->n_circuits ? cfg->n_circuits : 1, sizeof(*b->keys));
    b->ctx = calloc(b->n, sizeof(*b->ctx));
    if (!b->zkeys || !b->keys || !b->ctx) {
        cpu_destroy(b);
        return czk_errorf(e, -ENOMEM, "cpu backend: out of memory");
    }
    for (unsigned i = 0; i < cfg->n_circuits; i++) {
        b->zkeys[i] = cfg->zkeys[i];
        if (!cfg->zkeys[i])
            continue; /* never added (defer_keys) */
        if (!cfg->defer_keys)
            b->keys[i] = cfg->zkeys[i];
        if (cfg->zkeys[i]->domain_size > b->max_domain)
            b->max_domain = cfg->zkeys[i]->domain_size;
        if (cfg->zkeys[i]->n_vars > b->max_vars)
            b->max_vars = cfg->zkeys[i]->n_vars;
    }
    for (unsigned i = 0; i < b->n; i++) {
        cpu_ctx *c = &b->ctx[i];
        c->a = alloc_fr(b->max_domain);
        c->b = alloc_fr(b->max_domain);
        c->c = alloc_fr(b->max_domain);
        c->w = alloc_fr(b->max_vars);
        if (!c->a || !c->b || !c->c || !c->w) {
            int r = czk_errorf(e, -ENOMEM, "cpu backend: could not allocate %u buffer sets of %llu + %llu elements",
                               b->n, (unsigned long long)b->max_domain, (unsigned long long)b->max_vars);
            cpu_destroy(b);
            return r;
        }
    }
    czk_info("cpu backend: %u context(s), buffers for domain %llu and %llu variables, %d threads", b->n,
             (unsigned long long)b->max_domain, (unsigned long long)b->max_vars, cfg->threads);
    *out = b;
    return 0;
}

static unsigned cpu_contexts(const czk_backend *b) { return b->n; }

static int cpu_add_key(czk_backend *b, unsigned circuit, const czk_zkey *z, czk_error *e)
{
    const czk_zkey *s;

    if (circuit >= b->cfg.n_circuits || !(s = b->zkeys[circuit]))
        return czk_errorf(e, -EINVAL, "cpu backend: circuit %u was not configured at create", circuit);
    if (z->curve != s->curve)
        return czk_errorf(e, -EINVAL, "cpu backend: circuit %u: the key is for %s, at create it was for %s", circuit,
                          czk_curve_name(z->curve), czk_curve_name(s->curve));
    if (!(z->loaded & CZK_ZKEY_POINTS) || z->n_vars != s->n_vars || z->n_public != s->n_public ||
        z->domain_size != s->domain_size)
        return czk_errorf(e, -EINVAL, "cpu backend: the key of circuit %u has other sizes than at create, or no points",
                          circuit);
    b->keys[circuit] = z;
    return 0;
}

static void cpu_remove_key(czk_backend *b, unsigned circuit)
{
    if (circuit < b->cfg.n_circuits)
        b->keys[circuit] = NULL;
}

static int cpu_copy_in(czk_backend *b, unsigned ctx, unsigned circuit, const czk_backend_input *in, czk_error *e)
{
    cpu_ctx *c;
    const czk_zkey *z;

    if (ctx >= b->n || circuit >= b->cfg.n_circuits)
        return czk_errorf(e, -EINVAL, "cpu backend: context %u / circuit %u out of range", ctx, circuit);
    c = &b->ctx[ctx];
    z = b->keys[circuit];
    if (!z)
        return czk_errorf(e, -EINVAL, "cpu backend: circuit %u has no key yet", circuit);
    if (in->domain_size != z->domain_size || in->n_vars != z->n_vars)
        return czk_errorf(e, -EINVAL, "slot holds domain %llu and %llu variables, the circuit has %u and %u",
                          (unsigned long long)in->domain_size, (unsigned long long)in->n_vars, z->domain_size,
                          z->n_vars);
    memcpy(c->a, in->a, in->domain_size * sizeof(czk_fr));
    memcpy(c->b, in->b, in->domain_size * sizeof(czk_fr));
    memcpy(c->c, in->c, in->domain_size * sizeof(czk_fr));
    memcpy(c->w, in->w, in->n_vars * sizeof(czk_fr));
    c->domain_size = in->domain_size;
    c->n_vars = in->n_vars;
    return 0;
}

static int cpu_compute(czk_backend *b, unsigned ctx, unsigned circuit, czk_groth16_any_msm_out *out, czk_fr *pub,
                       czk_error *e)
{
    cpu_ctx *c;
    const czk_zkey *z;
    int r;

    if (ctx >= b->n || circuit >= b->cfg.n_circuits)
        return czk_errorf(e, -EINVAL, "cpu backend: context %u / circuit %u out of range", ctx, circuit);
    c = &b->ctx[ctx];
    z = b->keys[circuit];
    if (!z)
        return czk_errorf(e, -EINVAL, "cpu backend: circuit %u has no key yet", circuit);
    if (c->domain_size != z->domain_size || c->n_vars != z->n_vars)
        return czk_errorf(e, -EINVAL, "cpu backend: context %u does not hold a partition of this circuit", ctx);
    r = czk_groth16_any_compute_h(z->curve, c->a, c->b, c->c, c->a, z->log_domain, b->cfg.threads);
    if (r < 0)
        return czk_errorf(e, r, "computing h failed: %s", strerror(-r));
    r = czk_groth16_any_msms(z, c->w, c->a, out, b->cfg.threads);
    if (r < 0)
        return czk_errorf(e, r, "the MSMs failed: %s", strerror(-r));
    memcpy(pub, c->w + 1, (size_t)z->n_public * sizeof(czk_fr));
    return 0;
}

const czk_backend_ops czk_backend_cpu_ops = {
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .contexts = cpu_contexts,
    .add_key = cpu_add_key,
    .remove_key = cpu_remove_key,
    .keeps_host_points = 1,
    .copy_in = cpu_copy_in,
    .compute = cpu_compute,
};
