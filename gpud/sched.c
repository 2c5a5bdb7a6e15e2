/*
 * sched.c — czk-gpud's scheduler: one shared-memory pool per NUMA node, the
 * synth side of the protocol (POOL, ASSIGN, READY, RELEASE, RESYNC), the
 * assignment leases, and the scheduling pass that gives free slots to queued
 * partitions and READY slots to idle backend contexts.
 *
 * Slot ownership (ipc/layout.h has the state machine): gpud moves a slot
 * FREE -> ASSIGNED before it sends ASSIGN; the synth moves it to FILLING and
 * READY; gpud moves READY -> DMA when a worker starts copying it and DMA ->
 * FREE when the copy is done, then sends RELEASE.  A synth that dies loses its
 * ASSIGNED/FILLING slots (reclaim: generation + 1, the partition goes back to
 * the FRONT of its lane); its READY slots are still proved.  A synth that
 * hangs (alive, so no EOF, and its loop thread still feeds systemd's
 * watchdog) is caught by the assignment lease, gpud_leases_check.  The
 * partitions' states and the slot accounting change only in part.c.
 *
 * A closed link is not a dead synth: gpud closes synth links itself (a key
 * reload), and a restarted gpud adopts a pool whose synths may live on.  The
 * synth's fill thread then keeps writing the slot until it notices (it checks
 * between stages, synth/fill.c), so a slot is reclaimed only once the process
 * that owned it is known to be gone: its partition is requeued at once, but
 * an ASSIGNED/FILLING slot stays quarantined, held by the disconnected synth
 * (s->gone, off g->synths), until its process exits (pinned by a pidfd at its
 * HELLO, ipc/peer.h; checked on the status tick) or connects again (a synth
 * connects only once none of its fills runs, synth/main.c).  At adoption the
 * slot header's owner pid is pinned the same way.
 *
 * Scheduling rule: whenever a slot or a worker frees up, the highest
 * non-empty lane goes first (FIFO inside a lane); partitions of a circuit
 * whose key is not ready (loading, or failed) are passed over: they wait in
 * their lane, and READY slots of it (adopted after a restart) wait in the
 * ready queue, without blocking the others (keys.c readies the circuit and
 * marks the scheduler dirty); a queued partition goes to
 * the pool with the most free slots, to its least-loaded synth (fewest slots
 * in flight).  The pass runs once per loop turn when something marked the
 * scheduler dirty (gpud_sched_dirty), never from inside another module's
 * handler.  Runs on the loop thread.
 */
#include <errno.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/runtime/daemon.h"
#include "common/runtime/fault.h"
#include "common/base/log.h"
#include "common/runtime/trace.h"
#include "gpud/gpud.h"

/* ---------------------------------------------------------- scheduling --- */

static int pool_free_slot(gpud_pool *gp)
{
    for (uint32_t i = 0; i < gp->pool.hdr->slot_count; i++)
        if (!gp->slots[i].part && !gp->slots[i].quarantined &&
            CZK_SLOT_CTL_STATE(czk_slot_ctl(&gp->pool, i)) == CZK_SLOT_FREE)
            return (int)i;
    return -1;
}

/* the least busy synth of pool that agrees with us on circuit (circuits.h) */
static gpud_synth *pool_synth(gpud *g, uint32_t pool, uint32_t circuit)
{
    gpud_synth *best = NULL;
    for (gpud_synth *s = g->synths; s; s = s->next)
        if (s->pool == pool && gpud_conn_open(g, s->c) && !s->quarantined &&
            gpud_peer_circuit(&s->map, circuit) != GPUD_CIRCUIT_REFUSED && (!best || s->inflight < best->inflight))
            best = s;
    return best;
}

static int assign(gpud *g, gpud_part *p, uint32_t pool, uint32_t slot, gpud_synth *s)
{
    gpud_pool *gp = &g->pools[pool];
    gpud_job *j = p->job;
    uint64_t lease_ns = g->cfg.synth_timeout_s > 0 ? (uint64_t)g->cfg.synth_timeout_s * 1000000000ull : 0;
    czk_error e = {0};
    uint32_t gen;
    czk_msg m;
    int r;

    if ((r = czk_slot_assign(&gp->pool, slot, s->owner, j->id, p->index, lease_ns ? gpud_now(g) + lease_ns : 0,
                             &gen, &e)) < 0) {
        czk_err("pool %u: %s", gp->id, e.msg);
        return r;
    }
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_ASSIGN;
    m.u.assign.pool_id = gp->id;
    m.u.assign.slot = slot;
    m.u.assign.generation = gen;
    m.u.assign.job_id = j->id;
    m.u.assign.partition = p->index;
    m.u.assign.circuit_id = gpud_peer_circuit(&s->map, j->circuit); /* the synth's id for it */
    m.u.assign.lease_ms = lease_ns / 1000000ull;
    gpud_spool_path(g, j->id, p->index, m.u.assign.spool, sizeof(m.u.assign.spool));
    if ((r = gpud_send(g, s->c, &m, NULL, 0)) < 0) {
        czk_slot_reclaim(&gp->pool, slot, gen, NULL);
        return r;
    }
    gpud_part_assign(g, p, pool, slot, gen, s);
    czk_fault("gpud.after_assign");
    return 0;
}

static void schedule(gpud *g)
{
    /* 1. queued partitions into free slots, highest lane first */
    for (;;) {
        int best_pool = -1, slot = -1, best_free = -1;
        gpud_synth *s = NULL;
        gpud_part *p = NULL;

        if (g->part_count[P_QUEUED] == 0)
            break;
        /* the first partition, highest lane first, that a synth with a free
         * slot agrees on: a circuit no synth takes waits without blocking its lane */
        for (int l = 0; l < GPUD_LANES && best_pool < 0; l++)
            for (p = g->lane_head[l]; p && best_pool < 0; p = best_pool < 0 ? p->next : p)
                for (unsigned i = 0;
                     i < g->n_pools && gpud_job_key_ready(g->circuits, g->n_circuits, p->job->circuit, p->job->id);
                     i++) {
                    gpud_synth *cand = pool_synth(g, i, p->job->circuit);
                    int nfree = (int)(g->pools[i].pool.hdr->slot_count - g->pools[i].in_use);
                    int fs;
                    if (!cand || nfree <= best_free || (fs = pool_free_slot(&g->pools[i])) < 0)
                        continue;
                    best_pool = (int)i, slot = fs, best_free = nfree, s = cand;
                }
        if (best_pool < 0 || !p)
            break;
        if (assign(g, p, (uint32_t)best_pool, (uint32_t)slot, s) < 0)
            break;
    }
    /* 2. READY slots to idle backend contexts that serve their circuit,
     * highest lane first (FIFO inside a lane), each to a context near its pool
     * when one is idle (gpud_worker_idle) */
    while (g->ready_head) {
        gpud_part *best = NULL;
        gpud_work *bw = NULL;
        for (gpud_part *p = g->ready_head; p; p = p->next) {
            gpud_work *w;
            if ((best && p->job->lane >= best->job->lane) ||
                !gpud_job_key_ready(g->circuits, g->n_circuits, p->job->circuit, p->job->id))
                continue;
            if ((w = gpud_worker_idle(g, p->job->circuit, g->pools[p->pool].node)))
                best = p, bw = w;
        }
        if (!best)
            break; /* no idle context, or what is READY waits for its circuit's key */
        gpud_work_start(g, bw, best);
    }
}

void gpud_sched_run(gpud *g)
{
    if (g->stopping || !g->sched_dirty)
        return;
    g->sched_dirty = 0;
    schedule(g);
    /* what the pass itself changed (an ASSIGN that could not be queued, a
     * slot that was not ours) waits for the next event, as it always did */
    g->sched_dirty = 0;
}

static void on_sched_task(czk_loop_task *t, void *ctx)
{
    gpud *g = ctx;
    (void)t;
    g->sched_posted = 0;
    gpud_sched_run(g);
}

void gpud_sched_attach(gpud *g)
{
    g->sched_task.fn = on_sched_task;
    g->sched_task.ctx = g;
}

/* ------------------------------------------------------------- leases --- */

static void quarantine_check(gpud *g);

/* Assignment leases.  A synth that has held an ASSIGNED/FILLING slot for
 * [gpud] synth_timeout_s without READY is taken as hung: its process is alive
 * (no EOF) and its loop thread may still feed systemd's watchdog while the
 * fill worker is stuck.  The partition goes back to the front of its lane for
 * another synth; the slot is quarantined, out of use because the stuck fill may
 * still write to it, until that synth answers for it (READY of any status,
 * after the RELEASE that asks it to stop) or its process exits (a link that
 * closes while it lives keeps the quarantine, below); meanwhile the synth
 * gets no new ASSIGN.  Runs on the loop thread, from the status tick. */
void gpud_leases_check(gpud *g)
{
    uint64_t now = gpud_now(g), lim;

    quarantine_check(g);
    if (g->cfg.synth_timeout_s <= 0)
        return;
    lim = (uint64_t)g->cfg.synth_timeout_s * 1000000000ull;
    for (unsigned i = 0; i < g->n_pools; i++) {
        gpud_pool *gp = &g->pools[i];
        for (uint32_t k = 0; k < gp->pool.hdr->slot_count; k++) {
            gpud_slot *gs = &gp->slots[k];
            gpud_part *p = gs->part;
            gpud_synth *s = gs->synth;
            if (!p || !s || p->state != P_SYNTH || now - p->t_assign < lim ||
                CZK_SLOT_CTL_STATE(czk_slot_ctl(&gp->pool, k)) == CZK_SLOT_READY)
                continue; /* a READY slot's message is on its way */
            czk_warn("synth pid %u has held pool %u slot %u (job %llu partition %u) for %llu s without READY "
                     "(synth_timeout_s = %d): partition requeued for another synth, slot quarantined until this "
                     "synth answers for it, connects again or exits, no new work for it meanwhile",
                     s->owner, gp->id, k, (unsigned long long)p->job->id, p->index,
                     (unsigned long long)((now - p->t_assign) / 1000000000ull), g->cfg.synth_timeout_s);
            if (gpud_part_requeue(g, p, GPUD_SLOT_QUARANTINE) < 0)
                continue;
            g->synth_timeouts_total++;
            czk_metric_inc(g->m_synth_timeouts, 1);
        }
    }
}

static void ghost_free(gpud_synth *s)
{
    czk_proc_ref_close(&s->proc);
    free(s);
}

/* a quarantined slot comes back: nobody writes to it any more */
static void quarantine_end(gpud *g, gpud_pool *gp, uint32_t slot, const char *why)
{
    gpud_slot *gs = &gp->slots[slot];
    gpud_synth *s = gs->synth;
    uint64_t ctl = czk_slot_ctl(&gp->pool, slot);

    if (CZK_SLOT_CTL_STATE(ctl) == CZK_SLOT_READY) {
        czk_slot_begin_dma(&gp->pool, slot, gs->qgen, NULL);
        czk_slot_release(&gp->pool, slot, gs->qgen, NULL);
    } else if (CZK_SLOT_CTL_STATE(ctl) != CZK_SLOT_FREE) {
        czk_slot_reclaim(&gp->pool, slot, gs->qgen, NULL);
    }
    czk_info("pool %u slot %u: quarantine ended (%s), slot back in use", gp->id, slot, why);
    if (s)
        s->quarantined--;
    gs->quarantined = 0;
    gpud_slot_clear(g, gp, slot); /* the synth's inflight count, in_use (no partition holds it any more) */
    if (s && s->gone && !s->quarantined)
        ghost_free(s); /* a disconnected synth is kept only for its quarantined slots */
    gpud_sched_dirty(g);
}

/* The link of synth s closed while its process lives, and slot k of gp is
 * still ASSIGNED/FILLING for partition p (in SYNTH, or cancelled and awaiting
 * the READY that will not come): p goes back to the front of its lane at once
 * (a cancelled one lets go of the slot), the slot stays out of use, held by s,
 * until s's process exits or s connects again.  No RELEASE: the link is
 * closing, and the synth cancels its fills itself when it sees it close. */
static void quarantine_gone(gpud *g, gpud_pool *gp, uint32_t k, gpud_part *p, gpud_synth *s)
{
    gpud_slot *gs = &gp->slots[k];

    gs->synth = NULL; /* part.c then neither sends RELEASE nor counts the quarantine: done below */
    if (p->state == P_SYNTH) {
        if (gpud_part_requeue(g, p, GPUD_SLOT_QUARANTINE) < 0) {
            gs->synth = s; /* cannot happen (SYNTH -> QUEUED is legal): reclaimed as before */
            gpud_part_slot_reclaim(g, p);
            return;
        }
    } else {
        /* part.c's GPUD_SLOT_QUARANTINE for a partition that stays where it
         * is: the slot stays in use (in_use, s->inflight), nobody's partition */
        gs->part = NULL;
        gs->quarantined = 1;
        gs->qgen = p->gen;
        p->holds_slot = 0;
        gpud_job_maybe_release(g, p->job); /* may free the cancelled job's partitions */
    }
    gs->synth = s;
    s->quarantined++;
}

/* Runs on the status tick: quarantined slots of disconnected synths whose
 * process has exited come back, and a pool that quarantined slots leave
 * without a free slot while partitions wait is logged, once per episode. */
static void quarantine_check(gpud *g)
{
    for (unsigned i = 0; i < g->n_pools; i++) {
        gpud_pool *gp = &g->pools[i];
        uint32_t n = gp->pool.hdr->slot_count, q = 0;
        char pids[160] = "";
        size_t len = 0;
        int full;

        for (uint32_t k = 0; k < n; k++) {
            gpud_slot *gs = &gp->slots[k];
            gpud_synth *s = gs->synth;
            if (!gs->quarantined || !s || !s->gone || czk_proc_ref_alive(&s->proc))
                continue;
            czk_info("synth pid %u, disconnected earlier, has exited: pool %u slot %u can be reused", s->owner, gp->id,
                     k);
            quarantine_end(g, gp, k, "its synth disconnected"); /* may free s */
        }
        for (uint32_t k = 0; k < n; k++) {
            gpud_slot *gs = &gp->slots[k];
            char one[16];
            if (!gs->quarantined)
                continue;
            q++;
            snprintf(one, sizeof(one), " %u,", gs->synth ? gs->synth->owner : 0);
            if (!strstr(pids, one) && len + strlen(one) < sizeof(pids))
                len += (size_t)snprintf(pids + len, sizeof(pids) - len, "%s", one);
        }
        if (len)
            pids[len - 1] = 0; /* the last comma */
        full = q && gp->in_use >= n && g->part_count[P_QUEUED] > 0;
        if (full && !gp->q_full)
            czk_warn("pool %u exhausted: all %u slots in use, %u of them quarantined because a fill may still write "
                     "them (synth pid%s); %u partitions wait until those synths exit, connect again or answer for "
                     "their slots: a synth that is hung can be killed to free them",
                     gp->id, n, q, pids, g->part_count[P_QUEUED]);
        else if (!full && gp->q_full)
            czk_info("pool %u: no longer exhausted by quarantined slots", gp->id);
        gp->q_full = (uint8_t)full;
    }
}

/* -------------------------------------------------------------- pools --- */

static int pool_adopt(gpud *g, gpud_pool *gp, uint64_t slot_size, czk_error *e)
{
    char name[32];
    czk_pool_adopt_report rep;
    int fd, r;

    snprintf(name, sizeof(name), "pool-%u", gp->id);
    fd = czk_daemon_fdstore_take(name);
    if (fd < 0)
        return -ENOENT;
    r = czk_pool_adopt(&gp->pool, fd, &rep, e);
    close(fd);
    if (r < 0) {
        czk_warn("pool %u from the fd store cannot be adopted (%s): creating a new one", gp->id, e->msg);
        czk_daemon_fdstore_remove(name);
        return r;
    }
    if (gp->pool.hdr->slot_size < slot_size || gp->pool.hdr->slot_count != (uint32_t)g->cfg.slots_per_pool) {
        czk_warn("pool %u from the fd store has %u slots of %llu bytes, the configuration needs %d of %llu: "
                 "creating a new one", gp->id, gp->pool.hdr->slot_count,
                 (unsigned long long)gp->pool.hdr->slot_size, g->cfg.slots_per_pool, (unsigned long long)slot_size);
        czk_pool_close(&gp->pool);
        czk_daemon_fdstore_remove(name);
        return -EINVAL;
    }
    return 0;
}

/* the disconnected synth that holds quarantined slots for owner, or NULL */
static gpud_synth *ghost_find(gpud *g, uint32_t owner)
{
    for (unsigned i = 0; i < g->n_pools; i++)
        for (uint32_t k = 0; g->pools[i].slots && k < g->pools[i].pool.hdr->slot_count; k++) {
            gpud_synth *s = g->pools[i].slots[k].synth;
            if (g->pools[i].slots[k].quarantined && s && s->gone && s->owner == owner)
                return s;
        }
    return NULL;
}

/* An adopted slot ASSIGNED/FILLING by owner (a synth of the previous gpud):
 * while that process may still write it, the slot is quarantined (0) as for a
 * synth whose link closed; -ESRCH when the owner is gone (reclaim it).  The
 * owner field is the synth's pid; a process of that pid started after this
 * gpud cannot be the writer (the pid was reused). */
static int adopt_quarantine(gpud *g, gpud_pool *gp, uint32_t k, uint32_t owner, uint32_t gen)
{
    gpud_slot *gs = &gp->slots[k];
    gpud_synth *s = ghost_find(g, owner);
    int r;

    if (!s) {
        uint64_t self = czk_proc_start_time(getpid());
        if (!owner || owner == (uint32_t)getpid() || !(s = calloc(1, sizeof(*s))))
            return -ESRCH; /* without memory the old rule: reclaim */
        if ((r = czk_proc_ref_open(&s->proc, (pid_t)owner)) < 0 ||
            (s->proc.start && self && s->proc.start > self)) {
            if (r < 0 && r != -ESRCH)
                czk_warn("pool %u slot %u: cannot watch its owner, pid %u (%s): reclaimed; if that synth still "
                         "runs, restart it", gp->id, k, owner, strerror(-r));
            ghost_free(s);
            return -ESRCH;
        }
        s->owner = owner;
        s->pool = (uint32_t)(gp - g->pools);
        s->gone = 1;
    }
    gs->synth = s;
    gs->quarantined = 1;
    gs->qgen = gen;
    s->quarantined++;
    s->inflight++;
    gp->in_use++; /* as part.c's slot_take: quarantine_end's gpud_slot_clear gives it back */
    czk_metric_set(gp->m_in_use, gp->in_use);
    czk_warn("pool %u slot %u: its fill by synth pid %u, which still runs, may still write it: quarantined until that "
             "process exits or connects again",
             gp->id, k, owner);
    return 0;
}

/* after adoption: READY slots of pending partitions are proved, ASSIGNED or
 * FILLING ones quarantined while their synth lives, the rest freed */
static void pool_recover(gpud *g, gpud_pool *gp)
{
    for (uint32_t i = 0; i < gp->pool.hdr->slot_count; i++) {
        uint64_t ctl = czk_slot_ctl(&gp->pool, i);
        uint32_t st = CZK_SLOT_CTL_STATE(ctl), gen = CZK_SLOT_CTL_GEN(ctl);
        const czk_slot_header *h = &gp->pool.slots[i];
        gpud_job *j;
        gpud_part *p = NULL;

        if (st == CZK_SLOT_ASSIGNED || st == CZK_SLOT_FILLING) {
            if (adopt_quarantine(g, gp, i, CZK_SLOT_CTL_OWNER(ctl), gen) < 0)
                czk_slot_reclaim(&gp->pool, i, gen, NULL);
            continue;
        }
        if (st != CZK_SLOT_READY)
            continue;
        j = gpud_job_find(g, h->job_id);
        if (j && j->state == J_ACTIVE && j->parts && h->partition < j->nparts)
            p = &j->parts[h->partition];
        if (!p || p->state != P_QUEUED || p->linked || p->holds_slot) {
            czk_slot_begin_dma(&gp->pool, i, gen, NULL);
            czk_slot_release(&gp->pool, i, gen, NULL);
            continue;
        }
        czk_info("pool %u slot %u: READY partition %u of job %llu recovered", gp->id, i, p->index,
                 (unsigned long long)j->id);
        gpud_part_adopt(g, p, (uint32_t)(gp - g->pools), i, gen);
    }
}

int gpud_pools_open(gpud *g, czk_error *e)
{
    uint64_t slot_size = 0;
    int nodes[64], n = 0, r;

    for (unsigned i = 0; i < g->n_circuits; i++)
        if (g->circuits[i].slot_bytes > slot_size)
            slot_size = g->circuits[i].slot_bytes;
    if (slot_size == 0) {
        /* every circuit failed at its header (circuits.c): gpud still answers
         * STATUS, which says why; the smallest pool stands in */
        slot_size = 4096;
        czk_warn("no circuit's zkey header could be read: pools of %llu-byte slots, nothing can be proved until a "
                 "zkey is fixed and czk-gpud restarted",
                 (unsigned long long)slot_size);
    }
    if (numa_available() >= 0) {
        for (int node = 0; node <= numa_max_node() && n < 64; node++)
            if (numa_bitmask_isbitset(numa_all_nodes_ptr, (unsigned)node))
                nodes[n++] = node;
    }
    if (n == 0) {
        czk_info("libnuma reports no NUMA nodes: one unbound pool");
        nodes[n++] = -1;
    }
    g->pools = calloc((size_t)n, sizeof(gpud_pool));
    if (!g->pools)
        return czk_errorf(e, -ENOMEM, "out of memory for pools");
    /* hugepages only speed up the GPU's copies out of the pools: with the cpu
     * backend configured, hugepages = auto means none (and no warning) */
    const czk_backend_ops *bo = czk_backend_find(g->cfg.backend, NULL);
    int huge_auto = !strcmp(g->cfg.hugepages, "auto");
    if (huge_auto && bo && !strcmp(bo->name, "cpu")) {
        huge_auto = 0;
        czk_info("cpu backend: pools in 4 KiB pages (hugepages only serve a GPU's copies)");
    }
    for (int i = 0; i < n; i++) {
        gpud_pool *gp = &g->pools[i];
        char name[32];
        gp->id = (uint32_t)i;
        gp->node = nodes[i];
        snprintf(name, sizeof(name), "pool-%u", gp->id);
        if (pool_adopt(g, gp, slot_size, e) < 0) {
            czk_pool_opts o;
            memset(&o, 0, sizeof(o));
            o.pool_id = gp->id;
            o.numa_node = nodes[i];
            o.slot_count = (uint32_t)g->cfg.slots_per_pool;
            o.slot_size = slot_size;
            o.huge = !strcmp(g->cfg.hugepages, "on") ? CZK_POOL_HUGE_REQUIRE
                     : huge_auto                       ? CZK_POOL_HUGE_AUTO
                                                       : CZK_POOL_HUGE_NEVER;
            o.name = name;
            o.defer_prefault = 1; /* after the sockets answer: the backend's start-up thread (keys.c) */
            if ((r = czk_pool_create(&gp->pool, &o, e)) < 0)
                return r;
            if (czk_daemon_fdstore_put(gp->pool.fd, name) == 0)
                czk_info("pool %u kept in the systemd fd store as \"%s\"", gp->id, name);
        }
        /* the synths get the pool's fd over gpud.sock; nobody opens it by
         * name or through /proc (a memfd is created 0777) */
        if (fchmod(gp->pool.fd, 0600) < 0)
            czk_warn("pool %u: could not make its memfd mode 0600: %s", gp->id, strerror(errno));
        gp->slots = calloc(gp->pool.hdr->slot_count, sizeof(gpud_slot));
        if (!gp->slots)
            return czk_errorf(e, -ENOMEM, "out of memory for pool %u", gp->id);
        g->n_pools++;
        pool_recover(g, gp);
    }
    return 0;
}

void gpud_pools_close(gpud *g)
{
    /* the disconnected synths kept for their quarantined slots */
    for (unsigned i = 0; i < g->n_pools; i++)
        for (uint32_t k = 0; g->pools[i].slots && k < g->pools[i].pool.hdr->slot_count; k++) {
            gpud_slot *gs = &g->pools[i].slots[k];
            gpud_synth *s = gs->synth;
            if (!gs->quarantined || !s || !s->gone)
                continue;
            gs->synth = NULL;
            if (!--s->quarantined)
                ghost_free(s);
        }
    for (unsigned i = 0; i < g->n_pools; i++) {
        czk_pool_close(&g->pools[i].pool);
        free(g->pools[i].slots);
    }
    free(g->pools);
    g->pools = NULL;
    g->n_pools = 0;
}

/* ------------------------------------------------------------- synths --- */

unsigned gpud_synth_count(const gpud *g)
{
    unsigned n = 0;
    for (gpud_synth *s = g->synths; s; s = s->next)
        n++;
    return n;
}

gpud_synth *gpud_synth_attach(gpud *g, czk_conn *c, uint32_t owner, uint32_t pool)
{
    gpud_synth *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->c = c;
    s->proc.pidfd = -1; /* not pinned: gpud_synth_open pins a real peer's process */
    s->owner = owner & 0xffffffu;
    s->pool = pool < g->n_pools ? pool : 0;
    gpud_peer_map_identity(g, &s->map);
    s->next = g->synths;
    g->synths = s;
    gpud_sched_dirty(g);
    return s;
}

void gpud_synth_open(gpud *g, czk_conn *c)
{
    const czk_msg_hello *h = czk_conn_peer(c);
    uint32_t pool = 0;
    gpud_synth *s;
    czk_msg m;

    for (unsigned i = 0; i < g->n_pools; i++)
        if (g->pools[i].node == h->numa_node)
            pool = i;
    if (!(s = gpud_synth_attach(g, c, (uint32_t)czk_conn_cred(c)->pid, pool))) {
        czk_conn_close(c, -ENOMEM, "out of memory for a synth", 0);
        return;
    }
    {
        char who[48];
        snprintf(who, sizeof(who), "synth pid %u", s->owner);
        gpud_circuits_map(g, h, who, &s->map);
    }
    {
        int r = czk_proc_ref_open(&s->proc, czk_conn_cred(c)->pid);
        if (r < 0 && r != -ESRCH) /* -ESRCH: gone already, its EOF follows */
            czk_warn("synth pid %u: cannot watch its process (%s): should its link close while it lives, its "
                     "slots are reclaimed at once although its fill may still write them",
                     s->owner, strerror(-r));
    }
    /* it connects only once none of its fills runs (synth/main.c): the slots
     * it left quarantined when its link closed (or a previous gpud's) are
     * no longer written */
    for (unsigned i = 0; i < g->n_pools; i++)
        for (uint32_t k = 0; k < g->pools[i].pool.hdr->slot_count; k++) {
            gpud_slot *gs = &g->pools[i].slots[k];
            if (gs->quarantined && gs->synth && gs->synth->gone && gs->synth->owner == s->owner) {
                char why[64];
                snprintf(why, sizeof(why), "synth pid %u connected again, its old fills stopped", s->owner);
                quarantine_end(g, &g->pools[i], k, why);
            }
        }
    czk_conn_set_user(c, s);
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_POOL;
    czk_pool_describe(&g->pools[s->pool].pool, &m.u.pool);
    if (gpud_send(g, c, &m, &g->pools[s->pool].pool.fd, 1) < 0) {
        czk_conn_close(c, -EIO, "could not send POOL", 0);
        return;
    }
    czk_info("synth pid %u (node %d) serves pool %u", s->owner, h->numa_node, s->pool);
}

void gpud_synth_detach(gpud *g, gpud_synth *s)
{
    gpud_synth **pp;
    unsigned requeued = 0, kept = 0;
    /* its process still runs (gpud closed the link, or the synth did without
     * exiting): its fill thread may still write what it was filling */
    int alive = czk_proc_ref_alive(&s->proc);

    for (pp = &g->synths; *pp; pp = &(*pp)->next)
        if (*pp == s) {
            *pp = s->next;
            break;
        }
    for (unsigned i = 0; i < g->n_pools; i++) {
        gpud_pool *gp = &g->pools[i];
        for (uint32_t k = 0; k < gp->pool.hdr->slot_count; k++) {
            gpud_slot *gs = &gp->slots[k];
            gpud_part *p = gs->part;
            if (gs->synth != s)
                continue;
            if (gs->quarantined) {
                if (alive)
                    kept++; /* held by s until its process exits or connects again */
                else
                    quarantine_end(g, gp, k, "its synth disconnected");
                continue;
            }
            if (!p || CZK_SLOT_CTL_STATE(czk_slot_ctl(&gp->pool, k)) == CZK_SLOT_READY) {
                gs->synth = NULL; /* READY (sent or not): still proved by us */
                if (s->inflight)
                    s->inflight--;
                continue;
            }
            if (p->state == P_SYNTH) {
                if (alive)
                    quarantine_gone(g, gp, k, p, s), kept++; /* front of its lane, the slot kept */
                else
                    gpud_part_requeue(g, p, GPUD_SLOT_RECLAIM); /* front of its lane */
                requeued++;
            } else if (gpud_part_awaits_ready(p)) { /* cancelled while being filled */
                if (alive)
                    quarantine_gone(g, gp, k, p, s), kept++;
                else
                    gpud_part_slot_reclaim(g, p); /* may free the cancelled job's partitions */
            } else {
                /* a backend context copies it (P_GPU, or cancelled there with
                 * its result to be dropped): the copy's end frees the slot */
                gs->synth = NULL;
                if (s->inflight)
                    s->inflight--;
            }
        }
        if (!alive)
            czk_pool_reclaim_owner(&gp->pool, s->owner);
    }
    /* READY slots of this synth whose READY never arrived */
    for (unsigned i = 0; i < g->n_pools; i++) {
        gpud_pool *gp = &g->pools[i];
        for (uint32_t k = 0; k < gp->pool.hdr->slot_count; k++) {
            gpud_part *p = gp->slots[k].part;
            if (!p || gp->slots[k].synth || CZK_SLOT_CTL_STATE(czk_slot_ctl(&gp->pool, k)) != CZK_SLOT_READY)
                continue;
            if (p->state == P_CANCELLED)
                gpud_part_slot_free(g, p, 0);
            else if (p->state == P_SYNTH)
                gpud_part_ready(g, p, 0);
        }
    }
    gpud_sched_dirty(g);
    if (kept) {
        czk_warn("synth pid %u gone: %u partitions requeued; its process still runs, so %u slots it was filling stay "
                 "quarantined until it exits or connects again",
                 s->owner, requeued, kept);
        s->c = NULL;
        s->gone = 1; /* freed by quarantine_end with its last slot */
        return;
    }
    czk_warn("synth pid %u gone: %u partitions requeued", s->owner, requeued);
    ghost_free(s);
}

void gpud_synth_close(gpud *g, czk_conn *c)
{
    gpud_synth *s = czk_conn_user(c);
    if (s)
        gpud_synth_detach(g, s);
}

void gpud_synth_ready(gpud *g, gpud_synth *s, const czk_msg_ready *r)
{
    gpud_pool *gp;
    gpud_slot *gs;
    gpud_part *p;
    uint64_t ctl;

    if (r->pool_id >= g->n_pools || r->slot >= g->pools[r->pool_id].pool.hdr->slot_count) {
        czk_warn("synth pid %u: READY for pool %u slot %u, which does not exist: ignored", s->owner, r->pool_id,
                 r->slot);
        return;
    }
    gp = &g->pools[r->pool_id];
    gs = &gp->slots[r->slot];
    p = gs->part;
    if (gs->quarantined && gs->synth == s && gs->qgen == r->generation) {
        char why[CZK_MSG_STR_LONG + 96];
        snprintf(why, sizeof(why), "synth pid %u answered for it: %s", s->owner,
                 r->status < 0 ? (r->reason[0] ? r->reason : strerror(-r->status)) : "filled, too late");
        quarantine_end(g, gp, r->slot, why);
        return;
    }
    if (!p || gs->synth != s || p->gen != r->generation) {
        czk_info("synth pid %u: stale READY for pool %u slot %u gen %llu: ignored", s->owner, r->pool_id, r->slot,
                 (unsigned long long)r->generation);
        return;
    }
    if (!gpud_part_awaits_ready(p)) {
        /* its READY was taken already: the slot is queued for or copied by a
         * backend context, which frees it; a second answer changes nothing */
        czk_info("synth pid %u: repeated READY for pool %u slot %u gen %llu (job %llu partition %u is %s): ignored",
                 s->owner, r->pool_id, r->slot, (unsigned long long)r->generation, (unsigned long long)p->job->id,
                 p->index, gpud_part_state_name(p->state));
        return;
    }
    ctl = czk_slot_ctl(&gp->pool, r->slot);
    if (r->status < 0 || CZK_SLOT_CTL_STATE(ctl) != CZK_SLOT_READY) {
        int st = r->status < 0 ? r->status : -EPROTO;
        char why[CZK_MSG_STR_LONG + 64];
        snprintf(why, sizeof(why), "synthesis failed: %s",
                 r->reason[0] ? r->reason : r->status < 0 ? strerror(-r->status) : "slot not READY");
        int was = p->state; /* freeing the slot may free a cancelled job's partitions */
        if (CZK_SLOT_CTL_STATE(ctl) == CZK_SLOT_READY)
            gpud_part_slot_free(g, p, 0);
        else
            gpud_part_slot_reclaim(g, p);
        if (was == P_SYNTH)
            gpud_part_finish(g, p, st, why, NULL, NULL);
        return;
    }
    if (p->state == P_CANCELLED) {
        gpud_part_slot_free(g, p, 1);
        return;
    }
    /* the slot's checksums are verified by the worker, off the loop thread */
    gpud_part_ready(g, p, 1);
    czk_fault("gpud.after_ready");
}

static void on_resync(gpud *g, gpud_synth *s, const czk_msg_resync *r)
{
    for (uint32_t i = 0; i < r->n; i++) {
        uint32_t slot = r->slots[i].slot;
        gpud_pool *gp = r->pool_id < g->n_pools ? &g->pools[r->pool_id] : NULL;
        if (gp && slot < gp->pool.hdr->slot_count && gp->slots[slot].synth == s && gp->slots[slot].part &&
            gp->slots[slot].part->gen == r->slots[i].generation)
            continue; /* ours and theirs agree */
        czk_info("synth pid %u: RESYNC names pool %u slot %u gen %llu, which it no longer owns: released",
                 s->owner, r->pool_id, slot, (unsigned long long)r->slots[i].generation);
        gpud_send_release(g, s, r->pool_id, slot, (uint32_t)r->slots[i].generation);
    }
}

void gpud_synth_msg(gpud *g, czk_conn *c, const czk_msg *m)
{
    gpud_synth *s = czk_conn_user(c);
    if (!s)
        return;
    switch (m->type) {
    case CZK_MSG_READY:
        gpud_synth_ready(g, s, &m->u.ready);
        break;
    case CZK_MSG_RESYNC:
        on_resync(g, s, &m->u.resync);
        break;
    case CZK_MSG_HEARTBEAT:
        break;
    default:
        gpud_reply_error(g, c, -EPROTO, "a synth may not send %s", czk_msg_type_name(m->type));
    }
}
