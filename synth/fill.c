/*
 * fill.c — czk-synth's fill worker: for each ASSIGN, in order, it takes the
 * slot (ASSIGNED -> FILLING), reads the spooled witness, computes a = A·w,
 * b = B·w, c = a∘b straight into the slot with czk_groth16_build_abc on all of
 * the synth's threads, copies w behind them, and publishes the slot READY
 * (with a payload crc).  The slot's generation is checked by every
 * transition, so a slot gpud reclaimed meanwhile is never published.
 *
 * One worker thread; build_abc parallelises inside.  The queue is the only
 * state shared with the loop thread (mu/cv).
 *
 * A fill stops at the next stage boundary once it is cancelled (a RELEASE, or
 * the loop saw the link to gpud close: synth/main.c's conn_close): before the
 * witness is read into the slot, before build_abc, before READY.  build_abc
 * itself runs to its end, so gpud never relies on this to reuse a slot: it
 * keeps the slot of a synth whose link closed out of use until the process
 * exits or connects again (gpud/sched.c); this only makes that wait short.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/runtime/fault.h"
#include "common/groth16/any.h"
#include "common/base/log.h"
#include "common/runtime/trace.h"
#include "synth/synth.h"

static int cancelled(const fill *f)
{
    return __atomic_load_n(&f->cancel, __ATOMIC_ACQUIRE);
}

/* f->reason from e: it reaches gpud's clients, so the spool path (state_dir
 * inside) is named "witness" there; the synth's own log has job and partition */
static void set_reason(fill *f, const czk_error *e)
{
    const char *m = e->msg, *hit;
    size_t n = strlen(f->spool), o = 0;

    while (n && (hit = strstr(m, f->spool)) && o < sizeof(f->reason)) {
        o += (size_t)snprintf(f->reason + o, sizeof(f->reason) - o, "%.*s%s", (int)(hit - m), m, "witness");
        m = hit + n;
    }
    if (o < sizeof(f->reason))
        snprintf(f->reason + o, sizeof(f->reason) - o, "%s", m);
}

static int do_fill(synth *s, fill *f)
{
    const czk_zkey *z = &s->zkeys[f->circuit];
    czk_slot_layout l;
    czk_wtns w;
    czk_error e = {0};
    uint8_t *data;
    uint64_t t0 = czk_trace_now();
    int r;

    if (cancelled(f))
        return -ECANCELED;
    if ((r = czk_slot_begin_fill(&s->pool, f->slot, f->gen, s->owner, &e)) < 0) {
        set_reason(f, &e);
        return r;
    }
    czk_fault("synth.before_fill");
    if (cancelled(f))
        return -ECANCELED;
    /* the values go straight into the slot's witness region and are checked
     * there: build_abc reads them from it, and no copy is left to wipe */
    if ((r = czk_wtns_open_header(&w, f->spool, CZK_CURVES_ALL, &e)) < 0) {
        set_reason(f, &e);
        return r;
    }
    if ((r = czk_groth16_check_witness(z, "zkey", &w, f->spool, &e)) < 0) {
        set_reason(f, &e);
        czk_wtns_close(&w);
        return r;
    }
    czk_slot_payload_layout(z->domain_size, z->n_vars, &l);
    if (l.total > s->pool.hdr->slot_size) {
        czk_wtns_close(&w);
        snprintf(f->reason, sizeof(f->reason), "the circuit needs %llu bytes, slots have %llu",
                 (unsigned long long)l.total, (unsigned long long)s->pool.hdr->slot_size);
        return -EMSGSIZE;
    }
    data = czk_slot_data(&s->pool, f->slot);
    if (cancelled(f)) {
        czk_wtns_close(&w);
        return -ECANCELED;
    }
    /* either curve's Fr is 32 bytes (common/groth16/any.h) */
    if ((r = czk_wtns_load_into(&w, data + l.off_w, (size_t)z->n_vars * 32, f->spool, &e)) < 0) {
        set_reason(f, &e);
        czk_wtns_close(&w);
        return r;
    }
    if (cancelled(f)) {
        czk_wtns_close(&w);
        return -ECANCELED;
    }
    r = czk_groth16_any_build_abc(z, w.w, data + l.off_a, data + l.off_b, data + l.off_c, s->threads);
    if (r < 0) {
        czk_wtns_close(&w);
        snprintf(f->reason, sizeof(f->reason), "building a, b, c failed: %s", strerror(-r));
        return r;
    }
    czk_fault("synth.mid_fill");
    czk_wtns_close(&w);
    if (cancelled(f))
        return -ECANCELED;
    if ((r = czk_slot_publish_ready(&s->pool, f->slot, f->gen, s->owner, z->domain_size, z->n_vars, l.total, true,
                                    &e)) < 0) {
        set_reason(f, &e);
        return r;
    }
    czk_trace_add(f->job, f->partition, CZK_TRACE_SYNTH, t0, czk_trace_now());
    czk_metric_observe(s->m_fill_seconds, (double)(czk_trace_now() - t0) * 1e-9);
    czk_metric_inc(s->m_fill_bytes, (int64_t)l.total);
    czk_fault("synth.after_publish");
    return 0;
}

static void *fill_main(void *arg)
{
    synth *s = arg;
    for (;;) {
        fill *f;
        pthread_mutex_lock(&s->mu);
        while (!s->q_head && !s->q_stop)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->q_stop) {
            pthread_mutex_unlock(&s->mu);
            return NULL;
        }
        f = s->q_head;
        s->q_head = f->next;
        if (!s->q_head)
            s->q_tail = NULL;
        pthread_mutex_unlock(&s->mu);
        f->rc = do_fill(s, f);
        if (f->rc < 0 && __atomic_load_n(&f->cancel, __ATOMIC_ACQUIRE)) {
            /* whatever went wrong, gpud no longer wants this fill (its spool may be gone) */
            f->rc = -ECANCELED;
            snprintf(f->reason, sizeof(f->reason), "cancelled");
        }
        czk_loop_post(s->loop, &f->done_task);
    }
}

void synth_fill_enqueue(synth *s, fill *f)
{
    f->next = NULL;
    f->done_task.fn = synth_fill_done;
    f->done_task.ctx = f;
    s->outstanding++;
    pthread_mutex_lock(&s->mu);
    if (s->q_tail)
        s->q_tail->next = f;
    else
        s->q_head = f;
    s->q_tail = f;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

int synth_fill_start(synth *s)
{
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    return -pthread_create(&s->th, NULL, fill_main, s);
}

void synth_fill_stop(synth *s)
{
    pthread_mutex_lock(&s->mu);
    s->q_stop = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->th, NULL);
}
