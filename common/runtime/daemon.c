/*
 * daemon.c — start-up and systemd plumbing shared by czk-gpud, czk-synth and
 * czk-finalizer (see daemon.h).  Runs on the main thread except the signal
 * handler, which only stores a flag and calls an async-signal-safe wake.
 */
#include "common/runtime/daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"
#include "common/runtime/trace.h"

static void usage(const char *prog, int allow_numa)
{
    printf("usage: %s [--config FILE] [--set section.key=value ...] [--runtime-dir DIR]\n"
           "       [--state-dir DIR] [--output-dir DIR]%s\n"
           "defaults: config %s when it exists, else built-in defaults\n",
           prog, allow_numa ? " --numa-node N" : "", CZK_DAEMON_DEFAULT_CONFIG);
}

int czk_daemon_parse(int argc, char **argv, const char *prog, int allow_numa, czk_config *cfg,
                     czk_daemon_args *out, czk_error *e)
{
    const char *config = NULL;
    char buf[CZK_CONFIG_PATH_MAX + 64];
    int r, i;

    out->config_path = NULL;
    out->numa_node = -1;
    czk_config_defaults(cfg);
    /* first pass: the file and --help */
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        int takes = !strcmp(a, "--config") || !strcmp(a, "--set") || !strcmp(a, "--runtime-dir") ||
                    !strcmp(a, "--state-dir") || !strcmp(a, "--output-dir") ||
                    (allow_numa && !strcmp(a, "--numa-node"));
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(prog, allow_numa);
            return 1;
        }
        if (!takes)
            return czk_errorf(e, -EINVAL, "unknown option \"%s\" (see --help)", a);
        if (i + 1 >= argc)
            return czk_errorf(e, -EINVAL, "option %s needs a value", a);
        if (!strcmp(a, "--config"))
            config = argv[i + 1];
        i++;
    }
    if (!config && access(CZK_DAEMON_DEFAULT_CONFIG, F_OK) == 0)
        config = CZK_DAEMON_DEFAULT_CONFIG;
    if (config) {
        if ((r = czk_config_load(cfg, config, e)) < 0)
            return r;
        out->config_path = config;
    }
    /* second pass: overrides in order */
    for (i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        const char *key = NULL;
        if (!strcmp(a, "--set")) {
            if ((r = czk_config_set(cfg, v, e)) < 0)
                return r;
            continue;
        }
        if (!strcmp(a, "--runtime-dir"))
            key = "czk.runtime_dir";
        else if (!strcmp(a, "--state-dir"))
            key = "czk.state_dir";
        else if (!strcmp(a, "--output-dir"))
            key = "czk.output_dir";
        else if (!strcmp(a, "--numa-node")) {
            char *end;
            long n = strtol(v, &end, 10);
            if (*v == 0 || *end || n < 0 || n > 1023)
                return czk_errorf(e, -EINVAL, "--numa-node \"%s\" is not a node number 0..1023", v);
            out->numa_node = (int)n;
            continue;
        }
        if (key) {
            snprintf(buf, sizeof(buf), "%s=%s", key, v);
            if ((r = czk_config_set(cfg, buf, e)) < 0)
                return r;
        }
    }
    return 0;
}

int czk_daemon_start(int argc, char **argv, const char *prog, int allow_numa, czk_config *cfg,
                     czk_daemon_args *out)
{
    czk_error e = {0};
    int r;

    czk_log_init(prog, CZK_LOG_INFO);
    r = czk_daemon_parse(argc, argv, prog, allow_numa, cfg, out, &e);
    if (r < 0)
        czk_err("%s", e.msg);
    if (r != 0)
        return r;
    czk_log_init(prog, cfg->log_level);
    return 0;
}

void czk_daemon_trace_open(const char *state_dir, const char *prog)
{
    char dir[CZK_CONFIG_PATH_MAX + 8];
    czk_error e = {0};

    czk_trace_dir(state_dir, dir, sizeof(dir));
    if (czk_trace_open(dir, prog, 0, &e) < 0)
        czk_warn("%s: running without a trace", e.msg);
}

void czk_daemon_ready(const char *status)
{
    if (status)
        sd_notifyf(0, "READY=1\nSTATUS=%s", status);
    else
        sd_notify(0, "READY=1");
}

void czk_daemon_status(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    sd_notifyf(0, "STATUS=%s", buf);
}

void czk_daemon_watchdog(void) { sd_notify(0, "WATCHDOG=1"); }

void czk_daemon_stopping(void) { sd_notify(0, "STOPPING=1"); }

uint64_t czk_daemon_watchdog_interval_ms(int cfg_ms)
{
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0)
        return usec / 2000 ? usec / 2000 : 1;
    if (cfg_ms > 0)
        return (uint64_t)cfg_ms / 2 ? (uint64_t)cfg_ms / 2 : 1;
    return 0;
}

int czk_daemon_fdstore_put(int fd, const char *name)
{
    char msg[128];
    int r;
    if (!getenv("NOTIFY_SOCKET"))
        return -ENOTSUP;
    snprintf(msg, sizeof(msg), "FDSTORE=1\nFDNAME=%s", name);
    r = sd_pid_notify_with_fds(0, 0, msg, &fd, 1);
    return r > 0 ? 0 : r == 0 ? -ENOTSUP : r;
}

int czk_daemon_fdstore_remove(const char *name)
{
    if (!getenv("NOTIFY_SOCKET"))
        return -ENOTSUP;
    return sd_notifyf(0, "FDSTOREREMOVE=1\nFDNAME=%s", name) > 0 ? 0 : -ENOTSUP;
}

static char **fd_names;
static int n_fds = -1;

int czk_daemon_fdstore_take(const char *name)
{
    if (n_fds < 0) {
        n_fds = sd_listen_fds_with_names(1, &fd_names);
        if (n_fds < 0)
            n_fds = 0;
    }
    for (int i = 0; i < n_fds; i++) {
        if (fd_names && fd_names[i] && !strcmp(fd_names[i], name)) {
            fd_names[i][0] = 0; /* taken */
            return SD_LISTEN_FDS_START + i;
        }
    }
    return -ENOENT;
}

static volatile sig_atomic_t stop_flag;
static void (*wake_fn)(void *);
static void *wake_ctx;

static void on_signal(int sig)
{
    int saved = errno;
    (void)sig;
    stop_flag = 1;
    if (wake_fn)
        wake_fn(wake_ctx);
    errno = saved;
}

void czk_daemon_signals(void (*wake)(void *ctx), void *ctx)
{
    struct sigaction sa;
    wake_fn = wake;
    wake_ctx = ctx;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

int czk_daemon_stop_requested(void) { return stop_flag != 0; }

int czk_daemon_mkdirs(const char *dir, unsigned mode, czk_error *e)
{
    char buf[CZK_CONFIG_PATH_MAX + 256];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof(buf))
        return czk_errorf(e, -ENAMETOOLONG, "directory name \"%.60s\" is empty or too long", dir);
    memcpy(buf, dir, n + 1);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = 0;
        if (mkdir(buf, mode) < 0 && errno != EEXIST)
            return czk_errorf(e, -errno, "could not create directory \"%s\": %s", buf, strerror(errno));
        *p = '/';
    }
    if (mkdir(buf, mode) < 0 && errno != EEXIST)
        return czk_errorf(e, -errno, "could not create directory \"%s\": %s", buf, strerror(errno));
    return 0;
}

