/*
 * peer.c — SEQPACKET endpoints, SO_PEERCRED policy, HELLO checks and blocking
 * record I/O (see peer.h).
 */
#include "ipc/peer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"

#ifndef SO_PEERGROUPS
#define SO_PEERGROUPS 59
#endif

void czk_peer_policy_default(czk_peer_policy *p)
{
    p->uid = geteuid();
    p->gid = (gid_t)-1;
    p->allow_root = 1;
    p->roles_mask = 0;
}

const char *czk_peer_runtime_dir(void)
{
    const char *d = getenv("RUNTIME_DIRECTORY");
    if (d && *d) {
        /* systemd may list several, separated by ':'; use the first */
        static char first[256];
        snprintf(first, sizeof(first), "%s", d);
        char *c = strchr(first, ':');
        if (c)
            *c = 0;
        return first;
    }
    d = getenv("CZK_RUNTIME_DIR");
    return d && *d ? d : CZK_RUNTIME_DIR_DEFAULT;
}

static int make_addr(struct sockaddr_un *sa, const char *path, czk_error *err)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    if (strlen(path) >= sizeof(sa->sun_path))
        return czk_errorf(err, -ENAMETOOLONG, "socket path \"%s\" is longer than %zu bytes", path,
                          sizeof(sa->sun_path) - 1);
    memcpy(sa->sun_path, path, strlen(path));
    return 0;
}

/*
 * Is a socket file that refused bind() (EADDRINUSE) still served?
 *
 * Connecting to it is not enough: a daemon that exits with a multishot
 * accept armed in its io_uring keeps its listening socket alive (and
 * accepting) until the kernel has torn the ring down, asynchronously, some
 * milliseconds after the process is gone — a daemon restarted inside that
 * window would refuse to start.  So when the probe connects, SO_PEERCRED
 * names the process that called listen(), and the socket counts as stale
 * when that process is gone, a zombie, or already exiting (PF_EXITING), or is
 * this very process without a listening socket on the path (what an exec()
 * leaves behind).  czk's daemons listen in the process that serves the
 * socket (no hand-over to a child), which is what makes the pid meaningful.
 * When the pid says nothing (0: a listener in a pid namespace we cannot see;
 * /proc unreadable; a zombie thread-group leader whose other threads still
 * run) the probe is repeated for up to STALE_PROBE_MS before the socket is
 * declared in use.
 */
#define STALE_PROBE_MS 200
#define STALE_PROBE_STEP_MS 10
#define PF_EXITING_FLAG 0x00000004u /* include/linux/sched.h: getting shut down */

enum { LISTENER_GONE, LISTENER_RUNNING, LISTENER_UNKNOWN };

/* does this process hold a listening socket bound to path? 1, 0, or -1 (cannot tell) */
static int self_listens_on(const char *path)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *de;
    int found = 0;

    if (!d)
        return -1;
    while ((de = readdir(d)) && !found) {
        struct sockaddr_un sa;
        socklen_t len = sizeof(sa);
        int fd, acc = 0;
        socklen_t alen = sizeof(acc);
        char *end;

        fd = (int)strtol(de->d_name, &end, 10);
        if (de->d_name[0] == '.' || *end || fd == dirfd(d))
            continue;
        memset(&sa, 0, sizeof(sa));
        if (getsockname(fd, (struct sockaddr *)&sa, &len) < 0 || sa.sun_family != AF_UNIX)
            continue;
        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &alen) < 0 || !acc)
            continue;
        found = len > offsetof(struct sockaddr_un, sun_path) && sa.sun_path[0] &&
                !strncmp(sa.sun_path, path, sizeof(sa.sun_path));
    }
    closedir(d);
    return found;
}

/* state (field 3), flags (field 9) and start time (field 22) from
 * /proc/<pid>/stat: 0, or -ESRCH when there is no such process, or another
 * -errno (-EPROTO: unreadable) */
static int proc_stat(pid_t pid, char *state, unsigned long *flags, uint64_t *start)
{
    char fn[64], buf[1024];
    unsigned long long st = 0;
    const char *p;
    ssize_t n;
    int fd;

    snprintf(fn, sizeof(fn), "/proc/%d/stat", (int)pid);
    if ((fd = open(fn, O_RDONLY | O_CLOEXEC)) < 0)
        return errno == ENOENT || errno == ESRCH ? -ESRCH : -errno;
    n = read(fd, buf, sizeof(buf) - 1);
    if (n < 0) {
        int e = errno;
        close(fd);
        return e == ESRCH ? -ESRCH : -e;
    }
    close(fd);
    buf[n] = 0;
    /* "pid (comm) state ppid pgrp session tty_nr tpgid flags ...": comm may
     * hold ')'; field 22 is the 20th after it */
    if (!(p = strrchr(buf, ')')) ||
        sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu", state,
               flags, &st) != 3)
        return -EPROTO;
    *start = st;
    return 0;
}

/* a zombie thread-group leader: 1 while other threads of it still run, 0
 * when none does, -1 when that cannot be told */
static int zombie_has_threads(pid_t pid)
{
    char fn[64];
    struct dirent *de;
    DIR *d;
    int tasks = 0;

    snprintf(fn, sizeof(fn), "/proc/%d/task", (int)pid);
    if (!(d = opendir(fn)))
        return errno == ENOENT ? 0 : -1;
    while ((de = readdir(d)))
        tasks += de->d_name[0] != '.';
    closedir(d);
    return tasks > 1;
}

/* what is left of the process that called listen() on the socket at path */
static int listener_state(pid_t pid, const char *path)
{
    char state;
    unsigned long flags;
    uint64_t start;
    int r;

    if (pid <= 0)
        return LISTENER_UNKNOWN;
    if (pid == getpid()) {
        r = self_listens_on(path);
        return r < 0 ? LISTENER_UNKNOWN : r ? LISTENER_RUNNING : LISTENER_GONE;
    }
    if (kill(pid, 0) < 0 && errno == ESRCH)
        return LISTENER_GONE;
    if ((r = proc_stat(pid, &state, &flags, &start)) < 0)
        return r == -ESRCH ? LISTENER_GONE : LISTENER_UNKNOWN;
    if (state == 'X' || state == 'x' || (flags & PF_EXITING_FLAG))
        return LISTENER_GONE;
    if (state == 'Z') /* a zombie leader: gone unless other threads of it still run */
        return zombie_has_threads(pid) == 0 ? LISTENER_GONE : LISTENER_UNKNOWN;
    return LISTENER_RUNNING;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* 0: stale (nobody serves it); 1: in use, *pid_out = the listener's pid (0 if unknown) */
static int socket_in_use(const struct sockaddr_un *sa, const char *path, pid_t *pid_out)
{
    uint64_t deadline = mono_ms() + STALE_PROBE_MS;

    for (;;) {
        int probe = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), state;
        struct ucred uc = {0};
        socklen_t len = sizeof(uc);

        if (probe < 0) { /* cannot tell: do not remove what may be a live socket */
            *pid_out = 0;
            return 1;
        }
        if (connect(probe, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
            close(probe);
            return 0;
        }
        if (getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
            uc.pid = 0;
        close(probe);
        *pid_out = uc.pid;
        state = listener_state(uc.pid, path);
        if (state == LISTENER_GONE) {
            czk_info("socket \"%s\" still answers, but its listener pid %d is gone: stale", path, (int)uc.pid);
            return 0;
        }
        if (state == LISTENER_RUNNING || mono_ms() >= deadline)
            return 1;
        usleep(STALE_PROBE_STEP_MS * 1000);
    }
}

int czk_peer_listen(const char *dir, const char *name, gid_t group, int *fd_out, czk_error *err)
{
    struct sockaddr_un sa;
    char path[sizeof(sa.sun_path) + 64];
    int fd, r;

    if (mkdir(dir, 0750) < 0 && errno != EEXIST)
        return czk_errorf(err, -errno, "could not create runtime directory \"%s\": %s", dir, strerror(errno));
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    if ((r = make_addr(&sa, path, err)) < 0)
        return r;
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return czk_errorf(err, -errno, "could not create socket: %s", strerror(errno));
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        pid_t pid = 0;
        if (errno != EADDRINUSE)
            goto bind_fail;
        if (socket_in_use(&sa, path, &pid)) {
            close(fd);
            if (pid > 0)
                return czk_errorf(err, -EADDRINUSE,
                                  "socket \"%s\" is in use by a running process (pid %d): is another instance "
                                  "running?",
                                  path, (int)pid);
            return czk_errorf(err, -EADDRINUSE,
                              "socket \"%s\" is in use by a running process (it still answered after %d ms): is "
                              "another instance running?",
                              path, STALE_PROBE_MS);
        }
        czk_info("removing stale socket \"%s\"", path);
        unlink(path);
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
            goto bind_fail;
    }
    if (chmod(path, 0660) < 0) {
        r = czk_errorf(err, -errno, "could not set mode 0660 on \"%s\": %s", path, strerror(errno));
        goto fail;
    }
    if (group != (gid_t)-1 && chown(path, (uid_t)-1, group) < 0) {
        r = czk_errorf(err, -errno, "could not set group %u on \"%s\": %s", (unsigned)group, path, strerror(errno));
        goto fail;
    }
    if (listen(fd, 128) < 0) {
        r = czk_errorf(err, -errno, "could not listen on \"%s\": %s", path, strerror(errno));
        goto fail;
    }
    *fd_out = fd;
    return 0;
bind_fail:
    r = czk_errorf(err, -errno, "could not bind \"%s\": %s", path, strerror(errno));
fail:
    close(fd);
    return r;
}

int czk_peer_connect(const char *path, int *fd_out, czk_error *err)
{
    struct sockaddr_un sa;
    int fd, r;

    if ((r = make_addr(&sa, path, err)) < 0)
        return r;
    fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return czk_errorf(err, -errno, "could not create socket: %s", strerror(errno));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        r = czk_errorf(err, -errno, "could not connect to \"%s\": %s", path, strerror(errno));
        close(fd);
        return r;
    }
    *fd_out = fd;
    return 0;
}

int czk_peer_get_cred(int fd, czk_peer_cred *c, czk_error *err)
{
    struct ucred uc;
    socklen_t len = sizeof(uc);

    memset(c, 0, sizeof(*c));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) < 0)
        return czk_errorf(err, -errno, "could not read SO_PEERCRED: %s", strerror(errno));
    c->pid = uc.pid;
    c->uid = uc.uid;
    c->gid = uc.gid;
    len = sizeof(c->groups);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, c->groups, &len) == 0)
        c->ngroups = (int)(len / sizeof(gid_t));
    else
        c->ngroups = 0; /* more than 64 groups or an old kernel: primary group only */
    return 0;
}

int czk_peer_check_cred(const czk_peer_policy *p, const czk_peer_cred *c, czk_error *err)
{
    if (c->uid == p->uid)
        return 0;
    if (p->allow_root && c->uid == 0)
        return 0;
    if (p->gid != (gid_t)-1) {
        if (c->gid == p->gid)
            return 0;
        for (int i = 0; i < c->ngroups; i++)
            if (c->groups[i] == p->gid)
                return 0;
    }
    return czk_errorf(err, -EACCES, "peer pid %d uid %u gid %u is not allowed (need uid %u%s)", (int)c->pid,
                      (unsigned)c->uid, (unsigned)c->gid, (unsigned)p->uid,
                      p->gid != (gid_t)-1 ? " or the configured group" : "");
}

int czk_peer_check_hello(const czk_peer_policy *p, const czk_peer_cred *c, const czk_msg_hello *h, czk_error *err)
{
    if (h->proto != CZK_PROTO_VERSION)
        return czk_errorf(err, -EPROTO, "peer pid %u speaks protocol %u, this build speaks %u", h->pid, h->proto,
                          CZK_PROTO_VERSION);
    if (p->roles_mask && !(p->roles_mask & CZK_ROLE_BIT(h->role)))
        return czk_errorf(err, -EACCES, "peer pid %u claims role %s, which may not connect here", h->pid,
                          czk_role_name(h->role));
    /* SO_PEERCRED of a socketpair() names the process that created it: when
     * that is us, the peer is a child we forked and the pid cannot be checked */
    if (c && c->pid > 0 && c->pid != getpid() && (pid_t)h->pid != c->pid)
        return czk_errorf(err, -EACCES, "peer says pid %u in HELLO but the kernel reports pid %d", h->pid,
                          (int)c->pid);
    return 0;
}

void czk_peer_hello_init(czk_msg_hello *h, uint32_t role, int numa_node, uint32_t instance, const char *name)
{
    memset(h, 0, sizeof(*h));
    h->role = role;
    h->pid = (uint32_t)getpid();
    h->proto = CZK_PROTO_VERSION;
    h->numa_node = numa_node;
    h->instance = instance;
    if (name)
        snprintf(h->name, sizeof(h->name), "%s", name);
}

int czk_peer_send_raw(int fd, const void *rec, size_t len, const int *fds, int nfds, czk_error *err)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * CZK_MSG_MAX_FDS)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {(void *)rec, len};
    struct msghdr mh;
    ssize_t n;

    if (nfds < 0 || nfds > CZK_MSG_MAX_FDS)
        return czk_errorf(err, -EINVAL, "cannot send %d fds in one record (at most %d)", nfds, CZK_MSG_MAX_FDS);
    memset(&mh, 0, sizeof(mh));
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (nfds > 0) {
        struct cmsghdr *cm;
        memset(&ctl, 0, sizeof(ctl));
        mh.msg_control = ctl.buf;
        mh.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
        cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
        memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
    }
    do
        n = sendmsg(fd, &mh, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return czk_errorf(err, errno == EPIPE ? -ECONNRESET : -errno, "could not send record: %s", strerror(errno));
    return 0;
}

int czk_peer_send(int fd, const czk_msg *m, const int *fds, int nfds, czk_error *err)
{
    uint8_t buf[CZK_MSG_MAX_RECORD];
    int n = czk_msg_encode(buf, sizeof(buf), m, err);
    if (n < 0)
        return n;
    return czk_peer_send_raw(fd, buf, (size_t)n, fds, nfds, err);
}

int czk_peer_recv(int fd, uint8_t *buf, size_t cap, czk_msg *m, int *fds, int *nfds, int timeout_ms, czk_error *err)
{
    union {
        char buf[CMSG_SPACE(sizeof(int) * CZK_MSG_MAX_FDS)];
        struct cmsghdr align;
    } ctl;
    struct iovec iov = {buf, cap};
    struct msghdr mh;
    struct cmsghdr *cm;
    int fcap = nfds ? *nfds : 0, got = 0, r;
    ssize_t n;

    if (nfds)
        *nfds = 0;
    if (timeout_ms >= 0) {
        struct pollfd pfd = {fd, POLLIN, 0};
        do
            r = poll(&pfd, 1, timeout_ms);
        while (r < 0 && errno == EINTR);
        if (r < 0)
            return czk_errorf(err, -errno, "poll: %s", strerror(errno));
        if (r == 0)
            return czk_errorf(err, -ETIMEDOUT, "no record within %d ms", timeout_ms);
    }
    memset(&mh, 0, sizeof(mh));
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.buf;
    mh.msg_controllen = sizeof(ctl.buf);
    do
        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return czk_errorf(err, -errno, "could not receive record: %s", strerror(errno));
    for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
            int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            int *p = (int *)CMSG_DATA(cm);
            for (int i = 0; i < k; i++) {
                if (got < fcap) {
                    fds[got++] = p[i];
                } else {
                    close(p[i]); /* more fds than the caller can take: an error */
                    mh.msg_flags |= MSG_CTRUNC;
                }
            }
        }
    }
    if (nfds)
        *nfds = got;
    if (n == 0 && got == 0)
        return czk_errorf(err, -ECONNRESET, "peer closed the connection");
    r = 0;
    if (mh.msg_flags & MSG_TRUNC)
        r = czk_errorf(err, -EBADMSG, "record larger than %zu bytes", cap);
    else if (mh.msg_flags & MSG_CTRUNC)
        r = czk_errorf(err, -EBADMSG, "file descriptors of the record were truncated");
    else if (m)
        r = czk_msg_decode(buf, (size_t)n, m, err);
    if (r < 0) {
        for (int i = 0; i < got; i++)
            close(fds[i]);
        if (nfds)
            *nfds = 0;
    }
    return r;
}

int czk_peer_handshake(int fd, const czk_msg_hello *mine, const czk_peer_policy *p, czk_msg_hello *theirs,
                       int timeout_ms, czk_error *err)
{
    uint8_t buf[CZK_MSG_MAX_RECORD];
    czk_peer_cred cred;
    czk_msg m;
    int r;

    if ((r = czk_peer_get_cred(fd, &cred, err)) < 0)
        return r;
    if ((r = czk_peer_check_cred(p, &cred, err)) < 0)
        return r;
    m.type = CZK_MSG_HELLO;
    m.u.hello = *mine;
    if ((r = czk_peer_send(fd, &m, NULL, 0, err)) < 0) {
        /* a busy server may have answered with an ERROR and closed before our
         * HELLO arrived: its reason is still readable */
        czk_error e2 = {0};
        if (r == -ECONNRESET && czk_peer_recv(fd, buf, sizeof(buf), &m, NULL, NULL, 0, &e2) == 0 &&
            m.type == CZK_MSG_ERROR)
            return czk_errorf(err, m.u.error.code, "peer refused the handshake: %s", m.u.error.message);
        return r;
    }
    if ((r = czk_peer_recv(fd, buf, sizeof(buf), &m, NULL, NULL, timeout_ms, err)) < 0)
        return r;
    if (m.type == CZK_MSG_ERROR)
        return czk_errorf(err, m.u.error.code, "peer refused the handshake: %s", m.u.error.message);
    if (m.type != CZK_MSG_HELLO)
        return czk_errorf(err, -EPROTO, "expected HELLO, got %s", czk_msg_type_name(m.type));
    if ((r = czk_peer_check_hello(p, &cred, &m.u.hello, err)) < 0)
        return r;
    *theirs = m.u.hello;
    return 0;
}

/* ------------------------------------------------------ process refs --- */

uint64_t czk_proc_start_time(pid_t pid)
{
    char state;
    unsigned long flags;
    uint64_t st = 0;
    return proc_stat(pid, &state, &flags, &st) == 0 ? st : 0;
}

/* the /proc view: 1 running, 0 exited (or another process under that pid) */
static int proc_alive_by_stat(pid_t pid, uint64_t start)
{
    char state;
    unsigned long flags;
    uint64_t st = 0;
    int r = proc_stat(pid, &state, &flags, &st);

    if (r == -ESRCH || (r == 0 && st != start))
        return 0;
    if (r < 0)
        return 1; /* cannot tell */
    if (state == 'X' || state == 'x')
        return 0;
    if (state != 'Z')
        return 1;
    return zombie_has_threads(pid) != 0; /* a zombie leader: exited unless other threads of it still run */
}

int czk_proc_ref_open(czk_proc_ref *r, pid_t pid)
{
    char state;
    unsigned long flags;
    int fd = -1, e = 0, sr;

    memset(r, 0, sizeof(*r));
    r->pidfd = -1;
    if (pid <= 0)
        return -EINVAL;
#ifdef SYS_pidfd_open
    fd = (int)syscall(SYS_pidfd_open, pid, 0);
    e = fd < 0 ? errno : 0;
    if (fd < 0 && e == ESRCH)
        return -ESRCH;
#else
    e = ENOSYS;
#endif
    sr = proc_stat(pid, &state, &flags, &r->start);
    if (fd >= 0) {
        /* the pidfd (close-on-exec) is the authority; the start time only
         * serves the caller */
        r->pid = pid;
        r->pidfd = fd;
        return 0;
    }
    if (sr == -ESRCH)
        return -ESRCH;
    if (sr < 0 || r->start == 0) {
        r->start = 0;
        return -(e ? e : sr < 0 ? -sr : EPROTO);
    }
    r->pid = pid;
    if (!proc_alive_by_stat(pid, r->start)) {
        r->pid = 0;
        return -ESRCH;
    }
    return 0;
}

int czk_proc_ref_alive(const czk_proc_ref *r)
{
    struct pollfd pf;

    if (r->pid <= 0)
        return 0;
    if (r->pidfd < 0)
        return proc_alive_by_stat(r->pid, r->start);
    /* a pidfd polls readable once every thread of the process has exited */
    pf.fd = r->pidfd;
    pf.events = POLLIN;
    pf.revents = 0;
    if (poll(&pf, 1, 0) < 0)
        return 1; /* cannot tell */
    return !(pf.revents & (POLLIN | POLLHUP | POLLERR));
}

void czk_proc_ref_close(czk_proc_ref *r)
{
    if (r->pid > 0 && r->pidfd >= 0)
        close(r->pidfd);
    memset(r, 0, sizeof(*r));
    r->pidfd = -1;
}
