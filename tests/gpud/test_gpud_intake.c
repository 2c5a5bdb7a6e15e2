/*
 * test_gpud_intake.c — the intake (intake.c) checks a SUBMIT's witnesses
 * against what the loop copied into the request when it made it
 * (jobs.c gpud_submit_req_new: the circuit's name, number of variables and
 * curve), never against g->circuits, which a key reload rewrites on the loop
 * thread while the intake thread spools (keys.c gpud_keys_replace).  The
 * circuit's header is cleared here while the request is spooled, as the old
 * swap left it for a moment (czk_zkey_close zeroes the header it closes):
 * the request must still be spooled and checked with the sizes it was made
 * with, a witness of the wrong size still refused naming them, a repeated
 * request id's witnesses still hashed; and a stopping intake leaves a
 * request at once, with nothing spooled.  Deterministic: the intake's work
 * runs on this thread (gpud_intake_run), without sockets (harness.h).
 */
#include <fcntl.h>

#include "common/base/digest.h"
#include "tests/gpud/harness.h"

/* a BLS12-381 witness of n values (w[0] = 1, the rest random) at path */
static void write_witness(const char *path, uint32_t n)
{
    czk_fr *w = calloc(n, sizeof(*w));
    czk_error e = {0};

    for (uint32_t i = 0; i < n; i++)
        w[i].l[0] = i ? t_rand64() : 1;
    if (czk_wtns_write(path, w, n, &e) < 0)
        DIE("could not write %s: %s", path, e.msg);
    free(w);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *b = NULL;
    long n;

    *len = 0;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 && (b = malloc((size_t)n + 1)))
        *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

/* a request for nparts copies of the witness at path, made as gpud_submit makes one */
static gpud_submit_req *request(gpud *g, const char *path, uint32_t nparts, int check_only)
{
    gpud_submit_req *r = gpud_submit_req_new(g, 0, nparts);
    czk_error e = {0};

    if (!r)
        DIE("out of memory");
    if (gpud_job_id_next(g, &r->job, &e) < 0)
        DIE("no job id: %s", e.msg);
    snprintf(r->req, sizeof(r->req), "intake-%llu", (unsigned long long)r->job);
    r->check_only = check_only;
    for (uint32_t i = 0; i < nparts; i++)
        if ((r->fds[i] = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            DIE("open %s", path);
    return r;
}

static void test_intake_own_copy(void)
{
    char *dir = t_tmpdir();
    gpud *g = t_gpud_new(dir, 1, 0, 0);
    gpud_circuit *c = &g->circuits[0];
    char good[512], wrong[512], sp[CZK_CONFIG_PATH_MAX + 64];
    uint8_t digest[CZK_SHA256_LEN];
    uint32_t n_vars = c->zkey.n_vars;
    uint8_t *want, *got;
    size_t nwant, ngot;
    gpud_submit_req *r;

    g->cfg.intake_threads = 2;
    snprintf(good, sizeof(good), "%s/good.wtns", dir);
    snprintf(wrong, sizeof(wrong), "%s/wrong.wtns", dir);
    write_witness(good, n_vars);
    write_witness(wrong, n_vars + 1);
    want = slurp(good, &nwant);
    czk_sha256_buf(want, nwant, digest);

    /* made while the circuit's header is there; spooled while it is not */
    r = request(g, good, 3, 0);
    memset(&c->zkey, 0, sizeof(c->zkey));
    gpud_intake_run(g, r);
    CHECK(r->rc == 0, "a valid witness was refused while the circuit's header was being replaced: %s", r->why);
    for (uint32_t i = 0; i < 3; i++) {
        CHECK(r->fds[i] == -1, "partition %u: the intake did not close the client's fd", i);
        CHECK(!memcmp(r->wsha + (size_t)i * CZK_SHA256_LEN, digest, CZK_SHA256_LEN), "partition %u: wrong digest", i);
        gpud_spool_path(g, r->job, i, sp, sizeof(sp));
        got = slurp(sp, &ngot);
        CHECK(got && ngot == nwant && !memcmp(got, want, nwant), "partition %u: the spooled copy differs", i);
        free(got);
    }
    gpud_spool_remove(g, r->job);
    gpud_submit_req_free(r);

    /* the wrong size is still refused, naming the sizes the request was made with */
    c->zkey.n_vars = n_vars;
    r = request(g, wrong, 2, 0);
    memset(&c->zkey, 0, sizeof(c->zkey));
    snprintf(c->name, sizeof(c->name), "renamed");
    gpud_intake_run(g, r);
    char expect[160];
    snprintf(expect, sizeof(expect), "witness has %u values but circuit \"tiny\" has %u variables", n_vars + 1, n_vars);
    CHECK(r->rc == -EINVAL && strstr(r->why, expect), "a witness of the wrong size: rc %d, \"%s\" (expected \"%s\")",
          r->rc, r->why, expect);
    gpud_spool_remove(g, r->job);
    gpud_submit_req_free(r);
    snprintf(c->name, sizeof(c->name), "tiny");

    /* a repeated request id's witnesses: hashed, nothing written */
    c->zkey.n_vars = n_vars;
    r = request(g, good, 2, 1);
    memset(&c->zkey, 0, sizeof(c->zkey));
    gpud_intake_run(g, r);
    CHECK(r->rc == 0 && !memcmp(r->wsha + CZK_SHA256_LEN, digest, CZK_SHA256_LEN),
          "a repeat's witnesses were not hashed while the header was being replaced: rc %d %s", r->rc, r->why);
    snprintf(sp, sizeof(sp), "%s/%llu", g->spool_dir, (unsigned long long)r->job);
    CHECK(access(sp, F_OK) < 0, "a repeat wrote a spool directory");
    gpud_submit_req_free(r);

    /* a stopping intake leaves the request at once: nothing spooled */
    c->zkey.n_vars = n_vars;
    r = request(g, good, 4, 0);
    g->intake_stop = 1;
    gpud_intake_run(g, r);
    g->intake_stop = 0;
    CHECK(r->rc == -ECANCELED, "a stopping intake spooled the request (rc %d %s)", r->rc, r->why);
    for (uint32_t i = 0; i < 4; i++) {
        gpud_spool_path(g, r->job, i, sp, sizeof(sp));
        CHECK(access(sp, F_OK) < 0, "partition %u: spooled by a stopping intake", i);
        CHECK(r->fds[i] == -1, "partition %u: fd not closed", i);
    }
    gpud_spool_remove(g, r->job);
    gpud_submit_req_free(r);

    c->zkey.n_vars = n_vars;
    free(want);
    t_gpud_free(g);
    t_rmtree(dir);
    free(dir);
}

int main(void)
{
    czk_log_init("test_gpud_intake", 3);
    t_seed("test_gpud_intake");
    test_intake_own_copy();
    if (t_failures) {
        fprintf(stderr, "test_gpud_intake: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_gpud_intake: ok\n");
    return 0;
}
