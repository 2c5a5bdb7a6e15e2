/*
 * main.c — czk-finalizer: connects to czk-gpud (reconnecting with backoff),
 * and for every RESULT draws r, s from the OS CSPRNG, assembles the proof,
 * pairing-verifies it against the circuit's verification key, writes the
 * files durably (output.c) and only then answers DONE with the proof texts.
 * A proof that does not verify is never written: DONE carries -EBADMSG and
 * the reason.  A RESULT whose files already exist is answered from them.
 *
 * Everything runs on the loop thread: one RESULT is a few milliseconds of
 * pairing and a few fsyncs, and the finalizer has nothing else to do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/runtime/daemon.h"
#include "common/runtime/fault.h"
#include "common/crypto/field.h"
#include "common/groth16/groth16.h"
#include "common/groth16/json.h"
#include "common/base/log.h"
#include "common/groth16/verify.h"
#include "common/runtime/trace.h"
#include "finalizer/finalizer.h"
#include "ipc/loop.h"
#include "ipc/peer.h"

#define TEXT_MAX (CZK_MSG_MAX_RECORD - 2048)

typedef struct fin_circuit {
    char name[64];
    uint32_t n_public;
    czk_groth16_params params;
    czk_groth16_vk vk;
} fin_circuit;

typedef struct fin {
    czk_config cfg;
    czk_loop *loop;
    czk_conn *conn;
    int connecting, stopping;
    uint64_t backoff_ms;
    fin_circuit *circuits;
    unsigned n_circuits;
    uint64_t written, resent, failed;
} fin;

static void try_connect(fin *f);

static void send_done(fin *f, const czk_msg_result *res, int status, const char *reason, const char *proof,
                      size_t plen, const char *pub, size_t ulen)
{
    czk_msg m;
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_DONE;
    m.u.done.job_id = res->job_id;
    m.u.done.partition = res->partition;
    m.u.done.status = status < -4095 ? -EIO : status;
    if (reason)
        snprintf(m.u.done.reason, sizeof(m.u.done.reason), "%s", reason);
    if (proof && pub && plen + ulen <= TEXT_MAX) {
        m.u.done.proof = (czk_bytes){(const uint8_t *)proof, (uint32_t)plen};
        m.u.done.publics = (czk_bytes){(const uint8_t *)pub, (uint32_t)ulen};
    }
    if (f->conn)
        czk_conn_send(f->conn, &m, NULL, 0);
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

static void on_result(fin *f, const czk_msg_result *r)
{
    uint64_t t0 = czk_mono_ns();
    const fin_circuit *c = find_circuit(f, r);
    czk_groth16_msm_out mo;
    czk_groth16_proof proof;
    czk_fr *pub = NULL;
    char *ptext = NULL, *utext = NULL, why[700];
    size_t plen = 0, ulen = 0;
    czk_error e = {0};
    fin_timings t;
    int rc;

    if (!c) {
        snprintf(why, sizeof(why), "circuit \"%s\" (#%u) is not configured in the finalizer", r->circuit,
                 r->circuit_id);
        czk_err("job %llu partition %u: %s", (unsigned long long)r->job_id, r->partition, why);
        send_done(f, r, -ENOENT, why, NULL, 0, NULL, 0);
        return;
    }
    rc = fin_output_existing(f->cfg.output_dir, r->job_id, r->partition, &ptext, &plen, &utext, &ulen, &e);
    if (rc == 1) {
        czk_info("job %llu partition %u: already written, answering from the files", (unsigned long long)r->job_id,
                 r->partition);
        f->resent++;
        send_done(f, r, 0, NULL, ptext, plen, utext, ulen);
        goto summary;
    }
    if (rc < 0) {
        czk_err("job %llu partition %u: %s", (unsigned long long)r->job_id, r->partition, e.msg);
        send_done(f, r, rc, e.msg, NULL, 0, NULL, 0);
        return;
    }
    if (r->n_points != 4 || r->points[0].len != sizeof(mo.a) || r->points[1].len != sizeof(mo.b1) ||
        r->points[2].len != sizeof(mo.b2) || r->points[3].len != sizeof(mo.c) ||
        r->publics.len != c->n_public * 32u) {
        snprintf(why, sizeof(why), "RESULT has %u points / %u public bytes, expected 4 points and %u bytes",
                 r->n_points, r->publics.len, c->n_public * 32u);
        send_done(f, r, -EBADMSG, why, NULL, 0, NULL, 0);
        return;
    }
    memcpy(&mo.a, r->points[0].ptr, sizeof(mo.a));
    memcpy(&mo.b1, r->points[1].ptr, sizeof(mo.b1));
    memcpy(&mo.b2, r->points[2].ptr, sizeof(mo.b2));
    memcpy(&mo.c, r->points[3].ptr, sizeof(mo.c));
    pub = calloc(c->n_public ? c->n_public : 1, sizeof(czk_fr));
    if (!pub) {
        send_done(f, r, -ENOMEM, "out of memory", NULL, 0, NULL, 0);
        return;
    }
    for (uint32_t i = 0; i < c->n_public; i++)
        if (czk_fr_from_bytes_le(&pub[i], r->publics.ptr + 32 * i) < 0) {
            snprintf(why, sizeof(why), "public signal %u is not below the field modulus", i);
            send_done(f, r, -EBADMSG, why, NULL, 0, NULL, 0);
            goto out;
        }
    if ((rc = czk_groth16_finalize_random(&c->params, &mo, &proof)) < 0) {
        send_done(f, r, rc, "could not draw r, s from the OS random generator", NULL, 0, NULL, 0);
        goto out;
    }
    if (f->cfg.finalizer_verify && (rc = czk_groth16_verify(&c->vk, &proof, pub, c->n_public, &e)) < 0) {
        snprintf(why, sizeof(why), "the proof does not verify: %s", e.msg[0] ? e.msg : "pairing check failed");
        czk_err("job %llu partition %u: %s; nothing written", (unsigned long long)r->job_id, r->partition, why);
        f->failed++;
        send_done(f, r, -EBADMSG, why, NULL, 0, NULL, 0);
        goto out;
    }
    ptext = czk_json_proof_dump(&proof);
    utext = czk_json_public_dump(pub, c->n_public);
    if (!ptext || !utext) {
        send_done(f, r, -ENOMEM, "out of memory for the proof text", NULL, 0, NULL, 0);
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
    if ((rc = fin_output_write(f->cfg.output_dir, &t, ptext, utext, &e)) < 0) {
        czk_err("job %llu partition %u: %s", (unsigned long long)r->job_id, r->partition, e.msg);
        send_done(f, r, rc, e.msg, NULL, 0, NULL, 0);
        goto out;
    }
    f->written++;
    czk_info("job %llu partition %u: proof verified and written", (unsigned long long)r->job_id, r->partition);
    send_done(f, r, 0, NULL, ptext, strlen(ptext), utext, strlen(utext));
    czk_fault("finalizer.after_done_sent");
summary:
    if (r->n_partitions && fin_output_summary(f->cfg.output_dir, r->job_id, r->n_partitions, c->name, r->submit_ns,
                                              &e) < 0)
        czk_warn("job %llu: could not write summary.json: %s", (unsigned long long)r->job_id, e.msg);
out:
    free(pub);
    free(ptext);
    free(utext);
}

/* ---------------------------------------------------------- connection --- */

static void conn_msg(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx)
{
    fin *f = ctx;
    (void)c;
    (void)fds;
    (void)nfds;
    if (m->type == CZK_MSG_RESULT) {
        uint64_t t0 = czk_trace_now();
        on_result(f, &m->u.result);
        czk_trace_add(m->u.result.job_id, m->u.result.partition, CZK_TRACE_FINALIZE, t0, czk_trace_now());
    } else if (m->type == CZK_MSG_ERROR)
        czk_warn("gpud says: %s", m->u.error.message);
}

static void reconnect_tick(czk_timer *t, void *ctx)
{
    fin *f = ctx;
    (void)t;
    f->connecting = 0;
    if (!f->conn && !f->stopping)
        try_connect(f);
}

static void schedule_reconnect(fin *f)
{
    if (f->connecting)
        return;
    f->connecting = 1;
    czk_loop_timer(f->loop, f->backoff_ms, 0, reconnect_tick, f);
    f->backoff_ms = f->backoff_ms * 2 > (uint64_t)f->cfg.reconnect_max_ms ? (uint64_t)f->cfg.reconnect_max_ms
                                                                          : f->backoff_ms * 2;
}

static void conn_open(czk_conn *c, void *ctx)
{
    fin *f = ctx;
    (void)c;
    f->backoff_ms = 100;
    czk_info("connected to czk-gpud");
    czk_daemon_status("connected to czk-gpud; %llu proofs written", (unsigned long long)f->written);
}

static void conn_close(czk_conn *c, int err, const char *why, void *ctx)
{
    fin *f = ctx;
    if (f->conn != c)
        return;
    f->conn = NULL;
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

/* ---------------------------------------------------------------- main --- */

static int open_circuits(fin *f, czk_error *e)
{
    if (f->cfg.n_circuits == 0)
        return czk_errorf(e, -EINVAL, "no circuits configured: add [circuit.NAME] zkey = PATH to the config");
    f->circuits = calloc((size_t)f->cfg.n_circuits, sizeof(fin_circuit));
    if (!f->circuits)
        return czk_errorf(e, -ENOMEM, "out of memory");
    for (int i = 0; i < f->cfg.n_circuits; i++) {
        fin_circuit *c = &f->circuits[i];
        czk_zkey z;
        int r = czk_zkey_open(&z, f->cfg.circuits[i].zkey, e);
        if (r < 0)
            return r;
        snprintf(c->name, sizeof(c->name), "%s", f->cfg.circuits[i].name);
        c->n_public = z.n_public;
        czk_groth16_params_from_zkey(&c->params, &z);
        r = czk_groth16_vk_from_zkey(&c->vk, &z, e);
        czk_zkey_close(&z);
        if (r < 0)
            return r;
        f->n_circuits++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static fin F;
    fin *f = &F;
    czk_daemon_args args;
    czk_error e = {0};
    int r;

    if ((r = czk_daemon_start(argc, argv, "czk-finalizer", 0, &f->cfg, &args)) != 0)
        return r < 0 ? 2 : 0;
    f->backoff_ms = 100;
    if ((r = open_circuits(f, &e)) < 0 || (r = czk_daemon_mkdirs(f->cfg.output_dir, 0755, &e)) < 0 ||
        (r = czk_loop_create(&f->loop, NULL, &e)) < 0) {
        czk_err("%s", e.msg);
        return 1;
    }
    czk_daemon_trace_open(f->cfg.state_dir, "czk-finalizer");
    if (!f->cfg.finalizer_verify)
        czk_warn("finalizer.verify is off: proofs are written without a pairing check");
    czk_daemon_attach_loop(&f->loop, &f->stopping, 0);
    czk_info("ready: %u circuits, output in %s", f->n_circuits, f->cfg.output_dir);
    czk_daemon_ready("waiting for czk-gpud");
    try_connect(f);
    r = czk_loop_run(f->loop);
    f->stopping = 1;
    czk_daemon_stopping();
    czk_loop_destroy(f->loop);
    for (unsigned i = 0; i < f->n_circuits; i++)
        czk_groth16_vk_free(&f->circuits[i].vk);
    free(f->circuits);
    czk_trace_close();
    czk_info("stopped: %llu proofs written, %llu answered from existing files, %llu failed verification",
             (unsigned long long)f->written, (unsigned long long)f->resent, (unsigned long long)f->failed);
    return r < 0 ? 1 : 0;
}
