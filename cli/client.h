/*
 * client.h — what `czk submit`, `czk fetch`, `czk status` and `czk cancel` share: finding
 * czk-gpud's client socket exactly the way the daemons find their runtime
 * directory, connecting with the HELLO handshake, and the options every one
 * of them takes (--config FILE, --runtime-dir DIR).
 *
 * Socket resolution (docs/config.md):
 *   1. --runtime-dir DIR                         -> DIR/czk.sock
 *   2. the runtime_dir of --config FILE, or of /etc/czk/czk.conf when that
 *      file exists and is readable (the file the systemd units use)
 *   3. the built-in default of common/runtime/config.c: $CZK_RUNTIME_DIR, else
 *      $XDG_RUNTIME_DIR/czk (non-root), else /tmp/czk-UID (non-root), else
 *      /run/czk
 *   When neither 1 nor an explicit --config nor $CZK_RUNTIME_DIR chose the
 *   directory and no socket exists there, /run/czk/czk.sock (the systemd
 *   location) is tried as well.
 *
 * Whom the client trusts (a witness descriptor is secret: it must reach the
 * real daemon and no one else).  The owner of the socket file says nothing,
 * since anyone can bind a socket wherever they can write.  Instead:
 *   - the runtime directory, whatever chose it, is checked with lstat()
 *     before connecting: a directory (not a symbolic link), owned by a
 *     trusted uid, not writable by group or others; otherwise the client
 *     refuses, naming the directory and what is wrong with it;
 *   - after connect(), the server's SO_PEERCRED uid must be a trusted uid,
 *     before anything is sent; then its HELLO must say it is czk-gpud.
 * Trusted uids: root, the `czk` system user (getpwnam, when it exists) and
 * the client's own effective uid (a user's own development daemon).
 */
#ifndef CZK_CLI_CLIENT_H
#define CZK_CLI_CLIENT_H

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/runtime/config.h"
#include "common/base/error.h"
#include "ipc/msg.h"

typedef struct czk_client {
    int fd;                        /* connected SEQPACKET socket, -1 when closed */
    char sock_path[CZK_CONFIG_PATH_MAX + 16];
    czk_config cfg;                /* the configuration the socket was found with */
    const char *config_path;       /* --config, NULL when absent */
    const char *runtime_dir;       /* --runtime-dir, NULL when absent */
    uid_t trusted[3];              /* uids a czk-gpud may run as (see above) */
    int n_trusted;
    uint8_t buf[CZK_MSG_MAX_RECORD];
} czk_client;

/* the getopt_long entries of --config FILE and --runtime-dir DIR (cli.h:
 * czk_cli_getopt), and what to do with them */
#define CZK_CLIENT_OPT_CONFIG 0x101
#define CZK_CLIENT_OPT_RUNTIME_DIR 0x102
#define CZK_CLIENT_LONGOPTS                                                                        \
    {"config", required_argument, NULL, CZK_CLIENT_OPT_CONFIG},                                    \
    {"runtime-dir", required_argument, NULL, CZK_CLIENT_OPT_RUNTIME_DIR}

/* stores optarg when opt is one of CZK_CLIENT_LONGOPTS: 1 (taken), 0 (not
 * one of them), -EINVAL (an empty value; an error was printed for cmd) */
int czk_client_option(czk_client *cl, const char *cmd, int opt, const char *optarg);

/* loads the configuration and computes sock_path (no connection yet) */
int czk_client_resolve(czk_client *cl, czk_error *e);

/* resolve (once) + check the runtime directory + connect + check the peer's
 * credentials + HELLO; on failure e says what to do about it.  -EACCES and
 * -EPERM mean refused for a reason that retrying will not change (an
 * untrusted directory or peer, or a socket this user may not use). */
int czk_client_connect(czk_client *cl, czk_error *e);

void czk_client_close(czk_client *cl);

int czk_client_send(czk_client *cl, const czk_msg *m, const int *fds, int nfds, czk_error *e);

/* next record (byte strings of m point into cl->buf until the next call);
 * timeout_ms -1 waits forever; -ETIMEDOUT, -ECONNRESET (gpud went away).
 * A record that carries fds is refused (-EBADMSG), its fds closed: use
 * czk_client_recv_fds where one may come. */
int czk_client_recv(czk_client *cl, czk_msg *m, int timeout_ms, czk_error *e);

/* whether r, from connect, send or recv, means czk-gpud is gone (closed the
 * connection or does not listen): worth connecting again */
static inline bool czk_client_dropped(int r) { return r == -ECONNRESET || r == -EPIPE || r == -ECONNREFUSED; }

/* connects when cl is closed, then sends WATCH for job (its EVENTs follow on
 * cl); 0, or -errno with e filled and cl closed */
int czk_client_watch(czk_client *cl, uint64_t job, czk_error *e);

/*
 * czk-gpud went away while a job was followed: closes cl, then
 * czk_client_watch with backoff (100 ms doubling to 2 s) until it succeeds
 * (0), limit_s seconds pass (-ETIMEDOUT, e holding the last failure),
 * the CLOCK_MONOTONIC `deadline` passes first (-ETIME; 0 = none) or *stop is set
 * (-EINTR; stop NULL = never).  Every failure is tried again, a refusal
 * (-EACCES) too: a czk-gpud starting up has bound its socket a moment before
 * it gives the socket its group.
 */
int czk_client_rewatch(czk_client *cl, uint64_t job, int limit_s, uint64_t deadline,
                       volatile sig_atomic_t *stop, czk_error *e);

/* the same, and the fds that ride with the record (O_CLOEXEC) in
 * fds[0..*nfds), which the caller closes.  A record must carry exactly the
 * fds its type says (czk_msg_fds: FETCHED two, most types none); one with
 * another number, or with more than maxfds, has every fd closed and is
 * refused with -EBADMSG (*nfds 0), as is any record that does not decode. */
int czk_client_recv_fds(czk_client *cl, czk_msg *m, int *fds, int maxfds, int *nfds, int timeout_ms,
                        czk_error *e);

#endif
