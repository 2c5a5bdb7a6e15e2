/*
 * synth.h — czk-synth's internal state (not a public contract).
 *
 *   main.c  start-up, NUMA binding, the gpud connection (reconnect with
 *           backoff, POOL, ASSIGN, RELEASE, RESYNC), READY replies
 *   fill.c  the fill worker thread: witness -> a, b, c, w in a pool slot
 *
 * The loop thread owns everything except the fill queue (guarded by mu, shared
 * with the worker) and the fill being worked on, which the worker owns until
 * it posts the fill's done task back to the loop.
 */
#ifndef CZK_SYNTH_H
#define CZK_SYNTH_H

#include <pthread.h>
#include <stdint.h>

#include "common/runtime/config.h"
#include "common/runtime/metrics.h"
#include "common/formats/formats.h"
#include "ipc/daemon_loop.h"
#include "ipc/loop.h"
#include "ipc/pool.h"

enum held_state { H_NONE = 0, H_FILLING, H_READY };

typedef struct synth synth;

typedef struct fill {
    czk_loop_task done_task;
    synth *s;
    uint32_t pool_id, slot, gen, circuit, partition;
    uint64_t job;
    uint64_t conn_epoch; /* the connection it came from */
    char spool[CZK_MSG_STR_LONG];
    int cancel;          /* atomic: RELEASE arrived while it was queued or running */
    int rc;              /* worker: 0 or -errno */
    char reason[CZK_MSG_STR_LONG];
    struct fill *next;                 /* the queue (mu) */
    struct fill *live_prev, *live_next; /* synth.live (loop thread) */
} fill;

typedef struct held {
    uint8_t state;
    uint32_t gen;
    fill *f; /* H_FILLING */
} held;

struct synth {
    czk_config cfg;
    int node;
    int threads;
    uint32_t owner; /* slot owner id: our pid */
    czk_loop *loop;
    czk_conn *conn;
    uint64_t conn_epoch;
    int stopping;
    czk_backoff backoff;    /* reconnection to gpud (its pending flag: a retry is armed) */
    /* circuits, mapped once */
    czk_zkey *zkeys;
    unsigned n_circuits;
    /* the pool of our node */
    czk_pool pool;
    int have_pool;
    uint32_t pool_id;
    held *held; /* [slot_count] */
    uint32_t held_cap;
    /* fill queue (mu) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    fill *q_head, *q_tail;
    int q_stop;
    unsigned outstanding; /* fills queued or running (loop thread count) */
    fill *live;           /* every fill from ASSIGN until synth_fill_done frees it (loop thread):
                           * what shutdown frees when the loop stops before it delivers them */
    pthread_t th;
    uint64_t fills_ok, fills_failed;
    /* metrics (main.c's open_metrics; [synth] metrics_port + node): the
     * counters and the in-flight gauge are written by the loop thread, the
     * fill histogram and bytes by the fill thread (atomics, metrics.h) */
    czk_metrics *metrics;
    czk_metric *m_fills_ok, *m_fills_failed, *m_fills_cancelled, *m_fill_seconds, *m_fill_bytes;
    czk_metric *m_in_flight, *m_connected;
};

int synth_fill_start(synth *s);
void synth_fill_stop(synth *s);
void synth_fill_enqueue(synth *s, fill *f);
/* loop thread: a fill came back (done_task) */
void synth_fill_done(czk_loop_task *t, void *ctx);

#endif
