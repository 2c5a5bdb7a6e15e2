/*
 * table.c — czk-gpud's job table (hash by id, list in acceptance order), the
 * journal records and the witness spool's paths.  Journal records, each one
 * msgpack map encoded and decoded by the schemas in ipc/msg.c (czk_jrec_schema;
 * the bytes are those older builds wrote, so their journals replay), each
 * CZK_JOURNAL_SYNC = fdatasync before the promise it backs is made (part.c
 * decides when each is written; "group": durable with the next sync of the
 * group commit, ipc/commit.h, which runs off the loop thread):
 *   ACCEPT   {job, req, circ, lane, nparts, uid, tsub, wsha}  sync, before ACCEPTED
 *   DONE     {job, part, status}            group, the partition DONE once durable (status 0,
 *                                           the finalizer's DONE); sync for a failure
 *   COMPLETE {job}                          group, nothing waits for it
 *   CANCEL   {job}                          sync, before the job's resources go
 *   PROBE    {probe}                        sync, while appends fail: do they work again?
 * wsha (bin, nparts * 32 bytes): the SHA-256 of each spooled witness, which
 * binds the request id to the witnesses; ACCEPT records written before it
 * existed have none and still replay (the job then dedupes by circuit and
 * partition count only).
 *
 * Append failures (a write, or a sync, which cuts off every record after
 * the durable mark): the records are not in the journal (journal.h); the
 * first failure starts an episode (journal_down, one log line), every record
 * lost counts in czk_gpud_journal_append_failures_total, and a successful sync (a
 * probe's, or any group's) ends it with one more line, but only once
 * state_dir has GPUD_JOURNAL_HEADROOM bytes free again: a small record may
 * still fit in the last page of a full disk, and an episode that ended on it
 * would start again with the next ACCEPT.  Loop thread only (the committer's
 * sync thread runs only the sync itself).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/base/digest.h"
#include "common/base/log.h"
#include "common/runtime/fault.h"
#include "gpud/gpud.h"

/* ------------------------------------------------------------ records --- */

_Static_assert((int)REC_ACCEPT == (int)CZK_JREC_ACCEPT && (int)REC_DONE == (int)CZK_JREC_DONE &&
                   (int)REC_COMPLETE == (int)CZK_JREC_COMPLETE && (int)REC_CANCEL == (int)CZK_JREC_CANCEL &&
                   (int)REC_PROBE == (int)CZK_JREC_PROBE,
               "journal record types: one numbering (ipc/msg.h czk_jrec_schema)");

_Static_assert(sizeof(((gpud_rec *)0)->circ) == CZK_MSG_CIRCUIT_NAME &&
                   sizeof(((gpud_rec *)0)->req) == sizeof(((czk_jrec *)0)->req),
               "gpud_rec strings fit czk_jrec's");

static const char *rec_name(uint16_t type) { return czk_jrec_type_name(type); }

#define GPUD_JOURNAL_HEADROOM (256u * 1024u)

/* does state_dir have room for more than the next record?  (1 when it cannot be told) */
static int headroom(const gpud *g)
{
    struct statvfs sv;
    if (statvfs(g->cfg.state_dir, &sv) < 0)
        return 1;
    return (uint64_t)sv.f_bavail * sv.f_frsize >= GPUD_JOURNAL_HEADROOM;
}

/* records that could not be written, or were cut off again after a failed
 * sync: what they stood for is not done.  Starts (or continues) an episode. */
static void journal_failed(gpud *g, const char *what, uint64_t records, int rc, const char *msg)
{
    g->journal_failures_total += records;
    czk_metric_inc(g->m_journal_failures, (int64_t)records);
    if (czk_journal_failed(g->journal)) {
        /* what failed could not be cut off: only a new open (which trims it
         * as a torn tail) recovers; systemd restarts gpud */
        czk_err("journal: could not %s and could not cut it off again: %s; stopping (a restart re-validates the "
                "journal)", what, msg);
        g->exit_status = 1;
        g->journal_down = 1;
        g->journal_err = rc;
        if (g->loop)
            czk_loop_stop(g->loop);
        return;
    }
    if (!g->journal_down) {
        czk_err("journal: could not %s: %s; refusing new jobs until appends work again (%s)", what, msg,
                rc == -ENOSPC || rc == -EDQUOT ? "free space in state_dir" : "check the disk under state_dir");
        g->journal_down = 1;
        g->journal_err = rc;
    }
}

/* after every sync (ipc/commit.h's observer), before its callbacks run */
static void journal_observed(void *ctx, int rc, const char *msg, uint64_t ns, uint64_t records)
{
    gpud *g = ctx;
    char what[64];

    czk_metric_observe(g->m_journal_sync, (double)ns * 1e-9);
    if (rc < 0) {
        g->journal_sync_failures++;
        snprintf(what, sizeof(what), "sync %llu records", (unsigned long long)records);
        journal_failed(g, what, records, rc, msg);
        return;
    }
    czk_metric_inc(g->m_journal_syncs, 1);
    czk_metric_inc(g->m_journal_records, (int64_t)records);
    if (records && g->journal_down && (g->journal_err == -EIO || headroom(g))) {
        czk_info("journal: appends work again (%llu records synced): accepting jobs again",
                 (unsigned long long)records);
        g->journal_down = 0;
        g->journal_recovered = 1;
    }
}

#ifdef CZK_FAULT_INJECTION
/* the crash and slow-disk tests: "gpud.journal_sync:sleep=MS" makes every
 * sync that long, "...:fail" fails it */
static int journal_sync_fault(int fd, void *ctx)
{
    (void)ctx;
    if (czk_fault("gpud.journal_sync") < 0)
        return -EIO;
    return fdatasync(fd) < 0 ? -errno : 0;
}
#endif

int gpud_journal_commit_open(gpud *g, czk_error *e)
{
    /* CZK_GPUD_JOURNAL_INLINE=1 (benchmarks only: the baseline of
     * bench/pipeline/bench_journal.sh): every record synced on the loop
     * thread before gpud goes on, as before the group commit */
    const char *inl = getenv("CZK_GPUD_JOURNAL_INLINE");
    int r = czk_commit_create(&g->commit, g->journal, inl && !strcmp(inl, "1") ? NULL : g->loop, g, e);
    if (r < 0)
        return r;
    if (inl && !strcmp(inl, "1") && g->loop)
        czk_warn("CZK_GPUD_JOURNAL_INLINE=1: journal records are synced on the loop thread (benchmark baseline)");
    czk_commit_set_observer(g->commit, journal_observed, g);
#ifdef CZK_FAULT_INJECTION
    czk_commit_set_sync_fn(g->commit, journal_sync_fault, NULL);
#endif
    return 0;
}

void gpud_journal_settle(gpud *g)
{
    czk_error e = {0};
    if (g->commit)
        czk_commit_flush(g->commit, &e); /* a failure went to journal_observed */
}

void gpud_journal_commit_close(gpud *g)
{
    gpud_journal_settle(g);
    czk_commit_destroy(g->commit);
    g->commit = NULL;
}

/* posts the compaction (jobs.c) once the file has reached compact_at: it
 * runs from the loop, where no pointer is held across it */
static void journal_grew(gpud *g)
{
    uint64_t end = czk_journal_tail(g->journal).end;

    czk_metric_set(g->m_journal_bytes, (int64_t)end);
    if (!g->loop || g->compact_posted || g->compact_job || !g->cfg.journal_compact_kb || end < g->compact_at)
        return; /* a compaction running sets the next threshold when it ends */
    g->compact_posted = 1;
    czk_loop_post(g->loop, &g->compact_task);
}

/* a record that could not be written at all (the append itself failed) */
static int append_failed(gpud *g, uint16_t type, uint64_t job, int rc, const char *msg)
{
    char what[96];
    snprintf(what, sizeof(what), "append %s record for job %llu", rec_name(type), (unsigned long long)job);
    journal_failed(g, what, 1, rc, msg);
    return rc;
}

static int append(gpud *g, uint16_t type, uint64_t job, const void *data, size_t len, czk_commit_fn fn, void *ctx,
                  int sync)
{
    uint64_t sync_failures = g->journal_sync_failures;
    czk_error e = {0};
    int rc;

    if (len > CZK_JOURNAL_MAX_PAYLOAD)
        rc = czk_errorf(&e, -EMSGSIZE, "record of %zu bytes exceeds %u", len, CZK_JOURNAL_MAX_PAYLOAD);
    else if (sync)
        rc = czk_commit_append_sync(g->commit, type, data, (uint32_t)len, NULL, &e);
    else
        rc = czk_commit_append(g->commit, type, data, (uint32_t)len, fn, ctx, NULL, &e);
    if (rc == 0) {
        journal_grew(g);
        return 0;
    }
    if (rc == -ENOMEM) {
        /* no room for the record's callback: nothing was written and the
         * journal works, so this is no episode; the caller refuses what the
         * record stood for */
        czk_err("journal: %s record of job %llu: %s", rec_name(type), (unsigned long long)job, e.msg);
        return rc;
    }
    if (g->journal_sync_failures != sync_failures)
        return rc; /* a failed sync went through journal_observed, which counted this record */
    return append_failed(g, type, job, rc, e.msg);
}

/* encodes r as a record of the given type (ipc/msg.c's journal schemas) */
static int rec_encode(uint16_t type, const gpud_rec *r, uint8_t *buf, size_t cap, czk_error *e)
{
    const czk_schema *s = czk_jrec_schema(type);
    czk_jrec jr;

    if (!s)
        return czk_errorf(e, -EINVAL, "no journal record type %u", type);
    memset(&jr, 0, sizeof(jr));
    jr.job = r->job;
    jr.lane = r->lane;
    jr.nparts = r->nparts;
    jr.uid = r->uid;
    jr.tsub = r->tsub;
    jr.part = r->part;
    jr.status = r->status;
    jr.probe = 1;
    snprintf(jr.req, sizeof(jr.req), "%s", r->req);
    snprintf(jr.circ, sizeof(jr.circ), "%s", r->circ);
    if (type == REC_ACCEPT && r->wsha)
        jr.wsha = (czk_bytes){r->wsha, r->nparts * CZK_SHA256_LEN};
    return czk_schema_encode(s, &jr, buf, cap, e);
}

int gpud_journal_probe(gpud *g)
{
    gpud_rec r = {0};
    uint8_t probe[16];
    czk_error e = {0};
    int n;

    if (!g->journal_down)
        return 0;
    if (czk_journal_failed(g->journal))
        return -EIO;
    if (g->journal_err != -EIO && !headroom(g))
        return g->journal_err; /* still full: no record that would fit in a last page and end the episode */
    if ((n = rec_encode(REC_PROBE, &r, probe, sizeof(probe), &e)) < 0) {
        czk_err("journal: could not encode a PROBE record: %s", e.msg);
        return n;
    }
    if (append(g, REC_PROBE, 0, probe, (size_t)n, NULL, NULL, 1) < 0)
        return g->journal_err;
    return g->journal_down ? g->journal_err : 0;
}

static int rec_append(gpud *g, uint16_t type, const gpud_rec *r, czk_commit_fn fn, void *ctx, int sync)
{
    /* an ACCEPT is the largest record: keys, numbers and two strings (< 512 bytes) and its digests */
    size_t cap = 512 + (type == REC_ACCEPT ? (size_t)r->nparts * CZK_SHA256_LEN : 0);
    czk_error e = {0};
    uint8_t *buf = malloc(cap);
    int n;

    if (!buf) {
        czk_err("journal: out of memory for a %s record of job %llu", rec_name(type), (unsigned long long)r->job);
        return -ENOMEM;
    }
    n = rec_encode(type, r, buf, cap, &e);
    if (n < 0) {
        czk_err("journal: could not encode the %s record of job %llu: %s", rec_name(type),
                (unsigned long long)r->job, e.msg);
        free(buf);
        return n;
    }
    n = append(g, type, r->job, buf, (size_t)n, fn, ctx, sync);
    free(buf);
    return n;
}

int gpud_rec_write(gpud *g, uint16_t type, const gpud_rec *r) { return rec_append(g, type, r, NULL, NULL, 1); }

int gpud_rec_defer(gpud *g, uint16_t type, const gpud_rec *r, czk_commit_fn fn, void *ctx)
{
    return rec_append(g, type, r, fn, ctx, 0);
}

int gpud_rec_parse(const czk_journal_rec *rec, gpud_rec *r)
{
    const czk_schema *s = czk_jrec_schema(rec->type);
    czk_error e = {0};
    czk_jrec jr;
    int rc;

    memset(r, 0, sizeof(*r));
    if (!s)
        return -EBADMSG;
    if ((rc = czk_schema_decode(s, rec->data, rec->len, &jr, &e)) < 0)
        return rc;
    if (rec->type == REC_PROBE)
        return -ENOENT; /* a valid probe: it names no job */
    if (jr.wsha.len && jr.wsha.len != (uint64_t)jr.nparts * CZK_SHA256_LEN)
        return -EBADMSG; /* digests that do not match the partition count: not a record we wrote */
    r->job = jr.job;
    r->tsub = jr.tsub;
    r->lane = jr.lane;
    r->nparts = jr.nparts;
    r->uid = jr.uid;
    r->part = jr.part;
    r->status = jr.status;
    memcpy(r->req, jr.req, sizeof(r->req));
    memcpy(r->circ, jr.circ, sizeof(r->circ));
    r->wsha = jr.wsha.len ? jr.wsha.ptr : NULL; /* points into rec->data */
    return 0;
}

/* -------------------------------------------------------------- table --- */

gpud_job *gpud_job_find(gpud *g, uint64_t id)
{
    for (gpud_job *j = g->hash[id % GPUD_HASH]; j; j = j->hnext)
        if (j->id == id)
            return j;
    return NULL;
}

gpud_job *gpud_job_find_req(gpud *g, uint32_t uid, const char *req)
{
    if (!req[0])
        return NULL;
    for (gpud_job *j = g->jobs_head; j; j = j->next)
        if (j->uid == uid && !strcmp(j->req, req))
            return j;
    return NULL;
}

void gpud_job_insert(gpud *g, gpud_job *j)
{
    j->hnext = g->hash[j->id % GPUD_HASH];
    g->hash[j->id % GPUD_HASH] = j;
    if (g->jobs_tail)
        g->jobs_tail->next = j;
    else
        g->jobs_head = j;
    g->jobs_tail = j;
}

/* forget the oldest finished jobs beyond [gpud] history_jobs (a finished
 * job has no watchers: part.c's gpud_job_finished ended them, so no
 * connection stays exempt from the idle timeout through a job freed here) */
void gpud_jobs_trim(gpud *g)
{
    gpud_job **pp = &g->jobs_head, *prev = NULL;
    while (g->n_history > (unsigned)g->cfg.history_jobs && *pp) {
        gpud_job *j = *pp;
        if (j->state == J_ACTIVE || j->parts) {
            prev = j;
            pp = &j->next;
            continue;
        }
        *pp = j->next;
        if (g->jobs_tail == j)
            g->jobs_tail = prev;
        for (gpud_job **h = &g->hash[j->id % GPUD_HASH]; *h; h = &(*h)->hnext)
            if (*h == j) {
                *h = j->hnext;
                break;
            }
        free(j->wsha);
        free(j);
        g->n_history--;
    }
}

void gpud_spool_path(const gpud *g, uint64_t job, uint32_t part, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%llu/%u.wtns", g->spool_dir, (unsigned long long)job, part);
}

void gpud_spool_remove(gpud *g, uint64_t job)
{
    char dir[CZK_CONFIG_PATH_MAX + 64], path[CZK_CONFIG_PATH_MAX + 400];
    DIR *d;
    struct dirent *de;

    snprintf(dir, sizeof(dir), "%s/%llu", g->spool_dir, (unsigned long long)job);
    if (!(d = opendir(dir)))
        return;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.') {
            snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
            unlink(path);
        }
    closedir(d);
    if (rmdir(dir) < 0)
        czk_warn("could not remove spool directory \"%s\": %s", dir, strerror(errno));
}

