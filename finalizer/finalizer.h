/*
 * finalizer.h — czk-finalizer's internal interface (not a public contract).
 *
 *   main.c    start-up, the gpud connection (reconnect with backoff), RESULT -> DONE
 *   output.c  durable, idempotent output files: proof.json, public.json,
 *             timings.json per partition, summary.json per job
 */
#ifndef CZK_FINALIZER_H
#define CZK_FINALIZER_H

#include <stddef.h>
#include <stdint.h>

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
 * If output_dir/<job>/<part>/proof.json and public.json exist, reads them
 * into *proof / *pub (malloc'd, NUL-terminated) and returns 1; 0 when they do
 * not exist; -errno on error.
 */
int fin_output_existing(const char *output_dir, uint64_t job, uint32_t part, char **proof, size_t *proof_len,
                        char **pub, size_t *pub_len, czk_error *e);

/* writes public.json, timings.json, then proof.json (the commit point), each
 * atomically (temp, fsync, rename) and fsyncs the directories */
int fin_output_write(const char *output_dir, const fin_timings *t, const char *proof, const char *pub,
                     czk_error *e);

/* writes output_dir/<job>/summary.json when every partition has its proof
 * and the summary does not exist yet; returns 1 when written */
int fin_output_summary(const char *output_dir, uint64_t job, uint32_t n_partitions, const char *circuit,
                       uint64_t submit_ns, czk_error *e);

#endif
