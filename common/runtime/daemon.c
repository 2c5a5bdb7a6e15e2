/*
 * daemon.c — start-up and systemd plumbing shared by czk-gpud, czk-synth and
 * czk-finalizer (see daemon.h).  Runs on the main thread except the signal
 * handler, which only stores a flag and calls an async-signal-safe wake.
 */
#include "common/runtime/daemon.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
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
#include "common/runtime/version.h"

static void usage(const char *prog, int allow_numa)
{
    printf("usage: %s [options]\n"
           "  -c, --config FILE        configuration file (default %s when it exists,\n"
           "                           else the built-in defaults)\n"
           "  -s, --set SECTION.KEY=VALUE\n"
           "                           override one setting (repeatable, applied in order)\n"
           "      --runtime-dir DIR    [czk] runtime_dir (sockets)\n"
           "      --state-dir DIR      [czk] state_dir (journal, spool, traces)\n"
           "      --output-dir DIR     [czk] output_dir (proof files)\n"
           "%s"
           "  -h, --help               print this help, then exit\n"
           "  -V, --version            print version, commit and backends, then exit\n"
           "Options take their value as the next argument or after '=' (--config=FILE).\n",
           prog, CZK_DAEMON_DEFAULT_CONFIG,
           allow_numa ? "      --numa-node N        the NUMA node this instance binds to and fills pools of\n" : "");
}

enum { OPT_RUNTIME = 256, OPT_STATE, OPT_OUTPUT, OPT_NUMA };

int czk_daemon_parse(int argc, char **argv, const char *prog, int allow_numa, czk_config *cfg,
                     czk_daemon_args *out, czk_error *e)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"set", required_argument, NULL, 's'},
        {"runtime-dir", required_argument, NULL, OPT_RUNTIME},
        {"state-dir", required_argument, NULL, OPT_STATE},
        {"output-dir", required_argument, NULL, OPT_OUTPUT},
        {"numa-node", required_argument, NULL, OPT_NUMA},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *config = NULL;
    char buf[CZK_CONFIG_PATH_MAX + 64];
    int r, o;

    out->config_path = NULL;
    out->numa_node = -1;
    czk_config_defaults(cfg);
    /* first pass: the file, --help, --version and every option's spelling;
     * the overrides are applied after the file, in order, by the second */
    opterr = 0;
    optind = 0;
    while ((o = getopt_long(argc, argv, ":c:s:hV", opts, NULL)) != -1) {
        switch (o) {
        case 'h': usage(prog, allow_numa); return 1;
        case 'V': czk_version_print(stdout, prog); return 1;
        case 'c': config = optarg; break;
        case OPT_NUMA:
            if (!allow_numa)
                return czk_errorf(e, -EINVAL, "unknown option \"--numa-node\" (see --help)");
            break;
        case ':': return czk_errorf(e, -EINVAL, "option %s needs a value (see --help)", argv[optind - 1]);
        case '?': return czk_errorf(e, -EINVAL, "unknown option \"%s\" (see --help)", argv[optind - 1]);
        default: break;
        }
    }
    if (optind < argc)
        return czk_errorf(e, -EINVAL, "unexpected argument \"%s\" (see --help)", argv[optind]);
    if ((r = czk_config_env_check(e)) < 0)
        return r;
    if (!config && access(CZK_DAEMON_DEFAULT_CONFIG, F_OK) == 0)
        config = CZK_DAEMON_DEFAULT_CONFIG;
    if (config) {
        if ((r = czk_config_load(cfg, config, e)) < 0)
            return r;
        out->config_path = config;
    }
    optind = 0;
    while ((o = getopt_long(argc, argv, ":c:s:hV", opts, NULL)) != -1) {
        const char *key = NULL;
        switch (o) {
        case 's':
            if ((r = czk_config_set(cfg, optarg, e)) < 0)
                return r;
            break;
        case OPT_RUNTIME: key = "czk.runtime_dir"; break;
        case OPT_STATE: key = "czk.state_dir"; break;
        case OPT_OUTPUT: key = "czk.output_dir"; break;
        case OPT_NUMA: {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*optarg == 0 || *end || n < 0 || n > 1023)
                return czk_errorf(e, -EINVAL, "--numa-node \"%s\" is not a node number 0..1023", optarg);
            out->numa_node = (int)n;
            break;
        }
        default: break;
        }
        if (key) {
            snprintf(buf, sizeof(buf), "%s=%s", key, optarg);
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
    if (cfg->n_circuits == 0) { /* every daemon serves circuits: a configuration error, not one to restart */
        czk_err("no circuits configured: add [circuit.NAME] zkey = PATH to the config");
        return -EINVAL;
    }
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

uint64_t czk_daemon_watchdog_interval_ms(void)
{
    uint64_t usec = 0;
    if (sd_watchdog_enabled(0, &usec) > 0 && usec > 0)
        return usec / 2000 ? usec / 2000 : 1;
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
static pthread_mutex_t fds_mu = PTHREAD_MUTEX_INITIALIZER; /* loader threads take fds concurrently */

/* the fds systemd handed back at start, read once */
static void fds_init(void)
{
    if (n_fds < 0) {
        n_fds = sd_listen_fds_with_names(1, &fd_names);
        if (n_fds < 0)
            n_fds = 0;
    }
}

int czk_daemon_fdstore_take(const char *name)
{
    int fd = -ENOENT;
    pthread_mutex_lock(&fds_mu);
    fds_init();
    for (int i = 0; i < n_fds && fd < 0; i++) {
        if (name[0] && fd_names && fd_names[i] && !strcmp(fd_names[i], name)) {
            fd_names[i][0] = 0; /* taken */
            fd = SD_LISTEN_FDS_START + i;
        }
    }
    pthread_mutex_unlock(&fds_mu);
    return fd;
}

int czk_daemon_fdstore_has_suffix(const char *suffix)
{
    size_t ls = strlen(suffix);
    int n = 0;
    pthread_mutex_lock(&fds_mu);
    fds_init();
    for (int i = 0; i < n_fds; i++) {
        size_t l = fd_names && fd_names[i] ? strlen(fd_names[i]) : 0;
        if (l >= ls && ls && !strcmp(fd_names[i] + l - ls, suffix))
            n++;
    }
    pthread_mutex_unlock(&fds_mu);
    return n;
}

int czk_daemon_fdstore_drop_untaken(const char *prefix)
{
    int dropped = 0;
    pthread_mutex_lock(&fds_mu);
    fds_init();
    for (int i = 0; i < n_fds; i++) {
        if (!fd_names || !fd_names[i] || !fd_names[i][0] || strncmp(fd_names[i], prefix, strlen(prefix)))
            continue;
        czk_info("fd store: dropping \"%s\", which this configuration no longer uses", fd_names[i]);
        czk_daemon_fdstore_remove(fd_names[i]);
        close(SD_LISTEN_FDS_START + i);
        fd_names[i][0] = 0;
        dropped++;
    }
    pthread_mutex_unlock(&fds_mu);
    return dropped;
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

static volatile sig_atomic_t hup_pending;

static void on_sighup(int sig)
{
    (void)sig;
    hup_pending = 1;
}

void czk_daemon_sighup_init(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_sighup;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGHUP, &sa, NULL);
}

int czk_daemon_hup_take(void)
{
    if (!hup_pending)
        return 0;
    hup_pending = 0;
    return 1;
}
