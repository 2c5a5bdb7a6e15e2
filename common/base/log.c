/* log.c — stderr logging with program name and pid (see log.h). */
#include "common/base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *log_prog = "czk";
static int log_level = CZK_LOG_INFO;

void czk_log_init(const char *prog, int level)
{
    const char *env = getenv("CZK_LOG_LEVEL");
    log_prog = prog;
    log_level = env ? atoi(env) : level;
}

void czk_log(int level, const char *fmt, ...)
{
    static const char *names[8] = {"emerg", "alert", "crit", "error", "warning", "notice", "info", "debug"};
    char line[1024];
    va_list ap;
    int n;

    if (level > log_level)
        return;
    n = snprintf(line, sizeof(line), "%s[%d]: %s: ", log_prog, (int)getpid(), names[level & 7]);
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", line);
}
