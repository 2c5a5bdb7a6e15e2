/*
 * test_gpud_gpus.c — czk-gpud's compute devices without a GPU (harness.h):
 * a fake backend whose four contexts sit on two devices (device_of), and the
 * test playing the workers.
 *
 *   - partitions spread over the devices (the idle context of the device
 *     with the fewest busy ones);
 *   - a partition's own errors (copy-in -EINVAL, compute -EIO) fail only that
 *     partition and count as "failed" on its device, which stays in service;
 *   - a compute that returns -ENODEV takes its device out of service: the
 *     partition is synthesised again and proved on the other device, so
 *     the job completes with exactly one RESULT per partition, the lost
 *     device's idle contexts get no more work, a second -ENODEV from the same
 *     device changes nothing, and STATUS (encoded and decoded through the
 *     schema) shows it out of service with the backend's reason and the
 *     right per-device counts and busy shares;
 *   - with every device lost, accepted partitions wait READY (never failed)
 *     and the job's STATUS reason says why;
 *   - gpud_busy per device and for all devices together against a
 *     brute-force count over random spans (finished and running);
 *   - a READY partition goes to an idle context on the NUMA node of its
 *     pool first (backend device_numa), even when the other device is less
 *     busy, and to the other device only when that node's are all busy;
 *   - a context that does not serve the circuit (backend serves: its GPU
 *     lacks the key) gets none of its partitions: they wait READY for a
 *     context that does.
 */
#include "tests/gpud/harness.h"

/* uniform in [lo, hi] */
static uint64_t t_range(uint64_t lo, uint64_t hi)
{
    return lo + t_rand64() % (hi - lo + 1);
}

static unsigned fake_device_of(const czk_backend *b, unsigned ctx)
{
    (void)b;
    return ctx / 2;
}

static const czk_backend_ops fake_ops = {.name = "fake", .device_of = fake_device_of};

static gpud_work *take_kick(void)
{
    return t_nkicked ? t_kicked[--t_nkicked % 64] : NULL;
}

static gpud *two_devices(const char *dir, int slots)
{
    czk_error e = {0};
    gpud *g = t_gpud_new(dir, slots, 4, 0);
    g->bops = &fake_ops;
    CHECK(gpud_gpus_setup(g, &e) == 0, "gpud_gpus_setup: %s", e.msg);
    CHECK(g->n_gpus == 2 && g->gpus[0].contexts == 2 && g->gpus[1].contexts == 2, "%u devices", g->n_gpus);
    for (unsigned i = 0; i < 4; i++)
        CHECK(g->workers[i].dev == i / 2, "worker %u on device %u", i, g->workers[i].dev);
    return g;
}

/* the synth fills every slot it was assigned (at most `max`) */
static unsigned fill_assigned(gpud *g, gpud_synth *s, unsigned max)
{
    unsigned n = 0;
    for (uint32_t k = 0; k < g->pools[0].pool.hdr->slot_count && n < max; k++) {
        gpud_part *p = g->pools[0].slots[k].part;
        if (p && p->state == P_SYNTH && g->pools[0].slots[k].synth == s) {
            t_fill(g, s, k, 1);
            n++;
        }
    }
    return n;
}

/* a compute of one second (t_clock) that ends with rc and the backend's why */
static void compute(gpud *g, gpud_work *w, int rc, const char *why)
{
    atomic_store(&w->t_started, t_clock);
    t_clock += 1000000000ull;
    w->rc_compute = rc;
    w->verify_bad = 0;
    snprintf(w->err.msg, sizeof(w->err.msg), "%s", why ? why : "");
    for (size_t i = 0; i < sizeof(w->out); i++)
        ((uint8_t *)&w->out)[i] = (uint8_t)t_rand64();
    w->out.curve = CZK_CURVE_BLS12_381;
    w->t_computed = t_clock;
    gpud_work_computed(g, w);
}

/* the finalizer answers every RESULT it got since *mark; per-partition counts */
static void answer_results(gpud *g, t_conn *fin, unsigned *mark, uint64_t job, unsigned *results)
{
    for (; *mark < fin->n; (*mark)++) {
        const t_sent *m = &fin->msgs[*mark];
        if (m->type != CZK_MSG_RESULT)
            continue;
        if (m->job == job)
            results[m->part]++;
        t_done(g, m->job, m->part, 0);
    }
}

static void test_spread_and_loss(void)
{
    char *dir = t_tmpdir();
    gpud *g;
    t_conn *sc = t_conn_new(), *fin = t_conn_new(), *cl = t_conn_new();
    gpud_synth *s;
    gpud_work *w, *kicked[4];
    unsigned fmark = 0, results[6] = {0}, spans[2] = {0}, failed[2] = {0};
    czk_status_reply *sr = calloc(2, sizeof(*sr));
    uint8_t *body = malloc(CZK_MSG_MAX_RECORD);
    czk_error e = {0};

    t_clock = 100000000000ull; /* 100 s: the busy window is a full minute */
    t_nkicked = 0;
    g = two_devices(dir, 8);
    s = gpud_synth_attach(g, T_CONN(sc), 301, 0);
    gpud_finalizer_attach(g, T_CONN(fin), 9);

    /* 1. a partition's own errors: the device stays in service */
    for (int round = 0; round < 2; round++) {
        uint64_t tj = t_submit(g, cl, 1, 1);
        t_turn(g);
        CHECK(fill_assigned(g, s, 8) == 1, "round %d: no slot assigned", round);
        t_turn(g);
        w = take_kick();
        CHECK(w != NULL, "round %d: no worker started", round);
        if (!w)
            continue;
        unsigned dev = w->dev;
        failed[dev]++;
        if (round == 0) {
            t_copied(g, w, -EINVAL); /* e.g. a slot that does not match the circuit: no compute */
            t_computed(g, w, 0);
        } else {
            t_copied(g, w, 0);
            spans[dev]++;
            compute(g, w, -EIO, "cuda backend: the A MSM of job 2 partition 0 failed: an unspecified launch failure");
        }
        t_turn(g);
        gpud_job *j = gpud_job_find(g, tj);
        CHECK(j && j->nfailed == 1 && j->state == J_FAILED, "round %d: the partition did not fail", round);
        CHECK(g->gpus[0].failed == failed[0] && g->gpus[1].failed == failed[1],
              "round %d: failed counts %llu and %llu, expected %u and %u", round,
              (unsigned long long)g->gpus[0].failed, (unsigned long long)g->gpus[1].failed, failed[0], failed[1]);
        CHECK(!g->gpus[0].lost && !g->gpus[1].lost && gpud_gpus_in_service(g) == 2 && g->gpus_lost_total == 0,
              "round %d: a partition's own error took a device out of service", round);
    }
    CHECK(g->gpus[0].failed + g->gpus[1].failed == 2, "failed on the devices: %llu + %llu",
          (unsigned long long)g->gpus[0].failed, (unsigned long long)g->gpus[1].failed);
    t_check(g);

    /* 2. six partitions: two READY go to different devices */
    uint64_t job = t_submit(g, cl, 1, 6);
    t_turn(g);
    CHECK(fill_assigned(g, s, 2) == 2, "two slots filled");
    t_turn(g);
    kicked[1] = take_kick();
    kicked[0] = take_kick();
    CHECK(kicked[0] && kicked[1] && kicked[0]->dev != kicked[1]->dev, "two partitions on one device (%u, %u)",
          kicked[0] ? kicked[0]->dev : 9, kicked[1] ? kicked[1]->dev : 9);
    CHECK(fill_assigned(g, s, 8) == 4, "four more slots filled");
    t_turn(g);
    kicked[3] = take_kick();
    kicked[2] = take_kick();
    CHECK(kicked[2] && kicked[3] && kicked[2]->dev != kicked[3]->dev, "the next two on one device");
    CHECK(take_kick() == NULL, "more workers than contexts");
    t_check(g);
    if (!kicked[0] || !kicked[1] || !kicked[2] || !kicked[3])
        goto out;
    gpud_work *d1a = kicked[0]->dev == 1 ? kicked[0] : kicked[1], *d1b = kicked[2]->dev == 1 ? kicked[2] : kicked[3];
    gpud_work *d0a = d1a == kicked[0] ? kicked[1] : kicked[0], *d0b = d1b == kicked[2] ? kicked[3] : kicked[2];
    gpud_part *lost_part = d1b->part;
    for (int i = 0; i < 4; i++)
        t_copied(g, kicked[i], 0);
    t_turn(g);
    /* device 1: one partition computed, then the device is lost */
    compute(g, d1a, 0, NULL);
    spans[1]++;
    t_turn(g);
    CHECK(g->gpus[1].done == 1, "device 1 done %llu", (unsigned long long)g->gpus[1].done);
    w = take_kick(); /* d1a was free: a READY partition went to it */
    CHECK(w == d1a, "device 1's free context got no work while it was in service");
    compute(g, d1b, -ENODEV, "cuda backend: the H MSM of job 3 partition 2 failed: an illegal memory access was "
                              "encountered (a sticky error: the device is lost)");
    spans[1]++;
    CHECK(g->gpus[1].lost && g->gpus_lost_total == 1 && gpud_gpus_in_service(g) == 1, "device 1 not out of service");
    CHECK(g->gpus[1].requeued == 1 && lost_part->state == P_QUEUED, "the lost device's partition is %s",
          gpud_part_state_name(lost_part->state));
    t_check(g);
    t_turn(g);
    CHECK(take_kick() == NULL, "work went to a context of the lost device");
    /* d1a held a partition when the device went: its copy-in fails the same
     * way, the partition is queued again too, and the loss counts once */
    if (w) {
        t_copied(g, w, -ENODEV);
        t_computed(g, w, 0);
        CHECK(g->gpus[1].requeued == 2 && g->gpus_lost_total == 1, "second loss on device 1: requeued %llu, lost %llu",
              (unsigned long long)g->gpus[1].requeued, (unsigned long long)g->gpus_lost_total);
        CHECK(strstr(g->gpus[1].why, "the H MSM"), "the first error is the reason: %s", g->gpus[1].why);
    }
    compute(g, d0a, 0, NULL);
    compute(g, d0b, 0, NULL);
    spans[0] += 2;
    t_turn(g);
    answer_results(g, fin, &fmark, job, results);
    /* the rest, on device 0 only */
    for (int step = 0; step < 40; step++) {
        gpud_job *j = gpud_job_find(g, job);
        if (!j || j->state != J_ACTIVE)
            break;
        fill_assigned(g, s, 8);
        t_turn(g);
        while ((w = take_kick())) {
            CHECK(w->dev == 0, "a partition went to device %u, which is out of service", w->dev);
            t_copied(g, w, 0);
            compute(g, w, 0, NULL);
            spans[w->dev]++;
        }
        t_turn(g);
        answer_results(g, fin, &fmark, job, results);
        t_check(g);
    }
    {
        gpud_job *j = gpud_job_find(g, job);
        CHECK(j && j->state == J_COMPLETE && j->nfailed == 0 && j->nfinished == 6, "job %llu did not complete",
              (unsigned long long)job);
        for (int i = 0; i < 6; i++)
            CHECK(results[i] == 1, "partition %d: %u RESULTs", i, results[i]);
    }
    CHECK(g->gpus[0].done == 5 && g->gpus[1].done == 1, "done per device: %llu, %llu",
          (unsigned long long)g->gpus[0].done, (unsigned long long)g->gpus[1].done);
    CHECK(g->gpus[0].requeued == 0, "device 0 requeued %llu", (unsigned long long)g->gpus[0].requeued);

    /* STATUS: through the schema, as `czk status` reads it */
    gpud_status_busy(g, &sr[0], t_clock);
    int n = czk_schema_encode(&czk_schema_status_reply, &sr[0], body, CZK_MSG_MAX_RECORD, &e);
    CHECK(n > 0 && czk_schema_decode(&czk_schema_status_reply, body, (size_t)n, &sr[1], &e) == 0, "STATUS: %s",
          e.msg);
    CHECK(sr[1].n_gpus == 2, "%u devices in STATUS", sr[1].n_gpus);
    CHECK(!strcmp(sr[1].gpus[0].state, "in_service") && !sr[1].gpus[0].reason[0] && sr[1].gpus[0].done == 5 &&
              sr[1].gpus[0].contexts == 2,
          "device 0 in STATUS: %s, done %llu", sr[1].gpus[0].state, (unsigned long long)sr[1].gpus[0].done);
    CHECK(!strcmp(sr[1].gpus[1].state, "out_of_service") && strstr(sr[1].gpus[1].reason, "illegal memory access") &&
              sr[1].gpus[1].done == 1 && sr[1].gpus[1].requeued == 2 && sr[1].gpus[1].index == 1,
          "device 1 in STATUS: %s (%s)", sr[1].gpus[1].state, sr[1].gpus[1].reason);
    CHECK(sr[1].gpus[0].failed + sr[1].gpus[1].failed == 2, "failed in STATUS");
    for (int d = 0; d < 2; d++) {
        /* every compute took one second of the last minute, none overlapping */
        double want = (double)spans[d] * 100.0 / 60.0;
        CHECK(sr[1].gpus[d].busy_pct > want - 1e-6 && sr[1].gpus[d].busy_pct < want + 1e-6,
              "device %d busy %.6f%%, expected %.6f%% (%u computes)", d, sr[1].gpus[d].busy_pct, want, spans[d]);
    }
    CHECK(sr[1].gpu_busy_pct > (double)(spans[0] + spans[1]) * 100.0 / 60.0 - 1e-6 &&
              sr[1].gpu_busy_pct < (double)(spans[0] + spans[1]) * 100.0 / 60.0 + 1e-6,
          "all devices busy %.6f%%", sr[1].gpu_busy_pct);
    CHECK(!sr[1].gpus[0].has_mem, "memory reported without a device_mem op");
    CHECK(!sr[1].gpus[0].has_numa && !sr[1].gpus[1].has_numa, "a NUMA node reported without a device_numa op");

    /* 3. the last device goes too: accepted work waits, never fails */
    uint64_t last = t_submit(g, cl, 0, 1);
    t_turn(g);
    fill_assigned(g, s, 8);
    t_turn(g);
    w = take_kick();
    CHECK(w && w->dev == 0, "the last job did not start on device 0");
    if (w) {
        t_copied(g, w, 0);
        compute(g, w, -ENODEV, "device 0 fell off the bus");
    }
    CHECK(gpud_gpus_in_service(g) == 0 && g->gpus_lost_total == 2, "device 0 still in service");
    for (int step = 0; step < 4; step++) {
        fill_assigned(g, s, 8);
        t_turn(g);
        CHECK(take_kick() == NULL, "work started with no device in service");
    }
    {
        gpud_job *j = gpud_job_find(g, last);
        czk_status_job sj;
        CHECK(j && j->state == J_ACTIVE && j->nfailed == 0 && j->parts[0].state == P_READY,
              "the job's partition is %s", j ? gpud_part_state_name(j->parts[0].state) : "gone");
        if (j) {
            gpud_status_job(g, j, &sj);
            CHECK(strstr(sj.reason, "no compute device is in service"), "reason: %s", sj.reason);
        }
    }
    t_check(g);
out:
    free(sr);
    free(body);
    t_gpud_free(g);
    t_rmtree(dir);
    free(dir);
    t_conn_free(sc);
    t_conn_free(fin);
    t_conn_free(cl);
}

/* ------------------------------------------------------ busy and gap --- */

#define WIN_MS 60000u

/* brute force over 1 ms cells of the window: busy share and longest idle run */
static void expect_busy(const uint8_t *cells, double *pct, uint64_t *gap_ns)
{
    unsigned busy = 0, run = 0, best = 0;
    for (unsigned i = 0; i < WIN_MS; i++) {
        busy += cells[i];
        run = cells[i] ? 0 : run + 1;
        if (run > best)
            best = run;
    }
    *pct = 100.0 * busy / WIN_MS;
    *gap_ns = (uint64_t)best * 1000000ull;
}

static void mark(uint8_t *cells, uint64_t t0, uint64_t b, uint64_t e)
{
    for (uint64_t t = b; t < e; t += 1000000ull)
        if (t >= t0 && t < t0 + WIN_MS * 1000000ull)
            cells[(t - t0) / 1000000ull] = 1;
}

static void test_busy(void)
{
    char *dir = t_tmpdir();
    gpud *g = two_devices(dir, 1);
    static uint8_t cells[3][WIN_MS]; /* device 0, device 1, all */

    for (int it = 0; it < 40; it++) {
        uint64_t now = (200 + t_range(0, 1000)) * 1000000000ull, t0 = now - WIN_MS * 1000000ull;
        memset(cells, 0, sizeof(cells));
        memset(&g->compute_hist, 0, sizeof(g->compute_hist));
        for (unsigned d = 0; d < 2; d++)
            memset(g->gpus[d].hist, 0, sizeof(*g->gpus[d].hist));
        /* finished spans (some starting before the window), as gpud_work_computed records them */
        for (unsigned k = 0, n = (unsigned)t_range(0, 30); k < n; k++) {
            unsigned d = (unsigned)t_range(0, 1);
            uint64_t b = t0 - 5000000000ull + t_range(0, 64000) * 1000000ull, e = b + t_range(1, 4000) * 1000000ull;
            if (e > now)
                e = now;
            if (b >= e)
                continue;
            czk_trace_hist_add(&g->compute_hist, b, e);
            czk_trace_hist_add(g->gpus[d].hist, b, e);
            mark(cells[d], t0, b, e);
            mark(cells[2], t0, b, e);
        }
        /* computes running now, on random contexts */
        for (unsigned i = 0; i < 4; i++) {
            uint64_t b = t_range(0, 2) ? 0 : now - t_range(1, 70000) * 1000000ull;
            atomic_store(&g->workers[i].t_started, b);
            if (b) {
                mark(cells[i / 2], t0, b, now);
                mark(cells[2], t0, b, now);
            }
        }
        for (int d = -1; d < 2; d++) {
            double pct, want_pct;
            uint64_t gap, want_gap;
            gpud_busy(g, d, now, WIN_MS * 1000000ull, &pct, &gap);
            expect_busy(cells[d < 0 ? 2 : d], &want_pct, &want_gap);
            CHECK(pct > want_pct - 1e-6 && pct < want_pct + 1e-6 && gap == want_gap,
                  "iteration %d device %d: busy %.6f%% gap %llu ns, expected %.6f%% and %llu ns", it, d, pct,
                  (unsigned long long)gap, want_pct, (unsigned long long)want_gap);
        }
    }
    for (unsigned i = 0; i < 4; i++)
        atomic_store(&g->workers[i].t_started, 0);
    t_gpud_free(g);
    t_rmtree(dir);
    free(dir);
}

/* device d on NUMA node d; contexts of device 1 do not serve circuit 0 when
 * fake_no_key_on_1 is set */
static int fake_no_key_on_1;
static int fake_numa(const czk_backend *b, unsigned dev)
{
    (void)b;
    return (int)dev;
}
static int fake_serves(const czk_backend *b, unsigned ctx, unsigned circuit)
{
    return !(fake_no_key_on_1 && circuit == 0 && fake_device_of(b, ctx) == 1);
}
static const czk_backend_ops placed_ops = {
    .name = "fake", .device_of = fake_device_of, .device_numa = fake_numa, .serves = fake_serves};

static void test_placement(void)
{
    char *dir = t_tmpdir();
    czk_error e = {0};
    gpud *g = t_gpud_new(dir, 8, 4, 0);
    t_conn *sc = t_conn_new(), *fin = t_conn_new(), *cl = t_conn_new();
    gpud_synth *s;
    gpud_work *w[4];

    t_nkicked = 0;
    g->bops = &placed_ops;
    CHECK(gpud_gpus_setup(g, &e) == 0, "gpud_gpus_setup: %s", e.msg);
    CHECK(g->gpus[0].numa == 0 && g->gpus[1].numa == 1, "device NUMA nodes %d, %d", g->gpus[0].numa, g->gpus[1].numa);
    g->pools[0].node = 1; /* the pool is on device 1's node */
    s = gpud_synth_attach(g, T_CONN(sc), 302, 0);
    gpud_finalizer_attach(g, T_CONN(fin), 9);

    /* 1. near first: both of device 1's contexts, then device 0 */
    t_submit(g, cl, 1, 3);
    t_turn(g);
    for (int i = 0; i < 3; i++) {
        CHECK(fill_assigned(g, s, 1) == 1, "slot %d filled", i);
        t_turn(g);
        w[i] = take_kick();
        CHECK(w[i] != NULL, "partition %d started", i);
    }
    if (w[0] && w[1] && w[2])
        CHECK(w[0]->dev == 1 && w[1]->dev == 1 && w[2]->dev == 0,
              "placement %u %u %u: want the pool's node (device 1) first, then device 0", w[0]->dev, w[1]->dev,
              w[2]->dev);
    for (int i = 0; i < 3; i++)
        if (w[i]) {
            t_copied(g, w[i], 0);
            t_computed(g, w[i], 0);
        }
    t_turn(g);
    t_check(g);

    /* 2. device 1 lacks circuit 0's key: its partitions wait for device 0 */
    fake_no_key_on_1 = 1;
    t_nkicked = 0;
    t_submit(g, cl, 1, 3);
    t_turn(g);
    CHECK(fill_assigned(g, s, 3) == 3, "three slots filled");
    t_turn(g);
    w[1] = take_kick();
    w[0] = take_kick();
    CHECK(w[0] && w[1] && w[0]->dev == 0 && w[1]->dev == 0, "the two started partitions are not both on device 0");
    CHECK(take_kick() == NULL, "a partition went to a context that does not serve its circuit");
    if (w[0] && w[1]) {
        t_copied(g, w[0], 0);
        t_computed(g, w[0], 0);
        t_turn(g);
        w[2] = take_kick();
        CHECK(w[2] && w[2]->dev == 0, "the waiting partition did not go to device 0's free context");
        t_copied(g, w[1], 0);
        t_computed(g, w[1], 0);
        if (w[2]) {
            t_copied(g, w[2], 0);
            t_computed(g, w[2], 0);
        }
    }
    t_turn(g);
    t_check(g);
    {
        czk_status_reply *sr = calloc(2, sizeof(*sr));
        uint8_t *body = malloc(CZK_MSG_MAX_RECORD);
        int n;
        CHECK(sr && body, "oom");
        gpud_status_busy(g, &sr[0], t_clock);
        n = czk_schema_encode(&czk_schema_status_reply, &sr[0], body, CZK_MSG_MAX_RECORD, &e);
        CHECK(n > 0 && czk_schema_decode(&czk_schema_status_reply, body, (size_t)n, &sr[1], &e) == 0, "STATUS: %s",
              e.msg);
        CHECK(sr[1].n_gpus == 2 && sr[1].gpus[0].has_numa && sr[1].gpus[0].numa == 0 && sr[1].gpus[1].has_numa &&
                  sr[1].gpus[1].numa == 1,
              "STATUS NUMA nodes: %d/%d %d/%d", sr[1].gpus[0].has_numa, sr[1].gpus[0].numa, sr[1].gpus[1].has_numa,
              sr[1].gpus[1].numa);
        free(sr);
        free(body);
    }
    fake_no_key_on_1 = 0;
    t_gpud_free(g);
    t_conn_free(sc);
    t_conn_free(fin);
    t_conn_free(cl);
    t_rmtree(dir);
    free(dir);
}

int main(void)
{
    czk_log_init("test_gpud_gpus", 3);
    t_seed("test_gpud_gpus");
    test_spread_and_loss();
    test_busy();
    test_placement();
    if (t_failures) {
        fprintf(stderr, "test_gpud_gpus: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_gpud_gpus: ok\n");
    return 0;
}
