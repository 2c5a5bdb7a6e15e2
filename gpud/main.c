/*
 * main.c — czk-gpud: wires the modules of gpud.h together.  Start-up order
 * matters: the circuits' headers are read (sizes, key ids), the journal is
 * replayed before the pools are opened (so adopted READY slots find their
 * partitions), then the sockets are bound and systemd hears READY=1: gpud
 * answers STATUS and accepts SUBMITs from then on.  Only then do the slow
 * parts start, on threads of their own (keys.c): the backend is created
 * (it may register the pools) and every circuit's key points are loaded;
 * the workers start when the backend exists, and a circuit's partitions are
 * scheduled once its key is ready.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/runtime/daemon.h"
#include "common/base/clock.h"
#include "common/base/log.h"
#include "common/runtime/trace.h"
#include "gpud/circuits.h"
#include "gpud/gpud.h"
#include "ipc/daemon_loop.h"
#include "ipc/peer.h"

static void status_tick(czk_timer *t, void *ctx)
{
    gpud *g = ctx;
    (void)t;
    czk_daemon_status("%u jobs active, %u partitions queued, %u computing, %u awaiting the finalizer; %u synths, "
                      "finalizer %s, %llu proofs",
                      g->n_active, g->part_count[P_QUEUED], g->part_count[P_GPU], g->part_count[P_FINALIZE],
                      gpud_synth_count(g), g->finalizer ? "connected" : "absent",
                      (unsigned long long)g->proofs_total);
    /* while the journal refuses records: does it take a probe again?  Once it
     * does (here or on a SUBMIT), the DONEs that could not be journaled are
     * asked for again */
    if (g->journal_down)
        gpud_journal_probe(g);
    if (g->journal_recovered) {
        g->journal_recovered = 0;
        gpud_results_resend(g);
    }
    gpud_results_check(g); /* re-sends what waited too long for DONE, then what did not fit before */
    gpud_leases_check(g);
    {
        int hup = czk_daemon_hup_take();
        if (hup)
            czk_info("SIGHUP: re-checking the zkeys and reloading the changed ones");
        gpud_circuits_recheck(g, hup); /* the zkey files against what was loaded */
        if (hup)
            gpud_reload_request(g);
        gpud_reload_poll(g);
    }
    gpud_sched_dirty(g);   /* a pass every tick, as a safety net */
}

/* The gauges that are read off gpud's state rather than updated where it
 * changes: partitions per stage, quarantined slots, connected peers, and the
 * backend's busy ratio and longest idle gap over the last minute, for all
 * devices together and per device (gpud_busy, the computation behind
 * STATUS's gpu_busy_pct / gpu_max_gap_ms and its "gpus").  Each device's
 * memory is asked of the backend here, once a second, and kept for STATUS. */
static void metrics_tick(czk_timer *t, void *ctx)
{
    gpud *g = ctx;
    double pct = 0;
    uint64_t now = czk_mono_ns(), gap = 0;
    (void)t;

    for (int st = P_QUEUED; st <= P_FINALIZE; st++)
        czk_metric_set(g->m_parts[st], g->part_count[st]);
    for (unsigned i = 0; i < g->n_pools; i++) {
        uint32_t q = 0;
        for (uint32_t s = 0; s < g->pools[i].pool.hdr->slot_count; s++)
            q += g->pools[i].slots[s].quarantined;
        czk_metric_set(g->pools[i].m_quarantined, q);
    }
    czk_metric_set(g->m_synths, gpud_synth_count(g));
    czk_metric_set(g->m_finalizer, g->finalizer ? 1 : 0);
    gpud_busy(g, -1, now, 60000000000ull, &pct, &gap);
    czk_metric_set_f(g->m_busy_ratio, pct / 100.0);
    czk_metric_set_f(g->m_max_gap, (double)gap * 1e-9);
    for (unsigned d = 0; d < g->n_gpus; d++) {
        gpud_gpu *x = &g->gpus[d];
        /* never asked of a lost device: every call on it fails (and logs) */
        x->has_mem = !x->lost && x->contexts && g->bops && g->bops->device_mem &&
                     g->bops->device_mem(g->backend, d, &x->mem_used, &x->mem_total) == 0;
        if (d >= GPUD_METRIC_GPUS)
            continue;
        gpud_busy(g, (int)d, now, 60000000000ull, &pct, &gap);
        czk_metric_set_f(g->m_gpu[d].busy, pct / 100.0);
        czk_metric_set_f(g->m_gpu[d].gap, (double)gap * 1e-9);
        if (x->has_mem)
            czk_metric_set(g->m_gpu[d].mem_used, (int64_t)x->mem_used);
    }
}

/* czk_gpud_gpu_*{gpu="N"}: registered for devices 0..GPUD_METRIC_GPUS-1
 * before the backend exists (every series is registered before the endpoint
 * is served, so the first scrape has them all, and the backend, which knows
 * its devices, is created later on a thread); worker.c sets contexts and
 * in_service when the workers start, so a label the backend has no device for
 * keeps contexts 0.  Registered last; the registry holds every series of the
 * largest configuration (common/runtime/metrics.h). */
static void open_gpu_metrics(gpud *g)
{
    char label[32];

    g->m_gpus_lost = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_gpus_lost_total", NULL,
                                     "compute devices taken out of service after a copy or compute said the "
                                     "device is lost");
    czk_metric_inc(g->m_gpus_lost, (int64_t)g->gpus_lost_total);
    for (unsigned d = 0; d < GPUD_METRIC_GPUS; d++) {
        gpud_gpu_metrics *m = &g->m_gpu[d];
        snprintf(label, sizeof(label), "gpu=\"%u\"", d);
        m->contexts = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_gpu_contexts", label,
                                      "backend contexts on the compute device (0: the backend has no such device, "
                                      "or it is not created yet)");
        m->in_service = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_gpu_in_service", label,
                                        "1 while the device is given work, 0 once it was taken out of service "
                                        "(or when it has no contexts)");
        m->busy = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_gpu_busy_ratio", label,
                                  "share of the last 60 s in which the device computed (0..1)");
        m->gap = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_gpu_max_idle_seconds", label,
                                 "longest stretch of the last 60 s in which the device computed nothing");
        m->done = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_gpu_partitions_total", label,
                                  "partitions computed on the device");
        czk_metric_inc(m->done, 0);
        m->mem_used = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_gpu_memory_used_bytes", label,
                                      "device memory in use (by any process), when the backend can say (STATUS "
                                      "has the total)");
    }
    for (unsigned d = 0; d < g->n_gpus && d < GPUD_METRIC_GPUS; d++) {
        czk_metric_set(g->m_gpu[d].contexts, g->gpus[d].contexts);
        czk_metric_set(g->m_gpu[d].in_service, g->gpus[d].contexts && !g->gpus[d].lost);
    }
}

/* Every metric gpud exports (contrib/grafana/README.md lists them); the
 * values are kept up to date where they change (part.c, sched.c, worker.c,
 * results.c, jobs.c's rejections, table.c's journal appends) and by
 * metrics_tick.  Without metrics (port 0, or it cannot be bound) gpud runs
 * on: they are for the operator, not for the proofs. */
static int open_metrics(gpud *g)
{
    static const char *stages[ST_COUNT] = {"queue", "synth", "gpu", "finalize"};
    static const char *lanes[GPUD_LANES] = {"high", "normal", "low"};
    static const char *pstages[P_STATE_COUNT] = {"queued", "synth", "ready", "gpu", "finalize"};
    static const char *rejects[GPUD_REJ_COUNT] = {"queue_full", "bad_witness", "unknown_circuit",
                                                  "duplicate_mismatch", "too_many_partitions", "too_many_publics",
                                                  "in_progress", "journal_full", "out_of_memory", "io_error",
                                                  "key_failed"};
    char label[64];
    int r;

    if (czk_metrics_new(&g->metrics) < 0)
        return -ENOMEM;
    for (int l = 0; l < GPUD_LANES; l++) {
        snprintf(label, sizeof(label), "lane=\"%s\"", lanes[l]);
        g->m_lane[l] = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_queued_partitions", label,
                                       "partitions waiting for a slot, per priority lane (SUBMIT priority 0 high, "
                                       "1 normal, 2-7 low)");
    }
    for (unsigned i = 0; i < g->n_pools; i++) {
        snprintf(label, sizeof(label), "pool=\"%u\"", g->pools[i].id);
        g->pools[i].m_in_use = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_slots_in_use", label,
                                               "pool slots assigned, filling, ready or being copied");
        czk_metric_set(g->pools[i].m_in_use, g->pools[i].in_use);
        g->pools[i].m_capacity = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_slots_capacity", label,
                                                 "slots in the pool (slots_per_pool)");
        czk_metric_set(g->pools[i].m_capacity, g->pools[i].pool.hdr->slot_count);
        g->pools[i].m_quarantined = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_slots_quarantined",
                                                    label, "slots out of use because a fill may still write them: "
                                                           "their synth missed synth_timeout_s, or its link closed "
                                                           "while its process lives");
    }
    for (int st = P_QUEUED; st <= P_FINALIZE; st++) {
        snprintf(label, sizeof(label), "stage=\"%s\"", pstages[st]);
        g->m_parts[st] = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_partitions", label,
                                         "unfinished partitions by stage: queued (no slot yet), synth (slot being "
                                         "filled), ready (filled, waiting for the backend), gpu, finalize");
    }
    for (int s = 0; s < ST_COUNT; s++) {
        snprintf(label, sizeof(label), "stage=\"%s\"", stages[s]);
        g->stage[s].hist = czk_metrics_add(g->metrics, CZK_METRIC_HISTOGRAM, "czk_gpud_stage_seconds", label,
                                           "time a partition spends in each stage");
    }
    for (int k = 0; k < GPUD_REJ_COUNT; k++) {
        snprintf(label, sizeof(label), "reason=\"%s\"", rejects[k]);
        g->m_rejects[k] = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_rejections_total", label,
                                          "SUBMITs answered REJECTED, by reason class");
    }
    g->m_proofs = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_proofs_total", NULL,
                                  "partitions proved, verified and written");
    czk_metric_inc(g->m_proofs, (int64_t)g->proofs_total);
    g->m_failures = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_failures_total", NULL,
                                    "partitions that failed");
    czk_metric_inc(g->m_failures, (int64_t)g->failures_total);
    g->m_synth_timeouts = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_synth_timeouts_total", NULL,
                                          "assignments taken back from a synth after synth_timeout_s without READY");
    g->m_result_resends = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_result_resends_total", NULL,
                                          "RESULTs sent to the finalizer again (reconnect, or no DONE in time)");
    g->m_journal_failures = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_journal_append_failures_total",
                                            NULL, "journal records that could not be written (state_dir full, "
                                            "I/O error): what they stood for was not done");
    czk_metric_inc(g->m_journal_failures, (int64_t)g->journal_failures_total);
    g->m_journal_sync = czk_metrics_add(g->metrics, CZK_METRIC_HISTOGRAM, "czk_gpud_journal_sync_seconds", NULL,
                                        "time of one journal fdatasync (a group of records; off the loop thread "
                                        "but for ACCEPT, CANCEL and failures)");
    g->m_journal_syncs = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_journal_syncs_total", NULL,
                                         "journal fdatasyncs that succeeded");
    g->m_journal_records = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_journal_records_total", NULL,
                                           "journal records made durable (divided by the syncs: the group size)");
    g->m_journal_bytes = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_journal_bytes", NULL,
                                         "size of the journal file (compacted at start and past journal_compact_kb)");
    czk_metric_set(g->m_journal_bytes, (int64_t)czk_journal_tail(g->journal).end);
    g->m_journal_compactions = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_journal_compactions_total",
                                               NULL, "journal compactions while running");
    g->m_jobs = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_active_jobs", NULL,
                                "jobs accepted and not finished");
    czk_metric_set(g->m_jobs, g->n_active);
    g->m_busy_ratio = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_backend_busy_ratio", NULL,
                                      "share of the last 60 s in which a backend context computed (0..1)");
    g->m_max_gap = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_backend_max_idle_seconds", NULL,
                                   "longest stretch of the last 60 s in which no backend context computed");
    g->m_busy_seconds = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_backend_busy_seconds_total", NULL,
                                        "compute time of the backend contexts (the contexts of one device take "
                                        "turns: rate() is the busy ratio per device)");
    czk_metric_add_f(g->m_busy_seconds, 0);
    g->m_synths = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_synths", NULL, "synths connected");
    g->m_finalizer = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_finalizer_connected", NULL,
                                     "1 while a finalizer is connected");
    gpud_keys_metrics(g); /* czk_gpud_circuit_ready, czk_gpud_key_load_seconds per circuit */
    metrics_tick(NULL, g);
    if (g->loop && !czk_loop_timer(g->loop, 1000, 1000, metrics_tick, g))
        czk_warn("could not start the metrics timer: stage, slot and busy gauges stay as they are now");
    if ((r = czk_loop_export_metrics(g->loop, g->metrics)) < 0)
        czk_warn("could not register the connection metrics: %s", strerror(-r));
    open_gpu_metrics(g);
    /* czk_metrics_serve logs where it serves, or why it cannot */
    if (czk_metrics_serve(g->metrics, g->cfg.metrics_addr, g->cfg.metrics_port) < 0)
        czk_warn("continuing without metrics");
    return 0;
}

/* [gpud] admin_group: its members may cancel any user's job (clients.c) */
static int open_admin_group(gpud *g, czk_error *e)
{
    struct group *gr;

    if (!g->cfg.admin_group[0])
        return 0;
    if (!(gr = getgrnam(g->cfg.admin_group))) {
        g->exit_status = 2; /* a configuration error: restarting cannot fix it */
        return czk_errorf(e, -ENOENT, "admin_group \"%s\" does not exist", g->cfg.admin_group);
    }
    g->admin_gid = (uint32_t)gr->gr_gid;
    g->admin_gid_set = 1;
    return 0;
}

/*
 * The runtime directory holds czk.sock (clients) and gpud.sock (synths, the
 * finalizer).  One gpud creates is mode 0750 in client_group (when set), so
 * that only the daemons' user, root and client_group members can reach even
 * the socket names.  One that exists already is left as it is: it may be
 * shared (systemd's RuntimeDirectory= /run/czk is 0755, shared with the
 * synths and the finalizer, who find gpud.sock there while gpud is away), and
 * then each socket's own mode is the guard: czk.sock 0660 in client_group,
 * gpud.sock 0600.  gpud only warns when client_group members cannot search it.
 */
static int prepare_runtime_dir(gpud *g, gid_t group, czk_error *e)
{
    const char *dir = g->cfg.runtime_dir;
    char parent[CZK_CONFIG_PATH_MAX];
    struct stat st;
    char *slash;
    int r;

    if (lstat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
            return czk_errorf(e, -ENOTDIR, "runtime_dir \"%s\" is not a directory", dir);
        if (group != (gid_t)-1 && !(st.st_mode & S_IXOTH) && !(st.st_gid == group && (st.st_mode & S_IXGRP)))
            czk_warn("runtime_dir \"%s\" (mode %04o, group %u) cannot be searched by client_group \"%s\": its "
                     "members cannot reach czk.sock (make it 0755, or 0750 in that group)",
                     dir, (unsigned)(st.st_mode & 07777), (unsigned)st.st_gid, g->cfg.client_group);
        if (st.st_mode & (S_IWGRP | S_IWOTH))
            czk_warn("runtime_dir \"%s\" is writable by %s (mode %04o): clients refuse such a directory", dir,
                     (st.st_mode & S_IWOTH) ? "others" : "its group", (unsigned)(st.st_mode & 07777));
        return 0;
    }
    if (errno != ENOENT)
        return czk_errorf(e, -errno, "could not check runtime_dir \"%s\": %s", dir, strerror(errno));
    snprintf(parent, sizeof(parent), "%s", dir);
    if ((slash = strrchr(parent, '/')) && slash != parent) {
        *slash = 0;
        if ((r = czk_daemon_mkdirs(parent, 0755, e)) < 0)
            return r;
    }
    if (mkdir(dir, 0750) < 0 && errno != EEXIST)
        return czk_errorf(e, -errno, "could not create runtime_dir \"%s\": %s", dir, strerror(errno));
    if ((group != (gid_t)-1 && chown(dir, (uid_t)-1, group) < 0) || chmod(dir, 0750) < 0)
        return czk_errorf(e, -errno, "could not make runtime_dir \"%s\" mode 0750%s: %s", dir,
                          group != (gid_t)-1 ? " in client_group" : "", strerror(errno));
    return 0;
}

/* io_uring reads RLIMIT_NOFILE when the multishot accept is submitted: raise
 * the soft limit to the hard one first, and warn when the connections and the
 * fds of the records the loop may hold received (SUBMITs carry up to
 * CZK_MSG_MAX_FDS each) do not fit under it: past it accepting backs off and
 * a record whose fds the kernel could not install is refused */
static void raise_fd_limit(const czk_loop_config *lc)
{
    struct rlimit rl;
    rlim_t held = (rlim_t)(lc->recv_buffers ? lc->recv_buffers : CZK_LOOP_RECV_BUFFERS) * CZK_MSG_MAX_FDS;
    rlim_t need = (rlim_t)lc->max_clients + (rlim_t)lc->max_daemon_conns + held + 64;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return;
    if (rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            return;
    }
    if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need)
        czk_warn("open files limit %llu is below max_clients + max_daemon_conns + %llu (the fds of received "
                 "records) + 64 = %llu: new connections will be told \"busy\" and a submission whose fds do not "
                 "fit refused when it is reached (raise LimitNOFILE=)",
                 (unsigned long long)rl.rlim_cur, (unsigned long long)held, (unsigned long long)need);
}

static int open_sockets(gpud *g, czk_error *e)
{
    char path[CZK_CONFIG_PATH_MAX + 16];
    czk_endpoint ep;
    gid_t group = (gid_t)-1;
    int fd, r;

    if (g->cfg.client_group[0]) {
        struct group *gr = getgrnam(g->cfg.client_group);
        if (!gr) {
            g->exit_status = 2; /* a configuration error: restarting cannot fix it */
            return czk_errorf(e, -ENOENT, "client_group \"%s\" does not exist", g->cfg.client_group);
        }
        group = gr->gr_gid;
    }
    if ((r = prepare_runtime_dir(g, group, e)) < 0)
        return r;
    memset(&ep, 0, sizeof(ep));
    gpud_circuits_hello(g, &ep.hello); /* peers map circuits by name and key id */
    ep.policy.uid = geteuid();
    ep.policy.gid = (gid_t)-1;
    ep.policy.allow_root = geteuid() == 0;
    ep.policy.roles_mask = CZK_ROLE_BIT(CZK_ROLE_SYNTH) | CZK_ROLE_BIT(CZK_ROLE_FINALIZER);
    ep.kind = CZK_CONN_DAEMON;
    if ((r = czk_peer_listen(g->cfg.runtime_dir, "gpud.sock", (gid_t)-1, &fd, e)) < 0)
        return r;
    /* the synths and the finalizer run as gpud's uid (or root): nobody else
     * may connect, whatever group the daemons' user shares with clients */
    snprintf(path, sizeof(path), "%s/gpud.sock", g->cfg.runtime_dir);
    if (chmod(path, 0600) < 0) {
        r = czk_errorf(e, -errno, "could not set mode 0600 on \"%s\": %s", path, strerror(errno));
        close(fd);
        return r;
    }
    if ((r = czk_loop_listen(g->loop, fd, &ep, &gpud_daemon_ops, g, &g->daemon_listener, e)) < 0)
        return r;
    ep.policy.gid = group;
    ep.policy.allow_root = 1;
    ep.policy.roles_mask = CZK_ROLE_BIT(CZK_ROLE_CLIENT);
    ep.kind = CZK_CONN_CLIENT;
    if ((r = czk_peer_listen(g->cfg.runtime_dir, "czk.sock", group, &fd, e)) < 0)
        return r;
    return czk_loop_listen(g->loop, fd, &ep, &gpud_client_ops, g, NULL, e);
}

int main(int argc, char **argv)
{
    static gpud G;
    gpud *g = &G;
    czk_daemon_args args;
    czk_loop_config lc;
    czk_error e = {0};
    int r;

    if ((r = czk_daemon_start(argc, argv, "czk-gpud", 0, &g->cfg, &args)) != 0)
        return r < 0 ? 2 : 0;
    czk_info("starting: config %s, runtime %s, state %s", args.config_path ? args.config_path : "(defaults)",
             g->cfg.runtime_dir, g->cfg.state_dir);
    if ((r = gpud_circuits_open(g, &e)) < 0)
        goto fail;
    if ((r = czk_daemon_mkdirs(g->cfg.state_dir, 0750, &e)) < 0)
        goto fail;
    czk_daemon_trace_open(g->cfg.state_dir, "czk-gpud");
    czk_loop_config_from(&lc, &g->cfg);
    raise_fd_limit(&lc);
    if ((r = czk_loop_create(&g->loop, &lc, &e)) < 0)
        goto fail;
    gpud_sched_attach(g);
    if ((r = open_admin_group(g, &e)) < 0 || (r = gpud_jobs_open(g, &e)) < 0)
        goto fail;
    if ((r = gpud_pools_open(g, &e)) < 0)
        goto fail;
    if ((r = gpud_intake_start(g, &e)) < 0)
        goto fail;
    open_metrics(g);
    gpud_jobs_requeue_all(g);
    if ((r = open_sockets(g, &e)) < 0)
        goto fail;
    if ((r = gpud_keys_start(g, &e)) < 0)
        goto fail;
    czk_daemon_attach_loop(&g->loop, &g->stopping);
    czk_loop_timer(g->loop, 1000, 2000, status_tick, g);
    czk_info("listening: %u circuits, %u pools of %d slots, sockets in %s; the %s backend and the keys are "
             "loading",
             g->n_circuits, g->n_pools, g->cfg.slots_per_pool, g->cfg.runtime_dir, g->cfg.backend);
    czk_daemon_ready("accepting jobs; loading the keys");
    gpud_sched_dirty(g);
    r = czk_loop_run(g->loop);
    g->stopping = 1;
    czk_daemon_stopping();
    gpud_intake_stop(g);
    gpud_keys_stop(g);
    gpud_workers_stop(g);
    gpud_jobs_compact_stop(g);
    gpud_journal_commit_close(g); /* before the loop goes: its callbacks may queue events */
    czk_loop_destroy(g->loop);
    g->loop = NULL;
    if (g->bops)
        g->bops->destroy(g->backend);
    gpud_keys_close(g);
    gpud_pools_close(g);
    gpud_jobs_free(g);
    gpud_circuits_close(g);
    if (g->metrics)
        czk_metrics_free(g->metrics);
    czk_trace_close();
    czk_info("stopped");
    return r < 0 ? 1 : g->exit_status; /* exit_status 1: the journal failed, systemd restarts gpud */
fail:
    czk_err("%s", e.msg[0] ? e.msg : strerror(-r));
    czk_daemon_status("failed: %s", e.msg);
    return g->exit_status ? g->exit_status : 1; /* 2: the state needs the operator, a restart cannot help */
}
