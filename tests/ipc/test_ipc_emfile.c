/*
 * test_ipc_emfile.c — a listener out of file descriptors backs off instead of
 * spinning, and the peers it cannot serve are told "busy" at once.
 *
 * The serving loop runs in this process under a soft RLIMIT_NOFILE a few fds
 * above what it already uses; a child (its own fd table, its limit raised
 * again) opens CLIENTS connections and sends HELLO on each.  Every client must
 * get an answer: HELLO (served) or ERROR -EBUSY (refused through the reserve
 * fd), none left hanging.  The number of failed accepts while the loop runs
 * for a while stays small (an accept re-armed at once fails millions of
 * times a second), and once fds are free again a new client is served.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/base/log.h"
#include "ipc/loop.h"
#include "ipc/peer.h"
#include "tutil.h"

#define CLIENTS 40
#define WAVE2 5
#define HEADROOM 6 /* fds above what the server uses at the start */

static int opened, closed;
static void s_open(czk_conn *c, void *ctx) { opened++; }
static void s_msg(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx) {}
static void s_close(czk_conn *c, int err, const char *why, void *ctx) { closed++; }

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    CHECK(d);
    while (readdir(d))
        n++;
    closedir(d);
    return n - 3; /* ".", ".." and the directory itself */
}

/* child: CLIENTS connections; writes "served busy" to res_fd, exits 0 when every client had an answer */
static void clients(const char *path, int go_fd, int res_fd)
{
    static uint8_t buf[CZK_MSG_MAX_RECORD];
    struct rlimit rl;
    int fds[CLIENTS], served = 0, busy = 0;
    char x;

    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    rl.rlim_cur = rl.rlim_max;
    CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    CHECK(read(go_fd, &x, 1) == 1);
    for (int i = 0; i < CLIENTS; i++) {
        czk_error e = {0};
        czk_msg h;
        CHECK_RC(czk_peer_connect(path, &fds[i], &e));
        h.type = CZK_MSG_HELLO;
        czk_peer_hello_init(&h.u.hello, CZK_ROLE_CLIENT, -1, 0, "emfile");
        (void)czk_peer_send(fds[i], &h, NULL, 0, &e); /* a refused one may be gone already */
    }
    for (int i = 0; i < CLIENTS; i++) {
        czk_error e = {0};
        czk_msg m;
        int r = czk_peer_recv(fds[i], buf, sizeof(buf), &m, NULL, NULL, 20000, &e);
        if (r == 0 && m.type == CZK_MSG_HELLO)
            served++;
        else if (r == 0 && m.type == CZK_MSG_ERROR && m.u.error.code == -EBUSY &&
                 strstr(m.u.error.message, "no file descriptor"))
            busy++;
        else
            fprintf(stderr, "client %d: no answer (%d %s)\n", i, r, r ? e.msg : czk_msg_type_name(m.type));
    }
    /* a second wave while the served ones still hold the server's fds: the
     * retries fail again, in the same episode, and refuse these too */
    {
        int busy2 = 0;
        for (int i = 0; i < WAVE2; i++) {
            czk_error e = {0};
            czk_msg m;
            int fd;
            CHECK_RC(czk_peer_connect(path, &fd, &e));
            m.type = CZK_MSG_HELLO;
            czk_peer_hello_init(&m.u.hello, CZK_ROLE_CLIENT, -1, 0, "emfile-2");
            (void)czk_peer_send(fd, &m, NULL, 0, &e);
            if (czk_peer_recv(fd, buf, sizeof(buf), &m, NULL, NULL, 20000, &e) == 0 && m.type == CZK_MSG_ERROR &&
                m.u.error.code == -EBUSY)
                busy2++;
            close(fd);
        }
        dprintf(res_fd, "%d %d %d\n", served, busy, busy2);
    }
    _exit(served + busy == CLIENTS ? 0 : 1);
}

int main(void)
{
    char dir[] = "/tmp/czk-emfile-XXXXXX", path[300];
    czk_loop_config cfg = {.hello_timeout_ms = 30000};
    czk_conn_ops ops = {s_open, s_msg, s_close};
    czk_endpoint ep;
    czk_error e = {0};
    czk_loop_stats st, st_mid;
    struct rlimit rl, low;
    czk_loop *l;
    int lfd, go[2], res[2], status = 0, served = -1, busy = -1, busy2 = -1, fd;
    char line[64] = "";
    FILE *rf;
    pid_t pid;

    czk_log_init("test_ipc_emfile", CZK_LOG_WARN);
    signal(SIGPIPE, SIG_IGN);
    CHECK(mkdtemp(dir));
    CHECK_RC(czk_loop_create(&l, &cfg, &e));
    memset(&ep, 0, sizeof(ep));
    czk_peer_hello_init(&ep.hello, CZK_ROLE_GPUD, -1, 0, "czk-gpud");
    czk_peer_policy_default(&ep.policy);
    ep.policy.roles_mask = CZK_ROLE_BIT(CZK_ROLE_CLIENT);
    CHECK_RC(czk_peer_listen(dir, "czk.sock", (gid_t)-1, &lfd, &e));
    CHECK_RC(czk_loop_listen(l, lfd, &ep, &ops, NULL, NULL, &e));
    snprintf(path, sizeof(path), "%s/czk.sock", dir);
    CHECK(pipe(go) == 0 && pipe(res) == 0);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(go[1]);
        close(res[0]);
        clients(path, go[0], res[1]);
    }
    close(go[0]);
    close(res[1]);
    /* before the accept is first submitted: io_uring reads the limit when it
     * prepares the (multishot) accept */
    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    low = rl;
    low.rlim_cur = (rlim_t)(open_fds() + HEADROOM);
    fprintf(stderr, "serving with RLIMIT_NOFILE %llu (%d fds open)\n", (unsigned long long)low.rlim_cur, open_fds());
    CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0);
    CHECK(write(go[1], "g", 1) == 1);
    close(go[1]);
    /* serve until every client has its answer */
    for (int i = 0; i < 6000 && waitpid(pid, &status, WNOHANG) == 0; i++)
        czk_loop_run_once(l, 5);
    CHECK((rf = fdopen(res[0], "r")) && fgets(line, sizeof(line), rf) && sscanf(line, "%d %d %d", &served, &busy, &busy2) == 3);
    fclose(rf);
    czk_loop_get_stats(l, &st_mid);
    fprintf(stderr, "clients: %d served, %d told busy, then %d of %d busy; %llu failed accepts in %llu episodes, "
            "%llu refused\n", served, busy, busy2, WAVE2, (unsigned long long)st_mid.accept_errors, (unsigned long long)st_mid.accept_pauses,
            (unsigned long long)st_mid.refused);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(served >= 1 && busy >= 1 && served + busy == CLIENTS);
    CHECK(busy2 == WAVE2);
    CHECK(st_mid.accept_pauses == 1 && st_mid.accept_errors >= 2 && st_mid.refused == (uint64_t)(busy + busy2));

    /* the child is gone, its served connections with it: fds come back */
    for (int i = 0; i < 2000 && closed < served; i++)
        czk_loop_run_once(l, 5);
    CHECK(closed == served);
    /* keep the loop turning for a while with nothing to accept: no spinning
     * (each retry costs at most one failed accept; 200 rounds of 5 ms) */
    for (int i = 0; i < 200; i++)
        czk_loop_run_once(l, 5);
    czk_loop_get_stats(l, &st);
    fprintf(stderr, "after: %llu failed accepts, %llu loop wake-ups\n", (unsigned long long)st.accept_errors,
            (unsigned long long)st.wakeups);
    CHECK(st.accept_errors <= st_mid.accept_errors + 2);
    CHECK(st.accept_errors < 200); /* a spin fails millions of times */

    /* a new client is served again (the retry timer re-armed the accept) */
    CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    CHECK_RC(czk_peer_connect(path, &fd, &e));
    {
        static uint8_t buf[CZK_MSG_MAX_RECORD];
        czk_msg h;
        int r = -ETIMEDOUT;
        h.type = CZK_MSG_HELLO;
        czk_peer_hello_init(&h.u.hello, CZK_ROLE_CLIENT, -1, 0, "after");
        CHECK_RC(czk_peer_send(fd, &h, NULL, 0, &e));
        for (int i = 0; i < 2000 && r == -ETIMEDOUT; i++) {
            czk_loop_run_once(l, 5);
            r = czk_peer_recv(fd, buf, sizeof(buf), &h, NULL, NULL, 0, &e);
        }
        CHECK(r == 0 && h.type == CZK_MSG_HELLO);
    }
    close(fd);
    czk_loop_destroy(l);
    unlink(path);
    rmdir(dir);
    fprintf(stderr, "test_ipc_emfile: ok\n");
    return 0;
}
