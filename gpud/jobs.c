/*
 * jobs.c — czk-gpud's jobs across restarts and their admission: journal
 * replay and compaction, the witness spool sweep, the requeue of unfinished
 * partitions at start, and SUBMIT (checks, the hand-off to the intake thread,
 * ACCEPT once the witnesses are spooled).  docs/pipeline.md "Life of a job",
 * "Crashes and restarts".
 *
 * Replay runs every record through the same functions as live operation
 * (part.c) with g->replaying set: ACCEPT creates the job, DONE finishes a
 * partition (and the job with its last one), CANCEL cancels the job.  Jobs
 * accepted and neither complete nor cancelled have their partitions without
 * DONE queued again.  The journal is compacted to the records of the jobs
 * still remembered ([gpud] history_jobs) at start, and while running once it
 * has grown past journal_compact_kb and twice its size after the last
 * compaction (a loop task that table.c posts; czk_commit_compact settles
 * the group commit first, so the job table keep_cb reads is the journal's).
 *
 * Job ids come from the id mark state_dir/next_job_id (ipc/journal.h), which
 * outlives the journal: after replay it is raised past every id the journal,
 * the spool and output_dir hold, so an id is never handed out twice, even
 * when the journal was lost and the operator started a new one.  A journal
 * the mark says is missing, truncated or corrupt stops gpud (exit 2).
 *
 * A request id binds (uid, circuit, partition count, each witness's SHA-256):
 * the same submission again answers ACCEPTED (duplicate) with the same job;
 * a different one is REJECTED, naming what differs.  Comparing witnesses
 * needs their digests, so a repeated id with the same circuit and count goes
 * through the intake thread in check_only mode (hash, no spool) first.
 *
 * Every request in the intake holds its witness fds and costs the intake
 * thread a read of every witness, so a repeat is bounded like a fresh
 * submission: it is in g->pending and counts in pending_jobs and
 * pending_parts (which the caps of a fresh SUBMIT count too), it is refused
 * (-EBUSY) when the requests in the intake already hold max_jobs requests or
 * max_queued_partitions witnesses, and one request id of a uid is in the
 * intake once at a time (a second answers -EAGAIN, as a fresh one being
 * spooled does).  Its caps count the intake only, not the active jobs: a
 * client asking again for the job it submitted (a lost ACCEPTED) is answered
 * while that job still fills the queue.  The journal is not needed for the
 * answer, so a repeat is answered while the journal is down.
 *
 * A job's memory is allocated before its ACCEPT is written and taken once
 * the record is durable (part.c's gpud_job_alloc / gpud_job_adopt), and
 * the committer finds room for the record's callback before it writes
 * (ipc/commit.h): an ACCEPT in the journal is always a job in memory, and
 * a SUBMIT refused for want of memory leaves no record behind.
 *
 * Runs on the loop thread only.
 */
#include <dirent.h>
#include <pthread.h>
#include <semaphore.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/clock.h"
#include "common/base/digest.h"
#include "common/runtime/daemon.h"
#include "common/runtime/fault.h"
#include "common/base/log.h"
#include "gpud/gpud.h"

/* ------------------------------------------------------------- replay --- */

static int replay_cb(const czk_journal_rec *rec, void *ctx)
{
    gpud *g = ctx;
    gpud_job *j;
    gpud_rec r;

    if (rec->type == REC_PROBE)
        return 0;
    if (gpud_rec_parse(rec, &r) < 0) {
        czk_warn("journal: record seq %llu (type %u) is not readable: skipped", (unsigned long long)rec->seq,
                 rec->type);
        return 0;
    }
    if (r.job > g->replay_max_job)
        g->replay_max_job = r.job;
    j = gpud_job_find(g, r.job);
    switch (rec->type) {
    case REC_ACCEPT:
        if (!j && gpud_job_accept(g, &r, &j) == 0 && !j)
            return -ENOMEM;
        return 0;
    case REC_DONE:
        if (j && j->parts && r.part < j->nparts && j->parts[r.part].state < P_DONE)
            gpud_part_finish(g, &j->parts[r.part], r.status, NULL, NULL, NULL);
        return 0;
    case REC_COMPLETE:
        /* the last DONE already finished the job; a COMPLETE without every
         * DONE before it is believed, as when it was written */
        if (j && j->state == J_ACTIVE)
            gpud_job_finished(g, j, j->nfailed ? J_FAILED : J_COMPLETE);
        return 0;
    case REC_CANCEL:
        if (j && j->state == J_ACTIVE)
            gpud_job_cancel(g, j, NULL);
        return 0;
    default:
        czk_warn("journal: unknown record type %u at seq %llu: skipped", rec->type, (unsigned long long)rec->seq);
        return 0;
    }
}

/* What a compaction keeps: every record of a job remembered when it began
 * (DONE included, so the journal keeps showing each partition's DONE exactly
 * once); forgotten jobs go.  A sorted copy of the ids, so that the rewrite
 * can run on its own thread while the loop changes the job table (a job
 * forgotten meanwhile goes at the next compaction). */
typedef struct compact_job {
    gpud *g;
    czk_journal_compaction *cp;
    uint64_t *ids;
    size_t n;
    uint64_t before, t0, held; /* held: ns the loop spent in begin and finish */
    int rc;
    czk_error e;
    czk_loop_task done;
    sem_t finished; /* posted by the loop once finish has run (or will not): the thread then frees the job */
} compact_job;

static int cmp_id(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int keep_cb(const czk_journal_rec *rec, void *ctx)
{
    const compact_job *cj = ctx;
    gpud_rec r;

    return gpud_rec_parse(rec, &r) == 0 && bsearch(&r.job, cj->ids, cj->n, sizeof(*cj->ids), cmp_id) != NULL;
}

static void compact_job_free(compact_job *cj)
{
    if (!cj)
        return;
    czk_journal_compact_free(cj->cp);
    free(cj->ids);
    free(cj);
}

/* where the next compaction is due: journal_compact_kb, or twice what the
 * last one left if that is more (so a journal of many remembered jobs is not
 * rewritten over and over for little) */
static void compact_due(gpud *g)
{
    uint64_t floor = (uint64_t)g->cfg.journal_compact_kb * 1024, twice = 2 * czk_journal_tail(g->journal).end;

    g->compact_at = twice > floor ? twice : floor;
}

/* the job table trimmed and its ids copied, then journal.h's begin: through
 * the committer once there is one (every record synced and its callback
 * run, so the table reflects the whole journal) */
static compact_job *compact_begin(gpud *g, czk_error *e)
{
    compact_job *cj = calloc(1, sizeof(*cj));
    int r;

    if (!cj) {
        czk_errorf(e, -ENOMEM, "no memory to compact the journal");
        return NULL;
    }
    cj->g = g;
    cj->t0 = czk_mono_ns();
    cj->before = czk_journal_tail(g->journal).end;
    r = g->commit ? czk_commit_compact_begin(g->commit, &cj->cp, e) : czk_journal_compact_begin(g->journal, &cj->cp, e);
    cj->held = czk_mono_ns() - cj->t0;
    if (r < 0) {
        compact_job_free(cj);
        return NULL;
    }
    gpud_jobs_trim(g);
    cj->ids = malloc((g->n_active + g->n_history + 1) * sizeof(*cj->ids));
    if (!cj->ids) {
        czk_errorf(e, -ENOMEM, "no memory to compact the journal");
        compact_job_free(cj);
        return NULL;
    }
    for (gpud_job *j = g->jobs_head; j; j = j->next)
        if (cj->n < g->n_active + g->n_history + 1)
            cj->ids[cj->n++] = j->id;
    qsort(cj->ids, cj->n, sizeof(*cj->ids), cmp_id);
    return cj;
}

static int compact_finish(gpud *g, compact_job *cj, czk_error *e)
{
    uint64_t kept, dropped, t0 = czk_mono_ns();
    int r = g->commit ? czk_commit_compact_finish(g->commit, cj->cp, e) : czk_journal_compact_finish(g->journal, cj->cp, e);

    cj->held += czk_mono_ns() - t0;
    compact_due(g);
    if (r < 0)
        return r;
    czk_journal_compact_counts(cj->cp, &kept, &dropped);
    czk_metric_set(g->m_journal_bytes, (int64_t)czk_journal_tail(g->journal).end);
    czk_info("journal compacted: %llu of %llu records kept (%zu jobs remembered), %llu bytes to %llu, in %.1f ms "
             "(%.1f ms on the loop thread); next at %llu bytes", (unsigned long long)kept,
             (unsigned long long)(kept + dropped), cj->n, (unsigned long long)cj->before,
             (unsigned long long)czk_journal_tail(g->journal).end, (double)(czk_mono_ns() - cj->t0) * 1e-6,
             (double)cj->held * 1e-6, (unsigned long long)g->compact_at);
    return 0;
}

int gpud_jobs_compact(gpud *g, czk_error *e)
{
    compact_job *cj = compact_begin(g, e);
    int r;

    if (!cj)
        return e->code < 0 ? e->code : -EIO;
    r = czk_journal_compact_run(cj->cp, keep_cb, cj, e);
    if (r == 0)
        r = compact_finish(g, cj, e);
    else
        compact_due(g);
    compact_job_free(cj);
    return r;
}

static void compact_failed(gpud *g, const char *msg)
{
    czk_warn("journal compaction failed (continuing with the full journal; next try at %llu bytes): %s",
             (unsigned long long)g->compact_at, msg);
}

/* back on the loop: the rewrite is done, the records written meanwhile are
 * moved over and the new file takes the journal's place; the thread then
 * frees the job (closing the old file, whose blocks are freed then) */
static void on_compacted(czk_loop_task *t, void *ctx)
{
    compact_job *cj = ctx;
    gpud *g = cj->g;

    (void)t;
    g->compact_job = NULL;
    czk_fault("gpud.compact_finish");
    if (cj->rc == 0 && compact_finish(g, cj, &cj->e) == 0)
        czk_metric_inc(g->m_journal_compactions, 1);
    else if (!czk_journal_failed(g->journal)) { /* poisoned: the observer has stopped gpud (table.c) */
        compact_due(g);
        compact_failed(g, cj->e.msg);
    }
    sem_post(&cj->finished); /* cj is the thread's from here */
}

static void *compact_main(void *arg)
{
    compact_job *cj = arg;

    czk_fault("gpud.compact_run");
    cj->rc = czk_journal_compact_run(cj->cp, keep_cb, cj, &cj->e);
    czk_loop_post(cj->g->loop, &cj->done);
    while (sem_wait(&cj->finished) < 0 && errno == EINTR)
        ;
    czk_fault("gpud.compact_free");
    sem_destroy(&cj->finished);
    compact_job_free(cj);
    return NULL;
}

/* posted by table.c once the journal has reached compact_at */
static void on_compact_task(czk_loop_task *t, void *ctx)
{
    gpud *g = ctx;
    compact_job *cj;
    czk_error e = {0};
    int r;

    (void)t;
    g->compact_posted = 0;
    if (g->compact_job || g->journal_down || czk_journal_failed(g->journal))
        return; /* one at a time; an episode's probes come first (the next append posts it again) */
    if (g->compact_th_live) { /* the last one's thread, done or about to be */
        pthread_join(g->compact_th, NULL);
        g->compact_th_live = 0;
    }
    if (!(cj = compact_begin(g, &e))) {
        compact_due(g);
        compact_failed(g, e.msg);
        return;
    }
    cj->done.fn = on_compacted;
    cj->done.ctx = cj;
    sem_init(&cj->finished, 0, 0);
    if ((r = pthread_create(&g->compact_th, NULL, compact_main, cj)) != 0) {
        compact_due(g);
        compact_failed(g, strerror(r));
        sem_destroy(&cj->finished);
        compact_job_free(cj);
        return;
    }
    g->compact_job = cj;
    g->compact_th_live = 1;
}

void gpud_jobs_compact_stop(gpud *g)
{
    if (g->compact_job) /* its done task will not run (the loop has stopped): dropped */
        sem_post(&g->compact_job->finished);
    g->compact_job = NULL;
    if (g->compact_th_live)
        pthread_join(g->compact_th, NULL);
    g->compact_th_live = 0;
}

/* removes spool directories of jobs that are not active (crash before ACCEPT) */
static void spool_sweep(gpud *g)
{
    DIR *d = opendir(g->spool_dir);
    struct dirent *de;
    if (!d)
        return;
    while ((de = readdir(d))) {
        char *end;
        unsigned long long id = strtoull(de->d_name, &end, 10);
        gpud_job *j;
        if (de->d_name[0] == '.' || *end)
            continue;
        j = gpud_job_find(g, id);
        if (!j || j->state != J_ACTIVE) {
            czk_info("spool: removing witnesses of job %llu (not an active job)", id);
            gpud_spool_remove(g, id);
        }
    }
    closedir(d);
}

/* the highest all-digit entry name of dir (job directories), 0 if none */
static uint64_t max_dir_id(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    uint64_t max = 0;

    if (!d)
        return 0;
    while ((de = readdir(d))) {
        char *end;
        unsigned long long id;
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        errno = 0;
        id = strtoull(de->d_name, &end, 10);
        if (!errno && !*end && id > max)
            max = id;
    }
    closedir(d);
    return max;
}

int gpud_jobs_open(gpud *g, czk_error *e)
{
    char path[CZK_CONFIG_PATH_MAX + 16], mark[CZK_CONFIG_PATH_MAX + 16];
    const czk_journal_info *info;
    uint64_t max, m;
    int r;

    snprintf(g->spool_dir, sizeof(g->spool_dir), "%s/spool", g->cfg.state_dir);
    if ((r = czk_daemon_mkdirs(g->spool_dir, 0750, e)) < 0)
        return r;
    snprintf(path, sizeof(path), "%s/journal", g->cfg.state_dir);
    snprintf(mark, sizeof(mark), "%s/next_job_id", g->cfg.state_dir);
    if ((r = czk_idmark_open(&g->idmark, mark, 64, e)) < 0) {
        if (r == -EBADMSG)
            g->exit_status = 2; /* only the operator can set it (czk journal idmark) */
        return r;
    }
    g->replaying = 1;
    r = czk_journal_open_ex(&g->journal, path, czk_idmark_pristine(g->idmark) ? CZK_JOURNAL_CREATE : 0,
                            czk_idmark_floor(g->idmark), replay_cb, g, e);
    g->replaying = 0;
    if (r < 0) {
        /* corrupt, missing or truncated: restarting cannot fix it, the
         * message names the way out (czk journal check | salvage) */
        if (r == -EBADMSG || r == -ENOENT || r == -ESTALE)
            g->exit_status = 2;
        return r;
    }
    max = g->replay_max_job;
    if ((m = max_dir_id(g->spool_dir)) > max)
        max = m;
    if ((m = max_dir_id(g->cfg.output_dir)) > max)
        max = m;
    if ((r = czk_idmark_raise(g->idmark, max + 1, e)) < 0)
        return r;
    gpud_jobs_trim(g); /* replay trims once, here */
    info = czk_journal_get_info(g->journal);
    czk_info("journal \"%s\": %llu records replayed%s, %u active jobs, %u finished remembered, next job id %llu",
             path, (unsigned long long)info->records, info->torn_bytes ? " (torn tail trimmed)" : "", g->n_active,
             g->n_history, (unsigned long long)czk_idmark_peek(g->idmark));
    g->compact_task.fn = on_compact_task;
    g->compact_task.ctx = g;
    compact_due(g);
    if (info->records > 0 && (r = gpud_jobs_compact(g, e)) < 0) {
        if (czk_journal_failed(g->journal))
            return r; /* the renamed file may not be durable: a restart opens what the disk holds */
        czk_warn("journal compaction failed (continuing with the full journal): %s", e->msg);
    }
    spool_sweep(g);
    return gpud_journal_commit_open(g, e);
}

void gpud_jobs_requeue_all(gpud *g)
{
    unsigned n = 0;
    for (gpud_job *j = g->jobs_head; j; j = j->next) {
        if (j->state != J_ACTIVE)
            continue;
        for (uint32_t i = 0; i < j->nparts; i++) {
            gpud_part *p = &j->parts[i];
            char sp[CZK_CONFIG_PATH_MAX + 64];
            if (p->state != P_QUEUED || p->linked)
                continue;
            if (j->circuit == UINT32_MAX) {
                gpud_part_finish(g, p, -ENOENT, "the job's circuit is no longer configured", NULL, NULL);
                if (j->state != J_ACTIVE)
                    break; /* its last partition: the job is over, its partitions freed */
                continue;
            }
            gpud_spool_path(g, j->id, i, sp, sizeof(sp));
            if (access(sp, R_OK) < 0) {
                gpud_part_finish(g, p, -ENOENT, "the spooled witness is missing", NULL, NULL);
                if (j->state != J_ACTIVE)
                    break;
                continue;
            }
            p->t_enq = gpud_now(g);
            gpud_lane_push(g, p, 0);
            n++;
        }
    }
    if (n)
        czk_info("journal: %u partitions of unfinished jobs queued again", n);
    gpud_sched_dirty(g);
}

void gpud_jobs_free(gpud *g)
{
    gpud_job *j;

    gpud_jobs_compact_stop(g);
    if (g->commit) /* records awaiting a sync are synced and their callbacks run */
        gpud_journal_commit_close(g);
    j = g->jobs_head;
    while (j) {
        gpud_job *n = j->next;
        gpud_job_free_parts(g, j);
        free(j->wsha);
        free(j);
        j = n;
    }
    g->jobs_head = g->jobs_tail = NULL;
    memset(g->hash, 0, sizeof(g->hash));
    if (g->journal && g->idmark && !czk_journal_failed(g->journal)) {
        /* a clean stop: the journal reached this seq, a later start must
         * find at least that much of it */
        czk_error e = {0};
        if (czk_idmark_set_floor(g->idmark, czk_journal_next_seq(g->journal) - 1, &e) < 0)
            czk_warn("could not record the journal's last seq in the id mark: %s", e.msg);
    }
    if (g->journal)
        czk_journal_close(g->journal);
    g->journal = NULL;
    if (g->idmark)
        czk_idmark_close(g->idmark);
    g->idmark = NULL;
}

int gpud_job_id_next(gpud *g, uint64_t *id, czk_error *e)
{
    return czk_idmark_next(g->idmark, czk_journal_durable_seq(g->journal), id, e);
}

/* ------------------------------------------------------------- submit --- */

/* a printable ASCII request id (the protocol bounds its length to
 * CZK_MSG_REQID_MAX): what the client chose, safe to echo and to list */
static int reqid_ok(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || (unsigned char)*s > 0x7e)
            return 0;
    return 1;
}

static void reject(gpud *g, czk_conn *c, const char *req, int code, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void reject(gpud *g, czk_conn *c, const char *req, int code, const char *fmt, ...)
{
    czk_msg m;
    va_list ap;
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_REJECTED;
    /* the id goes back as the client sent it only when it is printable */
    if (reqid_ok(req))
        snprintf(m.u.rejected.request_id, sizeof(m.u.rejected.request_id), "%s", req);
    m.u.rejected.code = code;
    gpud_count_reject(g, code);
    va_start(ap, fmt);
    vsnprintf(m.u.rejected.reason, sizeof(m.u.rejected.reason), fmt, ap);
    va_end(ap);
    czk_info("submit \"%s\" rejected: %s", m.u.rejected.request_id, m.u.rejected.reason);
    gpud_send(g, c, &m, NULL, 0);
}

/* a request of this uid with this request id in the intake or awaiting its
 * ACCEPT's sync: a fresh submission or a repeat being compared */
static gpud_submit_req *pending_find(gpud *g, uint32_t uid, const char *req)
{
    if (!req[0])
        return NULL;
    for (gpud_submit_req *r = g->pending; r; r = r->next)
        if (r->uid == uid && !strcmp(r->req, req))
            return r;
    return NULL;
}

/* the intake thread is done with r (intake.c posts r->done_task) */
static void on_spooled(czk_loop_task *t, void *ctx)
{
    gpud_submit_req *r = ctx;
    (void)t;
    gpud_submit_finish(r->g, r);
}

void gpud_submit_req_free(gpud_submit_req *r)
{
    if (!r)
        return;
    for (uint32_t i = 0; r->fds && i < r->nparts; i++)
        if (r->fds[i] >= 0)
            close(r->fds[i]);
    gpud_job_discard(r->jmem);
    free(r->fds);
    free(r->wsha);
    free(r);
}

gpud_submit_req *gpud_submit_req_new(gpud *g, uint32_t circuit, uint32_t nparts)
{
    gpud_submit_req *r = calloc(1, sizeof(*r));
    const gpud_circuit *c = &g->circuits[circuit];

    if (!r)
        return NULL;
    r->nparts = nparts;
    r->fds = malloc((nparts ? nparts : 1) * sizeof(int));
    r->wsha = calloc(nparts ? nparts : 1, CZK_SHA256_LEN);
    if (!r->fds || !r->wsha) {
        r->nparts = 0; /* no fd to close */
        gpud_submit_req_free(r);
        return NULL;
    }
    for (uint32_t i = 0; i < nparts; i++)
        r->fds[i] = -1;
    r->g = g;
    r->circuit = circuit;
    /* the loop's view of the circuit now, for the intake thread (intake.c) */
    snprintf(r->cname, sizeof(r->cname), "%s", c->name);
    r->n_vars = c->zkey.n_vars;
    r->curve = c->zkey.curve;
    r->done_task.fn = on_spooled;
    r->done_task.ctx = r;
    return r;
}

static void req_free(gpud_submit_req *r) { gpud_submit_req_free(r); }

/* r goes to the intake thread: it counts against the pending caps until
 * pending_unlink */
static void pending_add(gpud *g, gpud_submit_req *r)
{
    r->next = g->pending;
    g->pending = r;
    g->pending_jobs++;
    g->pending_parts += r->nparts;
    gpud_intake_queue(g, r);
}

static void accepted_dup(gpud *g, czk_conn *c, const char *req, gpud_job *j, uint32_t flags)
{
    czk_msg m;
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_ACCEPTED;
    snprintf(m.u.accepted.request_id, sizeof(m.u.accepted.request_id), "%s", req);
    m.u.accepted.job_id = j->id;
    m.u.accepted.duplicate = 1;
    gpud_send(g, c, &m, NULL, 0);
    /* the job's past events are gone: answer as WATCH does, so a client
     * that only waits for events learns where the job is (and the end of
     * a job that is over) */
    if (flags & CZK_SUBMIT_F_WAIT)
        gpud_watch_job(g, j, c);
}

/* the journal could not take a record: the reason every refused submit gets */
static void reject_journal_down(gpud *g, czk_conn *c, const char *req)
{
    int code = g->journal_err ? g->journal_err : -EIO;
    if (code == -ENOSPC || code == -EDQUOT)
        reject(g, c, req, code, "state_dir is full: the job journal cannot be written (%s); no new jobs are "
               "accepted until space is freed in \"%s\"", strerror(-code), g->cfg.state_dir);
    else
        reject(g, c, req, code, "the job journal in state_dir \"%s\" cannot be written (%s); no new jobs are "
               "accepted until it can", g->cfg.state_dir, strerror(-code));
}

/* a request id this uid used before for job j: the same submission is a
 * duplicate, anything else is refused naming the difference */
static void submit_repeat(gpud *g, czk_conn *c, const czk_msg_submit *s, int *fds, int nfds, gpud_job *j,
                          uint32_t uid)
{
    char esc[CZK_MSG_STR_SHORT * 4 + 8];
    gpud_submit_req *r;

    if (strcmp(j->cname, s->circuit))
        return reject(g, c, s->request_id, -EEXIST,
                      "request id \"%s\" was used for job %llu of circuit \"%s\", not for circuit \"%s\": choose "
                      "another request id", s->request_id, (unsigned long long)j->id, j->cname,
                      czk_esc(s->circuit, esc, sizeof(esc)));
    if (j->nparts != s->n_partitions || (uint32_t)nfds != s->n_partitions)
        return reject(g, c, s->request_id, -EEXIST,
                      "request id \"%s\" was used for job %llu of %u partition%s, not %u: choose another request id",
                      s->request_id, (unsigned long long)j->id, j->nparts, j->nparts == 1 ? "" : "s",
                      s->n_partitions);
    if (!j->wsha || j->circuit == UINT32_MAX) /* journaled before digests were: circuit and count decide */
        return accepted_dup(g, c, s->request_id, j, s->flags);
    /* its witnesses go through the intake like a fresh submission's: bounded
     * alike (the comment at the top) */
    if (pending_find(g, uid, s->request_id))
        return reject(g, c, s->request_id, -EAGAIN,
                      "a submission with request id \"%s\" is still being compared with job %llu: wait for its "
                      "answer", s->request_id, (unsigned long long)j->id);
    if (g->pending_jobs >= (unsigned)g->cfg.max_jobs)
        return reject(g, c, s->request_id, -EBUSY, "%u submissions are being spooled, max_jobs = %d: try again later",
                      g->pending_jobs, g->cfg.max_jobs);
    if (g->pending_parts + s->n_partitions > (unsigned)g->cfg.max_queued_partitions)
        return reject(g, c, s->request_id, -EBUSY,
                      "%u witnesses are being spooled, %u more exceed max_queued_partitions = %d: try again later",
                      g->pending_parts, s->n_partitions, g->cfg.max_queued_partitions);
    if (!(r = gpud_submit_req_new(g, j->circuit, s->n_partitions)))
        return reject(g, c, s->request_id, -ENOMEM, "out of memory");
    r->conn = c;
    r->check_only = 1;
    snprintf(r->req, sizeof(r->req), "%s", s->request_id);
    r->flags = s->flags;
    r->uid = uid;
    r->job = j->id;
    for (int i = 0; i < nfds; i++) {
        r->fds[i] = fds[i];
        fds[i] = -1;
    }
    pending_add(g, r);
}

void gpud_submit(gpud *g, czk_conn *c, const czk_msg_submit *s, int *fds, int nfds)
{
    uint32_t uid = (uint32_t)czk_conn_cred(c)->uid;
    unsigned circ = UINT32_MAX;
    char esc[CZK_MSG_STR_SHORT * 4 + 8];
    gpud_submit_req *r;
    gpud_job *j;
    czk_error e = {0};
    int rc;

    if (!reqid_ok(s->request_id))
        return reject(g, c, s->request_id, -EINVAL,
                      "the request id must be printable ASCII (at most %d characters)", CZK_MSG_REQID_MAX);
    /* ids are per uid: another user's request id never finds this job */
    if ((j = gpud_job_find_req(g, uid, s->request_id)))
        return submit_repeat(g, c, s, fds, nfds, j, uid);
    if (pending_find(g, uid, s->request_id))
        return reject(g, c, s->request_id, -EAGAIN,
                      "a submission with request id \"%s\" is still being spooled or journaled", s->request_id);
    if (g->journal_down && gpud_journal_probe(g) < 0)
        return reject_journal_down(g, c, s->request_id);
    for (unsigned i = 0; i < g->n_circuits; i++)
        if (!strcmp(g->circuits[i].name, s->circuit))
            circ = i;
    if (circ == UINT32_MAX)
        return reject(g, c, s->request_id, -ENOENT, "unknown circuit \"%s\"", czk_esc(s->circuit, esc, sizeof(esc)));
    if (g->circuits[circ].key_state == GPUD_KEY_FAILED)
        /* a loading key is fine: the job waits in its lane */
        return reject(g, c, s->request_id, -EKEYREJECTED, "circuit \"%s\" is not available: its key failed to "
                      "load: %s (fix the zkey and restart czk-gpud)", czk_esc(s->circuit, esc, sizeof(esc)),
                      g->circuits[circ].key_why);
    if (!gpud_result_fits(g, circ)) /* refused now rather than failed after the GPU's work */
        return reject(g, c, s->request_id, -EMSGSIZE, "circuit \"%s\" has %u public signals, more than one RESULT "
                      "record carries", g->circuits[circ].name, g->circuits[circ].zkey.n_public);
    if (s->n_partitions != (uint32_t)nfds)
        return reject(g, c, s->request_id, -EINVAL, "%u partitions but %d witness descriptors", s->n_partitions,
                      nfds);
    if (s->n_partitions == 0)
        return reject(g, c, s->request_id, -EINVAL, "a job needs at least one partition");
    if (s->n_partitions > (uint32_t)g->cfg.max_partitions_per_job)
        return reject(g, c, s->request_id, -E2BIG, "%u partitions exceed max_partitions_per_job = %d",
                      s->n_partitions, g->cfg.max_partitions_per_job);
    if (g->n_active + g->pending_jobs >= (unsigned)g->cfg.max_jobs)
        return reject(g, c, s->request_id, -EBUSY, "%u jobs in progress, max_jobs = %d: try again later",
                      g->n_active + g->pending_jobs, g->cfg.max_jobs);
    if (g->part_count[P_QUEUED] + g->pending_parts + s->n_partitions > (unsigned)g->cfg.max_queued_partitions)
        return reject(g, c, s->request_id, -EBUSY,
                      "queue full: %u partitions queued, %u more exceed max_queued_partitions = %d",
                      g->part_count[P_QUEUED] + g->pending_parts, s->n_partitions, g->cfg.max_queued_partitions);
    if (!(r = gpud_submit_req_new(g, circ, s->n_partitions)))
        return reject(g, c, s->request_id, -ENOMEM, "out of memory");
    if ((rc = gpud_job_id_next(g, &r->job, &e)) < 0) {
        /* the id mark lives in state_dir beside the journal */
        czk_err("could not reserve job ids: %s", e.msg);
        req_free(r);
        return reject(g, c, s->request_id, rc, "%scould not reserve a job id (%s)",
                      rc == -ENOSPC || rc == -EDQUOT ? "state_dir is full: " : "", strerror(-rc));
    }
    r->conn = c;
    snprintf(r->req, sizeof(r->req), "%s", s->request_id);
    r->flags = s->flags;
    r->lane = s->priority < GPUD_LANES ? s->priority : GPUD_LANES - 1;
    r->uid = uid;
    r->tsub = czk_real_ns();
    for (int i = 0; i < nfds; i++) { /* take the fds: the loop would close them after on_msg */
        r->fds[i] = fds[i];
        fds[i] = -1;
    }
    pending_add(g, r);
}

void gpud_submit_client_gone(gpud *g, czk_conn *c)
{
    for (gpud_submit_req *r = g->pending; r; r = r->next)
        if (r->conn == c)
            r->conn = NULL;
}

/* a repeated request id's witnesses were hashed: same job, or refused */
static void repeat_finish(gpud *g, gpud_submit_req *q)
{
    gpud_job *j = gpud_job_find(g, q->job);

    if (!q->conn || g->stopping)
        return;
    if (q->rc < 0)
        return reject(g, q->conn, q->req, q->rc, "%s", q->why);
    if (!j || j->uid != q->uid || strcmp(j->req, q->req))
        /* forgotten meanwhile (history trimmed): the client may ask again */
        return reject(g, q->conn, q->req, -EAGAIN, "job %llu of request id \"%s\" changed while the witnesses were "
                      "compared: try again", (unsigned long long)q->job, q->req);
    for (uint32_t i = 0; j->wsha && i < j->nparts; i++)
        if (memcmp(j->wsha + (size_t)i * CZK_SHA256_LEN, q->wsha + (size_t)i * CZK_SHA256_LEN, CZK_SHA256_LEN)) {
            char was[CZK_SHA256_HEX], now[CZK_SHA256_HEX];
            czk_hex(j->wsha + (size_t)i * CZK_SHA256_LEN, CZK_SHA256_LEN, was);
            czk_hex(q->wsha + (size_t)i * CZK_SHA256_LEN, CZK_SHA256_LEN, now);
            return reject(g, q->conn, q->req, -EEXIST,
                          "partition %u: its witness (sha256 %.16s...) differs from the one submitted with request "
                          "id \"%s\" for job %llu (sha256 %.16s...): choose another request id", i, now, q->req,
                          (unsigned long long)j->id, was);
        }
    accepted_dup(g, q->conn, q->req, j, q->flags);
}

static void pending_unlink(gpud *g, gpud_submit_req *q)
{
    for (gpud_submit_req **pp = &g->pending; *pp; pp = &(*pp)->next)
        if (*pp == q) {
            *pp = q->next;
            break;
        }
    g->pending_jobs--;
    g->pending_parts -= q->nparts;
}

static void accept_rec(const gpud *g, const gpud_submit_req *q, gpud_rec *r)
{
    memset(r, 0, sizeof(*r));
    r->job = q->job;
    snprintf(r->req, sizeof(r->req), "%s", q->req);
    snprintf(r->circ, sizeof(r->circ), "%s", g->circuits[q->circuit].name);
    r->lane = q->lane;
    r->nparts = q->nparts;
    r->uid = q->uid;
    r->tsub = q->tsub;
    r->wsha = q->wsha;
}

/* the ACCEPT record is settled (ipc/commit.h): durable, so the job exists,
 * is queued and the client hears ACCEPTED (if it is still there: the job is
 * accepted either way); or cut off by a failed sync, so it never was */
static void accept_settled(void *owner, void *ctx, uint64_t seq, int rc)
{
    gpud *g = owner;
    gpud_submit_req *q = ctx;
    gpud_job *j;
    gpud_rec r;
    czk_msg m;

    (void)seq;
    pending_unlink(g, q);
    if (rc < 0 && czk_journal_failed(g->journal)) {
        /* poisoned (ipc/journal.h): whether the record is on the disk is
         * known only when a restart opens the journal, so its witnesses stay
         * for replay (the start-up sweep removes them if the record is gone)
         * and the client is told to ask again under the same request id */
        if (q->conn)
            reject(g, q->conn, q->req, rc,
                   "the journal failed and gpud is restarting: submit again with the same request id to learn "
                   "whether the job was accepted");
        req_free(q);
        return;
    }
    if (rc < 0) {
        /* not in the journal, so not accepted: nothing of it stays */
        gpud_spool_remove(g, q->job);
        if (q->conn && g->journal_down)
            reject_journal_down(g, q->conn, q->req);
        else if (q->conn)
            reject(g, q->conn, q->req, rc, "could not journal the job: %s", strerror(-rc));
        req_free(q);
        return;
    }
    czk_fault("gpud.after_accept_journal");
    accept_rec(g, q, &r);
    j = q->jmem; /* allocated before the record was written: taking it cannot fail */
    q->jmem = NULL;
    gpud_job_adopt(g, &r, j);
    if (q->conn) {
        memset(&m, 0, sizeof(m));
        m.type = CZK_MSG_ACCEPTED;
        snprintf(m.u.accepted.request_id, sizeof(m.u.accepted.request_id), "%s", q->req);
        m.u.accepted.job_id = r.job;
        gpud_send(g, q->conn, &m, NULL, 0);
        czk_fault("gpud.after_accepted_sent");
    }
    czk_info("job %llu accepted: circuit %s, %u partitions, lane %u, uid %u, request \"%s\"",
             (unsigned long long)r.job, r.circ, r.nparts, r.lane, r.uid, r.req);
    czk_metric_set(g->m_jobs, g->n_active);
    if ((q->flags & CZK_SUBMIT_F_WAIT) && q->conn)
        gpud_watch_add(g, j, q->conn);
    for (uint32_t i = 0; i < j->nparts; i++) {
        j->parts[i].t_enq = gpud_now(g);
        gpud_lane_push(g, &j->parts[i], 0);
    }
    gpud_event(g, j, CZK_PARTITION_ALL, CZK_STAGE_QUEUED, 0, NULL, NULL, NULL);
    gpud_sched_dirty(g);
    req_free(q);
}

/* the intake thread is done with q: its ACCEPT is written and goes with the
 * next group sync; q stays in g->pending (a repeat of its request id waits)
 * until accept_settled */
void gpud_submit_finish(gpud *g, gpud_submit_req *q)
{
    gpud_rec r;
    int rc;

    if (q->check_only) {
        pending_unlink(g, q);
        repeat_finish(g, q);
        goto out;
    }
    if (!q->conn || g->stopping) {
        /* the client went away before ACCEPTED: nothing is journaled, nothing kept */
        pending_unlink(g, q);
        czk_info("submit \"%s\": the client went away while its witnesses were spooled: dropped", q->req);
        gpud_spool_remove(g, q->job);
        goto out;
    }
    if (q->rc < 0) {
        pending_unlink(g, q);
        gpud_spool_remove(g, q->job);
        reject(g, q->conn, q->req, q->rc, "%s", q->why);
        goto out;
    }
    if (g->journal_down && gpud_journal_probe(g) < 0) { /* went down while this one was spooled */
        pending_unlink(g, q);
        gpud_spool_remove(g, q->job);
        reject_journal_down(g, q->conn, q->req);
        goto out;
    }
    /* the job's memory before its record: a durable ACCEPT must become a job
     * (accept_settled), and one refused here leaves nothing in the journal */
    if (czk_fault("gpud.accept_alloc") < 0 || !(q->jmem = gpud_job_alloc(q->nparts, 1))) {
        pending_unlink(g, q);
        gpud_spool_remove(g, q->job);
        reject(g, q->conn, q->req, -ENOMEM, "out of memory for the job: not accepted, try again later");
        goto out;
    }
    accept_rec(g, q, &r);
    czk_fault("gpud.before_accept_journal");
    if ((rc = gpud_rec_defer(g, REC_ACCEPT, &r, accept_settled, q)) < 0) {
        /* not in the journal, so not accepted: nothing of it stays */
        pending_unlink(g, q);
        gpud_spool_remove(g, r.job);
        if (g->journal_down)
            reject_journal_down(g, q->conn, q->req);
        else
            reject(g, q->conn, q->req, rc, "could not journal the job: %s", strerror(-rc));
        goto out;
    }
    return; /* q is accept_settled's now (without a loop it has run already) */
out:
    req_free(q);
}
