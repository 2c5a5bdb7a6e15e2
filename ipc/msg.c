/*
 * msg.c — encoder and hardened decoder of the czk wire protocol (see msg.h).
 *
 * One schema table per message type lists its keys, their kinds and ranges;
 * the encoder and the decoder both walk that table.  Decoding is three
 * stages: a structural pre-walk of the raw bytes that allocates nothing
 * (czk_msg_precheck), the msgpack-c unpacker (whose allocation is now bounded
 * by the pre-walk: at most about 24 bytes per input byte), and the schema
 * check on the unpacked object.
 */
#include "ipc/msg.h"

#include <errno.h>
#include <limits.h>
#include <msgpack.h>
#include <stdbool.h>
#include <string.h>

#include "ipc/layout.h"

/* ------------------------------------------------------------ schema --- */

enum fkind {
    F_U32,     /* unsigned, [min, max], stored as uint32_t */
    F_U64,     /* unsigned, [min, max], stored as uint64_t */
    F_I32,     /* signed, [smin, smax], stored as int32_t */
    F_STR,     /* UTF-8 text without NUL, copied into char[max] */
    F_BIN,     /* czk_bytes, len <= max */
    F_BINLIST, /* array of bin: czk_bytes[CZK_MSG_MAX_POINTS], count at aux */
    F_PAIRS,   /* RESYNC: array of [u32 slot, u64 generation], count at aux */
    F_MAPBIN,  /* bin holding one msgpack map (STATUS body), czk_bytes */
    F_CIRCS,   /* HELLO: array of [str name, bin(32) key id], count at aux */
};

typedef struct field {
    const char *key;
    uint8_t kind;
    uint8_t optional; /* omitted on encode when zero/empty; zero when absent */
    uint16_t off;     /* offset in czk_msg */
    uint16_t aux;     /* F_BINLIST/F_PAIRS: offset of the uint32_t count */
    int64_t smin;     /* F_I32 lower bound; F_U32/F_U64 lower bound as well */
    uint64_t max;     /* upper bound, or byte capacity for F_STR/F_BIN */
} field;

#define OFF(path) ((uint16_t)offsetof(czk_msg, u.path))
#define U32(k, p, lo, hi) {k, F_U32, 0, OFF(p), 0, lo, hi}
#define U64(k, p, lo, hi) {k, F_U64, 0, OFF(p), 0, lo, hi}
#define U64_OPT(k, p, hi) {k, F_U64, 1, OFF(p), 0, 0, hi}
#define U32_OPT(k, p, hi) {k, F_U32, 1, OFF(p), 0, 0, hi}
#define I32(k, p, lo, hi) {k, F_I32, 0, OFF(p), 0, lo, (uint64_t)(hi)}
#define STR(k, p) {k, F_STR, 0, OFF(p), 0, 0, sizeof(((czk_msg *)0)->u.p)}
#define STR_OPT(k, p) {k, F_STR, 1, OFF(p), 0, 0, sizeof(((czk_msg *)0)->u.p)}
#define END {NULL, 0, 0, 0, 0, 0, 0}

#define U32MAX 0xffffffffull
#define U64MAX 0xffffffffffffffffull
#define SLOTMAX (CZK_POOL_MAX_SLOTS - 1)

static const field f_hello[] = {
    U32("role", hello.role, 1, CZK_ROLE_MAX),
    U32("pid", hello.pid, 1, INT32_MAX),
    U32("proto", hello.proto, 1, U32MAX),
    I32("node", hello.numa_node, -1, 1023),
    U32("inst", hello.instance, 0, U32MAX),
    STR_OPT("name", hello.name),
    {"circs", F_CIRCS, 1, OFF(hello.circuits), OFF(hello.n_circuits), 0, CZK_MSG_MAX_CIRCUITS},
    END};
static const field f_pool[] = {
    U32("pool", pool.pool_id, 0, U32MAX),
    I32("node", pool.numa_node, -1, 1023),
    U32("slots", pool.slot_count, 1, CZK_POOL_MAX_SLOTS),
    U32("layout", pool.layout_version, 1, U32MAX),
    U64("ssize", pool.slot_size, 1, 1ull << 40),
    U64("epoch", pool.epoch, 1, U64MAX),
    U64("total", pool.total_size, 1, 1ull << 48),
    END};
static const field f_assign[] = {
    U32("pool", assign.pool_id, 0, U32MAX),
    U32("slot", assign.slot, 0, SLOTMAX),
    U64("gen", assign.generation, 0, U32MAX),
    U64("job", assign.job_id, 1, U64MAX),
    U32("part", assign.partition, 0, U32MAX - 1),
    U32("circ", assign.circuit_id, 0, U32MAX),
    STR_OPT("spool", assign.spool),
    U64_OPT("lease", assign.lease_ms, U64MAX),
    END};
static const field f_ready[] = {
    U32("pool", ready.pool_id, 0, U32MAX),
    U32("slot", ready.slot, 0, SLOTMAX),
    U64("gen", ready.generation, 0, U32MAX),
    U64("dom", ready.domain_size, 0, 1ull << 40),
    U64("nvars", ready.n_vars, 0, 1ull << 40),
    U64("dlen", ready.data_len, 0, 1ull << 48),
    {"status", F_I32, 1, OFF(ready.status), 0, -4095, 0},
    STR_OPT("reason", ready.reason),
    END};
static const field f_release[] = {
    U32("pool", release.pool_id, 0, U32MAX),
    U32("slot", release.slot, 0, SLOTMAX),
    U64("gen", release.generation, 0, U32MAX),
    END};
static const field f_result[] = {
    U64("job", result.job_id, 1, U64MAX),
    U32("part", result.partition, 0, U32MAX - 1),
    {"pts", F_BINLIST, 0, OFF(result.points), OFF(result.n_points), 0, CZK_MSG_MAX_POINT_BYTES},
    {"pub", F_BIN, 1, OFF(result.publics), 0, 0, CZK_MSG_MAX_RECORD},
    U32_OPT("circ", result.circuit_id, U32MAX),
    U32_OPT("nparts", result.n_partitions, U32MAX),
    STR_OPT("cname", result.circuit),
    U64_OPT("tsub", result.submit_ns, U64MAX),
    U64_OPT("tq", result.queue_ns, U64MAX),
    U64_OPT("ts", result.synth_ns, U64MAX),
    U64_OPT("tg", result.gpu_ns, U64MAX),
    END};
static const field f_done[] = {
    U64("job", done.job_id, 1, U64MAX),
    U32("part", done.partition, 0, U32MAX - 1),
    I32("status", done.status, -4095, 0),
    STR_OPT("reason", done.reason),
    {"proof", F_BIN, 1, OFF(done.proof), 0, 0, CZK_MSG_MAX_RECORD},
    {"pubj", F_BIN, 1, OFF(done.publics), 0, 0, CZK_MSG_MAX_RECORD},
    END};
static const field f_submit[] = {
    STR("req", submit.request_id),
    STR("circ", submit.circuit),
    U32("prio", submit.priority, 0, 7),
    U32("nparts", submit.n_partitions, 1, 1u << 20),
    U32("nfds", submit.n_fds, 0, CZK_MSG_MAX_FDS),
    U32_OPT("flags", submit.flags, U32MAX),
    END};
static const field f_accepted[] = {
    STR("req", accepted.request_id),
    U64("job", accepted.job_id, 1, U64MAX),
    U32_OPT("dup", accepted.duplicate, 1),
    END};
static const field f_rejected[] = {
    STR("req", rejected.request_id),
    I32("code", rejected.code, -4095, -1),
    STR_OPT("reason", rejected.reason),
    END};
static const field f_event[] = {
    U64("job", event.job_id, 1, U64MAX),
    U32("part", event.partition, 0, U32MAX),
    U32("stage", event.stage, 1, CZK_STAGE_MAX),
    I32("status", event.status, -4095, 0),
    U64_OPT("time", event.time_ns, U64MAX),
    STR_OPT("reason", event.reason),
    {"proof", F_BIN, 1, OFF(event.proof), 0, 0, CZK_MSG_MAX_RECORD},
    {"pubj", F_BIN, 1, OFF(event.publics), 0, 0, CZK_MSG_MAX_RECORD},
    END};
static const field f_status[] = {
    {"body", F_MAPBIN, 1, OFF(status.body), 0, 0, CZK_MSG_MAX_RECORD},
    END};
static const field f_cancel[] = {
    U64("job", cancel.job_id, 1, U64MAX),
    END};
static const field f_error[] = {
    I32("code", error.code, -4095, -1),
    STR_OPT("msg", error.message),
    END};
static const field f_resync[] = {
    U32("pool", resync.pool_id, 0, U32MAX),
    {"s", F_PAIRS, 0, OFF(resync.slots), OFF(resync.n), 0, CZK_MSG_MAX_RESYNC},
    END};
static const field f_watch[] = {
    U64("job", watch.job_id, 1, U64MAX),
    END};
static const field f_heartbeat[] = {
    U64("seq", heartbeat.seq, 0, U64MAX),
    U64_OPT("time", heartbeat.time_ns, U64MAX),
    END};

static const struct {
    const char *name;
    const field *fields;
} schema[CZK_MSG_TYPE_MAX + 1] = {
    [CZK_MSG_HELLO] = {"HELLO", f_hello},
    [CZK_MSG_POOL] = {"POOL", f_pool},
    [CZK_MSG_ASSIGN] = {"ASSIGN", f_assign},
    [CZK_MSG_READY] = {"READY", f_ready},
    [CZK_MSG_RELEASE] = {"RELEASE", f_release},
    [CZK_MSG_RESULT] = {"RESULT", f_result},
    [CZK_MSG_DONE] = {"DONE", f_done},
    [CZK_MSG_SUBMIT] = {"SUBMIT", f_submit},
    [CZK_MSG_ACCEPTED] = {"ACCEPTED", f_accepted},
    [CZK_MSG_REJECTED] = {"REJECTED", f_rejected},
    [CZK_MSG_EVENT] = {"EVENT", f_event},
    [CZK_MSG_STATUS] = {"STATUS", f_status},
    [CZK_MSG_STATUS_REPLY] = {"STATUS_REPLY", f_status},
    [CZK_MSG_CANCEL] = {"CANCEL", f_cancel},
    [CZK_MSG_ERROR] = {"ERROR", f_error},
    [CZK_MSG_RESYNC] = {"RESYNC", f_resync},
    [CZK_MSG_WATCH] = {"WATCH", f_watch},
    [CZK_MSG_HEARTBEAT] = {"HEARTBEAT", f_heartbeat},
};

const char *czk_msg_type_name(uint32_t type)
{
    if (type == 0 || type > CZK_MSG_TYPE_MAX)
        return "?";
    return schema[type].name;
}

const char *czk_role_name(uint32_t role)
{
    static const char *names[] = {"?", "gpud", "synth", "finalizer", "client"};
    return role <= CZK_ROLE_MAX ? names[role] : "?";
}

int czk_msg_hello_circuit(const czk_msg_hello *h, const char *name)
{
    for (uint32_t i = 0; i < h->n_circuits && i < CZK_MSG_MAX_CIRCUITS; i++)
        if (!strncmp(h->circuits[i].name, name, sizeof(h->circuits[i].name)))
            return (int)i;
    return -1;
}

/* ---------------------------------------------------------- pre-walk --- */

static int rd_be(const uint8_t *p, size_t left, size_t n, uint64_t *v)
{
    uint64_t x = 0;
    if (left < n)
        return -1;
    for (size_t i = 0; i < n; i++)
        x = (x << 8) | p[i];
    *v = x;
    return 0;
}

int czk_msg_precheck(const uint8_t *buf, size_t len, int max_depth, czk_error *err)
{
    uint64_t pending[CZK_MSG_MAX_DEPTH + 2];
    int depth = 0;
    size_t pos = 0;

    if (max_depth < 1 || max_depth > CZK_MSG_MAX_DEPTH)
        max_depth = CZK_MSG_MAX_DEPTH;
    if (len == 0)
        return czk_errorf(err, -EBADMSG, "empty record");
    if (len > CZK_MSG_MAX_RECORD)
        return czk_errorf(err, -EBADMSG, "record of %zu bytes exceeds the %u byte cap", len, CZK_MSG_MAX_RECORD);
    pending[0] = 1;
    while (depth >= 0) {
        uint64_t n = 0, body = 0;
        int container = 0; /* 1 array, 2 map */
        uint8_t b;

        if (pending[depth] == 0) {
            depth--;
            continue;
        }
        pending[depth]--;
        if (pos >= len)
            return czk_errorf(err, -EBADMSG, "record truncated at byte %zu", pos);
        b = buf[pos++];
        if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3) {
            /* fixint, nil, bool */
        } else if (b >= 0x80 && b <= 0x8f) {
            container = 2, n = b & 0x0f;
        } else if (b >= 0x90 && b <= 0x9f) {
            container = 1, n = b & 0x0f;
        } else if (b >= 0xa0 && b <= 0xbf) {
            body = b & 0x1f;
        } else {
            size_t w;
            switch (b) {
            case 0xcc: case 0xd0: body = 1; break;
            case 0xcd: case 0xd1: body = 2; break;
            case 0xca: case 0xce: case 0xd2: body = 4; break;
            case 0xcb: case 0xcf: case 0xd3: body = 8; break;
            case 0xc4: case 0xd9: w = 1; goto sized;
            case 0xc5: case 0xda: w = 2; goto sized;
            case 0xc6: case 0xdb: w = 4; goto sized;
            sized:
                if (rd_be(buf + pos, len - pos, w, &body))
                    return czk_errorf(err, -EBADMSG, "length header truncated at byte %zu", pos);
                pos += w;
                break;
            case 0xdc: case 0xde:
                if (rd_be(buf + pos, len - pos, 2, &n))
                    return czk_errorf(err, -EBADMSG, "container header truncated at byte %zu", pos);
                pos += 2;
                container = b == 0xdc ? 1 : 2;
                break;
            case 0xdd: case 0xdf:
                if (rd_be(buf + pos, len - pos, 4, &n))
                    return czk_errorf(err, -EBADMSG, "container header truncated at byte %zu", pos);
                pos += 4;
                container = b == 0xdd ? 1 : 2;
                break;
            default: /* 0xc1 (never used) and the ext family */
                return czk_errorf(err, -EBADMSG, "msgpack type byte 0x%02x at %zu not allowed", b, pos - 1);
            }
        }
        if (body > len - pos)
            return czk_errorf(err, -EBADMSG, "value at byte %zu claims %llu bytes, %zu left", pos,
                              (unsigned long long)body, len - pos);
        pos += body;
        if (container) {
            uint64_t elems = container == 2 ? 2 * n : n;
            /* every element takes at least one byte */
            if (elems > len - pos)
                return czk_errorf(err, -EBADMSG, "container at byte %zu declares %llu elements, %zu bytes left",
                                  pos, (unsigned long long)elems, len - pos);
            if (depth + 1 > max_depth)
                return czk_errorf(err, -EBADMSG, "nesting deeper than %d at byte %zu", max_depth, pos);
            if (elems) {
                depth++;
                pending[depth] = elems;
            }
        }
    }
    if (pos != len)
        return czk_errorf(err, -EBADMSG, "%zu trailing bytes after the record's object", len - pos);
    return 0;
}

/* ----------------------------------------------------------- encoder --- */

typedef struct wbuf {
    uint8_t *p;
    size_t len, cap;
} wbuf;

static int wbuf_write(void *data, const char *src, size_t n)
{
    wbuf *w = data;
    if (n > w->cap - w->len)
        return -1;
    memcpy(w->p + w->len, src, n);
    w->len += n;
    return 0;
}

static int pack_key(msgpack_packer *pk, const char *k)
{
    size_t n = strlen(k);
    return msgpack_pack_str(pk, n) || msgpack_pack_str_body(pk, k, n);
}

static int pack_bin(msgpack_packer *pk, const czk_bytes *b)
{
    return msgpack_pack_bin(pk, b->len) || (b->len && msgpack_pack_bin_body(pk, b->ptr, b->len));
}

static bool field_empty(const field *f, const czk_msg *m)
{
    const uint8_t *p = (const uint8_t *)m + f->off;
    switch (f->kind) {
    case F_U32: return *(const uint32_t *)p == 0;
    case F_U64: return *(const uint64_t *)p == 0;
    case F_I32: return *(const int32_t *)p == 0;
    case F_STR: return p[0] == 0;
    case F_BIN: case F_MAPBIN: return ((const czk_bytes *)p)->len == 0;
    case F_CIRCS: return *(const uint32_t *)((const uint8_t *)m + f->aux) == 0;
    default: return false;
    }
}

int czk_msg_encode(uint8_t *buf, size_t cap, const czk_msg *m, czk_error *err)
{
    msgpack_packer pk;
    wbuf w = {buf, 0, cap < CZK_MSG_MAX_RECORD ? cap : CZK_MSG_MAX_RECORD};
    const field *fs;
    size_t nkeys = 2;
    int bad = 0;

    if (m->type == 0 || m->type > CZK_MSG_TYPE_MAX)
        return czk_errorf(err, -EINVAL, "cannot encode unknown message type %u", m->type);
    fs = schema[m->type].fields;
    for (const field *f = fs; f->key; f++)
        if (!(f->optional && field_empty(f, m)))
            nkeys++;
    msgpack_packer_init(&pk, &w, wbuf_write);
    bad |= msgpack_pack_map(&pk, nkeys);
    bad |= pack_key(&pk, "t") || msgpack_pack_uint32(&pk, m->type);
    bad |= pack_key(&pk, "v") || msgpack_pack_uint32(&pk, CZK_PROTO_VERSION);
    for (const field *f = fs; f->key && !bad; f++) {
        const uint8_t *p = (const uint8_t *)m + f->off;
        const char *tn = schema[m->type].name;

        if (f->optional && field_empty(f, m))
            continue;
        bad |= pack_key(&pk, f->key);
        switch (f->kind) {
        case F_U32: {
            uint32_t v = *(const uint32_t *)p;
            if (v < (uint64_t)f->smin || v > f->max)
                return czk_errorf(err, -EINVAL, "%s.%s = %u out of range [%lld, %llu]", tn, f->key, v,
                                  (long long)f->smin, (unsigned long long)f->max);
            bad |= msgpack_pack_uint32(&pk, v);
            break;
        }
        case F_U64: {
            uint64_t v = *(const uint64_t *)p;
            if (v < (uint64_t)f->smin || v > f->max)
                return czk_errorf(err, -EINVAL, "%s.%s = %llu out of range [%lld, %llu]", tn, f->key,
                                  (unsigned long long)v, (long long)f->smin, (unsigned long long)f->max);
            bad |= msgpack_pack_uint64(&pk, v);
            break;
        }
        case F_I32: {
            int32_t v = *(const int32_t *)p;
            if (v < f->smin || v > (int64_t)f->max)
                return czk_errorf(err, -EINVAL, "%s.%s = %d out of range [%lld, %lld]", tn, f->key, v,
                                  (long long)f->smin, (long long)f->max);
            bad |= msgpack_pack_int32(&pk, v);
            break;
        }
        case F_STR: {
            size_t n = strnlen((const char *)p, f->max);
            if (n >= f->max)
                return czk_errorf(err, -EINVAL, "%s.%s is not NUL-terminated within %llu bytes", tn, f->key,
                                  (unsigned long long)f->max);
            bad |= msgpack_pack_str(&pk, n) || (n && msgpack_pack_str_body(&pk, p, n));
            break;
        }
        case F_BIN: case F_MAPBIN: {
            const czk_bytes *b = (const czk_bytes *)p;
            if (b->len > f->max || (b->len && !b->ptr))
                return czk_errorf(err, -EINVAL, "%s.%s has a bad length %u", tn, f->key, b->len);
            if (f->kind == F_MAPBIN && b->len) {
                int r = czk_msg_precheck(b->ptr, b->len, CZK_MSG_MAX_DEPTH - 1, err);
                if (r < 0)
                    return czk_errorf(err, -EINVAL, "%s.%s is not one valid msgpack object", tn, f->key);
                if (!((b->ptr[0] & 0xf0) == 0x80 || b->ptr[0] == 0xde || b->ptr[0] == 0xdf))
                    return czk_errorf(err, -EINVAL, "%s.%s is not a msgpack map", tn, f->key);
            }
            bad |= pack_bin(&pk, b);
            break;
        }
        case F_BINLIST: {
            const czk_bytes *b = (const czk_bytes *)p;
            uint32_t n = *(const uint32_t *)((const uint8_t *)m + f->aux);
            if (n > CZK_MSG_MAX_POINTS)
                return czk_errorf(err, -EINVAL, "%s.%s has %u items, at most %u", tn, f->key, n, CZK_MSG_MAX_POINTS);
            bad |= msgpack_pack_array(&pk, n);
            for (uint32_t i = 0; i < n && !bad; i++) {
                if (b[i].len > f->max || (b[i].len && !b[i].ptr))
                    return czk_errorf(err, -EINVAL, "%s.%s[%u] has a bad length %u", tn, f->key, i, b[i].len);
                bad |= pack_bin(&pk, &b[i]);
            }
            break;
        }
        case F_PAIRS: {
            const czk_msg_resync *r = &m->u.resync;
            if (r->n > CZK_MSG_MAX_RESYNC)
                return czk_errorf(err, -EINVAL, "%s.%s has %u items, at most %u", tn, f->key, r->n, CZK_MSG_MAX_RESYNC);
            bad |= msgpack_pack_array(&pk, r->n);
            for (uint32_t i = 0; i < r->n && !bad; i++) {
                if (r->slots[i].slot > SLOTMAX || r->slots[i].generation > U32MAX)
                    return czk_errorf(err, -EINVAL, "%s.%s[%u] out of range", tn, f->key, i);
                bad |= msgpack_pack_array(&pk, 2) || msgpack_pack_uint32(&pk, r->slots[i].slot) ||
                       msgpack_pack_uint64(&pk, r->slots[i].generation);
            }
            break;
        }
        case F_CIRCS: {
            const czk_msg_circuit *c = (const czk_msg_circuit *)p;
            uint32_t n = *(const uint32_t *)((const uint8_t *)m + f->aux);
            if (n > f->max)
                return czk_errorf(err, -EINVAL, "%s.%s has %u items, at most %llu", tn, f->key, n,
                                  (unsigned long long)f->max);
            bad |= msgpack_pack_array(&pk, n);
            for (uint32_t i = 0; i < n && !bad; i++) {
                size_t len = strnlen(c[i].name, sizeof(c[i].name));
                if (len == 0 || len >= sizeof(c[i].name))
                    return czk_errorf(err, -EINVAL, "%s.%s[%u] has an empty or unterminated name", tn, f->key, i);
                for (uint32_t j = 0; j < i; j++)
                    if (!strcmp(c[j].name, c[i].name))
                        return czk_errorf(err, -EINVAL, "%s.%s[%u] repeats the name of [%u]", tn, f->key, i, j);
                bad |= msgpack_pack_array(&pk, 2) || msgpack_pack_str(&pk, len) ||
                       msgpack_pack_str_body(&pk, c[i].name, len) || msgpack_pack_bin(&pk, CZK_MSG_KEY_ID) ||
                       msgpack_pack_bin_body(&pk, c[i].key_id, CZK_MSG_KEY_ID);
            }
            break;
        }
        }
    }
    if (bad)
        return czk_errorf(err, -EMSGSIZE, "%s record does not fit in %zu bytes", schema[m->type].name, w.cap);
    return (int)w.len;
}

/* ----------------------------------------------------------- decoder --- */

static bool key_is(const msgpack_object *k, const char *s)
{
    size_t n = strlen(s);
    return k->type == MSGPACK_OBJECT_STR && k->via.str.size == n && memcmp(k->via.str.ptr, s, n) == 0;
}

static int get_uint(const msgpack_object *o, uint64_t *v)
{
    if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
        return -1;
    *v = o->via.u64;
    return 0;
}

static int decode_field(const field *f, const msgpack_object *o, czk_msg *m, const char *tn, czk_error *err)
{
    uint8_t *p = (uint8_t *)m + f->off;
    uint64_t u;

    switch (f->kind) {
    case F_U32: case F_U64:
        if (get_uint(o, &u))
            return czk_errorf(err, -EBADMSG, "%s.%s is not an unsigned integer", tn, f->key);
        if (u < (uint64_t)f->smin || u > f->max)
            return czk_errorf(err, -EBADMSG, "%s.%s = %llu out of range [%lld, %llu]", tn, f->key,
                              (unsigned long long)u, (long long)f->smin, (unsigned long long)f->max);
        if (f->kind == F_U32)
            *(uint32_t *)p = (uint32_t)u;
        else
            *(uint64_t *)p = u;
        return 0;
    case F_I32: {
        int64_t v;
        if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
            v = o->via.u64 > INT64_MAX ? INT64_MAX : (int64_t)o->via.u64;
        else if (o->type == MSGPACK_OBJECT_NEGATIVE_INTEGER)
            v = o->via.i64;
        else
            return czk_errorf(err, -EBADMSG, "%s.%s is not an integer", tn, f->key);
        if (v < f->smin || v > (int64_t)f->max)
            return czk_errorf(err, -EBADMSG, "%s.%s = %lld out of range [%lld, %lld]", tn, f->key, (long long)v,
                              (long long)f->smin, (long long)f->max);
        *(int32_t *)p = (int32_t)v;
        return 0;
    }
    case F_STR:
        if (o->type != MSGPACK_OBJECT_STR)
            return czk_errorf(err, -EBADMSG, "%s.%s is not a string", tn, f->key);
        if (o->via.str.size >= f->max)
            return czk_errorf(err, -EBADMSG, "%s.%s is %u bytes, at most %llu", tn, f->key, o->via.str.size,
                              (unsigned long long)f->max - 1);
        if (memchr(o->via.str.ptr, 0, o->via.str.size))
            return czk_errorf(err, -EBADMSG, "%s.%s contains a NUL byte", tn, f->key);
        memcpy(p, o->via.str.ptr, o->via.str.size);
        p[o->via.str.size] = 0;
        return 0;
    case F_BIN: case F_MAPBIN: {
        czk_bytes *b = (czk_bytes *)p;
        if (o->type != MSGPACK_OBJECT_BIN)
            return czk_errorf(err, -EBADMSG, "%s.%s is not a byte string", tn, f->key);
        if (o->via.bin.size > f->max)
            return czk_errorf(err, -EBADMSG, "%s.%s is %u bytes, at most %llu", tn, f->key, o->via.bin.size,
                              (unsigned long long)f->max);
        b->ptr = (const uint8_t *)o->via.bin.ptr;
        b->len = o->via.bin.size;
        if (f->kind == F_MAPBIN && b->len) {
            czk_error sub;
            if (czk_msg_precheck(b->ptr, b->len, CZK_MSG_MAX_DEPTH - 1, &sub) < 0)
                return czk_errorf(err, -EBADMSG, "%s.%s: %s", tn, f->key, sub.msg);
            if (!((b->ptr[0] & 0xf0) == 0x80 || b->ptr[0] == 0xde || b->ptr[0] == 0xdf))
                return czk_errorf(err, -EBADMSG, "%s.%s does not hold a msgpack map", tn, f->key);
        }
        return 0;
    }
    case F_BINLIST: {
        czk_bytes *b = (czk_bytes *)p;
        if (o->type != MSGPACK_OBJECT_ARRAY)
            return czk_errorf(err, -EBADMSG, "%s.%s is not an array", tn, f->key);
        if (o->via.array.size > CZK_MSG_MAX_POINTS)
            return czk_errorf(err, -EBADMSG, "%s.%s has %u items, at most %u", tn, f->key, o->via.array.size,
                              CZK_MSG_MAX_POINTS);
        for (uint32_t i = 0; i < o->via.array.size; i++) {
            const msgpack_object *e = &o->via.array.ptr[i];
            if (e->type != MSGPACK_OBJECT_BIN || e->via.bin.size > f->max)
                return czk_errorf(err, -EBADMSG, "%s.%s[%u] is not a byte string of at most %llu bytes", tn, f->key,
                                  i, (unsigned long long)f->max);
            b[i].ptr = (const uint8_t *)e->via.bin.ptr;
            b[i].len = e->via.bin.size;
        }
        *(uint32_t *)((uint8_t *)m + f->aux) = o->via.array.size;
        return 0;
    }
    case F_PAIRS: {
        czk_msg_resync *r = &m->u.resync;
        if (o->type != MSGPACK_OBJECT_ARRAY)
            return czk_errorf(err, -EBADMSG, "%s.%s is not an array", tn, f->key);
        if (o->via.array.size > CZK_MSG_MAX_RESYNC)
            return czk_errorf(err, -EBADMSG, "%s.%s has %u items, at most %u", tn, f->key, o->via.array.size,
                              CZK_MSG_MAX_RESYNC);
        for (uint32_t i = 0; i < o->via.array.size; i++) {
            const msgpack_object *e = &o->via.array.ptr[i];
            uint64_t s, g;
            if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size != 2 || get_uint(&e->via.array.ptr[0], &s) ||
                get_uint(&e->via.array.ptr[1], &g) || s > SLOTMAX || g > U32MAX)
                return czk_errorf(err, -EBADMSG, "%s.%s[%u] is not a [slot, generation] pair in range", tn, f->key, i);
            r->slots[i].slot = (uint32_t)s;
            r->slots[i].generation = g;
        }
        r->n = o->via.array.size;
        return 0;
    }
    case F_CIRCS: {
        czk_msg_circuit *c = (czk_msg_circuit *)p;
        if (o->type != MSGPACK_OBJECT_ARRAY)
            return czk_errorf(err, -EBADMSG, "%s.%s is not an array", tn, f->key);
        if (o->via.array.size > f->max)
            return czk_errorf(err, -EBADMSG, "%s.%s has %u items, at most %llu", tn, f->key, o->via.array.size,
                              (unsigned long long)f->max);
        for (uint32_t i = 0; i < o->via.array.size; i++) {
            const msgpack_object *e = &o->via.array.ptr[i], *nm, *id;
            if (e->type != MSGPACK_OBJECT_ARRAY || e->via.array.size != 2)
                return czk_errorf(err, -EBADMSG, "%s.%s[%u] is not a [name, key id] pair", tn, f->key, i);
            nm = &e->via.array.ptr[0];
            id = &e->via.array.ptr[1];
            if (nm->type != MSGPACK_OBJECT_STR || nm->via.str.size == 0 || nm->via.str.size >= sizeof(c[i].name) ||
                memchr(nm->via.str.ptr, 0, nm->via.str.size))
                return czk_errorf(err, -EBADMSG, "%s.%s[%u]: the name is not a string of 1..%zu bytes without NUL",
                                  tn, f->key, i, sizeof(c[i].name) - 1);
            if (id->type != MSGPACK_OBJECT_BIN || id->via.bin.size != CZK_MSG_KEY_ID)
                return czk_errorf(err, -EBADMSG, "%s.%s[%u]: the key id is not a byte string of %u bytes", tn,
                                  f->key, i, CZK_MSG_KEY_ID);
            memcpy(c[i].name, nm->via.str.ptr, nm->via.str.size);
            c[i].name[nm->via.str.size] = 0;
            memcpy(c[i].key_id, id->via.bin.ptr, CZK_MSG_KEY_ID);
            for (uint32_t j = 0; j < i; j++)
                if (!strcmp(c[j].name, c[i].name))
                    return czk_errorf(err, -EBADMSG, "%s.%s[%u] repeats the name of [%u]", tn, f->key, i, j);
        }
        *(uint32_t *)((uint8_t *)m + f->aux) = o->via.array.size;
        return 0;
    }
    }
    return czk_errorf(err, -EBADMSG, "internal: bad field kind");
}

int czk_msg_decode(const uint8_t *buf, size_t len, czk_msg *m, czk_error *err)
{
    msgpack_unpacked up;
    const msgpack_object *root;
    const field *fs;
    const char *tn;
    size_t off = 0;
    uint64_t t = 0, v = 0;
    uint32_t seen = 0;
    int have_t = 0, have_v = 0, r;

    memset(m, 0, sizeof(*m));
    r = czk_msg_precheck(buf, len, CZK_MSG_MAX_DEPTH, err);
    if (r < 0)
        return r;
    if (!((buf[0] & 0xf0) == 0x80 || buf[0] == 0xde || buf[0] == 0xdf))
        return czk_errorf(err, -EBADMSG, "record is not a msgpack map (first byte 0x%02x)", buf[0]);

    msgpack_unpacked_init(&up);
    switch (msgpack_unpack_next(&up, (const char *)buf, len, &off)) {
    case MSGPACK_UNPACK_SUCCESS:
        break;
    case MSGPACK_UNPACK_NOMEM_ERROR:
        r = czk_errorf(err, -EBADMSG, "msgpack unpacker out of memory");
        goto out;
    default:
        r = czk_errorf(err, -EBADMSG, "msgpack unpacker rejected the record");
        goto out;
    }
    root = &up.data;
    if (off != len || root->type != MSGPACK_OBJECT_MAP) {
        r = czk_errorf(err, -EBADMSG, "record is not exactly one msgpack map");
        goto out;
    }
    for (uint32_t i = 0; i < root->via.map.size; i++) {
        const msgpack_object_kv *kv = &root->via.map.ptr[i];
        if (key_is(&kv->key, "t")) {
            if (have_t++ || get_uint(&kv->val, &t)) {
                r = czk_errorf(err, -EBADMSG, "bad or duplicate type key \"t\"");
                goto out;
            }
        } else if (key_is(&kv->key, "v")) {
            if (have_v++ || get_uint(&kv->val, &v)) {
                r = czk_errorf(err, -EBADMSG, "bad or duplicate version key \"v\"");
                goto out;
            }
        }
    }
    if (!have_t || t == 0 || t > CZK_MSG_TYPE_MAX) {
        r = czk_errorf(err, -EBADMSG, "missing or unknown message type %llu", (unsigned long long)t);
        goto out;
    }
    if (!have_v || v != CZK_PROTO_VERSION) {
        r = czk_errorf(err, -EPROTO, "%s record has protocol version %llu, this build speaks %u",
                       schema[t].name, (unsigned long long)v, CZK_PROTO_VERSION);
        goto out;
    }
    m->type = (uint32_t)t;
    m->version = (uint32_t)v;
    fs = schema[t].fields;
    tn = schema[t].name;
    for (uint32_t i = 0; i < root->via.map.size; i++) {
        const msgpack_object_kv *kv = &root->via.map.ptr[i];
        const field *f;
        unsigned idx;

        if (key_is(&kv->key, "t") || key_is(&kv->key, "v"))
            continue;
        if (kv->key.type != MSGPACK_OBJECT_STR) {
            r = czk_errorf(err, -EBADMSG, "%s record has a key that is not a string", tn);
            goto out;
        }
        for (f = fs, idx = 0; f->key && !key_is(&kv->key, f->key); f++, idx++)
            ;
        if (!f->key) {
            r = czk_errorf(err, -EBADMSG, "%s record has unknown key \"%.*s\"", tn,
                           (int)(kv->key.via.str.size > 32 ? 32 : kv->key.via.str.size), kv->key.via.str.ptr);
            goto out;
        }
        if (seen & (1u << idx)) {
            r = czk_errorf(err, -EBADMSG, "%s record repeats key \"%s\"", tn, f->key);
            goto out;
        }
        seen |= 1u << idx;
        r = decode_field(f, &kv->val, m, tn, err);
        if (r < 0)
            goto out;
    }
    {
        unsigned idx = 0;
        for (const field *f = fs; f->key; f++, idx++)
            if (!f->optional && !(seen & (1u << idx))) {
                r = czk_errorf(err, -EBADMSG, "%s record lacks key \"%s\"", tn, f->key);
                goto out;
            }
    }
    r = 0;
out:
    msgpack_unpacked_destroy(&up);
    if (r < 0) {
        uint32_t keep = m->type;
        memset(m, 0, sizeof(*m));
        m->type = keep;
    }
    return r;
}

/* ---------------------------------------------------- typed wrappers --- */

#define CZK_MSG_TYPED(name, NAME)                                                                   \
    int czk_msg_encode_##name(uint8_t *buf, size_t cap, const czk_msg_##name *v, czk_error *err)    \
    {                                                                                               \
        czk_msg m;                                                                                  \
        m.type = CZK_MSG_##NAME;                                                                    \
        m.version = CZK_PROTO_VERSION;                                                              \
        memcpy(&m.u.name, v, sizeof(*v));                                                           \
        return czk_msg_encode(buf, cap, &m, err);                                                   \
    }                                                                                               \
    int czk_msg_decode_##name(const uint8_t *buf, size_t len, czk_msg_##name *v, czk_error *err)    \
    {                                                                                               \
        czk_msg m;                                                                                  \
        int r = czk_msg_decode(buf, len, &m, err);                                                  \
        if (r < 0)                                                                                  \
            return r;                                                                               \
        if (m.type != CZK_MSG_##NAME)                                                               \
            return czk_errorf(err, -EBADMSG, "expected a %s record, got %s", #NAME,                 \
                              czk_msg_type_name(m.type));                                           \
        memcpy(v, &m.u.name, sizeof(*v));                                                           \
        return 0;                                                                                   \
    }
CZK_MSG_TYPED_LIST(CZK_MSG_TYPED)

int czk_msg_encode_status(uint8_t *buf, size_t cap, const czk_msg_status *v, int reply, czk_error *err)
{
    czk_msg m;
    m.type = reply ? CZK_MSG_STATUS_REPLY : CZK_MSG_STATUS;
    m.version = CZK_PROTO_VERSION;
    m.u.status = *v;
    return czk_msg_encode(buf, cap, &m, err);
}
