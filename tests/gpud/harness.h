/*
 * harness.h — czk-gpud's scheduling logic without sockets, threads or sleeps
 * (header-only, for the programs of tests/gpud/).
 *
 * A gpud is set up with a real journal and a real shared-memory pool in a
 * temporary state directory, and a fake gpud_io: "connections" are
 * t_conn structs that record every message sent to them, the backend
 * workers are never started (the kick is recorded; the test says when the
 * copy and the compute end), and the clock only moves when the test moves
 * it.  The test plays the synths (filling slots through ipc/pool.h as
 * czk-synth does, then calling gpud_synth_ready) and the finalizer
 * (gpud_finalizer_done), and runs the scheduler once per simulated loop
 * turn (t_turn).  t_check() verifies the bookkeeping invariants.
 */
#ifndef CZK_TESTS_GPUD_HARNESS_H
#define CZK_TESTS_GPUD_HARNESS_H

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/log.h"
#include "gpud/gpud.h"
#include "tests/common/test_util.h"

#define T_MAX_SENT 4096
#define T_NPUB 2

typedef struct t_sent {
    uint32_t type;
    uint64_t job;
    uint32_t part, pool, slot, gen, stage;
    uint64_t lease_ms;
    int32_t code;       /* REJECTED, ERROR */
    char reason[256];   /* REJECTED, ERROR (cut) */
} t_sent;

/* a fake connection: czk_conn is opaque, gpud only hands the pointer to g->io */
typedef struct t_conn {
    int open;
    int full; /* sends fail with -ENOBUFS */
    unsigned n;
    t_sent *msgs;
} t_conn;

#define T_CONN(tc) ((czk_conn *)(void *)(tc))

static uint64_t t_clock = 1000000000ull;
static gpud_work *t_kicked[64];
static unsigned t_nkicked;

static inline int t_send(void *ctx, czk_conn *c, const czk_msg *m, const int *fds, int nfds)
{
    t_conn *tc = (t_conn *)(void *)c;
    t_sent *s;
    (void)ctx;
    (void)fds;
    (void)nfds;
    if (!tc->open)
        return -EPIPE;
    if (tc->full)
        return -ENOBUFS;
    if (!tc->msgs)
        tc->msgs = calloc(T_MAX_SENT, sizeof(t_sent));
    if (tc->n == T_MAX_SENT) /* keep the last ones */
        tc->n = 0;
    s = &tc->msgs[tc->n++];
    memset(s, 0, sizeof(*s));
    s->type = m->type;
    switch (m->type) {
    case CZK_MSG_ASSIGN:
        s->job = m->u.assign.job_id, s->part = m->u.assign.partition, s->pool = m->u.assign.pool_id;
        s->slot = m->u.assign.slot, s->gen = (uint32_t)m->u.assign.generation, s->lease_ms = m->u.assign.lease_ms;
        break;
    case CZK_MSG_RELEASE:
        s->pool = m->u.release.pool_id, s->slot = m->u.release.slot, s->gen = (uint32_t)m->u.release.generation;
        break;
    case CZK_MSG_RESULT:
        s->job = m->u.result.job_id, s->part = m->u.result.partition;
        break;
    case CZK_MSG_EVENT:
        s->job = m->u.event.job_id, s->part = m->u.event.partition, s->stage = m->u.event.stage;
        break;
    case CZK_MSG_ACCEPTED:
        s->job = m->u.accepted.job_id;
        s->stage = m->u.accepted.duplicate;
        break;
    case CZK_MSG_REJECTED:
        s->code = m->u.rejected.code;
        snprintf(s->reason, sizeof(s->reason), "%.255s", m->u.rejected.reason);
        break;
    case CZK_MSG_ERROR:
        s->code = m->u.error.code;
        snprintf(s->reason, sizeof(s->reason), "%.255s", m->u.error.message);
        break;
    }
    return 0;
}

static inline int t_is_open(void *ctx, const czk_conn *c)
{
    (void)ctx;
    return ((const t_conn *)(const void *)c)->open;
}

static inline unsigned t_queued(void *ctx, const czk_conn *c)
{
    (void)ctx;
    (void)c;
    return 0;
}

static inline void t_kick(void *ctx, gpud_work *w)
{
    (void)ctx;
    t_kicked[t_nkicked++ % 64] = w;
}

static inline uint64_t t_now(void *ctx)
{
    (void)ctx;
    return t_clock;
}

static const gpud_io t_io = {
    .send = t_send, .is_open = t_is_open, .queued = t_queued, .kick = t_kick, .now = t_now, .ctx = NULL};

static inline t_conn *t_conn_new(void)
{
    t_conn *c = calloc(1, sizeof(*c));
    c->open = 1;
    return c;
}

static inline void t_conn_free(t_conn *c)
{
    if (c) {
        free(c->msgs);
        free(c);
    }
}

/* messages of one type sent to c since mark */
static inline unsigned t_count(const t_conn *c, unsigned mark, uint32_t type)
{
    unsigned n = 0;
    for (unsigned i = mark; i < c->n; i++)
        n += c->msgs[i].type == type;
    return n;
}

static inline const t_sent *t_last(const t_conn *c, uint32_t type)
{
    for (unsigned i = c->n; i-- > 0;)
        if (c->msgs[i].type == type)
            return &c->msgs[i];
    return NULL;
}

/* --------------------------------------------------------------- setup --- */

static inline int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st;
    (void)flag;
    (void)f;
    return remove(p);
}

static inline void t_rmtree(const char *dir)
{
    nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

static inline char *t_tmpdir(void)
{
    char *d = strdup("/tmp/czk-gpud-test.XXXXXX");
    if (!mkdtemp(d)) {
        perror("mkdtemp");
        exit(1);
    }
    return d;
}

/* a gpud over state_dir (and output_dir, may be NULL) with `slots` slots per
 * pool and `workers` backend contexts; NULL with *e set when start-up fails
 * (g->exit_status in *exit_status) */
static inline gpud *t_gpud_open(const char *state_dir, const char *output_dir, int slots, unsigned workers,
                                int synth_timeout_s, int *exit_status, czk_error *e)
{
    gpud *g = calloc(1, sizeof(*g));
    czk_slot_layout l;

    g->io = &t_io;
    snprintf(g->cfg.state_dir, sizeof(g->cfg.state_dir), "%s", state_dir);
    if (output_dir)
        snprintf(g->cfg.output_dir, sizeof(g->cfg.output_dir), "%s", output_dir);
    snprintf(g->cfg.hugepages, sizeof(g->cfg.hugepages), "off");
    g->cfg.slots_per_pool = slots;
    g->cfg.synth_timeout_s = synth_timeout_s;
    g->cfg.max_jobs = 1000;
    g->cfg.max_queued_partitions = 100000;
    g->cfg.max_partitions_per_job = 64;
    g->cfg.result_resend_s = 120;
    g->cfg.history_jobs = 10000;
    g->n_circuits = 1;
    g->circuits = calloc(1, sizeof(gpud_circuit));
    snprintf(g->circuits[0].name, sizeof(g->circuits[0].name), "tiny");
    g->circuits[0].zkey.n_public = T_NPUB;
    g->circuits[0].zkey.n_vars = 8;
    g->circuits[0].zkey.domain_size = 8;
    czk_slot_payload_layout(8, 8, &l);
    g->circuits[0].slot_bytes = l.total;
    g->circuits[0].header_ok = 1;
    g->circuits[0].key_state = GPUD_KEY_READY; /* no loader threads here: the key is there */
    g->max_public = T_NPUB;
    if (gpud_jobs_open(g, e) < 0 || gpud_pools_open(g, e) < 0) {
        *exit_status = g->exit_status;
        gpud_pools_close(g);
        gpud_jobs_free(g);
        free(g->circuits);
        free(g);
        return NULL;
    }
    g->workers = calloc(workers, sizeof(gpud_work));
    g->n_workers = workers;
    for (unsigned i = 0; i < workers; i++) {
        g->workers[i].g = g;
        g->workers[i].ctx = i;
        g->workers[i].pub = calloc(T_NPUB + 1, sizeof(czk_fr));
    }
    return g;
}

static inline gpud *t_gpud_new(const char *state_dir, int slots, unsigned workers, int synth_timeout_s)
{
    czk_error e = {0};
    int st = 0;
    gpud *g = t_gpud_open(state_dir, NULL, slots, workers, synth_timeout_s, &st, &e);
    if (!g) {
        fprintf(stderr, "setup: %s\n", e.msg);
        exit(1);
    }
    return g;
}

static inline void t_gpud_free(gpud *g)
{
    while (g->synths) {
        gpud_synth *s = g->synths;
        g->synths = s->next;
        free(s);
    }
    for (unsigned i = 0; i < g->n_workers; i++)
        free(g->workers[i].pub);
    free(g->workers);
    gpud_gpus_free(g); /* set up by tests that give their workers devices (gpud_gpus_setup) */
    gpud_pools_close(g);
    gpud_jobs_free(g);
    free(g->circuits);
    free(g);
}

/* one loop turn's end: the scheduler runs if something marked it dirty */
static inline void t_turn(gpud *g)
{
    gpud_sched_run(g);
}

/* a SUBMIT whose witnesses were spooled: the spool files exist, the job is
 * journaled and queued (what the intake thread's hand-back does) */
static inline uint64_t t_submit(gpud *g, t_conn *client, uint32_t lane, uint32_t nparts)
{
    gpud_submit_req *q = calloc(1, sizeof(*q));
    char path[CZK_CONFIG_PATH_MAX + 64];

    czk_error e = {0};

    q->g = g;
    q->conn = T_CONN(client);
    if (gpud_job_id_next(g, &q->job, &e) < 0) {
        fprintf(stderr, "no job id: %s\n", e.msg);
        exit(1);
    }
    snprintf(q->req, sizeof(q->req), "req-%llu", (unsigned long long)q->job);
    q->flags = CZK_SUBMIT_F_WAIT;
    q->lane = lane;
    q->uid = 1000;
    q->nparts = nparts;
    q->circuit = 0;
    q->tsub = 1;
    snprintf(path, sizeof(path), "%s/%llu", g->spool_dir, (unsigned long long)q->job);
    mkdir(path, 0750);
    for (uint32_t i = 0; i < nparts; i++) {
        FILE *f;
        gpud_spool_path(g, q->job, i, path, sizeof(path));
        if ((f = fopen(path, "w")))
            fclose(f);
    }
    q->next = g->pending;
    g->pending = q;
    g->pending_jobs++;
    g->pending_parts += nparts;
    uint64_t id = q->job;
    gpud_submit_finish(g, q);
    return id;
}

/* the shared state (CZK_SLOT_FREE ...) of slot k of pool 0 */
static inline uint32_t t_slot_state(gpud *g, uint32_t k)
{
    return CZK_SLOT_CTL_STATE(czk_slot_ctl(&g->pools[0].pool, k));
}

static inline gpud_part *t_part(gpud *g, uint64_t job, uint32_t part)
{
    gpud_job *j = gpud_job_find(g, job);
    return j && j->parts && part < j->nparts ? &j->parts[part] : NULL;
}

/* the synth fills slot (pool 0) as czk-synth does; msg: also send READY */
static inline int t_fill(gpud *g, gpud_synth *s, uint32_t slot, int msg)
{
    gpud_pool *gp = &g->pools[0];
    uint64_t ctl = czk_slot_ctl(&gp->pool, slot);
    uint32_t gen = CZK_SLOT_CTL_GEN(ctl);
    czk_slot_layout l;
    czk_error e = {0};
    czk_msg_ready r;

    czk_slot_payload_layout(8, 8, &l);
    if (CZK_SLOT_CTL_STATE(ctl) == CZK_SLOT_ASSIGNED && czk_slot_begin_fill(&gp->pool, slot, gen, s->owner, &e) < 0)
        return -1;
    if (CZK_SLOT_CTL_STATE(czk_slot_ctl(&gp->pool, slot)) == CZK_SLOT_FILLING) {
        uint8_t *d = czk_slot_data(&gp->pool, slot);
        for (uint64_t i = 0; i < l.total; i++)
            d[i] = (uint8_t)t_rand64();
        if (czk_slot_publish_ready(&gp->pool, slot, gen, s->owner, 8, 8, l.total, true, &e) < 0)
            return -1;
    }
    if (!msg)
        return 0;
    memset(&r, 0, sizeof(r));
    r.pool_id = 0;
    r.slot = slot;
    r.generation = gen;
    r.domain_size = 8;
    r.n_vars = 8;
    r.data_len = l.total;
    gpud_synth_ready(g, s, &r);
    return 0;
}

/* the synth gives up on slot: READY with an error (the slot stays unfilled) */
static inline void t_fill_fail(gpud *g, gpud_synth *s, uint32_t slot, int status)
{
    czk_msg_ready r;
    memset(&r, 0, sizeof(r));
    r.slot = slot;
    r.generation = CZK_SLOT_CTL_GEN(czk_slot_ctl(&g->pools[0].pool, slot));
    r.status = status;
    snprintf(r.reason, sizeof(r.reason), "%s", status == -ECANCELED ? "cancelled" : "bad witness");
    gpud_synth_ready(g, s, &r);
}

/* the worker of w finished copying (rc < 0: the copy failed) */
static inline void t_copied(gpud *g, gpud_work *w, int rc)
{
    w->rc_copy = rc;
    w->rc_compute = -ECANCELED;
    if (rc < 0)
        snprintf(w->err.msg, sizeof(w->err.msg), "copy failed");
    gpud_work_copied(g, w);
}

/* ... and computing (rc < 0: the compute failed) */
static inline void t_computed(gpud *g, gpud_work *w, int rc)
{
    if (w->rc_copy == 0) {
        w->rc_compute = rc;
        if (rc < 0)
            snprintf(w->err.msg, sizeof(w->err.msg), "compute failed");
        for (size_t i = 0; i < sizeof(w->out); i++)
            ((uint8_t *)&w->out)[i] = (uint8_t)t_rand64();
        w->out.curve = CZK_CURVE_BLS12_381;
    }
    w->t_computed = t_clock;
    gpud_work_computed(g, w);
}

static inline void t_done(gpud *g, uint64_t job, uint32_t part, int status)
{
    czk_msg_done d;
    memset(&d, 0, sizeof(d));
    d.job_id = job;
    d.partition = part;
    d.status = status;
    gpud_finalizer_done(g, &d);
}

/* ---------------------------------------------------------- invariants --- */

#define INV(cond, ...)                                                                                       \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            CHECK(cond, __VA_ARGS__);                                                                        \
            bad++;                                                                                           \
        }                                                                                                    \
    } while (0)

/* returns the number of violations (also counted in t_failures) */
static inline int t_check(gpud *g)
{
    unsigned count[P_STATE_COUNT] = {0}, n_active = 0;
    int bad = 0;

    /* queues: each element once, in the right state */
    for (int l = 0; l < GPUD_LANES; l++)
        for (gpud_part *p = g->lane_head[l]; p; p = p->next) {
            INV(p->state == P_QUEUED && p->linked && p->job->lane == (uint32_t)l, "lane %d holds job %llu part %u in %s",
                l, (unsigned long long)p->job->id, p->index, gpud_part_state_name(p->state));
            INV(p->next || g->lane_tail[l] == p, "lane %d tail", l);
        }
    for (gpud_part *p = g->ready_head; p; p = p->next)
        INV(p->state == P_READY && p->linked, "ready queue holds job %llu part %u in %s",
            (unsigned long long)p->job->id, p->index, gpud_part_state_name(p->state));
    /* slots: owner, in_use, synth inflight */
    for (unsigned i = 0; i < g->n_pools; i++) {
        gpud_pool *gp = &g->pools[i];
        unsigned in_use = 0;
        for (uint32_t k = 0; k < gp->pool.hdr->slot_count; k++) {
            gpud_slot *gs = &gp->slots[k];
            if (gs->part || gs->quarantined)
                in_use++;
            if (gs->quarantined)
                INV(!gs->part && gs->synth, "pool %u slot %u: quarantined with a partition or without a synth", i, k);
            if (!gs->part && !gs->quarantined)
                INV(CZK_SLOT_CTL_STATE(czk_slot_ctl(&gp->pool, k)) == CZK_SLOT_FREE,
                    "pool %u slot %u: nobody holds it, yet its shared state is %u", i, k,
                    CZK_SLOT_CTL_STATE(czk_slot_ctl(&gp->pool, k)));
            if (gs->part)
                INV(gs->part->holds_slot && gs->part->pool == i && gs->part->slot == k,
                    "pool %u slot %u: its partition does not know it holds it", i, k);
            for (uint32_t m = k + 1; m < gp->pool.hdr->slot_count; m++)
                INV(!gs->part || gp->slots[m].part != gs->part, "pool %u: slots %u and %u owned by one partition", i,
                    k, m);
        }
        INV(in_use == gp->in_use, "pool %u: in_use %u, recount %u", i, gp->in_use, in_use);
    }
    for (gpud_synth *s = g->synths; s; s = s->next) {
        unsigned inflight = 0, q = 0;
        for (unsigned i = 0; i < g->n_pools; i++)
            for (uint32_t k = 0; k < g->pools[i].pool.hdr->slot_count; k++)
                if (g->pools[i].slots[k].synth == s) {
                    inflight++;
                    q += g->pools[i].slots[k].quarantined;
                }
        INV(inflight == s->inflight, "synth %u: inflight %u, recount %u", s->owner, s->inflight, inflight);
        INV(q == s->quarantined, "synth %u: quarantined %u, recount %u", s->owner, s->quarantined, q);
    }
    /* every partition in exactly one place */
    for (gpud_job *j = g->jobs_head; j; j = j->next) {
        n_active += j->state == J_ACTIVE;
        if (!j->parts)
            continue;
        for (uint32_t i = 0; i < j->nparts; i++) {
            gpud_part *p = &j->parts[i];
            unsigned in_lane = 0, in_ready = 0, in_worker = 0;
            count[p->state]++;
            for (gpud_part *x = g->lane_head[j->lane]; x; x = x->next)
                in_lane += x == p;
            for (gpud_part *x = g->ready_head; x; x = x->next)
                in_ready += x == p;
            for (unsigned w = 0; w < g->n_workers; w++)
                in_worker += g->workers[w].busy && g->workers[w].part == p;
            if (p->holds_slot)
                INV(g->pools[p->pool].slots[p->slot].part == p, "job %llu part %u: holds a slot that is not its own",
                    (unsigned long long)j->id, i);
            switch (p->state) {
            case P_QUEUED:
                INV(in_lane == 1 && !in_ready && !in_worker && !p->holds_slot,
                    "job %llu part %u QUEUED: lane %u ready %u worker %u slot %u", (unsigned long long)j->id, i,
                    in_lane, in_ready, in_worker, p->holds_slot);
                break;
            case P_SYNTH:
                INV(!in_lane && !in_ready && !in_worker && p->holds_slot &&
                        g->pools[p->pool].slots[p->slot].synth,
                    "job %llu part %u SYNTH: lane %u ready %u worker %u slot %u", (unsigned long long)j->id, i,
                    in_lane, in_ready, in_worker, p->holds_slot);
                break;
            case P_READY:
                INV(!in_lane && in_ready == 1 && !in_worker && p->holds_slot &&
                        CZK_SLOT_CTL_STATE(czk_slot_ctl(&g->pools[p->pool].pool, p->slot)) == CZK_SLOT_READY,
                    "job %llu part %u READY: lane %u ready %u worker %u slot %u", (unsigned long long)j->id, i,
                    in_lane, in_ready, in_worker, p->holds_slot);
                break;
            case P_GPU:
                INV(!in_lane && !in_ready && in_worker == 1, "job %llu part %u GPU: lane %u ready %u worker %u",
                    (unsigned long long)j->id, i, in_lane, in_ready, in_worker);
                break;
            case P_FINALIZE:
                INV(!in_lane && !in_ready && !in_worker && !p->holds_slot && p->res && p->pub,
                    "job %llu part %u FINALIZE: lane %u ready %u worker %u slot %u", (unsigned long long)j->id, i,
                    in_lane, in_ready, in_worker, p->holds_slot);
                break;
            default: /* final; a cancelled one may still be held by a slot or a worker */
                INV(!in_lane && !in_ready && !p->linked, "job %llu part %u %s still queued", (unsigned long long)j->id,
                    i, gpud_part_state_name(p->state));
                INV(p->state == P_CANCELLED || (!p->holds_slot && !in_worker), "job %llu part %u %s holds resources",
                    (unsigned long long)j->id, i, gpud_part_state_name(p->state));
                INV(in_worker == p->discard, "job %llu part %u: discard %u, in a worker %u", (unsigned long long)j->id,
                    i, p->discard, in_worker);
            }
        }
    }
    for (int s = 0; s < P_STATE_COUNT; s++)
        INV(count[s] == g->part_count[s], "part_count[%s] = %u, recount %u", gpud_part_state_name(s),
            g->part_count[s], count[s]);
    INV(n_active == g->n_active, "n_active %u, recount %u", g->n_active, n_active);
    for (unsigned w = 0; w < g->n_workers; w++)
        if (g->workers[w].busy)
            INV(g->workers[w].part && (g->workers[w].part->state == P_GPU || g->workers[w].part->discard),
                "worker %u busy with a partition that is neither GPU nor discarded", w);
    return bad;
}

#endif
