/*
 * msg.h — the czk wire protocol: one msgpack map per SOCK_SEQPACKET record.
 *
 * Every record is a map whose keys are short strings.  Two keys are always
 * present: "t" (message type, enum czk_msg_type) and "v" (protocol version,
 * CZK_PROTO_VERSION).  The other keys of each type are listed in docs/ipc.md
 * and in the schema table in msg.c, which drives both the encoder and the
 * decoder, so the two cannot drift apart.
 *
 * Encoding: fill a czk_msg (type + the matching union member) and call
 * czk_msg_encode(), or use a typed wrapper such as czk_msg_encode_ready().
 * The encoder writes into a caller buffer (no allocation) and fails with
 * -EMSGSIZE when the record would exceed the buffer or CZK_MSG_MAX_RECORD.
 *
 * Decoding untrusted bytes: czk_msg_decode() checks, before anything is
 * allocated, that the record is at most CZK_MSG_MAX_RECORD bytes, that every
 * container's declared count fits in the bytes left (msgpack-c#1013), that
 * nesting is at most CZK_MSG_MAX_DEPTH, and that the record is exactly one
 * object.  Only then is it unpacked (msgpack-c), and every field is checked
 * for type and range; unknown or duplicate keys and missing required keys
 * are errors.  On error it returns -EBADMSG (or -EPROTO for a version
 * mismatch) and fills err with the reason; the caller closes that connection.
 *
 * Lifetimes: strings are copied into the fixed arrays of the struct and are
 * NUL-terminated.  Byte strings (czk_bytes) and the STATUS body point INTO the
 * decoded record buffer: they are valid only while that buffer is (inside a
 * loop callback: until the callback returns).  Copy what you keep.
 */
#ifndef CZK_IPC_MSG_H
#define CZK_IPC_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "common/base/error.h"
#include "common/runtime/config.h"

#define CZK_PROTO_VERSION 1u
#define CZK_MSG_MAX_RECORD (64u * 1024u) /* hard cap on one record, bytes */
#define CZK_MSG_MAX_DEPTH 4              /* top map -> array -> array -> scalar */
#define CZK_MSG_MAX_FDS 253              /* SCM_MAX_FD: fds per record */
_Static_assert(CZK_MSG_MAX_FDS == CZK_CONFIG_MAX_PARTITIONS_PER_JOB, "one fd per partition: one limit");

#define CZK_MSG_STR_SHORT 128  /* circuit names, program names (incl. NUL) */
#define CZK_MSG_REQID_MAX 128  /* request id bytes (printable ASCII), without the NUL */
#define CZK_MSG_STR_LONG 1024  /* paths, reasons, error texts (incl. NUL) */
#define CZK_MSG_MAX_POINTS 8   /* RESULT: byte strings in "pts" */
#define CZK_MSG_MAX_POINT_BYTES 512
#define CZK_MSG_MAX_RESYNC 256 /* RESYNC: (slot, generation) pairs */
#define CZK_MSG_MAX_CIRCUITS 32 /* HELLO: circuits announced (= CZK_CONFIG_MAX_CIRCUITS) */
#define CZK_MSG_CIRCUIT_NAME 64 /* HELLO: circuit name bytes incl. NUL (= the config's [circuit.NAME]) */
#define CZK_MSG_KEY_ID 32       /* HELLO: key id bytes (SHA-256, common/formats czk_zkey_id) */

enum czk_msg_type {
    CZK_MSG_HELLO = 1,      /* any -> any: first record on a connection, both ways */
    CZK_MSG_POOL = 2,       /* gpud -> synth/finalizer: a pool, fd by SCM_RIGHTS */
    CZK_MSG_ASSIGN = 3,     /* gpud -> synth: fill this slot for this partition */
    CZK_MSG_READY = 4,      /* synth -> gpud: slot filled */
    CZK_MSG_RELEASE = 5,    /* gpud -> synth: slot copied to the device, free again */
    CZK_MSG_RESULT = 6,     /* gpud -> finalizer: MSM results of a partition */
    CZK_MSG_DONE = 7,       /* finalizer -> gpud: proof of a partition written */
    CZK_MSG_SUBMIT = 8,     /* client -> gpud: a job; witness fds by SCM_RIGHTS */
    CZK_MSG_ACCEPTED = 9,   /* gpud -> client: job journaled */
    CZK_MSG_REJECTED = 10,  /* gpud -> client: job refused */
    CZK_MSG_EVENT = 11,     /* gpud -> client: progress of a job */
    CZK_MSG_STATUS = 12,    /* client -> daemon: status request (optional body) */
    CZK_MSG_STATUS_REPLY = 13, /* daemon -> client: status, a map (czk_schema_status_reply) */
    CZK_MSG_CANCEL = 14,    /* client -> gpud: cancel a job */
    CZK_MSG_ERROR = 15,     /* any -> any: protocol or request error */
    CZK_MSG_RESYNC = 16,    /* synth -> gpud after reconnect: slots it believes it owns */
    CZK_MSG_WATCH = 17,     /* client -> gpud: send EVENTs of an existing job */
    CZK_MSG_HEARTBEAT = 18, /* any -> any: liveness, echoes seq */
    CZK_MSG_FETCH = 19,     /* client -> gpud: the files of a DONE partition */
    CZK_MSG_FETCHED = 20,   /* gpud -> client: proof.json and public.json, two fds by SCM_RIGHTS */
    CZK_MSG_TYPE_MAX = 20
};

enum czk_role {
    CZK_ROLE_GPUD = 1,
    CZK_ROLE_SYNTH = 2,
    CZK_ROLE_FINALIZER = 3,
    CZK_ROLE_CLIENT = 4,
    CZK_ROLE_MAX = 4
};
#define CZK_ROLE_BIT(r) (1u << (r))

/* EVENT stages */
enum czk_stage {
    CZK_STAGE_QUEUED = 1,
    CZK_STAGE_SYNTH = 2,
    CZK_STAGE_GPU = 3,
    CZK_STAGE_FINALIZE = 4,
    CZK_STAGE_DONE = 5,
    CZK_STAGE_FAILED = 6,
    CZK_STAGE_CANCELLED = 7,
    CZK_STAGE_MAX = 7
};
#define CZK_PARTITION_ALL 0xffffffffu /* EVENT/CANCEL about the whole job */

/* A byte string; on decode it points into the record buffer (see above). */
typedef struct czk_bytes {
    const uint8_t *ptr;
    uint32_t len;
} czk_bytes;

/* a circuit as a daemon knows it: its config name and its key's id */
typedef struct czk_msg_circuit {
    char name[CZK_MSG_CIRCUIT_NAME]; /* non-empty */
    uint8_t key_id[CZK_MSG_KEY_ID];
} czk_msg_circuit;

typedef struct czk_msg_hello {
    uint32_t role;      /* enum czk_role */
    uint32_t pid;       /* sender's pid; checked against SO_PEERCRED */
    uint32_t proto;     /* CZK_PROTO_VERSION the sender speaks */
    int32_t numa_node;  /* -1 when not bound to a node */
    uint32_t instance;  /* instance id (synth: node number), 0 otherwise */
    char name[CZK_MSG_STR_SHORT]; /* free-form program name/version */
    /* optional: the daemons' circuits, in the sender's config order (the
     * index in this array is the circuit id the sender uses in ASSIGN and
     * RESULT); names are unique.  0 circuits: the sender did not say (a
     * client, or an older daemon). */
    uint32_t n_circuits;
    czk_msg_circuit circuits[CZK_MSG_MAX_CIRCUITS];
} czk_msg_hello;

typedef struct czk_msg_pool {
    uint32_t pool_id;
    int32_t numa_node;
    uint32_t slot_count;
    uint32_t layout_version; /* CZK_POOL_LAYOUT_VERSION */
    uint64_t slot_size;
    uint64_t epoch;
    uint64_t total_size;     /* bytes to map */
} czk_msg_pool; /* exactly one fd travels with it */

typedef struct czk_msg_assign {
    uint32_t pool_id;
    uint32_t slot;
    uint64_t generation;
    uint64_t job_id;
    uint32_t partition;
    uint32_t circuit_id;
    char spool[CZK_MSG_STR_LONG]; /* witness spool file (gpud-owned path), read whole */
    uint64_t lease_ms;            /* how long gpud waits for READY ([gpud] synth_timeout_s; 0: no limit) */
} czk_msg_assign;

typedef struct czk_msg_ready {
    uint32_t pool_id;
    uint32_t slot;
    uint64_t generation;
    uint64_t domain_size;
    uint64_t n_vars;
    uint64_t data_len;
    /* optional: a synth that could not fill
     * the slot (bad spool file, cancelled by a RELEASE) says so with status < 0 */
    int32_t status;
    char reason[CZK_MSG_STR_LONG];
} czk_msg_ready;

typedef struct czk_msg_release {
    uint32_t pool_id;
    uint32_t slot;
    uint64_t generation;
} czk_msg_release;

typedef struct czk_msg_result {
    uint64_t job_id;
    uint32_t partition;
    uint32_t n_points;
    czk_bytes points[CZK_MSG_MAX_POINTS]; /* A·w, B1·w (G1), B2·w (G2), C·w+H·h ... */
    czk_bytes publics;                    /* public signals, 32-byte Fr each */
    /* optional (docs/pipeline.md) */
    uint32_t circuit_id;                  /* index of [circuit.NAME] in the config */
    uint32_t n_partitions;                /* partitions of the job (summary.json) */
    char circuit[CZK_MSG_STR_SHORT];      /* circuit name, checked by the finalizer */
    uint64_t submit_ns;                   /* CLOCK_REALTIME when the job was accepted */
    uint64_t queue_ns, synth_ns, gpu_ns;  /* time this partition spent in each stage */
} czk_msg_result;

typedef struct czk_msg_done {
    uint64_t job_id;
    uint32_t partition;
    int32_t status; /* 0 ok, else -errno (e.g. -EBADMSG: verification failed) */
    /* optional */
    char reason[CZK_MSG_STR_LONG]; /* why status != 0 */
    czk_bytes proof;               /* proof.json text as written (omitted when too large) */
    czk_bytes publics;             /* public.json text as written (omitted when too large) */
} czk_msg_done;

typedef struct czk_msg_submit {
    char request_id[CZK_MSG_REQID_MAX + 1]; /* client-chosen, deduplicates */
    char circuit[CZK_MSG_STR_SHORT];
    uint32_t priority;     /* lane, 0 (highest) .. 7 */
    uint32_t n_partitions; /* >= 1 */
    uint32_t n_fds;        /* witness fds that travel with the record */
    uint32_t flags;        /* CZK_SUBMIT_F_* */
} czk_msg_submit;
#define CZK_SUBMIT_F_WAIT 0x1u /* stream EVENTs on this connection */

typedef struct czk_msg_accepted {
    char request_id[CZK_MSG_REQID_MAX + 1];
    uint64_t job_id;
    uint32_t duplicate; /* 1 when request_id was already known */
} czk_msg_accepted;

typedef struct czk_msg_rejected {
    char request_id[CZK_MSG_REQID_MAX + 1];
    int32_t code; /* -errno */
    char reason[CZK_MSG_STR_LONG];
} czk_msg_rejected;

typedef struct czk_msg_event {
    uint64_t job_id;
    uint32_t partition; /* CZK_PARTITION_ALL for the job */
    uint32_t stage;     /* enum czk_stage */
    int32_t status;     /* 0 or -errno */
    uint64_t time_ns;   /* CLOCK_REALTIME */
    /* optional: a partition's DONE carries
     * the proof texts so `czk submit --out` can write them with its own rights */
    char reason[CZK_MSG_STR_LONG]; /* why status != 0 */
    czk_bytes proof;               /* proof.json text */
    czk_bytes publics;             /* public.json text */
} czk_msg_event;

/* The record checks only that the body is one msgpack map (the transport
 * carries any map); its content is typed by czk_schema_status_request and
 * czk_schema_status_reply below, which gpud and the CLI decode it with. */
typedef struct czk_msg_status {
    czk_bytes body; /* one msgpack map (raw bytes), may be empty (len 0) */
} czk_msg_status;   /* STATUS and STATUS_REPLY */

typedef struct czk_msg_cancel {
    uint64_t job_id;
} czk_msg_cancel;

typedef struct czk_msg_error {
    int32_t code; /* -errno */
    char message[CZK_MSG_STR_LONG];
} czk_msg_error;

typedef struct czk_msg_resync {
    uint32_t pool_id;
    uint32_t n;
    struct { uint32_t slot; uint64_t generation; } slots[CZK_MSG_MAX_RESYNC];
} czk_msg_resync;

typedef struct czk_msg_watch {
    uint64_t job_id;
} czk_msg_watch;

typedef struct czk_msg_heartbeat {
    uint64_t seq;
    uint64_t time_ns; /* CLOCK_MONOTONIC of the sender */
} czk_msg_heartbeat;

/* FETCH: a client that cannot read output_dir asks gpud for the files of a
 * partition of its own job once it is DONE (`czk submit --out` when the proof
 * text did not travel in an EVENT); answered FETCHED or ERROR */
typedef struct czk_msg_fetch {
    uint64_t job_id;
    uint32_t partition;
} czk_msg_fetch;

/* FETCHED: exactly CZK_FETCHED_FDS fds travel with it, opened read-only by
 * gpud: proof.json first, then public.json.  The sizes are fstat's when gpud
 * opened them (the finalizer replaces files by rename, never in place) */
typedef struct czk_msg_fetched {
    uint64_t job_id;
    uint32_t partition;
    uint64_t proof_size;  /* bytes of proof.json (the first fd) */
    uint64_t public_size; /* bytes of public.json (the second fd) */
} czk_msg_fetched;
#define CZK_FETCHED_FDS 2

typedef struct czk_msg {
    uint32_t type;    /* enum czk_msg_type */
    uint32_t version; /* filled by decode; encode always writes CZK_PROTO_VERSION */
    union {
        czk_msg_hello hello;
        czk_msg_pool pool;
        czk_msg_assign assign;
        czk_msg_ready ready;
        czk_msg_release release;
        czk_msg_result result;
        czk_msg_done done;
        czk_msg_submit submit;
        czk_msg_accepted accepted;
        czk_msg_rejected rejected;
        czk_msg_event event;
        czk_msg_status status; /* STATUS and STATUS_REPLY */
        czk_msg_cancel cancel;
        czk_msg_error error;
        czk_msg_resync resync;
        czk_msg_watch watch;
        czk_msg_heartbeat heartbeat;
        czk_msg_fetch fetch;
        czk_msg_fetched fetched;
    } u;
} czk_msg;

/* "HELLO", "POOL", ... or "?" */
const char *czk_msg_type_name(uint32_t type);
const char *czk_role_name(uint32_t role);

/*
 * The number of fds that must travel with m (SCM_RIGHTS): POOL 1, SUBMIT its
 * n_fds, FETCHED CZK_FETCHED_FDS, every other type none.  A record with
 * another number is a protocol error: the loop closes that connection
 * (ipc/conn.c), the CLI refuses the record and closes the fds (cli/client.c).
 */
int czk_msg_fds(const czk_msg *m);

/* index of the circuit called name in h's circuit list, or -1 */
int czk_msg_hello_circuit(const czk_msg_hello *h, const char *name);

/*
 * Encodes m into buf[0..cap).  Returns the record length (> 0) or -EMSGSIZE
 * (does not fit), -EINVAL (a field out of range, unknown type; err says which).
 */
int czk_msg_encode(uint8_t *buf, size_t cap, const czk_msg *m, czk_error *err);

/*
 * Decodes one record.  Returns 0 or -EBADMSG / -EPROTO with err filled.
 * Byte strings in *m point into buf (see the lifetime note above).
 */
int czk_msg_decode(const uint8_t *buf, size_t len, czk_msg *m, czk_error *err);

/*
 * The structural pre-check alone (size cap, counts against bytes left, depth,
 * exactly one object).  Exposed for the STATUS body and for tests.
 */
int czk_msg_precheck(const uint8_t *buf, size_t len, int max_depth, czk_error *err);

/* ------------------------------------------------------------------------
 * Schemas beyond the records: the same table mechanism (msg.c) describes
 * msgpack maps that travel inside a record (the STATUS and STATUS_REPLY
 * bodies) or that gpud writes to its journal.  czk_schema_encode() writes
 * the struct as one map, keys in table order; czk_schema_decode() runs the
 * same hardened steps as czk_msg_decode() (pre-walk, unpack, typed check of
 * every key, duplicates refused) and fills the struct (zeroed first).
 * Unknown keys, and for the STATUS_REPLY body missing keys, are tolerated
 * where the schema says so (each schema below states it): a newer peer may
 * add keys.  Lifetimes as for records: strings are copied, czk_bytes point
 * into buf.  Errors: -EINVAL / -EMSGSIZE (encode), -EBADMSG (decode), err
 * filled with the key path ("STATUS_REPLY.active[3].lane = 9 out of range").
 * ------------------------------------------------------------------------ */
typedef struct czk_schema czk_schema;

int czk_schema_encode(const czk_schema *s, const void *obj, uint8_t *buf, size_t cap, czk_error *err);
int czk_schema_decode(const czk_schema *s, const uint8_t *buf, size_t len, void *obj, czk_error *err);
const char *czk_schema_name(const czk_schema *s);

/*
 * STATUS body (client -> gpud): {job?}.  job != 0 asks for that job's
 * details ("job" in the reply).  Unknown keys are ignored.
 */
typedef struct czk_status_request {
    uint64_t job;
} czk_status_request;
extern const czk_schema czk_schema_status_request;

/*
 * STATUS_REPLY body (gpud -> client), docs/daemons.md lists the meaning of
 * every key.  gpud writes every key but "others" (only to a client that does
 * not see every job), "job" (only when asked for a job it may see), a
 * job's "reason" (only when the job is not moving) and "gpus" (once the
 * backend exists; a device's "reason" only while it is out of service).  Decoding is lenient in
 * two ways, on purpose: unknown keys (even non-string ones) are skipped and
 * a missing key reads as 0 / "" (has_* says whether the key was there), so
 * an older client reads a newer gpud's reply; what is there must have the
 * schema's type and range, and arrays at most their maximum count.
 */
#define CZK_STATUS_MAX_JOBS 64   /* "active": this client's active jobs listed */
#define CZK_STATUS_MAX_POOLS 64  /* "pools": one per NUMA node (gpud/sched.c caps it at 64) */
#define CZK_STATUS_TEXT (4 * CZK_MSG_REQID_MAX + 8) /* a client-chosen string after czk_esc (4 bytes per byte) */
#define CZK_STATUS_REASON 512    /* a job's "reason" */

typedef struct czk_status_job {
    uint64_t id;
    char state[32];                   /* "active", "complete", "failed", "cancelled" */
    char circuit[CZK_STATUS_TEXT];    /* escaped by gpud (czk_esc) */
    char request[CZK_STATUS_TEXT];    /* escaped by gpud (czk_esc) */
    uint32_t lane, partitions, done, failed, queued, synth, gpu, finalize;
    char reason[CZK_STATUS_REASON];   /* optional: why the job is not moving */
} czk_status_job;

typedef struct czk_status_pool {
    uint32_t id;
    int32_t node; /* -1: not bound */
    uint32_t slots, in_use, quarantined, hugetlb;
} czk_status_pool;

#define CZK_STATUS_MAX_CIRCUITS CZK_MSG_MAX_CIRCUITS /* "circuits": every configured circuit */
#define CZK_STATUS_KEY_REASON 256 /* a circuit's "reason" */

/* one configured circuit and its proving key (czk-gpud loads keys after it
 * answers: docs/daemons.md, "Start-up") */
typedef struct czk_status_circuit {
    char name[CZK_STATUS_TEXT];   /* escaped by gpud (czk_esc) */
    char key_id[72];              /* 64 hex digits; "" when the header could not be read */
    char curve[16];               /* optional: the key's curve as snarkjs names it ("bls12381", "bn128"); "" as key_id */
    char state[16];               /* "loading", "ready", "failed" */
    uint32_t progress;            /* 0..100: bytes read, checked and uploaded of the total */
    double load_s;                /* seconds the load took (ready or failed), or has taken so far */
    char reason[CZK_STATUS_KEY_REASON]; /* optional: why it failed */
} czk_status_circuit;

#define CZK_STATUS_MAX_GPUS 16     /* "gpus": one per compute device (gpud lists at most this many) */
#define CZK_STATUS_GPU_REASON 256  /* a device's "reason" */

/* one compute device of gpud's backend (its index is the backend's
 * device_of, backend/backend.h), over the same last minute as gpu_busy_pct */
typedef struct czk_status_gpu {
    uint32_t index;
    char state[16];         /* "in_service", or "out_of_service" (reason says why) */
    uint32_t contexts;      /* backend contexts (workers) on it */
    double busy_pct;        /* share of the last 60 s in which it computed */
    uint64_t max_gap_ms;    /* its longest idle stretch in the last 60 s */
    uint64_t done;          /* partitions computed on it since start */
    uint64_t failed;        /* partitions that failed on it (their own error) */
    uint64_t requeued;      /* partitions it held when it was taken out of service */
    uint64_t mem_used, mem_total; /* device memory, bytes (has_mem: the backend can say) */
    char reason[CZK_STATUS_GPU_REASON]; /* optional: why it is out of service */
    uint8_t has_mem;        /* decode: mem_used/mem_total were there; encode: write them */
    int32_t numa;           /* the NUMA node nearest it (has_numa: the backend can say) */
    uint8_t has_numa;
} czk_status_gpu;

typedef struct czk_status_reply {
    char daemon[CZK_MSG_STR_SHORT];
    char state[16];   /* "starting" (the backend is being created) or "running"; "" from an older gpud */
    char state_dir[CZK_CONFIG_PATH_MAX];
    char backend[CZK_MSG_STR_SHORT];
    struct { uint64_t active, complete, failed, cancelled; } jobs;
    struct { uint64_t queued, synth, gpu, finalize, lanes; } partitions;
    uint32_t n_pools;
    czk_status_pool pools[CZK_STATUS_MAX_POOLS];
    struct { double queue, synth, gpu, finalize; } latency_s; /* mean seconds per partition */
    uint64_t proofs_per_minute;
    double gpu_busy_pct;
    uint64_t gpu_max_gap_ms;
    uint64_t proofs_total, failures_total, synth_timeouts_total, result_resends_total;
    uint32_t synths, finalizer;
    uint32_t n_active;
    czk_status_job active[CZK_STATUS_MAX_JOBS];
    struct { uint64_t jobs, partitions; } others; /* other users' active jobs, counts only */
    czk_status_job job;                           /* the job asked for */
    uint32_t n_circuits;
    czk_status_circuit circuits[CZK_STATUS_MAX_CIRCUITS];
    /* decode: 1 when the key was present; encode: has_others and has_job say
     * whether to write "others" and "job" (the other has_* are not read) */
    uint8_t has_gpu_busy, has_synths, has_finalizer, has_state_dir, has_others, has_job;
    /* optional "gpus" (absent from an older gpud, and while the backend is
     * being created: n_gpus 0); an older client skips the key */
    uint32_t n_gpus;
    czk_status_gpu gpus[CZK_STATUS_MAX_GPUS];
} czk_status_reply;
extern const czk_schema czk_schema_status_reply;

/*
 * Journal record payloads of czk-gpud (gpud/table.c), one map per record;
 * the record type is the journal record's type (gpud.h REC_* has the same
 * numbers).  The bytes are those gpud has always written (same keys, same
 * order, same msgpack types), so older journals replay; unknown keys are
 * skipped (a newer gpud's record read by an older one), the listed keys are
 * required except wsha:
 *   ACCEPT   {job, req, circ, lane, nparts, uid, tsub, wsha?}
 *   DONE     {job, part, status}
 *   COMPLETE {job}      CANCEL {job}      PROBE {probe: 1}
 */
enum czk_jrec_type {
    CZK_JREC_ACCEPT = 1,
    CZK_JREC_DONE = 2,
    CZK_JREC_COMPLETE = 3,
    CZK_JREC_CANCEL = 4,
    CZK_JREC_PROBE = 5,
    CZK_JREC_TYPE_MAX = 5
};
#define CZK_JREC_MAX_PARTS (1u << 20) /* nparts bound (SUBMIT's) */

typedef struct czk_jrec {
    uint64_t job;                    /* every type but PROBE, >= 1 */
    char req[CZK_MSG_REQID_MAX + 1]; /* ACCEPT: the request id */
    char circ[CZK_MSG_CIRCUIT_NAME]; /* ACCEPT: the circuit's name */
    uint32_t lane, nparts, uid;      /* ACCEPT */
    uint64_t tsub;                   /* ACCEPT: CLOCK_REALTIME ns of acceptance */
    czk_bytes wsha;                  /* ACCEPT, optional: nparts * 32 bytes of witness SHA-256 */
    uint32_t part;                   /* DONE */
    int32_t status;                  /* DONE: 0 or -errno */
    uint32_t probe;                  /* PROBE: 1 */
} czk_jrec;

/* the schema of journal record type t, or NULL when there is none */
const czk_schema *czk_jrec_schema(uint32_t type);
/* "ACCEPT", ..., or "?" */
const char *czk_jrec_type_name(uint32_t type);

/* Every message type with a typed wrapper, once: X(name, NAME). */
#define CZK_MSG_TYPED_LIST(X)                                                                  \
    X(hello, HELLO) X(pool, POOL) X(assign, ASSIGN) X(ready, READY) X(release, RELEASE)         \
    X(result, RESULT) X(done, DONE) X(submit, SUBMIT) X(accepted, ACCEPTED)                     \
    X(rejected, REJECTED) X(event, EVENT) X(cancel, CANCEL) X(error, ERROR) X(resync, RESYNC)   \
    X(watch, WATCH) X(heartbeat, HEARTBEAT) X(fetch, FETCH) X(fetched, FETCHED)

/* Typed wrappers: encode a struct of that type, or decode and insist on it. */
#define CZK_MSG_TYPED(name, NAME)                                                        \
    int czk_msg_encode_##name(uint8_t *buf, size_t cap, const czk_msg_##name *v,         \
                              czk_error *err);                                           \
    int czk_msg_decode_##name(const uint8_t *buf, size_t len, czk_msg_##name *v,         \
                              czk_error *err);
CZK_MSG_TYPED_LIST(CZK_MSG_TYPED)
#undef CZK_MSG_TYPED
/* STATUS and STATUS_REPLY share czk_msg_status; reply != 0 selects STATUS_REPLY */
int czk_msg_encode_status(uint8_t *buf, size_t cap, const czk_msg_status *v, int reply, czk_error *err);

#endif
