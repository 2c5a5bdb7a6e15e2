/*
 * client_tool.c — clients of czk-gpud's czk.sock for the gpud tests that the
 * operator's `czk` must not offer (tests/gpud/submit_repeat.sh,
 * tests/gpud/watch_idle.sh):
 *
 *   client_tool flood SOCK REQ CIRCUIT WTNS NPARTS SECONDS GPUD_PID
 *       sends, for SECONDS, the same SUBMIT again and again (request id REQ,
 *       NPARTS copies of the witness WTNS, which must already be job REQ's
 *       submission) on 4 connections without waiting for the answers, reads
 *       whatever comes back, and meanwhile submits a fresh 1-partition job
 *       (request id REQ-legit-K) on a new connection every 200 ms and waits
 *       for its answer.  Samples the number of open fds of GPUD_PID
 *       (/proc/PID/fd) every few ms.  Prints one "key value" line each:
 *       fds_before, fds_peak, fds_settled (the least over the 0.5 s after
 *       the last send), fds_after, sent, dup (ACCEPTED duplicate),
 *       dup_job (the job id those named), eagain, ebusy, other (other
 *       answers), legit_ok, legit_bad; and "legit_reason ..." for each fresh
 *       job that was not accepted.  Exit 0, or 2 when it could not run.
 *   client_tool idle SOCK MODE REQ CIRCUIT WTNS IDLE_S WAIT_S
 *       the idle timeout of a connection that followed a job: submits REQ
 *       (1 partition of WTNS) with the wait flag and reads its answers;
 *       MODE cancel: checks the connection is kept for 2 * IDLE_S + 1 s
 *       while the job is active (a connection opened beside it without a job
 *       must be closed by then: the timeout works), then cancels the job from
 *       it; MODE done: follows the job's events until it is complete.  Then
 *       waits up to WAIT_S s for gpud to close the connection.  Prints
 *       "closed" (exit 0), "kept" (exit 1: still open after WAIT_S s) or
 *       what went wrong (exit 1 or 2).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"
#include "ipc/peer.h"

static uint8_t buf[CZK_MSG_MAX_RECORD];

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int client(const char *sock, int *fd)
{
    czk_msg_hello mine, theirs;
    czk_peer_policy pol;
    czk_error e = {0};

    if (czk_peer_connect(sock, fd, &e) < 0) {
        fprintf(stderr, "connect: %s\n", e.msg);
        return -1;
    }
    czk_peer_hello_init(&mine, CZK_ROLE_CLIENT, -1, 0, "client_tool");
    czk_peer_policy_default(&pol);
    pol.roles_mask = CZK_ROLE_BIT(CZK_ROLE_GPUD);
    if (czk_peer_handshake(*fd, &mine, &pol, &theirs, 10000, &e) < 0) {
        fprintf(stderr, "handshake: %s\n", e.msg);
        close(*fd);
        return -1;
    }
    return 0;
}

static void submit_msg(czk_msg *m, const char *req, const char *circ, int nparts, uint32_t flags)
{
    memset(m, 0, sizeof(*m));
    m->type = CZK_MSG_SUBMIT;
    snprintf(m->u.submit.request_id, sizeof(m->u.submit.request_id), "%s", req);
    snprintf(m->u.submit.circuit, sizeof(m->u.submit.circuit), "%s", circ);
    m->u.submit.priority = 1;
    m->u.submit.n_partitions = (uint32_t)nparts;
    m->u.submit.n_fds = (uint32_t)nparts;
    m->u.submit.flags = flags;
}

static int count_fds(int pid)
{
    char path[64];
    DIR *d;
    struct dirent *de;
    int n = 0;

    snprintf(path, sizeof(path), "/proc/%d/fd", pid);
    if (!(d = opendir(path)))
        return -1;
    while ((de = readdir(d)))
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

/* ---------------------------------------------------------------- flood --- */

#define FLOOD_CONNS 4

static int cmd_flood(int argc, char **argv)
{
    const char *sock = argv[2], *req = argv[3], *circ = argv[4], *wtns = argv[5];
    int nparts = atoi(argv[6]), pid = atoi(argv[8]);
    double secs = atof(argv[7]), t0, next_legit = 0;
    int conns[FLOOD_CONNS], fds[CZK_MSG_MAX_FDS], wfd, before, peak, settled, k = 0;
    unsigned long sent = 0, dup = 0, eagain = 0, ebusy = 0, other = 0, legit_ok = 0, legit_bad = 0;
    unsigned long long dup_job = 0;
    czk_error e = {0};
    czk_msg m;

    (void)argc;
    if (nparts < 1 || nparts > CZK_MSG_MAX_FDS || (wfd = open(wtns, O_RDONLY | O_CLOEXEC)) < 0) {
        fprintf(stderr, "flood: bad NPARTS or WTNS\n");
        return 2;
    }
    for (int i = 0; i < nparts; i++)
        fds[i] = wfd;
    before = peak = count_fds(pid);
    if (before < 0) {
        fprintf(stderr, "flood: cannot read /proc/%d/fd\n", pid);
        return 2;
    }
    for (int c = 0; c < FLOOD_CONNS; c++) {
        if (client(sock, &conns[c]) < 0)
            return 2;
        fcntl(conns[c], F_SETFL, fcntl(conns[c], F_GETFL) | O_NONBLOCK);
    }
    t0 = now_s();
    while (now_s() - t0 < secs) {
        int n;
        for (int c = 0; c < FLOOD_CONNS; c++) {
            submit_msg(&m, req, circ, nparts, 0);
            if (czk_peer_send(conns[c], &m, fds, nparts, &e) == 0)
                sent++;
            for (;;) { /* whatever came back so far */
                int nf = 0;
                if (czk_peer_recv(conns[c], buf, sizeof(buf), &m, NULL, &nf, 0, &e) < 0)
                    break;
                if (m.type == CZK_MSG_ACCEPTED && m.u.accepted.duplicate) {
                    dup++;
                    dup_job = (unsigned long long)m.u.accepted.job_id;
                } else if (m.type == CZK_MSG_REJECTED && m.u.rejected.code == -EAGAIN)
                    eagain++;
                else if (m.type == CZK_MSG_REJECTED && m.u.rejected.code == -EBUSY)
                    ebusy++;
                else
                    other++;
            }
        }
        if ((n = count_fds(pid)) > peak)
            peak = n;
        if (now_s() >= next_legit) {
            /* a legitimate client, meanwhile */
            char lreq[CZK_MSG_REQID_MAX + 1];
            int lfd, nf = 0;
            next_legit = now_s() + 0.2;
            snprintf(lreq, sizeof(lreq), "%.100s-legit-%d", req, k++);
            submit_msg(&m, lreq, circ, 1, 0);
            if (client(sock, &lfd) < 0 || czk_peer_send(lfd, &m, &wfd, 1, &e) < 0) {
                legit_bad++;
                printf("legit_reason %s: could not connect or send: %s\n", lreq, e.msg);
                continue;
            }
            if (czk_peer_recv(lfd, buf, sizeof(buf), &m, NULL, &nf, 60000, &e) < 0) {
                legit_bad++;
                printf("legit_reason %s: no answer: %s\n", lreq, e.msg);
            } else if (m.type == CZK_MSG_ACCEPTED && !m.u.accepted.duplicate) {
                legit_ok++;
            } else {
                legit_bad++;
                printf("legit_reason %s: %s %d %s\n", lreq, czk_msg_type_name(m.type),
                       m.type == CZK_MSG_REJECTED ? m.u.rejected.code : 0,
                       m.type == CZK_MSG_REJECTED ? m.u.rejected.reason : "");
            }
            close(lfd);
        } else
            usleep(2000);
    }
    /* what gpud still holds once the records sent have been read: the least
     * over half a second (a repeat in the intake, or records being read,
     * hold fds for a moment; a queue of repeats holds them until it drains) */
    settled = count_fds(pid);
    for (t0 = now_s(); now_s() - t0 < 0.5;) {
        int n = count_fds(pid);
        if (n >= 0 && n < settled)
            settled = n;
        for (int c = 0; c < FLOOD_CONNS; c++) {
            int nf = 0;
            while (czk_peer_recv(conns[c], buf, sizeof(buf), &m, NULL, &nf, 0, &e) == 0)
                if (m.type == CZK_MSG_ACCEPTED && m.u.accepted.duplicate) {
                    dup++;
                    dup_job = (unsigned long long)m.u.accepted.job_id;
                }
        }
        usleep(5000);
    }
    /* the answers still owed to the flood (each repeat in gpud's intake answers) */
    for (int c = 0; c < FLOOD_CONNS; c++) {
        for (;;) {
            int nf = 0;
            if (czk_peer_recv(conns[c], buf, sizeof(buf), &m, NULL, &nf, 500, &e) < 0)
                break;
            if (m.type == CZK_MSG_ACCEPTED && m.u.accepted.duplicate) {
                dup++;
                dup_job = (unsigned long long)m.u.accepted.job_id;
            }
        }
        close(conns[c]);
    }
    printf("fds_before %d\nfds_peak %d\nfds_settled %d\nfds_after %d\nsent %lu\ndup %lu\ndup_job %llu\neagain %lu\n"
           "ebusy %lu\nother %lu\nlegit_ok %lu\nlegit_bad %lu\n",
           before, peak, settled, count_fds(pid), sent, dup, dup_job, eagain, ebusy, other, legit_ok, legit_bad);
    return 0;
}

/* ----------------------------------------------------------------- idle --- */

/* 1 when gpud closed fd (EOF), 0 when it is open and silent after ms */
static int closed_within(int fd, int ms)
{
    double end = now_s() + ms / 1000.0;
    for (;;) {
        czk_error e = {0};
        czk_msg m;
        int nf = 0, left = (int)((end - now_s()) * 1000), r;
        if (left < 0)
            return 0;
        r = czk_peer_recv(fd, buf, sizeof(buf), &m, NULL, &nf, left, &e);
        if (r == -ETIMEDOUT)
            return 0;
        if (r < 0)
            return 1; /* EOF (or a broken link: closed either way) */
    }
}

static int cmd_idle(int argc, char **argv)
{
    const char *sock = argv[2], *mode = argv[3], *req = argv[4], *circ = argv[5], *wtns = argv[6];
    int idle = atoi(argv[7]), wait_s = atoi(argv[8]), fd, ctl, wfd, nf;
    uint64_t job = 0;
    czk_error e = {0};
    czk_msg m;
    double t;

    (void)argc;
    if ((wfd = open(wtns, O_RDONLY | O_CLOEXEC)) < 0 || client(sock, &fd) < 0 || client(sock, &ctl) < 0) {
        fprintf(stderr, "idle: could not open %s or connect\n", wtns);
        return 2;
    }
    submit_msg(&m, req, circ, 1, CZK_SUBMIT_F_WAIT);
    if (czk_peer_send(fd, &m, &wfd, 1, &e) < 0) {
        fprintf(stderr, "idle: send: %s\n", e.msg);
        return 2;
    }
    for (;;) {
        nf = 0;
        if (czk_peer_recv(fd, buf, sizeof(buf), &m, NULL, &nf, 30000, &e) < 0) {
            printf("no answer to the SUBMIT: %s\n", e.msg);
            return 2;
        }
        if (m.type == CZK_MSG_REJECTED) {
            printf("rejected %d %s\n", m.u.rejected.code, m.u.rejected.reason);
            return 2;
        }
        if (m.type == CZK_MSG_ACCEPTED) {
            job = m.u.accepted.job_id;
            break;
        }
    }
    if (!strcmp(mode, "cancel")) {
        if (closed_within(fd, (2 * idle + 1) * 1000)) {
            printf("closed while its job was active\n");
            return 1;
        }
        if (!closed_within(ctl, 1000)) {
            printf("a connection without a job was not closed after %d s: the idle timeout is not on\n", 2 * idle + 2);
            return 2;
        }
        memset(&m, 0, sizeof(m));
        m.type = CZK_MSG_CANCEL;
        m.u.cancel.job_id = job;
        if (czk_peer_send(fd, &m, NULL, 0, &e) < 0) {
            printf("cancel: %s\n", e.msg);
            return 2;
        }
    }
    /* the job's end: its final EVENT */
    for (;;) {
        nf = 0;
        if (czk_peer_recv(fd, buf, sizeof(buf), &m, NULL, &nf, 120000, &e) < 0) {
            printf("no final event for job %llu: %s\n", (unsigned long long)job, e.msg);
            return 2;
        }
        if (m.type == CZK_MSG_ERROR) {
            printf("error %d %s\n", m.u.error.code, m.u.error.message);
            return 2;
        }
        if (m.type == CZK_MSG_EVENT && m.u.event.job_id == job && m.u.event.partition == CZK_PARTITION_ALL &&
            (m.u.event.stage == CZK_STAGE_DONE || m.u.event.stage == CZK_STAGE_FAILED ||
             m.u.event.stage == CZK_STAGE_CANCELLED))
            break;
    }
    t = now_s();
    if (closed_within(fd, wait_s * 1000)) {
        printf("closed %.1f s after job %llu's final event\n", now_s() - t, (unsigned long long)job);
        return 0;
    }
    printf("kept: still open %d s after job %llu's final event (client_idle_timeout_s = %d)\n", wait_s,
           (unsigned long long)job, idle);
    return 1;
}

int main(int argc, char **argv)
{
    czk_log_init("client_tool", CZK_LOG_WARN);
    if (argc == 9 && !strcmp(argv[1], "flood"))
        return cmd_flood(argc, argv);
    if (argc == 9 && !strcmp(argv[1], "idle"))
        return cmd_idle(argc, argv);
    fprintf(stderr, "usage: see the comment at the top of client_tool.c\n");
    return 2;
}
