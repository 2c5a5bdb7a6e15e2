/*
 * output.c — the finalizer's files (docs/pipeline.md "Sockets, directories"):
 *   output_dir/<job>/<partition>/public.json, timings.json, proof.json
 *   output_dir/<job>/summary.json
 *   output_dir/<job>/<partition>/identity.json (whose files these are)
 *   output_dir/.stale/ (files found under a partition's name that were not
 *   that partition's, moved aside)
 * Each file is written to a temporary name, fsynced, renamed, and its
 * directory fsynced, so a crash leaves either no file or the whole file.
 * proof.json is written last: its presence means the partition is durable,
 * and a re-sent RESULT for it is answered from the files without rewriting
 * them (exactly-once output) -- but only when identity.json and public.json
 * prove the files are that partition's (same job id, partition, circuit,
 * verification key digest and public signals), and only after they and
 * their directories were fsynced again (the finalizer that wrote them may
 * have died before its directory fsync).  Files 0640, directories 0750, in
 * the daemon's own group.  One finalizer writes output_dir at a time: it
 * holds output_dir/.finalizer.lock (main.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base/digest.h"
#include "common/base/fsutil.h"
#include "common/runtime/daemon.h"
#include "common/runtime/fault.h"
#include "common/base/log.h"
#include "finalizer/finalizer.h"

#define PATH_CAP 1200
#define FILE_MODE 0640
#define DIR_MODE 0750

int fin_output_retryable(int err)
{
    return err == -ENOSPC || err == -EDQUOT || err == -EIO || err == -EROFS;
}

/* a directory of ours: mode 0750 whatever the umask */
static int make_dir(const char *dir, czk_error *e)
{
    int r = czk_mkdir_durable(dir, DIR_MODE, e);
    if (r < 0)
        return r;
    if (chmod(dir, DIR_MODE) < 0)
        return czk_errorf(e, -errno, "could not chmod \"%s\": %s", dir, strerror(errno));
    return 0;
}

/*
 * A job's directory, made durable once per process: czk_mkdir_durable
 * fsyncs output_dir even when the directory exists (it may be the leftover
 * of a crash before that fsync), and a job's partitions come one after the
 * other, so the last few jobs whose directory this process made durable are
 * remembered and their other partitions cost no fsync of output_dir.  Loop
 * thread only (every fin_output_* call is made there), so no lock.
 */
#define DURABLE_JOBS 16
static uint64_t durable_jobs[DURABLE_JOBS]; /* job ids (0: none; ids start at 1) */
static unsigned durable_next;

static int make_job_dir(const char *jdir, uint64_t job, czk_error *e)
{
    struct stat st;
    int r;

    for (unsigned i = 0; i < DURABLE_JOBS; i++)
        if (durable_jobs[i] == job && job && stat(jdir, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
    if ((r = make_dir(jdir, e)) < 0)
        return r;
    durable_jobs[durable_next] = job;
    durable_next = (durable_next + 1) % DURABLE_JOBS;
    return 0;
}

static int write_atomic(const char *dir, const char *name, const char *text, size_t len, const char *fault,
                        czk_error *e)
{
    char tmp[PATH_CAP], path[PATH_CAP];
    int fd, r = 0;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    snprintf(tmp, sizeof(tmp), "%s/.%s.tmp", dir, name);
    /* Only the finalizer that holds output_dir's lock (main.c) writes here,
     * so a temporary file already there was left by a predecessor that died
     * before its rename: removed, then created anew, never opened through
     * whatever it is (a symbolic link is not followed, a file another
     * process holds open is not written into) */
    if (unlink(tmp) < 0 && errno != ENOENT)
        return czk_errorf(e, -errno, "could not remove the leftover \"%s\": %s", tmp, strerror(errno));
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FILE_MODE);
    if (fd < 0)
        return czk_errorf(e, -errno, "could not create \"%s\": %s", tmp, strerror(errno));
    if (fchmod(fd, FILE_MODE) < 0)
        r = czk_errorf(e, -errno, "could not set the mode of \"%s\": %s", tmp, strerror(errno));
    if (r == 0 && (r = czk_write_all(fd, text, len)) < 0)
        czk_errorf(e, r, "could not write \"%s\": %s", tmp, strerror(-r));
    if (r == 0 && fsync(fd) < 0)
        r = czk_errorf(e, -errno, "could not fsync \"%s\": %s", tmp, strerror(errno));
    close(fd);
    if (r == 0 && fault && (r = czk_fault(fault)) < 0)
        czk_errorf(e, r, "fault injected at %s", fault);
    if (r == 0 && rename(tmp, path) < 0)
        r = czk_errorf(e, -errno, "could not rename \"%s\" to \"%s\": %s", tmp, path, strerror(errno));
    if (r < 0)
        unlink(tmp);
    return r;
}

static int read_text(const char *path, char **out, size_t *len, czk_error *e)
{
    FILE *f = fopen(path, "rb");
    long n;
    char *buf;

    if (!f)
        return czk_errorf(e, -errno, "could not open \"%s\": %s", path, strerror(errno));
    if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || n > (1 << 26) || fseek(f, 0, SEEK_SET) < 0) {
        fclose(f);
        return czk_errorf(e, -EIO, "could not size \"%s\"", path);
    }
    buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        return czk_errorf(e, -EIO, "could not read \"%s\"", path);
    }
    fclose(f);
    buf[n] = 0;
    *out = buf;
    *len = (size_t)n;
    return 0;
}

/* identity.json's text for id, whose public.json is pub_text */
static char *identity_json(const fin_identity *id)
{
    char pub_sha[65];
    json_t *o;
    char *text;

    czk_sha256_hex(id->public_text, strlen(id->public_text), pub_sha);
    o = json_pack("{s:I, s:i, s:s, s:s, s:s}", "job", (json_int_t)id->job, "partition", (int)id->partition, "circuit",
                  id->circuit, "vk_sha256", id->vk_sha256, "public_sha256", pub_sha);
    text = o ? json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    return text;
}

/* why is filled with what differs; never with file contents */
static int identity_matches(const char *idtext, size_t idlen, const char *pub, const fin_identity *want, char *why,
                            size_t why_len)
{
    char pub_sha[65];
    json_error_t je;
    json_t *o = json_loadb(idtext, idlen, 0, &je);
    const char *circuit, *vk, *ps;
    int ok = 0;

    if (!o || !json_is_object(o)) {
        snprintf(why, why_len, "identity.json is not a JSON object");
        goto out;
    }
    circuit = json_string_value(json_object_get(o, "circuit"));
    vk = json_string_value(json_object_get(o, "vk_sha256"));
    ps = json_string_value(json_object_get(o, "public_sha256"));
    czk_sha256_hex(pub, strlen(pub), pub_sha);
    if (!json_is_integer(json_object_get(o, "job")) ||
        (uint64_t)json_integer_value(json_object_get(o, "job")) != want->job)
        snprintf(why, why_len, "identity.json names another job");
    else if (!json_is_integer(json_object_get(o, "partition")) ||
             json_integer_value(json_object_get(o, "partition")) != (json_int_t)want->partition)
        snprintf(why, why_len, "identity.json names another partition");
    else if (!circuit || strcmp(circuit, want->circuit))
        snprintf(why, why_len, "the files were written for another circuit");
    else if (!vk || strcmp(vk, want->vk_sha256))
        snprintf(why, why_len, "the files were written with another verification key");
    else if (!ps || strcmp(ps, pub_sha))
        snprintf(why, why_len, "public.json does not match its identity.json digest");
    else if (strcmp(pub, want->public_text))
        snprintf(why, why_len, "public.json holds other public signals than this RESULT");
    else
        ok = 1;
out:
    json_decref(o);
    return ok;
}

int fin_output_check(const char *output_dir, const fin_identity *want, char **proof, size_t *proof_len, char **pub,
                     size_t *pub_len, char *why, size_t why_len, czk_error *e)
{
    char pp[PATH_CAP], up[PATH_CAP], ip[PATH_CAP];
    char *idtext = NULL;
    size_t idlen;
    int r;

    *proof = *pub = NULL;
    snprintf(pp, sizeof(pp), "%s/%" PRIu64 "/%u/proof.json", output_dir, want->job, want->partition);
    snprintf(up, sizeof(up), "%s/%" PRIu64 "/%u/public.json", output_dir, want->job, want->partition);
    snprintf(ip, sizeof(ip), "%s/%" PRIu64 "/%u/identity.json", output_dir, want->job, want->partition);
    if (access(pp, F_OK) < 0)
        return FIN_ABSENT;
    if (access(up, F_OK) < 0) {
        snprintf(why, why_len, "proof.json without public.json");
        return FIN_STALE;
    }
    if (access(ip, F_OK) < 0) {
        snprintf(why, why_len, "no identity.json: the files cannot be proven to be this partition's");
        return FIN_STALE;
    }
    if ((r = read_text(ip, &idtext, &idlen, e)) < 0)
        return r;
    if ((r = read_text(up, pub, pub_len, e)) < 0)
        goto fail;
    if (!identity_matches(idtext, idlen, *pub, want, why, why_len)) {
        free(idtext);
        free(*pub);
        *pub = NULL;
        return FIN_STALE;
    }
    if ((r = read_text(pp, proof, proof_len, e)) < 0)
        goto fail;
    free(idtext);
    return FIN_MATCH;
fail:
    free(idtext);
    free(*pub);
    *pub = NULL;
    return r;
}

int fin_output_sync(const char *output_dir, uint64_t job, uint32_t part, czk_error *e)
{
    static const char *const files[] = {"public.json", "timings.json", "identity.json", "proof.json"};
    char jdir[PATH_CAP], pdir[PATH_CAP + 16], path[PATH_CAP + 40];
    int r;

    snprintf(jdir, sizeof(jdir), "%s/%" PRIu64, output_dir, job);
    snprintf(pdir, sizeof(pdir), "%s/%u", jdir, part);
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", pdir, files[i]);
        r = czk_fsync_file(path, e);
        if (r == -ENOENT && !strcmp(files[i], "timings.json"))
            continue; /* not part of the identity: a partition may lack it */
        if (r < 0)
            return r;
    }
    if ((r = czk_fsync_dir(pdir, e)) < 0 || (r = czk_fsync_dir(jdir, e)) < 0 ||
        (r = czk_fsync_dir(output_dir, e)) < 0)
        return r;
    return 0;
}

int fin_output_move_aside(const char *output_dir, uint64_t job, uint32_t part, czk_error *e)
{
    char stale[PATH_CAP], from[PATH_CAP], to[PATH_CAP + 64];
    uint64_t now = czk_real_ns();
    int r;

    snprintf(stale, sizeof(stale), "%s/.stale", output_dir);
    if ((r = make_dir(stale, e)) < 0)
        return r;
    snprintf(from, sizeof(from), "%s/%" PRIu64 "/%u", output_dir, job, part);
    snprintf(to, sizeof(to), "%s/%" PRIu64 ".%u.%" PRIu64, stale, job, part, now);
    if (rename(from, to) < 0)
        return czk_errorf(e, -errno, "could not move \"%s\" aside to \"%s\": %s", from, to, strerror(errno));
    /* a summary over other partitions' files is stale too */
    snprintf(from, sizeof(from), "%s/%" PRIu64 "/summary.json", output_dir, job);
    snprintf(to, sizeof(to), "%s/%" PRIu64 ".summary.%" PRIu64 ".json", stale, job, now);
    if (rename(from, to) < 0 && errno != ENOENT)
        return czk_errorf(e, -errno, "could not move \"%s\" aside to \"%s\": %s", from, to, strerror(errno));
    if ((r = czk_fsync_dir(stale, e)) < 0)
        return r;
    snprintf(from, sizeof(from), "%s/%" PRIu64, output_dir, job);
    return czk_fsync_dir(from, e);
}

static char *timings_json(const fin_timings *t)
{
    json_t *o = json_pack("{s:I, s:i, s:i, s:s, s:I, s:f, s:f, s:f, s:f}", "job", (json_int_t)t->job, "partition",
                          (int)t->partition, "partitions", (int)t->n_partitions, "circuit", t->circuit,
                          "submitted_ns", (json_int_t)t->submit_ns, "queue_s", t->queue_s, "synth_s", t->synth_s,
                          "gpu_s", t->gpu_s, "finalize_s", t->finalize_s);
    char *s = o ? json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    return s;
}

int fin_output_write(const char *output_dir, const fin_timings *t, const fin_identity *id, const char *proof,
                     const char *pub, czk_error *e)
{
    char jdir[1024], pdir[1100];
    char *tj;
    int r;

    snprintf(jdir, sizeof(jdir), "%s/%llu", output_dir, (unsigned long long)t->job);
    snprintf(pdir, sizeof(pdir), "%s/%u", jdir, t->partition);
    if ((r = make_job_dir(jdir, t->job, e)) < 0 || (r = make_dir(pdir, e)) < 0)
        return r;
    if ((r = write_atomic(pdir, "public.json", pub, strlen(pub), NULL, e)) < 0)
        return r;
    if (!(tj = timings_json(t)))
        return czk_errorf(e, -ENOMEM, "out of memory for timings.json");
    r = write_atomic(pdir, "timings.json", tj, strlen(tj), NULL, e);
    free(tj);
    if (r < 0)
        return r;
    if (!(tj = identity_json(id)))
        return czk_errorf(e, -ENOMEM, "out of memory for identity.json");
    r = write_atomic(pdir, "identity.json", tj, strlen(tj), NULL, e);
    free(tj);
    if (r < 0)
        return r;
    if ((r = write_atomic(pdir, "proof.json", proof, strlen(proof), "finalizer.before_rename", e)) < 0)
        return r;
    if ((r = czk_fsync_dir(pdir, e)) < 0)
        return r;
    czk_fault("finalizer.after_write");
    return 0;
}

int fin_output_summary(const char *output_dir, uint64_t job, uint32_t n_partitions, const char *circuit,
                       uint64_t submit_ns, czk_error *e)
{
    static const char *keys[4] = {"queue_s", "synth_s", "gpu_s", "finalize_s"};
    char jdir[1024], path[PATH_CAP];
    double total[4] = {0};
    json_t *parts, *o;
    char *text;
    int r;

    snprintf(jdir, sizeof(jdir), "%s/%llu", output_dir, (unsigned long long)job);
    snprintf(path, sizeof(path), "%s/summary.json", jdir);
    if (access(path, F_OK) == 0)
        return 0;
    for (uint32_t i = 0; i < n_partitions; i++) {
        snprintf(path, sizeof(path), "%s/%u/proof.json", jdir, i);
        if (access(path, F_OK) < 0)
            return 0;
    }
    parts = json_array();
    for (uint32_t i = 0; i < n_partitions; i++) {
        json_error_t je;
        json_t *t;
        snprintf(path, sizeof(path), "%s/%u/timings.json", jdir, i);
        t = json_load_file(path, 0, &je);
        if (!t)
            t = json_pack("{s:i}", "partition", (int)i); /* timings lost: the proof is what matters */
        for (int k = 0; k < 4; k++)
            total[k] += json_number_value(json_object_get(t, keys[k]));
        json_object_del(t, "job");
        json_object_del(t, "partitions");
        json_object_del(t, "circuit");
        json_object_del(t, "submitted_ns");
        json_array_append_new(parts, t);
    }
    uint64_t now = czk_real_ns();
    o = json_pack("{s:I, s:s, s:i, s:I, s:I, s:f, s:{s:f, s:f, s:f, s:f}, s:o}", "job", (json_int_t)job, "circuit",
                  circuit, "partitions", (int)n_partitions, "submitted_ns", (json_int_t)submit_ns, "completed_ns",
                  (json_int_t)now, "wall_s", submit_ns && now > submit_ns ? (double)(now - submit_ns) * 1e-9 : 0.0,
                  "stage_totals_s", "queue", total[0], "synth", total[1], "gpu", total[2], "finalize", total[3],
                  "per_partition", parts);
    if (!o)
        return czk_errorf(e, -ENOMEM, "could not build summary.json");
    text = json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!text)
        return czk_errorf(e, -ENOMEM, "could not build summary.json");
    r = write_atomic(jdir, "summary.json", text, strlen(text), NULL, e);
    free(text);
    if (r == 0)
        r = czk_fsync_dir(jdir, e);
    return r < 0 ? r : 1;
}
