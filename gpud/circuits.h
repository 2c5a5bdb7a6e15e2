/*
 * circuits.h — czk-gpud's circuits: loading each configured zkey once into
 * private memory (so a key changed on disk never reaches a running gpud),
 * its key id, and the agreement with each synth and the finalizer on which
 * circuit is which.
 *
 * Between processes a circuit is its config name plus its key id
 * (czk_zkey_id).  Every daemon announces its circuits in HELLO, in its own
 * config order: the index in that list is the circuit id that daemon reads
 * in ASSIGN (synth) and RESULT (finalizer).  gpud builds one gpud_peer_map
 * per peer from the peer's HELLO: our circuit i -> the peer's id, or
 * GPUD_CIRCUIT_REFUSED when the peer does not have that name or has another
 * key under it.  Partitions of a refused circuit are never sent to that
 * peer; each refusal is logged once, naming the circuit and both key ids.
 * A peer that announces nothing (an older build) is mapped by index, as
 * before, with a warning.
 *
 * Loop thread only, except gpud_circuits_open (start-up) and the loader
 * threads' progress counters (keys.c).
 */
#ifndef CZK_GPUD_CIRCUITS_H
#define CZK_GPUD_CIRCUITS_H

#include <stdint.h>

#include "common/base/error.h"
#include "common/runtime/config.h"
#include "ipc/msg.h"

typedef struct gpud gpud;

#define GPUD_CIRCUIT_REFUSED UINT32_MAX

typedef struct gpud_peer_map {
    uint32_t peer_id[CZK_CONFIG_MAX_CIRCUITS]; /* our circuit -> the peer's circuit id, or REFUSED */
    uint8_t announced;                         /* the peer listed its circuits in HELLO */
    unsigned n_agreed;
} gpud_peer_map;

/* Reads every [circuit.NAME] zkey's header and IC (czk_zkey_load without
 * sections: sizes and key id, no points), fills g->circuits, g->n_circuits
 * and g->max_public, and logs each circuit with its key id.  A circuit whose
 * header cannot be read is GPUD_KEY_FAILED at once (header_ok 0: it sizes no
 * pool and is not announced); keys.c loads the points of the others. */
int gpud_circuits_open(gpud *g, czk_error *e);

/* The HELLO gpud sends: its role and our circuits (names and key ids, config order). */
void gpud_circuits_hello(const gpud *g, czk_msg_hello *h);
/* The daemon listener's HELLO made anew from the circuits (after a reload) */
void gpud_circuits_announce(gpud *g);

/*
 * Builds m from a peer's HELLO.  who names the peer in log lines ("synth pid
 * 123").  Logs, once per circuit, every one the peer refuses: not configured
 * there, or configured with another key id (both ids in the line).  Returns
 * the number of our circuits the peer agrees on.
 */
unsigned gpud_circuits_map(const gpud *g, const czk_msg_hello *peer, const char *who, gpud_peer_map *m);

/* m maps every circuit to the same index (a peer attached without a
 * handshake, as in unit tests); logs nothing */
void gpud_peer_map_identity(const gpud *g, gpud_peer_map *m);

/* the peer's circuit id for our circuit c, or GPUD_CIRCUIT_REFUSED */
static inline uint32_t gpud_peer_circuit(const gpud_peer_map *m, uint32_t c)
{
    return c < CZK_CONFIG_MAX_CIRCUITS ? m->peer_id[c] : GPUD_CIRCUIT_REFUSED;
}

/*
 * Why partitions of circuit c cannot go on: "no connected synth agrees on
 * circuit \"multi\" (key id 1f2e...)" when maps[0..n) are the synths' maps
 * and none of them takes c (role names the peers in the text).  Returns 1
 * with why filled, or 0 when some peer takes c (or n is 0: nobody to ask).
 */
int gpud_circuits_why_waiting(const gpud *g, uint32_t c, const gpud_peer_map *const *maps, unsigned n,
                              const char *role, char *why, size_t why_size);

/*
 * Why a job of circuit c is not moving, for its STATUS "reason": with
 * partitions waiting for the key (queued or READY: waiting_key > 0) while
 * c's key is loading or failed, `key for circuit "X" is loading (n%)` or
 * its failure (that alone); with queued partitions (queued > 0), no synth connected, or none that agrees
 * on c (gpud_circuits_why_waiting); with partitions awaiting the finalizer
 * (finalizing > 0), no finalizer connected, or one that does not agree on c.
 * Both, joined by "; ", when both hold.  Returns 1 with why filled, 0 (why
 * empty) when nothing stops the job.
 */
int gpud_circuits_job_reason(const gpud *g, uint32_t c, unsigned queued, unsigned waiting_key, unsigned finalizing,
                             char *why, size_t why_size);

/*
 * Re-validation: compares each circuit's zkey file with what was loaded
 * (size, mtime, inode; key id when those moved) and logs a change once, as a
 * warning when the key id is the same and as an error when it differs: this
 * gpud keeps proving with the key it loaded, and a peer restarted now would
 * load another one (and be refused at its HELLO).  verbose: also say when
 * nothing changed (a SIGHUP).  Returns the number of circuits whose key id
 * on disk differs from the loaded one.  gpud_circuits_open installs a SIGHUP
 * handler; main.c's tick takes a SIGHUP, calls this verbose and asks for a
 * reload (reload.c).
 */
unsigned gpud_circuits_recheck(gpud *g, int verbose);

/* frees what gpud_circuits_open allocated */
void gpud_circuits_close(gpud *g);

#endif
