/*
 * main.c — czk-gpud: wires the modules of gpud.h together.  Start-up order
 * matters: the journal is replayed before the pools are opened (so adopted
 * READY slots find their partitions), the pools before the backend (the
 * backend may register them), and the sockets are bound last, after which
 * systemd hears READY=1.
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/runtime/daemon.h"
#include "common/base/log.h"
#include "common/runtime/trace.h"
#include "gpud/gpud.h"
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
    gpud_results_check(g); /* re-sends what waited too long for DONE, then what did not fit before */
    gpud_leases_check(g);
    gpud_sched_dirty(g);   /* a pass every tick, as a safety net */
}

static int open_circuits(gpud *g, czk_error *e)
{
    if (g->cfg.n_circuits == 0)
        return czk_errorf(e, -EINVAL, "no circuits configured: add [circuit.NAME] zkey = PATH to the config");
    g->circuits = calloc((size_t)g->cfg.n_circuits, sizeof(gpud_circuit));
    if (!g->circuits)
        return czk_errorf(e, -ENOMEM, "out of memory");
    for (int i = 0; i < g->cfg.n_circuits; i++) {
        gpud_circuit *c = &g->circuits[i];
        czk_slot_layout l;
        int r = czk_zkey_open(&c->zkey, g->cfg.circuits[i].zkey, e);
        if (r < 0)
            return r;
        g->n_circuits++;
        snprintf(c->name, sizeof(c->name), "%s", g->cfg.circuits[i].name);
        czk_slot_payload_layout(c->zkey.domain_size, c->zkey.n_vars, &l);
        c->slot_bytes = l.total;
        if (c->zkey.n_public > g->max_public)
            g->max_public = c->zkey.n_public;
        czk_info("circuit %s: %s, domain %u, %u variables, %u public, slot %llu bytes", c->name,
                 g->cfg.circuits[i].zkey, c->zkey.domain_size, c->zkey.n_vars, c->zkey.n_public,
                 (unsigned long long)c->slot_bytes);
    }
    return 0;
}

static int open_metrics(gpud *g)
{
    static const char *stages[ST_COUNT] = {"queue", "synth", "gpu", "finalize"};
    char label[64];
    int r;

    if (czk_metrics_new(&g->metrics) < 0)
        return -ENOMEM;
    for (int l = 0; l < GPUD_LANES; l++) {
        snprintf(label, sizeof(label), "lane=\"%d\"", l);
        g->m_lane[l] = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_queued_partitions", label,
                                       "partitions waiting for a slot, per priority lane");
    }
    for (unsigned i = 0; i < g->n_pools; i++) {
        snprintf(label, sizeof(label), "pool=\"%u\"", g->pools[i].id);
        g->pools[i].m_in_use = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_slots_in_use", label,
                                               "pool slots assigned, filling, ready or being copied");
    }
    for (int s = 0; s < ST_COUNT; s++) {
        snprintf(label, sizeof(label), "stage=\"%s\"", stages[s]);
        g->stage[s].hist = czk_metrics_add(g->metrics, CZK_METRIC_HISTOGRAM, "czk_gpud_stage_seconds", label,
                                           "time a partition spends in each stage");
    }
    g->m_proofs = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_proofs_total", NULL,
                                  "partitions proved, verified and written");
    g->m_failures = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_failures_total", NULL,
                                    "partitions that failed");
    g->m_synth_timeouts = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_gpud_synth_timeouts_total", NULL,
                                          "assignments taken back from a synth after synth_timeout_s without READY");
    g->m_result_resends = czk_metrics_add(g->metrics, CZK_METRIC_COUNTER, "czk_result_resends_total", NULL,
                                          "RESULTs sent to the finalizer again (reconnect, or no DONE in time)");
    g->m_jobs = czk_metrics_add(g->metrics, CZK_METRIC_GAUGE, "czk_gpud_active_jobs", NULL,
                                "jobs accepted and not finished");
    czk_metric_set(g->m_jobs, g->n_active);
    if (g->cfg.metrics_port == 0 || !g->cfg.metrics_addr[0])
        return 0;
    r = czk_metrics_serve(g->metrics, g->cfg.metrics_addr, g->cfg.metrics_port);
    if (r < 0)
        czk_warn("could not serve metrics on %s:%d: %s (continuing without)", g->cfg.metrics_addr,
                 g->cfg.metrics_port, strerror(-r));
    else
        czk_info("metrics on http://%s:%d/metrics", g->cfg.metrics_addr, czk_metrics_port(g->metrics));
    return 0;
}

static int open_sockets(gpud *g, czk_error *e)
{
    czk_endpoint ep;
    gid_t group = (gid_t)-1;
    int fd, r;

    if (g->cfg.client_group[0]) {
        struct group *gr = getgrnam(g->cfg.client_group);
        if (!gr)
            return czk_errorf(e, -ENOENT, "client_group \"%s\" does not exist", g->cfg.client_group);
        group = gr->gr_gid;
    }
    memset(&ep, 0, sizeof(ep));
    czk_peer_hello_init(&ep.hello, CZK_ROLE_GPUD, -1, 0, "czk-gpud");
    ep.policy.uid = geteuid();
    ep.policy.gid = (gid_t)-1;
    ep.policy.allow_root = geteuid() == 0;
    ep.policy.roles_mask = CZK_ROLE_BIT(CZK_ROLE_SYNTH) | CZK_ROLE_BIT(CZK_ROLE_FINALIZER);
    if ((r = czk_peer_listen(g->cfg.runtime_dir, "gpud.sock", (gid_t)-1, &fd, e)) < 0)
        return r;
    if ((r = czk_loop_listen(g->loop, fd, &ep, &gpud_daemon_ops, g, NULL, e)) < 0)
        return r;
    ep.policy.gid = group;
    ep.policy.allow_root = 1;
    ep.policy.roles_mask = CZK_ROLE_BIT(CZK_ROLE_CLIENT);
    if ((r = czk_peer_listen(g->cfg.runtime_dir, "czk.sock", group, &fd, e)) < 0)
        return r;
    return czk_loop_listen(g->loop, fd, &ep, &gpud_client_ops, g, NULL, e);
}

int main(int argc, char **argv)
{
    static gpud G;
    gpud *g = &G;
    czk_daemon_args args;
    czk_backend_config bc;
    const czk_zkey **zkeys = NULL;
    czk_backend_region *regions = NULL;
    unsigned n_regions;
    czk_loop_config lc;
    czk_error e = {0};
    int r;

    if ((r = czk_daemon_start(argc, argv, "czk-gpud", 0, &g->cfg, &args)) != 0)
        return r < 0 ? 2 : 0;
    czk_info("starting: config %s, runtime %s, state %s", args.config_path ? args.config_path : "(defaults)",
             g->cfg.runtime_dir, g->cfg.state_dir);
    if ((r = open_circuits(g, &e)) < 0)
        goto fail;
    if ((r = czk_daemon_mkdirs(g->cfg.state_dir, 0750, &e)) < 0)
        goto fail;
    czk_daemon_trace_open(g->cfg.state_dir, "czk-gpud");
    memset(&lc, 0, sizeof(lc));
    lc.out_queue_cap = 1024;
    if ((r = czk_loop_create(&g->loop, &lc, &e)) < 0)
        goto fail;
    gpud_sched_attach(g);
    if ((r = gpud_jobs_open(g, &e)) < 0)
        goto fail;
    if ((r = gpud_pools_open(g, &e)) < 0)
        goto fail;
    zkeys = calloc(g->n_circuits, sizeof(*zkeys));
    n_regions = 0;
    for (unsigned i = 0; i < g->n_pools; i++)
        n_regions += g->pools[i].pool.hdr->slot_count;
    regions = calloc(n_regions ? n_regions : 1, sizeof(*regions));
    if (!zkeys || !regions) {
        r = czk_errorf(&e, -ENOMEM, "out of memory");
        goto fail;
    }
    for (unsigned i = 0; i < g->n_circuits; i++)
        zkeys[i] = &g->circuits[i].zkey;
    memset(&bc, 0, sizeof(bc));
    bc.n_circuits = g->n_circuits;
    bc.zkeys = zkeys;
    bc.threads = g->cfg.gpud_threads;
    bc.contexts = (unsigned)g->cfg.gpud_contexts;
    /* The backend may page-lock the pools for DMA.  One region per slot: CUDA
     * refuses (cudaErrorInvalidValue) an async copy whose source straddles two
     * separately registered ranges, and a copy never leaves its slot. */
    n_regions = 0;
    for (unsigned i = 0; i < g->n_pools; i++)
        for (uint32_t s = 0; s < g->pools[i].pool.hdr->slot_count; s++) {
            regions[n_regions].base = czk_slot_data(&g->pools[i].pool, s);
            regions[n_regions].len = g->pools[i].pool.hdr->slot_stride;
            n_regions++;
        }
    bc.regions = regions;
    bc.n_regions = n_regions;
    /* a configured cuda backend without a GPU (or too little device memory) falls back to cpu */
    if ((r = czk_backend_open(g->cfg.backend, 1, &bc, &g->bops, &g->backend, &e)) < 0)
        goto fail;
    if ((r = gpud_workers_start(g, &e)) < 0 || (r = gpud_intake_start(g, &e)) < 0)
        goto fail;
    open_metrics(g);
    gpud_jobs_requeue_all(g);
    if ((r = open_sockets(g, &e)) < 0)
        goto fail;
    czk_daemon_attach_loop(&g->loop, &g->stopping, g->cfg.watchdog_ms);
    czk_loop_timer(g->loop, 1000, 2000, status_tick, g);
    czk_info("ready: %u circuits, %u pools of %d slots, backend %s, sockets in %s", g->n_circuits, g->n_pools,
             g->cfg.slots_per_pool, g->bops->name, g->cfg.runtime_dir);
    czk_daemon_ready("accepting jobs");
    gpud_sched_dirty(g);
    r = czk_loop_run(g->loop);
    g->stopping = 1;
    czk_daemon_stopping();
    gpud_intake_stop(g);
    gpud_workers_stop(g);
    czk_loop_destroy(g->loop);
    g->loop = NULL;
    g->bops->destroy(g->backend);
    gpud_pools_close(g);
    gpud_jobs_free(g);
    for (unsigned i = 0; i < g->n_circuits; i++)
        czk_zkey_close(&g->circuits[i].zkey);
    if (g->metrics)
        czk_metrics_free(g->metrics);
    free(zkeys);
    free(regions);
    free(g->circuits);
    czk_trace_close();
    czk_info("stopped");
    return r < 0 ? 1 : 0;
fail:
    czk_err("%s", e.msg[0] ? e.msg : strerror(-r));
    czk_daemon_status("failed: %s", e.msg);
    return 1;
}
