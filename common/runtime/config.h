/*
 * config.h — the one INI file every czk daemon reads (libinih), with
 * command-line overrides applied on top.  Defaults work on a single machine
 * with no configuration file at all; docs/config.md lists every key.
 */
#ifndef CZK_CONFIG_H
#define CZK_CONFIG_H

#include <stdint.h>
#include "common/base/error.h"

#define CZK_CONFIG_MAX_CIRCUITS 32
/* the longest path value plus its NUL: --set takes all of it, while a line of
 * the file holds at most 198 bytes (libinih's buffer; docs/config.md) */
#define CZK_CONFIG_PATH_MAX 512

/* One partition is one witness fd, and a SUBMIT passes all of a job's fds in
 * one SCM_RIGHTS message, which the kernel limits to 253 (SCM_MAX_FD): the
 * one limit on partitions per job (ipc/msg.h asserts CZK_MSG_MAX_FDS equals it). */
#define CZK_CONFIG_MAX_PARTITIONS_PER_JOB 253

typedef struct czk_config_circuit {
    char name[64];
    char zkey[CZK_CONFIG_PATH_MAX];
    char msm_tables[8]; /* auto (default) | off: fixed-base MSM tables on the GPU (docs/config.md) */
} czk_config_circuit;

typedef struct czk_config {
    /* [czk] */
    char runtime_dir[CZK_CONFIG_PATH_MAX]; /* sockets */
    char state_dir[CZK_CONFIG_PATH_MAX];   /* journal, spooled witnesses */
    char output_dir[CZK_CONFIG_PATH_MAX];  /* finalizer output: <output_dir>/<job>/<partition>/ */
    int output_dir_set;    /* output_dir was set (else it is state_dir/proofs) */
    char client_group[64];                 /* group allowed on the client socket ("" = same uid only) */
    int log_level;
    int daemon_queue_max_mb;   /* every daemon: bytes queued to another daemon before the link is closed
                                  (the peer reconnects and resynchronizes) */
    /* [gpud] */
    char backend[16];          /* auto | cpu | cuda */
    int gpud_threads;          /* 0 = all online CPUs */
    int gpud_contexts;         /* backend contexts (0 = the backend's default: cpu 1, cuda 2 per GPU) */
    int slots_per_pool;        /* slots in each NUMA node's pool */
    int synth_timeout_s;       /* a synth holding an assigned slot this long without READY is taken as hung (0 = never) */
    char hugepages[8];         /* auto | on | off */
    int max_queued_partitions; /* backpressure: REJECTED beyond this */
    int max_partitions_per_job; /* 1..CZK_CONFIG_MAX_PARTITIONS_PER_JOB */
    int result_resend_s;        /* a RESULT without DONE this long after it was sent is sent again */
    int max_jobs;              /* jobs known at once (queued + running + awaiting DONE) */
    int intake_threads;        /* threads that spool the witnesses of one submission at once */
    int history_jobs;          /* finished jobs remembered (request-id dedup, STATUS) and kept in the journal */
    int journal_compact_kb;    /* compact the journal while running once it is this big and twice its last
                                  compacted size (0 = only at start) */
    char metrics_addr[64];     /* Prometheus text endpoint; "" disables */
    int metrics_port;
    int max_clients;           /* client connections on czk.sock at once */
    int max_clients_per_uid;   /* of those, from one uid */
    int client_idle_timeout_s; /* close a client connection idle this long with no job to watch (0 = never) */
    int client_queue_soft_kb;  /* replies queued to a client above which its requests are not read */
    int client_queue_max_kb;   /* replies queued to a client above which it is disconnected */
    int max_daemon_conns;      /* synth and finalizer connections on gpud.sock at once */
    char admin_group[64];      /* members may cancel any user's job ("" = only root and the owner) */
    int msm_table_reserve_mb;  /* device memory (MiB) fixed-base MSM tables leave free on each GPU */
    /* [synth] */
    int synth_threads;
    int reconnect_max_ms;
    char synth_metrics_addr[64]; /* Prometheus text endpoint of every synth; "" disables */
    int synth_metrics_port;      /* the synth of --numa-node N listens on this + N (N = -1: this); 0 disables */
    /* [finalizer] */
    int finalizer_verify;      /* 1: pairing-check every proof before it is written (default) */
    char fin_metrics_addr[64]; /* Prometheus text endpoint; "" disables */
    int fin_metrics_port;      /* 0 disables */
    /* [circuit.NAME] zkey = PATH, msm_tables = auto | off */
    int n_circuits;
    czk_config_circuit circuits[CZK_CONFIG_MAX_CIRCUITS];
} czk_config;

/* fill the documented defaults (paths follow $CZK_RUNTIME_DIR / $XDG_RUNTIME_DIR
 * for unprivileged users, /run/czk and /var/lib/czk for root) */
void czk_config_defaults(czk_config *c);
/* -EINVAL (e names the variable) when $CZK_RUNTIME_DIR or $CZK_STATE_DIR is
 * set to a path that is not absolute, -ENAMETOOLONG when one is too long;
 * czk_config_defaults ignores such a value (and a relative XDG_RUNTIME_DIR or
 * HOME), so a program calls this first to refuse it instead */
int czk_config_env_check(czk_error *e);
/* parse an INI file over c (docs/config.md, "The file"): -EINVAL for a
 * syntax error, an unknown key, a bad value, a key or section that appears
 * twice, a section without keys or a line longer than libinih takes, the
 * message naming the file and the first line with an error; -EISDIR, -ENOENT
 * and the like when the file cannot be read.  Each value is checked as
 * czk_config_set checks it.  On an error c may hold some of the file's values */
int czk_config_load(czk_config *c, const char *path, czk_error *e);
/* apply one "section.key=value" override (command line: --set section.key=value);
 * -EINVAL for an unknown key or a bad value: a path (runtime_dir, state_dir,
 * output_dir, zkey) must be absolute, a metrics_addr empty or an IPv4 address,
 * and no value may be in quotes or hold a '#' comment */
int czk_config_set(czk_config *c, const char *assignment, czk_error *e);
const czk_config_circuit *czk_config_circuit_find(const czk_config *c, const char *name);

#endif
