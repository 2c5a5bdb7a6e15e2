/*
 * loop.c — the io_uring event loop (see loop.h for the contract): ring set-up,
 * the provided receive buffers, completion dispatch, timers and cross-thread
 * wake-ups.  Connections and listeners live in conn.c.
 *
 * user_data packs a pointer (8-byte aligned: a connection, listener, timer or
 * the loop) with the operation in its low 3 bits.  Objects are freed only
 * when their count of operations in flight is zero after they were closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"
#include "ipc/loop_internal.h"

uint64_t czk_loopi_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* An SQE, submitting first when the ring is full.  NULL only if the ring is broken. */
struct io_uring_sqe *czk_loopi_get_sqe(czk_loop *l)
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

/* ------------------------------------------------------------- timers --- */

static void timer_arm(czk_timer *t, uint64_t ms)
{
    struct io_uring_sqe *sqe = czk_loopi_get_sqe(t->loop);
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
    if (t->inflight > 0 && (sqe = czk_loopi_get_sqe(t->loop))) {
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
    czk_loopi_sweep(ctx);
}

/* --------------------------------------------------------------- wake --- */

static void wake_arm(czk_loop *l)
{
    struct io_uring_sqe *sqe = czk_loopi_get_sqe(l);
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
    l->reserve_fd = -1;
    if (cfg)
        l->cfg = *cfg;
    if (!l->cfg.sq_entries)
        l->cfg.sq_entries = 256;
    if (!l->cfg.recv_buffers)
        l->cfg.recv_buffers = CZK_LOOP_RECV_BUFFERS;
    if (!l->cfg.out_queue_cap)
        l->cfg.out_queue_cap = 65536;
    if (!l->cfg.daemon_queue_bytes)
        l->cfg.daemon_queue_bytes = (size_t)64 << 20;
    if (!l->cfg.client_queue_hard)
        l->cfg.client_queue_hard = (size_t)16 << 20;
    if (!l->cfg.client_queue_soft)
        l->cfg.client_queue_soft = (size_t)256 << 10;
    if (l->cfg.client_queue_soft > l->cfg.client_queue_hard / 2)
        l->cfg.client_queue_soft = l->cfg.client_queue_hard / 2;
    if (!l->cfg.max_clients)
        l->cfg.max_clients = 1000;
    if (!l->cfg.max_clients_per_uid || l->cfg.max_clients_per_uid > l->cfg.max_clients)
        l->cfg.max_clients_per_uid = l->cfg.max_clients;
    if (!l->cfg.max_daemon_conns)
        l->cfg.max_daemon_conns = 64;
    if (!l->cfg.hello_timeout_ms)
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
    /* held so that a peer can still be told "busy" when fds run out (conn.c) */
    l->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    wake_arm(l);
    {
        /* the sweep runs often enough for the shortest of its timeouts */
        unsigned t = l->cfg.hello_timeout_ms, every;
        if (l->cfg.client_idle_timeout_ms && l->cfg.client_idle_timeout_ms < t)
            t = l->cfg.client_idle_timeout_ms;
        every = t / 4 < 10 ? 10 : t / 4 > 1000 ? 1000 : t / 4;
        l->sweep = czk_loop_timer(l, every, every, sweep_fn, l);
    }
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
    if (l->reserve_fd >= 0)
        close(l->reserve_fd);
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
        czk_loopi_conn_recv(p, cqe);
        break;
    case OP_SEND:
        czk_loopi_conn_sent(p, cqe->res);
        break;
    case OP_CANCEL:
        czk_loopi_cancel_done(l, p);
        break;
    case OP_ACCEPT:
        czk_loopi_accept(p, cqe);
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

    czk_loopi_flush(l);
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
    czk_loopi_flush(l);
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
    czk_loopi_free_all(l);
    while (l->timers) {
        czk_timer *t = l->timers;
        LIST_DEL(l->timers, t);
        free(t);
    }
    munmap(l->br, l->br_size);
    munmap(l->bufs, l->bufs_size);
    close(l->wake_fd);
    if (l->reserve_fd >= 0)
        close(l->reserve_fd);
    free(l);
}
