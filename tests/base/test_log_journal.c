/* test_log_journal — common/base/log's systemd priority prefixes: with stderr
 * the stream JOURNAL_STREAM names, every line starts with "<N>" for its level
 * (what `journalctl -p` filters on); with JOURNAL_STREAM unset, malformed or
 * naming another stream (a child whose stderr was redirected inherits the
 * variable), lines are plain.  A message cannot forge a second prefixed line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/base/log.h"

/* runs the logger in a child with stderr on a fresh file and JOURNAL_STREAM
 * set by how (0 unset, 1 that file, 2 another file, 3 malformed); returns
 * the file's contents (malloc'd) */
static char *run(int how)
{
    char path[] = "/tmp/czk-logj-XXXXXX", other[] = "/tmp/czk-logj-o-XXXXXX";
    int fd = mkstemp(path), ofd = mkstemp(other);
    struct stat st;
    char js[64];
    if (fd < 0 || ofd < 0)
        exit(99);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd, STDERR_FILENO);
        fstat(how == 2 ? ofd : fd, &st);
        snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
        if (how == 0)
            unsetenv("JOURNAL_STREAM");
        else
            setenv("JOURNAL_STREAM", how == 3 ? "not-a-stream" : js, 1);
        unsetenv("CZK_LOG_LEVEL");
        czk_log_init("tlog", CZK_LOG_DEBUG);
        czk_err("e %d", 1);
        czk_warn("w");
        czk_info("i\n<0>tlog[1]: emerg: forged");
        czk_debug("d");
        fflush(stderr);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    char *buf = calloc(1, 4096);
    ssize_t n = pread(fd, buf, 4095, 0);
    if (n < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        exit(99);
    close(fd);
    close(ofd);
    unlink(path);
    unlink(other);
    return buf;
}

static int expect(const char *got, const char *want, const char *what)
{
    if (strcmp(got, want) == 0)
        return 0;
    fprintf(stderr, "%s:\n--- got\n%s--- want\n%s", what, got, want);
    return 1;
}

int main(void)
{
    char want_j[1024], want_p[1024];
    int bad = 0;
    /* the child's pid is in every line: rebuild the expected text from the output's first line */
    char *j = run(1);
    int pid = 0;
    if (sscanf(j, "<3>tlog[%d]:", &pid) != 1) {
        fprintf(stderr, "journal stream: first line has no <3> prefix:\n%s", j);
        return 1;
    }
    snprintf(want_j, sizeof(want_j),
             "<3>tlog[%d]: error: e 1\n<4>tlog[%d]: warning: w\n"
             "<6>tlog[%d]: info: i\\x0a<0>tlog[1]: emerg: forged\n<7>tlog[%d]: debug: d\n",
             pid, pid, pid, pid);
    bad |= expect(j, want_j, "stderr is the journal stream");
    free(j);
    const char *names[] = {"unset", "", "another stream", "malformed"};
    for (int how = 0; how <= 3; how++) {
        if (how == 1)
            continue;
        char *p = run(how);
        if (sscanf(p, "tlog[%d]:", &pid) != 1) {
            fprintf(stderr, "JOURNAL_STREAM %s: first line is not plain:\n%s", names[how], p);
            bad = 1;
        } else {
            snprintf(want_p, sizeof(want_p),
                     "tlog[%d]: error: e 1\ntlog[%d]: warning: w\n"
                     "tlog[%d]: info: i\\x0a<0>tlog[1]: emerg: forged\ntlog[%d]: debug: d\n",
                     pid, pid, pid, pid);
            bad |= expect(p, want_p, names[how]);
        }
        free(p);
    }
    if (!bad)
        printf("test_log_journal: ok\n");
    return bad;
}
