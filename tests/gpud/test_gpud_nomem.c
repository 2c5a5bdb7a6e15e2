/*
 * test_gpud_nomem.c — out of memory never leaves czk-gpud's journal and its
 * job table disagreeing: a record is durable and reflected in memory, or
 * neither.
 *
 *  1. the group commit (ipc/commit.h): when there is no memory to queue a
 *     record's callback, czk_commit_append returns -ENOMEM and writes
 *     nothing (the record would otherwise become durable with the next sync
 *     while its caller took it as refused).  The allocation is failed through
 *     a wrapper of malloc (this program is linked with -Wl,--wrap=malloc):
 *     the wrapper fails the next call once armed, and the test checks it was
 *     reached, so the check cannot pass vacuously.
 *  2. a SUBMIT (jobs.c): the job's memory is allocated before its ACCEPT is
 *     written; with the fault point gpud.accept_alloc failing that
 *     allocation, the client gets REJECTED -ENOMEM, nothing is journaled, the
 *     spool is gone and the request id is free, also after a restart; the
 *     next SUBMIT is accepted, journaled and in memory.  Needs the fault
 *     points (CZK_FAULT_INJECTION); skipped without them.
 * Without sockets or a loop (harness.h: every append is synced inline).
 */
#include <errno.h>

#include "ipc/commit.h"
#include "tests/gpud/harness.h"

void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);

static int fail_next_malloc; /* armed: the next malloc fails */
static int mallocs_failed;

void *__wrap_malloc(size_t n)
{
    if (fail_next_malloc) {
        fail_next_malloc = 0;
        mallocs_failed++;
        errno = ENOMEM;
        return NULL;
    }
    return __real_malloc(n);
}

static int count_cb(const czk_journal_rec *rec, void *ctx)
{
    (void)rec;
    (*(unsigned *)ctx)++;
    return 0;
}

typedef struct settled {
    unsigned calls;
    int rc;
} settled;

static void on_settled(void *owner, void *ctx, uint64_t seq, int rc)
{
    settled *s = ctx;
    (void)owner;
    (void)seq;
    s->calls++;
    s->rc = rc;
}

static void test_commit_nomem(void)
{
    char *dir = t_tmpdir(), path[512];
    czk_journal *j = NULL;
    czk_commit *c = NULL;
    czk_error e = {0};
    settled st = {0};
    uint64_t seq = 0, next;
    unsigned n = 0;
    uint8_t payload[40];
    int rc;

    for (size_t i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)t_rand64();
    snprintf(path, sizeof(path), "%s/journal", dir);
    if (czk_journal_open(&j, path, count_cb, &n, &e) < 0 || czk_commit_create(&c, j, NULL, NULL, &e) < 0)
        DIE("journal: %s", e.msg);
    next = czk_journal_next_seq(j);

    /* the callback cannot be queued (the committer's queue is still empty:
     * the first callback allocates it) */
    fail_next_malloc = 1;
    rc = czk_commit_append(c, 7, payload, sizeof(payload), on_settled, &st, &seq, &e);
    fail_next_malloc = 0;
    CHECK(mallocs_failed == 1, "setup: the append allocated nothing (the failure was not reached)");
    CHECK(rc == -ENOMEM, "append without memory for its callback: rc %d (%s)", rc, e.msg);
    CHECK(czk_journal_next_seq(j) == next, "a record refused with -ENOMEM was written anyway (next seq %llu, was %llu)",
          (unsigned long long)czk_journal_next_seq(j), (unsigned long long)next);
    CHECK(st.calls == 0, "the callback of a refused record ran");

    /* memory again: the record goes in and its callback runs once */
    rc = czk_commit_append(c, 7, payload, sizeof(payload), on_settled, &st, &seq, &e);
    CHECK(rc == 0 && st.calls == 1 && st.rc == 0, "append: rc %d, callback %u times (rc %d): %s", rc, st.calls, st.rc,
          e.msg);
    czk_commit_destroy(c);
    czk_journal_close(j);

    n = 0;
    CHECK(czk_journal_replay_file(path, count_cb, &n, NULL, &e) == 0, "replay: %s", e.msg);
    CHECK(n == 1, "the journal holds %u records, 1 expected: the refused one became durable", n);
    t_rmtree(dir);
    free(dir);
}

#ifdef CZK_FAULT_INJECTION
typedef struct accepts {
    uint64_t job;
    unsigned n;
} accepts;

static int accept_cb(const czk_journal_rec *rec, void *ctx)
{
    accepts *a = ctx;
    gpud_rec r;
    if (rec->type == REC_ACCEPT && gpud_rec_parse(rec, &r) == 0 && r.job == a->job)
        a->n++;
    return 0;
}

/* ACCEPT records of job in the journal file under dir */
static unsigned journaled(const char *dir, uint64_t job)
{
    char path[512];
    accepts a = {.job = job};
    czk_error e = {0};
    snprintf(path, sizeof(path), "%s/journal", dir);
    if (czk_journal_replay_file(path, accept_cb, &a, NULL, &e) < 0)
        DIE("replay: %s", e.msg);
    return a.n;
}

static void test_accept_nomem(void)
{
    char *dir = t_tmpdir(), sp[CZK_CONFIG_PATH_MAX + 64], req[64];
    gpud *g = t_gpud_new(dir, 1, 1, 0);
    t_conn *cl = t_conn_new();
    const t_sent *m;
    gpud_job *jb;
    uint64_t a, b;

    /* the fault fails the first job allocation (CZK_FAULT set in main) */
    a = t_submit(g, cl, 1, 2);
    m = t_last(cl, CZK_MSG_REJECTED);
    CHECK(m && m->code == -ENOMEM && t_count(cl, 0, CZK_MSG_ACCEPTED) == 0,
          "a SUBMIT without memory for its job was not refused with -ENOMEM (%u ACCEPTED)",
          t_count(cl, 0, CZK_MSG_ACCEPTED));
    CHECK(!gpud_job_find(g, a) && g->n_active == 0 && g->part_count[P_QUEUED] == 0,
          "a refused job is in memory (%u active)", g->n_active);
    CHECK(g->pending == NULL && g->pending_jobs == 0 && g->pending_parts == 0, "the refused request is still pending");
    CHECK(journaled(dir, a) == 0, "the refused job's ACCEPT is in the journal (%u records)", journaled(dir, a));
    snprintf(sp, sizeof(sp), "%s/%llu", g->spool_dir, (unsigned long long)a);
    CHECK(access(sp, F_OK) < 0, "the refused job's spool is still there");

    /* the next one is accepted: journaled and in memory */
    unsigned mark = cl->n;
    b = t_submit(g, cl, 1, 2);
    jb = gpud_job_find(g, b);
    m = t_last(cl, CZK_MSG_ACCEPTED);
    CHECK(t_count(cl, mark, CZK_MSG_ACCEPTED) == 1 && m && m->job == b, "the next SUBMIT was not accepted");
    CHECK(jb && jb->state == J_ACTIVE && jb->nparts == 2 && g->part_count[P_QUEUED] == 2, "the accepted job is not queued");
    CHECK(journaled(dir, b) == 1, "the accepted job is journaled %u times", journaled(dir, b));
    t_check(g);

    /* after a restart: the same two answers */
    t_gpud_free(g);
    g = t_gpud_new(dir, 1, 1, 0);
    snprintf(req, sizeof(req), "req-%llu", (unsigned long long)a);
    CHECK(!gpud_job_find(g, a) && !gpud_job_find_req(g, 1000, req), "the refused job exists after a restart");
    jb = gpud_job_find(g, b);
    CHECK(jb && jb->state == J_ACTIVE, "the accepted job is gone after a restart");
    t_gpud_free(g);
    t_conn_free(cl);
    t_rmtree(dir);
    free(dir);
}
#endif

int main(void)
{
#ifdef CZK_FAULT_INJECTION
    setenv("CZK_FAULT", "gpud.accept_alloc:fail@1", 1); /* read at the first fault point */
#endif
    czk_log_init("test_gpud_nomem", 3);
    t_seed("test_gpud_nomem");
    test_commit_nomem();
#ifdef CZK_FAULT_INJECTION
    test_accept_nomem();
#else
    printf("test_gpud_nomem: the SUBMIT case needs the fault points (CZK_FAULT_INJECTION): not run\n");
#endif
    if (t_failures) {
        fprintf(stderr, "test_gpud_nomem: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_gpud_nomem: ok\n");
    return 0;
}
