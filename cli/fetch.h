/*
 * fetch.h — the proofs of a partition into an output directory, for
 * `czk submit --out DIR` and `czk fetch --out DIR`: the checks of DIR before
 * anything is sent, writing DIR/<partition>/proof.json and public.json with
 * the client's own rights, and getting a finished partition's files from
 * czk-gpud (FETCH, docs/ipc.md) or, from a czk-gpud too old to know FETCH,
 * out of output_dir.
 *
 * DIR/<partition>/ is made mode 0750 and its two files 0640 (less when the
 * umask says so); each file is written to a temporary name, fsynced and
 * renamed, public.json first: proof.json present means the partition is
 * complete.
 *
 * The FETCH exchange (czk_fetch_partition) runs on the caller's connection,
 * one FETCH at a time, reading until its answer: EVENTs are skipped, and so
 * is the answer to a STATUS the caller left unanswered (gpud answers in
 * order; *status_pending says there is one).  An -EBUSY answer (gpud saw a
 * reply of ours unread, now read) is asked again, up to 50 times 20 ms
 * apart.  A connection lost on the way is made again once; after any failure
 * but an ERROR answer the connection is closed, so that a late answer cannot
 * be taken for the next FETCH's.  Only a gpud that answers ERROR -EBADMSG
 * (the type is unknown to it: it closes the connection too) makes the client
 * read output_dir/<job>/<partition>/ itself (the output_dir of the client's
 * configuration), from then on for every partition.
 *
 * Every function returns 0 or -errno, and on failure fills why[] (n bytes)
 * with what went wrong, naming the path; text czk-gpud sent is escaped
 * (czk_esc) in it.  Nothing is printed here: the caller words the line.
 */
#ifndef CZK_CLI_FETCH_H
#define CZK_CLI_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/client.h"

/* a why[] that holds every message of this module */
#define CZK_FETCH_WHY_MAX (CZK_MSG_STR_LONG + 4 * CZK_CONFIG_PATH_MAX)

/* --out DIR before anything is sent: 0 when DIR is absent, an empty
 * directory or not a directory (its mkdir fails later, naming it);
 * -ENOTEMPTY ("output directory ... is not empty (it holds ...)") or the
 * -errno of reading it otherwise.  Not called with --force. */
int czk_fetch_out_check(const char *dir, char *why, size_t n);

/* creates DIR and its missing parents (0750): 0 or -errno */
int czk_fetch_out_mkdir(const char *dir);

/* writes DIR/<p>/public.json (pub, ulen), then DIR/<p>/proof.json (proof,
 * plen), creating DIR/<p>/ when needed */
int czk_fetch_out_write(const char *dir, uint32_t p, const uint8_t *proof, size_t plen, const uint8_t *pub,
                        size_t ulen, char *why, size_t n);

/* where czk_fetch_partition failed (czk_fetcher.fail after a negative return) */
typedef enum czk_fetch_fail {
    CZK_FETCH_REFUSED = 1, /* gpud answered ERROR: the return value is its code, why[]
                            * "czk-gpud says: <its message, escaped>" */
    CZK_FETCH_NO_ANSWER,   /* no connection, no answer, an answer out of step or files
                            * handed over that could not be read */
    CZK_FETCH_NO_FILES,    /* an older gpud: output_dir's files could not be read; why[]
                            * "\"<path>\" cannot be read: <strerror>" */
    CZK_FETCH_WRITE,       /* the files came but could not be written into DIR */
} czk_fetch_fail;

typedef struct czk_fetcher {
    czk_client *cl;        /* the connection, connected again when closed */
    const char *out_dir;   /* DIR */
    uint64_t job;
    bool *status_pending;  /* NULL, or the caller's "a STATUS of mine awaits its reply";
                            * cleared here when its reply is read or the connection made anew */
    bool old_gpud;         /* gpud does not know FETCH: output_dir is read (set here) */
    czk_fetch_fail fail;   /* after a failure: where */
} czk_fetcher;

/* the files of partition p of f->job into f->out_dir/<p>/ (see above):
 * 0 written, or -errno with f->fail and why[] saying what happened */
int czk_fetch_partition(czk_fetcher *f, uint32_t p, char *why, size_t n);

#endif
