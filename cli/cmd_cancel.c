/*
 * cmd_cancel.c — `czk cancel JOB...`: cancels jobs this user submitted.
 * czk-gpud journals the cancellation, drops the job's queued partitions and
 * gives back the pool slots its partitions hold at once; a partition being
 * computed is discarded when it comes back.  gpud answers EVENT(job,
 * CANCELLED) or ERROR (unknown job, another user's job, already finished).
 *
 * Exit status: 0 every job cancelled, 2 otherwise (each failure printed).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"

static czk_client cl = {.fd = -1};

static int cancel_one(const char *cmd, uint64_t job)
{
    czk_error e = {0};
    czk_msg m;

    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_CANCEL;
    m.u.cancel.job_id = job;
    if (czk_client_send(&cl, &m, NULL, 0, &e) < 0)
        return czk_cli_failf(cmd, "job %llu: %s", (unsigned long long)job, e.msg);
    for (;;) {
        if (czk_client_recv(&cl, &m, 30000, &e) < 0)
            return czk_cli_failf(cmd, "job %llu: no answer from czk-gpud: %s", (unsigned long long)job, e.msg);
        if (m.type == CZK_MSG_ERROR)
            return czk_cli_failf(cmd, "job %llu: %s", (unsigned long long)job, m.u.error.message);
        if (m.type == CZK_MSG_EVENT && m.u.event.job_id == job && m.u.event.partition == CZK_PARTITION_ALL &&
            m.u.event.stage == CZK_STAGE_CANCELLED) {
            printf("job %llu cancelled\n", (unsigned long long)job);
            return CZK_EXIT_OK;
        }
    }
}

int czk_cmd_cancel(int argc, char **argv)
{
    static const struct option opts[] = {CZK_CLIENT_LONGOPTS, {NULL, 0, NULL, 0}};
    const char *cmd = argv[0];
    uint64_t jobs[256];
    int n = 0, r, c, rc = CZK_EXIT_OK;
    czk_error e = {0};

    while ((c = czk_cli_getopt(argc, argv, opts)) != -1) {
        if ((r = czk_client_option(&cl, cmd, c, optarg)) < 0)
            return CZK_EXIT_ERROR;
        if (r == 0)
            return czk_cli_opt_status();
    }
    for (int i = optind; i < argc; i++) {
        uint64_t v;
        if (czk_cli_parse_job(argv[i], &v) < 0)
            return czk_cli_usage_error(cmd, "\"%s\" is not a job number", argv[i]);
        if (n == (int)(sizeof(jobs) / sizeof(jobs[0])))
            return czk_cli_failf(cmd, "at most %zu jobs at once", sizeof(jobs) / sizeof(jobs[0]));
        jobs[n++] = v;
    }
    if (!n)
        return czk_cli_usage_error(cmd, "no job given");
    if (czk_client_connect(&cl, &e) < 0)
        return czk_cli_fail(cmd, &e);
    for (int i = 0; i < n; i++)
        if (cancel_one(cmd, jobs[i]) != CZK_EXIT_OK)
            rc = CZK_EXIT_ERROR;
    czk_client_close(&cl);
    return rc;
}
