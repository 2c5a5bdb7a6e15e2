/*
 * cmd_fetch.c — `czk fetch`: the proofs of a job submitted earlier (without
 * --wait, or by a client that went away), written into --out DIR.
 *
 *   czk fetch [--config FILE] [--runtime-dir DIR] --out DIR [--force]
 *             [--wait [--timeout S]] JOB [PARTITION...]
 *
 * For a member of client_group, who may use czk.sock but cannot read the
 * daemons' output_dir: czk-gpud opens each partition's files and hands over
 * read-only fds (FETCH, docs/ipc.md); what the two commands share, the --out
 * checks, the writes and the FETCH exchange, is fetch.c's.
 *
 * First a STATUS for the job (its "job" entry: partitions, state).  No entry
 * means czk-gpud does not know the job, or it is another user's, which gpud
 * answers alike: exit 2.  Without PARTITION every partition is fetched.  An
 * active job is, with --wait, WATCHed until its final EVENT (reconnecting for
 * RECONNECT_S when czk-gpud restarts meanwhile; --timeout S, which implies
 * --wait, gives up after S seconds: exit 1, nothing fetched) and fetched
 * then; without --wait, its partitions that are not done are reported as
 * gpud names their stage (FETCH -EAGAIN).  A partition of a failed or
 * cancelled job that has no files (FETCH -ENOENT) had no proof: reported, not
 * an error of the command.
 *
 * DIR must be absent or empty unless --force (checked before anything is
 * sent); DIR/<partition>/ is created when its files arrive, so a job with
 * nothing to fetch leaves no DIR behind.
 *
 * Output: one line per partition on stdout, "job J partition P: written
 * DIR/P/" or "job J partition P: not fetched: <reason>" (on stderr, after
 * "czk fetch: ", when the reason is an error), then one summary line.  Text
 * from czk-gpud is escaped (czk_esc).
 *
 * Exit status: 0 every partition asked for was written; 1 some partition is
 * not done, failed or was cancelled, or --timeout passed; 2 an error (unknown
 * job, bad arguments, no connection, a file that could not be written).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/fetch.h"
#include "common/base/clock.h"
#include "common/base/log.h"

#define STATUS_TIMEOUT_MS 10000 /* STATUS: gpud answers at once */
#define WAIT_SLICE_MS 500       /* --wait: receive in slices, to see --timeout pass */
#define RECONNECT_S 120         /* --wait: how long to retry when czk-gpud restarts */

enum job_state { JOB_ACTIVE, JOB_COMPLETE, JOB_FAILED, JOB_CANCELLED, JOB_OTHER };

typedef struct fetch_ctx {
    const char *cmd;
    uint64_t job;
    enum job_state state;
    uint32_t nparts, ndone;
    uint64_t deadline;   /* --timeout: CLOCK_MONOTONIC to give up waiting, 0 = never */
    int timeout_s;
} fetch_ctx;

static czk_client cl = {.fd = -1};

static enum job_state job_state_of(const char *s)
{
    if (!strcmp(s, "active"))
        return JOB_ACTIVE;
    if (!strcmp(s, "complete"))
        return JOB_COMPLETE;
    if (!strcmp(s, "failed"))
        return JOB_FAILED;
    if (!strcmp(s, "cancelled"))
        return JOB_CANCELLED;
    return JOB_OTHER; /* a state a newer gpud may add: its files decide */
}

/* STATUS with the job: fills x->state, nparts, ndone; 0, or CZK_EXIT_ERROR
 * after printing why (an unknown job among them) */
static int ask_status(fetch_ctx *x)
{
    static czk_status_reply sr; /* about 110 KiB: not on the stack */
    const czk_status_request rq = {.job = x->job};
    char state[4 * sizeof(sr.job.state)];
    uint8_t body[64];
    czk_error e = {0};
    czk_msg m;
    int n;

    if ((n = czk_schema_encode(&czk_schema_status_request, &rq, body, sizeof(body), &e)) < 0)
        return czk_cli_fail(x->cmd, &e);
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_STATUS;
    m.u.status.body = (czk_bytes){body, (uint32_t)n};
    if (czk_client_send(&cl, &m, NULL, 0, &e) < 0)
        return czk_cli_fail(x->cmd, &e);
    do {
        if (czk_client_recv(&cl, &m, STATUS_TIMEOUT_MS, &e) < 0)
            return czk_cli_failf(x->cmd, "no status from czk-gpud: %s", e.msg);
        if (m.type == CZK_MSG_ERROR)
            return czk_cli_failf(x->cmd, "czk-gpud says: %s", m.u.error.message);
    } while (m.type != CZK_MSG_STATUS_REPLY);
    if (czk_schema_decode(&czk_schema_status_reply, m.u.status.body.ptr, m.u.status.body.len, &sr, &e) < 0)
        return czk_cli_failf(x->cmd, "czk-gpud sent a malformed status: %s", e.msg);
    /* another user's job has no entry either: gpud answers it like an unknown one */
    if (!sr.has_job || sr.job.id != x->job)
        return czk_cli_failf(x->cmd, "job %llu is not known to czk-gpud", (unsigned long long)x->job);
    if (!sr.job.partitions)
        return czk_cli_failf(x->cmd, "czk-gpud says job %llu has no partitions (state %s)",
                             (unsigned long long)x->job, czk_esc(sr.job.state, state, sizeof(state)));
    x->state = job_state_of(sr.job.state);
    x->nparts = sr.job.partitions;
    x->ndone = sr.job.done;
    return 0;
}

static int timed_out(const fetch_ctx *x)
{
    fprintf(stderr,
            "czk %s: job %llu has not finished within --timeout %d s: nothing fetched; it goes on in czk-gpud "
            "(czk status --job %llu)\n",
            x->cmd, (unsigned long long)x->job, x->timeout_s, (unsigned long long)x->job);
    return CZK_EXIT_FALSE;
}

/* gpud went away while we waited: connect and WATCH again, with backoff, for
 * RECONNECT_S (or until --timeout); 0, or an exit status after printing */
static int reconnect(fetch_ctx *x)
{
    czk_error e = {0};
    int r;

    fprintf(stderr, "czk %s: lost the connection to czk-gpud; reconnecting (up to %d s) to wait for job %llu\n",
            x->cmd, RECONNECT_S, (unsigned long long)x->job);
    r = czk_client_rewatch(&cl, x->job, RECONNECT_S, x->deadline, NULL, &e);
    if (r == -ETIME)
        return timed_out(x);
    if (r < 0)
        return czk_cli_failf(x->cmd, "could not reconnect to czk-gpud within %d s: %s (job %llu: czk status "
                             "--job %llu)", RECONNECT_S, e.msg, (unsigned long long)x->job,
                             (unsigned long long)x->job);
    fprintf(stderr, "czk %s: reconnected, waiting for job %llu again\n", x->cmd, (unsigned long long)x->job);
    return 0;
}

/* --wait on an active job: WATCH it until its final EVENT, which sets
 * x->state; 0, or an exit status after printing */
static int wait_job(fetch_ctx *x)
{
    czk_error e = {0};
    czk_msg m;
    int r;

    printf("job %llu is active (%u of %u partition%s done): waiting for it to finish\n",
           (unsigned long long)x->job, x->ndone, x->nparts, x->nparts == 1 ? "" : "s");
    fflush(stdout);
    if ((r = czk_client_watch(&cl, x->job, &e)) < 0)
        return czk_cli_fail(x->cmd, &e);
    for (;;) {
        uint64_t now = czk_mono_ns();
        int wait_ms = WAIT_SLICE_MS;

        if (x->deadline && now >= x->deadline)
            return timed_out(x);
        if (x->deadline && (x->deadline - now) / 1000000u < (uint64_t)wait_ms)
            wait_ms = (int)((x->deadline - now) / 1000000u) + 1;
        r = czk_client_recv(&cl, &m, wait_ms, &e);
        if (r == -ETIMEDOUT)
            continue;
        if (czk_client_dropped(r)) {
            if ((r = reconnect(x)) != 0)
                return r;
            continue;
        }
        if (r < 0)
            return czk_cli_fail(x->cmd, &e);
        if (m.type == CZK_MSG_ERROR) /* the job went away (WATCH's "job N is not known") */
            return czk_cli_failf(x->cmd, "job %llu: czk-gpud says: %s", (unsigned long long)x->job,
                                 m.u.error.message);
        if (m.type != CZK_MSG_EVENT || m.u.event.job_id != x->job || m.u.event.partition != CZK_PARTITION_ALL)
            continue;
        switch (m.u.event.stage) {
        case CZK_STAGE_DONE: x->state = JOB_COMPLETE; return 0;
        case CZK_STAGE_FAILED: x->state = JOB_FAILED; return 0;
        case CZK_STAGE_CANCELLED: x->state = JOB_CANCELLED; return 0;
        default: break; /* queued, synth: the job goes on */
        }
    }
}

/* what became of one partition */
enum outcome { WRITTEN, NOT_FETCHED, ERRED };

static enum outcome fetch_one(fetch_ctx *x, czk_fetcher *fx, uint32_t p, const char *dir_esc)
{
    char why[CZK_FETCH_WHY_MAX] = "";
    unsigned long long job = (unsigned long long)x->job;
    bool final_no_proof = x->state == JOB_FAILED || x->state == JOB_CANCELLED;
    const char *what = x->state == JOB_FAILED ? "failed" : "was cancelled";
    int r = czk_fetch_partition(fx, p, why, sizeof(why));

    if (r == 0) {
        printf("job %llu partition %u: written %s/%u/\n", job, p, dir_esc, p);
        return WRITTEN;
    }
    if (fx->fail == CZK_FETCH_REFUSED && r == -EAGAIN) { /* gpud named the stage */
        printf("job %llu partition %u: not fetched: %s\n", job, p, why);
        return NOT_FETCHED;
    }
    if ((fx->fail == CZK_FETCH_REFUSED || fx->fail == CZK_FETCH_NO_FILES) && r == -ENOENT && final_no_proof) {
        printf("job %llu partition %u: not fetched: no proof, job %llu %s (%s)\n", job, p, job, what, why);
        return NOT_FETCHED;
    }
    if (fx->fail == CZK_FETCH_NO_FILES && r == -ENOENT && x->state == JOB_ACTIVE) {
        printf("job %llu partition %u: not fetched: no proof yet, %s (czk-gpud is too old to name its stage)\n",
               job, p, why);
        return NOT_FETCHED;
    }
    if (fx->fail == CZK_FETCH_NO_FILES)
        czk_cli_failf(x->cmd, "job %llu partition %u: not fetched: czk-gpud is too old to hand its files over "
                      "(FETCH) and %s", job, p, why);
    else
        czk_cli_failf(x->cmd, "job %llu partition %u: not fetched: %s", job, p, why);
    return ERRED;
}

int czk_cmd_fetch(int argc, char **argv)
{
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},
        {"force", no_argument, NULL, 'f'},
        {"wait", no_argument, NULL, 'w'},
        {"timeout", required_argument, NULL, 't'},
        CZK_CLIENT_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0], *out_dir = NULL;
    bool force = false, wait = false;
    fetch_ctx x = {.cmd = cmd};
    uint32_t *asked = NULL, nasked = 0, nwritten = 0, nnot = 0, nerr = 0, total;
    char why[CZK_FETCH_WHY_MAX], *dir_esc = NULL;
    czk_fetcher fx;
    czk_error e = {0};
    int rc = CZK_EXIT_ERROR, r, c;

    while ((c = czk_cli_getopt(argc, argv, opts)) != -1) {
        if ((r = czk_client_option(&cl, cmd, c, optarg)) != 0) {
            if (r < 0)
                return CZK_EXIT_ERROR;
            continue;
        }
        switch (c) {
        case 'o': out_dir = optarg; break;
        case 'f': force = true; break;
        case 'w': wait = true; break;
        case 't':
            if (czk_cli_parse_seconds(cmd, "--timeout", optarg, 1, &x.timeout_s) != 0)
                return CZK_EXIT_ERROR;
            wait = true;
            break;
        default: return czk_cli_opt_status();
        }
    }
    if (!out_dir || !*out_dir)
        return czk_cli_usage_error(cmd, "--out DIR is required");
    if (optind >= argc)
        return czk_cli_usage_error(cmd, "no job given");
    if (czk_cli_parse_job(argv[optind], &x.job) < 0)
        return czk_cli_usage_error(cmd, "\"%s\" is not a job number", argv[optind]);
    if (argc - optind - 1 > 0 && !(asked = calloc((size_t)(argc - optind - 1), sizeof(*asked))))
        return czk_cli_failf(cmd, "out of memory");
    for (int i = optind + 1; i < argc; i++) {
        uint64_t v;
        if (czk_cli_parse_u64(argv[i], 10, CZK_PARTITION_ALL - 1u, &v) < 0) {
            free(asked);
            return czk_cli_usage_error(cmd, "\"%s\" is not a partition number", argv[i]);
        }
        asked[nasked++] = (uint32_t)v;
    }
    /* before anything is sent: two jobs' files must not mix */
    if (!force && czk_fetch_out_check(out_dir, why, sizeof(why)) < 0) {
        free(asked);
        return czk_cli_failf(cmd, "%s", why);
    }

    if (czk_client_connect(&cl, &e) < 0) {
        czk_cli_fail(cmd, &e);
        goto out;
    }
    if (ask_status(&x) != 0)
        goto out;
    for (uint32_t i = 0; i < nasked; i++)
        if (asked[i] >= x.nparts) {
            czk_cli_failf(cmd, "job %llu has %u partition%s: there is no partition %u", (unsigned long long)x.job,
                          x.nparts, x.nparts == 1 ? "" : "s", asked[i]);
            goto out;
        }
    if (x.state == JOB_ACTIVE && wait) {
        if (x.timeout_s)
            x.deadline = czk_mono_ns() + (uint64_t)x.timeout_s * 1000000000ull;
        if ((rc = wait_job(&x)) != 0)
            goto out;
        rc = CZK_EXIT_ERROR;
    }

    if (!(dir_esc = malloc(4 * strlen(out_dir) + 8))) {
        czk_cli_failf(cmd, "out of memory");
        goto out;
    }
    czk_esc(out_dir, dir_esc, 4 * strlen(out_dir) + 8);
    fx = (czk_fetcher){.cl = &cl, .out_dir = out_dir, .job = x.job};
    total = nasked ? nasked : x.nparts;
    for (uint32_t i = 0; i < total; i++) {
        switch (fetch_one(&x, &fx, nasked ? asked[i] : i, dir_esc)) {
        case WRITTEN: nwritten++; break;
        case NOT_FETCHED: nnot++; break;
        case ERRED: nerr++; break;
        }
        fflush(stdout);
    }
    printf("job %llu: %u of %u partition%s written to %s/<partition>/", (unsigned long long)x.job, nwritten, total,
           total == 1 ? "" : "s", dir_esc);
    if (nnot)
        printf(", %u not done, failed or cancelled", nnot);
    if (nerr)
        printf(", %u not fetched for an error", nerr);
    printf("\n");
    if (fflush(stdout) == EOF)
        nerr++;
    rc = nerr ? CZK_EXIT_ERROR : nnot ? CZK_EXIT_FALSE : CZK_EXIT_OK;
out:
    free(dir_esc);
    free(asked);
    czk_client_close(&cl);
    return rc;
}
