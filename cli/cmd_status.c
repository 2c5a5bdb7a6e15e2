/*
 * cmd_status.c — `czk status [--json] [--job JOB] [JOB]`: asks czk-gpud for its
 * STATUS_REPLY (a map typed by ipc/msg.c's czk_schema_status_reply; keys
 * listed in docs/daemons.md, "STATUS_REPLY body") and prints it as a table
 * for people or, with --json, as one JSON object for programs.  The body is
 * decoded through the schema first: a body that breaks it (a key of the
 * wrong type or out of range, too many items, bad structure) is refused with
 * the schema's reason.  --json then renders the map as gpud sent it (the same
 * keys, converted one to one through jansson), so keys a newer gpud adds
 * reach programs too.
 *
 * The table: jobs per state, partitions per stage, slots in use per pool,
 * mean time per stage, proofs in the last minute, the backend's busy share,
 * one row per compute device ("gpus": in service or not and why, busy share,
 * largest gap, partitions, memory), then one row per active
 * job of this user (and the --job one), and a line counting other users'
 * active jobs when the reply carries that count ("others": {"jobs",
 * "partitions"}), and under the job rows the reason of each job that is not
 * moving.  Keys the client does not know are ignored, missing ones read as 0
 * or "-".  Exit status 0, or 2 when gpud cannot be asked or its reply is
 * malformed.
 *
 * Every string of the reply is the daemon's, and some of it came from other
 * clients (request ids, circuit names): the table escapes every one (log.h,
 * czk_esc), and the JSON output is valid UTF-8 whatever the bytes were (a
 * string that is not valid UTF-8 is escaped with czk_esc first).
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "common/base/log.h"

static czk_client cl = {.fd = -1};

/* ----------------------------------------------------------- to JSON --- */

/* a JSON string of n bytes: as they are when they are valid UTF-8 (jansson
 * checks, and escapes control characters its own way), else escaped */
static json_t *json_bytes(const char *s, size_t n)
{
    json_t *j = json_stringn(s, n);
    char *esc;

    if (j)
        return j;
    if (n > SIZE_MAX / 4 - 8 || !(esc = malloc(4 * n + 8)))
        return NULL;
    czk_esc_n(s, n, esc, 4 * n + 8);
    j = json_string(esc);
    free(esc);
    return j;
}

/* JSON keys are strings: a key that is not is rendered as its number */
static json_t *json_key(const msgpack_object *k)
{
    char kb[64];

    switch (k->type) {
    case MSGPACK_OBJECT_STR: return json_bytes(k->via.str.ptr, k->via.str.size);
    case MSGPACK_OBJECT_BIN: return json_bytes(k->via.bin.ptr, k->via.bin.size);
    case MSGPACK_OBJECT_POSITIVE_INTEGER: snprintf(kb, sizeof(kb), "%llu", (unsigned long long)k->via.u64); break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: snprintf(kb, sizeof(kb), "%lld", (long long)k->via.i64); break;
    default: snprintf(kb, sizeof(kb), "?"); break;
    }
    return json_string(kb);
}

/* the msgpack object as a new JSON value (NULL: out of memory) */
static json_t *to_json(const msgpack_object *o)
{
    json_t *j;

    switch (o->type) {
    case MSGPACK_OBJECT_BOOLEAN: return json_boolean(o->via.boolean);
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        return o->via.u64 <= (uint64_t)INT64_MAX ? json_integer((json_int_t)o->via.u64)
                                                        : json_real((double)o->via.u64);
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return json_integer((json_int_t)o->via.i64);
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return isfinite(o->via.f64) ? json_real(o->via.f64) : json_null();
    case MSGPACK_OBJECT_STR: return json_bytes(o->via.str.ptr, o->via.str.size);
    case MSGPACK_OBJECT_BIN: return json_bytes(o->via.bin.ptr, o->via.bin.size);
    case MSGPACK_OBJECT_ARRAY:
        if (!(j = json_array()))
            return NULL;
        for (uint32_t i = 0; i < o->via.array.size; i++)
            if (json_array_append_new(j, to_json(&o->via.array.ptr[i])) < 0) {
                json_decref(j);
                return NULL;
            }
        return j;
    case MSGPACK_OBJECT_MAP:
        if (!(j = json_object()))
            return NULL;
        for (uint32_t i = 0; i < o->via.map.size; i++) {
            json_t *k = json_key(&o->via.map.ptr[i].key);
            json_t *v = to_json(&o->via.map.ptr[i].val);
            int r = k && v ? json_object_setn_new(j, json_string_value(k), json_string_length(k), v) : -1;
            json_decref(k);
            if (r < 0) {
                if (!k)
                    json_decref(v);
                json_decref(j);
                return NULL;
            }
        }
        return j;
    default: return json_null();
    }
}

/* ------------------------------------------------------------- table --- */

/* a string of the reply, escaped (log.h) into buf, "-" when empty */
static const char *str(const char *v, char *buf, size_t n)
{
    if (!v[0])
        return "-";
    return czk_esc(v, buf, n);
}

static void job_row(const czk_status_job *j)
{
    char state[4 * sizeof(j->state)], circ[4 * CZK_STATUS_TEXT], req[4 * CZK_STATUS_TEXT];
    static const char *const lanes[] = {"high", "normal", "low"};

    printf("%-8llu %-10s %-14s %-7s %6u %7u %6u %5u %9u %5u %7u  %s\n", (unsigned long long)j->id,
           str(j->state, state, sizeof(state)), str(j->circuit, circ, sizeof(circ)), j->lane < 3 ? lanes[j->lane] : "?",
           j->partitions, j->queued, j->synth, j->gpu, j->finalize, j->done, j->failed,
           str(j->request, req, sizeof(req)));
}

static void job_reason(const czk_status_job *j)
{
    char why[4 * CZK_STATUS_REASON];
    if (j->reason[0])
        printf("%-8llu %s\n", (unsigned long long)j->id, czk_esc(j->reason, why, sizeof(why)));
}

/* one line per configured circuit: its key's state (loading with its
 * progress, ready, failed with the reason), key id and load time */
static void circuit_rows(const czk_status_reply *st)
{
    for (uint32_t i = 0; i < st->n_circuits; i++) {
        const czk_status_circuit *c = &st->circuits[i];
        char name[4 * CZK_STATUS_TEXT], state[4 * sizeof(c->state)], id[4 * sizeof(c->key_id)],
            why[4 * CZK_STATUS_KEY_REASON], what[64], cv[4 * sizeof(c->curve)];
        str(c->state, state, sizeof(state));
        if (!strcmp(c->state, "loading"))
            snprintf(what, sizeof(what), "loading (%u%%)", c->progress);
        else
            snprintf(what, sizeof(what), "%s", state);
        if (c->key_id[0])
            printf("%-11s %-16s %-14s %-8s key %.16s  %s %.3f s", i ? "" : "circuits",
                   str(c->name, name, sizeof(name)), what, str(c->curve, cv, sizeof(cv)), str(c->key_id, id, sizeof(id)),
                   !strcmp(c->state, "loading") ? "loading for" : "took", c->load_s);
        else /* its header could not be read: no key id, nothing loaded */
            printf("%-11s %-16s %-14s", i ? "" : "circuits", str(c->name, name, sizeof(name)), what);
        if (c->reason[0])
            printf("\n%-11s   failed: %s", "", czk_esc(c->reason, why, sizeof(why)));
        printf("\n");
    }
}

/* one line per compute device, and a warning when none is in service */
static void gpu_rows(const czk_status_reply *st)
{
    unsigned in_service = 0;

    for (uint32_t i = 0; i < st->n_gpus; i++) {
        const czk_status_gpu *d = &st->gpus[i];
        char state[4 * sizeof(d->state)], why[4 * CZK_STATUS_GPU_REASON];
        int ok = !strcmp(d->state, "in_service");
        const char *what = ok ? "in service"
                              : !strcmp(d->state, "out_of_service") ? "OUT OF SERVICE"
                                                                     : str(d->state, state, sizeof(state));
        in_service += ok;
        printf("%-11s %u: %s, %u context%s, %.1f%% busy, largest idle gap %llu ms; %llu partition%s done",
               i ? "" : "devices", d->index, what, d->contexts, d->contexts == 1 ? "" : "s", d->busy_pct,
               (unsigned long long)d->max_gap_ms, (unsigned long long)d->done, d->done == 1 ? "" : "s");
        if (d->failed)
            printf(", %llu failed", (unsigned long long)d->failed);
        if (d->requeued)
            printf(", %llu queued again when it went out of service", (unsigned long long)d->requeued);
        if (d->has_numa)
            printf("; NUMA node %d", (int)d->numa);
        if (d->has_mem)
            printf("; memory %.1f of %.1f GiB used", (double)d->mem_used / (double)(1ull << 30),
                   (double)d->mem_total / (double)(1ull << 30));
        if (d->reason[0])
            printf("\n%-11s   why: %s", "", czk_esc(d->reason, why, sizeof(why)));
        printf("\n");
    }
    if (st->n_gpus && !in_service)
        printf("%-11s NO compute device is in service: accepted jobs wait; restart czk-gpud once one works\n", "");
}

static void print_table(const czk_status_reply *st)
{
    char name[4 * CZK_MSG_STR_SHORT], backend[4 * CZK_MSG_STR_SHORT];
    unsigned reasons = 0;

    printf("%s (backend %s): %u synth%s connected, finalizer %s\n", str(st->daemon, name, sizeof(name)),
           str(st->backend, backend, sizeof(backend)), st->synths, st->synths == 1 ? "" : "s",
           st->finalizer ? "connected" : "NOT connected");
    if (!strcmp(st->state, "starting"))
        printf("state       starting: the compute backend is being created\n");
    circuit_rows(st);
    printf("jobs        active %llu, complete %llu, failed %llu, cancelled %llu\n",
           (unsigned long long)st->jobs.active, (unsigned long long)st->jobs.complete,
           (unsigned long long)st->jobs.failed, (unsigned long long)st->jobs.cancelled);
    printf("partitions  queued %llu, synth %llu, gpu %llu, finalize %llu\n", (unsigned long long)st->partitions.queued,
           (unsigned long long)st->partitions.synth, (unsigned long long)st->partitions.gpu,
           (unsigned long long)st->partitions.finalize);
    for (uint32_t i = 0; i < st->n_pools; i++) {
        const czk_status_pool *p = &st->pools[i];
        printf("%-11s pool %u (NUMA node %d): %u of %u slots in use, %s pages", i ? "" : "slots", p->id, p->node,
               p->in_use, p->slots, p->hugetlb ? "huge" : "4 KiB");
        if (p->quarantined)
            printf(", %u quarantined (held for a synth that may still write)", p->quarantined);
        printf("\n");
    }
    printf("latency     mean per partition: queue %.3f s, synth %.3f s, gpu %.3f s, finalize %.3f s\n",
           st->latency_s.queue, st->latency_s.synth, st->latency_s.gpu, st->latency_s.finalize);
    printf("throughput  %llu proofs in the last minute; %llu proved, %llu failed since start\n",
           (unsigned long long)st->proofs_per_minute, (unsigned long long)st->proofs_total,
           (unsigned long long)st->failures_total);
    if (st->synth_timeouts_total)
        printf("synths      %llu assignment(s) taken back after synth_timeout_s since start\n",
               (unsigned long long)st->synth_timeouts_total);
    if (st->has_gpu_busy)
        printf("backend     %.1f%% busy over the last minute (compute stage), largest idle gap %.1f ms\n",
               st->gpu_busy_pct, (double)st->gpu_max_gap_ms);
    gpu_rows(st);
    /* other users' jobs travel only as counts: {"others": {"jobs": N, "partitions": M}} */
    if (st->has_others)
        printf("other users: %llu job%s (%llu partition%s) active\n", (unsigned long long)st->others.jobs,
               st->others.jobs == 1 ? "" : "s", (unsigned long long)st->others.partitions,
               st->others.partitions == 1 ? "" : "s");
    if (st->n_active || st->has_job) {
        printf("\n%-8s %-10s %-14s %-7s %6s %7s %6s %5s %9s %5s %7s  %s\n", "JOB", "STATE", "CIRCUIT", "PRIO",
               "PARTS", "QUEUED", "SYNTH", "GPU", "FINALIZE", "DONE", "FAILED", "REQUEST");
        for (uint32_t i = 0; i < st->n_active; i++)
            if (!st->has_job || st->active[i].id != st->job.id) {
                job_row(&st->active[i]);
                reasons += st->active[i].reason[0] != 0;
            }
        if (st->has_job) {
            job_row(&st->job);
            reasons += st->job.reason[0] != 0;
        }
    }
    if (reasons) {
        printf("\n%-8s %s\n", "JOB", "WHY IT IS NOT MOVING");
        for (uint32_t i = 0; i < st->n_active; i++)
            if (!st->has_job || st->active[i].id != st->job.id)
                job_reason(&st->active[i]);
        if (st->has_job)
            job_reason(&st->job);
    }
}

/* --------------------------------------------------------------- main --- */

/* --json: the body as gpud sent it (already checked against the schema) */
static int print_json(const czk_bytes *body)
{
    msgpack_unpacked up;
    size_t off = 0;
    json_t *j = NULL;
    int r = -1;

    msgpack_unpacked_init(&up);
    if (msgpack_unpack_next(&up, (const char *)body->ptr, body->len, &off) == MSGPACK_UNPACK_SUCCESS &&
        (j = to_json(&up.data)) && json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(9)) == 0 &&
        fputc('\n', stdout) != EOF)
        r = 0;
    json_decref(j);
    msgpack_unpacked_destroy(&up);
    return r;
}

int czk_cmd_status(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"job", required_argument, NULL, 'J'}, CZK_CLIENT_LONGOPTS, {NULL, 0, NULL, 0}};
    const char *cmd = argv[0];
    int json = 0, r, c, rc = CZK_EXIT_ERROR;
    uint64_t job = 0;
    czk_status_request rq = {0};
    czk_status_reply *st = NULL;
    uint8_t body[64];
    czk_error e = {0};
    czk_msg m;

    while ((c = czk_cli_getopt(argc, argv, opts)) != -1) {
        if ((r = czk_client_option(&cl, cmd, c, optarg)) != 0) {
            if (r < 0)
                return CZK_EXIT_ERROR;
        } else if (c == 'j') {
            json = 1;
        } else if (c == 'J') {
            if (czk_cli_parse_job(optarg, &job) < 0)
                return czk_cli_failf(cmd, "--job needs a job number, not \"%s\"", optarg);
        } else {
            return czk_cli_opt_status();
        }
    }
    /* a job number may also come as the operand: czk status 42 */
    for (int i = optind; i < argc; i++) {
        if (job || czk_cli_parse_job(argv[i], &job) < 0)
            return czk_cli_usage_error(cmd, "unexpected argument \"%s\"", argv[i]);
    }
    rq.job = job;
    if ((r = czk_schema_encode(&czk_schema_status_request, &rq, body, sizeof(body), &e)) < 0)
        return czk_cli_fail(cmd, &e);
    if (!(st = malloc(sizeof(*st))))
        return czk_cli_failf(cmd, "out of memory");
    if (czk_client_connect(&cl, &e) < 0) {
        free(st);
        return czk_cli_fail(cmd, &e);
    }
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_STATUS;
    m.u.status.body = (czk_bytes){body, (uint32_t)r};
    if (czk_client_send(&cl, &m, NULL, 0, &e) < 0) {
        czk_cli_fail(cmd, &e);
        goto out;
    }
    for (;;) {
        if (czk_client_recv(&cl, &m, 10000, &e) < 0) {
            czk_cli_failf(cmd, "no status from czk-gpud: %s", e.msg);
            goto out;
        }
        if (m.type == CZK_MSG_ERROR) {
            czk_cli_failf(cmd, "czk-gpud says: %s", m.u.error.message);
            goto out;
        }
        if (m.type == CZK_MSG_STATUS_REPLY)
            break;
    }
    if (czk_schema_decode(&czk_schema_status_reply, m.u.status.body.ptr, m.u.status.body.len, st, &e) < 0) {
        czk_cli_failf(cmd, "czk-gpud sent a malformed status: %s", e.msg);
        goto out;
    }
    if (job && !st->has_job)
        fprintf(stderr, "czk %s: job %llu is not known to czk-gpud\n", cmd, (unsigned long long)job);
    if (json) {
        if (print_json(&m.u.status.body) < 0) {
            czk_cli_failf(cmd, "could not write the status as JSON (out of memory, or stdout failed)");
            goto out;
        }
    } else {
        print_table(st);
    }
    rc = job && !st->has_job ? CZK_EXIT_ERROR : CZK_EXIT_OK;
out:
    free(st);
    czk_client_close(&cl);
    return rc;
}
