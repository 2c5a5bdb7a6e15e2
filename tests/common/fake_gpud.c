/*
 * fake_gpud.c — a stand-in for czk-gpud's client socket, for the client tests
 * (tests/cli, tests/security).  It plays the part of a daemon as far as the
 * client can see one: it binds DIR/czk.sock (mode 0666: a fake lets everyone
 * in), answers HELLO as czk-gpud (with its real pid, so the client's HELLO
 * check passes), then serves one connection at a time.  It records
 * everything it receives on stdout, one line each, so a test can tell what a
 * client sent and whether it handed over a descriptor:
 *
 *   listening PATH                  once the socket is bound
 *   conn uid=U                      a connection (the client's SO_PEERCRED uid)
 *   SUBMIT fds=N req=ID circuit=NAME prio=P flags=F
 *                                   a SUBMIT and how many fds came with it
 *   dropped                         --drop-first: the first SUBMIT's connection closed unanswered;
 *                                   --fetch restart: the first WATCH's
 *   STATUS / WATCH job=J / CANCEL job=J / OTHER TYPE fds=N
 *   STATUS job=J                    with --fetch: a STATUS and the job it asked for (0: none)
 *   FETCH job=J part=P              with --fetch (without it FETCH is OTHER)
 *
 *   fake_gpud DIR [--drop-first] [--fetch busy|old|failed|restart]
 *             [--stall [--synths N] [--finalizer 0|1] [--state-dir DIR]]
 *
 * Its one job is job 7.  SUBMIT -> ACCEPTED job 7 (duplicate=1 when the
 * request id was seen before); CANCEL -> EVENT(job, CANCELLED); anything else
 * -> ERROR -EPERM.  The rest depends on the mode:
 *
 *   default   a hostile daemon whose jobs finish.  A waiting SUBMIT gets, for
 *             each partition, an EVENT DONE carrying a proof.json/public.json
 *             text, then the job's EVENT DONE; WATCH -> the job's EVENT DONE.
 *             STATUS -> a STATUS_REPLY whose strings hold a terminal escape,
 *             DEL, bytes that are not UTF-8, a newline, a non-string key and
 *             a NaN, plus other users' counts ("others": {"jobs": 3,
 *             "partitions": 5}).
 *   --fetch busy   FETCH: the first is answered ERROR -EBUSY (as gpud does
 *             while a reply is unread), every later one FETCHED with two
 *             fds (memfds holding the texts the DONE events carry)
 *   --fetch old    FETCH: ERROR -EBADMSG and the connection closed, as a
 *             czk-gpud that does not know the type answers
 *   --fetch failed FETCH: partition 0 FETCHED at once, partition 1 ERROR
 *             -ENOENT (no files: it failed), as gpud answers for a failed job,
 *             its message with a terminal escape in it
 *   --fetch restart  job 7 is active: the first WATCH's connection is
 *             closed unanswered (czk-gpud went away while the client
 *             waited), a later WATCH gets the job's EVENT DONE; FETCH ->
 *             FETCHED at once
 *             With --fetch, STATUS -> a well-formed STATUS_REPLY (what
 *             `czk fetch` asks first): for job 7 asked for, its "job" entry
 *             with 2 partitions, state "complete" (busy, old), "failed"
 *             (failed: 1 done, 1 failed) or "active" (restart: none done);
 *             for any other job no "job" entry, as gpud answers for an
 *             unknown job or another user's.
 *   --stall   a well-formed daemon whose job never moves.  A waiting SUBMIT
 *             gets EVENT(job, QUEUED) and EVENT(partition 0, FINALIZE), and
 *             the job stays there; WATCH -> EVENT(job, QUEUED).  STATUS -> a
 *             STATUS_REPLY with "synths" = --synths N, "finalizer" =
 *             --finalizer 0|1, "state_dir" = --state-dir DIR (when given),
 *             one active job and "job" {id 7}.
 *
 * It exits after 60 s without a connection, or on SIGTERM.
 */
#include <errno.h>
#include <math.h>
#include <msgpack.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/log.h"
#include "ipc/peer.h"

#define JOB_ID 7
#define PROOF_TEXT "{\"pi_a\": [\"1\", \"2\", \"1\"], \"protocol\": \"groth16\"}\n"
#define PUBLIC_TEXT "[\"33\"]\n"

static uint8_t buf[CZK_MSG_MAX_RECORD];
static char seen[64][CZK_MSG_REQID_MAX + 1];
static int nseen;

static struct {
    int drop_first; /* the first SUBMIT's connection is closed unanswered */
    int stall;      /* the job never moves; STATUS is well-formed */
    unsigned synths, finalizer;
    const char *state_dir;
    const char *fetch; /* NULL, "busy", "old", "failed" or "restart" */
} opt;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

static void pk_str(msgpack_packer *pk, const char *s, size_t n) { msgpack_pack_str_with_body(pk, s, n); }
#define PK_LIT(pk, lit) pk_str(pk, lit, sizeof(lit) - 1)

static void kv_str(msgpack_packer *pk, const char *k, const char *v)
{
    pk_str(pk, k, strlen(k));
    pk_str(pk, v, strlen(v));
}

static void kv_uint(msgpack_packer *pk, const char *k, uint64_t v)
{
    pk_str(pk, k, strlen(k));
    msgpack_pack_uint64(pk, v);
}

/* --stall: the daemon as `czk status` expects it, with its one job */
static void pack_job(msgpack_packer *pk)
{
    msgpack_pack_map(pk, 5);
    kv_uint(pk, "id", JOB_ID);
    kv_str(pk, "state", "active");
    kv_str(pk, "circuit", "linear");
    kv_uint(pk, "partitions", 2);
    kv_uint(pk, "queued", 2);
}

static void pack_status_stall(msgpack_packer *pk)
{
    msgpack_pack_map(pk, opt.state_dir ? 7 : 6);
    kv_str(pk, "daemon", "czk-gpud");
    kv_str(pk, "backend", "cpu");
    kv_uint(pk, "synths", opt.synths);
    kv_uint(pk, "finalizer", opt.finalizer);
    if (opt.state_dir)
        kv_str(pk, "state_dir", opt.state_dir);
    PK_LIT(pk, "active");
    msgpack_pack_array(pk, 1);
    pack_job(pk);
    PK_LIT(pk, "job");
    pack_job(pk);
}

/* default: every string and key a client must not print raw */
static void pack_status_hostile(msgpack_packer *pk)
{
    msgpack_pack_map(pk, 9);
    PK_LIT(pk, "daemon");
    PK_LIT(pk, "czk-gpud\x1b[2J\x1b]0;pwned\x07");
    PK_LIT(pk, "backend");
    PK_LIT(pk, "cpu\xff\x7f");
    PK_LIT(pk, "jobs");
    msgpack_pack_map(pk, 1);
    PK_LIT(pk, "active");
    msgpack_pack_uint64(pk, 1);
    PK_LIT(pk, "active");
    msgpack_pack_array(pk, 1);
    msgpack_pack_map(pk, 4);
    PK_LIT(pk, "id");
    msgpack_pack_uint64(pk, JOB_ID);
    PK_LIT(pk, "state");
    PK_LIT(pk, "active");
    PK_LIT(pk, "circuit");
    PK_LIT(pk, "c\xff\x7f\xc0\xaf\xed\xa0\x80");
    PK_LIT(pk, "request");
    PK_LIT(pk, "req\nline2\x1b[1A caf\xc3\xa9");
    PK_LIT(pk, "others");
    msgpack_pack_map(pk, 2);
    PK_LIT(pk, "jobs");
    msgpack_pack_uint64(pk, 3);
    PK_LIT(pk, "partitions");
    msgpack_pack_uint64(pk, 5);
    PK_LIT(pk, "k\xfe");
    msgpack_pack_bin_with_body(pk, "\x00\xff\x01", 3);
    msgpack_pack_int64(pk, 12);
    PK_LIT(pk, "integer key");
    PK_LIT(pk, "nan");
    msgpack_pack_double(pk, NAN);
    PK_LIT(pk, "future_key");
    msgpack_pack_array(pk, 2);
    msgpack_pack_true(pk);
    msgpack_pack_nil(pk);
}

/* --fetch: the STATUS_REPLY `czk fetch` reads, with job 7's entry when asked for */
static void send_status_fetch(int fd, const czk_msg_status *st)
{
    static czk_status_reply sr; /* about 110 KiB: not on the stack */
    static uint8_t body[CZK_MSG_MAX_RECORD];
    czk_status_request rq = {0};
    czk_error e = {0};
    czk_msg m;
    int n;

    if (st->body.len && czk_schema_decode(&czk_schema_status_request, st->body.ptr, st->body.len, &rq, &e) < 0)
        say("bad STATUS body: %s", e.msg);
    say("STATUS job=%llu", (unsigned long long)rq.job);
    memset(&sr, 0, sizeof(sr));
    snprintf(sr.daemon, sizeof(sr.daemon), "czk-gpud");
    snprintf(sr.backend, sizeof(sr.backend), "cpu");
    sr.synths = 1;
    sr.finalizer = 1;
    if (rq.job == JOB_ID) {
        int failed = !strcmp(opt.fetch, "failed"), active = !strcmp(opt.fetch, "restart");
        sr.has_job = 1;
        sr.job.id = JOB_ID;
        snprintf(sr.job.state, sizeof(sr.job.state), "%s", failed ? "failed" : active ? "active" : "complete");
        snprintf(sr.job.circuit, sizeof(sr.job.circuit), "linear");
        sr.job.partitions = 2;
        sr.job.done = failed ? 1 : active ? 0 : 2;
        sr.job.failed = failed ? 1 : 0;
    }
    if ((n = czk_schema_encode(&czk_schema_status_reply, &sr, body, sizeof(body), &e)) < 0) {
        say("encode error: %s", e.msg);
        return;
    }
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_STATUS_REPLY;
    m.u.status.body = (czk_bytes){body, (uint32_t)n};
    if (czk_peer_send(fd, &m, NULL, 0, &e) < 0)
        say("send error: %s", e.msg);
}

static void send_status(int fd)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    czk_error e = {0};
    czk_msg m;

    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    if (opt.stall)
        pack_status_stall(&pk);
    else
        pack_status_hostile(&pk);
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_STATUS_REPLY;
    m.u.status.body = (czk_bytes){(const uint8_t *)sb.data, (uint32_t)sb.size};
    if (czk_peer_send(fd, &m, NULL, 0, &e) < 0)
        say("send error: %s", e.msg);
    msgpack_sbuffer_destroy(&sb);
}

static void send_event(int fd, uint32_t part, uint32_t stage, int with_proof)
{
    czk_error e = {0};
    czk_msg m;

    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_EVENT;
    m.u.event.job_id = JOB_ID;
    m.u.event.partition = part;
    m.u.event.stage = stage;
    if (with_proof) {
        m.u.event.proof = (czk_bytes){(const uint8_t *)PROOF_TEXT, sizeof(PROOF_TEXT) - 1};
        m.u.event.publics = (czk_bytes){(const uint8_t *)PUBLIC_TEXT, sizeof(PUBLIC_TEXT) - 1};
    }
    czk_peer_send(fd, &m, NULL, 0, &e);
}

/* a memfd holding text, read from offset 0 */
static int text_fd(const char *name, const char *text)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    size_t n = strlen(text);
    if (fd >= 0 && write(fd, text, n) != (ssize_t)n) {
        close(fd);
        return -1;
    }
    return fd;
}

/* 0: keep serving this connection; -1: close it */
static int on_fetch(int fd, const czk_msg_fetch *f)
{
    static int nfetch;
    czk_error e = {0};
    czk_msg m;
    int fds[2];

    say("FETCH job=%llu part=%u", (unsigned long long)f->job_id, f->partition);
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_ERROR;
    if (!strcmp(opt.fetch, "old")) {
        m.u.error.code = -EBADMSG;
        snprintf(m.u.error.message, sizeof(m.u.error.message), "unknown record type 19");
        czk_peer_send(fd, &m, NULL, 0, &e);
        return -1;
    }
    if (!strcmp(opt.fetch, "failed") && f->partition == 1) {
        m.u.error.code = -ENOENT;
        snprintf(m.u.error.message, sizeof(m.u.error.message),
                 "job %llu partition 1: no proof in the output directory \x1b[31m(/fake/out/%llu/1/proof.json)",
                 (unsigned long long)f->job_id, (unsigned long long)f->job_id);
        czk_peer_send(fd, &m, NULL, 0, &e);
        return 0;
    }
    if (nfetch++ == 0 && !strcmp(opt.fetch, "busy")) {
        m.u.error.code = -EBUSY;
        snprintf(m.u.error.message, sizeof(m.u.error.message), "earlier replies are not read yet");
        czk_peer_send(fd, &m, NULL, 0, &e);
        return 0;
    }
    fds[0] = text_fd("proof", PROOF_TEXT);
    fds[1] = text_fd("public", PUBLIC_TEXT);
    if (fds[0] < 0 || fds[1] < 0)
        say("memfd: %s", strerror(errno));
    m.type = CZK_MSG_FETCHED;
    m.u.fetched.job_id = f->job_id;
    m.u.fetched.partition = f->partition;
    m.u.fetched.proof_size = sizeof(PROOF_TEXT) - 1;
    m.u.fetched.public_size = sizeof(PUBLIC_TEXT) - 1;
    if (czk_peer_send(fd, &m, fds, 2, &e) < 0)
        say("send error: %s", e.msg);
    close(fds[0]);
    close(fds[1]);
    return 0;
}

static int on_submit(int fd, const czk_msg_submit *s, int nfds)
{
    czk_error e = {0};
    czk_msg m;
    int dup = 0;

    say("SUBMIT fds=%d req=%s circuit=%s prio=%u flags=%u", nfds, s->request_id, s->circuit, s->priority, s->flags);
    if (opt.drop_first) {
        opt.drop_first = 0;
        snprintf(seen[nseen++], sizeof(seen[0]), "%s", s->request_id); /* as if journaled */
        say("dropped");
        return -1;
    }
    for (int i = 0; i < nseen; i++)
        dup |= !strcmp(seen[i], s->request_id);
    if (!dup && nseen < 64)
        snprintf(seen[nseen++], sizeof(seen[0]), "%s", s->request_id);
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_ACCEPTED;
    snprintf(m.u.accepted.request_id, sizeof(m.u.accepted.request_id), "%s", s->request_id);
    m.u.accepted.job_id = JOB_ID;
    m.u.accepted.duplicate = (uint32_t)dup;
    czk_peer_send(fd, &m, NULL, 0, &e);
    if (!(s->flags & CZK_SUBMIT_F_WAIT) || dup)
        return 0;
    if (opt.stall) {
        send_event(fd, CZK_PARTITION_ALL, CZK_STAGE_QUEUED, 0);
        send_event(fd, 0, CZK_STAGE_FINALIZE, 0);
    } else {
        for (uint32_t p = 0; p < s->n_partitions; p++)
            send_event(fd, p, CZK_STAGE_DONE, 1);
        send_event(fd, CZK_PARTITION_ALL, CZK_STAGE_DONE, 0);
    }
    return 0;
}

static void serve(int fd)
{
    static int nwatch;
    czk_msg_hello mine;
    czk_peer_cred cred;
    czk_error e = {0};
    czk_msg m;
    int fds[CZK_MSG_MAX_FDS], nfds;

    if (czk_peer_get_cred(fd, &cred, &e) == 0)
        say("conn uid=%u", (unsigned)cred.uid);
    nfds = CZK_MSG_MAX_FDS;
    if (czk_peer_recv(fd, buf, sizeof(buf), &m, fds, &nfds, 10000, &e) < 0 || m.type != CZK_MSG_HELLO)
        return;
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
    czk_peer_hello_init(&mine, CZK_ROLE_GPUD, -1, 0, "czk-gpud");
    m.type = CZK_MSG_HELLO;
    m.u.hello = mine;
    if (czk_peer_send(fd, &m, NULL, 0, &e) < 0)
        return;
    for (;;) {
        nfds = CZK_MSG_MAX_FDS;
        if (czk_peer_recv(fd, buf, sizeof(buf), &m, fds, &nfds, 60000, &e) < 0)
            return;
        for (int i = 0; i < nfds; i++)
            close(fds[i]);
        switch (m.type) {
        case CZK_MSG_SUBMIT:
            if (on_submit(fd, &m.u.submit, nfds) < 0)
                return;
            break;
        case CZK_MSG_STATUS:
            if (opt.fetch) {
                send_status_fetch(fd, &m.u.status);
                break;
            }
            say("STATUS");
            send_status(fd);
            break;
        case CZK_MSG_WATCH:
            say("WATCH job=%llu", (unsigned long long)m.u.watch.job_id);
            if (opt.fetch && !strcmp(opt.fetch, "restart") && nwatch++ == 0) {
                say("dropped");
                return;
            }
            send_event(fd, CZK_PARTITION_ALL, opt.stall ? CZK_STAGE_QUEUED : CZK_STAGE_DONE, 0);
            break;
        case CZK_MSG_CANCEL:
            say("CANCEL job=%llu", (unsigned long long)m.u.cancel.job_id);
            send_event(fd, CZK_PARTITION_ALL, CZK_STAGE_CANCELLED, 0);
            break;
        case CZK_MSG_FETCH:
            if (!opt.fetch)
                goto other;
            if (on_fetch(fd, &m.u.fetch) < 0)
                return;
            break;
        default:
        other:
            say("OTHER %s fds=%d", czk_msg_type_name(m.type), nfds);
            memset(&m, 0, sizeof(m));
            m.type = CZK_MSG_ERROR;
            m.u.error.code = -EPERM;
            snprintf(m.u.error.message, sizeof(m.u.error.message), "fake daemon: not served");
            czk_peer_send(fd, &m, NULL, 0, &e);
        }
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: fake_gpud DIR [--drop-first] [--fetch busy|old|failed|restart] [--stall [--synths N] "
                    "[--finalizer 0|1] [--state-dir DIR]]\n");
    return 2;
}

int main(int argc, char **argv)
{
    czk_error e = {0};
    char path[4096];
    int lfd;

    if (argc < 2)
        return usage();
    for (int i = 2; i < argc; i++) {
        int has_val = i + 1 < argc;
        if (!strcmp(argv[i], "--drop-first"))
            opt.drop_first = 1;
        else if (!strcmp(argv[i], "--stall"))
            opt.stall = 1;
        else if (has_val && !strcmp(argv[i], "--synths"))
            opt.synths = (unsigned)atoi(argv[++i]);
        else if (has_val && !strcmp(argv[i], "--finalizer"))
            opt.finalizer = (unsigned)atoi(argv[++i]);
        else if (has_val && !strcmp(argv[i], "--state-dir"))
            opt.state_dir = argv[++i];
        else if (has_val && !strcmp(argv[i], "--fetch") &&
                 (!strcmp(argv[i + 1], "busy") || !strcmp(argv[i + 1], "old") || !strcmp(argv[i + 1], "failed") ||
                  !strcmp(argv[i + 1], "restart")))
            opt.fetch = argv[++i];
        else
            return usage();
    }
    czk_log_init("fake_gpud", CZK_LOG_WARN);
    if (czk_peer_listen(argv[1], "czk.sock", (gid_t)-1, &lfd, &e) < 0) {
        fprintf(stderr, "fake_gpud: %s\n", e.msg);
        return 1;
    }
    snprintf(path, sizeof(path), "%s/czk.sock", argv[1]);
    if (chmod(path, 0666) < 0)
        fprintf(stderr, "fake_gpud: chmod %s: %s\n", path, strerror(errno));
    say("listening %s", path);
    for (;;) {
        struct pollfd p = {lfd, POLLIN, 0};
        int fd;
        if (poll(&p, 1, 60000) <= 0)
            return 0;
        if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0)
            continue;
        serve(fd);
        close(fd);
    }
}
