/*
 * loop.c — the io_uring event loop (see loop.h for the contract).
 *
 * user_data packs a pointer (8-byte aligned: a connection, listener, timer or
 * the loop) with the operation in its low 3 bits.  An object is freed only
 * when its count of operations in flight drops to zero after it has been
 * closed, so every CQE, including the final -ECANCELED of a multishot,
 * still finds its object.  Multishot operations are re-armed in exactly one
 * place each (conn_arm_recv, listener_arm).
 */
#include "ipc/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"

enum { OP_ACCEPT = 1, OP_RECV, OP_SEND, OP_CANCEL, OP_TIMER, OP_TIMER_DEL, OP_WAKE };
#define UD(ptr, op) ((uint64_t)(uintptr_t)(ptr) | (uint64_t)(op))
#define UD_OP(ud) ((unsigned)((ud)&7u))
#define UD_PTR(ud) ((void *)(uintptr_t)((ud) & ~(uint64_t)7))

#define BGID 7
#define RECV_CTL_LEN CMSG_SPACE(sizeof(int) * CZK_MSG_MAX_FDS)
#define RECV_BUF_LEN \
    ((sizeof(struct io_uring_recvmsg_out) + RECV_CTL_LEN + CZK_MSG_MAX_RECORD + 4095) & ~(size_t)4095)
#define OUT_INLINE 480

enum { ST_HELLO = 0, ST_OPEN = 1, ST_CLOSING = 2 };

typedef struct outrec {
    struct msghdr mh;
    struct iovec iov;
    uint8_t *data;
    uint32_t len;
    int nfds;
    int *fds;  /* duplicates owned by the queue */
    void *ctl; /* cmsg buffer when nfds > 0 */
    uint8_t inl[OUT_INLINE];
} outrec;

struct czk_conn {
    czk_loop *loop;
    int fd;
    int state;
    int is_client;
    int inflight;
    int recv_armed;
    int flush_close; /* close once the queue is empty */
    int close_err;
    char why[256];
    czk_conn_ops ops;
    void *ctx;
    czk_endpoint ep;
    czk_peer_cred cred;
    czk_msg_hello peer;
    outrec *q;
    unsigned qcap, qhead, qcount, qsent;
    uint64_t opened_ns;
    void *user;
    int dirty;             /* on the loop's flush list */
    czk_conn *flush_next;
    czk_conn *next, *prev;
};

struct czk_listener {
    czk_loop *loop;
    int fd;
    int closing;
    int inflight;
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

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* An SQE, submitting first when the ring is full.  NULL only if the ring is broken. */
static struct io_uring_sqe *get_sqe(czk_loop *l)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
    if (!sqe) {
        io_uring_submit(&l->ring);
        sqe = io_uring_get_sqe(&l->ring);
        if (!sqe)
            czk_err("io_uring submission queue stays full: operation dropped");
    }
    return sqe;
}

static const char *peer_desc(const czk_conn *c, char *buf, size_t n)
{
    if (c->peer.role)
        snprintf(buf, n, "%s pid %d", czk_role_name(c->peer.role), (int)c->cred.pid);
    else
        snprintf(buf, n, "peer pid %d", (int)c->cred.pid);
    return buf;
}

/* -------------------------------------------------------------- conns --- */

static void conn_shutdown(czk_conn *c);
static void conn_flush(czk_conn *c);

/* queued records are submitted in one batch per loop turn (flush_dirty), so
 * the records produced while handling one batch of completions leave in one
 * linked chain instead of one by one */
static void conn_mark_dirty(czk_conn *c)
{
    if (c->dirty)
        return;
    c->dirty = 1;
    c->flush_next = c->loop->flush_list;
    c->loop->flush_list = c;
}

static void flush_dirty(czk_loop *l)
{
    while (l->flush_list) {
        czk_conn *c = l->flush_list;
        l->flush_list = c->flush_next;
        c->dirty = 0;
        c->flush_next = NULL;
        conn_flush(c);
    }
}

static void outrec_free(outrec *r)
{
    for (int i = 0; i < r->nfds; i++)
        close(r->fds[i]);
    free(r->fds);
    free(r->ctl);
    if (r->data != r->inl)
        free(r->data);
    r->fds = NULL;
    r->ctl = NULL;
    r->data = NULL;
    r->nfds = 0;
}

static void conn_arm_recv(czk_conn *c)
{
    struct io_uring_sqe *sqe;
    if (c->recv_armed || c->state == ST_CLOSING)
        return;
    sqe = get_sqe(c->loop);
    if (!sqe) {
        conn_shutdown(c);
        return;
    }
    io_uring_prep_recvmsg_multishot(sqe, c->fd, &c->loop->rmsg, MSG_CMSG_CLOEXEC);
    sqe->flags |= IOSQE_BUFFER_SELECT;
    sqe->buf_group = BGID;
    io_uring_sqe_set_data64(sqe, UD(c, OP_RECV));
    c->recv_armed = 1;
    c->inflight++;
}

static void conn_maybe_free(czk_conn *c)
{
    czk_loop *l = c->loop;
    char pd[64];

    if (c->state != ST_CLOSING || c->inflight > 0)
        return;
    if (c->dirty) {
        czk_conn **pp = &l->flush_list;
        while (*pp != c)
            pp = &(*pp)->flush_next;
        *pp = c->flush_next;
    }
    close(c->fd);
    while (c->qcount) {
        outrec_free(&c->q[c->qhead]);
        c->qhead = (c->qhead + 1) % c->qcap;
        c->qcount--;
    }
    LIST_DEL(l->conns, c);
    l->st.conns--;
    l->st.closed++;
    if (c->close_err && c->close_err != -ECONNRESET)
        czk_warn("connection to %s closed: %s", peer_desc(c, pd, sizeof(pd)), c->why);
    else
        czk_info("connection to %s closed: %s", peer_desc(c, pd, sizeof(pd)), c->why);
    if (c->ops.on_close)
        c->ops.on_close(c, c->close_err, c->why, c->ctx);
    free(c->q);
    free(c);
}

/* stop everything on the socket; the conn is freed after the last CQE */
static void conn_shutdown(czk_conn *c)
{
    struct io_uring_sqe *sqe;

    if (c->state == ST_CLOSING)
        return;
    c->state = ST_CLOSING;
    shutdown(c->fd, SHUT_RDWR);
    sqe = get_sqe(c->loop);
    if (sqe) {
        io_uring_prep_cancel_fd(sqe, c->fd, IORING_ASYNC_CANCEL_ALL);
        io_uring_sqe_set_data64(sqe, UD(c, OP_CANCEL));
        c->inflight++;
    }
    conn_maybe_free(c);
}

static void conn_set_reason(czk_conn *c, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void conn_set_reason(czk_conn *c, int err, const char *fmt, ...)
{
    va_list ap;
    if (c->why[0])
        return; /* the first reason wins */
    c->close_err = err;
    va_start(ap, fmt);
    vsnprintf(c->why, sizeof(c->why), fmt, ap);
    va_end(ap);
}

void czk_conn_close(czk_conn *c, int err, const char *why, int flush)
{
    if (c->state == ST_CLOSING)
        return;
    conn_set_reason(c, err, "%s", why ? why : "closed locally");
    if (flush && c->qcount > 0) {
        c->flush_close = 1;
        return;
    }
    conn_shutdown(c);
}

/* a protocol violation: log, tell the peer (best effort), close */
static void conn_protocol_error(czk_conn *c, int code, const char *why)
{
    czk_msg m;
    int n;

    c->loop->st.malformed++;
    conn_set_reason(c, code, "%s", why);
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_ERROR;
    m.u.error.code = code < 0 && code >= -4095 ? code : -EPROTO;
    snprintf(m.u.error.message, sizeof(m.u.error.message), "%s", why);
    n = czk_msg_encode(c->loop->scratch, sizeof(c->loop->scratch), &m, NULL);
    if (n > 0)
        (void)!send(c->fd, c->loop->scratch, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
    conn_shutdown(c);
}

static int conn_enqueue(czk_conn *c, const void *rec, size_t len, const int *fds, int nfds)
{
    outrec *r;
    char pd[64];

    if (c->state == ST_CLOSING || c->flush_close)
        return -EPIPE;
    if (len == 0 || len > CZK_MSG_MAX_RECORD || nfds < 0 || nfds > CZK_MSG_MAX_FDS)
        return -EINVAL;
    if (c->qcount == c->qcap) {
        c->loop->st.enobufs++;
        czk_warn("outgoing queue to %s is full (%u records): record not sent", peer_desc(c, pd, sizeof(pd)), c->qcap);
        return -ENOBUFS;
    }
    r = &c->q[(c->qhead + c->qcount) % c->qcap];
    memset(&r->mh, 0, sizeof(r->mh));
    r->nfds = 0;
    r->fds = NULL;
    r->ctl = NULL;
    r->data = len <= OUT_INLINE ? r->inl : malloc(len);
    if (!r->data)
        return -ENOMEM;
    memcpy(r->data, rec, len);
    r->len = (uint32_t)len;
    r->iov.iov_base = r->data;
    r->iov.iov_len = len;
    r->mh.msg_iov = &r->iov;
    r->mh.msg_iovlen = 1;
    if (nfds > 0) {
        struct cmsghdr *cm;
        size_t cl = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        r->fds = calloc((size_t)nfds, sizeof(int));
        r->ctl = calloc(1, cl);
        if (!r->fds || !r->ctl) {
            outrec_free(r);
            return -ENOMEM;
        }
        for (int i = 0; i < nfds; i++) {
            int d = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
            if (d < 0) {
                int e = -errno;
                czk_err("could not duplicate fd %d to send it: %s", fds[i], strerror(errno));
                outrec_free(r);
                return e;
            }
            r->fds[r->nfds++] = d;
        }
        r->mh.msg_control = r->ctl;
        r->mh.msg_controllen = cl;
        cm = CMSG_FIRSTHDR(&r->mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(cm), r->fds, sizeof(int) * (size_t)nfds);
    }
    c->qcount++;
    conn_mark_dirty(c);
    return 0;
}

/* submits the queued records as one linked chain, if none is in flight */
static void conn_flush(czk_conn *c)
{
    czk_loop *l = c->loop;
    unsigned n;

    if (c->qsent > 0 || c->qcount == 0 || c->state == ST_CLOSING)
        return;
    n = c->qcount < CZK_LOOP_SEND_BATCH ? c->qcount : CZK_LOOP_SEND_BATCH;
    /* a link must not span two submissions: make room for the whole chain */
    if (io_uring_sq_space_left(&l->ring) < n)
        io_uring_submit(&l->ring);
    if (io_uring_sq_space_left(&l->ring) < n)
        n = io_uring_sq_space_left(&l->ring);
    for (unsigned i = 0; i < n; i++) {
        outrec *r = &c->q[(c->qhead + i) % c->qcap];
        struct io_uring_sqe *sqe = io_uring_get_sqe(&l->ring);
        if (r->nfds)
            io_uring_prep_sendmsg(sqe, c->fd, &r->mh, MSG_NOSIGNAL);
        else /* plain send: no msghdr to copy in */
            io_uring_prep_send(sqe, c->fd, r->data, r->len, MSG_NOSIGNAL);
        if (i + 1 < n)
            sqe->flags |= IOSQE_IO_LINK;
        io_uring_sqe_set_data64(sqe, UD(c, OP_SEND));
    }
    c->qsent = n;
    c->inflight += (int)n;
}

static void conn_on_send(czk_conn *c, int res)
{
    outrec *r = &c->q[c->qhead];

    c->inflight--;
    outrec_free(r);
    c->qhead = (c->qhead + 1) % c->qcap;
    c->qcount--;
    c->qsent--;
    if (res >= 0) {
        c->loop->st.records_out++;
    } else if (c->state != ST_CLOSING) {
        conn_set_reason(c, res, "send failed: %s", strerror(-res));
        conn_shutdown(c);
    }
    if (c->state != ST_CLOSING && c->qsent == 0) {
        if (c->flush_close && c->qcount == 0)
            conn_shutdown(c);
        else if (c->qcount)
            conn_mark_dirty(c);
    }
    conn_maybe_free(c);
}

static int conn_new(czk_loop *l, int fd, const czk_endpoint *ep, const czk_conn_ops *ops, void *ctx, int is_client,
                    czk_conn **out, czk_error *err)
{
    czk_peer_cred cred;
    czk_conn *c;
    int r;

    if (l->st.conns >= l->cfg.max_conns) {
        close(fd);
        l->st.rejected++;
        return czk_errorf(err, -EMFILE, "connection limit of %u reached", l->cfg.max_conns);
    }
    if ((r = czk_peer_get_cred(fd, &cred, err)) < 0 || (r = czk_peer_check_cred(&ep->policy, &cred, err)) < 0) {
        close(fd);
        l->st.rejected++;
        return r;
    }
    c = calloc(1, sizeof(*c));
    if (c)
        c->q = calloc(l->cfg.out_queue_cap, sizeof(outrec));
    if (!c || !c->q) {
        if (c)
            free(c);
        close(fd);
        return czk_errorf(err, -ENOMEM, "no memory for a connection");
    }
    c->loop = l;
    c->fd = fd;
    c->state = ST_HELLO;
    c->is_client = is_client;
    c->ops = *ops;
    c->ctx = ctx;
    c->ep = *ep;
    c->cred = cred;
    c->qcap = l->cfg.out_queue_cap;
    c->opened_ns = mono_ns();
    LIST_ADD(l->conns, c);
    l->st.conns++;
    conn_arm_recv(c);
    if (is_client) {
        czk_msg m;
        int n;
        memset(&m, 0, sizeof(m));
        m.type = CZK_MSG_HELLO;
        m.u.hello = ep->hello;
        n = czk_msg_encode(l->scratch, sizeof(l->scratch), &m, err);
        if (n < 0 || (r = conn_enqueue(c, l->scratch, (size_t)n, NULL, 0)) < 0) {
            czk_conn_close(c, n < 0 ? n : r, "could not send HELLO", 0);
            return n < 0 ? n : r;
        }
    }
    if (out)
        *out = c;
    return 0;
}

static void conn_record(czk_conn *c, const uint8_t *data, size_t len, int *fds, int nfds)
{
    czk_loop *l = c->loop;
    czk_error e = {0};
    char why[600], pd[64];
    czk_msg m;
    int r, want_fds = 0;

    l->st.records_in++;
    r = czk_msg_decode(data, len, &m, &e);
    if (r < 0) {
        snprintf(why, sizeof(why), "malformed record from %s: %s", peer_desc(c, pd, sizeof(pd)), e.msg);
        conn_protocol_error(c, r, why);
        return;
    }
    if (c->state == ST_HELLO) {
        if (m.type != CZK_MSG_HELLO) {
            snprintf(why, sizeof(why), "%s sent %s before HELLO", peer_desc(c, pd, sizeof(pd)),
                     czk_msg_type_name(m.type));
            conn_protocol_error(c, -EPROTO, why);
            return;
        }
        if (nfds) {
            conn_protocol_error(c, -EPROTO, "HELLO with file descriptors");
            return;
        }
        if ((r = czk_peer_check_hello(&c->ep.policy, &c->cred, &m.u.hello, &e)) < 0) {
            conn_protocol_error(c, r, e.msg);
            return;
        }
        c->peer = m.u.hello;
        if (!c->is_client) {
            czk_msg h;
            int n;
            memset(&h, 0, sizeof(h));
            h.type = CZK_MSG_HELLO;
            h.u.hello = c->ep.hello;
            n = czk_msg_encode(l->scratch, sizeof(l->scratch), &h, &e);
            if (n < 0 || conn_enqueue(c, l->scratch, (size_t)n, NULL, 0) < 0) {
                czk_conn_close(c, -EIO, "could not answer HELLO", 0);
                return;
            }
        }
        c->state = ST_OPEN;
        l->st.opened++;
        czk_info("connection from %s (%s, node %d) open", peer_desc(c, pd, sizeof(pd)), c->peer.name,
                 c->peer.numa_node);
        if (c->ops.on_open)
            c->ops.on_open(c, c->ctx);
        return;
    }
    if (c->state != ST_OPEN || c->flush_close)
        return; /* closing: drop */
    if (m.type == CZK_MSG_HELLO) {
        snprintf(why, sizeof(why), "%s sent a second HELLO", peer_desc(c, pd, sizeof(pd)));
        conn_protocol_error(c, -EPROTO, why);
        return;
    }
    if (m.type == CZK_MSG_POOL)
        want_fds = 1;
    else if (m.type == CZK_MSG_SUBMIT)
        want_fds = (int)m.u.submit.n_fds;
    if (nfds != want_fds) {
        snprintf(why, sizeof(why), "%s sent %s with %d file descriptors, expected %d", peer_desc(c, pd, sizeof(pd)),
                 czk_msg_type_name(m.type), nfds, want_fds);
        conn_protocol_error(c, -EPROTO, why);
        return;
    }
    if (c->ops.on_msg)
        c->ops.on_msg(c, &m, fds, nfds, c->ctx);
}

static void conn_on_recv(czk_conn *c, struct io_uring_cqe *cqe)
{
    czk_loop *l = c->loop;
    int res = cqe->res, more = (cqe->flags & IORING_CQE_F_MORE) != 0, eof = 0;
    char pd[64];

    if (!more) {
        c->recv_armed = 0;
        c->inflight--;
    }
    if (res == -ENOBUFS) {
        /* every provided buffer is in use; they are recycled as CQEs are
         * handled, so by now some are back: re-arm below */
        l->st.enobufs++;
    } else if (res < 0) {
        if (c->state != ST_CLOSING && res != -ECANCELED) {
            conn_set_reason(c, res, "receive failed: %s", strerror(-res));
            conn_shutdown(c);
        }
    } else if (cqe->flags & IORING_CQE_F_BUFFER) {
        unsigned bid = cqe->flags >> IORING_CQE_BUFFER_SHIFT;
        uint8_t *buf = l->bufs + (size_t)bid * RECV_BUF_LEN;
        struct io_uring_recvmsg_out *o = io_uring_recvmsg_validate(buf, res, &l->rmsg);
        int fds[CZK_MSG_MAX_FDS], nfds = 0;

        if (!o) {
            conn_set_reason(c, -EIO, "invalid recvmsg completion of %d bytes", res);
            conn_shutdown(c);
        } else {
            size_t plen = io_uring_recvmsg_payload_length(o, res, &l->rmsg);
            uint8_t *payload = io_uring_recvmsg_payload(o, &l->rmsg);
            for (struct cmsghdr *cm = io_uring_recvmsg_cmsg_firsthdr(o, &l->rmsg); cm;
                 cm = io_uring_recvmsg_cmsg_nexthdr(o, &l->rmsg, cm)) {
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
                    int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
                    for (int i = 0; i < k; i++) {
                        int fd;
                        memcpy(&fd, CMSG_DATA(cm) + sizeof(int) * (size_t)i, sizeof(int));
                        if (nfds < CZK_MSG_MAX_FDS)
                            fds[nfds++] = fd;
                        else
                            close(fd);
                    }
                }
            }
            if (o->flags & MSG_TRUNC) {
                char why[160];
                snprintf(why, sizeof(why), "record from %s exceeds the %u byte cap", peer_desc(c, pd, sizeof(pd)),
                         CZK_MSG_MAX_RECORD);
                conn_protocol_error(c, -EMSGSIZE, why);
            } else if (o->flags & MSG_CTRUNC) {
                conn_protocol_error(c, -EPROTO, "file descriptors of a record were truncated");
            } else if (plen == 0 && nfds == 0) {
                eof = 1;
            } else if (c->state != ST_CLOSING) {
                conn_record(c, payload, plen, fds, nfds);
            }
            for (int i = 0; i < nfds; i++)
                if (fds[i] >= 0)
                    close(fds[i]);
        }
        io_uring_buf_ring_add(l->br, buf, RECV_BUF_LEN, (unsigned short)bid, io_uring_buf_ring_mask(l->nbufs), 0);
        io_uring_buf_ring_advance(l->br, 1);
    } else if (res == 0) {
        eof = 1;
    }
    if (eof && c->state != ST_CLOSING) {
        conn_set_reason(c, 0, "peer closed the connection");
        conn_shutdown(c);
    }
    if (!more && c->state != ST_CLOSING)
        conn_arm_recv(c);
    conn_maybe_free(c);
}

int czk_conn_send_raw(czk_conn *c, const void *rec, size_t len, const int *fds, int nfds)
{
    return conn_enqueue(c, rec, len, fds, nfds);
}

int czk_conn_send(czk_conn *c, const czk_msg *m, const int *fds, int nfds)
{
    czk_error e;
    int n;
    if (c->state != ST_OPEN)
        return c->state == ST_HELLO ? -EAGAIN : -EPIPE;
    n = czk_msg_encode(c->loop->scratch, sizeof(c->loop->scratch), m, &e);
    if (n < 0) {
        czk_err("could not encode %s: %s", czk_msg_type_name(m->type), e.msg);
        return n;
    }
    return conn_enqueue(c, c->loop->scratch, (size_t)n, fds, nfds);
}

const czk_msg_hello *czk_conn_peer(const czk_conn *c) { return &c->peer; }
const czk_peer_cred *czk_conn_cred(const czk_conn *c) { return &c->cred; }
int czk_conn_is_open(const czk_conn *c) { return c->state == ST_OPEN && !c->flush_close; }
unsigned czk_conn_queued(const czk_conn *c) { return c->qcount; }
void czk_conn_set_user(czk_conn *c, void *user) { c->user = user; }
void *czk_conn_user(const czk_conn *c) { return c->user; }
czk_loop *czk_conn_loop(const czk_conn *c) { return c->loop; }

/* ---------------------------------------------------------- listeners --- */

static void listener_arm(czk_listener *ls)
{
    struct io_uring_sqe *sqe;
    if (ls->closing)
        return;
    sqe = get_sqe(ls->loop);
    if (!sqe)
        return;
    io_uring_prep_multishot_accept(sqe, ls->fd, NULL, NULL, SOCK_CLOEXEC);
    io_uring_sqe_set_data64(sqe, UD(ls, OP_ACCEPT));
    ls->inflight++;
}

static void listener_maybe_free(czk_listener *ls)
{
    if (!ls->closing || ls->inflight > 0)
        return;
    close(ls->fd);
    LIST_DEL(ls->loop->listeners, ls);
    free(ls);
}

static void listener_on_accept(czk_listener *ls, struct io_uring_cqe *cqe)
{
    czk_loop *l = ls->loop;
    czk_error e = {0};

    if (!(cqe->flags & IORING_CQE_F_MORE))
        ls->inflight--;
    if (cqe->res >= 0) {
        l->st.accepted++;
        if (ls->closing)
            close(cqe->res);
        else if (conn_new(l, cqe->res, &ls->ep, &ls->ops, ls->ctx, 0, NULL, &e) < 0)
            czk_warn("rejected a connection: %s", e.msg);
    } else if (cqe->res != -ECANCELED && !ls->closing) {
        czk_warn("accept failed: %s", strerror(-cqe->res));
    }
    if (!(cqe->flags & IORING_CQE_F_MORE) && !ls->closing)
        listener_arm(ls);
    listener_maybe_free(ls);
}

int czk_loop_listen(czk_loop *l, int lfd, const czk_endpoint *ep, const czk_conn_ops *ops, void *ctx,
                    czk_listener **out, czk_error *err)
{
    czk_listener *ls = calloc(1, sizeof(*ls));
    if (!ls) {
        close(lfd);
        return czk_errorf(err, -ENOMEM, "no memory for a listener");
    }
    ls->loop = l;
    ls->fd = lfd;
    ls->ep = *ep;
    ls->ops = *ops;
    ls->ctx = ctx;
    LIST_ADD(l->listeners, ls);
    listener_arm(ls);
    if (out)
        *out = ls;
    return 0;
}

void czk_listener_close(czk_listener *ls)
{
    struct io_uring_sqe *sqe;
    if (ls->closing)
        return;
    ls->closing = 1;
    sqe = get_sqe(ls->loop);
    if (sqe) {
        io_uring_prep_cancel_fd(sqe, ls->fd, IORING_ASYNC_CANCEL_ALL);
        io_uring_sqe_set_data64(sqe, UD(ls, OP_CANCEL));
        ls->inflight++;
    }
    listener_maybe_free(ls);
}

int czk_loop_connect(czk_loop *l, int fd, const czk_endpoint *ep, const czk_conn_ops *ops, void *ctx,
                     czk_conn **out, czk_error *err)
{
    return conn_new(l, fd, ep, ops, ctx, 1, out, err);
}

/* ------------------------------------------------------------- timers --- */

static void timer_arm(czk_timer *t, uint64_t ms)
{
    struct io_uring_sqe *sqe = get_sqe(t->loop);
    if (!sqe)
        return;
    t->ts.tv_sec = (long long)(ms / 1000);
    t->ts.tv_nsec = (long long)(ms % 1000) * 1000000;
    io_uring_prep_timeout(sqe, &t->ts, 0, 0);
    io_uring_sqe_set_data64(sqe, UD(t, OP_TIMER));
    t->inflight++;
}

static void timer_maybe_free(czk_timer *t)
{
    if ((t->cancelled || t->done) && t->inflight == 0 && !t->in_cb) {
        LIST_DEL(t->loop->timers, t);
        free(t);
    }
}

czk_timer *czk_loop_timer(czk_loop *l, uint64_t first_ms, uint64_t interval_ms, czk_timer_fn fn, void *ctx)
{
    czk_timer *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->loop = l;
    t->interval_ms = interval_ms;
    t->fn = fn;
    t->ctx = ctx;
    LIST_ADD(l->timers, t);
    timer_arm(t, first_ms);
    return t;
}

void czk_timer_cancel(czk_timer *t)
{
    struct io_uring_sqe *sqe;
    if (!t || t->cancelled)
        return;
    t->cancelled = 1;
    if (t->inflight > 0 && (sqe = get_sqe(t->loop))) {
        io_uring_prep_timeout_remove(sqe, UD(t, OP_TIMER), 0);
        io_uring_sqe_set_data64(sqe, UD(t, OP_TIMER_DEL));
        t->inflight++;
    }
    timer_maybe_free(t);
}

static void timer_on_cqe(czk_timer *t, unsigned op, int res)
{
    t->inflight--;
    if (op == OP_TIMER && res == -ETIME && !t->cancelled) {
        t->in_cb = 1;
        t->fn(t, t->ctx);
        t->in_cb = 0;
        if (!t->cancelled) {
            if (t->interval_ms)
                timer_arm(t, t->interval_ms);
            else
                t->done = 1;
        }
    }
    timer_maybe_free(t);
}

static void sweep_fn(czk_timer *t, void *ctx)
{
    czk_loop *l = ctx;
    uint64_t now = mono_ns(), limit = (uint64_t)l->cfg.hello_timeout_ms * 1000000ull;
    czk_conn *c = l->conns;
    while (c) {
        czk_conn *next = c->next;
        if (c->state == ST_HELLO && now - c->opened_ns > limit) {
            conn_set_reason(c, -ETIMEDOUT, "no HELLO within %u ms", l->cfg.hello_timeout_ms);
            conn_shutdown(c);
        }
        c = next;
    }
}

/* --------------------------------------------------------------- wake --- */

static void wake_arm(czk_loop *l)
{
    struct io_uring_sqe *sqe = get_sqe(l);
    if (!sqe)
        return;
    io_uring_prep_read(sqe, l->wake_fd, &l->wake_val, sizeof(l->wake_val), 0);
    io_uring_sqe_set_data64(sqe, UD(l, OP_WAKE));
}

static void wake_on_cqe(czk_loop *l, int res)
{
    czk_loop_task *list, *rev = NULL;

    l->st.wakeups++;
    list = __atomic_exchange_n(&l->tasks, NULL, __ATOMIC_ACQUIRE);
    while (list) { /* the stack is newest first: reverse to run in post order */
        czk_loop_task *n = list->next;
        list->next = rev;
        rev = list;
        list = n;
    }
    while (rev) {
        czk_loop_task *n = rev->next;
        rev->fn(rev, rev->ctx);
        rev = n;
    }
    if (l->wake_fn)
        l->wake_fn(l->wake_ctx);
    if (res < 0 && res != -EAGAIN && res != -EINTR && res != -ECANCELED)
        czk_err("eventfd read failed: %s", strerror(-res));
    wake_arm(l);
}

void czk_loop_post(czk_loop *l, czk_loop_task *task)
{
    czk_loop_task *old = __atomic_load_n(&l->tasks, __ATOMIC_RELAXED);
    do
        task->next = old;
    while (!__atomic_compare_exchange_n(&l->tasks, &old, task, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    czk_loop_wake(l);
}

void czk_loop_wake(czk_loop *l)
{
    uint64_t one = 1;
    (void)!write(l->wake_fd, &one, sizeof(one));
}

void czk_loop_set_wake_fn(czk_loop *l, void (*fn)(void *ctx), void *ctx)
{
    l->wake_fn = fn;
    l->wake_ctx = ctx;
}

/* --------------------------------------------------------------- loop --- */

static int ring_init(czk_loop *l, czk_error *err)
{
    static const unsigned try_flags[] = {
        IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN,
        IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN,
        0,
    };
    int r = -EINVAL;
    for (size_t i = 0; i < sizeof(try_flags) / sizeof(try_flags[0]); i++) {
        struct io_uring_params p;
        memset(&p, 0, sizeof(p));
        p.flags = try_flags[i] | IORING_SETUP_CQSIZE;
        p.cq_entries = l->cfg.sq_entries * 8;
        r = io_uring_queue_init_params(l->cfg.sq_entries, &l->ring, &p);
        if (r == 0)
            return 0;
        if (r != -EINVAL)
            break;
    }
    return czk_errorf(err, r, "could not set up io_uring: %s", strerror(-r));
}

int czk_loop_create(czk_loop **out, const czk_loop_config *cfg, czk_error *err)
{
    struct io_uring_buf_reg reg;
    czk_loop *l;
    int r;

    *out = NULL;
    l = calloc(1, sizeof(*l));
    if (!l)
        return czk_errorf(err, -ENOMEM, "no memory for the event loop");
    l->wake_fd = -1;
    if (cfg)
        l->cfg = *cfg;
    if (!l->cfg.sq_entries)
        l->cfg.sq_entries = 256;
    if (!l->cfg.recv_buffers)
        l->cfg.recv_buffers = 64;
    if (!l->cfg.out_queue_cap)
        l->cfg.out_queue_cap = 256;
    if (!l->cfg.max_conns)
        l->cfg.max_conns = 1024;
    if (!cfg || !cfg->hello_timeout_ms)
        l->cfg.hello_timeout_ms = 5000;
    if (l->cfg.recv_buffers & (l->cfg.recv_buffers - 1) || l->cfg.recv_buffers > 32768) {
        free(l);
        return czk_errorf(err, -EINVAL, "recv_buffers must be a power of 2 up to 32768");
    }
    if ((r = ring_init(l, err)) < 0) {
        free(l);
        return r;
    }
    l->nbufs = l->cfg.recv_buffers;
    l->br_size = (sizeof(struct io_uring_buf) * l->nbufs + 4095) & ~(size_t)4095;
    l->br = mmap(NULL, l->br_size, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    l->bufs_size = (size_t)l->nbufs * RECV_BUF_LEN;
    l->bufs = mmap(NULL, l->bufs_size, PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    if (l->br == MAP_FAILED || l->bufs == MAP_FAILED) {
        r = czk_errorf(err, -ENOMEM, "no memory for %u receive buffers", l->nbufs);
        goto fail;
    }
    memset(&reg, 0, sizeof(reg));
    reg.ring_addr = (unsigned long)l->br;
    reg.ring_entries = l->nbufs;
    reg.bgid = BGID;
    r = io_uring_register_buf_ring(&l->ring, &reg, 0);
    if (r < 0) {
        r = czk_errorf(err, r, "could not register a provided-buffer ring (needs Linux 5.19+, 6.0+ for czk): %s",
                       strerror(-r));
        goto fail;
    }
    io_uring_buf_ring_init(l->br);
    for (unsigned i = 0; i < l->nbufs; i++)
        io_uring_buf_ring_add(l->br, l->bufs + (size_t)i * RECV_BUF_LEN, RECV_BUF_LEN, (unsigned short)i,
                              io_uring_buf_ring_mask(l->nbufs), (int)i);
    io_uring_buf_ring_advance(l->br, (int)l->nbufs);
    memset(&l->rmsg, 0, sizeof(l->rmsg));
    l->rmsg.msg_namelen = 0;
    l->rmsg.msg_controllen = RECV_CTL_LEN;
    l->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (l->wake_fd < 0) {
        r = czk_errorf(err, -errno, "could not create eventfd: %s", strerror(errno));
        goto fail;
    }
    wake_arm(l);
    l->sweep = czk_loop_timer(l, 1000, 1000, sweep_fn, l);
    io_uring_submit(&l->ring);
    *out = l;
    return 0;
fail:
    io_uring_queue_exit(&l->ring);
    if (l->br != MAP_FAILED && l->br)
        munmap(l->br, l->br_size);
    if (l->bufs != MAP_FAILED && l->bufs)
        munmap(l->bufs, l->bufs_size);
    if (l->wake_fd >= 0)
        close(l->wake_fd);
    free(l);
    return r;
}

static void handle_cqe(czk_loop *l, struct io_uring_cqe *cqe)
{
    uint64_t ud = io_uring_cqe_get_data64(cqe);
    unsigned op = UD_OP(ud);
    void *p = UD_PTR(ud);

    switch (op) {
    case OP_RECV:
        conn_on_recv(p, cqe);
        break;
    case OP_SEND:
        conn_on_send(p, cqe->res);
        break;
    case OP_CANCEL:
        /* a conn or a listener: both start with the loop pointer, but the
         * fd field differs, so tell them apart by list membership */
        {
            czk_listener *ls;
            for (ls = l->listeners; ls && ls != p; ls = ls->next)
                ;
            if (ls) {
                ls->inflight--;
                listener_maybe_free(ls);
            } else {
                czk_conn *c = p;
                c->inflight--;
                conn_maybe_free(c);
            }
        }
        break;
    case OP_ACCEPT:
        listener_on_accept(p, cqe);
        break;
    case OP_TIMER:
    case OP_TIMER_DEL:
        timer_on_cqe(p, op, cqe->res);
        break;
    case OP_WAKE:
        wake_on_cqe(l, cqe->res);
        break;
    default:
        break;
    }
}

int czk_loop_run_once(czk_loop *l, int timeout_ms)
{
    struct io_uring_cqe *cqe;
    struct __kernel_timespec ts;
    unsigned head, n = 0;
    int r;

    flush_dirty(l);
    if (timeout_ms >= 0) {
        ts.tv_sec = timeout_ms / 1000;
        ts.tv_nsec = (long long)(timeout_ms % 1000) * 1000000;
    }
    r = io_uring_submit_and_wait_timeout(&l->ring, &cqe, 1, timeout_ms >= 0 ? &ts : NULL, NULL);
    if (r < 0 && r != -ETIME && r != -EINTR && r != -EBUSY && r != -EAGAIN) {
        czk_err("io_uring wait failed: %s", strerror(-r));
        return r;
    }
    io_uring_for_each_cqe(&l->ring, head, cqe)
    {
        handle_cqe(l, cqe);
        n++;
    }
    io_uring_cq_advance(&l->ring, n);
    /* what the callbacks queued is submitted by the next wait, in the same
     * io_uring_enter; czk_loop_run flushes it when it stops */
    return (int)n;
}

int czk_loop_run(czk_loop *l)
{
    l->stop = 0;
    while (!l->stop) {
        int r = czk_loop_run_once(l, -1);
        if (r < 0)
            return r;
    }
    flush_dirty(l);
    io_uring_submit(&l->ring);
    return 0;
}

void czk_loop_stop(czk_loop *l) { l->stop = 1; }

void czk_loop_get_stats(const czk_loop *l, czk_loop_stats *s) { *s = l->st; }

void czk_loop_destroy(czk_loop *l)
{
    if (!l)
        return;
    /* tear the ring down first so the kernel no longer touches our memory */
    io_uring_queue_exit(&l->ring);
    while (l->conns) {
        czk_conn *c = l->conns;
        LIST_DEL(l->conns, c);
        close(c->fd);
        while (c->qcount) {
            outrec_free(&c->q[c->qhead]);
            c->qhead = (c->qhead + 1) % c->qcap;
            c->qcount--;
        }
        free(c->q);
        free(c);
    }
    while (l->listeners) {
        czk_listener *ls = l->listeners;
        LIST_DEL(l->listeners, ls);
        close(ls->fd);
        free(ls);
    }
    while (l->timers) {
        czk_timer *t = l->timers;
        LIST_DEL(l->timers, t);
        free(t);
    }
    munmap(l->br, l->br_size);
    munmap(l->bufs, l->bufs_size);
    close(l->wake_fd);
    free(l);
}
