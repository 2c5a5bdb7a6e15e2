/*
 * loop_internal.h — private to loop.c and conn.c: the structures of the event
 * loop and the functions the two files call in each other.  Nothing outside
 * ipc/loop.c and ipc/conn.c includes this; the contract is loop.h.
 */
#ifndef CZK_IPC_LOOP_INTERNAL_H
#define CZK_IPC_LOOP_INTERNAL_H

#include <liburing.h>
#include <sys/socket.h>

#include "ipc/loop.h"

enum { OP_ACCEPT = 1, OP_RECV, OP_SEND, OP_CANCEL, OP_TIMER, OP_TIMER_DEL, OP_WAKE };
#define UD(ptr, op) ((uint64_t)(uintptr_t)(ptr) | (uint64_t)(op))
#define UD_OP(ud) ((unsigned)((ud)&7u))
#define UD_PTR(ud) ((void *)(uintptr_t)((ud) & ~(uint64_t)7))

#define BGID 7
#define RECV_CTL_LEN CMSG_SPACE(sizeof(int) * CZK_MSG_MAX_FDS)
#define RECV_BUF_LEN \
    ((sizeof(struct io_uring_recvmsg_out) + RECV_CTL_LEN + CZK_MSG_MAX_RECORD + 4095) & ~(size_t)4095)
#define OUT_SMALL 512        /* records up to this size without fds reuse cached blocks */
#define OUT_CACHE_MAX 256    /* cached small record blocks per loop */
#define ACCEPT_BACKOFF_MIN_MS 10
#define ACCEPT_BACKOFF_MAX_MS 1000
#define ACCEPT_DRAIN_MAX 64  /* backlog peers told "busy" per failed accept */
#define REFUSE_LOG_EVERY_NS (10ull * 1000000000ull)

enum { ST_HELLO = 0, ST_OPEN = 1, ST_CLOSING = 2 };

/* One queued record, allocated in one block: this header, the cmsg buffer
 * (nfds > 0) and the bytes. */
typedef struct outrec {
    struct outrec *next;
    struct msghdr mh;
    struct iovec iov;
    uint8_t *data;
    uint32_t len;
    uint32_t cap; /* bytes of room at data (OUT_SMALL for cacheable blocks) */
    int nfds;
    int *fds;     /* duplicates owned by the queue, inside the cmsg buffer */
} outrec;

struct czk_conn {
    czk_loop *loop;
    int fd;
    int state;
    int is_client;    /* we connected (we say HELLO first) */
    int kind;         /* CZK_CONN_DAEMON or CZK_CONN_CLIENT */
    int counted;      /* accepted: counts against the limits of its kind */
    int inflight;
    int recv_armed;
    int rx_paused;    /* backpressure: receive cancelled until the queue drains */
    int idle_exempt;
    int flush_close;  /* close once the queue is empty */
    int close_err;
    char why[256];
    czk_conn_ops ops;
    void *ctx;
    const czk_endpoint *ep; /* the listener's (which outlives it), or own_ep */
    czk_endpoint *own_ep;   /* czk_loop_connect: a copy of the caller's */
    czk_listener *ls;       /* the listener that accepted it (holds a reference) */
    czk_peer_cred cred;
    czk_msg_hello peer;
    outrec *qhead, *qtail; /* the first qsent records are in flight */
    unsigned qcount, qsent;
    size_t qbytes;         /* sizeof(outrec) + len of every queued record */
    uint64_t opened_ns, active_ns;
    void *user;
    int dirty;             /* on the loop's flush list */
    czk_conn *flush_next;
    czk_conn *next, *prev;
};

struct czk_listener {
    czk_loop *loop;
    int fd;
    int kind;
    int closing;
    int inflight;
    unsigned refs;         /* connections using ep: freed when closing and none left */
    int paused;            /* accept failed for lack of fds: waiting for retry */
    unsigned backoff_ms;
    uint64_t failures;     /* failed accepts in this episode */
    czk_timer *retry;
    char name[112];        /* the socket path, for logs */
    czk_endpoint ep;
    czk_conn_ops ops;
    void *ctx;
    czk_listener *next, *prev;
};

struct czk_timer {
    czk_loop *loop;
    struct __kernel_timespec ts;
    uint64_t interval_ms;
    czk_timer_fn fn;
    void *ctx;
    int cancelled, done, in_cb, inflight;
    czk_timer *next, *prev;
};

struct czk_loop {
    struct io_uring ring;
    czk_loop_config cfg;
    struct io_uring_buf_ring *br;
    size_t br_size;
    uint8_t *bufs;
    size_t bufs_size;
    unsigned nbufs;
    struct msghdr rmsg; /* template for multishot recvmsg: no name, room for fds */
    int wake_fd;
    uint64_t wake_val;
    czk_loop_task *tasks; /* lock-free stack, pushed by any thread */
    void (*wake_fn)(void *);
    void *wake_ctx;
    int stop;
    czk_conn *conns;
    czk_conn *flush_list; /* conns with queued records to submit */
    czk_listener *listeners;
    czk_timer *timers;
    czk_timer *sweep;
    czk_loop_stats st;
    int reserve_fd;          /* /dev/null, given up for a moment to refuse peers when fds run out */
    outrec *rec_cache;       /* free small record blocks */
    unsigned rec_cached;
    uint64_t refuse_logged_ns;
    uint64_t refuse_quiet;   /* refusals not logged since refuse_logged_ns */
    uint8_t scratch[CZK_MSG_MAX_RECORD];
};

#define LIST_ADD(head, x)       \
    do {                        \
        (x)->prev = NULL;       \
        (x)->next = (head);     \
        if (head)               \
            (head)->prev = (x); \
        (head) = (x);           \
    } while (0)
#define LIST_DEL(head, x)                \
    do {                                 \
        if ((x)->prev)                   \
            (x)->prev->next = (x)->next; \
        else                             \
            (head) = (x)->next;          \
        if ((x)->next)                   \
            (x)->next->prev = (x)->prev; \
    } while (0)

/* loop.c */
uint64_t czk_loopi_mono_ns(void);
struct io_uring_sqe *czk_loopi_get_sqe(czk_loop *l);

/* conn.c: completions of connection and listener operations */
void czk_loopi_conn_recv(czk_conn *c, struct io_uring_cqe *cqe);
void czk_loopi_conn_sent(czk_conn *c, int res);
void czk_loopi_cancel_done(czk_loop *l, void *p);
void czk_loopi_accept(czk_listener *ls, struct io_uring_cqe *cqe);
/* conn.c: submit the queued records of every connection that has some */
void czk_loopi_flush(czk_loop *l);
/* conn.c: close connections that did not say HELLO in time, and idle clients */
void czk_loopi_sweep(czk_loop *l);
/* conn.c: free every connection and listener without callbacks (destroy) */
void czk_loopi_free_all(czk_loop *l);

#endif
