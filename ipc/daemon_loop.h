/*
 * daemon_loop.h — what ties a daemon's event loop (ipc/loop.h) to the
 * process, shared by czk-gpud, czk-synth and czk-finalizer: signals, the
 * systemd watchdog and trace flushing, and reconnection with back-off.
 * (czk_loop_config_from and czk_loop_export_metrics, also defined in
 * daemon_loop.c, are declared in ipc/loop.h.)
 */
#ifndef CZK_IPC_DAEMON_LOOP_H
#define CZK_IPC_DAEMON_LOOP_H

#include <stdint.h>

#include "ipc/loop.h"

/*
 * On SIGTERM/SIGINT the loop is woken and, on the loop thread, "stopping on
 * signal" is logged, *stopping set to 1 and the loop stopped; WATCHDOG=1 is
 * sent every czk_daemon_watchdog_interval_ms() and the trace
 * is flushed every 250 ms.  *loop is read again at each signal, so a daemon
 * that sets it to NULL after czk_loop_destroy() is safe from late signals.
 * Once per process.
 */
void czk_daemon_attach_loop(czk_loop **loop, int *stopping);

/*
 * Reconnection with exponential back-off (the synth's and the finalizer's
 * link to gpud): the first retry after CZK_BACKOFF_FIRST_MS, each next one
 * twice as late up to max_ms; czk_backoff_reset() after a connection is
 * established.  One retry is pending at a time.  Loop thread only.
 */
#define CZK_BACKOFF_FIRST_MS 100
typedef struct czk_backoff {
    uint64_t next_ms, max_ms;
    int pending; /* a retry timer is armed */
} czk_backoff;

void czk_backoff_init(czk_backoff *b, uint64_t max_ms);
void czk_backoff_reset(czk_backoff *b);
/* arms fn(ctx) after the current delay and doubles it; 0, or 1 when a retry
 * was already pending (nothing armed) */
int czk_backoff_schedule(czk_backoff *b, czk_loop *l, czk_timer_fn fn, void *ctx);
/* the retry timer fired: call first thing in fn */
void czk_backoff_fired(czk_backoff *b);

#endif
