/* config.c — INI configuration with defaults and overrides (see config.h). */
#include "common/runtime/config.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* an environment variable's value when it is an absolute path, else NULL
 * (the XDG base directory rules ignore a relative XDG_RUNTIME_DIR) */
static const char *env_abs(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] == '/' ? v : NULL;
}

int czk_config_env_check(czk_error *e)
{
    static const char *const vars[] = {"CZK_RUNTIME_DIR", "CZK_STATE_DIR"};

    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v && v[0] != '/')
            return czk_errorf(e, -EINVAL, "$%s=\"%.80s%s\" is not an absolute path (it must start with '/')",
                              vars[i], v, strlen(v) > 80 ? "..." : "");
        if (v && strlen(v) >= CZK_CONFIG_PATH_MAX - 16)
            return czk_errorf(e, -ENAMETOOLONG, "$%s=\"%.80s...\" is too long", vars[i], v);
    }
    return 0;
}

void czk_config_defaults(czk_config *c)
{
    const char *rt = env_abs("CZK_RUNTIME_DIR");
    const char *xdg = env_abs("XDG_RUNTIME_DIR");
    const char *st = env_abs("CZK_STATE_DIR");
    const char *home = env_abs("HOME");

    memset(c, 0, sizeof(*c));
    if (rt)
        snprintf(c->runtime_dir, sizeof(c->runtime_dir), "%s", rt);
    else if (geteuid() != 0 && xdg)
        snprintf(c->runtime_dir, sizeof(c->runtime_dir), "%s/czk", xdg);
    else if (geteuid() != 0)
        snprintf(c->runtime_dir, sizeof(c->runtime_dir), "/tmp/czk-%u", (unsigned)geteuid());
    else
        snprintf(c->runtime_dir, sizeof(c->runtime_dir), "/run/czk");
    if (st)
        snprintf(c->state_dir, sizeof(c->state_dir), "%s", st);
    else if (geteuid() != 0 && home)
        snprintf(c->state_dir, sizeof(c->state_dir), "%s/.local/state/czk", home);
    else
        snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/czk");
    snprintf(c->output_dir, sizeof(c->output_dir), "%.500s/proofs", c->state_dir);
    c->log_level = 6;
    c->daemon_queue_max_mb = 64;
    snprintf(c->backend, sizeof(c->backend), "auto");
    c->slots_per_pool = 4;
    c->synth_timeout_s = 600;
    snprintf(c->hugepages, sizeof(c->hugepages), "auto");
    c->max_queued_partitions = 4096;
    c->max_partitions_per_job = CZK_CONFIG_MAX_PARTITIONS_PER_JOB;
    c->result_resend_s = 120;
    c->max_jobs = 1024;
    c->history_jobs = 10000;
    c->intake_threads = 4;
    c->journal_compact_kb = 65536;
    snprintf(c->metrics_addr, sizeof(c->metrics_addr), "127.0.0.1");
    c->metrics_port = 9464;
    /* max_clients + max_daemon_conns must stay below gpud's RLIMIT_NOFILE
     * minus the fds of pools, spools and the backend; past the fd limit,
     * accepting backs off instead (ipc/loop.h) */
    c->max_clients = 1000;
    c->max_clients_per_uid = 250;
    c->client_idle_timeout_s = 60;
    c->client_queue_soft_kb = 256;
    c->client_queue_max_kb = 16384;
    c->max_daemon_conns = 64;
    c->msm_table_reserve_mb = 2048;
    c->reconnect_max_ms = 5000;
    c->finalizer_verify = 1;
    snprintf(c->synth_metrics_addr, sizeof(c->synth_metrics_addr), "127.0.0.1");
    c->synth_metrics_port = 9466; /* + the synth's NUMA node */
    snprintf(c->fin_metrics_addr, sizeof(c->fin_metrics_addr), "127.0.0.1");
    c->fin_metrics_port = 9465;
}

/*
 * What config_apply says about a value it refuses: the message, without the
 * file and line (czk_config_load adds them, czk_config_set names the
 * override), goes to why.
 */
struct val {
    const char *section, *key, *v;
    char *why;
    size_t cap;
};

static int bad(struct val *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct val *a, const char *fmt, ...)
{
    va_list ap;
    int shown = strlen(a->v) > 96 ? 80 : 96; /* so that a long value leaves room for the key */
    int n = snprintf(a->why, a->cap, "bad value \"%.*s%s\" for %s.%s: ", shown, a->v,
                     (int)strlen(a->v) > shown ? "..." : "", a->section, a->key);

    if (n < 0 || (size_t)n >= a->cap)
        return -EINVAL;
    va_start(ap, fmt);
    vsnprintf(a->why + n, a->cap - (size_t)n, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

/*
 * What no value of any key may look like.  A value is taken verbatim, so
 * quotes would become part of it (runtime_dir = "/run/czk" names a relative
 * directory '"'), and '#' starts a comment only at the start of a line, so
 * "zkey = /k.zkey # main" would name a file "/k.zkey # main".
 */
static int value_ok(struct val *a)
{
    size_t len = strlen(a->v);

    if (len && (a->v[0] == '"' || a->v[0] == '\'' || a->v[len - 1] == '"' || a->v[len - 1] == '\''))
        return bad(a, "a value is taken verbatim, quotes included: write it without quotes");
    for (size_t i = 0; i < len; i++)
        if (a->v[i] == '#' && (i == 0 || isspace((unsigned char)a->v[i - 1])))
            return bad(a, "'#' starts a comment only at the start of a line: put the comment on a line of its own");
    return 0;
}

static int parse_int(struct val *a, int lo, int hi, int *out)
{
    char *end;
    long x;
    int r;

    if ((r = value_ok(a)))
        return r;
    errno = 0;
    x = strtol(a->v, &end, 10);
    if (errno || end == a->v || *end || x < lo || x > hi)
        return bad(a, "expected an integer %d..%d", lo, hi);
    *out = (int)x;
    return 0;
}

static int parse_bool(struct val *a, int *out)
{
    const char *v = a->v;
    int r;

    if ((r = value_ok(a)))
        return r;
    if (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on"))
        *out = 1;
    else if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off"))
        *out = 0;
    else
        return bad(a, "expected yes or no");
    return 0;
}

/* what a string value must be, beyond value_ok */
enum str_kind {
    STR_ANY,
    STR_PATH, /* a non-empty absolute path */
    STR_IPV4, /* empty, or an IPv4 address as czk_metrics_serve takes it (inet_pton) */
};

static int check_str(struct val *a, size_t cap, enum str_kind kind)
{
    struct in_addr ia;
    int r;

    if ((r = value_ok(a)))
        return r;
    if (strlen(a->v) >= cap)
        return bad(a, "%zu bytes, longer than the %zu it may be", strlen(a->v), cap - 1);
    if (kind == STR_PATH && !a->v[0])
        return bad(a, "expected an absolute path");
    if (kind == STR_PATH && a->v[0] != '/')
        return bad(a, "not an absolute path (it must start with '/')");
    if (kind == STR_IPV4 && a->v[0] && inet_pton(AF_INET, a->v, &ia) != 1)
        return bad(a, "not an IPv4 address such as 127.0.0.1 (the metrics endpoint takes neither host "
                      "names nor IPv6; empty disables it)");
    return 0;
}

static int set_str(struct val *a, char *dst, size_t cap, enum str_kind kind)
{
    int r = check_str(a, cap, kind);

    if (r == 0)
        memcpy(dst, a->v, strlen(a->v) + 1);
    return r;
}

static int set_choice(struct val *a, char *dst, size_t cap, const char *const *choices)
{
    char list[80] = "";
    int r;

    if ((r = value_ok(a)))
        return r;
    for (const char *const *ch = choices; *ch; ch++)
        if (!strcmp(a->v, *ch))
            return set_str(a, dst, cap, STR_ANY);
    for (const char *const *ch = choices; *ch; ch++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", ch == choices ? "" : ", ", *ch);
    return bad(a, "expected one of %s", list);
}

/* a valid circuit NAME: letters, digits, '-', '_', '.', shorter than the field */
static int circuit_name_ok(const char *name)
{
    if (!*name || strlen(name) >= sizeof(((czk_config_circuit *)0)->name))
        return 0;
    for (size_t i = 0; name[i]; i++)
        if (!(name[i] == '-' || name[i] == '_' || name[i] == '.' || (name[i] >= '0' && name[i] <= '9') ||
              (name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z')))
            return 0;
    return 1;
}

static void circuit_name_why(char *why, size_t cap, const char *name)
{
    snprintf(why, cap, "[circuit.%s]: bad circuit name \"%s\": use 1 to %zu letters, digits, '-', '_' or '.'",
             name, name, sizeof(((czk_config_circuit *)0)->name) - 1);
}

/* [circuit.NAME]'s entry, created (msm_tables "auto") on its first key; NULL
 * with why filled for a bad name or a circuit beyond CZK_CONFIG_MAX_CIRCUITS */
static czk_config_circuit *circuit_entry(czk_config *c, struct val *a)
{
    const char *name = a->section + 8;
    czk_config_circuit *cc;

    if (!circuit_name_ok(name)) {
        circuit_name_why(a->why, a->cap, name);
        return NULL;
    }
    for (int i = 0; i < c->n_circuits; i++)
        if (!strcmp(c->circuits[i].name, name))
            return &c->circuits[i];
    if (c->n_circuits == CZK_CONFIG_MAX_CIRCUITS) {
        snprintf(a->why, a->cap, "[circuit.%s]: too many circuits: at most %d may be configured", name,
                 CZK_CONFIG_MAX_CIRCUITS);
        return NULL;
    }
    cc = &c->circuits[c->n_circuits++];
    snprintf(cc->name, sizeof(cc->name), "%s", name);
    snprintf(cc->msm_tables, sizeof(cc->msm_tables), "auto");
    return cc;
}

/* returns 0, -ENOENT (unknown key) or -EINVAL (why says what is wrong); every
 * setter first refuses what value_ok refuses */
static int config_apply(czk_config *c, const char *section, const char *key, const char *v, char *why,
                        size_t why_cap)
{
    static const char *const backends[] = {"auto", "cpu", "cuda", NULL};
    static const char *const tristate[] = {"auto", "on", "off", NULL};
    struct val a = {section, key, v, why, why_cap};
    int r;

#define STR(sec, k, field, kind)                                                                  \
    if (!strcmp(section, sec) && !strcmp(key, k))                                                 \
        return set_str(&a, c->field, sizeof(c->field), kind)
#define INT(sec, k, field, lo, hi) if (!strcmp(section, sec) && !strcmp(key, k)) return parse_int(&a, lo, hi, &c->field)
    STR("czk", "runtime_dir", runtime_dir, STR_PATH);
    if (!strcmp(section, "czk") && !strcmp(key, "state_dir")) {
        r = set_str(&a, c->state_dir, sizeof(c->state_dir), STR_PATH);
        /* output_dir follows state_dir until it is set itself */
        if (r == 0 && !c->output_dir_set)
            snprintf(c->output_dir, sizeof(c->output_dir), "%.500s/proofs", c->state_dir);
        return r;
    }
    if (!strcmp(section, "czk") && !strcmp(key, "output_dir")) {
        if ((r = set_str(&a, c->output_dir, sizeof(c->output_dir), STR_PATH)) == 0)
            c->output_dir_set = 1;
        return r;
    }
    STR("czk", "client_group", client_group, STR_ANY);
    INT("czk", "log_level", log_level, 0, 7);
    INT("czk", "daemon_queue_max_mb", daemon_queue_max_mb, 1, 65536);
    if (!strcmp(section, "gpud") && !strcmp(key, "backend"))
        return set_choice(&a, c->backend, sizeof(c->backend), backends);
    if (!strcmp(section, "gpud") && !strcmp(key, "hugepages"))
        return set_choice(&a, c->hugepages, sizeof(c->hugepages), tristate);
    INT("gpud", "threads", gpud_threads, 0, 4096);
    INT("gpud", "contexts", gpud_contexts, 0, 64);
    INT("gpud", "slots_per_pool", slots_per_pool, 1, 4096);
    INT("gpud", "synth_timeout_s", synth_timeout_s, 0, 86400);
    INT("gpud", "max_queued_partitions", max_queued_partitions, 1, 1 << 24);
    INT("gpud", "max_partitions_per_job", max_partitions_per_job, 1, CZK_CONFIG_MAX_PARTITIONS_PER_JOB);
    INT("gpud", "result_resend_s", result_resend_s, 1, 86400);
    INT("gpud", "max_jobs", max_jobs, 1, 1 << 20);
    INT("gpud", "history_jobs", history_jobs, 1, 1 << 20);
    INT("gpud", "intake_threads", intake_threads, 1, 64);
    INT("gpud", "journal_compact_kb", journal_compact_kb, 0, 1 << 30);
    STR("gpud", "metrics_addr", metrics_addr, STR_IPV4);
    INT("gpud", "metrics_port", metrics_port, 0, 65535);
    INT("gpud", "max_clients", max_clients, 1, 1 << 20);
    INT("gpud", "max_clients_per_uid", max_clients_per_uid, 1, 1 << 20);
    INT("gpud", "client_idle_timeout_s", client_idle_timeout_s, 0, 86400);
    INT("gpud", "client_queue_soft_kb", client_queue_soft_kb, 64, 1 << 20);
    INT("gpud", "client_queue_max_kb", client_queue_max_kb, 128, 1 << 22);
    INT("gpud", "max_daemon_conns", max_daemon_conns, 1, 4096);
    INT("gpud", "msm_table_reserve_mb", msm_table_reserve_mb, 0, 1 << 24);
    STR("gpud", "admin_group", admin_group, STR_ANY);
    INT("synth", "threads", synth_threads, 0, 4096);
    INT("synth", "reconnect_max_ms", reconnect_max_ms, 10, 600000);
    STR("synth", "metrics_addr", synth_metrics_addr, STR_IPV4);
    INT("synth", "metrics_port", synth_metrics_port, 0, 65535);
    STR("finalizer", "metrics_addr", fin_metrics_addr, STR_IPV4);
    INT("finalizer", "metrics_port", fin_metrics_port, 0, 65535);
    if (!strcmp(section, "finalizer") && !strcmp(key, "verify"))
        return parse_bool(&a, &c->finalizer_verify);
#undef STR
#undef INT
    /* the value is checked before the entry is made: a refused value adds no circuit */
    if (!strncmp(section, "circuit.", 8) && !strcmp(key, "zkey")) {
        czk_config_circuit *cc;
        if ((r = check_str(&a, sizeof(cc->zkey), STR_PATH)))
            return r;
        return (cc = circuit_entry(c, &a)) ? set_str(&a, cc->zkey, sizeof(cc->zkey), STR_PATH) : -EINVAL;
    }
    if (!strncmp(section, "circuit.", 8) && !strcmp(key, "msm_tables")) {
        static const char *const tables[] = {"auto", "off", NULL};
        czk_config_circuit scratch, *cc;
        if ((r = set_choice(&a, scratch.msm_tables, sizeof(scratch.msm_tables), tables)))
            return r;
        return (cc = circuit_entry(c, &a)) ? set_choice(&a, cc->msm_tables, sizeof(cc->msm_tables), tables) : -EINVAL;
    }
    return -ENOENT;
}

/*
 * The file is read by libinih (ini_parse_stream) through read_line, which
 * hands it one physical line at a time, so that:
 *  - every error names the true line: read_line counts the lines, and inih
 *    calls the handler for the line it was handed last;
 *  - no line continues the one before: Debian's inih (INI_ALLOW_MULTILINE)
 *    takes an indented line after "key = value" as a new value of that key;
 *    read_line strips every line's indentation, so nothing is a continuation;
 *  - no line is cut in two: inih reads into a fixed buffer (INI_MAX_LINE: 200
 *    bytes with the newline and the NUL; the reader is told its size) and
 *    would split a longer line; read_line refuses such a line, unless it is
 *    a comment, and hands inih a blank line in its place;
 *  - sections are checked: inih hands over keys, never sections, so a second
 *    [x] would merge into the first, a [x] without keys would vanish, and it
 *    keeps only 49 bytes of a section's name.  read_line reads section lines
 *    the way inih does (the name verbatim between '[' and the first ']', no
 *    inline comment before it) and the handler takes the name from there;
 *  - a repeated key is refused, not silently the last one.
 * Every error is kept with its line and the earliest line's is reported (a
 * section without keys is known only at the next section line).
 */
#define SECTIONS_MAX 256

struct seen_section {
    char name[80];
    int line;
    int has_keys;
};

struct seen_key {
    int section;
    int line;
    char key[40]; /* longer keys are unknown keys */
};

struct load_ctx {
    czk_config *c;
    const char *path;
    FILE *f;
    char *buf; /* getline's */
    size_t buf_cap;
    int line;  /* the line read last */
    struct seen_section sections[SECTIONS_MAX];
    int n_sections;
    int cur; /* the section of the line read last; -1 before the first */
    struct seen_key *keys;
    int n_keys, keys_cap;
    int err_line; /* the first line with an error so far, 0: none */
    int err_code;
    char err[sizeof(((czk_error *)0)->msg)];
};

static void load_error(struct load_ctx *lc, int line, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void load_error(struct load_ctx *lc, int line, int code, const char *fmt, ...)
{
    va_list ap;

    if (lc->err_line && lc->err_line <= line)
        return;
    lc->err_line = line;
    lc->err_code = code;
    va_start(ap, fmt);
    vsnprintf(lc->err, sizeof(lc->err), fmt, ap);
    va_end(ap);
}

/* inih's ini_find_chars_or_comment: the first of chars, or of an inline ';'
 * comment (one after whitespace), else the end */
static const char *find_chars_or_comment(const char *s, const char *chars)
{
    int was_space = 0;

    while (*s && !strchr(chars, *s) && !(was_space && *s == ';')) {
        was_space = isspace((unsigned char)*s);
        s++;
    }
    return s;
}

static void section_line(struct load_ctx *lc, const char *name, size_t len)
{
    struct seen_section *last = lc->n_sections ? &lc->sections[lc->n_sections - 1] : NULL;
    char why[400];

    if (last && !last->has_keys)
        load_error(lc, last->line, -EINVAL, "%s:%d: section [%s] has no keys", lc->path, last->line, last->name);
    if (len >= sizeof(lc->sections[0].name)) {
        load_error(lc, lc->line, -EINVAL, "%s:%d: section name longer than %zu bytes", lc->path, lc->line,
                   sizeof(lc->sections[0].name) - 1);
        lc->cur = -1;
        return;
    }
    for (int i = 0; i < lc->n_sections; i++)
        if (strlen(lc->sections[i].name) == len && !memcmp(lc->sections[i].name, name, len)) {
            load_error(lc, lc->line, -EINVAL,
                       "%s:%d: section [%s] appears a second time (first at line %d): put all its keys in one section",
                       lc->path, lc->line, lc->sections[i].name, lc->sections[i].line);
            lc->cur = i;
            return;
        }
    if (lc->n_sections == SECTIONS_MAX) {
        load_error(lc, lc->line, -EINVAL, "%s:%d: too many sections (at most %d)", lc->path, lc->line, SECTIONS_MAX);
        lc->cur = -1;
        return;
    }
    last = &lc->sections[lc->n_sections];
    memcpy(last->name, name, len);
    last->name[len] = 0;
    last->line = lc->line;
    last->has_keys = 0;
    lc->cur = lc->n_sections++;
    if (!strncmp(last->name, "circuit.", 8) && !circuit_name_ok(last->name + 8)) {
        circuit_name_why(why, sizeof(why), last->name + 8);
        load_error(lc, lc->line, -EINVAL, "%s:%d: %s", lc->path, lc->line, why);
    }
}

/* ini_reader: hands inih the next physical line, indentation and trailing
 * whitespace stripped, with its newline; NULL at the end of the file */
static char *read_line(char *str, int num, void *stream)
{
    struct load_ctx *lc = stream;
    ssize_t n = getline(&lc->buf, &lc->buf_cap, lc->f);
    char *s, *end;

    if (n < 0) {
        if (ferror(lc->f))
            load_error(lc, lc->line + 1, errno ? -errno : -EIO, "could not read config \"%s\" after line %d: %s",
                       lc->path, lc->line, strerror(errno));
        return NULL;
    }
    lc->line++;
    s = lc->buf;
    end = s + n;
    if (lc->line == 1 && n >= 3 && !memcmp(s, "\xef\xbb\xbf", 3)) /* a UTF-8 BOM, which inih skips */
        s += 3;
    while (s < end && isspace((unsigned char)*s))
        s++;
    while (end > s && isspace((unsigned char)end[-1]))
        end--;
    *end = 0;
    if (s == end || *s == ';' || *s == '#') /* blank or a comment, which may be of any length */
        s = end;
    else if (*s == '[' && *find_chars_or_comment(s + 1, "]") == ']' && end - s <= num - 2)
        section_line(lc, s + 1, (size_t)(find_chars_or_comment(s + 1, "]") - (s + 1)));
    else {
        const char *eq = find_chars_or_comment(s, "=:");
        if (lc->cur >= 0) /* a key line, or one that was meant to be */
            lc->sections[lc->cur].has_keys = 1;
        if (end - s > num - 2) {
            load_error(lc, lc->line, -EINVAL,
                       "%s:%d: line %d is longer than %d bytes (not counting its indentation): libinih takes no more",
                       lc->path, lc->line, lc->line, num - 2);
            s = end; /* inih gets a blank line instead */
        } else if (memchr(s, 0, (size_t)(end - s))) {
            load_error(lc, lc->line, -EINVAL, "%s:%d: the line holds a NUL byte (not a text file?)", lc->path,
                       lc->line);
            s = end;
        } else if (*s == '[')
            load_error(lc, lc->line, -EINVAL, "%s:%d: section line \"%s\" has no ']'", lc->path, lc->line, s);
        else if (*eq != '=' && *eq != ':')
            load_error(lc, lc->line, -EINVAL,
                       "%s:%d: \"%.80s\" is neither \"key = value\", \"[section]\" nor a comment", lc->path,
                       lc->line, s);
    }
    memcpy(str, s, (size_t)(end - s));
    str[end - s] = '\n';
    str[end - s + 1] = 0;
    return str;
}

static int ini_cb(void *user, const char *inih_section, const char *key, const char *value)
{
    struct load_ctx *lc = user;
    const char *section = lc->cur >= 0 ? lc->sections[lc->cur].name : "";
    char why[400];
    int rc;

    (void)inih_section; /* at most 49 bytes of it: read_line keeps it whole */
    if (lc->cur < 0 && lc->n_sections == 0) {
        load_error(lc, lc->line, -EINVAL, "%s:%d: key \"%s\" before the first [section]", lc->path, lc->line, key);
        return 1;
    }
    if (lc->cur < 0) /* after a section line refused */
        return 1;
    for (int i = 0; i < lc->n_keys; i++)
        if (lc->keys[i].section == lc->cur && !strcmp(lc->keys[i].key, key)) {
            load_error(lc, lc->line, -EINVAL,
                       "%s:%d: key \"%s\" appears a second time in [%s] (first at line %d): keep one", lc->path,
                       lc->line, key, section, lc->keys[i].line);
            return 1;
        }
    rc = config_apply(lc->c, section, key, value, why, sizeof(why));
    if (rc == -ENOENT)
        load_error(lc, lc->line, -EINVAL, "%s:%d: unknown key \"%s\" in section [%s]", lc->path, lc->line, key,
                   section);
    else if (rc)
        load_error(lc, lc->line, -EINVAL, "%s:%d: %s", lc->path, lc->line, why);
    else if (strlen(key) < sizeof(lc->keys[0].key)) { /* known keys are shorter: remember where it was */
        if (lc->n_keys == lc->keys_cap) {
            int cap = lc->keys_cap ? 2 * lc->keys_cap : 64;
            struct seen_key *k = realloc(lc->keys, (size_t)cap * sizeof(*k));
            if (!k) {
                load_error(lc, lc->line, -ENOMEM, "no memory to read config \"%s\"", lc->path);
                return 1;
            }
            lc->keys = k;
            lc->keys_cap = cap;
        }
        lc->keys[lc->n_keys].section = lc->cur;
        lc->keys[lc->n_keys].line = lc->line;
        snprintf(lc->keys[lc->n_keys].key, sizeof(lc->keys[0].key), "%s", key);
        lc->n_keys++;
    }
    return 1; /* errors are kept here: inih's own result then names only lines it could not read */
}

int czk_config_load(czk_config *c, const char *path, czk_error *e)
{
    struct load_ctx *lc;
    struct stat st;
    FILE *f = fopen(path, "r");
    int rc;

    if (!f)
        return czk_errorf(e, -errno, "could not open config \"%s\": %s", path, strerror(errno));
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        return czk_errorf(e, -EISDIR, "config \"%s\" is a directory, not a file", path);
    }
    if (!(lc = calloc(1, sizeof(*lc)))) {
        fclose(f);
        return czk_errorf(e, -ENOMEM, "no memory to read config \"%s\"", path);
    }
    lc->c = c;
    lc->path = path;
    lc->f = f;
    lc->cur = -1;
    rc = ini_parse_stream(read_line, lc, ini_cb, lc);
    if (rc > 0) /* read_line saw every line inih refuses; this is a safety net */
        load_error(lc, rc, -EINVAL, "%s:%d: syntax error", path, rc);
    else if (rc < 0)
        load_error(lc, lc->line + 1, -ENOMEM, "no memory to read config \"%s\"", path);
    if (lc->n_sections && !lc->sections[lc->n_sections - 1].has_keys)
        load_error(lc, lc->sections[lc->n_sections - 1].line, -EINVAL, "%s:%d: section [%s] has no keys", path,
                   lc->sections[lc->n_sections - 1].line, lc->sections[lc->n_sections - 1].name);
    rc = lc->err_line ? czk_errorf(e, lc->err_code, "%s", lc->err) : 0;
    free(lc->buf);
    free(lc->keys);
    free(lc);
    fclose(f);
    return rc;
}

int czk_config_set(czk_config *c, const char *assignment, czk_error *e)
{
    char buf[CZK_CONFIG_PATH_MAX + 128];
    char why[400];
    char *eq, *dot;
    int rc;

    if (strlen(assignment) >= sizeof(buf))
        return czk_errorf(e, -EINVAL, "override too long: %.40s...", assignment);
    strcpy(buf, assignment);
    eq = strchr(buf, '=');
    if (!eq)
        return czk_errorf(e, -EINVAL, "override \"%s\" is not section.key=value", assignment);
    *eq = 0;
    dot = strrchr(buf, '.');
    if (!dot || dot == buf)
        return czk_errorf(e, -EINVAL, "override \"%s\" is not section.key=value", assignment);
    *dot = 0;
    rc = config_apply(c, buf, dot + 1, eq + 1, why, sizeof(why));
    if (rc == -ENOENT)
        return czk_errorf(e, -EINVAL, "unknown setting \"%s.%s\"", buf, dot + 1);
    if (rc)
        return czk_errorf(e, -EINVAL, "%s", why);
    return 0;
}

const czk_config_circuit *czk_config_circuit_find(const czk_config *c, const char *name)
{
    for (int i = 0; i < c->n_circuits; i++)
        if (!strcmp(c->circuits[i].name, name))
            return &c->circuits[i];
    return NULL;
}
