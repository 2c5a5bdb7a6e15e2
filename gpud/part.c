/*
 * part.c — the one owner of a job's and its partitions' life in czk-gpud: the
 * state machine of part.h, the slot and synth accounting, and the journal
 * records of those transitions.  Loop thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/digest.h"
#include "common/runtime/fault.h"
#include "common/base/log.h"
#include "common/runtime/trace.h"
#include "gpud/gpud.h"

#define B(s) (1u << (s))

/* allowed[from] = the states it may move to (part.h has the triggers) */
static const unsigned allowed[P_STATE_COUNT] = {
    [P_QUEUED] = B(P_SYNTH) | B(P_READY) | B(P_DONE) | B(P_FAILED) | B(P_CANCELLED),
    [P_SYNTH] = B(P_READY) | B(P_QUEUED) | B(P_FAILED) | B(P_CANCELLED),
    [P_READY] = B(P_GPU) | B(P_QUEUED) | B(P_CANCELLED),
    [P_GPU] = B(P_FINALIZE) | B(P_QUEUED) | B(P_FAILED) | B(P_CANCELLED),
    [P_FINALIZE] = B(P_DONE) | B(P_FAILED) | B(P_CANCELLED),
    [P_DONE] = 0,
    [P_FAILED] = 0,
    [P_CANCELLED] = 0,
};

const char *gpud_part_state_name(int state)
{
    static const char *n[P_STATE_COUNT] = {"QUEUED", "SYNTH", "READY", "GPU", "FINALIZE", "DONE", "FAILED",
                                           "CANCELLED"};
    return state >= 0 && state < P_STATE_COUNT ? n[state] : "?";
}

int gpud_part_may_move(int from, int to)
{
    return from >= 0 && from < P_STATE_COUNT && to >= 0 && to < P_STATE_COUNT && (allowed[from] & B(to));
}

int gpud_part_awaits_ready(const gpud_part *p)
{
    return p->state == P_SYNTH || (p->state == P_CANCELLED && !p->discard);
}

/* the check every transition starts with */
static int check(const gpud_part *p, int to)
{
    if (gpud_part_may_move(p->state, to))
        return 0;
    czk_err("bug: job %llu partition %u: illegal transition %s -> %s refused", (unsigned long long)p->job->id,
            p->index, gpud_part_state_name(p->state), gpud_part_state_name(to));
    return -EINVAL;
}

static void set_state(gpud *g, gpud_part *p, int to)
{
    g->part_count[p->state]--;
    g->part_count[to]++;
    p->state = (uint8_t)to;
}

/* -------------------------------------------------------------- slots --- */

void gpud_send_release(gpud *g, gpud_synth *s, uint32_t pool_id, uint32_t slot, uint32_t gen)
{
    czk_msg m;
    if (!s)
        return;
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_RELEASE;
    m.u.release.pool_id = pool_id;
    m.u.release.slot = slot;
    m.u.release.generation = gen;
    gpud_send(g, s->c, &m, NULL, 0);
}

static void slot_take(gpud *g, gpud_part *p, uint32_t pool, uint32_t slot, uint32_t gen, gpud_synth *s)
{
    gpud_pool *gp = &g->pools[pool];
    gp->slots[slot].part = p;
    gp->slots[slot].synth = s;
    gp->in_use++;
    czk_metric_set(gp->m_in_use, gp->in_use);
    if (s)
        s->inflight++;
    p->pool = pool;
    p->slot = slot;
    p->gen = gen;
    p->holds_slot = 1;
}

void gpud_slot_clear(gpud *g, gpud_pool *gp, uint32_t slot)
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

void gpud_part_slot_free(gpud *g, gpud_part *p, int release_msg)
{
    gpud_pool *gp = &g->pools[p->pool];
    gpud_synth *s = gp->slots[p->slot].synth;
    uint32_t slot = p->slot, gen = p->gen;
    czk_error e = {0};

    if (!p->holds_slot)
        return;
    if (CZK_SLOT_CTL_STATE(czk_slot_ctl(&gp->pool, slot)) == CZK_SLOT_READY &&
        czk_slot_begin_dma(&gp->pool, slot, gen, &e) < 0)
        czk_warn("pool %u slot %u gen %u: %s", gp->id, slot, gen, e.msg);
    if (czk_slot_release(&gp->pool, slot, gen, &e) < 0)
        czk_warn("pool %u slot %u gen %u: could not free: %s", gp->id, slot, gen, e.msg);
    if (release_msg)
        gpud_send_release(g, s, gp->id, slot, gen);
    gpud_slot_clear(g, gp, slot);
    gpud_sched_dirty(g);
}

void gpud_part_slot_reclaim(gpud *g, gpud_part *p)
{
    gpud_pool *gp = &g->pools[p->pool];
    czk_error e = {0};

    if (!p->holds_slot)
        return;
    if (czk_slot_reclaim(&gp->pool, p->slot, p->gen, &e) < 0)
        czk_debug("pool %u slot %u: %s", gp->id, p->slot, e.msg);
    gpud_slot_clear(g, gp, p->slot);
    gpud_sched_dirty(g);
}

/* cancel: give up a slot the partition holds */
static void slot_drop(gpud *g, gpud_part *p)
{
    gpud_synth *s = g->pools[p->pool].slots[p->slot].synth;

    if (!p->holds_slot)
        return;
    if (s) {
        /* a RELEASE of a slot that is not READY asks the synth to stop
         * filling it; it answers READY with -ECANCELED and the slot is
         * reclaimed then, once nobody writes to it any more */
        gpud_send_release(g, s, g->pools[p->pool].id, p->slot, p->gen);
        return;
    }
    gpud_part_slot_reclaim(g, p);
}

/* --------------------------------------------------------------- jobs --- */

/* parts are freed once the job is final and no slot or worker refers to them */
static int job_parts_busy(const gpud_job *j)
{
    for (uint32_t i = 0; i < j->nparts; i++)
        if (j->parts[i].holds_slot || j->parts[i].discard || j->parts[i].state == P_GPU ||
            j->parts[i].done_pending)
            return 1;
    return 0;
}

void gpud_job_free_parts(gpud *g, gpud_job *j)
{
    if (!j->parts)
        return;
    for (uint32_t i = 0; i < j->nparts; i++) {
        g->part_count[j->parts[i].state]--;
        free(j->parts[i].res);
        free(j->parts[i].pub);
        free(j->parts[i].done_bytes);
    }
    free(j->parts);
    j->parts = NULL;
}

int gpud_job_done_pending(const gpud_job *j)
{
    for (uint32_t i = 0; j->parts && i < j->nparts; i++)
        if (j->parts[i].done_pending)
            return 1;
    return 0;
}

void gpud_job_maybe_release(gpud *g, gpud_job *j)
{
    if (j->state != J_ACTIVE && j->parts && !job_parts_busy(j))
        gpud_job_free_parts(g, j);
}

gpud_job *gpud_job_alloc(uint32_t nparts, int digests)
{
    gpud_job *j = calloc(1, sizeof(*j));

    if (!j)
        return NULL;
    j->parts = calloc(nparts ? nparts : 1, sizeof(gpud_part));
    if (digests)
        j->wsha = malloc((size_t)(nparts ? nparts : 1) * CZK_SHA256_LEN);
    if (!j->parts || (digests && !j->wsha)) {
        gpud_job_discard(j);
        return NULL;
    }
    j->nparts = nparts;
    return j;
}

void gpud_job_discard(gpud_job *j)
{
    if (!j)
        return;
    free(j->parts);
    free(j->wsha);
    free(j);
}

void gpud_job_adopt(gpud *g, const gpud_rec *r, gpud_job *j)
{
    if (j->wsha && r->wsha)
        memcpy(j->wsha, r->wsha, (size_t)r->nparts * CZK_SHA256_LEN);
    else {
        /* an ACCEPT without digests (an older record): a repeated request id
         * is compared by circuit and partition count only */
        free(j->wsha);
        j->wsha = NULL;
    }
    j->id = r->job;
    snprintf(j->req, sizeof(j->req), "%s", r->req);
    snprintf(j->cname, sizeof(j->cname), "%s", r->circ);
    j->circuit = UINT32_MAX;
    for (unsigned i = 0; i < g->n_circuits; i++)
        if (!strcmp(g->circuits[i].name, r->circ))
            j->circuit = i;
    j->lane = r->lane < GPUD_LANES ? r->lane : GPUD_LANES - 1;
    j->nparts = r->nparts;
    j->uid = r->uid;
    j->submit_ns = r->tsub;
    j->state = J_ACTIVE;
    for (uint32_t i = 0; i < r->nparts; i++) {
        j->parts[i].job = j;
        j->parts[i].index = i;
        j->parts[i].state = P_QUEUED;
    }
    g->part_count[P_QUEUED] += r->nparts;
    gpud_job_insert(g, j);
    g->n_active++;
}

int gpud_job_accept(gpud *g, const gpud_rec *r, gpud_job **out)
{
    gpud_job *j = gpud_job_alloc(r->nparts, r->wsha != NULL);

    *out = NULL;
    if (!j && r->wsha) /* without memory for the digests the job still runs (compared by circuit and count) */
        j = gpud_job_alloc(r->nparts, 0);
    if (!j) {
        czk_err("job %llu: out of memory%s", (unsigned long long)r->job, g->replaying ? " while replaying it" : "");
        return 0;
    }
    gpud_job_adopt(g, r, j);
    *out = j;
    return 0;
}

void gpud_job_finished(gpud *g, gpud_job *j, int state)
{
    j->state = state;
    /* its last EVENT went out before this: the connections that followed it
     * are done with it (and idle-timeout eligible once they follow no job) */
    gpud_watch_end(g, j);
    g->n_active--;
    g->n_history++;
    if (!g->replaying) /* at start the spool sweep removes what replay finished */
        gpud_spool_remove(g, j->id);
    gpud_job_maybe_release(g, j);
    if (!g->replaying) /* replay trims once at its end */
        gpud_jobs_trim(g);
    czk_metric_set(g->m_jobs, g->n_active);
}

static int part_cancel(gpud *g, gpud_part *p)
{
    int was = p->state, r;

    if (was >= P_DONE)
        return 0;
    if ((r = check(p, P_CANCELLED)) < 0)
        return r;
    switch (was) {
    case P_QUEUED:
    case P_READY:
        gpud_unlink(g, p);
        break;
    case P_SYNTH:
        slot_drop(g, p); /* the synth stops; the slot returns when it says so */
        break;
    case P_GPU:
        p->discard = 1; /* the worker's result is dropped when it comes back */
        break;
    case P_FINALIZE:
        free(p->res);
        free(p->pub);
        p->res = NULL;
        p->pub = NULL;
        break;
    }
    set_state(g, p, P_CANCELLED);
    if (was == P_READY)
        gpud_part_slot_free(g, p, 1); /* nobody writes to a READY slot: it goes back now */
    return 0;
}

int gpud_job_cancel(gpud *g, gpud_job *j, czk_conn *by)
{
    gpud_rec r = {.job = j->id};
    int rc;

    if (j->state != J_ACTIVE)
        return -EALREADY;
    if (!g->replaying && (rc = gpud_rec_write(g, REC_CANCEL, &r)) < 0)
        return rc;
    /* the job stays J_ACTIVE while its partitions go, so a slot given back
     * on the way does not free the partitions under this loop */
    for (uint32_t i = 0; j->parts && i < j->nparts; i++)
        part_cancel(g, &j->parts[i]);
    if (!g->replaying) {
        g->cancelled_total++;
        czk_info("job %llu cancelled by uid %u", (unsigned long long)j->id, j->uid);
        if (by)
            gpud_watch_add(g, j, by);
        gpud_event(g, j, CZK_PARTITION_ALL, CZK_STAGE_CANCELLED, 0, NULL, NULL, NULL);
    }
    gpud_job_finished(g, j, J_CANCELLED);
    gpud_sched_dirty(g);
    return 0;
}

/* --------------------------------------------------------- transitions --- */

int gpud_part_assign(gpud *g, gpud_part *p, uint32_t pool, uint32_t slot, uint32_t gen, gpud_synth *s)
{
    uint64_t now = gpud_now(g);
    int r;

    if ((r = check(p, P_SYNTH)) < 0)
        return r;
    gpud_unlink(g, p);
    slot_take(g, p, pool, slot, gen, s);
    p->queue_ns += now - p->t_enq;
    gpud_stage_observe(g, ST_QUEUE, now - p->t_enq);
    p->t_assign = now;
    set_state(g, p, P_SYNTH);
    czk_debug("job %llu partition %u: assigned pool %u slot %u gen %u to synth pid %u",
              (unsigned long long)p->job->id, p->index, g->pools[pool].id, slot, gen, s ? s->owner : 0);
    gpud_event(g, p->job, p->index, CZK_STAGE_SYNTH, 0, NULL, NULL, NULL);
    return 0;
}

int gpud_part_ready(gpud *g, gpud_part *p, int from_ready_msg)
{
    uint64_t now = gpud_now(g);
    int r;

    if ((r = check(p, P_READY)) < 0)
        return r;
    if (from_ready_msg) {
        p->synth_ns += now - p->t_assign;
        gpud_stage_observe(g, ST_SYNTH, now - p->t_assign);
        czk_trace_add(p->job->id, p->index, CZK_TRACE_READY, now, now);
    }
    p->t_ready = now;
    set_state(g, p, P_READY);
    gpud_ready_push(g, p);
    gpud_sched_dirty(g);
    return 0;
}

int gpud_part_adopt(gpud *g, gpud_part *p, uint32_t pool, uint32_t slot, uint32_t gen)
{
    int r;

    if ((r = check(p, P_READY)) < 0)
        return r;
    gpud_unlink(g, p);
    slot_take(g, p, pool, slot, gen, NULL);
    p->t_ready = gpud_now(g);
    set_state(g, p, P_READY);
    gpud_ready_push(g, p);
    gpud_sched_dirty(g);
    return 0;
}

int gpud_part_gpu(gpud *g, gpud_part *p)
{
    int r;

    if ((r = check(p, P_GPU)) < 0)
        return r;
    gpud_unlink(g, p);
    p->t_gpu = gpud_now(g);
    set_state(g, p, P_GPU);
    gpud_event(g, p->job, p->index, CZK_STAGE_GPU, 0, NULL, NULL, NULL);
    return 0;
}

int gpud_part_computed(gpud *g, gpud_part *p, czk_groth16_any_msm_out *res, czk_fr *pub, uint64_t t_computed)
{
    int r;

    if ((r = check(p, P_FINALIZE)) < 0) {
        free(res);
        free(pub);
        return r;
    }
    p->res = res;
    p->pub = pub;
    p->gpu_ns += t_computed - p->t_gpu;
    gpud_stage_observe(g, ST_GPU, t_computed - p->t_gpu);
    p->t_gpu = gpud_now(g); /* from now: the finalize stage */
    p->sent = 0;
    p->sends = 0;
    set_state(g, p, P_FINALIZE);
    return 0;
}

int gpud_part_requeue(gpud *g, gpud_part *p, int slot_action)
{
    gpud_pool *gp = &g->pools[p->pool];
    gpud_slot *gs = &gp->slots[p->slot];
    int r;

    if ((r = check(p, P_QUEUED)) < 0)
        return r;
    gpud_unlink(g, p);
    if (p->holds_slot) {
        switch (slot_action) {
        case GPUD_SLOT_QUARANTINE:
            gpud_send_release(g, gs->synth, gp->id, p->slot, p->gen); /* asks it to stop; it answers READY then */
            gs->part = NULL;
            gs->quarantined = 1;
            gs->qgen = p->gen;
            if (gs->synth)
                gs->synth->quarantined++;
            p->holds_slot = 0; /* in_use and the synth's inflight stay until the quarantine ends */
            break;
        case GPUD_SLOT_LOST:
            gpud_slot_clear(g, gp, p->slot);
            break;
        default:
            gpud_part_slot_reclaim(g, p);
        }
    }
    set_state(g, p, P_QUEUED);
    p->t_enq = gpud_now(g);
    gpud_lane_push(g, p, 1);
    gpud_sched_dirty(g);
    return 0;
}

/* the partition is final: memory, counters, events, and the job's end */
static void finish_apply(gpud *g, gpud_part *p, int status, const char *reason, const czk_bytes *proof,
                         const czk_bytes *pub)
{
    gpud_job *j = p->job;
    gpud_rec r = {.job = j->id};

    gpud_unlink(g, p);
    set_state(g, p, status ? P_FAILED : P_DONE);
    p->status = status;
    free(p->res);
    free(p->pub);
    p->res = NULL;
    p->pub = NULL;
    j->nfinished++;
    if (status)
        j->nfailed++;
    if (!g->replaying) {
        if (status) {
            g->failures_total++;
            czk_metric_inc(g->m_failures, 1);
            czk_warn("job %llu partition %u failed: %s", (unsigned long long)j->id, p->index, reason ? reason : "");
            gpud_event(g, j, p->index, CZK_STAGE_FAILED, status, reason, NULL, NULL);
        } else {
            g->proofs_total++;
            g->done_ring[g->done_ring_pos++ % GPUD_RATE_WINDOW] = gpud_now(g);
            czk_metric_inc(g->m_proofs, 1);
            gpud_event(g, j, p->index, CZK_STAGE_DONE, 0, NULL, proof, pub);
        }
    }
    if (j->nfinished == j->nparts && j->state == J_ACTIVE) {
        if (!g->replaying) {
            /* durable with the next sync; one that is lost loses nothing:
             * replay finishes the job with its last DONE, which is durable */
            gpud_rec_defer(g, REC_COMPLETE, &r, NULL, NULL);
            czk_info("job %llu complete: %u partitions, %u failed", (unsigned long long)j->id, j->nparts,
                     j->nfailed);
            gpud_event(g, j, CZK_PARTITION_ALL, j->nfailed ? CZK_STAGE_FAILED : CZK_STAGE_DONE,
                       j->nfailed ? -EIO : 0, j->nfailed ? "some partitions failed" : NULL, NULL, NULL);
        }
        gpud_job_finished(g, j, j->nfailed ? J_FAILED : J_COMPLETE);
    }
    gpud_sched_dirty(g);
}

static void done_bytes_free(gpud_part *p)
{
    free(p->done_bytes);
    p->done_bytes = NULL;
    p->done_proof_len = p->done_pub_len = 0;
}

/* its DONE record did not make it into the journal, so the partition is not
 * done: it keeps awaiting DONE with its result, and the RESULT goes out again
 * (gpud_results_resend once appends work, or after [gpud] result_resend_s);
 * the finalizer answers from the files it wrote */
static void done_unjournaled(const gpud_part *p, int rc)
{
    czk_debug("job %llu partition %u: DONE not journaled (%s): still awaiting DONE", (unsigned long long)p->job->id,
              p->index, strerror(-rc));
}

/* a partition's DONE record is settled (ipc/commit.h): durable, so the
 * partition is done; or cut off by a failed sync, so it still awaits its
 * DONE and the RESULT goes out again (gpud_results_resend once appends
 * work, or after [gpud] result_resend_s) */
static void done_settled(void *owner, void *ctx, uint64_t seq, int rc)
{
    gpud *g = owner;
    gpud_part *p = ctx;
    uint8_t *bytes = p->done_bytes; /* p may be freed by finish_apply */
    czk_bytes proof = {bytes, p->done_proof_len};
    czk_bytes pub = {bytes ? bytes + p->done_proof_len : NULL, p->done_pub_len};
    int pending = p->done_pending;

    (void)seq;
    p->done_pending = 0;
    p->done_bytes = NULL;
    if (!pending || p->state != P_FINALIZE) {
        /* cancelled meanwhile: its partitions were kept for this callback */
        free(bytes);
        gpud_job_maybe_release(g, p->job);
        return;
    }
    if (rc < 0) {
        done_unjournaled(p, rc);
        free(bytes);
        return;
    }
    czk_fault("gpud.after_done_journal");
    finish_apply(g, p, 0, NULL, &proof, &pub);
    free(bytes);
}

int gpud_part_finish(gpud *g, gpud_part *p, int status, const char *reason, const czk_bytes *proof,
                     const czk_bytes *pub)
{
    gpud_job *j = p->job;
    gpud_rec r = {.job = j->id, .part = p->index, .status = status};
    int rc;

    if ((rc = check(p, status ? P_FAILED : P_DONE)) < 0)
        return rc;
    if (g->replaying) {
        finish_apply(g, p, status, reason, proof, pub);
        return 0;
    }
    czk_fault("gpud.before_done_journal");
    if (!status && p->state == P_FINALIZE) {
        /* the finalizer's DONE: the partition is done once the record is
         * durable (done_settled); the loop goes on meanwhile */
        size_t np = proof ? proof->len : 0, nu = pub ? pub->len : 0;
        if (p->done_pending)
            return 0; /* a second DONE for a re-sent RESULT */
        if (np + nu && !(p->done_bytes = malloc(np + nu)))
            return -ENOMEM; /* not done: the RESULT goes out again after result_resend_s */
        if (np)
            memcpy(p->done_bytes, proof->ptr, np);
        if (nu)
            memcpy(p->done_bytes + np, pub->ptr, nu);
        p->done_proof_len = (uint32_t)np;
        p->done_pub_len = (uint32_t)nu;
        p->done_pending = 1;
        if ((rc = gpud_rec_defer(g, REC_DONE, &r, done_settled, p)) < 0) {
            p->done_pending = 0;
            done_bytes_free(p);
            done_unjournaled(p, rc);
            return rc;
        }
        return 0;
    }
    if ((rc = gpud_rec_write(g, REC_DONE, &r)) < 0 && p->state == P_FINALIZE) {
        done_unjournaled(p, rc);
        return rc;
    }
    /* a failure found here (spool, synth, copy-in, compute) is final in
     * memory even when its record could not be written: after a restart
     * the partition is simply tried again, which marks nothing done */
    czk_fault("gpud.after_done_journal");
    finish_apply(g, p, status, reason, proof, pub);
    return 0;
}
