/*
 * main.c — czk-synth --numa-node N: binds itself to node N, maps each
 * circuit's zkey once, connects to czk-gpud (reconnecting with exponential
 * backoff whenever gpud goes away), maps the pool gpud sends in POOL, and
 * fills the slots gpud ASSIGNs (fill.c), answering READY.
 *
 * Reconnection rule: a synth connects only when no fill is in flight, so after
 * a reconnect no thread of this process can still be writing into a slot the
 * new gpud may hand to someone else.  After the POOL of the new connection it
 * sends RESYNC with the slots it still holds (READY, not yet RELEASEd).
 *
 * Sending: a READY or RESYNC that cannot be queued is never dropped: the loop
 * then closes the connection (or, for a record that could not even be
 * encoded, send_or_close does), and the reconnect carries the slots this
 * synth still holds in its RESYNC; gpud reclaims the rest when it sees EOF.
 */
#include <errno.h>
#include <numa.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/runtime/daemon.h"
#include "common/base/log.h"
#include "common/crypto/par.h"
#include "common/runtime/trace.h"
#include "ipc/peer.h"
#include "synth/synth.h"

static void try_connect(synth *s);

/* ------------------------------------------------------ zkey re-checks --- */

/* The zkey files against what was loaded: every 2 s (a stat each; the key id
 * is read only when the file moved), logging each change once, and the next
 * tick after a SIGHUP (reload) says so even when nothing changed. */
static czk_zkey_stamp zkey_reported[CZK_CONFIG_MAX_CIRCUITS];
static void zkey_watch_tick(czk_timer *t, void *ctx)
{
    synth *s = ctx;
    int verbose = czk_daemon_hup_take();
    (void)t;
    if (verbose)
        czk_info("SIGHUP: re-checking the zkeys");
    for (unsigned i = 0; i < s->n_circuits; i++)
        if (s->zkeys[i].map) /* not for a key that failed at start */
            czk_zkey_recheck_log(&s->zkeys[i].ident, &zkey_reported[i], "czk-synth", s->cfg.circuits[i].name,
                                 s->cfg.circuits[i].zkey, verbose);
}

static void zkey_watch_start(synth *s)
{
    czk_daemon_sighup_init();
    czk_loop_timer(s->loop, 2000, 2000, zkey_watch_tick, s);
}

/* queue m to gpud, or close the connection so that the resync recovers it */
static void send_or_close(synth *s, const czk_msg *m)
{
    int r = czk_conn_send(s->conn, m, NULL, 0);
    if (r < 0 && czk_conn_is_open(s->conn)) /* not queued and still open: encoding failed (logged) */
        czk_conn_close(s->conn, r, "could not queue a record for gpud: reconnecting to resynchronize", 0);
}

static void send_ready(synth *s, const fill *f)
{
    czk_msg m;
    const czk_zkey *z = &s->zkeys[f->circuit];
    czk_slot_layout l;

    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_READY;
    m.u.ready.pool_id = f->pool_id;
    m.u.ready.slot = f->slot;
    m.u.ready.generation = f->gen;
    if (f->rc == 0) {
        czk_slot_payload_layout(z->domain_size, z->n_vars, &l);
        m.u.ready.domain_size = z->domain_size;
        m.u.ready.n_vars = z->n_vars;
        m.u.ready.data_len = l.total;
    } else {
        m.u.ready.status = f->rc < -4095 ? -EIO : f->rc;
        snprintf(m.u.ready.reason, sizeof(m.u.ready.reason), "%s", f->reason);
    }
    send_or_close(s, &m);
}

static void live_unlink(synth *s, fill *f)
{
    if (f->live_prev)
        f->live_prev->live_next = f->live_next;
    else
        s->live = f->live_next;
    if (f->live_next)
        f->live_next->live_prev = f->live_prev;
}

void synth_fill_done(czk_loop_task *t, void *ctx)
{
    fill *f = ctx;
    synth *s = f->s;
    held *h = f->slot < s->held_cap ? &s->held[f->slot] : NULL;
    (void)t;

    s->outstanding--;
    czk_metric_set(s->m_in_flight, s->outstanding);
    if (f->rc == 0) {
        s->fills_ok++;
        czk_metric_inc(s->m_fills_ok, 1);
    } else if (f->rc != -ECANCELED) {
        s->fills_failed++;
        czk_metric_inc(s->m_fills_failed, 1);
    } else {
        czk_metric_inc(s->m_fills_cancelled, 1);
    }
    if (f->rc < 0 && f->rc != -ECANCELED)
        czk_warn("job %llu partition %u (slot %u gen %u): fill failed: %s", (unsigned long long)f->job,
                 f->partition, f->slot, f->gen, f->reason);
    if (h && h->f == f) {
        h->f = NULL;
        h->state = f->rc == 0 ? H_READY : H_NONE;
    }
    if (s->conn && f->conn_epoch == s->conn_epoch && czk_conn_is_open(s->conn))
        send_ready(s, f);
    live_unlink(s, f);
    free(f);
    if (!s->conn && s->outstanding == 0 && !s->backoff.pending && !s->stopping)
        try_connect(s);
}

/* ------------------------------------------------------------ messages --- */

static void on_pool(synth *s, const czk_msg_pool *p, int *fds)
{
    czk_error e = {0};
    czk_msg m;
    uint32_t n = 0;

    /* every POOL is mapped afresh: a restarted gpud may have adopted the old
     * pool (epoch + 1) or created a new one; READY slots we still hold are
     * reported in RESYNC either way and gpud RELEASEs what it does not know */
    if (s->have_pool) {
        czk_pool_close(&s->pool);
        s->have_pool = 0;
    }
    if (czk_pool_attach(&s->pool, fds[0], p, &e) < 0) {
        czk_err("could not map pool %u: %s", p->pool_id, e.msg);
        czk_conn_close(s->conn, -EINVAL, "pool unusable", 0);
        return;
    }
    s->have_pool = 1;
    s->pool_id = p->pool_id;
    if (s->held_cap < p->slot_count) {
        held *nh = calloc(p->slot_count, sizeof(held));
        if (!nh) {
            czk_conn_close(s->conn, -ENOMEM, "out of memory", 0);
            return;
        }
        if (s->held)
            memcpy(nh, s->held, s->held_cap * sizeof(held));
        free(s->held);
        s->held = nh;
        s->held_cap = p->slot_count;
    }
    czk_info("mapped pool %u (node %d, %u slots of %llu bytes, epoch %llu)", p->pool_id, p->numa_node,
             p->slot_count, (unsigned long long)p->slot_size, (unsigned long long)p->epoch);
    memset(&m, 0, sizeof(m));
    m.type = CZK_MSG_RESYNC;
    m.u.resync.pool_id = s->pool_id;
    for (uint32_t i = 0; i < s->held_cap && n < CZK_MSG_MAX_RESYNC; i++)
        if (s->held[i].state == H_READY) {
            m.u.resync.slots[n].slot = i;
            m.u.resync.slots[n].generation = s->held[i].gen;
            n++;
        }
    m.u.resync.n = n;
    send_or_close(s, &m);
    czk_daemon_status("connected to czk-gpud, pool %u mapped", s->pool_id);
}

static void on_assign(synth *s, const czk_msg_assign *a)
{
    fill *f;
    if (!s->have_pool || a->pool_id != s->pool_id || a->slot >= s->held_cap) {
        czk_warn("ASSIGN for pool %u slot %u, which is not ours: ignored", a->pool_id, a->slot);
        return;
    }
    if (a->circuit_id < s->n_circuits && !s->zkeys[a->circuit_id].map) {
        czk_err("ASSIGN for circuit \"%s\", whose key this synth could not read: ignored (gpud takes the slot "
                "back after its lease)", s->cfg.circuits[a->circuit_id].name);
        return;
    }
    if (a->circuit_id >= s->n_circuits) {
        czk_err("ASSIGN for circuit %u, but only %u circuits are configured here: check that gpud and this "
                "synth read the same config", a->circuit_id, s->n_circuits);
        return;
    }
    f = calloc(1, sizeof(*f));
    if (!f)
        return;
    f->s = s;
    f->pool_id = a->pool_id;
    f->slot = a->slot;
    f->gen = (uint32_t)a->generation;
    f->circuit = a->circuit_id;
    f->job = a->job_id;
    f->partition = a->partition;
    f->conn_epoch = s->conn_epoch;
    snprintf(f->spool, sizeof(f->spool), "%s", a->spool);
    f->live_next = s->live;
    if (s->live)
        s->live->live_prev = f;
    s->live = f;
    s->held[a->slot].state = H_FILLING;
    s->held[a->slot].gen = f->gen;
    s->held[a->slot].f = f;
    synth_fill_enqueue(s, f);
    czk_metric_set(s->m_in_flight, s->outstanding);
}

static void on_release(synth *s, const czk_msg_release *r)
{
    held *h;
    if (r->pool_id != s->pool_id || r->slot >= s->held_cap)
        return;
    h = &s->held[r->slot];
    if (h->gen != r->generation)
        return;
    if (h->state == H_FILLING && h->f)
        __atomic_store_n(&h->f->cancel, 1, __ATOMIC_RELEASE); /* gpud cancelled it */
    else if (h->state == H_READY)
        h->state = H_NONE;
}

static void conn_msg(czk_conn *c, const czk_msg *m, int *fds, int nfds, void *ctx)
{
    synth *s = ctx;
    (void)c;
    (void)nfds;
    switch (m->type) {
    case CZK_MSG_POOL:
        on_pool(s, &m->u.pool, fds);
        break;
    case CZK_MSG_ASSIGN:
        on_assign(s, &m->u.assign);
        break;
    case CZK_MSG_RELEASE:
        on_release(s, &m->u.release);
        break;
    case CZK_MSG_ERROR:
        czk_warn("gpud says: %s", m->u.error.message);
        break;
    default:
        break;
    }
}

/* ---------------------------------------------------------- connection --- */

static void reconnect_tick(czk_timer *t, void *ctx)
{
    synth *s = ctx;
    (void)t;
    czk_backoff_fired(&s->backoff);
    if (!s->conn && !s->stopping && s->outstanding == 0)
        try_connect(s);
}

static void schedule_reconnect(synth *s)
{
    czk_backoff_schedule(&s->backoff, s->loop, reconnect_tick, s);
}

/*
 * gpud announced key id `theirs` for circuit i, not ours.  When our zkey
 * file now holds that key (gpud switched to it on a reload, gpud/reload.c),
 * load it in place of ours.  Only with no fill in flight (right after a
 * connect: gpud assigns nothing before our HELLO agrees).  1 when loaded.
 */
static int reload_circuit(synth *s, unsigned i, const uint8_t *theirs)
{
    const char *path = s->cfg.circuits[i].zkey;
    char id[CZK_ZKEY_ID_HEX];
    czk_zkey_ident now;
    czk_zkey nz;
    czk_error e = {0};

    if (s->outstanding != 0 || czk_zkey_ident_path(path, &now, &e) < 0 ||
        memcmp(now.id, theirs, CZK_MSG_KEY_ID) != 0)
        return 0;
    if (czk_zkey_load_curves(&nz, path, CZK_ZKEY_COEFS, CZK_CURVES_ALL, &e) < 0) {
        czk_err("circuit \"%s\": could not load the key czk-gpud now uses: %s", s->cfg.circuits[i].name, e.msg);
        return 0;
    }
    if (memcmp(nz.ident.id, theirs, CZK_MSG_KEY_ID) != 0 ||
        (s->zkeys[i].map && (nz.curve != s->zkeys[i].curve || nz.domain_size != s->zkeys[i].domain_size ||
                             nz.n_vars != s->zkeys[i].n_vars))) {
        czk_err("circuit \"%s\": %s changed again while it was loaded, or has other sizes: keeping the old key",
                s->cfg.circuits[i].name, path);
        czk_zkey_close(&nz);
        return 0;
    }
    czk_zkey_close(&s->zkeys[i]);
    s->zkeys[i] = nz;
    zkey_reported[i] = nz.ident.stamp;
    czk_zkey_id_hex(&nz, id);
    czk_info("circuit \"%s\": reloaded %s (key id %s), the key czk-gpud now uses", s->cfg.circuits[i].name, path, id);
    return 1;
}

static void conn_open(czk_conn *c, void *ctx)
{
    synth *s = ctx;
    const czk_msg_hello *h = czk_conn_peer(c);
    unsigned reloaded = 0;
    czk_backoff_reset(&s->backoff);
    czk_metric_set(s->m_connected, 1);
    czk_info("connected to czk-gpud");
    /* gpud maps circuits by name and key id (gpud/circuits.h); say here too
     * which of ours it will not assign, with both key ids */
    for (unsigned i = 0; i < s->n_circuits && h->n_circuits; i++) {
        int k = czk_msg_hello_circuit(h, s->cfg.circuits[i].name);
        char ours[CZK_ZKEY_ID_HEX], theirs[CZK_ZKEY_ID_HEX];
        czk_zkey_id_hex(&s->zkeys[i], ours);
        if (k < 0 && !s->zkeys[i].map)
            continue; /* failed here at start (logged then), and not served by gpud either */
        if (k < 0) {
            czk_warn("circuit \"%s\" (key id %s) is not configured in czk-gpud: it will assign none of it",
                     s->cfg.circuits[i].name, ours);
        } else if (memcmp(h->circuits[k].key_id, s->zkeys[i].ident.id, CZK_MSG_KEY_ID) != 0) {
            if (reload_circuit(s, i, h->circuits[k].key_id)) {
                reloaded++;
                continue;
            }
            czk_hex(h->circuits[k].key_id, CZK_MSG_KEY_ID, theirs);
            czk_err("circuit \"%s\" refused: czk-gpud's zkey has key id %s, this synth's has %s: gpud assigns "
                    "none of it until both load the same key",
                    s->cfg.circuits[i].name, theirs, ours);
        }
    }
    /* our HELLO named the old key ids: connect again with the new ones */
    if (reloaded)
        czk_conn_close(c, -ESTALE, "reloaded keys: reconnecting to announce them", 0);
}

static void conn_close(czk_conn *c, int err, const char *why, void *ctx)
{
    synth *s = ctx;
    fill *f;
    if (s->conn != c)
        return;
    s->conn = NULL;
    s->conn_epoch++;
    czk_metric_set(s->m_connected, 0);
    if (s->stopping)
        return;
    /* nothing queued will be wanted by the next gpud: cancel it all */
    pthread_mutex_lock(&s->mu);
    for (f = s->q_head; f; f = f->next)
        __atomic_store_n(&f->cancel, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&s->mu);
    for (uint32_t i = 0; i < s->held_cap; i++)
        if (s->held[i].state == H_FILLING && s->held[i].f)
            __atomic_store_n(&s->held[i].f->cancel, 1, __ATOMIC_RELEASE);
    czk_warn("lost czk-gpud (%s): reconnecting once %u fills have stopped", why, s->outstanding);
    czk_daemon_status("waiting for czk-gpud");
    if (s->outstanding == 0)
        schedule_reconnect(s);
}

static const czk_conn_ops synth_ops = {
    .on_open = conn_open,
    .on_msg = conn_msg,
    .on_close = conn_close,
};

static void try_connect(synth *s)
{
    char path[CZK_CONFIG_PATH_MAX + 16];
    czk_endpoint ep;
    czk_error e = {0};
    int fd;

    snprintf(path, sizeof(path), "%s/gpud.sock", s->cfg.runtime_dir);
    if (czk_peer_connect(path, &fd, &e) < 0) {
        czk_debug("connect: %s (retry in %llu ms)", e.msg, (unsigned long long)s->backoff.next_ms);
        schedule_reconnect(s);
        return;
    }
    memset(&ep, 0, sizeof(ep));
    czk_peer_hello_init(&ep.hello, CZK_ROLE_SYNTH, s->node, s->node < 0 ? 0u : (uint32_t)s->node, "czk-synth");
    for (unsigned i = 0; i < s->n_circuits && i < CZK_MSG_MAX_CIRCUITS; i++) { /* our circuits, config order */
        snprintf(ep.hello.circuits[i].name, sizeof(ep.hello.circuits[i].name), "%s", s->cfg.circuits[i].name);
        czk_zkey_id(&s->zkeys[i], ep.hello.circuits[i].key_id);
        ep.hello.n_circuits = i + 1;
    }
    ep.policy.uid = geteuid();
    ep.policy.gid = (gid_t)-1;
    ep.policy.allow_root = 1;
    ep.policy.roles_mask = CZK_ROLE_BIT(CZK_ROLE_GPUD);
    if (czk_loop_connect(s->loop, fd, &ep, &synth_ops, s, &s->conn, &e) < 0) {
        czk_warn("connect to %s: %s", path, e.msg);
        s->conn = NULL;
        schedule_reconnect(s);
    }
}

/* ------------------------------------------------------------- metrics --- */

/* czk_synth_* on [synth] metrics_addr : metrics_port + the NUMA node (node
 * -1: metrics_port), so that the synths of one host each have their own
 * port; 0 turns them off.  A synth runs on without metrics when the port
 * cannot be bound. */
static void open_metrics(synth *s)
{
    int port = s->cfg.synth_metrics_port, r;

    if (czk_metrics_new(&s->metrics) < 0) {
        czk_warn("out of memory for the metrics: continuing without");
        return;
    }
    s->m_fills_ok = czk_metrics_add(s->metrics, CZK_METRIC_COUNTER, "czk_synth_fills_total", "result=\"ok\"",
                                    "slot fills by outcome: ok (READY published), failed, cancelled (by gpud)");
    s->m_fills_failed =
        czk_metrics_add(s->metrics, CZK_METRIC_COUNTER, "czk_synth_fills_total", "result=\"failed\"", NULL);
    s->m_fills_cancelled =
        czk_metrics_add(s->metrics, CZK_METRIC_COUNTER, "czk_synth_fills_total", "result=\"cancelled\"", NULL);
    s->m_fill_seconds = czk_metrics_add(s->metrics, CZK_METRIC_HISTOGRAM, "czk_synth_fill_seconds", NULL,
                                        "time of one successful fill: witness read and checked, a, b, c built, w "
                                        "copied, READY published");
    s->m_fill_bytes = czk_metrics_add(s->metrics, CZK_METRIC_COUNTER, "czk_synth_fill_bytes_total", NULL,
                                      "slot payload bytes filled (a, b, c, w)");
    s->m_in_flight = czk_metrics_add(s->metrics, CZK_METRIC_GAUGE, "czk_synth_fills_in_flight", NULL,
                                     "ASSIGNed fills queued or running");
    s->m_connected = czk_metrics_add(s->metrics, CZK_METRIC_GAUGE, "czk_synth_gpud_connected", NULL,
                                     "1 while connected to czk-gpud");
    if ((r = czk_loop_export_metrics(s->loop, s->metrics)) < 0)
        czk_warn("could not register the connection metrics: %s", strerror(-r));
    if (port == 0)
        return;
    if (s->node > 0)
        port += s->node;
    if (port > 65535) {
        czk_warn("[synth] metrics_port %d + NUMA node %d is beyond 65535: continuing without metrics",
                 s->cfg.synth_metrics_port, s->node);
        return;
    }
    /* czk_metrics_serve logs where it serves, or why it cannot */
    if (czk_metrics_serve(s->metrics, s->cfg.synth_metrics_addr, port) < 0)
        czk_warn("continuing without metrics");
}

/* ---------------------------------------------------------------- main --- */

static void bind_node(int node)
{
    struct bitmask *bm;
    if (node < 0)
        return;
    if (numa_available() < 0) {
        czk_info("libnuma reports no NUMA support: node %d binding skipped", node);
        return;
    }
    if (node > numa_max_node()) {
        czk_warn("node %d does not exist (highest is %d): running unbound", node, numa_max_node());
        return;
    }
    if (numa_run_on_node(node) < 0)
        czk_warn("could not bind threads to node %d: %s (continuing)", node, strerror(errno));
    bm = numa_allocate_nodemask();
    numa_bitmask_setbit(bm, (unsigned)node);
    numa_set_membind(bm);
    numa_free_nodemask(bm);
    czk_info("threads and memory bound to NUMA node %d", node);
}

int main(int argc, char **argv)
{
    static synth S;
    synth *s = &S;
    czk_daemon_args args;
    czk_loop_config lc;
    czk_error e = {0};
    int r;

    if ((r = czk_daemon_start(argc, argv, "czk-synth", 1, &s->cfg, &args)) != 0)
        return r < 0 ? 2 : 0;
    s->node = args.numa_node;
    s->owner = (uint32_t)getpid() & 0xffffffu;
    s->threads = czk_par_threads(s->cfg.synth_threads);
    czk_backoff_init(&s->backoff, (uint64_t)s->cfg.reconnect_max_ms);
    bind_node(s->node);
    s->zkeys = calloc((size_t)s->cfg.n_circuits, sizeof(czk_zkey));
    if (!s->zkeys)
        return 1;
    /* the coefficients are all a synth reads; loaded into private memory, so a
     * zkey truncated or overwritten on disk cannot crash the fill thread */
    for (int i = 0; i < s->cfg.n_circuits; i++) {
        char id[CZK_ZKEY_ID_HEX];
        if (czk_zkey_load_curves(&s->zkeys[i], s->cfg.circuits[i].zkey, CZK_ZKEY_COEFS, CZK_CURVES_ALL, &e) < 0) {
            /* as czk-gpud does: the other circuits are served; this one is
             * announced with an all-zero key id, which no key has, so gpud
             * assigns none of it */
            memset(&s->zkeys[i], 0, sizeof(s->zkeys[i]));
            s->n_circuits++;
            czk_err("circuit %s: its key cannot be read: %s; this synth takes no partition of it until the zkey is "
                    "fixed and czk-synth restarted",
                    s->cfg.circuits[i].name, e.msg);
            continue;
        }
        s->n_circuits++;
        zkey_reported[i] = s->zkeys[i].ident.stamp;
        czk_zkey_id_hex(&s->zkeys[i], id);
        czk_info("circuit %s: %s, key id %s", s->cfg.circuits[i].name, s->cfg.circuits[i].zkey, id);
    }
    czk_loop_config_from(&lc, &s->cfg);
    if ((r = czk_loop_create(&s->loop, &lc, &e)) < 0) {
        czk_err("%s", e.msg);
        return 1;
    }
    czk_daemon_trace_open(s->cfg.state_dir, "czk-synth");
    open_metrics(s);
    if (synth_fill_start(s) < 0) {
        czk_err("could not start the fill thread");
        return 1;
    }
    czk_daemon_attach_loop(&s->loop, &s->stopping);
    zkey_watch_start(s);
    czk_info("ready: node %d, %u circuits, %d threads, gpud at %s/gpud.sock", s->node, s->n_circuits, s->threads,
             s->cfg.runtime_dir);
    czk_daemon_ready("waiting for czk-gpud");
    try_connect(s);
    r = czk_loop_run(s->loop);
    s->stopping = 1;
    czk_daemon_stopping();
    synth_fill_stop(s);
    czk_loop_destroy(s->loop);
    /* fills the stopped loop will not deliver: still queued, or done with their
     * completion posted; gpud takes their slots back after the lease */
    while (s->live) {
        fill *f = s->live;
        s->live = f->live_next;
        free(f);
    }
    czk_metrics_free(s->metrics);
    if (s->have_pool)
        czk_pool_close(&s->pool);
    for (unsigned i = 0; i < s->n_circuits; i++)
        czk_zkey_close(&s->zkeys[i]);
    free(s->zkeys);
    free(s->held);
    czk_trace_close();
    czk_info("stopped: %llu fills, %llu failed", (unsigned long long)s->fills_ok,
             (unsigned long long)s->fills_failed);
    return r < 0 ? 1 : 0;
}
