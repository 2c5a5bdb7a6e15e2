/* test_config.c — INI config: defaults, file values, overrides, errors naming the line. */
#include "common/runtime/config.h"
#include "common/runtime/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
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
    CHECK(czk_metrics_serve(m, "not-an-ip", 1) == -EINVAL);
    czk_metrics_free(m);
}

int main(void)
{
    test_config();
    test_metrics();
    printf("config and metrics ok\n");
    return 0;
}
