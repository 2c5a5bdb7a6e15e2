/* test_config.c — INI config: defaults, file values, overrides, errors naming the line (random
 * layouts: indentation, comments, long lines; seeded, CZK_TEST_SEED replays). */
#include "common/runtime/config.h"
#include "common/runtime/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define T_STOP_AT_FAILURE
#include "tests/common/test_util.h"

static void write_file(const char *p, const char *s)
{
    FILE *f = fopen(p, "w");
    CHECK(f);
    fputs(s, f);
    fclose(f);
}

static void test_config(void)
{
    char path[] = "/tmp/czk-config-XXXXXX";
    int fd = mkstemp(path);
    czk_config c;
    czk_error e = {0};

    CHECK(fd >= 0);
    close(fd);
    czk_config_defaults(&c);
    CHECK(c.slots_per_pool == 4 && !strcmp(c.backend, "auto") && c.finalizer_verify == 1 && c.n_circuits == 0);
    CHECK(c.runtime_dir[0] && c.state_dir[0] && c.output_dir[0]);

    write_file(path, "[czk]\nruntime_dir = /tmp/x\n[gpud]\nbackend = cpu\nslots_per_pool = 7\n"
                     "[circuit.poseidon]\nzkey = /k/p.zkey\n[circuit.chain]\nzkey = /k/c.zkey\n[finalizer]\nverify = no\n");
    CHECK(czk_config_load(&c, path, &e) == 0);
    CHECK(!strcmp(c.runtime_dir, "/tmp/x") && !strcmp(c.backend, "cpu") && c.slots_per_pool == 7);
    CHECK(c.n_circuits == 2 && !strcmp(czk_config_circuit_find(&c, "chain")->zkey, "/k/c.zkey"));
    CHECK(czk_config_circuit_find(&c, "nope") == NULL && c.finalizer_verify == 0);

    CHECK(czk_config_set(&c, "gpud.slots_per_pool=9", &e) == 0 && c.slots_per_pool == 9);
    CHECK(czk_config_set(&c, "circuit.new.zkey=/z", &e) == 0 && c.n_circuits == 3);
    CHECK(czk_config_set(&c, "gpud.slots_per_pool=0", &e) == -EINVAL && strstr(e.msg, "slots_per_pool"));
    CHECK(c.synth_timeout_s == 600);
    CHECK(czk_config_set(&c, "gpud.synth_timeout_s=0", &e) == 0 && c.synth_timeout_s == 0);
    CHECK(czk_config_set(&c, "gpud.synth_timeout_s=-1", &e) == -EINVAL && strstr(e.msg, "synth_timeout_s"));
    CHECK(czk_config_set(&c, "gpud.bogus=1", &e) == -EINVAL && strstr(e.msg, "unknown setting"));
    /* output_dir follows state_dir until it is set itself, in either order */
    {
        czk_config d;
        czk_config_defaults(&d);
        CHECK(czk_config_set(&d, "czk.state_dir=/s1", &e) == 0 && !strcmp(d.output_dir, "/s1/proofs"));
        CHECK(czk_config_set(&d, "czk.output_dir=/o", &e) == 0 && !strcmp(d.output_dir, "/o"));
        CHECK(czk_config_set(&d, "czk.state_dir=/s2", &e) == 0 && !strcmp(d.output_dir, "/o"));
    }
    /* fixed-base MSM tables: per circuit off (default) or auto; the reserve in MiB */
    CHECK(!strcmp(czk_config_circuit_find(&c, "chain")->msm_tables, "auto") && c.msm_table_reserve_mb == 2048);
    CHECK(czk_config_set(&c, "circuit.chain.msm_tables=off", &e) == 0 &&
          !strcmp(czk_config_circuit_find(&c, "chain")->msm_tables, "off") &&
          !strcmp(czk_config_circuit_find(&c, "poseidon")->msm_tables, "auto"));
    CHECK(czk_config_set(&c, "circuit.chain.msm_tables=yes", &e) == -EINVAL && strstr(e.msg, "msm_tables"));
    CHECK(czk_config_set(&c, "gpud.msm_table_reserve_mb=0", &e) == 0 && c.msm_table_reserve_mb == 0);
    CHECK(czk_config_set(&c, "gpud.msm_table_reserve_mb=-5", &e) == -EINVAL);
    CHECK(czk_config_set(&c, "noequals", &e) == -EINVAL);
    CHECK(czk_config_set(&c, "gpud.backend=opencl", &e) == -EINVAL);

    write_file(path, "[gpud]\nbackend = cpu\n\nthreadz = 3\n");
    CHECK(czk_config_load(&c, path, &e) == -EINVAL);
    CHECK(strstr(e.msg, ":4:") && strstr(e.msg, "threadz"));
    write_file(path, "[gpud]\nmax_jobs = lots\n");
    CHECK(czk_config_load(&c, path, &e) == -EINVAL && strstr(e.msg, ":2:") && strstr(e.msg, "lots"));
    write_file(path, "[gpud\nbackend=cpu\n");
    CHECK(czk_config_load(&c, path, &e) == -EINVAL);
    write_file(path, "[circuit.bad/name]\nzkey=/x\n");
    CHECK(czk_config_load(&c, path, &e) == -EINVAL);
    CHECK(czk_config_load(&c, "/nonexistent/czk.conf", &e) == -ENOENT && strstr(e.msg, "/nonexistent/czk.conf"));

    /* connection limits */
    czk_config_defaults(&c);
    CHECK(c.max_clients > 0 && c.max_clients_per_uid > 0 && c.max_clients_per_uid <= c.max_clients);
    CHECK(c.max_daemon_conns > 0 && c.client_idle_timeout_s > 0 && c.daemon_queue_max_mb > 0);
    CHECK(c.client_queue_soft_kb > 0 && c.client_queue_soft_kb < c.client_queue_max_kb);
    write_file(path, "[czk]\ndaemon_queue_max_mb = 8\n[gpud]\nmax_clients = 77\nmax_clients_per_uid = 7\n"
                     "client_idle_timeout_s = 0\nmax_daemon_conns = 5\nclient_queue_soft_kb = 100\n"
                     "client_queue_max_kb = 1000\n");
    CHECK(czk_config_load(&c, path, &e) == 0);
    CHECK(c.daemon_queue_max_mb == 8 && c.max_clients == 77 && c.max_clients_per_uid == 7);
    CHECK(c.client_idle_timeout_s == 0 && c.max_daemon_conns == 5 && c.client_queue_soft_kb == 100);
    CHECK(c.client_queue_max_kb == 1000);
    CHECK(czk_config_set(&c, "gpud.max_clients=0", &e) == -EINVAL);

    /* a section twice, or a section without keys, is an error naming its line */
    write_file(path, "[circuit.linear]\nzkey = /a.zkey\n[gpud]\nbackend = cpu\n[circuit.linear]\nzkey = /b.zkey\n");
    CHECK(czk_config_load(&c, path, &e) == -EINVAL);
    CHECK(strstr(e.msg, ":5:") && strstr(e.msg, "[circuit.linear]") && strstr(e.msg, "line 1"));
    write_file(path, "[gpud]\nbackend = cpu\n\n; a comment\n[gpud]\nthreads = 2\n");
    CHECK(czk_config_load(&c, path, &e) == -EINVAL && strstr(e.msg, ":5:") && strstr(e.msg, "[gpud]"));
    write_file(path, "[czk]\nlog_level = 5\n[circuit.x]\n# only a comment\n\n[gpud]\nbackend = cpu\n");
    CHECK(czk_config_load(&c, path, &e) == -EINVAL && strstr(e.msg, ":3:") && strstr(e.msg, "[circuit.x]") &&
          strstr(e.msg, "no keys"));
    write_file(path, "[gpud]\nbackend = cpu\n  [circuit.y]  \n");
    CHECK(czk_config_load(&c, path, &e) == -EINVAL && strstr(e.msg, ":3:") && strstr(e.msg, "[circuit.y]"));
    /* comments, blank lines and a BOM around well-formed sections are fine */
    write_file(path, "\xef\xbb\xbf; czk\n[czk]\n\n  log_level = 4\n# end of czk\n[circuit.z]\nzkey = /z.zkey\n");
    czk_config_defaults(&c);
    CHECK(czk_config_load(&c, path, &e) == 0 && c.log_level == 4 && c.n_circuits == 1);
    unlink(path);
}

/* ---- the file as operators write it: random layouts, exact errors --------- */

static char cfg_path[] = "/tmp/czk-config-XXXXXX";
static czk_config cfg;
static czk_error err;

/* the text of a config file, built one line at a time */
static FILE *tb;
static char *tb_buf;
static size_t tb_len;
static int tb_line;

static void tb_start(void)
{
    free(tb_buf);
    tb_buf = NULL;
    tb = open_memstream(&tb_buf, &tb_len);
    CHECK(tb);
    tb_line = 0;
}

/* one line (fmt without its newline); returns its line number */
static int tb_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int tb_add(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(tb, fmt, ap);
    va_end(ap);
    fputc('\n', tb);
    return ++tb_line;
}

static const char *tb_end(void)
{
    fclose(tb);
    return tb_buf;
}

static unsigned rnd(unsigned n) { return (unsigned)(t_rand64() % n); }

/* 0 to 8 blanks (spaces and tabs) when any is 1, else 1 to 8 */
static const char *indent(int any)
{
    static char b[4][16];
    static int k;
    char *s = b[k++ & 3];
    unsigned n = any ? rnd(9) : 1 + rnd(8);
    for (unsigned i = 0; i < n; i++)
        s[i] = rnd(3) ? ' ' : '\t';
    s[n] = 0;
    return s;
}

static void rand_text(char *s, size_t len, const char *alphabet)
{
    size_t a = strlen(alphabet);
    for (size_t i = 0; i < len; i++)
        s[i] = alphabet[rnd((unsigned)a)];
    s[len] = 0;
}

/* an absolute path of len bytes (len >= 2) that starts with "/k" and ends in a letter */
static void rand_path(char *s, size_t len)
{
    rand_text(s + 1, len - 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./");
    s[0] = '/';
    s[1] = 'k';
    s[len - 1] = 'k';
}

static void rand_name(char *s, size_t len)
{
    rand_text(s, len, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.");
}

/* 0 to 2 lines a reader skips: blank, or comments (';' or '#', indented or
 * not, some longer than libinih's 200-byte buffer) */
static void tb_noise(void)
{
    for (unsigned n = rnd(3); n; n--) {
        char text[1200];
        if (!rnd(3)) {
            tb_add("%s", indent(1));
            continue;
        }
        rand_text(text, rnd(4) ? rnd(60) : 199 + rnd(1000), "abc xyz=[]:;#\"'/.,!0123456789\t");
        tb_add("%s%c%s", indent(1), rnd(2) ? '#' : ';', text);
    }
}

static int load(const char *text)
{
    write_file(cfg_path, text);
    czk_config_defaults(&cfg);
    memset(&err, 0xa5, sizeof(err));
    err.msg[sizeof(err.msg) - 1] = 0;
    return czk_config_load(&cfg, cfg_path, &err);
}

/* the load fails with -EINVAL and "PATH:LINE: " followed by a message that
 * holds every needle (a NULL-terminated list) */
#define EXPECT_ERROR(text, line, ...) expect_error(__LINE__, text, line, __VA_ARGS__, NULL)
static void expect_error(int at, const char *text, int line, ...)
{
    char head[64];
    const char *needle;
    va_list ap;
    int rc = load(text);

    snprintf(head, sizeof(head), "%s:%d: ", cfg_path, line);
    CHECK(rc == -EINVAL, "line %d: rc %d (%s) for\n%s", at, rc, rc ? err.msg : "", text);
    CHECK(!strncmp(err.msg, head, strlen(head)), "line %d: \"%s\" does not start with \"%s\" for\n%s", at, err.msg,
          head, text);
    va_start(ap, line);
    while ((needle = va_arg(ap, const char *)))
        CHECK(strstr(err.msg, needle), "line %d: \"%s\" does not say \"%s\" for\n%s", at, err.msg, needle, text);
    va_end(ap);
}

/* keys indented under their sections, with blank lines and comments between
 * them: each line is its own key, never a continuation of the one before */
static void test_indented_keys(void)
{
    static const char *const backends[] = {"auto", "cpu", "cuda"};
    static const char *const pages[] = {"auto", "on", "off"};

    for (int iter = 0; iter < 100; iter++) {
        char rt[80], st[80], out[80], zk[8][120], names[8][40], line[16];
        int slots = 1 + (int)rnd(4096), threads = (int)rnd(4097), port = (int)rnd(65536), log_level = (int)rnd(8);
        int n = 1 + (int)rnd(8), be = (int)rnd(3), hp = (int)rnd(3), sthreads = (int)rnd(4097);

        rand_path(rt, 2 + rnd(70));
        rand_path(st, 2 + rnd(70));
        rand_path(out, 2 + rnd(70));
        tb_start();
        tb_noise();
        /* the first key of a section straight after its header, or not; the
         * rest always indented (iter 0: every line indented) */
        tb_add("%s[czk]", indent(iter));
        tb_noise();
        tb_add("%sruntime_dir = %s", indent(iter), rt);
        tb_noise();
        tb_add("%sstate_dir=%s", indent(0), st);
        tb_noise();
        tb_add("%soutput_dir =\t%s", indent(0), out);
        tb_add("%slog_level = %d", indent(0), log_level);
        tb_noise();
        tb_add("%s[gpud]", indent(iter));
        tb_add("%sslots_per_pool = %d", indent(iter), slots);
        tb_noise();
        tb_add("%sthreads = %d", indent(0), threads);
        tb_noise();
        tb_add("%sbackend = %s", indent(0), backends[be]);
        tb_add("%shugepages = %s", indent(0), pages[hp]);
        tb_add("%smetrics_port = %d", indent(0), port);
        tb_noise();
        tb_add("%s[synth]", indent(1));
        tb_add("%sthreads = %d", indent(0), sthreads);
        for (int i = 0; i < n; i++) {
            snprintf(line, sizeof(line), "c%d-", i);
            rand_name(names[i], 1 + rnd(30));
            memmove(names[i] + strlen(line), names[i], strlen(names[i]) + 1);
            memcpy(names[i], line, strlen(line));
            rand_path(zk[i], 2 + rnd(110));
            tb_noise();
            tb_add("%s[circuit.%s]", indent(1), names[i]);
            tb_noise();
            tb_add("%szkey = %s", indent(1), zk[i]);
            tb_noise();
            if (i & 1)
                tb_add("%smsm_tables = off", indent(0));
        }
        tb_noise();
        CHECK(load(tb_end()) == 0, "%s\nfor\n%s", err.msg, tb_buf);
        CHECK(!strcmp(cfg.runtime_dir, rt) && !strcmp(cfg.state_dir, st) && !strcmp(cfg.output_dir, out),
              "runtime_dir \"%s\" state_dir \"%s\" output_dir \"%s\" from\n%s", cfg.runtime_dir, cfg.state_dir,
              cfg.output_dir, tb_buf);
        CHECK(cfg.log_level == log_level && cfg.slots_per_pool == slots && cfg.gpud_threads == threads &&
              cfg.metrics_port == port && cfg.synth_threads == sthreads, "integers differ from\n%s", tb_buf);
        CHECK(!strcmp(cfg.backend, backends[be]) && !strcmp(cfg.hugepages, pages[hp]), "choices differ: %s %s",
              cfg.backend, cfg.hugepages);
        CHECK(cfg.n_circuits == n, "%d circuits, not %d", cfg.n_circuits, n);
        for (int i = 0; i < n; i++) {
            const czk_config_circuit *cc = czk_config_circuit_find(&cfg, names[i]);
            CHECK(cc && !strcmp(cc->zkey, zk[i]) && !strcmp(cc->msm_tables, i & 1 ? "off" : "auto"),
                  "circuit %s from\n%s", names[i], tb_buf);
        }
    }
}

/* lines longer than libinih's buffer: a comment is fine, any other line is an
 * error naming it; no line is split, so every later line keeps its number */
static void test_long_lines(void)
{
    for (int iter = 0; iter < 50; iter++) {
        char zk[400];
        const char *ind = indent(1);
        int at, keep = 198 - 7; /* "zkey = " */

        /* 198 bytes besides the indentation: the longest line there is */
        rand_path(zk, (size_t)keep);
        tb_start();
        tb_noise();
        tb_add("[circuit.long]");
        tb_noise();
        tb_add("%szkey = %s%s", ind, zk, indent(1));
        tb_noise();
        CHECK(load(tb_end()) == 0, "%s", err.msg);
        CHECK(cfg.n_circuits == 1 && !strcmp(cfg.circuits[0].zkey, zk), "zkey \"%s\", not \"%s\"",
              cfg.n_circuits ? cfg.circuits[0].zkey : "", zk);

        /* one byte more, or many: refused at its line */
        rand_path(zk, (size_t)keep + 1 + (rnd(2) ? 0 : rnd(sizeof(zk) - (size_t)keep - 2)));
        tb_start();
        tb_noise();
        tb_add("[gpud]");
        tb_add("threads = 1");
        tb_noise();
        tb_add("[circuit.long]");
        tb_noise();
        at = tb_add("%szkey = %s", ind, zk);
        tb_noise();
        {
            char says[64];
            snprintf(says, sizeof(says), "line %d is longer than 198 bytes", at);
            EXPECT_ERROR(tb_end(), at, says);
        }

        /* long comments before an error do not move it */
        tb_start();
        tb_add("[gpud]");
        for (int i = 0; i < 4; i++) {
            char text[2000];
            rand_text(text, 190 + rnd(1800), "abcdef =[];:#");
            tb_add("%s%c %s", indent(1), rnd(2) ? '#' : ';', text);
        }
        tb_add("%sthreads = 2", indent(1));
        at = tb_add("%sthreadz = 3", indent(1));
        tb_noise();
        EXPECT_ERROR(tb_end(), at, "unknown key \"threadz\" in section [gpud]");
    }
    /* a section whose one key line is too long has that error, not "no keys" */
    {
        char zk[300];
        rand_path(zk, 250);
        tb_start();
        tb_add("[czk]");
        tb_add("log_level = 3");
        tb_add("[circuit.k]");
        tb_add("zkey = %s", zk);
        EXPECT_ERROR(tb_end(), 4, "line 4 is longer than 198 bytes");
    }
}

/* the first line with an error is reported, with that line's own message */
static void test_first_error(void)
{
    EXPECT_ERROR("[gpud]\nbackend cpu\nthreads = 2\n\nthreadz = 3\n", 2, "\"backend cpu\"");
    EXPECT_ERROR("[gpud]\nbackend = cpu\nthreadz = 2\n\nbackend cpu\n", 3, "threadz");
    EXPECT_ERROR("[gpud]\nthreads = 2\n[synth]\n[finalizer]\nverify = maybe\n", 3, "[synth] has no keys");
    EXPECT_ERROR("[gpud]\nthreads = 2\n[synth]\n[gpud ; x]\nthreads = 1\n", 4, "[gpud ; x]", "no ']'");
    EXPECT_ERROR("log_level = 3\n[czk]\nlog_level = 4\n", 1, "\"log_level\" before the first [section]");
    EXPECT_ERROR("[gpud]\nthreads ; = 2\n", 2, "\"threads ; = 2\"");
    CHECK(load("[gpud] ; the daemon\nthreads = 5 ; five\n") == 0 && cfg.gpud_threads == 5, "%s", err.msg);
    /* a NUL byte ends a line for inih: refused instead */
    {
        static const char text[] = "[gpud]\nthreads = 1\nmax_jobs = 5\0 and more\n";
        FILE *f = fopen(cfg_path, "w");
        CHECK(f && fwrite(text, 1, sizeof(text) - 1, f) == sizeof(text) - 1);
        fclose(f);
        czk_config_defaults(&cfg);
        CHECK(czk_config_load(&cfg, cfg_path, &err) == -EINVAL && strstr(err.msg, ":3: ") && strstr(err.msg, "NUL"),
              "%s", err.msg);
    }
    /* a directory is not an empty file */
    {
        char dir[] = "/tmp/czk-config-dir-XXXXXX";
        CHECK(mkdtemp(dir));
        czk_config_defaults(&cfg);
        CHECK(czk_config_load(&cfg, dir, &err) == -EISDIR && strstr(err.msg, dir) && strstr(err.msg, "is a directory"),
              "%s", err.msg);
        rmdir(dir);
    }
}

/* a key twice in one section is an error naming both lines; the same key in
 * two sections is two keys */
static void test_repeated_key(void)
{
    static const struct {
        const char *section, *key, *a, *b, *other;
    } keys[] = {
        {"czk", "runtime_dir", "/run/a", "/run/b", "client_group = g"},
        {"czk", "log_level", "3", "7", "state_dir = /s"},
        {"gpud", "threads", "2", "3", "max_jobs = 9"},
        {"gpud", "metrics_addr", "127.0.0.1", "", "metrics_port = 0"},
        {"synth", "threads", "1", "1", "reconnect_max_ms = 100"},
        {"finalizer", "verify", "yes", "no", "metrics_port = 0"},
        {"circuit.m", "zkey", "/k/m.zkey", "/k/n.zkey", "msm_tables = off"},
        {"circuit.m", "msm_tables", "auto", "off", "zkey = /k/m.zkey"},
    };

    for (int iter = 0; iter < 100; iter++) {
        int k = (int)rnd(sizeof(keys) / sizeof(keys[0])), first, second;
        char says[160];

        tb_start();
        tb_noise();
        if (strncmp(keys[k].section, "circuit.", 8)) {
            tb_add("[circuit.x]");
            tb_add("%szkey = /k/x.zkey", indent(1));
            tb_noise();
        }
        tb_add("[%s]", keys[k].section);
        tb_noise();
        first = tb_add("%s%s = %s", indent(1), keys[k].key, keys[k].a);
        tb_noise();
        if (rnd(2))
            tb_add("%s%s", indent(1), keys[k].other);
        tb_noise();
        second = tb_add("%s%s=%s", indent(1), keys[k].key, keys[k].b);
        tb_noise();
        snprintf(says, sizeof(says), "key \"%s\" appears a second time in [%s] (first at line %d)", keys[k].key,
                 keys[k].section, first);
        EXPECT_ERROR(tb_end(), second, says);
    }
    CHECK(load("[gpud]\nthreads = 2\n[synth]\nthreads = 3\n[circuit.a]\nzkey = /a\n[circuit.b]\nzkey = /b\n") == 0 &&
              cfg.gpud_threads == 2 && cfg.synth_threads == 3 && cfg.n_circuits == 2,
          "%s", err.msg);
}

/* values are checked where they are read, naming file, line and key */
static void test_values(void)
{
    static const char *const path_keys[][2] = {
        {"czk", "runtime_dir"}, {"czk", "state_dir"}, {"czk", "output_dir"}, {"circuit.v", "zkey"}};
    static const char *const addr_sections[] = {"gpud", "synth", "finalizer"};
    static const char *const not_ipv4[] = {"localhost", "::1", "fe80::1", "127.0.0.1:9464", "127.1", "256.0.0.1",
                                           "1.2.3.4.5", "metrics.example.org", "0x7f.0.0.1", "10.0.0.1x", "[::1]"};

    for (int iter = 0; iter < 200; iter++) {
        int p = (int)rnd(4), kind = (int)rnd(6), at;
        const char *sec = path_keys[p][0], *key = path_keys[p][1], *says;
        char good[100], bad[160], forkey[64], set[256];

        rand_path(good, 2 + rnd(60));
        switch (kind) {
        case 0: snprintf(bad, sizeof(bad), "%s", good + 1); says = "not an absolute path"; break;
        case 1: snprintf(bad, sizeof(bad), "~%s", good); says = "not an absolute path"; break;
        case 2: bad[0] = 0; says = "expected an absolute path"; break;
        case 3: snprintf(bad, sizeof(bad), "\"%s\"", good); says = "write it without quotes"; break;
        case 4: snprintf(bad, sizeof(bad), "'%s'", good); says = "write it without quotes"; break;
        default:
            snprintf(bad, sizeof(bad), "%s%s# main key", good, indent(0));
            says = "'#' starts a comment only at the start of a line";
            break;
        }
        snprintf(forkey, sizeof(forkey), "\" for %s.%s: ", sec, key);
        tb_start();
        tb_noise();
        tb_add("%s[czk]", indent(1));
        tb_add("%slog_level = 5", indent(1));
        tb_noise();
        if (p == 3)
            tb_add("[circuit.v]");
        at = tb_add("%s%s = %s", indent(1), key, bad);
        tb_noise();
        EXPECT_ERROR(tb_end(), at, says, forkey);
        /* the same from the command line */
        snprintf(set, sizeof(set), "%s.%s=%s", sec, key, bad);
        czk_config_defaults(&cfg);
        CHECK(czk_config_set(&cfg, set, &err) == -EINVAL && strstr(err.msg, says) && strstr(err.msg, forkey),
              "--set %s: %s", set, err.msg);
        CHECK(cfg.n_circuits == 0, "--set %s added a circuit", set);
        /* a path, and an inline ';' comment after it */
        tb_start();
        tb_add(p == 3 ? "[czk]" : "[circuit.v]");
        tb_add(p == 3 ? "log_level = 5" : "zkey = /k/v.zkey");
        tb_add("[%s]", sec);
        tb_add("%s = %s%s;%s", key, good, indent(0), rnd(2) ? " a comment" : "");
        CHECK(load(tb_end()) == 0, "%s", err.msg);
        CHECK(!strcmp(p == 0 ? cfg.runtime_dir : p == 1 ? cfg.state_dir : p == 2 ? cfg.output_dir
                                                                                   : cfg.circuits[0].zkey, good),
              "%s.%s is not \"%s\"", sec, key, good);
    }
    /* metrics_addr: an IPv4 address as czk_metrics_serve takes it, or empty */
    for (int iter = 0; iter < 50; iter++) {
        const char *sec = addr_sections[rnd(3)];
        char addr[32], forkey[64];
        const char *got;
        int at;

        snprintf(addr, sizeof(addr), "%u.%u.%u.%u", rnd(256), rnd(256), rnd(256), rnd(256));
        if (!rnd(8))
            addr[0] = 0;
        tb_start();
        tb_noise();
        tb_add("%s[%s]", indent(1), sec);
        tb_add("%smetrics_addr = %s", indent(1), addr);
        tb_noise();
        CHECK(load(tb_end()) == 0, "%s", err.msg);
        got = !strcmp(sec, "gpud") ? cfg.metrics_addr : !strcmp(sec, "synth") ? cfg.synth_metrics_addr
                                                                                 : cfg.fin_metrics_addr;
        CHECK(!strcmp(got, addr), "%s.metrics_addr \"%s\", not \"%s\"", sec, got, addr);

        if (rnd(2))
            snprintf(addr, sizeof(addr), "%s", not_ipv4[rnd(sizeof(not_ipv4) / sizeof(not_ipv4[0]))]);
        else /* one octet out of range */
            snprintf(addr, sizeof(addr), rnd(2) ? "%u.0.%u.1" : "10.%u.0.%u", 256 + rnd(744), rnd(256));
        snprintf(forkey, sizeof(forkey), "\" for %s.metrics_addr: ", sec);
        tb_start();
        tb_noise();
        tb_add("%s[%s]", indent(1), sec);
        tb_noise();
        at = tb_add("%smetrics_addr = %s", indent(1), addr);
        EXPECT_ERROR(tb_end(), at, "not an IPv4 address", forkey, addr);
    }
    /* what is refused here is what the metrics code refuses at run time */
    for (size_t i = 0; i < sizeof(not_ipv4) / sizeof(not_ipv4[0]); i++) {
        czk_metrics *m;
        char set[64];
        snprintf(set, sizeof(set), "gpud.metrics_addr=%s", not_ipv4[i]);
        CHECK(czk_config_set(&cfg, set, &err) == -EINVAL && strstr(err.msg, "not an IPv4 address"), "%s", set);
        CHECK(czk_metrics_new(&m) == 0);
        CHECK(czk_metrics_serve(m, not_ipv4[i], 1) == -EINVAL, "czk_metrics_serve takes \"%s\"", not_ipv4[i]);
        czk_metrics_free(m);
    }
}

static void name_with(char *s, size_t len, char c)
{
    rand_name(s, len);
    s[rnd((unsigned)len)] = c;
}

/* circuits: the limit and the name each have their own message */
static void test_circuits(void)
{
    for (int iter = 0; iter < 10; iter++) {
        char name[64], says[128];
        int at;

        tb_start();
        for (int i = 0; i < CZK_CONFIG_MAX_CIRCUITS; i++) {
            rand_name(name, 1 + rnd(20));
            tb_noise();
            tb_add("%s[circuit.%d%s]", indent(1), i, name);
            tb_add("%szkey = /k/%d.zkey", indent(1), i);
        }
        tb_noise();
        rand_name(name, 1 + rnd(40));
        tb_add("[circuit.x%s]", name);
        tb_noise();
        at = tb_add("%szkey = /k/x.zkey", indent(1));
        snprintf(says, sizeof(says), "[circuit.x%s]: too many circuits: at most 32", name);
        EXPECT_ERROR(tb_end(), at, says);
    }
    /* a bad name is refused at its section line, from the command line too */
    for (int iter = 0; iter < 60; iter++) {
        static const char bad_chars[] = "/ :*@!$%^&()+=,<>?~`'\"\\{}|#;";
        char name[80], says[256], set[160];
        int at;

        if (iter == 0)
            name[0] = 0;
        else if (iter == 1)
            rand_name(name, 64); /* one longer than a name may be */
        else
            name_with(name, 1 + rnd(30), bad_chars[rnd(sizeof(bad_chars) - 1)]);
        tb_start();
        tb_add("[czk]");
        tb_add("log_level = 2");
        tb_noise();
        at = tb_add("%s[circuit.%s]", indent(1), name);
        tb_noise();
        tb_add("zkey = /k/bad.zkey");
        snprintf(says, sizeof(says), "[circuit.%s]: bad circuit name \"%s\": use 1 to 63 letters, digits, "
                 "'-', '_' or '.'", name, name);
        EXPECT_ERROR(tb_end(), at, says);
        snprintf(set, sizeof(set), "circuit.%s.zkey=/k/bad.zkey", name);
        czk_config_defaults(&cfg);
        if (!strchr(name, '=')) /* else it splits elsewhere */
            CHECK(czk_config_set(&cfg, set, &err) == -EINVAL && strstr(err.msg, "bad circuit name"), "--set %s: %s",
                  set, err.msg);
    }
    /* names longer than the 49 bytes of a section name libinih keeps */
    for (int iter = 0; iter < 30; iter++) {
        char name[64];
        rand_name(name, 42 + rnd(22));
        tb_start();
        tb_add("[circuit.%s]", name);
        tb_add("zkey = /k/long.zkey");
        CHECK(load(tb_end()) == 0, "%s", err.msg);
        CHECK(cfg.n_circuits == 1 && czk_config_circuit_find(&cfg, name), "circuit \"%s\" is \"%s\"", name,
              cfg.n_circuits ? cfg.circuits[0].name : "");
    }
}

static void test_metrics(void)
{
    czk_metrics *m;
    czk_metric *jobs, *lat, *lat2;
    char buf[16384], resp[16384];
    struct sockaddr_in sa = {0};
    int s, n, off = 0;

    CHECK(czk_metrics_new(&m) == 0);
    jobs = czk_metrics_add(m, CZK_METRIC_COUNTER, "czk_proofs_total", NULL, "proofs written");
    lat = czk_metrics_add(m, CZK_METRIC_HISTOGRAM, "czk_stage_seconds", "stage=\"ntt\"", "stage latency");
    lat2 = czk_metrics_add(m, CZK_METRIC_HISTOGRAM, "czk_stage_seconds", "stage=\"msm\"", "stage latency");
    czk_metric_inc(jobs, 3);
    czk_metric_observe(lat, 0.003);
    czk_metric_observe(lat, 7.0);
    czk_metric_observe(lat2, 1000.0);
    CHECK(czk_metrics_render(m, buf, sizeof(buf)) > 0);
    CHECK(strstr(buf, "czk_proofs_total 3\n"));
    CHECK(strstr(buf, "czk_stage_seconds_bucket{stage=\"ntt\",le=\"0.005\"} 1\n"));
    CHECK(strstr(buf, "czk_stage_seconds_bucket{stage=\"ntt\",le=\"10\"} 2\n"));
    CHECK(strstr(buf, "czk_stage_seconds_bucket{stage=\"msm\",le=\"300\"} 0\n"));
    CHECK(strstr(buf, "czk_stage_seconds_bucket{stage=\"msm\",le=\"+Inf\"} 1\n"));
    CHECK(strstr(buf, "czk_stage_seconds_count{stage=\"ntt\"} 2\n"));
    /* one HELP line per metric name */
    {
        const char *h = strstr(buf, "# HELP czk_stage_seconds");
        CHECK(h && !strstr(h + 1, "# HELP czk_stage_seconds"));
    }
    CHECK(czk_metrics_render(m, buf, 64) == -ENOSPC);

    CHECK(czk_metrics_serve(m, "127.0.0.1", -1) == 0);
    CHECK(czk_metrics_port(m) > 0);
    s = socket(AF_INET, SOCK_STREAM, 0);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)czk_metrics_port(m));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0);
    const char *req = "GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n";
    CHECK(write(s, req, strlen(req)) == (ssize_t)strlen(req));
    while ((n = (int)read(s, resp + off, sizeof(resp) - 1 - (size_t)off)) > 0)
        off += n;
    resp[off] = 0;
    close(s);
    CHECK(strstr(resp, "200 OK") && strstr(resp, "czk_proofs_total 3"));
    czk_metrics_free(m);
    CHECK(czk_metrics_new(&m) == 0);
    CHECK(czk_metrics_serve(m, "not-an-ip", 1) == -EINVAL);
    czk_metrics_free(m);
}

/* $CZK_RUNTIME_DIR / $CZK_STATE_DIR: used when absolute, refused (and
 * ignored by the defaults) when relative; a relative XDG_RUNTIME_DIR or HOME
 * is ignored */
static void test_env(void)
{
    czk_config c;
    czk_error e = {0};
    char rel[32];

    snprintf(rel, sizeof(rel), "run-%u", (unsigned)t_rand64());
    setenv("CZK_RUNTIME_DIR", "/srv/czk-rt", 1);
    setenv("CZK_STATE_DIR", "/srv/czk-st", 1);
    CHECK(czk_config_env_check(&e) == 0);
    czk_config_defaults(&c);
    CHECK(!strcmp(c.runtime_dir, "/srv/czk-rt") && !strcmp(c.state_dir, "/srv/czk-st"));
    CHECK(!strcmp(c.output_dir, "/srv/czk-st/proofs"));

    setenv("CZK_RUNTIME_DIR", rel, 1);
    CHECK(czk_config_env_check(&e) == -EINVAL);
    CHECK(strstr(e.msg, "$CZK_RUNTIME_DIR") && strstr(e.msg, rel) && strstr(e.msg, "absolute"));
    czk_config_defaults(&c);
    CHECK(c.runtime_dir[0] == '/' && !strstr(c.runtime_dir, rel));

    unsetenv("CZK_RUNTIME_DIR");
    setenv("CZK_STATE_DIR", "", 1);
    CHECK(czk_config_env_check(&e) == -EINVAL && strstr(e.msg, "$CZK_STATE_DIR"));
    czk_config_defaults(&c);
    CHECK(c.state_dir[0] == '/');
    unsetenv("CZK_STATE_DIR");

    if (geteuid() != 0) {
        setenv("XDG_RUNTIME_DIR", rel, 1);
        czk_config_defaults(&c);
        CHECK(c.runtime_dir[0] == '/' && !strstr(c.runtime_dir, rel));
    }
    CHECK(czk_config_env_check(&e) == 0);
}

int main(void)
{
    int fd = mkstemp(cfg_path);

    CHECK(fd >= 0);
    close(fd);
    t_seed("test_config");
    test_config();
    test_indented_keys();
    test_long_lines();
    test_first_error();
    test_repeated_key();
    test_values();
    test_circuits();
    test_env();
    unlink(cfg_path);
    free(tb_buf);
    test_metrics();
    printf("config and metrics ok\n");
    return 0;
}
