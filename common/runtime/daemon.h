/*
 * daemon.h — what the three czk daemons share at start-up and with systemd:
 * command-line parsing into a czk_config, the systemd notification protocol
 * (READY=1, STATUS=, WATCHDOG=1, the fd store), and SIGTERM/SIGINT handling.
 *
 * Command line (every daemon):
 *   --config FILE        INI file (default /etc/czk/czk.conf when it exists,
 *                        else the built-in defaults)
 *   --set sec.key=value  override one key (repeatable, applied after the file)
 *   --runtime-dir DIR    shortcut for --set czk.runtime_dir=DIR
 *   --state-dir DIR      shortcut for --set czk.state_dir=DIR
 *   --output-dir DIR     shortcut for --set czk.output_dir=DIR
 *   --numa-node N        (czk-synth only) the node this instance serves
 *   --help
 *
 * systemd: the functions call libsystemd's sd_notify family; outside systemd
 * (no $NOTIFY_SOCKET) they do nothing.  This file links against libsystemd,
 * so only programs that call it need -lsystemd (the daemons do).
 *
 * Signals: czk_daemon_signals() installs handlers for SIGTERM and SIGINT that
 * set a flag and call the given wake function (it must be async-signal-safe:
 * czk_loop_wake() is, it only writes an eventfd), and ignores SIGPIPE.
 */
#ifndef CZK_DAEMON_H
#define CZK_DAEMON_H

#include <stdint.h>

#include "common/runtime/config.h"
#include "common/base/clock.h"
#include "common/base/error.h"

#define CZK_DAEMON_DEFAULT_CONFIG "/etc/czk/czk.conf"

typedef struct czk_daemon_args {
    const char *config_path; /* the file that was loaded, NULL for defaults */
    int numa_node;           /* --numa-node, -1 when absent */
} czk_daemon_args;

/*
 * Parses argv into cfg (defaults, file, overrides).  allow_numa: accept
 * --numa-node.  Returns 0, 1 when --help was printed (exit 0), or -EINVAL with
 * e naming the bad option or key.
 */
int czk_daemon_parse(int argc, char **argv, const char *prog, int allow_numa, czk_config *cfg,
                     czk_daemon_args *out, czk_error *e);

/*
 * What every daemon's main() does first: log as prog at info level, parse
 * argv (czk_daemon_parse; a bad command line is logged), then log at
 * cfg->log_level.  Returns 0 to go on, 1 when --help was printed (exit 0), or
 * -EINVAL (logged; exit 2, which the units do not restart) for a bad command
 * line or configuration, or one with no circuit.
 */
int czk_daemon_start(int argc, char **argv, const char *prog, int allow_numa, czk_config *cfg,
                     czk_daemon_args *out);

/* Opens prog's trace in czk_trace_dir(state_dir); a failure is logged as a
 * warning and the daemon runs without a trace. */
void czk_daemon_trace_open(const char *state_dir, const char *prog);

/* sd_notify helpers (no-ops outside systemd) */
void czk_daemon_ready(const char *status);
void czk_daemon_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void czk_daemon_watchdog(void);
void czk_daemon_stopping(void);

/* Interval at which to send WATCHDOG=1, in ms: half of $WATCHDOG_USEC (the
 * unit's WatchdogSec=), 0 when systemd watches nothing. */
uint64_t czk_daemon_watchdog_interval_ms(void);

/* systemd fd store: keep fd under name (FDSTORE=1, FDNAME=name); 0 or -errno
 * (-ENOTSUP outside systemd).  _take: the fd systemd handed back under name
 * at start (LISTEN_FDS/LISTEN_FDNAMES), or -ENOENT; each fd is taken once.
 * The fd store functions may be called from several threads. */
int czk_daemon_fdstore_put(int fd, const char *name);
int czk_daemon_fdstore_remove(const char *name);
int czk_daemon_fdstore_take(const char *name);
/* how many fds handed back at start and not taken yet have a name ending
 * in suffix (e.g. a key id: is there a stored copy worth waiting for?) */
int czk_daemon_fdstore_has_suffix(const char *suffix);
/* for each fd handed back at start that nobody took and whose name starts
 * with prefix: removes it from the fd store and closes it (what a restarted
 * daemon no longer needs, e.g. the device memory of a key that is no longer
 * configured).  Returns how many were dropped; call it once the takers ran. */
int czk_daemon_fdstore_drop_untaken(const char *prefix);

/* SIGTERM/SIGINT: set the stop flag and call wake(ctx); SIGPIPE ignored. */
void czk_daemon_signals(void (*wake)(void *ctx), void *ctx);
int czk_daemon_stop_requested(void);

/* SIGHUP asks the daemon to re-check its zkeys (a reload request): installs
 * the handler; czk_daemon_hup_take() returns 1 once per SIGHUP received. */
void czk_daemon_sighup_init(void);
int czk_daemon_hup_take(void);

/* creates dir and its parents with mode (like mkdir -p); 0 or -errno */
int czk_daemon_mkdirs(const char *dir, unsigned mode, czk_error *e);


#endif
