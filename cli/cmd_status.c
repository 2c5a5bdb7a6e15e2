/*
 * cmd_status.c — `czk status [--json] [--job JOB] [JOB]`: asks czk-gpud for its
 * STATUS_REPLY (a msgpack map, keys listed in docs/daemons.md, "STATUS_REPLY body") and
 * prints it as a table for people or, with --json, as one JSON object for
 * programs (the same keys, converted one to one through jansson).
 *
 * The table: jobs per state, partitions per stage, slots in use per pool,
 * mean time per stage, proofs in the last minute, then one row per active
 * job of this user (and the --job one), and a line counting other users'
 * active jobs when the reply carries that count ("others": {"jobs",
 * "partitions"}).  Keys the client does not know are ignored, missing ones
 * read as 0 or "-".  Exit status 0, or 2 when gpud cannot be asked.
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

/* ----------------------------------------------------- msgpack lookups --- */

static const msgpack_object *get(const msgpack_object *map, const char *key)
{
    size_t n = strlen(key);
    if (!map || map->type != MSGPACK_OBJECT_MAP)
        return NULL;
    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object *k = &map->via.map.ptr[i].key;
        if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == n && !memcmp(k->via.str.ptr, key, n))
            return &map->via.map.ptr[i].val;
    }
    return NULL;
}

static double num(const msgpack_object *map, const char *key)
{
    const msgpack_object *o = get(map, key);
    if (!o)
        return 0;
    switch (o->type) {
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return (double)o->via.u64;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return (double)o->via.i64;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return o->via.f64;
    case MSGPACK_OBJECT_BOOLEAN: return o->via.boolean;
    default: return 0;
    }
}

static unsigned long long u(const msgpack_object *map, const char *key) { return (unsigned long long)num(map, key); }

/* a string value, escaped (log.h), into buf ("-" when absent) */
static const char *str(const msgpack_object *map, const char *key, char *buf, size_t n)
{
    const msgpack_object *o = get(map, key);
    if (!o || o->type != MSGPACK_OBJECT_STR) {
        snprintf(buf, n, "-");
        return buf;
    }
    return czk_esc_n(o->via.str.ptr, o->via.str.size, buf, n);
}

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

static void job_row(const msgpack_object *j)
{
    char state[64], circ[4 * CZK_MSG_STR_SHORT], req[4 * CZK_MSG_STR_SHORT];
    static const char *const lanes[] = {"high", "normal", "low"};
    unsigned long long lane = u(j, "lane");

    printf("%-8llu %-10s %-14s %-7s %6llu %7llu %6llu %5llu %9llu %5llu %7llu  %s\n", u(j, "id"),
           str(j, "state", state, sizeof(state)), str(j, "circuit", circ, sizeof(circ)), lane < 3 ? lanes[lane] : "?",
           u(j, "partitions"), u(j, "queued"), u(j, "synth"), u(j, "gpu"), u(j, "finalize"), u(j, "done"),
           u(j, "failed"), str(j, "request", req, sizeof(req)));
}

/* other users' jobs travel only as counts: {"others": {"jobs": N, "partitions": M}} */
static void print_others(const msgpack_object *st)
{
    const msgpack_object *o = get(st, "others");

    if (!o || o->type != MSGPACK_OBJECT_MAP)
        return;
    printf("other users: %llu job%s (%llu partition%s) active\n", u(o, "jobs"), u(o, "jobs") == 1 ? "" : "s",
           u(o, "partitions"), u(o, "partitions") == 1 ? "" : "s");
}

static void print_table(const msgpack_object *st)
{
    const msgpack_object *jobs = get(st, "jobs"), *parts = get(st, "partitions"), *pools = get(st, "pools");
    const msgpack_object *lat = get(st, "latency_s"), *active = get(st, "active"), *job = get(st, "job");
    char name[128], backend[64];

    printf("%s (backend %s): %llu synth%s connected, finalizer %s\n", str(st, "daemon", name, sizeof(name)),
           str(st, "backend", backend, sizeof(backend)), u(st, "synths"), u(st, "synths") == 1 ? "" : "s",
           u(st, "finalizer") ? "connected" : "NOT connected");
    printf("jobs        active %llu, complete %llu, failed %llu, cancelled %llu\n", u(jobs, "active"),
           u(jobs, "complete"), u(jobs, "failed"), u(jobs, "cancelled"));
    printf("partitions  queued %llu, synth %llu, gpu %llu, finalize %llu\n", u(parts, "queued"), u(parts, "synth"),
           u(parts, "gpu"), u(parts, "finalize"));
    if (pools && pools->type == MSGPACK_OBJECT_ARRAY)
        for (uint32_t i = 0; i < pools->via.array.size; i++) {
            const msgpack_object *p = &pools->via.array.ptr[i];
            printf("%-11s pool %llu (NUMA node %d): %llu of %llu slots in use, %s pages", i ? "" : "slots",
                   u(p, "id"), (int)num(p, "node"), u(p, "in_use"), u(p, "slots"),
                   u(p, "hugetlb") ? "huge" : "4 KiB");
            if (u(p, "quarantined"))
                printf(", %llu quarantined (a synth missed synth_timeout_s)", u(p, "quarantined"));
            printf("\n");
        }
    printf("latency     mean per partition: queue %.3f s, synth %.3f s, gpu %.3f s, finalize %.3f s\n",
           num(lat, "queue"), num(lat, "synth"), num(lat, "gpu"), num(lat, "finalize"));
    printf("throughput  %llu proofs in the last minute; %llu proved, %llu failed since start\n",
           u(st, "proofs_per_minute"), u(st, "proofs_total"), u(st, "failures_total"));
    if (u(st, "synth_timeouts_total"))
        printf("synths      %llu assignment(s) taken back after synth_timeout_s since start\n",
               u(st, "synth_timeouts_total"));
    if (get(st, "gpu_busy_pct"))
        printf("backend     %.1f%% busy over the last minute (compute stage), largest idle gap %.1f ms\n", num(st, "gpu_busy_pct"),
               num(st, "gpu_max_gap_ms"));
    print_others(st);
    if ((active && active->type == MSGPACK_OBJECT_ARRAY && active->via.array.size) || job) {
        printf("\n%-8s %-10s %-14s %-7s %6s %7s %6s %5s %9s %5s %7s  %s\n", "JOB", "STATE", "CIRCUIT", "PRIO",
               "PARTS", "QUEUED", "SYNTH", "GPU", "FINALIZE", "DONE", "FAILED", "REQUEST");
        if (active && active->type == MSGPACK_OBJECT_ARRAY)
            for (uint32_t i = 0; i < active->via.array.size; i++)
                if (!job || u(&active->via.array.ptr[i], "id") != u(job, "id"))
                    job_row(&active->via.array.ptr[i]);
        if (job)
            job_row(job);
    }
}

/* --------------------------------------------------------------- main --- */

static int parse_job(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *end || v == 0 || s[0] == '-')
        return -EINVAL;
    *out = v;
    return 0;
}

int czk_cmd_status(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"job", required_argument, NULL, 'J'}, CZK_CLIENT_LONGOPTS, {NULL, 0, NULL, 0}};
    const char *cmd = argv[0];
    int json = 0, r, c, rc = CZK_EXIT_ERROR;
    uint64_t job = 0;
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_unpacked up;
    czk_error e = {0};
    czk_msg m;
    size_t off = 0;

    while ((c = czk_cli_getopt(argc, argv, opts)) != -1) {
        if ((r = czk_client_option(&cl, cmd, c, optarg)) != 0) {
            if (r < 0)
                return CZK_EXIT_ERROR;
        } else if (c == 'j') {
            json = 1;
        } else if (c == 'J') {
            if (parse_job(optarg, &job) < 0)
                return czk_cli_failf(cmd, "--job needs a job number, not \"%s\"", optarg);
        } else {
            return czk_cli_opt_status();
        }
    }
    /* a job number may also come as the operand: czk status 42 */
    for (int i = optind; i < argc; i++) {
        if (job || parse_job(argv[i], &job) < 0)
            return czk_cli_usage_error(cmd, "unexpected argument \"%s\"", argv[i]);
    }
    if (czk_client_connect(&cl, &e) < 0)
        return czk_cli_fail(cmd, &e);

    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, job ? 1 : 0);
    if (job) {
        msgpack_pack_str_with_body(&pk, "job", 3);
        msgpack_pack_uint64(&pk, job);
    }
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_STATUS;
    m.u.status.body = (czk_bytes){(const uint8_t *)sb.data, (uint32_t)sb.size};
    r = czk_client_send(&cl, &m, NULL, 0, &e);
    msgpack_sbuffer_destroy(&sb);
    if (r < 0) {
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
    msgpack_unpacked_init(&up);
    if (czk_msg_precheck(m.u.status.body.ptr, m.u.status.body.len, CZK_MSG_MAX_DEPTH, &e) < 0 ||
        msgpack_unpack_next(&up, (const char *)m.u.status.body.ptr, m.u.status.body.len, &off) !=
            MSGPACK_UNPACK_SUCCESS ||
        up.data.type != MSGPACK_OBJECT_MAP) {
        czk_cli_failf(cmd, "czk-gpud sent a status that is not a msgpack map%s%s", e.msg[0] ? ": " : "", e.msg);
        msgpack_unpacked_destroy(&up);
        goto out;
    }
    if (job && !get(&up.data, "job"))
        fprintf(stderr, "czk %s: job %llu is not known to czk-gpud\n", cmd, (unsigned long long)job);
    if (json) {
        json_t *j = to_json(&up.data);
        if (!j || json_dumpf(j, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(9)) < 0) {
            json_decref(j);
            czk_cli_failf(cmd, "could not write the status as JSON (out of memory, or stdout failed)");
            msgpack_unpacked_destroy(&up);
            goto out;
        }
        json_decref(j);
        fputc('\n', stdout);
    } else {
        print_table(&up.data);
    }
    rc = job && !get(&up.data, "job") ? CZK_EXIT_ERROR : CZK_EXIT_OK;
    msgpack_unpacked_destroy(&up);
out:
    czk_client_close(&cl);
    return rc;
}
