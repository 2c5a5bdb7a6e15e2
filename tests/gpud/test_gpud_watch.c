/*
 * test_gpud_watch.c — a connection that follows a job (SUBMIT with the wait
 * flag, WATCH, CANCEL) is exempt from the idle timeout only while a job it
 * follows is active: once the job is final its watchers end, after the
 * job's last EVENT, and a connection that follows no other job becomes
 * subject to client_idle_timeout_s again (events.c gpud_watch_end, called
 * from part.c's gpud_job_finished).  Without sockets (harness.h): the fake
 * io's `watching` hook records each connection's exemption.
 * Jobs that complete, fail, are cancelled, and a connection that follows two
 * jobs (exempt until the second is over); the finished jobs are then trimmed
 * from the history (history_jobs = 0) with nobody left following them.
 */
#include "tests/gpud/harness.h"

/* a t_conn with its exemption as gpud last set it */
typedef struct w_conn {
    t_conn tc; /* first: T_CONN(&w->tc) is w */
    int exempt;
    unsigned sets, clears;
    unsigned n_at_clear; /* messages it had been sent when its exemption last ended */
} w_conn;

static void w_watching(void *ctx, czk_conn *c, int on)
{
    w_conn *w = (w_conn *)(void *)c;
    (void)ctx;
    w->exempt = on;
    if (on)
        w->sets++;
    else {
        w->clears++;
        w->n_at_clear = w->tc.n;
    }
}

static const gpud_io w_io = {.send = t_send,
                             .is_open = t_is_open,
                             .queued = t_queued,
                             .kick = t_kick,
                             .now = t_now,
                             .watching = w_watching,
                             .ctx = NULL};

static w_conn *w_new(void)
{
    w_conn *w = calloc(1, sizeof(*w));
    w->tc.open = 1;
    return w;
}

static void w_free(w_conn *w)
{
    if (w) {
        free(w->tc.msgs);
        free(w);
    }
}

static gpud_work *take_kick(void)
{
    return t_nkicked ? t_kicked[--t_nkicked % 64] : NULL;
}

/* does any job list c as a watcher? */
static int listed(const gpud *g, const w_conn *c)
{
    for (const gpud_job *j = g->jobs_head; j; j = j->next)
        for (int i = 0; i < j->nwatch; i++)
            if (j->watchers[i] == T_CONN(&c->tc))
                return 1;
    return 0;
}

/* the last EVENT sent to c: for job, partition ALL, with stage */
static int last_event_is(const w_conn *c, uint64_t job, uint32_t stage)
{
    const t_sent *s = t_last(&c->tc, CZK_MSG_EVENT);
    return s && s->job == job && s->part == CZK_PARTITION_ALL && s->stage == stage;
}

/* partition part of job through synth, backend and finalizer to its DONE
 * (status: the finalizer's answer, or the compute's failure when rc < 0) */
static void run_part(gpud *g, gpud_synth *s, uint64_t job, uint32_t part, int compute_rc)
{
    gpud_part *p = t_part(g, job, part);
    gpud_work *w;

    t_turn(g);
    CHECK(p && p->state == P_SYNTH, "job %llu partition %u not assigned", (unsigned long long)job, part);
    if (!p || p->state != P_SYNTH)
        return;
    t_fill(g, s, p->slot, 1);
    t_turn(g);
    w = take_kick();
    CHECK(w && w->part == p, "job %llu partition %u not on a backend context", (unsigned long long)job, part);
    if (!w || w->part != p)
        return;
    t_copied(g, w, 0);
    t_computed(g, w, compute_rc);
    if (compute_rc == 0)
        t_done(g, job, part, 0);
}

static void test_watchers_end(void)
{
    char *dir = t_tmpdir();
    gpud *g = t_gpud_new(dir, 1, 1, 0);
    w_conn *a = w_new(), *b = w_new(), *c = w_new(), *d = w_new(), *sc = w_new(), *fin = w_new();
    gpud_synth *s;
    uint64_t j1, j2, j3;

    g->io = &w_io;
    g->cfg.history_jobs = 0; /* finished jobs are forgotten at once (gpud_jobs_trim) */
    s = gpud_synth_attach(g, T_CONN(&sc->tc), 701, 0);
    gpud_finalizer_attach(g, T_CONN(&fin->tc), 9);

    /* j1: a submits with the wait flag (t_submit sets it), b WATCHes; c
     * WATCHes j1 and j2 (d's job) */
    j1 = t_submit(g, &a->tc, 1, 2);
    j2 = t_submit(g, &d->tc, 1, 1);
    gpud_watch_job(g, gpud_job_find(g, j1), T_CONN(&b->tc));
    gpud_watch_job(g, gpud_job_find(g, j1), T_CONN(&c->tc));
    gpud_watch_job(g, gpud_job_find(g, j2), T_CONN(&c->tc));
    CHECK(a->exempt && b->exempt && c->exempt && d->exempt, "a connection that follows a job is not exempt");

    /* j1 completes: a and b no longer follow anything, c still follows j2 */
    run_part(g, s, j1, 0, 0);
    CHECK(a->exempt && b->exempt, "exemption ended before the job was over");
    run_part(g, s, j1, 1, 0);
    CHECK(!gpud_job_find(g, j1), "the finished job was not trimmed (history_jobs = 0)");
    CHECK(!a->exempt && !b->exempt,
          "the connections that followed a complete job stay exempt from the idle timeout (a %d, b %d)", a->exempt,
          b->exempt);
    CHECK(!listed(g, a) && !listed(g, b), "a complete job's watchers are still listed");
    CHECK(last_event_is(a, j1, CZK_STAGE_DONE) && last_event_is(b, j1, CZK_STAGE_DONE),
          "the job's final EVENT did not reach its watchers");
    /* the final EVENT went out while they still followed the job, then the exemption ended */
    CHECK(a->clears == 1 && a->n_at_clear == a->tc.n && b->clears == 1 && b->n_at_clear == b->tc.n,
          "the exemption ended before the final EVENT was sent (a: %u clears at %u of %u messages)", a->clears,
          a->n_at_clear, a->tc.n);
    CHECK(c->exempt && c->clears == 0, "a connection that still follows an active job lost its exemption");

    /* j2 fails (its only partition's compute fails): c and d are done */
    run_part(g, s, j2, 0, -EIO);
    CHECK(!c->exempt && !d->exempt, "the connections that followed a failed job stay exempt (c %d, d %d)", c->exempt,
          d->exempt);
    CHECK(last_event_is(c, j2, CZK_STAGE_FAILED) && last_event_is(d, j2, CZK_STAGE_FAILED),
          "the failed job's final EVENT did not reach its watchers");
    CHECK(!listed(g, c) && !listed(g, d), "a failed job's watchers are still listed");

    /* j3: a submits again with the wait flag and cancels it (the canceller
     * follows it until the CANCELLED event, which answers the CANCEL) */
    j3 = t_submit(g, &a->tc, 1, 1);
    CHECK(a->exempt, "a connection that waits for a new job is not exempt again");
    CHECK(gpud_job_cancel(g, gpud_job_find(g, j3), T_CONN(&b->tc)) == 0, "cancel failed");
    CHECK(!a->exempt && !b->exempt, "the connections of a cancelled job stay exempt (a %d, b %d)", a->exempt,
          b->exempt);
    CHECK(last_event_is(a, j3, CZK_STAGE_CANCELLED) && last_event_is(b, j3, CZK_STAGE_CANCELLED),
          "the CANCELLED event did not reach the job's watchers");
    CHECK(b->n_at_clear == b->tc.n, "the canceller's exemption ended before its CANCELLED event");

    /* WATCH of a job that is over answers its end and does not exempt */
    g->cfg.history_jobs = 10; /* kept now, to be watched */
    j3 = t_submit(g, &d->tc, 1, 1);
    run_part(g, s, j3, 0, 0);
    gpud_job *done = gpud_job_find(g, j3);
    unsigned sets = c->sets;
    CHECK(done && done->state == J_COMPLETE && !d->exempt, "setup: the last job is not complete");
    if (done)
        gpud_watch_job(g, done, T_CONN(&c->tc));
    CHECK(c->sets == sets && !c->exempt && last_event_is(c, j3, CZK_STAGE_DONE) && !listed(g, c),
          "WATCH of a finished job made the connection exempt, or did not answer the job's end");
    t_check(g);

    t_gpud_free(g);
    t_rmtree(dir);
    free(dir);
    w_free(a);
    w_free(b);
    w_free(c);
    w_free(d);
    w_free(sc);
    w_free(fin);
}

int main(void)
{
    czk_log_init("test_gpud_watch", 3);
    t_seed("test_gpud_watch");
    test_watchers_end();
    if (t_failures) {
        fprintf(stderr, "test_gpud_watch: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_gpud_watch: ok\n");
    return 0;
}
