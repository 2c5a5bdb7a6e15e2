/*
 * daemon_loop.c — ties a daemon's event loop (ipc/loop.h) to signals, the
 * systemd watchdog and the trace, and reconnects with back-off
 * (daemon_loop.h); shared by czk-gpud, czk-synth and czk-finalizer.
 *
 * Who touches what: D is written once on the main thread before the signal
 * handlers are installed; the signal handler only reads *D.loop and calls the
 * async-signal-safe czk_loop_wake(); everything else runs on the loop thread.
 *
 * Also here, for the same reason: the loop limits taken from the
 * configuration (czk_loop_config_from) and the export of the loop's
 * connection counters as metrics (czk_loop_export_metrics, loop.h), one
 * exporting loop per process (the daemon's).
 */
#include "ipc/daemon_loop.h"

#include <stddef.h>

#include <errno.h>
#include <string.h>

#include "common/base/log.h"
#include "common/runtime/config.h"
#include "common/runtime/metrics.h"
#include "common/runtime/trace.h"
#include "common/runtime/daemon.h"
#include "ipc/loop.h"

static struct {
    czk_loop **loop;
    int *stopping;
} D;

/* signal handler context: wake the loop, on_wake does the rest */
static void on_signal_wake(void *ctx)
{
    (void)ctx;
    if (*D.loop)
        czk_loop_wake(*D.loop);
}

static void on_wake(void *ctx)
{
    (void)ctx;
    if (czk_daemon_stop_requested() && !*D.stopping) {
        czk_info("stopping on signal");
        *D.stopping = 1;
        czk_loop_stop(*D.loop);
    }
}

static void trace_tick(czk_timer *t, void *ctx)
{
    (void)t;
    (void)ctx;
    czk_trace_flush();
}

static void watchdog_tick(czk_timer *t, void *ctx)
{
    (void)t;
    (void)ctx;
    czk_daemon_watchdog();
}

void czk_daemon_attach_loop(czk_loop **loop, int *stopping)
{
    uint64_t wd;

    D.loop = loop;
    D.stopping = stopping;
    czk_loop_set_wake_fn(*loop, on_wake, NULL);
    czk_daemon_signals(on_signal_wake, NULL);
    if ((wd = czk_daemon_watchdog_interval_ms()) > 0)
        czk_loop_timer(*loop, wd, wd, watchdog_tick, NULL);
    czk_loop_timer(*loop, 250, 250, trace_tick, NULL);
}

void czk_loop_config_from(czk_loop_config *lc, const struct czk_config *cfg)
{
    memset(lc, 0, sizeof(*lc));
    lc->daemon_queue_bytes = (size_t)cfg->daemon_queue_max_mb << 20;
    lc->client_queue_soft = (size_t)cfg->client_queue_soft_kb << 10;
    lc->client_queue_hard = (size_t)cfg->client_queue_max_kb << 10;
    lc->max_clients = (unsigned)cfg->max_clients;
    lc->max_clients_per_uid = (unsigned)cfg->max_clients_per_uid;
    lc->max_daemon_conns = (unsigned)cfg->max_daemon_conns;
    lc->client_idle_timeout_ms = (unsigned)cfg->client_idle_timeout_s * 1000u;
}

enum {
    EX_OVERFLOW, EX_SEND_ERR, EX_PAUSES, EX_IDLE, EX_REFUSED, EX_ACCEPT_ERR, EX_ACCEPT_PAUSE, EX_CLIENTS, EX_DAEMONS,
    EX_N
};

static struct {
    czk_loop *loop;
    czk_metric *m[EX_N];
} X;

static void export_tick(czk_timer *t, void *ctx)
{
    czk_loop_stats st;
    (void)t;
    (void)ctx;
    czk_loop_get_stats(X.loop, &st);
    czk_metric_set(X.m[EX_OVERFLOW], (int64_t)st.overflow_closes);
    czk_metric_set(X.m[EX_SEND_ERR], (int64_t)st.send_errors);
    czk_metric_set(X.m[EX_PAUSES], (int64_t)st.read_pauses);
    czk_metric_set(X.m[EX_IDLE], (int64_t)st.idle_closes);
    czk_metric_set(X.m[EX_REFUSED], (int64_t)st.refused);
    czk_metric_set(X.m[EX_ACCEPT_ERR], (int64_t)st.accept_errors);
    czk_metric_set(X.m[EX_ACCEPT_PAUSE], (int64_t)st.accept_pauses);
    czk_metric_set(X.m[EX_CLIENTS], st.clients);
    czk_metric_set(X.m[EX_DAEMONS], st.daemons);
}

int czk_loop_export_metrics(czk_loop *l, struct czk_metrics *m)
{
    static const struct {
        enum czk_metric_kind kind;
        const char *name, *help;
    } defs[EX_N] = {
        {CZK_METRIC_COUNTER, "czk_conn_overflow_closes_total",
         "connections closed because their outgoing queue was over its limit (the peer resynchronizes)"},
        {CZK_METRIC_COUNTER, "czk_conn_send_errors_total",
         "connections closed because a record could not be queued (no memory, no fd)"},
        {CZK_METRIC_COUNTER, "czk_conn_read_pauses_total", "times a client's requests were left unread (backpressure)"},
        {CZK_METRIC_COUNTER, "czk_conn_idle_closes_total", "idle client connections closed"},
        {CZK_METRIC_COUNTER, "czk_conn_refused_total", "connections refused as busy (a connection limit, no fd)"},
        {CZK_METRIC_COUNTER, "czk_accept_errors_total", "accepts that failed (EMFILE, ENFILE, ...)"},
        {CZK_METRIC_COUNTER, "czk_accept_pauses_total", "episodes of accepting paused for lack of fds"},
        {CZK_METRIC_GAUGE, "czk_conn_clients", "client connections open"},
        {CZK_METRIC_GAUGE, "czk_conn_daemons", "daemon connections open"},
    };

    X.loop = l;
    for (int i = 0; i < EX_N; i++)
        if (!(X.m[i] = czk_metrics_add(m, defs[i].kind, defs[i].name, NULL, defs[i].help)))
            return -ENOSPC; /* logged by czk_metrics_add */
    export_tick(NULL, NULL);
    if (!czk_loop_timer(l, 1000, 1000, export_tick, NULL))
        return -ENOMEM;
    return 0;
}

void czk_backoff_init(czk_backoff *b, uint64_t max_ms)
{
    b->max_ms = max_ms < CZK_BACKOFF_FIRST_MS ? CZK_BACKOFF_FIRST_MS : max_ms;
    b->next_ms = CZK_BACKOFF_FIRST_MS;
    b->pending = 0;
}

void czk_backoff_reset(czk_backoff *b) { b->next_ms = CZK_BACKOFF_FIRST_MS; }

int czk_backoff_schedule(czk_backoff *b, czk_loop *l, czk_timer_fn fn, void *ctx)
{
    if (b->pending)
        return 1;
    b->pending = 1;
    czk_loop_timer(l, b->next_ms, 0, fn, ctx);
    b->next_ms = b->next_ms * 2 > b->max_ms ? b->max_ms : b->next_ms * 2;
    return 0;
}

void czk_backoff_fired(czk_backoff *b) { b->pending = 0; }
