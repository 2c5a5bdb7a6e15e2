/*
 * test_ipc_flow.c — flow control and connection limits of the event loop
 * (the "Flow control" and "Connection limits" parts of ipc/loop.h):
 *
 *  - a daemon link whose peer stops reading: the loop keeps reading it; the
 *    queue grows to its byte limit, then the connection is closed with
 *    -ENOBUFS; the peer finds an in-order prefix of what was queued followed
 *    by EOF (a loss it can see, never a gap);
 *  - a client that does not read its replies: its requests stop being read
 *    above the soft limit and are read again once it drains; one that never
 *    reads is closed at the hard limit;
 *  - idle clients are closed after the idle timeout, a client marked exempt
 *    stays until unmarked;
 *  - per-kind and per-uid caps: peers over a cap get ERROR -EBUSY naming it;
 *    with root, a second uid (65534) checks that the per-uid cap is per uid;
 *  - memory: VmRSS per idle connection stays small (numbers printed).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/base/log.h"
#include "ipc/loop.h"
#include "ipc/peer.h"
#include "tutil.h"

#define MAXC 64
#define PUMP_UNTIL(l, cond)                                 \
    for (int i_ = 0; i_ < 1000 && !(cond); i_++)            \
        czk_loop_run_once((l), 10)

typedef struct srv {
    czk_conn *conn[MAXC];
    char name[MAXC][CZK_MSG_STR_SHORT];
    int closed[MAXC], close_err[MAXC];
    char why[MAXC][256];
    int n, reqs, heartbeats;
    size_t reply_pad; /* STATUS is answered with a STATUS_REPLY of this much padding */
} srv;

static int srv_find(srv *s, czk_conn *c)
{
    for (int i = 0; i < s->n; i++)
        if (s->conn[i] == c)
            return i;
    return -1;
}

/* STATUS bodies: {"s": seq, "x": bin pad} */
static size_t make_body(uint8_t *b, uint64_t seq, size_t pad)
{
    size_t n = 0;
    b[n++] = 0x82, b[n++] = 0xa1, b[n++] = 's', b[n++] = 0xcf;
    for (int i = 7; i >= 0; i--)
        b[n++] = (uint8_t)(seq >> (8 * i));
    b[n++] = 0xa1, b[n++] = 'x', b[n++] = 0xc5, b[n++] = (uint8_t)(pad >> 8), b[n++] = (uint8_t)pad;
    t_fill(b + n, pad);
    return n + pad;
}

static uint64_t body_seq(const czk_bytes *body)
{
    uint64_t v = 0;
    CHECK(body->len >= 12 && body->ptr[3] == 0xcf);
    for (int i = 0; i < 8; i++)
        v = v << 8 | body->ptr[4 + i];
    return v;
}

static void s_open(czk_conn *c, void *ctx)
{
    srv *s = ctx;
    if (s->n == MAXC)
        return; /* the memory check opens more than are tracked */
    s->conn[s->n] = c;
    snprintf(s->name[s->n], sizeof(s->name[0]), "%s", czk_conn_peer(c)->name);
    if (!strcmp(czk_conn_peer(c)->name, "watcher"))
        czk_conn_set_idle_exempt(c, 1);
    s->n++;
}

static void s_msg(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx)
{
    static uint8_t body[CZK_MSG_MAX_RECORD];
    srv *s = ctx;
    czk_msg r;

    if (m->type == CZK_MSG_HEARTBEAT) {
        s->heartbeats++;
        return;
    }
    if (m->type != CZK_MSG_STATUS)
        return;
    s->reqs++;
    memset(&r, 0, sizeof(r));
    r.type = CZK_MSG_STATUS_REPLY;
    r.u.status.body.ptr = body;
    r.u.status.body.len = (uint32_t)make_body(body, body_seq(&m->u.status.body), s->reply_pad);
    CHECK(czk_conn_send(c, &r, NULL, 0) == 0);
}

static void s_close(czk_conn *c, int err, const char *why, void *ctx)
{
    srv *s = ctx;
    int i = srv_find(s, c);
    if (i < 0)
        return; /* refused before HELLO or closed during it */
    s->closed[i] = 1;
    s->close_err[i] = err;
    snprintf(s->why[i], sizeof(s->why[0]), "%s", why);
    s->conn[i] = NULL;
}

static const czk_conn_ops s_ops = {s_open, s_msg, s_close};

static czk_loop *server(const czk_loop_config *cfg, const char *dir, srv *s)
{
    czk_endpoint ep;
    czk_error e = {0};
    czk_loop *l;
    int lfd;

    CHECK_RC(czk_loop_create(&l, cfg, &e));
    memset(&ep, 0, sizeof(ep));
    czk_peer_hello_init(&ep.hello, CZK_ROLE_GPUD, -1, 0, "czk-gpud");
    czk_peer_policy_default(&ep.policy);
    ep.policy.gid = 65534; /* the second uid of the cap checks */
    ep.policy.roles_mask = CZK_ROLE_BIT(CZK_ROLE_CLIENT); /* AUTO: a client listener */
    CHECK_RC(czk_peer_listen(dir, "czk.sock", (gid_t)-1, &lfd, &e));
    CHECK_RC(czk_loop_listen(l, lfd, &ep, &s_ops, s, NULL, &e));
    ep.kind = CZK_CONN_DAEMON;
    ep.policy.roles_mask = CZK_ROLE_BIT(CZK_ROLE_SYNTH) | CZK_ROLE_BIT(CZK_ROLE_FINALIZER);
    CHECK_RC(czk_peer_listen(dir, "gpud.sock", (gid_t)-1, &lfd, &e));
    CHECK_RC(czk_loop_listen(l, lfd, &ep, &s_ops, s, NULL, &e));
    return l;
}

/* a blocking client socket that has sent its HELLO */
static int client(const char *dir, const char *sock, uint32_t role, const char *name)
{
    char path[300];
    czk_error e = {0};
    czk_msg h;
    int fd;

    snprintf(path, sizeof(path), "%s/%s", dir, sock);
    CHECK_RC(czk_peer_connect(path, &fd, &e));
    memset(&h, 0, sizeof(h));
    h.type = CZK_MSG_HELLO;
    czk_peer_hello_init(&h.u.hello, role, -1, 0, name);
    CHECK_RC(czk_peer_send(fd, &h, NULL, 0, &e));
    return fd;
}

/* the next record on fd while the loop runs: 0, -ECONNRESET on EOF */
static int client_read(czk_loop *l, int fd, czk_msg *m, uint8_t *buf)
{
    czk_error e = {0};
    int r = -ETIMEDOUT;
    for (int i = 0; i < 1000 && r == -ETIMEDOUT; i++) {
        czk_loop_run_once(l, 2);
        r = czk_peer_recv(fd, buf, CZK_MSG_MAX_RECORD, m, NULL, NULL, 0, &e);
    }
    return r;
}

/* 1: HELLO, 2: ERROR -EBUSY mentioning what, 0: anything else */
static int hello_or_busy(czk_loop *l, int fd, const char *what)
{
    static uint8_t buf[CZK_MSG_MAX_RECORD];
    czk_msg m;
    int r = client_read(l, fd, &m, buf);
    if (r < 0) {
        fprintf(stderr, "no answer to HELLO: %s\n", strerror(-r));
        return 0;
    }
    if (m.type == CZK_MSG_HELLO)
        return 1;
    if (m.type == CZK_MSG_ERROR && m.u.error.code == -EBUSY && strstr(m.u.error.message, what) &&
        strstr(m.u.error.message, "czk-gpud is busy"))
        return 2;
    fprintf(stderr, "unexpected %s: %s\n", czk_msg_type_name(m.type),
            m.type == CZK_MSG_ERROR ? m.u.error.message : "");
    return 0;
}

/* ------------------------------------------------------------ daemons --- */

typedef struct qstate {
    int opened, closed, close_err, heartbeats, closed_in_send;
    char why[256];
} qstate;
static void q_open(czk_conn *c, void *ctx) { ((qstate *)ctx)->opened = 1; }
static void q_msg(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx)
{
    ((qstate *)ctx)->heartbeats += m->type == CZK_MSG_HEARTBEAT;
}
static void q_close(czk_conn *c, int err, const char *why, void *ctx)
{
    qstate *q = ctx;
    q->closed = 1;
    q->close_err = err;
    snprintf(q->why, sizeof(q->why), "%s", why);
}

static void daemon_overflow(void)
{
    static uint8_t body[CZK_MSG_MAX_RECORD], buf[CZK_MSG_MAX_RECORD];
    czk_loop_config cfg = {.daemon_queue_bytes = 512 << 10, .client_queue_soft = 64 << 10};
    czk_conn_ops ops = {q_open, q_msg, q_close};
    qstate q = {0};
    czk_endpoint ep;
    czk_error e = {0};
    czk_loop_stats st;
    czk_loop *l;
    czk_conn *c;
    czk_msg m, theirs;
    int sp[2], r = 0, paused_seen = 0;
    uint64_t sent = 0, got = 0;

    CHECK_RC(czk_loop_create(&l, &cfg, &e));
    CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0);
    memset(&ep, 0, sizeof(ep));
    czk_peer_hello_init(&ep.hello, CZK_ROLE_SYNTH, -1, 0, "synth");
    czk_peer_policy_default(&ep.policy);
    CHECK_RC(czk_loop_connect(l, sp[0], &ep, &ops, &q, &c, &e));
    CHECK(czk_conn_kind(c) == CZK_CONN_DAEMON);
    czk_loop_run_once(l, 0);
    CHECK_RC(czk_peer_recv(sp[1], buf, sizeof(buf), &m, NULL, NULL, 1000, &e));
    theirs.type = CZK_MSG_HELLO;
    czk_peer_hello_init(&theirs.u.hello, CZK_ROLE_GPUD, -1, 0, "fake gpud");
    CHECK_RC(czk_peer_send(sp[1], &theirs, NULL, 0, &e));
    PUMP_UNTIL(l, q.opened);
    CHECK(q.opened);

    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_STATUS_REPLY;
    m.u.status.body.ptr = body;
    for (;;) {
        m.u.status.body.len = (uint32_t)make_body(body, sent, t_range(100, 60000));
        r = czk_conn_send(c, &m, NULL, 0);
        if (r < 0)
            break;
        sent++;
        if (sent == 3) { /* the peer talks while our queue to it is large: still read */
            czk_msg hb;
            memset(&hb, 0, sizeof(hb));
            hb.type = CZK_MSG_HEARTBEAT;
            for (int i = 0; i < 3; i++) {
                hb.u.heartbeat.seq = (uint64_t)i;
                CHECK_RC(czk_peer_send(sp[1], &hb, NULL, 0, &e));
            }
        }
        if (czk_conn_queued_bytes(c) > cfg.client_queue_soft && czk_conn_reading(c))
            paused_seen = 1; /* over a client's soft limit, a daemon link keeps reading */
        czk_loop_run_once(l, 0);
        CHECK(sent < 100000);
    }
    CHECK(r == -ENOBUFS && sent > 3 && paused_seen);
    CHECK(q.heartbeats == 3);
    CHECK(!q.closed); /* on_close comes from the loop, not from inside czk_conn_send */
    CHECK(czk_conn_send(c, &m, NULL, 0) == -EPIPE);
    PUMP_UNTIL(l, q.closed);
    CHECK(q.closed && q.close_err == -ENOBUFS && strstr(q.why, "outgoing queue over its limit"));
    czk_loop_get_stats(l, &st);
    CHECK(st.overflow_closes == 1 && st.read_pauses == 0);
    /* the peer: an in-order prefix of what was queued, then EOF */
    for (;;) {
        r = czk_peer_recv(sp[1], buf, sizeof(buf), &m, NULL, NULL, 1000, &e);
        if (r == -ECONNRESET)
            break;
        CHECK_RC(r);
        CHECK(m.type == CZK_MSG_STATUS_REPLY && body_seq(&m.u.status.body) == got);
        got++;
    }
    fprintf(stderr, "daemon overflow: %llu records queued, %llu delivered before the close\n",
            (unsigned long long)sent, (unsigned long long)got);
    CHECK(got > 0 && got <= sent);
    close(sp[1]);
    czk_loop_destroy(l);
}

/* ------------------------------------------------------------ clients --- */

static void client_backpressure(const char *dir)
{
    static uint8_t body[CZK_MSG_MAX_RECORD], buf[CZK_MSG_MAX_RECORD];
    czk_loop_config cfg = {.client_queue_soft = 128 << 10, .client_queue_hard = 1 << 20, .recv_buffers = 4};
    czk_loop_stats st;
    czk_error e = {0};
    srv s = {.reply_pad = 30000};
    czk_loop *l = server(&cfg, dir, &s);
    czk_msg m;
    const int N = 40;
    int fd, r, got = 0, handled_while_paused;

    fd = client(dir, "czk.sock", CZK_ROLE_CLIENT, "reader");
    CHECK(hello_or_busy(l, fd, "") == 1);
    PUMP_UNTIL(l, s.n == 1);
    CHECK(s.n == 1 && czk_conn_kind(s.conn[0]) == CZK_CONN_CLIENT);
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_STATUS;
    m.u.status.body.ptr = body;
    for (int i = 0; i < N; i++) {
        m.u.status.body.len = (uint32_t)make_body(body, (uint64_t)i, t_range(0, 200));
        CHECK_RC(czk_peer_send(fd, &m, NULL, 0, &e));
    }
    for (int i = 0; i < 100; i++)
        czk_loop_run_once(l, 2);
    czk_loop_get_stats(l, &st);
    handled_while_paused = s.reqs;
    fprintf(stderr, "backpressure: %d of %d requests read while the client read nothing, %zu bytes queued\n",
            s.reqs, N, czk_conn_queued_bytes(s.conn[0]));
    CHECK(st.read_pauses >= 1 && !czk_conn_reading(s.conn[0]) && s.reqs < N);
    CHECK(czk_conn_queued_bytes(s.conn[0]) > cfg.client_queue_soft);
    /* the client reads: every reply arrives, in order, and the rest is read */
    while (got < N) {
        r = client_read(l, fd, &m, buf);
        CHECK_RC(r);
        CHECK(m.type == CZK_MSG_STATUS_REPLY && body_seq(&m.u.status.body) == (uint64_t)got);
        got++;
    }
    czk_loop_get_stats(l, &st);
    CHECK(s.reqs == N && s.reqs > handled_while_paused && czk_conn_reading(s.conn[0]));
    CHECK(st.overflow_closes == 0 && !s.closed[0]);

    /* a client that never reads while replies keep coming: closed at the hard limit */
    {
        czk_conn *c = s.conn[0];
        uint64_t seq = 0;
        memset(&m, 0, sizeof(m));
        m.type = CZK_MSG_STATUS_REPLY;
        m.u.status.body.ptr = body;
        do {
            m.u.status.body.len = (uint32_t)make_body(body, seq++, 50000);
            r = czk_conn_send(c, &m, NULL, 0);
            czk_loop_run_once(l, 0);
        } while (r == 0 && seq < 10000);
        CHECK(r == -ENOBUFS);
        PUMP_UNTIL(l, s.closed[0]);
        CHECK(s.closed[0] && s.close_err[0] == -ENOBUFS && strstr(s.why[0], "does not read its replies"));
        czk_loop_get_stats(l, &st);
        CHECK(st.overflow_closes == 1);
    }
    close(fd);
    czk_loop_destroy(l);
    unlink("czk.sock");
}

static void idle_clients(const char *dir)
{
    static uint8_t buf[CZK_MSG_MAX_RECORD];
    czk_loop_config cfg = {.client_idle_timeout_ms = 150};
    czk_loop_stats st;
    srv s = {0};
    czk_loop *l = server(&cfg, dir, &s);
    czk_msg m;
    int idler, watcher, synth;

    idler = client(dir, "czk.sock", CZK_ROLE_CLIENT, "idler");
    watcher = client(dir, "czk.sock", CZK_ROLE_CLIENT, "watcher");
    synth = client(dir, "gpud.sock", CZK_ROLE_SYNTH, "synth"); /* daemons are never idle */
    CHECK(hello_or_busy(l, idler, "") == 1 && hello_or_busy(l, watcher, "") == 1 && hello_or_busy(l, synth, "") == 1);
    PUMP_UNTIL(l, s.n == 3);
    CHECK(s.n == 3);
    PUMP_UNTIL(l, s.closed[0] + s.closed[1] + s.closed[2] > 0);
    CHECK(s.closed[0] + s.closed[1] + s.closed[2] == 1);
    for (int i = 0; i < 3; i++)
        if (s.closed[i])
            CHECK(!strcmp(s.name[i], "idler") && s.close_err[i] == -ETIMEDOUT && strstr(s.why[i], "idle"));
    CHECK(client_read(l, idler, &m, buf) == -ECONNRESET);
    for (int i = 0; i < 3; i++)
        if (!strcmp(s.name[i], "watcher")) {
            czk_conn_set_idle_exempt(s.conn[i], 0); /* no longer watches a job */
            PUMP_UNTIL(l, s.closed[i]);
            CHECK(s.closed[i] && strstr(s.why[i], "idle"));
        }
    czk_loop_get_stats(l, &st);
    CHECK(st.idle_closes == 2 && st.daemons == 1 && st.clients == 0);
    close(idler);
    close(watcher);
    close(synth);
    czk_loop_destroy(l);
    unlink("czk.sock");
}

static void caps(const char *dir)
{
    czk_loop_config cfg = {.max_clients = 3, .max_clients_per_uid = 2, .max_daemon_conns = 1};
    czk_loop_stats st;
    srv s = {0};
    czk_loop *l = server(&cfg, dir, &s);
    char path[300];
    int a, b, c, d1, d2, refused = 0;

    a = client(dir, "czk.sock", CZK_ROLE_CLIENT, "a");
    b = client(dir, "czk.sock", CZK_ROLE_CLIENT, "b");
    c = client(dir, "czk.sock", CZK_ROLE_CLIENT, "c");
    CHECK(hello_or_busy(l, a, "") == 1 && hello_or_busy(l, b, "") == 1);
    CHECK(hello_or_busy(l, c, "max_clients_per_uid") == 2);
    refused++;
    d1 = client(dir, "gpud.sock", CZK_ROLE_SYNTH, "d1");
    d2 = client(dir, "gpud.sock", CZK_ROLE_FINALIZER, "d2");
    CHECK(hello_or_busy(l, d1, "") == 1); /* the daemon cap is apart from the clients' */
    CHECK(hello_or_busy(l, d2, "max_daemon_conns") == 2);
    refused++;
    close(c);
    close(d2);
    if (geteuid() == 0) {
        /* uid 65534 is under its own per-uid cap, but over the total one */
        pid_t pid;
        int status;
        snprintf(path, sizeof(path), "%s/czk.sock", dir);
        CHECK(chmod(dir, 0755) == 0 && chmod(path, 0666) == 0);
        pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) { /* a client as the CLI is one: czk_peer_handshake */
            czk_peer_policy pol;
            czk_msg_hello mine, theirs;
            czk_error e = {0};
            int x, y, r;
            if (setgid(65534) < 0 || setuid(65534) < 0)
                _exit(3);
            czk_peer_policy_default(&pol);
            pol.uid = 0;
            czk_peer_hello_init(&mine, CZK_ROLE_CLIENT, -1, 0, "other-uid");
            if (czk_peer_connect(path, &x, &e) < 0 || czk_peer_handshake(x, &mine, &pol, &theirs, 10000, &e) < 0) {
                fprintf(stderr, "first client of uid 65534: %s\n", e.msg);
                _exit(4);
            }
            r = czk_peer_connect(path, &y, &e);
            if (r == 0)
                r = czk_peer_handshake(y, &mine, &pol, &theirs, 10000, &e);
            if (r != -EBUSY || !strstr(e.msg, "(max_clients)")) {
                fprintf(stderr, "second client of uid 65534: %d %s\n", r, e.msg);
                _exit(5);
            }
            _exit(0);
        }
        for (int i = 0; i < 2000 && waitpid(pid, &status, WNOHANG) == 0; i++)
            czk_loop_run_once(l, 5);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        refused++;
        PUMP_UNTIL(l, s.closed[s.n - 1]); /* the child's accepted connection went with it */
    } else {
        fprintf(stderr, "caps: not root, the second-uid part is skipped\n");
    }
    /* a closed client frees its place */
    close(a);
    PUMP_UNTIL(l, s.closed[0]);
    c = client(dir, "czk.sock", CZK_ROLE_CLIENT, "c2");
    CHECK(hello_or_busy(l, c, "") == 1);
    czk_loop_get_stats(l, &st);
    CHECK(st.refused == (uint64_t)refused && st.clients == 2 && st.daemons == 1);
    close(b);
    close(c);
    close(d1);
    czk_loop_destroy(l);
}

/* ------------------------------------------------------------- memory --- */

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    CHECK(f);
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmRSS:", 6))
            v = atol(line + 6);
    fclose(f);
    return v;
}

static void idle_memory(const char *dir)
{
    czk_loop_config cfg = {.out_queue_cap = 1024, .max_clients = 4096, .hello_timeout_ms = 60000};
    struct rlimit rl;
    srv *s = calloc(1, sizeof(*s));
    czk_loop *l;
    const int N = 600;

    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < (rlim_t)N + 200) {
        fprintf(stderr, "memory: fd hard limit %llu is too low, skipped\n", (unsigned long long)rl.rlim_max);
        free(s);
        return;
    }
    if (rl.rlim_cur < (rlim_t)N + 200) {
        rl.rlim_cur = (rlim_t)N + 200;
        CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    }
    l = server(&cfg, dir, s);
    for (int round = 0; round < 2; round++) {
        int p[2];
        char x;
        long before, after;
        uint64_t closed0;
        czk_loop_stats st;
        pid_t pid;

        for (int i = 0; i < 20; i++)
            czk_loop_run_once(l, 2);
        before = rss_kb();
        czk_loop_get_stats(l, &st);
        closed0 = st.closed;
        CHECK(pipe(p) == 0);
        pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            for (int i = 0; i < N; i++)
                client(dir, "czk.sock", CZK_ROLE_CLIENT, "idle");
            (void)!write(p[1], "x", 1);
            pause();
            _exit(0);
        }
        close(p[1]);
        CHECK(fcntl(p[0], F_SETFL, O_NONBLOCK) == 0);
        for (int i = 0; i < 6000 && read(p[0], &x, 1) != 1; i++)
            czk_loop_run_once(l, 5); /* accepts while the child connects */
        close(p[0]);
        for (int i = 0; i < 3000; i++) {
            czk_loop_get_stats(l, &st);
            if (st.opened >= (uint64_t)N * (unsigned)(round + 1))
                break;
            czk_loop_run_once(l, 5);
        }
        CHECK(st.opened == (uint64_t)N * (unsigned)(round + 1));
        after = rss_kb();
        fprintf(stderr, "memory (round %d): %d idle connections: VmRSS %ld -> %ld kB, %.1f kB per connection\n",
                round, N, before, after, (double)(after - before) / N);
        CHECK((after - before) * 1024 / N < 16 * 1024);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        for (int i = 0; i < 3000 && st.closed < closed0 + (uint64_t)N; i++) {
            czk_loop_run_once(l, 5);
            czk_loop_get_stats(l, &st);
        }
        CHECK(st.closed == closed0 + (uint64_t)N);
        s->n = 0;
    }
    czk_loop_destroy(l);
    free(s);
}

int main(void)
{
    char dir[] = "/tmp/czk-flow-XXXXXX";

    czk_log_init("test_ipc_flow", CZK_LOG_WARN);
    t_seed("test_ipc_flow");
    signal(SIGPIPE, SIG_IGN);
    CHECK(mkdtemp(dir));
    CHECK(chdir(dir) == 0);
    daemon_overflow();
    client_backpressure(dir);
    unlink("gpud.sock");
    idle_clients(dir);
    unlink("gpud.sock");
    caps(dir);
    unlink("czk.sock");
    unlink("gpud.sock");
    idle_memory(dir);
    unlink("czk.sock");
    unlink("gpud.sock");
    CHECK(chdir("/") == 0);
    rmdir(dir);
    fprintf(stderr, "test_ipc_flow: ok\n");
    return 0;
}
