/*
 * clients.c — czk-gpud's two sockets: gpud.sock (synths and the finalizer,
 * dispatched to sched.c and results.c by the role in their HELLO) and czk.sock
 * (clients: SUBMIT, STATUS, CANCEL, WATCH) and the STATUS reply; EVENTs to
 * watching clients are events.c's.  Loop thread only.
 *
 * Replies:  SUBMIT -> ACCEPTED | REJECTED;  STATUS -> STATUS_REPLY (msgpack
 * map, docs/pipeline.md lists its keys);  CANCEL -> EVENT(job, CANCELLED) or
 * ERROR;  WATCH -> EVENT with the job's current stage, then its EVENTs (a
 * duplicate SUBMIT with CZK_SUBMIT_F_WAIT: ACCEPTED(dup), then the same).
 *
 * Who sees what (uids from SO_PEERCRED): root and gpud's own uid see every
 * job; any other client sees its own jobs in full and other users' only as
 * the counts in "others".  A job of another user is, to STATUS --job, WATCH
 * and CANCEL, answered exactly like a job that does not exist (its id reveals
 * nothing), except that root and members of [gpud] admin_group may cancel
 * any job.  Strings a client chose (request ids) are printable ASCII
 * (jobs.c refuses others); older journal entries are escaped here anyway.
 */
#include <errno.h>
#include <msgpack.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/runtime/daemon.h"
#include "common/base/log.h"
#include "common/runtime/trace.h"
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

/* ------------------------------------------------------------- status --- */

static void pk_str(msgpack_packer *pk, const char *s) { msgpack_pack_str_with_body(pk, s, strlen(s)); }
static void kv_u(msgpack_packer *pk, const char *k, uint64_t v) { pk_str(pk, k); msgpack_pack_uint64(pk, v); }
static void kv_d(msgpack_packer *pk, const char *k, double v) { pk_str(pk, k); msgpack_pack_double(pk, v); }
static void kv_s(msgpack_packer *pk, const char *k, const char *v) { pk_str(pk, k); pk_str(pk, v); }
/* a string that may have come from a client: printable ASCII as is, anything else escaped (bounded, valid UTF-8) */
static void kv_esc(msgpack_packer *pk, const char *k, const char *v)
{
    char buf[CZK_MSG_REQID_MAX * 4 + 8];
    kv_s(pk, k, czk_esc(v, buf, sizeof(buf)));
}

static const char *job_state_name(int s)
{
    static const char *n[] = {"active", "complete", "failed", "cancelled"};
    return s >= 0 && s <= J_CANCELLED ? n[s] : "?";
}

static void pack_job(msgpack_packer *pk, const gpud_job *j)
{
    unsigned per[P_STATE_COUNT] = {0};
    for (uint32_t i = 0; j->parts && i < j->nparts; i++)
        per[j->parts[i].state]++;
    msgpack_pack_map(pk, 12);
    kv_u(pk, "id", j->id);
    kv_s(pk, "state", job_state_name(j->state));
    kv_esc(pk, "circuit", j->cname);
    kv_esc(pk, "request", j->req);
    kv_u(pk, "lane", j->lane);
    kv_u(pk, "partitions", j->nparts);
    kv_u(pk, "done", j->nfinished - j->nfailed);
    kv_u(pk, "failed", j->nfailed);
    kv_u(pk, "queued", per[P_QUEUED]);
    kv_u(pk, "synth", per[P_SYNTH] + per[P_READY]);
    kv_u(pk, "gpu", per[P_GPU]);
    kv_u(pk, "finalize", per[P_FINALIZE]);
}

static uint64_t status_job_id(const czk_msg_status *s)
{
    msgpack_unpacked up;
    size_t off = 0;
    uint64_t id = 0;
    if (!s->body.len)
        return 0;
    msgpack_unpacked_init(&up);
    if (msgpack_unpack_next(&up, (const char *)s->body.ptr, s->body.len, &off) == MSGPACK_UNPACK_SUCCESS &&
        up.data.type == MSGPACK_OBJECT_MAP)
        for (uint32_t i = 0; i < up.data.via.map.size; i++) {
            const msgpack_object_kv *kv = &up.data.via.map.ptr[i];
            if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == 3 &&
                !memcmp(kv->key.via.str.ptr, "job", 3) && kv->val.type == MSGPACK_OBJECT_POSITIVE_INTEGER)
                id = kv->val.via.u64;
        }
    msgpack_unpacked_destroy(&up);
    return id;
}

/* gpu_busy_pct / gpu_max_gap_ms over the last minute, from the compute spans
 * of the workers (finished ones from g->compute_hist, running ones up to now) */
static void pack_busy(gpud *g, msgpack_packer *pk, uint64_t now)
{
    czk_trace_span run[64];
    size_t nrun = 0;
    double pct = 0;
    uint64_t gap = 0, t0 = now > 60000000000ull ? now - 60000000000ull : 0;

    for (unsigned i = 0; i < g->n_workers && nrun < 64; i++) {
        uint64_t t = atomic_load(&g->workers[i].t_started);
        if (t) {
            run[nrun].begin_ns = t;
            run[nrun++].end_ns = now;
        }
    }
    if (czk_trace_busy(&g->compute_hist, run, nrun, t0, now, &pct, &gap) < 0)
        gap = now - t0;
    kv_d(pk, "gpu_busy_pct", pct);
    kv_u(pk, "gpu_max_gap_ms", gap / 1000000u);
}

static void on_status(gpud *g, czk_conn *c, const czk_msg_status *req)
{
    static const char *stage_names[ST_COUNT] = {"queue", "synth", "gpu", "finalize"};
    uint64_t want = status_job_id(req), now = czk_mono_ns();
    /* another user's job is answered like an unknown one: no "job" key */
    gpud_job *wj = want ? visible_job(g, c, want) : NULL;
    unsigned jc[4] = {0}, nlist = 0, recent = 0, others = 0, others_parts = 0;
    int all = sees_all(c);
    uint32_t uid = (uint32_t)czk_conn_cred(c)->uid;
    msgpack_sbuffer sb;
    msgpack_packer pk;
    czk_msg m;

    for (gpud_job *j = g->jobs_head; j; j = j->next) {
        jc[j->state]++;
        if (j->state != J_ACTIVE)
            continue;
        if (!all && j->uid != uid) {
            others++;
            others_parts += j->nparts - j->nfinished;
        } else if (nlist < 64) {
            nlist++;
        }
    }
    for (unsigned i = 0; i < GPUD_RATE_WINDOW; i++)
        if (g->done_ring[i] && now - g->done_ring[i] < 60000000000ull)
            recent++;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 17 + (wj != NULL) + !all);
    kv_s(&pk, "daemon", "czk-gpud");
    kv_s(&pk, "state_dir", g->cfg.state_dir); /* where `czk trace` finds the traces */
    kv_s(&pk, "backend", g->bops->name);
    pk_str(&pk, "jobs");
    msgpack_pack_map(&pk, 4);
    kv_u(&pk, "active", jc[J_ACTIVE]);
    kv_u(&pk, "complete", jc[J_COMPLETE]);
    kv_u(&pk, "failed", jc[J_FAILED]);
    kv_u(&pk, "cancelled", jc[J_CANCELLED]);
    pk_str(&pk, "partitions");
    msgpack_pack_map(&pk, 5);
    kv_u(&pk, "queued", g->part_count[P_QUEUED]);
    kv_u(&pk, "synth", g->part_count[P_SYNTH] + g->part_count[P_READY]);
    kv_u(&pk, "gpu", g->part_count[P_GPU]);
    kv_u(&pk, "finalize", g->part_count[P_FINALIZE]);
    kv_u(&pk, "lanes", GPUD_LANES);
    pk_str(&pk, "pools");
    msgpack_pack_array(&pk, g->n_pools);
    for (unsigned i = 0; i < g->n_pools; i++) {
        unsigned q = 0;
        for (uint32_t k = 0; k < g->pools[i].pool.hdr->slot_count; k++)
            q += g->pools[i].slots[k].quarantined;
        msgpack_pack_map(&pk, 6);
        kv_u(&pk, "id", g->pools[i].id);
        pk_str(&pk, "node");
        msgpack_pack_int32(&pk, g->pools[i].node);
        kv_u(&pk, "slots", g->pools[i].pool.hdr->slot_count);
        kv_u(&pk, "in_use", g->pools[i].in_use);
        kv_u(&pk, "quarantined", q);
        kv_u(&pk, "hugetlb", g->pools[i].pool.hugetlb);
    }
    pk_str(&pk, "latency_s");
    msgpack_pack_map(&pk, ST_COUNT);
    for (int s = 0; s < ST_COUNT; s++)
        kv_d(&pk, stage_names[s], g->stage[s].n ? g->stage[s].sum_s / (double)g->stage[s].n : 0.0);
    kv_u(&pk, "proofs_per_minute", recent);
    pack_busy(g, &pk, now);
    kv_u(&pk, "proofs_total", g->proofs_total);
    kv_u(&pk, "failures_total", g->failures_total);
    kv_u(&pk, "synth_timeouts_total", g->synth_timeouts_total);
    kv_u(&pk, "result_resends_total", g->result_resends_total);
    kv_u(&pk, "synths", gpud_synth_count(g));
    kv_u(&pk, "finalizer", g->finalizer != NULL);
    pk_str(&pk, "active");
    msgpack_pack_array(&pk, nlist);
    nlist = 0;
    for (gpud_job *j = g->jobs_head; j; j = j->next)
        if (j->state == J_ACTIVE && (all || j->uid == uid) && nlist < 64) {
            pack_job(&pk, j);
            nlist++;
        }
    if (!all) {
        /* other users' active jobs and their unfinished partitions, as counts only */
        pk_str(&pk, "others");
        msgpack_pack_map(&pk, 2);
        kv_u(&pk, "jobs", others);
        kv_u(&pk, "partitions", others_parts);
    }
    if (wj) {
        pk_str(&pk, "job");
        pack_job(&pk, wj);
    }
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_STATUS_REPLY;
    m.u.status.body = (czk_bytes){(const uint8_t *)sb.data, (uint32_t)sb.size};
    if (gpud_send(g, c, &m, NULL, 0) < 0)
        gpud_reply_error(g, c, -EMSGSIZE, "status does not fit one record");
    msgpack_sbuffer_destroy(&sb);
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
