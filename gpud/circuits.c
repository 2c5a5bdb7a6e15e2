/*
 * circuits.c — czk-gpud's circuits (circuits.h): the zkeys' headers read at
 * start (sizes and key ids; keys.c loads the points afterwards), the
 * per-peer circuit maps built from HELLO, and the re-validation of the files
 * on disk.  Loop thread only, except gpud_circuits_open, which main.c calls
 * before any thread starts.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/runtime/daemon.h"
#include "common/base/log.h"
#include "gpud/circuits.h"
#include "ipc/loop.h"
#include "ipc/peer.h"
#include "gpud/gpud.h"

/* What the last re-validation reported per circuit, so that a change is
 * logged once and not at every tick (one gpud per process). */
static czk_zkey_stamp reported[CZK_CONFIG_MAX_CIRCUITS];

_Static_assert(CZK_MSG_MAX_CIRCUITS >= CZK_CONFIG_MAX_CIRCUITS, "HELLO announces every configured circuit");

int gpud_circuits_open(gpud *g, czk_error *e)
{
    g->circuits = calloc((size_t)g->cfg.n_circuits, sizeof(gpud_circuit));
    if (!g->circuits)
        return czk_errorf(e, -ENOMEM, "out of memory");
    czk_daemon_sighup_init();
    for (int i = 0; i < g->cfg.n_circuits; i++) {
        gpud_circuit *c = &g->circuits[i];
        char id[CZK_ZKEY_ID_HEX];
        czk_slot_layout l;
        czk_error he = {0};

        g->n_circuits++;
        snprintf(c->name, sizeof(c->name), "%s", g->cfg.circuits[i].name);
        c->key_state = GPUD_KEY_LOADING;
        if (!g->cfg.circuits[i].zkey[0])
            return czk_errorf(e, -EINVAL, "circuit %s: no zkey: add zkey = PATH to [circuit.%s]", c->name, c->name);
        /* the header and IC only: what the pools, HELLO and SUBMIT's checks
         * need; the points come on the circuit's loader thread (keys.c) */
        if (czk_zkey_load_curves(&c->zkey, g->cfg.circuits[i].zkey, 0, CZK_CURVES_ALL, &he) < 0) {
            c->key_state = GPUD_KEY_FAILED;
            snprintf(c->key_why, sizeof(c->key_why), "%.*s", (int)sizeof(c->key_why) - 1, he.msg);
            czk_err("circuit %s: the key's header cannot be read: %s; the circuit is not served (its pool "
                    "share is not reserved) until the zkey is fixed and czk-gpud restarted",
                    c->name, he.msg);
            continue;
        }
        c->header_ok = 1;
        czk_slot_payload_layout(c->zkey.domain_size, c->zkey.n_vars, &l);
        c->slot_bytes = l.total;
        if (c->zkey.n_public > g->max_public)
            g->max_public = c->zkey.n_public;
        reported[i] = c->zkey.ident.stamp;
        czk_zkey_id_hex(&c->zkey, id);
        czk_info("circuit %s: %s, key id %s, %s, domain %u, %u variables, %u public, slot %llu bytes", c->name,
                 g->cfg.circuits[i].zkey, id, czk_curve_name(c->zkey.curve), c->zkey.domain_size, c->zkey.n_vars,
                 c->zkey.n_public, (unsigned long long)c->slot_bytes);
    }
    return 0;
}

void gpud_circuits_close(gpud *g)
{
    for (unsigned i = 0; i < g->n_circuits; i++) {
        if (g->circuits[i].points) {
            czk_zkey_close(g->circuits[i].points);
            free(g->circuits[i].points);
        }
        czk_zkey_close(&g->circuits[i].zkey);
        if (g->circuits[i].reload)
            czk_zkey_close(&g->circuits[i].reload_zkey);
    }
    free(g->circuits);
    g->circuits = NULL;
    g->n_circuits = 0;
}

void gpud_circuits_hello(const gpud *g, czk_msg_hello *h)
{
    czk_peer_hello_init(h, CZK_ROLE_GPUD, -1, 0, "czk-gpud");
    for (unsigned i = 0; i < g->n_circuits && i < CZK_MSG_MAX_CIRCUITS; i++) {
        czk_msg_circuit *c;
        if (!g->circuits[i].header_ok)
            continue; /* no key id: not offered to the peers */
        c = &h->circuits[h->n_circuits++];
        snprintf(c->name, sizeof(c->name), "%s", g->circuits[i].name);
        czk_zkey_id(&g->circuits[i].zkey, c->key_id);
    }
}

void gpud_circuits_announce(gpud *g)
{
    czk_msg_hello h;

    if (!g->daemon_listener)
        return;
    gpud_circuits_hello(g, &h);
    czk_listener_set_hello(g->daemon_listener, &h);
}

void gpud_peer_map_identity(const gpud *g, gpud_peer_map *m)
{
    memset(m, 0, sizeof(*m));
    for (unsigned i = 0; i < CZK_CONFIG_MAX_CIRCUITS; i++)
        m->peer_id[i] = i < g->n_circuits ? i : GPUD_CIRCUIT_REFUSED;
    m->n_agreed = g->n_circuits < CZK_CONFIG_MAX_CIRCUITS ? g->n_circuits : CZK_CONFIG_MAX_CIRCUITS;
}

unsigned gpud_circuits_map(const gpud *g, const czk_msg_hello *peer, const char *who, gpud_peer_map *m)
{
    memset(m, 0, sizeof(*m));
    for (unsigned i = 0; i < CZK_CONFIG_MAX_CIRCUITS; i++)
        m->peer_id[i] = GPUD_CIRCUIT_REFUSED;
    if (peer->n_circuits == 0) {
        /* an older peer: the config index, as before key ids existed */
        gpud_peer_map_identity(g, m);
        czk_warn("%s does not announce its circuits: assuming it lists the same circuits with the same keys in "
                 "the same order (upgrade it to have this checked)", who);
        return m->n_agreed;
    }
    m->announced = 1;
    for (unsigned i = 0; i < g->n_circuits && i < CZK_CONFIG_MAX_CIRCUITS; i++) {
        const gpud_circuit *c = &g->circuits[i];
        char ours[CZK_ZKEY_ID_HEX], theirs[CZK_ZKEY_ID_HEX];
        uint32_t k;

        if (!c->header_ok)
            continue; /* never scheduled: nothing to agree on */
        czk_zkey_id_hex(&c->zkey, ours);
        for (k = 0; k < peer->n_circuits; k++)
            if (!strcmp(peer->circuits[k].name, c->name))
                break;
        if (k == peer->n_circuits) {
            czk_err("circuit \"%s\" refused for %s: it is not configured there (key id here %s): no partition "
                    "of \"%s\" goes to it",
                    c->name, who, ours, c->name);
            continue;
        }
        if (memcmp(peer->circuits[k].key_id, c->zkey.ident.id, CZK_MSG_KEY_ID) != 0) {
            czk_hex(peer->circuits[k].key_id, CZK_MSG_KEY_ID, theirs);
            czk_err("circuit \"%s\" refused for %s: its zkey has key id %s, gpud's has %s: no partition of \"%s\" "
                    "goes to it until both load the same key (restart the daemon with the older key)",
                    c->name, who, theirs, ours, c->name);
            continue;
        }
        m->peer_id[i] = k;
        m->n_agreed++;
    }
    for (uint32_t k = 0; k < peer->n_circuits; k++) {
        unsigned i;
        for (i = 0; i < g->n_circuits; i++)
            if (!strcmp(peer->circuits[k].name, g->circuits[i].name))
                break;
        if (i == g->n_circuits)
            czk_info("%s knows circuit \"%s\", which gpud does not: ignored", who, peer->circuits[k].name);
    }
    czk_info("%s agrees on %u of %u circuits", who, m->n_agreed, g->n_circuits);
    return m->n_agreed;
}

int gpud_circuits_why_waiting(const gpud *g, uint32_t c, const gpud_peer_map *const *maps, unsigned n,
                              const char *role, char *why, size_t why_size)
{
    char id[CZK_ZKEY_ID_HEX];

    if (c >= g->n_circuits || n == 0)
        return 0;
    for (unsigned i = 0; i < n; i++)
        if (gpud_peer_circuit(maps[i], c) != GPUD_CIRCUIT_REFUSED)
            return 0;
    czk_zkey_id_hex(&g->circuits[c].zkey, id);
    snprintf(why, why_size,
             "waiting: no connected %s agrees on circuit \"%s\" (gpud's key id %s): see the daemons' logs for the "
             "key ids they loaded",
             role, g->circuits[c].name, id);
    return 1;
}

int gpud_circuits_job_reason(const gpud *g, uint32_t c, unsigned queued, unsigned waiting_key, unsigned finalizing,
                             char *why, size_t why_size)
{
    char syn[CZK_STATUS_REASON] = "", fin[CZK_STATUS_REASON] = "";

    if (waiting_key && c < g->n_circuits && g->circuits[c].key_state != GPUD_KEY_READY) {
        const gpud_circuit *ci = &g->circuits[c];
        if (ci->key_state == GPUD_KEY_FAILED)
            snprintf(why, why_size, "key for circuit \"%s\" failed to load: %s; the job waits until the zkey is "
                     "fixed and czk-gpud restarted", ci->name, ci->key_why);
        else
            snprintf(why, why_size, "key for circuit \"%s\" is loading (%u%%)", ci->name, gpud_key_progress(ci));
        return 1;
    }
    if (queued) {
        const gpud_peer_map *maps[64];
        unsigned n = 0, total = 0;
        for (const gpud_synth *s = g->synths; s; s = s->next, total++)
            if (n < sizeof(maps) / sizeof(maps[0]))
                maps[n++] = &s->map;
        if (total == 0)
            snprintf(syn, sizeof(syn), "waiting: no czk-synth is connected to czk-gpud");
        else if (total == n)
            gpud_circuits_why_waiting(g, c, maps, n, "synth", syn, sizeof(syn));
        /* more synths than are looked at: one of the others may take c; say nothing */
    }
    if (finalizing) {
        const gpud_peer_map *fm = &g->fin_map;
        if (!g->finalizer)
            snprintf(fin, sizeof(fin), "waiting: czk-finalizer is not connected to czk-gpud");
        else
            gpud_circuits_why_waiting(g, c, &fm, 1, "finalizer", fin, sizeof(fin));
    }
    snprintf(why, why_size, "%s%s%s", syn, syn[0] && fin[0] ? "; " : "", fin);
    return why[0] != 0;
}

unsigned gpud_circuits_recheck(gpud *g, int verbose)
{
    unsigned differ = 0;

    for (unsigned i = 0; i < g->n_circuits && i < CZK_CONFIG_MAX_CIRCUITS; i++)
        if (g->circuits[i].header_ok && czk_zkey_recheck_log(&g->circuits[i].zkey.ident, &reported[i], "czk-gpud", g->circuits[i].name,
                                 g->cfg.circuits[i].zkey, verbose) == CZK_ZKEY_CHANGED)
            differ++;
    return differ;
}
