/*
 * sched.c — czk-gpud's scheduler: three priority lanes of queued partitions,
 * one shared-memory pool per NUMA node, and the synth side of the protocol
 * (POOL, ASSIGN, READY, RELEASE, RESYNC).
 *
 * Slot ownership (ipc/layout.h has the state machine): gpud moves a slot
 * FREE -> ASSIGNED before it sends ASSIGN; the synth moves it to FILLING and
 * READY; gpud moves READY -> DMA when a worker starts copying it and DMA ->
 * FREE when the copy is done, then sends RELEASE.  A synth that dies loses its
 * ASSIGNED/FILLING slots (reclaim: generation + 1, the partition goes back to
 * the FRONT of its lane); its READY slots are still proved.  A synth that
 * hangs (alive, so no EOF, and its loop thread still feeds systemd's
 * watchdog) is caught by the assignment lease, gpud_leases_check.
 *
 * Scheduling rule: whenever a slot or a worker frees up, the highest
 * non-empty lane goes first (FIFO inside a lane).  Runs on the loop thread.
 */
#include <errno.h>
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/runtime/daemon.h"
#include "common/runtime/fault.h"
#include "common/base/log.h"
#include "common/runtime/trace.h"
#include "gpud/gpud.h"

/* -------------------------------------------------------------- lanes --- */

static void lane_gauges(gpud *g)
{
    for (int l = 0; l < GPUD_LANES; l++) {
        int64_t n = 0;
        for (gpud_part *p = g->lane_head[l]; p; p = p->next)
            n++;
        czk_metric_set(g->m_lane[l], n);
    }
}

void gpud_lane_push(gpud *g, gpud_part *p, int front)
{
    uint32_t l = p->job->lane;
    p->prev = p->next = NULL;
    if (front) {
        p->next = g->lane_head[l];
        if (p->next)
            p->next->prev = p;
        else
            g->lane_tail[l] = p;
        g->lane_head[l] = p;
    } else {
        p->prev = g->lane_tail[l];
        if (p->prev)
            p->prev->next = p;
        else
            g->lane_head[l] = p;
        g->lane_tail[l] = p;
    }
    p->linked = 1;
    lane_gauges(g);
}

static void ready_push(gpud *g, gpud_part *p)
{
    p->next = NULL;
    p->prev = g->ready_tail;
    if (p->prev)
        p->prev->next = p;
    else
        g->ready_head = p;
    g->ready_tail = p;
    p->linked = 1;
}

void gpud_unlink(gpud *g, gpud_part *p)
{
    gpud_part **head, **tail;
    if (!p->linked)
        return;
    if (p->state == P_QUEUED) {
        head = &g->lane_head[p->job->lane];
        tail = &g->lane_tail[p->job->lane];
    } else {
        head = &g->ready_head;
        tail = &g->ready_tail;
    }
    if (p->prev)
        p->prev->next = p->next;
    else
        *head = p->next;
    if (p->next)
        p->next->prev = p->prev;
    else
        *tail = p->prev;
    p->prev = p->next = NULL;
    p->linked = 0;
    if (p->state == P_QUEUED)
        lane_gauges(g);
}

/* -------------------------------------------------------------- slots --- */

static void send_release(gpud_synth *s, uint32_t pool_id, uint32_t slot, uint32_t gen)
{
    czk_msg m;
    if (!s)
        return;
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_RELEASE;
    m.u.release.pool_id = pool_id;
    m.u.release.slot = slot;
    m.u.release.generation = gen;
    czk_conn_send(s->c, &m, NULL, 0);
}

static void slot_clear(gpud *g, gpud_pool *gp, uint32_t slot)
{
    gpud_slot *gs = &gp->slots[slot];
    gpud_part *p = gs->part;
    if (gs->synth && gs->synth->inflight)
        gs->synth->inflight--;
    gs->part = NULL;
    gs->synth = NULL;
    gp->in_use--;
    czk_metric_set(gp->m_in_use, gp->in_use);
    if (p) {
        p->holds_slot = 0;
        gpud_job_maybe_release(g, p->job);
    }
}

void gpud_slot_free(gpud *g, gpud_part *p, int release_msg)
{
    gpud_pool *gp = &g->pools[p->pool];
    gpud_synth *s = gp->slots[p->slot].synth;
    uint32_t slot = p->slot, gen = p->gen;
    czk_error e = {0};
    uint64_t ctl = czk_slot_ctl(&gp->pool, slot);

    if (!p->holds_slot)
        return;
    if (CZK_SLOT_CTL_STATE(ctl) == CZK_SLOT_READY && czk_slot_begin_dma(&gp->pool, slot, gen, &e) < 0)
        czk_warn("pool %u slot %u gen %u: %s", gp->id, slot, gen, e.msg);
    if (czk_slot_release(&gp->pool, slot, gen, &e) < 0)
        czk_warn("pool %u slot %u gen %u: could not free: %s", gp->id, slot, gen, e.msg);
    if (release_msg)
        send_release(s, gp->id, slot, gen);
    slot_clear(g, gp, slot);
}

void gpud_slot_drop(gpud *g, gpud_part *p)
{
    gpud_pool *gp = &g->pools[p->pool];
    gpud_synth *s = gp->slots[p->slot].synth;
    czk_error e = {0};

    if (!p->holds_slot)
        return;
    if (s) {
        /* a RELEASE of a slot that is not READY asks the synth to stop
         * filling it; it answers READY with -ECANCELED and the slot is
         * reclaimed then, once nobody writes to it any more */
        send_release(s, gp->id, p->slot, p->gen);
        return;
    }
    if (czk_slot_reclaim(&gp->pool, p->slot, p->gen, &e) < 0)
        czk_warn("pool %u slot %u: %s", gp->id, p->slot, e.msg);
    slot_clear(g, gp, p->slot);
}

static int pool_free_slot(gpud_pool *gp)
{
    for (uint32_t i = 0; i < gp->pool.hdr->slot_count; i++)
        if (!gp->slots[i].part && !gp->slots[i].quarantined &&
            CZK_SLOT_CTL_STATE(czk_slot_ctl(&gp->pool, i)) == CZK_SLOT_FREE)
            return (int)i;
    return -1;
}

static gpud_synth *pool_synth(gpud *g, uint32_t pool)
{
    gpud_synth *best = NULL;
    for (gpud_synth *s = g->synths; s; s = s->next)
        if (s->pool == pool && czk_conn_is_open(s->c) && !s->quarantined && (!best || s->inflight < best->inflight))
            best = s;
    return best;
}

static gpud_part *lane_pop(gpud *g)
{
    for (int l = 0; l < GPUD_LANES; l++) {
        gpud_part *p = g->lane_head[l];
        if (p) {
            gpud_unlink(g, p);
            return p;
        }
    }
    return NULL;
}

static int assign(gpud *g, gpud_part *p, uint32_t pool, uint32_t slot, gpud_synth *s)
{
    gpud_pool *gp = &g->pools[pool];
    gpud_job *j = p->job;
    uint64_t now = czk_mono_ns();
    czk_error e = {0};
    uint32_t gen;
    czk_msg m;
    int r;

    if ((r = czk_slot_assign(&gp->pool, slot, s->owner, j->id, p->index, 0, &gen, &e)) < 0) {
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
    m.u.assign.circuit_id = j->circuit;
    gpud_spool_path(g, j->id, p->index, m.u.assign.spool, sizeof(m.u.assign.spool));
    if ((r = czk_conn_send(s->c, &m, NULL, 0)) < 0) {
        czk_slot_reclaim(&gp->pool, slot, gen, NULL);
        return r;
    }
    gp->slots[slot].part = p;
    gp->slots[slot].synth = s;
    gp->in_use++;
    czk_metric_set(gp->m_in_use, gp->in_use);
    s->inflight++;
    p->pool = pool;
    p->slot = slot;
    p->gen = gen;
    p->holds_slot = 1;
    p->queue_ns += now - p->t_enq;
    gpud_stage_observe(g, ST_QUEUE, now - p->t_enq);
    p->t_assign = now;
    gpud_part_set_state(g, p, P_SYNTH);
    czk_debug("job %llu partition %u: assigned pool %u slot %u gen %u to synth pid %u", (unsigned long long)j->id,
              p->index, gp->id, slot, gen, s->owner);
    gpud_event(g, j, p->index, CZK_STAGE_SYNTH, 0, NULL, NULL, NULL);
    czk_fault("gpud.after_assign");
    return 0;
}

void gpud_schedule(gpud *g)
{
    if (g->stopping)
        return;
    /* 1. queued partitions into free slots, highest lane first */
    for (;;) {
        int best_pool = -1, slot = -1, best_free = -1;
        gpud_synth *s = NULL;
        gpud_part *p;

        if (g->part_count[P_QUEUED] == 0)
            break;
        for (unsigned i = 0; i < g->n_pools; i++) {
            gpud_synth *cand = pool_synth(g, i);
            int nfree = (int)(g->pools[i].pool.hdr->slot_count - g->pools[i].in_use);
            int fs;
            if (!cand || nfree <= best_free || (fs = pool_free_slot(&g->pools[i])) < 0)
                continue;
            best_pool = (int)i, slot = fs, best_free = nfree, s = cand;
        }
        if (best_pool < 0 || !(p = lane_pop(g)))
            break;
        if (assign(g, p, (uint32_t)best_pool, (uint32_t)slot, s) < 0) {
            gpud_lane_push(g, p, 1);
            break;
        }
    }
    /* 2. READY slots to idle backend contexts, highest lane first */
    while (g->ready_head) {
        gpud_work *w = gpud_worker_idle(g);
        gpud_part *best = NULL;
        if (!w)
            break;
        for (gpud_part *p = g->ready_head; p; p = p->next)
            if (!best || p->job->lane < best->job->lane)
                best = p;
        gpud_unlink(g, best);
        gpud_work_start(g, w, best);
    }
}

/* ------------------------------------------------------------- leases --- */

/* Assignment leases.  A synth that has held an ASSIGNED/FILLING slot for
 * [gpud] synth_timeout_s without READY is taken as hung: its process is alive
 * (no EOF) and its loop thread may still feed systemd's watchdog while the
 * fill worker is stuck.  The partition goes back to the front of its lane for
 * another synth; the slot is quarantined, out of use because the stuck fill may
 * still write to it, until that synth answers for it (READY of any status,
 * after the RELEASE that asks it to stop) or disconnects; meanwhile the synth
 * gets no new ASSIGN.  Runs on the loop thread, from the status tick, which
 * schedules the requeued partitions right after. */
void gpud_leases_check(gpud *g)
{
    uint64_t now = czk_mono_ns(), lim;

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
                     "synth answers for it or disconnects, no new work for it meanwhile",
                     s->owner, gp->id, k, (unsigned long long)p->job->id, p->index,
                     (unsigned long long)((now - p->t_assign) / 1000000000ull), g->cfg.synth_timeout_s);
            send_release(s, gp->id, k, p->gen); /* asks it to stop; it answers READY then */
            gs->part = NULL;
            gs->quarantined = 1;
            gs->qgen = p->gen;
            s->quarantined++;
            p->holds_slot = 0;
            gpud_part_set_state(g, p, P_QUEUED);
            p->t_enq = now;
            gpud_lane_push(g, p, 1);
            g->synth_timeouts_total++;
            czk_metric_inc(g->m_synth_timeouts, 1);
        }
    }
}

/* a quarantined slot comes back: nobody writes to it any more */
static void quarantine_end(gpud *g, gpud_pool *gp, uint32_t slot, const char *why)
{
    gpud_slot *gs = &gp->slots[slot];
    uint64_t ctl = czk_slot_ctl(&gp->pool, slot);

    if (CZK_SLOT_CTL_STATE(ctl) == CZK_SLOT_READY) {
        czk_slot_begin_dma(&gp->pool, slot, gs->qgen, NULL);
        czk_slot_release(&gp->pool, slot, gs->qgen, NULL);
    } else if (CZK_SLOT_CTL_STATE(ctl) != CZK_SLOT_FREE) {
        czk_slot_reclaim(&gp->pool, slot, gs->qgen, NULL);
    }
    czk_info("pool %u slot %u: quarantine ended (%s), slot back in use", gp->id, slot, why);
    if (gs->synth)
        gs->synth->quarantined--;
    gs->quarantined = 0;
    slot_clear(g, gp, slot); /* the synth's inflight count, in_use (no partition holds it any more) */
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

/* after adoption: READY slots of pending partitions are proved, the rest freed */
static void pool_recover(gpud *g, gpud_pool *gp)
{
    for (uint32_t i = 0; i < gp->pool.hdr->slot_count; i++) {
        uint64_t ctl = czk_slot_ctl(&gp->pool, i);
        uint32_t st = CZK_SLOT_CTL_STATE(ctl), gen = CZK_SLOT_CTL_GEN(ctl);
        const czk_slot_header *h = &gp->pool.slots[i];
        gpud_job *j;
        gpud_part *p = NULL;

        if (st == CZK_SLOT_ASSIGNED || st == CZK_SLOT_FILLING) {
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
        gp->slots[i].part = p;
        gp->slots[i].synth = NULL;
        gp->in_use++;
        p->pool = (uint32_t)(gp - g->pools);
        p->slot = i;
        p->gen = gen;
        p->holds_slot = 1;
        p->t_ready = czk_mono_ns();
        gpud_part_set_state(g, p, P_READY);
        ready_push(g, p);
    }
}

int gpud_pools_open(gpud *g, czk_error *e)
{
    uint64_t slot_size = 0;
    int nodes[64], n = 0, r;

    for (unsigned i = 0; i < g->n_circuits; i++)
        if (g->circuits[i].slot_bytes > slot_size)
            slot_size = g->circuits[i].slot_bytes;
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
            o.huge = !strcmp(g->cfg.hugepages, "on")    ? CZK_POOL_HUGE_REQUIRE
                     : !strcmp(g->cfg.hugepages, "off") ? CZK_POOL_HUGE_NEVER
                                                        : CZK_POOL_HUGE_AUTO;
            o.name = name;
            if ((r = czk_pool_create(&gp->pool, &o, e)) < 0)
                return r;
            if (czk_daemon_fdstore_put(gp->pool.fd, name) == 0)
                czk_info("pool %u kept in the systemd fd store as \"%s\"", gp->id, name);
        }
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

void gpud_synth_open(gpud *g, czk_conn *c)
{
    const czk_msg_hello *h = czk_conn_peer(c);
    gpud_synth *s = calloc(1, sizeof(*s));
    czk_msg m;

    if (!s) {
        czk_conn_close(c, -ENOMEM, "out of memory for a synth", 0);
        return;
    }
    s->c = c;
    s->owner = (uint32_t)czk_conn_cred(c)->pid & 0xffffffu;
    s->pool = 0;
    for (unsigned i = 0; i < g->n_pools; i++)
        if (g->pools[i].node == h->numa_node)
            s->pool = i;
    s->next = g->synths;
    g->synths = s;
    czk_conn_set_user(c, s);
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_POOL;
    czk_pool_describe(&g->pools[s->pool].pool, &m.u.pool);
    if (czk_conn_send(c, &m, &g->pools[s->pool].pool.fd, 1) < 0) {
        czk_conn_close(c, -EIO, "could not send POOL", 0);
        return;
    }
    czk_info("synth pid %u (node %d) serves pool %u", s->owner, h->numa_node, s->pool);
    gpud_schedule(g);
}

void gpud_synth_close(gpud *g, czk_conn *c)
{
    gpud_synth *s = czk_conn_user(c), **pp;
    unsigned requeued = 0;

    if (!s)
        return;
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
                quarantine_end(g, gp, k, "its synth disconnected");
                continue;
            }
            gs->synth = NULL;
            if (!p || (p->state != P_SYNTH && p->state != P_CANCELLED) ||
                CZK_SLOT_CTL_STATE(czk_slot_ctl(&gp->pool, k)) == CZK_SLOT_READY)
                continue; /* READY (sent or not): still proved by us */
            int was = p->state; /* slot_clear may free a cancelled job's partitions */
            czk_slot_reclaim(&gp->pool, k, p->gen, NULL);
            slot_clear(g, gp, k);
            if (was == P_SYNTH) {
                gpud_part_set_state(g, p, P_QUEUED);
                p->t_enq = czk_mono_ns();
                gpud_lane_push(g, p, 1);
                requeued++;
            }
        }
        czk_pool_reclaim_owner(&gp->pool, s->owner);
    }
    /* READY slots of this synth whose READY never arrived */
    for (unsigned i = 0; i < g->n_pools; i++) {
        gpud_pool *gp = &g->pools[i];
        for (uint32_t k = 0; k < gp->pool.hdr->slot_count; k++) {
            gpud_part *p = gp->slots[k].part;
            if (!p || gp->slots[k].synth || CZK_SLOT_CTL_STATE(czk_slot_ctl(&gp->pool, k)) != CZK_SLOT_READY)
                continue;
            if (p->state == P_CANCELLED) {
                gpud_slot_free(g, p, 0);
            } else if (p->state == P_SYNTH) {
                gpud_part_set_state(g, p, P_READY);
                p->t_ready = czk_mono_ns();
                ready_push(g, p);
            }
        }
    }
    czk_warn("synth pid %u gone: %u partitions requeued", s->owner, requeued);
    free(s);
    gpud_schedule(g);
}

static void on_ready(gpud *g, gpud_synth *s, const czk_msg_ready *r)
{
    gpud_pool *gp;
    gpud_slot *gs;
    gpud_part *p;
    uint64_t now = czk_mono_ns(), ctl;

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
        gpud_schedule(g);
        return;
    }
    if (!p || gs->synth != s || p->gen != r->generation) {
        czk_info("synth pid %u: stale READY for pool %u slot %u gen %llu: ignored", s->owner, r->pool_id, r->slot,
                 (unsigned long long)r->generation);
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
            gpud_slot_free(g, p, 0);
        else {
            czk_slot_reclaim(&gp->pool, r->slot, p->gen, NULL);
            slot_clear(g, gp, r->slot);
        }
        if (was == P_SYNTH)
            gpud_part_finish(g, p, st, why, NULL, NULL);
        gpud_schedule(g);
        return;
    }
    if (p->state == P_CANCELLED) {
        gpud_slot_free(g, p, 1);
        gpud_schedule(g);
        return;
    }
    /* the slot's checksums are verified by the worker, off the loop thread */
    p->synth_ns += now - p->t_assign;
    gpud_stage_observe(g, ST_SYNTH, now - p->t_assign);
    p->t_ready = now;
    czk_trace_add(p->job->id, p->index, CZK_TRACE_READY, now, now);
    gpud_part_set_state(g, p, P_READY);
    ready_push(g, p);
    czk_fault("gpud.after_ready");
    gpud_schedule(g);
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
        send_release(s, r->pool_id, slot, (uint32_t)r->slots[i].generation);
    }
}

void gpud_synth_msg(gpud *g, czk_conn *c, const czk_msg *m)
{
    gpud_synth *s = czk_conn_user(c);
    if (!s)
        return;
    switch (m->type) {
    case CZK_MSG_READY:
        on_ready(g, s, &m->u.ready);
        break;
    case CZK_MSG_RESYNC:
        on_resync(g, s, &m->u.resync);
        break;
    case CZK_MSG_HEARTBEAT:
        break;
    default:
        gpud_reply_error(c, -EPROTO, "a synth may not send %s", czk_msg_type_name(m->type));
    }
}
