/*
 * cli.h — shared pieces of the `czk` command: global options parsed by
 * main.c and the helpers every subcommand uses to report errors the same way
 * (one line "czk <cmd>: <what failed, naming the file>", exit status 2).
 */
#ifndef CZK_CLI_H
#define CZK_CLI_H

#include "common/base/error.h"

enum { CZK_EXIT_OK = 0, CZK_EXIT_FALSE = 1, CZK_EXIT_ERROR = 2 };

/* --threads N (0 = all online CPUs or $CZK_THREADS) */
extern int czk_cli_threads;

/* prints "czk <cmd>: <e->msg>" and returns CZK_EXIT_ERROR */
int czk_cli_fail(const char *cmd, const czk_error *e);
/* printf-style variant */
int czk_cli_failf(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* prints the usage line of cmd and returns CZK_EXIT_ERROR */
int czk_cli_usage(const char *cmd);
/* true when argv holds -h or --help (the subcommand then prints its usage) */
int czk_cli_wants_help(int argc, char **argv);

#define CZK_CLI_CMD(name, ident, args, help) int czk_cmd_##ident(int argc, char **argv);
#include "cli/commands.h"
#undef CZK_CLI_CMD

#endif
