/*
 * test_gpud_journal.c — czk-gpud's use of the journal and the job-id mark
 * (ipc/journal.h) without sockets or threads (harness.h):
 *   - ids are never handed out twice: a deleted journal stops gpud (exit 2)
 *     while the mark says jobs were accepted; the documented recovery (move
 *     next_job_id aside) starts a new journal, and the ids go on above every
 *     job directory in spool/ and output_dir;  a journal cut back below the
 *     mark's floor stops gpud too;
 *   - a corrupt record (not the last) stops gpud (exit 2) with the journal's
 *     message naming the offset, the seq and `czk journal check|salvage`;
 *   - append failures (RLIMIT_FSIZE stands in for a full disk): the submit is
 *     REJECTED, its spool removed, nothing queued; further submits are refused
 *     at once; a DONE that cannot be journaled leaves the partition awaiting
 *     DONE; once appends work (probe), the RESULT is sent again and the job
 *     completes with exactly one DONE in the journal;
 *   - witness digests survive a restart in the ACCEPT record.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>

#include "common/base/digest.h"
#include "tests/gpud/harness.h"

static gpud_work *take_kick(void)
{
    return t_nkicked ? t_kicked[--t_nkicked % 64] : NULL;
}

typedef struct rec_count {
    unsigned accept, done, probe, n;
    uint64_t offset[64], seq[64];
} rec_count;

static int count_cb(const czk_journal_rec *rec, void *ctx)
{
    rec_count *c = ctx;
    if (c->n < 64) {
        c->offset[c->n] = rec->offset;
        c->seq[c->n] = rec->seq;
    }
    c->n++;
    c->accept += rec->type == REC_ACCEPT;
    c->done += rec->type == REC_DONE;
    c->probe += rec->type == REC_PROBE;
    return 0;
}

static void journal_path(const char *dir, char *buf, size_t n)
{
    snprintf(buf, n, "%s/journal", dir);
}

/* takes one queued partition of a 1-slot gpud through to P_FINALIZE */
static gpud_part *to_finalize(gpud *g, gpud_synth *s, uint64_t job)
{
    gpud_part *p = t_part(g, job, 0);
    gpud_work *w;
    t_turn(g);
    if (!p || p->state != P_SYNTH)
        return NULL;
    t_fill(g, s, p->slot, 1);
    t_turn(g);
    if (!(w = take_kick()))
        return NULL;
    t_copied(g, w, 0);
    t_computed(g, w, 0);
    return p->state == P_FINALIZE ? p : NULL;
}

static void test_ids_never_reused(void)
{
    char *dir = t_tmpdir(), *out = t_tmpdir(), path[512], aside[512];
    t_conn *cl = t_conn_new();
    czk_error e = {0};
    uint64_t max = 0, id;
    int st = 0;
    gpud *g = t_gpud_open(dir, out, 2, 1, 0, &st, &e);

    CHECK(g, "first start: %s", e.msg);
    if (!g)
        return;
    unsigned n = 2 + (unsigned)(t_rand64() % 5);
    for (unsigned i = 0; i < n; i++) {
        id = t_submit(g, cl, 1, 1);
        max = id > max ? id : max;
    }
    /* the finalizer's output of the last job (its id is the highest) */
    snprintf(path, sizeof(path), "%s/%llu", out, (unsigned long long)max);
    mkdir(path, 0750);
    t_gpud_free(g);

    /* the journal is deleted: the mark remembers jobs were accepted */
    journal_path(dir, path, sizeof(path));
    CHECK(unlink(path) == 0, "unlink journal");
    memset(&e, 0, sizeof(e));
    g = t_gpud_open(dir, out, 2, 1, 0, &st, &e);
    CHECK(!g && st == 2, "a deleted journal: gpud starts (or exit status %d, not 2)", st);
    CHECK(strstr(e.msg, "journal") && strstr(e.msg, "missing"), "deleted journal, message: %s", e.msg);
    if (g)
        t_gpud_free(g);

    /* recovery: the operator moves the mark aside; a new journal starts and
     * ids go on above every job directory (spool/, output_dir) */
    snprintf(path, sizeof(path), "%s/next_job_id", dir);
    snprintf(aside, sizeof(aside), "%s/next_job_id.old", dir);
    CHECK(rename(path, aside) == 0, "rename the mark");
    memset(&e, 0, sizeof(e));
    g = t_gpud_open(dir, out, 2, 1, 0, &st, &e);
    CHECK(g, "start after the recovery: %s", e.msg);
    if (g) {
        id = t_submit(g, cl, 1, 1);
        CHECK(id > max, "job id %llu after the journal was lost, old ids went up to %llu", (unsigned long long)id,
              (unsigned long long)max);
        max = id;
        t_gpud_free(g);
    }

    /* a clean stop records the journal's last seq: a journal cut back to an
     * older length (records missing at the end) is refused */
    journal_path(dir, path, sizeof(path));
    rec_count c = {0};
    CHECK(czk_journal_replay_file(path, count_cb, &c, NULL, &e) == 0 && c.n >= 1, "replay: %s", e.msg);
    if (c.n >= 1)
        CHECK(truncate(path, (off_t)c.offset[c.n - 1]) == 0, "truncate");
    memset(&e, 0, sizeof(e));
    g = t_gpud_open(dir, out, 2, 1, 0, &st, &e);
    CHECK(!g && st == 2 && strstr(e.msg, "missing"), "a journal missing its last record: started=%d status %d: %s",
          g != NULL, st, e.msg);
    if (g)
        t_gpud_free(g);
    t_conn_free(cl);
    t_rmtree(dir);
    t_rmtree(out);
    free(dir);
    free(out);
}

static void test_corrupt(void)
{
    char *dir = t_tmpdir(), path[512], off_s[32];
    t_conn *cl = t_conn_new();
    czk_error e = {0};
    rec_count c = {0};
    gpud *g = t_gpud_new(dir, 2, 1, 0);
    int st = 0, fd;

    for (int i = 0; i < 4; i++)
        t_submit(g, cl, 0, 1 + (uint32_t)(t_rand64() % 3));
    t_gpud_free(g);
    journal_path(dir, path, sizeof(path));
    CHECK(czk_journal_replay_file(path, count_cb, &c, NULL, &e) == 0 && c.n == 4, "%u records: %s", c.n, e.msg);
    /* one payload byte of a record that is not the last */
    unsigned victim = (unsigned)(t_rand64() % 3);
    uint64_t at = c.offset[victim] + 24 + t_rand64() % 16;
    uint8_t b;
    fd = open(path, O_RDWR);
    CHECK(fd >= 0 && pread(fd, &b, 1, (off_t)at) == 1, "read");
    b ^= (uint8_t)(1u << (t_rand64() % 8));
    CHECK(pwrite(fd, &b, 1, (off_t)at) == 1, "write");
    close(fd);
    g = t_gpud_open(dir, NULL, 2, 1, 0, &st, &e);
    snprintf(off_s, sizeof(off_s), "offset %llu", (unsigned long long)c.offset[victim]);
    CHECK(!g && st == 2, "a corrupt journal: started=%d, status %d", g != NULL, st);
    CHECK(strstr(e.msg, off_s) && strstr(e.msg, "czk journal check") && strstr(e.msg, "czk journal salvage"),
          "corrupt record %u (%s): message does not name it and the tools: %s", victim, off_s, e.msg);
    if (g)
        t_gpud_free(g);
    t_conn_free(cl);
    t_rmtree(dir);
    free(dir);
}

static void test_append_failure(void)
{
    char *dir = t_tmpdir(), path[CZK_CONFIG_PATH_MAX + 64];
    t_conn *sc = t_conn_new(), *cl = t_conn_new(), *fin = t_conn_new();
    gpud *g = t_gpud_new(dir, 1, 1, 0);
    gpud_synth *s = gpud_synth_attach(g, T_CONN(sc), 701, 0);
    struct rlimit old, lim;
    struct stat sb;
    czk_error e = {0};
    rec_count c = {0};
    uint64_t a, b, d;
    gpud_part *p;

    gpud_finalizer_attach(g, T_CONN(fin), 9);
    a = t_submit(g, cl, 1, 1);
    p = to_finalize(g, s, a);
    CHECK(p && t_count(fin, 0, CZK_MSG_RESULT) == 1, "job %llu did not reach FINALIZE", (unsigned long long)a);
    if (!p)
        goto out;

    /* the disk fills up: no write may make the journal longer */
    journal_path(dir, path, sizeof(path));
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old);
    stat(path, &sb);
    lim = old;
    lim.rlim_cur = (rlim_t)sb.st_size;
    setrlimit(RLIMIT_FSIZE, &lim);

    t_done(g, a, 0, 0);
    CHECK(p->state == P_FINALIZE && g->journal_down && g->journal_failures_total == 1,
          "a DONE that could not be journaled: %s, journal_down %d, failures %llu", gpud_part_state_name(p->state),
          g->journal_down, (unsigned long long)g->journal_failures_total);
    unsigned mark = cl->n, active = g->n_active;
    b = t_submit(g, cl, 0, 2);
    const t_sent *rj = t_last(cl, CZK_MSG_REJECTED);
    CHECK(t_count(cl, mark, CZK_MSG_REJECTED) == 1 && t_count(cl, mark, CZK_MSG_ACCEPTED) == 0 && rj &&
              strstr(rj->reason, "journal"),
          "a submit while the journal fails: not rejected with a reason (%s)", rj ? rj->reason : "-");
    snprintf(path, sizeof(path), "%s/%llu", g->spool_dir, (unsigned long long)b);
    CHECK(!gpud_job_find(g, b) && g->n_active == active && access(path, F_OK) < 0,
          "a rejected submit left a job or its spool");
    CHECK(gpud_journal_probe(g) < 0 && g->journal_down, "the probe succeeded on a full journal");

    /* space again: the probe works, the RESULT goes out again, DONE is journaled */
    setrlimit(RLIMIT_FSIZE, &old);
    unsigned results = t_count(fin, 0, CZK_MSG_RESULT);
    CHECK(gpud_journal_probe(g) == 0 && !g->journal_down && g->journal_recovered, "the probe fails with space");
    gpud_results_resend(g); /* what main.c's tick does when journal_recovered */
    CHECK(t_count(fin, 0, CZK_MSG_RESULT) == results + 1, "the RESULT awaiting DONE was not sent again");
    t_done(g, a, 0, 0);
    CHECK(!t_part(g, a, 0) || t_part(g, a, 0)->state == P_DONE, "DONE after the journal recovered: job %llu not done",
          (unsigned long long)a);
    CHECK(gpud_job_find(g, a) && gpud_job_find(g, a)->state == J_COMPLETE, "job %llu not complete",
          (unsigned long long)a);
    d = t_submit(g, cl, 2, 1);
    CHECK(gpud_job_find(g, d) && t_last(cl, CZK_MSG_ACCEPTED)->job == d, "no job accepted after the recovery");
    t_gpud_free(g);
    g = NULL;

    journal_path(dir, path, sizeof(path));
    CHECK(czk_journal_replay_file(path, count_cb, &c, NULL, &e) == 0, "replay: %s", e.msg);
    CHECK(c.accept == 2 && c.done == 1, "journal: %u ACCEPT (want 2: the rejected one is not there), %u DONE (want 1)",
          c.accept, c.done);
    g = t_gpud_new(dir, 1, 1, 0);
    CHECK(gpud_job_find(g, a) && gpud_job_find(g, a)->state == J_COMPLETE && !gpud_job_find(g, b) &&
              gpud_job_find(g, d) && gpud_job_find(g, d)->state == J_ACTIVE,
          "replay after the episode: wrong jobs");
out:
    if (g)
        t_gpud_free(g);
    t_conn_free(sc);
    t_conn_free(cl);
    t_conn_free(fin);
    t_rmtree(dir);
    free(dir);
}

/* the ACCEPT record carries the witness digests: they are there after a restart */
static void test_digests_replayed(void)
{
    char *dir = t_tmpdir();
    gpud *g = t_gpud_new(dir, 1, 1, 0);
    gpud_submit_req *q = calloc(1, sizeof(*q));
    t_conn *cl = t_conn_new();
    czk_error e = {0};
    uint8_t want[3 * CZK_SHA256_LEN];

    for (size_t i = 0; i < sizeof(want); i++)
        want[i] = (uint8_t)t_rand64();
    q->g = g;
    q->conn = T_CONN(cl);
    CHECK(gpud_job_id_next(g, &q->job, &e) == 0, "id: %s", e.msg);
    snprintf(q->req, sizeof(q->req), "digest-%llu", (unsigned long long)q->job);
    q->nparts = 3;
    q->wsha = malloc(sizeof(want));
    memcpy(q->wsha, want, sizeof(want));
    uint64_t id = q->job;
    q->next = g->pending;
    g->pending = q;
    g->pending_jobs++;
    g->pending_parts += 3;
    gpud_submit_finish(g, q);
    t_gpud_free(g);
    g = t_gpud_new(dir, 1, 1, 0);
    gpud_job *j = gpud_job_find(g, id);
    CHECK(j && j->wsha && !memcmp(j->wsha, want, sizeof(want)), "witness digests lost across a restart");
    CHECK(j && gpud_job_find_req(g, 0, j->req) == j && !gpud_job_find_req(g, 1000, j->req),
          "request ids are not per uid");
    t_gpud_free(g);
    t_conn_free(cl);
    t_rmtree(dir);
    free(dir);
}

int main(void)
{
    czk_log_init("test_gpud_journal", 3);
    t_seed("test_gpud_journal");
    test_ids_never_reused();
    test_corrupt();
    test_append_failure();
    test_digests_replayed();
    if (t_failures) {
        fprintf(stderr, "test_gpud_journal: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_gpud_journal: ok\n");
    return 0;
}
