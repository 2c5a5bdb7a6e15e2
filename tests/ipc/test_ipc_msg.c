/*
 * test_ipc_msg.c — round trip of every message type with random field values,
 * records built independently with msgpack-c's packer, and the decoder's
 * rejections: size cap, container counts (msgpack-c#1013), nesting depth,
 * trailing bytes, unknown/duplicate/missing keys, wrong types and ranges,
 * wrong protocol version, every truncation and random corruption of valid
 * records.  The schemas beyond records: the STATUS and STATUS_REPLY bodies
 * (random round trips, nested arrays at their caps, the optional "gpus" both
 * ways between older and newer peers, lenient decoding of
 * missing and unknown keys, rejections with the key path) and gpud's journal
 * payloads (byte for byte what the hand-written encoder gpud used before
 * wrote, so older journals replay).  FETCH and FETCHED: keys and ranges,
 * the typed wrappers, and the fds each type carries (czk_msg_fds).
 */
#include <errno.h>
#include <msgpack.h>
#include <string.h>

#include "ipc/layout.h"
#include "ipc/msg.h"
#include "tutil.h"

static uint8_t store[CZK_MSG_MAX_POINTS + 2][CZK_MSG_MAX_RECORD];

static void rand_str(char *dst, size_t cap, size_t maxlen)
{
    size_t n = t_range(0, maxlen < cap - 1 ? maxlen : cap - 1);
    for (size_t i = 0; i < n; i++)
        dst[i] = (char)t_range(0x20, 0x7e);
    dst[n] = 0;
}

static czk_bytes rand_bytes(int which, uint32_t maxlen)
{
    czk_bytes b;
    b.len = (uint32_t)t_range(0, maxlen);
    t_fill(store[which], b.len);
    b.ptr = store[which];
    return b;
}

static uint64_t r64(void) { return t_rand64() >> t_range(0, 63); }

/* ------------------------------------------------- STATUS bodies --- */

static void rand_job(czk_status_job *j, size_t maxstr)
{
    memset(j, 0, sizeof(*j));
    j->id = t_range(1, UINT64_MAX >> t_range(0, 63));
    rand_str(j->state, sizeof(j->state), 12);
    rand_str(j->circuit, sizeof(j->circuit), maxstr);
    rand_str(j->request, sizeof(j->request), maxstr);
    j->lane = (uint32_t)t_range(0, 7);
    j->partitions = (uint32_t)t_rand64(), j->done = (uint32_t)t_rand64(), j->failed = (uint32_t)t_rand64();
    j->queued = (uint32_t)t_rand64(), j->synth = (uint32_t)t_rand64(), j->gpu = (uint32_t)t_rand64();
    j->finalize = (uint32_t)t_rand64();
    if (t_range(0, 1))
        rand_str(j->reason, sizeof(j->reason), maxstr * 2);
}

static double rand_dbl(void) { return (double)(int64_t)t_rand64() / (double)(1ull << t_range(0, 62)); }

/* a random reply; counts up to maxn, strings up to maxstr bytes */
static void rand_reply(czk_status_reply *r, uint32_t maxn, size_t maxstr)
{
    memset(r, 0, sizeof(*r));
    rand_str(r->daemon, sizeof(r->daemon), maxstr);
    rand_str(r->state_dir, sizeof(r->state_dir), maxstr);
    rand_str(r->backend, sizeof(r->backend), maxstr);
    r->jobs.active = r64(), r->jobs.complete = r64(), r->jobs.failed = r64(), r->jobs.cancelled = r64();
    r->partitions.queued = r64(), r->partitions.synth = r64(), r->partitions.gpu = r64();
    r->partitions.finalize = r64(), r->partitions.lanes = t_range(0, 8);
    r->n_pools = (uint32_t)t_range(0, maxn < CZK_STATUS_MAX_POOLS ? maxn : CZK_STATUS_MAX_POOLS);
    for (uint32_t i = 0; i < r->n_pools; i++) {
        czk_status_pool *p = &r->pools[i];
        p->id = (uint32_t)t_rand64(), p->node = (int32_t)t_range(0, 1024) - 1;
        p->slots = (uint32_t)t_range(0, CZK_POOL_MAX_SLOTS), p->in_use = (uint32_t)t_range(0, p->slots);
        p->quarantined = (uint32_t)t_range(0, p->slots), p->hugetlb = (uint32_t)t_range(0, 1);
    }
    r->latency_s.queue = rand_dbl(), r->latency_s.synth = rand_dbl(), r->latency_s.gpu = rand_dbl();
    r->latency_s.finalize = rand_dbl();
    r->proofs_per_minute = r64(), r->gpu_busy_pct = rand_dbl(), r->gpu_max_gap_ms = r64();
    r->proofs_total = r64(), r->failures_total = r64(), r->synth_timeouts_total = r64();
    r->result_resends_total = r64();
    r->synths = (uint32_t)t_rand64(), r->finalizer = (uint32_t)t_range(0, 1);
    r->n_active = (uint32_t)t_range(0, maxn < CZK_STATUS_MAX_JOBS ? maxn : CZK_STATUS_MAX_JOBS);
    for (uint32_t i = 0; i < r->n_active; i++)
        rand_job(&r->active[i], maxstr);
    if ((r->has_others = (uint8_t)t_range(0, 1)))
        r->others.jobs = r64(), r->others.partitions = r64();
    if ((r->has_job = (uint8_t)t_range(0, 1)))
        rand_job(&r->job, maxstr);
    r->n_gpus = (uint32_t)t_range(0, maxn < CZK_STATUS_MAX_GPUS ? maxn : CZK_STATUS_MAX_GPUS);
    for (uint32_t i = 0; i < r->n_gpus; i++) {
        czk_status_gpu *x = &r->gpus[i];
        x->index = (uint32_t)t_rand64();
        rand_str(x->state, sizeof(x->state), 14);
        x->contexts = (uint32_t)t_rand64(), x->busy_pct = rand_dbl(), x->max_gap_ms = r64();
        x->done = r64(), x->failed = r64(), x->requeued = r64();
        if ((x->has_mem = (uint8_t)t_range(0, 1)))
            x->mem_used = r64(), x->mem_total = r64();
        if (t_range(0, 1))
            rand_str(x->reason, sizeof(x->reason), maxstr * 2);
    }
    /* what decode reports for keys gpud always writes */
    r->has_gpu_busy = r->has_synths = r->has_finalizer = r->has_state_dir = 1;
}

static czk_status_reply g_reply, g_reply2;

static int gen_status_reply_body(uint8_t *buf, size_t cap, czk_error *e)
{
    rand_reply(&g_reply, 3, 24);
    return czk_schema_encode(&czk_schema_status_reply, &g_reply, buf, cap, e);
}

static int gen_status_request(uint8_t *buf, size_t cap, czk_error *e)
{
    czk_status_request rq = {.job = t_range(0, 1) ? r64() : 0};
    return czk_schema_encode(&czk_schema_status_request, &rq, buf, cap, e);
}

/* random but valid message of each type */
static void gen(uint32_t type, czk_msg *m)
{
    memset(m, 0, sizeof(*m));
    m->type = type;
    m->version = CZK_PROTO_VERSION;
    switch (type) {
    case CZK_MSG_HELLO:
        m->u.hello.role = (uint32_t)t_range(1, CZK_ROLE_MAX);
        m->u.hello.pid = (uint32_t)t_range(1, INT32_MAX);
        m->u.hello.proto = (uint32_t)t_range(1, UINT32_MAX);
        m->u.hello.numa_node = (int32_t)t_range(0, 1024) - 1;
        m->u.hello.instance = (uint32_t)t_rand64();
        rand_str(m->u.hello.name, sizeof(m->u.hello.name), 200);
        /* optional circuits: unique non-empty names, random key ids */
        m->u.hello.n_circuits = (uint32_t)t_range(0, 3) == 0 ? 0 : (uint32_t)t_range(1, CZK_MSG_MAX_CIRCUITS);
        for (uint32_t i = 0; i < m->u.hello.n_circuits; i++) {
            czk_msg_circuit *c = &m->u.hello.circuits[i];
            int k = snprintf(c->name, sizeof(c->name), "c%u-", i); /* unique prefix */
            rand_str(c->name + k, sizeof(c->name) - (size_t)k, 40);
            t_fill(c->key_id, sizeof(c->key_id));
        }
        break;
    case CZK_MSG_POOL:
        m->u.pool.pool_id = (uint32_t)t_rand64();
        m->u.pool.numa_node = (int32_t)t_range(0, 8) - 1;
        m->u.pool.slot_count = (uint32_t)t_range(1, CZK_POOL_MAX_SLOTS);
        m->u.pool.layout_version = (uint32_t)t_range(1, 5);
        m->u.pool.slot_size = t_range(1, 1ull << 40);
        m->u.pool.epoch = t_range(1, UINT64_MAX);
        m->u.pool.total_size = t_range(1, 1ull << 48);
        break;
    case CZK_MSG_ASSIGN:
        m->u.assign.pool_id = (uint32_t)t_rand64();
        m->u.assign.slot = (uint32_t)t_range(0, CZK_POOL_MAX_SLOTS - 1);
        m->u.assign.generation = (uint32_t)t_rand64();
        m->u.assign.job_id = t_range(1, UINT64_MAX);
        m->u.assign.partition = (uint32_t)t_range(0, UINT32_MAX - 1);
        m->u.assign.circuit_id = (uint32_t)t_rand64();
        rand_str(m->u.assign.spool, sizeof(m->u.assign.spool), 2000);
        m->u.assign.lease_ms = r64();
        break;
    case CZK_MSG_READY:
        m->u.ready.pool_id = (uint32_t)t_rand64();
        m->u.ready.slot = (uint32_t)t_range(0, CZK_POOL_MAX_SLOTS - 1);
        m->u.ready.generation = (uint32_t)t_rand64();
        m->u.ready.domain_size = t_range(0, 1ull << 40);
        m->u.ready.n_vars = t_range(0, 1ull << 40);
        m->u.ready.data_len = t_range(0, 1ull << 48);
        break;
    case CZK_MSG_RELEASE:
        m->u.release.pool_id = (uint32_t)t_rand64();
        m->u.release.slot = (uint32_t)t_range(0, CZK_POOL_MAX_SLOTS - 1);
        m->u.release.generation = (uint32_t)t_rand64();
        break;
    case CZK_MSG_RESULT:
        m->u.result.job_id = t_range(1, UINT64_MAX);
        m->u.result.partition = (uint32_t)t_range(0, UINT32_MAX - 1);
        m->u.result.n_points = (uint32_t)t_range(0, CZK_MSG_MAX_POINTS);
        for (uint32_t i = 0; i < m->u.result.n_points; i++)
            m->u.result.points[i] = rand_bytes((int)i, CZK_MSG_MAX_POINT_BYTES);
        m->u.result.publics = rand_bytes(CZK_MSG_MAX_POINTS, 40000);
        break;
    case CZK_MSG_DONE:
        m->u.done.job_id = t_range(1, UINT64_MAX);
        m->u.done.partition = (uint32_t)t_range(0, UINT32_MAX - 1);
        m->u.done.status = -(int32_t)t_range(0, 4095);
        break;
    case CZK_MSG_SUBMIT:
        rand_str(m->u.submit.request_id, sizeof(m->u.submit.request_id), 127);
        rand_str(m->u.submit.circuit, sizeof(m->u.submit.circuit), 127);
        m->u.submit.priority = (uint32_t)t_range(0, 7);
        m->u.submit.n_partitions = (uint32_t)t_range(1, 1u << 20);
        m->u.submit.n_fds = (uint32_t)t_range(0, CZK_MSG_MAX_FDS);
        m->u.submit.flags = (uint32_t)t_rand64();
        break;
    case CZK_MSG_ACCEPTED:
        rand_str(m->u.accepted.request_id, sizeof(m->u.accepted.request_id), 127);
        m->u.accepted.job_id = t_range(1, UINT64_MAX);
        m->u.accepted.duplicate = (uint32_t)t_range(0, 1);
        break;
    case CZK_MSG_REJECTED:
        rand_str(m->u.rejected.request_id, sizeof(m->u.rejected.request_id), 127);
        m->u.rejected.code = -(int32_t)t_range(1, 4095);
        rand_str(m->u.rejected.reason, sizeof(m->u.rejected.reason), 1023);
        break;
    case CZK_MSG_EVENT:
        m->u.event.job_id = t_range(1, UINT64_MAX);
        m->u.event.partition = (uint32_t)t_rand64();
        m->u.event.stage = (uint32_t)t_range(1, CZK_STAGE_MAX);
        m->u.event.status = -(int32_t)t_range(0, 4095);
        m->u.event.time_ns = r64();
        break;
    case CZK_MSG_STATUS:
    case CZK_MSG_STATUS_REPLY: {
        /* a random map built with msgpack-c: {"jobs": n, "queue": [..], "name": str} */
        msgpack_sbuffer sb;
        msgpack_packer pk;
        uint32_t nq = (uint32_t)t_range(0, 50);
        if (t_range(0, 4) == 0)
            break; /* empty body */
        if (t_range(0, 1)) { /* the typed body gpud and the CLI speak */
            czk_error e;
            int n = type == CZK_MSG_STATUS ? gen_status_request(store[CZK_MSG_MAX_POINTS + 1], CZK_MSG_MAX_RECORD, &e)
                                           : gen_status_reply_body(store[CZK_MSG_MAX_POINTS + 1], CZK_MSG_MAX_RECORD, &e);
            CHECK(n > 0);
            m->u.status.body.ptr = store[CZK_MSG_MAX_POINTS + 1];
            m->u.status.body.len = (uint32_t)n;
            break;
        }
        msgpack_sbuffer_init(&sb);
        msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
        msgpack_pack_map(&pk, 3);
        msgpack_pack_str(&pk, 4), msgpack_pack_str_body(&pk, "jobs", 4);
        msgpack_pack_uint64(&pk, t_rand64());
        msgpack_pack_str(&pk, 5), msgpack_pack_str_body(&pk, "queue", 5);
        msgpack_pack_array(&pk, nq);
        for (uint32_t i = 0; i < nq; i++)
            msgpack_pack_int64(&pk, (int64_t)t_rand64());
        msgpack_pack_str(&pk, 4), msgpack_pack_str_body(&pk, "name", 4);
        msgpack_pack_str(&pk, 3), msgpack_pack_str_body(&pk, "gpu", 3);
        memcpy(store[CZK_MSG_MAX_POINTS + 1], sb.data, sb.size);
        m->u.status.body.ptr = store[CZK_MSG_MAX_POINTS + 1];
        m->u.status.body.len = (uint32_t)sb.size;
        msgpack_sbuffer_destroy(&sb);
        break;
    }
    case CZK_MSG_CANCEL:
        m->u.cancel.job_id = t_range(1, UINT64_MAX);
        break;
    case CZK_MSG_ERROR:
        m->u.error.code = -(int32_t)t_range(1, 4095);
        rand_str(m->u.error.message, sizeof(m->u.error.message), 1023);
        break;
    case CZK_MSG_RESYNC:
        m->u.resync.pool_id = (uint32_t)t_rand64();
        m->u.resync.n = (uint32_t)t_range(0, CZK_MSG_MAX_RESYNC);
        for (uint32_t i = 0; i < m->u.resync.n; i++) {
            m->u.resync.slots[i].slot = (uint32_t)t_range(0, CZK_POOL_MAX_SLOTS - 1);
            m->u.resync.slots[i].generation = (uint32_t)t_rand64();
        }
        break;
    case CZK_MSG_WATCH:
        m->u.watch.job_id = t_range(1, UINT64_MAX);
        break;
    case CZK_MSG_HEARTBEAT:
        m->u.heartbeat.seq = t_rand64();
        m->u.heartbeat.time_ns = r64();
        break;
    case CZK_MSG_FETCH:
        m->u.fetch.job_id = t_range(1, UINT64_MAX);
        m->u.fetch.partition = (uint32_t)t_range(0, UINT32_MAX - 1);
        break;
    case CZK_MSG_FETCHED:
        m->u.fetched.job_id = t_range(1, UINT64_MAX);
        m->u.fetched.partition = (uint32_t)t_range(0, UINT32_MAX - 1);
        m->u.fetched.proof_size = t_range(0, 1ull << 48);
        m->u.fetched.public_size = t_range(0, 1ull << 48);
        break;
    default:
        CHECK(!"type without a generator");
    }
}

static int bytes_eq(czk_bytes a, czk_bytes b) { return a.len == b.len && (a.len == 0 || !memcmp(a.ptr, b.ptr, a.len)); }

/* field-by-field equality: byte strings by content, the rest bitwise */
static void check_equal(const czk_msg *a, const czk_msg *b)
{
    czk_msg x = *a, y = *b;
    CHECK(x.type == y.type);
    CHECK(y.version == CZK_PROTO_VERSION);
    if (x.type == CZK_MSG_RESULT) {
        CHECK(x.u.result.n_points == y.u.result.n_points);
        for (uint32_t i = 0; i < x.u.result.n_points; i++) {
            CHECK(bytes_eq(x.u.result.points[i], y.u.result.points[i]));
            x.u.result.points[i].ptr = y.u.result.points[i].ptr = NULL;
        }
        CHECK(bytes_eq(x.u.result.publics, y.u.result.publics));
        x.u.result.publics.ptr = y.u.result.publics.ptr = NULL;
    }
    if (x.type == CZK_MSG_STATUS || x.type == CZK_MSG_STATUS_REPLY) {
        CHECK(bytes_eq(x.u.status.body, y.u.status.body));
        x.u.status.body.ptr = y.u.status.body.ptr = NULL;
    }
    CHECK(!memcmp(&x.u, &y.u, sizeof(x.u)));
}

static uint8_t rec[CZK_MSG_MAX_RECORD], rec2[CZK_MSG_MAX_RECORD];

static void expect_reject(const uint8_t *buf, size_t len, const char *what)
{
    czk_msg m;
    czk_error e = {0};
    int r = czk_msg_decode(buf, len, &m, &e);
    if (r != -EBADMSG && r != -EPROTO) {
        fprintf(stderr, "expected rejection of %s, got %d\n", what, r);
        exit(1);
    }
    CHECK(e.msg[0] != 0); /* every rejection says why */
}

/* packs a map with the given extra key/values through msgpack-c (independent of our encoder) */
typedef void (*extra_fn)(msgpack_packer *pk);
static size_t build(uint32_t type, uint32_t version, int nextra, extra_fn fn, uint8_t *out)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    size_t n;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 2 + (size_t)nextra);
    if (fn)
        fn(&pk); /* extra keys first: order must not matter */
    msgpack_pack_str(&pk, 1), msgpack_pack_str_body(&pk, "v", 1), msgpack_pack_uint32(&pk, version);
    msgpack_pack_str(&pk, 1), msgpack_pack_str_body(&pk, "t", 1), msgpack_pack_uint32(&pk, type);
    n = sb.size;
    memcpy(out, sb.data, n);
    msgpack_sbuffer_destroy(&sb);
    return n;
}

static void kv_u(msgpack_packer *pk, const char *k, uint64_t v)
{
    msgpack_pack_str(pk, strlen(k)), msgpack_pack_str_body(pk, k, strlen(k)), msgpack_pack_uint64(pk, v);
}

/* FETCH and FETCHED built by msgpack-c: the keys of docs/ipc.md */
static void ex_fetch(msgpack_packer *pk) { kv_u(pk, "part", 3), kv_u(pk, "job", 41); }
static void ex_fetch_nopart(msgpack_packer *pk) { kv_u(pk, "job", 41); }
static void ex_fetch_job0(msgpack_packer *pk) { kv_u(pk, "job", 0), kv_u(pk, "part", 3); }
static void ex_fetch_partall(msgpack_packer *pk) { kv_u(pk, "job", 41), kv_u(pk, "part", CZK_PARTITION_ALL); }
static void ex_fetched(msgpack_packer *pk)
{
    kv_u(pk, "ulen", 184), kv_u(pk, "job", 41), kv_u(pk, "plen", 1110), kv_u(pk, "part", 3);
}
static void ex_fetched_nolen(msgpack_packer *pk) { kv_u(pk, "job", 41), kv_u(pk, "plen", 1110), kv_u(pk, "part", 3); }
static void ex_fetched_extra(msgpack_packer *pk)
{
    kv_u(pk, "ulen", 1), kv_u(pk, "job", 41), kv_u(pk, "plen", 1), kv_u(pk, "part", 3), kv_u(pk, "fds", 2);
}

/* FETCH (client -> gpud) and FETCHED (gpud -> client, two fds): keys,
 * ranges, the typed wrappers, and the fd count the loop and the CLI enforce */
static void check_fetch(void)
{
    czk_error e = {0};
    czk_msg m, d;
    size_t n;

    CHECK(!strcmp(czk_msg_type_name(CZK_MSG_FETCH), "FETCH") && !strcmp(czk_msg_type_name(CZK_MSG_FETCHED), "FETCHED"));
    CHECK(CZK_MSG_FETCH == 19 && CZK_MSG_FETCHED == 20 && CZK_MSG_TYPE_MAX == 20);
    n = build(CZK_MSG_FETCH, CZK_PROTO_VERSION, 2, ex_fetch, rec);
    CHECK(czk_msg_decode(rec, n, &d, &e) == 0);
    CHECK(d.type == CZK_MSG_FETCH && d.u.fetch.job_id == 41 && d.u.fetch.partition == 3);
    n = build(CZK_MSG_FETCHED, CZK_PROTO_VERSION, 4, ex_fetched, rec);
    CHECK(czk_msg_decode(rec, n, &d, &e) == 0);
    CHECK(d.type == CZK_MSG_FETCHED && d.u.fetched.job_id == 41 && d.u.fetched.partition == 3 &&
          d.u.fetched.proof_size == 1110 && d.u.fetched.public_size == 184);
    n = build(CZK_MSG_FETCH, CZK_PROTO_VERSION, 1, ex_fetch_nopart, rec);
    expect_reject(rec, n, "FETCH without a partition");
    CHECK(czk_msg_decode(rec, n, &d, &e) == -EBADMSG && strstr(e.msg, "\"part\""));
    n = build(CZK_MSG_FETCH, CZK_PROTO_VERSION, 2, ex_fetch_job0, rec);
    expect_reject(rec, n, "FETCH of job 0");
    n = build(CZK_MSG_FETCH, CZK_PROTO_VERSION, 2, ex_fetch_partall, rec);
    expect_reject(rec, n, "FETCH of the whole job (partition 0xffffffff)");
    n = build(CZK_MSG_FETCHED, CZK_PROTO_VERSION, 3, ex_fetched_nolen, rec);
    expect_reject(rec, n, "FETCHED without the public size");
    n = build(CZK_MSG_FETCHED, CZK_PROTO_VERSION, 5, ex_fetched_extra, rec);
    expect_reject(rec, n, "FETCHED with an unknown key");

    /* typed wrappers, and a FETCH is not a FETCHED */
    {
        czk_msg_fetch f = {.job_id = 9, .partition = 252}, f2;
        czk_msg_fetched fd = {.job_id = 9, .partition = 252, .proof_size = 700, .public_size = 0}, fd2;
        czk_msg_watch w;
        int k = czk_msg_encode_fetch(rec, sizeof(rec), &f, &e);
        CHECK(k > 0 && czk_msg_decode_fetch(rec, (size_t)k, &f2, &e) == 0 && !memcmp(&f, &f2, sizeof(f)));
        CHECK(czk_msg_decode_fetched(rec, (size_t)k, &fd2, &e) == -EBADMSG && strstr(e.msg, "FETCH"));
        CHECK(czk_msg_decode_watch(rec, (size_t)k, &w, &e) == -EBADMSG);
        k = czk_msg_encode_fetched(rec, sizeof(rec), &fd, &e);
        CHECK(k > 0 && czk_msg_decode_fetched(rec, (size_t)k, &fd2, &e) == 0 && !memcmp(&fd, &fd2, sizeof(fd)));
    }
    /* the encoder's ranges */
    gen(CZK_MSG_FETCH, &m);
    m.u.fetch.job_id = 0;
    CHECK(czk_msg_encode(rec, sizeof(rec), &m, &e) == -EINVAL);
    gen(CZK_MSG_FETCHED, &m);
    m.u.fetched.partition = CZK_PARTITION_ALL;
    CHECK(czk_msg_encode(rec, sizeof(rec), &m, &e) == -EINVAL);

    /* fds per record (ipc/conn.c and cli/client.c refuse any other count) */
    for (uint32_t type = 1; type <= CZK_MSG_TYPE_MAX; type++) {
        int want = type == CZK_MSG_POOL ? 1 : type == CZK_MSG_FETCHED ? CZK_FETCHED_FDS : 0;
        gen(type, &m);
        if (type == CZK_MSG_SUBMIT)
            want = (int)m.u.submit.n_fds;
        CHECK(czk_msg_fds(&m) == want);
    }
    CHECK(CZK_FETCHED_FDS == 2);
}
static void ex_release(msgpack_packer *pk) { kv_u(pk, "slot", 17), kv_u(pk, "gen", 99), kv_u(pk, "pool", 3); }
static void ex_release_dup(msgpack_packer *pk) { kv_u(pk, "slot", 17), kv_u(pk, "slot", 18), kv_u(pk, "gen", 99), kv_u(pk, "pool", 3); }
static void ex_release_unknown(msgpack_packer *pk) { kv_u(pk, "slot", 1), kv_u(pk, "gen", 1), kv_u(pk, "pool", 3), kv_u(pk, "zzz", 1); }
static void ex_release_missing(msgpack_packer *pk) { kv_u(pk, "slot", 1), kv_u(pk, "pool", 3); }
static void ex_release_range(msgpack_packer *pk) { kv_u(pk, "slot", CZK_POOL_MAX_SLOTS), kv_u(pk, "gen", 1), kv_u(pk, "pool", 3); }
static void ex_release_neg(msgpack_packer *pk)
{
    kv_u(pk, "gen", 1), kv_u(pk, "pool", 3);
    msgpack_pack_str(pk, 4), msgpack_pack_str_body(pk, "slot", 4), msgpack_pack_int64(pk, -1);
}
static void ex_release_type(msgpack_packer *pk)
{
    kv_u(pk, "gen", 1), kv_u(pk, "pool", 3);
    msgpack_pack_str(pk, 4), msgpack_pack_str_body(pk, "slot", 4), msgpack_pack_str(pk, 1), msgpack_pack_str_body(pk, "1", 1);
}
static void ex_cancel_intkey(msgpack_packer *pk) { msgpack_pack_uint32(pk, 7), msgpack_pack_uint32(pk, 7); }
static void ex_error_nul(msgpack_packer *pk)
{
    msgpack_pack_str(pk, 4), msgpack_pack_str_body(pk, "code", 4), msgpack_pack_int32(pk, -5);
    msgpack_pack_str(pk, 3), msgpack_pack_str_body(pk, "msg", 3), msgpack_pack_str(pk, 3), msgpack_pack_str_body(pk, "a\0b", 3);
}

/* HELLO with circuits, packed by msgpack-c: good, or broken in one way */
enum { CIRC_OK, CIRC_DUP, CIRC_SHORT_ID, CIRC_EMPTY_NAME, CIRC_NOT_PAIR, CIRC_TOO_MANY };
static int circ_mode;
static uint8_t circ_ids[CZK_MSG_MAX_CIRCUITS + 1][CZK_MSG_KEY_ID];
static void ex_hello_circs(msgpack_packer *pk)
{
    static const char *names[] = {"multi", "linear", "multi"};
    uint32_t n = circ_mode == CIRC_TOO_MANY ? CZK_MSG_MAX_CIRCUITS + 1 : circ_mode == CIRC_DUP ? 3 : 2;
    kv_u(pk, "role", CZK_ROLE_SYNTH), kv_u(pk, "pid", 42), kv_u(pk, "proto", 1), kv_u(pk, "node", 0),
        kv_u(pk, "inst", 0);
    msgpack_pack_str(pk, 5), msgpack_pack_str_body(pk, "circs", 5);
    msgpack_pack_array(pk, n);
    for (uint32_t i = 0; i < n; i++) {
        char nm[16];
        const char *name = names[i % 3];
        if (circ_mode == CIRC_TOO_MANY) {
            snprintf(nm, sizeof(nm), "c%u", i);
            name = nm;
        }
        if (circ_mode == CIRC_NOT_PAIR && i == 1) {
            msgpack_pack_array(pk, 1), msgpack_pack_str(pk, 1), msgpack_pack_str_body(pk, "x", 1);
            continue;
        }
        if (circ_mode == CIRC_EMPTY_NAME && i == 1)
            name = "";
        msgpack_pack_array(pk, 2);
        msgpack_pack_str(pk, strlen(name)), msgpack_pack_str_body(pk, name, strlen(name));
        size_t idlen = circ_mode == CIRC_SHORT_ID && i == 0 ? CZK_MSG_KEY_ID - 1 : CZK_MSG_KEY_ID;
        msgpack_pack_bin(pk, idlen), msgpack_pack_bin_body(pk, circ_ids[i], idlen);
    }
}

static void check_hello_circuits(void)
{
    czk_error e = {0};
    czk_msg m;
    size_t n;

    t_fill(circ_ids, sizeof(circ_ids));
    circ_mode = CIRC_OK;
    n = build(CZK_MSG_HELLO, CZK_PROTO_VERSION, 6, ex_hello_circs, rec);
    CHECK(czk_msg_decode(rec, n, &m, &e) == 0);
    CHECK(m.u.hello.n_circuits == 2);
    CHECK(!strcmp(m.u.hello.circuits[0].name, "multi") && !strcmp(m.u.hello.circuits[1].name, "linear"));
    CHECK(!memcmp(m.u.hello.circuits[0].key_id, circ_ids[0], CZK_MSG_KEY_ID));
    CHECK(!memcmp(m.u.hello.circuits[1].key_id, circ_ids[1], CZK_MSG_KEY_ID));
    circ_mode = CIRC_DUP;
    n = build(CZK_MSG_HELLO, CZK_PROTO_VERSION, 6, ex_hello_circs, rec);
    expect_reject(rec, n, "HELLO with a circuit name twice");
    circ_mode = CIRC_SHORT_ID;
    n = build(CZK_MSG_HELLO, CZK_PROTO_VERSION, 6, ex_hello_circs, rec);
    expect_reject(rec, n, "HELLO with a 31-byte key id");
    circ_mode = CIRC_EMPTY_NAME;
    n = build(CZK_MSG_HELLO, CZK_PROTO_VERSION, 6, ex_hello_circs, rec);
    expect_reject(rec, n, "HELLO with an empty circuit name");
    circ_mode = CIRC_NOT_PAIR;
    n = build(CZK_MSG_HELLO, CZK_PROTO_VERSION, 6, ex_hello_circs, rec);
    expect_reject(rec, n, "HELLO with a circuit that is not a pair");
    circ_mode = CIRC_TOO_MANY;
    n = build(CZK_MSG_HELLO, CZK_PROTO_VERSION, 6, ex_hello_circs, rec);
    expect_reject(rec, n, "HELLO with too many circuits");
    /* the encoder refuses what the decoder would */
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_HELLO;
    m.u.hello.role = CZK_ROLE_SYNTH, m.u.hello.pid = 1, m.u.hello.proto = 1;
    m.u.hello.n_circuits = 2;
    snprintf(m.u.hello.circuits[0].name, CZK_MSG_CIRCUIT_NAME, "a");
    snprintf(m.u.hello.circuits[1].name, CZK_MSG_CIRCUIT_NAME, "a");
    CHECK(czk_msg_encode(rec, sizeof(rec), &m, &e) == -EINVAL);
    m.u.hello.circuits[1].name[0] = 0;
    CHECK(czk_msg_encode(rec, sizeof(rec), &m, &e) == -EINVAL);
    m.u.hello.n_circuits = CZK_MSG_MAX_CIRCUITS + 1;
    CHECK(czk_msg_encode(rec, sizeof(rec), &m, &e) == -EINVAL);
}

/* ------------------------------------------------ schema bodies --- */

static uint8_t body[CZK_MSG_MAX_RECORD], body2[CZK_MSG_MAX_RECORD];

static void expect_body_reject(const czk_schema *s, const uint8_t *buf, size_t len, void *obj, const char *what,
                               const char *needle)
{
    czk_error e = {0};
    int r = czk_schema_decode(s, buf, len, obj, &e);
    if (r != -EBADMSG || !e.msg[0] || (needle && !strstr(e.msg, needle))) {
        fprintf(stderr, "expected rejection of %s (mentioning \"%s\"), got %d: %s\n", what, needle ? needle : "",
                r, e.msg);
        exit(1);
    }
}

static void pk_s(msgpack_packer *pk, const char *s)
{
    msgpack_pack_str(pk, strlen(s)), msgpack_pack_str_body(pk, s, strlen(s));
}

/* {"synths": 2, "active": [ n maps {"id": i+1, "lane": lane} ], EXTRA} built by msgpack-c */
enum { RB_OK, RB_LANE_STR, RB_LANE_RANGE, RB_TOO_MANY, RB_ELEM_NOT_MAP, RB_DUP_NESTED, RB_NAN, RB_UNKNOWN };
static size_t reply_built(int mode, uint8_t *out)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    uint32_t n = mode == RB_TOO_MANY ? CZK_STATUS_MAX_JOBS + 1 : 3;
    size_t len;

    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, mode == RB_NAN || mode == RB_UNKNOWN ? 4 : 2);
    if (mode == RB_UNKNOWN) { /* a newer gpud's keys, one of them not even a string */
        pk_s(&pk, "future_key"), msgpack_pack_array(&pk, 2), msgpack_pack_true(&pk), msgpack_pack_nil(&pk);
        msgpack_pack_int64(&pk, 12), pk_s(&pk, "integer key");
    }
    if (mode == RB_NAN) {
        pk_s(&pk, "gpu_busy_pct"), msgpack_pack_double(&pk, 0.0 / 0.0);
        pk_s(&pk, "daemon"), pk_s(&pk, "x");
    }
    pk_s(&pk, "synths"), msgpack_pack_uint32(&pk, 2);
    pk_s(&pk, "active");
    msgpack_pack_array(&pk, n);
    for (uint32_t i = 0; i < n; i++) {
        if (mode == RB_ELEM_NOT_MAP && i == 1) {
            msgpack_pack_uint32(&pk, 5);
            continue;
        }
        msgpack_pack_map(&pk, mode == RB_DUP_NESTED && i == 2 ? 3 : 2);
        pk_s(&pk, "id"), msgpack_pack_uint64(&pk, i + 1);
        pk_s(&pk, "lane");
        if (mode == RB_LANE_STR && i == 1)
            pk_s(&pk, "1");
        else
            msgpack_pack_uint32(&pk, mode == RB_LANE_RANGE && i == 1 ? 8 : i % 3);
        if (mode == RB_DUP_NESTED && i == 2)
            pk_s(&pk, "id"), msgpack_pack_uint64(&pk, 9);
    }
    len = sb.size;
    memcpy(out, sb.data, len);
    msgpack_sbuffer_destroy(&sb);
    return len;
}

/* {"gpus": [...]} built by msgpack-c: device 0 in service with memory and a
 * key a newer gpud might add, device 1 out of service with a reason and
 * without the keys an older one might lack; the modes break it */
enum { GB_OK, GB_TOO_MANY, GB_STATE_INT, GB_NAN, GB_NOT_ARRAY };
static size_t gpus_built(int mode, uint8_t *out)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    uint32_t n = mode == GB_TOO_MANY ? CZK_STATUS_MAX_GPUS + 1 : 2;
    size_t len;

    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, 2);
    pk_s(&pk, "daemon"), pk_s(&pk, "czk-gpud");
    pk_s(&pk, "gpus");
    if (mode == GB_NOT_ARRAY) {
        msgpack_pack_map(&pk, 0);
    } else {
        msgpack_pack_array(&pk, n);
        for (uint32_t i = 0; i < n; i++) {
            if (i % 2 == 0) {
                msgpack_pack_map(&pk, 8);
                pk_s(&pk, "index"), msgpack_pack_uint32(&pk, i);
                pk_s(&pk, "state"), pk_s(&pk, "in_service");
                pk_s(&pk, "contexts"), msgpack_pack_uint32(&pk, 2);
                pk_s(&pk, "busy_pct"), msgpack_pack_double(&pk, mode == GB_NAN ? 0.0 / 0.0 : 97.5);
                pk_s(&pk, "done"), msgpack_pack_uint64(&pk, 1234567890123ull);
                pk_s(&pk, "mem_used"), msgpack_pack_uint64(&pk, 5ull << 30);
                pk_s(&pk, "mem_total"), msgpack_pack_uint64(&pk, 141ull << 30);
                pk_s(&pk, "temperature_c"), msgpack_pack_array(&pk, 1), msgpack_pack_uint32(&pk, 61);
            } else {
                msgpack_pack_map(&pk, 4);
                pk_s(&pk, "index"), msgpack_pack_uint32(&pk, i);
                pk_s(&pk, "state");
                if (mode == GB_STATE_INT)
                    msgpack_pack_uint32(&pk, 2);
                else
                    pk_s(&pk, "out_of_service");
                pk_s(&pk, "requeued"), msgpack_pack_uint64(&pk, 3);
                pk_s(&pk, "reason"), pk_s(&pk, "cuda backend: the H MSM failed (a sticky error: the device is lost)");
            }
        }
    }
    len = sb.size;
    memcpy(out, sb.data, len);
    msgpack_sbuffer_destroy(&sb);
    return len;
}

static int is_gpus_key(const msgpack_object *k)
{
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == 4 && !memcmp(k->via.str.ptr, "gpus", 4);
}

/* the body of r without its "gpus" key: what an older gpud sends, and what
 * an older client's table reads of a newer reply (it skips the key) */
static size_t without_gpus(const uint8_t *in, size_t n, uint8_t *out)
{
    msgpack_unpacked up;
    msgpack_sbuffer sb;
    msgpack_packer pk;
    size_t off = 0, len;
    uint32_t keep = 0;

    msgpack_unpacked_init(&up);
    CHECK(msgpack_unpack_next(&up, (const char *)in, n, &off) == MSGPACK_UNPACK_SUCCESS &&
          up.data.type == MSGPACK_OBJECT_MAP);
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    for (uint32_t i = 0; i < up.data.via.map.size; i++)
        keep += !is_gpus_key(&up.data.via.map.ptr[i].key);
    msgpack_pack_map(&pk, keep);
    for (uint32_t i = 0; i < up.data.via.map.size; i++) {
        const msgpack_object_kv *kv = &up.data.via.map.ptr[i];
        if (is_gpus_key(&kv->key))
            continue;
        msgpack_pack_object(&pk, kv->key);
        msgpack_pack_object(&pk, kv->val);
    }
    len = sb.size;
    memcpy(out, sb.data, len);
    msgpack_sbuffer_destroy(&sb);
    msgpack_unpacked_destroy(&up);
    return len;
}

/* "gpus" (STATUS_REPLY, optional): round trips, caps, both directions of
 * compatibility, rejections with the key path */
static void check_status_gpus(void)
{
    czk_error e = {0};
    int n, seen_gpus = 0;

    /* random replies with devices: exact round trip; the same reply without
     * the key decodes to the same struct with n_gpus 0 (an older gpud's
     * reply, and a newer reply as an older client's table sees it) */
    for (int it = 0; it < 100; it++) {
        rand_reply(&g_reply, 6, 20);
        if (it % 4 == 0) {
            g_reply.n_gpus = 0;
            memset(g_reply.gpus, 0, sizeof(g_reply.gpus));
        }
        n = czk_schema_encode(&czk_schema_status_reply, &g_reply, body, sizeof(body), &e);
        CHECK(n > 0);
        CHECK(czk_schema_decode(&czk_schema_status_reply, body, (size_t)n, &g_reply2, &e) == 0);
        CHECK(!memcmp(&g_reply, &g_reply2, sizeof(g_reply)));
        seen_gpus += g_reply.n_gpus > 0;
        size_t m = without_gpus(body, (size_t)n, body2);
        CHECK(g_reply.n_gpus ? m < (size_t)n : m == (size_t)n); /* encode omits an empty "gpus" */
        CHECK(czk_schema_decode(&czk_schema_status_reply, body2, m, &g_reply2, &e) == 0 && g_reply2.n_gpus == 0);
        g_reply.n_gpus = 0;
        memset(g_reply.gpus, 0, sizeof(g_reply.gpus));
        CHECK(!memcmp(&g_reply, &g_reply2, sizeof(g_reply)));
    }
    CHECK(seen_gpus > 10);
    /* caps: CZK_STATUS_MAX_GPUS devices fit, one more is refused both ways */
    rand_reply(&g_reply, 0, 4);
    g_reply.n_gpus = CZK_STATUS_MAX_GPUS;
    for (uint32_t i = 0; i < CZK_STATUS_MAX_GPUS; i++) {
        g_reply.gpus[i].index = i;
        snprintf(g_reply.gpus[i].state, sizeof(g_reply.gpus[i].state), "in_service");
        snprintf(g_reply.gpus[i].reason, sizeof(g_reply.gpus[i].reason), "%0255u", i);
        g_reply.gpus[i].has_mem = 1, g_reply.gpus[i].mem_used = t_rand64(), g_reply.gpus[i].mem_total = t_rand64();
    }
    n = czk_schema_encode(&czk_schema_status_reply, &g_reply, body, sizeof(body), &e);
    CHECK(n > 0 && czk_schema_decode(&czk_schema_status_reply, body, (size_t)n, &g_reply2, &e) == 0 &&
          g_reply2.n_gpus == CZK_STATUS_MAX_GPUS && g_reply2.gpus[15].mem_used == g_reply.gpus[15].mem_used);
    g_reply.n_gpus = CZK_STATUS_MAX_GPUS + 1;
    CHECK(czk_schema_encode(&czk_schema_status_reply, &g_reply, body, sizeof(body), &e) == -EINVAL &&
          strstr(e.msg, "gpus"));
    g_reply.n_gpus = 1;
    g_reply.gpus[0].busy_pct = 0.0 / 0.0;
    CHECK(czk_schema_encode(&czk_schema_status_reply, &g_reply, body, sizeof(body), &e) == -EINVAL &&
          strstr(e.msg, "STATUS_REPLY.gpus[0].busy_pct"));
    /* built by msgpack-c: keys an element lacks read as 0 / "" (has_mem
     * clear), keys it does not know are skipped (a newer gpud) */
    n = (int)gpus_built(GB_OK, body);
    CHECK(czk_schema_decode(&czk_schema_status_reply, body, (size_t)n, &g_reply2, &e) == 0);
    CHECK(g_reply2.n_gpus == 2 && !strcmp(g_reply2.gpus[0].state, "in_service") && g_reply2.gpus[0].contexts == 2 &&
          g_reply2.gpus[0].busy_pct == 97.5 && g_reply2.gpus[0].done == 1234567890123ull &&
          g_reply2.gpus[0].has_mem && g_reply2.gpus[0].mem_used == 5ull << 30 &&
          g_reply2.gpus[0].mem_total == 141ull << 30 && !g_reply2.gpus[0].reason[0]);
    CHECK(g_reply2.gpus[1].index == 1 && !strcmp(g_reply2.gpus[1].state, "out_of_service") &&
          g_reply2.gpus[1].requeued == 3 && !g_reply2.gpus[1].has_mem && g_reply2.gpus[1].mem_total == 0 &&
          strstr(g_reply2.gpus[1].reason, "device is lost") && g_reply2.gpus[1].contexts == 0);
    n = (int)gpus_built(GB_TOO_MANY, body);
    expect_body_reject(&czk_schema_status_reply, body, (size_t)n, &g_reply2, "17 devices", "gpus");
    n = (int)gpus_built(GB_STATE_INT, body);
    expect_body_reject(&czk_schema_status_reply, body, (size_t)n, &g_reply2, "a state that is a number",
                       "gpus[1].state");
    n = (int)gpus_built(GB_NAN, body);
    expect_body_reject(&czk_schema_status_reply, body, (size_t)n, &g_reply2, "a NaN busy_pct", "gpus[0].busy_pct");
    n = (int)gpus_built(GB_NOT_ARRAY, body);
    expect_body_reject(&czk_schema_status_reply, body, (size_t)n, &g_reply2, "gpus as a map", "gpus");
}

static void check_status_bodies(void)
{
    czk_error e = {0};
    czk_status_request rq, rq2;
    int n;

    /* request: {} or {job}; unknown keys ignored; a job of the wrong type refused */
    rq.job = 0;
    n = czk_schema_encode(&czk_schema_status_request, &rq, body, sizeof(body), &e);
    CHECK(n == 1 && body[0] == 0x80);
    rq.job = t_range(1, UINT64_MAX);
    n = czk_schema_encode(&czk_schema_status_request, &rq, body, sizeof(body), &e);
    CHECK(n > 0 && czk_schema_decode(&czk_schema_status_request, body, (size_t)n, &rq2, &e) == 0 && rq2.job == rq.job);
    {
        static const uint8_t extra[] = {0x82, 0xa3, 'j', 'o', 'b', 0x07, 0xa1, 'x', 0xc3};
        static const uint8_t badjob[] = {0x81, 0xa3, 'j', 'o', 'b', 0xa1, '7'};
        CHECK(czk_schema_decode(&czk_schema_status_request, extra, sizeof(extra), &rq2, &e) == 0 && rq2.job == 7);
        expect_body_reject(&czk_schema_status_request, badjob, sizeof(badjob), &rq2, "a string job", "job");
    }

    /* reply: random round trips, canonical re-encoding, every truncation refused */
    for (int it = 0; it < 200; it++) {
        rand_reply(&g_reply, it < 20 ? 64 : 8, it % 2 ? 100 : 10);
        n = czk_schema_encode(&czk_schema_status_reply, &g_reply, body, sizeof(body), &e);
        if (n == -EMSGSIZE)
            continue; /* large draws may not fit one record: the encoder says so */
        if (n < 0)
            fprintf(stderr, "encode STATUS_REPLY: %s\n", e.msg);
        CHECK(n > 0);
        CHECK(czk_msg_precheck(body, (size_t)n, CZK_MSG_MAX_DEPTH - 1, &e) == 0); /* fits in a record's body */
        CHECK(czk_schema_decode(&czk_schema_status_reply, body, (size_t)n, &g_reply2, &e) == 0);
        CHECK(!memcmp(&g_reply, &g_reply2, sizeof(g_reply)));
        CHECK(czk_schema_encode(&czk_schema_status_reply, &g_reply2, body2, sizeof(body2), &e) == n &&
              !memcmp(body, body2, (size_t)n));
        if (it < 5)
            for (int cut = 0; cut < n; cut += n > 3000 ? 31 : 1) {
                int r = czk_schema_decode(&czk_schema_status_reply, body, (size_t)cut, &g_reply2, &e);
                CHECK(r == -EBADMSG && e.msg[0]);
            }
    }
    /* caps: 64 jobs and 64 pools fit; 65 are refused both ways */
    rand_reply(&g_reply, 0, 4);
    g_reply.n_active = CZK_STATUS_MAX_JOBS;
    g_reply.n_pools = CZK_STATUS_MAX_POOLS;
    for (uint32_t i = 0; i < CZK_STATUS_MAX_JOBS; i++)
        rand_job(&g_reply.active[i], 8);
    n = czk_schema_encode(&czk_schema_status_reply, &g_reply, body, sizeof(body), &e);
    CHECK(n > 0 && czk_schema_decode(&czk_schema_status_reply, body, (size_t)n, &g_reply2, &e) == 0);
    CHECK(g_reply2.n_active == CZK_STATUS_MAX_JOBS && g_reply2.active[63].id == g_reply.active[63].id);
    g_reply.n_active = CZK_STATUS_MAX_JOBS + 1;
    CHECK(czk_schema_encode(&czk_schema_status_reply, &g_reply, body, sizeof(body), &e) == -EINVAL &&
          strstr(e.msg, "active"));
    g_reply.n_active = 1;
    g_reply.active[0].lane = 8;
    CHECK(czk_schema_encode(&czk_schema_status_reply, &g_reply, body, sizeof(body), &e) == -EINVAL &&
          strstr(e.msg, "STATUS_REPLY.active[0].lane"));
    g_reply.active[0].lane = 0;
    g_reply.latency_s.gpu = 1.0 / 0.0;
    CHECK(czk_schema_encode(&czk_schema_status_reply, &g_reply, body, sizeof(body), &e) == -EINVAL);
    CHECK(czk_schema_encode(&czk_schema_status_reply, &g_reply, body, 10, &e) == -EMSGSIZE);

    /* lenient: missing keys read as zero with has_* clear; unknown keys skipped */
    n = (int)reply_built(RB_OK, body);
    CHECK(czk_schema_decode(&czk_schema_status_reply, body, (size_t)n, &g_reply2, &e) == 0);
    CHECK(g_reply2.synths == 2 && g_reply2.has_synths && !g_reply2.has_finalizer && !g_reply2.has_gpu_busy &&
          !g_reply2.has_job && !g_reply2.has_others && g_reply2.n_active == 3 && g_reply2.active[2].id == 3 &&
          g_reply2.active[2].lane == 2 && g_reply2.daemon[0] == 0 && g_reply2.n_gpus == 0);
    n = (int)reply_built(RB_UNKNOWN, body);
    CHECK(czk_schema_decode(&czk_schema_status_reply, body, (size_t)n, &g_reply2, &e) == 0 && g_reply2.n_active == 3);
    /* malformed: each refused with the key path */
    n = (int)reply_built(RB_LANE_STR, body);
    expect_body_reject(&czk_schema_status_reply, body, (size_t)n, &g_reply2, "a string lane", "active[1].lane");
    n = (int)reply_built(RB_LANE_RANGE, body);
    expect_body_reject(&czk_schema_status_reply, body, (size_t)n, &g_reply2, "lane 8", "active[1].lane");
    n = (int)reply_built(RB_TOO_MANY, body);
    expect_body_reject(&czk_schema_status_reply, body, (size_t)n, &g_reply2, "65 jobs", "active");
    n = (int)reply_built(RB_ELEM_NOT_MAP, body);
    expect_body_reject(&czk_schema_status_reply, body, (size_t)n, &g_reply2, "a job that is no map", "active[1]");
    n = (int)reply_built(RB_DUP_NESTED, body);
    expect_body_reject(&czk_schema_status_reply, body, (size_t)n, &g_reply2, "a repeated id", "repeats");
    n = (int)reply_built(RB_NAN, body);
    expect_body_reject(&czk_schema_status_reply, body, (size_t)n, &g_reply2, "a NaN", "gpu_busy_pct");
    {
        static const uint8_t notmap[] = {0x92, 0x01, 0x02};
        static const uint8_t jobs_arr[] = {0x81, 0xa4, 'j', 'o', 'b', 's', 0x90};
        expect_body_reject(&czk_schema_status_reply, notmap, sizeof(notmap), &g_reply2, "an array body", "map");
        expect_body_reject(&czk_schema_status_reply, jobs_arr, sizeof(jobs_arr), &g_reply2, "jobs as an array",
                           "STATUS_REPLY.jobs");
        expect_body_reject(&czk_schema_status_reply, body, 0, &g_reply2, "an empty body", NULL);
    }
}

/* ------------------------------------------------ journal payloads --- */

/*
 * The journal record encoder of gpud/table.c as it was before the schema
 * (kept verbatim in spirit: the same msgpack-c calls in the same order), the
 * reference for "older journals replay".
 */
static size_t old_rec(uint32_t type, const czk_jrec *r, uint8_t *out)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    size_t n;

#define OLD_KV_U64(k, v) (msgpack_pack_str_with_body(&pk, k, strlen(k)), msgpack_pack_uint64(&pk, v))
#define OLD_KV_STR(k, v) (msgpack_pack_str_with_body(&pk, k, strlen(k)), msgpack_pack_str_with_body(&pk, v, strlen(v)))
    if (type == CZK_JREC_PROBE) {
        static const uint8_t probe[] = {0x81, 0xa5, 'p', 'r', 'o', 'b', 'e', 0x01}; /* {"probe": 1} */
        memcpy(out, probe, sizeof(probe));
        return sizeof(probe);
    }
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    switch (type) {
    case CZK_JREC_ACCEPT:
        msgpack_pack_map(&pk, r->wsha.len ? 8 : 7);
        OLD_KV_U64("job", r->job);
        OLD_KV_STR("req", r->req);
        OLD_KV_STR("circ", r->circ);
        OLD_KV_U64("lane", r->lane);
        OLD_KV_U64("nparts", r->nparts);
        OLD_KV_U64("uid", r->uid);
        OLD_KV_U64("tsub", r->tsub);
        if (r->wsha.len) {
            msgpack_pack_str_with_body(&pk, "wsha", 4);
            msgpack_pack_bin_with_body(&pk, r->wsha.ptr, (size_t)r->nparts * 32);
        }
        break;
    case CZK_JREC_DONE:
        msgpack_pack_map(&pk, 3);
        OLD_KV_U64("job", r->job);
        OLD_KV_U64("part", r->part);
        msgpack_pack_str_with_body(&pk, "status", 6);
        msgpack_pack_int32(&pk, r->status);
        break;
    default:
        msgpack_pack_map(&pk, 1);
        OLD_KV_U64("job", r->job);
        break;
    }
#undef OLD_KV_U64
#undef OLD_KV_STR
    n = sb.size;
    memcpy(out, sb.data, n);
    msgpack_sbuffer_destroy(&sb);
    return n;
}

static uint8_t wsha_store[253 * 32];

static void rand_jrec(uint32_t type, czk_jrec *r)
{
    memset(r, 0, sizeof(*r));
    if (type == CZK_JREC_PROBE) {
        r->probe = 1;
        return;
    }
    r->job = t_range(1, UINT64_MAX >> t_range(0, 63));
    if (type == CZK_JREC_ACCEPT) {
        rand_str(r->req, sizeof(r->req), CZK_MSG_REQID_MAX);
        rand_str(r->circ, sizeof(r->circ), CZK_MSG_CIRCUIT_NAME - 1);
        r->lane = (uint32_t)t_range(0, 2);
        r->nparts = (uint32_t)t_range(1, 253);
        r->uid = (uint32_t)t_rand64() >> t_range(0, 31);
        r->tsub = r64();
        if (t_range(0, 3)) {
            t_fill(wsha_store, (size_t)r->nparts * 32);
            r->wsha = (czk_bytes){wsha_store, r->nparts * 32};
        }
    } else if (type == CZK_JREC_DONE) {
        r->part = (uint32_t)t_range(0, 252);
        r->status = t_range(0, 1) ? -(int32_t)t_range(0, 4095) : (int32_t)t_rand64();
    }
}

static void check_journal_payloads(void)
{
    static uint8_t a[16384], b[16384];
    czk_error e = {0};
    czk_jrec r, d;

    CHECK(czk_jrec_schema(0) == NULL && czk_jrec_schema(CZK_JREC_TYPE_MAX + 1) == NULL);
    for (uint32_t type = 1; type <= CZK_JREC_TYPE_MAX; type++) {
        const czk_schema *s = czk_jrec_schema(type);
        CHECK(s && !strcmp(czk_schema_name(s), czk_jrec_type_name(type)));
        for (int it = 0; it < 300; it++) {
            size_t na;
            int nb;
            rand_jrec(type, &r);
            na = old_rec(type, &r, a);
            nb = czk_schema_encode(s, &r, b, sizeof(b), &e);
            if (nb < 0)
                fprintf(stderr, "encode %s: %s\n", czk_jrec_type_name(type), e.msg);
            /* the same bytes as the old encoder: older journals and newer ones are one format */
            CHECK(nb > 0 && (size_t)nb == na && !memcmp(a, b, na));
            CHECK(czk_schema_decode(s, a, na, &d, &e) == 0);
            CHECK(d.job == r.job && d.lane == r.lane && d.nparts == r.nparts && d.uid == r.uid && d.tsub == r.tsub &&
                  d.part == r.part && d.status == r.status && d.probe == r.probe && !strcmp(d.req, r.req) &&
                  !strcmp(d.circ, r.circ) && d.wsha.len == r.wsha.len &&
                  (!d.wsha.len || !memcmp(d.wsha.ptr, r.wsha.ptr, d.wsha.len)));
            CHECK(d.wsha.len == 0 || (d.wsha.ptr >= a && d.wsha.ptr + d.wsha.len <= a + na)); /* points into the input */
            for (size_t cut = 0; it < 2 && cut < na; cut++)
                CHECK(czk_schema_decode(s, a, cut, &d, &e) == -EBADMSG);
        }
    }
    /* tolerated: keys in another order, a key a newer gpud may add */
    {
        msgpack_sbuffer sb;
        msgpack_packer pk;
        msgpack_sbuffer_init(&sb);
        msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
        msgpack_pack_map(&pk, 4);
        pk_s(&pk, "status"), msgpack_pack_int32(&pk, -5);
        pk_s(&pk, "newer"), pk_s(&pk, "x");
        pk_s(&pk, "part"), msgpack_pack_uint32(&pk, 3);
        pk_s(&pk, "job"), msgpack_pack_uint64(&pk, 77);
        CHECK(czk_schema_decode(czk_jrec_schema(CZK_JREC_DONE), (const uint8_t *)sb.data, sb.size, &d, &e) == 0);
        CHECK(d.job == 77 && d.part == 3 && d.status == -5);
        msgpack_sbuffer_destroy(&sb);
    }
    /* refused: a missing key, job 0, a string where a number belongs, a second "job" */
    {
        static const uint8_t nojob[] = {0x81, 0xa4, 'p', 'a', 'r', 't', 0x01};
        static const uint8_t job0[] = {0x81, 0xa3, 'j', 'o', 'b', 0x00};
        static const uint8_t jobstr[] = {0x81, 0xa3, 'j', 'o', 'b', 0xa1, '1'};
        static const uint8_t jobdup[] = {0x82, 0xa3, 'j', 'o', 'b', 0x01, 0xa3, 'j', 'o', 'b', 0x02};
        static const uint8_t probe2[] = {0x81, 0xa5, 'p', 'r', 'o', 'b', 'e', 0x02};
        const czk_schema *c = czk_jrec_schema(CZK_JREC_COMPLETE);
        expect_body_reject(czk_jrec_schema(CZK_JREC_DONE), nojob, sizeof(nojob), &d, "DONE without job", "job");
        expect_body_reject(c, job0, sizeof(job0), &d, "job 0", "job");
        expect_body_reject(c, jobstr, sizeof(jobstr), &d, "a string job", "job");
        expect_body_reject(c, jobdup, sizeof(jobdup), &d, "job twice", "repeats");
        expect_body_reject(czk_jrec_schema(CZK_JREC_PROBE), probe2, sizeof(probe2), &d, "probe 2", "probe");
        rand_jrec(CZK_JREC_ACCEPT, &r);
        r.uid = 0;
        CHECK(czk_schema_encode(czk_jrec_schema(CZK_JREC_ACCEPT), &r, a, sizeof(a), &e) > 0);
        r.job = 0;
        CHECK(czk_schema_encode(czk_jrec_schema(CZK_JREC_ACCEPT), &r, a, sizeof(a), &e) == -EINVAL);
    }
}

/* `test_ipc_msg --write-corpus DIR`: the seeds committed in tests/ipc/corpus/ */
static int write_corpus(const char *dir)
{
    static const uint8_t bad[][8] = {{0xdd, 0xff, 0x00, 0x00, 0x00}, {0xdf, 0xff, 0xff, 0xff, 0xff},
                                     {0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x91, 0x01},
                                     {0x81, 0xa1, 't', 0xd4, 0x01, 0x00}};
    char path[512];
    czk_error e;
    czk_msg m;
    FILE *f;
    int n;

    for (uint32_t type = 1; type <= CZK_MSG_TYPE_MAX; type++)
        for (int k = 0; k < 2; k++) {
            int tries = 0;
            do { /* keep seeds small: draw until the record is at most 4 KiB */
                gen(type, &m);
                n = czk_msg_encode(rec, sizeof(rec), &m, &e);
                CHECK(n > 0);
            } while (n > 4096 && ++tries < 1000);
            if (n > 4096)
                continue;
            snprintf(path, sizeof(path), "%s/%s-%d", dir, czk_msg_type_name(type), k);
            f = fopen(path, "wb");
            CHECK(f && fwrite(rec, 1, (size_t)n, f) == (size_t)n);
            fclose(f);
        }
    /* the typed bodies and journal payloads alone (a harness that also runs
     * czk_schema_decode starts from them) */
    for (int k = 0; k < 2; k++) {
        n = gen_status_reply_body(rec, 4096, &e);
        CHECK(n > 0);
        snprintf(path, sizeof(path), "%s/STATUS_REPLY_BODY-%d", dir, k);
        f = fopen(path, "wb");
        CHECK(f && fwrite(rec, 1, (size_t)n, f) == (size_t)n);
        fclose(f);
    }
    for (uint32_t type = 1; type <= CZK_JREC_TYPE_MAX; type++) {
        czk_jrec r;
        rand_jrec(type, &r);
        if (type == CZK_JREC_ACCEPT)
            r.nparts = 2, r.wsha.len = r.wsha.len ? 64 : 0;
        n = czk_schema_encode(czk_jrec_schema(type), &r, rec, sizeof(rec), &e);
        CHECK(n > 0);
        snprintf(path, sizeof(path), "%s/JREC_%s-0", dir, czk_jrec_type_name(type));
        f = fopen(path, "wb");
        CHECK(f && fwrite(rec, 1, (size_t)n, f) == (size_t)n);
        fclose(f);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        snprintf(path, sizeof(path), "%s/bad-%zu", dir, i);
        f = fopen(path, "wb");
        CHECK(f && fwrite(bad[i], 1, sizeof(bad[i]), f) == sizeof(bad[i]));
        fclose(f);
    }
    return 0;
}

int main(int argc, char **argv)
{
    czk_error e = {0};
    czk_msg m, d;
    int n;

    t_seed("test_ipc_msg");
    if (argc == 3 && !strcmp(argv[1], "--write-corpus"))
        return write_corpus(argv[2]);

    /* 1. random round trips of every type */
    for (uint32_t type = 1; type <= CZK_MSG_TYPE_MAX; type++) {
        for (int it = 0; it < 300; it++) {
            gen(type, &m);
            n = czk_msg_encode(rec, sizeof(rec), &m, &e);
            if (n < 0)
                fprintf(stderr, "encode %s: %s\n", czk_msg_type_name(type), e.msg);
            CHECK(n > 0 && (size_t)n <= CZK_MSG_MAX_RECORD);
            CHECK(czk_msg_decode(rec, (size_t)n, &d, &e) == 0);
            check_equal(&m, &d);
            /* canonical: re-encoding the decoded message gives the same bytes */
            CHECK(czk_msg_encode(rec2, sizeof(rec2), &d, &e) == n && !memcmp(rec, rec2, (size_t)n));
            /* independent check: msgpack-c sees one map with t and v */
            {
                msgpack_unpacked up;
                size_t off = 0;
                int seen = 0;
                msgpack_unpacked_init(&up);
                CHECK(msgpack_unpack_next(&up, (const char *)rec, (size_t)n, &off) == MSGPACK_UNPACK_SUCCESS);
                CHECK(off == (size_t)n && up.data.type == MSGPACK_OBJECT_MAP);
                for (uint32_t i = 0; i < up.data.via.map.size; i++) {
                    msgpack_object_kv *kv = &up.data.via.map.ptr[i];
                    if (kv->key.via.str.size == 1 && kv->key.via.str.ptr[0] == 't') {
                        CHECK(kv->val.via.u64 == type);
                        seen |= 1;
                    }
                    if (kv->key.via.str.size == 1 && kv->key.via.str.ptr[0] == 'v') {
                        CHECK(kv->val.via.u64 == CZK_PROTO_VERSION);
                        seen |= 2;
                    }
                }
                CHECK(seen == 3);
                msgpack_unpacked_destroy(&up);
            }
            /* every proper prefix is rejected cleanly */
            if (it < 3)
                for (int cut = 0; cut < n; cut += (n > 2000 ? 97 : 1))
                    expect_reject(rec, (size_t)cut, "a truncated record");
            /* random corruption never crashes; what decodes re-encodes */
            for (int k = 0; k < 20; k++) {
                memcpy(rec2, rec, (size_t)n);
                rec2[t_range(0, (uint64_t)n - 1)] ^= (uint8_t)t_range(1, 255);
                if (czk_msg_decode(rec2, (size_t)n, &d, &e) == 0)
                    CHECK(czk_msg_encode(rec, sizeof(rec), &d, &e) > 0);
                else
                    CHECK(e.msg[0] != 0);
                CHECK(czk_msg_encode(rec, sizeof(rec), &m, &e) == n); /* restore rec */
            }
        }
    }

    /* 2. typed wrappers and a type mismatch */
    {
        czk_msg_ready r = {.pool_id = 1, .slot = 5, .generation = 7, .domain_size = 1 << 20, .n_vars = 12345, .data_len = 99};
        czk_msg_ready r2;
        czk_msg_release rl;
        n = czk_msg_encode_ready(rec, sizeof(rec), &r, &e);
        CHECK(n > 0);
        CHECK(czk_msg_decode_ready(rec, (size_t)n, &r2, &e) == 0 && !memcmp(&r, &r2, sizeof(r)));
        CHECK(czk_msg_decode_release(rec, (size_t)n, &rl, &e) == -EBADMSG && strstr(e.msg, "READY"));
    }

    /* 3. a record built by msgpack-c with keys in another order decodes */
    n = (int)build(CZK_MSG_RELEASE, CZK_PROTO_VERSION, 3, ex_release, rec);
    CHECK(czk_msg_decode(rec, (size_t)n, &d, &e) == 0);
    CHECK(d.type == CZK_MSG_RELEASE && d.u.release.slot == 17 && d.u.release.generation == 99 && d.u.release.pool_id == 3);

    /* 4. schema violations */
    n = (int)build(CZK_MSG_RELEASE, CZK_PROTO_VERSION + 1, 3, ex_release, rec);
    CHECK(czk_msg_decode(rec, (size_t)n, &d, &e) == -EPROTO);
    n = (int)build(CZK_MSG_RELEASE, CZK_PROTO_VERSION, 4, ex_release_dup, rec);
    expect_reject(rec, (size_t)n, "a duplicate key");
    n = (int)build(CZK_MSG_RELEASE, CZK_PROTO_VERSION, 4, ex_release_unknown, rec);
    expect_reject(rec, (size_t)n, "an unknown key");
    n = (int)build(CZK_MSG_RELEASE, CZK_PROTO_VERSION, 2, ex_release_missing, rec);
    expect_reject(rec, (size_t)n, "a missing key");
    n = (int)build(CZK_MSG_RELEASE, CZK_PROTO_VERSION, 3, ex_release_range, rec);
    expect_reject(rec, (size_t)n, "a slot out of range");
    n = (int)build(CZK_MSG_RELEASE, CZK_PROTO_VERSION, 3, ex_release_neg, rec);
    expect_reject(rec, (size_t)n, "a negative slot");
    n = (int)build(CZK_MSG_RELEASE, CZK_PROTO_VERSION, 3, ex_release_type, rec);
    expect_reject(rec, (size_t)n, "a string slot");
    n = (int)build(CZK_MSG_CANCEL, CZK_PROTO_VERSION, 1, ex_cancel_intkey, rec);
    expect_reject(rec, (size_t)n, "an integer key");
    check_hello_circuits();
    check_status_bodies();
    check_status_gpus();
    check_journal_payloads();
    check_fetch();
    n = (int)build(CZK_MSG_ERROR, CZK_PROTO_VERSION, 2, ex_error_nul, rec);
    expect_reject(rec, (size_t)n, "a string with NUL");
    n = (int)build(CZK_MSG_TYPE_MAX + 1, CZK_PROTO_VERSION, 0, NULL, rec);
    expect_reject(rec, (size_t)n, "an unknown type");

    /* 5. structural attacks, rejected before msgpack-c allocates */
    {
        static const uint8_t huge_array[] = {0xdd, 0xff, 0x00, 0x00, 0x00}; /* msgpack-c#1013 */
        static const uint8_t huge_map[] = {0xdf, 0xff, 0xff, 0xff, 0xff};
        static const uint8_t huge_str[] = {0x81, 0xa1, 't', 0xdb, 0x7f, 0xff, 0xff, 0xff};
        static const uint8_t ext[] = {0x81, 0xa1, 't', 0xd4, 0x01, 0x00};
        static const uint8_t notmap[] = {0x93, 0x01, 0x02, 0x03};
        uint8_t deep[200];
        expect_reject(huge_array, sizeof(huge_array), "a 4-billion element array");
        /* rejected by the pre-walk itself, before msgpack-c could allocate */
        CHECK(czk_msg_precheck(huge_array, sizeof(huge_array), 4, &e) == -EBADMSG && strstr(e.msg, "declares"));
        CHECK(czk_msg_precheck(huge_map, sizeof(huge_map), 4, &e) == -EBADMSG && strstr(e.msg, "declares"));
        expect_reject(huge_map, sizeof(huge_map), "a 4-billion entry map");
        expect_reject(huge_str, sizeof(huge_str), "a 2 GiB string header");
        expect_reject(ext, sizeof(ext), "an ext type");
        expect_reject(notmap, sizeof(notmap), "an array record");
        memset(deep, 0x91, sizeof(deep)); /* nested one-element arrays */
        deep[sizeof(deep) - 1] = 0x01;
        expect_reject(deep, sizeof(deep), "deep nesting");
        /* array16 chain: the known bypass of per-level checks */
        for (size_t i = 0; i + 3 <= sizeof(deep); i += 3)
            deep[i] = 0xdc, deep[i + 1] = 0x00, deep[i + 2] = 0x01;
        expect_reject(deep, sizeof(deep), "an array16 chain");
        CHECK(czk_msg_precheck(deep, sizeof(deep), 4, &e) == -EBADMSG && strstr(e.msg, "nesting"));
        /* over the record cap */
        gen(CZK_MSG_CANCEL, &m);
        n = czk_msg_encode(rec, sizeof(rec), &m, &e);
        expect_reject(rec, CZK_MSG_MAX_RECORD + 1, "a record over the cap");
        /* trailing bytes after a valid record */
        rec[n] = 0xc0;
        expect_reject(rec, (size_t)n + 1, "trailing bytes");
        expect_reject(rec, 0, "an empty record");
    }

    /* 6. encoder refuses out-of-range values and small buffers */
    gen(CZK_MSG_SUBMIT, &m);
    m.u.submit.priority = 8;
    CHECK(czk_msg_encode(rec, sizeof(rec), &m, &e) == -EINVAL && strstr(e.msg, "prio"));
    gen(CZK_MSG_SUBMIT, &m);
    m.u.submit.n_partitions = 0;
    CHECK(czk_msg_encode(rec, sizeof(rec), &m, &e) == -EINVAL);
    gen(CZK_MSG_ERROR, &m);
    memset(m.u.error.message, 'x', sizeof(m.u.error.message)); /* no NUL */
    CHECK(czk_msg_encode(rec, sizeof(rec), &m, &e) == -EINVAL);
    gen(CZK_MSG_READY, &m);
    CHECK(czk_msg_encode(rec, 10, &m, &e) == -EMSGSIZE);
    gen(CZK_MSG_STATUS, &m);
    m.u.status.body.ptr = (const uint8_t *)"\x93\x01\x02\x03";
    m.u.status.body.len = 4;
    CHECK(czk_msg_encode(rec, sizeof(rec), &m, &e) == -EINVAL); /* body must be a map */
    m.type = 0;
    CHECK(czk_msg_encode(rec, sizeof(rec), &m, &e) == -EINVAL);

    fprintf(stderr, "test_ipc_msg: ok\n");
    return 0;
}
