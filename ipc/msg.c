/*
 * msg.c — encoder and hardened decoder of the czk wire protocol (see msg.h).
 *
 * One schema table per message type lists its keys, their kinds and ranges;
 * the encoder and the decoder both walk that table.  Decoding is three
 * stages: a structural pre-walk of the raw bytes that allocates nothing
 * (czk_msg_precheck), the msgpack-c unpacker (whose allocation is now bounded
 * by the pre-walk: at most about 24 bytes per input byte), and the schema
 * check on the unpacked object.
 */
#include "ipc/msg.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <msgpack.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "ipc/layout.h"

/* ------------------------------------------------------------ schema --- */

enum fkind {
    F_U32,     /* unsigned, [min, max], stored as uint32_t */
    F_U64,     /* unsigned, [min, max], stored as uint64_t */
    F_I32,     /* signed, [smin, smax], stored as int32_t */
    F_DBL,     /* float64, finite, stored as double */
    F_STR,     /* UTF-8 text without NUL, copied into char[max] */
    F_BIN,     /* czk_bytes, len <= max */
    F_BINLIST, /* array of bin: czk_bytes[CZK_MSG_MAX_POINTS], count at aux */
    F_PAIRS,   /* RESYNC: array of [u32 slot, u64 generation]; off names the czk_msg_resync */
    F_MAPBIN,  /* bin holding one msgpack map (STATUS body), czk_bytes */
    F_CIRCS,   /* HELLO: array of [str name, bin(32) key id], count at aux */
    F_STRUCT,  /* a nested map described by sub, stored at off */
    F_ARRAY,   /* array of at most max maps described by sub, elements of esize bytes at off, count at aux */
};

typedef struct field {
    const char *key;
    uint8_t kind;
    uint8_t optional; /* omitted on encode when zero/empty (or has == 0); zero when absent */
    uint32_t off;     /* offset in the struct the schema describes */
    uint32_t aux;     /* F_BINLIST/F_CIRCS/F_ARRAY: offset of the uint32_t count */
    int64_t smin;     /* F_I32 lower bound; F_U32/F_U64 lower bound as well */
    uint64_t max;     /* upper bound, or byte capacity for F_STR/F_BIN, or item count */
    const struct czk_schema *sub; /* F_STRUCT/F_ARRAY */
    uint32_t esize;   /* F_ARRAY: bytes per element */
    uint32_t has;     /* 1 + offset of a uint8_t: set when the key was decoded; for an optional
                         field, encode writes the key only when it is set.  0: none */
} field;

/* A schema: one map.  Messages add "t" and "v" (czk_msg_encode/decode);
 * bodies and journal payloads are the map alone. */
struct czk_schema {
    const char *name;
    const field *fields; /* ends with a NULL key; at most 64 */
    size_t size;         /* of the struct, zeroed before decoding */
    uint32_t max_bytes;  /* encoded size cap */
    uint8_t open;        /* decode skips unknown and non-string keys */
    uint8_t lenient;     /* decode requires no key (absent: zero) */
};

#define OFF(path) ((uint32_t)offsetof(czk_msg, u.path))
#define U32(k, p, lo, hi) {.key = k, .kind = F_U32, .off = OFF(p), .smin = lo, .max = hi}
#define U64(k, p, lo, hi) {.key = k, .kind = F_U64, .off = OFF(p), .smin = lo, .max = hi}
#define U64_OPT(k, p, hi) {.key = k, .kind = F_U64, .optional = 1, .off = OFF(p), .max = hi}
#define U32_OPT(k, p, hi) {.key = k, .kind = F_U32, .optional = 1, .off = OFF(p), .max = hi}
#define I32(k, p, lo, hi) {.key = k, .kind = F_I32, .off = OFF(p), .smin = lo, .max = (uint64_t)(hi)}
#define STR(k, p) {.key = k, .kind = F_STR, .off = OFF(p), .max = sizeof(((czk_msg *)0)->u.p)}
#define STR_OPT(k, p) {.key = k, .kind = F_STR, .optional = 1, .off = OFF(p), .max = sizeof(((czk_msg *)0)->u.p)}
#define END {.key = NULL}

/* the same for a field of struct T (bodies and journal payloads) */
#define TOFF(T, m) ((uint32_t)offsetof(T, m))
#define TU32(T, k, m, lo, hi) {.key = k, .kind = F_U32, .off = TOFF(T, m), .smin = lo, .max = hi}
#define TU64(T, k, m, lo, hi) {.key = k, .kind = F_U64, .off = TOFF(T, m), .smin = lo, .max = hi}
#define TI32(T, k, m, lo, hi) {.key = k, .kind = F_I32, .off = TOFF(T, m), .smin = lo, .max = (uint64_t)(hi)}
#define TDBL(T, k, m) {.key = k, .kind = F_DBL, .off = TOFF(T, m)}
#define TSTR(T, k, m) {.key = k, .kind = F_STR, .off = TOFF(T, m), .max = sizeof(((T *)0)->m)}

#define U32MAX 0xffffffffull
#define U64MAX 0xffffffffffffffffull
#define SLOTMAX (CZK_POOL_MAX_SLOTS - 1)

static const field f_hello[] = {
    U32("role", hello.role, 1, CZK_ROLE_MAX),
    U32("pid", hello.pid, 1, INT32_MAX),
    U32("proto", hello.proto, 1, U32MAX),
    I32("node", hello.numa_node, -1, 1023),
    U32("inst", hello.instance, 0, U32MAX),
    STR_OPT("name", hello.name),
    {.key = "circs", .kind = F_CIRCS, .optional = 1, .off = OFF(hello.circuits), .aux = OFF(hello.n_circuits),
     .max = CZK_MSG_MAX_CIRCUITS},
    END};
static const field f_pool[] = {
    U32("pool", pool.pool_id, 0, U32MAX),
    I32("node", pool.numa_node, -1, 1023),
    U32("slots", pool.slot_count, 1, CZK_POOL_MAX_SLOTS),
    U32("layout", pool.layout_version, 1, U32MAX),
    U64("ssize", pool.slot_size, 1, 1ull << 40),
    U64("epoch", pool.epoch, 1, U64MAX),
    U64("total", pool.total_size, 1, 1ull << 48),
    END};
static const field f_assign[] = {
    U32("pool", assign.pool_id, 0, U32MAX),
    U32("slot", assign.slot, 0, SLOTMAX),
    U64("gen", assign.generation, 0, U32MAX),
    U64("job", assign.job_id, 1, U64MAX),
    U32("part", assign.partition, 0, U32MAX - 1),
    U32("circ", assign.circuit_id, 0, U32MAX),
    STR_OPT("spool", assign.spool),
    U64_OPT("lease", assign.lease_ms, U64MAX),
    END};
static const field f_ready[] = {
    U32("pool", ready.pool_id, 0, U32MAX),
    U32("slot", ready.slot, 0, SLOTMAX),
    U64("gen", ready.generation, 0, U32MAX),
    U64("dom", ready.domain_size, 0, 1ull << 40),
    U64("nvars", ready.n_vars, 0, 1ull << 40),
    U64("dlen", ready.data_len, 0, 1ull << 48),
    {.key = "status", .kind = F_I32, .optional = 1, .off = OFF(ready.status), .smin = -4095, .max = 0},
    STR_OPT("reason", ready.reason),
    END};
static const field f_release[] = {
    U32("pool", release.pool_id, 0, U32MAX),
    U32("slot", release.slot, 0, SLOTMAX),
    U64("gen", release.generation, 0, U32MAX),
    END};
static const field f_result[] = {
    U64("job", result.job_id, 1, U64MAX),
    U32("part", result.partition, 0, U32MAX - 1),
    {.key = "pts", .kind = F_BINLIST, .off = OFF(result.points), .aux = OFF(result.n_points),
     .max = CZK_MSG_MAX_POINT_BYTES},
    {.key = "pub", .kind = F_BIN, .optional = 1, .off = OFF(result.publics), .max = CZK_MSG_MAX_RECORD},
    U32_OPT("circ", result.circuit_id, U32MAX),
    U32_OPT("nparts", result.n_partitions, U32MAX),
    STR_OPT("cname", result.circuit),
    U64_OPT("tsub", result.submit_ns, U64MAX),
    U64_OPT("tq", result.queue_ns, U64MAX),
    U64_OPT("ts", result.synth_ns, U64MAX),
    U64_OPT("tg", result.gpu_ns, U64MAX),
    END};
static const field f_done[] = {
    U64("job", done.job_id, 1, U64MAX),
    U32("part", done.partition, 0, U32MAX - 1),
    I32("status", done.status, -4095, 0),
    STR_OPT("reason", done.reason),
    {.key = "proof", .kind = F_BIN, .optional = 1, .off = OFF(done.proof), .max = CZK_MSG_MAX_RECORD},
    {.key = "pubj", .kind = F_BIN, .optional = 1, .off = OFF(done.publics), .max = CZK_MSG_MAX_RECORD},
    END};
static const field f_submit[] = {
    STR("req", submit.request_id),
    STR("circ", submit.circuit),
    U32("prio", submit.priority, 0, 7),
    U32("nparts", submit.n_partitions, 1, 1u << 20),
    U32("nfds", submit.n_fds, 0, CZK_MSG_MAX_FDS),
    U32_OPT("flags", submit.flags, U32MAX),
    END};
static const field f_accepted[] = {
    STR("req", accepted.request_id),
    U64("job", accepted.job_id, 1, U64MAX),
    U32_OPT("dup", accepted.duplicate, 1),
    END};
static const field f_rejected[] = {
    STR("req", rejected.request_id),
    I32("code", rejected.code, -4095, -1),
    STR_OPT("reason", rejected.reason),
    END};
static const field f_event[] = {
    U64("job", event.job_id, 1, U64MAX),
    U32("part", event.partition, 0, U32MAX),
    U32("stage", event.stage, 1, CZK_STAGE_MAX),
    I32("status", event.status, -4095, 0),
    U64_OPT("time", event.time_ns, U64MAX),
    STR_OPT("reason", event.reason),
    {.key = "proof", .kind = F_BIN, .optional = 1, .off = OFF(event.proof), .max = CZK_MSG_MAX_RECORD},
    {.key = "pubj", .kind = F_BIN, .optional = 1, .off = OFF(event.publics), .max = CZK_MSG_MAX_RECORD},
    END};
static const field f_status[] = {
    {.key = "body", .kind = F_MAPBIN, .optional = 1, .off = OFF(status.body), .max = CZK_MSG_MAX_RECORD},
    END};
static const field f_cancel[] = {
    U64("job", cancel.job_id, 1, U64MAX),
    END};
static const field f_error[] = {
    I32("code", error.code, -4095, -1),
    STR_OPT("msg", error.message),
    END};
static const field f_resync[] = {
    U32("pool", resync.pool_id, 0, U32MAX),
    {.key = "s", .kind = F_PAIRS, .off = OFF(resync), .max = CZK_MSG_MAX_RESYNC},
    END};
static const field f_watch[] = {
    U64("job", watch.job_id, 1, U64MAX),
    END};
static const field f_heartbeat[] = {
    U64("seq", heartbeat.seq, 0, U64MAX),
    U64_OPT("time", heartbeat.time_ns, U64MAX),
    END};
static const field f_fetch[] = {
    U64("job", fetch.job_id, 1, U64MAX),
    U32("part", fetch.partition, 0, U32MAX - 1),
    END};
static const field f_fetched[] = {
    U64("job", fetched.job_id, 1, U64MAX),
    U32("part", fetched.partition, 0, U32MAX - 1),
    U64("plen", fetched.proof_size, 0, 1ull << 48),
    U64("ulen", fetched.public_size, 0, 1ull << 48),
    END};

#define MSG_SCHEMA(NAME, f) {.name = NAME, .fields = f, .size = sizeof(czk_msg), .max_bytes = CZK_MSG_MAX_RECORD}
static const czk_schema schema[CZK_MSG_TYPE_MAX + 1] = {
    [CZK_MSG_HELLO] = MSG_SCHEMA("HELLO", f_hello),
    [CZK_MSG_POOL] = MSG_SCHEMA("POOL", f_pool),
    [CZK_MSG_ASSIGN] = MSG_SCHEMA("ASSIGN", f_assign),
    [CZK_MSG_READY] = MSG_SCHEMA("READY", f_ready),
    [CZK_MSG_RELEASE] = MSG_SCHEMA("RELEASE", f_release),
    [CZK_MSG_RESULT] = MSG_SCHEMA("RESULT", f_result),
    [CZK_MSG_DONE] = MSG_SCHEMA("DONE", f_done),
    [CZK_MSG_SUBMIT] = MSG_SCHEMA("SUBMIT", f_submit),
    [CZK_MSG_ACCEPTED] = MSG_SCHEMA("ACCEPTED", f_accepted),
    [CZK_MSG_REJECTED] = MSG_SCHEMA("REJECTED", f_rejected),
    [CZK_MSG_EVENT] = MSG_SCHEMA("EVENT", f_event),
    [CZK_MSG_STATUS] = MSG_SCHEMA("STATUS", f_status),
    [CZK_MSG_STATUS_REPLY] = MSG_SCHEMA("STATUS_REPLY", f_status),
    [CZK_MSG_CANCEL] = MSG_SCHEMA("CANCEL", f_cancel),
    [CZK_MSG_ERROR] = MSG_SCHEMA("ERROR", f_error),
    [CZK_MSG_RESYNC] = MSG_SCHEMA("RESYNC", f_resync),
    [CZK_MSG_WATCH] = MSG_SCHEMA("WATCH", f_watch),
    [CZK_MSG_HEARTBEAT] = MSG_SCHEMA("HEARTBEAT", f_heartbeat),
    [CZK_MSG_FETCH] = MSG_SCHEMA("FETCH", f_fetch),
    [CZK_MSG_FETCHED] = MSG_SCHEMA("FETCHED", f_fetched),
};

/* ------------------------------------------------- STATUS bodies --- */

static const field f_status_request[] = {
    {.key = "job", .kind = F_U64, .optional = 1, .off = TOFF(czk_status_request, job), .max = U64MAX},
    END};
const czk_schema czk_schema_status_request = {.name = "STATUS body", .fields = f_status_request,
                                              .size = sizeof(czk_status_request),
                                              .max_bytes = CZK_MSG_MAX_RECORD, .open = 1};

#define SJ czk_status_job
static const field f_status_job[] = {
    TU64(SJ, "id", id, 1, U64MAX),
    TSTR(SJ, "state", state),
    TSTR(SJ, "circuit", circuit),
    TSTR(SJ, "request", request),
    TU32(SJ, "lane", lane, 0, 7),
    TU32(SJ, "partitions", partitions, 0, U32MAX),
    TU32(SJ, "done", done, 0, U32MAX),
    TU32(SJ, "failed", failed, 0, U32MAX),
    TU32(SJ, "queued", queued, 0, U32MAX),
    TU32(SJ, "synth", synth, 0, U32MAX),
    TU32(SJ, "gpu", gpu, 0, U32MAX),
    TU32(SJ, "finalize", finalize, 0, U32MAX),
    {.key = "reason", .kind = F_STR, .optional = 1, .off = TOFF(SJ, reason), .max = sizeof(((SJ *)0)->reason)},
    END};
static const czk_schema s_status_job = {.name = "job", .fields = f_status_job, .size = sizeof(SJ),
                                        .max_bytes = CZK_MSG_MAX_RECORD, .open = 1, .lenient = 1};
#undef SJ

#define SP czk_status_pool
static const field f_status_pool[] = {
    TU32(SP, "id", id, 0, U32MAX),
    TI32(SP, "node", node, -1, 1023),
    TU32(SP, "slots", slots, 0, CZK_POOL_MAX_SLOTS),
    TU32(SP, "in_use", in_use, 0, CZK_POOL_MAX_SLOTS),
    TU32(SP, "quarantined", quarantined, 0, CZK_POOL_MAX_SLOTS),
    TU32(SP, "hugetlb", hugetlb, 0, 1),
    END};
static const czk_schema s_status_pool = {.name = "pool", .fields = f_status_pool, .size = sizeof(SP),
                                         .max_bytes = CZK_MSG_MAX_RECORD, .open = 1, .lenient = 1};
#undef SP

#define SC czk_status_circuit
static const field f_status_circuit[] = {
    TSTR(SC, "name", name),
    {.key = "key_id", .kind = F_STR, .optional = 1, .off = TOFF(SC, key_id), .max = sizeof(((SC *)0)->key_id)},
    {.key = "curve", .kind = F_STR, .optional = 1, .off = TOFF(SC, curve), .max = sizeof(((SC *)0)->curve)},
    TSTR(SC, "state", state),
    TU32(SC, "progress", progress, 0, 100),
    TDBL(SC, "load_s", load_s),
    {.key = "reason", .kind = F_STR, .optional = 1, .off = TOFF(SC, reason), .max = sizeof(((SC *)0)->reason)},
    END};
static const czk_schema s_status_circuit = {.name = "circuit", .fields = f_status_circuit, .size = sizeof(SC),
                                            .max_bytes = CZK_MSG_MAX_RECORD, .open = 1, .lenient = 1};
#undef SC

#define SG czk_status_gpu
static const field f_status_gpu[] = {
    TU32(SG, "index", index, 0, U32MAX),
    TSTR(SG, "state", state),
    TU32(SG, "contexts", contexts, 0, U32MAX),
    TDBL(SG, "busy_pct", busy_pct),
    TU64(SG, "max_gap_ms", max_gap_ms, 0, U64MAX),
    TU64(SG, "done", done, 0, U64MAX),
    TU64(SG, "failed", failed, 0, U64MAX),
    TU64(SG, "requeued", requeued, 0, U64MAX),
    {.key = "mem_used", .kind = F_U64, .optional = 1, .off = TOFF(SG, mem_used), .max = U64MAX,
     .has = 1u + TOFF(SG, has_mem)},
    {.key = "mem_total", .kind = F_U64, .optional = 1, .off = TOFF(SG, mem_total), .max = U64MAX,
     .has = 1u + TOFF(SG, has_mem)},
    {.key = "reason", .kind = F_STR, .optional = 1, .off = TOFF(SG, reason), .max = sizeof(((SG *)0)->reason)},
    {.key = "numa", .kind = F_I32, .optional = 1, .off = TOFF(SG, numa), .smin = 0, .max = 1023,
     .has = 1u + TOFF(SG, has_numa)},
    END};
static const czk_schema s_status_gpu = {.name = "gpu", .fields = f_status_gpu, .size = sizeof(SG),
                                        .max_bytes = CZK_MSG_MAX_RECORD, .open = 1, .lenient = 1};
#undef SG

#define SR czk_status_reply
static const field f_status_jobs[] = {
    TU64(SR, "active", jobs.active, 0, U64MAX),
    TU64(SR, "complete", jobs.complete, 0, U64MAX),
    TU64(SR, "failed", jobs.failed, 0, U64MAX),
    TU64(SR, "cancelled", jobs.cancelled, 0, U64MAX),
    END};
static const field f_status_parts[] = {
    TU64(SR, "queued", partitions.queued, 0, U64MAX),
    TU64(SR, "synth", partitions.synth, 0, U64MAX),
    TU64(SR, "gpu", partitions.gpu, 0, U64MAX),
    TU64(SR, "finalize", partitions.finalize, 0, U64MAX),
    TU64(SR, "lanes", partitions.lanes, 0, 8),
    END};
static const field f_status_latency[] = {
    TDBL(SR, "queue", latency_s.queue),
    TDBL(SR, "synth", latency_s.synth),
    TDBL(SR, "gpu", latency_s.gpu),
    TDBL(SR, "finalize", latency_s.finalize),
    END};
static const field f_status_others[] = {
    TU64(SR, "jobs", others.jobs, 0, U64MAX),
    TU64(SR, "partitions", others.partitions, 0, U64MAX),
    END};
/* the nested maps of the reply's own members: offsets stay those of czk_status_reply */
#define SUBMAP(nm, f) {.name = nm, .fields = f, .size = 0, .max_bytes = CZK_MSG_MAX_RECORD, .open = 1, .lenient = 1}
static const czk_schema s_status_jobs = SUBMAP("jobs", f_status_jobs);
static const czk_schema s_status_parts = SUBMAP("partitions", f_status_parts);
static const czk_schema s_status_latency = SUBMAP("latency_s", f_status_latency);
static const czk_schema s_status_others = SUBMAP("others", f_status_others);
#define HAS(m) (1u + TOFF(SR, m))
static const field f_status_reply[] = {
    TSTR(SR, "daemon", daemon),
    {.key = "state", .kind = F_STR, .optional = 1, .off = TOFF(SR, state), .max = sizeof(((SR *)0)->state)},
    {.key = "state_dir", .kind = F_STR, .off = TOFF(SR, state_dir), .max = sizeof(((SR *)0)->state_dir),
     .has = HAS(has_state_dir)},
    TSTR(SR, "backend", backend),
    {.key = "jobs", .kind = F_STRUCT, .off = 0, .sub = &s_status_jobs},
    {.key = "partitions", .kind = F_STRUCT, .off = 0, .sub = &s_status_parts},
    {.key = "pools", .kind = F_ARRAY, .off = TOFF(SR, pools), .aux = TOFF(SR, n_pools), .max = CZK_STATUS_MAX_POOLS,
     .sub = &s_status_pool, .esize = sizeof(czk_status_pool)},
    {.key = "latency_s", .kind = F_STRUCT, .off = 0, .sub = &s_status_latency},
    TU64(SR, "proofs_per_minute", proofs_per_minute, 0, U64MAX),
    {.key = "gpu_busy_pct", .kind = F_DBL, .off = TOFF(SR, gpu_busy_pct), .has = HAS(has_gpu_busy)},
    TU64(SR, "gpu_max_gap_ms", gpu_max_gap_ms, 0, U64MAX),
    TU64(SR, "proofs_total", proofs_total, 0, U64MAX),
    TU64(SR, "failures_total", failures_total, 0, U64MAX),
    TU64(SR, "synth_timeouts_total", synth_timeouts_total, 0, U64MAX),
    TU64(SR, "result_resends_total", result_resends_total, 0, U64MAX),
    {.key = "synths", .kind = F_U32, .off = TOFF(SR, synths), .max = U32MAX, .has = HAS(has_synths)},
    {.key = "finalizer", .kind = F_U32, .off = TOFF(SR, finalizer), .max = 1, .has = HAS(has_finalizer)},
    {.key = "active", .kind = F_ARRAY, .off = TOFF(SR, active), .aux = TOFF(SR, n_active),
     .max = CZK_STATUS_MAX_JOBS, .sub = &s_status_job, .esize = sizeof(czk_status_job)},
    {.key = "others", .kind = F_STRUCT, .optional = 1, .off = 0, .sub = &s_status_others, .has = HAS(has_others)},
    {.key = "job", .kind = F_STRUCT, .optional = 1, .off = TOFF(SR, job), .sub = &s_status_job, .has = HAS(has_job)},
    {.key = "circuits", .kind = F_ARRAY, .optional = 1, .off = TOFF(SR, circuits), .aux = TOFF(SR, n_circuits),
     .max = CZK_STATUS_MAX_CIRCUITS, .sub = &s_status_circuit, .esize = sizeof(czk_status_circuit)},
    {.key = "gpus", .kind = F_ARRAY, .optional = 1, .off = TOFF(SR, gpus), .aux = TOFF(SR, n_gpus),
     .max = CZK_STATUS_MAX_GPUS, .sub = &s_status_gpu, .esize = sizeof(czk_status_gpu)},
    END};
#undef HAS
#undef SR
const czk_schema czk_schema_status_reply = {.name = "STATUS_REPLY", .fields = f_status_reply,
                                            .size = sizeof(czk_status_reply), .max_bytes = CZK_MSG_MAX_RECORD,
                                            .open = 1, .lenient = 1};

/* -------------------------------------------------- journal payloads --- */

#define JR czk_jrec
static const field f_jrec_accept[] = {
    TU64(JR, "job", job, 1, U64MAX),
    TSTR(JR, "req", req),
    TSTR(JR, "circ", circ),
    TU32(JR, "lane", lane, 0, 7),
    TU32(JR, "nparts", nparts, 1, CZK_JREC_MAX_PARTS),
    TU32(JR, "uid", uid, 0, U32MAX),
    TU64(JR, "tsub", tsub, 0, U64MAX),
    {.key = "wsha", .kind = F_BIN, .optional = 1, .off = TOFF(JR, wsha), .max = CZK_JREC_MAX_PARTS * 32ull},
    END};
static const field f_jrec_done[] = {
    TU64(JR, "job", job, 1, U64MAX),
    TU32(JR, "part", part, 0, U32MAX - 1),
    TI32(JR, "status", status, INT32_MIN, INT32_MAX),
    END};
static const field f_jrec_job[] = {
    TU64(JR, "job", job, 1, U64MAX),
    END};
static const field f_jrec_probe[] = {
    TU32(JR, "probe", probe, 1, 1),
    END};
#undef JR
#define JREC_SCHEMA(NAME, f) \
    {.name = NAME, .fields = f, .size = sizeof(czk_jrec), .max_bytes = CZK_JOURNAL_MAX_PAYLOAD, .open = 1}
static const czk_schema jrec_schema[CZK_JREC_TYPE_MAX + 1] = {
    [CZK_JREC_ACCEPT] = JREC_SCHEMA("ACCEPT", f_jrec_accept),
    [CZK_JREC_DONE] = JREC_SCHEMA("DONE", f_jrec_done),
    [CZK_JREC_COMPLETE] = JREC_SCHEMA("COMPLETE", f_jrec_job),
    [CZK_JREC_CANCEL] = JREC_SCHEMA("CANCEL", f_jrec_job),
    [CZK_JREC_PROBE] = JREC_SCHEMA("PROBE", f_jrec_probe),
};

const czk_schema *czk_jrec_schema(uint32_t type)
{
    return type >= 1 && type <= CZK_JREC_TYPE_MAX ? &jrec_schema[type] : NULL;
}

const char *czk_jrec_type_name(uint32_t type)
{
    return type >= 1 && type <= CZK_JREC_TYPE_MAX ? jrec_schema[type].name : "?";
}

const char *czk_schema_name(const czk_schema *s) { return s->name; }

const char *czk_msg_type_name(uint32_t type)
{
    if (type == 0 || type > CZK_MSG_TYPE_MAX)
        return "?";
    return schema[type].name;
}

int czk_msg_fds(const czk_msg *m)
{
    switch (m->type) {
    case CZK_MSG_POOL: return 1;
    case CZK_MSG_SUBMIT: return (int)m->u.submit.n_fds;
    case CZK_MSG_FETCHED: return CZK_FETCHED_FDS;
    default: return 0;
    }
}

const char *czk_role_name(uint32_t role)
{
    static const char *names[] = {"?", "gpud", "synth", "finalizer", "client"};
    return role <= CZK_ROLE_MAX ? names[role] : "?";
}

int czk_msg_hello_circuit(const czk_msg_hello *h, const char *name)
{
    for (uint32_t i = 0; i < h->n_circuits && i < CZK_MSG_MAX_CIRCUITS; i++)
        if (!strncmp(h->circuits[i].name, name, sizeof(h->circuits[i].name)))
            return (int)i;
    return -1;
}

/* ---------------------------------------------------------- pre-walk --- */

static int rd_be(const uint8_t *p, size_t left, size_t n, uint64_t *v)
{
    uint64_t x = 0;
    if (left < n)
        return -1;
    for (size_t i = 0; i < n; i++)
        x = (x << 8) | p[i];
    *v = x;
    return 0;
}

static int precheck(const uint8_t *buf, size_t len, int max_depth, size_t cap, czk_error *err)
{
    uint64_t pending[CZK_MSG_MAX_DEPTH + 2];
    int depth = 0;
    size_t pos = 0;

    if (max_depth < 1 || max_depth > CZK_MSG_MAX_DEPTH)
        max_depth = CZK_MSG_MAX_DEPTH;
    if (len == 0)
        return czk_errorf(err, -EBADMSG, "empty record");
    if (len > cap)
        return czk_errorf(err, -EBADMSG, "record of %zu bytes exceeds the %zu byte cap", len, cap);
    pending[0] = 1;
    while (depth >= 0) {
        uint64_t n = 0, body = 0;
        int container = 0; /* 1 array, 2 map */
        uint8_t b;

        if (pending[depth] == 0) {
            depth--;
            continue;
        }
        pending[depth]--;
        if (pos >= len)
            return czk_errorf(err, -EBADMSG, "record truncated at byte %zu", pos);
        b = buf[pos++];
        if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
            /* fixint, nil, bool */
        } else if (b >= 0x80 && b <= 0x8f) {
            container = 2, n = b & 0x0f;
        } else if (b >= 0x90 && b <= 0x9f) {
            container = 1, n = b & 0x0f;
        } else if (b >= 0xa0 && b <= 0xbf) {
            body = b & 0x1f;
        } else {
            size_t w;
            switch (b) {
            case 0xcc: case 0xd0: body = 1; break;
            case 0xcd: case 0xd1: body = 2; break;
            case 0xca: case 0xce: case 0xd2: body = 4; break;
            case 0xcb: case 0xcf: case 0xd3: body = 8; break;
            case 0xc4: case 0xd9: w = 1; goto sized;
            case 0xc5: case 0xda: w = 2; goto sized;
            case 0xc6: case 0xdb: w = 4; goto sized;
            sized:
                if (rd_be(buf + pos, len - pos, w, &body))
                    return czk_errorf(err, -EBADMSG, "length header truncated at byte %zu", pos);
                pos += w;
                break;
            case 0xdc: case 0xde:
                if (rd_be(buf + pos, len - pos, 2, &n))
                    return czk_errorf(err, -EBADMSG, "container header truncated at byte %zu", pos);
                pos += 2;
                container = b == 0xdc ? 1 : 2;
                break;
            case 0xdd: case 0xdf:
                if (rd_be(buf + pos, len - pos, 4, &n))
                    return czk_errorf(err, -EBADMSG, "container header truncated at byte %zu", pos);
                pos += 4;
                container = b == 0xdd ? 1 : 2;
                break;
            default: /* 0xc1 (never used) and the ext family */
                return czk_errorf(err, -EBADMSG, "msgpack type byte 0x%02x at %zu not allowed", b, pos - 1);
            }
        }
        if (body > len - pos)
            return czk_errorf(err, -EBADMSG, "value at byte %zu claims %llu bytes, %zu left", pos,
                              (unsigned long long)body, len - pos);
        pos += body;
        if (container) {
            uint64_t elems = container == 2 ? 2 * n : n;
            /* every element takes at least one byte */
            if (elems > len - pos)
                return czk_errorf(err, -EBADMSG, "container at byte %zu declares %llu elements, %zu bytes left",
                                  pos, (unsigned long long)elems, len - pos);
            if (depth + 1 > max_depth)
                return czk_errorf(err, -EBADMSG, "nesting deeper than %d at byte %zu", max_depth, pos);
            if (elems) {
                depth++;
                pending[depth] = elems;
            }
        }
    }
    if (pos != len)
        return czk_errorf(err, -EBADMSG, "%zu trailing bytes after the record's object", len - pos);
    return 0;
}

int czk_msg_precheck(const uint8_t *buf, size_t len, int max_depth, czk_error *err)
{
    return precheck(buf, len, max_depth, CZK_MSG_MAX_RECORD, err);
}

static bool is_map_byte(uint8_t b) { return (b & 0xf0) == 0x80 || b == 0xde || b == 0xdf; }

/* ----------------------------------------------------------- encoder --- */

typedef struct wbuf {
    uint8_t *p;
    size_t len, cap;
} wbuf;

static int wbuf_write(void *data, const char *src, size_t n)
{
    wbuf *w = data;
    if (n > w->cap - w->len)
        return -1;
    memcpy(w->p + w->len, src, n);
    w->len += n;
    return 0;
}

static int pack_key(msgpack_packer *pk, const char *k)
{
    size_t n = strlen(k);
    return msgpack_pack_str(pk, n) || msgpack_pack_str_body(pk, k, n);
}

static int pack_bin(msgpack_packer *pk, const czk_bytes *b)
{
    return msgpack_pack_bin(pk, b->len) || (b->len && msgpack_pack_bin_body(pk, b->ptr, b->len));
}

/* the uint8_t presence flag of f in obj, or NULL */
static uint8_t *has_flag(const field *f, const void *obj)
{
    return f->has ? (uint8_t *)obj + f->has - 1 : NULL;
}

static bool field_empty(const field *f, const void *obj)
{
    const uint8_t *p = (const uint8_t *)obj + f->off;
    if (f->has)
        return *has_flag(f, obj) == 0;
    switch (f->kind) {
    case F_U32: return *(const uint32_t *)p == 0;
    case F_U64: return *(const uint64_t *)p == 0;
    case F_I32: return *(const int32_t *)p == 0;
    case F_DBL: return *(const double *)p == 0;
    case F_STR: return p[0] == 0;
    case F_BIN: case F_MAPBIN: return ((const czk_bytes *)p)->len == 0;
    case F_CIRCS: case F_BINLIST: case F_ARRAY: return *(const uint32_t *)((const uint8_t *)obj + f->aux) == 0;
    default: return false;
    }
}

static size_t count_keys(const czk_schema *s, const void *obj)
{
    size_t n = 0;
    for (const field *f = s->fields; f->key; f++)
        if (!(f->optional && field_empty(f, obj)))
            n++;
    return n;
}

static int enc_fields(msgpack_packer *pk, const czk_schema *s, const void *obj, const char *tn, czk_error *err);

/* one nested map: header and fields (path names it in errors) */
static int enc_map(msgpack_packer *pk, const czk_schema *s, const void *obj, const char *path, czk_error *err)
{
    if (msgpack_pack_map(pk, count_keys(s, obj)))
        return 1;
    return enc_fields(pk, s, obj, path, err);
}

/*
 * Writes the fields of s from obj.  Returns 0, 1 when the packer ran out of
 * room (the caller says -EMSGSIZE), or -EINVAL with err filled.
 */
static int enc_fields(msgpack_packer *pk, const czk_schema *s, const void *obj, const char *tn, czk_error *err)
{
    int bad = 0;

    for (const field *f = s->fields; f->key && !bad; f++) {
        const uint8_t *p = (const uint8_t *)obj + f->off;

        if (f->optional && field_empty(f, obj))
            continue;
        bad |= pack_key(pk, f->key);
        switch (f->kind) {
        case F_U32: {
            uint32_t v = *(const uint32_t *)p;
            if (v < (uint64_t)f->smin || v > f->max)
                return czk_errorf(err, -EINVAL, "%s.%s = %u out of range [%lld, %llu]", tn, f->key, v,
                                  (long long)f->smin, (unsigned long long)f->max);
            bad |= msgpack_pack_uint32(pk, v);
            break;
        }
        case F_U64: {
            uint64_t v = *(const uint64_t *)p;
            if (v < (uint64_t)f->smin || v > f->max)
                return czk_errorf(err, -EINVAL, "%s.%s = %llu out of range [%lld, %llu]", tn, f->key,
                                  (unsigned long long)v, (long long)f->smin, (unsigned long long)f->max);
            bad |= msgpack_pack_uint64(pk, v);
            break;
        }
        case F_I32: {
            int32_t v = *(const int32_t *)p;
            if (v < f->smin || v > (int64_t)f->max)
                return czk_errorf(err, -EINVAL, "%s.%s = %d out of range [%lld, %lld]", tn, f->key, v,
                                  (long long)f->smin, (long long)f->max);
            bad |= msgpack_pack_int32(pk, v);
            break;
        }
        case F_DBL: {
            double v = *(const double *)p;
            if (!isfinite(v))
                return czk_errorf(err, -EINVAL, "%s.%s is not a finite number", tn, f->key);
            bad |= msgpack_pack_double(pk, v);
            break;
        }
        case F_STR: {
            size_t n = strnlen((const char *)p, f->max);
            if (n >= f->max)
                return czk_errorf(err, -EINVAL, "%s.%s is not NUL-terminated within %llu bytes", tn, f->key,
                                  (unsigned long long)f->max);
            bad |= msgpack_pack_str(pk, n) || (n && msgpack_pack_str_body(pk, p, n));
            break;
        }
        case F_BIN: case F_MAPBIN: {
            const czk_bytes *b = (const czk_bytes *)p;
            if (b->len > f->max || (b->len && !b->ptr))
                return czk_errorf(err, -EINVAL, "%s.%s has a bad length %u", tn, f->key, b->len);
            if (f->kind == F_MAPBIN && b->len) {
                int r = czk_msg_precheck(b->ptr, b->len, CZK_MSG_MAX_DEPTH - 1, err);
                if (r < 0)
                    return czk_errorf(err, -EINVAL, "%s.%s is not one valid msgpack object", tn, f->key);
                if (!is_map_byte(b->ptr[0]))
                    return czk_errorf(err, -EINVAL, "%s.%s is not a msgpack map", tn, f->key);
            }
            bad |= pack_bin(pk, b);
            break;
        }
        case F_BINLIST: {
            const czk_bytes *b = (const czk_bytes *)p;
            uint32_t n = *(const uint32_t *)((const uint8_t *)obj + f->aux);
            if (n > CZK_MSG_MAX_POINTS)
                return czk_errorf(err, -EINVAL, "%s.%s has %u items, at most %u", tn, f->key, n, CZK_MSG_MAX_POINTS);
            bad |= msgpack_pack_array(pk, n);
            for (uint32_t i = 0; i < n && !bad; i++) {
                if (b[i].len > f->max || (b[i].len && !b[i].ptr))
                    return czk_errorf(err, -EINVAL, "%s.%s[%u] has a bad length %u", tn, f->key, i, b[i].len);
                bad |= pack_bin(pk, &b[i]);
            }
            break;
        }
        case F_PAIRS: {
            const czk_msg_resync *r = (const czk_msg_resync *)p;
            if (r->n > f->max)
                return czk_errorf(err, -EINVAL, "%s.%s has %u items, at most %llu", tn, f->key, r->n,
                                  (unsigned long long)f->max);
            bad |= msgpack_pack_array(pk, r->n);
            for (uint32_t i = 0; i < r->n && !bad; i++) {
                if (r->slots[i].slot > SLOTMAX || r->slots[i].generation > U32MAX)
                    return czk_errorf(err, -EINVAL, "%s.%s[%u] out of range", tn, f->key, i);
                bad |= msgpack_pack_array(pk, 2) || msgpack_pack_uint32(pk, r->slots[i].slot) ||
                       msgpack_pack_uint64(pk, r->slots[i].generation);
            }
            break;
        }
        case F_CIRCS: {
            const czk_msg_circuit *c = (const czk_msg_circuit *)p;
            uint32_t n = *(const uint32_t *)((const uint8_t *)obj + f->aux);
            if (n > f->max)
                return czk_errorf(err, -EINVAL, "%s.%s has %u items, at most %llu", tn, f->key, n,
                                  (unsigned long long)f->max);
            bad |= msgpack_pack_array(pk, n);
            for (uint32_t i = 0; i < n && !bad; i++) {
                size_t len = strnlen(c[i].name, sizeof(c[i].name));
                if (len == 0 || len >= sizeof(c[i].name))
                    return czk_errorf(err, -EINVAL, "%s.%s[%u] has an empty or unterminated name", tn, f->key, i);
                for (uint32_t j = 0; j < i; j++)
                    if (!strcmp(c[j].name, c[i].name))
                        return czk_errorf(err, -EINVAL, "%s.%s[%u] repeats the name of [%u]", tn, f->key, i, j);
                bad |= msgpack_pack_array(pk, 2) || msgpack_pack_str(pk, len) ||
                       msgpack_pack_str_body(pk, c[i].name, len) || msgpack_pack_bin(pk, CZK_MSG_KEY_ID) ||
                       msgpack_pack_bin_body(pk, c[i].key_id, CZK_MSG_KEY_ID);
            }
            break;
        }
        case F_STRUCT: {
            char path[128];
            int r;
            snprintf(path, sizeof(path), "%s.%s", tn, f->key);
            if ((r = enc_map(pk, f->sub, p, path, err)) < 0)
                return r;
            bad |= r;
            break;
        }
        case F_ARRAY: {
            uint32_t n = *(const uint32_t *)((const uint8_t *)obj + f->aux);
            if (n > f->max)
                return czk_errorf(err, -EINVAL, "%s.%s has %u items, at most %llu", tn, f->key, n,
                                  (unsigned long long)f->max);
            bad |= msgpack_pack_array(pk, n);
            for (uint32_t i = 0; i < n && !bad; i++) {
                char path[128];
                int r;
                snprintf(path, sizeof(path), "%s.%s[%u]", tn, f->key, i);
                if ((r = enc_map(pk, f->sub, p + (size_t)i * f->esize, path, err)) < 0)
                    return r;
                bad |= r;
            }
            break;
        }
        }
    }
    return bad ? 1 : 0;
}

int czk_msg_encode(uint8_t *buf, size_t cap, const czk_msg *m, czk_error *err)
{
    msgpack_packer pk;
    wbuf w = {buf, 0, cap < CZK_MSG_MAX_RECORD ? cap : CZK_MSG_MAX_RECORD};
    const czk_schema *s;
    int bad = 0;

    if (m->type == 0 || m->type > CZK_MSG_TYPE_MAX)
        return czk_errorf(err, -EINVAL, "cannot encode unknown message type %u", m->type);
    s = &schema[m->type];
    msgpack_packer_init(&pk, &w, wbuf_write);
    bad |= msgpack_pack_map(&pk, 2 + count_keys(s, m));
    bad |= pack_key(&pk, "t") || msgpack_pack_uint32(&pk, m->type);
    bad |= pack_key(&pk, "v") || msgpack_pack_uint32(&pk, CZK_PROTO_VERSION);
    if (!bad && (bad = enc_fields(&pk, s, m, s->name, err)) < 0)
        return bad;
    if (bad)
        return czk_errorf(err, -EMSGSIZE, "%s record does not fit in %zu bytes", s->name, w.cap);
    return (int)w.len;
}

int czk_schema_encode(const czk_schema *s, const void *obj, uint8_t *buf, size_t cap, czk_error *err)
{
    msgpack_packer pk;
    wbuf w = {buf, 0, cap < s->max_bytes ? cap : s->max_bytes};
    int bad;

    msgpack_packer_init(&pk, &w, wbuf_write);
    bad = enc_map(&pk, s, obj, s->name, err);
    if (bad < 0)
        return bad;
    if (bad)
        return czk_errorf(err, -EMSGSIZE, "%s does not fit in %zu bytes", s->name, w.cap);
    return (int)w.len;
}

/* ----------------------------------------------------------- decoder --- */

static bool key_is(const msgpack_object *k, const char *s)
{
    size_t n = strlen(s);
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n && memcmp(k->via.str.ptr, s, n) == 0;
}

static int get_uint(const msgpack_object *o, uint64_t *v)
{
    if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return -1;
    *v = o->via.u64;
    return 0;
}

static int dec_map(const czk_schema *s, const msgpack_object *map, void *obj, int skip_tv, const char *tn,
                   czk_error *err);

static int decode_field(const field *f, const msgpack_object *o, void *obj, const char *tn, czk_error *err)
{
    uint8_t *p = (uint8_t *)obj + f->off;
    uint64_t u;

    switch (f->kind) {
    case F_U32: case F_U64:
        if (get_uint(o, &u))
            return czk_errorf(err, -EBADMSG, "%s.%s is not an unsigned integer", tn, f->key);
        if (u < (uint64_t)f->smin || u > f->max)
            return czk_errorf(err, -EBADMSG, "%s.%s = %llu out of range [%lld, %llu]", tn, f->key,
                              (unsigned long long)u, (long long)f->smin, (unsigned long long)f->max);
        if (f->kind == F_U32)
            *(uint32_t *)p = (uint32_t)u;
        else
            *(uint64_t *)p = u;
        return 0;
    case F_I32: {
        int64_t v;
        if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
            v = o->via.u64 > INT64_MAX ? INT64_MAX : (int64_t)o->via.u64;
        else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
            v = o->via.i64;
        else
            return czk_errorf(err, -EBADMSG, "%s.%s is not an integer", tn, f->key);
        if (v < f->smin || v > (int64_t)f->max)
            return czk_errorf(err, -EBADMSG, "%s.%s = %lld out of range [%lld, %lld]", tn, f->key, (long long)v,
                              (long long)f->smin, (long long)f->max);
        *(int32_t *)p = (int32_t)v;
        return 0;
    }
    case F_DBL: {
        double v;
        if (o->type == MSGPACK_OBJECT_FLOAT64 || o->type == MSGPACK_OBJECT_FLOAT32)
            v = o->via.f64;
        else if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
            v = (double)o->via.u64;
        else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
            v = (double)o->via.i64;
        else
            return czk_errorf(err, -EBADMSG, "%s.%s is not a number", tn, f->key);
        if (!isfinite(v))
            return czk_errorf(err, -EBADMSG, "%s.%s is not a finite number", tn, f->key);
        *(double *)p = v;
        return 0;
    }
    case F_STR:
        if (o->type != MSGPACK_OBJECT_STR)
            return czk_errorf(err, -EBADMSG, "%s.%s is not a string", tn, f->key);
        if (o->via.str.size >= f->max)
            return czk_errorf(err, -EBADMSG, "%s.%s is %u bytes, at most %llu", tn, f->key, o->via.str.size,
                              (unsigned long long)f->max - 1);
        if (memchr(o->via.str.ptr, 0, o->via.str.size))
            return czk_errorf(err, -EBADMSG, "%s.%s contains a NUL byte", tn, f->key);
        memcpy(p, o->via.str.ptr, o->via.str.size);
        p[o->via.str.size] = 0;
        return 0;
    case F_BIN: case F_MAPBIN: {
        czk_bytes *b = (czk_bytes *)p;
        if (o->type != MSGPACK_OBJECT_BIN)
            return czk_errorf(err, -EBADMSG, "%s.%s is not a byte string", tn, f->key);
        if (o->via.bin.size > f->max)
            return czk_errorf(err, -EBADMSG, "%s.%s is %u bytes, at most %llu", tn, f->key, o->via.bin.size,
                              (unsigned long long)f->max);
        b->ptr = (const uint8_t *)o->via.bin.ptr;
        b->len = o->via.bin.size;
        if (f->kind == F_MAPBIN && b->len) {
            czk_error sub;
            if (czk_msg_precheck(b->ptr, b->len, CZK_MSG_MAX_DEPTH - 1, &sub) < 0)
                return czk_errorf(err, -EBADMSG, "%s.%s: %s", tn, f->key, sub.msg);
            if (!is_map_byte(b->ptr[0]))
                return czk_errorf(err, -EBADMSG, "%s.%s does not hold a msgpack map", tn, f->key);
        }
        return 0;
    }
    case F_BINLIST: {
        czk_bytes *b = (czk_bytes *)p;
        if (o->type != MSGPACK_OBJECT_ARRAY)
            return czk_errorf(err, -EBADMSG, "%s.%s is not an array", tn, f->key);
        if (o->via.array.size > CZK_MSG_MAX_POINTS)
            return czk_errorf(err, -EBADMSG, "%s.%s has %u items, at most %u", tn, f->key, o->via.array.size,
                              CZK_MSG_MAX_POINTS);
        for (uint32_t i = 0; i < o->via.array.size; i++) {
            const msgpack_object *e = &o->via.array.ptr[i];
            if (e->type != MSGPACK_OBJECT_BIN || e->via.bin.size > f->max)
                return czk_errorf(err, -EBADMSG, "%s.%s[%u] is not a byte string of at most %llu bytes", tn, f->key,
                                  i, (unsigned long long)f->max);
            b[i].ptr = (const uint8_t *)e->via.bin.ptr;
            b[i].len = e->via.bin.size;
        }
        *(uint32_t *)((uint8_t *)obj + f->aux) = o->via.array.size;
        return 0;
    }
    case F_PAIRS: {
        czk_msg_resync *r = (czk_msg_resync *)p;
        if (o->type != MSGPACK_OBJECT_ARRAY)
            return czk_errorf(err, -EBADMSG, "%s.%s is not an array", tn, f->key);
        if (o->via.array.size > f->max)
            return czk_errorf(err, -EBADMSG, "%s.%s has %u items, at most %llu", tn, f->key, o->via.array.size,
                              (unsigned long long)f->max);
        for (uint32_t i = 0; i < o->via.array.size; i++) {
            const msgpack_object *e = &o->via.array.ptr[i];
            uint64_t s, g;
            if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size != 2 || get_uint(&e->via.array.ptr[0], &s) ||
                get_uint(&e->via.array.ptr[1], &g) || s > SLOTMAX || g > U32MAX)
                return czk_errorf(err, -EBADMSG, "%s.%s[%u] is not a [slot, generation] pair in range", tn, f->key, i);
            r->slots[i].slot = (uint32_t)s;
            r->slots[i].generation = g;
        }
        r->n = o->via.array.size;
        return 0;
    }
    case F_CIRCS: {
        czk_msg_circuit *c = (czk_msg_circuit *)p;
        if (o->type != MSGPACK_OBJECT_ARRAY)
            return czk_errorf(err, -EBADMSG, "%s.%s is not an array", tn, f->key);
        if (o->via.array.size > f->max)
            return czk_errorf(err, -EBADMSG, "%s.%s has %u items, at most %llu", tn, f->key, o->via.array.size,
                              (unsigned long long)f->max);
        for (uint32_t i = 0; i < o->via.array.size; i++) {
            const msgpack_object *e = &o->via.array.ptr[i], *nm, *id;
            if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size != 2)
                return czk_errorf(err, -EBADMSG, "%s.%s[%u] is not a [name, key id] pair", tn, f->key, i);
            nm = &e->via.array.ptr[0];
            id = &e->via.array.ptr[1];
            if (nm->type != MSGPACK_OBJECT_STR || nm->via.str.size == 0 || nm->via.str.size >= sizeof(c[i].name) ||
                memchr(nm->via.str.ptr, 0, nm->via.str.size))
                return czk_errorf(err, -EBADMSG, "%s.%s[%u]: the name is not a string of 1..%zu bytes without NUL",
                                  tn, f->key, i, sizeof(c[i].name) - 1);
            if (id->type != MSGPACK_OBJECT_BIN || id->via.bin.size != CZK_MSG_KEY_ID)
                return czk_errorf(err, -EBADMSG, "%s.%s[%u]: the key id is not a byte string of %u bytes", tn,
                                  f->key, i, CZK_MSG_KEY_ID);
            memcpy(c[i].name, nm->via.str.ptr, nm->via.str.size);
            c[i].name[nm->via.str.size] = 0;
            memcpy(c[i].key_id, id->via.bin.ptr, CZK_MSG_KEY_ID);
            for (uint32_t j = 0; j < i; j++)
                if (!strcmp(c[j].name, c[i].name))
                    return czk_errorf(err, -EBADMSG, "%s.%s[%u] repeats the name of [%u]", tn, f->key, i, j);
        }
        *(uint32_t *)((uint8_t *)obj + f->aux) = o->via.array.size;
        return 0;
    }
    case F_STRUCT: {
        char path[128];
        snprintf(path, sizeof(path), "%s.%s", tn, f->key);
        if (o->type != MSGPACK_OBJECT_MAP)
            return czk_errorf(err, -EBADMSG, "%s is not a map", path);
        return dec_map(f->sub, o, p, 0, path, err);
    }
    case F_ARRAY: {
        if (o->type != MSGPACK_OBJECT_ARRAY)
            return czk_errorf(err, -EBADMSG, "%s.%s is not an array", tn, f->key);
        if (o->via.array.size > f->max)
            return czk_errorf(err, -EBADMSG, "%s.%s has %u items, at most %llu", tn, f->key, o->via.array.size,
                              (unsigned long long)f->max);
        for (uint32_t i = 0; i < o->via.array.size; i++) {
            char path[128];
            int r;
            snprintf(path, sizeof(path), "%s.%s[%u]", tn, f->key, i);
            if (o->via.array.ptr[i].type != MSGPACK_OBJECT_MAP)
                return czk_errorf(err, -EBADMSG, "%s is not a map", path);
            if ((r = dec_map(f->sub, &o->via.array.ptr[i], p + (size_t)i * f->esize, 0, path, err)) < 0)
                return r;
        }
        *(uint32_t *)((uint8_t *)obj + f->aux) = o->via.array.size;
        return 0;
    }
    }
    return czk_errorf(err, -EBADMSG, "internal: bad field kind");
}

/*
 * Decodes the map's keys into obj by s.  skip_tv: the record's "t" and "v"
 * (read by czk_msg_decode) are not schema keys.  Unknown keys are an error
 * unless s is open; missing required keys unless s is lenient.
 */
static int dec_map(const czk_schema *s, const msgpack_object *map, void *obj, int skip_tv, const char *tn,
                   czk_error *err)
{
    uint64_t seen = 0;
    unsigned idx;
    const field *f;

    for (uint32_t i = 0; i < map->via.map.size; i++) {
        const msgpack_object_kv *kv = &map->via.map.ptr[i];
        int r;

        if (skip_tv && (key_is(&kv->key, "t") || key_is(&kv->key, "v")))
            continue;
        if (kv->key.type != MSGPACK_OBJECT_STR) {
            if (s->open)
                continue;
            return czk_errorf(err, -EBADMSG, "%s record has a key that is not a string", tn);
        }
        for (f = s->fields, idx = 0; f->key && !key_is(&kv->key, f->key); f++, idx++)
            ;
        if (!f->key) {
            if (s->open)
                continue;
            return czk_errorf(err, -EBADMSG, "%s record has unknown key \"%.*s\"", tn,
                              (int)(kv->key.via.str.size > 32 ? 32 : kv->key.via.str.size), kv->key.via.str.ptr);
        }
        if (idx >= 64)
            return czk_errorf(err, -EBADMSG, "internal: %s has more than 64 keys", tn);
        if (seen & (1ull << idx))
            return czk_errorf(err, -EBADMSG, "%s record repeats key \"%s\"", tn, f->key);
        seen |= 1ull << idx;
        if ((r = decode_field(f, &kv->val, obj, tn, err)) < 0)
            return r;
        if (f->has)
            *has_flag(f, obj) = 1;
    }
    if (!s->lenient)
        for (f = s->fields, idx = 0; f->key; f++, idx++)
            if (!f->optional && !(seen & (1ull << idx)))
                return czk_errorf(err, -EBADMSG, "%s record lacks key \"%s\"", tn, f->key);
    return 0;
}

/* the pre-walk, then msgpack-c; *up holds the one map on success */
static int unpack_map(const uint8_t *buf, size_t len, size_t cap, int depth, msgpack_unpacked *up, const char *what,
                      czk_error *err)
{
    size_t off = 0;
    int r = precheck(buf, len, depth, cap, err);

    if (r < 0)
        return r;
    if (!is_map_byte(buf[0]))
        return czk_errorf(err, -EBADMSG, "%s is not a msgpack map (first byte 0x%02x)", what, buf[0]);
    switch (msgpack_unpack_next(up, (const char *)buf, len, &off)) {
    case MSGPACK_UNPACK_SUCCESS:
        break;
    case MSGPACK_UNPACK_NOMEM_ERROR:
        return czk_errorf(err, -EBADMSG, "msgpack unpacker out of memory");
    default:
        return czk_errorf(err, -EBADMSG, "msgpack unpacker rejected the %s", what);
    }
    if (off != len || up->data.type != MSGPACK_OBJECT_MAP)
        return czk_errorf(err, -EBADMSG, "%s is not exactly one msgpack map", what);
    return 0;
}

int czk_msg_decode(const uint8_t *buf, size_t len, czk_msg *m, czk_error *err)
{
    msgpack_unpacked up;
    const msgpack_object *root;
    uint64_t t = 0, v = 0;
    int have_t = 0, have_v = 0, r;

    memset(m, 0, sizeof(*m));
    msgpack_unpacked_init(&up);
    if ((r = unpack_map(buf, len, CZK_MSG_MAX_RECORD, CZK_MSG_MAX_DEPTH, &up, "record", err)) < 0)
        goto out;
    root = &up.data;
    for (uint32_t i = 0; i < root->via.map.size; i++) {
        const msgpack_object_kv *kv = &root->via.map.ptr[i];
        if (key_is(&kv->key, "t")) {
            if (have_t++ || get_uint(&kv->val, &t)) {
                r = czk_errorf(err, -EBADMSG, "bad or duplicate type key \"t\"");
                goto out;
            }
        } else if (key_is(&kv->key, "v")) {
            if (have_v++ || get_uint(&kv->val, &v)) {
                r = czk_errorf(err, -EBADMSG, "bad or duplicate version key \"v\"");
                goto out;
            }
        }
    }
    if (!have_t || t == 0 || t > CZK_MSG_TYPE_MAX) {
        r = czk_errorf(err, -EBADMSG, "missing or unknown message type %llu", (unsigned long long)t);
        goto out;
    }
    if (!have_v || v != CZK_PROTO_VERSION) {
        r = czk_errorf(err, -EPROTO, "%s record has protocol version %llu, this build speaks %u",
                       schema[t].name, (unsigned long long)v, CZK_PROTO_VERSION);
        goto out;
    }
    m->type = (uint32_t)t;
    m->version = (uint32_t)v;
    r = dec_map(&schema[t], root, m, 1, schema[t].name, err);
out:
    msgpack_unpacked_destroy(&up);
    if (r < 0) {
        uint32_t keep = m->type;
        memset(m, 0, sizeof(*m));
        m->type = keep;
    }
    return r;
}

int czk_schema_decode(const czk_schema *s, const uint8_t *buf, size_t len, void *obj, czk_error *err)
{
    msgpack_unpacked up;
    int r;

    memset(obj, 0, s->size);
    msgpack_unpacked_init(&up);
    if ((r = unpack_map(buf, len, s->max_bytes, CZK_MSG_MAX_DEPTH, &up, s->name, err)) == 0)
        r = dec_map(s, &up.data, obj, 0, s->name, err);
    msgpack_unpacked_destroy(&up);
    if (r < 0)
        memset(obj, 0, s->size);
    return r;
}

/* ---------------------------------------------------- typed wrappers --- */

#define CZK_MSG_TYPED(name, NAME)                                                                   \
    int czk_msg_encode_##name(uint8_t *buf, size_t cap, const czk_msg_##name *v, czk_error *err)    \
    {                                                                                               \
        czk_msg m;                                                                                  \
        m.type = CZK_MSG_##NAME;                                                                    \
        m.version = CZK_PROTO_VERSION;                                                              \
        memcpy(&m.u.name, v, sizeof(*v));                                                           \
        return czk_msg_encode(buf, cap, &m, err);                                                   \
    }                                                                                               \
    int czk_msg_decode_##name(const uint8_t *buf, size_t len, czk_msg_##name *v, czk_error *err)    \
    {                                                                                               \
        czk_msg m;                                                                                  \
        int r = czk_msg_decode(buf, len, &m, err);                                                  \
        if (r < 0)                                                                                  \
            return r;                                                                               \
        if (m.type != CZK_MSG_##NAME)                                                               \
            return czk_errorf(err, -EBADMSG, "expected a %s record, got %s", #NAME,                 \
                              czk_msg_type_name(m.type));                                           \
        memcpy(v, &m.u.name, sizeof(*v));                                                           \
        return 0;                                                                                   \
    }
CZK_MSG_TYPED_LIST(CZK_MSG_TYPED)

int czk_msg_encode_status(uint8_t *buf, size_t cap, const czk_msg_status *v, int reply, czk_error *err)
{
    czk_msg m;
    m.type = reply ? CZK_MSG_STATUS_REPLY : CZK_MSG_STATUS;
    m.version = CZK_PROTO_VERSION;
    m.u.status = *v;
    return czk_msg_encode(buf, cap, &m, err);
}
