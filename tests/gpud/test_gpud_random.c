/*
 * test_gpud_random.c — random event sequences against czk-gpud's scheduler
 * (harness.h): submissions, synths that come, fill, fail, hang and die,
 * backend contexts that copy and compute (or fail), a finalizer that
 * answers, repeats itself, dies and comes back, cancellations, leases that
 * run out, RESULT re-sends and repeated READYs.  After every step the
 * bookkeeping invariants are checked (t_check): no slot owned twice, a slot
 * nobody holds FREE in the pool, in_use and each synth's inflight equal a
 * recount, every partition in exactly one place.  Seeded; the seed is
 * printed and CZK_TEST_SEED replays a run.  At the end every
 * accepted partition must have been finished exactly once.
 */
#include "tests/gpud/harness.h"

#define MAX_SYNTHS 4
#define STEPS 4000

static t_conn *synth_conn[MAX_SYNTHS];
static gpud_synth *synths[MAX_SYNTHS];
static int copied[8];

static gpud_synth *random_synth(void)
{
    unsigned k = (unsigned)(t_rand64() % MAX_SYNTHS);
    for (unsigned i = 0; i < MAX_SYNTHS; i++)
        if (synths[(k + i) % MAX_SYNTHS])
            return synths[(k + i) % MAX_SYNTHS];
    return NULL;
}

/* a slot this synth was ASSIGNed and has not answered for yet */
static int random_assigned_slot(gpud *g, gpud_synth *s, int want_shm_ready)
{
    uint32_t n = g->pools[0].pool.hdr->slot_count, k0 = (uint32_t)(t_rand64() % n);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = (k0 + i) % n;
        gpud_slot *gs = &g->pools[0].slots[k];
        uint32_t st = CZK_SLOT_CTL_STATE(czk_slot_ctl(&g->pools[0].pool, k));
        if (gs->synth != s)
            continue;
        if (gs->part && gs->part->state != P_SYNTH && gs->part->state != P_CANCELLED)
            continue; /* its READY arrived already */
        if (want_shm_ready ? st == CZK_SLOT_READY : (st == CZK_SLOT_ASSIGNED || st == CZK_SLOT_FILLING))
            return (int)k;
    }
    return -1;
}

/* a slot of this synth whose READY was taken already (queued for or in a backend context) */
static int random_taken_slot(gpud *g, gpud_synth *s)
{
    uint32_t n = g->pools[0].pool.hdr->slot_count, k0 = (uint32_t)(t_rand64() % n);
    for (uint32_t i = 0; i < n; i++) {
        gpud_slot *gs = &g->pools[0].slots[(k0 + i) % n];
        if (gs->synth == s && gs->part && !gpud_part_awaits_ready(gs->part))
            return (int)((k0 + i) % n);
    }
    return -1;
}

int main(void)
{
    char *dir = t_tmpdir();
    gpud *g;
    t_conn *cl = t_conn_new(), *fin = NULL;
    unsigned accepted_parts = 0, steps = 0, owners = 700;
    uint64_t last_done_job = 0;
    uint32_t last_done_part = 0;

    czk_log_init("test_gpud_random", 2);
    t_seed("test_gpud_random");
    g = t_gpud_new(dir, 2 + (int)(t_rand64() % 5), 1 + (unsigned)(t_rand64() % 3), 30);
    for (steps = 0; steps < STEPS && !t_failures; steps++) {
        unsigned op = (unsigned)(t_rand64() % 100);
        gpud_synth *s;
        int k;

        if (op < 10) { /* a client submits */
            if (g->n_active < 12) {
                uint32_t n = 1 + (uint32_t)(t_rand64() % 4);
                t_submit(g, cl, (uint32_t)(t_rand64() % GPUD_LANES), n);
                accepted_parts += n;
            }
        } else if (op < 14) { /* a synth starts */
            for (int i = 0; i < MAX_SYNTHS; i++)
                if (!synths[i]) {
                    synth_conn[i] = t_conn_new();
                    synths[i] = gpud_synth_attach(g, T_CONN(synth_conn[i]), owners++, 0);
                    break;
                }
        } else if (op < 16) { /* a synth dies */
            int i = (int)(t_rand64() % MAX_SYNTHS);
            if (synths[i]) {
                synth_conn[i]->open = 0;
                gpud_synth_detach(g, synths[i]);
                synths[i] = NULL;
                t_conn_free(synth_conn[i]);
                synth_conn[i] = NULL;
            }
        } else if (op < 40) { /* a synth fills a slot (READY), publishes only, or fails */
            if ((s = random_synth()) && (k = random_assigned_slot(g, s, 0)) >= 0) {
                unsigned how = (unsigned)(t_rand64() % 10);
                if (how < 7)
                    t_fill(g, s, (uint32_t)k, 1);
                else if (how < 9)
                    t_fill(g, s, (uint32_t)k, 0); /* its READY is still on the way */
                else
                    t_fill_fail(g, s, (uint32_t)k, -EINVAL);
            }
        } else if (op < 46) { /* a READY message that was on the way arrives, or one is repeated */
            if ((s = random_synth()) && t_rand64() % 4 == 0 && (k = random_taken_slot(g, s)) >= 0)
                t_fill(g, s, (uint32_t)k, 1);
            else if (s && (k = random_assigned_slot(g, s, 1)) >= 0)
                t_fill(g, s, (uint32_t)k, 1);
        } else if (op < 66) { /* a backend context finishes its copy or its compute */
            unsigned w = (unsigned)(t_rand64() % g->n_workers);
            if (g->workers[w].busy) {
                int fail = t_rand64() % 20 == 0 ? -EIO : 0;
                if (!copied[w]) {
                    t_copied(g, &g->workers[w], fail);
                    copied[w] = 1;
                } else {
                    t_computed(g, &g->workers[w], fail);
                    copied[w] = 0;
                }
            }
        } else if (op < 80) { /* the finalizer answers a RESULT (or repeats the last DONE) */
            if (fin && t_rand64() % 8 == 0 && last_done_job) {
                unsigned before = g->part_count[P_DONE] + g->part_count[P_FAILED];
                t_done(g, last_done_job, last_done_part, 0);
                CHECK(g->part_count[P_DONE] + g->part_count[P_FAILED] <= before, "a repeated DONE finished something");
            } else if (fin) {
                for (gpud_job *j = g->jobs_head; j; j = j->next) {
                    uint32_t i;
                    for (i = 0; j->parts && i < j->nparts; i++)
                        if (j->parts[i].state == P_FINALIZE && j->parts[i].sent)
                            break;
                    if (j->parts && i < j->nparts) {
                        last_done_job = j->id;
                        last_done_part = i;
                        t_done(g, j->id, i, t_rand64() % 15 == 0 ? -EINVAL : 0);
                        break;
                    }
                }
            }
        } else if (op < 84) { /* the finalizer comes or goes */
            if (fin) {
                fin->open = 0;
                gpud_finalizer_close(g, T_CONN(fin));
                t_conn_free(fin);
                fin = NULL;
            } else {
                fin = t_conn_new();
                gpud_finalizer_attach(g, T_CONN(fin), 9);
            }
        } else if (op < 87) { /* a client cancels */
            gpud_job *pick = NULL;
            for (gpud_job *j = g->jobs_head; j; j = j->next)
                if (j->state == J_ACTIVE && (!pick || t_rand64() % 3 == 0))
                    pick = j;
            if (pick)
                gpud_job_cancel(g, pick, t_rand64() % 2 ? T_CONN(cl) : NULL);
        } else if (op < 95) { /* time passes: leases and RESULT re-sends */
            t_clock += (t_rand64() % 40) * 1000000000ull;
            gpud_leases_check(g);
            gpud_results_check(g);
        } else { /* a status tick */
            gpud_sched_dirty(g);
        }
        t_turn(g);
        if (t_check(g)) {
            fprintf(stderr, "test_gpud_random: invariant broken at step %u (op %u)\n", steps, op);
            break;
        }
    }
    /* drain: everything still accepted finishes once synths, workers and the finalizer keep going */
    if (!t_failures) {
        int k;
        if (!synths[0]) {
            synth_conn[0] = t_conn_new();
            synths[0] = gpud_synth_attach(g, T_CONN(synth_conn[0]), owners++, 0);
        }
        if (!fin) {
            fin = t_conn_new();
            gpud_finalizer_attach(g, T_CONN(fin), 9);
        }
        for (int round = 0; round < 20000 && (g->n_active || g->pools[0].in_use) && !t_failures; round++) {
            for (int i = 0; i < MAX_SYNTHS; i++)
                for (int sr = 0; sr < 2 && synths[i]; sr++)
                    while ((k = random_assigned_slot(g, synths[i], sr)) >= 0)
                        t_fill(g, synths[i], (uint32_t)k, 1);
            for (unsigned w = 0; w < g->n_workers; w++)
                if (g->workers[w].busy) {
                    if (!copied[w])
                        t_copied(g, &g->workers[w], 0);
                    t_computed(g, &g->workers[w], 0);
                    copied[w] = 0;
                }
            for (gpud_job *j = g->jobs_head; j; j = j->next)
                for (uint32_t i = 0; j->parts && i < j->nparts; i++)
                    if (j->parts[i].state == P_FINALIZE && j->parts[i].sent)
                        t_done(g, j->id, i, 0);
            gpud_results_check(g);
            gpud_sched_dirty(g);
            t_turn(g);
            t_check(g);
        }
        CHECK(g->n_active == 0, "%u jobs never finished", g->n_active);
        unsigned finished = 0, parts = 0;
        for (gpud_job *j = g->jobs_head; j; j = j->next) {
            parts += j->nparts;
            finished += j->nfinished;
            CHECK(j->state == J_CANCELLED || j->nfinished == j->nparts, "job %llu ended with %u of %u partitions",
                  (unsigned long long)j->id, j->nfinished, j->nparts);
        }
        CHECK(parts == accepted_parts, "%u partitions accepted, %u known", accepted_parts, parts);
        CHECK(g->proofs_total + g->failures_total == finished, "proofs %llu + failures %llu != %u finished",
              (unsigned long long)g->proofs_total, (unsigned long long)g->failures_total, finished);
        CHECK(g->pools[0].in_use == 0, "%u slots still in use at the end", g->pools[0].in_use);
    }
    printf("test_gpud_random: %u steps, %u partitions accepted, %llu proofs, %llu failures, %llu cancelled jobs, "
           "%llu lease expiries, %llu re-sends\n",
           steps, accepted_parts, (unsigned long long)g->proofs_total, (unsigned long long)g->failures_total,
           (unsigned long long)g->cancelled_total, (unsigned long long)g->synth_timeouts_total,
           (unsigned long long)g->result_resends_total);
    for (int i = 0; i < MAX_SYNTHS; i++)
        t_conn_free(synth_conn[i]);
    t_gpud_free(g);
    t_conn_free(cl);
    t_conn_free(fin);
    t_rmtree(dir);
    free(dir);
    if (t_failures) {
        fprintf(stderr, "test_gpud_random: %d checks failed (replay with the seed above)\n", t_failures);
        return 1;
    }
    return 0;
}
