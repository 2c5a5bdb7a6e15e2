/*
 * cmd_submit.c — `czk submit`: hands a job to czk-gpud and optionally follows
 * it to the end (docs/pipeline.md "Life of a job").
 *
 *   czk submit --circuit NAME [--priority high|normal|low] [--request-id ID]
 *              [--wait] [--out DIR [--force]] [--timeout S]
 *              [--reconnect-timeout S] WTNS...
 *
 * Each WTNS is one partition.  The client opens every witness itself, with
 * its own rights, and passes the open descriptors with SUBMIT (SCM_RIGHTS):
 * czk-gpud never opens a path on a client's behalf.  Only regular files are
 * sent: a witness is opened non-blocking (a FIFO would block open() until a
 * writer came) and anything fstat() does not call a regular file is refused,
 * naming its type.  --wait follows the
 * job's EVENTs with one progress line per partition (redrawn in place on a
 * terminal, one line per change otherwise).  --out DIR (implies --wait)
 * writes DIR/<partition>/proof.json and public.json (mode 0640, directories
 * 0750, less when the umask says so) from the proof texts the DONE events
 * carry, again with the client's own rights.  A proof that did not travel
 * in an event (too large for one record, finished while the client was
 * reconnecting after a gpud restart, or a duplicate request id, whose past
 * events are gone) is fetched once the job is over: FETCH(job, partition)
 * on the same connection, answered FETCHED with two read-only fds opened by
 * czk-gpud (proof.json, public.json in its output_dir, which a member of
 * client_group cannot read itself) or ERROR.  The client sends one FETCH at
 * a time and reads until its answer: EVENTs are skipped, and the STATUS
 * request the follow loop may have left unanswered is answered first (gpud
 * answers in order).  Only a gpud that does not know FETCH (an older one:
 * it answers ERROR -EBADMSG for the unknown type and closes the connection)
 * makes the client read output_dir with its own rights instead.  The --out
 * checks, the writes and the FETCH exchange are fetch.c's, shared with
 * `czk fetch` (cmd_fetch.c).
 *
 * Request ids are printable ASCII (0x21..0x7e), 1..REQUEST_ID_MAX bytes.  When
 * none is given the client draws one (128 random bits, hex), so that a
 * submission whose connection drops before the answer can be sent again with
 * the same id: the client reconnects (with backoff, for --reconnect-timeout
 * seconds, default 120) and resubmits; czk-gpud answers a known id with
 * ACCEPTED(duplicate), which means the first attempt was accepted.
 *
 * When czk-gpud goes away while the client waits, the job is safe in its
 * journal: the client reconnects (for --reconnect-timeout seconds) and
 * WATCHes the job again.
 *
 * --out DIR must be absent or empty (a second job's files would mix with the
 * first's) unless --force is given.  While waiting, the client asks gpud for
 * its STATUS every STATUS_POLL_MS on the same connection: when no czk-synth
 * or no czk-finalizer has been connected for MISSING_WARN_S seconds it says
 * so on stderr, and the progress line of a partition that cannot move says
 * why.  --timeout S (implies --wait) gives up waiting S seconds after the
 * submission: exit 1, the job goes on in czk-gpud.
 *
 * Exit status: 0 accepted (and, with --wait, every partition proved);
 * 1 a partition failed, the job was cancelled or --timeout passed; 2 error
 * or rejection.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/clock.h"
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/fetch.h"
#include "common/base/log.h"

#define TTY_MAX_LINES 24      /* more partitions than this: one summary line */
#define ACCEPT_TIMEOUT_MS 600000 /* gpud spools and fsyncs every witness before it answers */
#define STATUS_POLL_MS 2000      /* while waiting: how often to ask gpud what is connected */
#define MISSING_WARN_S 5         /* warn when no synth / no finalizer for this long */
/* the wire field holds the id with its NUL */
#define REQUEST_ID_WIRE (sizeof(((czk_msg_submit *)0)->request_id) - 1)
#define REQUEST_ID_MAX (REQUEST_ID_WIRE < 128 ? REQUEST_ID_WIRE : 128)

static const char *const stage_names[] = {"-", "queued", "synth", "gpu", "finalize", "done", "failed", "cancelled"};

typedef struct part_view {
    uint32_t stage;      /* enum czk_stage, 0 = not heard of yet */
    int32_t status;
    uint64_t since_ns;   /* CLOCK_MONOTONIC when this stage was entered */
    uint64_t done_ns;    /* CLOCK_MONOTONIC when it became final */
    bool written;        /* --out: proof.json/public.json written */
    char reason[CZK_MSG_STR_LONG];
} part_view;

typedef struct submit_ctx {
    const char *cmd;
    const char *circuit;
    uint32_t priority;
    const char *out_dir;
    int reconnect_s;
    uint64_t job;
    uint32_t nparts;
    part_view *parts;
    uint64_t t0;         /* CLOCK_MONOTONIC at submission */
    bool tty;
    unsigned drawn;      /* lines of the progress block on screen */
    bool out_failed;
    uint32_t job_stage;  /* final job stage, 0 while running */
    int32_t job_status;
    char job_reason[CZK_MSG_STR_LONG];
    uint64_t deadline;   /* --timeout: CLOCK_MONOTONIC to give up waiting, 0 = never */
    int timeout_s;
    /* what gpud's STATUS says is connected (-1: it did not say) */
    uint64_t next_poll;  /* CLOCK_MONOTONIC of the next STATUS request */
    bool status_pending; /* a STATUS request awaits its reply */
    bool polling;        /* false once gpud could not answer a STATUS */
    int synths, finalizer;
    uint64_t no_synth_since, no_fin_since; /* CLOCK_MONOTONIC, 0 while connected */
    bool warned_synth, warned_fin;
    czk_fetcher fx;       /* --out: proofs that came in no event (fetch.h) */
} submit_ctx;

static czk_client cl = {.fd = -1};
static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static double secs(uint64_t ns) { return (double)ns * 1e-9; }

static const char *stage_name(uint32_t s) { return s <= CZK_STAGE_MAX ? stage_names[s] : "?"; }

static bool stage_final(uint32_t s)
{
    return s == CZK_STAGE_DONE || s == CZK_STAGE_FAILED || s == CZK_STAGE_CANCELLED;
}

static int parse_priority(const char *s, uint32_t *out)
{
    if (!strcmp(s, "high") || !strcmp(s, "0"))
        *out = 0;
    else if (!strcmp(s, "normal") || !strcmp(s, "1"))
        *out = 1;
    else if (!strcmp(s, "low") || !strcmp(s, "2"))
        *out = 2;
    else
        return -EINVAL;
    return 0;
}

static const char *priority_name(uint32_t p)
{
    static const char *const n[] = {"high", "normal", "low"};
    return p < 3 ? n[p] : "?";
}

/* ------------------------------------------------------------ output --- */

/* the proof texts of DONE partition p into --out (fetch.h); a failure is
 * reported here and makes the exit status 2 */
static int write_partition(submit_ctx *s, uint32_t p, const uint8_t *proof, size_t plen, const uint8_t *pub,
                           size_t ulen)
{
    char why[CZK_FETCH_WHY_MAX];
    int r;

    if ((r = czk_fetch_out_write(s->out_dir, p, proof, plen, pub, ulen, why, sizeof(why))) < 0) {
        czk_cli_failf(s->cmd, "job %llu partition %u: %s", (unsigned long long)s->job, p, why);
        s->out_failed = true;
        return r;
    }
    s->parts[p].written = true;
    return 0;
}


/* a DONE partition whose proof text did not arrive in an event: FETCH it,
 * or read output_dir where gpud does not know FETCH (fetch.h) */
static void fetch_or_copy(submit_ctx *s, uint32_t p)
{
    char why[CZK_FETCH_WHY_MAX] = "";
    unsigned long long job = (unsigned long long)s->job;

    if (czk_fetch_partition(&s->fx, p, why, sizeof(why)) == 0) {
        s->parts[p].written = true;
        return;
    }
    s->out_failed = true;
    if (s->fx.fail == CZK_FETCH_WRITE)
        czk_cli_failf(s->cmd, "job %llu partition %u: %s", job, p, why);
    else if (s->fx.fail == CZK_FETCH_NO_FILES)
        czk_cli_failf(s->cmd,
                      "job %llu partition %u: the proof did not arrive in an event, czk-gpud is too old to hand "
                      "its files over (FETCH) and %s (copy it from the daemons' output directory)",
                      job, p, why);
    else
        czk_cli_failf(s->cmd, "job %llu partition %u: the proof did not arrive in an event and could not be "
                      "fetched: %s", job, p, why);
}

/* ---------------------------------------------------------- progress --- */

/* why a partition in this stage cannot move on, NULL when nothing is known
 * to hold it (queued and synth need a czk-synth; gpu and finalize end at
 * the finalizer) */
static const char *stalled_why(const submit_ctx *s, uint32_t stage)
{
    if ((stage == CZK_STAGE_QUEUED || stage == CZK_STAGE_SYNTH) && s->synths == 0)
        return "no czk-synth is connected to czk-gpud";
    if ((stage == CZK_STAGE_GPU || stage == CZK_STAGE_FINALIZE) && s->finalizer == 0)
        return "no czk-finalizer is connected to czk-gpud";
    return NULL;
}

static void render_line(submit_ctx *s, uint32_t p, uint64_t now, char *buf, size_t n)
{
    const part_view *v = &s->parts[p];
    int k = snprintf(buf, n, "  partition %-4u %-9s", p, stage_name(v->stage));

    if ((size_t)k >= n)
        return;
    if (stage_final(v->stage))
        k += snprintf(buf + k, n - (size_t)k, " at %.2f s", secs(v->done_ns - s->t0));
    else if (v->stage)
        k += snprintf(buf + k, n - (size_t)k, " for %.2f s", secs(now - v->since_ns));
    if ((size_t)k < n && v->stage == CZK_STAGE_FAILED && v->reason[0])
        snprintf(buf + k, n - (size_t)k, ": %s", v->reason);
    else if ((size_t)k < n && v->stage && !stage_final(v->stage) && stalled_why(s, v->stage))
        snprintf(buf + k, n - (size_t)k, " (waiting: %s)", stalled_why(s, v->stage));
}

static void render_summary(submit_ctx *s, uint64_t now, char *buf, size_t n)
{
    unsigned cnt[CZK_STAGE_MAX + 1] = {0};
    int k;

    for (uint32_t p = 0; p < s->nparts; p++)
        cnt[s->parts[p].stage <= CZK_STAGE_MAX ? s->parts[p].stage : 0]++;
    k = snprintf(buf, n, "  %u partitions:", s->nparts);
    for (int st = 1; st <= CZK_STAGE_MAX && (size_t)k < n; st++)
        if (cnt[st])
            k += snprintf(buf + k, n - (size_t)k, " %s %u", stage_names[st], cnt[st]);
    if ((size_t)k < n)
        k += snprintf(buf + k, n - (size_t)k, "  (%.1f s)", secs(now - s->t0));
    if ((size_t)k < n && s->synths == 0 && (cnt[CZK_STAGE_QUEUED] || cnt[CZK_STAGE_SYNTH]))
        k += snprintf(buf + k, n - (size_t)k, " (waiting: %s)", stalled_why(s, CZK_STAGE_QUEUED));
    if ((size_t)k < n && s->finalizer == 0 && (cnt[CZK_STAGE_GPU] || cnt[CZK_STAGE_FINALIZE]))
        snprintf(buf + k, n - (size_t)k, " (waiting: %s)", stalled_why(s, CZK_STAGE_FINALIZE));
}

static void redraw(submit_ctx *s)
{
    uint64_t now = czk_mono_ns();
    char line[1400];
    unsigned lines = s->nparts <= TTY_MAX_LINES ? s->nparts : 1;

    if (s->drawn)
        printf("\033[%uA", s->drawn);
    for (unsigned i = 0; i < lines; i++) {
        if (s->nparts <= TTY_MAX_LINES)
            render_line(s, i, now, line, sizeof(line));
        else
            render_summary(s, now, line, sizeof(line));
        printf("\r\033[K%s\n", line);
    }
    s->drawn = lines;
    fflush(stdout);
}

/* non-tty: one line per change */
static void report_change(submit_ctx *s, uint32_t p)
{
    const part_view *v = &s->parts[p];
    uint64_t t = stage_final(v->stage) ? v->done_ns : v->since_ns;

    printf("job %llu partition %u: %s (%.2f s)%s%s\n", (unsigned long long)s->job, p, stage_name(v->stage),
           secs(t - s->t0), v->reason[0] ? ": " : "", v->reason);
    fflush(stdout);
}

static void set_stage(submit_ctx *s, uint32_t p, uint32_t stage, int32_t status, const char *reason)
{
    part_view *v = &s->parts[p];
    uint64_t now = czk_mono_ns();

    if (v->stage == stage || (stage_final(v->stage) && stage != CZK_STAGE_DONE))
        return;
    v->stage = stage;
    v->status = status;
    v->since_ns = now;
    if (stage_final(stage))
        v->done_ns = now;
    czk_esc(stage == CZK_STAGE_FAILED && reason ? reason : "", v->reason, sizeof(v->reason)); /* from gpud */
    if (!s->tty)
        report_change(s, p);
}

/* ------------------------------------------------------------ follow --- */

static void on_event(submit_ctx *s, const czk_msg_event *ev)
{
    if (ev->job_id != s->job)
        return;
    if (ev->partition == CZK_PARTITION_ALL) {
        if (ev->stage == CZK_STAGE_QUEUED) {
            for (uint32_t p = 0; p < s->nparts; p++)
                if (!s->parts[p].stage)
                    set_stage(s, p, CZK_STAGE_QUEUED, 0, NULL);
        } else if (stage_final(ev->stage)) {
            s->job_stage = ev->stage;
            s->job_status = ev->status;
            czk_esc(ev->reason, s->job_reason, sizeof(s->job_reason));
            for (uint32_t p = 0; p < s->nparts; p++)
                if (!stage_final(s->parts[p].stage) && ev->stage != CZK_STAGE_FAILED)
                    set_stage(s, p, ev->stage, ev->status, NULL);
        }
        return;
    }
    if (ev->partition >= s->nparts)
        return;
    set_stage(s, ev->partition, ev->stage, ev->status, ev->reason);
    if (ev->stage == CZK_STAGE_DONE && s->out_dir && !s->parts[ev->partition].written && ev->proof.len &&
        ev->publics.len)
        write_partition(s, ev->partition, ev->proof.ptr, ev->proof.len, ev->publics.ptr, ev->publics.len);
}

/* reconnect after gpud went away and WATCH the job again; 0 or -errno */
static int reconnect(submit_ctx *s)
{
    czk_error e = {0};
    int r;

    s->drawn = 0; /* a terminal keeps the old block; the messages and a new block go below it */
    fprintf(stderr, "czk %s: lost the connection to czk-gpud; job %llu is journaled, reconnecting (up to %d s)\n",
            s->cmd, (unsigned long long)s->job, s->reconnect_s);
    r = czk_client_rewatch(&cl, s->job, s->reconnect_s, s->deadline, &interrupted, &e);
    if (r == 0)
        fprintf(stderr, "czk %s: reconnected, following job %llu again\n", s->cmd, (unsigned long long)s->job);
    else if (r == -ETIMEDOUT)
        czk_cli_failf(s->cmd, "could not reconnect to czk-gpud within %d s: %s (job %llu stays journaled: "
                      "czk status --job %llu)", s->reconnect_s, e.msg, (unsigned long long)s->job,
                      (unsigned long long)s->job);
    return r; /* -ETIME: --timeout passed first; -EINTR: interrupted */
}

/* asks for gpud's STATUS on the waiting connection (the reply comes between
 * the EVENTs); a failure to send is left to the next receive to notice */
static void poll_status(submit_ctx *s, uint64_t now)
{
    const czk_status_request rq = {0}; /* no job details needed */
    uint8_t body[16];
    czk_error e = {0};
    czk_msg m;
    int n;

    s->next_poll = now + (uint64_t)STATUS_POLL_MS * 1000000ull;
    if (!s->polling || s->status_pending)
        return;
    if ((n = czk_schema_encode(&czk_schema_status_request, &rq, body, sizeof(body), &e)) < 0)
        return;
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_STATUS;
    m.u.status.body = (czk_bytes){body, (uint32_t)n};
    if (czk_client_send(&cl, &m, NULL, 0, &e) == 0)
        s->status_pending = true;
}

/* one "missing" daemon: warn once it has been gone MISSING_WARN_S, say when it is back */
static void track_missing(submit_ctx *s, int present, uint64_t *since, bool *warned, uint64_t now,
                          const char *what, const char *stuck)
{
    if (present < 0)
        return;
    if (present > 0) {
        if (*warned)
            fprintf(stderr, "czk %s: %s connected again; job %llu can go on\n", s->cmd, what,
                    (unsigned long long)s->job);
        *since = 0;
        *warned = false;
        return;
    }
    if (!*since)
        *since = now;
    if (!*warned && now - *since >= (uint64_t)MISSING_WARN_S * 1000000000ull) {
        *warned = true;
        s->drawn = 0; /* a terminal keeps the old block; the warning and a new block go below it */
        fprintf(stderr,
                "czk %s: WARNING: no %s has been connected to czk-gpud for %d s: job %llu %s until one "
                "connects (start it, or look at its log); the client keeps waiting\n",
                s->cmd, what, MISSING_WARN_S, (unsigned long long)s->job, stuck);
    }
}

static void on_status_reply(submit_ctx *s, const czk_msg_status *st)
{
    static czk_status_reply sr; /* about 110 KiB: not on the stack; one reply at a time */
    czk_error e = {0};
    uint64_t now = czk_mono_ns();

    s->status_pending = false;
    if (czk_schema_decode(&czk_schema_status_reply, st->body.ptr, st->body.len, &sr, &e) < 0) {
        /* a gpud whose status cannot be read cannot tell us what is missing: stop asking */
        fprintf(stderr, "czk %s: czk-gpud sent a malformed status (%s): not watching for missing daemons\n",
                s->cmd, e.msg);
        s->polling = false;
        return;
    }
    s->synths = sr.has_synths ? (sr.synths > INT32_MAX ? INT32_MAX : (int)sr.synths) : -1;
    s->finalizer = sr.has_finalizer ? (int)sr.finalizer : -1;
    track_missing(s, s->synths, &s->no_synth_since, &s->warned_synth, now, "czk-synth",
                  "cannot be synthesised");
    track_missing(s, s->finalizer, &s->no_fin_since, &s->warned_fin, now, "czk-finalizer",
                  "cannot be finalized (proofs are computed but not written)");
}

/* --timeout passed: the job goes on, the client stops waiting */
static int timed_out(submit_ctx *s)
{
    unsigned done = 0;

    for (uint32_t p = 0; p < s->nparts; p++)
        done += s->parts[p].stage == CZK_STAGE_DONE;
    if (s->tty)
        redraw(s);
    fprintf(stderr,
            "czk %s: job %llu has not finished within --timeout %d s (%u of %u partitions done%s%s); it goes on "
            "in czk-gpud: czk status --job %llu, czk cancel %llu\n",
            s->cmd, (unsigned long long)s->job, s->timeout_s, done, s->nparts,
            s->synths == 0 ? "; no czk-synth is connected" : "",
            s->finalizer == 0 ? "; no czk-finalizer is connected" : "", (unsigned long long)s->job,
            (unsigned long long)s->job);
    return CZK_EXIT_FALSE;
}

static int follow(submit_ctx *s)
{
    czk_error e = {0};
    czk_msg m;
    int r;

    s->synths = s->finalizer = -1;
    s->polling = true;
    s->next_poll = czk_mono_ns() + 1000000000ull; /* a job that ends at once needs no STATUS */
    if (s->tty)
        redraw(s);
    while (!s->job_stage) {
        uint64_t now = czk_mono_ns();
        int wait_ms = 500;

        if (interrupted) {
            if (s->tty)
                redraw(s);
            fprintf(stderr, "czk %s: interrupted; job %llu continues (czk status --job %llu, czk cancel %llu)\n",
                    s->cmd, (unsigned long long)s->job, (unsigned long long)s->job, (unsigned long long)s->job);
            return CZK_EXIT_ERROR;
        }
        if (s->deadline && now >= s->deadline)
            return timed_out(s);
        if (now >= s->next_poll)
            poll_status(s, now);
        if (s->deadline && (s->deadline - now) / 1000000u < (uint64_t)wait_ms)
            wait_ms = (int)((s->deadline - now) / 1000000u) + 1;
        r = czk_client_recv(&cl, &m, wait_ms, &e);
        if (r == -ETIMEDOUT) {
            if (s->tty)
                redraw(s);
            continue;
        }
        if (czk_client_dropped(r)) {
            s->status_pending = false;
            if (s->reconnect_s <= 0 || (r = reconnect(s)) < 0) {
                if (r == -ETIME)
                    return timed_out(s);
                if (s->reconnect_s <= 0)
                    czk_cli_failf(s->cmd, "czk-gpud closed the connection; job %llu stays journaled",
                                  (unsigned long long)s->job);
                return CZK_EXIT_ERROR;
            }
            continue;
        }
        if (r < 0)
            return czk_cli_fail(s->cmd, &e);
        if (m.type == CZK_MSG_ERROR) {
            /* a status too large for one record: carry on without */
            if (s->status_pending && m.u.error.code == -EMSGSIZE) {
                s->status_pending = false;
                s->polling = false;
                continue;
            }
            if (s->tty)
                redraw(s);
            return czk_cli_failf(s->cmd, "job %llu: czk-gpud says: %s", (unsigned long long)s->job,
                                 m.u.error.message);
        }
        if (m.type == CZK_MSG_STATUS_REPLY) {
            on_status_reply(s, &m.u.status);
            if (s->tty)
                redraw(s);
        } else if (m.type == CZK_MSG_EVENT) {
            on_event(s, &m.u.event);
            if (s->tty)
                redraw(s);
        }
    }
    return 0;
}

/* ----------------------------------------------------------- submit ---- */

/* 0 when id is a valid request id, else -EINVAL with why[] saying what is wrong */
static int check_request_id(const char *id, char *why, size_t n)
{
    size_t len = strlen(id);

    if (len == 0 || len > REQUEST_ID_MAX) {
        snprintf(why, n, "it is %zu bytes long", len);
        return -EINVAL;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)id[i];
        if (c < 0x21 || c > 0x7e) {
            snprintf(why, n, "byte %zu is 0x%02x", i, c);
            return -EINVAL;
        }
    }
    return 0;
}

/* 128 random bits in hex: unique enough to be retried blindly */
static int new_request_id(char *buf, size_t n, czk_error *e)
{
    uint8_t rnd[16];
    size_t got = 0;

    while (got < sizeof(rnd)) {
        ssize_t k = getrandom(rnd + got, sizeof(rnd) - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return czk_errorf(e, -errno, "could not draw a request id (getrandom): %s", strerror(errno));
        got += (size_t)k;
    }
    for (size_t i = 0; i < sizeof(rnd) && 2 * i + 2 < n; i++)
        snprintf(buf + 2 * i, 3, "%02x", rnd[i]);
    return 0;
}

static const char *file_type(mode_t m)
{
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISLNK(m))
        return "a symbolic link";
    return "of another kind";
}

/*
 * Opens witness path for partition p: non-blocking, so that a FIFO cannot
 * hold open() until a writer comes (and a device cannot block either), then
 * fstat(); only a regular file is kept, with O_NONBLOCK cleared again.
 * Returns the fd, or -errno with e naming the file and its type.
 */
static int open_witness(const char *path, int p, czk_error *e)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), fl;

    if (fd < 0) {
        int err = errno;
        /* a socket cannot be opened at all (ENXIO): say what it is */
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
            return czk_errorf(e, -EINVAL, "witness \"%s\" (partition %d) is not a regular file (it is %s)", path, p,
                              file_type(st.st_mode));
        return czk_errorf(e, -err, "cannot open witness \"%s\" (partition %d): %s", path, p, strerror(err));
    }
    if (fstat(fd, &st) < 0) {
        int err = errno;
        close(fd);
        return czk_errorf(e, -err, "cannot stat witness \"%s\" (partition %d): %s", path, p, strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return czk_errorf(e, -EINVAL, "witness \"%s\" (partition %d) is not a regular file (it is %s)", path, p,
                          file_type(st.st_mode));
    }
    if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        int err = errno;
        close(fd);
        return czk_errorf(e, -err, "cannot use witness \"%s\" (partition %d): fcntl: %s", path, p, strerror(err));
    }
    return fd;
}

/*
 * Sends SUBMIT (with the witness fds) and waits for ACCEPTED, REJECTED or
 * ERROR.  When the connection drops first, reconnects (backoff 100 ms
 * doubling to 2 s, for --reconnect-timeout seconds) and sends the same
 * SUBMIT again: the request id makes that safe.  A REJECTED(-EAGAIN) means
 * an earlier attempt with this id is still being spooled: ask again.
 * Returns 0 with *ans filled (*retried when an attempt was lost), or
 * CZK_EXIT_ERROR after printing why.
 */
static int submit_job(submit_ctx *s, const czk_msg *sub, const int *fds, int nfds, czk_msg *ans, bool *retried)
{
    const char *req = sub->u.submit.request_id;
    uint64_t deadline = 0;
    unsigned backoff_ms = 100, busy = 0;
    czk_error e = {0};
    int r;

    for (;;) {
        if (cl.fd < 0) {
            if ((r = czk_client_connect(&cl, &e)) < 0) {
                if (r == -EACCES || r == -EPERM || czk_mono_ns() >= deadline)
                    return czk_cli_failf(s->cmd,
                                         "could not reconnect to czk-gpud to submit again: %s (resubmit with "
                                         "--request-id %s: a job it accepted is not run twice)",
                                         e.msg, req);
                usleep(backoff_ms * 1000);
                backoff_ms = backoff_ms * 2 > 2000 ? 2000 : backoff_ms * 2;
                continue;
            }
            fprintf(stderr, "czk %s: reconnected, submitting again with request id %s\n", s->cmd, req);
        }
        *ans = *sub;
        r = czk_client_send(&cl, ans, fds, nfds, &e);
        while (r == 0) {
            r = czk_client_recv(&cl, ans, ACCEPT_TIMEOUT_MS, &e);
            if (r == 0 && (ans->type == CZK_MSG_ACCEPTED || ans->type == CZK_MSG_REJECTED ||
                           ans->type == CZK_MSG_ERROR))
                break;
        }
        if (czk_client_dropped(r)) {
            czk_client_close(&cl);
            if (s->reconnect_s <= 0)
                return czk_cli_failf(s->cmd,
                                     "czk-gpud closed the connection before answering: %s (resubmit with "
                                     "--request-id %s: a job it accepted is not run twice)",
                                     e.msg, req);
            if (!*retried)
                fprintf(stderr,
                        "czk %s: lost the connection to czk-gpud before the job was accepted; reconnecting "
                        "(up to %d s) to submit it again with request id %s\n",
                        s->cmd, s->reconnect_s, req);
            if (!deadline)
                deadline = czk_mono_ns() + (uint64_t)s->reconnect_s * 1000000000ull;
            *retried = true;
            continue;
        }
        if (r < 0)
            return czk_cli_failf(s->cmd,
                                 "no answer from czk-gpud: %s (resubmit with --request-id %s: a job it accepted "
                                 "is not run twice)",
                                 e.msg, req);
        if (ans->type == CZK_MSG_REJECTED && ans->u.rejected.code == -EAGAIN && busy < 120 && !interrupted) {
            busy++;
            usleep(250000);
            continue;
        }
        return 0;
    }
}

/* ------------------------------------------------------------- main ---- */

int czk_cmd_submit(int argc, char **argv)
{
    static const struct option opts[] = {
        {"circuit", required_argument, NULL, 'c'},
        {"priority", required_argument, NULL, 'p'},
        {"request-id", required_argument, NULL, 'r'},
        {"wait", no_argument, NULL, 'w'},
        {"out", required_argument, NULL, 'o'},
        {"force", no_argument, NULL, 'f'},
        {"timeout", required_argument, NULL, 't'},
        {"reconnect-timeout", required_argument, NULL, 'R'},
        CZK_CLIENT_LONGOPTS,
        {NULL, 0, NULL, 0},
    };
    const char *cmd = argv[0], *req = NULL;
    static submit_ctx s;
    int fds[CZK_MSG_MAX_FDS], nfds = 0, rc = CZK_EXIT_ERROR, r, c;
    const char *paths[CZK_MSG_MAX_FDS];
    char req_buf[CZK_MSG_STR_SHORT];
    bool wait = false, retried = false, force = false;
    char circ_esc[4 * CZK_MSG_STR_SHORT];
    czk_error e = {0};
    czk_msg m;

    memset(&s, 0, sizeof(s));
    s.cmd = cmd;
    s.priority = 1;
    s.reconnect_s = 120;
    while ((c = czk_cli_getopt(argc, argv, opts)) != -1) {
        if ((r = czk_client_option(&cl, cmd, c, optarg)) != 0) {
            if (r < 0)
                return CZK_EXIT_ERROR;
            continue;
        }
        switch (c) {
        case 'c': s.circuit = optarg; break;
        case 'r': req = optarg; break;
        case 'o': s.out_dir = optarg; break;
        case 'w': wait = true; break;
        case 'f': force = true; break;
        case 'p':
            if (parse_priority(optarg, &s.priority) < 0)
                return czk_cli_failf(cmd, "--priority must be high, normal or low, not \"%s\"", optarg);
            break;
        case 'R':
            if (czk_cli_parse_seconds(cmd, "--reconnect-timeout", optarg, 0, &s.reconnect_s) != 0)
                return CZK_EXIT_ERROR;
            break;
        case 't':
            if (czk_cli_parse_seconds(cmd, "--timeout", optarg, 1, &s.timeout_s) != 0)
                return CZK_EXIT_ERROR;
            break;
        default:
            return czk_cli_opt_status();
        }
    }
    for (int i = optind; i < argc; i++) {
        if (nfds == CZK_MSG_MAX_FDS)
            return czk_cli_failf(cmd, "at most %d witnesses per job (the descriptors travel in one record)",
                                 CZK_MSG_MAX_FDS);
        paths[nfds++] = argv[i];
    }
    if (!s.circuit)
        return czk_cli_usage_error(cmd, "--circuit NAME is required");
    if (!nfds)
        return czk_cli_usage_error(cmd, "no witness files given");
    if (force && !s.out_dir)
        return czk_cli_usage_error(cmd, "--force only applies to --out DIR");
    if (strlen(s.circuit) >= CZK_MSG_STR_SHORT)
        return czk_cli_failf(cmd, "circuit name \"%.40s...\" is too long", s.circuit);
    if (req) {
        char why[64];
        if (check_request_id(req, why, sizeof(why)) < 0)
            return czk_cli_failf(cmd,
                                 "--request-id \"%.200s\" is not valid: %s (1..%zu printable ASCII characters, "
                                 "0x21..0x7e)",
                                 req, why, (size_t)REQUEST_ID_MAX);
    } else {
        if (new_request_id(req_buf, sizeof(req_buf), &e) < 0)
            return czk_cli_fail(cmd, &e);
        req = req_buf;
    }
    if (s.out_dir || s.timeout_s)
        wait = true;
    if (s.out_dir && !force) {
        char why[CZK_FETCH_WHY_MAX];
        if (czk_fetch_out_check(s.out_dir, why, sizeof(why)) < 0)
            return czk_cli_failf(cmd, "%s", why);
    }

    /* the witnesses are opened here, with this user's rights */
    for (int i = 0; i < nfds; i++) {
        if ((fds[i] = open_witness(paths[i], i, &e)) < 0) {
            for (int k = 0; k < i; k++)
                close(fds[k]);
            return czk_cli_fail(cmd, &e);
        }
    }
    if (s.out_dir && (r = czk_fetch_out_mkdir(s.out_dir)) < 0) {
        czk_cli_failf(cmd, "could not create output directory \"%s\": %s", s.out_dir, strerror(-r));
        goto out_fds;
    }
    if (czk_client_connect(&cl, &e) < 0) {
        czk_cli_fail(cmd, &e);
        goto out_fds;
    }
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_SUBMIT;
    snprintf(m.u.submit.request_id, sizeof(m.u.submit.request_id), "%s", req);
    snprintf(m.u.submit.circuit, sizeof(m.u.submit.circuit), "%s", s.circuit);
    m.u.submit.priority = s.priority;
    m.u.submit.n_partitions = (uint32_t)nfds;
    m.u.submit.n_fds = (uint32_t)nfds;
    m.u.submit.flags = wait ? CZK_SUBMIT_F_WAIT : 0;
    s.t0 = czk_mono_ns();
    if (s.timeout_s)
        s.deadline = s.t0 + (uint64_t)s.timeout_s * 1000000000ull;
    {
        czk_msg sub = m;
        if (submit_job(&s, &sub, fds, nfds, &m, &retried) != 0)
            goto out_fds;
    }
    s.nparts = (uint32_t)nfds;
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
    nfds = 0;
    if (m.type == CZK_MSG_REJECTED) {
        unsigned bad;
        /* gpud names partitions by index: name the file as well */
        if (sscanf(m.u.rejected.reason, "partition %u:", &bad) == 1 && bad < s.nparts)
            return czk_cli_failf(cmd, "rejected: %s (partition %u is \"%s\")", m.u.rejected.reason, bad,
                                 paths[bad]);
        return czk_cli_failf(cmd, "rejected: %s", m.u.rejected.reason[0] ? m.u.rejected.reason
                                                                          : strerror(-m.u.rejected.code));
    }
    if (m.type == CZK_MSG_ERROR)
        return czk_cli_failf(cmd, "czk-gpud refused the request: %s", m.u.error.message);

    s.job = m.u.accepted.job_id;
    s.fx = (czk_fetcher){.cl = &cl, .out_dir = s.out_dir, .job = s.job, .status_pending = &s.status_pending};
    printf("job %llu accepted%s (circuit %s, %u partition%s, priority %s, request %s)\n", (unsigned long long)s.job,
           !m.u.accepted.duplicate ? ""
           : retried               ? " (by an attempt whose answer was lost)"
                                   : " (duplicate: already known)",
           czk_esc(s.circuit, circ_esc, sizeof(circ_esc)),
           s.nparts, s.nparts == 1 ? "" : "s", priority_name(s.priority), req);
    fflush(stdout);
    if (!wait)
        return CZK_EXIT_OK;

    if (!(s.parts = calloc(s.nparts, sizeof(*s.parts))))
        return czk_cli_failf(cmd, "out of memory");
    s.tty = isatty(STDOUT_FILENO);
    {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_sigint;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    if (m.u.accepted.duplicate) {
        /* an existing job: its past events are gone; WATCH says where it is */
        if (czk_client_watch(&cl, s.job, &e) < 0) {
            czk_cli_fail(cmd, &e);
            goto out_parts;
        }
    }
    if ((rc = follow(&s)) != 0)
        goto out_parts;

    /* partitions proved while we were not listening (reconnect, duplicate) or
     * whose proof text was too large for an event: FETCH them */
    if (s.out_dir && s.job_stage != CZK_STAGE_CANCELLED)
        for (uint32_t p = 0; p < s.nparts; p++)
            if (!s.parts[p].written && s.parts[p].stage != CZK_STAGE_FAILED &&
                (s.job_stage == CZK_STAGE_DONE || s.parts[p].stage == CZK_STAGE_DONE))
                fetch_or_copy(&s, p);

    {
        uint32_t nfail = 0;
        for (uint32_t p = 0; p < s.nparts; p++)
            nfail += s.parts[p].stage == CZK_STAGE_FAILED;
        double wall = secs(czk_mono_ns() - s.t0);
        if (s.job_stage == CZK_STAGE_DONE) {
            printf("job %llu done: %u partition%s proved in %.2f s", (unsigned long long)s.job, s.nparts,
                   s.nparts == 1 ? "" : "s", wall);
            if (s.out_dir)
                printf("; proofs in %s/<partition>/", s.out_dir);
            printf("\n");
            rc = s.out_failed ? CZK_EXIT_ERROR : CZK_EXIT_OK;
        } else if (s.job_stage == CZK_STAGE_CANCELLED) {
            printf("job %llu cancelled after %.2f s\n", (unsigned long long)s.job, wall);
            rc = CZK_EXIT_FALSE;
        } else {
            printf("job %llu failed after %.2f s: ", (unsigned long long)s.job, wall);
            if (nfail)
                printf("%u of %u partitions failed", nfail, s.nparts);
            else
                printf("%s", s.job_reason[0] ? s.job_reason : "some partitions failed");
            printf("\n");
            for (uint32_t p = 0; p < s.nparts; p++)
                if (s.parts[p].stage == CZK_STAGE_FAILED)
                    fprintf(stderr, "czk %s: job %llu partition %u failed: %s\n", cmd, (unsigned long long)s.job,
                            p, s.parts[p].reason[0] ? s.parts[p].reason : strerror(-s.parts[p].status));
            rc = CZK_EXIT_FALSE;
        }
    }
out_parts:
    free(s.parts);
    czk_client_close(&cl);
    return rc;
out_fds:
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
    return rc;
}
