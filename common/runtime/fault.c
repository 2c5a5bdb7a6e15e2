/*
 * fault.c — the run-time side of fault.h: parses CZK_FAULT once and fires the
 * named points.  Hit counters are atomics, so points may sit on any thread.
 */
#include "common/runtime/fault.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/base/log.h"

#define FAULT_MAX 16

enum { ACT_EXIT, ACT_ABORT, ACT_KILL, ACT_SLEEP, ACT_FAIL };

typedef struct fault_spec {
    char name[64];
    int action;
    long arg;        /* sleep ms */
    unsigned long at; /* fire on this hit only (0: every hit) */
    unsigned long hits;
} fault_spec;

static fault_spec specs[FAULT_MAX];
static int n_specs;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void parse_one(char *item)
{
    char *colon = strchr(item, ':'), *at, *act;
    fault_spec *f;

    if (!colon || colon == item || n_specs == FAULT_MAX)
        return;
    *colon = 0;
    act = colon + 1;
    f = &specs[n_specs];
    memset(f, 0, sizeof(*f));
    if (strlen(item) >= sizeof(f->name))
        return;
    strcpy(f->name, item);
    if ((at = strchr(act, '@'))) {
        *at = 0;
        f->at = strtoul(at + 1, NULL, 10);
    }
    if (!strcmp(act, "exit"))
        f->action = ACT_EXIT;
    else if (!strcmp(act, "abort"))
        f->action = ACT_ABORT;
    else if (!strcmp(act, "kill"))
        f->action = ACT_KILL;
    else if (!strcmp(act, "fail"))
        f->action = ACT_FAIL;
    else if (!strncmp(act, "sleep=", 6)) {
        f->action = ACT_SLEEP;
        f->arg = strtol(act + 6, NULL, 10);
    } else {
        czk_warn("CZK_FAULT: unknown action \"%s\" for point \"%s\": ignored", act, item);
        return;
    }
    n_specs++;
}

static void parse_env(void)
{
    const char *env = getenv("CZK_FAULT");
    char buf[1024], *save = NULL, *tok;

    if (!env || !*env || strlen(env) >= sizeof(buf))
        return;
    strcpy(buf, env);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
        parse_one(tok);
}

int czk_fault_point(const char *name)
{
    pthread_once(&once, parse_env);
    for (int i = 0; i < n_specs; i++) {
        fault_spec *f = &specs[i];
        unsigned long hit;

        if (strcmp(f->name, name))
            continue;
        hit = __atomic_add_fetch(&f->hits, 1, __ATOMIC_RELAXED);
        if (f->at && hit != f->at)
            continue;
        switch (f->action) {
        case ACT_EXIT:
            czk_warn("fault point %s: exiting (CZK_FAULT)", name);
            _exit(99);
        case ACT_ABORT:
            czk_warn("fault point %s: aborting (CZK_FAULT)", name);
            abort();
        case ACT_KILL:
            czk_warn("fault point %s: SIGKILL (CZK_FAULT)", name);
            raise(SIGKILL);
            _exit(99);
        case ACT_SLEEP: {
            struct timespec ts = {f->arg / 1000, (f->arg % 1000) * 1000000L};
            czk_warn("fault point %s: sleeping %ld ms (CZK_FAULT)", name, f->arg);
            while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
            break;
        }
        case ACT_FAIL:
            czk_warn("fault point %s: failing this step (CZK_FAULT)", name);
            return -EIO;
        }
    }
    return 0;
}
