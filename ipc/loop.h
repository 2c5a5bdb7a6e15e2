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
 *    order is kept; the queue holds at most cfg.out_queue_cap records and
 *    czk_conn_send() returns -ENOBUFS beyond that (the caller decides: drop,
 *    retry later, or close a peer that does not read);
 *  - timers (IORING_OP_TIMEOUT): leases, heartbeats, the systemd watchdog;
 *  - an eventfd read kept armed, so worker threads can hand work to the loop
 *    thread with czk_loop_post() (lock-free, no allocation);
 *  - teardown: czk_conn_close() shuts the socket down, cancels everything of
 *    that connection in the ring and frees it only after the last CQE
 *    (including -ECANCELED ones) has come back; then ops->on_close runs.
 *  - peer death: EOF on the socket (the kernel closes it when the peer dies)
 *    closes the connection with reason "peer closed the connection".
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

typedef struct czk_loop_config {
    unsigned sq_entries;    /* ring size, default 256 */
    unsigned recv_buffers;  /* provided receive buffers (power of 2), default 64 */
    unsigned out_queue_cap; /* queued records per connection, default 256 */
    unsigned max_conns;     /* default 1024 */
    unsigned hello_timeout_ms; /* close peers that do not say HELLO, default 5000 */
} czk_loop_config;

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

/* Adopts a connected socket as the client side: checks the peer's
 * credentials, sends our HELLO and waits for theirs (on_open follows).  The
 * loop owns fd from now on, also on failure. */
int czk_loop_connect(czk_loop *l, int fd, const czk_endpoint *ep, const czk_conn_ops *ops, void *ctx,
                     czk_conn **out, czk_error *err);

/* Queues a record; fds are duplicated (the caller keeps its own). */
int czk_conn_send(czk_conn *c, const czk_msg *m, const int *fds, int nfds);
/* Queues pre-encoded bytes as one record (tests, benchmarks, relays). */
int czk_conn_send_raw(czk_conn *c, const void *rec, size_t len, const int *fds, int nfds);
/* Closes (idempotent); why is logged.  flush != 0 sends what is queued first. */
void czk_conn_close(czk_conn *c, int err, const char *why, int flush);

const czk_msg_hello *czk_conn_peer(const czk_conn *c);
const czk_peer_cred *czk_conn_cred(const czk_conn *c);
int czk_conn_is_open(const czk_conn *c);
unsigned czk_conn_queued(const czk_conn *c);
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
    uint64_t accepted, rejected, opened, closed, records_in, records_out, malformed, enobufs, wakeups;
    unsigned conns;
} czk_loop_stats;
void czk_loop_get_stats(const czk_loop *l, czk_loop_stats *s);

#endif
