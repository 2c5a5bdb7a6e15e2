/*
 * cmd_trace.c — `czk trace [--since SECONDS] [--out FILE] [--config FILE]
 * [--state-dir DIR]`: merges the per-process trace files every czk daemon
 * writes into state_dir/trace/ (common/runtime/trace.h) into one Chrome/Perfetto JSON
 * trace (open it in ui.perfetto.dev or chrome://tracing).  Reads files only;
 * needs no running daemon.  docs/tracing.md describes the stages.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/runtime/config.h"
#include "common/runtime/trace.h"

static int usage(void)
{
    fprintf(stderr, "usage: czk trace [--since SECONDS] [--out FILE] [--config FILE] [--state-dir DIR]\n"
                    "  --since SECONDS   only stages that ended in the last SECONDS (default: everything)\n"
                    "  --out FILE        write the JSON there (default: standard output)\n"
                    "  --config FILE     read state_dir from FILE (default /etc/czk/czk.conf when readable)\n"
                    "  --state-dir DIR   the daemons' state directory (traces in DIR/trace)\n");
    return CZK_EXIT_ERROR;
}

/* --opt VALUE or --opt=VALUE at argv[*i]: the value, or NULL when not this option */
static const char *opt_value(const char *opt, int argc, char **argv, int *i, int *missing)
{
    size_t l = strlen(opt);
    if (strncmp(argv[*i], opt, l))
        return NULL;
    if (argv[*i][l] == '=')
        return argv[*i] + l + 1;
    if (argv[*i][l])
        return NULL;
    if (*i + 1 >= argc) {
        *missing = 1;
        return NULL;
    }
    return argv[++*i];
}

int czk_cmd_trace(int argc, char **argv)
{
    const char *cmd = argv[0], *config = NULL, *state_dir = NULL, *out_path = NULL, *v;
    double since = 0;
    czk_config cfg;
    czk_trace_file *files = NULL;
    size_t nfiles = 0, nrec = 0;
    char dir[CZK_CONFIG_PATH_MAX + 8];
    czk_error e = {0};
    FILE *out = stdout;
    long n;
    int rc = CZK_EXIT_ERROR;

    for (int i = 1; i < argc; i++) {
        int missing = 0;
        if ((v = opt_value("--since", argc, argv, &i, &missing))) {
            char *end;
            errno = 0;
            since = strtod(v, &end);
            if (errno || end == v || *end || since < 0)
                return czk_cli_failf(cmd, "--since needs a number of seconds, not \"%s\"", v);
        } else if ((v = opt_value("--out", argc, argv, &i, &missing))) {
            out_path = v;
        } else if ((v = opt_value("--config", argc, argv, &i, &missing))) {
            config = v;
        } else if ((v = opt_value("--state-dir", argc, argv, &i, &missing))) {
            state_dir = v;
        } else {
            if (missing)
                czk_cli_failf(cmd, "%s needs a value", argv[i]);
            else
                czk_cli_failf(cmd, "unexpected argument \"%s\"", argv[i]);
            return usage();
        }
        if (missing) {
            czk_cli_failf(cmd, "%s needs a value", argv[i]);
            return usage();
        }
    }
    czk_config_defaults(&cfg);
    if (!config && !state_dir && access("/etc/czk/czk.conf", R_OK) == 0)
        config = "/etc/czk/czk.conf";
    if (config && czk_config_load(&cfg, config, &e) < 0)
        return czk_cli_fail(cmd, &e);
    czk_trace_dir(state_dir ? state_dir : cfg.state_dir, dir, sizeof(dir));
    if (czk_trace_read_dir(dir, &files, &nfiles, &e) < 0)
        return czk_cli_fail(cmd, &e);
    if (nfiles == 0) {
        czk_cli_failf(cmd, "no trace files in \"%s\" (do the daemons use this state directory?)", dir);
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
