/*
 * test_metrics.c — the metrics registry and its HTTP endpoint
 * (common/runtime/metrics.h), one case per run: test_metrics CASE.
 *
 *   fds:        with more than FD_SETSIZE (1024) fds open, /metrics still
 *               answers, served from before the fds were opened and from
 *               after (its listening socket past FD_SETSIZE too);
 *   idle:       connections that never send a request cannot hold the
 *               endpoint for ever: a scrape refused while they fill every
 *               connection slot is answered once they time out;
 *   registry:   well over a thousand series of all three kinds, registered
 *               in random order across families, come back from one HTTP
 *               scrape (more than 512 KiB of text) each with its value, its
 *               family's HELP and TYPE once and its samples together;
 *   format:     what the exposition format requires of names, label sets,
 *               HELP text and values, and the registrations refused for it;
 *   concurrent: series registered while another thread renders: every
 *               render is whole, the last one has every series.
 *
 * Values are random (seeded; CZK_TEST_SEED replays).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/runtime/metrics.h"

#include "tests/common/test_util.h"

/* -------------------------------------------------------------- helpers --- */

/* GET path over HTTP/1.0: the whole response (malloc, NUL-terminated), or
 * NULL when the connection could not be made.  A server that drops the
 * connection gives "" (no status line); one that hangs, what came in
 * wait_s seconds. */
static char *http_get_within(int port, const char *path, int wait_s)
{
    struct sockaddr_in sa = {0};
    struct timeval tv = {wait_s, 0};
    size_t cap = 1 << 16, off = 0;
    char req[256], *buf;
    ssize_t n;
    int s;

    if ((s = socket(AF_INET, SOCK_STREAM, 0)) < 0)
        return NULL;
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(s);
        return NULL;
    }
    snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: x\r\n\r\n", path);
    if (write(s, req, strlen(req)) < 0) {
        /* closed after the accept (connection limit): read what came, if anything */
    }
    if (!(buf = malloc(cap)))
        DIE("out of memory");
    while ((n = read(s, buf + off, cap - 1 - off)) > 0) {
        off += (size_t)n;
        if (off == cap - 1 && !(buf = realloc(buf, cap *= 2)))
            DIE("out of memory");
    }
    buf[off] = 0;
    close(s);
    return buf;
}

static char *http_get(int port, const char *path) { return http_get_within(port, path, 30); }

/* the body of a 200 answer, or NULL */
static const char *ok_body(const char *resp)
{
    const char *eol = resp ? strstr(resp, "\r\n") : NULL, *body;

    if (!eol || !memmem(resp, (size_t)(eol - resp), " 200 ", 5))
        return NULL;
    body = strstr(resp, "\r\n\r\n");
    return body ? body + 4 : NULL;
}

/* the value of the sample written exactly as key ("name{labels}") in text,
 * as a string (static), or NULL */
static const char *sample(const char *text, const char *key)
{
    static char v[64];
    size_t kl = strlen(key);

    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL)
        if (!strncmp(l, key, kl) && l[kl] == ' ') {
            size_t n = strcspn(l + kl + 1, "\n");
            snprintf(v, sizeof(v), "%.*s", (int)(n < sizeof(v) - 1 ? n : sizeof(v) - 1), l + kl + 1);
            return v;
        }
    return NULL;
}

static czk_metrics *new_served(void)
{
    czk_metrics *m;

    CHECK(czk_metrics_new(&m) == 0);
    if (czk_metrics_serve(m, "127.0.0.1", -1) != 0 || czk_metrics_port(m) <= 0)
        DIE("could not serve metrics on a free port");
    return m;
}

/* ------------------------------------------------------------------ fds --- */

static void scrape_value(czk_metrics *m, const char *what, long long v)
{
    char *resp = http_get(czk_metrics_port(m), "/metrics"), want[64];
    const char *body = ok_body(resp), *got;

    snprintf(want, sizeof(want), "%lld", v);
    CHECK(body, "%s: no 200 from /metrics (fds past FD_SETSIZE): \"%.80s\"", what, resp ? resp : "(no connection)");
    got = body ? sample(body, "t_fds_value") : NULL;
    CHECK(got && !strcmp(got, want), "%s: t_fds_value is %s, expected %s", what, got ? got : "missing", want);
    free(resp);
}

static int case_fds(void)
{
    const rlim_t want = FD_SETSIZE + 256;
    struct rlimit rl;
    czk_metrics *before, *after;
    long long v1 = (long long)(t_rand64() >> 2), v2 = (long long)(t_rand64() >> 2);
    int fd, probe, opened = 0;

    CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
    if (rl.rlim_cur < want) {
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
            printf("RLIMIT_NOFILE hard limit %llu is below %llu: skipped\n", (unsigned long long)rl.rlim_max,
                   (unsigned long long)want);
            return 77;
        }
        rl.rlim_cur = want;
        if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
            DIE("could not raise RLIMIT_NOFILE to %llu: %s", (unsigned long long)want, strerror(errno));
    }
    before = new_served();
    czk_metric_set(czk_metrics_add(before, CZK_METRIC_GAUGE, "t_fds_value", NULL, "x"), v1);
    /* like a daemon's clients, spool files and pools: the fds below
     * FD_SETSIZE + 64 taken, so that every socket from here on is past it */
    while ((fd = open("/dev/null", O_RDONLY)) >= 0 && fd < FD_SETSIZE + 64)
        opened++;
    CHECK(fd >= 0, "open: %s", strerror(errno));
    probe = open("/dev/null", O_RDONLY);
    CHECK(probe >= FD_SETSIZE, "the lowest free fd is %d: the test proves nothing", probe);
    close(probe);
    printf("%d fds opened, the next is %d\n", opened, probe);
    for (int i = 0; i < 3; i++) /* a few scrapes: each connection a new fd */
        scrape_value(before, "served before the fds were opened", v1);
    after = new_served();
    czk_metric_set(czk_metrics_add(after, CZK_METRIC_GAUGE, "t_fds_value", NULL, "x"), v2);
    for (int i = 0; i < 3; i++) {
        scrape_value(after, "served after the fds were opened", v2);
        scrape_value(before, "served before the fds were opened", v1);
    }
    czk_metrics_free(before);
    czk_metrics_free(after);
    return 0;
}

/* ----------------------------------------------------------------- idle --- */

static int case_idle(void)
{
    enum { IDLE = 32 }; /* more than the endpoint's connection limit */
    struct sockaddr_in sa = {0};
    czk_metrics *m = new_served();
    long long v = (long long)(t_rand64() >> 2);
    int idle[IDLE], tries = 0;
    time_t t0;
    char *resp;
    bool ok = false;

    czk_metric_set(czk_metrics_add(m, CZK_METRIC_GAUGE, "t_idle_value", NULL, "x"), v);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)czk_metrics_port(m));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < IDLE; i++) { /* connected, and silent */
        idle[i] = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(idle[i] >= 0 && connect(idle[i], (struct sockaddr *)&sa, sizeof(sa)) == 0);
    }
    /* every slot is taken: a scrape is refused or waits (the server's idle
     * timeout is longer than the 2 s it is given here) */
    resp = http_get_within(czk_metrics_port(m), "/metrics", 2);
    CHECK(!ok_body(resp), "a scrape was answered while %d idle connections were open: the test proves nothing",
          IDLE);
    free(resp);
    /* the idle ones must be closed by the server, whatever its timeout (the
     * ones past the limit may take the freed slots once more); 90 s is far
     * past any timeout that lets a 15 s scrape interval through */
    t0 = time(NULL);
    for (time_t end = time(NULL) + 90; !ok && time(NULL) < end; tries++) {
        char want[32];
        const char *body, *got;

        resp = http_get(czk_metrics_port(m), "/metrics");
        if ((body = ok_body(resp))) {
            snprintf(want, sizeof(want), "%lld", v);
            got = sample(body, "t_idle_value");
            CHECK(got && !strcmp(got, want), "t_idle_value is %s, expected %s", got ? got : "missing", want);
            ok = true;
        }
        free(resp);
        if (!ok)
            usleep(250 * 1000);
    }
    CHECK(ok, "no scrape answered in 90 s while %d connections stayed idle", IDLE);
    printf("answered after %d tries, %lld s\n", tries, (long long)(time(NULL) - t0));
    for (int i = 0; i < IDLE; i++)
        close(idle[i]);
    czk_metrics_free(m);
    return 0;
}

/* ------------------------------------------------------------- registry --- */

enum { FAMILIES = 48 };

typedef struct {
    int fam, k; /* family, index of the series in it */
    char label[160];
    czk_metric *x;
    bool is_float;
    long long iv;
    double fv;
    uint64_t buckets[CZK_METRICS_BUCKETS + 1]; /* per bucket, the last one +Inf */
    uint64_t count, sum_ns;
} series;

static const double le[CZK_METRICS_BUCKETS] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                               0.025,  0.05,    0.1,    0.25,  0.5,    1,     2.5,
                                               5,      10,      30,     60,    300};
static const char *le_text[CZK_METRICS_BUCKETS] = {"0.0001", "0.00025", "0.0005", "0.001", "0.0025",
                                                   "0.005",  "0.01",    "0.025",  "0.05",  "0.1",
                                                   "0.25",   "0.5",     "1",      "2.5",   "5",
                                                   "10",     "30",      "60",     "300"};

static enum czk_metric_kind fam_kind(int f) { return (enum czk_metric_kind)(f % 3); }

static void fam_name(char *dst, size_t cap, int f)
{
    static const char *suffix[] = {"_total", "", "_seconds"};
    snprintf(dst, cap, "t_family_%d%s", f, suffix[fam_kind(f)]);
}

/* a random label value, escaped as a label set wants it: letters, digits,
 * spaces, quotes, backslashes and newlines */
static void rand_value(char *dst, size_t cap)
{
    static const char alphabet[] = "abcXYZ019 _-.:/\"\\\n";
    size_t n = 4 + t_rand64() % 24, o = 0;

    for (size_t i = 0; i < n && o + 3 < cap; i++) {
        char c = alphabet[t_rand64() % (sizeof(alphabet) - 1)];
        if (c == '"' || c == '\\')
            dst[o++] = '\\', dst[o++] = c;
        else if (c == '\n')
            dst[o++] = '\\', dst[o++] = 'n';
        else
            dst[o++] = c;
    }
    dst[o] = 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* the text's lines, sorted (they point into text, whose newlines become NULs) */
static char **lines_of(char *text, size_t *n)
{
    size_t cap = 1024;
    char **l = malloc(cap * sizeof(*l));

    *n = 0;
    for (char *p = text; l && *p;) {
        char *e = strchr(p, '\n');
        CHECK(e, "the text does not end in a newline");
        if (!e)
            break;
        *e = 0;
        if (*n == cap && !(l = realloc(l, (cap *= 2) * sizeof(*l))))
            break;
        l[(*n)++] = p;
        p = e + 1;
    }
    if (!l)
        DIE("out of memory");
    return l;
}

/* is "key value" a line of the sorted lines? */
static bool has_line(char **lines, size_t n, const char *line)
{
    return bsearch(&line, lines, n, sizeof(*lines), cmp_str) != NULL;
}

static char *fmt_line(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *fmt_line(const char *key, const char *fmt, ...)
{
    static char line[512];
    char v[64];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(v, sizeof(v), fmt, ap);
    va_end(ap);
    snprintf(line, sizeof(line), "%s %s", key, v);
    return line;
}

/* the families' structure in text: each TYPE and HELP once, TYPE saying the
 * family's kind, and every sample of a family between its TYPE and the next
 * family's HELP */
static void check_families(const char *text, int families, const char *prefix)
{
    int *seen = calloc((size_t)families, sizeof(int)), cur = -1;
    size_t pl = strlen(prefix);

    if (!seen)
        DIE("out of memory");
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        char name[64];
        int f = -1;

        if (!strncmp(l, "# HELP ", 7) || !strncmp(l, "# TYPE ", 7)) {
            if (strncmp(l + 7, prefix, pl))
                continue;
            f = atoi(l + 7 + pl);
            CHECK(f >= 0 && f < families, "a family nobody registered: %.60s", l);
            if (f < 0 || f >= families)
                continue;
            fam_name(name, sizeof(name), f);
            if (l[2] == 'H') {
                CHECK(!(seen[f] & 1), "family %s has two HELP lines", name);
                seen[f] |= 1;
                cur = f;
            } else {
                static const char *kinds[] = {"counter", "gauge", "histogram"};
                char want[96];
                snprintf(want, sizeof(want), "# TYPE %s %s\n", name, kinds[fam_kind(f)]);
                CHECK(!(seen[f] & 2), "family %s has two TYPE lines", name);
                CHECK(!strncmp(l, want, strlen(want)), "%.*s, expected %s", (int)strcspn(l, "\n"), l, want);
                CHECK(cur == f, "family %s: TYPE not right after its HELP", name);
                seen[f] |= 2;
            }
        } else if (!strncmp(l, prefix, pl)) {
            f = atoi(l + pl);
            CHECK(f == cur, "a sample of family %d among family %d's: %.60s", f, cur, l);
        }
    }
    for (int f = 0; f < families; f++)
        CHECK(seen[f] == 3, "family %d: HELP/TYPE seen %d", f, seen[f]);
    free(seen);
}

static int case_registry(void)
{
    /* well above the 160 series the registry once held, and enough
     * histograms for more than the 512 KiB the endpoint's first buffer has */
    size_t n = 1200 + t_rand64() % 800, nlines;
    series *s = calloc(n, sizeof(*s));
    int per_fam[FAMILIES] = {0};
    czk_metrics *m;
    char *resp, *text, **lines, name[64], key[256];
    const char *body;

    if (!s)
        DIE("out of memory");
    CHECK(czk_metrics_new(&m) == 0);
    for (size_t i = 0; i < n; i++) { /* families interleaved at random */
        char v[80];
        s[i].fam = (int)(t_rand64() % FAMILIES);
        s[i].k = per_fam[s[i].fam]++;
        rand_value(v, sizeof(v));
        snprintf(s[i].label, sizeof(s[i].label), "k=\"%d\",v=\"%s\"", s[i].k, v);
        fam_name(name, sizeof(name), s[i].fam);
        s[i].x = czk_metrics_add(m, fam_kind(s[i].fam), name, s[i].label, "a family of the registry test");
        CHECK(s[i].x, "series %zu of %zu (%s{%s}) refused", i, n, name, s[i].label);
    }
    for (size_t i = 0; i < n; i++) {
        series *x = &s[i];
        switch (fam_kind(x->fam)) {
        case CZK_METRIC_COUNTER:
            x->iv = (long long)(t_rand64() >> 20);
            czk_metric_inc(x->x, x->iv);
            break;
        case CZK_METRIC_GAUGE:
            if ((x->is_float = t_rand64() & 1)) {
                x->fv = (double)(int64_t)t_rand64() / (double)(1 + (t_rand64() >> 40));
                czk_metric_set_f(x->x, x->fv);
            } else {
                x->iv = (long long)t_rand64();
                czk_metric_set(x->x, x->iv);
            }
            break;
        case CZK_METRIC_HISTOGRAM:
            for (int o = (int)(t_rand64() % 8); o > 0; o--) {
                double sec = (double)(t_rand64() % 400000000) / 1e6; /* 0 .. 400 s, µs steps */
                int b = 0;
                while (b < CZK_METRICS_BUCKETS && sec > le[b])
                    b++;
                x->buckets[b]++;
                x->count++;
                x->sum_ns += (uint64_t)(sec * 1e9 + 0.5);
                czk_metric_observe(x->x, sec);
            }
            break;
        }
    }
    /* served only now: the values are in, and registration needs no server */
    if (czk_metrics_serve(m, "127.0.0.1", -1) != 0)
        DIE("could not serve metrics");
    resp = http_get(czk_metrics_port(m), "/metrics");
    body = ok_body(resp);
    CHECK(body, "/metrics of %zu series: \"%.80s\"", n, resp ? resp : "(no connection)");
    if (!body)
        return 1;
    printf("%zu series, %zu bytes of text\n", n, strlen(body));
    CHECK(strlen(body) > 512 * 1024, "the text is no larger than the first buffer: the test proves less");
    CHECK(strstr(body, "# TYPE czk_build_info gauge\nczk_build_info{"));
    check_families(body, FAMILIES, "t_family_");
    text = strdup(body);
    if (!text)
        DIE("out of memory");
    lines = lines_of(text, &nlines);
    qsort(lines, nlines, sizeof(*lines), cmp_str);
    for (size_t i = 0; i < nlines; i++)
        CHECK(i == 0 || strcmp(lines[i - 1], lines[i]), "a line twice: %.80s", lines[i]);
    for (size_t i = 0; i < n; i++) {
        series *x = &s[i];
        fam_name(name, sizeof(name), x->fam);
        if (fam_kind(x->fam) != CZK_METRIC_HISTOGRAM) {
            const char *v;
            snprintf(key, sizeof(key), "%s{%s}", name, x->label);
            v = sample(body, key);
            CHECK(v, "%s missing", key);
            if (!v)
                continue;
            if (x->is_float)
                CHECK(strtod(v, NULL) == x->fv, "%s is %s, expected %.17g", key, v, x->fv);
            else
                CHECK(strtoll(v, NULL, 10) == x->iv && strspn(v, "-0123456789") == strlen(v),
                      "%s is %s, expected %lld", key, v, x->iv);
            continue;
        }
        uint64_t cum = 0;
        const char *v;
        for (int b = 0; b < CZK_METRICS_BUCKETS; b++) {
            cum += x->buckets[b];
            snprintf(key, sizeof(key), "%s_bucket{%s,le=\"%s\"}", name, x->label, le_text[b]);
            CHECK(has_line(lines, nlines, fmt_line(key, "%llu", (unsigned long long)cum)), "%s is not %llu", key,
                  (unsigned long long)cum);
        }
        snprintf(key, sizeof(key), "%s_bucket{%s,le=\"+Inf\"}", name, x->label);
        CHECK(has_line(lines, nlines, fmt_line(key, "%llu", (unsigned long long)x->count)), "%s is not %llu", key,
              (unsigned long long)x->count);
        snprintf(key, sizeof(key), "%s_count{%s}", name, x->label);
        CHECK(has_line(lines, nlines, fmt_line(key, "%llu", (unsigned long long)x->count)), "%s is not %llu", key,
              (unsigned long long)x->count);
        snprintf(key, sizeof(key), "%s_sum{%s}", name, x->label);
        v = sample(body, key);
        CHECK(v && fabs(strtod(v, NULL) - (double)x->sum_ns / 1e9) <= 1e-9 * (1 + (double)x->sum_ns / 1e9),
              "%s is %s, expected %.9f", key, v ? v : "missing", (double)x->sum_ns / 1e9);
    }
    free(lines);
    free(text);
    free(resp);
    czk_metrics_free(m);
    free(s);
    return 0;
}

/* --------------------------------------------------------------- format --- */

static int case_format(void)
{
    char *buf = malloc(1 << 20), key[64];
    czk_metrics *m;
    czk_metric *x;
    const char *v;
    double big = 1e9 + (double)(t_rand64() % 1000) / 1000.0; /* seconds with their milliseconds */

    if (!buf)
        DIE("out of memory");
    CHECK(czk_metrics_new(&m) == 0);
    /* names: [a-zA-Z_:][a-zA-Z0-9_:]* */
    CHECK(czk_metrics_add(m, CZK_METRIC_GAUGE, "t:ok_name_1", NULL, NULL));
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "1t", NULL, NULL));
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "t-x", NULL, NULL));
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "", NULL, NULL));
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "t x", NULL, NULL));
    /* label sets: escaped values, nothing that would break the scrape */
    CHECK((x = czk_metrics_add(m, CZK_METRIC_GAUGE, "t_labels", "a=\"q\\\"b\\\\c\\nd\",b=\"\"", NULL)));
    czk_metric_set(x, 7);
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "t_labels", "a=\"x\"y\"", NULL), "a raw quote");
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "t_labels", "a=\"x\ny\"", NULL), "a raw newline");
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "t_labels", "a=\"x\\y\"", NULL), "an unknown escape");
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "t_labels", "a=\"x", NULL), "no closing quote");
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "t_labels", "a=x", NULL), "an unquoted value");
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "t_labels", "1a=\"x\"", NULL), "a bad label name");
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "t_labels", "__a=\"x\"", NULL), "a reserved label name");
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "t_labels", "a=\"x\",", NULL), "a trailing comma");
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "t_labels", "a=\"x\"b=\"y\"", NULL), "no comma");
    CHECK(!czk_metrics_add(m, CZK_METRIC_HISTOGRAM, "t_hist_seconds", "le=\"1\"", NULL), "le on a histogram");
    CHECK(czk_metrics_add(m, CZK_METRIC_GAUGE, "t_gauge_le", "le=\"1\"", NULL), "le on a gauge is fine");
    /* one family, one type; one series, one registration */
    CHECK(czk_metrics_add(m, CZK_METRIC_COUNTER, "t_fam_total", "a=\"1\"", "the family"));
    CHECK(!czk_metrics_add(m, CZK_METRIC_GAUGE, "t_fam_total", "a=\"2\"", NULL), "another kind in a family");
    CHECK(!czk_metrics_add(m, CZK_METRIC_COUNTER, "t_fam_total", "a=\"1\"", NULL), "a series twice");
    CHECK(czk_metrics_add(m, CZK_METRIC_COUNTER, "t_fam_total", "a=\"2\"", NULL));
    /* HELP: backslash and newline escaped, once per family, the first given */
    CHECK(czk_metrics_add(m, CZK_METRIC_GAUGE, "t_help", "a=\"1\"", NULL));
    CHECK(czk_metrics_add(m, CZK_METRIC_GAUGE, "t_help", "a=\"2\"", "line one\nC:\\dir \"quoted\""));
    CHECK(czk_metrics_add(m, CZK_METRIC_GAUGE, "t_help", "a=\"3\"", "another"));
    /* values: exact, and the format's spellings of infinities and NaN */
    czk_metric_set_f(czk_metrics_add(m, CZK_METRIC_COUNTER, "t_big_seconds_total", NULL, "x"), big);
    czk_metric_set_f(czk_metrics_add(m, CZK_METRIC_GAUGE, "t_inf", NULL, "x"), INFINITY);
    czk_metric_set_f(czk_metrics_add(m, CZK_METRIC_GAUGE, "t_ninf", NULL, "x"), -INFINITY);
    czk_metric_set_f(czk_metrics_add(m, CZK_METRIC_GAUGE, "t_nan", NULL, "x"), NAN);

    memset(buf, 0xa5, 1 << 20);
    CHECK(czk_metrics_render(m, buf, 1 << 20) > 0);
    CHECK(strstr(buf, "\nt_labels{a=\"q\\\"b\\\\c\\nd\",b=\"\"} 7\n"));
    CHECK(strstr(buf, "# HELP t_help line one\\nC:\\\\dir \"quoted\"\n# TYPE t_help gauge\n"),
          "HELP not escaped, or not the first given");
    {
        const char *h = strstr(buf, "# HELP t_help ");
        CHECK(h && !strstr(h + 1, "# HELP t_help "));
        h = strstr(buf, "# TYPE t_fam_total ");
        CHECK(h && !strstr(h + 1, "# TYPE t_fam_total "));
    }
    CHECK(strstr(buf, "# TYPE czk_build_info gauge\nczk_build_info{version=\""));
    v = sample(buf, "t_big_seconds_total");
    CHECK(v && strtod(v, NULL) == big, "t_big_seconds_total is %s, expected %.17g", v ? v : "missing", big);
    v = sample(buf, "t_inf");
    CHECK(v && !strcmp(v, "+Inf"), "t_inf is %s", v ? v : "missing");
    v = sample(buf, "t_ninf");
    CHECK(v && !strcmp(v, "-Inf"), "t_ninf is %s", v ? v : "missing");
    v = sample(buf, "t_nan");
    CHECK(v && !strcmp(v, "NaN"), "t_nan is %s", v ? v : "missing");
    snprintf(key, sizeof(key), "t_fam_total{a=\"1\"}");
    CHECK(sample(buf, key));
    /* too small a buffer: -ENOSPC, never a cut text */
    CHECK(czk_metrics_render(m, buf, 64) == -ENOSPC);
    czk_metrics_free(m);
    free(buf);
    return 0;
}

/* ----------------------------------------------------------- concurrent --- */

enum { LATE = 3000 };

static atomic_int registered; /* series registered so far (the renderer's lower bound) */
static atomic_bool done;

static void *renderer(void *arg)
{
    czk_metrics *m = arg;
    size_t cap = 8 << 20;
    char *buf = malloc(cap);
    long renders = 0;

    if (!buf)
        DIE("out of memory");
    while (!atomic_load(&done)) {
        int before = atomic_load(&registered), n = 0, r;
        r = czk_metrics_render(m, buf, cap);
        CHECK(r > 0 && (size_t)r == strlen(buf), "render returned %d", r);
        for (const char *p = buf; (p = strstr(p, "\nt_late{")); p++)
            n++;
        CHECK(n >= before, "a render has %d late series, %d were registered before it began", n, before);
        renders++;
    }
    free(buf);
    return (void *)renders;
}

static int case_concurrent(void)
{
    czk_metrics *m;
    pthread_t t;
    void *renders;
    char label[32], *buf = malloc(8 << 20);

    if (!buf)
        DIE("out of memory");
    CHECK(czk_metrics_new(&m) == 0);
    if (pthread_create(&t, NULL, renderer, m) != 0)
        DIE("pthread_create");
    for (int i = 0; i < LATE; i++) {
        czk_metric *x;
        snprintf(label, sizeof(label), "i=\"%d\"", i);
        CHECK((x = czk_metrics_add(m, CZK_METRIC_GAUGE, "t_late", label, "late")));
        czk_metric_set(x, i);
        atomic_store(&registered, i + 1);
    }
    atomic_store(&done, true);
    pthread_join(t, &renders);
    printf("%d series registered during %ld renders\n", LATE, (long)renders);
    CHECK(czk_metrics_render(m, buf, 8 << 20) > 0);
    for (int i = 0; i < LATE; i++) {
        char key[32], want[16];
        const char *v;
        snprintf(key, sizeof(key), "t_late{i=\"%d\"}", i);
        snprintf(want, sizeof(want), "%d", i);
        v = sample(buf, key);
        CHECK(v && !strcmp(v, want), "%s is %s", key, v ? v : "missing");
    }
    czk_metrics_free(m);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(void);
    } cases[] = {{"fds", case_fds},
                 {"idle", case_idle},
                 {"registry", case_registry},
                 {"format", case_format},
                 {"concurrent", case_concurrent}};

    for (size_t i = 0; argc == 2 && i < sizeof(cases) / sizeof(cases[0]); i++)
        if (!strcmp(argv[1], cases[i].name)) {
            int r;
            t_seed(argv[1]);
            r = cases[i].fn();
            if (r == 0 && t_failures == 0)
                printf("%s ok\n", argv[1]);
            return r ? r : t_failures ? 1 : 0;
        }
    fprintf(stderr, "usage: test_metrics fds|idle|registry|format|concurrent\n");
    return 2;
}
