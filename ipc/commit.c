/*
 * commit.c — group commit of a journal off the loop thread (commit.h).
 *
 * State on the loop thread: the queue of callbacks (seq order), whether a
 * sync is in flight and the tail it covers.  Shared with the sync thread,
 * under mu: the request, the result, and whether the result task is posted
 * (the loop takes the whole list of posted tasks before running them, so the
 * task may be posted again once its run has begun).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ipc/commit.h"

typedef struct waiter {
    uint64_t seq;
    czk_commit_fn fn;
    void *ctx;
    int rc;
} waiter;

struct czk_commit {
    czk_journal *j;
    czk_loop *loop;
    void *owner;
    czk_commit_sync_fn sync_fn;
    void *sync_ctx;
    czk_commit_observe_fn obs;
    void *obs_ctx;

    /* loop thread */
    waiter *q;              /* ring of callbacks in seq order, head .. head + n */
    size_t cap, head, n;
    size_t decided;         /* the first `decided` of them have their outcome */
    int inflight;           /* a sync runs on the thread */
    czk_journal_mark mark;  /* the tail it covers */
    int hold;               /* > 0: an inline sync is running, no thread sync starts */
    czk_commit_stats st;
    czk_loop_task task;

    /* shared, under mu */
    pthread_t th;
    int th_started;
    pthread_mutex_t mu;
    pthread_cond_t cv_req, cv_done;
    int req, stop, ready, posted;
    int res_rc;
    uint64_t res_ns;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int default_sync(int fd, void *ctx)
{
    (void)ctx;
    return fdatasync(fd) < 0 ? -errno : 0;
}

/* posts the task unless it is posted and not yet begun; under mu */
static void post_locked(czk_commit *c)
{
    if (!c->posted) {
        c->posted = 1;
        czk_loop_post(c->loop, &c->task);
    }
}

static void *sync_main(void *arg)
{
    czk_commit *c = arg;

    pthread_mutex_lock(&c->mu);
    for (;;) {
        while (!c->req && !c->stop)
            pthread_cond_wait(&c->cv_req, &c->mu);
        if (c->stop)
            break;
        c->req = 0;
        pthread_mutex_unlock(&c->mu);
        uint64_t t0 = now_ns();
        int rc = c->sync_fn(czk_journal_sync_fd(c->j), c->sync_ctx);
        uint64_t ns = now_ns() - t0;
        pthread_mutex_lock(&c->mu);
        c->res_rc = rc;
        c->res_ns = ns;
        c->ready = 1;
        pthread_cond_broadcast(&c->cv_done);
        post_locked(c);
    }
    pthread_mutex_unlock(&c->mu);
    return NULL;
}

/* room for one more callback: called before the record is written, so that
 * a record is never in the journal without its callback (push cannot fail) */
static int reserve(czk_commit *c)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        waiter *q = malloc(cap * sizeof(*q));
        if (!q)
            return -ENOMEM;
        for (size_t i = 0; i < c->n; i++)
            q[i] = c->q[(c->head + i) % c->cap];
        free(c->q);
        c->q = q;
        c->cap = cap;
        c->head = 0;
    }
    return 0;
}

/* after reserve */
static void push(czk_commit *c, uint64_t seq, czk_commit_fn fn, void *ctx)
{
    c->q[(c->head + c->n) % c->cap] = (waiter){seq, fn, ctx, 0};
    c->n++;
    c->st.pending = c->n;
}

/* the task that runs the decided callbacks and takes the thread's result */
static void post_task(czk_commit *c)
{
    if (!c->loop)
        return;
    pthread_mutex_lock(&c->mu);
    post_locked(c);
    pthread_mutex_unlock(&c->mu);
}

/* the result of a sync up to `upto`: the journal learns it, the observer
 * sees it, and the callbacks it decides are marked (they run from the task) */
static int settle(czk_commit *c, czk_journal_mark upto, int rc, uint64_t ns, czk_error *err)
{
    uint64_t before = czk_journal_durable_seq(c->j), tail = czk_journal_tail(c->j).seq, durable;
    czk_error e = {0};
    czk_error *ep = err ? err : &e;
    int r = czk_journal_synced(c->j, upto, rc, ep);
    size_t was = c->decided;

    durable = czk_journal_durable_seq(c->j);
    if (r < 0)
        c->st.failed++;
    else
        c->st.syncs++;
    if (c->obs)
        c->obs(c->obs_ctx, r, r < 0 ? ep->msg : NULL, ns, r < 0 ? tail - durable : durable - before);
    /* the undecided callbacks are for records after the durable mark as it
     * was before this sync: a success decides those it covered, a failure
     * all of them (the cut took every record after the mark) */
    while (c->decided < c->n) {
        waiter *w = &c->q[(c->head + c->decided) % c->cap];
        if (r == 0 && w->seq > durable)
            break;
        w->rc = r;
        c->decided++;
    }
    if (c->decided > was)
        post_task(c);
    return r;
}

/* runs the decided callbacks, each popped before it runs (it may append) */
static void run_decided(czk_commit *c)
{
    while (c->decided) {
        waiter w = c->q[c->head];
        c->head = (c->head + 1) % c->cap;
        c->n--;
        c->decided--;
        c->st.pending = c->n;
        w.fn(c->owner, w.ctx, w.seq, w.rc);
    }
}

/* starts a thread sync when records await one and none runs */
static void kick(czk_commit *c)
{
    if (!c->loop || c->inflight || c->hold || czk_journal_failed(c->j))
        return;
    if (czk_journal_tail(c->j).seq <= czk_journal_durable_seq(c->j))
        return;
    c->inflight = 1;
    c->mark = czk_journal_tail(c->j);
    pthread_mutex_lock(&c->mu);
    c->req = 1;
    pthread_cond_signal(&c->cv_req);
    pthread_mutex_unlock(&c->mu);
}

/* takes the thread's result if there is one (wait: block until there is) */
static void take_result(czk_commit *c, int wait)
{
    int rc;
    uint64_t ns;

    pthread_mutex_lock(&c->mu);
    while (wait && !c->ready)
        pthread_cond_wait(&c->cv_done, &c->mu);
    if (!c->ready) {
        pthread_mutex_unlock(&c->mu);
        return;
    }
    c->ready = 0;
    rc = c->res_rc;
    ns = c->res_ns;
    pthread_mutex_unlock(&c->mu);
    c->inflight = 0;
    settle(c, c->mark, rc, ns, NULL);
}

static void on_task(czk_loop_task *t, void *ctx)
{
    czk_commit *c = ctx;
    (void)t;
    pthread_mutex_lock(&c->mu);
    c->posted = 0;
    pthread_mutex_unlock(&c->mu);
    if (c->inflight)
        take_result(c, 0);
    kick(c); /* the next group goes to the disk while these callbacks run */
    run_decided(c);
    kick(c);
}

int czk_commit_create(czk_commit **out, czk_journal *j, czk_loop *loop, void *owner, czk_error *err)
{
    czk_commit *c = calloc(1, sizeof(*c));
    int r;

    *out = NULL;
    if (!c)
        return czk_errorf(err, -ENOMEM, "no memory for the journal's committer");
    c->j = j;
    c->loop = loop;
    c->owner = owner;
    c->sync_fn = default_sync;
    c->task.fn = on_task;
    c->task.ctx = c;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv_req, NULL);
    pthread_cond_init(&c->cv_done, NULL);
    if (loop) {
        if ((r = pthread_create(&c->th, NULL, sync_main, c)) != 0) {
            pthread_mutex_destroy(&c->mu);
            pthread_cond_destroy(&c->cv_req);
            pthread_cond_destroy(&c->cv_done);
            free(c);
            return czk_errorf(err, -r, "could not start the journal's sync thread: %s", strerror(r));
        }
        c->th_started = 1;
    }
    *out = c;
    return 0;
}

void czk_commit_set_sync_fn(czk_commit *c, czk_commit_sync_fn fn, void *ctx)
{
    c->sync_fn = fn ? fn : default_sync;
    c->sync_ctx = ctx;
}

void czk_commit_set_observer(czk_commit *c, czk_commit_observe_fn fn, void *ctx)
{
    c->obs = fn;
    c->obs_ctx = ctx;
}

/* on the calling thread: the sync in flight, if any, settled (its
 * callbacks run), then everything written so far synced and settled */
static int sync_inline(czk_commit *c, czk_error *err)
{
    czk_journal_mark upto;
    uint64_t t0;
    int rc;

    c->hold++;
    if (c->inflight)
        take_result(c, 1);
    if (czk_journal_failed(c->j)) {
        c->hold--;
        return czk_errorf(err, -EIO, "the journal is in an unknown state after a failed write; restart");
    }
    if (czk_journal_tail(c->j).seq <= czk_journal_durable_seq(c->j)) {
        c->hold--;
        return 0;
    }
    upto = czk_journal_tail(c->j);
    t0 = now_ns();
    rc = c->sync_fn(czk_journal_sync_fd(c->j), c->sync_ctx);
    rc = settle(c, upto, rc, now_ns() - t0, err);
    c->hold--;
    return rc;
}

int czk_commit_append_sync(czk_commit *c, uint16_t type, const void *data, uint32_t len, uint64_t *seq,
                           czk_error *err)
{
    uint64_t s;
    int r;

    c->hold++;
    if (c->inflight)
        take_result(c, 1); /* the records before this one settle first */
    r = czk_journal_append(c->j, type, data, len, 0, &s, err);
    if (r == 0) {
        c->st.appends++;
        r = sync_inline(c, err);
        if (r == 0 && seq)
            *seq = s;
    }
    c->hold--;
    kick(c);
    return r;
}

int czk_commit_append(czk_commit *c, uint16_t type, const void *data, uint32_t len, czk_commit_fn fn, void *ctx,
                      uint64_t *seq, czk_error *err)
{
    uint64_t s;
    int r;

    /* the callback's place first: a record written without one would become
     * durable with the next sync while its caller took it as not written */
    if (fn && reserve(c) < 0)
        return czk_errorf(err, -ENOMEM, "no memory to await the sync of a journal record (type %u): not written",
                          type);
    if ((r = czk_journal_append(c->j, type, data, len, 0, &s, err)) < 0)
        return r;
    c->st.appends++;
    if (seq)
        *seq = s;
    if (fn)
        push(c, s, fn, ctx);
    if (!c->loop) {
        czk_error e2 = {0};
        sync_inline(c, &e2); /* the callback learns the outcome */
        run_decided(c);
    } else
        kick(c);
    return 0;
}

int czk_commit_flush(czk_commit *c, czk_error *err)
{
    int r = sync_inline(c, err);
    run_decided(c);
    kick(c);
    return r;
}

int czk_commit_compact_begin(czk_commit *c, czk_journal_compaction **cp, czk_error *err)
{
    int r;

    *cp = NULL;
    c->hold++;
    do {
        r = sync_inline(c, err);
        run_decided(c); /* they may append: round again */
    } while (r == 0 && czk_journal_tail(c->j).seq > czk_journal_durable_seq(c->j));
    if (r == 0)
        r = czk_journal_compact_begin(c->j, cp, err);
    c->hold--;
    kick(c);
    return r;
}

int czk_commit_compact_finish(czk_commit *c, czk_journal_compaction *cp, czk_error *err)
{
    uint64_t before, t0;
    int r;

    c->hold++; /* no thread sync starts on the descriptor finish replaces */
    if (c->inflight)
        take_result(c, 1); /* a failure cuts the journal: finish then refuses */
    before = czk_journal_durable_seq(c->j);
    t0 = now_ns();
    r = czk_journal_compact_finish(c->j, cp, err);
    if (r == 0) {
        /* finish synced the new file: every record is durable, as after a sync */
        uint64_t durable = czk_journal_durable_seq(c->j);
        size_t was = c->decided;

        c->st.syncs++;
        if (c->obs)
            c->obs(c->obs_ctx, 0, NULL, now_ns() - t0, durable - before);
        while (c->decided < c->n && c->q[(c->head + c->decided) % c->cap].seq <= durable)
            c->q[(c->head + c->decided++) % c->cap].rc = 0;
        if (c->decided > was)
            post_task(c);
    } else if (czk_journal_failed(c->j)) {
        /* the new file took the journal's place but may not be durable
         * (journal.h): no waiting record can be promised, as after a
         * failed sync that could not be cut back */
        uint64_t tail = czk_journal_tail(c->j).seq;
        size_t was = c->decided;

        c->st.failed++;
        if (c->obs)
            c->obs(c->obs_ctx, r, err ? err->msg : NULL, now_ns() - t0, tail - before);
        while (c->decided < c->n)
            c->q[(c->head + c->decided++) % c->cap].rc = r;
        if (c->decided > was)
            post_task(c);
    }
    c->hold--;
    kick(c);
    return r;
}

int czk_commit_compact(czk_commit *c, czk_journal_keep_fn keep, void *ctx, czk_error *err)
{
    czk_journal_compaction *cp;
    int r = czk_commit_compact_begin(c, &cp, err);

    if (r == 0)
        r = czk_journal_compact_run(cp, keep, ctx, err);
    if (r == 0)
        r = czk_commit_compact_finish(c, cp, err);
    czk_journal_compact_free(cp);
    return r;
}

void czk_commit_get_stats(const czk_commit *c, czk_commit_stats *s) { *s = c->st; }

void czk_commit_destroy(czk_commit *c)
{
    if (!c)
        return;
    if (c->th_started) {
        pthread_mutex_lock(&c->mu);
        c->stop = 1;
        pthread_cond_signal(&c->cv_req);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->th, NULL);
    }
    pthread_mutex_destroy(&c->mu);
    pthread_cond_destroy(&c->cv_req);
    pthread_cond_destroy(&c->cv_done);
    free(c->q);
    free(c);
}
