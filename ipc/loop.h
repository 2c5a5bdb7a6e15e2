/*
 * loop.h — the io_uring event loop every czk daemon runs (one per thread).
 *
 * One ring per thread, owned by that thread: create the loop on the thread
 * that will run it and call every czk_loop_* / czk_conn_* function from that
 * thread only (the ring is set up SINGLE_ISSUER when the kernel allows), with
 * two exceptions that other threads may call: czk_loop_post() and
 * czk_loop_wake().  Create loops after fork(), never before.
 *
 * What it drives:
 *  - listeners: multishot accept; every new peer is checked against the
 *    listener's policy (SO_PEERCRED, peer.h) and must send HELLO first; the
 *    loop answers with our HELLO and then calls ops->on_open;
 *  - connections (SOCK_SEQPACKET): one multishot recvmsg per connection
 *    into a ring of provided buffers shared by the loop, SCM_RIGHTS fds
 *    received with MSG_CMSG_CLOEXEC; every record is decoded (msg.h) and given
 *    to ops->on_msg; a malformed record, a record over the 64 KiB cap, a
 *    truncated fd list or a protocol violation closes only that connection,
 *    with one log line saying why (and an ERROR record to the peer, best
 *    effort);
 *  - sending: czk_conn_send() encodes and queues; at most CZK_LOOP_SEND_BATCH
 *    records are in flight per connection as one linked chain of sendmsg, so
 *    order is kept; how much may be queued depends on the connection's kind
 *    (flow control, below);
 *  - timers (IORING_OP_TIMEOUT): leases, heartbeats, the systemd watchdog;
 *  - an eventfd read kept armed, so worker threads can hand work to the loop
 *    thread with czk_loop_post() (lock-free, no allocation);
 *  - teardown: czk_conn_close() shuts the socket down, cancels everything of
 *    that connection in the ring and frees it only after the last CQE
 *    (including -ECANCELED ones) has come back; then ops->on_close runs.
 *  - peer death: EOF on the socket (the kernel closes it when the peer dies)
 *    closes the connection with reason "peer closed the connection".
 *
 * Flow control: a record that cannot be queued is never dropped silently.
 * Every connection has a kind (czk_endpoint.kind; CZK_CONN_AUTO makes a
 * listener that admits only CZK_ROLE_CLIENT a client listener, everything
 * else daemon):
 *  - CZK_CONN_DAEMON (gpud <-> synth, gpud <-> finalizer): the loop reads from
 *    a daemon peer at all times, so two daemons whose queues to each other
 *    are full still drain each other and cannot deadlock.  The outgoing queue
 *    is bounded by bytes (cfg.daemon_queue_bytes, default 64 MiB) and records
 *    (cfg.out_queue_cap, default 65536).  A record that does not fit closes
 *    the connection: czk_conn_send returns -ENOBUFS, the reason is logged once
 *    and stats.overflow_closes counts it.  The peer sees EOF and its
 *    reconnect/resync path recovers what was in flight (a synth re-reports
 *    its READY slots in RESYNC; gpud reclaims the synth's slots and re-sends
 *    RESULTs the finalizer has not acknowledged with DONE).
 *  - CZK_CONN_CLIENT (the czk.sock of gpud): backpressure.  While more than
 *    cfg.client_queue_soft bytes (default 256 KiB) are queued to a client,
 *    the loop stops reading its requests (its receive is cancelled, counted
 *    in stats.read_pauses) and reads again once the queue has drained to half
 *    of that.  A client that reads nothing while replies keep coming (events
 *    of a watched job) is closed at cfg.client_queue_hard bytes (default
 *    16 MiB) or cfg.out_queue_cap records, as an overflow close.  Only the
 *    daemon side of a client link ever stops reading, so this cannot
 *    deadlock either.
 * czk_conn_send() returns 0 when the record is queued (delivered unless the
 * connection dies first: every protocol needs its resync anyway), or:
 *   -EAGAIN  the handshake is not complete: nothing queued, nothing changed;
 *   -EINVAL, -EMSGSIZE ...  the record could not be encoded (or, for _raw, is
 *            empty, over the cap, or has a bad fd count): logged, nothing
 *            queued, the connection is unaffected (the caller may answer
 *            with an ERROR instead);
 *   -ENOBUFS the queue is over its limit, and -ENOMEM or a dup() error when
 *            the record could not be copied: the connection is now closing,
 *            with the reason logged once and counted (stats.overflow_closes,
 *            stats.send_errors);
 *   -EPIPE   the connection is already closing (its reason was logged).
 * So after any failure other than -EAGAIN and an encoding error, on_close
 * follows (from the loop, never from inside czk_conn_send or
 * czk_conn_close), and a caller that ignores the return value loses nothing
 * as long as its on_close path recovers what the peer did not receive.
 *
 * Connection limits, for accepted connections by kind: cfg.max_clients
 * client connections, cfg.max_clients_per_uid of them from one SO_PEERCRED
 * uid, cfg.max_daemon_conns daemon connections.  A peer over a limit is sent
 * an ERROR record (-EBUSY, saying which limit; before any HELLO, which
 * czk_peer_handshake() reports as "peer refused the handshake") and closed;
 * stats.refused counts it and the log says so at most once every 10 s.
 * Idle clients: a client connection that has neither received nor sent a
 * record for cfg.client_idle_timeout_ms is closed (stats.idle_closes) unless
 * it was marked with czk_conn_set_idle_exempt(c, 1) (gpud: it watches a job).
 * fd exhaustion: when accept fails with EMFILE, ENFILE, ENOBUFS or ENOMEM
 * the listener stops accepting and retries after 10 ms, doubling up to
 * 1 s, logging a warning when the episode starts and one line when it ends
 * (stats.accept_errors counts the failed accepts, stats.accept_pauses the
 * episodes).  Meanwhile the loop's reserve fd (an open /dev/null) is closed
 * for a moment to accept the peers waiting in the backlog, tell them -EBUSY
 * and close them, so a client fails at once instead of hanging.
 * An idle connection costs one struct czk_conn (about the size of the
 * peer's HELLO, which it keeps): receive buffers are shared by the loop, our
 * endpoint is the listener's, and outgoing records are allocated per record
 * (small ones from a per-loop cache).
 *
 * Callbacks run on the loop thread.  Inside on_msg, byte strings in the
 * message point into a receive buffer that is recycled when on_msg returns.
 * Received fds: on_msg may take any fd by storing -1 in its slot of fds[];
 * the loop closes the rest after on_msg returns.
 *
 * Protocol rules enforced here (so daemons need not): the first record on a
 * connection is HELLO and there is exactly one; POOL carries exactly one fd;
 * SUBMIT carries exactly n_fds fds; other records carry none.
 *
 * Requires Linux 6.0 (multishot recvmsg, provided buffer rings); Debian 12's
 * 6.1 is enough.  czk_loop_create fails with a clear error on older kernels.
 */
#ifndef CZK_IPC_LOOP_H
#define CZK_IPC_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "common/base/error.h"
#include "ipc/msg.h"
#include "ipc/peer.h"

#define CZK_LOOP_SEND_BATCH 16

typedef struct czk_loop czk_loop;
typedef struct czk_conn czk_conn;
typedef struct czk_listener czk_listener;
typedef struct czk_timer czk_timer;

/* Zero fields take the defaults named here. */
/* receive buffers when czk_loop_config.recv_buffers is 0: also how many
 * records (each with up to CZK_MSG_MAX_FDS fds) the loop may hold received
 * before handling them */
#define CZK_LOOP_RECV_BUFFERS 64

typedef struct czk_loop_config {
    unsigned sq_entries;          /* ring size, default 256 */
    unsigned recv_buffers;        /* provided receive buffers (power of 2), default CZK_LOOP_RECV_BUFFERS */
    unsigned out_queue_cap;       /* queued records per connection, default 65536 */
    size_t daemon_queue_bytes;    /* queued bytes to a daemon peer, default 64 MiB */
    size_t client_queue_soft;     /* queued bytes to a client above which it is not read, default 256 KiB */
    size_t client_queue_hard;     /* queued bytes to a client that close it, default 16 MiB */
    unsigned max_clients;         /* accepted client connections, default 1000 */
    unsigned max_clients_per_uid; /* of those from one uid, default max_clients */
    unsigned max_daemon_conns;    /* accepted daemon connections, default 64 */
    unsigned client_idle_timeout_ms; /* close idle, non-exempt clients after this, default 0 = never */
    unsigned hello_timeout_ms;    /* close peers that do not say HELLO, default 5000 */
} czk_loop_config;

/* The limits of a daemon's loop from its configuration (config.h): every
 * field above that the configuration names, the rest zero (defaults). */
struct czk_config;
void czk_loop_config_from(czk_loop_config *lc, const struct czk_config *cfg);

enum czk_conn_kind { CZK_CONN_AUTO = 0, CZK_CONN_DAEMON = 1, CZK_CONN_CLIENT = 2 };

typedef struct czk_conn_ops {
    /* handshake complete: czk_conn_peer() is valid from now on */
    void (*on_open)(czk_conn *c, void *ctx);
    /* one decoded record (never HELLO); see the notes above on fds */
    void (*on_msg)(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx);
    /* the connection is gone; err is 0 for a clean EOF, else -errno; why is
     * the logged reason.  Called exactly once, also when the handshake failed. */
    void (*on_close)(czk_conn *c, int err, const char *why, void *ctx);
} czk_conn_ops;

typedef struct czk_endpoint {
    czk_msg_hello hello;    /* what we say in HELLO (czk_peer_hello_init) */
    czk_peer_policy policy; /* who may talk to us */
    int kind;               /* enum czk_conn_kind: flow control and limits */
} czk_endpoint;

typedef void (*czk_timer_fn)(czk_timer *t, void *ctx);

/* Work handed to the loop thread by another thread; embed it in your struct. */
typedef struct czk_loop_task {
    struct czk_loop_task *next;
    void (*fn)(struct czk_loop_task *task, void *ctx);
    void *ctx;
} czk_loop_task;

int czk_loop_create(czk_loop **out, const czk_loop_config *cfg, czk_error *err);
/* closes every connection and listener (no callbacks), frees everything */
void czk_loop_destroy(czk_loop *l);

/* Runs until czk_loop_stop(); returns 0 or a fatal -errno of the ring. */
int czk_loop_run(czk_loop *l);
/* Processes completions for at most timeout_ms (0: only what is ready). */
int czk_loop_run_once(czk_loop *l, int timeout_ms);
void czk_loop_stop(czk_loop *l);

/* Starts accepting on a listening SEQPACKET socket (the loop owns lfd). */
int czk_loop_listen(czk_loop *l, int lfd, const czk_endpoint *ep, const czk_conn_ops *ops, void *ctx,
                    czk_listener **out, czk_error *err);
void czk_listener_close(czk_listener *ls);
/* Changes what the listener says in HELLO to the peers it accepts from now
 * on (loop thread; connections already open keep the HELLO they got). */
void czk_listener_set_hello(czk_listener *ls, const czk_msg_hello *hello);

/* Adopts a connected socket as the client side: checks the peer's
 * credentials, sends our HELLO and waits for theirs (on_open follows).  The
 * loop owns fd from now on, also on failure. */
int czk_loop_connect(czk_loop *l, int fd, const czk_endpoint *ep, const czk_conn_ops *ops, void *ctx,
                     czk_conn **out, czk_error *err);

/* Queues a record; fds are duplicated (the caller keeps its own).  Return
 * values: see "Flow control" above. */
int czk_conn_send(czk_conn *c, const czk_msg *m, const int *fds, int nfds);
/* Queues pre-encoded bytes as one record (tests, benchmarks, relays). */
int czk_conn_send_raw(czk_conn *c, const void *rec, size_t len, const int *fds, int nfds);
/* Closes (idempotent); why is logged.  flush != 0 sends what is queued first. */
void czk_conn_close(czk_conn *c, int err, const char *why, int flush);

const czk_msg_hello *czk_conn_peer(const czk_conn *c);
const czk_peer_cred *czk_conn_cred(const czk_conn *c);
int czk_conn_is_open(const czk_conn *c);
unsigned czk_conn_queued(const czk_conn *c);        /* records queued or in flight */
size_t czk_conn_queued_bytes(const czk_conn *c);    /* what counts against the limits */
/* bytes already sent on c that the peer has not read yet (SIOCOUTQ: the
 * kernel charges them, and the fds they carry, to this side until read);
 * 0 when the socket cannot say */
size_t czk_conn_unread(const czk_conn *c);
int czk_conn_kind(const czk_conn *c);               /* CZK_CONN_DAEMON or CZK_CONN_CLIENT */
int czk_conn_reading(const czk_conn *c);            /* 0 while paused by backpressure */
/* A client connection with exempt != 0 is never closed as idle (gpud: it
 * watches a job, whose events may be minutes apart); exempt == 0 starts its
 * idle time afresh.  No effect on daemon connections. */
void czk_conn_set_idle_exempt(czk_conn *c, int exempt);
void czk_conn_set_user(czk_conn *c, void *user);
void *czk_conn_user(const czk_conn *c);
czk_loop *czk_conn_loop(const czk_conn *c);

/* One-shot (interval_ms 0) or repeating timer.  Returns NULL on error. */
czk_timer *czk_loop_timer(czk_loop *l, uint64_t first_ms, uint64_t interval_ms, czk_timer_fn fn, void *ctx);
/* Stops it; fn is not called again.  The memory is freed by the loop. */
void czk_timer_cancel(czk_timer *t);

/* Thread-safe: run task->fn(task, task->ctx) on the loop thread soon. */
void czk_loop_post(czk_loop *l, czk_loop_task *task);
/* Thread-safe: wake the loop (e.g. to re-check a lock-free queue of yours). */
void czk_loop_wake(czk_loop *l);
/* Called on the loop thread after each wake-up, if set. */
void czk_loop_set_wake_fn(czk_loop *l, void (*fn)(void *ctx), void *ctx);

/* Counters for tests, STATUS and metrics. */
typedef struct czk_loop_stats {
    uint64_t accepted, rejected, opened, closed, records_in, records_out, malformed, wakeups;
    uint64_t enobufs;         /* receives that found every provided buffer in use */
    uint64_t overflow_closes; /* connections closed because their queue was over its limit */
    uint64_t send_errors;     /* connections closed because a record could not be copied */
    uint64_t read_pauses;     /* clients whose requests were left unread (backpressure) */
    uint64_t idle_closes;     /* idle client connections closed */
    uint64_t refused;         /* peers told -EBUSY: a connection limit, or no fd to serve them */
    uint64_t accept_errors;   /* failed accepts (EMFILE, ENFILE, ...) */
    uint64_t accept_pauses;   /* episodes of accepting paused by such failures */
    unsigned conns, clients, daemons;
} czk_loop_stats;
void czk_loop_get_stats(const czk_loop *l, czk_loop_stats *s);

/* Registers the counters above as czk_conn_* / czk_accept_* metrics in m
 * (before czk_metrics_serve) and refreshes them every second from the loop
 * thread.  Returns 0 or -ENOSPC when the registry is full. */
struct czk_metrics;
int czk_loop_export_metrics(czk_loop *l, struct czk_metrics *m);

#endif
