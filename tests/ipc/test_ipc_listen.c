/*
 * test_ipc_listen.c — czk_peer_listen across a daemon restart.
 *
 * A listener that serves its socket from an io_uring loop (a multishot accept
 * armed, as in czk-gpud) keeps answering on it for some milliseconds after
 * the process is gone: the kernel tears the ring down asynchronously.  A
 * successor started at once must still get the socket.  Each round forks a
 * child that listens through the loop and then goes away in one of four ways,
 * chosen at random: it exits and is reaped; it exits and is left a zombie
 * (waitid WNOWAIT) while the successor starts; it is killed with SIGKILL; it
 * exec()s this program, whose new image (same pid) listens on the same path at
 * once.  The parent (or the exec'd image) calls czk_peer_listen right away and
 * must succeed.  The parent also counts the rounds in which the old socket
 * still answered a plain connect() at that moment (the window the fix is
 * about; printed, not asserted, since it depends on timing).
 *
 * Then a live listener (another process, serving from its loop) must keep
 * its socket: a second czk_peer_listen fails at once with -EADDRINUSE and a
 * message naming the listener's pid; once that process is killed the socket
 * can be taken again.  Last, this process listening twice on one path is
 * refused too (its own pid, but a socket it still holds).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"
#include "ipc/loop.h"
#include "ipc/peer.h"
#include "tutil.h"

#define ROUNDS 16
#define SOCK_NAME "gpud.sock"

enum { GO_EXIT, GO_ZOMBIE, GO_KILL, GO_EXEC, GO_LIVE, GO_COUNT };
static const char *const go_names[] = {"exit", "zombie", "kill", "exec", "live"};

static void nop_open(czk_conn *c, void *ctx) { (void)c, (void)ctx; }
static void nop_msg(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx)
{
    (void)c, (void)m, (void)fds, (void)nfds, (void)ctx;
}
static void nop_close(czk_conn *c, int err, const char *why, void *ctx) { (void)c, (void)err, (void)why, (void)ctx; }

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* does anything accept a connection on path right now? */
static int answers(const char *path)
{
    struct sockaddr_un sa;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), r;
    CHECK(fd >= 0);
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    CHECK(snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path) < (int)sizeof(sa.sun_path));
    r = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
    close(fd);
    return r;
}

/* the child: listen, serve from a loop with the accept armed, then go away as told */
static void run_listener(const char *dir, int ready_fd, int how)
{
    czk_loop_config cfg = {.hello_timeout_ms = 500};
    czk_conn_ops ops = {nop_open, nop_msg, nop_close};
    czk_endpoint ep;
    czk_loop *l;
    czk_error e = {0};
    int lfd;

    if (czk_peer_listen(dir, SOCK_NAME, (gid_t)-1, &lfd, &e) < 0) {
        fprintf(stderr, "listener (%s): %s\n", go_names[how], e.msg);
        _exit(10);
    }
    CHECK_RC(czk_loop_create(&l, &cfg, &e));
    czk_peer_hello_init(&ep.hello, CZK_ROLE_GPUD, 0, 0, "test-listener");
    czk_peer_policy_default(&ep.policy);
    CHECK_RC(czk_loop_listen(l, lfd, &ep, &ops, NULL, NULL, &e));
    czk_loop_run_once(l, 0); /* submits the multishot accept */
    CHECK(write(ready_fd, "r", 1) == 1);
    close(ready_fd);
    if (how == GO_EXEC) {
        execl("/proc/self/exe", "test_ipc_listen", "--after-exec", dir, (char *)NULL);
        fprintf(stderr, "exec /proc/self/exe: %s\n", strerror(errno));
        _exit(11);
    }
    if (how == GO_KILL || how == GO_LIVE)
        for (;;)
            czk_loop_run_once(l, 100);
    czk_loop_run_once(l, 1);
    _exit(0); /* the ring (and the socket it accepts on) is torn down after us */
}

static pid_t start_listener(const char *dir, int how)
{
    int p[2];
    char c;
    pid_t pid;

    CHECK(pipe(p) == 0);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        run_listener(dir, p[1], how);
    }
    close(p[1]);
    CHECK(read(p[0], &c, 1) == 1);
    close(p[0]);
    return pid;
}

/* the exec'd image: same pid as the listener it replaced, whose ring may still accept */
static int after_exec(const char *dir)
{
    czk_error e = {0};
    int lfd;

    czk_log_init("test_ipc_listen", CZK_LOG_WARN);
    if (czk_peer_listen(dir, SOCK_NAME, (gid_t)-1, &lfd, &e) < 0) {
        fprintf(stderr, "after exec (pid %d): %s\n", (int)getpid(), e.msg);
        return 1;
    }
    close(lfd);
    return 0;
}

int main(int argc, char **argv)
{
    char dir[] = "/tmp/czk-listen-XXXXXX", path[256], want[320];
    unsigned window = 0, count[GO_COUNT] = {0};
    czk_error e = {0};
    siginfo_t si;
    int lfd, status;
    uint64_t t0, took;
    pid_t pid;

    if (argc == 3 && !strcmp(argv[1], "--after-exec"))
        return after_exec(argv[2]);
    t_seed("test_ipc_listen");
    czk_log_init("test_ipc_listen", CZK_LOG_WARN);
    CHECK(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/%s", dir, SOCK_NAME);

    for (int round = 0; round < ROUNDS; round++) {
        /* every way at least once, then at random */
        int how = round < GO_LIVE ? round : (int)t_range(0, GO_LIVE - 1);
        count[how]++;
        pid = start_listener(dir, how);
        if (how == GO_KILL)
            CHECK(kill(pid, SIGKILL) == 0);
        if (how == GO_EXEC) {
            CHECK(waitpid(pid, &status, 0) == pid);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                fprintf(stderr, "round %d (exec): the exec'd listener could not take the socket (status 0x%x)\n",
                        round, status);
                return 1;
            }
            continue;
        }
        /* wait for the exit; a zombie stays unreaped while the successor starts */
        memset(&si, 0, sizeof(si));
        CHECK(waitid(P_PID, (id_t)pid, &si, WEXITED | (how == GO_ZOMBIE ? WNOWAIT : 0)) == 0);
        CHECK(si.si_pid == pid);
        CHECK(how == GO_KILL ? si.si_code == CLD_KILLED : si.si_code == CLD_EXITED && si.si_status == 0);
        window += answers(path);
        if (czk_peer_listen(dir, SOCK_NAME, (gid_t)-1, &lfd, &e) < 0) {
            fprintf(stderr, "round %d (%s): the successor could not listen: %s\n", round, go_names[how], e.msg);
            return 1;
        }
        close(lfd);
        if (how == GO_ZOMBIE)
            CHECK(waitpid(pid, &status, 0) == pid);
    }
    fprintf(stderr, "rounds: exit %u, zombie %u, kill %u, exec %u; the old socket still answered in %u of %u\n",
            count[GO_EXIT], count[GO_ZOMBIE], count[GO_KILL], count[GO_EXEC], window,
            count[GO_EXIT] + count[GO_ZOMBIE] + count[GO_KILL]);

    /* a live listener keeps its socket, and the refusal says who holds it */
    pid = start_listener(dir, GO_LIVE);
    t0 = now_us();
    CHECK(czk_peer_listen(dir, SOCK_NAME, (gid_t)-1, &lfd, &e) == -EADDRINUSE);
    took = now_us() - t0;
    snprintf(want, sizeof(want), "socket \"%s\" is in use by a running process (pid %d)", path, (int)pid);
    if (!strstr(e.msg, want)) {
        fprintf(stderr, "live listener: message \"%s\", expected it to contain \"%s\"\n", e.msg, want);
        return 1;
    }
    fprintf(stderr, "live listener refused in %llu us: %s\n", (unsigned long long)took, e.msg);
    CHECK(took < 150000); /* a running pid is answer enough: no waiting */
    CHECK(answers(path));  /* and the refusal left its socket alone */
    CHECK(kill(pid, SIGKILL) == 0);
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_RC(czk_peer_listen(dir, SOCK_NAME, (gid_t)-1, &lfd, &e));

    /* our own pid on a socket we still listen on is no leftover of an exec() */
    {
        int lfd2;
        CHECK(czk_peer_listen(dir, SOCK_NAME, (gid_t)-1, &lfd2, &e) == -EADDRINUSE);
        CHECK(answers(path));
    }
    close(lfd);

    unlink(path);
    rmdir(dir);
    fprintf(stderr, "test_ipc_listen: ok\n");
    return 0;
}
