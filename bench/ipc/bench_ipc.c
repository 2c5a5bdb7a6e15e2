/*
 * bench_ipc.c — figures for docs/bench-ipc.md.
 *
 * 1. Messages between two processes over a SOCK_SEQPACKET socket, HEARTBEAT
 *    records encoded and decoded with ipc/msg.c on both sides:
 *      loop      both processes run czk_loop (io_uring), the client pings and
 *                the server echoes;
 *      blocking  the same exchange with plain blocking sendmsg/recvmsg
 *                (czk_peer_send/recv), one thread per process;
 *    each measured as ping-pong round-trip latency (median, p99) and as
 *    pipelined throughput with a window of records in flight.
 * 2. Fill bandwidth of one pool slot backed by 2 MiB hugepages against one
 *    backed by 4 KiB pages (memset over the whole slot, best of several
 *    passes), plus the time to create and pre-fault each pool.  Hugepages are
 *    reserved through /proc/sys/vm/nr_hugepages when running as root and the
 *    old value is restored.
 *
 * 3. Compaction of czk-gpud's journal (ipc/journal.h czk_journal_compact, what
 *    gpud runs at start and past [gpud] journal_compact_kb while it runs, on
 *    its loop thread): a journal of M MiB of gpud-shaped records (per job an
 *    ACCEPT with 8 witness digests, 8 DONE, a COMPLETE; random payloads)
 *    written and synced in DIR, then compacted keeping 10% / 50% / 100% of
 *    its records, in journal.h's three steps: the rewrite (czk_journal_
 *    compact_run: gpud runs it on a thread of its own) and begin + finish
 *    (what gpud's loop thread does: here with 64 KiB appended between them,
 *    which finish moves over), and free (the replaced file closed: gpud does
 *    it on the rewrite's thread); beside them, in the same run, a plain read
 *    of the file and one fdatasync of it (what any rewrite must at least do).
 *
 * usage: bench_ipc [--part all|msgs|slots|journal] [--rtt N] [--window W] [--msgs N] [--slot-mib M]
 *                  [--passes P] [--journal-mib M] [--dir DIR]
 */
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"
#include "ipc/journal.h"
#include "ipc/loop.h"
#include "ipc/peer.h"
#include "ipc/pool.h"

static int n_rtt = 20000, window = 64, n_msgs = 200000, slot_mib = 256, passes = 5, journal_mib = 64;
static const char *part = "all", *jdir = "/var/tmp";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct result {
    double p50_us, p99_us, mean_us, msgs_per_s;
} result;

static void hb(czk_msg *m, uint64_t seq)
{
    memset(m, 0, sizeof(*m));
    m->type = CZK_MSG_HEARTBEAT;
    m->u.heartbeat.seq = seq;
}

/* ------------------------------------------------------------- loop --- */

typedef struct lctx {
    int phase; /* 0 ping-pong, 1 pipelined */
    long sent, recvd, target;
    double t_send, t0, t1;
    double *rtt;
} lctx;

static void echo_msg(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx)
{
    czk_conn_send(c, m, NULL, 0);
}
static void echo_close(czk_conn *c, int err, const char *why, void *ctx) { czk_loop_stop(czk_conn_loop(c)); }

static void cl_send(czk_conn *c, lctx *s)
{
    czk_msg m;
    hb(&m, (uint64_t)s->sent++);
    if (czk_conn_send(c, &m, NULL, 0) < 0) {
        fprintf(stderr, "send failed\n");
        exit(1);
    }
}

static void cl_open(czk_conn *c, void *ctx)
{
    lctx *s = ctx;
    s->t_send = now_s();
    cl_send(c, s);
}

static void cl_msg(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx)
{
    lctx *s = ctx;
    double t = now_s();
    if (s->phase == 0) {
        s->rtt[s->recvd++] = t - s->t_send;
        if (s->recvd == n_rtt) {
            s->phase = 1;
            s->sent = s->recvd = 0;
            s->t0 = now_s();
            for (int i = 0; i < window; i++)
                cl_send(c, s);
            return;
        }
        s->t_send = now_s();
        cl_send(c, s);
        return;
    }
    if (++s->recvd == n_msgs) {
        s->t1 = now_s();
        czk_conn_close(c, 0, "benchmark done", 0);
        return;
    }
    if (s->sent < n_msgs)
        cl_send(c, s);
}

static void cl_close(czk_conn *c, int err, const char *why, void *ctx) { czk_loop_stop(czk_conn_loop(c)); }

static void bench_loop(result *r)
{
    czk_loop_config cfg = {.out_queue_cap = 1024};
    czk_endpoint ep;
    czk_error e;
    czk_loop *l;
    int sp[2], status;
    pid_t pid;
    lctx s;

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
        exit(1);
    czk_peer_policy_default(&ep.policy);
    pid = fork();
    if (pid == 0) {
        czk_conn_ops ops = {NULL, echo_msg, echo_close};
        close(sp[0]);
        czk_peer_hello_init(&ep.hello, CZK_ROLE_GPUD, -1, 0, "bench-echo");
        if (czk_loop_create(&l, &cfg, &e) < 0 || czk_loop_connect(l, sp[1], &ep, &ops, NULL, NULL, &e) < 0) {
            fprintf(stderr, "echo: %s\n", e.msg);
            _exit(1);
        }
        czk_loop_run(l);
        czk_loop_destroy(l);
        _exit(0);
    }
    close(sp[1]);
    memset(&s, 0, sizeof(s));
    s.rtt = calloc((size_t)n_rtt, sizeof(double));
    {
        czk_conn_ops ops = {cl_open, cl_msg, cl_close};
        czk_peer_hello_init(&ep.hello, CZK_ROLE_CLIENT, -1, 0, "bench-client");
        if (czk_loop_create(&l, &cfg, &e) < 0 || czk_loop_connect(l, sp[0], &ep, &ops, &s, NULL, &e) < 0) {
            fprintf(stderr, "client: %s\n", e.msg);
            exit(1);
        }
        czk_loop_run(l);
        czk_loop_destroy(l);
    }
    waitpid(pid, &status, 0);
    qsort(s.rtt, (size_t)n_rtt, sizeof(double), cmp_double);
    r->p50_us = s.rtt[n_rtt / 2] * 1e6;
    r->p99_us = s.rtt[(size_t)n_rtt * 99 / 100] * 1e6;
    r->mean_us = 0;
    for (int i = 0; i < n_rtt; i++)
        r->mean_us += s.rtt[i] * 1e6 / n_rtt;
    r->msgs_per_s = 2.0 * n_msgs / (s.t1 - s.t0); /* each echo is two records */
    free(s.rtt);
}

/* --------------------------------------------------------- blocking --- */

static void bench_blocking(result *r)
{
    uint8_t buf[CZK_MSG_MAX_RECORD];
    czk_error e;
    czk_msg m;
    int sp[2], status;
    double *rtt = calloc((size_t)n_rtt, sizeof(double)), t0, t1;
    pid_t pid;

    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
        exit(1);
    pid = fork();
    if (pid == 0) {
        close(sp[0]);
        while (czk_peer_recv(sp[1], buf, sizeof(buf), &m, NULL, NULL, -1, &e) == 0)
            if (czk_peer_send(sp[1], &m, NULL, 0, &e) < 0)
                break;
        _exit(0);
    }
    close(sp[1]);
    for (int i = 0; i < n_rtt; i++) {
        double t = now_s();
        hb(&m, (uint64_t)i);
        if (czk_peer_send(sp[0], &m, NULL, 0, &e) < 0 ||
            czk_peer_recv(sp[0], buf, sizeof(buf), &m, NULL, NULL, -1, &e) < 0) {
            fprintf(stderr, "blocking: %s\n", e.msg);
            exit(1);
        }
        rtt[i] = now_s() - t;
    }
    t0 = now_s();
    for (int i = 0; i < window; i++) {
        hb(&m, (uint64_t)i);
        czk_peer_send(sp[0], &m, NULL, 0, &e);
    }
    for (long got = 0, sent = window; got < n_msgs; got++) {
        if (czk_peer_recv(sp[0], buf, sizeof(buf), &m, NULL, NULL, -1, &e) < 0)
            exit(1);
        if (sent < n_msgs) {
            hb(&m, (uint64_t)sent++);
            czk_peer_send(sp[0], &m, NULL, 0, &e);
        }
    }
    t1 = now_s();
    close(sp[0]);
    waitpid(pid, &status, 0);
    qsort(rtt, (size_t)n_rtt, sizeof(double), cmp_double);
    r->p50_us = rtt[n_rtt / 2] * 1e6;
    r->p99_us = rtt[(size_t)n_rtt * 99 / 100] * 1e6;
    r->mean_us = 0;
    for (int i = 0; i < n_rtt; i++)
        r->mean_us += rtt[i] * 1e6 / n_rtt;
    r->msgs_per_s = 2.0 * n_msgs / (t1 - t0);
    free(rtt);
}

/* ------------------------------------------------------------ pools --- */

static long nr_read(void)
{
    char b[32] = {0};
    int fd = open("/proc/sys/vm/nr_hugepages", O_RDONLY);
    if (fd < 0 || read(fd, b, sizeof(b) - 1) <= 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return atol(b);
}

static int nr_write(long v)
{
    char b[32];
    int fd = open("/proc/sys/vm/nr_hugepages", O_WRONLY), n = snprintf(b, sizeof(b), "%ld\n", v), ok;
    if (fd < 0)
        return -1;
    ok = write(fd, b, (size_t)n) == n;
    close(fd);
    return ok ? 0 : -1;
}

/* one 8-byte store per 4 KiB page in a scattered order: TLB-bound */
static double scatter_ns_per_page(uint8_t *base, uint64_t len)
{
    uint64_t pages = len / 4096, x = 12345;
    double best = 1e9;
    for (int pass = 0; pass < passes; pass++) {
        double t = now_s();
        for (uint64_t i = 0; i < pages; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            *(volatile uint64_t *)(base + ((x >> 17) % pages) * 4096 + (i & 511) * 8) = i;
        }
        t = (now_s() - t) / (double)pages * 1e9;
        if (t < best)
            best = t;
    }
    return best;
}

static int bench_fill(int huge, double *create_s, double *gbps, double *scatter_ns)
{
    czk_pool_opts o = {.pool_id = 1, .numa_node = 0, .slot_count = 1, .slot_size = (uint64_t)slot_mib << 20,
                       .huge = huge ? CZK_POOL_HUGE_REQUIRE : CZK_POOL_HUGE_NEVER};
    czk_pool p;
    czk_error e;
    double t0 = now_s(), best = 1e9;

    if (czk_pool_create(&p, &o, &e) < 0) {
        fprintf(stderr, "pool (%s): %s\n", huge ? "hugepages" : "4 KiB", e.msg);
        return -1;
    }
    *create_s = now_s() - t0;
    for (int i = 0; i < passes; i++) {
        double t = now_s();
        memset(czk_slot_data(&p, 0), i + 1, o.slot_size);
        t = now_s() - t;
        if (t < best)
            best = t;
    }
    *gbps = (double)o.slot_size / best / 1e9;
    *scatter_ns = scatter_ns_per_page(czk_slot_data(&p, 0), o.slot_size);
    czk_pool_close(&p);
    return 0;
}

/* ---- 3. journal compaction ---- */

typedef struct jresult {
    double mib, compact_ms, owner_ms, free_ms, read_ms, sync_ms;
    uint64_t records, kept;
} jresult;

static int keep_share(const czk_journal_rec *r, void *ctx)
{
    int share = *(const int *)ctx;
    return (int)(r->seq % 100) < share;
}

/* writes a journal of about journal_mib MiB, then compacts it keeping share% */
static int bench_compact(int share, jresult *out)
{
    char path[512], tmp[600];
    uint8_t payload[8 * 32 + 128];
    uint64_t target = (uint64_t)journal_mib << 20, seq;
    czk_journal *j;
    czk_error e;
    double t0;
    size_t got = 0;
    char *buf;
    int fd;

    snprintf(path, sizeof(path), "%s/bench_ipc_journal.%d", jdir, (int)getpid());
    snprintf(tmp, sizeof(tmp), "%s.compact", path);
    unlink(path);
    unlink(tmp);
    for (size_t i = 0; i < sizeof(payload); i++)
        payload[i] = (uint8_t)rand();
    if (czk_journal_open(&j, path, NULL, NULL, &e) < 0) {
        fprintf(stderr, "bench_ipc: %s\n", e.msg);
        return -1;
    }
    out->records = 0;
    while (czk_journal_tail(j).end < target) {
        if (czk_journal_append(j, 1, payload, sizeof(payload), 0, &seq, &e) < 0)
            goto fail;
        for (int k = 0; k < 8; k++)
            if (czk_journal_append(j, 2, payload, 30, 0, &seq, &e) < 0)
                goto fail;
        if (czk_journal_append(j, 3, payload, 12, 0, &seq, &e) < 0)
            goto fail;
        out->records += 10;
    }
    if (czk_journal_sync(j, &e) < 0)
        goto fail;
    out->mib = (double)czk_journal_tail(j).end / (1 << 20);
    /* the floor beside it: read the whole file, one fdatasync */
    buf = malloc(czk_journal_tail(j).end);
    fd = open(path, O_RDONLY);
    t0 = now_s();
    if (buf && fd >= 0) {
        ssize_t n;
        while ((n = read(fd, buf + got, czk_journal_tail(j).end - got)) > 0)
            got += (size_t)n;
    }
    out->read_ms = (now_s() - t0) * 1e3;
    t0 = now_s();
    if (fd >= 0)
        fdatasync(fd);
    out->sync_ms = (now_s() - t0) * 1e3;
    if (fd >= 0)
        close(fd);
    free(buf);
    {
        czk_journal_compaction *cp;
        int r;

        t0 = now_s();
        if (czk_journal_compact_begin(j, &cp, &e) < 0)
            goto fail;
        out->owner_ms = (now_s() - t0) * 1e3;
        t0 = now_s();
        r = czk_journal_compact_run(cp, keep_share, &share, &e);
        out->compact_ms = (now_s() - t0) * 1e3;
        /* what the owner appends meanwhile (synced, as gpud's would be) */
        for (uint64_t b = 0; r == 0 && b < 64 * 1024; b += 24 + 32)
            r = czk_journal_append(j, 2, payload, 30, 0, &seq, &e);
        if (r == 0)
            r = czk_journal_sync(j, &e);
        t0 = now_s();
        if (r == 0)
            r = czk_journal_compact_finish(j, cp, &e);
        out->owner_ms += (now_s() - t0) * 1e3;
        t0 = now_s();
        czk_journal_compact_free(cp); /* closes the replaced file: its blocks are freed */
        out->free_ms = (now_s() - t0) * 1e3;
        if (r < 0)
            goto fail;
    }
    {
        czk_journal_info info;
        out->kept = 0;
        if (czk_journal_replay_file(path, NULL, NULL, &info, &e) == 0)
            out->kept = info.records;
    }
    czk_journal_close(j);
    unlink(path);
    return 0;
fail:
    fprintf(stderr, "bench_ipc: journal: %s\n", e.msg);
    czk_journal_close(j);
    unlink(path);
    return -1;
}

static void bench_journal(void)
{
    static const int shares[] = {10, 50, 100};
    printf("| journal (MiB, records) in %s | kept | rewrite, own thread (ms) | ms per MiB | begin + finish, "
           "owner's thread (ms) | free: the old file closed (ms) | read of the file (ms) | one fdatasync (ms) | "
           "rewrite / (read + sync) |\n|---|---|---|---|---|---|---|---|---|\n", jdir);
    for (unsigned i = 0; i < sizeof(shares) / sizeof(shares[0]); i++) {
        jresult best = {0};
        for (int p = 0; p < passes; p++) {
            jresult r;
            if (bench_compact(shares[i], &r) < 0)
                return;
            if (p == 0 || r.compact_ms < best.compact_ms)
                best = r;
        }
        printf("| %.1f, %llu | %d%% (%llu) | %.1f | %.2f | %.2f | %.1f | %.1f | %.1f | %.2f |\n", best.mib,
               (unsigned long long)best.records, shares[i], (unsigned long long)best.kept, best.compact_ms,
               best.compact_ms / best.mib, best.owner_ms, best.free_ms, best.read_ms, best.sync_ms,
               best.compact_ms / (best.read_ms + best.sync_ms));
    }
}

int main(int argc, char **argv)
{
    result lr, br;
    struct utsname u;
    double c_huge = 0, c_small = 0, g_huge = 0, g_small = 0, s_huge = 0, s_small = 0;
    long saved = -1;
    int huge_ok = -1;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--rtt"))
            n_rtt = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--window"))
            window = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--msgs"))
            n_msgs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--slot-mib"))
            slot_mib = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--passes"))
            passes = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--journal-mib"))
            journal_mib = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--dir"))
            jdir = argv[i + 1];
        else if (!strcmp(argv[i], "--part"))
            part = argv[i + 1];
    }
    czk_log_init("bench_ipc", CZK_LOG_WARN);
    signal(SIGPIPE, SIG_IGN);
    uname(&u);
    printf("bench_ipc: %s %s, %ld cpus online\n", u.sysname, u.release, sysconf(_SC_NPROCESSORS_ONLN));
    if (!strcmp(part, "journal")) {
        bench_journal();
        return 0;
    }
    printf("records: HEARTBEAT, %d round trips for latency, %d echoes with %d in flight for throughput\n\n", n_rtt,
           n_msgs, window);

    bench_loop(&lr);
    bench_blocking(&br);
    printf("| transport | RTT p50 (us) | RTT p99 (us) | RTT mean (us) | records/s pipelined |\n");
    printf("|---|---|---|---|---|\n");
    printf("| czk_loop (io_uring) both sides | %.1f | %.1f | %.1f | %.0f |\n", lr.p50_us, lr.p99_us, lr.mean_us,
           lr.msgs_per_s);
    printf("| blocking sendmsg/recvmsg | %.1f | %.1f | %.1f | %.0f |\n\n", br.p50_us, br.p99_us, br.mean_us,
           br.msgs_per_s);

    /* hugepage slot: reserve enough pages (slot + header page), restore afterwards */
    saved = nr_read();
    if (saved >= 0 && nr_write(saved + slot_mib / 2 + 2) == 0)
        huge_ok = bench_fill(1, &c_huge, &g_huge, &s_huge);
    if (saved >= 0)
        nr_write(saved);
    bench_fill(0, &c_small, &g_small, &s_small);
    printf("| slot of %d MiB | create + pre-fault (s) | fill, memset (GB/s) | scattered store (ns/page) |\n"
           "|---|---|---|---|\n", slot_mib);
    if (huge_ok == 0)
        printf("| 2 MiB hugepages | %.3f | %.2f | %.1f |\n", c_huge, g_huge, s_huge);
    else
        printf("| 2 MiB hugepages | not available | - | - |\n");
    printf("| 4 KiB pages | %.3f | %.2f | %.1f |\n", c_small, g_small, s_small);
    if (!strcmp(part, "all")) {
        printf("\n");
        bench_journal();
    }
    return 0;
}
