/*
 * reload.c — switching a circuit's proving key while czk-gpud runs, on
 * SIGHUP (`systemctl reload czk-gpud`); docs/design.md, "Reloading a key".
 *
 * A SIGHUP re-reads every circuit's zkey header.  A circuit whose file now
 * holds another key id, of the same sizes (n_vars, n_public, domain_size),
 * switches to it in acceptance order:
 *  1. draining: the circuit's jobs accepted before the request (ids up to
 *     the highest one active then) go on with the current key in every
 *     daemon; jobs accepted later are accepted as usual but wait in their
 *     lane (gpud_job_key_ready);
 *  2. once no old job is active and none has a partition left anywhere
 *     (main.c's tick polls): the backend forgets the old points
 *     (remove_key), the circuit takes the new header (sizes, key id: HELLO,
 *     the peer maps), and its points load as at start (keys.c: read, check or
 *     verified-key record, add_key; STATUS says loading n%);
 *  3. the daemon listener's HELLO names the new key id; the peer maps are
 *     rebuilt from each peer's HELLO, and a synth or the finalizer that held
 *     the old key is disconnected: it reconnects, finds gpud's new key id in
 *     its HELLO, loads the new key when its own file has it (synth/main.c,
 *     finalizer/main.c) and connects again announcing it.
 * Refused, with an error naming both keys, and the old key kept: a key of
 * other sizes (the pools and the backend's buffers were sized at start: that
 * needs a restart), a circuit whose key is loading or failed (a restart loads
 * the file), a backend that cannot replace keys.  A SIGHUP during a drain
 * that finds yet another key id waits for that one instead; one that finds
 * the current key id again cancels the reload.
 *
 * A crash of gpud during a drain loads the file on disk at restart, as any
 * restart does: the old jobs left then are proved with the new key.  So does
 * the drain when the old key cannot be served any more: a synth (or the
 * finalizer) restarted during it loaded the new file, and no connected peer
 * of its kind holds the old key; it then switches at once, provided no
 * partition of an old job is computed with the old key and not yet DONE
 * (those wait for a peer with the old key, or a restart of gpud; logged).
 * Swapping while a partition is READY is safe: its slot holds a, b, c and w,
 * which are the same under either key of one circuit.
 *
 * Loop thread only.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/base/log.h"
#include "gpud/gpud.h"

/* the highest id of an active job of circuit c, 0 when none */
static uint64_t last_active_job(const gpud *g, uint32_t c)
{
    uint64_t last = 0;
    for (const gpud_job *j = g->jobs_head; j; j = j->next)
        if (j->circuit == c && j->state == J_ACTIVE && j->id > last)
            last = j->id;
    return last;
}

/* old jobs of circuit c not yet out of every stage: active, or holding
 * partitions (a cancelled job whose partition is still on a worker) */
static unsigned old_jobs_left(const gpud *g, uint32_t c, uint64_t last_old)
{
    unsigned n = 0;
    for (const gpud_job *j = g->jobs_head; j; j = j->next)
        if (j->circuit == c && j->id <= last_old && (j->state == J_ACTIVE || j->parts))
            n++;
    return n;
}

static void cancel_reload(gpud_circuit *c)
{
    czk_zkey_close(&c->reload_zkey);
    memset(&c->reload_zkey, 0, sizeof(c->reload_zkey));
    c->reload = 0;
}

static void request_one(gpud *g, uint32_t i)
{
    gpud_circuit *c = &g->circuits[i];
    const char *path = g->cfg.circuits[i].zkey;
    char cur[CZK_ZKEY_ID_HEX], next[CZK_ZKEY_ID_HEX];
    czk_zkey_ident now;
    czk_zkey nz;
    czk_error e = {0};

    if (!c->header_ok)
        return; /* failed at start: a restart reads it */
    if (czk_zkey_ident_path(path, &now, &e) < 0) {
        czk_err("circuit %s: reload: %s; keeping the current key", c->name, e.msg);
        return;
    }
    czk_zkey_id_hex(&c->zkey, cur);
    if (!memcmp(now.id, c->zkey.ident.id, sizeof(now.id))) {
        if (c->reload) {
            czk_info("circuit %s: %s holds the current key (id %s) again: the reload that waited is cancelled",
                     c->name, path, cur);
            cancel_reload(c);
        }
        return;
    }
    czk_hex(now.id, sizeof(now.id), next);
    if (c->reload && !memcmp(now.id, c->reload_zkey.ident.id, sizeof(now.id))) {
        czk_info("circuit %s: reload to key id %s already waits for %u job(s) accepted before it", c->name, next,
                 old_jobs_left(g, i, c->reload_last_old));
        return;
    }
    if (c->key_state != GPUD_KEY_READY) {
        czk_err("circuit %s: reload to key id %s refused: the current key is %s; restart czk-gpud to load %s",
                c->name, next, c->key_state == GPUD_KEY_FAILED ? "failed" : "still loading", path);
        return;
    }
    if (!g->bops || !g->bops->remove_key) {
        czk_err("circuit %s: reload to key id %s refused: the %s backend cannot replace a key; restart czk-gpud",
                c->name, next, g->bops ? g->bops->name : "(starting)");
        return;
    }
    if (czk_zkey_load_curves(&nz, path, 0, CZK_CURVES_ALL, &e) < 0) {
        czk_err("circuit %s: reload refused: %s; keeping key id %s", c->name, e.msg, cur);
        return;
    }
    czk_zkey_id_hex(&nz, next);
    if (nz.curve != c->zkey.curve) {
        czk_err("circuit %s: reload to key id %s refused: it is a %s key, the running key %s is %s; restart "
                "czk-gpud (and the daemons) to change a circuit's curve",
                c->name, next, czk_curve_name(nz.curve), cur, czk_curve_name(c->zkey.curve));
        czk_zkey_close(&nz);
        return;
    }
    if (nz.n_vars != c->zkey.n_vars || nz.n_public != c->zkey.n_public || nz.domain_size != c->zkey.domain_size) {
        czk_err("circuit %s: reload to key id %s refused: it has %u wires, %u public signals and a domain of %u, "
                "the running key %s has %u, %u and %u; the pools and the backend are sized at start: restart "
                "czk-gpud (and the daemons) for a key of other sizes",
                c->name, next, nz.n_vars, nz.n_public, nz.domain_size, cur, c->zkey.n_vars, c->zkey.n_public,
                c->zkey.domain_size);
        czk_zkey_close(&nz);
        return;
    }
    if (c->reload)
        cancel_reload(c); /* yet another key: wait for this one instead */
    c->reload = 1;
    c->reload_stuck_said = 0;
    c->reload_zkey = nz;
    c->reload_last_old = last_active_job(g, i);
    czk_info("circuit %s: reloading to key id %s (from %s): %u job(s) accepted before now finish with the current "
             "key first; jobs accepted from now on wait for the new one",
             c->name, next, cur, old_jobs_left(g, i, c->reload_last_old));
    gpud_sched_dirty(g);
}

void gpud_reload_request(gpud *g)
{
    for (uint32_t i = 0; i < g->n_circuits; i++)
        request_one(g, i);
}

/* a peer's map rebuilt from its HELLO; 1 when it agreed on circuit i before and does not now */
static int remap(const gpud *g, czk_conn *conn, gpud_peer_map *m, uint32_t i, const char *who)
{
    int agreed = gpud_peer_circuit(m, i) != GPUD_CIRCUIT_REFUSED;
    gpud_circuits_map(g, czk_conn_peer(conn), who, m);
    return agreed && gpud_peer_circuit(m, i) == GPUD_CIRCUIT_REFUSED;
}

/* partitions of the old jobs of circuit i computed, or being computed,
 * with the old key (on a worker, or waiting for the finalizer's DONE): they
 * must end with the old key.  What is queued, being filled or READY is the
 * same for either key of one circuit (a, b, c, w come from the witness and
 * the constraints) */
static unsigned old_parts_computed(const gpud *g, uint32_t i, uint64_t last_old)
{
    unsigned n = 0;
    for (const gpud_job *j = g->jobs_head; j; j = j->next) {
        if (j->circuit != i || j->id > last_old || !j->parts)
            continue;
        for (uint32_t p = 0; p < j->nparts; p++)
            n += j->parts[p].state == P_GPU || j->parts[p].state == P_FINALIZE;
    }
    return n;
}

static void swap(gpud *g, uint32_t i)
{
    gpud_circuit *c = &g->circuits[i];
    char why[160], who[48];
    czk_error e = {0};
    czk_zkey nz = c->reload_zkey;

    memset(&c->reload_zkey, 0, sizeof(c->reload_zkey));
    c->reload = 0;
    c->reload_stuck_said = 0;
    if (gpud_keys_replace(g, i, &nz, &e) < 0) {
        czk_err("circuit %s: %s", c->name, e.msg);
        return;
    }
    gpud_circuits_announce(g);
    snprintf(why, sizeof(why), "the key of circuit \"%s\" was reloaded: reconnect with it", c->name);
    for (gpud_synth *s = g->synths; s; s = s->next) {
        snprintf(who, sizeof(who), "synth pid %u", s->owner);
        if (remap(g, s->c, &s->map, i, who) && gpud_conn_open(g, s->c))
            czk_conn_close(s->c, -ESTALE, why, 1);
    }
    if (g->finalizer && remap(g, g->finalizer, &g->fin_map, i, "the finalizer"))
        czk_conn_close(g->finalizer, -ESTALE, why, 1);
    gpud_sched_dirty(g);
}

/* 1 when the peer's HELLO announces circuit i with the new key id */
static int has_new_key(const gpud *g, czk_conn *conn, uint32_t i)
{
    const czk_msg_hello *h = czk_conn_peer(conn);
    int k = czk_msg_hello_circuit(h, g->circuits[i].name);
    return k >= 0 && !memcmp(h->circuits[k].key_id, g->circuits[i].reload_zkey.ident.id, CZK_MSG_KEY_ID);
}

/*
 * The old key can no longer be served when a peer that was restarted during
 * the drain came back with the new key (it loads the file on disk) and no
 * connected peer of its kind holds the old one: the old jobs would wait
 * forever.  Returns which kind ("synth", "finalizer"), or NULL.
 */
static const char *old_key_gone(gpud *g, uint32_t i)
{
    int old = 0, new = 0;
    for (const gpud_synth *s = g->synths; s; s = s->next) {
        if (!gpud_conn_open(g, s->c))
            continue;
        old += gpud_peer_circuit(&s->map, i) != GPUD_CIRCUIT_REFUSED;
        new += has_new_key(g, s->c, i);
    }
    if (new && !old)
        return "synth";
    if (g->finalizer && gpud_conn_open(g, g->finalizer) &&
        gpud_peer_circuit(&g->fin_map, i) == GPUD_CIRCUIT_REFUSED && has_new_key(g, g->finalizer, i))
        return "finalizer";
    return NULL;
}

void gpud_reload_poll(gpud *g)
{
    for (uint32_t i = 0; i < g->n_circuits; i++) {
        gpud_circuit *c = &g->circuits[i];
        unsigned left;
        const char *who;
        if (!c->reload)
            continue;
        if ((left = old_jobs_left(g, i, c->reload_last_old)) == 0) {
            swap(g, i);
        } else if ((who = old_key_gone(g, i)) != NULL) {
            unsigned computed = old_parts_computed(g, i, c->reload_last_old);
            if (computed == 0) {
                czk_warn("circuit %s: no connected %s holds the current key any more (restarted, it loaded the "
                         "new one): switching now; the %u job(s) accepted before the reload that are left are "
                         "proved with the new key, as after a restart of czk-gpud",
                         c->name, who, left);
                swap(g, i);
            } else if (!c->reload_stuck_said) {
                c->reload_stuck_said = 1;
                czk_warn("circuit %s: no connected %s holds the current key any more (restarted, it loaded the "
                         "new one), and %u partition(s) computed with it wait for it; they are finished when a "
                         "peer with that key connects, or proved again with the new key when czk-gpud restarts",
                         c->name, who, computed);
            }
        }
    }
}
