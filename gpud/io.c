/*
 * io.c — czk-gpud's seam to the outside world (a leaf: it calls no other gpud
 * module).  Every message gpud sends, every question about a connection's
 * state and every clock reading of the scheduling logic goes through g->io,
 * so the unit tests (tests/gpud/) can run that logic without sockets, threads
 * or sleeps.  Also the scheduler's dirty flag: one czk_loop_task per loop turn.
 * Loop thread only.
 */
#include "common/base/clock.h"
#include "gpud/gpud.h"

static int real_send(void *ctx, czk_conn *c, const czk_msg *m, const int *fds, int nfds)
{
    (void)ctx;
    return czk_conn_send(c, m, fds, nfds);
}

static int real_is_open(void *ctx, const czk_conn *c)
{
    (void)ctx;
    return czk_conn_is_open(c);
}

static unsigned real_queued(void *ctx, const czk_conn *c)
{
    (void)ctx;
    return czk_conn_queued(c);
}

static size_t real_unread(void *ctx, const czk_conn *c)
{
    (void)ctx;
    return czk_conn_unread(c);
}

static uint64_t real_now(void *ctx)
{
    (void)ctx;
    return czk_mono_ns();
}

static void real_watching(void *ctx, czk_conn *c, int on)
{
    (void)ctx;
    czk_conn_set_idle_exempt(c, on);
}

const gpud_io gpud_io_default = {
    .send = real_send,
    .is_open = real_is_open,
    .queued = real_queued,
    .unread = real_unread,
    .kick = NULL,
    .now = real_now,
    .watching = real_watching,
    .ctx = NULL,
};

static const gpud_io *io(const gpud *g)
{
    return g->io ? g->io : &gpud_io_default;
}

int gpud_send(gpud *g, czk_conn *c, const czk_msg *m, const int *fds, int nfds)
{
    return io(g)->send(io(g)->ctx, c, m, fds, nfds);
}

int gpud_conn_open(gpud *g, const czk_conn *c)
{
    return c && io(g)->is_open(io(g)->ctx, c);
}

unsigned gpud_conn_queued(gpud *g, const czk_conn *c)
{
    return io(g)->queued(io(g)->ctx, c);
}

size_t gpud_conn_unread(gpud *g, const czk_conn *c)
{
    return io(g)->unread ? io(g)->unread(io(g)->ctx, c) : 0;
}

void gpud_conn_watching(gpud *g, czk_conn *c, int on)
{
    if (io(g)->watching)
        io(g)->watching(io(g)->ctx, c, on);
}

uint64_t gpud_now(gpud *g)
{
    return io(g)->now(io(g)->ctx);
}

/* The task is posted at most once at a time: it runs with the loop's next
 * wake-up, after the completions of the current turn were all handled, so a
 * burst of READYs, copies and DONEs costs one scheduler pass. */
void gpud_sched_dirty(gpud *g)
{
    g->sched_dirty = 1;
    if (g->loop && g->sched_task.fn && !g->sched_posted && !g->stopping) {
        g->sched_posted = 1;
        czk_loop_post(g->loop, &g->sched_task);
    }
}
