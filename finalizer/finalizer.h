/*
 * finalizer.h — czk-finalizer's internal interface (not a public contract).
 *
 *   main.c    start-up, the gpud connection (reconnect with backoff), RESULT -> DONE,
 *             writes waiting for disk space (retried on a back-off timer)
 *   output.c  durable, idempotent output files: public.json, timings.json,
 *             identity.json, proof.json per partition, summary.json per job;
 *             the identity check of files found already written
 */
#ifndef CZK_FINALIZER_H
#define CZK_FINALIZER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/base/error.h"

/* per-partition stage timings, seconds */
typedef struct fin_timings {
    uint64_t job;
    uint32_t partition, n_partitions;
    const char *circuit;
    uint64_t submit_ns;
    double queue_s, synth_s, gpu_s, finalize_s;
} fin_timings;

/*
 * What a partition's files must be to answer a RESULT from them.  Written as
 * identity.json beside proof.json:
 *   {"job": J, "partition": P, "circuit": "NAME",
 *    "vk_sha256": "<hex of the circuit's verification_key.json text>",
 *    "public_sha256": "<hex of public.json>"}
 */
typedef struct fin_identity {
    uint64_t job;
    uint32_t partition;
    const char *circuit;
    const char *vk_sha256;   /* 64 hex digits */
    const char *public_text; /* the public.json the RESULT's public signals give */
} fin_identity;

/* lower-case hex SHA-256 of data, NUL-terminated */

enum { FIN_ABSENT = 0, FIN_MATCH = 1, FIN_STALE = 2 };

/*
 * Looks for output_dir/<job>/<part>/proof.json.  FIN_ABSENT: not there (the
 * partition was never committed).  FIN_MATCH: proof.json, public.json and
 * identity.json are there and identity.json and public.json are exactly what
 * want describes; *proof / *pub are read (malloc'd, NUL-terminated).
 * FIN_STALE: files are there but belong to something else or cannot be
 * proven to be this partition's; why says what differs (no file contents).
 * -errno: the files could not be read.
 */
int fin_output_check(const char *output_dir, const fin_identity *want, char **proof, size_t *proof_len, char **pub,
                     size_t *pub_len, char *why, size_t why_len, czk_error *e);

/*
 * Makes a partition's files found already written durable before a RESULT
 * is answered from them: fsyncs its files, its directory, the job's
 * directory and output_dir.  They are in the page cache when a finalizer
 * died between its renames and its directory fsync (fin_output_write), and
 * a DONE sent from them would be journaled by czk-gpud for a proof that a
 * power loss can still take away.  0 or -errno (the disk errors of
 * fin_output_retryable among them).
 */
int fin_output_sync(const char *output_dir, uint64_t job, uint32_t part, czk_error *e);

/*
 * Moves output_dir/<job>/<part> and output_dir/<job>/summary.json aside to
 * output_dir/.stale/<job>.<part>.<ns> and .../<job>.summary.<ns>.json (never
 * deleted: an operator may want them), so the partition can be written again.
 */
int fin_output_move_aside(const char *output_dir, uint64_t job, uint32_t part, czk_error *e);

/* writes public.json, timings.json, identity.json, then proof.json (the
 * commit point), each atomically (temp, fsync, rename), mode 0640 in 0750
 * directories, and fsyncs the directories.  Only the process that holds
 * output_dir's lock may call it: a temporary name left there is removed as
 * a dead predecessor's */
int fin_output_write(const char *output_dir, const fin_timings *t, const fin_identity *id, const char *proof,
                     const char *pub, czk_error *e);

/* writes output_dir/<job>/summary.json when every partition has its proof
 * and the summary does not exist yet; returns 1 when written */
int fin_output_summary(const char *output_dir, uint64_t job, uint32_t n_partitions, const char *circuit,
                       uint64_t submit_ns, czk_error *e);

/* 1 for the errors a full or failing disk gives (ENOSPC, EDQUOT, EIO,
 * EROFS): the write is retried later, never reported as a failed proof */
int fin_output_retryable(int err);

#endif
