/*
 * client.c — the client side of czk-gpud's czk.sock shared by `czk submit`,
 * `czk status` and `czk cancel`: option parsing for --config/--runtime-dir,
 * socket resolution (same rules as the daemons, see client.h), the checks of
 * the runtime directory and of the server's credentials, connect and HELLO.
 * Blocking I/O through ipc/peer.h: the CLI has no event loop.
 */
#include "cli/client.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/base/clock.h"
#include "common/runtime/daemon.h"
#include "common/base/log.h"
#include "ipc/peer.h"

#define SYSTEM_RUNTIME_DIR "/run/czk"
#define DAEMON_USER "czk" /* the system user the packaged units run the daemons as */

int czk_client_option(czk_client *cl, const char *cmd, int opt, const char *optarg)
{
    if (opt != CZK_CLIENT_OPT_CONFIG && opt != CZK_CLIENT_OPT_RUNTIME_DIR)
        return 0;
    if (!optarg || !*optarg) {
        czk_cli_failf(cmd, "%s needs a value", opt == CZK_CLIENT_OPT_CONFIG ? "--config" : "--runtime-dir");
        return -EINVAL;
    }
    if (opt == CZK_CLIENT_OPT_CONFIG)
        cl->config_path = optarg;
    else
        cl->runtime_dir = optarg;
    return 1;
}

static void trusted_init(czk_client *cl)
{
    struct passwd *pw = getpwnam(DAEMON_USER);

    cl->n_trusted = 0;
    cl->trusted[cl->n_trusted++] = 0;
    if (geteuid() != 0)
        cl->trusted[cl->n_trusted++] = geteuid();
    if (pw && pw->pw_uid != 0 && pw->pw_uid != geteuid())
        cl->trusted[cl->n_trusted++] = pw->pw_uid;
}

static int trusted(const czk_client *cl, uid_t uid)
{
    for (int i = 0; i < cl->n_trusted; i++)
        if (cl->trusted[i] == uid)
            return 1;
    return 0;
}

/* "uid 1002 (mallory)" */
static const char *uid_name(uid_t uid, char *buf, size_t n)
{
    struct passwd *pw = getpwuid(uid);
    char esc[96];

    if (pw)
        snprintf(buf, n, "uid %u (%s)", (unsigned)uid, czk_esc(pw->pw_name, esc, sizeof(esc)));
    else
        snprintf(buf, n, "uid %u", (unsigned)uid);
    return buf;
}

/*
 * The directory that holds czk.sock must be one only a trusted uid can put a
 * socket into: lstat() (a symbolic link is refused, whoever it points to),
 * a directory, owned by a trusted uid, no write permission for group or
 * others.  -ENOENT (nothing there) is returned without a message: the caller
 * says the daemon is not running.
 */
static int check_runtime_dir(const czk_client *cl, czk_error *e)
{
    const char *dir = cl->cfg.runtime_dir;
    char who[128];
    struct stat st;

    if (lstat(dir, &st) < 0) {
        if (errno == ENOENT)
            return -ENOENT;
        return czk_errorf(e, -errno, "cannot check runtime directory \"%s\": %s", dir, strerror(errno));
    }
    if (S_ISLNK(st.st_mode))
        return czk_errorf(e, -EACCES,
                          "refusing runtime directory \"%s\": it is a symbolic link (it must be a real "
                          "directory; point to the target with --runtime-dir)",
                          dir);
    if (!S_ISDIR(st.st_mode))
        return czk_errorf(e, -EACCES, "refusing runtime directory \"%s\": it is not a directory", dir);
    if (!trusted(cl, st.st_uid))
        return czk_errorf(e, -EACCES,
                          "refusing runtime directory \"%s\": it is owned by %s, not by you, root or the %s "
                          "user (another user may have created it to impersonate czk-gpud: remove it, or "
                          "choose the directory with --runtime-dir)",
                          dir, uid_name(st.st_uid, who, sizeof(who)), DAEMON_USER);
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return czk_errorf(e, -EACCES,
                          "refusing runtime directory \"%s\": it is writable by %s (mode %04o; anyone who can "
                          "write there can impersonate czk-gpud: chmod go-w it)",
                          dir, (st.st_mode & S_IWOTH) ? "others" : "its group", (unsigned)(st.st_mode & 07777));
    return 0;
}

/* the server's SO_PEERCRED, read before anything is sent to it */
static int check_peer(const czk_client *cl, czk_peer_cred *cred, czk_error *e)
{
    char who[128];
    int r;

    if ((r = czk_peer_get_cred(cl->fd, cred, e)) < 0)
        return r;
    if (!trusted(cl, cred->uid))
        return czk_errorf(e, -EACCES,
                          "refusing %s: it is served by %s (pid %d), which is neither root, the %s user nor "
                          "you (another user may be impersonating czk-gpud); nothing was sent",
                          cl->sock_path, uid_name(cred->uid, who, sizeof(who)), (int)cred->pid, DAEMON_USER);
    return 0;
}

int czk_client_resolve(czk_client *cl, czk_error *e)
{
    const char *cfg_path = cl->config_path;
    struct stat st;
    int r;

    cl->fd = -1;
    trusted_init(cl);
    if ((r = czk_config_env_check(e)) < 0)
        return r;
    czk_config_defaults(&cl->cfg);
    if (!cfg_path && access(CZK_DAEMON_DEFAULT_CONFIG, R_OK) == 0)
        cfg_path = CZK_DAEMON_DEFAULT_CONFIG;
    if (cfg_path && (r = czk_config_load(&cl->cfg, cfg_path, e)) < 0)
        return r;
    if (cl->runtime_dir) {
        if (cl->runtime_dir[0] != '/')
            return czk_errorf(e, -EINVAL, "--runtime-dir \"%.80s\" is not an absolute path (it must start with '/')",
                              cl->runtime_dir);
        if (strlen(cl->runtime_dir) >= sizeof(cl->cfg.runtime_dir))
            return czk_errorf(e, -ENAMETOOLONG, "--runtime-dir \"%.80s...\" is too long", cl->runtime_dir);
        snprintf(cl->cfg.runtime_dir, sizeof(cl->cfg.runtime_dir), "%s", cl->runtime_dir);
    }
    snprintf(cl->sock_path, sizeof(cl->sock_path), "%s/czk.sock", cl->cfg.runtime_dir);
    /* nothing chose the directory explicitly and nothing listens there: the
     * daemons may be the system's (systemd, /run/czk) */
    if (!cl->runtime_dir && !cl->config_path && !getenv("CZK_RUNTIME_DIR") && stat(cl->sock_path, &st) < 0 &&
        stat(SYSTEM_RUNTIME_DIR "/czk.sock", &st) == 0) {
        czk_info("no socket at %s: using %s/czk.sock", cl->sock_path, SYSTEM_RUNTIME_DIR);
        snprintf(cl->cfg.runtime_dir, sizeof(cl->cfg.runtime_dir), "%s", SYSTEM_RUNTIME_DIR);
        snprintf(cl->sock_path, sizeof(cl->sock_path), "%s/czk.sock", SYSTEM_RUNTIME_DIR);
    }
    return 0;
}

int czk_client_connect(czk_client *cl, czk_error *e)
{
    czk_msg_hello mine, theirs;
    czk_peer_policy pol;
    czk_peer_cred cred;
    czk_error ce = {0};
    struct stat st;
    int r;

    if (!cl->sock_path[0] && (r = czk_client_resolve(cl, e)) < 0)
        return r;
    if ((r = check_runtime_dir(cl, e)) < 0 && r != -ENOENT)
        return r;
    if (r == -ENOENT || lstat(cl->sock_path, &st) < 0) {
        r = r == -ENOENT ? r : -errno;
        if (r == -ENOENT)
            return czk_errorf(e, r,
                              "czk-gpud is not running: no socket at %s (start the daemons, or point to them "
                              "with --runtime-dir DIR or --config FILE)",
                              cl->sock_path);
        return czk_errorf(e, r, "cannot reach %s: %s", cl->sock_path, strerror(-r));
    }
    if ((r = czk_peer_connect(cl->sock_path, &cl->fd, &ce)) < 0) {
        if (r == -ECONNREFUSED)
            return czk_errorf(e, r, "czk-gpud is not running: nothing listens on %s", cl->sock_path);
        if (r == -EACCES)
            return czk_errorf(e, r,
                              "permission denied on %s: run as the daemons' user or as a member of their "
                              "client_group",
                              cl->sock_path);
        return czk_errorf(e, r, "%s", ce.msg);
    }
    if ((r = check_peer(cl, &cred, e)) < 0) {
        czk_client_close(cl);
        return r;
    }
    czk_peer_hello_init(&mine, CZK_ROLE_CLIENT, -1, 0, "czk");
    czk_peer_policy_default(&pol);
    pol.uid = cred.uid; /* checked above against the trusted uids */
    pol.allow_root = 1;
    pol.roles_mask = CZK_ROLE_BIT(CZK_ROLE_GPUD);
    if ((r = czk_peer_handshake(cl->fd, &mine, &pol, &theirs, 10000, &ce)) < 0) {
        czk_client_close(cl);
        if (r == -ECONNRESET)
            return czk_errorf(e, r,
                              "czk-gpud at %s closed the connection during the handshake (it stopped, or "
                              "your user is not allowed: see client_group in docs/config.md)",
                              cl->sock_path);
        return czk_errorf(e, r, "handshake with czk-gpud at %s failed: %s", cl->sock_path, ce.msg);
    }
    czk_info("connected to %s (pid %u, uid %u) at %s", theirs.name[0] ? theirs.name : "czk-gpud", theirs.pid,
             (unsigned)cred.uid, cl->sock_path);
    return 0;
}

void czk_client_close(czk_client *cl)
{
    if (cl->fd >= 0)
        close(cl->fd);
    cl->fd = -1;
}

int czk_client_send(czk_client *cl, const czk_msg *m, const int *fds, int nfds, czk_error *e)
{
    if (cl->fd < 0)
        return czk_errorf(e, -ENOTCONN, "not connected to czk-gpud");
    return czk_peer_send(cl->fd, m, fds, nfds, e);
}

int czk_client_recv_fds(czk_client *cl, czk_msg *m, int *fds, int maxfds, int *nfds, int timeout_ms,
                        czk_error *e)
{
    int got = fds && maxfds > 0 ? maxfds : 0, want, r;

    if (nfds)
        *nfds = 0;
    if (cl->fd < 0)
        return czk_errorf(e, -ENOTCONN, "not connected to czk-gpud");
    /* more fds than got: czk_peer_recv closes them all and says -EBADMSG */
    r = czk_peer_recv(cl->fd, cl->buf, sizeof(cl->buf), m, got ? fds : NULL, &got, timeout_ms, e);
    if (r == -ECONNRESET)
        return czk_errorf(e, r, "czk-gpud closed the connection");
    if (r < 0)
        return r;
    if (got != (want = czk_msg_fds(m))) {
        for (int i = 0; i < got; i++)
            close(fds[i]);
        return czk_errorf(e, -EBADMSG, "czk-gpud sent %s with %d file descriptor%s, expected %d",
                          czk_msg_type_name(m->type), got, got == 1 ? "" : "s", want);
    }
    if (nfds)
        *nfds = got;
    return 0;
}

int czk_client_recv(czk_client *cl, czk_msg *m, int timeout_ms, czk_error *e)
{
    return czk_client_recv_fds(cl, m, NULL, 0, NULL, timeout_ms, e);
}

int czk_client_watch(czk_client *cl, uint64_t job, czk_error *e)
{
    czk_msg m;
    int r;

    if (cl->fd < 0 && (r = czk_client_connect(cl, e)) < 0)
        return r;
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_WATCH;
    m.u.watch.job_id = job;
    if ((r = czk_client_send(cl, &m, NULL, 0, e)) < 0)
        czk_client_close(cl);
    return r;
}

int czk_client_rewatch(czk_client *cl, uint64_t job, int limit_s, uint64_t deadline,
                       volatile sig_atomic_t *stop, czk_error *e)
{
    uint64_t until = czk_mono_ns() + (uint64_t)limit_s * 1000000000ull, backoff_ns = 100000000ull, now, end;

    czk_client_close(cl);
    while (!(stop && *stop)) {
        if (czk_client_watch(cl, job, e) == 0)
            return 0;
        now = czk_mono_ns();
        if (deadline && now >= deadline)
            return -ETIME;
        if (now >= until)
            return -ETIMEDOUT;
        end = deadline && deadline < until ? deadline : until;
        usleep((useconds_t)((end - now < backoff_ns ? end - now : backoff_ns) / 1000u));
        backoff_ns = backoff_ns * 2 > 2000000000ull ? 2000000000ull : backoff_ns * 2;
    }
    return -EINTR;
}
