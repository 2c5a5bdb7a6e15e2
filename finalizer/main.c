/*
 * main.c — czk-finalizer: connects to czk-gpud (reconnecting with backoff),
 * and for every RESULT draws r, s from the OS CSPRNG, assembles the proof,
 * pairing-verifies it against the circuit's verification key, writes the
 * files durably (output.c) and only then answers DONE with the proof texts.
 * A proof that does not verify is never written: DONE carries -EBADMSG and
 * the reason.  A RESULT whose files already exist is answered from them only
 * when they are provably this partition's (output.c: identity.json, the
 * public signals) and, with finalizer.verify, the stored proof still passes
 * the pairing check against the current verification key, and only once they
 * and their directories are fsynced (fin_output_sync); otherwise they are
 * moved to output_dir/.stale and the partition is proved again.
 *
 * A write that fails because the disk is full or failing (ENOSPC, EDQUOT,
 * EIO, EROFS) is not a failed proof: the verified proof is kept in memory and
 * written again on a back-off timer (0.5 s doubling to 30 s) until it fits,
 * and only then is DONE sent.  gpud keeps such a partition awaiting DONE; if
 * the finalizer restarts meanwhile, gpud re-sends the RESULT.  One warning
 * when an episode starts, one line when it ends.
 *
 * One finalizer per output_dir: it holds an flock on output_dir/.finalizer.lock
 * from start to exit, and a second one exits with status 2 naming the first.
 *
 * Everything runs on the loop thread: one RESULT is a few milliseconds of
 * pairing and a few fsyncs, and the finalizer has nothing else to do.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/digest.h"
#include "common/base/fsutil.h"
#include "common/runtime/daemon.h"
#include "common/runtime/fault.h"
#include "common/runtime/metrics.h"
#include "common/groth16/any.h"
#include "common/base/log.h"
#include "common/runtime/trace.h"
#include "finalizer/finalizer.h"
#include "ipc/daemon_loop.h"
#include "ipc/loop.h"
#include "ipc/peer.h"

#define TEXT_MAX (CZK_MSG_MAX_RECORD - 2048)

typedef struct fin_circuit {
    char name[64];
    uint32_t n_public;
    czk_groth16_any_key key; /* finalize parameters and verification key, on the key's curve */
    char vk_sha256[65]; /* of its verification_key.json text */
    czk_zkey_ident ident;    /* key id and file stamp of the zkey it was read from */
    czk_zkey_stamp reported; /* the file's stamp last reported by the re-check */
    uint8_t refused;         /* czk-gpud announced another key id (or none) under this name */
    uint8_t failed;          /* its zkey could not be read at start: announced with an all-zero key id,
                                which no key has, so czk-gpud sends none of it (until a reload) */
} fin_circuit;

/* a verified proof whose files could not be written yet (disk full).  c is
 * a slot that reload_circuit overwrites with another key, so the entry keeps
 * the digest of the verification key it was proved and checked with: it is
 * written, and answers a RESULT, only while c still has that key */
typedef struct fin_pending {
    struct fin_pending *next;
    const fin_circuit *c;
    char vk_sha256[65];
    fin_timings t;
    char *ptext, *utext;
} fin_pending;

#define RETRY_FIRST_MS 500
#define RETRY_MAX_MS 30000

typedef struct fin {
    czk_config cfg;
    czk_loop *loop;
    czk_conn *conn;
    int stopping;
    czk_backoff backoff; /* reconnection to gpud */
    fin_circuit *circuits;
    unsigned n_circuits;
    uint64_t written, resent, failed, stale;
    fin_pending *pending; /* waiting for disk space, oldest first */
    unsigned n_pending;
    uint64_t retry_ms;      /* next back-off */
    int retry_armed;
    uint64_t space_episodes; /* times the output disk filled up */
    uint64_t write_retries;  /* writes attempted again */
    /* metrics ([finalizer] metrics_port; open_metrics), all written on the loop thread */
    czk_metrics *metrics;
    czk_metric *m_written, *m_from_files, *m_verify_failures, *m_errors, *m_stale, *m_finalize_seconds;
    czk_metric *m_pending, *m_space_episodes, *m_write_retries, *m_connected;
} fin;

static void try_connect(fin *f);

static void send_done_to(fin *f, uint64_t job, uint32_t part, int status, const char *reason, const char *proof,
                         size_t plen, const char *pub, size_t ulen)
{
    czk_msg m;
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_DONE;
    m.u.done.job_id = job;
    m.u.done.partition = part;
    m.u.done.status = status < -4095 ? -EIO : status;
    if (status < 0)
        czk_metric_inc(f->m_errors, 1);
    if (reason)
        snprintf(m.u.done.reason, sizeof(m.u.done.reason), "%s", reason);
    if (proof && pub && plen + ulen <= TEXT_MAX) {
        m.u.done.proof = (czk_bytes){(const uint8_t *)proof, (uint32_t)plen};
        m.u.done.publics = (czk_bytes){(const uint8_t *)pub, (uint32_t)ulen};
    }
    /* a DONE that cannot be queued closes the link (ipc/loop.h, flow
     * control): gpud re-sends every unanswered RESULT when it reconnects */
    if (f->conn)
        czk_conn_send(f->conn, &m, NULL, 0);
}

static void send_done(fin *f, const czk_msg_result *res, int status, const char *reason, const char *proof,
                      size_t plen, const char *pub, size_t ulen)
{
    send_done_to(f, res->job_id, res->partition, status, reason, proof, plen, pub, ulen);
}

static void status_line(fin *f)
{
    czk_metric_set(f->m_pending, f->n_pending);
    if (f->n_pending)
        czk_daemon_status("%s; %llu proofs written; %u waiting for space in output_dir", f->conn ? "connected" : "waiting for czk-gpud",
                          (unsigned long long)f->written, f->n_pending);
    else
        czk_daemon_status("%s; %llu proofs written", f->conn ? "connected" : "waiting for czk-gpud",
                          (unsigned long long)f->written);
}

static void summary(fin *f, const fin_timings *t)
{
    czk_error e = {0};
    if (t->n_partitions &&
        fin_output_summary(f->cfg.output_dir, t->job, t->n_partitions, t->circuit, t->submit_ns, &e) < 0)
        czk_warn("job %llu: could not write summary.json: %s", (unsigned long long)t->job, e.msg);
}

static void retry_tick(czk_timer *tm, void *ctx);

static void arm_retry(fin *f)
{
    if (f->retry_armed || !f->pending || f->stopping)
        return;
    f->retry_armed = 1;
    czk_loop_timer(f->loop, f->retry_ms, 0, retry_tick, f);
    f->retry_ms = f->retry_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : f->retry_ms * 2;
}

static fin_pending *pending_find(fin *f, uint64_t job, uint32_t part)
{
    for (fin_pending *p = f->pending; p; p = p->next)
        if (p->t.job == job && p->t.partition == part)
            return p;
    return NULL;
}

static void pending_free(fin_pending *p)
{
    free(p->ptext);
    free(p->utext);
    free(p);
}

/* takes p out of the list and frees it */
static void pending_remove(fin *f, fin_pending *p)
{
    for (fin_pending **pp = &f->pending; *pp; pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            f->n_pending--;
            pending_free(p);
            return;
        }
}

/* 1 while the key p was proved with is still its circuit's */
static int pending_key_current(const fin_pending *p)
{
    return !strcmp(p->vk_sha256, p->c->vk_sha256);
}

/* the proofs waiting for disk space that c's key (now replaced) made: never
 * written under the new key's identity; czk-gpud sends their RESULTs again
 * (at the reconnection that follows a reload, or result_resend_s later) and
 * they are proved with the key the circuit has then */
static void pending_drop_stale_keys(fin *f)
{
    fin_pending *p = f->pending, *next;

    for (; p; p = next) {
        next = p->next;
        if (pending_key_current(p))
            continue;
        czk_warn("job %llu partition %u: the proof waiting for disk space was made with circuit \"%s\"'s previous "
                 "key (verification key sha256 %.16s..., now %.16s...): dropped, czk-gpud sends the RESULT again",
                 (unsigned long long)p->t.job, p->t.partition, p->c->name, p->vk_sha256, p->c->vk_sha256);
        pending_remove(f, p);
    }
    status_line(f);
}

/* keeps a verified proof whose write failed for lack of space; owns ptext/utext */
static void pending_add(fin *f, const fin_circuit *c, const fin_timings *t, char *ptext, char *utext,
                        const char *why)
{
    fin_pending *p = calloc(1, sizeof(*p)), **tail;
    if (!p) {
        /* cannot even remember it: gpud re-sends the RESULT after a reconnect */
        czk_err("job %llu partition %u: out of memory keeping a proof that waits for disk space; dropping the "
                "connection so czk-gpud sends it again",
                (unsigned long long)t->job, t->partition);
        free(ptext);
        free(utext);
        if (f->conn)
            czk_conn_close(f->conn, -ENOMEM, "out of memory", 0);
        return;
    }
    p->c = c;
    memcpy(p->vk_sha256, c->vk_sha256, sizeof(p->vk_sha256));
    p->t = *t;
    p->t.circuit = c->name;
    p->ptext = ptext;
    p->utext = utext;
    if (!f->pending) {
        f->space_episodes++;
        czk_metric_inc(f->m_space_episodes, 1);
        f->retry_ms = RETRY_FIRST_MS;
        czk_warn("output_dir \"%s\" cannot take proofs (%s); verified proofs wait in memory and are written when "
                 "space returns",
                 f->cfg.output_dir, why);
    }
    for (tail = &f->pending; *tail; tail = &(*tail)->next)
        ;
    *tail = p;
    f->n_pending++;
    status_line(f);
    arm_retry(f);
}

static fin_identity identity_of(const fin_circuit *c, uint64_t job, uint32_t part, const char *utext)
{
    fin_identity id = {job, part, c->name, c->vk_sha256, utext};
    return id;
}

static void retry_tick(czk_timer *tm, void *ctx)
{
    fin *f = ctx;
    fin_pending **pp = &f->pending;
    unsigned wrote = 0;
    (void)tm;

    f->retry_armed = 0;
    pending_drop_stale_keys(f); /* reload_circuit drops them already; never written under another key */
    if (!f->pending)
        return;
    while (*pp) {
        fin_pending *p = *pp;
        fin_identity id = {p->t.job, p->t.partition, p->c->name, p->vk_sha256, p->utext};
        czk_error e = {0};
        int rc;

        f->write_retries++;
        czk_metric_inc(f->m_write_retries, 1);
        rc = fin_output_write(f->cfg.output_dir, &p->t, &id, p->ptext, p->utext, &e);
        if (rc < 0 && fin_output_retryable(rc))
            break; /* still full: keep the order, try again later */
        *pp = p->next;
        f->n_pending--;
        if (rc < 0) {
            czk_err("job %llu partition %u: %s", (unsigned long long)p->t.job, p->t.partition, e.msg);
            send_done_to(f, p->t.job, p->t.partition, rc, e.msg, NULL, 0, NULL, 0);
        } else {
            f->written++;
            czk_metric_inc(f->m_written, 1);
            wrote++;
            czk_info("job %llu partition %u: proof written after waiting for disk space",
                     (unsigned long long)p->t.job, p->t.partition);
            send_done_to(f, p->t.job, p->t.partition, 0, NULL, p->ptext, strlen(p->ptext), p->utext,
                         strlen(p->utext));
            summary(f, &p->t);
        }
        pending_free(p);
    }
    if (!f->pending) {
        czk_info("output_dir \"%s\" takes proofs again: %u waiting proofs written", f->cfg.output_dir, wrote);
        f->retry_ms = RETRY_FIRST_MS;
    } else if (wrote) {
        f->retry_ms = RETRY_FIRST_MS; /* progress: keep going soon */
    }
    status_line(f);
    arm_retry(f);
}

static const fin_circuit *find_circuit(fin *f, const czk_msg_result *r)
{
    if (r->circuit[0]) {
        for (unsigned i = 0; i < f->n_circuits; i++)
            if (!strcmp(f->circuits[i].name, r->circuit))
                return &f->circuits[i];
        return NULL;
    }
    return r->circuit_id < f->n_circuits ? &f->circuits[r->circuit_id] : NULL;
}

/* 1 when the stored proof text verifies against c's current key with pub */
static int stored_proof_verifies(const fin_circuit *c, const char *ptext, size_t plen, const uint8_t *pub)
{
    return czk_groth16_any_proof_verifies(&c->key, ptext, plen, pub);
}

static void on_result(fin *f, const czk_msg_result *r)
{
    uint64_t t0 = czk_mono_ns();
    const fin_circuit *c = find_circuit(f, r);
    czk_groth16_any_msm_out mo;
    const uint8_t *pts[CZK_G16_N_PTS];
    uint32_t plens[CZK_G16_N_PTS];
    char *ptext = NULL, *utext = NULL, *old_p = NULL, *old_u = NULL, why[700], stale_why[200];
    size_t old_plen = 0, old_ulen = 0;
    czk_error e = {0};
    fin_identity id;
    fin_pending *pend;
    fin_timings t;
    int rc, sync_rc;

    if (c && c->failed) {
        /* gpud sends none of a circuit we announced without a key; the
         * RESULT stays with gpud (re-sent later), nothing is failed for it */
        czk_err("job %llu partition %u: circuit \"%s\" has no key here (its zkey could not be read): not "
                "answered", (unsigned long long)r->job_id, r->partition, c->name);
        return;
    }
    if (!c) {
        snprintf(why, sizeof(why), "circuit \"%s\" (#%u) is not configured in the finalizer", r->circuit,
                 r->circuit_id);
        czk_err("job %llu partition %u: circuit #%u is not configured in the finalizer", (unsigned long long)r->job_id,
                r->partition, r->circuit_id);
        send_done(f, r, -ENOENT, why, NULL, 0, NULL, 0);
        return;
    }
    if (c->refused) {
        /* gpud should not have sent it (its circuit map refuses this circuit);
         * the key it proved with is not ours: never a proof from two keys */
        snprintf(why, sizeof(why), "circuit \"%s\": the finalizer loaded another zkey (key id differs from "
                 "czk-gpud's, see the finalizer's log)", c->name);
        czk_err("job %llu partition %u: %s", (unsigned long long)r->job_id, r->partition, why);
        send_done(f, r, -EKEYREJECTED, why, NULL, 0, NULL, 0);
        return;
    }
    if (r->n_points != CZK_G16_N_PTS || r->publics.len != c->n_public * 32u) {
        snprintf(why, sizeof(why), "RESULT has %u points / %u public bytes, expected %u points and %u bytes",
                 r->n_points, r->publics.len, CZK_G16_N_PTS, c->n_public * 32u);
        send_done(f, r, -EBADMSG, why, NULL, 0, NULL, 0);
        return;
    }
    for (unsigned k = 0; k < CZK_G16_N_PTS; k++) {
        pts[k] = r->points[k].ptr;
        plens[k] = r->points[k].len;
    }
    if (czk_groth16_any_msm_out_set(&mo, c->key.curve, pts, plens, &e) < 0 ||
        czk_groth16_any_public_dump(c->key.curve, r->publics.ptr, c->n_public, &utext, &e) < 0) {
        send_done(f, r, e.code, e.msg, NULL, 0, NULL, 0);
        goto out;
    }
    if ((pend = pending_find(f, r->job_id, r->partition))) {
        if (pend->c == c && pending_key_current(pend) && !strcmp(pend->utext, utext)) {
            /* the same partition, re-sent: its proof answers when it is written */
            czk_debug("job %llu partition %u: re-sent while its proof waits for disk space",
                      (unsigned long long)r->job_id, r->partition);
            goto out;
        }
        czk_warn("job %llu partition %u: a proof waiting for disk space belongs to another circuit, another key or "
                 "other public signals: dropped, proving this RESULT",
                 (unsigned long long)r->job_id, r->partition);
        pending_remove(f, pend);
        status_line(f);
    }
    id = identity_of(c, r->job_id, r->partition, utext);
    stale_why[0] = 0;
    rc = fin_output_check(f->cfg.output_dir, &id, &old_p, &old_plen, &old_u, &old_ulen, stale_why, sizeof(stale_why),
                          &e);
    if (rc == FIN_MATCH && f->cfg.finalizer_verify && !stored_proof_verifies(c, old_p, old_plen, r->publics.ptr)) {
        snprintf(stale_why, sizeof(stale_why), "the stored proof does not verify against the current verification key");
        rc = FIN_STALE;
    }
    if (rc == FIN_MATCH && (sync_rc = fin_output_sync(f->cfg.output_dir, r->job_id, r->partition, &e)) < 0) {
        /* found in the page cache, perhaps, and not durable: no DONE until
         * they are (czk-gpud would journal it).  A full or failing disk is
         * tried again when czk-gpud re-sends the RESULT (reconnection or
         * result_resend_s); anything else fails the partition as a failed
         * write does */
        czk_err("job %llu partition %u: files already written could not be made durable%s: %s",
                (unsigned long long)r->job_id, r->partition,
                fin_output_retryable(sync_rc) ? " (not answered until czk-gpud sends the RESULT again)" : "",
                e.msg);
        if (!fin_output_retryable(sync_rc))
            send_done(f, r, sync_rc, e.msg, NULL, 0, NULL, 0);
        goto out;
    }
    if (rc == FIN_MATCH) {
        czk_info("job %llu partition %u: already written, answering from the files", (unsigned long long)r->job_id,
                 r->partition);
        f->resent++;
        czk_metric_inc(f->m_from_files, 1);
        send_done(f, r, 0, NULL, old_p, old_plen, old_u, old_ulen);
        memset(&t, 0, sizeof(t));
        t.job = r->job_id;
        t.n_partitions = r->n_partitions;
        t.circuit = c->name;
        t.submit_ns = r->submit_ns;
        summary(f, &t);
        goto out;
    }
    if (rc == FIN_STALE) {
        f->stale++;
        czk_metric_inc(f->m_stale, 1);
        czk_warn("job %llu partition %u: files already there are not this partition's (%s): moving them to "
                 "%s/.stale and proving again",
                 (unsigned long long)r->job_id, r->partition, stale_why, f->cfg.output_dir);
        if ((rc = fin_output_move_aside(f->cfg.output_dir, r->job_id, r->partition, &e)) < 0) {
            czk_err("job %llu partition %u: %s", (unsigned long long)r->job_id, r->partition, e.msg);
            send_done(f, r, rc, e.msg, NULL, 0, NULL, 0);
            goto out;
        }
    } else if (rc < 0) {
        czk_err("job %llu partition %u: %s", (unsigned long long)r->job_id, r->partition, e.msg);
        send_done(f, r, rc, e.msg, NULL, 0, NULL, 0);
        goto out;
    }
    if ((rc = czk_groth16_any_prove(&c->key, &mo, r->publics.ptr, f->cfg.finalizer_verify, &ptext, &e)) < 0) {
        if (rc == -EBADMSG) {
            czk_err("job %llu partition %u: %s; nothing written", (unsigned long long)r->job_id, r->partition, e.msg);
            f->failed++;
            czk_metric_inc(f->m_verify_failures, 1);
        }
        send_done(f, r, rc, e.msg, NULL, 0, NULL, 0);
        goto out;
    }
    memset(&t, 0, sizeof(t));
    t.job = r->job_id;
    t.partition = r->partition;
    t.n_partitions = r->n_partitions;
    t.circuit = c->name;
    t.submit_ns = r->submit_ns;
    t.queue_s = (double)r->queue_ns * 1e-9;
    t.synth_s = (double)r->synth_ns * 1e-9;
    t.gpu_s = (double)r->gpu_ns * 1e-9;
    t.finalize_s = (double)(czk_mono_ns() - t0) * 1e-9;
    if ((rc = fin_output_write(f->cfg.output_dir, &t, &id, ptext, utext, &e)) < 0) {
        if (fin_output_retryable(rc)) {
            /* not a failed proof: it waits for space; DONE follows the write */
            czk_debug("job %llu partition %u: %s", (unsigned long long)r->job_id, r->partition, e.msg);
            pending_add(f, c, &t, ptext, utext, e.msg);
            ptext = utext = NULL;
            goto out;
        }
        czk_err("job %llu partition %u: %s", (unsigned long long)r->job_id, r->partition, e.msg);
        send_done(f, r, rc, e.msg, NULL, 0, NULL, 0);
        goto out;
    }
    f->written++;
    czk_metric_inc(f->m_written, 1);
    czk_info("job %llu partition %u: proof verified and written", (unsigned long long)r->job_id, r->partition);
    send_done(f, r, 0, NULL, ptext, strlen(ptext), utext, strlen(utext));
    czk_fault("finalizer.after_done_sent");
    summary(f, &t);
out:
    free(ptext);
    free(utext);
    free(old_p);
    free(old_u);
}

/* ---------------------------------------------------------- connection --- */

static void conn_msg(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx)
{
    fin *f = ctx;
    (void)c;
    (void)fds;
    (void)nfds;
    if (m->type == CZK_MSG_RESULT) {
        uint64_t t0 = czk_trace_now(), t1;
        on_result(f, &m->u.result);
        t1 = czk_trace_now();
        czk_trace_add(m->u.result.job_id, m->u.result.partition, CZK_TRACE_FINALIZE, t0, t1);
        czk_metric_observe(f->m_finalize_seconds, (double)(t1 - t0) * 1e-9);
    } else if (m->type == CZK_MSG_ERROR)
        czk_warn("gpud says: %s", m->u.error.message);
}

static void reconnect_tick(czk_timer *t, void *ctx)
{
    fin *f = ctx;
    (void)t;
    czk_backoff_fired(&f->backoff);
    if (!f->conn && !f->stopping)
        try_connect(f);
}

static void schedule_reconnect(fin *f)
{
    czk_backoff_schedule(&f->backoff, f->loop, reconnect_tick, f);
}

/* Which of our circuits czk-gpud agrees on (name and key id, gpud/circuits.h
 * does the same from its side and sends no RESULT of a refused circuit). */
static int circuit_load(fin_circuit *c, const char *name, const char *path, czk_error *e);

/*
 * gpud announced key id `theirs` for circuit i, not ours.  When our zkey
 * file now holds that key (gpud switched to it on a reload, gpud/reload.c),
 * take it in place of ours: gpud switches only after every job of the old
 * key is done, so no proof of it is in flight here.  1 when taken.
 */
static int reload_circuit(fin *f, unsigned i, const uint8_t *theirs)
{
    fin_circuit *c = &f->circuits[i], nc;
    const char *path = f->cfg.circuits[i].zkey;
    czk_zkey_ident now;
    czk_error e = {0};

    if (czk_zkey_ident_path(path, &now, &e) < 0 || memcmp(now.id, theirs, CZK_MSG_KEY_ID) != 0)
        return 0;
    if (circuit_load(&nc, c->name, path, &e) < 0) {
        czk_err("circuit \"%s\": could not load the key czk-gpud now uses: %s", c->name, e.msg);
        return 0;
    }
    if (memcmp(nc.ident.id, theirs, CZK_MSG_KEY_ID) != 0 ||
        (!c->failed && (nc.n_public != c->n_public || nc.key.curve != c->key.curve))) {
        czk_err("circuit \"%s\": %s changed again while it was loaded, or has another number of public signals "
                "or another curve: "
                "keeping the old key",
                c->name, path);
        czk_groth16_any_key_free(&nc.key);
        return 0;
    }
    czk_groth16_any_key_free(&c->key);
    *c = nc;
    czk_info("circuit \"%s\": reloaded %s, the key czk-gpud now uses", c->name, path);
    pending_drop_stale_keys(f);
    return 1;
}

/* 1 when a circuit was reloaded: the HELLO we sent named the old key */
static int check_gpud_circuits(fin *f, const czk_msg_hello *h)
{
    int reloaded = 0;

    for (unsigned i = 0; i < f->n_circuits; i++) {
        fin_circuit *c = &f->circuits[i];
        char ours[CZK_ZKEY_ID_HEX], theirs[CZK_ZKEY_ID_HEX];
        int k = czk_msg_hello_circuit(h, c->name);

        c->refused = 0;
        if (h->n_circuits == 0)
            continue; /* an older gpud: it did not say */
        czk_hex(c->ident.id, CZK_SHA256_LEN, ours);
        if (k < 0 && c->failed)
            continue; /* failed here at start (logged then), and not served by gpud either */
        if (k < 0) {
            czk_warn("circuit \"%s\" (key id %s) is not configured in czk-gpud", c->name, ours);
            continue;
        }
        if (memcmp(h->circuits[k].key_id, c->ident.id, CZK_MSG_KEY_ID) != 0) {
            if (reload_circuit(f, i, h->circuits[k].key_id)) {
                reloaded = 1;
                continue;
            }
            c->refused = 1;
            czk_hex(h->circuits[k].key_id, CZK_MSG_KEY_ID, theirs);
            czk_err("circuit \"%s\" refused: czk-gpud's zkey has key id %s, this finalizer's has %s: no proof of "
                    "\"%s\" is finalized until both load the same key",
                    c->name, theirs, ours, c->name);
        }
    }
    return reloaded;
}

static void conn_open(czk_conn *c, void *ctx)
{
    fin *f = ctx;
    czk_backoff_reset(&f->backoff);
    czk_metric_set(f->m_connected, 1);
    czk_info("connected to czk-gpud");
    if (check_gpud_circuits(f, czk_conn_peer(c))) {
        czk_conn_close(c, -ESTALE, "reloaded keys: reconnecting to announce them", 0);
        return;
    }
    status_line(f);
}

static void conn_close(czk_conn *c, int err, const char *why, void *ctx)
{
    fin *f = ctx;
    if (f->conn != c)
        return;
    f->conn = NULL;
    czk_metric_set(f->m_connected, 0);
    if (f->stopping)
        return;
    czk_warn("lost czk-gpud (%s): reconnecting", why);
    czk_daemon_status("waiting for czk-gpud");
    schedule_reconnect(f);
}

static const czk_conn_ops fin_ops = {
    .on_open = conn_open,
    .on_msg = conn_msg,
    .on_close = conn_close,
};

static void try_connect(fin *f)
{
    char path[CZK_CONFIG_PATH_MAX + 16];
    czk_endpoint ep;
    czk_error e = {0};
    int fd;

    snprintf(path, sizeof(path), "%s/gpud.sock", f->cfg.runtime_dir);
    if (czk_peer_connect(path, &fd, &e) < 0) {
        czk_debug("connect: %s", e.msg);
        schedule_reconnect(f);
        return;
    }
    memset(&ep, 0, sizeof(ep));
    czk_peer_hello_init(&ep.hello, CZK_ROLE_FINALIZER, -1, 0, "czk-finalizer");
    for (unsigned i = 0; i < f->n_circuits && i < CZK_MSG_MAX_CIRCUITS; i++) { /* our circuits, config order */
        snprintf(ep.hello.circuits[i].name, sizeof(ep.hello.circuits[i].name), "%s", f->circuits[i].name);
        memcpy(ep.hello.circuits[i].key_id, f->circuits[i].ident.id, CZK_MSG_KEY_ID);
        ep.hello.n_circuits = i + 1;
    }
    ep.policy.uid = geteuid();
    ep.policy.gid = (gid_t)-1;
    ep.policy.allow_root = 1;
    ep.policy.roles_mask = CZK_ROLE_BIT(CZK_ROLE_GPUD);
    if (czk_loop_connect(f->loop, fd, &ep, &fin_ops, f, &f->conn, &e) < 0) {
        czk_warn("connect to %s: %s", path, e.msg);
        f->conn = NULL;
        schedule_reconnect(f);
    }
}

/* ------------------------------------------------------ zkey re-checks --- */

/* The zkey files against what was loaded: every 2 s (a stat each; the key id
 * is read only when the file moved), logging each change once; the next tick
 * after a SIGHUP (reload) says so even when nothing changed.  The finalizer
 * keeps the verification key it loaded either way. */
static void zkey_watch_tick(czk_timer *t, void *ctx)
{
    fin *f = ctx;
    int verbose = czk_daemon_hup_take();
    (void)t;
    if (verbose)
        czk_info("SIGHUP: re-checking the zkeys");
    for (unsigned i = 0; i < f->n_circuits; i++)
        if (!f->circuits[i].failed)
            czk_zkey_recheck_log(&f->circuits[i].ident, &f->circuits[i].reported, "czk-finalizer",
                                 f->circuits[i].name, f->cfg.circuits[i].zkey, verbose);
}

static void zkey_watch_start(fin *f)
{
    czk_daemon_sighup_init();
    czk_loop_timer(f->loop, 2000, 2000, zkey_watch_tick, f);
}

/* ------------------------------------------------------------- metrics --- */

/* czk_finalizer_* on [finalizer] metrics_addr:metrics_port (0: off); the
 * finalizer runs on without metrics when the port cannot be bound */
static void open_metrics(fin *f)
{
    int r;

    if (czk_metrics_new(&f->metrics) < 0) {
        czk_warn("out of memory for the metrics: continuing without");
        return;
    }
    f->m_written = czk_metrics_add(f->metrics, CZK_METRIC_COUNTER, "czk_finalizer_proofs_total", NULL,
                                   "proofs verified (with finalizer.verify) and written");
    f->m_from_files = czk_metrics_add(f->metrics, CZK_METRIC_COUNTER, "czk_finalizer_answered_from_files_total",
                                      NULL, "RESULTs answered from proof files already written (re-sends)");
    f->m_verify_failures = czk_metrics_add(f->metrics, CZK_METRIC_COUNTER, "czk_finalizer_verify_failures_total",
                                           NULL, "proofs that failed the pairing check (never written)");
    f->m_errors = czk_metrics_add(f->metrics, CZK_METRIC_COUNTER, "czk_finalizer_errors_total", NULL,
                                  "DONEs sent with an error (verification failures included)");
    f->m_stale = czk_metrics_add(f->metrics, CZK_METRIC_COUNTER, "czk_finalizer_stale_moved_total", NULL,
                                 "partition directories of something else moved to output_dir/.stale");
    f->m_finalize_seconds = czk_metrics_add(f->metrics, CZK_METRIC_HISTOGRAM, "czk_finalizer_finalize_seconds",
                                            NULL, "time to handle one RESULT: blinding, pairing check, durable "
                                            "writes, DONE");
    f->m_pending = czk_metrics_add(f->metrics, CZK_METRIC_GAUGE, "czk_finalizer_pending_writes", NULL,
                                   "verified proofs waiting in memory for space in output_dir");
    f->m_space_episodes = czk_metrics_add(f->metrics, CZK_METRIC_COUNTER, "czk_finalizer_disk_full_episodes_total",
                                          NULL, "times output_dir stopped taking proofs (ENOSPC, EDQUOT, EIO, EROFS)");
    f->m_write_retries = czk_metrics_add(f->metrics, CZK_METRIC_COUNTER, "czk_finalizer_write_retries_total", NULL,
                                         "writes of waiting proofs attempted again");
    f->m_connected = czk_metrics_add(f->metrics, CZK_METRIC_GAUGE, "czk_finalizer_gpud_connected", NULL,
                                     "1 while connected to czk-gpud");
    if ((r = czk_loop_export_metrics(f->loop, f->metrics)) < 0)
        czk_warn("could not register the connection metrics: %s", strerror(-r));
    /* czk_metrics_serve logs where it serves, or why it cannot */
    if (czk_metrics_serve(f->metrics, f->cfg.fin_metrics_addr, f->cfg.fin_metrics_port) < 0)
        czk_warn("continuing without metrics");
}

/* ---------------------------------------------------------------- main --- */

/* output_dir 0750, files 0640, in the daemon's own group: proofs are not
 * shared with client_group, since its members are many users and a job's
 * proofs belong to its submitter alone (who receives them in its EVENTs and
 * writes them with `czk submit --out`) */
static int setup_output(fin *f, czk_error *e)
{
    int r;

    if ((r = czk_daemon_mkdirs(f->cfg.output_dir, 0750, e)) < 0)
        return r;
    if (chmod(f->cfg.output_dir, 0750) < 0)
        czk_warn("could not make output_dir \"%s\" mode 0750: %s", f->cfg.output_dir, strerror(errno));
    /* output_dir's own entry made durable once per start (the job
     * directories fsync output_dir itself as they come).  Its parent is not
     * ours and may not be readable: a warning, not a reason to stop */
    if ((r = czk_fsync_parent(f->cfg.output_dir, e)) < 0)
        czk_warn("%s (output_dir \"%s\" may not survive a power loss if it was just created)", e->msg,
                 f->cfg.output_dir);
    return 0;
}

/*
 * One finalizer per output_dir: an exclusive flock on
 * output_dir/.finalizer.lock, held (the fd open) until the process ends, so
 * the kernel releases it however the process dies.  A second finalizer
 * would displace the first at czk-gpud (which keeps the last one that
 * connected) and write the same temporary names (output.c).  -EBUSY when
 * another process holds it, naming its pid.
 */
static int lock_output(fin *f, czk_error *e)
{
    char path[CZK_CONFIG_PATH_MAX + 32], pid[32];
    int fd, n;

    snprintf(path, sizeof(path), "%s/.finalizer.lock", f->cfg.output_dir);
    fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0640);
    if (fd < 0)
        return czk_errorf(e, -errno, "could not open the lock file \"%s\": %s", path, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        int err = errno;
        n = (int)pread(fd, pid, sizeof(pid) - 1, 0);
        pid[n > 0 ? n : 0] = 0;
        pid[strcspn(pid, "\n")] = 0;
        close(fd);
        if (err == EWOULDBLOCK)
            return czk_errorf(e, -EBUSY,
                              "another czk-finalizer (pid %s) holds \"%s\": only one finalizer may write output_dir "
                              "\"%s\" (a second one displaces the first at czk-gpud); stop one of them",
                              pid[0] ? pid : "unknown", path, f->cfg.output_dir);
        return czk_errorf(e, -err, "could not lock \"%s\": %s", path, strerror(err));
    }
    /* for the message above, in the next one that tries */
    n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
        czk_warn("could not write the pid into \"%s\": %s", path, strerror(errno));
    return 0; /* fd stays open (and locked) until exit */
}

/* c from the zkey at path: the header and IC are all the finalizer reads
 * (private copies, so the file may change on disk meanwhile) */
static int circuit_load(fin_circuit *c, const char *name, const char *path, czk_error *e)
{
    char id[CZK_ZKEY_ID_HEX];
    czk_zkey z;
    char *vk;
    int r = czk_zkey_load_curves(&z, path, 0, CZK_CURVES_ALL, e);

    if (r < 0)
        return r;
    memset(c, 0, sizeof(*c));
    snprintf(c->name, sizeof(c->name), "%s", name);
    c->ident = z.ident;
    c->reported = z.ident.stamp;
    czk_zkey_id_hex(&z, id);
    czk_info("circuit %s: %s, key id %s, %s", c->name, path, id, czk_curve_name(z.curve));
    c->n_public = z.n_public;
    r = czk_groth16_any_key_from_zkey(&c->key, &z, e);
    czk_zkey_close(&z);
    if (r < 0)
        return r;
    if (!(vk = czk_groth16_any_vk_dump(&c->key))) {
        czk_groth16_any_key_free(&c->key);
        return czk_errorf(e, -ENOMEM, "out of memory for the verification key of circuit \"%s\"", c->name);
    }
    czk_sha256_hex(vk, strlen(vk), c->vk_sha256);
    free(vk);
    return 0;
}

static int open_circuits(fin *f, czk_error *e)
{
    f->circuits = calloc((size_t)f->cfg.n_circuits, sizeof(fin_circuit));
    if (!f->circuits)
        return czk_errorf(e, -ENOMEM, "out of memory");
    for (int i = 0; i < f->cfg.n_circuits; i++) {
        fin_circuit *c = &f->circuits[i];
        czk_error ce = {0};
        if (circuit_load(c, f->cfg.circuits[i].name, f->cfg.circuits[i].zkey, &ce) < 0) {
            /* as czk-gpud does: the other circuits are served */
            memset(c, 0, sizeof(*c));
            snprintf(c->name, sizeof(c->name), "%s", f->cfg.circuits[i].name);
            c->failed = 1;
            czk_err("circuit %s: its key cannot be read: %s; no proof of it is finalized until the zkey is fixed "
                    "and czk-finalizer restarted",
                    c->name, ce.msg);
        }
        f->n_circuits++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static fin F;
    fin *f = &F;
    czk_daemon_args args;
    czk_loop_config lc;
    czk_error e = {0};
    int r;

    if ((r = czk_daemon_start(argc, argv, "czk-finalizer", 0, &f->cfg, &args)) != 0)
        return r < 0 ? 2 : 0;
    czk_backoff_init(&f->backoff, (uint64_t)f->cfg.reconnect_max_ms);
    czk_loop_config_from(&lc, &f->cfg);
    if ((r = setup_output(f, &e)) < 0) {
        czk_err("%s", e.msg);
        return 1;
    }
    if ((r = lock_output(f, &e)) < 0) {
        /* an operator's error that a restart cannot fix: exit status 2, which
         * systemd does not restart (RestartPreventExitStatus=2) */
        czk_err("%s", e.msg);
        return r == -EBUSY ? 2 : 1;
    }
    if ((r = open_circuits(f, &e)) < 0 || (r = czk_loop_create(&f->loop, &lc, &e)) < 0) {
        czk_err("%s", e.msg);
        return 1;
    }
    czk_daemon_trace_open(f->cfg.state_dir, "czk-finalizer");
    open_metrics(f);
    if (!f->cfg.finalizer_verify)
        czk_warn("finalizer.verify is off: proofs are written without a pairing check");
    czk_daemon_attach_loop(&f->loop, &f->stopping);
    zkey_watch_start(f);
    czk_info("ready: %u circuits, output in %s", f->n_circuits, f->cfg.output_dir);
    czk_daemon_ready("waiting for czk-gpud");
    try_connect(f);
    r = czk_loop_run(f->loop);
    f->stopping = 1;
    czk_daemon_stopping();
    czk_loop_destroy(f->loop);
    czk_metrics_free(f->metrics);
    if (f->n_pending)
        czk_warn("stopping with %u proofs still waiting for disk space; czk-gpud sends their RESULTs again",
                 f->n_pending);
    while (f->pending) {
        fin_pending *p = f->pending;
        f->pending = p->next;
        pending_free(p);
    }
    for (unsigned i = 0; i < f->n_circuits; i++)
        czk_groth16_any_key_free(&f->circuits[i].key);
    free(f->circuits);
    czk_trace_close();
    czk_info("stopped: %llu proofs written, %llu answered from existing files, %llu stale files moved aside, %llu "
             "failed verification, %llu disk-full episodes, %llu write retries",
             (unsigned long long)f->written, (unsigned long long)f->resent, (unsigned long long)f->stale,
             (unsigned long long)f->failed, (unsigned long long)f->space_episodes,
             (unsigned long long)f->write_retries);
    return r < 0 ? 1 : 0;
}
