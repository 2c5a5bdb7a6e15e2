/*
 * daemon_loop.c — the part of daemon.h that ties a daemon's event loop
 * (ipc/loop.h) to signals, the systemd watchdog and the trace, shared by
 * czk-gpud, czk-synth and czk-finalizer.  Kept apart from daemon.c so that
 * only programs that call czk_daemon_attach_loop() (which link czkipc) pull in
 * the references to czk_loop_*; the CLI uses daemon.c without czkipc.
 *
 * Who touches what: D is written once on the main thread before the signal
 * handlers are installed; the signal handler only reads *D.loop and calls the
 * async-signal-safe czk_loop_wake(); everything else runs on the loop thread.
 */
#include "common/runtime/daemon.h"

#include <stddef.h>

#include "common/base/log.h"
#include "common/runtime/trace.h"
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

void czk_daemon_attach_loop(czk_loop **loop, int *stopping, int watchdog_cfg_ms)
{
    uint64_t wd;

    D.loop = loop;
    D.stopping = stopping;
    czk_loop_set_wake_fn(*loop, on_wake, NULL);
    czk_daemon_signals(on_signal_wake, NULL);
    if ((wd = czk_daemon_watchdog_interval_ms(watchdog_cfg_ms)) > 0)
        czk_loop_timer(*loop, wd, wd, watchdog_tick, NULL);
    czk_loop_timer(*loop, 250, 250, trace_tick, NULL);
}
