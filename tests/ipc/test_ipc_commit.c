/*
 * test_ipc_commit.c — group commit of a journal (ipc/commit.h), sequenced
 * step by step: the sync function is replaced by a hook that says it has
 * been entered (a semaphore) and then waits until the test releases it with
 * the result it must return (0: it then runs the real fdatasync; or -EIO).
 * The loop runs on the main thread, only when the test runs it, so every
 * state below is reached deterministically (no assertion depends on time;
 * the waits have caps that only turn a hang into a failure):
 *   1. a group: A is appended and its sync held; B, C (callbacks) and D (none)
 *      appended meanwhile go with the next sync, not that one: A's callback
 *      alone runs when the first is released, B's and C's (in order) when the
 *      second is; nothing runs while a sync is held; stats, durable mark and
 *      the observer (before the callbacks, records 1 then 3);
 *   2. a failed sync: E's and F's callbacks get -EIO in order after the
 *      observer saw -EIO, 2 records and a message; the journal is cut back
 *      (next seq, file size) and not poisoned; G then reuses E's seq and is
 *      durable; a read-only replay of the file holds exactly A..D, G;
 *   3. the inline form: czk_commit_append_sync(I) while H's sync is held by
 *      the sync thread returns 0 with I durable but H's callback not yet run
 *      (callbacks run only from the loop); then the loop runs it; that
 *      callback appends J itself (re-entrant), which czk_commit_flush makes
 *      durable; and while a sync that then fails is held, the failure
 *      settles first and I2 (in the cut record's seq) is durable;
 *   4. czk_commit_flush with records pending (one sync done but not taken,
 *      two records no sync covers) runs every callback before it returns,
 *      without the loop, and leaves durable == tail; with only a finished
 *      thread sync to take it runs the callback without syncing again;
 *   5. without a loop (default sync function) a callback runs inside
 *      czk_commit_append with rc 0 and the record is durable; with the hook,
 *      a failed inline sync reaches the callback and cuts the record;
 *   6. a record that cannot be written (len > CZK_JOURNAL_MAX_PAYLOAD, type
 *      0) fails the append and its callback never runs;
 *   7. czk_commit_compact while a thread sync is held and records await
 *      one: it waits for that sync, syncs the rest, runs every callback
 *      (one of which appends a record, synced in a second round) before keep
 *      sees the first record; the file then holds exactly the kept records
 *      with their seqs, durable == tail; the next group's sync runs on the
 *      new file (the hook's descriptor is the path's inode) and lands there;
 *   8. the three steps with the rewrite on another thread: records appended
 *      after begin (one whose thread sync is held when finish is called, one
 *      no sync covers) are in the new file after the kept ones, finish took
 *      the held sync first, both callbacks run from the loop with rc 0, and
 *      the following sync goes to the new file; a finish after a failed sync
 *      cut the journal back refuses (-ESTALE) and leaves it as it was;
 *   9. a finish whose directory fsync after the rename fails (fsync below
 *      fails for directories while fail_dir_fsync is set): the journal is
 *      poisoned, the observer sees the error, the record a finished sync
 *      covered keeps rc 0 and the one no sync covered gets the error (a
 *      crash could undo the rename), and the next append is refused.
 * Every callback and observer call is checked to run on the main thread, in
 * order, exactly once; a final replay checks types and payloads of every
 * record that must be in the file.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ipc/commit.h"
#include "ipc/journal.h"
#include "ipc/loop.h"
#include "tutil.h"
#include "../journal/jutil.h"

#define MAXLEN 200
#define MAXLOG 64
#define ITERS 10000 /* loop runs of at most 10 ms before a wait counts as hung */

typedef struct item {
    const char *name;
    uint16_t type;
    uint32_t len;
    uint64_t seq;
    uint8_t data[MAXLEN];
} item;

static pthread_t main_th;

/* ---- the sync hook ---- */

static struct {
    sem_t entered, release, left;
    pthread_mutex_t mu;
    int results[16];
    unsigned rhead, rtail;
    int calls, calls_main; /* under mu */
    uint64_t last_ino;     /* of the descriptor the last call synced */
} hk = {.mu = PTHREAD_MUTEX_INITIALIZER};

/* waits on s; a cap of 60 s turns a hang into a failure (not a timing check) */
static void wait_sem(sem_t *s)
{
    struct timespec ts;
    int r;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 60;
    while ((r = sem_timedwait(s, &ts)) < 0 && errno == EINTR)
        ;
    CHECK(r == 0);
}

static int sem_count(sem_t *s)
{
    int v;
    CHECK(sem_getvalue(s, &v) == 0);
    return v;
}

/* lets one (the next) call of the hook return rc */
static void hk_release(int rc)
{
    pthread_mutex_lock(&hk.mu);
    CHECK(hk.rtail - hk.rhead < 16);
    hk.results[hk.rtail++ % 16] = rc;
    pthread_mutex_unlock(&hk.mu);
    CHECK(sem_post(&hk.release) == 0);
}

/* takes the n posts s must hold now */
static void drain(sem_t *s, int n)
{
    CHECK(sem_count(s) == n);
    for (int i = 0; i < n; i++)
        CHECK(sem_trywait(s) == 0);
}

static int hk_calls(int *on_main)
{
    int n;
    pthread_mutex_lock(&hk.mu);
    n = hk.calls;
    if (on_main)
        *on_main = hk.calls_main;
    pthread_mutex_unlock(&hk.mu);
    return n;
}

static int hook(int fd, void *ctx)
{
    struct stat st;
    int rc;

    CHECK(ctx == &hk);
    pthread_mutex_lock(&hk.mu);
    hk.calls++;
    hk.last_ino = fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
    if (pthread_equal(pthread_self(), main_th))
        hk.calls_main++;
    pthread_mutex_unlock(&hk.mu);
    CHECK(sem_post(&hk.entered) == 0);
    wait_sem(&hk.release);
    pthread_mutex_lock(&hk.mu);
    CHECK(hk.rhead != hk.rtail);
    rc = hk.results[hk.rhead++ % 16];
    pthread_mutex_unlock(&hk.mu);
    if (rc == 0)
        rc = fdatasync(fd) < 0 ? -errno : 0;
    CHECK(sem_post(&hk.left) == 0);
    return rc;
}

/* ---- what the callbacks and the observer saw ---- */

typedef struct cb_ent {
    const item *it;
    uint64_t seq;
    int rc, on_main, in_call;
    void *owner;
} cb_ent;

typedef struct obs_ent {
    int rc, has_msg, on_main, ncb_at;
    uint64_t records;
} obs_ent;

static cb_ent cblog[MAXLOG];
static int ncb;
static obs_ent obslog[MAXLOG];
static int nobs;
static int in_call; /* 1 while the test is inside a czk_commit_* call */
static czk_commit *g_c;
static item *g_reenter; /* what cb_reenter appends */

static void log_cb(void *owner, void *ctx, uint64_t seq, int rc)
{
    CHECK(ncb < MAXLOG);
    cblog[ncb++] = (cb_ent){ctx, seq, rc, pthread_equal(pthread_self(), main_th), in_call, owner};
}

static void cb(void *owner, void *ctx, uint64_t seq, int rc) { log_cb(owner, ctx, seq, rc); }

/* a callback that appends a record itself (no callback for that one) */
static void cb_reenter(void *owner, void *ctx, uint64_t seq, int rc)
{
    czk_error e;
    item *it = g_reenter;

    log_cb(owner, ctx, seq, rc);
    CHECK(it);
    CHECK_RC(czk_commit_append(g_c, it->type, it->data, it->len, NULL, NULL, &it->seq, &e));
    g_reenter = NULL;
}

static void never_cb(void *owner, void *ctx, uint64_t seq, int rc)
{
    fprintf(stderr, "callback of a record that could not be written ran (seq %llu rc %d)\n",
            (unsigned long long)seq, rc);
    CHECK(0);
}

static void observe(void *ctx, int rc, const char *msg, uint64_t ns, uint64_t records)
{
    (void)ns; /* how long the sync took: nothing to check deterministically */
    CHECK(ctx == &obslog);
    CHECK(nobs < MAXLOG);
    obslog[nobs++] = (obs_ent){rc, msg && msg[0], pthread_equal(pthread_self(), main_th), ncb, records};
}

static void check_cb(int i, const item *it, int rc, void *owner)
{
    CHECK(i < ncb);
    if (cblog[i].it != it || cblog[i].rc != rc || cblog[i].seq != it->seq) {
        fprintf(stderr, "callback %d: got %s seq %llu rc %d, want %s seq %llu rc %d\n", i,
                cblog[i].it ? cblog[i].it->name : "?", (unsigned long long)cblog[i].seq, cblog[i].rc, it->name,
                (unsigned long long)it->seq, rc);
        CHECK(0);
    }
    CHECK(cblog[i].on_main);
    CHECK(cblog[i].owner == owner);
}

static void check_obs(int i, int rc, uint64_t records, int ncb_at)
{
    CHECK(i < nobs);
    if (obslog[i].rc != rc || obslog[i].records != records || obslog[i].ncb_at != ncb_at) {
        fprintf(stderr, "observer call %d: rc %d records %llu after %d callbacks, want rc %d records %llu after %d\n",
                i, obslog[i].rc, (unsigned long long)obslog[i].records, obslog[i].ncb_at, rc,
                (unsigned long long)records, ncb_at);
        CHECK(0);
    }
    CHECK(obslog[i].on_main);
    CHECK(obslog[i].has_msg == (rc < 0));
}

/* ---- helpers ---- */

static void mk(item *it, const char *name)
{
    it->name = name;
    it->type = (uint16_t)t_range(1, 65535);
    it->len = (uint32_t)t_range(0, MAXLEN);
    t_fill(it->data, it->len);
    it->seq = 0;
}

static int append(czk_commit *c, item *it, czk_commit_fn fn)
{
    czk_error e;
    return czk_commit_append(c, it->type, it->data, it->len, fn, it, &it->seq, &e);
}

#define RUN_UNTIL(loop, cond)                                   \
    do {                                                        \
        int it_ = 0;                                            \
        while (!(cond)) {                                       \
            CHECK(++it_ <= ITERS);                              \
            CHECK(czk_loop_run_once((loop), 10) >= 0);          \
        }                                                       \
    } while (0)

static void run_some(czk_loop *loop, int n)
{
    for (int i = 0; i < n; i++)
        CHECK(czk_loop_run_once(loop, 10) >= 0);
}

static off_t file_size(const char *path)
{
    struct stat st;
    CHECK(stat(path, &st) == 0);
    return st.st_size;
}

static void stats(czk_commit *c, uint64_t appends, uint64_t syncs, uint64_t failed, uint64_t pending)
{
    czk_commit_stats s;
    czk_commit_get_stats(c, &s);
    if (s.appends != appends || s.syncs != syncs || s.failed != failed || s.pending != pending) {
        fprintf(stderr, "stats: appends %llu syncs %llu failed %llu pending %llu, want %llu %llu %llu %llu\n",
                (unsigned long long)s.appends, (unsigned long long)s.syncs, (unsigned long long)s.failed,
                (unsigned long long)s.pending, (unsigned long long)appends, (unsigned long long)syncs,
                (unsigned long long)failed, (unsigned long long)pending);
        CHECK(0);
    }
}

typedef struct want {
    const item *const *items;
    int n, at, bad;
} want;

static int replay_cb(const czk_journal_rec *r, void *ctx)
{
    want *w = ctx;
    const item *it;

    if (w->at >= w->n) {
        fprintf(stderr, "replay: unexpected record seq %llu\n", (unsigned long long)r->seq);
        w->bad++;
        return 0;
    }
    it = w->items[w->at++];
    if (r->seq != it->seq || r->type != it->type || r->len != it->len || memcmp(r->data, it->data, it->len)) {
        fprintf(stderr, "replay: record %d (seq %llu type %u len %u) is not %s (seq %llu type %u len %u)\n",
                w->at - 1, (unsigned long long)r->seq, r->type, r->len, it->name, (unsigned long long)it->seq,
                it->type, it->len);
        w->bad++;
    }
    return 0;
}

/* the file holds exactly items[0 .. n), in order */
static void check_file(const char *path, const item *const *items, int n)
{
    want w = {items, n, 0, 0};
    czk_journal_info info;
    czk_error e;

    CHECK_RC(czk_journal_replay_file(path, replay_cb, &w, &info, &e));
    CHECK(w.bad == 0 && w.at == n);
    CHECK(info.records == (uint64_t)n && info.torn_bytes == 0);
}

/* a helper thread's: once the hook is entered, releases it (and the calls
 * after it) with these results */
typedef struct releases {
    int n, rc[4];
} releases;

static void *release_after_entered(void *arg)
{
    const releases *r = arg;
    wait_sem(&hk.entered);
    for (int i = 0; i < r->n; i++)
        hk_release(r->rc[i]);
    return NULL;
}

/* czk_commit_append_sync(it) on this thread while a helper releases the
 * thread's sync in flight, then the inline one, with these results */
static int append_sync_released(czk_commit *c, item *it, int rc_thread, int rc_inline)
{
    releases rel = {2, {rc_thread, rc_inline}};
    pthread_t th;
    czk_error e;
    int r;

    CHECK(pthread_create(&th, NULL, release_after_entered, &rel) == 0);
    in_call = 1;
    r = czk_commit_append_sync(c, it->type, it->data, it->len, &it->seq, &e);
    in_call = 0;
    CHECK(pthread_join(th, NULL) == 0);
    return r;
}

/* ---- with a loop: cases 1, 2, 3, 4 and 6 on one journal ---- */

static item A, B, C, D, E, F, G, H, I, J, H2, I2, K1, K2, K3, L, X;
static int owner_tag;

static void with_loop(const char *dir)
{
    char path[256];
    czk_journal *j;
    czk_loop *loop;
    czk_commit *c;
    czk_error e;
    int calls_main, calls0, main0, nobs0;
    off_t size0;

    snprintf(path, sizeof(path), "%s/journal", dir);
    CHECK_RC(czk_journal_open(&j, path, NULL, NULL, &e));
    CHECK_RC(czk_loop_create(&loop, NULL, &e));
    CHECK_RC(czk_commit_create(&c, j, loop, &owner_tag, &e));
    g_c = c;
    czk_commit_set_sync_fn(c, hook, &hk);
    czk_commit_set_observer(c, observe, &obslog);

    /* 1. a group */
    mk(&A, "A"), mk(&B, "B"), mk(&C, "C"), mk(&D, "D");
    CHECK_RC(append(c, &A, cb));
    CHECK(A.seq == 1);
    wait_sem(&hk.entered); /* the sync of A is held in the hook */
    CHECK_RC(append(c, &B, cb));
    CHECK_RC(append(c, &C, cb));
    CHECK_RC(append(c, &D, NULL));
    CHECK(B.seq == 2 && C.seq == 3 && D.seq == 4);
    stats(c, 4, 0, 0, 3);
    run_some(loop, 5);
    CHECK(ncb == 0 && nobs == 0);
    CHECK(czk_journal_durable_seq(j) == 0);
    hk_release(0);
    RUN_UNTIL(loop, ncb >= 1);
    wait_sem(&hk.entered); /* the second sync (B, C, D) is held now */
    run_some(loop, 3);
    CHECK(ncb == 1);
    check_cb(0, &A, 0, &owner_tag);
    CHECK(czk_journal_durable_seq(j) == 1);
    check_obs(0, 0, 1, 0);
    CHECK(nobs == 1);
    stats(c, 4, 1, 0, 2);
    hk_release(0);
    RUN_UNTIL(loop, ncb >= 3);
    run_some(loop, 3);
    CHECK(ncb == 3);
    check_cb(1, &B, 0, &owner_tag);
    check_cb(2, &C, 0, &owner_tag);
    stats(c, 4, 2, 0, 0);
    CHECK(czk_journal_durable_seq(j) == 4);
    CHECK(nobs == 2);
    check_obs(1, 0, 3, 1);
    CHECK(hk_calls(&calls_main) == 2 && calls_main == 0);
    CHECK(sem_count(&hk.entered) == 0);

    /* 2. a failed sync cuts the group; its seqs are reused */
    size0 = file_size(path);
    mk(&E, "E"), mk(&F, "F"), mk(&G, "G");
    CHECK_RC(append(c, &E, cb));
    wait_sem(&hk.entered);
    CHECK_RC(append(c, &F, cb));
    CHECK(E.seq == 5 && F.seq == 6);
    CHECK(file_size(path) > size0);
    run_some(loop, 3);
    CHECK(ncb == 3);
    hk_release(-EIO);
    RUN_UNTIL(loop, ncb >= 5);
    run_some(loop, 3);
    CHECK(ncb == 5);
    check_cb(3, &E, -EIO, &owner_tag);
    check_cb(4, &F, -EIO, &owner_tag);
    CHECK(nobs == 3);
    check_obs(2, -EIO, 2, 3);
    CHECK(czk_journal_durable_seq(j) == 4);
    CHECK(czk_journal_next_seq(j) == czk_journal_durable_seq(j) + 1);
    CHECK(czk_journal_tail(j).seq == 4);
    CHECK(file_size(path) == size0);
    CHECK(czk_journal_failed(j) == 0);
    stats(c, 6, 2, 1, 0);
    CHECK(hk_calls(NULL) == 3 && sem_count(&hk.entered) == 0); /* nothing left to sync: no sync started */
    CHECK_RC(append(c, &G, cb));
    CHECK(G.seq == 5); /* E's seq again */
    wait_sem(&hk.entered);
    hk_release(0);
    RUN_UNTIL(loop, ncb >= 6);
    check_cb(5, &G, 0, &owner_tag);
    CHECK(czk_journal_durable_seq(j) == 5);
    CHECK(nobs == 4);
    check_obs(3, 0, 1, 5);
    stats(c, 7, 3, 1, 0);
    {
        const item *want[] = {&A, &B, &C, &D, &G};
        check_file(path, want, 5);
    }

    /* 3. the inline form while the thread's sync is held */
    mk(&H, "H"), mk(&I, "I"), mk(&J, "J");
    g_reenter = &J;
    calls0 = hk_calls(&main0);
    nobs0 = nobs;
    CHECK_RC(append(c, &H, cb_reenter));
    CHECK(H.seq == 6);
    CHECK(append_sync_released(c, &I, 0, 0) == 0);
    CHECK(I.seq == 7);
    CHECK(ncb == 6); /* H's callback runs only from the loop */
    CHECK(czk_journal_durable_seq(j) >= I.seq);
    CHECK(czk_journal_durable_seq(j) == czk_journal_tail(j).seq);
    CHECK(hk_calls(&calls_main) == calls0 + 2 && calls_main == main0 + 1);
    CHECK(sem_count(&hk.entered) == 1); /* the inline call's, which nobody waited for */
    wait_sem(&hk.entered);
    CHECK(nobs == nobs0 + 2);
    check_obs(nobs0, 0, 1, 6);
    check_obs(nobs0 + 1, 0, 1, 6);
    stats(c, 9, 5, 1, 1);
    RUN_UNTIL(loop, ncb >= 7);
    check_cb(6, &H, 0, &owner_tag);
    CHECK(g_reenter == NULL && J.seq == 8); /* appended by H's callback */
    wait_sem(&hk.entered);                  /* J's sync, started by that append, is held */
    CHECK(czk_journal_durable_seq(j) == 7);
    stats(c, 10, 5, 1, 0);
    hk_release(0);
    CHECK_RC(czk_commit_flush(c, &e));
    CHECK(czk_journal_durable_seq(j) == J.seq && czk_journal_tail(j).seq == J.seq);
    CHECK(hk_calls(&calls_main) == calls0 + 3 && calls_main == main0 + 1); /* the thread's sync covered J */
    CHECK(nobs == nobs0 + 3);
    check_obs(nobs0 + 2, 0, 1, 7);
    stats(c, 10, 6, 1, 0);
    run_some(loop, 3);
    CHECK(ncb == 7);

    /* 3b. the inline form while a thread's sync that then fails is held: the
     * failure is settled first (H2 is cut, its callback gets -EIO later,
     * from the loop), then I2 is written, in H2's seq, and made durable */
    mk(&H2, "H2"), mk(&I2, "I2");
    calls0 = hk_calls(&main0);
    nobs0 = nobs;
    CHECK_RC(append(c, &H2, cb));
    CHECK(H2.seq == 9);
    CHECK(append_sync_released(c, &I2, -EIO, 0) == 0);
    CHECK(I2.seq == H2.seq);
    CHECK(ncb == 7);
    CHECK(czk_journal_durable_seq(j) == I2.seq && czk_journal_tail(j).seq == I2.seq);
    CHECK(czk_journal_failed(j) == 0);
    CHECK(hk_calls(&calls_main) == calls0 + 2 && calls_main == main0 + 1);
    drain(&hk.entered, 1);
    CHECK(nobs == nobs0 + 2);
    check_obs(nobs0, -EIO, 1, 7);
    check_obs(nobs0 + 1, 0, 1, 7);
    stats(c, 12, 7, 2, 1);
    RUN_UNTIL(loop, ncb >= 8);
    run_some(loop, 3);
    CHECK(ncb == 8 && nobs == nobs0 + 2);
    check_cb(7, &H2, -EIO, &owner_tag);
    stats(c, 12, 7, 2, 0);

    /* 4. flush with records pending: K1's sync done but not taken, K2 and K3
     * covered by none */
    mk(&K1, "K1"), mk(&K2, "K2"), mk(&K3, "K3"), mk(&L, "L");
    calls0 = hk_calls(&main0);
    nobs0 = nobs;
    drain(&hk.left, calls0); /* every hook call so far has returned */
    CHECK_RC(append(c, &K1, cb));
    wait_sem(&hk.entered);
    CHECK_RC(append(c, &K2, cb));
    CHECK_RC(append(c, &K3, cb));
    CHECK(K1.seq == 10 && K2.seq == 11 && K3.seq == 12);
    hk_release(0); /* the thread's sync of K1 */
    wait_sem(&hk.left);
    hk_release(0); /* the inline sync of K2, K3 */
    CHECK(ncb == 8);
    in_call = 1;
    CHECK_RC(czk_commit_flush(c, &e));
    in_call = 0;
    CHECK(ncb == 11);
    check_cb(8, &K1, 0, &owner_tag);
    check_cb(9, &K2, 0, &owner_tag);
    check_cb(10, &K3, 0, &owner_tag);
    for (int i = 8; i < 11; i++)
        CHECK(cblog[i].in_call); /* inside czk_commit_flush, not from the loop */
    CHECK(czk_journal_durable_seq(j) == czk_journal_tail(j).seq && czk_journal_tail(j).seq == K3.seq);
    CHECK(hk_calls(&calls_main) == calls0 + 2 && calls_main == main0 + 1);
    wait_sem(&hk.entered); /* the inline one's */
    wait_sem(&hk.left);
    CHECK(nobs == nobs0 + 2);
    check_obs(nobs0, 0, 1, 8);
    check_obs(nobs0 + 1, 0, 2, 8);
    stats(c, 15, 9, 2, 0);
    /* only a finished thread sync to take: flush runs L's callback and does
     * not sync again */
    CHECK_RC(append(c, &L, cb));
    wait_sem(&hk.entered);
    hk_release(0);
    wait_sem(&hk.left);
    in_call = 1;
    CHECK_RC(czk_commit_flush(c, &e));
    in_call = 0;
    CHECK(ncb == 12);
    check_cb(11, &L, 0, &owner_tag);
    CHECK(cblog[11].in_call);
    check_obs(nobs0 + 2, 0, 1, 11);
    CHECK(czk_journal_durable_seq(j) == L.seq && czk_journal_tail(j).seq == L.seq);
    CHECK(hk_calls(&calls_main) == calls0 + 3 && calls_main == main0 + 1);
    stats(c, 16, 10, 2, 0);
    run_some(loop, 5); /* the tasks posted meanwhile run nothing twice */
    CHECK(ncb == 12 && nobs == nobs0 + 3);
    CHECK(sem_count(&hk.entered) == 0);

    /* 6. records that cannot be written: the append fails, no callback */
    {
        uint8_t *big = calloc(1, CZK_JOURNAL_MAX_PAYLOAD + 1);
        uint64_t next = czk_journal_next_seq(j), seq = 12345;
        off_t size = file_size(path);

        CHECK(big);
        mk(&X, "X");
        memset(&e, 0, sizeof(e));
        CHECK(czk_commit_append(c, 1, big, CZK_JOURNAL_MAX_PAYLOAD + 1, never_cb, &X, &seq, &e) < 0);
        CHECK(e.code < 0 && e.msg[0]);
        memset(&e, 0, sizeof(e));
        CHECK(czk_commit_append(c, 0, X.data, X.len, never_cb, &X, &seq, &e) < 0);
        CHECK(e.code < 0 && e.msg[0]);
        memset(&e, 0, sizeof(e));
        CHECK(czk_commit_append_sync(c, 1, big, CZK_JOURNAL_MAX_PAYLOAD + 1, &seq, &e) < 0);
        CHECK(e.code < 0 && e.msg[0]);
        free(big);
        stats(c, 16, 10, 2, 0);
        CHECK(czk_journal_next_seq(j) == next && file_size(path) == size);
        run_some(loop, 5);
        CHECK_RC(czk_commit_flush(c, &e));
        CHECK(ncb == 12 && nobs == nobs0 + 3);
        CHECK(hk_calls(NULL) == calls0 + 3 && sem_count(&hk.entered) == 0);
    }

    {
        const item *want[] = {&A, &B, &C, &D, &G, &H, &I, &J, &I2, &K1, &K2, &K3, &L};
        check_file(path, want, 13);
    }
    /* the hook holds nothing now: every release was taken, every call left */
    CHECK(sem_count(&hk.release) == 0 && sem_count(&hk.entered) == 0 && sem_count(&hk.left) == 0);
    czk_commit_destroy(c);
    g_c = NULL;
    czk_loop_destroy(loop);
    czk_journal_close(j);
    unlink(path);
}

/* ---- 7. compaction while records and a sync are pending ---- */

static item P1, P2, P3, P4, D1, Q1, R1, R2, R3, R4, S1, S2;

/* 9: this program's fsync (it takes the place of libc's for the statically
 * linked fsutil.c) fails for a directory while set */
static int fail_dir_fsync;
int fsync(int fd)
{
    struct stat st;
    if (fail_dir_fsync && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        errno = EIO;
        return -1;
    }
    return (int)syscall(SYS_fsync, fd);
}
static int keep_calls, keep_ncb_first;

typedef struct compact_job {
    czk_journal_compaction *cp;
    int rc;
} compact_job;

static int keep_not_d1(const czk_journal_rec *r, void *ctx);

static void *compact_thread(void *arg)
{
    compact_job *cj = arg;
    czk_error e;
    cj->rc = czk_journal_compact_run(cj->cp, keep_not_d1, &keep_calls, &e);
    return NULL;
}

static int keep_not_d1(const czk_journal_rec *r, void *ctx)
{
    CHECK(ctx == &keep_calls);
    if (keep_calls++ == 0 && pthread_equal(pthread_self(), main_th))
        keep_ncb_first = ncb;
    return r->seq != D1.seq;
}

/* after a compaction: it's appended, its thread sync runs on the journal
 * at path (the hook's descriptor is that file's inode) and its callback,
 * callback number `at`, runs from the loop with rc 0 */
static void append_lands_in(czk_commit *c, czk_loop *loop, const char *path, item *it, int at)
{
    struct stat st;

    CHECK_RC(append(c, it, cb));
    wait_sem(&hk.entered);
    CHECK(stat(path, &st) == 0);
    pthread_mutex_lock(&hk.mu);
    CHECK(hk.last_ino == (uint64_t)st.st_ino);
    pthread_mutex_unlock(&hk.mu);
    hk_release(0);
    RUN_UNTIL(loop, ncb >= at + 1);
    check_cb(at, it, 0, &owner_tag);
}

static void compaction(const char *dir)
{
    char path[256];
    czk_journal *j;
    czk_loop *loop;
    czk_commit *c;
    czk_error e;
    int ncb0 = ncb;

    snprintf(path, sizeof(path), "%s/journal-c", dir);
    CHECK_RC(czk_journal_open(&j, path, NULL, NULL, &e));
    CHECK_RC(czk_loop_create(&loop, NULL, &e));
    CHECK_RC(czk_commit_create(&c, j, loop, &owner_tag, &e));
    g_c = c;
    czk_commit_set_sync_fn(c, hook, &hk);
    mk(&P1, "P1"), mk(&P2, "P2"), mk(&P3, "P3"), mk(&P4, "P4"), mk(&D1, "D1"), mk(&Q1, "Q1");
    CHECK_RC(append(c, &P1, cb));
    wait_sem(&hk.entered); /* P1's sync is held on the thread */
    g_reenter = &P3;
    CHECK_RC(append(c, &P2, cb_reenter));
    CHECK_RC(append(c, &D1, NULL));
    CHECK_RC(append(c, &P4, cb));
    CHECK(P1.seq == 1 && P2.seq == 2 && D1.seq == 3 && P4.seq == 4);
    /* three syncs: the thread's (P1), the first round's (P2 .. P4), the
     * second round's (P3, appended by P2's callback) */
    hk_release(0), hk_release(0), hk_release(0);
    CHECK_RC(czk_commit_compact(c, keep_not_d1, &keep_calls, &e));
    CHECK(P3.seq == 5 && g_reenter == NULL);
    CHECK(ncb == ncb0 + 3);
    check_cb(ncb0, &P1, 0, &owner_tag);
    check_cb(ncb0 + 1, &P2, 0, &owner_tag);
    check_cb(ncb0 + 2, &P4, 0, &owner_tag);
    CHECK(keep_calls == 5 && keep_ncb_first == ncb0 + 3); /* every callback ran before keep saw a record */
    drain(&hk.entered, 2);
    CHECK(czk_journal_durable_seq(j) == 5 && czk_journal_tail(j).seq == 5);
    stats(c, 5, 4, 0, 0); /* three syncs and the compaction's own */
    {
        const item *want[] = {&P1, &P2, &P4, &P3};
        check_file(path, want, 4);
    }
    /* the next group goes to the new file */
    append_lands_in(c, loop, path, &Q1, ncb0 + 3);
    CHECK(Q1.seq == 6 && czk_journal_durable_seq(j) == 6);
    {
        const item *want[] = {&P1, &P2, &P4, &P3, &Q1};
        check_file(path, want, 5);
    }
    drain(&hk.left, 4);
    CHECK(sem_count(&hk.release) == 0 && sem_count(&hk.entered) == 0);

    /* 8. the three steps, the rewrite on another thread */
    {
        czk_journal_compaction *cp;
        compact_job cj = {0};
        pthread_t th;
        int ncb1 = ncb, calls1 = hk_calls(NULL);

        mk(&R1, "R1"), mk(&R2, "R2"), mk(&R3, "R3");
        keep_calls = 0;
        D1.seq = P2.seq; /* this time P2 goes */
        CHECK_RC(czk_commit_compact_begin(c, &cp, &e));
        CHECK(cp != NULL && hk_calls(NULL) == calls1); /* nothing awaited a sync */
        cj.cp = cp;
        CHECK(pthread_create(&th, NULL, compact_thread, &cj) == 0);
        CHECK_RC(append(c, &R1, cb));
        wait_sem(&hk.entered); /* R1's sync is held on the sync thread */
        CHECK(pthread_join(th, NULL) == 0);
        CHECK_RC(cj.rc);
        CHECK(keep_calls == 5);
        CHECK_RC(append(c, &R2, cb)); /* waits behind R1's sync */
        CHECK(R1.seq == 7 && R2.seq == 8);
        hk_release(0);
        CHECK_RC(czk_commit_compact_finish(c, cp, &e));
        czk_journal_compact_free(cp);
        CHECK(czk_journal_durable_seq(j) == 8 && czk_journal_tail(j).seq == 8);
        RUN_UNTIL(loop, ncb >= ncb1 + 2);
        check_cb(ncb1, &R1, 0, &owner_tag);
        check_cb(ncb1 + 1, &R2, 0, &owner_tag);
        {
            const item *want[] = {&P1, &P4, &P3, &Q1, &R1, &R2};
            check_file(path, want, 6);
        }
        append_lands_in(c, loop, path, &R3, ncb1 + 2);
        drain(&hk.left, 2);

        /* a failed sync between begin and finish: finish refuses */
        mk(&R4, "R4");
        CHECK_RC(czk_commit_compact_begin(c, &cp, &e));
        CHECK_RC(czk_journal_compact_run(cp, NULL, NULL, &e));
        CHECK_RC(append(c, &R4, cb));
        wait_sem(&hk.entered);
        hk_release(-EIO);
        memset(&e, 0, sizeof(e));
        CHECK(czk_commit_compact_finish(c, cp, &e) == -ESTALE && strstr(e.msg, "cut back"));
        czk_journal_compact_free(cp);
        RUN_UNTIL(loop, ncb >= ncb1 + 4);
        check_cb(ncb1 + 3, &R4, -EIO, &owner_tag);
        {
            const item *want[] = {&P1, &P4, &P3, &Q1, &R1, &R2, &R3};
            char tmp[300];
            check_file(path, want, 7);
            snprintf(tmp, sizeof(tmp), "%s.compact", path);
            CHECK(access(tmp, F_OK) != 0); /* no temporary left behind */
        }
        drain(&hk.left, 1);
        CHECK(sem_count(&hk.release) == 0 && sem_count(&hk.entered) == 0);

        /* 9. the rename is done but its directory fsync fails */
        int ncb2, nobs0 = nobs;
        item S3;
        mk(&S1, "S1"), mk(&S2, "S2"), mk(&S3, "S3");
        czk_commit_set_observer(c, observe, &obslog);
        CHECK_RC(czk_commit_compact_begin(c, &cp, &e));
        CHECK_RC(czk_journal_compact_run(cp, NULL, NULL, &e));
        ncb2 = ncb;
        CHECK_RC(append(c, &S1, cb));
        wait_sem(&hk.entered); /* S1's sync is held */
        CHECK_RC(append(c, &S2, cb)); /* no sync covers it */
        hk_release(0);
        fail_dir_fsync = 1;
        memset(&e, 0, sizeof(e));
        CHECK(czk_commit_compact_finish(c, cp, &e) == -EIO && strstr(e.msg, "could not fsync directory"));
        fail_dir_fsync = 0;
        czk_journal_compact_free(cp);
        CHECK(czk_journal_failed(j));
        RUN_UNTIL(loop, ncb >= ncb2 + 2);
        check_cb(ncb2, &S1, 0, &owner_tag);
        check_cb(ncb2 + 1, &S2, -EIO, &owner_tag);
        CHECK(nobs == nobs0 + 2); /* S1's sync, then the failed finish */
        check_obs(nobs0 + 1, -EIO, 1, ncb2); /* before either callback ran */
        CHECK(append(c, &S3, cb) < 0); /* poisoned: refused */
        drain(&hk.left, 1);
        CHECK(sem_count(&hk.release) == 0 && sem_count(&hk.entered) == 0);
    }
    czk_commit_destroy(c);
    g_c = NULL;
    czk_loop_destroy(loop);
    czk_journal_close(j);
    unlink(path);
}

/* ---- 5. without a loop ---- */

static item M, N, O, P, Q, R;
static int owner5;

static void without_loop(const char *dir)
{
    char path[256];
    czk_journal *j;
    czk_commit *c;
    czk_error e;
    uint8_t *big;
    off_t size0;
    int r;

    snprintf(path, sizeof(path), "%s/journal5", dir);
    CHECK_RC(czk_journal_open(&j, path, NULL, NULL, &e));
    CHECK_RC(czk_commit_create(&c, j, NULL, &owner5, &e));
    ncb = 0;
    mk(&M, "M"), mk(&N, "N"), mk(&O, "O");
    in_call = 1;
    CHECK_RC(append(c, &M, cb));
    in_call = 0;
    CHECK(M.seq == 1 && ncb == 1);
    check_cb(0, &M, 0, &owner5);
    CHECK(cblog[0].in_call); /* before czk_commit_append returned */
    CHECK(czk_journal_durable_seq(j) == M.seq);
    CHECK_RC(append(c, &N, NULL));
    CHECK(czk_journal_durable_seq(j) == N.seq);
    CHECK_RC(czk_commit_append_sync(c, O.type, O.data, O.len, &O.seq, &e));
    CHECK(O.seq == 3 && czk_journal_durable_seq(j) == 3);
    CHECK_RC(czk_commit_flush(c, &e));
    stats(c, 3, 3, 0, 0);
    big = calloc(1, CZK_JOURNAL_MAX_PAYLOAD + 1);
    CHECK(big);
    CHECK(czk_commit_append(c, 7, big, CZK_JOURNAL_MAX_PAYLOAD + 1, never_cb, &M, NULL, &e) < 0);
    free(big);
    CHECK(ncb == 1);
    stats(c, 3, 3, 0, 0);
    {
        const item *want[] = {&M, &N, &O};
        check_file(path, want, 3);
    }
    czk_commit_destroy(c);
    czk_journal_close(j);
    unlink(path);

    /* the hook without a loop: it runs inline on this thread; a failure
     * reaches the callback before the append returns and cuts the record */
    snprintf(path, sizeof(path), "%s/journal5b", dir);
    CHECK_RC(czk_journal_open(&j, path, NULL, NULL, &e));
    CHECK_RC(czk_commit_create(&c, j, NULL, &owner5, &e));
    czk_commit_set_sync_fn(c, hook, &hk);
    ncb = 0;
    mk(&P, "P"), mk(&Q, "Q"), mk(&R, "R");
    hk_release(0); /* posted first: the hook runs inside the append */
    in_call = 1;
    CHECK_RC(append(c, &P, cb));
    in_call = 0;
    CHECK(P.seq == 1 && ncb == 1);
    check_cb(0, &P, 0, &owner5);
    CHECK(cblog[0].in_call);
    wait_sem(&hk.entered);
    wait_sem(&hk.left);
    size0 = file_size(path);
    hk_release(-EIO);
    in_call = 1;
    r = append(c, &Q, cb);
    in_call = 0;
    (void)r; /* the outcome is the callback's (commit.h); the append itself wrote the record */
    CHECK(Q.seq == 2 && ncb == 2);
    check_cb(1, &Q, -EIO, &owner5);
    CHECK(cblog[1].in_call);
    wait_sem(&hk.entered);
    wait_sem(&hk.left);
    CHECK(czk_journal_durable_seq(j) == 1 && czk_journal_next_seq(j) == 2);
    CHECK(file_size(path) == size0 && czk_journal_failed(j) == 0);
    hk_release(0);
    CHECK_RC(append(c, &R, cb));
    CHECK(R.seq == 2 && ncb == 3); /* Q's seq again */
    check_cb(2, &R, 0, &owner5);
    wait_sem(&hk.entered);
    wait_sem(&hk.left);
    CHECK(czk_journal_durable_seq(j) == 2);
    stats(c, 3, 2, 1, 0);
    CHECK(sem_count(&hk.release) == 0 && sem_count(&hk.entered) == 0 && sem_count(&hk.left) == 0);
    {
        const item *want[] = {&P, &R};
        check_file(path, want, 2);
    }
    czk_commit_destroy(c);
    czk_journal_close(j);
    unlink(path);
}

int main(void)
{
    char dir[128];

    t_seed("test_ipc_commit");
    main_th = pthread_self();
    CHECK(sem_init(&hk.entered, 0, 0) == 0 && sem_init(&hk.release, 0, 0) == 0 && sem_init(&hk.left, 0, 0) == 0);
    jt_tmpdir(dir, sizeof(dir), "commit");
    with_loop(dir);
    compaction(dir);
    without_loop(dir);
    CHECK(rmdir(dir) == 0);
    fprintf(stderr, "test_ipc_commit: ok\n");
    return 0;
}
