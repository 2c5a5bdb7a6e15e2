/*
 * czk_test_client.c — a minimal client of czk-gpud's czk.sock for the daemon
 * tests (the operator's client is `czk submit/status/cancel`):
 *
 *   czk_test_client SOCK submit REQ CIRCUIT PRIO [--wait] [--out DIR] WTNS...
 *       opens each witness itself and passes the fds (SCM_RIGHTS); prints
 *       "accepted JOB [duplicate]" or "rejected CODE REASON" (exit 3);
 *       --wait follows EVENTs to the end of the job (exit 0 when all
 *       partitions are DONE, 4 otherwise) and --out writes each partition's
 *       proof.json/public.json from the DONE events under DIR/<partition>/
 *   czk_test_client SOCK status [JOB]     prints the STATUS_REPLY map
 *   czk_test_client SOCK cancel JOB       prints "cancelled" or the error (exit 5)
 *   czk_test_client SOCK watch JOB        follows EVENTs like --wait
 *   czk_test_client SOCK fetch JOB PART [DIR]
 *       FETCH: prints "fetched JOB PART PLEN ULEN" and, with DIR, writes the
 *       two files it got (DIR/proof.json, DIR/public.json); an ERROR prints
 *       "error CODE MSG" (exit 5); any fd with the ERROR, or a FETCHED
 *       without exactly two, prints "FDS N" and exits 7
 *   czk_test_client SOCK fetch2 JOB PART
 *       two FETCHes sent, then one second without reading (so gpud has
 *       handled both while the first answer is unread: otherwise gpud may
 *       take the second only after the first answer was read, and rightly
 *       answer it too), then both answers, each printed as by fetch with
 *       the number of fds it carried ("... fds N"); exit 0 when both were
 *       read
 */
#include <errno.h>
#include <fcntl.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/log.h"
#include "ipc/peer.h"

static uint8_t buf[CZK_MSG_MAX_RECORD];

static int write_file(const char *dir, const char *name, const czk_bytes *b)
{
    char path[1024];
    FILE *f;
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if (!(f = fopen(path, "wb")))
        return -errno;
    fwrite(b->ptr, 1, b->len, f);
    fclose(f);
    return 0;
}

static int follow(int fd, uint64_t job, const char *out)
{
    for (;;) {
        czk_msg m;
        czk_error e = {0};
        int nfds = 0, r = czk_peer_recv(fd, buf, sizeof(buf), &m, NULL, &nfds, 600000, &e);
        if (r < 0) {
            fprintf(stderr, "receive: %s\n", e.msg);
            return 6;
        }
        if (m.type == CZK_MSG_ERROR) {
            fprintf(stderr, "error %d: %s\n", m.u.error.code, m.u.error.message);
            return 5;
        }
        if (m.type != CZK_MSG_EVENT || m.u.event.job_id != job)
            continue;
        const czk_msg_event *ev = &m.u.event;
        if (ev->partition == CZK_PARTITION_ALL)
            printf("event job %llu stage %u status %d %s\n", (unsigned long long)job, ev->stage, ev->status,
                   ev->reason);
        else
            printf("event job %llu partition %u stage %u status %d %s\n", (unsigned long long)job, ev->partition,
                   ev->stage, ev->status, ev->reason);
        fflush(stdout);
        if (ev->partition != CZK_PARTITION_ALL && ev->stage == CZK_STAGE_DONE && out && ev->proof.len) {
            char dir[1024];
            snprintf(dir, sizeof(dir), "%s/%u", out, ev->partition);
            mkdir(out, 0755);
            mkdir(dir, 0755);
            write_file(dir, "proof.json", &ev->proof);
            write_file(dir, "public.json", &ev->publics);
        }
        if (ev->partition == CZK_PARTITION_ALL &&
            (ev->stage == CZK_STAGE_DONE || ev->stage == CZK_STAGE_FAILED || ev->stage == CZK_STAGE_CANCELLED))
            return ev->stage == CZK_STAGE_DONE ? 0 : 4;
    }
}

int main(int argc, char **argv)
{
    czk_msg_hello mine, theirs;
    czk_peer_policy pol;
    czk_error e = {0};
    czk_msg m;
    int fd;

    czk_log_init("czk_test_client", CZK_LOG_WARN);
    if (argc < 3) {
        fprintf(stderr, "usage: see the comment at the top of czk_test_client.c\n");
        return 2;
    }
    if (czk_peer_connect(argv[1], &fd, &e) < 0) {
        fprintf(stderr, "%s\n", e.msg);
        return 2;
    }
    czk_peer_hello_init(&mine, CZK_ROLE_CLIENT, -1, 0, "czk_test_client");
    czk_peer_policy_default(&pol);
    pol.roles_mask = CZK_ROLE_BIT(CZK_ROLE_GPUD);
    if (czk_peer_handshake(fd, &mine, &pol, &theirs, 5000, &e) < 0) {
        fprintf(stderr, "handshake: %s\n", e.msg);
        return 2;
    }
    memset(&m, 0, sizeof(m));
    if (!strcmp(argv[2], "submit") && argc >= 6) {
        int fds[CZK_MSG_MAX_FDS], n = 0, wait = 0, i, r, nf = 0;
        const char *out = NULL;
        for (i = 6; i < argc; i++) {
            if (!strcmp(argv[i], "--wait"))
                wait = 1;
            else if (!strcmp(argv[i], "--out") && i + 1 < argc)
                out = argv[++i];
            else if ((fds[n++] = open(argv[i], O_RDONLY | O_CLOEXEC)) < 0) {
                fprintf(stderr, "open %s: %s\n", argv[i], strerror(errno));
                return 2;
            }
        }
        m.type = CZK_MSG_SUBMIT;
        snprintf(m.u.submit.request_id, sizeof(m.u.submit.request_id), "%s", argv[3]);
        snprintf(m.u.submit.circuit, sizeof(m.u.submit.circuit), "%s", argv[4]);
        m.u.submit.priority = (uint32_t)atoi(argv[5]);
        m.u.submit.n_partitions = (uint32_t)n;
        m.u.submit.n_fds = (uint32_t)n;
        m.u.submit.flags = wait ? CZK_SUBMIT_F_WAIT : 0;
        if (czk_peer_send(fd, &m, fds, n, &e) < 0) {
            fprintf(stderr, "send: %s\n", e.msg);
            return 2;
        }
        for (;;) {
            r = czk_peer_recv(fd, buf, sizeof(buf), &m, NULL, &nf, 120000, &e);
            if (r < 0) {
                fprintf(stderr, "receive: %s\n", e.msg);
                return 6;
            }
            if (m.type == CZK_MSG_ACCEPTED || m.type == CZK_MSG_REJECTED)
                break;
        }
        if (m.type == CZK_MSG_REJECTED) {
            printf("rejected %d %s\n", m.u.rejected.code, m.u.rejected.reason);
            return 3;
        }
        printf("accepted %llu%s\n", (unsigned long long)m.u.accepted.job_id,
               m.u.accepted.duplicate ? " duplicate" : "");
        fflush(stdout);
        return wait ? follow(fd, m.u.accepted.job_id, out) : 0;
    }
    if (!strcmp(argv[2], "status")) {
        msgpack_sbuffer sb;
        msgpack_packer pk;
        msgpack_unpacked up;
        size_t off = 0;
        int nf = 0;
        msgpack_sbuffer_init(&sb);
        msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
        msgpack_pack_map(&pk, argc > 3 ? 1 : 0);
        if (argc > 3) {
            msgpack_pack_str_with_body(&pk, "job", 3);
            msgpack_pack_uint64(&pk, strtoull(argv[3], NULL, 10));
        }
        m.type = CZK_MSG_STATUS;
        m.u.status.body = (czk_bytes){(const uint8_t *)sb.data, (uint32_t)sb.size};
        if (czk_peer_send(fd, &m, NULL, 0, &e) < 0 ||
            czk_peer_recv(fd, buf, sizeof(buf), &m, NULL, &nf, 10000, &e) < 0 || m.type != CZK_MSG_STATUS_REPLY) {
            fprintf(stderr, "status: %s\n", e.msg);
            return 6;
        }
        msgpack_unpacked_init(&up);
        if (msgpack_unpack_next(&up, (const char *)m.u.status.body.ptr, m.u.status.body.len, &off) ==
            MSGPACK_UNPACK_SUCCESS)
            msgpack_object_print(stdout, up.data);
        printf("\n");
        msgpack_unpacked_destroy(&up);
        msgpack_sbuffer_destroy(&sb);
        return 0;
    }
    if ((!strcmp(argv[2], "cancel") || !strcmp(argv[2], "watch")) && argc > 3) {
        uint64_t job = strtoull(argv[3], NULL, 10);
        int nf = 0;
        if (!strcmp(argv[2], "watch")) {
            m.type = CZK_MSG_WATCH;
            m.u.watch.job_id = job;
            if (czk_peer_send(fd, &m, NULL, 0, &e) < 0)
                return 6;
            return follow(fd, job, NULL);
        }
        m.type = CZK_MSG_CANCEL;
        m.u.cancel.job_id = job;
        if (czk_peer_send(fd, &m, NULL, 0, &e) < 0)
            return 6;
        for (;;) {
            if (czk_peer_recv(fd, buf, sizeof(buf), &m, NULL, &nf, 10000, &e) < 0) {
                fprintf(stderr, "cancel: %s\n", e.msg);
                return 6;
            }
            if (m.type == CZK_MSG_ERROR) {
                printf("error %d %s\n", m.u.error.code, m.u.error.message);
                return 5;
            }
            if (m.type == CZK_MSG_EVENT && m.u.event.stage == CZK_STAGE_CANCELLED) {
                printf("cancelled\n");
                return 0;
            }
        }
    }
    if (!strcmp(argv[2], "fetch2") && argc > 4) {
        int fds[CZK_MSG_MAX_FDS], nf;
        m.type = CZK_MSG_FETCH;
        m.u.fetch.job_id = strtoull(argv[3], NULL, 10);
        m.u.fetch.partition = (uint32_t)strtoul(argv[4], NULL, 10);
        for (int i = 0; i < 2; i++)
            if (czk_peer_send(fd, &m, NULL, 0, &e) < 0) {
                fprintf(stderr, "fetch2: %s\n", e.msg);
                return 6;
            }
        sleep(1);
        for (int got = 0; got < 2;) {
            nf = CZK_MSG_MAX_FDS;
            if (czk_peer_recv(fd, buf, sizeof(buf), &m, fds, &nf, 10000, &e) < 0) {
                fprintf(stderr, "fetch2: %s\n", e.msg);
                return 6;
            }
            if (m.type == CZK_MSG_ERROR)
                printf("error %d %s fds %d\n", m.u.error.code, m.u.error.message, nf);
            else if (m.type == CZK_MSG_FETCHED)
                printf("fetched %llu %u %llu %llu fds %d\n", (unsigned long long)m.u.fetched.job_id,
                       m.u.fetched.partition, (unsigned long long)m.u.fetched.proof_size,
                       (unsigned long long)m.u.fetched.public_size, nf);
            got += m.type == CZK_MSG_ERROR || m.type == CZK_MSG_FETCHED;
            for (int i = 0; i < nf; i++)
                close(fds[i]);
        }
        fflush(stdout);
        return 0;
    }
    if (!strcmp(argv[2], "fetch") && argc > 4) {
        int fds[CZK_MSG_MAX_FDS], nf = CZK_MSG_MAX_FDS, r = 0;
        m.type = CZK_MSG_FETCH;
        m.u.fetch.job_id = strtoull(argv[3], NULL, 10);
        m.u.fetch.partition = (uint32_t)strtoul(argv[4], NULL, 10);
        if (czk_peer_send(fd, &m, NULL, 0, &e) < 0) {
            fprintf(stderr, "fetch: %s\n", e.msg);
            return 6;
        }
        for (;;) { /* take every fd that comes, to count them */
            nf = CZK_MSG_MAX_FDS;
            if (czk_peer_recv(fd, buf, sizeof(buf), &m, fds, &nf, 10000, &e) < 0) {
                fprintf(stderr, "fetch: %s\n", e.msg);
                return 6;
            }
            if (m.type == CZK_MSG_ERROR || m.type == CZK_MSG_FETCHED)
                break;
            for (int i = 0; i < nf; i++)
                close(fds[i]);
        }
        if (m.type == CZK_MSG_ERROR) {
            printf("error %d %s\n", m.u.error.code, m.u.error.message);
            r = 5;
        } else {
            printf("fetched %llu %u %llu %llu\n", (unsigned long long)m.u.fetched.job_id, m.u.fetched.partition,
                   (unsigned long long)m.u.fetched.proof_size, (unsigned long long)m.u.fetched.public_size);
        }
        if ((m.type == CZK_MSG_ERROR && nf) || (m.type == CZK_MSG_FETCHED && nf != CZK_FETCHED_FDS)) {
            printf("FDS %d\n", nf);
            r = 7;
        } else if (m.type == CZK_MSG_FETCHED && argc > 5) {
            static const char *const names[2] = {"proof.json", "public.json"};
            mkdir(argv[5], 0755);
            for (int i = 0; i < 2 && r == 0; i++) {
                char path[1024];
                FILE *f;
                ssize_t k;
                snprintf(path, sizeof(path), "%s/%s", argv[5], names[i]);
                if (!(f = fopen(path, "wb")))
                    r = 6;
                while (f && (k = read(fds[i], buf, sizeof(buf))) > 0)
                    fwrite(buf, 1, (size_t)k, f);
                if (f)
                    fclose(f);
            }
        }
        fflush(stdout);
        for (int i = 0; i < nf; i++)
            close(fds[i]);
        return r;
    }
    fprintf(stderr, "unknown command\n");
    return 2;
}
