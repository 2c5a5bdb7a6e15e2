/*
 * main.c — `czk`: parses the global options (anywhere before "--":
 * --threads N, -v/--verbose, -q/--quiet, -h/--help) and dispatches to the
 * subcommand named by the first remaining argument (table in commands.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/base/log.h"

int czk_cli_threads;

struct cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *args, *help;
};

static const struct cmd cmds[] = {
#define CZK_CLI_CMD(name, ident, args, help) { name, czk_cmd_##ident, args, help },
#include "cli/commands.h"
#undef CZK_CLI_CMD
};
#define N_CMDS (sizeof(cmds) / sizeof(cmds[0]))

#define FAIL_MSG_MAX 2048 /* one error line before escaping (a reason from gpud is up to 1 KiB) */

/* Error lines name files, request ids and what czk-gpud answered: every
 * byte that could forge a line or a terminal sequence is escaped (log.h). */
static void fail_line(const char *cmd, const char *msg)
{
    char esc[4 * FAIL_MSG_MAX + 8];

    fprintf(stderr, "czk %s: %s\n", cmd, czk_esc(msg, esc, sizeof(esc)));
}

int czk_cli_fail(const char *cmd, const czk_error *e)
{
    fail_line(cmd, e->msg[0] ? e->msg : strerror(-e->code));
    return CZK_EXIT_ERROR;
}

int czk_cli_failf(const char *cmd, const char *fmt, ...)
{
    char msg[FAIL_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fail_line(cmd, msg);
    return CZK_EXIT_ERROR;
}

int czk_cli_usage(const char *cmd)
{
    for (size_t i = 0; i < N_CMDS; i++)
        if (!strcmp(cmds[i].name, cmd))
            fprintf(stderr, "usage: czk [--threads N] %s %s\n  %s\n", cmds[i].name, cmds[i].args,
                    cmds[i].help);
    return CZK_EXIT_ERROR;
}

int czk_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return 1;
    return 0;
}

static void usage_all(FILE *f)
{
    fprintf(f, "usage: czk [--threads N] [-v|-q] COMMAND ARGS...\n\ncommands:\n");
    for (size_t i = 0; i < N_CMDS; i++)
        fprintf(f, "  %-12s %s\n  %-12s   %s\n", cmds[i].name, cmds[i].args, "", cmds[i].help);
}

static int parse_threads(const char *s)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 1024)
        return -1;
    return (int)v;
}

int main(int argc, char **argv)
{
    int level = CZK_LOG_WARN, n = 1, i;
    bool done = false;

    /* pull the global options out of argv, keep everything else in order */
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;

        if (!done && !strcmp(a, "--")) {
            done = true;
        } else if (!done && (!strcmp(a, "--threads") || !strncmp(a, "--threads=", 10))) {
            if (a[9] == '=')
                val = a + 10;
            else if (i + 1 < argc)
                val = argv[++i];
            if (!val || (czk_cli_threads = parse_threads(val)) < 0) {
                fprintf(stderr, "czk: --threads needs an integer in 0..1024 (0 = all CPUs)\n");
                return CZK_EXIT_ERROR;
            }
            continue;
        } else if (!done && (!strcmp(a, "-v") || !strcmp(a, "--verbose"))) {
            level = CZK_LOG_INFO;
            continue;
        } else if (!done && (!strcmp(a, "-q") || !strcmp(a, "--quiet"))) {
            level = CZK_LOG_ERR;
            continue;
        }
        argv[n++] = argv[i];
    }
    argc = n;
    argv[argc] = NULL;
    czk_log_init("czk", level);

    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
        !strcmp(argv[1], "help")) {
        usage_all(argc < 2 ? stderr : stdout);
        return argc < 2 ? CZK_EXIT_ERROR : CZK_EXIT_OK;
    }
    for (size_t k = 0; k < N_CMDS; k++) {
        if (!strcmp(argv[1], cmds[k].name)) {
            if (czk_cli_wants_help(argc - 1, argv + 1)) {
                czk_cli_usage(cmds[k].name);
                return CZK_EXIT_OK;
            }
            return cmds[k].run(argc - 1, argv + 1);
        }
    }
    fprintf(stderr, "czk: unknown command \"%s\" (czk --help lists them)\n", argv[1]);
    return CZK_EXIT_ERROR;
}
