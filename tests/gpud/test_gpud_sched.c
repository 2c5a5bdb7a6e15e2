/*
 * test_gpud_sched.c — czk-gpud's scheduler and partition life without
 * sockets or sleeps (harness.h): lanes and priorities, the least-loaded
 * synth, assignment leases and quarantine on an injected clock, requeue
 * after a synth or finalizer crash, RESULT re-sends, cancellation at every
 * stage, illegal transitions, replay equivalence (a journal written by a
 * live run, replayed by a fresh gpud, gives the same jobs), and partitions
 * waiting for their circuit's key (loading, failed) without being failed.
 */
#include "tests/gpud/harness.h"

static gpud_work *take_kick(void)
{
    return t_nkicked ? t_kicked[--t_nkicked % 64] : NULL;
}

static gpud_synth *slot_synth(gpud *g, uint32_t slot)
{
    return g->pools[0].slots[slot].synth;
}

/* lane 0 goes first at the next slot; FIFO inside a lane */
static void test_lanes(void)
{
    char *dir = t_tmpdir();
    gpud *g = t_gpud_new(dir, 1, 1, 0);
    t_conn *sc = t_conn_new(), *cl = t_conn_new();
    gpud_synth *s = gpud_synth_attach(g, T_CONN(sc), 101, 0);
    uint64_t order[8], want[4];
    unsigned n = 0;

    uint64_t low = t_submit(g, cl, 2, 3);
    t_turn(g);
    uint64_t mid = t_submit(g, cl, 1, 1), high = t_submit(g, cl, 0, 1);
    want[0] = low, want[1] = high, want[2] = mid, want[3] = low;
    for (int step = 0; step < 6 && n < 6; step++) {
        const t_sent *a = t_last(sc, CZK_MSG_ASSIGN);
        gpud_work *w;
        if (!a || (n && order[n - 1] == (a->job << 8 | a->part)))
            break;
        order[n++] = a->job << 8 | a->part;
        t_fill(g, s, a->slot, 1);
        t_turn(g);
        w = take_kick();
        CHECK(w != NULL, "no worker was started for job %llu", (unsigned long long)a->job);
        if (!w)
            break;
        t_copied(g, w, 0);
        t_turn(g);
        t_computed(g, w, 0);
        t_turn(g);
        t_check(g);
    }
    CHECK(n == 5, "%u assignments, expected 5", n);
    for (unsigned i = 0; i < 4 && i < n; i++)
        CHECK(order[i] >> 8 == want[i], "assignment %u went to job %llu, expected %llu", i,
              (unsigned long long)(order[i] >> 8), (unsigned long long)want[i]);
    CHECK(n == 5 && order[0] == (low << 8 | 0) && order[3] == (low << 8 | 1) && order[4] == (low << 8 | 2),
          "low's partitions not in order");
    CHECK(g->part_count[P_FINALIZE] == 5, "%u partitions computed, expected 5", g->part_count[P_FINALIZE]);
    t_check(g);
    t_gpud_free(g);
    t_rmtree(dir);
    free(dir);
    t_conn_free(sc);
    t_conn_free(cl);
}

/* new work goes to the synth with the fewest slots in flight; a slot that was
 * lost under a READY partition gives its synth's count back */
static void test_least_loaded(void)
{
    char *dir = t_tmpdir();
    gpud *g = t_gpud_new(dir, 6, 1, 0);
    t_conn *ca = t_conn_new(), *cb = t_conn_new(), *cc = t_conn_new(), *cl = t_conn_new();
    gpud_synth *a = gpud_synth_attach(g, T_CONN(ca), 201, 0), *b = gpud_synth_attach(g, T_CONN(cb), 202, 0), *c;
    gpud_work *w;

    t_submit(g, cl, 1, 4);
    t_turn(g);
    CHECK(a->inflight == 2 && b->inflight == 2, "4 partitions over 2 synths: %u and %u", a->inflight, b->inflight);
    /* a's two partitions are filled and copied: a is idle again */
    for (uint32_t k = 0; k < 6; k++)
        if (slot_synth(g, k) == a)
            t_fill(g, a, k, 1);
    t_turn(g);
    w = take_kick();
    CHECK(w != NULL, "no worker started");
    if (w) {
        t_copied(g, w, 0);
        t_turn(g);
        t_computed(g, w, 0);
        t_turn(g);
        w = take_kick(); /* a's second READY partition */
        CHECK(w != NULL, "the second READY partition did not start");
        if (w) {
            t_copied(g, w, 0);
            t_computed(g, w, 0);
        }
    }
    t_turn(g);
    CHECK(a->inflight == 0 && b->inflight == 2, "after a's copies: %u and %u", a->inflight, b->inflight);
    c = gpud_synth_attach(g, T_CONN(cc), 203, 0);
    unsigned mark_b = cb->n;
    t_submit(g, cl, 1, 2);
    t_turn(g);
    CHECK(t_count(cb, mark_b, CZK_MSG_ASSIGN) == 0, "the busiest synth got new work");
    CHECK(a->inflight == 1 && c->inflight == 1, "new work not spread over the idle synths: %u, %u", a->inflight,
          c->inflight);
    t_check(g);

    /* a READY slot that is somebody else's by the time the worker wants it */
    uint32_t k;
    for (k = 0; k < 6; k++)
        if (slot_synth(g, k) == c)
            break;
    gpud_part *p = g->pools[0].slots[k].part;
    t_fill(g, c, k, 1);
    CHECK(p && p->state == P_READY, "c's partition is not READY");
    czk_slot_begin_dma(&g->pools[0].pool, k, CZK_SLOT_CTL_GEN(czk_slot_ctl(&g->pools[0].pool, k)), NULL);
    czk_slot_release(&g->pools[0].pool, k, CZK_SLOT_CTL_GEN(czk_slot_ctl(&g->pools[0].pool, k)), NULL);
    g->workers[0].busy = 0; /* the worker is free: the pass tries the slot */
    t_nkicked = 0;
    t_turn(g);
    CHECK(p->state == P_QUEUED || p->state == P_SYNTH, "a lost slot's partition is %s, expected queued again",
          gpud_part_state_name(p->state));
    CHECK(c->inflight == (p->state == P_SYNTH && p->holds_slot && slot_synth(g, p->slot) == c),
          "synth c's inflight is %u after its slot was lost", c->inflight);
    t_check(g);
    t_gpud_free(g);
    t_rmtree(dir);
    free(dir);
    t_conn_free(ca);
    t_conn_free(cb);
    t_conn_free(cc);
    t_conn_free(cl);
}

/* a synth that holds a slot past synth_timeout_s: its partition goes to another
 * synth, the slot is quarantined until the first one answers */
static void test_lease(void)
{
    char *dir = t_tmpdir();
    gpud *g = t_gpud_new(dir, 2, 1, 10);
    t_conn *ca = t_conn_new(), *cb = t_conn_new(), *cl = t_conn_new();
    gpud_synth *a = gpud_synth_attach(g, T_CONN(ca), 301, 0), *b, *hung, *other;
    const t_sent *as;

    uint64_t job = t_submit(g, cl, 0, 1);
    t_turn(g);
    b = gpud_synth_attach(g, T_CONN(cb), 302, 0);
    t_turn(g);
    gpud_part *p = t_part(g, job, 0);
    hung = a;
    other = b;
    as = t_last(ca, CZK_MSG_ASSIGN);
    CHECK(as && as->lease_ms == 10000, "ASSIGN's lease is %llu ms, expected 10000",
          as ? (unsigned long long)as->lease_ms : 0ull);
    CHECK(g->pools[0].pool.slots[p->slot].lease_deadline == t_clock + 10000000000ull,
          "the slot header's lease deadline is not the assignment time + synth_timeout_s");
    uint32_t qslot = p->slot;
    t_clock += 9000000000ull;
    gpud_leases_check(g);
    t_turn(g);
    CHECK(p->state == P_SYNTH && g->synth_timeouts_total == 0, "the lease ran out early");
    t_clock += 2000000000ull;
    unsigned mark = ca->n;
    gpud_leases_check(g);
    CHECK(t_count(ca, mark, CZK_MSG_RELEASE) == 1, "the hung synth was not asked to stop");
    CHECK(g->pools[0].slots[qslot].quarantined && hung->quarantined == 1, "the slot is not quarantined");
    CHECK(p->state == P_QUEUED && g->lane_head[0] == p, "the partition is not at the front of its lane");
    t_turn(g);
    CHECK(p->state == P_SYNTH && slot_synth(g, p->slot) == other && p->slot != qslot,
          "the partition did not go to the other synth's free slot");
    CHECK(g->synth_timeouts_total == 1, "synth_timeouts_total %llu", (unsigned long long)g->synth_timeouts_total);
    t_check(g);
    /* no new work for the hung synth, and the quarantined slot stays out of use */
    mark = ca->n;
    t_submit(g, cl, 0, 1);
    t_turn(g);
    CHECK(t_count(ca, mark, CZK_MSG_ASSIGN) == 0, "a quarantined synth got new work");
    CHECK(g->part_count[P_QUEUED] == 1, "the second job did not wait for a slot");
    /* the hung synth answers: the slot comes back and the waiting job gets it */
    t_fill_fail(g, hung, qslot, -ECANCELED);
    CHECK(!g->pools[0].slots[qslot].quarantined && hung->quarantined == 0, "the quarantine did not end");
    t_turn(g);
    CHECK(g->part_count[P_QUEUED] == 0, "the freed slot was not used");
    t_check(g);
    t_gpud_free(g);
    t_rmtree(dir);
    free(dir);
    t_conn_free(ca);
    t_conn_free(cb);
    t_conn_free(cl);
}

/* a synth dies: its unfilled partitions go to the front of their lane, its
 * READY slots (message lost or not) are still proved; the finalizer dies:
 * RESULTs are sent again to the next one; a RESULT without DONE is re-sent
 * after [gpud] result_resend_s; a second DONE is ignored */
static void test_crashes(void)
{
    char *dir = t_tmpdir();
    gpud *g = t_gpud_new(dir, 3, 1, 0);
    t_conn *ca = t_conn_new(), *cb = t_conn_new(), *cl = t_conn_new(), *f1 = t_conn_new(), *f2 = t_conn_new();
    gpud_synth *a = gpud_synth_attach(g, T_CONN(ca), 401, 0), *b;
    gpud_work *w;

    gpud_finalizer_attach(g, T_CONN(f1), 9);
    uint64_t job = t_submit(g, cl, 1, 3);
    t_turn(g);
    gpud_part *p0 = t_part(g, job, 0), *p1 = t_part(g, job, 1), *p2 = t_part(g, job, 2);
    CHECK(p0->state == P_SYNTH && p1->state == P_SYNTH && p2->state == P_SYNTH, "not all assigned");
    /* no loop turn until the synth is gone: no worker takes anything yet */
    t_fill(g, a, p0->slot, 0); /* published, READY message lost with the synth */
    t_fill(g, a, p1->slot, 1); /* READY arrived */
    gpud_synth_detach(g, a);
    CHECK(p0->state == P_READY && p1->state == P_READY, "READY slots of a dead synth are not proved: %s %s",
          gpud_part_state_name(p0->state), gpud_part_state_name(p1->state));
    CHECK(p2->state == P_QUEUED && g->lane_head[1] == p2, "the unfilled partition is not at the front of its lane");
    t_check(g);
    b = gpud_synth_attach(g, T_CONN(cb), 402, 0);
    t_turn(g);
    CHECK(p2->state == P_SYNTH && slot_synth(g, p2->slot) == b, "the requeued partition did not go to the new synth");
    w = take_kick();
    CHECK(w && w->part == p1, "the worker did not take the first READY partition");
    if (!w)
        goto out;
    p0 = p1; /* the one followed from here on */
    t_copied(g, w, 0);
    t_computed(g, w, 0);
    CHECK(p0->state == P_FINALIZE && t_count(f1, 0, CZK_MSG_RESULT) == 1, "RESULT not sent");
    /* the finalizer dies before DONE; the next one gets the RESULT again */
    f1->open = 0;
    gpud_finalizer_close(g, T_CONN(f1));
    gpud_finalizer_attach(g, T_CONN(f2), 10);
    CHECK(t_count(f2, 0, CZK_MSG_RESULT) == 1 && g->result_resends_total == 1,
          "RESULT not re-sent on reconnect (%u sent, %llu re-sends)", t_count(f2, 0, CZK_MSG_RESULT),
          (unsigned long long)g->result_resends_total);
    /* no DONE: sent again once the re-send time has passed since it was sent */
    t_clock += (uint64_t)(g->cfg.result_resend_s - 1) * 1000000000ull;
    gpud_results_check(g);
    CHECK(t_count(f2, 0, CZK_MSG_RESULT) == 1, "RESULT re-sent too early");
    t_clock += 2000000000ull;
    gpud_results_check(g);
    CHECK(t_count(f2, 0, CZK_MSG_RESULT) == 2 && g->result_resends_total == 2, "RESULT not re-sent after the timeout");
    t_done(g, job, p0->index, 0);
    CHECK(p0->state == P_DONE && g->proofs_total == 1, "DONE did not finish the partition");
    t_done(g, job, p0->index, 0); /* the answer to the re-send: ignored */
    CHECK(p0->state == P_DONE && g->proofs_total == 1 && g->part_count[P_DONE] == 1, "a second DONE was counted");
    t_check(g);
out:
    t_gpud_free(g);
    t_rmtree(dir);
    free(dir);
    t_conn_free(ca);
    t_conn_free(cb);
    t_conn_free(cl);
    t_conn_free(f1);
    t_conn_free(f2);
}

/* CANCEL with partitions queued, in a synth, READY, on the GPU and awaiting DONE */
static void test_cancel(void)
{
    char *dir = t_tmpdir();
    gpud *g = t_gpud_new(dir, 3, 1, 0);
    t_conn *sc = t_conn_new(), *cl = t_conn_new(), *fin = t_conn_new();
    gpud_synth *s = gpud_synth_attach(g, T_CONN(sc), 501, 0);
    gpud_work *w, *w1;

    gpud_finalizer_attach(g, T_CONN(fin), 9);
    uint64_t job = t_submit(g, cl, 1, 5);
    gpud_job *j = gpud_job_find(g, job);
    gpud_part *p[5];
    for (int i = 0; i < 5; i++)
        p[i] = t_part(g, job, (uint32_t)i);
    t_turn(g);
    t_fill(g, s, p[0]->slot, 1);
    t_turn(g);
    w = take_kick();
    CHECK(w && w->part == p[0], "part 0 not started");
    if (!w)
        goto out;
    t_copied(g, w, 0);
    t_turn(g); /* part 3 gets part 0's slot */
    t_computed(g, w, 0);
    t_fill(g, s, p[1]->slot, 1);
    t_turn(g);
    w1 = take_kick();
    t_fill(g, s, p[2]->slot, 1);
    t_turn(g);
    CHECK(p[0]->state == P_FINALIZE && p[1]->state == P_GPU && p[2]->state == P_READY && p[3]->state == P_SYNTH &&
              p[4]->state == P_QUEUED,
          "setup: %s %s %s %s %s", gpud_part_state_name(p[0]->state), gpud_part_state_name(p[1]->state),
          gpud_part_state_name(p[2]->state), gpud_part_state_name(p[3]->state), gpud_part_state_name(p[4]->state));
    t_check(g);
    uint32_t slot3 = p[3]->slot;
    unsigned mark = sc->n, cmark = cl->n;
    CHECK(gpud_job_cancel(g, j, T_CONN(cl)) == 0, "cancel failed");
    CHECK(j->state == J_CANCELLED, "the job is not cancelled");
    CHECK(j->parts != NULL, "partitions freed while a slot and a worker still hold them");
    for (int i = 0; j->parts && i < 5; i++)
        CHECK(p[i]->state == P_CANCELLED, "part %d is %s", i, gpud_part_state_name(p[i]->state));
    CHECK(t_count(sc, mark, CZK_MSG_RELEASE) == 2, "%u RELEASEs, expected 2 (the READY slot, the filling one)",
          t_count(sc, mark, CZK_MSG_RELEASE));
    CHECK(t_count(cl, cmark, CZK_MSG_EVENT) == 1 && t_last(cl, CZK_MSG_EVENT)->stage == CZK_STAGE_CANCELLED,
          "the canceller did not hear CANCELLED");
    CHECK(gpud_job_cancel(g, j, NULL) == -EALREADY, "a second cancel was not refused");
    t_check(g);
    /* the worker comes back, the synth answers the RELEASE */
    t_copied(g, w1, 0);
    t_computed(g, w1, 0);
    t_check(g);
    t_fill_fail(g, s, slot3, -ECANCELED);
    CHECK(j->parts == NULL, "the cancelled job's partitions were not freed");
    CHECK(g->pools[0].in_use == 0 && s->inflight == 0, "slots still in use: %u, synth inflight %u",
          g->pools[0].in_use, s->inflight);
    t_done(g, job, 0, 0); /* the finalizer's late answer */
    CHECK(g->proofs_total == 0, "a cancelled partition was counted as proved");
    /* the next job runs */
    uint64_t next = t_submit(g, cl, 1, 1);
    t_turn(g);
    CHECK(t_part(g, next, 0)->state == P_SYNTH, "the job after a cancelled one was not assigned");
    t_check(g);
    CHECK(g->part_count[P_CANCELLED] == 0, "cancelled partitions still counted");
out:
    t_gpud_free(g);
    t_rmtree(dir);
    free(dir);
    t_conn_free(sc);
    t_conn_free(cl);
    t_conn_free(fin);
}

/* p is ASSIGNED to s, filled, and taken by a backend context: its work, or
 * NULL (a failed check) */
static gpud_work *t_on_gpu(gpud *g, gpud_synth *s, gpud_part *p)
{
    gpud_work *w;

    t_turn(g);
    t_fill(g, s, p->slot, 1);
    t_turn(g);
    w = take_kick();
    CHECK(w && w->part == p && p->state == P_GPU, "the partition is not on the GPU");
    return w && w->part == p ? w : NULL;
}

/* a synth dies while a backend context copies the slot of a partition of a
 * cancelled job: the slot stays the copy's until it ends, then is free for
 * the next job (it was once reclaimed at the synth's death and left in DMA) */
static void test_cancel_copy_synth_dies(void)
{
    char *dir = t_tmpdir();
    gpud *g = t_gpud_new(dir, 1, 1, 0);
    t_conn *sc = t_conn_new(), *sc2 = t_conn_new(), *cl = t_conn_new();
    gpud_synth *s = gpud_synth_attach(g, T_CONN(sc), 511, 0), *s2;
    gpud_work *w;
    uint64_t job = t_submit(g, cl, 1, 1), next;

    if (!(w = t_on_gpu(g, s, t_part(g, job, 0))))
        goto out;
    CHECK(gpud_job_cancel(g, gpud_job_find(g, job), T_CONN(cl)) == 0, "cancel failed");
    sc->open = 0;
    gpud_synth_detach(g, s);
    CHECK(t_slot_state(g, 0) == CZK_SLOT_DMA && g->pools[0].in_use == 1,
          "the slot being copied was taken from the copy (state %u, in use %u)", t_slot_state(g, 0),
          g->pools[0].in_use);
    t_check(g);
    t_copied(g, w, 0);
    t_computed(g, w, 0);
    t_check(g);
    CHECK(t_slot_state(g, 0) == CZK_SLOT_FREE && g->pools[0].in_use == 0,
          "the slot did not come back after the copy (state %u, in use %u)", t_slot_state(g, 0),
          g->pools[0].in_use);
    s2 = gpud_synth_attach(g, T_CONN(sc2), 512, 0);
    next = t_submit(g, cl, 1, 1);
    t_turn(g);
    CHECK(t_part(g, next, 0) && t_part(g, next, 0)->state == P_SYNTH && g->pools[0].slots[0].synth == s2,
          "the next job was not assigned the slot");
    t_check(g);
out:
    t_gpud_free(g);
    t_rmtree(dir);
    free(dir);
    t_conn_free(sc);
    t_conn_free(sc2);
    t_conn_free(cl);
}

/* a synth answers twice for one slot (a repeated READY, then one with an
 * error) after its first READY was taken: the partition stays where it is,
 * the slot stays the backend context's until the copy ends */
static void test_ready_twice(void)
{
    char *dir = t_tmpdir();
    gpud *g = t_gpud_new(dir, 1, 1, 0);
    t_conn *sc = t_conn_new(), *cl = t_conn_new(), *fin = t_conn_new();
    gpud_synth *s = gpud_synth_attach(g, T_CONN(sc), 521, 0);
    gpud_work *w;
    uint64_t job = t_submit(g, cl, 1, 1);
    gpud_part *p = t_part(g, job, 0);
    uint32_t slot;

    gpud_finalizer_attach(g, T_CONN(fin), 9);
    if (!(w = t_on_gpu(g, s, p)))
        goto out;
    slot = p->slot;
    for (int round = 0; round < 2; round++) {
        if (round == 0)
            t_fill(g, s, slot, 1);
        else
            t_fill_fail(g, s, slot, -EINVAL);
        CHECK(p->state == P_GPU && p->holds_slot && g->pools[0].in_use == 1 &&
                  t_slot_state(g, slot) == CZK_SLOT_DMA,
              "a repeated READY (%s) changed the partition (%s, holds slot %d, in use %u, slot state %u)",
              round ? "failed" : "filled", gpud_part_state_name(p->state), p->holds_slot, g->pools[0].in_use,
              t_slot_state(g, slot));
        t_check(g);
    }
    t_copied(g, w, 0);
    t_computed(g, w, 0);
    t_check(g);
    CHECK(p->state == P_FINALIZE && g->pools[0].in_use == 0 && t_slot_state(g, slot) == CZK_SLOT_FREE,
          "after the copy: %s, in use %u, slot state %u", gpud_part_state_name(p->state), g->pools[0].in_use,
          t_slot_state(g, slot));
out:
    t_gpud_free(g);
    t_rmtree(dir);
    free(dir);
    t_conn_free(sc);
    t_conn_free(cl);
    t_conn_free(fin);
}

/* a transition the state machine does not allow is refused, nothing changes */
static void test_illegal(void)
{
    char *dir = t_tmpdir();
    gpud *g = t_gpud_new(dir, 1, 1, 0);
    t_conn *cl = t_conn_new();
    uint64_t job = t_submit(g, cl, 0, 2);
    gpud_part *p = t_part(g, job, 0);
    unsigned q = g->part_count[P_QUEUED];

    CHECK(gpud_part_may_move(P_QUEUED, P_SYNTH) && !gpud_part_may_move(P_DONE, P_QUEUED) &&
              !gpud_part_may_move(P_QUEUED, P_GPU) && !gpud_part_may_move(P_FINALIZE, P_QUEUED),
          "the transition table");
    CHECK(gpud_part_gpu(g, p) == -EINVAL && p->state == P_QUEUED && p->linked, "QUEUED -> GPU accepted");
    CHECK(gpud_part_computed(g, p, NULL, NULL, t_clock) == -EINVAL && p->state == P_QUEUED, "QUEUED -> FINALIZE accepted");
    CHECK(gpud_part_finish(g, p, 0, NULL, NULL, NULL) == 0 && p->state == P_DONE, "QUEUED -> DONE refused");
    CHECK(gpud_part_requeue(g, p, GPUD_SLOT_RECLAIM) == -EINVAL && p->state == P_DONE, "DONE -> QUEUED accepted");
    CHECK(gpud_part_finish(g, p, -EIO, "x", NULL, NULL) == -EINVAL && p->state == P_DONE, "DONE -> FAILED accepted");
    CHECK(g->part_count[P_QUEUED] == q - 1 && g->part_count[P_DONE] == 1, "counts changed by refused transitions");
    t_check(g);
    t_gpud_free(g);
    t_rmtree(dir);
    free(dir);
    t_conn_free(cl);
}

/* ------------------------------------------------------------- replay --- */

/* what the journal promises about a job: its state and each final partition */
static void project(gpud *g, char *buf, size_t n)
{
    size_t off = 0;
    off += (size_t)snprintf(buf + off, n - off, "active %u history %u\n", g->n_active, g->n_history);
    for (gpud_job *j = g->jobs_head; j && off < n; j = j->next) {
        off += (size_t)snprintf(buf + off, n - off, "job %llu %s lane %u uid %u parts %u state %d done %u failed %u:",
                                (unsigned long long)j->id, j->req, j->lane, j->uid, j->nparts, j->state, j->nfinished,
                                j->nfailed);
        /* a cancelled job's partitions stay in memory while a synth or a
         * worker still has one (live), and are gone at once on replay: the
         * journal promises only the cancellation */
        for (uint32_t i = 0; j->parts && j->state != J_CANCELLED && i < j->nparts && off < n; i++) {
            const gpud_part *p = &j->parts[i];
            off += (size_t)snprintf(buf + off, n - off, " %s/%d",
                                    p->state >= P_DONE ? gpud_part_state_name(p->state) : "pending",
                                    p->state >= P_DONE ? p->status : 0);
        }
        off += (size_t)snprintf(buf + off, n - off, "\n");
    }
}

static void test_replay(void)
{
    char *dir = t_tmpdir();
    gpud *g = t_gpud_new(dir, 4, 1, 0);
    t_conn *sc = t_conn_new(), *cl = t_conn_new(), *fin = t_conn_new();
    gpud_synth *s = gpud_synth_attach(g, T_CONN(sc), 601, 0);
    static char live[65536], replayed[65536];
    uint64_t jobs[6];

    gpud_finalizer_attach(g, T_CONN(fin), 9);
    for (int i = 0; i < 6; i++)
        jobs[i] = t_submit(g, cl, (uint32_t)(t_rand64() % GPUD_LANES), 1 + (uint32_t)(t_rand64() % 3));
    /* run a random number of steps: fills, failures, copies, computes, DONEs */
    for (int step = 0; step < 300 && g->n_history < 3; step++) {
        t_turn(g);
        for (uint32_t k = 0; k < 4; k++) {
            gpud_part *p = g->pools[0].slots[k].part;
            if (p && p->state == P_SYNTH && t_rand64() % 2) {
                if (t_rand64() % 8 == 0)
                    t_fill_fail(g, s, k, -EINVAL);
                else
                    t_fill(g, s, k, 1);
            }
        }
        t_turn(g);
        gpud_work *w = &g->workers[0];
        if (w->busy && t_rand64() % 2) {
            t_copied(g, w, 0);
            t_computed(g, w, t_rand64() % 10 == 0 ? -EIO : 0);
        }
        for (gpud_job *j = g->jobs_head; j; j = j->next)
            for (uint32_t i = 0; j->parts && i < j->nparts; i++)
                if (j->parts[i].state == P_FINALIZE && t_rand64() % 3 == 0) {
                    t_done(g, j->id, i, t_rand64() % 10 == 0 ? -EINVAL : 0);
                    break;
                }
        if (step == 5)
            gpud_job_cancel(g, gpud_job_find(g, jobs[t_rand64() % 6]), NULL);
        t_check(g);
    }
    /* and some work in flight: queued, assigned, filled */
    t_submit(g, cl, 0, 2);
    t_submit(g, cl, 2, 3);
    t_turn(g);
    for (uint32_t k = 0; k < 4; k++)
        if (g->pools[0].slots[k].part && g->pools[0].slots[k].part->state == P_SYNTH && t_rand64() % 2)
            t_fill(g, s, k, 1);
    t_turn(g);
    t_check(g);
    project(g, live, sizeof(live));
    CHECK(g->n_history > 0 && g->n_active > 0, "the live run should leave finished and unfinished jobs (%u, %u)",
          g->n_history, g->n_active);
    t_gpud_free(g); /* closes the journal: what a crash leaves */

    gpud *r = t_gpud_new(dir, 4, 1, 0);
    project(r, replayed, sizeof(replayed));
    CHECK(!strcmp(live, replayed), "replay differs:\n--- live\n%s--- replayed\n%s", live, replayed);
    /* ids after a restart: above every id handed out before (the mark skips
     * the rest of its reserved block, never goes back) */
    CHECK(czk_idmark_peek(r->idmark) > r->jobs_tail->id, "next id %llu after a restart, last job %llu",
          (unsigned long long)czk_idmark_peek(r->idmark), (unsigned long long)r->jobs_tail->id);
    gpud_jobs_requeue_all(r);
    t_check(r);
    unsigned pending = 0;
    for (gpud_job *j = r->jobs_head; j; j = j->next)
        for (uint32_t i = 0; j->state == J_ACTIVE && i < j->nparts; i++)
            pending += j->parts[i].state < P_DONE;
    CHECK(pending == r->part_count[P_QUEUED], "%u unfinished partitions, %u queued again", pending,
          r->part_count[P_QUEUED]);
    t_gpud_free(r);
    t_rmtree(dir);
    free(dir);
    t_conn_free(sc);
    t_conn_free(cl);
    t_conn_free(fin);
}

/* a circuit whose key is not ready: its queued partitions get no slot and
 * its READY slots no worker; they wait (with the reason) and go on once the
 * key is ready; a failed key keeps them waiting, never fails them */
static void test_key_wait(void)
{
    char *dir = t_tmpdir();
    gpud *g = t_gpud_new(dir, 2, 1, 0);
    t_conn *sc = t_conn_new(), *cl = t_conn_new();
    gpud_synth *s = gpud_synth_attach(g, T_CONN(sc), 101, 0);
    gpud_circuit *c = &g->circuits[0];
    uint32_t np = 1 + (uint32_t)(t_rand64() % 2);
    char why[CZK_STATUS_REASON];
    const t_sent *a;
    gpud_work *w;

    t_nkicked = 0; /* what earlier tests left */
    c->key_state = GPUD_KEY_LOADING;
    atomic_store(&c->key_total, 1000);
    atomic_store(&c->key_done, 1 + t_rand64() % 998);
    uint64_t job = t_submit(g, cl, (uint32_t)(t_rand64() % GPUD_LANES), np);
    t_turn(g);
    CHECK(t_last(sc, CZK_MSG_ASSIGN) == NULL, "a partition of a loading circuit was assigned");
    CHECK(g->part_count[P_QUEUED] == np, "%u queued, expected %u", g->part_count[P_QUEUED], np);
    CHECK(gpud_circuits_job_reason(g, 0, np, np, 0, why, sizeof(why)) && strstr(why, "key for circuit \"tiny\" is loading ("),
          "reason while loading: \"%s\"", why);
    /* ready: the partitions go to the synth */
    c->key_state = GPUD_KEY_READY;
    gpud_sched_dirty(g);
    t_turn(g);
    a = t_last(sc, CZK_MSG_ASSIGN);
    CHECK(a && a->job == job, "no ASSIGN once the key is ready");
    if (!a) {
        t_gpud_free(g);
        return;
    }
    /* a READY slot of a circuit whose key is loading (as after a restart):
     * no worker until the key is ready */
    c->key_state = GPUD_KEY_LOADING;
    t_fill(g, s, a->slot, 1);
    t_turn(g);
    CHECK(take_kick() == NULL, "a READY partition of a loading circuit went to a worker");
    CHECK(t_part(g, job, a->part)->state == P_READY, "the partition is not waiting READY");
    /* failed: still waiting, never failed for it */
    c->key_state = GPUD_KEY_FAILED;
    snprintf(c->key_why, sizeof(c->key_why), "section 5 (A): point %u of 8: not on the G1 curve",
             (unsigned)(t_rand64() % 8));
    gpud_sched_dirty(g);
    t_turn(g);
    CHECK(take_kick() == NULL, "a READY partition of a failed circuit went to a worker");
    CHECK(gpud_circuits_job_reason(g, 0, 0, 1, 0, why, sizeof(why)) && strstr(why, "failed to load: section 5"),
          "reason when failed: \"%s\"", why);
    CHECK(g->failures_total == 0 && t_part(g, job, a->part)->state == P_READY, "a partition failed for its key");
    c->key_state = GPUD_KEY_READY;
    gpud_sched_dirty(g);
    t_turn(g);
    w = take_kick();
    CHECK(w && w->part == t_part(g, job, a->part), "the READY partition did not go to the worker once ready");
    if (w) {
        t_copied(g, w, 0);
        t_turn(g);
        t_computed(g, w, 0);
        t_turn(g);
    }
    t_check(g);
    t_gpud_free(g);
    t_rmtree(dir);
    free(dir);
    t_conn_free(sc);
    t_conn_free(cl);
}

int main(void)
{
    czk_log_init("test_gpud_sched", 3);
    t_seed("test_gpud_sched");
    test_lanes();
    test_least_loaded();
    test_lease();
    test_crashes();
    test_cancel();
    test_cancel_copy_synth_dies();
    test_ready_twice();
    test_illegal();
    test_replay();
    test_key_wait();
    if (t_failures) {
        fprintf(stderr, "test_gpud_sched: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_gpud_sched: ok\n");
    return 0;
}
