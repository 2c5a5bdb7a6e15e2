/*
 * client.c — the client side of czk-gpud's czk.sock shared by `czk submit`,
 * `czk status` and `czk cancel`: option parsing for --config/--runtime-dir,
 * socket resolution (same rules as the daemons, see client.h), connect and
 * HELLO.  Blocking I/O through ipc/peer.h: the CLI has no event loop.
 */
#include "cli/client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/runtime/daemon.h"
#include "common/base/log.h"
#include "ipc/peer.h"

#define SYSTEM_RUNTIME_DIR "/run/czk"

int czk_client_option(czk_client *cl, const char *cmd, int argc, char **argv, int *i)
{
    static const char *const names[] = {"--config", "--runtime-dir"};
    const char *a = argv[*i];

    for (int k = 0; k < 2; k++) {
        size_t n = strlen(names[k]);
        const char *val = NULL;

        if (strncmp(a, names[k], n) || (a[n] != 0 && a[n] != '='))
            continue;
        if (a[n] == '=')
            val = a + n + 1;
        else if (*i + 1 < argc)
            val = argv[++*i];
        if (!val || !*val) {
            czk_cli_failf(cmd, "%s needs a value", names[k]);
            return -EINVAL;
        }
        if (k == 0)
            cl->config_path = val;
        else
            cl->runtime_dir = val;
        return 1;
    }
    return 0;
}

int czk_client_resolve(czk_client *cl, czk_error *e)
{
    const char *cfg_path = cl->config_path;
    struct stat st;
    int r;

    cl->fd = -1;
    czk_config_defaults(&cl->cfg);
    if (!cfg_path && access(CZK_DAEMON_DEFAULT_CONFIG, R_OK) == 0)
        cfg_path = CZK_DAEMON_DEFAULT_CONFIG;
    if (cfg_path && (r = czk_config_load(&cl->cfg, cfg_path, e)) < 0)
        return r;
    if (cl->runtime_dir) {
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
    czk_error ce = {0};
    struct stat st;
    int r;

    if (!cl->sock_path[0] && (r = czk_client_resolve(cl, e)) < 0)
        return r;
    if (stat(cl->sock_path, &st) < 0) {
        r = -errno;
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
    czk_peer_hello_init(&mine, CZK_ROLE_CLIENT, -1, 0, "czk");
    czk_peer_policy_default(&pol);
    pol.uid = st.st_uid; /* whoever bound the socket: the daemon's user */
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
    czk_info("connected to %s (pid %u) at %s", theirs.name[0] ? theirs.name : "czk-gpud", theirs.pid,
             cl->sock_path);
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

int czk_client_recv(czk_client *cl, czk_msg *m, int timeout_ms, czk_error *e)
{
    int nfds = 0;
    int r;

    if (cl->fd < 0)
        return czk_errorf(e, -ENOTCONN, "not connected to czk-gpud");
    r = czk_peer_recv(cl->fd, cl->buf, sizeof(cl->buf), m, NULL, &nfds, timeout_ms, e);
    if (r == -ECONNRESET)
        czk_errorf(e, r, "czk-gpud closed the connection");
    return r;
}
