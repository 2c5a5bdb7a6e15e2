/* metrics.c — Prometheus text metrics served by libmicrohttpd (see metrics.h). */
#include "common/runtime/metrics.h"
#include "common/base/log.h"
#include "common/runtime/version.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* histogram bucket upper bounds in seconds: 100 µs (a journal fdatasync on
 * flash) to 5 minutes (a large partition on the CPU backend) */
static const double bucket_le[CZK_METRICS_BUCKETS] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                      0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5,
                                                      5,      10,      30,     60,    300};

struct czk_metric {
    enum czk_metric_kind kind;
    char name[80];
    char label[160];
    char help[200];
    _Atomic int64_t value;                         /* integer counter / gauge */
    _Atomic uint64_t fbits;                        /* fractional counter / gauge: a double's bits */
    _Atomic bool is_float;                         /* written with czk_metric_*_f */
    _Atomic uint64_t buckets[CZK_METRICS_BUCKETS]; /* histogram: count per bucket (not cumulative) */
    _Atomic uint64_t count;
    _Atomic uint64_t sum_ns;
};

struct czk_metrics {
    int n;
    czk_metric m[CZK_METRICS_MAX];
    struct MHD_Daemon *httpd;
    int port;
};

/* a label value as the text format wants it: \ " and newline escaped */
static void label_value(char *dst, size_t cap, const char *v)
{
    size_t o = 0;

    for (; *v && o + 3 < cap; v++) {
        if (*v == '\\' || *v == '"') {
            dst[o++] = '\\';
            dst[o++] = *v;
        } else if (*v == '\n') {
            dst[o++] = '\\';
            dst[o++] = 'n';
        } else {
            dst[o++] = *v;
        }
    }
    dst[o] = 0;
}

int czk_metrics_new(czk_metrics **out)
{
    char v[36], c[36], b[36], label[160];
    czk_metric *x;

    *out = calloc(1, sizeof(**out));
    if (!*out)
        return -ENOMEM;
    label_value(v, sizeof(v), czk_version());
    label_value(c, sizeof(c), czk_commit());
    label_value(b, sizeof(b), czk_backends());
    snprintf(label, sizeof(label), "version=\"%s\",commit=\"%s\",backends=\"%s\"", v, c, b);
    x = czk_metrics_add(*out, CZK_METRIC_GAUGE, "czk_build_info", label,
                        "the czk build this daemon runs (always 1; the labels say which)");
    czk_metric_set(x, 1);
    return 0;
}

void czk_metrics_free(czk_metrics *m)
{
    if (!m)
        return;
    if (m->httpd)
        MHD_stop_daemon(m->httpd);
    free(m);
}

czk_metric *czk_metrics_add(czk_metrics *m, enum czk_metric_kind kind, const char *name, const char *label,
                            const char *help)
{
    czk_metric *x;

    if (m->n == CZK_METRICS_MAX) {
        czk_err("too many metrics (cap %d) registering %s", CZK_METRICS_MAX, name);
        return NULL;
    }
    x = &m->m[m->n++];
    x->kind = kind;
    snprintf(x->name, sizeof(x->name), "%s", name);
    snprintf(x->label, sizeof(x->label), "%s", label ? label : "");
    snprintf(x->help, sizeof(x->help), "%s", help ? help : "");
    return x;
}

void czk_metric_inc(czk_metric *x, int64_t by)
{
    if (x)
        atomic_fetch_add_explicit(&x->value, by, memory_order_relaxed);
}

void czk_metric_set(czk_metric *x, int64_t v)
{
    if (x)
        atomic_store_explicit(&x->value, v, memory_order_relaxed);
}

static uint64_t dbits(double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof(u));
    return u;
}

static double bitsd(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof(d));
    return d;
}

void czk_metric_add_f(czk_metric *x, double by)
{
    uint64_t old;

    if (!x)
        return;
    atomic_store_explicit(&x->is_float, true, memory_order_relaxed);
    old = atomic_load_explicit(&x->fbits, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&x->fbits, &old, dbits(bitsd(old) + by), memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

void czk_metric_set_f(czk_metric *x, double v)
{
    if (!x)
        return;
    atomic_store_explicit(&x->is_float, true, memory_order_relaxed);
    atomic_store_explicit(&x->fbits, dbits(v), memory_order_relaxed);
}

void czk_metric_observe(czk_metric *x, double s)
{
    int i;

    if (!x)
        return;
    if (!(s >= 0)) /* negative or NaN: a clock step, counted as 0 */
        s = 0;
    for (i = 0; i < CZK_METRICS_BUCKETS && s > bucket_le[i]; i++)
        ;
    if (i < CZK_METRICS_BUCKETS)
        atomic_fetch_add_explicit(&x->buckets[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&x->count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&x->sum_ns, (uint64_t)(s * 1e9 + 0.5), memory_order_relaxed);
}

static const char *kind_name(enum czk_metric_kind k)
{
    return k == CZK_METRIC_COUNTER ? "counter" : k == CZK_METRIC_GAUGE ? "gauge" : "histogram";
}

int czk_metrics_render(const czk_metrics *m, char *buf, size_t cap)
{
    size_t off = 0;
    int i, j, k, w;

#define EMIT(...)                                                        \
    do {                                                                 \
        w = snprintf(buf + off, cap - off, __VA_ARGS__);                 \
        if (w < 0 || (size_t)w >= cap - off)                             \
            return -ENOSPC;                                              \
        off += (size_t)w;                                                \
    } while (0)
    buf[0] = 0;
    for (i = 0; i < m->n; i++) {
        const czk_metric *f = &m->m[i];
        bool seen = false;

        for (j = 0; j < i && !seen; j++)
            seen = !strcmp(m->m[j].name, f->name);
        if (seen)
            continue; /* its family was rendered at its first sample */
        EMIT("# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, kind_name(f->kind));
        for (k = i; k < m->n; k++) {
            const czk_metric *x = &m->m[k];
            const char *sep = x->label[0] ? "," : "", *lb = x->label[0] ? "{" : "", *rb = x->label[0] ? "}" : "";
            uint64_t cum = 0;

            if (strcmp(x->name, f->name))
                continue;
            if (x->kind != CZK_METRIC_HISTOGRAM) {
                if (atomic_load(&x->is_float))
                    EMIT("%s%s%s%s %.9g\n", x->name, lb, x->label, rb, bitsd(atomic_load(&x->fbits)));
                else
                    EMIT("%s%s%s%s %lld\n", x->name, lb, x->label, rb, (long long)atomic_load(&x->value));
                continue;
            }
            for (j = 0; j < CZK_METRICS_BUCKETS; j++) {
                cum += atomic_load(&x->buckets[j]);
                EMIT("%s_bucket{%s%sle=\"%g\"} %llu\n", x->name, x->label, sep, bucket_le[j],
                     (unsigned long long)cum);
            }
            /* +Inf, _count and _sum from one read of count, so that +Inf
             * is never below a finite bucket read a moment earlier */
            uint64_t n = atomic_load(&x->count);
            if (n < cum)
                n = cum;
            EMIT("%s_bucket{%s%sle=\"+Inf\"} %llu\n", x->name, x->label, sep, (unsigned long long)n);
            EMIT("%s_sum%s%s%s %.9f\n", x->name, lb, x->label, rb, (double)atomic_load(&x->sum_ns) / 1e9);
            EMIT("%s_count%s%s%s %llu\n", x->name, lb, x->label, rb, (unsigned long long)n);
        }
    }
#undef EMIT
    return (int)off;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
    czk_metrics *m = cls;
    struct MHD_Response *resp;
    enum MHD_Result ret;
    size_t cap = 512 * 1024;
    char *buf;
    int n;
    unsigned status = MHD_HTTP_OK;

    (void)version;
    (void)upload_data;
    (void)upload_size;
    (void)con_cls;
    if (strcmp(method, "GET") != 0)
        return MHD_NO;
    buf = malloc(cap);
    if (!buf)
        return MHD_NO;
    if (strcmp(url, "/metrics") != 0) {
        n = snprintf(buf, cap, "not found: try /metrics\n");
        status = MHD_HTTP_NOT_FOUND;
    } else {
        n = czk_metrics_render(m, buf, cap);
        if (n < 0) {
            n = snprintf(buf, cap, "metrics too large\n");
            status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        }
    }
    resp = MHD_create_response_from_buffer((size_t)n, buf, MHD_RESPMEM_MUST_FREE);
    MHD_add_response_header(resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

int czk_metrics_serve(czk_metrics *m, const char *addr, int port)
{
    struct sockaddr_in sa;
    const union MHD_DaemonInfo *info;

    if (port == 0 || !addr || !addr[0])
        return 0;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)(port < 0 ? 0 : port));
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        czk_err("metrics address \"%s\" is not an IPv4 address", addr);
        return -EINVAL;
    }
    m->httpd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, m,
                                MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_CONNECTION_LIMIT, 16, MHD_OPTION_END);
    if (!m->httpd) {
        czk_err("could not serve metrics on %s:%d (port in use?)", addr, port);
        return -EADDRINUSE;
    }
    info = MHD_get_daemon_info(m->httpd, MHD_DAEMON_INFO_BIND_PORT);
    m->port = info ? info->port : port;
    czk_info("metrics on http://%s:%d/metrics", addr, m->port);
    return 0;
}

int czk_metrics_port(const czk_metrics *m)
{
    return m->port;
}
