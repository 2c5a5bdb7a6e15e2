/* config.c — INI configuration with defaults and overrides (see config.h). */
#include "common/runtime/config.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void czk_config_defaults(czk_config *c)
{
    const char *rt = getenv("CZK_RUNTIME_DIR");
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    const char *st = getenv("CZK_STATE_DIR");
    const char *home = getenv("HOME");

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

static int parse_int(const char *v, int lo, int hi, int *out)
{
    char *end;
    long x;

    errno = 0;
    x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return -EINVAL;
    *out = (int)x;
    return 0;
}

static int parse_bool(const char *v, int *out)
{
    if (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on"))
        *out = 1;
    else if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off"))
        *out = 0;
    else
        return -EINVAL;
    return 0;
}

static int set_str(char *dst, size_t cap, const char *v)
{
    if (strlen(v) >= cap)
        return -ENAMETOOLONG;
    memcpy(dst, v, strlen(v) + 1);
    return 0;
}

static int set_choice(char *dst, size_t cap, const char *v, const char *const *choices)
{
    for (; *choices; choices++)
        if (!strcmp(v, *choices))
            return set_str(dst, cap, v);
    return -EINVAL;
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

/* [circuit.NAME]'s entry, created (msm_tables "auto") on its first key; NULL
 * for a bad name or a 33rd circuit (circuit_entry_error says which) */
static czk_config_circuit *circuit_entry(czk_config *c, const char *name)
{
    czk_config_circuit *cc;

    if (!circuit_name_ok(name))
        return NULL;
    for (int i = 0; i < c->n_circuits; i++)
        if (!strcmp(c->circuits[i].name, name))
            return &c->circuits[i];
    if (c->n_circuits == CZK_CONFIG_MAX_CIRCUITS)
        return NULL;
    cc = &c->circuits[c->n_circuits++];
    snprintf(cc->name, sizeof(cc->name), "%s", name);
    snprintf(cc->msm_tables, sizeof(cc->msm_tables), "auto");
    return cc;
}

static int circuit_entry_error(const czk_config *c, const char *name)
{
    (void)c;
    return circuit_name_ok(name) ? -E2BIG : -EINVAL;
}

/* returns 0, -ENOENT (unknown key) or -EINVAL/-ENAMETOOLONG (bad value) */
static int config_apply(czk_config *c, const char *section, const char *key, const char *v)
{
    static const char *const backends[] = {"auto", "cpu", "cuda", NULL};
    static const char *const tristate[] = {"auto", "on", "off", NULL};

#define STR(sec, k, field) if (!strcmp(section, sec) && !strcmp(key, k)) return set_str(c->field, sizeof(c->field), v)
#define INT(sec, k, field, lo, hi) if (!strcmp(section, sec) && !strcmp(key, k)) return parse_int(v, lo, hi, &c->field)
    STR("czk", "runtime_dir", runtime_dir);
    if (!strcmp(section, "czk") && !strcmp(key, "state_dir")) {
        int r = set_str(c->state_dir, sizeof(c->state_dir), v);
        /* output_dir follows state_dir until it is set itself */
        if (r == 0 && !c->output_dir_set)
            snprintf(c->output_dir, sizeof(c->output_dir), "%.500s/proofs", c->state_dir);
        return r;
    }
    if (!strcmp(section, "czk") && !strcmp(key, "output_dir")) {
        c->output_dir_set = 1;
        return set_str(c->output_dir, sizeof(c->output_dir), v);
    }
    STR("czk", "client_group", client_group);
    INT("czk", "log_level", log_level, 0, 7);
    INT("czk", "daemon_queue_max_mb", daemon_queue_max_mb, 1, 65536);
    if (!strcmp(section, "gpud") && !strcmp(key, "backend"))
        return set_choice(c->backend, sizeof(c->backend), v, backends);
    if (!strcmp(section, "gpud") && !strcmp(key, "hugepages"))
        return set_choice(c->hugepages, sizeof(c->hugepages), v, tristate);
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
    STR("gpud", "metrics_addr", metrics_addr);
    INT("gpud", "metrics_port", metrics_port, 0, 65535);
    INT("gpud", "watchdog_ms", watchdog_ms, 0, 3600000);
    INT("gpud", "max_clients", max_clients, 1, 1 << 20);
    INT("gpud", "max_clients_per_uid", max_clients_per_uid, 1, 1 << 20);
    INT("gpud", "client_idle_timeout_s", client_idle_timeout_s, 0, 86400);
    INT("gpud", "client_queue_soft_kb", client_queue_soft_kb, 64, 1 << 20);
    INT("gpud", "client_queue_max_kb", client_queue_max_kb, 128, 1 << 22);
    INT("gpud", "max_daemon_conns", max_daemon_conns, 1, 4096);
    INT("gpud", "msm_table_reserve_mb", msm_table_reserve_mb, 0, 1 << 24);
    STR("gpud", "admin_group", admin_group);
    INT("synth", "threads", synth_threads, 0, 4096);
    INT("synth", "reconnect_max_ms", reconnect_max_ms, 10, 600000);
    STR("synth", "metrics_addr", synth_metrics_addr);
    INT("synth", "metrics_port", synth_metrics_port, 0, 65535);
    STR("finalizer", "metrics_addr", fin_metrics_addr);
    INT("finalizer", "metrics_port", fin_metrics_port, 0, 65535);
    if (!strcmp(section, "finalizer") && !strcmp(key, "verify"))
        return parse_bool(v, &c->finalizer_verify);
#undef STR
#undef INT
    if (!strncmp(section, "circuit.", 8) && !strcmp(key, "zkey")) {
        czk_config_circuit *cc = circuit_entry(c, section + 8);
        return cc ? set_str(cc->zkey, sizeof(cc->zkey), v) : circuit_entry_error(c, section + 8);
    }
    if (!strncmp(section, "circuit.", 8) && !strcmp(key, "msm_tables")) {
        static const char *const tables[] = {"auto", "off", NULL};
        czk_config_circuit *cc = circuit_entry(c, section + 8);
        return cc ? set_choice(cc->msm_tables, sizeof(cc->msm_tables), v, tables) : circuit_entry_error(c, section + 8);
    }
    return -ENOENT;
}

struct load_ctx {
    czk_config *c;
    czk_error *e;
    const char *path;
    int rc;
    char what[400];
};

/* Debian's inih has no line numbers in the handler: ini_parse_file returns the
 * line of the first error instead, so only the first error is recorded. */
static int ini_cb(void *user, const char *section, const char *key, const char *value)
{
    struct load_ctx *lc = user;
    int rc = config_apply(lc->c, section, key, value);

    if (rc == 0 || lc->rc)
        return rc == 0;
    if (rc == -ENOENT)
        snprintf(lc->what, sizeof(lc->what), "unknown key \"%s\" in section [%s]", key, section);
    else
        snprintf(lc->what, sizeof(lc->what), "bad value \"%s\" for %s.%s", value, section, key);
    lc->rc = -EINVAL;
    return 0;
}

/*
 * libinih hands over keys, never sections: a second [x] would silently merge
 * into the first (a repeated key keeping the last value) and a [x] without
 * keys would vanish.  So the section lines are checked here first, read the
 * way inih reads them (a UTF-8 BOM, leading and trailing whitespace, whole
 * line ';' and '#' comments, the name taken verbatim between '[' and ']').
 * A malformed section line is left to inih to report.
 */
#define SECTIONS_MAX 256

struct seen_section {
    char name[80];
    int line;
};

static char *trim(char *s)
{
    char *end;
    while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n' || *s == '\f' || *s == '\v')
        s++;
    end = s + strlen(s);
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n' ||
                       end[-1] == '\f' || end[-1] == '\v'))
        *--end = 0;
    return s;
}

static int check_sections(FILE *f, const char *path, czk_error *e)
{
    struct seen_section *seen = calloc(SECTIONS_MAX, sizeof(*seen));
    char line[1024];
    int n = 0, lineno = 0, has_keys = 1, rc = 0;

    if (!seen)
        return czk_errorf(e, -ENOMEM, "no memory to read config \"%s\"", path);
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        char *s = line, *close;
        size_t len = strlen(line);

        lineno++;
        if (len == sizeof(line) - 1 && line[len - 1] != '\n') { /* longer than the buffer: its start is enough */
            char rest[256];
            size_t k;
            while (fgets(rest, sizeof(rest), f) && !((k = strlen(rest)) > 0 && rest[k - 1] == '\n'))
                ;
        }
        if (lineno == 1 && !strncmp(s, "\xef\xbb\xbf", 3))
            s += 3;
        s = trim(s);
        if (!*s || *s == ';' || *s == '#')
            continue;
        if (*s != '[' || !(close = strchr(s + 1, ']'))) {
            has_keys = 1;
            continue;
        }
        if (!has_keys) {
            rc = czk_errorf(e, -EINVAL, "%s:%d: section [%s] has no keys", path, seen[n - 1].line, seen[n - 1].name);
            break;
        }
        *close = 0;
        s++;
        for (int i = 0; i < n; i++)
            if (!strcmp(seen[i].name, s)) {
                rc = czk_errorf(e, -EINVAL, "%s:%d: section [%s] appears a second time (first at line %d): "
                                "put all its keys in one section", path, lineno, s, seen[i].line);
                break;
            }
        if (rc)
            break;
        if (n == SECTIONS_MAX || strlen(s) >= sizeof(seen[n].name)) {
            rc = czk_errorf(e, -EINVAL, "%s:%d: %s", path, lineno,
                            n == SECTIONS_MAX ? "too many sections" : "section name too long");
            break;
        }
        snprintf(seen[n].name, sizeof(seen[n].name), "%s", s);
        seen[n].line = lineno;
        n++;
        has_keys = 0;
    }
    if (rc == 0 && !has_keys)
        rc = czk_errorf(e, -EINVAL, "%s:%d: section [%s] has no keys", path, seen[n - 1].line, seen[n - 1].name);
    free(seen);
    return rc;
}

int czk_config_load(czk_config *c, const char *path, czk_error *e)
{
    struct load_ctx lc = {c, e, path, 0, ""};
    FILE *f = fopen(path, "r");
    int rc;

    if (!f)
        return czk_errorf(e, -errno, "could not open config \"%s\": %s", path, strerror(errno));
    if ((rc = check_sections(f, path, e)) < 0) {
        fclose(f);
        return rc;
    }
    rewind(f);
    rc = ini_parse_file(f, ini_cb, &lc);
    fclose(f);
    if (lc.rc)
        return czk_errorf(e, -EINVAL, "%s:%d: %s", path, rc, lc.what);
    if (rc != 0)
        return czk_errorf(e, -EINVAL, "%s:%d: syntax error", path, rc);
    return 0;
}

int czk_config_set(czk_config *c, const char *assignment, czk_error *e)
{
    char buf[CZK_CONFIG_PATH_MAX + 128];
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
    rc = config_apply(c, buf, dot + 1, eq + 1);
    if (rc == -ENOENT)
        return czk_errorf(e, -EINVAL, "unknown setting \"%s.%s\"", buf, dot + 1);
    if (rc)
        return czk_errorf(e, -EINVAL, "bad value \"%s\" for %s.%s", eq + 1, buf, dot + 1);
    return 0;
}

const czk_config_circuit *czk_config_circuit_find(const czk_config *c, const char *name)
{
    for (int i = 0; i < c->n_circuits; i++)
        if (!strcmp(c->circuits[i].name, name))
            return &c->circuits[i];
    return NULL;
}
