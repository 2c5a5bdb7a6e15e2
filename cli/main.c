/*
 * main.c — `czk`: parses the global options (--threads N, -v/--verbose,
 * -q/--quiet anywhere before "--"; -h/--help and -V/--version before the
 * command), dispatches to the subcommand named by the first remaining
 * argument (table in commands.h), and holds the option convention every
 * subcommand shares (cli.h: czk_cli_getopt, the usage texts).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/base/log.h"
#include "common/runtime/version.h"

int czk_cli_threads;

struct cmd {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *args, *help, *opts;
};

static const struct cmd cmds[] = {
#define CZK_CLI_CMD(name, ident, args, help, opts) { name, czk_cmd_##ident, args, help, opts },
#include "cli/commands.h"
#undef CZK_CLI_CMD
};
#define N_CMDS (sizeof(cmds) / sizeof(cmds[0]))

#define FAIL_MSG_MAX 2048 /* one error line before escaping (a reason from gpud is up to 1 KiB) */
#define GLOBAL_OPTS_HELP                                                                           \
    "  --threads N           CPU threads of prove and setup (0 = all online CPUs or $CZK_THREADS)\n" \
    "  -v, --verbose         log progress (info level) on stderr\n"                                  \
    "  -q, --quiet           log errors only\n"                                                      \
    "  -V, --version         print the version, git commit and backends built in, then exit\n"       \
    "  -h, --help            print this help, then exit (czk COMMAND --help: that command's)\n"

/* Error lines name files, request ids and what czk-gpud answered: every
 * byte that could forge a line or a terminal sequence is escaped (log.h). */
static void fail_line(const char *cmd, const char *msg)
{
    char esc[4 * FAIL_MSG_MAX + 8];

    fprintf(stderr, "czk %s: %s\n", cmd, czk_esc(msg, esc, sizeof(esc)));
}

/* fail_line of the printf-style message FMT, AP (cut at FAIL_MSG_MAX) */
static void fail_vline(const char *cmd, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void fail_vline(const char *cmd, const char *fmt, va_list ap)
{
    char msg[FAIL_MSG_MAX];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    fail_line(cmd, msg);
}

int czk_cli_fail(const char *cmd, const czk_error *e)
{
    fail_line(cmd, e->msg[0] ? e->msg : strerror(-e->code));
    return CZK_EXIT_ERROR;
}

int czk_cli_failf(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fail_vline(cmd, fmt, ap);
    va_end(ap);
    return CZK_EXIT_ERROR;
}

static const struct cmd *find_cmd(const char *name)
{
    for (size_t i = 0; i < N_CMDS; i++)
        if (!strcmp(cmds[i].name, name))
            return &cmds[i];
    return NULL;
}

static void print_usage(FILE *f, const struct cmd *c)
{
    fprintf(f,
            "usage: czk [global options] %s%s%s\n%s\n\n"
            "  -h, --help            print this help, then exit\n%s"
            "global options (czk --help): --threads N, -v/--verbose, -q/--quiet\n",
            c->name, c->args[0] ? " " : "", c->args, c->help, c->opts);
}

int czk_cli_usage(const char *cmd)
{
    const struct cmd *c = find_cmd(cmd);

    if (c)
        print_usage(stderr, c);
    return CZK_EXIT_ERROR;
}

int czk_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fail_vline(cmd, fmt, ap);
    va_end(ap);
    return czk_cli_usage(cmd);
}

int czk_cli_help(const char *cmd)
{
    const struct cmd *c = find_cmd(cmd);

    if (c)
        print_usage(stdout, c);
    return CZK_EXIT_OK;
}

int czk_cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return 1;
    return 0;
}

/* ------------------------------------------------------------ getopt --- */

#define OPTS_MAX 32
static int opt_status;

int czk_cli_opt_status(void) { return opt_status; }

int czk_cli_getopt(int argc, char **argv, const struct option *opts)
{
    static char **started;       /* the argv being parsed: a new one restarts getopt */
    static struct option all[OPTS_MAX + 1];
    const char *cmd = argv[0];
    size_t n = 0;
    int c;

    if (started != argv) {
        started = argv;
        optind = 0; /* GNU getopt: full re-initialisation */
    }
    while (opts[n].name && n < OPTS_MAX - 1) {
        all[n] = opts[n];
        n++;
    }
    all[n++] = (struct option){"help", no_argument, NULL, 'h'};
    all[n] = (struct option){NULL, 0, NULL, 0};
    opterr = 0;
    c = getopt_long(argc, argv, ":h", all, NULL);
    if (c == 'h') {
        opt_status = czk_cli_help(cmd);
        return CZK_CLI_OPT_STOP;
    }
    if (c == '?' || c == ':') {
        const char *arg = optind > 0 && optind <= argc ? argv[optind - 1] : "?";
        const char *name = NULL;
        for (size_t i = 0; i < n && optopt; i++)
            if (all[i].val == optopt && !all[i].flag)
                name = all[i].name;
        if (c == ':')
            czk_cli_usage_error(cmd, "option --%s needs a value", name ? name : arg);
        else if (optopt && name && strchr(arg, '='))
            czk_cli_usage_error(cmd, "option --%s takes no value", name);
        else if (optopt && !name)
            czk_cli_usage_error(cmd, "unknown option \"-%c\"", optopt);
        else
            czk_cli_usage_error(cmd, "unknown or ambiguous option \"%s\"", arg);
        opt_status = CZK_EXIT_ERROR;
        return CZK_CLI_OPT_STOP;
    }
    return c;
}

int czk_cli_operands(int argc, char **argv, int lo, int hi, const char *what)
{
    static const struct option none[] = {{NULL, 0, NULL, 0}};
    int c, n;

    if ((c = czk_cli_getopt(argc, argv, none)) != -1)
        return CZK_CLI_OPT_STOP; /* --help, or an option: opt_status says which */
    n = argc - optind;
    if (n < lo || n > hi) {
        czk_cli_usage_error(argv[0], "expected %s, got %d argument%s", what, n, n == 1 ? "" : "s");
        opt_status = CZK_EXIT_ERROR;
        return CZK_CLI_OPT_STOP;
    }
    return 0;
}

int czk_cli_parse_u64(const char *s, int base, uint64_t max, uint64_t *out)
{
    char *end;
    unsigned long long v;

    if (*s < '0' || *s > '9') /* strtoull would take a sign or leading space */
        return -EINVAL;
    errno = 0;
    v = strtoull(s, &end, base);
    if (errno || *end || v > max)
        return -EINVAL;
    *out = v;
    return 0;
}

int czk_cli_parse_job(const char *s, uint64_t *out)
{
    uint64_t v;
    if (czk_cli_parse_u64(s, 10, UINT64_MAX, &v) < 0 || v == 0)
        return -EINVAL;
    *out = v;
    return 0;
}

int czk_cli_parse_seconds(const char *cmd, const char *opt, const char *s, int lo, int *out)
{
    uint64_t v;
    if (czk_cli_parse_u64(s, 10, 86400, &v) < 0 || v < (uint64_t)lo)
        return czk_cli_failf(cmd, "%s needs seconds in %d..86400, not \"%s\"", opt, lo, s);
    *out = (int)v;
    return 0;
}

/* --------------------------------------------------------- `version` --- */

int czk_cmd_version(int argc, char **argv)
{
    if (czk_cli_operands(argc, argv, 0, 0, "no arguments") < 0)
        return czk_cli_opt_status();
    czk_version_print(stdout, "czk");
    return fflush(stdout) == EOF ? czk_cli_failf(argv[0], "cannot write to stdout: %s", strerror(errno))
                                 : CZK_EXIT_OK;
}

/* -------------------------------------------------------------- main --- */

static void usage_all(FILE *f)
{
    fprintf(f, "usage: czk [global options] COMMAND [ARGS...]\n\nglobal options:\n" GLOBAL_OPTS_HELP
               "\ncommands (czk COMMAND --help for each one's options):\n");
    for (size_t i = 0; i < N_CMDS; i++)
        fprintf(f, "  %-12s %s\n", cmds[i].name, cmds[i].help);
}

static int parse_threads(const char *s)
{
    uint64_t v;
    return czk_cli_parse_u64(s, 10, 1024, &v) < 0 ? -1 : (int)v;
}

int main(int argc, char **argv)
{
    int level = CZK_LOG_WARN, n = 1, i;
    bool done = false, help = false, version = false;
    const struct cmd *c;

    /* pull the global options out of argv, keep everything else in order;
     * until the command name, anything else that looks like an option is an
     * error */
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *val = NULL;
        bool before_cmd = n == 1;

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
        } else if (before_cmd && (!strcmp(a, "-h") || !strcmp(a, "--help"))) {
            help = true;
            continue;
        } else if (before_cmd && (!strcmp(a, "-V") || !strcmp(a, "--version"))) {
            version = true;
            continue;
        } else if (before_cmd && a[0] == '-' && a[1]) {
            char esc[256];
            fprintf(stderr, "czk: unknown option \"%s\" (czk --help lists them)\n", czk_esc(a, esc, sizeof(esc)));
            return CZK_EXIT_ERROR;
        }
        argv[n++] = argv[i];
    }
    argc = n;
    argv[argc] = NULL;
    czk_log_init("czk", level);

    if (version) {
        czk_version_print(stdout, "czk");
        return CZK_EXIT_OK;
    }
    if (help || (argc >= 2 && !strcmp(argv[1], "help"))) {
        /* czk help COMMAND: that command's usage */
        if (!help && argc >= 3) {
            if (!(c = find_cmd(argv[2]))) {
                fprintf(stderr, "czk: unknown command \"%s\" (czk --help lists them)\n", argv[2]);
                return CZK_EXIT_ERROR;
            }
            return czk_cli_help(c->name);
        }
        usage_all(stdout);
        return CZK_EXIT_OK;
    }
    if (argc < 2) {
        usage_all(stderr);
        return CZK_EXIT_ERROR;
    }
    if (!(c = find_cmd(argv[1]))) {
        char esc[256];
        fprintf(stderr, "czk: unknown command \"%s\" (czk --help lists them)\n", czk_esc(argv[1], esc, sizeof(esc)));
        return CZK_EXIT_ERROR;
    }
    /* `czk COMMAND --help` is answered here for every command, also for one
     * that reads its arguments without czk_cli_getopt */
    if (argc >= 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help")))
        return czk_cli_help(c->name);
    return c->run(argc - 1, argv + 1);
}
