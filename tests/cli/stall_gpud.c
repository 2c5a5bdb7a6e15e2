/*
 * stall_gpud.c — a czk-gpud client socket whose jobs never finish, for the
 * tests of `czk submit --wait/--timeout`, status, cancel and trace: it binds
 * DIR/czk.sock, answers HELLO as czk-gpud and then, one connection at a time:
 *
 *   SUBMIT  -> ACCEPTED job 11; with the wait flag, EVENT(job, QUEUED) and
 *              EVENT(partition 0, FINALIZE): the job then stays where it is
 *   STATUS  -> a STATUS_REPLY with "synths" = --synths N, "finalizer" =
 *              --finalizer 0|1, "state_dir" = --state-dir DIR (when given),
 *              one active job and "job" {id 11}
 *   WATCH   -> EVENT(job, QUEUED)
 *   CANCEL  -> EVENT(job, CANCELLED)
 *
 * Every request is recorded on stdout, one line each ("listening PATH" once
 * bound, "SUBMIT fds=N req=ID circuit=NAME prio=P flags=F", "STATUS",
 * "WATCH job=J", "CANCEL job=J").  Exits after 60 s without a connection, or
 * on SIGTERM.
 *
 *   stall_gpud DIR [--synths N] [--finalizer 0|1] [--state-dir DIR]
 */
#include <errno.h>
#include <msgpack.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/base/log.h"
#include "ipc/peer.h"

#define JOB_ID 11

static uint8_t buf[CZK_MSG_MAX_RECORD];
static unsigned synths;
static unsigned finalizer;
static const char *state_dir;

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

static void kv_str(msgpack_packer *pk, const char *k, const char *v)
{
    msgpack_pack_str_with_body(pk, k, strlen(k));
    msgpack_pack_str_with_body(pk, v, strlen(v));
}

static void kv_uint(msgpack_packer *pk, const char *k, uint64_t v)
{
    msgpack_pack_str_with_body(pk, k, strlen(k));
    msgpack_pack_uint64(pk, v);
}

static void pack_job(msgpack_packer *pk)
{
    msgpack_pack_map(pk, 5);
    kv_uint(pk, "id", JOB_ID);
    kv_str(pk, "state", "active");
    kv_str(pk, "circuit", "linear");
    kv_uint(pk, "partitions", 2);
    kv_uint(pk, "queued", 2);
}

static void send_status(int fd)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    czk_error e = {0};
    czk_msg m;

    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, state_dir ? 7 : 6);
    kv_str(&pk, "daemon", "czk-gpud");
    kv_str(&pk, "backend", "cpu");
    kv_uint(&pk, "synths", synths);
    kv_uint(&pk, "finalizer", finalizer);
    if (state_dir)
        kv_str(&pk, "state_dir", state_dir);
    msgpack_pack_str_with_body(&pk, "active", 6);
    msgpack_pack_array(&pk, 1);
    pack_job(&pk);
    msgpack_pack_str_with_body(&pk, "job", 3);
    pack_job(&pk);
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_STATUS_REPLY;
    m.u.status.body = (czk_bytes){(const uint8_t *)sb.data, (uint32_t)sb.size};
    if (czk_peer_send(fd, &m, NULL, 0, &e) < 0)
        say("send error: %s", e.msg);
    msgpack_sbuffer_destroy(&sb);
}

static void send_event(int fd, uint32_t part, uint32_t stage)
{
    czk_error e = {0};
    czk_msg m;

    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_EVENT;
    m.u.event.job_id = JOB_ID;
    m.u.event.partition = part;
    m.u.event.stage = stage;
    czk_peer_send(fd, &m, NULL, 0, &e);
}

static void serve(int fd)
{
    czk_msg_hello mine;
    czk_error e = {0};
    czk_msg m;
    int fds[CZK_MSG_MAX_FDS], nfds;

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
            say("SUBMIT fds=%d req=%s circuit=%s prio=%u flags=%u", nfds, m.u.submit.request_id,
                m.u.submit.circuit, m.u.submit.priority, m.u.submit.flags);
            {
                czk_msg a;
                memset(&a, 0, sizeof(a));
                a.type = CZK_MSG_ACCEPTED;
                snprintf(a.u.accepted.request_id, sizeof(a.u.accepted.request_id), "%s", m.u.submit.request_id);
                a.u.accepted.job_id = JOB_ID;
                czk_peer_send(fd, &a, NULL, 0, &e);
            }
            if (m.u.submit.flags & CZK_SUBMIT_F_WAIT) {
                send_event(fd, CZK_PARTITION_ALL, CZK_STAGE_QUEUED);
                send_event(fd, 0, CZK_STAGE_FINALIZE);
            }
            break;
        case CZK_MSG_STATUS:
            say("STATUS");
            send_status(fd);
            break;
        case CZK_MSG_WATCH:
            say("WATCH job=%llu", (unsigned long long)m.u.watch.job_id);
            send_event(fd, CZK_PARTITION_ALL, CZK_STAGE_QUEUED);
            break;
        case CZK_MSG_CANCEL:
            say("CANCEL job=%llu", (unsigned long long)m.u.cancel.job_id);
            send_event(fd, CZK_PARTITION_ALL, CZK_STAGE_CANCELLED);
            break;
        default:
            say("OTHER %s", czk_msg_type_name(m.type));
        }
    }
}

int main(int argc, char **argv)
{
    czk_error e = {0};
    int lfd;

    if (argc < 2) {
        fprintf(stderr, "usage: stall_gpud DIR [--synths N] [--finalizer 0|1] [--state-dir DIR]\n");
        return 2;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--synths"))
            synths = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--finalizer"))
            finalizer = (unsigned)atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--state-dir"))
            state_dir = argv[i + 1];
    }
    czk_log_init("stall_gpud", CZK_LOG_WARN);
    if (czk_peer_listen(argv[1], "czk.sock", (gid_t)-1, &lfd, &e) < 0) {
        fprintf(stderr, "stall_gpud: %s\n", e.msg);
        return 1;
    }
    say("listening %s/czk.sock", argv[1]);
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
