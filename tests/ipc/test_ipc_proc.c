/*
 * test_ipc_proc.c — czk_proc_ref (ipc/peer.h), by which czk-gpud decides that
 * a disconnected synth can no longer write a slot.  Both ways of watching (a
 * pidfd, and the /proc start time a kernel without pidfds falls back to) are
 * checked on forked children:
 *  - a running child is alive; once it exits it is not, while it is still an
 *    unreaped zombie (its parent may never reap it), and a reaped pid cannot
 *    be pinned (-ESRCH);
 *  - a child whose leader thread has exited (a zombie leader) but whose
 *    other thread still runs is alive: that thread could still write;
 *  - a zeroed czk_proc_ref is "not pinned": not alive, safe to close.
 * Waits for the kernel's view to change are polled against a generous
 * deadline; no check depends on how fast that happens.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ipc/peer.h"
#include "tutil.h"

/* the same process watched by its start time only */
static czk_proc_ref by_start(const czk_proc_ref *r)
{
    czk_proc_ref s = *r;
    s.pidfd = -1;
    return s;
}

/* the state letter of /proc/<pid>/stat, 0 if unreadable */
static char proc_state(pid_t pid)
{
    char fn[64], buf[512], st = 0;
    const char *p;
    FILE *f;
    size_t n;

    snprintf(fn, sizeof(fn), "/proc/%d/stat", (int)pid);
    if (!(f = fopen(fn, "r")))
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    if ((p = strrchr(buf, ')')))
        sscanf(p + 1, " %c", &st);
    return st;
}

/* poll until the kernel says so, up to 10 s; 1 when it did */
static int eventually_dead(const czk_proc_ref *r)
{
    for (int i = 0; i < 1000; i++) {
        if (!czk_proc_ref_alive(r))
            return 1;
        usleep(10000);
    }
    return 0;
}

static int eventually_zombie(pid_t pid)
{
    for (int i = 0; i < 1000; i++) {
        if (proc_state(pid) == 'Z')
            return 1;
        usleep(10000);
    }
    return 0;
}

static int child_fd = -1;

static void *reader(void *arg)
{
    char c;
    (void)arg;
    while (read(child_fd, &c, 1) < 0 && errno == EINTR)
        ;
    _exit(0); /* the whole process goes once the pipe closes */
    return NULL;
}

/* a child blocked reading a pipe (threaded: on a second thread, its leader
 * gone); closing the write end makes it exit */
static pid_t spawn(int threaded, int *wfd)
{
    int p[2];
    pid_t pid;

    CHECK(pipe(p) == 0);
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        pthread_t th;
        close(p[1]);
        child_fd = p[0];
        if (!threaded)
            reader(NULL);
        if (pthread_create(&th, NULL, reader, NULL) != 0)
            _exit(3);
        pthread_exit(NULL); /* the leader goes; the reader runs on */
    }
    close(p[0]);
    *wfd = p[1];
    return pid;
}

static void test_exit(void)
{
    czk_proc_ref r, s, z;
    int wfd, st;
    pid_t pid = spawn(0, &wfd);

    CHECK_RC(czk_proc_ref_open(&r, pid));
    CHECK(r.pid == pid && r.start != 0, "pinned pid %d, start %llu", (int)r.pid, (unsigned long long)r.start);
    s = by_start(&r);
    CHECK(czk_proc_ref_alive(&r) == 1, "a running child is not alive (pidfd %d)", r.pidfd);
    CHECK(czk_proc_ref_alive(&s) == 1, "a running child is not alive by its start time");
    /* another start time is another process under the same pid */
    s.start++;
    CHECK(czk_proc_ref_alive(&s) == 0, "a process with another start time counts as the pinned one");
    s.start--;
    close(wfd);
    CHECK(eventually_zombie(pid), "the child did not exit");
    CHECK(eventually_dead(&r), "an exited (unreaped) child is still alive by its pidfd");
    CHECK(czk_proc_ref_alive(&s) == 0, "an exited (unreaped) child is still alive by its start time");
    CHECK(waitpid(pid, &st, 0) == pid);
    CHECK(czk_proc_ref_alive(&r) == 0 && czk_proc_ref_alive(&s) == 0, "a reaped child is alive");
    CHECK(czk_proc_ref_open(&z, pid) == -ESRCH, "a reaped pid was pinned");
    CHECK(czk_proc_ref_alive(&z) == 0, "a failed pin is alive");
    czk_proc_ref_close(&z);
    czk_proc_ref_close(&r);
}

static void test_zombie_leader(void)
{
    czk_proc_ref r, s;
    int wfd, st;
    pid_t pid = spawn(1, &wfd);

    CHECK_RC(czk_proc_ref_open(&r, pid));
    s = by_start(&r);
    CHECK(eventually_zombie(pid), "the child's leader thread did not exit");
    CHECK(czk_proc_ref_alive(&r) == 1, "a process whose leader exited but whose thread runs is dead by its pidfd");
    CHECK(czk_proc_ref_alive(&s) == 1, "a process whose leader exited but whose thread runs is dead by its start time");
    close(wfd);
    CHECK(eventually_dead(&r), "the child did not exit when its last thread did");
    CHECK(czk_proc_ref_alive(&s) == 0, "an exited child is alive by its start time");
    CHECK(waitpid(pid, &st, 0) == pid);
    czk_proc_ref_close(&r);
}

int main(void)
{
    czk_proc_ref z;

    t_seed("test_ipc_proc");
    memset(&z, 0, sizeof(z));
    CHECK(czk_proc_ref_alive(&z) == 0, "a zeroed czk_proc_ref is alive");
    czk_proc_ref_close(&z);
    CHECK(czk_proc_ref_open(&z, 0) == -EINVAL, "pid 0 was pinned");
    CHECK(czk_proc_start_time(getpid()) != 0, "no start time for this process");
    test_exit();
    test_zombie_leader();
    printf("process refs: alive while any thread runs, dead once exited (reaped or not), by pidfd and by start "
           "time\n");
    return t_failures ? 1 : 0;
}
