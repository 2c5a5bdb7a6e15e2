/*
 * results.c — czk-gpud's side of the finalizer: RESULT out, DONE in.
 *
 * A computed partition stays in memory (P_FINALIZE) until the finalizer's DONE
 * for it arrives, and is journaled DONE only then.  A RESULT is sent again
 * when the finalizer (re)connects, and when its DONE has not come
 * [gpud] result_resend_s after it was sent (a finalizer that lost it without
 * disconnecting); each re-send counts in czk_gpud_result_resends_total.  The
 * finalizer's writes are idempotent, so a duplicate RESULT costs a little
 * work, never a second proof, and a DONE for a partition no longer awaiting
 * one is ignored.  Sending is bounded by the connection's queue: what does
 * not fit is sent as DONEs come back (gpud_results_flush).  Loop thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/runtime/daemon.h"
#include "common/runtime/fault.h"
#include "common/crypto/field.h"
#include "common/base/log.h"
#include "common/runtime/trace.h"
#include "gpud/gpud.h"

#define RESULT_QUEUE_LIMIT 128 /* records queued to the finalizer before we hold back */
#define RESULT_PUB_MAX (CZK_MSG_MAX_RECORD - 4096) /* public signal bytes one RESULT carries */

int gpud_result_fits(const gpud *g, uint32_t circuit)
{
    return (size_t)g->circuits[circuit].zkey.n_public * 32 <= RESULT_PUB_MAX;
}

static int send_result(gpud *g, gpud_part *p)
{
    static uint8_t pub[RESULT_PUB_MAX];
    const gpud_job *j = p->job;
    const czk_zkey *z = &g->circuits[j->circuit].zkey;
    uint32_t fc = gpud_peer_circuit(&g->fin_map, j->circuit);
    czk_msg m;
    int r;

    if (fc == GPUD_CIRCUIT_REFUSED)
        return -EKEYREJECTED; /* the finalizer has another key for it: the RESULT waits (logged at its HELLO) */

    if ((size_t)z->n_public * 32 > sizeof(pub)) {
        gpud_part_finish(g, p, -EMSGSIZE, "too many public signals for one RESULT record", NULL, NULL);
        return -EMSGSIZE;
    }
    czk_groth16_any_pub_to_bytes(z->curve, pub, p->pub, z->n_public);
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_RESULT;
    m.u.result.job_id = j->id;
    m.u.result.partition = p->index;
    m.u.result.n_points = 4;
    for (unsigned k = 0; k < CZK_G16_N_PTS; k++)
        m.u.result.points[k] = (czk_bytes){(const uint8_t *)czk_groth16_any_point(p->res, k),
                                           (uint32_t)czk_groth16_any_point_bytes(p->res->curve, k)};
    m.u.result.publics = (czk_bytes){pub, z->n_public * 32};
    m.u.result.circuit_id = fc; /* the finalizer's id for it */
    m.u.result.n_partitions = j->nparts;
    snprintf(m.u.result.circuit, sizeof(m.u.result.circuit), "%s", j->cname);
    m.u.result.submit_ns = j->submit_ns;
    m.u.result.queue_ns = p->queue_ns;
    m.u.result.synth_ns = p->synth_ns;
    m.u.result.gpu_ns = p->gpu_ns;
    if ((r = gpud_send(g, g->finalizer, &m, NULL, 0)) < 0)
        return r;
    p->sent = 1;
    p->t_sent = gpud_now(g);
    if (p->sends++ > 0) {
        g->result_resends_total++;
        czk_metric_inc(g->m_result_resends, 1);
    }
    czk_trace_add(p->job->id, p->index, CZK_TRACE_RESULT, czk_trace_now(), czk_trace_now());
    gpud_event(g, p->job, p->index, CZK_STAGE_FINALIZE, 0, NULL, NULL, NULL);
    czk_fault("gpud.after_result_sent");
    return 0;
}

void gpud_results_flush(gpud *g)
{
    if (!gpud_conn_open(g, g->finalizer))
        return;
    for (gpud_job *j = g->jobs_head; j; j = j->next) {
        if (j->state != J_ACTIVE || !j->parts)
            continue;
        for (uint32_t i = 0; i < j->nparts; i++) {
            gpud_part *p = &j->parts[i];
            if (p->state != P_FINALIZE || p->sent || p->done_pending)
                continue;
            if (gpud_conn_queued(g, g->finalizer) >= RESULT_QUEUE_LIMIT)
                return;
            if (send_result(g, p) == -ENOBUFS)
                return;
        }
    }
}

void gpud_result_ready(gpud *g, gpud_part *p)
{
    if (gpud_conn_open(g, g->finalizer) && gpud_conn_queued(g, g->finalizer) < RESULT_QUEUE_LIMIT)
        send_result(g, p);
}

void gpud_results_check(gpud *g)
{
    uint64_t now = gpud_now(g), lim = (uint64_t)g->cfg.result_resend_s * 1000000000ull;
    unsigned n = 0;

    if (!gpud_conn_open(g, g->finalizer))
        return;
    for (gpud_job *j = g->jobs_head; j; j = j->next) {
        if (j->state != J_ACTIVE || !j->parts)
            continue;
        for (uint32_t i = 0; i < j->nparts; i++) {
            gpud_part *p = &j->parts[i];
            if (p->state == P_FINALIZE && p->sent && !p->done_pending && now - p->t_sent >= lim) {
                p->sent = 0;
                n++;
            }
        }
    }
    if (n)
        czk_warn("%u results without DONE %d s after they were sent: sending them again", n, g->cfg.result_resend_s);
    gpud_results_flush(g);
}

static void results_unsent(gpud *g)
{
    for (gpud_job *j = g->jobs_head; j; j = j->next)
        if (j->state == J_ACTIVE && j->parts)
            for (uint32_t i = 0; i < j->nparts; i++)
                j->parts[i].sent = 0;
}

/* the journal takes records again: the DONEs that could not be journaled are
 * asked for again now rather than after [gpud] result_resend_s */
void gpud_results_resend(gpud *g)
{
    if (!g->part_count[P_FINALIZE])
        return;
    czk_info("%u results awaiting DONE are sent again", g->part_count[P_FINALIZE]);
    results_unsent(g);
    gpud_results_flush(g);
}

static void finalizer_attach(gpud *g, czk_conn *c, uint32_t pid)
{
    g->finalizer = c;
    results_unsent(g);
    czk_info("finalizer pid %u connected; %u results awaiting DONE will be sent", pid, g->part_count[P_FINALIZE]);
    gpud_results_flush(g);
}

void gpud_finalizer_open(gpud *g, czk_conn *c)
{
    if (g->finalizer && g->finalizer != c) {
        czk_warn("a second finalizer connected (pid %u): it replaces the current one",
                 (unsigned)czk_conn_cred(c)->pid);
        czk_conn_close(g->finalizer, 0, "replaced by a newer finalizer", 1);
    }
    {
        char who[48];
        snprintf(who, sizeof(who), "finalizer pid %u", (unsigned)czk_conn_cred(c)->pid);
        gpud_circuits_map(g, czk_conn_peer(c), who, &g->fin_map);
    }
    finalizer_attach(g, c, (uint32_t)czk_conn_cred(c)->pid);
}

void gpud_finalizer_attach(gpud *g, czk_conn *c, uint32_t pid)
{
    gpud_peer_map_identity(g, &g->fin_map);
    finalizer_attach(g, c, pid);
}

void gpud_finalizer_close(gpud *g, czk_conn *c)
{
    if (g->finalizer != c)
        return;
    g->finalizer = NULL;
    results_unsent(g);
    czk_warn("finalizer disconnected: %u results wait for it", g->part_count[P_FINALIZE]);
}

void gpud_finalizer_done(gpud *g, const czk_msg_done *d)
{
    gpud_job *j = gpud_job_find(g, d->job_id);
    gpud_part *p;

    if (!j || j->state != J_ACTIVE || !j->parts || d->partition >= j->nparts ||
        j->parts[d->partition].state != P_FINALIZE || j->parts[d->partition].done_pending) {
        /* a second DONE for a re-sent RESULT (perhaps while the first one's
         * record awaits its sync), or one for a cancelled job */
        czk_debug("DONE for job %llu partition %u, which is not awaiting one: ignored", (unsigned long long)d->job_id,
                  d->partition);
        return;
    }
    p = &j->parts[d->partition];
    gpud_stage_observe(g, ST_FINALIZE, gpud_now(g) - p->t_gpu);
    czk_fault("gpud.before_done");
    gpud_part_finish(g, p, d->status, d->reason[0] ? d->reason : NULL, &d->proof, &d->publics);
    gpud_results_flush(g);
}

void gpud_finalizer_msg(gpud *g, czk_conn *c, const czk_msg *m)
{
    if (m->type == CZK_MSG_HEARTBEAT)
        return;
    if (m->type != CZK_MSG_DONE) {
        gpud_reply_error(g, c, -EPROTO, "a finalizer may not send %s", czk_msg_type_name(m->type));
        return;
    }
    gpud_finalizer_done(g, &m->u.done);
}
