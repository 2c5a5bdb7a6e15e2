/*
 * events.c — what czk-gpud tells watching clients and its latency statistics
 * (a leaf: it calls no other gpud module, so every stage change can report
 * here without calling back up).  EVENTs go to the connections that follow a
 * job (WATCH, SUBMIT with CZK_SUBMIT_F_WAIT, CANCEL); a watcher that does not
 * keep up loses its events, never the daemon its loop.  Loop thread only.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "common/base/clock.h"
#include "common/base/log.h"
#include "gpud/gpud.h"

#define EVENT_TEXT_MAX (CZK_MSG_MAX_RECORD - 2048) /* proof + public text that still fits one record */

void gpud_reply_error(gpud *g, czk_conn *c, int code, const char *fmt, ...)
{
    czk_msg m;
    va_list ap;
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_ERROR;
    m.u.error.code = code;
    va_start(ap, fmt);
    vsnprintf(m.u.error.message, sizeof(m.u.error.message), fmt, ap);
    va_end(ap);
    gpud_send(g, c, &m, NULL, 0);
}

void gpud_stage_observe(gpud *g, int stage, uint64_t ns)
{
    double s = (double)ns * 1e-9;
    g->stage[stage].sum_s += s;
    g->stage[stage].n++;
    czk_metric_observe(g->stage[stage].hist, s);
}

/* A client connection that watches at least one job is exempt from the
 * loop's idle timeout (events may be minutes apart); it stops being exempt
 * when no job lists it any more: a watcher ends when its send fails, when
 * its connection closes, and when the job is final (gpud_watch_end, after
 * the job's last EVENT), so no job that is over keeps a connection open. */
static int conn_watches(const gpud *g, const czk_conn *c)
{
    for (const gpud_job *j = g->jobs_head; j; j = j->next)
        for (int i = 0; i < j->nwatch; i++)
            if (j->watchers[i] == c)
                return 1;
    return 0;
}

void gpud_watch_add(gpud *g, gpud_job *j, czk_conn *c)
{
    for (int i = 0; i < j->nwatch; i++)
        if (j->watchers[i] == c)
            return;
    if (j->nwatch == GPUD_MAX_WATCHERS) {
        gpud_reply_error(g, c, -EUSERS, "job %llu already has %d watchers", (unsigned long long)j->id,
                         GPUD_MAX_WATCHERS);
        return;
    }
    j->watchers[j->nwatch++] = c;
    gpud_conn_watching(g, c, 1);
}

static void watch_remove(gpud *g, gpud_job *j, int i)
{
    czk_conn *c = j->watchers[i];
    j->watchers[i] = j->watchers[--j->nwatch];
    if (!conn_watches(g, c))
        gpud_conn_watching(g, c, 0);
}

void gpud_watch_end(gpud *g, gpud_job *j)
{
    while (j->nwatch)
        watch_remove(g, j, j->nwatch - 1);
}

void gpud_watch_drop_conn(gpud *g, czk_conn *c)
{
    for (gpud_job *j = g->jobs_head; j; j = j->next)
        for (int i = 0; i < j->nwatch;)
            if (j->watchers[i] == c) {
                /* the connection is closing: nothing to tell it */
                j->watchers[i] = j->watchers[--j->nwatch];
            }
            else
                i++;
}

void gpud_event(gpud *g, gpud_job *j, uint32_t part, uint32_t stage, int32_t status, const char *reason,
                const czk_bytes *proof, const czk_bytes *pub)
{
    czk_msg m;
    if (!j->nwatch || g->replaying)
        return;
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_EVENT;
    m.u.event.job_id = j->id;
    m.u.event.partition = part;
    m.u.event.stage = stage;
    m.u.event.status = status;
    m.u.event.time_ns = czk_real_ns();
    if (reason)
        snprintf(m.u.event.reason, sizeof(m.u.event.reason), "%s", reason);
    if (proof && pub && proof->len && (size_t)proof->len + pub->len <= EVENT_TEXT_MAX) {
        m.u.event.proof = *proof;
        m.u.event.publics = *pub;
    } else if (proof && proof->len) {
        snprintf(m.u.event.reason, sizeof(m.u.event.reason),
                 "proof text too large for an event: FETCH it (czk submit --out does)");
    }
    for (int i = 0; i < j->nwatch;) {
        if (gpud_send(g, j->watchers[i], &m, NULL, 0) < 0) {
            czk_warn("job %llu: a watching client does not keep up: it no longer gets events",
                     (unsigned long long)j->id);
            watch_remove(g, j, i);
            continue;
        }
        i++;
    }
}

void gpud_watch_job(gpud *g, gpud_job *j, czk_conn *c)
{
    uint32_t stage = CZK_STAGE_QUEUED;
    czk_msg m;

    switch (j->state) {
    case J_COMPLETE: stage = CZK_STAGE_DONE; break;
    case J_FAILED: stage = CZK_STAGE_FAILED; break;
    case J_CANCELLED: stage = CZK_STAGE_CANCELLED; break;
    default:
        for (uint32_t i = 0; j->parts && i < j->nparts; i++)
            if (j->parts[i].state != P_QUEUED)
                stage = CZK_STAGE_SYNTH;
        gpud_watch_add(g, j, c);
    }
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_EVENT;
    m.u.event.job_id = j->id;
    m.u.event.partition = CZK_PARTITION_ALL;
    m.u.event.stage = stage;
    m.u.event.status = j->state == J_FAILED ? -EIO : 0;
    m.u.event.time_ns = czk_real_ns();
    gpud_send(g, c, &m, NULL, 0);
}
