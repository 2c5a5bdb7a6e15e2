/*
 * worker.c — czk-gpud's backend worker threads, one per backend context.
 *
 * Hand-off: the loop thread fills a gpud_work (part, circuit, slot pointers),
 * moves the slot READY -> DMA and signals the worker.  The worker copies the
 * slot into its context (backend copy_in) and posts `copied_task`; the loop
 * then frees the slot and sends RELEASE while the worker computes h and the
 * MSMs, then posts `computed_task`.  Between the signal and computed_task the
 * worker owns the fields marked "worker" in gpud.h; the loop touches them only
 * in the posted tasks, which run after the worker wrote them (the post is a
 * release/acquire pair through the loop's task stack).  The mutex only guards
 * the has_work/stop flags of that one worker.
 *
 * Turns: the workers of contexts on one compute device (backend device_of)
 * take FIFO turns to compute, while verify + copy-in run outside the turn.
 * Two contexts per GPU then double-buffer: context 1 checks and copies
 * partition k+1 while context 0 computes k, and starts the moment k is done.
 * (When both computed at once they also finished at about the same time and
 * then both spent their verify + copy with the GPU idle.)  The compute trace
 * span and STATUS's busy time start when the turn is taken, not when the copy
 * ended.  CZK_GPUD_CONCURRENT_COMPUTE=1 turns the turns off (benchmarks).
 *
 * Waking the next worker by the condition variable alone costs milliseconds
 * on a host whose cores are all busy synthesising: the scheduler lets the
 * running (niced) synth thread finish its slice before the woken worker runs
 * (2.7-5 ms gaps at 2^22; docs/bench-gpu-pipeline.md, "Turn hand-off").  So the holder
 * publishes when it expects to finish (its start + its previous compute's
 * length), and the next ticket sleeps until TURN_SPIN before that, then spins
 * on `serving` on its own core until the turn comes (computes of one size
 * vary by up to ~10%, so it keeps spinning up to TURN_OVERRUN past the
 * expected end, then goes back to sleeping: a holder far past its estimate,
 * e.g. a larger circuit, costs at most that much spinning).
 * CZK_GPUD_TURN_SPIN_US sets the window (default 6000; 0 = sleep only, for
 * comparisons).  Each worker thread also asks for a short scheduler slice
 * (sched_setattr sched_runtime, EEVDF's custom slice, Linux 6.12+; ignored by
 * older kernels): a task with a shorter slice preempts the running one when
 * it wakes instead of waiting for that one's slice to end.
 * CZK_GPUD_WORKER_SLICE_US sets it (default 100; 0 = the kernel's default).
 *
 * Devices: g->gpus has one entry per compute device, with the partitions
 * computed and failed on it and its own compute spans (STATUS "gpus", the
 * czk_gpud_gpu_* metrics).  A copy-in or compute that returns -ENODEV
 * (backend.h: the device is lost, e.g. a sticky CUDA error) takes that
 * device out of service for good (until gpud restarts): one log line, the
 * metric czk_gpud_gpus_lost_total, no more work for its contexts
 * (gpud_worker_idle skips them), and the partition goes back to the front
 * of its lane to be synthesised again (its slot went back to the synth at
 * the end of the copy) and proved on a device still in service.  Its
 * contexts that are computing finish on their own: each one that fails the
 * same way is queued again too.  With no device left, partitions wait in
 * their slots and lanes; nothing accepted is failed for it.  Any other
 * error fails only its partition.
 */
#define TURN_OVERRUN_NS 50000000ull
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/runtime/daemon.h"
#include "common/runtime/fault.h"
#include "common/base/log.h"
#include "common/runtime/trace.h"
#include "gpud/gpud.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void turn_wait_until(gpud_turn *t, uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull)};
    pthread_cond_timedwait(&t->cv, &t->mu, &ts);
}

/* returns this worker's ticket */
static uint64_t turn_take(gpud_turn *t)
{
    const uint64_t spin = t->spin_ns;
    pthread_mutex_lock(&t->mu);
    uint64_t me = t->next++;
    while (t->serving != me) {
        /* next in line behind a holder that said when it expects to finish */
        if (spin && t->serving + 1 == me && t->end_ticket == t->serving && t->expect_end) {
            uint64_t now = czk_mono_ns(), end = t->expect_end;
            if (now + spin < end) {
                turn_wait_until(t, end - spin); /* woken early by a give, or at the window */
                continue;
            }
            if (now < end + TURN_OVERRUN_NS) {
                pthread_mutex_unlock(&t->mu);
                while (__atomic_load_n(&t->serving, __ATOMIC_ACQUIRE) != me && czk_mono_ns() < end + TURN_OVERRUN_NS)
                    cpu_relax();
                pthread_mutex_lock(&t->mu);
                if (t->serving == me)
                    break;
                t->expect_end = 0; /* overran its estimate: sleep until the give */
                continue;
            }
        }
        pthread_cond_wait(&t->cv, &t->mu);
    }
    pthread_mutex_unlock(&t->mu);
    return me;
}

/* the holder of ticket `me` expects to be done at `end` (0: no estimate) */
static void turn_started(gpud_turn *t, uint64_t me, uint64_t end)
{
    pthread_mutex_lock(&t->mu);
    t->end_ticket = me;
    t->expect_end = end;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

static void turn_give(gpud_turn *t)
{
    pthread_mutex_lock(&t->mu);
    __atomic_store_n(&t->serving, t->serving + 1, __ATOMIC_RELEASE);
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

/* struct sched_attr (include/uapi/linux/sched/types.h, SCHED_ATTR_SIZE_VER1) */
struct worker_sched_attr {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
    uint32_t sched_util_min, sched_util_max;
};

static void worker_short_slice(unsigned ctx)
{
#ifdef SYS_sched_setattr
    const char *s = getenv("CZK_GPUD_WORKER_SLICE_US");
    uint64_t us = s && *s ? strtoull(s, NULL, 10) : 100;
    struct worker_sched_attr a;
    if (!us)
        return;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.sched_policy = SCHED_OTHER;
    errno = 0;
    a.sched_nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    if (errno)
        a.sched_nice = 0;
    a.sched_runtime = us * 1000ull;
    if (syscall(SYS_sched_setattr, 0, &a, 0) != 0)
        czk_debug("worker %u: no short scheduler slice (%s)", ctx, strerror(errno));
#else
    (void)ctx;
#endif
}

static void *worker_main(void *arg)
{
    gpud_work *w = arg;
    gpud *g = w->g;

    worker_short_slice(w->ctx);

    for (;;) {
        pthread_mutex_lock(&w->mu);
        while (!w->has_work && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->stop) {
            pthread_mutex_unlock(&w->mu);
            return NULL;
        }
        w->has_work = 0;
        pthread_mutex_unlock(&w->mu);

        memset(&w->err, 0, sizeof(w->err));
        w->rc_compute = -ECANCELED;
        uint64_t t0 = czk_mono_ns(), t1;
        if (czk_fault("gpud.corrupt_slot") < 0) /* tests: a slot whose bytes changed after READY */
            czk_slot_data(w->pool, w->slot)[0] ^= 1;
        w->rc_copy = czk_slot_verify(w->pool, w->slot, &w->err);
        w->verify_bad = w->rc_copy < 0;
        t1 = czk_mono_ns();
        czk_trace_add(w->in.job, w->in.partition, CZK_TRACE_VERIFY, t0, t1);
        if (w->rc_copy == 0)
            w->rc_copy = g->bops->copy_in(g->backend, w->ctx, w->circuit, &w->in, &w->err);
        w->t_copied = czk_mono_ns();
        czk_trace_add(w->in.job, w->in.partition, CZK_TRACE_COPY, t1, w->t_copied);
        czk_loop_post(g->loop, &w->copied_task);
        uint64_t t_start = 0;
        if (w->rc_copy == 0) {
            czk_fault("gpud.mid_compute");
            uint64_t ticket = w->turn ? turn_take(w->turn) : 0;
            t_start = czk_mono_ns();
            if (w->turn)
                turn_started(w->turn, ticket, w->last_compute_ns ? t_start + w->last_compute_ns : 0);
            atomic_store(&w->t_started, t_start);
            if (czk_fault("gpud.device_lost") < 0) /* tests: the device fails as a sticky CUDA error would */
                w->rc_compute = czk_errorf(&w->err, -ENODEV, "device %u is lost (fault point gpud.device_lost)",
                                           w->dev);
            else
                w->rc_compute = g->bops->compute(g->backend, w->ctx, w->circuit, &w->out, w->pub, &w->err);
            w->t_computed = czk_mono_ns(); /* before the next context's turn begins */
            if (w->turn)
                turn_give(w->turn);
            w->last_compute_ns = w->rc_compute == 0 ? w->t_computed - t_start : 0;
        } else {
            w->t_computed = czk_mono_ns();
        }
        if (w->rc_copy == 0)
            czk_trace_add(w->in.job, w->in.partition, CZK_TRACE_COMPUTE, t_start, w->t_computed);
        czk_loop_post(g->loop, &w->computed_task);
    }
}

/* loop thread: the copy is done, the slot can go back to the synth */
void gpud_work_copied(gpud *g, gpud_work *w)
{
    gpud_part_slot_free(g, w->part, 1);
    czk_fault("gpud.after_release");
}

static void on_copied(czk_loop_task *t, void *ctx)
{
    gpud_work *w = ctx;
    (void)t;
    gpud_work_copied(w->g, w);
}

/* a partition whose slot fails the checksum this many times fails */
#define GPUD_RESYNTH_MAX 2

/* loop thread: the partition is computed (or failed) */
void gpud_work_computed(gpud *g, gpud_work *w)
{
    gpud_part *p = w->part;
    czk_groth16_any_msm_out *res;
    czk_fr *pub;
    uint32_t npub;

    uint64_t t_started = atomic_exchange(&w->t_started, 0);
    gpud_gpu *d = g->gpus && w->dev < g->n_gpus ? &g->gpus[w->dev] : NULL;
    /* the device is gone (backend.h): not the partition's fault */
    int lost = !w->verify_bad && (w->rc_copy == -ENODEV || w->rc_compute == -ENODEV);
    w->busy = 0;
    w->part = NULL;
    gpud_sched_dirty(g); /* a backend context is free */
    if (t_started) {
        czk_trace_hist_add(&g->compute_hist, t_started, w->t_computed);
        if (d)
            czk_trace_hist_add(d->hist, t_started, w->t_computed);
        czk_metric_add_f(g->m_busy_seconds, (double)(w->t_computed - t_started) * 1e-9);
    }
    if (lost)
        gpud_gpu_lost(g, w->dev, w->err.msg);
    if (p->discard) {
        p->discard = 0;
        gpud_job_maybe_release(g, p->job);
        return;
    }
    if (lost) {
        if (d)
            d->requeued++;
        czk_info("job %llu partition %u: queued again, to be synthesised and proved on another device (device %u "
                 "is out of service)",
                 (unsigned long long)p->job->id, p->index, w->dev);
        gpud_part_requeue(g, p, GPUD_SLOT_LOST); /* the slot went back at the copy's end */
        return;
    }
    if (w->verify_bad && p->resynth < GPUD_RESYNTH_MAX) {
        /* the slot's bytes are not what the synth wrote (the one check of a
         * READY slot's payload, adopted ones included): synthesise again */
        p->resynth++;
        czk_warn("job %llu partition %u: its slot failed the checksum before the copy (%s): synthesising it again "
                 "(%u of %u)",
                 (unsigned long long)p->job->id, p->index, w->err.msg, p->resynth, GPUD_RESYNTH_MAX);
        gpud_part_requeue(g, p, GPUD_SLOT_LOST); /* the slot went back at the copy's end */
        return;
    }
    if (w->rc_copy < 0 || w->rc_compute < 0) {
        if (d && !w->verify_bad)
            d->failed++;
        gpud_part_finish(g, p, w->rc_copy < 0 ? w->rc_copy : w->rc_compute, w->err.msg, NULL, NULL);
        return;
    }
    if (d)
        d->done++;
    if (w->dev < GPUD_METRIC_GPUS)
        czk_metric_inc(g->m_gpu[w->dev].done, 1);
    npub = g->circuits[p->job->circuit].zkey.n_public;
    res = malloc(sizeof(*res));
    pub = malloc((npub ? npub : 1) * sizeof(czk_fr));
    if (!res || !pub) {
        free(res);
        free(pub);
        gpud_part_finish(g, p, -ENOMEM, "out of memory for the partition's result", NULL, NULL);
        return;
    }
    *res = w->out;
    if (czk_fault("gpud.corrupt_result") < 0) {
        /* tests: a wrong result, which the finalizer's pairing check must catch */
        czk_groth16_any_msm_out_swap_ac(res);
    }
    memcpy(pub, w->pub, npub * sizeof(czk_fr));
    if (gpud_part_computed(g, p, res, pub, w->t_computed) == 0)
        gpud_result_ready(g, p);
}

static void on_computed(czk_loop_task *t, void *ctx)
{
    gpud_work *w = ctx;
    (void)t;
    gpud_work_computed(w->g, w);
}

/* a device index past this is a backend bug, not a machine */
#define GPUD_MAX_DEVICES 1024

/* the compute device of context ctx (one device when the backend has no
 * device_of, except in test builds with CZK_GPUD_TEST_DEVICES) */
static unsigned device_of(const gpud *g, unsigned ctx)
{
    if (g->bops && g->bops->device_of)
        return g->bops->device_of(g->backend, ctx);
#ifdef CZK_FAULT_INJECTION
    {
        const char *s = getenv("CZK_GPUD_TEST_DEVICES");
        unsigned long n = s && *s ? strtoul(s, NULL, 10) : 0;
        if (n > 1 && n <= GPUD_MAX_DEVICES)
            return ctx % (unsigned)n;
    }
#endif
    return 0;
}

/* the NUMA node nearest device d (-1: not known; test builds may set
 * CZK_GPUD_TEST_NUMA="n0,n1,...", one node per device) */
static int device_numa(const gpud *g, unsigned d)
{
    if (g->bops && g->bops->device_numa)
        return g->bops->device_numa(g->backend, d);
#ifdef CZK_FAULT_INJECTION
    {
        const char *s = getenv("CZK_GPUD_TEST_NUMA");
        for (unsigned i = 0; s && *s; i++) {
            char *end;
            long v = strtol(s, &end, 10);
            if (end == s)
                break;
            if (i == d)
                return v >= 0 && v < 1024 ? (int)v : -1;
            s = *end == ',' ? end + 1 : end;
        }
    }
#endif
    return -1;
}

/* g->gpus for the first n workers (their dev is set here) */
static int gpus_setup(gpud *g, unsigned n, czk_error *e)
{
    unsigned nd = 1;

    for (unsigned i = 0; i < n; i++) {
        unsigned d = device_of(g, i);
        if (d >= GPUD_MAX_DEVICES)
            return czk_errorf(e, -EINVAL, "backend context %u is on device %u: more than %u devices", i, d,
                              GPUD_MAX_DEVICES);
        g->workers[i].dev = d;
        if (d + 1 > nd)
            nd = d + 1;
    }
    if (!(g->gpus = calloc(nd, sizeof(gpud_gpu))))
        return czk_errorf(e, -ENOMEM, "out of memory for the devices");
    g->n_gpus = nd;
    for (unsigned d = 0; d < nd; d++)
        if (!(g->gpus[d].hist = calloc(1, sizeof(czk_trace_hist)))) {
            gpud_gpus_free(g);
            return czk_errorf(e, -ENOMEM, "out of memory for the devices");
        }
    for (unsigned i = 0; i < n; i++)
        g->gpus[g->workers[i].dev].contexts++;
    for (unsigned d = 0; d < nd; d++) {
        g->gpus[d].numa = device_numa(g, d);
        if (g->gpus[d].contexts && g->gpus[d].numa >= 0)
            czk_info("device %u: NUMA node %d (partitions of that node's pool go to it first)", d, g->gpus[d].numa);
    }
    for (unsigned d = 0; d < nd && d < GPUD_METRIC_GPUS; d++) {
        czk_metric_set(g->m_gpu[d].contexts, g->gpus[d].contexts);
        czk_metric_set(g->m_gpu[d].in_service, g->gpus[d].contexts ? 1 : 0);
    }
    return 0;
}

int gpud_gpus_setup(gpud *g, czk_error *e)
{
    return gpus_setup(g, g->n_workers, e);
}

void gpud_gpus_free(gpud *g)
{
    for (unsigned d = 0; g->gpus && d < g->n_gpus; d++)
        free(g->gpus[d].hist);
    free(g->gpus);
    g->gpus = NULL;
    g->n_gpus = 0;
}

unsigned gpud_gpus_in_service(const gpud *g)
{
    unsigned n = 0;
    if (!g->gpus)
        return 1;
    for (unsigned d = 0; d < g->n_gpus; d++)
        n += g->gpus[d].contexts && !g->gpus[d].lost;
    return n;
}

int gpud_gpu_lost(gpud *g, unsigned dev, const char *why)
{
    const char *backend = g->bops ? g->bops->name : "test";
    gpud_gpu *d;
    unsigned left;

    if (!g->gpus || dev >= g->n_gpus) {
        czk_err("device %u of the %s backend reported lost, but gpud does not know it: %s", dev, backend,
                why && why[0] ? why : "(no reason)");
        return 0;
    }
    d = &g->gpus[dev];
    if (d->lost)
        return 0;
    d->lost = 1;
    snprintf(d->why, sizeof(d->why), "%s", why && why[0] ? why : "the backend reported the device lost");
    g->gpus_lost_total++;
    czk_metric_inc(g->m_gpus_lost, 1);
    if (dev < GPUD_METRIC_GPUS)
        czk_metric_set(g->m_gpu[dev].in_service, 0);
    left = gpud_gpus_in_service(g);
    if (left)
        czk_err("device %u of the %s backend is taken out of service (%u context%s): %s; its partitions are "
                "synthesised again and proved on the %u device%s left",
                dev, backend, d->contexts, d->contexts == 1 ? "" : "s", d->why, left, left == 1 ? "" : "s");
    else
        czk_err("device %u of the %s backend is taken out of service (%u context%s): %s; no device is left in "
                "service: accepted jobs wait until czk-gpud is restarted with a working device",
                dev, backend, d->contexts, d->contexts == 1 ? "" : "s", d->why);
    gpud_sched_dirty(g);
    return 1;
}

void gpud_busy(gpud *g, int dev, uint64_t now, uint64_t window_ns, double *pct, uint64_t *gap_ns)
{
    czk_trace_span run[64];
    size_t nrun = 0;
    uint64_t t0 = now > window_ns ? now - window_ns : 0;
    const czk_trace_hist *h = dev >= 0 && g->gpus && (unsigned)dev < g->n_gpus ? g->gpus[dev].hist
                                                                               : &g->compute_hist;

    for (unsigned i = 0; i < g->n_workers && nrun < 64; i++) {
        uint64_t t = atomic_load(&g->workers[i].t_started);
        if (t && (dev < 0 || !g->gpus || g->workers[i].dev == (unsigned)dev)) {
            run[nrun].begin_ns = t;
            run[nrun++].end_ns = now;
        }
    }
    *pct = 0;
    *gap_ns = 0;
    if (now <= t0 || czk_trace_busy(h, run, nrun, t0, now, pct, gap_ns) < 0) {
        *pct = 0;
        *gap_ns = now - t0;
    }
}

int gpud_workers_start(gpud *g, czk_error *e)
{
    unsigned n = g->bops->contexts(g->backend), nt;
    const char *conc = getenv("CZK_GPUD_CONCURRENT_COMPUTE");
    int turns = !(conc && conc[0] == '1'), rc;

    g->workers = calloc(n, sizeof(gpud_work));
    if (!g->workers)
        return czk_errorf(e, -ENOMEM, "out of memory for workers");
    if ((rc = gpus_setup(g, n, e)) < 0)
        return rc;
    nt = g->n_gpus;
    if (turns) {
        g->turns = calloc(nt, sizeof(gpud_turn));
        if (!g->turns)
            return czk_errorf(e, -ENOMEM, "out of memory for workers");
        const char *sp = getenv("CZK_GPUD_TURN_SPIN_US");
        const uint64_t spin_ns = (sp && *sp ? strtoull(sp, NULL, 10) : 6000ull) * 1000ull;
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* turn_wait_until takes czk_mono_ns times */
        for (unsigned i = 0; i < nt; i++) {
            pthread_mutex_init(&g->turns[i].mu, NULL);
            pthread_cond_init(&g->turns[i].cv, &ca);
            g->turns[i].spin_ns = spin_ns;
        }
        pthread_condattr_destroy(&ca);
        g->n_turns = nt;
    } else {
        czk_info("CZK_GPUD_CONCURRENT_COMPUTE=1: contexts of one device compute concurrently");
    }
    for (unsigned i = 0; i < n; i++) {
        gpud_work *w = &g->workers[i];
        int r;
        w->g = g;
        w->ctx = i;
        if (g->turns)
            w->turn = &g->turns[w->dev];
        w->pub = calloc(g->max_public + 1, sizeof(czk_fr));
        if (!w->pub)
            return czk_errorf(e, -ENOMEM, "out of memory for workers");
        w->copied_task.fn = on_copied;
        w->copied_task.ctx = w;
        w->computed_task.fn = on_computed;
        w->computed_task.ctx = w;
        pthread_mutex_init(&w->mu, NULL);
        pthread_cond_init(&w->cv, NULL);
        if ((r = pthread_create(&w->th, NULL, worker_main, w)) != 0)
            return czk_errorf(e, -r, "could not start worker thread %u: %s", i, strerror(r));
        g->n_workers++;
    }
    return 0;
}

void gpud_workers_stop(gpud *g)
{
    for (unsigned i = 0; i < g->n_workers; i++) {
        gpud_work *w = &g->workers[i];
        pthread_mutex_lock(&w->mu);
        w->stop = 1;
        pthread_cond_signal(&w->cv);
        pthread_mutex_unlock(&w->mu);
    }
    for (unsigned i = 0; i < g->n_workers; i++) {
        pthread_join(g->workers[i].th, NULL);
        free(g->workers[i].pub);
    }
    free(g->workers);
    g->workers = NULL;
    g->n_workers = 0;
    for (unsigned i = 0; i < g->n_turns; i++) {
        pthread_mutex_destroy(&g->turns[i].mu);
        pthread_cond_destroy(&g->turns[i].cv);
    }
    free(g->turns);
    g->turns = NULL;
    g->n_turns = 0;
    gpud_gpus_free(g);
}

/* An idle context that serves circuit (backend serves), on a device in
 * service: one on the NUMA node `node` of the partition's pool first, then
 * the device with the fewest busy contexts, so partitions spread over the
 * devices instead of queueing on the first one.  NULL when none is idle. */
gpud_work *gpud_worker_idle(gpud *g, unsigned circuit, int node)
{
    gpud_work *best = NULL;
    unsigned best_busy = 0;
    int best_near = 0;

    for (unsigned i = 0; i < g->n_workers; i++) {
        gpud_work *w = &g->workers[i];
        unsigned busy = 0;
        int near;
        if (w->busy || (g->gpus && w->dev < g->n_gpus && g->gpus[w->dev].lost))
            continue;
        if (g->bops && g->bops->serves && !g->bops->serves(g->backend, w->ctx, circuit))
            continue;
        if (!g->gpus)
            return w;
        near = node >= 0 && w->dev < g->n_gpus && g->gpus[w->dev].numa == node;
        for (unsigned k = 0; k < g->n_workers; k++)
            busy += g->workers[k].busy && g->workers[k].dev == w->dev;
        if (!best || near > best_near || (near == best_near && busy < best_busy))
            best = w, best_busy = busy, best_near = near;
    }
    return best;
}

void gpud_work_start(gpud *g, gpud_work *w, gpud_part *p)
{
    gpud_pool *gp = &g->pools[p->pool];
    const czk_slot_header *h = &gp->pool.slots[p->slot];
    const gpud_circuit *c = &g->circuits[p->job->circuit];
    czk_slot_layout l;
    czk_error e = {0};
    uint8_t *data;

    if (czk_slot_begin_dma(&gp->pool, p->slot, p->gen, &e) < 0) {
        /* somebody else's slot now: forget it and start the partition over */
        czk_err("job %llu partition %u: %s: queued again", (unsigned long long)p->job->id, p->index, e.msg);
        gpud_part_requeue(g, p, GPUD_SLOT_LOST);
        return;
    }
    if (gpud_part_gpu(g, p) < 0)
        return;
    czk_slot_payload_layout(c->zkey.domain_size, c->zkey.n_vars, &l);
    data = czk_slot_data(&gp->pool, p->slot);
    w->part = p;
    w->circuit = p->job->circuit;
    w->in.a = data + l.off_a;
    w->in.b = data + l.off_b;
    w->in.c = data + l.off_c;
    w->in.w = data + l.off_w;
    w->in.domain_size = h->domain_size;
    w->in.n_vars = h->n_vars;
    w->in.job = p->job->id;
    w->in.partition = p->index;
    w->pool = &gp->pool;
    w->slot = p->slot;
    w->busy = 1;
    if (g->io && g->io->kick) {
        g->io->kick(g->io->ctx, w);
        return;
    }
    pthread_mutex_lock(&w->mu);
    w->has_work = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}
