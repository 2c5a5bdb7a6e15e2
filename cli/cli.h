/*
 * cli.h — shared pieces of the `czk` command: global options parsed by
 * main.c, the one option convention every subcommand follows, and the
 * helpers every subcommand uses to report errors the same way (one line
 * "czk <cmd>: <what failed, naming the file>", exit status 2).
 *
 * The convention (docs: man/czk.1.scd):
 *   - options are parsed with getopt_long (czk_cli_getopt): `--opt value` and
 *     `--opt=value` both work, options and operands may come in any order,
 *     `--` ends the options;
 *   - -h/--help prints the full usage of the command (commands.h) on stdout
 *     and exits 0;
 *   - a usage error prints one line saying what is wrong, then the full usage,
 *     on stderr and exits 2.
 */
#ifndef CZK_CLI_H
#define CZK_CLI_H

#include <getopt.h>
#include <stdint.h>

#include "common/base/error.h"

enum { CZK_EXIT_OK = 0, CZK_EXIT_FALSE = 1, CZK_EXIT_ERROR = 2 };

/* --threads N (0 = all online CPUs or $CZK_THREADS) */
extern int czk_cli_threads;

/* prints "czk <cmd>: <e->msg>" and returns CZK_EXIT_ERROR */
int czk_cli_fail(const char *cmd, const czk_error *e);
/* printf-style variant */
int czk_cli_failf(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* prints the full usage of cmd on stderr and returns CZK_EXIT_ERROR */
int czk_cli_usage(const char *cmd);
/* printf-style: "czk <cmd>: <what is wrong>", then the full usage, on
 * stderr; returns CZK_EXIT_ERROR */
int czk_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* prints the full usage of cmd on stdout and returns CZK_EXIT_OK */
int czk_cli_help(const char *cmd);
/* true when argv holds -h or --help before "--" (for commands without options) */
int czk_cli_wants_help(int argc, char **argv);

/*
 * getopt_long over a subcommand's argv (argv[0] = its name) with -h/--help
 * added to opts.  Returns the next option's val, -1 after the last option
 * (operands are then argv[optind..argc-1]), or CZK_CLI_OPT_STOP after
 * printing the usage: on stdout for -h/--help, on stderr after a line naming
 * the bad option otherwise.  The caller then returns czk_cli_opt_status().
 * Long options only; opts ends with a zero entry and holds at most 31.
 */
#define CZK_CLI_OPT_STOP (-1000)
int czk_cli_getopt(int argc, char **argv, const struct option *opts);
/* after CZK_CLI_OPT_STOP: CZK_EXIT_OK when it was --help, else CZK_EXIT_ERROR */
int czk_cli_opt_status(void);

/* for a command without options: -h/--help, then lo..hi operands (what
 * names them in the error); 0 with the operands at argv[optind..], or
 * CZK_CLI_OPT_STOP after printing (the caller returns czk_cli_opt_status()) */
int czk_cli_operands(int argc, char **argv, int lo, int hi, const char *what);

/*
 * Numbers on the command line, one rule for every command: digits only (no
 * sign, no space, not empty), in base 10, or with base 0 also 0x... and
 * 0... as strtoull reads them; at most max.  0, or -EINVAL when s is not
 * such a number (the caller names the option in its error).
 */
int czk_cli_parse_u64(const char *s, int base, uint64_t max, uint64_t *out);
/* a job number: decimal, 1..UINT64_MAX */
int czk_cli_parse_job(const char *s, uint64_t *out);
/* seconds for opt (lo..86400): 0 with *out set, or CZK_EXIT_ERROR after
 * printing "czk <cmd>: <opt> needs seconds in lo..86400, not "<s>"" */
int czk_cli_parse_seconds(const char *cmd, const char *opt, const char *s, int lo, int *out);

#define CZK_CLI_CMD(name, ident, args, help, opts) int czk_cmd_##ident(int argc, char **argv);
#include "cli/commands.h"
#undef CZK_CLI_CMD

#endif
