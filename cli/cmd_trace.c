/*
 * cmd_trace.c — `czk trace [--since SECONDS] [--out FILE] [--state-dir DIR]
 * [--config FILE] [--runtime-dir DIR]`: merges the per-process trace files
 * every czk daemon writes into state_dir/trace/ (common/runtime/trace.h) into
 * one Chrome/Perfetto JSON trace (open it in ui.perfetto.dev or
 * chrome://tracing).  docs/tracing.md describes the stages.
 *
 * Which state_dir (the daemons may have been started with --state-dir, a
 * config file or an environment this shell does not have):
 *   1. --state-dir DIR;
 *   2. the state_dir the running czk-gpud reports in its STATUS reply
 *      ("state_dir"), gpud being found exactly as `czk status` finds it
 *      (--runtime-dir, --config, /etc/czk/czk.conf, $CZK_RUNTIME_DIR, ...;
 *      cli/client.h), with the same checks of the directory and the peer;
 *   3. when no czk-gpud answers (the traces are read after a stop as well),
 *      or it does not say: the state_dir of --config FILE, else of
 *      /etc/czk/czk.conf when readable, else the built-in default
 *      ($CZK_STATE_DIR, ...; common/runtime/config.c).
 * The files are read with the caller's own rights; no daemon is needed.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "common/base/log.h"
#include "common/runtime/config.h"
#include "common/runtime/trace.h"
#include "ipc/msg.h"

#define ASK_TIMEOUT_MS 3000

/*
 * Asks the czk-gpud that `czk status` would reach for its state_dir.
 * 0 with dir filled, or -errno when there is no answer (no daemon, refused,
 * or a gpud whose STATUS has no "state_dir"): the caller falls back.
 */
static int ask_gpud(czk_client *cl, char *dir, size_t n, char *why, size_t wn)
{
    static const czk_status_request req = {0};
    uint8_t body[16];
    czk_status_reply *st = calloc(1, sizeof(*st)); /* large: pools and jobs */
    czk_error e = {0};
    czk_msg m;
    int r, len;

    if (!st) {
        snprintf(why, wn, "out of memory");
        return -ENOMEM;
    }
    if ((r = czk_client_connect(cl, &e)) < 0) {
        snprintf(why, wn, "%s", e.msg);
        free(st);
        return r;
    }
    if ((len = czk_schema_encode(&czk_schema_status_request, &req, body, sizeof(body), &e)) < 0) {
        r = len;
        goto out;
    }
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_STATUS;
    m.u.status.body = (czk_bytes){body, (uint32_t)len};
    if ((r = czk_client_send(cl, &m, NULL, 0, &e)) < 0)
        goto out;
    do
        r = czk_client_recv(cl, &m, ASK_TIMEOUT_MS, &e);
    while (r == 0 && m.type != CZK_MSG_STATUS_REPLY && m.type != CZK_MSG_ERROR);
    if (r < 0)
        goto out;
    if (m.type != CZK_MSG_STATUS_REPLY) {
        r = czk_errorf(&e, -EPROTO, "czk-gpud at %.300s answered STATUS with an error", cl->sock_path);
        goto out;
    }
    if ((r = czk_schema_decode(&czk_schema_status_reply, m.u.status.body.ptr, m.u.status.body.len, st, &e)) < 0)
        goto out;
    if (!st->has_state_dir || !st->state_dir[0] || strlen(st->state_dir) >= n) {
        r = czk_errorf(&e, -ENOENT, "czk-gpud at %.300s does not report its state_dir", cl->sock_path);
        goto out;
    }
    snprintf(dir, n, "%s", st->state_dir);
    r = 0;
out:
    if (r < 0)
        snprintf(why, wn, "%s", e.msg);
    czk_client_close(cl);
    free(st);
    return r;
}

int czk_cmd_trace(int argc, char **argv)
{
    static const struct option opts[] = {
        {"since", required_argument, NULL, 's'},
        {"out", required_argument, NULL, 'o'},
        {"state-dir", required_argument, NULL, 'd'},
        CZK_CLIENT_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0], *state_dir = NULL, *out_path = NULL, *how;
    char asked[CZK_CONFIG_PATH_MAX], why[1024] = "", esc[4 * sizeof(why)];
    czk_client cl = {.fd = -1};
    double since = 0;
    czk_config cfg;
    czk_trace_file *files = NULL;
    size_t nfiles = 0, nrec = 0;
    char dir[CZK_CONFIG_PATH_MAX + 8];
    czk_error e = {0};
    FILE *out = stdout;
    long n;
    int rc = CZK_EXIT_ERROR, c, r;
    bool fell_back = false;

    while ((c = czk_cli_getopt(argc, argv, opts)) != -1) {
        if ((r = czk_client_option(&cl, cmd, c, optarg)) != 0) {
            if (r < 0)
                return CZK_EXIT_ERROR;
            continue;
        }
        if (c == 's') {
            char *end;
            errno = 0;
            since = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(since >= 0))
                return czk_cli_failf(cmd, "--since needs a number of seconds, not \"%s\"", optarg);
        } else if (c == 'o') {
            out_path = optarg;
        } else if (c == 'd') {
            state_dir = optarg;
        } else {
            return czk_cli_opt_status();
        }
    }
    if (optind < argc)
        return czk_cli_usage_error(cmd, "unexpected argument \"%s\"", argv[optind]);
    how = "--state-dir";
    if (!state_dir) {
        if (ask_gpud(&cl, asked, sizeof(asked), why, sizeof(why)) == 0) {
            state_dir = asked;
            how = "reported by czk-gpud";
        } else {
            czk_info("trace: no state_dir from czk-gpud (%s): using the configuration's",
                     czk_esc(why, esc, sizeof(esc)));
            fell_back = true;
            cfg = cl.cfg; /* czk_client_resolve loaded --config or /etc/czk/czk.conf over the defaults */
            if (!cl.sock_path[0]) {
                czk_config_defaults(&cfg);
                if (cl.config_path && czk_config_load(&cfg, cl.config_path, &e) < 0)
                    return czk_cli_fail(cmd, &e);
            }
            state_dir = cfg.state_dir;
            how = cl.config_path ? "state_dir of --config" : "the configuration's state_dir";
        }
    }
    czk_trace_dir(state_dir, dir, sizeof(dir));
    /* a directory that does not exist holds no traces: say where it was looked for */
    if ((r = czk_trace_read_dir(dir, &files, &nfiles, &e)) < 0 && r != -ENOENT)
        return czk_cli_fail(cmd, &e);
    if (nfiles == 0) {
        if (!fell_back)
            czk_cli_failf(cmd, "no trace files in \"%s\" (%s)", dir, how);
        else
            czk_cli_failf(cmd,
                          "no trace files in \"%s\" (%s; no czk-gpud reported another: %s); point to the "
                          "daemons' state directory with --state-dir DIR, or to them with --runtime-dir DIR or "
                          "--config FILE",
                          dir, how, czk_esc(why, esc, sizeof(esc)));
        goto done;
    }
    if (out_path && strcmp(out_path, "-") && !(out = fopen(out_path, "w"))) {
        czk_cli_failf(cmd, "cannot create \"%s\": %s", out_path, strerror(errno));
        goto done;
    }
    {
        uint64_t now = czk_trace_now(), span = (uint64_t)(since * 1e9);
        n = czk_trace_export_json(files, nfiles, since > 0 && span < now ? now - span : 0, out, &e);
    }
    if (out != stdout && fclose(out) == EOF && n >= 0)
        n = czk_errorf(&e, -errno, "cannot write \"%s\": %s", out_path, strerror(errno));
    if (n < 0) {
        czk_cli_fail(cmd, &e);
        goto done;
    }
    for (size_t i = 0; i < nfiles; i++)
        nrec += files[i].n;
    fprintf(stderr, "czk trace: %ld of %zu records from %zu files in %s%s%s\n", n, nrec, nfiles, dir,
            out != stdout ? " written to " : "", out != stdout ? out_path : "");
    rc = CZK_EXIT_OK;
done:
    czk_trace_files_free(files, nfiles);
    return rc;
}
