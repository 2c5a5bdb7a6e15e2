/*
 * clients.c — czk-gpud's two sockets: gpud.sock (synths and the finalizer,
 * dispatched to sched.c and results.c by the role in their HELLO) and czk.sock
 * (clients: SUBMIT, STATUS, CANCEL, WATCH, FETCH) and the STATUS reply; EVENTs
 * to watching clients are events.c's.  Loop thread only.
 *
 * Replies:  SUBMIT -> ACCEPTED | REJECTED;  STATUS -> STATUS_REPLY (a
 * czk_status_reply through ipc/msg.c's schema; docs/daemons.md lists its keys);  CANCEL -> EVENT(job, CANCELLED) or
 * ERROR;  WATCH -> EVENT with the job's current stage, then its EVENTs (a
 * duplicate SUBMIT with CZK_SUBMIT_F_WAIT: ACCEPTED(dup), then the same);
 * FETCH -> FETCHED with two read-only fds (the partition's proof.json and
 * public.json in output_dir, which a client of client_group cannot read
 * itself) or ERROR.
 *
 * Who sees what (uids from SO_PEERCRED): root and gpud's own uid see every
 * job; any other client sees its own jobs in full and other users' only as
 * the counts in "others".  A job of another user is, to STATUS --job, WATCH,
 * FETCH and CANCEL, answered exactly like a job that does not exist (its id
 * reveals nothing), except that root and members of [gpud] admin_group may
 * cancel any job.  Strings a client chose (request ids) are printable ASCII
 * (jobs.c refuses others); older journal entries are escaped here anyway.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/runtime/daemon.h"
#include "common/base/log.h"
#include "common/runtime/trace.h"
#include "gpud/circuits.h"
#include "gpud/gpud.h"

/* root and gpud's own uid see every job */
static int sees_all(const czk_conn *c)
{
    uid_t uid = czk_conn_cred(c)->uid;
    return uid == 0 || uid == geteuid();
}

/* the job as this client may know it: NULL for another user's job */
static gpud_job *visible_job(gpud *g, const czk_conn *c, uint64_t id)
{
    gpud_job *j = gpud_job_find(g, id);
    if (j && !sees_all(c) && j->uid != (uint32_t)czk_conn_cred(c)->uid)
        return NULL;
    return j;
}

/* root, or a member of admin_group (its primary or a supplementary group at
 * connect time, SO_PEERGROUPS) */
static int is_admin(const gpud *g, const czk_conn *c)
{
    const czk_peer_cred *cr = czk_conn_cred(c);
    if (cr->uid == 0)
        return 1;
    if (!g->admin_gid_set)
        return 0;
    if ((uint32_t)cr->gid == g->admin_gid)
        return 1;
    for (int i = 0; i < cr->ngroups && i < (int)(sizeof(cr->groups) / sizeof(cr->groups[0])); i++)
        if ((uint32_t)cr->groups[i] == g->admin_gid)
            return 1;
    return 0;
}

/* CANCEL: the job's owner, root or an admin_group member may cancel it; the
 * canceller follows the job and hears EVENT(CANCELLED) as the answer */
static void on_cancel(gpud *g, czk_conn *c, uint64_t job_id)
{
    gpud_job *j = gpud_job_find(g, job_id);
    uint32_t uid = (uint32_t)czk_conn_cred(c)->uid;
    int rc;

    if (!j || (j->uid != uid && !is_admin(g, c)))
        return gpud_reply_error(g, c, -ENOENT, "job %llu is not known", (unsigned long long)job_id);
    if (j->uid != uid)
        czk_info("job %llu (uid %u): cancelled by uid %u (root or admin_group)", (unsigned long long)job_id, j->uid,
                 uid);
    if (j->state == J_ACTIVE && gpud_job_done_pending(j)) {
        /* the DONEs written before this CANCEL take effect first, as they
         * will in a replay; their callbacks may finish (and free) the job */
        gpud_journal_settle(g);
        j = gpud_job_find(g, job_id);
        if (!j)
            return gpud_reply_error(g, c, -EALREADY, "job %llu is already finished", (unsigned long long)job_id);
    }
    if (j->state != J_ACTIVE)
        return gpud_reply_error(g, c, -EALREADY, "job %llu is already %s", (unsigned long long)job_id,
                                j->state == J_CANCELLED ? "cancelled" : "finished");
    if ((rc = gpud_job_cancel(g, j, c)) < 0)
        return gpud_reply_error(g, c, rc, "could not journal the cancellation of job %llu (%s%s): it goes on",
                                (unsigned long long)job_id, rc == -ENOSPC || rc == -EDQUOT ? "state_dir is full: " : "",
                                strerror(-rc));
}

static void on_watch(gpud *g, czk_conn *c, uint64_t job_id)
{
    gpud_job *j = visible_job(g, c, job_id);

    if (!j) {
        gpud_reply_error(g, c, -ENOENT, "job %llu is not known", (unsigned long long)job_id);
        return;
    }
    gpud_watch_job(g, j, c);
}

/* ------------------------------------------------------------- fetch --- */

/* a partition's stage as the client names it (czk submit's progress lines) */
static const char *part_stage_name(int state)
{
    static const char *const n[P_STATE_COUNT] = {
        [P_QUEUED] = "queued", [P_SYNTH] = "synth",  [P_READY] = "synth",   [P_GPU] = "gpu",
        [P_FINALIZE] = "finalize", [P_DONE] = "done", [P_FAILED] = "failed", [P_CANCELLED] = "cancelled"};
    return state >= 0 && state < P_STATE_COUNT ? n[state] : "?";
}

/* opens name in the partition's directory dfd for FETCH: read-only, no
 * symbolic link followed, non-blocking (a FIFO put there cannot hold the
 * loop), and only a regular file is kept.  Returns the fd or -errno. */
static int fetch_open(int dfd, const char *name, uint64_t *size)
{
    struct stat st;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

    if (fd < 0)
        return errno == ELOOP ? -EINVAL : -errno; /* ELOOP: a symbolic link */
    if (fstat(fd, &st) < 0) {
        int r = -errno;
        close(fd);
        return r;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return -EINVAL;
    }
    *size = (uint64_t)st.st_size;
    return fd;
}

/*
 * FETCH: the files of a DONE partition as two read-only fds, for a client
 * that may use czk.sock but not read output_dir (0750, the daemons' user):
 * `czk submit --out` when the proof text did not travel in an EVENT (after a
 * reconnect, for a duplicate request id, or a text over one record).  The
 * job is visible by WATCH's rule, with WATCH's answer when it is not.  A
 * partition whose state was forgotten (a finished job keeps none, part.c)
 * is DONE when the job is complete; in a failed or cancelled job the files
 * decide, since the finalizer writes them only for a verified proof.  The
 * path is built from numbers alone (no client string); two opens and two
 * fstats of small local files are all the loop does here.  Errors: -ENOENT
 * for a job not visible (WATCH's text) or files that are not there, -EINVAL
 * for a partition out of range, -EAGAIN for a partition not DONE (naming
 * its stage, or that it failed or was cancelled while its job goes on),
 * -EBUSY while anything sent before on this connection is unread.  That
 * last rule bounds the fds a client can make gpud hold: a FETCHED's two
 * fds stay in gpud's send queue, then in flight in the kernel
 * (charged to gpud's user, which shares RLIMIT_NOFILE with the POOL fds the
 * synths need) until the client reads it; so one FETCHED at most is unread
 * per connection, whatever the client sends.
 */
static void on_fetch(gpud *g, czk_conn *c, const czk_msg_fetch *f)
{
    static const char *const names[CZK_FETCHED_FDS] = {"proof.json", "public.json"};
    unsigned long long job = (unsigned long long)f->job_id;
    gpud_job *j = visible_job(g, c, f->job_id);
    char path[CZK_CONFIG_PATH_MAX + 64];
    int fds[CZK_FETCHED_FDS] = {-1, -1}, dfd, state = -1, r = 0, i;
    uint64_t size[CZK_FETCHED_FDS] = {0, 0};
    czk_msg m;

    if (!j)
        return gpud_reply_error(g, c, -ENOENT, "job %llu is not known", job);
    if (gpud_conn_queued(g, c) || gpud_conn_unread(g, c))
        return gpud_reply_error(g, c, -EBUSY, "earlier replies on this connection are not read yet: read them, "
                                "then FETCH again");
    if (f->partition >= j->nparts)
        return gpud_reply_error(g, c, -EINVAL, "job %llu has %u partition%s: there is no partition %u", job,
                                j->nparts, j->nparts == 1 ? "" : "s", f->partition);
    if (j->parts)
        state = j->parts[f->partition].state;
    else if (j->state == J_COMPLETE)
        state = P_DONE;
    if (state == P_FAILED || state == P_CANCELLED) /* -EAGAIN: the job is still active (its end comes later) */
        return gpud_reply_error(g, c, -EAGAIN, "job %llu partition %u %s: it has no proof to fetch", job,
                                f->partition, state == P_FAILED ? "failed" : "was cancelled");
    if (state >= 0 && state != P_DONE)
        return gpud_reply_error(g, c, -EAGAIN, "job %llu partition %u is not done (it is %s): no proof to fetch",
                                job, f->partition, part_stage_name(state));
    snprintf(path, sizeof(path), "%s/%llu/%u", g->cfg.output_dir, job, f->partition);
    if ((dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        r = errno == ELOOP ? -ENOTDIR : -errno; /* ELOOP: a symbolic link */
    for (i = 0; r == 0 && i < CZK_FETCHED_FDS; i++) {
        if ((fds[i] = fetch_open(dfd, names[i], &size[i])) < 0) {
            r = fds[i];
            snprintf(path, sizeof(path), "%s/%llu/%u/%s", g->cfg.output_dir, job, f->partition, names[i]);
        }
    }
    if (dfd >= 0)
        close(dfd);
    if (r < 0) {
        const char *why = r == -EINVAL ? "not a regular file" : strerror(-r);
        for (i = 0; i < CZK_FETCHED_FDS; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        if (state == P_DONE) /* written and journaled, now gone or replaced: worth the operator's eye */
            czk_warn("job %llu partition %u is done but its files cannot be handed to uid %u: \"%s\": %s", job,
                     f->partition, (unsigned)czk_conn_cred(c)->uid, path, why);
        if (r == -ENOENT)
            return gpud_reply_error(g, c, -ENOENT, "job %llu partition %u: no proof in the output directory (%s)",
                                    job, f->partition, path);
        return gpud_reply_error(g, c, r, "job %llu partition %u: cannot open %s: %s", job, f->partition, path, why);
    }
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_FETCHED;
    m.u.fetched.job_id = f->job_id;
    m.u.fetched.partition = f->partition;
    m.u.fetched.proof_size = size[0];
    m.u.fetched.public_size = size[1];
    gpud_send(g, c, &m, fds, CZK_FETCHED_FDS); /* the loop queues dups of the fds (ipc/loop.h) */
    for (i = 0; i < CZK_FETCHED_FDS; i++)
        close(fds[i]);
}

/* ------------------------------------------------------------- status --- */

/* a string that may have come from a client: printable ASCII as is, anything else escaped (bounded, valid UTF-8) */
static void put_esc(char *dst, size_t n, const char *v)
{
    _Static_assert(CZK_STATUS_TEXT >= 4 * (CZK_MSG_REQID_MAX + 1), "an escaped request id fits");
    czk_esc(v, dst, n);
}

static const char *job_state_name(int s)
{
    static const char *n[] = {"active", "complete", "failed", "cancelled"};
    return s >= 0 && s <= J_CANCELLED ? n[s] : "?";
}

void gpud_status_job(const gpud *g, const gpud_job *j, czk_status_job *o)
{
    unsigned per[P_STATE_COUNT] = {0};
    for (uint32_t i = 0; j->parts && i < j->nparts; i++)
        per[j->parts[i].state]++;
    memset(o, 0, sizeof(*o));
    o->id = j->id;
    snprintf(o->state, sizeof(o->state), "%s", job_state_name(j->state));
    put_esc(o->circuit, sizeof(o->circuit), j->cname);
    put_esc(o->request, sizeof(o->request), j->req);
    o->lane = j->lane;
    o->partitions = j->nparts;
    o->done = j->nfinished - j->nfailed;
    o->failed = j->nfailed;
    o->queued = per[P_QUEUED];
    o->synth = per[P_SYNTH] + per[P_READY];
    o->gpu = per[P_GPU];
    o->finalize = per[P_FINALIZE];
    if (j->state == J_ACTIVE && j->circuit < g->n_circuits && g->circuits[j->circuit].reload &&
        j->id > g->circuits[j->circuit].reload_last_old)
        snprintf(o->reason, sizeof(o->reason),
                 "waiting: the key of circuit \"%s\" is being reloaded; the jobs accepted before the reload "
                 "finish first", g->circuits[j->circuit].name);
    else if (j->state == J_ACTIVE && j->circuit != UINT32_MAX)
        gpud_circuits_job_reason(g, j->circuit, per[P_QUEUED], per[P_QUEUED] + per[P_READY], per[P_FINALIZE],
                                 o->reason, sizeof(o->reason));
    if (j->state == J_ACTIVE && g->gpus && !gpud_gpus_in_service(g) && per[P_QUEUED] + per[P_SYNTH] + per[P_READY]) {
        /* worker.c took every device out of service: what is not computed waits */
        size_t k = strlen(o->reason);
        snprintf(o->reason + k, sizeof(o->reason) - k, "%swaiting: no compute device is in service (every one "
                 "failed; `czk status` lists why): restart czk-gpud once one works", k ? "; " : "");
    }
}

/* gpu_busy_pct / gpu_max_gap_ms over the last minute, from the compute spans
 * of the workers (finished ones from the compute history, running ones up to
 * now): all devices together, then each device in "gpus" */
void gpud_status_busy(gpud *g, czk_status_reply *sr, uint64_t now)
{
    double pct;
    uint64_t gap;

    gpud_busy(g, -1, now, 60000000000ull, &pct, &gap);
    sr->gpu_busy_pct = pct;
    sr->gpu_max_gap_ms = gap / 1000000u;
    for (unsigned d = 0; d < g->n_gpus && sr->n_gpus < CZK_STATUS_MAX_GPUS; d++) {
        const gpud_gpu *x = &g->gpus[d];
        czk_status_gpu *o = &sr->gpus[sr->n_gpus++];
        memset(o, 0, sizeof(*o));
        o->index = d;
        snprintf(o->state, sizeof(o->state), "%s", x->lost ? "out_of_service" : "in_service");
        o->contexts = x->contexts;
        gpud_busy(g, (int)d, now, 60000000000ull, &pct, &gap);
        o->busy_pct = pct;
        o->max_gap_ms = gap / 1000000u;
        o->done = x->done;
        o->failed = x->failed;
        o->requeued = x->requeued;
        if ((o->has_mem = (uint8_t)(x->has_mem && !x->lost)))
            o->mem_used = x->mem_used, o->mem_total = x->mem_total;
        if ((o->has_numa = (uint8_t)(x->numa >= 0)))
            o->numa = x->numa;
        if (x->lost)
            snprintf(o->reason, sizeof(o->reason), "%s", x->why);
    }
}

static void on_status(gpud *g, czk_conn *c, const czk_msg_status *req)
{
    /* loop thread only: one reply at a time (about 110 KiB, not on the stack) */
    static czk_status_reply sr;
    static uint8_t body[CZK_MSG_MAX_RECORD];
    czk_status_request rq = {0};
    uint64_t now = czk_mono_ns();
    gpud_job *wj;
    unsigned recent = 0;
    int all = sees_all(c), n;
    uint32_t uid = (uint32_t)czk_conn_cred(c)->uid;
    czk_error e = {0};
    czk_msg m;

    if (req->body.len && czk_schema_decode(&czk_schema_status_request, req->body.ptr, req->body.len, &rq, &e) < 0)
        return gpud_reply_error(g, c, -EBADMSG, "bad STATUS body: %s", e.msg);
    /* another user's job is answered like an unknown one: no "job" key */
    wj = rq.job ? visible_job(g, c, rq.job) : NULL;
    memset(&sr, 0, sizeof(sr));
    snprintf(sr.daemon, sizeof(sr.daemon), "czk-gpud");
    snprintf(sr.state_dir, sizeof(sr.state_dir), "%s", g->cfg.state_dir); /* where `czk trace` finds the traces */
    /* the backend's name once it exists; before, the configured one */
    snprintf(sr.backend, sizeof(sr.backend), "%s", g->bops ? g->bops->name : g->cfg.backend);
    gpud_keys_status(g, &sr); /* "state" and "circuits" */
    for (gpud_job *j = g->jobs_head; j; j = j->next) {
        switch (j->state) {
        case J_ACTIVE: sr.jobs.active++; break;
        case J_COMPLETE: sr.jobs.complete++; break;
        case J_FAILED: sr.jobs.failed++; break;
        case J_CANCELLED: sr.jobs.cancelled++; break;
        }
        if (j->state != J_ACTIVE)
            continue;
        if (!all && j->uid != uid) {
            /* other users' active jobs and their unfinished partitions, as counts only */
            sr.others.jobs++;
            sr.others.partitions += j->nparts - j->nfinished;
        } else if (sr.n_active < CZK_STATUS_MAX_JOBS) {
            gpud_status_job(g, j, &sr.active[sr.n_active++]);
        }
    }
    sr.has_others = !all;
    sr.partitions.queued = g->part_count[P_QUEUED];
    sr.partitions.synth = g->part_count[P_SYNTH] + g->part_count[P_READY];
    sr.partitions.gpu = g->part_count[P_GPU];
    sr.partitions.finalize = g->part_count[P_FINALIZE];
    sr.partitions.lanes = GPUD_LANES;
    for (unsigned i = 0; i < g->n_pools && i < CZK_STATUS_MAX_POOLS; i++) {
        czk_status_pool *p = &sr.pools[sr.n_pools++];
        p->id = g->pools[i].id;
        p->node = g->pools[i].node;
        p->slots = g->pools[i].pool.hdr->slot_count;
        p->in_use = g->pools[i].in_use;
        for (uint32_t k = 0; k < p->slots; k++)
            p->quarantined += g->pools[i].slots[k].quarantined;
        p->hugetlb = g->pools[i].pool.hugetlb != 0;
    }
    {
        double *mean[ST_COUNT] = {&sr.latency_s.queue, &sr.latency_s.synth, &sr.latency_s.gpu,
                                  &sr.latency_s.finalize};
        for (int s = 0; s < ST_COUNT; s++)
            *mean[s] = g->stage[s].n ? g->stage[s].sum_s / (double)g->stage[s].n : 0.0;
    }
    for (unsigned i = 0; i < GPUD_RATE_WINDOW; i++)
        if (g->done_ring[i] && now - g->done_ring[i] < 60000000000ull)
            recent++;
    sr.proofs_per_minute = recent;
    gpud_status_busy(g, &sr, now);
    sr.proofs_total = g->proofs_total;
    sr.failures_total = g->failures_total;
    sr.synth_timeouts_total = g->synth_timeouts_total;
    sr.result_resends_total = g->result_resends_total;
    sr.synths = gpud_synth_count(g);
    sr.finalizer = g->finalizer != NULL;
    if (wj) {
        gpud_status_job(g, wj, &sr.job);
        sr.has_job = 1;
    }
    /* the body and the record's own keys must fit one record */
    n = czk_schema_encode(&czk_schema_status_reply, &sr, body, CZK_MSG_MAX_RECORD - 64, &e);
    if (n < 0) {
        czk_warn("STATUS for uid %u: %s", uid, e.msg);
        return gpud_reply_error(g, c, n == -EMSGSIZE ? -EMSGSIZE : -EINVAL, "status does not fit one record");
    }
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_STATUS_REPLY;
    m.u.status.body = (czk_bytes){body, (uint32_t)n};
    if (gpud_send(g, c, &m, NULL, 0) < 0)
        gpud_reply_error(g, c, -EMSGSIZE, "status does not fit one record");
}

/* ------------------------------------------------------ connection ops --- */

static void client_msg(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx)
{
    gpud *g = ctx;
    switch (m->type) {
    case CZK_MSG_SUBMIT:
        gpud_submit(g, c, &m->u.submit, fds, nfds);
        break;
    case CZK_MSG_STATUS:
        on_status(g, c, &m->u.status);
        break;
    case CZK_MSG_CANCEL:
        on_cancel(g, c, m->u.cancel.job_id);
        break;
    case CZK_MSG_WATCH:
        on_watch(g, c, m->u.watch.job_id);
        break;
    case CZK_MSG_FETCH:
        on_fetch(g, c, &m->u.fetch);
        break;
    case CZK_MSG_HEARTBEAT: {
        czk_msg r = *m;
        r.u.heartbeat.time_ns = czk_mono_ns();
        gpud_send(g, c, &r, NULL, 0);
        break;
    }
    default:
        gpud_reply_error(g, c, -EPROTO, "a client may not send %s", czk_msg_type_name(m->type));
    }
}

static void client_close(czk_conn *c, int err, const char *why, void *ctx)
{
    gpud *g = ctx;
    (void)err;
    (void)why;
    gpud_submit_client_gone(g, c);
    gpud_watch_drop_conn(g, c);
}

const czk_conn_ops gpud_client_ops = {
    .on_open = NULL,
    .on_msg = client_msg,
    .on_close = client_close,
};

static void daemon_open(czk_conn *c, void *ctx)
{
    gpud *g = ctx;
    if (czk_conn_peer(c)->role == CZK_ROLE_SYNTH)
        gpud_synth_open(g, c);
    else if (czk_conn_peer(c)->role == CZK_ROLE_FINALIZER)
        gpud_finalizer_open(g, c);
    else
        czk_conn_close(c, -EPROTO, "only synths and the finalizer may use gpud.sock", 0);
}

static void daemon_msg(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx)
{
    gpud *g = ctx;
    if (m->type == CZK_MSG_STATUS) {
        on_status(g, c, &m->u.status);
        return;
    }
    if (czk_conn_peer(c)->role == CZK_ROLE_SYNTH)
        gpud_synth_msg(g, c, m);
    else
        gpud_finalizer_msg(g, c, m);
}

static void daemon_close(czk_conn *c, int err, const char *why, void *ctx)
{
    gpud *g = ctx;
    if (g->stopping)
        return;
    if (czk_conn_peer(c)->role == CZK_ROLE_SYNTH)
        gpud_synth_close(g, c);
    else if (czk_conn_peer(c)->role == CZK_ROLE_FINALIZER)
        gpud_finalizer_close(g, c);
}

const czk_conn_ops gpud_daemon_ops = {
    .on_open = daemon_open,
    .on_msg = daemon_msg,
    .on_close = daemon_close,
};
