/*
 * peer.h — Unix SOCK_SEQPACKET endpoints, peer credentials and the HELLO
 * handshake, plus blocking send/receive for programs without a loop (the
 * czk CLI, tests, benchmarks).
 *
 * Server side (a daemon):
 *   int lfd;
 *   czk_peer_listen("/run/czk", "gpud.sock", group_or_minus1, &lfd, &err);
 *       creates the runtime directory (0750) if needed, removes a stale
 *       socket file (when nothing answers on it, or when what answers is
 *       the socket of a process that is gone or exiting: SO_PEERCRED pid,
 *       see peer.c), binds, sets mode 0660 (and the group when given),
 *       listens.  A socket that is really served fails with -EADDRINUSE.  Then hand lfd to
 *       czk_loop_listen() (loop.h), which checks every peer with
 *       czk_peer_check_cred() and runs the HELLO handshake.
 *
 * Client side:
 *   czk_peer_connect("/run/czk/gpud.sock", &fd, &err);
 *   czk_peer_handshake(fd, &my_hello, &policy, &their_hello, 5000, &err);
 *   czk_peer_send(fd, &msg, fds, nfds, &err);  czk_peer_recv(...);
 *   or give fd to czk_loop_connect() (loop.h).
 *
 * Policy: a peer is accepted when its SO_PEERCRED uid equals policy.uid, or
 * when policy.gid is set and the peer's primary or a supplementary group
 * (SO_PEERGROUPS) is policy.gid, or when it is root and allow_root is set.
 * The HELLO must name a role in roles_mask, our protocol version, and the
 * same pid the kernel reports (so a peer cannot claim to be someone else).
 */
#ifndef CZK_IPC_PEER_H
#define CZK_IPC_PEER_H

#include <stdint.h>
#include <sys/types.h>

#include "common/base/error.h"
#include "ipc/msg.h"

#define CZK_RUNTIME_DIR_DEFAULT "/run/czk"

typedef struct czk_peer_policy {
    uid_t uid;           /* accepted uid (normally our own) */
    gid_t gid;           /* accepted group, (gid_t)-1 for none */
    int allow_root;      /* accept uid 0 as well */
    uint32_t roles_mask; /* CZK_ROLE_BIT(...) of acceptable peer roles, 0 = any */
} czk_peer_policy;

typedef struct czk_peer_cred {
    pid_t pid;
    uid_t uid;
    gid_t gid;
    int ngroups;
    gid_t groups[64];
} czk_peer_cred;

/* same uid as this process, no group, root allowed, any role */
void czk_peer_policy_default(czk_peer_policy *p);

/* $RUNTIME_DIRECTORY (systemd), else $CZK_RUNTIME_DIR, else /run/czk */
const char *czk_peer_runtime_dir(void);

int czk_peer_listen(const char *dir, const char *name, gid_t group, int *fd_out, czk_error *err);
int czk_peer_connect(const char *path, int *fd_out, czk_error *err);

int czk_peer_get_cred(int fd, czk_peer_cred *c, czk_error *err);
int czk_peer_check_cred(const czk_peer_policy *p, const czk_peer_cred *c, czk_error *err);
int czk_peer_check_hello(const czk_peer_policy *p, const czk_peer_cred *c, const czk_msg_hello *h, czk_error *err);

/*
 * A peer's process, pinned so that "has it exited?" is not fooled by its pid
 * being reused: a pidfd where the kernel has them (Linux 5.3), else the
 * process's start time (/proc/<pid>/stat field 22).  czk-gpud pins each synth
 * at its HELLO (the SO_PEERCRED pid) and keeps the slots of a synth whose link
 * closed out of use while the process lives: its fill thread may still write.
 * "Exited" means every thread of it is gone (a zombie has exited; a zombie
 * leader whose other threads run has not).  A zeroed czk_proc_ref is a valid
 * "not pinned" one.  No locking: one thread owns a czk_proc_ref.
 */
typedef struct czk_proc_ref {
    pid_t pid;      /* 0: not pinned */
    int pidfd;      /* -1: watched by its start time */
    uint64_t start; /* its start time, clock ticks since boot (0: unknown) */
} czk_proc_ref;

/* 0: pinned.  -ESRCH: there is no such process (it has exited).  Another
 * -errno: it cannot be watched (no pidfd, /proc unreadable).  r is "not
 * pinned" on failure. */
int czk_proc_ref_open(czk_proc_ref *r, pid_t pid);
/* 1 while the pinned process has a thread left, 0 once it has exited or when
 * r is not pinned; when it cannot tell, 1 (the caller keeps what it guards) */
int czk_proc_ref_alive(const czk_proc_ref *r);
void czk_proc_ref_close(czk_proc_ref *r);
/* start time of a process (/proc/<pid>/stat field 22, clock ticks since
 * boot), 0 when unknown */
uint64_t czk_proc_start_time(pid_t pid);

/* fills a HELLO for this process */
void czk_peer_hello_init(czk_msg_hello *h, uint32_t role, int numa_node, uint32_t instance, const char *name);

/*
 * Blocking I/O on a SEQPACKET socket.  send: one record, with nfds fds as
 * SCM_RIGHTS (the caller keeps its fds).  recv: waits up to timeout_ms (-1 =
 * forever), decodes into m (byte strings point into buf), returns received
 * fds (O_CLOEXEC) in fds[0..*nfds) (caller closes them; capacity on input in
 * *nfds).  Returns 0, -ECONNRESET on EOF, -ETIMEDOUT, -EBADMSG (decode, a
 * record over the cap, truncated fds).
 */
int czk_peer_send(int fd, const czk_msg *m, const int *fds, int nfds, czk_error *err);
int czk_peer_send_raw(int fd, const void *rec, size_t len, const int *fds, int nfds, czk_error *err);
int czk_peer_recv(int fd, uint8_t *buf, size_t cap, czk_msg *m, int *fds, int *nfds, int timeout_ms, czk_error *err);

/* client handshake: send our HELLO, receive and check theirs */
int czk_peer_handshake(int fd, const czk_msg_hello *mine, const czk_peer_policy *p, czk_msg_hello *theirs,
                       int timeout_ms, czk_error *err);

#endif
