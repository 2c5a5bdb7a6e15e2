/*
 * gpud.h — czk-gpud's internal state, shared by its modules (not a public
 * contract).  Everything here is owned by the event-loop thread, except the
 * fields of gpud_work marked "worker", which the worker thread owns between
 * gpud_work_start() and the task it posts back (see worker.c).
 *
 * Modules (all but main.c form the static library czkgpud, which the unit
 * tests in tests/gpud/ link):
 *   main.c     start-up, wiring, signals, systemd, shutdown
 *   clients.c  the two sockets: czk.sock (SUBMIT, STATUS, CANCEL, WATCH) and
 *              gpud.sock (dispatch of synths and the finalizer by HELLO role)
 *   jobs.c     journal replay and compaction, the spool sweep, SUBMIT's
 *              checks and its completion after the intake thread
 *   intake.c   the intake thread: copies a SUBMIT's witness fds into the spool
 *   sched.c    pools, synth connections (POOL/ASSIGN/READY/RESYNC), leases,
 *              and the scheduler proper (slots for queued partitions, idle
 *              backend contexts for READY ones)
 *   worker.c   backend worker threads (copy-in, compute), posting back to the loop;
 *              the compute devices: per-device accounting, busy time, and a
 *              device that failed taken out of service
 *   results.c  the finalizer connection (RESULT out, DONE in, re-sends)
 *   part.c     the one owner of a partition's life: its state machine (table
 *              in part.h), the slot and synth accounting, the journal records
 *              of job and partition transitions
 *   table.c    the job table, the journal record codec, the spool paths
 *   queue.c    the three priority lanes and the ready queue (lists only)
 *   events.c   leaf: EVENTs to watching clients, stage observations, ERROR replies
 *   io.c       leaf: the seam to the outside (send, connection state, the
 *              worker kick, the clock) and the scheduler's dirty flag
 *   circuits.c leaf: reading the zkeys' headers, each daemon's circuits by
 *              name and key id (HELLO), the per-peer maps, the zkey
 *              re-checks, the circuits in STATUS
 *   keys.c     the backend's start-up thread and one loader thread per
 *              circuit (read, check or verified-key record, add_key)
 *   reload.c   a changed key switched in on SIGHUP, after the jobs accepted
 *              before it
 *
 * Call graph (an arrow is "calls"; there is no cycle, and
 * tests/layering/gpud_calls.py checks it on the sources):
 *   main    -> circuits, intake, io, jobs, keys, reload, results, sched, table, worker
 *   reload  -> circuits, io, keys
 *   keys    -> io, worker
 *   clients -> circuits, events, io, jobs, keys, part, results, sched, table, worker
 *   jobs    -> events, intake, io, part, queue, results, table
 *   sched   -> circuits, events, io, part, table, worker
 *   worker  -> io, part, results
 *   results -> circuits, events, io, part, table
 *   part    -> events, io, queue, table
 *   intake  -> table
 *   table   -> io
 *   events  -> io
 *   circuits, queue, io -> none
 * Nothing calls the scheduler directly except main.c's status tick and the
 * loop-turn task: every module that may make work schedulable calls
 * gpud_sched_dirty() (io.c), which posts one czk_loop_task per loop turn;
 * that task runs gpud_sched_run() after the turn's completions were handled.
 * intake.c hands a finished spool back through the request's done_task,
 * whose function jobs.c sets.
 */
#ifndef CZK_GPUD_H
#define CZK_GPUD_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "common/runtime/config.h"
#include "common/formats/formats.h"
#include "common/groth16/groth16.h"
#include "common/runtime/metrics.h"
#include "common/runtime/trace.h"
#include "backend/backend.h"
#include "gpud/circuits.h"
#include "ipc/commit.h"
#include "ipc/journal.h"
#include "ipc/loop.h"
#include "ipc/pool.h"

#define GPUD_LANES 3
#define GPUD_MAX_WATCHERS 16
#define GPUD_HASH 4096
#define GPUD_RATE_WINDOW 256
/* a RESULT not answered by DONE within this many seconds is sent again (the
 * finalizer's writes are idempotent); proposed [gpud] result_resend_s */

/* journal record types (payload: one msgpack map, see table.c); REC_PROBE
 * is the tiny record that tests whether appends work again after a failure
 * (replay ignores it, compaction drops it) */
enum { REC_ACCEPT = 1, REC_DONE = 2, REC_COMPLETE = 3, REC_CANCEL = 4, REC_PROBE = 5 };

enum part_state {
    P_QUEUED = 0, /* in a lane, waiting for a slot */
    P_SYNTH,      /* ASSIGNed to a synth, slot being filled */
    P_READY,      /* slot READY, waiting for a backend context */
    P_GPU,        /* being copied in / computed */
    P_FINALIZE,   /* RESULT computed, waiting for the finalizer's DONE */
    P_DONE,
    P_FAILED,
    P_CANCELLED,
    P_STATE_COUNT
};

enum job_state { J_ACTIVE = 0, J_COMPLETE, J_FAILED, J_CANCELLED };

typedef struct gpud_job gpud_job;
typedef struct gpud_synth gpud_synth;

typedef struct gpud_part {
    gpud_job *job;
    uint32_t index;
    uint8_t state;      /* enum part_state */
    uint8_t linked;     /* in a lane or in the ready queue */
    uint8_t holds_slot; /* pool/slot/gen name a slot this partition owns */
    uint8_t discard;    /* cancelled while a worker had it */
    uint8_t sent;       /* P_FINALIZE: RESULT queued to the current finalizer */
    uint8_t resynth;    /* times its slot failed the checksum before the copy (worker.c) */
    uint8_t done_pending; /* P_FINALIZE: the finalizer's DONE is journaled, its sync not yet settled */
    int32_t status;
    uint32_t sends;     /* P_FINALIZE: RESULTs sent for it (more than one: re-sends) */
    uint64_t t_sent;    /* P_FINALIZE: when the last RESULT was queued (io clock) */
    struct gpud_part *prev, *next;
    uint32_t pool, slot, gen;
    uint64_t t_enq, t_assign, t_ready, t_gpu;     /* CLOCK_MONOTONIC ns (gpud_now) */
    uint64_t queue_ns, synth_ns, gpu_ns;           /* accumulated per stage */
    czk_groth16_any_msm_out *res;                      /* while P_FINALIZE */
    czk_fr *pub;                                   /* n_public, while P_FINALIZE */
    uint8_t *done_bytes; /* done_pending: the DONE's proof, then its public signals, for the event */
    uint32_t done_proof_len, done_pub_len;
} gpud_part;

struct gpud_job {
    uint64_t id;
    char req[CZK_MSG_REQID_MAX + 1];
    char cname[64];
    uint32_t circuit; /* index into g->circuits, UINT32_MAX when no longer configured */
    uint32_t lane, nparts, nfinished, nfailed;
    uint32_t uid;
    uint64_t submit_ns; /* CLOCK_REALTIME */
    uint8_t *wsha;      /* nparts * CZK_SHA256_LEN: the witnesses' SHA-256 (request-id binding); NULL when
                           the ACCEPT record predates them */
    int state;          /* enum job_state */
    gpud_part *parts;   /* NULL once finished */
    czk_conn *watchers[GPUD_MAX_WATCHERS];
    int nwatch;
    gpud_job *next, *hnext;
};

/* a circuit's proving key (keys.c): LOADING until its loader thread is done */
enum { GPUD_KEY_LOADING = 0, GPUD_KEY_READY, GPUD_KEY_FAILED };

typedef struct gpud_keyload gpud_keyload;

typedef struct gpud_circuit {
    char name[64];
    czk_zkey zkey;       /* header and IC only (sizes, key id); the points are the backend's (keys.c) */
    int header_ok;       /* zkey was read: the circuit sizes the pools and is announced in HELLO */
    uint64_t slot_bytes; /* payload a, b, c, w (czk_slot_payload_layout); 0 without a header */
    /* the key's state: moved by keys.c on the loop thread only */
    int key_state;                 /* GPUD_KEY_* */
    char key_why[CZK_STATUS_KEY_REASON]; /* GPUD_KEY_FAILED: why (configuration and file data only) */
    uint64_t key_t0;               /* gpud_now when the load began */
    double key_load_s;             /* how long the load took (ready or failed) */
    /* progress, written by the loader thread, read by the loop (STATUS, metrics) */
    _Atomic uint64_t key_done, key_total;
    czk_zkey *points;              /* the points, when the backend keeps host points (cpu): the backend
                                      holds this address until it is destroyed */
    gpud_keyload *load;            /* keys.c: the loader thread's state while it exists */
    /* a reload waiting for the jobs accepted before it (reload.c) */
    int reload;                    /* 1 while draining */
    uint64_t reload_last_old;      /* jobs of the circuit with an id up to this one keep the current key */
    czk_zkey reload_zkey;          /* the new key's header (same sizes) */
    int reload_stuck_said;         /* the drain's "old key gone" warning was logged */
    czk_metric *m_ready, *m_load_s; /* czk_gpud_circuit_ready, czk_gpud_key_load_seconds {circuit} */
} gpud_circuit;

/* how far a circuit's key load is, 0..100 (100 only once ready) */
static inline unsigned gpud_key_progress(const gpud_circuit *c)
{
    uint64_t done = atomic_load(&c->key_done), total = atomic_load(&c->key_total);
    unsigned pct;
    if (c->key_state == GPUD_KEY_READY)
        return 100;
    if (!total)
        return 0;
    pct = (unsigned)(done >= total ? 100 : done * 100 / total);
    return pct > 99 ? 99 : pct;
}

/* partitions of circuit c may go to synths and backend contexts */
static inline int gpud_key_ready(const gpud_circuit *circuits, unsigned n, uint32_t c)
{
    return c < n && circuits[c].key_state == GPUD_KEY_READY;
}

/* partitions of job `id` of circuit c may: its key is ready and, during a
 * reload of c (reload.c), the job was accepted before the reload */
static inline int gpud_job_key_ready(const gpud_circuit *circuits, unsigned n, uint32_t c, uint64_t id)
{
    return gpud_key_ready(circuits, n, c) && !(circuits[c].reload && id > circuits[c].reload_last_old);
}

typedef struct gpud_slot {
    gpud_part *part;    /* partition using the slot, NULL when free */
    gpud_synth *synth;  /* synth filling it (P_SYNTH), or holding it while quarantined */
    /* out of use because a fill may still write to it: its synth missed
     * synth_timeout_s (until it answers or goes), or its link closed while its
     * process lives (sched.c: until the process exits or reconnects) */
    uint8_t quarantined;
    uint32_t qgen;       /* the generation the quarantined assignment had */
} gpud_slot;

typedef struct gpud_pool {
    czk_pool pool;
    uint32_t id;
    int node;
    gpud_slot *slots;
    uint32_t in_use;
    czk_metric *m_in_use, *m_capacity, *m_quarantined; /* czk_gpud_slots_{in_use,capacity,quarantined}{pool} */
    uint8_t q_full; /* every slot in use, some quarantined, partitions waiting: logged once (sched.c) */
} gpud_pool;

struct gpud_synth {
    czk_conn *c;
    uint32_t pool;  /* index into g->pools */
    uint32_t owner; /* slot owner id: the synth's pid */
    uint32_t inflight;
    uint32_t quarantined; /* slots it holds past synth_timeout_s: no new ASSIGN while > 0 */
    gpud_peer_map map;    /* our circuits -> its circuit ids, from its HELLO (circuits.h) */
    czk_proc_ref proc;    /* its process, pinned at its HELLO (not pinned: slots reclaimed at disconnect) */
    uint8_t gone;         /* link closed, process alive: off g->synths, kept for its quarantined slots */
    gpud_synth *next;
};

typedef struct gpud gpud;
typedef struct gpud_work gpud_work;

/* The seam between gpud's logic and the outside world.  main.c leaves
 * g->io NULL (gpud_io_default: the real connections, the worker threads,
 * CLOCK_MONOTONIC); the unit tests install fakes that record what would be
 * sent and move the clock by hand. */
typedef struct gpud_io {
    int (*send)(void *ctx, czk_conn *c, const czk_msg *m, const int *fds, int nfds); /* czk_conn_send */
    int (*is_open)(void *ctx, const czk_conn *c);                                    /* czk_conn_is_open */
    unsigned (*queued)(void *ctx, const czk_conn *c);                                /* czk_conn_queued */
    size_t (*unread)(void *ctx, const czk_conn *c); /* czk_conn_unread; NULL: 0 */
    void (*kick)(void *ctx, gpud_work *w); /* hand w to its thread; NULL: worker.c signals it */
    uint64_t (*now)(void *ctx);            /* CLOCK_MONOTONIC ns */
    /* c watches a job (1) or no longer any (0): exempt from the idle timeout
     * (czk_conn_set_idle_exempt); NULL: nothing to do */
    void (*watching)(void *ctx, czk_conn *c, int on);
    void *ctx;
} gpud_io;
extern const gpud_io gpud_io_default;

/* one compute device's turn order (worker.c): FIFO tickets, so the contexts
 * of one GPU compute one after the other while the next one copies in */
typedef struct gpud_turn {
    pthread_mutex_t mu;
    pthread_cond_t cv;  /* CLOCK_MONOTONIC */
    uint64_t next;
    uint64_t serving;   /* written under mu with atomic stores; the spinning waiter reads it without mu */
    uint64_t end_ticket, expect_end; /* the holder's ticket and when it expects to be done (0: unknown) */
    uint64_t spin_ns;   /* the next worker spins this long before expect_end (0: it only sleeps) */
} gpud_turn;

/* the per-device metrics, labelled gpu="N" (main.c's open_metrics registers
 * them for devices 0..GPUD_METRIC_GPUS-1 before the backend exists: the set
 * of metrics is fixed once they are served; a label whose device the backend
 * does not have keeps contexts 0) */
#define GPUD_METRIC_GPUS 8
typedef struct gpud_gpu_metrics {
    czk_metric *contexts, *in_service, *busy, *gap, *done, *mem_used;
} gpud_gpu_metrics;

#define GPUD_GPU_WHY 256

/* One compute device (the backend's device_of; the cpu backend is one
 * device).  Loop thread only (worker.c's gpud_work_computed and the STATUS
 * and metrics readers), set up when the workers start. */
typedef struct gpud_gpu {
    unsigned contexts;       /* backend contexts on it */
    int lost;                /* out of service: a copy-in or compute said the device is gone (-ENODEV) */
    char why[GPUD_GPU_WHY];  /* lost: the backend's error text */
    uint64_t done;           /* partitions computed on it */
    uint64_t failed;         /* partitions that failed on it with an error of their own */
    uint64_t requeued;       /* partitions it held when it was lost, queued again */
    czk_trace_hist *hist;    /* its compute spans (busy % and largest gap) */
    int has_mem;             /* the backend's device_mem answered (main.c's metrics tick) */
    uint64_t mem_used, mem_total;
    int numa;                /* the NUMA node nearest it (backend device_numa), -1 when not known */
} gpud_gpu;

struct gpud_work {
    czk_loop_task copied_task, computed_task;
    gpud *g;
    unsigned ctx;
    unsigned dev; /* its compute device: index into g->gpus (0 when g->gpus is NULL) */
    gpud_turn *turn; /* the device's turn order; NULL: compute at once (concurrent) */
    int busy; /* loop thread: an item is out */
    /* input, written by the loop before start */
    gpud_part *part;
    unsigned circuit;
    czk_backend_input in;
    const czk_pool *pool; /* slot to verify (header and payload crc) before copy-in */
    uint32_t slot;
    /* worker */
    int rc_copy, rc_compute;
    int verify_bad;       /* worker: the slot's checksum did not match (rc_copy is that error) */
    czk_error err;
    czk_groth16_any_msm_out out;
    czk_fr *pub;
    uint64_t t_copied, t_computed;
    uint64_t last_compute_ns; /* worker: its previous compute's length, the next turn's estimate */
    _Atomic uint64_t t_started; /* worker: its turn came and compute began; 0 before (read by STATUS) */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int has_work, stop;
};

/* a SUBMIT whose witnesses are being spooled by the intake thread (intake.c) */
typedef struct gpud_submit_req {
    czk_loop_task done_task;
    gpud *g;
    czk_conn *conn;                /* NULL once the client has gone away */
    struct gpud_submit_req *next;  /* g->pending (loop thread) */
    struct gpud_submit_req *qnext; /* intake queue (intake_mu) */
    char req[CZK_MSG_REQID_MAX + 1];
    uint32_t flags, lane, uid, nparts, circuit;
    uint64_t job, tsub;
    int check_only;                /* a repeated request id: only hash the witnesses (no spool), then compare
                                      them with job `job`'s (jobs.c) */
    /* what the intake thread needs of the circuit, copied on the loop thread
     * when the request is made: the intake never reads g->circuits, which a
     * key reload (reload.c, keys.c) rewrites on the loop thread */
    char cname[64];
    uint32_t n_vars;
    czk_curve_id curve;
    int *fds;                      /* nparts witness fds, owned; closed by the intake thread */
    uint8_t *wsha;                 /* nparts * CZK_SHA256_LEN, written by the intake thread */
    int rc;                        /* intake thread: 0 or -errno, why says what */
    char why[CZK_MSG_STR_LONG];
    gpud_job *jmem;                /* loop thread: the job's memory, allocated before its ACCEPT is written
                                      (gpud_job_alloc), so a durable ACCEPT always becomes a job */
} gpud_submit_req;

typedef struct gpud_stage_stat {
    double sum_s;
    uint64_t n;
    czk_metric *hist;
} gpud_stage_stat;

enum { ST_QUEUE = 0, ST_SYNTH, ST_GPU, ST_FINALIZE, ST_COUNT };

/* the reason classes of czk_gpud_rejections_total (gpud_reject_class; the
 * label values are in main.c's open_metrics, in this order) */
enum {
    GPUD_REJ_QUEUE_FULL = 0,
    GPUD_REJ_BAD_WITNESS,
    GPUD_REJ_UNKNOWN_CIRCUIT,
    GPUD_REJ_DUPLICATE_MISMATCH,
    GPUD_REJ_TOO_MANY_PARTITIONS,
    GPUD_REJ_TOO_MANY_PUBLICS,
    GPUD_REJ_IN_PROGRESS,
    GPUD_REJ_JOURNAL_FULL,
    GPUD_REJ_OUT_OF_MEMORY,
    GPUD_REJ_IO_ERROR,
    GPUD_REJ_KEY_FAILED,
    GPUD_REJ_COUNT
};

struct gpud {
    czk_config cfg;
    czk_loop *loop;             /* NULL in unit tests: they call gpud_sched_run() themselves */
    const gpud_io *io;          /* NULL: gpud_io_default */
    int replaying;              /* jobs.c, during journal replay: transitions write no journal, send no events */
    int sched_dirty;            /* something may have become schedulable (gpud_sched_dirty) */
    int sched_posted;           /* sched_task is posted to the loop */
    czk_loop_task sched_task;   /* runs gpud_sched_run once per loop turn (sched.c sets fn) */
    czk_journal *journal;
    czk_commit *commit;         /* every record goes through it (table.c): group commit, syncs off the loop */
    czk_idmark *idmark;         /* state_dir/next_job_id: job ids are never handed out twice (ipc/journal.h) */
    uint64_t replay_max_job;    /* highest job id in any journal record, forgotten jobs included */
    /* journal append failures (table.c): while journal_down, new submits are
     * refused and a probe record is tried on the status tick and on SUBMIT */
    int journal_down;
    int journal_err;            /* the errno of the failure that started the episode */
    int journal_recovered;      /* an episode ended: RESULTs awaiting DONE go out again (main.c's tick) */
    uint64_t journal_failures_total;
    uint64_t journal_sync_failures; /* syncs that failed (table.c: tells a failed sync from a failed write) */
    czk_metric *m_journal_failures;
    /* compaction while running (jobs.c): posted by table.c once the file has
     * reached compact_at bytes */
    uint64_t compact_at;
    int compact_posted;
    czk_loop_task compact_task;
    struct compact_job *compact_job; /* the rewrite on compact_th, until its end has run on the loop */
    pthread_t compact_th;            /* joined at the next compaction or at stop (it frees the job) */
    int compact_th_live;
    czk_metric *m_journal_bytes, *m_journal_compactions;
    int exit_status;            /* main's exit status when not 0: 2 = the operator must act (bad state) */
    int admin_gid_set;          /* [gpud] admin_group resolved: its members may cancel any job */
    uint32_t admin_gid;
    char spool_dir[CZK_CONFIG_PATH_MAX + 16];
    gpud_circuit *circuits;
    unsigned n_circuits;
    uint32_t max_public;
    gpud_pool *pools;
    unsigned n_pools;
    const czk_backend_ops *bops; /* NULL while starting: the backend is created on a thread (keys.c) */
    czk_backend *backend;
    struct gpud_keys *keys;      /* keys.c: the start-up thread and the key loaders */
    gpud_work *workers;
    unsigned n_workers;
    gpud_turn *turns; /* one per compute device */
    unsigned n_turns;
    gpud_gpu *gpus;   /* one per compute device (worker.c); NULL until the workers start */
    unsigned n_gpus;
    uint64_t gpus_lost_total;
    czk_metric *m_gpus_lost;                      /* czk_gpud_gpus_lost_total */
    gpud_gpu_metrics m_gpu[GPUD_METRIC_GPUS];     /* czk_gpud_gpu_*{gpu} (main.c) */
    /* queues */
    gpud_part *lane_head[GPUD_LANES], *lane_tail[GPUD_LANES];
    gpud_part *ready_head, *ready_tail;
    unsigned part_count[P_STATE_COUNT];
    /* peers */
    gpud_synth *synths;
    czk_conn *finalizer;
    gpud_peer_map fin_map; /* our circuits -> the finalizer's circuit ids (circuits.h) */
    czk_listener *daemon_listener; /* gpud.sock: its HELLO names our key ids (gpud_circuits_announce) */
    /* jobs */
    gpud_job *jobs_head, *jobs_tail;
    gpud_job *hash[GPUD_HASH];
    unsigned n_active, n_history;
    /* stats */
    uint64_t proofs_total, failures_total, cancelled_total;
    uint64_t synth_timeouts_total; /* assignments taken back after synth_timeout_s */
    uint64_t done_ring[GPUD_RATE_WINDOW]; /* CLOCK_MONOTONIC of recent proofs */
    unsigned done_ring_pos;
    gpud_stage_stat stage[ST_COUNT];
    czk_trace_hist compute_hist; /* recent compute spans: STATUS gpu_busy_pct / gpu_max_gap_ms */
    /* intake thread (intake.c): spools witnesses off the loop thread */
    pthread_t intake_th;
    pthread_mutex_t intake_mu;
    pthread_cond_t intake_cv;
    gpud_submit_req *iq_head, *iq_tail;
    int intake_stop, intake_started;
    gpud_submit_req *pending; /* accepted for spooling, not yet journaled */
    unsigned pending_jobs, pending_parts;
    czk_metrics *metrics;
    uint64_t result_resends_total;
    czk_metric *m_lane[GPUD_LANES], *m_proofs, *m_failures, *m_jobs, *m_synth_timeouts, *m_result_resends;
    czk_metric *m_parts[P_STATE_COUNT];  /* czk_gpud_partitions{stage}: P_QUEUED..P_FINALIZE (main.c's tick) */
    czk_metric *m_rejects[GPUD_REJ_COUNT]; /* czk_gpud_rejections_total{reason} (gpud_count_reject) */
    czk_metric *m_busy_ratio, *m_max_gap, *m_busy_seconds, *m_journal_sync, *m_synths, *m_finalizer;
    czk_metric *m_journal_syncs, *m_journal_records;
    int stopping;
};

/* A SUBMIT's rejection, counted by the class of its error code in
 * czk_gpud_rejections_total{reason} (jobs.c's reject() calls this for every
 * REJECTED it sends).  The class names are part of the metrics' contract. */
static inline int gpud_reject_class(int code)
{
    switch (code) {
    case -EBUSY: return GPUD_REJ_QUEUE_FULL;          /* max_jobs or max_queued_partitions */
    case -EINVAL: case -EFBIG: case -EBADMSG: case -EPROTO: case -ERANGE: case -ENOEXEC:
        return GPUD_REJ_BAD_WITNESS;                  /* a witness (or the SUBMIT carrying them) is not valid */
    case -ENOENT: return GPUD_REJ_UNKNOWN_CIRCUIT;
    case -EEXIST: return GPUD_REJ_DUPLICATE_MISMATCH; /* request id reused for another submission */
    case -E2BIG: return GPUD_REJ_TOO_MANY_PARTITIONS;
    case -EMSGSIZE: return GPUD_REJ_TOO_MANY_PUBLICS;
    case -EAGAIN: return GPUD_REJ_IN_PROGRESS;        /* the same request id is still being spooled */
    case -ENOSPC: case -EDQUOT: return GPUD_REJ_JOURNAL_FULL; /* state_dir full: journal, id mark or spool */
    case -ENOMEM: return GPUD_REJ_OUT_OF_MEMORY;
    case -EKEYREJECTED: return GPUD_REJ_KEY_FAILED;   /* the circuit's proving key failed to load */
    default: return GPUD_REJ_IO_ERROR;                /* the journal or the spool could not be written */
    }
}
static inline void gpud_count_reject(gpud *g, int code)
{
    czk_metric_inc(g->m_rejects[gpud_reject_class(code)], 1);
}

/* io.c (leaf) */
int gpud_send(gpud *g, czk_conn *c, const czk_msg *m, const int *fds, int nfds);
int gpud_conn_open(gpud *g, const czk_conn *c);
unsigned gpud_conn_queued(gpud *g, const czk_conn *c);
size_t gpud_conn_unread(gpud *g, const czk_conn *c);
uint64_t gpud_now(gpud *g);
void gpud_conn_watching(gpud *g, czk_conn *c, int on);
void gpud_sched_dirty(gpud *g); /* work may be schedulable: run the scheduler at the end of this loop turn */

/* events.c (leaf) */
void gpud_event(gpud *g, gpud_job *j, uint32_t part, uint32_t stage, int32_t status, const char *reason,
                const czk_bytes *proof, const czk_bytes *pub);
void gpud_watch_add(gpud *g, gpud_job *j, czk_conn *c);
void gpud_watch_drop_conn(gpud *g, czk_conn *c); /* c is gone: it follows no job any more */
/* j is final and its last EVENT sent: nobody follows it any more, and each
 * connection that follows no other job is subject to the idle timeout again */
void gpud_watch_end(gpud *g, gpud_job *j);
/* WATCH's answer (also a duplicate SUBMIT's with CZK_SUBMIT_F_WAIT): EVENT
 * with the job's current stage, and c follows a job that is still active */
void gpud_watch_job(gpud *g, gpud_job *j, czk_conn *c);
void gpud_reply_error(gpud *g, czk_conn *c, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void gpud_stage_observe(gpud *g, int stage, uint64_t ns);

/* queue.c (leaf): lanes and the ready queue; membership only, no state */
void gpud_lane_push(gpud *g, gpud_part *p, int front);
void gpud_ready_push(gpud *g, gpud_part *p);
void gpud_unlink(gpud *g, gpud_part *p); /* from its lane (P_QUEUED) or the ready queue */
gpud_part *gpud_lane_first(const gpud *g); /* highest non-empty lane's head, or NULL */

/* table.c: the job table, journal records, spool paths */
typedef struct gpud_rec {
    uint64_t job, tsub;
    uint32_t lane, nparts, uid, part;
    int32_t status;
    char req[CZK_MSG_REQID_MAX + 1], circ[64];
    const uint8_t *wsha; /* ACCEPT: nparts * CZK_SHA256_LEN or NULL (older records); parse: points into the
                            record, valid during the replay callback */
} gpud_rec;
gpud_job *gpud_job_find(gpud *g, uint64_t id);
gpud_job *gpud_job_find_req(gpud *g, uint32_t uid, const char *req);
void gpud_job_insert(gpud *g, gpud_job *j);
void gpud_jobs_trim(gpud *g); /* forget the oldest finished jobs beyond [gpud] history_jobs */
/* appends one record and syncs it before returning (ACCEPT, CANCEL, PROBE,
 * a partition's failure).  A failure starts (or continues) a journal
 * episode: g->journal_down, czk_gpud_journal_append_failures_total, one log line
 * per episode; a poisoned journal (czk_journal_failed) stops the loop with
 * exit status 1 so that systemd restarts gpud. */
int gpud_rec_write(gpud *g, uint16_t type, const gpud_rec *r);
/* appends one record durable with the next group sync (a partition's DONE,
 * COMPLETE): fn(g, ctx, seq, rc) runs from the loop once that sync is
 * settled (ipc/commit.h); fn may be NULL.  A write failure returns -errno
 * (an episode as above) and fn is not called. */
int gpud_rec_defer(gpud *g, uint16_t type, const gpud_rec *r, czk_commit_fn fn, void *ctx);
/* every record durable and every settled callback run: only where no job or
 * partition pointer is held across it */
void gpud_journal_settle(gpud *g);
/* the committer over g->journal (after replay and compaction), and its end
 * (after the loop's last run: pending records synced, callbacks run) */
int gpud_journal_commit_open(gpud *g, czk_error *e);
void gpud_journal_commit_close(gpud *g);
/* while journal_down: appends a probe record; 0 when appends work again
 * (the episode is over), else -errno */
int gpud_journal_probe(gpud *g);
int gpud_rec_parse(const czk_journal_rec *rec, gpud_rec *r);
void gpud_spool_path(const gpud *g, uint64_t job, uint32_t part, char *buf, size_t n);
void gpud_spool_remove(gpud *g, uint64_t job);

/* part.c: see part.h */
#include "gpud/part.h"
/* part.c, the parts of gpud_job_accept for a live SUBMIT (jobs.c): the
 * memory of a job of nparts partitions (with room for their digests when
 * digests), allocated before its ACCEPT record is written, and taken by
 * gpud_job_adopt once the record is durable, which cannot fail: a durable
 * ACCEPT always becomes a job in memory.  NULL when memory ran out;
 * gpud_job_discard frees one never adopted. */
gpud_job *gpud_job_alloc(uint32_t nparts, int digests);
void gpud_job_discard(gpud_job *j);
void gpud_job_adopt(gpud *g, const gpud_rec *r, gpud_job *j);

/* jobs.c */
int gpud_jobs_open(gpud *g, czk_error *e);          /* journal replay + compaction */
/* the journal rewritten to the records of the jobs still remembered (at a
 * safe point: it settles the group commit first, see czk_commit_compact);
 * sets the size at which table.c posts the next one */
int gpud_jobs_compact(gpud *g, czk_error *e);
/* while running the rewrite is on a thread of its own (the loop goes on;
 * its end, back on the loop, waits for the sync in flight and syncs once);
 * stop joins it and drops its work (after the loop's last run) */
void gpud_jobs_compact_stop(gpud *g);
void gpud_jobs_requeue_all(gpud *g);               /* after pools: queue every pending partition */
void gpud_submit(gpud *g, czk_conn *c, const czk_msg_submit *s, int *fds, int nfds); /* takes the fds */
/* a request for nparts witnesses of circuit `circuit` (fds all -1): what the
 * intake reads of the circuit is copied into it here; NULL without memory */
gpud_submit_req *gpud_submit_req_new(gpud *g, uint32_t circuit, uint32_t nparts);
void gpud_submit_req_free(gpud_submit_req *r); /* closes the fds it still holds */
void gpud_submit_finish(gpud *g, gpud_submit_req *r); /* loop thread: the spool is written (or failed) */
void gpud_submit_client_gone(gpud *g, czk_conn *c);
int gpud_job_id_next(gpud *g, uint64_t *id, czk_error *e); /* from the id mark; never one handed out before */
void gpud_jobs_free(gpud *g);

/* intake.c */
int gpud_intake_start(gpud *g, czk_error *e);
void gpud_intake_stop(gpud *g);
void gpud_intake_queue(gpud *g, gpud_submit_req *r); /* r->done_task is posted to the loop when done */
/* the intake's work on one request on the calling thread (spool or hash,
 * r->rc and r->why set, its fds closed); the intake thread runs it for each
 * request it takes, the unit tests call it directly */
void gpud_intake_run(gpud *g, gpud_submit_req *r);

/* sched.c */
void gpud_sched_attach(gpud *g);                    /* wire g->sched_task to gpud_sched_run */
void gpud_sched_run(gpud *g);                       /* if dirty: assign slots, start workers */
void gpud_leases_check(gpud *g);                    /* take back assignments past synth_timeout_s */
int gpud_pools_open(gpud *g, czk_error *e);         /* create or adopt one pool per NUMA node */
void gpud_pools_close(gpud *g);
void gpud_synth_open(gpud *g, czk_conn *c);
void gpud_synth_close(gpud *g, czk_conn *c);
void gpud_synth_msg(gpud *g, czk_conn *c, const czk_msg *m);
/* the same without the connection's handshake data (unit tests) */
gpud_synth *gpud_synth_attach(gpud *g, czk_conn *c, uint32_t owner, uint32_t pool);
void gpud_synth_detach(gpud *g, gpud_synth *s);
void gpud_synth_ready(gpud *g, gpud_synth *s, const czk_msg_ready *r);
unsigned gpud_synth_count(const gpud *g);

/* worker.c */
int gpud_workers_start(gpud *g, czk_error *e);
void gpud_workers_stop(gpud *g);
/* an idle context on a device in service, or NULL */
gpud_work *gpud_worker_idle(gpud *g, unsigned circuit, int node);
/* g->gpus from the backend's device_of over g->workers (each worker's dev
 * set); gpud_workers_start calls it, the unit tests call it over their own
 * workers and fake backend ops.  In test builds (CZK_FAULT_INJECTION) the
 * environment variable CZK_GPUD_TEST_DEVICES=N makes a backend without
 * device_of present N devices (context i on device i % N). */
int gpud_gpus_setup(gpud *g, czk_error *e);
void gpud_gpus_free(gpud *g);
/* devices in service (every device counts while g->gpus is NULL: 1) */
unsigned gpud_gpus_in_service(const gpud *g);
/* busy % and largest idle gap of device dev (-1: all devices together)
 * over the last window_ns up to now; a running compute counts up to now */
void gpud_busy(gpud *g, int dev, uint64_t now, uint64_t window_ns, double *pct, uint64_t *gap_ns);
/* the loop's view of a device loss: the device of w is taken out of service
 * (logged once, counted); returns 1 when it was in service until now */
int gpud_gpu_lost(gpud *g, unsigned dev, const char *why);
void gpud_work_start(gpud *g, gpud_work *w, gpud_part *p); /* p is P_READY */
/* loop thread, after the worker's copied/computed posts (unit tests call them directly) */
void gpud_work_copied(gpud *g, gpud_work *w);
void gpud_work_computed(gpud *g, gpud_work *w);

/* keys.c: the backend is created on a start-up thread and every circuit's
 * key points are loaded on a thread of their own, after the sockets answer;
 * the loop hears of each through a posted task */
int gpud_keys_start(gpud *g, czk_error *e); /* after the pools: the threads start */
void gpud_keys_stop(gpud *g);               /* stop and join the threads (shutdown, before czk_loop_destroy) */
void gpud_keys_close(gpud *g);              /* free what is left (after the backend was destroyed) */
const char *gpud_keys_state(const gpud *g); /* "starting" until the backend exists, then "running" */
/* reload.c's swap: the backend forgets circuit i's points, the circuit takes
 * the header *nz (moved: nz is emptied) and loads its points on a loader
 * thread as at start.  No partition of i may be on a worker.  -errno with e
 * naming why (nz is then closed; the old key stays unless the failure came
 * after remove_key, which leaves the circuit failed). */
int gpud_keys_replace(gpud *g, unsigned i, czk_zkey *nz, czk_error *e);

/* reload.c: SIGHUP asks for the circuits whose zkey file changed; the poll
 * (main.c's tick) swaps each once the jobs accepted before it are done */
void gpud_reload_request(gpud *g);
void gpud_reload_poll(gpud *g);
void gpud_keys_status(const gpud *g, czk_status_reply *sr); /* STATUS: state and the circuits */
void gpud_keys_metrics(gpud *g);            /* register the per-circuit gauges (main.c's open_metrics) */

/* results.c */
int gpud_result_fits(const gpud *g, uint32_t circuit); /* its public signals fit one RESULT record */
void gpud_result_ready(gpud *g, gpud_part *p);      /* send RESULT if the finalizer is there */
void gpud_finalizer_open(gpud *g, czk_conn *c);
void gpud_finalizer_close(gpud *g, czk_conn *c);
void gpud_finalizer_msg(gpud *g, czk_conn *c, const czk_msg *m);
void gpud_finalizer_attach(gpud *g, czk_conn *c, uint32_t pid); /* gpud_finalizer_open without the handshake */
void gpud_finalizer_done(gpud *g, const czk_msg_done *d);
void gpud_results_flush(gpud *g);                  /* send RESULTs not yet sent */
void gpud_results_check(gpud *g);                  /* re-send RESULTs unanswered for [gpud] result_resend_s */
void gpud_results_resend(gpud *g);                 /* send every RESULT awaiting DONE again (journal works again) */

/* clients.c */
extern const czk_conn_ops gpud_client_ops;
extern const czk_conn_ops gpud_daemon_ops;
/* parts of STATUS_REPLY (also for the unit tests): a job as STATUS shows it
 * (counts per stage, why it is not moving), and the busy share of the
 * backend over the last minute, all devices together and per device
 * ("gpus": state, why out of service, partitions, memory) */
void gpud_status_job(const gpud *g, const gpud_job *j, czk_status_job *o);
void gpud_status_busy(gpud *g, czk_status_reply *sr, uint64_t now);

#endif
