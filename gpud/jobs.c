/*
 * jobs.c — czk-gpud's jobs: the in-memory table, the durable journal (what is
 * written when, and how it is replayed after a restart), the witness spool,
 * SUBMIT and CANCEL (docs/pipeline.md "Life of a job", "Crashes and restarts").
 *
 * Journal records, each one msgpack map (CZK_JOURNAL_SYNC = fdatasync before
 * the promise it backs is made):
 *   ACCEPT   {job, req, circ, lane, nparts, uid, tsub}   sync, before ACCEPTED
 *   DONE     {job, part, status}                        sync, after the finalizer's DONE
 *   COMPLETE {job}                                      sync, when every partition is final
 *   CANCEL   {job}                                      sync, before the job's resources go
 * Replay rebuilds the table; jobs accepted and neither complete nor cancelled
 * have their partitions without DONE queued again.  At start the journal is
 * compacted to the records of the jobs still remembered (GPUD_HISTORY).
 *
 * Runs on the loop thread only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/runtime/daemon.h"
#include "common/runtime/fault.h"
#include "common/base/log.h"
#include "gpud/gpud.h"

/* ------------------------------------------------------------ records --- */

typedef struct jrec {
    uint64_t job, tsub;
    uint32_t lane, nparts, uid, part;
    int32_t status;
    char req[CZK_MSG_STR_SHORT], circ[64];
} jrec;

static void pk_kv_u64(msgpack_packer *pk, const char *k, uint64_t v)
{
    msgpack_pack_str_with_body(pk, k, strlen(k));
    msgpack_pack_uint64(pk, v);
}

static void pk_kv_str(msgpack_packer *pk, const char *k, const char *v)
{
    msgpack_pack_str_with_body(pk, k, strlen(k));
    msgpack_pack_str_with_body(pk, v, strlen(v));
}

static int journal_write(gpud *g, uint16_t type, const jrec *r)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    czk_error e = {0};
    int rc;

    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    switch (type) {
    case REC_ACCEPT:
        msgpack_pack_map(&pk, 7);
        pk_kv_u64(&pk, "job", r->job);
        pk_kv_str(&pk, "req", r->req);
        pk_kv_str(&pk, "circ", r->circ);
        pk_kv_u64(&pk, "lane", r->lane);
        pk_kv_u64(&pk, "nparts", r->nparts);
        pk_kv_u64(&pk, "uid", r->uid);
        pk_kv_u64(&pk, "tsub", r->tsub);
        break;
    case REC_DONE:
        msgpack_pack_map(&pk, 3);
        pk_kv_u64(&pk, "job", r->job);
        pk_kv_u64(&pk, "part", r->part);
        msgpack_pack_str_with_body(&pk, "status", 6);
        msgpack_pack_int32(&pk, r->status);
        break;
    default:
        msgpack_pack_map(&pk, 1);
        pk_kv_u64(&pk, "job", r->job);
        break;
    }
    rc = czk_journal_append(g->journal, type, sb.data, (uint32_t)sb.size, CZK_JOURNAL_SYNC, NULL, &e);
    msgpack_sbuffer_destroy(&sb);
    if (rc < 0)
        czk_err("journal: could not append record %u for job %llu: %s", type, (unsigned long long)r->job, e.msg);
    return rc;
}

static int journal_parse(const czk_journal_rec *rec, jrec *r)
{
    msgpack_unpacked up;
    size_t off = 0;
    int rc = -EBADMSG;

    memset(r, 0, sizeof(*r));
    msgpack_unpacked_init(&up);
    if (msgpack_unpack_next(&up, (const char *)rec->data, rec->len, &off) != MSGPACK_UNPACK_SUCCESS ||
        up.data.type != MSGPACK_OBJECT_MAP)
        goto out;
    for (uint32_t i = 0; i < up.data.via.map.size; i++) {
        const msgpack_object *k = &up.data.via.map.ptr[i].key, *v = &up.data.via.map.ptr[i].val;
        char key[16];
        if (k->type != MSGPACK_OBJECT_STR || k->via.str.size >= sizeof(key))
            goto out;
        memcpy(key, k->via.str.ptr, k->via.str.size);
        key[k->via.str.size] = 0;
        if (v->type == MSGPACK_OBJECT_STR) {
            char *dst = !strcmp(key, "req") ? r->req : !strcmp(key, "circ") ? r->circ : NULL;
            size_t cap = !strcmp(key, "req") ? sizeof(r->req) : sizeof(r->circ);
            if (!dst || v->via.str.size >= cap)
                goto out;
            memcpy(dst, v->via.str.ptr, v->via.str.size);
            dst[v->via.str.size] = 0;
        } else if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER || v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
            int64_t x = v->via.i64;
            uint64_t u = v->via.u64;
            if (!strcmp(key, "job")) r->job = u;
            else if (!strcmp(key, "tsub")) r->tsub = u;
            else if (!strcmp(key, "lane")) r->lane = (uint32_t)u;
            else if (!strcmp(key, "nparts")) r->nparts = (uint32_t)u;
            else if (!strcmp(key, "uid")) r->uid = (uint32_t)u;
            else if (!strcmp(key, "part")) r->part = (uint32_t)u;
            else if (!strcmp(key, "status")) r->status = (int32_t)x;
        }
    }
    rc = r->job ? 0 : -EBADMSG;
out:
    msgpack_unpacked_destroy(&up);
    return rc;
}

/* -------------------------------------------------------------- table --- */

gpud_job *gpud_job_find(gpud *g, uint64_t id)
{
    for (gpud_job *j = g->hash[id % GPUD_HASH]; j; j = j->hnext)
        if (j->id == id)
            return j;
    return NULL;
}

static gpud_job *job_find_req(gpud *g, uint32_t uid, const char *req)
{
    if (!req[0])
        return NULL;
    for (gpud_job *j = g->jobs_head; j; j = j->next)
        if (j->uid == uid && !strcmp(j->req, req))
            return j;
    return NULL;
}

static gpud_job *job_new(gpud *g, const jrec *r)
{
    gpud_job *j = calloc(1, sizeof(*j));
    if (!j)
        return NULL;
    j->parts = calloc(r->nparts, sizeof(gpud_part));
    if (!j->parts) {
        free(j);
        return NULL;
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
    j->hnext = g->hash[j->id % GPUD_HASH];
    g->hash[j->id % GPUD_HASH] = j;
    if (g->jobs_tail)
        g->jobs_tail->next = j;
    else
        g->jobs_head = j;
    g->jobs_tail = j;
    g->n_active++;
    if (j->id >= g->next_job_id)
        g->next_job_id = j->id + 1;
    return j;
}

/* forget the oldest finished jobs beyond GPUD_HISTORY */
static void trim_history(gpud *g)
{
    gpud_job **pp = &g->jobs_head, *prev = NULL;
    while (g->n_history > GPUD_HISTORY && *pp) {
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
        free(j);
        g->n_history--;
    }
}

void gpud_part_set_state(gpud *g, gpud_part *p, int state)
{
    g->part_count[p->state]--;
    g->part_count[state]++;
    p->state = (uint8_t)state;
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

/* parts are freed once the job is final and no slot or worker refers to them */
static int job_parts_busy(const gpud_job *j)
{
    for (uint32_t i = 0; i < j->nparts; i++)
        if (j->parts[i].holds_slot || j->parts[i].discard || j->parts[i].state == P_GPU)
            return 1;
    return 0;
}

static void job_release_parts(gpud *g, gpud_job *j)
{
    if (!j->parts || job_parts_busy(j))
        return;
    for (uint32_t i = 0; i < j->nparts; i++) {
        g->part_count[j->parts[i].state]--;
        free(j->parts[i].res);
        free(j->parts[i].pub);
    }
    free(j->parts);
    j->parts = NULL;
}

static void job_finished(gpud *g, gpud_job *j, int state)
{
    j->state = state;
    g->n_active--;
    g->n_history++;
    gpud_spool_remove(g, j->id);
    job_release_parts(g, j);
    trim_history(g);
    czk_metric_set(g->m_jobs, g->n_active);
}

/* ------------------------------------------------------------- replay --- */

static int replay_cb(const czk_journal_rec *rec, void *ctx)
{
    gpud *g = ctx;
    gpud_job *j;
    jrec r;

    if (journal_parse(rec, &r) < 0) {
        czk_warn("journal: record seq %llu (type %u) is not readable: skipped", (unsigned long long)rec->seq,
                 rec->type);
        return 0;
    }
    j = gpud_job_find(g, r.job);
    switch (rec->type) {
    case REC_ACCEPT:
        if (j || r.nparts == 0 || r.nparts > (1u << 20))
            return 0;
        if (!job_new(g, &r))
            return -ENOMEM;
        return 0;
    case REC_DONE:
        if (!j || !j->parts || r.part >= j->nparts || j->parts[r.part].state >= P_DONE)
            return 0;
        gpud_part_set_state(g, &j->parts[r.part], r.status ? P_FAILED : P_DONE);
        j->parts[r.part].status = r.status;
        j->nfinished++;
        if (r.status)
            j->nfailed++;
        return 0;
    case REC_COMPLETE:
    case REC_CANCEL:
        if (!j || j->state != J_ACTIVE)
            return 0;
        j->state = rec->type == REC_CANCEL ? J_CANCELLED : j->nfailed ? J_FAILED : J_COMPLETE;
        g->n_active--;
        g->n_history++;
        job_release_parts(g, j);
        return 0;
    default:
        czk_warn("journal: unknown record type %u at seq %llu: skipped", rec->type, (unsigned long long)rec->seq);
        return 0;
    }
}

static int keep_cb(const czk_journal_rec *rec, void *ctx)
{
    gpud *g = ctx;
    jrec r;

    /* every record of a remembered job stays (DONE included, so the journal
     * keeps showing each partition's DONE exactly once); forgotten jobs go */
    return journal_parse(rec, &r) == 0 && gpud_job_find(g, r.job) != NULL;
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

int gpud_jobs_open(gpud *g, czk_error *e)
{
    char path[CZK_CONFIG_PATH_MAX + 16];
    const czk_journal_info *info;
    int r;

    g->next_job_id = 1;
    snprintf(g->spool_dir, sizeof(g->spool_dir), "%s/spool", g->cfg.state_dir);
    if ((r = czk_daemon_mkdirs(g->spool_dir, 0750, e)) < 0)
        return r;
    snprintf(path, sizeof(path), "%s/journal", g->cfg.state_dir);
    if ((r = czk_journal_open(&g->journal, path, replay_cb, g, e)) < 0)
        return r;
    info = czk_journal_get_info(g->journal);
    czk_info("journal \"%s\": %llu records replayed%s, %u active jobs, %u finished remembered", path,
             (unsigned long long)info->records, info->torn_bytes ? " (torn tail trimmed)" : "", g->n_active,
             g->n_history);
    trim_history(g);
    if (info->records > 0 && (r = czk_journal_compact(g->journal, keep_cb, g, e)) < 0)
        czk_warn("journal compaction failed (continuing with the full journal): %s", e->msg);
    spool_sweep(g);
    return 0;
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
                continue;
            }
            gpud_spool_path(g, j->id, i, sp, sizeof(sp));
            if (access(sp, R_OK) < 0) {
                gpud_part_finish(g, p, -ENOENT, "the spooled witness is missing", NULL, NULL);
                continue;
            }
            p->t_enq = czk_mono_ns();
            gpud_lane_push(g, p, 0);
            n++;
        }
    }
    if (n)
        czk_info("journal: %u partitions of unfinished jobs queued again", n);
}

void gpud_jobs_free(gpud *g)
{
    gpud_job *j = g->jobs_head;
    while (j) {
        gpud_job *n = j->next;
        if (j->parts)
            for (uint32_t i = 0; i < j->nparts; i++) {
                free(j->parts[i].res);
                free(j->parts[i].pub);
            }
        free(j->parts);
        free(j);
        j = n;
    }
    g->jobs_head = g->jobs_tail = NULL;
    if (g->journal)
        czk_journal_close(g->journal);
    g->journal = NULL;
}

/* ------------------------------------------------------------- finish --- */

void gpud_part_finish(gpud *g, gpud_part *p, int status, const char *reason, const czk_bytes *proof,
                      const czk_bytes *pub)
{
    gpud_job *j = p->job;
    jrec r = {.job = j->id, .part = p->index, .status = status};

    if (p->state >= P_DONE)
        return;
    czk_fault("gpud.before_done_journal");
    journal_write(g, REC_DONE, &r);
    czk_fault("gpud.after_done_journal");
    gpud_part_set_state(g, p, status ? P_FAILED : P_DONE);
    p->status = status;
    free(p->res);
    free(p->pub);
    p->res = NULL;
    p->pub = NULL;
    j->nfinished++;
    if (status) {
        j->nfailed++;
        g->failures_total++;
        czk_metric_inc(g->m_failures, 1);
        czk_warn("job %llu partition %u failed: %s", (unsigned long long)j->id, p->index, reason ? reason : "");
        gpud_event(g, j, p->index, CZK_STAGE_FAILED, status, reason, NULL, NULL);
    } else {
        g->proofs_total++;
        g->done_ring[g->done_ring_pos++ % GPUD_RATE_WINDOW] = czk_mono_ns();
        czk_metric_inc(g->m_proofs, 1);
        gpud_event(g, j, p->index, CZK_STAGE_DONE, 0, NULL, proof, pub);
    }
    if (j->nfinished == j->nparts && j->state == J_ACTIVE) {
        r.part = 0;
        journal_write(g, REC_COMPLETE, &r);
        czk_info("job %llu complete: %u partitions, %u failed", (unsigned long long)j->id, j->nparts, j->nfailed);
        gpud_event(g, j, CZK_PARTITION_ALL, j->nfailed ? CZK_STAGE_FAILED : CZK_STAGE_DONE,
                   j->nfailed ? -EIO : 0, j->nfailed ? "some partitions failed" : NULL, NULL, NULL);
        job_finished(g, j, j->nfailed ? J_FAILED : J_COMPLETE);
    }
}

/* ------------------------------------------------------------- submit --- */

static void reject(czk_conn *c, const char *req, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void reject(czk_conn *c, const char *req, int code, const char *fmt, ...)
{
    czk_msg m;
    va_list ap;
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_REJECTED;
    snprintf(m.u.rejected.request_id, sizeof(m.u.rejected.request_id), "%s", req);
    m.u.rejected.code = code;
    va_start(ap, fmt);
    vsnprintf(m.u.rejected.reason, sizeof(m.u.rejected.reason), fmt, ap);
    va_end(ap);
    czk_info("submit \"%s\" rejected: %s", req, m.u.rejected.reason);
    czk_conn_send(c, &m, NULL, 0);
}

static gpud_submit_req *pending_find(gpud *g, uint32_t uid, const char *req)
{
    if (!req[0])
        return NULL;
    for (gpud_submit_req *r = g->pending; r; r = r->next)
        if (r->uid == uid && !strcmp(r->req, req))
            return r;
    return NULL;
}

void gpud_submit(gpud *g, czk_conn *c, const czk_msg_submit *s, int *fds, int nfds)
{
    uint32_t uid = (uint32_t)czk_conn_cred(c)->uid;
    unsigned circ = UINT32_MAX;
    gpud_submit_req *r;
    gpud_job *j;
    czk_msg m;

    if ((j = job_find_req(g, uid, s->request_id))) {
        memset(&m, 0, sizeof(m));
        m.type = CZK_MSG_ACCEPTED;
        snprintf(m.u.accepted.request_id, sizeof(m.u.accepted.request_id), "%s", s->request_id);
        m.u.accepted.job_id = j->id;
        m.u.accepted.duplicate = 1;
        czk_conn_send(c, &m, NULL, 0);
        /* the job's past events are gone: answer as WATCH does, so a client
         * that only waits for events learns where the job is (and the end of
         * a job that is over) */
        if (s->flags & CZK_SUBMIT_F_WAIT)
            gpud_watch_job(g, j, c);
        return;
    }
    if (pending_find(g, uid, s->request_id))
        return reject(c, s->request_id, -EAGAIN, "a submission with request id \"%s\" is still being spooled",
                      s->request_id);
    for (unsigned i = 0; i < g->n_circuits; i++)
        if (!strcmp(g->circuits[i].name, s->circuit))
            circ = i;
    if (circ == UINT32_MAX)
        return reject(c, s->request_id, -ENOENT, "unknown circuit \"%s\"", s->circuit);
    if (s->n_partitions != (uint32_t)nfds)
        return reject(c, s->request_id, -EINVAL, "%u partitions but %d witness descriptors", s->n_partitions,
                      nfds);
    if (s->n_partitions > (uint32_t)g->cfg.max_partitions_per_job)
        return reject(c, s->request_id, -E2BIG, "%u partitions exceed max_partitions_per_job = %d",
                      s->n_partitions, g->cfg.max_partitions_per_job);
    if (g->n_active + g->pending_jobs >= (unsigned)g->cfg.max_jobs)
        return reject(c, s->request_id, -EBUSY, "%u jobs in progress, max_jobs = %d: try again later",
                      g->n_active + g->pending_jobs, g->cfg.max_jobs);
    if (g->part_count[P_QUEUED] + g->pending_parts + s->n_partitions > (unsigned)g->cfg.max_queued_partitions)
        return reject(c, s->request_id, -EBUSY,
                      "queue full: %u partitions queued, %u more exceed max_queued_partitions = %d",
                      g->part_count[P_QUEUED] + g->pending_parts, s->n_partitions, g->cfg.max_queued_partitions);
    r = calloc(1, sizeof(*r));
    if (r)
        r->fds = calloc(s->n_partitions, sizeof(int));
    if (!r || !r->fds) {
        if (r)
            free(r);
        return reject(c, s->request_id, -ENOMEM, "out of memory");
    }
    r->g = g;
    r->conn = c;
    snprintf(r->req, sizeof(r->req), "%s", s->request_id);
    r->flags = s->flags;
    r->lane = s->priority < GPUD_LANES ? s->priority : GPUD_LANES - 1;
    r->uid = uid;
    r->nparts = s->n_partitions;
    r->circuit = circ;
    r->job = g->next_job_id++;
    r->tsub = czk_real_ns();
    for (int i = 0; i < nfds; i++) { /* take the fds: the loop would close them after on_msg */
        r->fds[i] = fds[i];
        fds[i] = -1;
    }
    r->next = g->pending;
    g->pending = r;
    g->pending_jobs++;
    g->pending_parts += r->nparts;
    gpud_intake_queue(g, r);
}

void gpud_submit_client_gone(gpud *g, czk_conn *c)
{
    for (gpud_submit_req *r = g->pending; r; r = r->next)
        if (r->conn == c)
            r->conn = NULL;
}

void gpud_submit_finish(gpud *g, gpud_submit_req *q)
{
    const gpud_circuit *circ = &g->circuits[q->circuit];
    gpud_submit_req **pp;
    gpud_job *j;
    jrec r;
    czk_msg m;
    int rc;

    for (pp = &g->pending; *pp; pp = &(*pp)->next)
        if (*pp == q) {
            *pp = q->next;
            break;
        }
    g->pending_jobs--;
    g->pending_parts -= q->nparts;
    if (!q->conn || g->stopping) {
        /* the client went away before ACCEPTED: nothing is journaled, nothing kept */
        czk_info("submit \"%s\": the client went away while its witnesses were spooled: dropped", q->req);
        gpud_spool_remove(g, q->job);
        goto out;
    }
    if (q->rc < 0) {
        gpud_spool_remove(g, q->job);
        reject(q->conn, q->req, q->rc, "%s", q->why);
        goto out;
    }
    memset(&r, 0, sizeof(r));
    r.job = q->job;
    snprintf(r.req, sizeof(r.req), "%s", q->req);
    snprintf(r.circ, sizeof(r.circ), "%s", circ->name);
    r.lane = q->lane;
    r.nparts = q->nparts;
    r.uid = q->uid;
    r.tsub = q->tsub;
    czk_fault("gpud.before_accept_journal");
    if ((rc = journal_write(g, REC_ACCEPT, &r)) < 0) {
        gpud_spool_remove(g, r.job);
        reject(q->conn, q->req, rc, "could not journal the job: %s", strerror(-rc));
        goto out;
    }
    czk_fault("gpud.after_accept_journal");
    if (!(j = job_new(g, &r))) {
        /* journaled: the job runs after a restart; tell the client it is accepted */
        czk_err("job %llu: out of memory after journaling it; it will run after a restart",
                (unsigned long long)r.job);
    }
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_ACCEPTED;
    snprintf(m.u.accepted.request_id, sizeof(m.u.accepted.request_id), "%s", q->req);
    m.u.accepted.job_id = r.job;
    czk_conn_send(q->conn, &m, NULL, 0);
    czk_fault("gpud.after_accepted_sent");
    czk_info("job %llu accepted: circuit %s, %u partitions, lane %u, uid %u, request \"%s\"",
             (unsigned long long)r.job, circ->name, r.nparts, r.lane, r.uid, r.req);
    czk_metric_set(g->m_jobs, g->n_active);
    if (j) {
        if (q->flags & CZK_SUBMIT_F_WAIT)
            gpud_watch_add(g, j, q->conn);
        for (uint32_t i = 0; i < j->nparts; i++) {
            j->parts[i].t_enq = czk_mono_ns();
            gpud_lane_push(g, &j->parts[i], 0);
        }
        gpud_event(g, j, CZK_PARTITION_ALL, CZK_STAGE_QUEUED, 0, NULL, NULL, NULL);
        gpud_schedule(g);
    }
out:
    free(q->fds);
    free(q);
}

/* ------------------------------------------------------------- cancel --- */

void gpud_cancel(gpud *g, czk_conn *c, uint64_t job_id)
{
    gpud_job *j = gpud_job_find(g, job_id);
    uint32_t uid = (uint32_t)czk_conn_cred(c)->uid;
    jrec r = {.job = job_id};

    if (!j)
        return gpud_reply_error(c, -ENOENT, "job %llu is not known", (unsigned long long)job_id);
    if (j->uid != uid)
        return gpud_reply_error(c, -EPERM, "job %llu was submitted by uid %u, not by uid %u",
                                (unsigned long long)job_id, j->uid, uid);
    if (j->state != J_ACTIVE)
        return gpud_reply_error(c, -EALREADY, "job %llu is already %s", (unsigned long long)job_id,
                                j->state == J_CANCELLED ? "cancelled" : "finished");
    if (journal_write(g, REC_CANCEL, &r) < 0)
        return gpud_reply_error(c, -EIO, "could not journal the cancellation of job %llu", (unsigned long long)job_id);
    for (uint32_t i = 0; i < j->nparts; i++) {
        gpud_part *p = &j->parts[i];
        switch (p->state) {
        case P_QUEUED:
            gpud_unlink(g, p);
            break;
        case P_SYNTH:
            gpud_slot_drop(g, p); /* the synth stops; the slot returns when it says so */
            break;
        case P_READY:
            gpud_unlink(g, p);
            gpud_slot_free(g, p, 1);
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
        default:
            continue;
        }
        gpud_part_set_state(g, p, P_CANCELLED);
    }
    g->cancelled_total++;
    czk_info("job %llu cancelled by uid %u", (unsigned long long)job_id, uid);
    gpud_watch_add(g, j, c);
    gpud_event(g, j, CZK_PARTITION_ALL, CZK_STAGE_CANCELLED, 0, NULL, NULL, NULL);
    job_finished(g, j, J_CANCELLED);
    gpud_schedule(g);
}

/* called by sched.c/worker.c when the last reference of a finished job's partition goes */
void gpud_job_maybe_release(gpud *g, gpud_job *j)
{
    if (j->state != J_ACTIVE)
        job_release_parts(g, j);
}
