/*
 * cmd_journal.c — `czk journal check FILE`, `czk journal salvage FILE OUT`
 * and `czk journal idmark FILE NEXT`: the recovery tools for gpud's journal
 * and job-id mark (ipc/journal.h states the rules).  They read and write
 * files only; run them while czk-gpud is stopped.
 *
 *   check    prints every damaged region (offset, length, the seq it
 *            follows, what is wrong); exit 0 when gpud would open the file
 *            (a torn tail is reported but is not corruption), 1 when it
 *            would refuse it, 2 when the file cannot be read
 *   salvage  writes OUT (must not exist) with every provably good record
 *            and lists what was dropped; exit 0, or 2 on error
 *   idmark   writes a new id mark whose next id is NEXT (exit 0, 2 on error)
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "ipc/journal.h"

static const char *kind_name(enum czk_journal_problem_kind k)
{
    switch (k) {
    case CZK_JOURNAL_BAD_HEADER: return "bad header";
    case CZK_JOURNAL_TORN_CREATE: return "torn creation";
    case CZK_JOURNAL_TORN_TAIL: return "torn tail";
    case CZK_JOURNAL_CORRUPT: return "corrupt";
    }
    return "?";
}

static void print_problem(const czk_journal_problem *p, void *ctx)
{
    const char *verb = ctx;
    printf("%s: offset %" PRIu64 ", %" PRIu64 " bytes, after seq %" PRIu64, kind_name(p->kind), p->offset,
           p->length, p->after_seq);
    if (p->seq)
        printf(", header claims seq %" PRIu64, p->seq);
    printf(": %s%s\n", p->what, verb ? verb : "");
}

static int check(const char *cmd, const char *path)
{
    czk_journal_info info;
    czk_error e = {0};
    int n = czk_journal_check(path, print_problem, NULL, &info, &e);

    if (n < 0)
        return czk_cli_fail(cmd, &e);
    if (n > 0) {
        printf("%s: CORRUPT, %d damaged region(s) czk-gpud refuses; \"czk journal salvage %s NEW\" keeps every "
               "provable record\n",
               path, n, path);
        return CZK_EXIT_FALSE;
    }
    printf("%s: ok, %" PRIu64 " records, last seq %" PRIu64 "%s\n", path, info.records, info.last_seq,
           info.torn_bytes ? " (a torn tail that czk-gpud trims on open)" : "");
    return CZK_EXIT_OK;
}

static int salvage(const char *cmd, const char *in, const char *out)
{
    czk_error e = {0};
    uint64_t kept = 0;

    if (czk_journal_salvage(in, out, print_problem, " (dropped)", &kept, &e) < 0)
        return czk_cli_fail(cmd, &e);
    printf("%s: %" PRIu64 " records written; check what was dropped above before moving it over %s\n", out, kept,
           in);
    return CZK_EXIT_OK;
}

static int idmark(const char *cmd, const char *path, const char *next_s)
{
    czk_error e = {0};
    uint64_t next;

    if (czk_cli_parse_job(next_s, &next) < 0)
        return czk_cli_failf(cmd, "NEXT must be a job id >= 1, not \"%.32s\"", next_s);
    if (czk_idmark_set(path, next, 0, &e) < 0)
        return czk_cli_fail(cmd, &e);
    printf("%s: the next job id is %llu\n", path, (unsigned long long)next);
    return CZK_EXIT_OK;
}

int czk_cmd_journal(int argc, char **argv)
{
    const char *cmd = argv[0];

    if (czk_cli_wants_help(argc, argv))
        return czk_cli_help(cmd);
    if (argc < 2)
        return czk_cli_usage(cmd);
    if (!strcmp(argv[1], "check") && argc == 3)
        return check(cmd, argv[2]);
    if (!strcmp(argv[1], "salvage") && argc == 4)
        return salvage(cmd, argv[2], argv[3]);
    if (!strcmp(argv[1], "idmark") && argc == 4)
        return idmark(cmd, argv[2], argv[3]);
    return czk_cli_usage_error(cmd, "unknown journal command or wrong number of operands");
}
