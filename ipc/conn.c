/*
 * conn.c — connections and listeners of the event loop (see loop.h): the
 * HELLO handshake, multishot recvmsg with fds, record dispatch, the outgoing
 * queue and its linked send chains, and teardown with cancellation.
 *
 * A connection is freed only when it is closing and no operation of it is
 * in flight, so every CQE (including the final -ECANCELED of a multishot)
 * finds it; closing always leaves one operation in flight (the cancel), so
 * on_close runs from a completion, never inside czk_conn_send/_close.  The
 * multishot recv is re-armed in one place (conn_arm_recv), the multishot
 * accept in one place (listener_arm).  Flow control, connection limits and
 * the accept back-off (the policy of loop.h) are decided here, where records
 * are queued and connections admitted.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/base/log.h"
#include "ipc/loop_internal.h"

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
static void listener_maybe_free(czk_listener *ls);

/* queued records are submitted in one batch per loop turn (czk_loopi_flush), so
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

void czk_loopi_flush(czk_loop *l)
{
    while (l->flush_list) {
        czk_conn *c = l->flush_list;
        l->flush_list = c->flush_next;
        c->dirty = 0;
        c->flush_next = NULL;
        conn_flush(c);
    }
}

/* a block for one record: small ones without fds come from the loop's cache */
static outrec *outrec_alloc(czk_loop *l, size_t len, int nfds)
{
    size_t ctl = nfds > 0 ? CMSG_SPACE(sizeof(int) * (size_t)nfds) : 0;
    size_t room = nfds == 0 && len <= OUT_SMALL ? OUT_SMALL : len;
    outrec *r;

    if (room == OUT_SMALL && l->rec_cache) {
        r = l->rec_cache;
        l->rec_cache = r->next;
        l->rec_cached--;
    } else if (!(r = malloc(sizeof(*r) + ctl + room))) {
        return NULL;
    }
    memset(r, 0, sizeof(*r));
    r->cap = (uint32_t)room;
    r->data = (uint8_t *)(r + 1) + ctl;
    if (ctl) {
        memset(r + 1, 0, ctl);
        r->mh.msg_control = r + 1;
        r->mh.msg_controllen = ctl;
        r->fds = (int *)CMSG_DATA(CMSG_FIRSTHDR(&r->mh));
    }
    return r;
}

static void outrec_free(czk_loop *l, outrec *r)
{
    for (int i = 0; i < r->nfds; i++)
        close(r->fds[i]);
    if (r->cap == OUT_SMALL && r->nfds == 0 && !r->mh.msg_control && l->rec_cached < OUT_CACHE_MAX) {
        r->next = l->rec_cache;
        l->rec_cache = r;
        l->rec_cached++;
        return;
    }
    free(r);
}

static void conn_free_queue(czk_conn *c)
{
    while (c->qhead) {
        outrec *r = c->qhead;
        c->qhead = r->next;
        outrec_free(c->loop, r);
    }
    c->qtail = NULL;
    c->qcount = 0;
    c->qbytes = 0;
}

static void conn_arm_recv(czk_conn *c)
{
    struct io_uring_sqe *sqe;
    if (c->recv_armed || c->rx_paused || c->state == ST_CLOSING)
        return;
    sqe = czk_loopi_get_sqe(c->loop);
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
    conn_free_queue(c);
    LIST_DEL(l->conns, c);
    l->st.conns--;
    l->st.closed++;
    if (c->counted) {
        if (c->kind == CZK_CONN_CLIENT)
            l->st.clients--;
        else
            l->st.daemons--;
    }
    if (c->close_err && c->close_err != -ECONNRESET)
        czk_warn("connection to %s closed: %s", peer_desc(c, pd, sizeof(pd)), c->why);
    else
        czk_info("connection to %s closed: %s", peer_desc(c, pd, sizeof(pd)), c->why);
    if (c->ops.on_close)
        c->ops.on_close(c, c->close_err, c->why, c->ctx);
    if (c->ls) {
        c->ls->refs--;
        listener_maybe_free(c->ls);
    }
    free(c->own_ep);
    free(c);
}

/* stop everything on the socket; the conn is freed after the last CQE, which
 * is never earlier than the cancel submitted here */
static void conn_shutdown(czk_conn *c)
{
    struct io_uring_sqe *sqe;

    if (c->state == ST_CLOSING)
        return;
    c->state = ST_CLOSING;
    shutdown(c->fd, SHUT_RDWR);
    sqe = czk_loopi_get_sqe(c->loop);
    if (sqe) {
        io_uring_prep_cancel_fd(sqe, c->fd, IORING_ASYNC_CANCEL_ALL);
        io_uring_sqe_set_data64(sqe, UD(c, OP_CANCEL));
        c->inflight++;
    }
    conn_maybe_free(c); /* only when the ring is broken (no SQE) */
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

/* backpressure on a client: stop reading its requests until its queue drains */
static void conn_pause_recv(czk_conn *c)
{
    struct io_uring_sqe *sqe;

    if (c->rx_paused)
        return;
    c->rx_paused = 1;
    c->loop->st.read_pauses++;
    if (c->recv_armed && (sqe = czk_loopi_get_sqe(c->loop))) {
        /* the final CQE of the multishot (-ECANCELED, no F_MORE) is not re-armed while paused */
        io_uring_prep_cancel64(sqe, UD(c, OP_RECV), 0);
        io_uring_sqe_set_data64(sqe, UD(c, OP_CANCEL));
        c->inflight++;
    }
}

static void conn_resume_recv(czk_conn *c)
{
    if (!c->rx_paused || c->qbytes > c->loop->cfg.client_queue_soft / 2)
        return;
    c->rx_paused = 0;
    conn_arm_recv(c);
}

/* Queues a copy of one record.  Every failure but an invalid argument closes
 * the connection with its reason (see "Flow control" in loop.h). */
static int conn_enqueue(czk_conn *c, const void *rec, size_t len, const int *fds, int nfds)
{
    czk_loop *l = c->loop;
    size_t limit = c->kind == CZK_CONN_CLIENT ? l->cfg.client_queue_hard : l->cfg.daemon_queue_bytes;
    size_t cost = sizeof(outrec) + len;
    char pd[64];
    outrec *r;

    if (c->state == ST_CLOSING || c->flush_close)
        return -EPIPE;
    if (len == 0 || len > CZK_MSG_MAX_RECORD || nfds < 0 || nfds > CZK_MSG_MAX_FDS) {
        czk_err("record of %zu bytes with %d fds for %s is invalid: not sent", len, nfds,
                peer_desc(c, pd, sizeof(pd)));
        return -EINVAL;
    }
    if (c->qcount >= l->cfg.out_queue_cap || c->qbytes + cost > limit) {
        l->st.overflow_closes++;
        conn_set_reason(c, -ENOBUFS,
                        "outgoing queue over its limit (%u records, %zu bytes queued, limit %u records, %zu "
                        "bytes): %s",
                        c->qcount, c->qbytes, l->cfg.out_queue_cap, limit,
                        c->kind == CZK_CONN_CLIENT ? "the client does not read its replies"
                                                   : "closed so that the peer reconnects and resynchronizes");
        conn_shutdown(c);
        return -ENOBUFS;
    }
    if (!(r = outrec_alloc(l, len, nfds))) {
        l->st.send_errors++;
        conn_set_reason(c, -ENOMEM, "no memory to queue a record of %zu bytes: closed so that the peer "
                        "resynchronizes", len);
        conn_shutdown(c);
        return -ENOMEM;
    }
    memcpy(r->data, rec, len);
    r->len = (uint32_t)len;
    r->iov.iov_base = r->data;
    r->iov.iov_len = len;
    r->mh.msg_iov = &r->iov;
    r->mh.msg_iovlen = 1;
    if (nfds > 0) {
        struct cmsghdr *cm = CMSG_FIRSTHDR(&r->mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        for (int i = 0; i < nfds; i++) {
            int d = fcntl(fds[i], F_DUPFD_CLOEXEC, 3);
            if (d < 0) {
                int e = -errno;
                outrec_free(l, r);
                l->st.send_errors++;
                conn_set_reason(c, e, "could not duplicate fd %d to send it: %s: closed so that the peer "
                                "resynchronizes", fds[i], strerror(-e));
                conn_shutdown(c);
                return e;
            }
            r->fds[r->nfds++] = d;
        }
    }
    if (c->qtail)
        c->qtail->next = r;
    else
        c->qhead = r;
    c->qtail = r;
    c->qcount++;
    c->qbytes += cost;
    if (c->kind == CZK_CONN_CLIENT && c->qbytes > l->cfg.client_queue_soft)
        conn_pause_recv(c);
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
    outrec *r = c->qhead;
    for (unsigned i = 0; i < n; i++, r = r->next) {
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

void czk_loopi_conn_sent(czk_conn *c, int res)
{
    outrec *r = c->qhead;

    c->inflight--;
    c->qhead = r->next;
    if (!c->qhead)
        c->qtail = NULL;
    c->qcount--;
    c->qsent--;
    c->qbytes -= sizeof(outrec) + r->len;
    outrec_free(c->loop, r);
    if (res >= 0) {
        c->loop->st.records_out++;
        c->active_ns = czk_loopi_mono_ns();
    } else if (c->state != ST_CLOSING) {
        conn_set_reason(c, res, "send failed: %s", strerror(-res));
        conn_shutdown(c);
    }
    if (c->state != ST_CLOSING) {
        conn_resume_recv(c);
        if (c->qsent == 0) {
            if (c->flush_close && c->qcount == 0)
                conn_shutdown(c);
            else if (c->qcount)
                conn_mark_dirty(c);
        }
    }
    conn_maybe_free(c);
}

/* A peer over a limit: tell it why (an ERROR before any HELLO, which
 * czk_peer_handshake reports) and close it.  Logged at most every 10 s. */
static void conn_refuse(czk_loop *l, int fd, const czk_endpoint *ep, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void conn_refuse(czk_loop *l, int fd, const czk_endpoint *ep, const char *fmt, ...)
{
    uint64_t now = czk_loopi_mono_ns();
    char why[300];
    czk_msg m;
    va_list ap;
    int n;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_ERROR;
    m.u.error.code = -EBUSY;
    snprintf(m.u.error.message, sizeof(m.u.error.message), "%s is busy: %s; try again later",
             ep && ep->hello.name[0] ? ep->hello.name : "the server", why);
    n = czk_msg_encode(l->scratch, sizeof(l->scratch), &m, NULL);
    if (n > 0)
        (void)!send(fd, l->scratch, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL);
    /* a Unix socket closed with unread records makes the peer's next read
     * fail with ECONNRESET before it sees our ERROR: discard what it sent
     * (its HELLO; fds riding along are closed by the kernel) */
    for (int i = 0; i < 4 && recv(fd, l->scratch, 1, MSG_DONTWAIT | MSG_TRUNC) >= 0; i++)
        ;
    close(fd);
    l->st.refused++;
    if (l->refuse_logged_ns && now - l->refuse_logged_ns < REFUSE_LOG_EVERY_NS) {
        l->refuse_quiet++;
        return;
    }
    if (l->refuse_quiet)
        czk_warn("refused a connection: %s (and %llu more since the last such line)", why,
                 (unsigned long long)l->refuse_quiet);
    else
        czk_warn("refused a connection: %s", why);
    l->refuse_logged_ns = now;
    l->refuse_quiet = 0;
}

static unsigned clients_of_uid(const czk_loop *l, uid_t uid)
{
    unsigned n = 0;
    for (const czk_conn *c = l->conns; c; c = c->next)
        n += c->counted && c->kind == CZK_CONN_CLIENT && c->cred.uid == uid;
    return n;
}

/* ls: the listener that accepted fd (its limits apply), NULL for czk_loop_connect */
static int conn_new(czk_loop *l, int fd, const czk_listener *ls, const czk_endpoint *ep, const czk_conn_ops *ops,
                    void *ctx, czk_conn **out, czk_error *err)
{
    int kind = ls ? ls->kind : ep->kind == CZK_CONN_CLIENT ? CZK_CONN_CLIENT : CZK_CONN_DAEMON;
    czk_peer_cred cred;
    czk_conn *c;
    int r;

    if ((r = czk_peer_get_cred(fd, &cred, err)) < 0 || (r = czk_peer_check_cred(&ep->policy, &cred, err)) < 0) {
        close(fd);
        l->st.rejected++;
        return r;
    }
    if (ls && kind == CZK_CONN_CLIENT && l->st.clients >= l->cfg.max_clients) {
        conn_refuse(l, fd, ep, "%u client connections are open (max_clients)", l->st.clients);
        return -EBUSY;
    }
    if (ls && kind == CZK_CONN_CLIENT && clients_of_uid(l, cred.uid) >= l->cfg.max_clients_per_uid) {
        conn_refuse(l, fd, ep, "uid %u has %u client connections open (max_clients_per_uid)",
                    (unsigned)cred.uid, l->cfg.max_clients_per_uid);
        return -EBUSY;
    }
    if (ls && kind == CZK_CONN_DAEMON && l->st.daemons >= l->cfg.max_daemon_conns) {
        conn_refuse(l, fd, ep, "%u daemon connections are open (max_daemon_conns)", l->st.daemons);
        return -EBUSY;
    }
    if (!(c = calloc(1, sizeof(*c)))) {
        close(fd);
        return czk_errorf(err, -ENOMEM, "no memory for a connection");
    }
    c->loop = l;
    c->fd = fd;
    c->state = ST_HELLO;
    c->is_client = ls == NULL;
    c->kind = kind;
    c->counted = ls != NULL;
    c->ops = *ops;
    c->ctx = ctx;
    if (ls) {
        c->ep = &ls->ep;
        c->ls = (czk_listener *)ls;
        c->ls->refs++;
    } else if ((c->own_ep = malloc(sizeof(*c->own_ep)))) {
        *c->own_ep = *ep;
        c->ep = c->own_ep;
    } else {
        free(c);
        close(fd);
        return czk_errorf(err, -ENOMEM, "no memory for a connection");
    }
    c->cred = cred;
    c->opened_ns = c->active_ns = czk_loopi_mono_ns();
    LIST_ADD(l->conns, c);
    l->st.conns++;
    if (c->counted) {
        if (kind == CZK_CONN_CLIENT)
            l->st.clients++;
        else
            l->st.daemons++;
    }
    conn_arm_recv(c);
    if (c->is_client) {
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
    c->active_ns = czk_loopi_mono_ns();
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
        if ((r = czk_peer_check_hello(&c->ep->policy, &c->cred, &m.u.hello, &e)) < 0) {
            conn_protocol_error(c, r, e.msg);
            return;
        }
        c->peer = m.u.hello;
        if (!c->is_client) {
            czk_msg h;
            int n;
            memset(&h, 0, sizeof(h));
            h.type = CZK_MSG_HELLO;
            h.u.hello = c->ep->hello;
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
    want_fds = czk_msg_fds(&m); /* POOL 1, SUBMIT its nfds, FETCHED 2, others none */
    if (nfds != want_fds) {
        snprintf(why, sizeof(why), "%s sent %s with %d file descriptors, expected %d", peer_desc(c, pd, sizeof(pd)),
                 czk_msg_type_name(m.type), nfds, want_fds);
        conn_protocol_error(c, -EPROTO, why);
        return;
    }
    if (c->ops.on_msg)
        c->ops.on_msg(c, &m, fds, nfds, c->ctx);
}

void czk_loopi_conn_recv(czk_conn *c, struct io_uring_cqe *cqe)
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
    if (c->state == ST_HELLO)
        return -EAGAIN;
    return conn_enqueue(c, rec, len, fds, nfds);
}

int czk_conn_send(czk_conn *c, const czk_msg *m, const int *fds, int nfds)
{
    czk_error e;
    char pd[64];
    int n;
    if (c->state != ST_OPEN)
        return c->state == ST_HELLO ? -EAGAIN : -EPIPE;
    n = czk_msg_encode(c->loop->scratch, sizeof(c->loop->scratch), m, &e);
    if (n < 0) {
        czk_err("could not encode %s for %s: %s", czk_msg_type_name(m->type), peer_desc(c, pd, sizeof(pd)), e.msg);
        return n;
    }
    return conn_enqueue(c, c->loop->scratch, (size_t)n, fds, nfds);
}

const czk_msg_hello *czk_conn_peer(const czk_conn *c) { return &c->peer; }
const czk_peer_cred *czk_conn_cred(const czk_conn *c) { return &c->cred; }
int czk_conn_is_open(const czk_conn *c) { return c->state == ST_OPEN && !c->flush_close; }
unsigned czk_conn_queued(const czk_conn *c) { return c->qcount; }
size_t czk_conn_queued_bytes(const czk_conn *c) { return c->qbytes; }
size_t czk_conn_unread(const czk_conn *c)
{
    int n = 0;
    return c->fd >= 0 && ioctl(c->fd, SIOCOUTQ, &n) == 0 && n > 0 ? (size_t)n : 0;
}
int czk_conn_kind(const czk_conn *c) { return c->kind; }
int czk_conn_reading(const czk_conn *c) { return c->state != ST_CLOSING && !c->rx_paused; }
void czk_conn_set_user(czk_conn *c, void *user) { c->user = user; }
void *czk_conn_user(const czk_conn *c) { return c->user; }
czk_loop *czk_conn_loop(const czk_conn *c) { return c->loop; }

void czk_conn_set_idle_exempt(czk_conn *c, int exempt)
{
    c->idle_exempt = exempt != 0;
    if (!exempt)
        c->active_ns = czk_loopi_mono_ns();
}

/* ---------------------------------------------------------- listeners --- */

static void listener_arm(czk_listener *ls)
{
    struct io_uring_sqe *sqe;
    if (ls->closing || ls->paused)
        return;
    sqe = czk_loopi_get_sqe(ls->loop);
    if (!sqe)
        return;
    io_uring_prep_multishot_accept(sqe, ls->fd, NULL, NULL, SOCK_CLOEXEC);
    io_uring_sqe_set_data64(sqe, UD(ls, OP_ACCEPT));
    ls->inflight++;
}

static void listener_maybe_free(czk_listener *ls)
{
    if (!ls->closing || ls->inflight > 0 || ls->refs > 0)
        return;
    close(ls->fd);
    LIST_DEL(ls->loop->listeners, ls);
    free(ls);
}

/* accept failed for lack of fds (or memory): no accept is armed now.  Tell the
 * peers in the backlog "busy" through the reserve fd, then retry later. */
static void listener_refuse_backlog(czk_listener *ls)
{
    czk_loop *l = ls->loop;
    int flags, n = 0;

    if (l->reserve_fd < 0 && (l->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0)
        return;
    if ((flags = fcntl(ls->fd, F_GETFL)) < 0 || fcntl(ls->fd, F_SETFL, flags | O_NONBLOCK) < 0)
        return;
    close(l->reserve_fd);
    l->reserve_fd = -1;
    while (n < ACCEPT_DRAIN_MAX) {
        int fd = accept4(ls->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd < 0)
            break;
        conn_refuse(l, fd, &ls->ep, "no file descriptor to serve it (%s)", ls->name);
        n++;
    }
    l->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    fcntl(ls->fd, F_SETFL, flags);
}

static void listener_retry(czk_timer *t, void *ctx)
{
    czk_listener *ls = ctx;
    (void)t;
    ls->retry = NULL;
    ls->paused = 0;
    listener_arm(ls);
}

void czk_loopi_accept(czk_listener *ls, struct io_uring_cqe *cqe)
{
    czk_loop *l = ls->loop;
    czk_error e = {0};
    int res = cqe->res, more = (cqe->flags & IORING_CQE_F_MORE) != 0;

    if (!more)
        ls->inflight--;
    if (res >= 0) {
        l->st.accepted++;
        if (ls->failures) {
            czk_info("accepting on %s again after %llu failed accepts", ls->name, (unsigned long long)ls->failures);
            ls->failures = 0;
            ls->backoff_ms = 0;
        }
        if (ls->closing)
            close(res);
        else if (conn_new(l, res, ls, &ls->ep, &ls->ops, ls->ctx, NULL, &e) < 0 && e.msg[0])
            czk_warn("rejected a connection: %s", e.msg);
    } else if (res == -EMFILE || res == -ENFILE || res == -ENOBUFS || res == -ENOMEM) {
        l->st.accept_errors++;
        if (!ls->failures++) {
            l->st.accept_pauses++;
            czk_warn("accept on %s failed: %s: new peers are told \"busy\" and accepting is retried with back-off "
                     "up to %d ms (raise the fd limit, LimitNOFILE, or lower max_clients)",
                     ls->name, strerror(-res), ACCEPT_BACKOFF_MAX_MS);
        }
        if (!ls->closing) {
            ls->paused = 1;
            if (more) { /* the kernel ends a multishot accept on errors; if not, stop it */
                struct io_uring_sqe *sqe = czk_loopi_get_sqe(l);
                if (sqe) {
                    io_uring_prep_cancel64(sqe, UD(ls, OP_ACCEPT), 0);
                    io_uring_sqe_set_data64(sqe, UD(ls, OP_CANCEL));
                    ls->inflight++;
                }
            } else {
                listener_refuse_backlog(ls);
            }
            if (!ls->retry) {
                ls->backoff_ms = ls->backoff_ms ? ls->backoff_ms * 2 : ACCEPT_BACKOFF_MIN_MS;
                if (ls->backoff_ms > ACCEPT_BACKOFF_MAX_MS)
                    ls->backoff_ms = ACCEPT_BACKOFF_MAX_MS;
                ls->retry = czk_loop_timer(l, ls->backoff_ms, 0, listener_retry, ls);
            }
        }
    } else if (res != -ECANCELED && !ls->closing) {
        czk_warn("accept on %s failed: %s", ls->name, strerror(-res));
    }
    if (!more && !ls->closing)
        listener_arm(ls);
    listener_maybe_free(ls);
}

int czk_loop_listen(czk_loop *l, int lfd, const czk_endpoint *ep, const czk_conn_ops *ops, void *ctx,
                    czk_listener **out, czk_error *err)
{
    struct sockaddr_un sa;
    socklen_t salen = sizeof(sa);
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
    if (ep->kind == CZK_CONN_CLIENT || ep->kind == CZK_CONN_DAEMON)
        ls->kind = ep->kind;
    else
        ls->kind = ep->policy.roles_mask == CZK_ROLE_BIT(CZK_ROLE_CLIENT) ? CZK_CONN_CLIENT : CZK_CONN_DAEMON;
    memset(&sa, 0, sizeof(sa));
    if (getsockname(lfd, (struct sockaddr *)&sa, &salen) == 0 && sa.sun_family == AF_UNIX && sa.sun_path[0])
        snprintf(ls->name, sizeof(ls->name), "\"%.*s\"", (int)sizeof(ls->name) - 3, sa.sun_path);
    else
        snprintf(ls->name, sizeof(ls->name), "listening socket %d", lfd);
    LIST_ADD(l->listeners, ls);
    listener_arm(ls);
    if (out)
        *out = ls;
    return 0;
}

void czk_listener_set_hello(czk_listener *ls, const czk_msg_hello *hello)
{
    ls->ep.hello = *hello;
}

void czk_listener_close(czk_listener *ls)
{
    struct io_uring_sqe *sqe;
    if (ls->closing)
        return;
    ls->closing = 1;
    if (ls->retry) {
        czk_timer_cancel(ls->retry);
        ls->retry = NULL;
    }
    sqe = czk_loopi_get_sqe(ls->loop);
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
    return conn_new(l, fd, NULL, ep, ops, ctx, out, err);
}

void czk_loopi_cancel_done(czk_loop *l, void *p)
{
    czk_listener *ls;
    /* conns and listeners share the cancel op: tell them apart by list membership */
    for (ls = l->listeners; ls && ls != (czk_listener *)p; ls = ls->next)
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

void czk_loopi_sweep(czk_loop *l)
{
    uint64_t now = czk_loopi_mono_ns(), limit = (uint64_t)l->cfg.hello_timeout_ms * 1000000ull;
    uint64_t idle = (uint64_t)l->cfg.client_idle_timeout_ms * 1000000ull;
    czk_conn *c = l->conns;
    while (c) {
        czk_conn *next = c->next;
        if (c->state == ST_HELLO && now - c->opened_ns > limit) {
            conn_set_reason(c, -ETIMEDOUT, "no HELLO within %u ms", l->cfg.hello_timeout_ms);
            conn_shutdown(c);
        } else if (idle && c->state == ST_OPEN && c->kind == CZK_CONN_CLIENT && !c->idle_exempt &&
                   now - c->active_ns > idle) {
            l->st.idle_closes++;
            conn_set_reason(c, -ETIMEDOUT, "idle for %u ms without a job to watch (client_idle_timeout_s)",
                            l->cfg.client_idle_timeout_ms);
            conn_shutdown(c);
        }
        c = next;
    }
}

void czk_loopi_free_all(czk_loop *l)
{
    while (l->conns) {
        czk_conn *c = l->conns;
        LIST_DEL(l->conns, c);
        close(c->fd);
        conn_free_queue(c);
        free(c->own_ep);
        free(c);
    }
    while (l->listeners) {
        czk_listener *ls = l->listeners;
        LIST_DEL(l->listeners, ls);
        close(ls->fd);
        free(ls);
    }
    while (l->rec_cache) {
        outrec *r = l->rec_cache;
        l->rec_cache = r->next;
        free(r);
    }
    l->rec_cached = 0;
    l->flush_list = NULL;
}
