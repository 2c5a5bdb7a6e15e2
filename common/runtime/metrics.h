/*
 * metrics.h — Prometheus text exposition of a daemon's counters, gauges and
 * latency histograms over a local HTTP port (libmicrohttpd, its own thread).
 *
 * Conventions (contrib/grafana/README.md lists every daemon's metrics): names start
 * with czk_, values are in base units (seconds, bytes, ratios 0..1), counters
 * end in _total, and one metric name is one family: the samples registered
 * under a name are rendered together under one HELP/TYPE, whatever order
 * they were added in.  Every registry carries czk_build_info{version,
 * commit,backends} 1 (common/runtime/version.h) from czk_metrics_new on.
 *
 * Who touches what: metric values are written by the daemon's threads with
 * relaxed atomic operations and read by the HTTP thread, without a lock.  The
 * set of metrics is guarded by the registry's mutex, taken by
 * czk_metrics_add and by every render, so a metric may be registered from
 * any thread, before or after czk_metrics_serve() (the daemons register
 * everything before, so that the first scrape already shows every series).
 * A czk_metric stays where it is until czk_metrics_free: the pointer
 * czk_metrics_add returns is valid as long as the registry.
 */
#ifndef CZK_METRICS_H
#define CZK_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* series one registry holds: storage grows as they are registered, this only
 * stops a registration loop gone wrong.  gpud at the largest configuration
 * registers about 98 + 3 per pool + 2 per circuit, 354 with 64 pools and 32
 * circuits (docs/daemons.md, czk-gpud's metrics) */
#define CZK_METRICS_MAX 8192
#define CZK_METRICS_BUCKETS 19
/* the largest /metrics answer (bytes); a larger text is answered 500 */
#define CZK_METRICS_TEXT_MAX (64u << 20)

enum czk_metric_kind { CZK_METRIC_COUNTER, CZK_METRIC_GAUGE, CZK_METRIC_HISTOGRAM };

typedef struct czk_metric czk_metric;
typedef struct czk_metrics czk_metrics;

/* a registry holding czk_build_info; -ENOMEM */
int czk_metrics_new(czk_metrics **m);
void czk_metrics_free(czk_metrics *m);
/* name: [a-zA-Z_:][a-zA-Z0-9_:]*; label may be NULL or a Prometheus label set
 * without braces with its values already escaped (\\, \" and \n), e.g.
 * "stage=\"ntt\"" (a histogram's labels may not include le); help is
 * rendered once per family (the first non-empty help of its samples) with \
 * and newlines escaped.  NULL, logged, for a malformed name or label set, a
 * name registered before with another kind, a series (name and label set)
 * registered twice, no memory, or CZK_METRICS_MAX series; every czk_metric_*
 * call accepts NULL and does nothing */
czk_metric *czk_metrics_add(czk_metrics *m, enum czk_metric_kind kind, const char *name,
                            const char *label, const char *help);
/* integer counters and gauges */
void czk_metric_inc(czk_metric *x, int64_t by);
void czk_metric_set(czk_metric *x, int64_t v);
/* fractional counters and gauges (seconds, ratios): a metric written with
 * these is rendered as a floating-point value; do not mix with inc/set */
void czk_metric_add_f(czk_metric *x, double by);
void czk_metric_set_f(czk_metric *x, double v);
void czk_metric_observe(czk_metric *x, double seconds); /* histogram, seconds */
/* render into buf (NUL-terminated); returns bytes written or -ENOSPC */
int czk_metrics_render(const czk_metrics *m, char *buf, size_t cap);
/* start serving GET /metrics on addr:port (port 0 or addr "": disabled,
 * returns 0; -EALREADY when it serves already); logs the address served, or
 * why it could not be.  The HTTP thread waits with epoll (poll where
 * libmicrohttpd has no epoll), so any fd number works, and closes a
 * connection idle for 10 s, so idle connections cannot hold every slot */
int czk_metrics_serve(czk_metrics *m, const char *addr, int port);
/* the port actually bound (useful with port -1 = any free port, for tests) */
int czk_metrics_port(const czk_metrics *m);

#endif
