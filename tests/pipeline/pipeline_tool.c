/*
 * pipeline_tool.c — helpers for the pipeline tests (the tests/pipeline scripts) that
 * `czk` itself must not offer:
 *
 *   pipeline_tool journal PATH
 *       prints every record of czk-gpud's journal, read-only and without its
 *       lock (safe while gpud runs), one line each:
 *           SEQ TYPE JOB PART STATUS     (TYPE: ACCEPT DONE COMPLETE CANCEL PROBE)
 *       decoded through gpud's journal schemas (ipc/msg.h czk_jrec_schema);
 *       a record they refuse prints as "SEQ TYPE ? bad: WHY".
 *       the crash tests use it to prove each partition's DONE was journaled
 *       exactly once (sequence numbers survive compaction).
 *
 *   pipeline_tool raw SOCK MODE [WTNS]
 *       a misbehaving client of czk.sock; prints what the daemon did and
 *       exits 0 when that is what a robust daemon must do:
 *         prehello    random bytes instead of a HELLO        -> connection closed
 *         garbage     HELLO, then random bytes                -> closed
 *         oversize    HELLO, then a 100 KiB record            -> closed
 *         hugecount   HELLO, then a map claiming 2^32-1 keys  -> closed
 *         nofds       SUBMIT of 1 partition without an fd     -> REJECTED or closed
 *                     (the protocol carries no path: gpud cannot open one for us)
 *         pipefd      SUBMIT whose witness fd is a pipe       -> REJECTED
 *         dirfd       SUBMIT whose witness fd is a directory  -> REJECTED
 *         sparse      SUBMIT of a 64 GiB sparse file          -> REJECTED (size cap, not read)
 *         midsubmit   SUBMIT of WTNS, then hang up at once    -> (nothing to check here;
 *                     the script checks the daemons keep serving)
 *         silent      connect, say nothing for 2 s, hang up   -> (idem)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"
#include "ipc/journal.h"
#include "ipc/msg.h"
#include "ipc/peer.h"

static uint8_t buf[CZK_MSG_MAX_RECORD];

/* ------------------------------------------------------------ journal --- */

/* one line per record, decoded through gpud's journal schemas (ipc/msg.c);
 * a record they refuse prints as "SEQ TYPE ? bad: WHY" */
static int dump_rec(const czk_journal_rec *rec, void *ctx)
{
    const czk_schema *s = czk_jrec_schema(rec->type);
    czk_error e = {0};
    czk_jrec r;
    (void)ctx;

    if (!s || czk_schema_decode(s, rec->data, rec->len, &r, &e) < 0) {
        printf("%llu %s ? bad: %s\n", (unsigned long long)rec->seq, czk_jrec_type_name(rec->type),
               s ? e.msg : "unknown record type");
        return 0;
    }
    printf("%llu %s %llu %u %d\n", (unsigned long long)rec->seq, czk_jrec_type_name(rec->type),
           (unsigned long long)r.job, r.part, r.status);
    return 0;
}

static int cmd_journal(const char *path)
{
    czk_journal_info info;
    czk_error e = {0};
    if (czk_journal_replay_file(path, dump_rec, NULL, &info, &e) < 0) {
        fprintf(stderr, "journal: %s\n", e.msg);
        return 2;
    }
    return 0;
}

/* ---------------------------------------------------------------- raw --- */

static int connect_hello(const char *sock, int hello)
{
    czk_msg_hello mine, theirs;
    czk_peer_policy pol;
    czk_error e = {0};
    int fd;

    if (czk_peer_connect(sock, &fd, &e) < 0) {
        fprintf(stderr, "connect: %s\n", e.msg);
        exit(2);
    }
    if (!hello)
        return fd;
    czk_peer_hello_init(&mine, CZK_ROLE_CLIENT, -1, 0, "pipeline_tool");
    czk_peer_policy_default(&pol);
    pol.roles_mask = CZK_ROLE_BIT(CZK_ROLE_GPUD);
    if (czk_peer_handshake(fd, &mine, &pol, &theirs, 5000, &e) < 0) {
        fprintf(stderr, "handshake: %s\n", e.msg);
        exit(2);
    }
    return fd;
}

/* waits for the daemon's verdict: 'C' closed, 'R' REJECTED, 'A' ACCEPTED, 'E' ERROR then closed, 'T' nothing */
static int verdict(int fd, char *why, size_t n)
{
    for (;;) {
        czk_msg m;
        czk_error e = {0};
        int r = czk_peer_recv(fd, buf, sizeof(buf), &m, NULL, NULL, 10000, &e);
        if (r == -ECONNRESET) {
            snprintf(why, n, "connection closed");
            return 'C';
        }
        if (r == -ETIMEDOUT) {
            snprintf(why, n, "no answer within 10 s, connection still open");
            return 'T';
        }
        if (r < 0) {
            snprintf(why, n, "receive failed: %s", e.msg);
            return 'C';
        }
        if (m.type == CZK_MSG_ERROR) {
            /* the daemon explains, then closes */
            int k = 0;
            snprintf(why, n, "ERROR %d %s", m.u.error.code, m.u.error.message);
            while ((r = czk_peer_recv(fd, buf, sizeof(buf), NULL, NULL, NULL, 10000, &e)) == 0)
                if (++k > 100)
                    break;
            return r == -ECONNRESET ? 'E' : 'T';
        }
        if (m.type == CZK_MSG_REJECTED) {
            snprintf(why, n, "REJECTED %d %s", m.u.rejected.code, m.u.rejected.reason);
            return 'R';
        }
        if (m.type == CZK_MSG_ACCEPTED) {
            snprintf(why, n, "ACCEPTED job %llu", (unsigned long long)m.u.accepted.job_id);
            return 'A';
        }
    }
}

static int send_submit(int fd, uint32_t nparts, const int *fds, int nfds, const char *req)
{
    czk_msg m;
    czk_error e = {0};
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_SUBMIT;
    snprintf(m.u.submit.request_id, sizeof(m.u.submit.request_id), "%s", req);
    snprintf(m.u.submit.circuit, sizeof(m.u.submit.circuit), "multi");
    m.u.submit.priority = 1;
    m.u.submit.n_partitions = nparts;
    m.u.submit.n_fds = (uint32_t)nfds;
    if (czk_peer_send(fd, &m, fds, nfds, &e) < 0) {
        fprintf(stderr, "send: %s\n", e.msg);
        return -1;
    }
    return 0;
}

static int cmd_raw(const char *sock, const char *mode, const char *wtns)
{
    char why[1200] = "";
    uint8_t junk[512];
    czk_error e = {0};
    int fd, v, expect_closed = 0;

    getrandom(junk, sizeof(junk), 0);
    junk[0] = 0xc1; /* never valid msgpack: the record cannot be a map by accident */
    if (!strcmp(mode, "prehello")) {
        fd = connect_hello(sock, 0);
        czk_peer_send_raw(fd, junk, 200, NULL, 0, &e);
        expect_closed = 1;
    } else if (!strcmp(mode, "garbage")) {
        fd = connect_hello(sock, 1);
        czk_peer_send_raw(fd, junk, 200, NULL, 0, &e);
        expect_closed = 1;
    } else if (!strcmp(mode, "oversize")) {
        static uint8_t big[100 * 1024];
        int sz = sizeof(big) * 2;
        fd = connect_hello(sock, 1);
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
        memset(big, 0x90, sizeof(big));
        big[0] = 0xde; /* map16 ... */
        if (czk_peer_send_raw(fd, big, sizeof(big), NULL, 0, &e) < 0)
            printf("(the kernel refused the oversize send: %s)\n", e.msg);
        expect_closed = 1;
    } else if (!strcmp(mode, "hugecount")) {
        static const uint8_t rec[] = {0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 't', 0x08};
        fd = connect_hello(sock, 1);
        czk_peer_send_raw(fd, rec, sizeof(rec), NULL, 0, &e);
        expect_closed = 1;
    } else if (!strcmp(mode, "nofds")) {
        fd = connect_hello(sock, 1);
        send_submit(fd, 1, NULL, 0, "raw-nofds");
        v = verdict(fd, why, sizeof(why));
        printf("nofds: %s\n", why);
        return v == 'R' || v == 'C' || v == 'E' ? 0 : 1;
    } else if (!strcmp(mode, "pipefd") || !strcmp(mode, "dirfd") || !strcmp(mode, "sparse")) {
        int wfd = -1, p[2] = {-1, -1};
        char path[64];
        if (!strcmp(mode, "pipefd")) {
            if (pipe(p) < 0)
                return 2;
            write(p[1], junk, 100);
            wfd = p[0];
        } else if (!strcmp(mode, "dirfd")) {
            wfd = open("/", O_RDONLY | O_DIRECTORY);
        } else {
            snprintf(path, sizeof(path), "/tmp/czk-pipeline-sparse.XXXXXX");
            wfd = mkstemp(path);
            if (wfd < 0 || ftruncate(wfd, 64ll << 30) < 0)
                return 2;
            unlink(path);
        }
        fd = connect_hello(sock, 1);
        send_submit(fd, 1, &wfd, 1, mode);
        v = verdict(fd, why, sizeof(why));
        printf("%s: %s\n", mode, why);
        return v == 'R' ? 0 : 1;
    } else if (!strcmp(mode, "midsubmit")) {
        int wfd = wtns ? open(wtns, O_RDONLY) : -1;
        if (wfd < 0) {
            fprintf(stderr, "midsubmit needs a readable WTNS\n");
            return 2;
        }
        fd = connect_hello(sock, 1);
        send_submit(fd, 1, &wfd, 1, "raw-midsubmit");
        close(fd); /* gone before the answer */
        printf("midsubmit: hung up right after SUBMIT\n");
        return 0;
    } else if (!strcmp(mode, "silent")) {
        fd = connect_hello(sock, 0);
        sleep(2);
        close(fd);
        printf("silent: hung up after 2 s without a word\n");
        return 0;
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    v = verdict(fd, why, sizeof(why));
    printf("%s: %s\n", mode, why);
    return expect_closed && (v == 'C' || v == 'E') ? 0 : 1;
}

int main(int argc, char **argv)
{
    czk_log_init("pipeline_tool", CZK_LOG_WARN);
    if (argc == 3 && !strcmp(argv[1], "journal"))
        return cmd_journal(argv[2]);
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "raw"))
        return cmd_raw(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
    fprintf(stderr, "usage: pipeline_tool journal PATH | raw SOCK MODE [WTNS] (see the comment at the top)\n");
    return 2;
}
