/*
 * test_ipc_loop.c — the event loop and peers across real processes.
 *
 * The parent plays gpud: it listens on a 0660 socket in a temporary runtime
 * directory and runs the loop.  Children:
 *  - synth (its own loop, client side): HELLO; receives POOL with the pool fd
 *    over SCM_RIGHTS and maps it; receives ASSIGN, fills the slot, sends
 *    READY; the parent checks the bytes in shared memory and answers
 *    RELEASE; then 200 HEARTBEAT round trips; clean close;
 *  - client (blocking API): SUBMIT with two witness fds whose contents the
 *    parent checks, gets ACCEPTED, then streams HEARTBEATs until the parent
 *    kills it with SIGKILL mid-stream: the parent must see EOF for that
 *    connection only while the synth keeps working;
 *  - malformed record, record over 64 KiB, READY before HELLO, a HELLO that
 *    lies about its pid, a peer that never says HELLO, a FETCHED with one fd
 *    (it carries exactly two) and a FETCH with two (it carries none): each
 *    closes only its own connection, with an ERROR record to the peer where
 *    possible (naming the fd count the type wants).
 * Then in-process: timers (one-shot, repeating, cancelled), 1000 tasks posted
 * from a worker thread through the eventfd, and a peer that stops reading:
 * the outgoing queue hits its cap (-ENOBUFS) and teardown still completes
 * with sends in flight.  The policy checks of peer.c are tested directly.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/base/log.h"
#include "ipc/loop.h"
#include "ipc/peer.h"
#include "ipc/pool.h"
#include "tutil.h"

#define SYNTH_INSTANCE 3
#define ASSIGN_JOB 77
#define ASSIGN_PART 5
#define PINGS 200
#define WITNESS_BYTES 10000

static char sock_path[256];
static uint64_t witness_seed;

/* ------------------------------------------------------------ children --- */

typedef struct synth_state {
    czk_pool pool;
    int have_pool, filled, released, pongs, closed, failed;
    uint64_t slot_len;
} synth_state;

static void synth_open(czk_conn *c, void *ctx)
{
    CHECK(czk_conn_peer(c)->role == CZK_ROLE_GPUD);
}

static void synth_msg(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx)
{
    synth_state *s = ctx;
    czk_error e;
    czk_msg out;

    memset(&out, 0, sizeof(out));
    switch (m->type) {
    case CZK_MSG_POOL:
        CHECK(nfds == 1);
        CHECK_RC(czk_pool_attach(&s->pool, fds[0], &m->u.pool, &e));
        s->have_pool = 1;
        break;
    case CZK_MSG_ASSIGN: {
        const czk_msg_assign *a = &m->u.assign;
        uint32_t gen = (uint32_t)a->generation;
        CHECK(s->have_pool && a->job_id == ASSIGN_JOB && a->partition == ASSIGN_PART);
        CHECK(!strcmp(a->spool, "/var/lib/czk/spool/77"));
        CHECK_RC(czk_slot_begin_fill(&s->pool, a->slot, gen, SYNTH_INSTANCE, &e));
        s->slot_len = s->pool.hdr->slot_size & ~7ull;
        t_pattern(czk_slot_data(&s->pool, a->slot), s->slot_len, a->job_id * 1000 + a->partition);
        CHECK_RC(czk_slot_publish_ready(&s->pool, a->slot, gen, SYNTH_INSTANCE, 1024, 99, s->slot_len, true, &e));
        out.type = CZK_MSG_READY;
        out.u.ready.pool_id = a->pool_id;
        out.u.ready.slot = a->slot;
        out.u.ready.generation = a->generation;
        out.u.ready.domain_size = 1024;
        out.u.ready.n_vars = 99;
        out.u.ready.data_len = s->slot_len;
        CHECK_RC(czk_conn_send(c, &out, NULL, 0));
        s->filled = 1;
        break;
    }
    case CZK_MSG_RELEASE:
        CHECK(s->filled);
        s->released = 1;
        /* start the ping-pong */
        __attribute__((fallthrough));
    case CZK_MSG_HEARTBEAT:
        if (m->type == CZK_MSG_HEARTBEAT) {
            CHECK(m->u.heartbeat.seq == (uint64_t)s->pongs);
            s->pongs++;
        }
        if (s->pongs == PINGS) {
            czk_conn_close(c, 0, "synth done", 1);
            break;
        }
        out.type = CZK_MSG_HEARTBEAT;
        out.u.heartbeat.seq = (uint64_t)s->pongs;
        CHECK_RC(czk_conn_send(c, &out, NULL, 0));
        break;
    default:
        fprintf(stderr, "synth: unexpected %s\n", czk_msg_type_name(m->type));
        s->failed = 1;
    }
}

static void synth_close(czk_conn *c, int err, const char *why, void *ctx)
{
    synth_state *s = ctx;
    s->closed = 1;
    czk_loop_stop(czk_conn_loop(c));
}

static int run_synth(void)
{
    czk_loop *l;
    czk_error e;
    czk_endpoint ep;
    czk_conn_ops ops = {synth_open, synth_msg, synth_close};
    synth_state s;
    int fd;

    memset(&s, 0, sizeof(s));
    czk_log_init("synth", CZK_LOG_INFO);
    CHECK_RC(czk_loop_create(&l, NULL, &e));
    czk_peer_hello_init(&ep.hello, CZK_ROLE_SYNTH, 0, SYNTH_INSTANCE, "test-synth");
    czk_peer_policy_default(&ep.policy);
    ep.policy.roles_mask = CZK_ROLE_BIT(CZK_ROLE_GPUD);
    CHECK_RC(czk_peer_connect(sock_path, &fd, &e));
    CHECK_RC(czk_loop_connect(l, fd, &ep, &ops, &s, NULL, &e));
    CHECK_RC(czk_loop_run(l));
    czk_loop_destroy(l);
    CHECK(s.have_pool && s.filled && s.released && s.pongs == PINGS && s.closed && !s.failed);
    czk_pool_close(&s.pool);
    return 0;
}

static int client_connect(int *fd, uint32_t role)
{
    czk_error e;
    czk_msg_hello mine, theirs;
    czk_peer_policy pol;
    czk_peer_policy_default(&pol);
    CHECK_RC(czk_peer_connect(sock_path, fd, &e));
    czk_peer_hello_init(&mine, role, -1, 0, "test-client");
    if (czk_peer_handshake(*fd, &mine, &pol, &theirs, 10000, &e) < 0) {
        fprintf(stderr, "handshake: %s\n", e.msg);
        exit(1);
    }
    CHECK(theirs.role == CZK_ROLE_GPUD && theirs.pid == (uint32_t)getppid());
    return 0;
}

static int run_streamer(void)
{
    uint8_t buf[CZK_MSG_MAX_RECORD];
    czk_error e;
    czk_msg m;
    int fd, wfd[2];

    client_connect(&fd, CZK_ROLE_CLIENT);
    for (int i = 0; i < 2; i++) {
        uint8_t data[WITNESS_BYTES];
        wfd[i] = memfd_create("witness", MFD_CLOEXEC);
        t_pattern(data, sizeof(data), witness_seed + (uint64_t)i);
        CHECK(write(wfd[i], data, sizeof(data)) == (ssize_t)sizeof(data));
    }
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_SUBMIT;
    snprintf(m.u.submit.request_id, sizeof(m.u.submit.request_id), "req-1");
    snprintf(m.u.submit.circuit, sizeof(m.u.submit.circuit), "test");
    m.u.submit.n_partitions = 2;
    m.u.submit.n_fds = 2;
    m.u.submit.flags = CZK_SUBMIT_F_WAIT;
    CHECK_RC(czk_peer_send(fd, &m, wfd, 2, &e));
    CHECK_RC(czk_peer_recv(fd, buf, sizeof(buf), &m, NULL, NULL, 10000, &e));
    CHECK(m.type == CZK_MSG_ACCEPTED && m.u.accepted.job_id == 1234 && !strcmp(m.u.accepted.request_id, "req-1"));
    /* stream until killed */
    for (uint64_t seq = 0;; seq++) {
        memset(&m, 0, sizeof(m));
        m.type = CZK_MSG_HEARTBEAT;
        m.u.heartbeat.seq = seq;
        if (czk_peer_send(fd, &m, NULL, 0, &e) < 0)
            return 3;
        usleep(1000);
    }
}

/* sends one raw record (after a proper handshake unless hello is 0); expects ERROR and/or EOF */
static int run_bad(int kind)
{
    uint8_t buf[CZK_MSG_MAX_RECORD + 8192];
    czk_error e;
    czk_msg m;
    int fd, r, got_error = 0;

    if (kind == 0 || kind == 1 || kind == 6 || kind == 7) {
        client_connect(&fd, CZK_ROLE_CLIENT);
    } else {
        CHECK_RC(czk_peer_connect(sock_path, &fd, &e));
    }
    switch (kind) {
    case 0: /* garbage: a map declaring far more entries than bytes */
        buf[0] = 0xdf, buf[1] = 0x7f, buf[2] = 0xff, buf[3] = 0xff, buf[4] = 0xff;
        t_fill(buf + 5, 100);
        CHECK_RC(czk_peer_send_raw(fd, buf, 105, NULL, 0, &e));
        break;
    case 1: /* over the record cap */
        memset(buf, 0xc0, CZK_MSG_MAX_RECORD + 4000);
        CHECK_RC(czk_peer_send_raw(fd, buf, CZK_MSG_MAX_RECORD + 4000, NULL, 0, &e));
        break;
    case 2: /* READY before HELLO */
        memset(&m, 0, sizeof(m));
        m.type = CZK_MSG_READY;
        CHECK_RC(czk_peer_send(fd, &m, NULL, 0, &e));
        break;
    case 3: /* HELLO with someone else's pid */
        memset(&m, 0, sizeof(m));
        m.type = CZK_MSG_HELLO;
        czk_peer_hello_init(&m.u.hello, CZK_ROLE_SYNTH, 0, 1, "liar");
        m.u.hello.pid = (uint32_t)getppid();
        CHECK_RC(czk_peer_send(fd, &m, NULL, 0, &e));
        break;
    case 4: /* silent: never says HELLO */
        break;
    case 5: /* a role the listener does not accept */
        memset(&m, 0, sizeof(m));
        m.type = CZK_MSG_HELLO;
        czk_peer_hello_init(&m.u.hello, CZK_ROLE_GPUD, 0, 1, "second gpud");
        CHECK_RC(czk_peer_send(fd, &m, NULL, 0, &e));
        break;
    case 6: /* FETCHED with one fd instead of two */
    case 7: { /* FETCH with two fds instead of none */
        int two[2] = {STDIN_FILENO, STDERR_FILENO};
        memset(&m, 0, sizeof(m));
        m.type = kind == 6 ? CZK_MSG_FETCHED : CZK_MSG_FETCH;
        m.u.fetched.job_id = 5; /* fetch and fetched start alike */
        m.u.fetched.partition = 0;
        CHECK(czk_msg_fds(&m) == (kind == 6 ? CZK_FETCHED_FDS : 0));
        CHECK_RC(czk_peer_send(fd, &m, two, kind == 6 ? 1 : 2, &e));
        break;
    }
    }
    for (;;) {
        r = czk_peer_recv(fd, buf, sizeof(buf), &m, NULL, NULL, 15000, &e);
        if (r == -ECONNRESET)
            break; /* EOF: the server closed us */
        if (r == -ETIMEDOUT) {
            fprintf(stderr, "bad peer %d: server did not close the connection\n", kind);
            return 1;
        }
        if (r == 0 && m.type == CZK_MSG_ERROR) {
            CHECK(m.u.error.code < 0 && m.u.error.message[0]);
            if (kind == 6)
                CHECK(strstr(m.u.error.message, "FETCHED with 1 file descriptors, expected 2"));
            if (kind == 7)
                CHECK(strstr(m.u.error.message, "FETCH with 2 file descriptors, expected 0"));
            got_error = 1;
        }
        if (r < 0 && r != -ECONNRESET)
            break; /* e.g. reset: fine */
    }
    if (kind != 1 && kind != 4 && !got_error) {
        fprintf(stderr, "bad peer %d: no ERROR record before EOF\n", kind);
        return 1;
    }
    return 0;
}

/* -------------------------------------------------------------- server --- */

enum { K_SYNTH, K_STREAMER, K_BAD0, K_BAD1, K_BAD2, K_BAD3, K_BAD4, K_BAD5, K_BAD6, K_BAD7, K_COUNT };

typedef struct server {
    czk_loop *loop;
    czk_pool pool;
    pid_t pids[K_COUNT];
    int ready_ok, submit_ok, hb_from_client, killed, streamer_eof, synth_closed, pings;
    int closes, failed;
    uint32_t gen;
    czk_timer *deadline;
} server;

static void srv_open(czk_conn *c, void *ctx)
{
    server *s = ctx;
    czk_error e;
    czk_msg m;

    if (czk_conn_peer(c)->role != CZK_ROLE_SYNTH)
        return;
    CHECK(czk_conn_peer(c)->instance == SYNTH_INSTANCE && czk_conn_cred(c)->pid == s->pids[K_SYNTH]);
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_POOL;
    czk_pool_describe(&s->pool, &m.u.pool);
    CHECK_RC(czk_conn_send(c, &m, &s->pool.fd, 1));
    CHECK_RC(czk_slot_assign(&s->pool, 1, SYNTH_INSTANCE, ASSIGN_JOB, ASSIGN_PART, 0, &s->gen, &e));
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_ASSIGN;
    m.u.assign.pool_id = s->pool.hdr->pool_id;
    m.u.assign.slot = 1;
    m.u.assign.generation = s->gen;
    m.u.assign.job_id = ASSIGN_JOB;
    m.u.assign.partition = ASSIGN_PART;
    snprintf(m.u.assign.spool, sizeof(m.u.assign.spool), "/var/lib/czk/spool/77");
    m.u.assign.lease_ms = 60000;
    CHECK_RC(czk_conn_send(c, &m, NULL, 0));
}

static void srv_msg(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx)
{
    static uint8_t expect[4 << 20];
    server *s = ctx;
    czk_error e;
    czk_msg out;

    memset(&out, 0, sizeof(out));
    switch (m->type) {
    case CZK_MSG_READY: {
        const czk_msg_ready *r = &m->u.ready;
        CHECK(r->slot == 1 && r->generation == s->gen && r->n_vars == 99);
        CHECK_RC(czk_slot_begin_dma(&s->pool, r->slot, s->gen, &e));
        CHECK_RC(czk_slot_verify(&s->pool, r->slot, &e));
        CHECK(s->pool.slots[1].data_len == r->data_len && r->data_len <= sizeof(expect));
        t_pattern(expect, r->data_len, ASSIGN_JOB * 1000 + ASSIGN_PART);
        CHECK(!memcmp(czk_slot_data(&s->pool, 1), expect, r->data_len));
        CHECK_RC(czk_slot_release(&s->pool, r->slot, s->gen, &e));
        out.type = CZK_MSG_RELEASE;
        out.u.release.pool_id = r->pool_id;
        out.u.release.slot = r->slot;
        out.u.release.generation = r->generation;
        CHECK_RC(czk_conn_send(c, &out, NULL, 0));
        s->ready_ok = 1;
        break;
    }
    case CZK_MSG_HEARTBEAT:
        if (czk_conn_peer(c)->role == CZK_ROLE_SYNTH) {
            s->pings++;
            out.type = CZK_MSG_HEARTBEAT;
            out.u.heartbeat.seq = m->u.heartbeat.seq;
            CHECK_RC(czk_conn_send(c, &out, NULL, 0));
        } else if (++s->hb_from_client == 50) {
            /* kill the client in the middle of its stream */
            CHECK(kill(s->pids[K_STREAMER], SIGKILL) == 0);
            s->killed = 1;
        }
        break;
    case CZK_MSG_SUBMIT: {
        uint8_t got[WITNESS_BYTES], want[WITNESS_BYTES];
        CHECK(nfds == 2 && m->u.submit.n_fds == 2 && !strcmp(m->u.submit.request_id, "req-1"));
        for (int i = 0; i < 2; i++) {
            CHECK(pread(fds[i], got, sizeof(got), 0) == (ssize_t)sizeof(got));
            t_pattern(want, sizeof(want), witness_seed + (uint64_t)i);
            CHECK(!memcmp(got, want, sizeof(got)));
            CHECK(fcntl(fds[i], F_GETFD) & FD_CLOEXEC);
        }
        /* take ownership of the first fd; the loop closes the second */
        close(fds[0]);
        fds[0] = -1;
        out.type = CZK_MSG_ACCEPTED;
        snprintf(out.u.accepted.request_id, sizeof(out.u.accepted.request_id), "%s", m->u.submit.request_id);
        out.u.accepted.job_id = 1234;
        CHECK_RC(czk_conn_send(c, &out, NULL, 0));
        s->submit_ok = 1;
        break;
    }
    default:
        fprintf(stderr, "server: unexpected %s\n", czk_msg_type_name(m->type));
        s->failed = 1;
    }
}

static void srv_close(czk_conn *c, int err, const char *why, void *ctx)
{
    server *s = ctx;
    pid_t pid = czk_conn_cred(c)->pid;
    s->closes++;
    if (pid == s->pids[K_STREAMER]) {
        CHECK(s->killed && err == 0 && strstr(why, "peer closed"));
        s->streamer_eof = 1;
    }
    if (pid == s->pids[K_SYNTH]) {
        CHECK(err == 0);
        s->synth_closed = 1;
    }
}

static void srv_tick(czk_timer *t, void *ctx)
{
    server *s = ctx;
    czk_loop_stats st;
    czk_loop_get_stats(s->loop, &st);
    /* every child's connection has come and gone */
    if (s->synth_closed && s->streamer_eof && s->closes >= K_COUNT && st.conns == 0)
        czk_loop_stop(s->loop);
}

static void srv_deadline(czk_timer *t, void *ctx)
{
    server *s = ctx;
    fprintf(stderr, "deadline: ready %d submit %d killed %d eof %d synth_closed %d closes %d\n", s->ready_ok,
            s->submit_ok, s->killed, s->streamer_eof, s->synth_closed, s->closes);
    s->failed = 1;
    czk_loop_stop(s->loop);
}

/* ------------------------------------------------- in-process checks --- */

typedef struct tstate {
    int oneshot, repeat, cancelled_fired, tasks_run, wrong_thread;
    pthread_t loop_thread;
    czk_loop *loop;
    czk_loop_task tasks[1000];
} tstate;

static void t_oneshot(czk_timer *t, void *ctx) { ((tstate *)ctx)->oneshot++; }
static void t_repeat(czk_timer *t, void *ctx)
{
    tstate *s = ctx;
    if (++s->repeat == 5)
        czk_timer_cancel(t); /* cancelling from inside the callback */
}
static void t_never(czk_timer *t, void *ctx) { ((tstate *)ctx)->cancelled_fired++; }
static void t_task(czk_loop_task *task, void *ctx)
{
    tstate *s = ctx;
    if (!pthread_equal(pthread_self(), s->loop_thread))
        s->wrong_thread++;
    s->tasks_run++;
}
static void *worker(void *arg)
{
    tstate *s = arg;
    for (int i = 0; i < 1000; i++) {
        s->tasks[i].fn = t_task;
        s->tasks[i].ctx = s;
        czk_loop_post(s->loop, &s->tasks[i]);
        if (i % 100 == 0)
            usleep(2000);
    }
    return NULL;
}

typedef struct qstate {
    int opened, closed, close_err;
} qstate;
static void q_open(czk_conn *c, void *ctx) { ((qstate *)ctx)->opened = 1; }
static void q_close(czk_conn *c, int err, const char *why, void *ctx)
{
    ((qstate *)ctx)->closed = 1;
    ((qstate *)ctx)->close_err = err;
}

static void in_process_checks(void)
{
    czk_loop_config cfg = {.out_queue_cap = 32, .recv_buffers = 8};
    czk_loop *l;
    czk_error e;
    tstate ts;
    pthread_t th;
    czk_timer *never;

    memset(&ts, 0, sizeof(ts));
    CHECK_RC(czk_loop_create(&l, &cfg, &e));
    ts.loop = l;
    ts.loop_thread = pthread_self();
    CHECK(czk_loop_timer(l, 20, 0, t_oneshot, &ts));
    CHECK(czk_loop_timer(l, 5, 10, t_repeat, &ts));
    never = czk_loop_timer(l, 50, 0, t_never, &ts);
    czk_timer_cancel(never);
    CHECK(pthread_create(&th, NULL, worker, &ts) == 0);
    for (int i = 0; i < 400 && (ts.tasks_run < 1000 || ts.repeat < 5 || !ts.oneshot); i++)
        CHECK(czk_loop_run_once(l, 10) >= 0);
    pthread_join(th, NULL);
    for (int i = 0; i < 10; i++)
        czk_loop_run_once(l, 10); /* would fire the cancelled one at 50 ms */
    CHECK(ts.tasks_run == 1000 && ts.wrong_thread == 0);
    CHECK(ts.oneshot == 1 && ts.repeat == 5 && ts.cancelled_fired == 0);

    /* a daemon peer that stops reading: the record cap closes the connection
     * (never a silent drop), on_close follows from the loop, not from inside
     * czk_conn_send */
    {
        int sp[2], r = 0, sent = 0;
        uint8_t buf[CZK_MSG_MAX_RECORD];
        czk_conn *c;
        czk_endpoint ep;
        czk_conn_ops ops = {q_open, NULL, q_close};
        qstate q = {0};
        czk_msg m, theirs;

        CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0);
        memset(&ep, 0, sizeof(ep));
        czk_peer_hello_init(&ep.hello, CZK_ROLE_CLIENT, -1, 0, "q");
        czk_peer_policy_default(&ep.policy);
        CHECK_RC(czk_loop_connect(l, sp[0], &ep, &ops, &q, &c, &e));
        CHECK(czk_conn_send(c, &m, NULL, 0) == -EAGAIN); /* before the handshake */
        czk_loop_run_once(l, 0);
        CHECK_RC(czk_peer_recv(sp[1], buf, sizeof(buf), &m, NULL, NULL, 1000, &e));
        CHECK(m.type == CZK_MSG_HELLO);
        theirs.type = CZK_MSG_HELLO;
        czk_peer_hello_init(&theirs.u.hello, CZK_ROLE_GPUD, -1, 0, "fake gpud");
        CHECK_RC(czk_peer_send(sp[1], &theirs, NULL, 0, &e));
        for (int i = 0; i < 100 && !q.opened; i++)
            czk_loop_run_once(l, 10);
        CHECK(q.opened && czk_conn_is_open(c));
        memset(&m, 0, sizeof(m));
        m.type = CZK_MSG_STATUS_REPLY;
        memset(buf, 0, sizeof(buf));
        buf[0] = 0x81, buf[1] = 0xa1, buf[2] = 'x', buf[3] = 0xc5, buf[4] = 0xea, buf[5] = 0x00; /* {"x": bin 59904} */
        m.u.status.body.ptr = buf;
        m.u.status.body.len = 6 + 0xea00;
        for (int i = 0; i < 1000; i++) {
            r = czk_conn_send(c, &m, NULL, 0);
            if (r < 0)
                break;
            sent++;
            czk_loop_run_once(l, 0);
        }
        CHECK(r == -ENOBUFS && sent >= 32);
        CHECK(!q.closed && !czk_conn_is_open(c));
        CHECK(czk_conn_send(c, &m, NULL, 0) == -EPIPE);
        czk_conn_close(c, 0, "test teardown", 0); /* already closing: a no-op */
        for (int i = 0; i < 100 && !q.closed; i++)
            czk_loop_run_once(l, 10);
        CHECK(q.closed && q.close_err == -ENOBUFS);
        {
            czk_loop_stats st;
            czk_loop_get_stats(l, &st);
            CHECK(st.overflow_closes == 1);
        }
        close(sp[1]);
    }
    czk_loop_destroy(l);
}

static void policy_checks(void)
{
    czk_peer_policy p;
    czk_peer_cred c;
    czk_msg_hello h;
    czk_error e;

    czk_peer_policy_default(&p);
    p.uid = 1000;
    p.allow_root = 0;
    memset(&c, 0, sizeof(c));
    c.pid = 55;
    c.uid = 1000;
    c.gid = 1000;
    CHECK(czk_peer_check_cred(&p, &c, &e) == 0);
    c.uid = 1001;
    CHECK(czk_peer_check_cred(&p, &c, &e) == -EACCES && strstr(e.msg, "1001"));
    p.gid = 4242;
    CHECK(czk_peer_check_cred(&p, &c, &e) == -EACCES);
    c.groups[0] = 7, c.groups[1] = 4242, c.ngroups = 2; /* supplementary group */
    CHECK(czk_peer_check_cred(&p, &c, &e) == 0);
    c.ngroups = 0, c.gid = 4242; /* primary group */
    CHECK(czk_peer_check_cred(&p, &c, &e) == 0);
    c.gid = 1, c.uid = 0;
    CHECK(czk_peer_check_cred(&p, &c, &e) == -EACCES);
    p.allow_root = 1;
    CHECK(czk_peer_check_cred(&p, &c, &e) == 0);
    czk_peer_hello_init(&h, CZK_ROLE_SYNTH, 0, 1, "x");
    h.pid = 55;
    p.roles_mask = CZK_ROLE_BIT(CZK_ROLE_SYNTH);
    CHECK(czk_peer_check_hello(&p, &c, &h, &e) == 0);
    h.role = CZK_ROLE_CLIENT;
    CHECK(czk_peer_check_hello(&p, &c, &h, &e) == -EACCES);
    h.role = CZK_ROLE_SYNTH;
    h.pid = 56;
    CHECK(czk_peer_check_hello(&p, &c, &h, &e) == -EACCES);
    h.pid = 55;
    h.proto = CZK_PROTO_VERSION + 1;
    CHECK(czk_peer_check_hello(&p, &c, &h, &e) == -EPROTO);
}

int main(void)
{
    char dir[] = "/tmp/czk-loop-XXXXXX";
    czk_loop_config cfg = {.hello_timeout_ms = 500};
    czk_conn_ops ops = {srv_open, srv_msg, srv_close};
    czk_endpoint ep;
    czk_error e;
    server s;
    struct stat st;
    int lfd, status, bad = 0;

    t_seed("test_ipc_loop");
    czk_log_init("gpud", CZK_LOG_INFO);
    signal(SIGPIPE, SIG_IGN);
    policy_checks();
    witness_seed = t_rand64();
    memset(&s, 0, sizeof(s));
    CHECK(mkdtemp(dir));
    CHECK_RC(czk_peer_listen(dir, "gpud.sock", (gid_t)-1, &lfd, &e));
    snprintf(sock_path, sizeof(sock_path), "%s/gpud.sock", dir);
    CHECK(stat(sock_path, &st) == 0 && S_ISSOCK(st.st_mode) && (st.st_mode & 0777) == 0660);
    /* a second daemon cannot steal a live socket */
    {
        int lfd2;
        CHECK(czk_peer_listen(dir, "gpud.sock", (gid_t)-1, &lfd2, &e) == -EADDRINUSE);
    }
    {
        czk_pool_opts o = {.pool_id = 9, .numa_node = -1, .slot_count = 2, .slot_size = 3 << 20,
                           .huge = CZK_POOL_HUGE_NEVER};
        CHECK_RC(czk_pool_create(&s.pool, &o, &e));
    }

    /* children first, the loop after fork */
    for (int k = 0; k < K_COUNT; k++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            close(lfd);
            t_rng_state ^= (uint64_t)getpid() << 20;
            if (k == K_SYNTH)
                _exit(run_synth());
            if (k == K_STREAMER)
                _exit(run_streamer());
            _exit(run_bad(k - K_BAD0));
        }
        s.pids[k] = pid;
    }

    CHECK_RC(czk_loop_create(&s.loop, &cfg, &e));
    czk_peer_hello_init(&ep.hello, CZK_ROLE_GPUD, 0, 0, "test-gpud");
    czk_peer_policy_default(&ep.policy);
    ep.policy.roles_mask = CZK_ROLE_BIT(CZK_ROLE_SYNTH) | CZK_ROLE_BIT(CZK_ROLE_CLIENT);
    CHECK_RC(czk_loop_listen(s.loop, lfd, &ep, &ops, &s, NULL, &e));
    CHECK(czk_loop_timer(s.loop, 50, 50, srv_tick, &s));
    s.deadline = czk_loop_timer(s.loop, 30000, 0, srv_deadline, &s);
    CHECK_RC(czk_loop_run(s.loop));
    {
        czk_loop_stats st2;
        czk_loop_get_stats(s.loop, &st2);
        fprintf(stderr, "loop stats: accepted %llu opened %llu closed %llu in %llu out %llu malformed %llu\n",
                (unsigned long long)st2.accepted, (unsigned long long)st2.opened, (unsigned long long)st2.closed,
                (unsigned long long)st2.records_in, (unsigned long long)st2.records_out,
                (unsigned long long)st2.malformed);
        /* + 1: czk_peer_listen's liveness probe of the busy socket */
        CHECK(st2.accepted == K_COUNT + 1 && st2.malformed >= 7);
    }
    czk_loop_destroy(s.loop);

    for (int k = 0; k < K_COUNT; k++) {
        CHECK(waitpid(s.pids[k], &status, 0) == s.pids[k]);
        if (k == K_STREAMER) {
            CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "child %d failed (status 0x%x)\n", k, status);
            bad = 1;
        }
    }
    CHECK(!bad && !s.failed);
    CHECK(s.ready_ok && s.submit_ok && s.killed && s.streamer_eof && s.synth_closed && s.pings == PINGS);
    czk_pool_close(&s.pool);
    unlink(sock_path);
    rmdir(dir);

    in_process_checks();
    fprintf(stderr, "test_ipc_loop: ok\n");
    return 0;
}
