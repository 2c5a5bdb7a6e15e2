/* metrics.c — Prometheus text metrics served by libmicrohttpd (see metrics.h). */
#include "common/runtime/metrics.h"
#include "common/base/log.h"
#include "common/runtime/version.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
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

/* the first /metrics buffer; it doubles up to CZK_METRICS_TEXT_MAX */
#define TEXT_FIRST (512u * 1024)
/* seconds of silence after which the HTTP thread closes a connection */
#define CONN_TIMEOUT_S 10u
#define CONN_LIMIT 16u

/* One series.  name, label and help point into text[] and, like kind, never
 * change once czk_metrics_add has returned; next is written under the
 * registry's lock and read under it. */
struct czk_metric {
    enum czk_metric_kind kind;
    const char *name;
    const char *label;             /* "" for none */
    const char *help;              /* escaped for a HELP line */
    struct czk_metric *next;       /* the next sample of its family, in registration order */
    struct czk_metric *last;       /* in a family's first sample: its last one */
    bool first;                    /* the first sample of its family: HELP/TYPE go before it */
    _Atomic int64_t value;         /* integer counter / gauge */
    _Atomic uint64_t fbits;        /* fractional counter / gauge: a double's bits */
    _Atomic bool is_float;         /* written with czk_metric_*_f */
    _Atomic uint64_t buckets[CZK_METRICS_BUCKETS]; /* histogram: count per bucket (not cumulative) */
    _Atomic uint64_t count;
    _Atomic uint64_t sum_ns;
    char text[];
};

struct czk_metrics {
    /* guards n, cap, m[] and every metric's next and last: taken by
     * czk_metrics_add (any thread) and by each render (the HTTP thread);
     * never on a path that writes a value */
    pthread_mutex_t lock;
    int n, cap;
    czk_metric **m; /* registration order; each metric its own allocation, so that m[] can move */
    struct MHD_Daemon *httpd;
    int port;
    _Atomic size_t text_size; /* the last /metrics text's size, the next buffer's hint */
};

/* src as the text format wants it: backslash and newline escaped, and '"'
 * too when quote (label values; HELP text keeps its quotes).  Writes to dst
 * when it is not NULL (no NUL) and returns the length. */
static size_t escape(char *dst, const char *src, bool quote)
{
    size_t o = 0;

    for (; *src; src++) {
        char c = *src;
        if (c == '\\' || c == '\n' || (quote && c == '"')) {
            if (dst) {
                dst[o] = '\\';
                dst[o + 1] = c == '\n' ? 'n' : c;
            }
            o += 2;
        } else {
            if (dst)
                dst[o] = c;
            o++;
        }
    }
    return o;
}

static bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

/* a metric name: [a-zA-Z_:][a-zA-Z0-9_:]* */
static bool metric_name_ok(const char *s)
{
    if (!name_start(*s) && *s != ':')
        return false;
    for (; *s; s++)
        if (!name_char(*s) && *s != ':')
            return false;
    return true;
}

/* a label set as it goes between the braces: name="value" pairs separated by
 * commas, names [a-zA-Z_][a-zA-Z0-9_]* (not __..., which Prometheus keeps
 * for itself; not le on a histogram, whose buckets add it), values with
 * \\, \" and \n escaped and no raw newline.  Anything else would break the
 * whole scrape, not just this series. */
static bool label_set_ok(const char *s, bool histogram)
{
    while (*s) {
        const char *n = s;

        if (!name_start(*s) || (s[0] == '_' && s[1] == '_'))
            return false;
        while (name_char(*s))
            s++;
        if (histogram && s - n == 2 && !strncmp(n, "le", 2))
            return false;
        if (s[0] != '=' || s[1] != '"')
            return false;
        for (s += 2; *s != '"'; s++) {
            if (!*s || *s == '\n')
                return false;
            if (*s == '\\' && s[1] != '\\' && s[1] != '"' && s[1] != 'n')
                return false;
            if (*s == '\\')
                s++;
        }
        s++; /* the closing quote */
        if (*s == ',') {
            if (!*++s)
                return false; /* a trailing comma */
        } else if (*s) {
            return false;
        }
    }
    return true;
}

int czk_metrics_new(czk_metrics **out)
{
    const char *v = czk_version(), *c = czk_commit(), *b = czk_backends();
    char *label, *p;
    czk_metrics *m;
    czk_metric *x;

    *out = NULL;
    if (!(m = calloc(1, sizeof(*m))))
        return -ENOMEM;
    pthread_mutex_init(&m->lock, NULL);
    label = malloc(escape(NULL, v, true) + escape(NULL, c, true) + escape(NULL, b, true) + 40);
    if (!label) {
        czk_metrics_free(m);
        return -ENOMEM;
    }
    p = label + sprintf(label, "version=\"");
    p += escape(p, v, true);
    p += sprintf(p, "\",commit=\"");
    p += escape(p, c, true);
    p += sprintf(p, "\",backends=\"");
    p += escape(p, b, true);
    sprintf(p, "\"");
    x = czk_metrics_add(m, CZK_METRIC_GAUGE, "czk_build_info", label,
                        "the czk build this daemon runs (always 1; the labels say which)");
    free(label);
    if (!x) { /* logged by czk_metrics_add */
        czk_metrics_free(m);
        return -ENOMEM;
    }
    czk_metric_set(x, 1);
    *out = m;
    return 0;
}

void czk_metrics_free(czk_metrics *m)
{
    if (!m)
        return;
    if (m->httpd)
        MHD_stop_daemon(m->httpd); /* joins the HTTP thread: no render runs past this */
    for (int i = 0; i < m->n; i++)
        free(m->m[i]);
    free(m->m);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

/* the first sample registered under name, or NULL; under the lock */
static czk_metric *family_of(const czk_metrics *m, const char *name)
{
    for (int i = 0; i < m->n; i++)
        if (m->m[i]->first && !strcmp(m->m[i]->name, name))
            return m->m[i];
    return NULL;
}

/* czk_metrics_add under the lock; x is the new series, filled but not linked */
static int add_locked(czk_metrics *m, czk_metric *x)
{
    czk_metric *f = family_of(m, x->name);

    if (f && f->kind != x->kind) {
        czk_err("metric %s{%s} registered as a %s, but its family is a %s", x->name, x->label,
                x->kind == CZK_METRIC_COUNTER ? "counter" : x->kind == CZK_METRIC_GAUGE ? "gauge" : "histogram",
                f->kind == CZK_METRIC_COUNTER ? "counter" : f->kind == CZK_METRIC_GAUGE ? "gauge" : "histogram");
        return -EINVAL;
    }
    for (czk_metric *y = f; y; y = y->next)
        if (!strcmp(y->label, x->label)) {
            czk_err("metric %s{%s} registered twice", x->name, x->label);
            return -EEXIST;
        }
    if (m->n == CZK_METRICS_MAX) {
        czk_err("too many metrics (cap %d) registering %s{%s}", CZK_METRICS_MAX, x->name, x->label);
        return -ENOSPC;
    }
    if (m->n == m->cap) {
        int cap = m->cap ? m->cap * 2 : 64;
        czk_metric **a = realloc(m->m, (size_t)cap * sizeof(*a)); /* the lock keeps renders out */
        if (!a) {
            czk_err("out of memory registering metric %s{%s}", x->name, x->label);
            return -ENOMEM;
        }
        m->m = a;
        m->cap = cap;
    }
    m->m[m->n++] = x;
    if (f) {
        f->last->next = x;
        f->last = x;
    } else {
        x->first = true;
        x->last = x;
    }
    return 0;
}

czk_metric *czk_metrics_add(czk_metrics *m, enum czk_metric_kind kind, const char *name, const char *label,
                            const char *help)
{
    size_t nl, ll, hl;
    czk_metric *x;
    char *t;
    int r;

    if (!m)
        return NULL;
    label = label ? label : "";
    help = help ? help : "";
    /* the log escapes what these print */
    if (!name || !metric_name_ok(name)) {
        czk_err("metric name \"%s\" is not [a-zA-Z_:][a-zA-Z0-9_:]*", name ? name : "");
        return NULL;
    }
    if (!label_set_ok(label, kind == CZK_METRIC_HISTOGRAM)) {
        czk_err("metric %s: bad label set {%s}: expected name=\"value\" pairs, backslash, quote and newline "
                "escaped in the values%s",
                name, label, kind == CZK_METRIC_HISTOGRAM ? ", no le (the buckets' own)" : "");
        return NULL;
    }
    nl = strlen(name);
    ll = strlen(label);
    hl = escape(NULL, help, false);
    if (!(x = calloc(1, sizeof(*x) + nl + ll + hl + 3))) {
        czk_err("out of memory registering metric %s{%s}", name, label);
        return NULL;
    }
    x->kind = kind;
    t = x->text;
    x->name = memcpy(t, name, nl + 1);
    t += nl + 1;
    x->label = memcpy(t, label, ll + 1);
    t += ll + 1;
    escape(t, help, false);
    t[hl] = 0;
    x->help = t;
    pthread_mutex_lock(&m->lock);
    r = add_locked(m, x);
    pthread_mutex_unlock(&m->lock);
    if (r < 0) { /* logged by add_locked */
        free(x);
        return NULL;
    }
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

/* a double as the text format writes it: +Inf, -Inf, NaN, else the shortest
 * of %.15g and %.17g that reads back as the same double (a counter of
 * seconds keeps its milliseconds past 10^9 s) */
static void fmt_double(char *dst, size_t cap, double d)
{
    if (isnan(d))
        snprintf(dst, cap, "NaN");
    else if (isinf(d))
        snprintf(dst, cap, d > 0 ? "+Inf" : "-Inf");
    else {
        snprintf(dst, cap, "%.15g", d);
        if (strtod(dst, NULL) != d)
            snprintf(dst, cap, "%.17g", d);
    }
}

static int render_locked(const czk_metrics *m, char *buf, size_t cap)
{
    size_t off = 0;
    char num[40];
    int i, j, w;

#define EMIT(...)                                                        \
    do {                                                                 \
        w = snprintf(buf + off, cap - off, __VA_ARGS__);                 \
        if (w < 0 || (size_t)w >= cap - off)                             \
            return -ENOSPC;                                              \
        off += (size_t)w;                                                \
    } while (0)
    for (i = 0; i < m->n; i++) {
        const czk_metric *f = m->m[i], *h = f;

        if (!f->first)
            continue; /* rendered with its family, after the family's first sample */
        while (h && !h->help[0])
            h = h->next;
        EMIT("# HELP %s %s\n# TYPE %s %s\n", f->name, h ? h->help : "", f->name, kind_name(f->kind));
        for (const czk_metric *x = f; x; x = x->next) {
            const char *sep = x->label[0] ? "," : "", *lb = x->label[0] ? "{" : "", *rb = x->label[0] ? "}" : "";
            uint64_t cum = 0;

            if (x->kind != CZK_METRIC_HISTOGRAM) {
                if (atomic_load(&x->is_float)) {
                    fmt_double(num, sizeof(num), bitsd(atomic_load(&x->fbits)));
                    EMIT("%s%s%s%s %s\n", x->name, lb, x->label, rb, num);
                } else {
                    EMIT("%s%s%s%s %lld\n", x->name, lb, x->label, rb, (long long)atomic_load(&x->value));
                }
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

int czk_metrics_render(const czk_metrics *m, char *buf, size_t cap)
{
    /* the lock is the only part of the registry a render changes; the
     * registry itself is never const (czk_metrics_new allocates it) */
    pthread_mutex_t *lock = (pthread_mutex_t *)&m->lock;
    int r;

    if (cap == 0)
        return -ENOSPC;
    buf[0] = 0;
    if (cap > INT32_MAX)
        cap = INT32_MAX; /* the result is an int */
    pthread_mutex_lock(lock);
    r = render_locked(m, buf, cap);
    pthread_mutex_unlock(lock);
    return r;
}

/* the text of every metric in a buffer of its own (malloc), *n its length;
 * NULL with *n -ENOSPC past CZK_METRICS_TEXT_MAX, -ENOMEM without memory */
static char *render_alloc(czk_metrics *m, int *n)
{
    size_t cap = atomic_load_explicit(&m->text_size, memory_order_relaxed);

    cap = cap < TEXT_FIRST ? TEXT_FIRST : cap + cap / 4; /* room for the values to grow */
    for (;; cap *= 2) {
        char *buf;

        if (cap > CZK_METRICS_TEXT_MAX)
            cap = CZK_METRICS_TEXT_MAX;
        if (!(buf = malloc(cap))) {
            *n = -ENOMEM;
            return NULL;
        }
        if ((*n = czk_metrics_render(m, buf, cap)) >= 0) {
            atomic_store_explicit(&m->text_size, (size_t)*n, memory_order_relaxed);
            return buf;
        }
        free(buf);
        if (cap == CZK_METRICS_TEXT_MAX) {
            *n = -ENOSPC;
            return NULL;
        }
    }
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
    static char not_found[] = "not found: try /metrics\n", too_large[] = "metrics too large\n",
                no_memory[] = "out of memory\n";
    czk_metrics *m = cls;
    struct MHD_Response *resp;
    enum MHD_Result ret;
    unsigned status = MHD_HTTP_OK;
    char *buf = NULL;
    int n = 0;

    (void)version;
    (void)upload_data;
    (void)upload_size;
    (void)con_cls;
    if (strcmp(method, "GET") != 0)
        return MHD_NO;
    if (strcmp(url, "/metrics") != 0) {
        status = MHD_HTTP_NOT_FOUND;
        resp = MHD_create_response_from_buffer(strlen(not_found), not_found, MHD_RESPMEM_PERSISTENT);
    } else if ((buf = render_alloc(m, &n))) {
        resp = MHD_create_response_from_buffer((size_t)n, buf, MHD_RESPMEM_MUST_FREE);
    } else {
        static bool logged;
        if (!logged) /* the HTTP thread only: once, not at every scrape */
            czk_err("/metrics answered 500: %s", n == -ENOSPC ? "the text is over CZK_METRICS_TEXT_MAX"
                                                               : "out of memory");
        logged = true;
        status = MHD_HTTP_INTERNAL_SERVER_ERROR;
        resp = n == -ENOSPC ? MHD_create_response_from_buffer(strlen(too_large), too_large, MHD_RESPMEM_PERSISTENT)
                            : MHD_create_response_from_buffer(strlen(no_memory), no_memory, MHD_RESPMEM_PERSISTENT);
    }
    if (!resp) {
        free(buf);
        return MHD_NO;
    }
    MHD_add_response_header(resp, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    ret = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* libmicrohttpd's own messages, through the log (escaped, one line) */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    char line[256];
    size_t n;

    (void)cls;
    vsnprintf(line, sizeof(line), fmt, ap);
    n = strlen(line);
    while (n && line[n - 1] == '\n')
        line[--n] = 0;
    czk_warn("metrics http: %s", line);
}

int czk_metrics_serve(czk_metrics *m, const char *addr, int port)
{
    struct sockaddr_in sa;
    const union MHD_DaemonInfo *info;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;

    if (port == 0 || !addr || !addr[0])
        return 0;
    if (m->httpd) {
        czk_err("metrics are served already on port %d", m->port);
        return -EALREADY;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)(port < 0 ? 0 : port));
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
        czk_err("metrics address \"%s\" is not an IPv4 address", addr);
        return -EINVAL;
    }
    /* select(), libmicrohttpd's default, drops every connection whose fd is
     * FD_SETSIZE (1024) or more: a daemon with many clients and files open
     * would stop answering scrapes exactly when it is busy */
    if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES)
        flags |= MHD_USE_EPOLL;
    else if (MHD_is_feature_supported(MHD_FEATURE_POLL) == MHD_YES)
        flags |= MHD_USE_POLL;
    else
        czk_warn("libmicrohttpd has neither epoll nor poll: /metrics stops answering once the daemon has 1024 "
                 "fds open");
    m->httpd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, m, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
                                MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_CONNECTION_LIMIT, CONN_LIMIT,
                                MHD_OPTION_CONNECTION_TIMEOUT, CONN_TIMEOUT_S, MHD_OPTION_END);
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
