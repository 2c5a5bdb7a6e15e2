/*
 * table.c — czk-gpud's job table (hash by id, list in acceptance order), the
 * journal record codec and the witness spool's paths.  Journal records, each
 * one msgpack map (CZK_JOURNAL_SYNC = fdatasync before the promise it backs
 * is made; part.c decides when each is written):
 *   ACCEPT   {job, req, circ, lane, nparts, uid, tsub}   sync, before ACCEPTED
 *   DONE     {job, part, status}                        sync, after the finalizer's DONE
 *   COMPLETE {job}                                      sync, when every partition is final
 *   CANCEL   {job}                                      sync, before the job's resources go
 * Loop thread only.
 */
#include <dirent.h>
#include <errno.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int gpud_rec_write(gpud *g, uint16_t type, const gpud_rec *r)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    czk_error e = {0};
    int rc;

    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    switch (type) {
    case REC_ACCEPT:
        msgpack_pack_map(&pk, 7);
        pk_kv_u64(&pk, "job", r->job);
        pk_kv_str(&pk, "req", r->req);
        pk_kv_str(&pk, "circ", r->circ);
        pk_kv_u64(&pk, "lane", r->lane);
        pk_kv_u64(&pk, "nparts", r->nparts);
        pk_kv_u64(&pk, "uid", r->uid);
        pk_kv_u64(&pk, "tsub", r->tsub);
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
    rc = czk_journal_append(g->journal, type, sb.data, (uint32_t)sb.size, CZK_JOURNAL_SYNC, NULL, &e);
    msgpack_sbuffer_destroy(&sb);
    if (rc < 0)
        czk_err("journal: could not append record %u for job %llu: %s", type, (unsigned long long)r->job, e.msg);
    return rc;
}

int gpud_rec_parse(const czk_journal_rec *rec, gpud_rec *r)
{
    msgpack_unpacked up;
    size_t off = 0;
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

