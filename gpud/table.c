/*
 * table.c — czk-gpud's job table (hash by id, list in acceptance order), the
 * journal record codec and the witness spool's paths.  Journal records, each
 * one msgpack map (CZK_JOURNAL_SYNC = fdatasync before the promise it backs
 * is made; part.c decides when each is written):
 *   ACCEPT   {job, req, circ, lane, nparts, uid, tsub, wsha}  sync, before ACCEPTED
 *   DONE     {job, part, status}                        sync, after the finalizer's DONE
 *   COMPLETE {job}                                      sync, when every partition is final
 *   CANCEL   {job}                                      sync, before the job's resources go
 *   PROBE    {probe}                                    sync, while appends fail: do they work again?
 * wsha (bin, nparts * 32 bytes): the SHA-256 of each spooled witness, which
 * binds the request id to the witnesses; ACCEPT records written before it
 * existed have none and still replay (the job then dedupes by circuit and
 * partition count only).
 *
 * Append failures: the record is not in the journal (journal.h); the first
 * failure starts an episode (journal_down, one log line), every failure counts
 * in czk_journal_append_failures_total, and a successful append (a probe, or
 * any record) ends it with one more line, but only once state_dir has
 * GPUD_JOURNAL_HEADROOM bytes free again: a small record may still fit in
 * the last page of a full disk, and an episode that ended on it would start
 * again with the next ACCEPT.  Loop thread only.
 */
#include <dirent.h>
#include <errno.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/base/digest.h"
#include "common/base/log.h"
#include "gpud/gpud.h"

/* ------------------------------------------------------------ records --- */

static void pk_kv_u64(msgpack_packer *pk, const char *k, uint64_t v)
{
    msgpack_pack_str_with_body(pk, k, strlen(k));
    msgpack_pack_uint64(pk, v);
}

static void pk_kv_str(msgpack_packer *pk, const char *k, const char *v)
{
    msgpack_pack_str_with_body(pk, k, strlen(k));
    msgpack_pack_str_with_body(pk, v, strlen(v));
}

static const char *rec_name(uint16_t type)
{
    static const char *n[] = {"?", "ACCEPT", "DONE", "COMPLETE", "CANCEL", "PROBE"};
    return type <= REC_PROBE ? n[type] : "?";
}

#define GPUD_JOURNAL_HEADROOM (256u * 1024u)

/* does state_dir have room for more than the next record?  (1 when it cannot be told) */
static int headroom(const gpud *g)
{
    struct statvfs sv;
    if (statvfs(g->cfg.state_dir, &sv) < 0)
        return 1;
    return (uint64_t)sv.f_bavail * sv.f_frsize >= GPUD_JOURNAL_HEADROOM;
}

/* one append and the episode bookkeeping around it */
static int append(gpud *g, uint16_t type, uint64_t job, const void *data, size_t len)
{
    czk_error e = {0};
    int rc;

    if (len > CZK_JOURNAL_MAX_PAYLOAD)
        rc = czk_errorf(&e, -EMSGSIZE, "record of %zu bytes exceeds %u", len, CZK_JOURNAL_MAX_PAYLOAD);
    else
        rc = czk_journal_append(g->journal, type, data, (uint32_t)len, CZK_JOURNAL_SYNC, NULL, &e);
    if (rc == 0) {
        if (g->journal_down && (g->journal_err == -EIO || headroom(g))) {
            czk_info("journal: appends work again (%s record written): accepting jobs again", rec_name(type));
            g->journal_down = 0;
            g->journal_recovered = 1;
        }
        return 0;
    }
    g->journal_failures_total++;
    czk_metric_inc(g->m_journal_failures, 1);
    if (czk_journal_failed(g->journal)) {
        /* the failed record could not be cut off: only a new open (which
         * trims it as a torn tail) recovers; systemd restarts gpud */
        czk_err("journal: could not append %s record for job %llu and could not cut it off again: %s; stopping "
                "(a restart re-validates the journal)", rec_name(type), (unsigned long long)job, e.msg);
        g->exit_status = 1;
        g->journal_down = 1;
        g->journal_err = rc;
        if (g->loop)
            czk_loop_stop(g->loop);
        return rc;
    }
    if (!g->journal_down) {
        czk_err("journal: could not append %s record for job %llu: %s; refusing new jobs until appends work "
                "again (free space in state_dir)", rec_name(type), (unsigned long long)job, e.msg);
        g->journal_down = 1;
        g->journal_err = rc;
    }
    return rc;
}

int gpud_journal_probe(gpud *g)
{
    static const uint8_t probe[] = {0x81, 0xa5, 'p', 'r', 'o', 'b', 'e', 0x01}; /* {"probe": 1} */

    if (!g->journal_down)
        return 0;
    if (czk_journal_failed(g->journal))
        return -EIO;
    if (g->journal_err != -EIO && !headroom(g))
        return g->journal_err; /* still full: no record that would fit in a last page and end the episode */
    if (append(g, REC_PROBE, 0, probe, sizeof(probe)) < 0)
        return g->journal_err;
    return g->journal_down ? g->journal_err : 0;
}

int gpud_rec_write(gpud *g, uint16_t type, const gpud_rec *r)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    int rc;

    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    switch (type) {
    case REC_ACCEPT:
        msgpack_pack_map(&pk, r->wsha ? 8 : 7);
        pk_kv_u64(&pk, "job", r->job);
        pk_kv_str(&pk, "req", r->req);
        pk_kv_str(&pk, "circ", r->circ);
        pk_kv_u64(&pk, "lane", r->lane);
        pk_kv_u64(&pk, "nparts", r->nparts);
        pk_kv_u64(&pk, "uid", r->uid);
        pk_kv_u64(&pk, "tsub", r->tsub);
        if (r->wsha) {
            msgpack_pack_str_with_body(&pk, "wsha", 4);
            msgpack_pack_bin_with_body(&pk, r->wsha, (size_t)r->nparts * CZK_SHA256_LEN);
        }
        break;
    case REC_DONE:
        msgpack_pack_map(&pk, 3);
        pk_kv_u64(&pk, "job", r->job);
        pk_kv_u64(&pk, "part", r->part);
        msgpack_pack_str_with_body(&pk, "status", 6);
        msgpack_pack_int32(&pk, r->status);
        break;
    default:
        msgpack_pack_map(&pk, 1);
        pk_kv_u64(&pk, "job", r->job);
        break;
    }
    rc = append(g, type, r->job, sb.data, sb.size);
    msgpack_sbuffer_destroy(&sb);
    return rc;
}

int gpud_rec_parse(const czk_journal_rec *rec, gpud_rec *r)
{
    msgpack_unpacked up;
    size_t off = 0;
    uint32_t wsha_len = 0;
    int rc = -EBADMSG;

    memset(r, 0, sizeof(*r));
    msgpack_unpacked_init(&up);
    if (msgpack_unpack_next(&up, (const char *)rec->data, rec->len, &off) != MSGPACK_UNPACK_SUCCESS ||
        up.data.type != MSGPACK_OBJECT_MAP)
        goto out;
    for (uint32_t i = 0; i < up.data.via.map.size; i++) {
        const msgpack_object *k = &up.data.via.map.ptr[i].key, *v = &up.data.via.map.ptr[i].val;
        char key[16];
        if (k->type != MSGPACK_OBJECT_STR || k->via.str.size >= sizeof(key))
            goto out;
        memcpy(key, k->via.str.ptr, k->via.str.size);
        key[k->via.str.size] = 0;
        if (v->type == MSGPACK_OBJECT_STR) {
            char *dst = !strcmp(key, "req") ? r->req : !strcmp(key, "circ") ? r->circ : NULL;
            size_t cap = !strcmp(key, "req") ? sizeof(r->req) : sizeof(r->circ);
            if (!dst || v->via.str.size >= cap)
                goto out;
            memcpy(dst, v->via.str.ptr, v->via.str.size);
            dst[v->via.str.size] = 0;
        } else if (v->type == MSGPACK_OBJECT_BIN && !strcmp(key, "wsha")) {
            /* msgpack_unpack_next leaves bin bodies in the input: rec->data */
            r->wsha = (const uint8_t *)v->via.bin.ptr;
            wsha_len = v->via.bin.size;
        } else if (v->type == MSGPACK_OBJECT_POSITIVE_INTEGER || v->type == MSGPACK_OBJECT_NEGATIVE_INTEGER) {
            int64_t x = v->via.i64;
            uint64_t u = v->via.u64;
            if (!strcmp(key, "job")) r->job = u;
            else if (!strcmp(key, "tsub")) r->tsub = u;
            else if (!strcmp(key, "lane")) r->lane = (uint32_t)u;
            else if (!strcmp(key, "nparts")) r->nparts = (uint32_t)u;
            else if (!strcmp(key, "uid")) r->uid = (uint32_t)u;
            else if (!strcmp(key, "part")) r->part = (uint32_t)u;
            else if (!strcmp(key, "status")) r->status = (int32_t)x;
        }
    }
    if (r->wsha && wsha_len != (uint64_t)r->nparts * CZK_SHA256_LEN)
        goto out; /* digests that do not match the partition count: not a record we wrote */
    rc = r->job ? 0 : -EBADMSG;
out:
    msgpack_unpacked_destroy(&up);
    return rc;
}

/* -------------------------------------------------------------- table --- */

gpud_job *gpud_job_find(gpud *g, uint64_t id)
{
    for (gpud_job *j = g->hash[id % GPUD_HASH]; j; j = j->hnext)
        if (j->id == id)
            return j;
    return NULL;
}

gpud_job *gpud_job_find_req(gpud *g, uint32_t uid, const char *req)
{
    if (!req[0])
        return NULL;
    for (gpud_job *j = g->jobs_head; j; j = j->next)
        if (j->uid == uid && !strcmp(j->req, req))
            return j;
    return NULL;
}

void gpud_job_insert(gpud *g, gpud_job *j)
{
    j->hnext = g->hash[j->id % GPUD_HASH];
    g->hash[j->id % GPUD_HASH] = j;
    if (g->jobs_tail)
        g->jobs_tail->next = j;
    else
        g->jobs_head = j;
    g->jobs_tail = j;
}

/* forget the oldest finished jobs beyond GPUD_HISTORY */
void gpud_jobs_trim(gpud *g)
{
    gpud_job **pp = &g->jobs_head, *prev = NULL;
    while (g->n_history > GPUD_HISTORY && *pp) {
        gpud_job *j = *pp;
        if (j->state == J_ACTIVE || j->parts) {
            prev = j;
            pp = &j->next;
            continue;
        }
        *pp = j->next;
        if (g->jobs_tail == j)
            g->jobs_tail = prev;
        for (gpud_job **h = &g->hash[j->id % GPUD_HASH]; *h; h = &(*h)->hnext)
            if (*h == j) {
                *h = j->hnext;
                break;
            }
        free(j->wsha);
        free(j);
        g->n_history--;
    }
}

void gpud_spool_path(const gpud *g, uint64_t job, uint32_t part, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%llu/%u.wtns", g->spool_dir, (unsigned long long)job, part);
}

void gpud_spool_remove(gpud *g, uint64_t job)
{
    char dir[CZK_CONFIG_PATH_MAX + 64], path[CZK_CONFIG_PATH_MAX + 400];
    DIR *d;
    struct dirent *de;

    snprintf(dir, sizeof(dir), "%s/%llu", g->spool_dir, (unsigned long long)job);
    if (!(d = opendir(dir)))
        return;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.') {
            snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
            unlink(path);
        }
    closedir(d);
    if (rmdir(dir) < 0)
        czk_warn("could not remove spool directory \"%s\": %s", dir, strerror(errno));
}

