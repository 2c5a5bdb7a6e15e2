/*
 * binfile.c — the iden3 section container: mapping, table validation and an
 * atomic streaming writer.  See binfile.h for the format and the checks.
 */
#include "common/base/fsutil.h"
#include "common/formats/binfile.h"
#include "common/crypto/bn254_field.h"
#include "common/crypto/field.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- reading ---- */

int czk_binfile_map_fd(const uint8_t **map, size_t *size, int fd, const char *name, czk_error *e)
{
    struct stat st;
    void *p;

    *map = NULL;
    *size = 0;
    if (fstat(fd, &st) < 0) {
        int err = errno;
        return czk_errorf(e, -err, "%s: cannot stat: %s", name, strerror(err));
    }
    if (!S_ISREG(st.st_mode))
        return czk_errorf(e, -EINVAL, "%s: not a regular file", name);
    if (st.st_size <= 0)
        return 0; /* empty: the parser reports it */
    if ((uint64_t)st.st_size > SIZE_MAX)
        return czk_errorf(e, -EFBIG, "%s: file of %lld bytes cannot be mapped", name,
                          (long long)st.st_size);
    p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
        int err = errno;
        return czk_errorf(e, -err, "%s: cannot map %lld bytes: %s", name,
                          (long long)st.st_size, strerror(err));
    }
    *map = p;
    *size = (size_t)st.st_size;
    return 0;
}

int czk_binfile_map_path(const uint8_t **map, size_t *size, const char *path, czk_error *e)
{
    int fd, rc;

    *map = NULL;
    *size = 0;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        return czk_errorf(e, -err, "%s: cannot open: %s", path, strerror(err));
    }
    rc = czk_binfile_map_fd(map, size, fd, path, e);
    close(fd);
    return rc;
}

void czk_binfile_unmap(const uint8_t *map, size_t size)
{
    if (map && size)
        munmap((void *)map, size);
}

/* printable rendering of a 4-byte magic for messages */
static void magic_str(char out[20], const uint8_t *m)
{
    char *o = out;

    for (int i = 0; i < 4; i++) {
        if (m[i] >= 0x20 && m[i] < 0x7f && m[i] != '\\' && m[i] != '"')
            *o++ = (char)m[i];
        else
            o += sprintf(o, "\\x%02x", m[i]);
    }
    *o = 0;
}

int czk_binfile_parse(czk_binfile *bf, const uint8_t *data, size_t size, const char *name,
                      const char magic[4], uint32_t version, czk_error *e)
{
    uint64_t pos;
    uint32_t n;

    memset(bf, 0, sizeof(*bf));
    bf->name = name;
    bf->data = data;
    bf->size = size;
    if (size < CZK_BINFILE_HEADER_BYTES)
        return czk_errorf(e, -EINVAL,
                          "%s: file is %zu bytes, shorter than the 12-byte header (magic, version, "
                          "section count) of a .%.4s file",
                          name, size, magic);
    if (memcmp(data, magic, 4) != 0) {
        char found[20];
        magic_str(found, data);
        return czk_errorf(e, -EINVAL, "%s: not a .%.4s file: magic is \"%s\", expected \"%.4s\"",
                          name, magic, found, magic);
    }
    bf->version = czk_le32(data + 4);
    if (bf->version != version)
        return czk_errorf(e, -EINVAL, "%s: unsupported .%.4s version %u (expected %u)", name,
                          magic, bf->version, version);
    n = czk_le32(data + 8);
    pos = CZK_BINFILE_HEADER_BYTES;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t left = size - pos, ssize;
        uint32_t id;

        if (left < CZK_BINFILE_SECTION_HEADER_BYTES)
            return czk_errorf(e, -EINVAL,
                              "%s: section table: the header declares %u sections but the file "
                              "ends after %u (%llu bytes left at offset %llu, a section header "
                              "needs 12); truncated file or a section size that covers the next "
                              "section",
                              name, n, i, (unsigned long long)left, (unsigned long long)pos);
        id = czk_le32(data + pos);
        ssize = czk_le64(data + pos + 4);
        left -= CZK_BINFILE_SECTION_HEADER_BYTES;
        if (ssize > left)
            return czk_errorf(e, -EINVAL,
                              "%s: section %u (entry %u of %u, at offset %llu): size %llu runs "
                              "past the end of the file (%llu bytes left); truncated file?",
                              name, id, i, n, (unsigned long long)pos,
                              (unsigned long long)ssize, (unsigned long long)left);
        for (uint32_t j = 0; j < bf->n_sections; j++)
            if (bf->sec[j].id == id)
                return czk_errorf(e, -EINVAL,
                                  "%s: section %u appears twice (payloads at offsets %llu and "
                                  "%llu); expected each section once",
                                  name, id, (unsigned long long)bf->sec[j].offset,
                                  (unsigned long long)(pos + CZK_BINFILE_SECTION_HEADER_BYTES));
        if (bf->n_sections == CZK_BINFILE_MAX_SECTIONS)
            return czk_errorf(e, -EINVAL, "%s: more than %d sections (header declares %u)", name,
                              CZK_BINFILE_MAX_SECTIONS, n);
        bf->sec[bf->n_sections].id = id;
        bf->sec[bf->n_sections].offset = pos + CZK_BINFILE_SECTION_HEADER_BYTES;
        bf->sec[bf->n_sections].size = ssize;
        bf->n_sections++;
        pos += CZK_BINFILE_SECTION_HEADER_BYTES + ssize;
    }
    if (pos != size)
        return czk_errorf(e, -EINVAL,
                          "%s: %llu bytes after the last of the %u declared sections (file is %zu "
                          "bytes, sections end at %llu)",
                          name, (unsigned long long)(size - pos), n, size,
                          (unsigned long long)pos);
    return 0;
}

const czk_binfile_section *czk_binfile_find(const czk_binfile *bf, uint32_t id)
{
    for (uint32_t i = 0; i < bf->n_sections; i++)
        if (bf->sec[i].id == id)
            return &bf->sec[i];
    return NULL;
}

int czk_binfile_require(const czk_binfile *bf, uint32_t id, const char *what,
                        const czk_binfile_section **s, czk_error *e)
{
    *s = czk_binfile_find(bf, id);
    if (!*s)
        return czk_errorf(e, -EINVAL, "%s: section %u (%s) is missing", bf->name, id, what);
    return 0;
}

static const uint8_t BN128_R[32] = {
    0x01, 0x00, 0x00, 0xf0, 0x93, 0xf5, 0xe1, 0x43, 0x91, 0x70, 0xb9, 0x79, 0x48, 0xe8, 0x33, 0x28,
    0x5d, 0x58, 0x81, 0x81, 0xb6, 0x45, 0x50, 0xb8, 0x29, 0xa0, 0x31, 0xe1, 0x72, 0x4e, 0x64, 0x30};
static const uint8_t BN128_Q[32] = {
    0x47, 0xfd, 0x7c, 0xd8, 0x16, 0x8c, 0x20, 0x3c, 0x8d, 0xca, 0x71, 0x68, 0x91, 0x6a, 0x81, 0x97,
    0x5d, 0x58, 0x81, 0x81, 0xb6, 0x45, 0x50, 0xb8, 0x29, 0xa0, 0x31, 0xe1, 0x72, 0x4e, 0x64, 0x30};

void czk_binfile_describe_prime(char *out, size_t out_size, const uint8_t *p, uint32_t n8)
{
    if (n8 == 32 && memcmp(p, BN128_R, 32) == 0)
        snprintf(out, out_size, "bn128's scalar field r");
    else if (n8 == 32 && memcmp(p, BN128_Q, 32) == 0)
        snprintf(out, out_size, "bn128's base field q");
    else if (n8 == CZK_FR_BYTES && memcmp(p, &CZK_FR_MOD, CZK_FR_BYTES) == 0)
        snprintf(out, out_size, "BLS12-381's scalar field r");
    else
        snprintf(out, out_size, "an unknown %u-byte prime", n8);
}

int czk_binfile_check_field_header(const czk_binfile *bf, const czk_binfile_section *s,
                                   uint64_t header_bytes, const void *prime, uint32_t prime_bytes,
                                   const char *prime_name, const char *hint, const uint8_t **rest,
                                   czk_error *e)
{
    const uint8_t *p = czk_binfile_payload(bf, s);
    uint32_t n8;

    if (s->size < 4)
        return czk_errorf(e, -EINVAL, "%s: section %u (header): %llu bytes, too short for n8",
                          bf->name, s->id, (unsigned long long)s->size);
    n8 = czk_le32(p);
    if (n8 != prime_bytes)
        return czk_errorf(e, -EINVAL,
                          "%s: section %u (header): prime is not %s (found a %u-byte field, "
                          "n8=%u; expected n8=%u)",
                          bf->name, s->id, prime_name, n8, n8, prime_bytes);
    if (s->size != header_bytes)
        return czk_errorf(e, -EINVAL, "%s: section %u (header): %llu bytes, expected %llu",
                          bf->name, s->id, (unsigned long long)s->size,
                          (unsigned long long)header_bytes);
    if (memcmp(p + 4, prime, prime_bytes) != 0) {
        char what[64];
        czk_binfile_describe_prime(what, sizeof(what), p + 4, n8);
        return czk_errorf(e, -EINVAL, "%s: section %u (header): prime is not %s (found %s%s%s)",
                          bf->name, s->id, prime_name, what, hint ? "; " : "", hint ? hint : "");
    }
    *rest = p + 4 + prime_bytes;
    return 0;
}

const char *czk_curve_name(czk_curve_id c)
{
    switch (c) {
    case CZK_CURVE_BLS12_381: return "BLS12-381";
    case CZK_CURVE_BN254: return "BN254 (bn128)";
    }
    return "an unknown curve";
}

const char *czk_curve_snarkjs(czk_curve_id c)
{
    switch (c) {
    case CZK_CURVE_BLS12_381: return "bls12381";
    case CZK_CURVE_BN254: return "bn128";
    }
    return NULL;
}

bool czk_binfile_scalar_ok(czk_curve_id curve, const void *p)
{
    if (curve == CZK_CURVE_BN254) {
        czk_bn254_fr v;
        memcpy(&v, p, sizeof(v));
        return czk_bn254_fr_is_canonical(&v);
    }
    czk_fr v;
    memcpy(&v, p, sizeof(v));
    return czk_fr_is_canonical(&v);
}

int czk_binfile_field_curve(const czk_binfile *bf, const czk_binfile_section *s, uint64_t header_bytes,
                            unsigned curves, const char *hint, czk_curve_id *curve, const uint8_t **rest,
                            czk_error *e)
{
    const uint8_t *p = czk_binfile_payload(bf, s);
    char what[64];

    if ((curves & CZK_CURVES_BN254) && s->size >= 4 + 32 && czk_le32(p) == 32 &&
        memcmp(p + 4, BN128_R, 32) == 0) {
        if (s->size != header_bytes)
            return czk_errorf(e, -EINVAL, "%s: section %u (header): %llu bytes, expected %llu", bf->name, s->id,
                              (unsigned long long)s->size, (unsigned long long)header_bytes);
        *curve = CZK_CURVE_BN254;
        *rest = p + 4 + 32;
        return 0;
    }
    if (!(curves & CZK_CURVES_BN254) || (s->size >= 4 + 32 && czk_le32(p) == 32 &&
                                         memcmp(p + 4, &CZK_FR_MOD, 32) == 0)) {
        *curve = CZK_CURVE_BLS12_381;
        return czk_binfile_check_field_header(bf, s, header_bytes, &CZK_FR_MOD, CZK_FR_BYTES, "BLS12-381's r",
                                              hint, rest, e);
    }
    if (s->size < 4)
        return czk_errorf(e, -EINVAL, "%s: section %u (header): %llu bytes, too short for n8", bf->name, s->id,
                          (unsigned long long)s->size);
    if (s->size < 4 + (uint64_t)czk_le32(p))
        return czk_errorf(e, -EINVAL, "%s: section %u (header): n8=%u but the section has %llu bytes", bf->name,
                          s->id, czk_le32(p), (unsigned long long)s->size);
    czk_binfile_describe_prime(what, sizeof(what), p + 4, czk_le32(p));
    return czk_errorf(e, -EINVAL,
                      "%s: section %u (header): prime r is %s, neither BLS12-381's nor BN254's (bn128): "
                      "unsupported curve",
                      bf->name, s->id, what);
}

/* ---- writing ---- */

#define WBUF_SIZE (1u << 20)

struct czk_binfile_writer {
    int fd;
    char *path, *tmp;
    uint8_t *buf;
    size_t buf_len;
    uint64_t off; /* file offset of the next byte (buffer included) */
    uint32_t n_sections, n_begun;
    bool in_section;
    uint32_t sec_id;
    uint64_t sec_hdr_off, sec_size;
    czk_error err; /* first failure */
};

int czk_binfile_writer_fail(czk_binfile_writer *w, int code, const char *fmt, ...)
{
    va_list ap;

    if (w->err.code)
        return w->err.code;
    w->err.code = code;
    va_start(ap, fmt);
    vsnprintf(w->err.msg, sizeof(w->err.msg), fmt, ap);
    va_end(ap);
    return code;
}

static int write_all(czk_binfile_writer *w, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(w->fd, p, n);
        if (k < 0) {
            int err = errno;
            if (err == EINTR)
                continue;
            return czk_binfile_writer_fail(w, -err, "%s: cannot write: %s", w->tmp, strerror(err));
        }
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int flush_buf(czk_binfile_writer *w)
{
    int rc;

    if (w->err.code)
        return w->err.code;
    rc = write_all(w, w->buf, w->buf_len);
    w->buf_len = 0;
    return rc;
}

int czk_binfile_writer_open(czk_binfile_writer **wp, const char *path, const char magic[4],
                            uint32_t version, uint32_t n_sections, czk_error *e)
{
    static atomic_uint counter;
    czk_binfile_writer *w;
    size_t plen = strlen(path);
    uint8_t hdr[12];

    *wp = NULL;
    w = calloc(1, sizeof(*w));
    if (!w || !(w->path = strdup(path)) || !(w->tmp = malloc(plen + 64)) ||
        !(w->buf = malloc(WBUF_SIZE))) {
        if (w) {
            free(w->path);
            free(w->tmp);
            free(w);
        }
        return czk_errorf(e, -ENOMEM, "%s: out of memory for the writer", path);
    }
    w->fd = -1;
    for (int tries = 0; w->fd < 0; tries++) {
        snprintf(w->tmp, plen + 64, "%s.tmp.%ld.%u", path, (long)getpid(),
                 atomic_fetch_add(&counter, 1));
        w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (w->fd < 0 && (errno != EEXIST || tries > 100)) {
            int err = errno;
            czk_errorf(e, -err, "%s: cannot create temp file %s: %s", path, w->tmp,
                       strerror(err));
            free(w->buf);
            free(w->path);
            free(w->tmp);
            free(w);
            return -err;
        }
    }
    w->n_sections = n_sections;
    memcpy(hdr, magic, 4);
    memcpy(hdr + 4, &version, 4);
    memcpy(hdr + 8, &n_sections, 4);
    czk_binfile_writer_write(w, hdr, sizeof(hdr));
    *wp = w;
    return 0;
}

uint64_t czk_binfile_writer_tell(const czk_binfile_writer *w)
{
    return w->off;
}

int czk_binfile_writer_write(czk_binfile_writer *w, const void *p, size_t n)
{
    const uint8_t *b = p;

    if (w->err.code)
        return w->err.code;
    w->off += n;
    if (n >= WBUF_SIZE) {
        int rc = flush_buf(w);
        return rc ? rc : write_all(w, b, n);
    }
    while (n) {
        size_t k = WBUF_SIZE - w->buf_len;
        if (k > n)
            k = n;
        memcpy(w->buf + w->buf_len, b, k);
        w->buf_len += k;
        b += k;
        n -= k;
        if (w->buf_len == WBUF_SIZE && flush_buf(w))
            return w->err.code;
    }
    return 0;
}

int czk_binfile_writer_u32(czk_binfile_writer *w, uint32_t v)
{
    return czk_binfile_writer_write(w, &v, 4);
}

int czk_binfile_writer_u64(czk_binfile_writer *w, uint64_t v)
{
    return czk_binfile_writer_write(w, &v, 8);
}

int czk_binfile_writer_zeros(czk_binfile_writer *w, size_t n)
{
    static const uint8_t z[4096];

    while (n) {
        size_t k = n < sizeof(z) ? n : sizeof(z);
        if (czk_binfile_writer_write(w, z, k))
            return w->err.code;
        n -= k;
    }
    return 0;
}

int czk_binfile_writer_patch(czk_binfile_writer *w, uint64_t off, const void *p, size_t n)
{
    const uint8_t *b = p;

    if (w->err.code)
        return w->err.code;
    if (off + n > w->off)
        return czk_binfile_writer_fail(w, -EINVAL, "%s: patch of %zu bytes at %llu is past the "
                                       "%llu bytes written", w->path, n,
                                       (unsigned long long)off, (unsigned long long)w->off);
    if (flush_buf(w))
        return w->err.code;
    while (n) {
        ssize_t k = pwrite(w->fd, b, n, (off_t)off);
        if (k < 0) {
            int err = errno;
            if (err == EINTR)
                continue;
            return czk_binfile_writer_fail(w, -err, "%s: cannot write: %s", w->tmp, strerror(err));
        }
        b += k;
        n -= (size_t)k;
        off += (uint64_t)k;
    }
    return 0;
}

/* close the open section: patch an unknown size, check a declared one */
static int end_section(czk_binfile_writer *w)
{
    uint64_t got;

    if (!w->in_section || w->err.code)
        return w->err.code;
    w->in_section = false;
    got = w->off - (w->sec_hdr_off + CZK_BINFILE_SECTION_HEADER_BYTES);
    if (w->sec_size == UINT64_MAX)
        return czk_binfile_writer_patch(w, w->sec_hdr_off + 4, &got, 8);
    if (got != w->sec_size)
        return czk_binfile_writer_fail(w, -EINVAL,
                                       "%s: section %u declared %llu bytes but %llu were written",
                                       w->path, w->sec_id, (unsigned long long)w->sec_size,
                                       (unsigned long long)got);
    return 0;
}

int czk_binfile_writer_begin_section(czk_binfile_writer *w, uint32_t id, uint64_t size)
{
    if (end_section(w))
        return w->err.code;
    if (w->n_begun == w->n_sections)
        return czk_binfile_writer_fail(w, -EINVAL, "%s: more sections than the %u declared",
                                       w->path, w->n_sections);
    w->n_begun++;
    w->in_section = true;
    w->sec_id = id;
    w->sec_size = size;
    w->sec_hdr_off = w->off;
    czk_binfile_writer_u32(w, id);
    return czk_binfile_writer_u64(w, size == UINT64_MAX ? 0 : size);
}

static void writer_free(czk_binfile_writer *w)
{
    if (w->fd >= 0)
        close(w->fd);
    free(w->buf);
    free(w->path);
    free(w->tmp);
    free(w);
}

void czk_binfile_writer_abort(czk_binfile_writer *w)
{
    if (!w)
        return;
    unlink(w->tmp);
    writer_free(w);
}

int czk_binfile_writer_commit(czk_binfile_writer *w, czk_error *e)
{
    int rc;

    end_section(w);
    if (!w->err.code && w->n_begun != w->n_sections)
        czk_binfile_writer_fail(w, -EINVAL, "%s: %u sections written but %u declared", w->path,
                                w->n_begun, w->n_sections);
    if (!w->err.code)
        flush_buf(w);
    if (!w->err.code && fsync(w->fd) < 0) {
        int err = errno;
        czk_binfile_writer_fail(w, -err, "%s: cannot fsync: %s", w->tmp, strerror(err));
    }
    if (!w->err.code && close(w->fd) < 0) {
        int err = errno;
        w->fd = -1;
        czk_binfile_writer_fail(w, -err, "%s: cannot close: %s", w->tmp, strerror(err));
    }
    w->fd = -1;
    if (!w->err.code && rename(w->tmp, w->path) < 0) {
        int err = errno;
        czk_binfile_writer_fail(w, -err, "%s: cannot rename %s over it: %s", w->path, w->tmp,
                                strerror(err));
    }
    if (w->err.code) {
        rc = czk_errorf(e, w->err.code, "%s", w->err.msg);
        czk_binfile_writer_abort(w);
        return rc;
    }
    rc = czk_fsync_parent(w->path, NULL);
    if (rc < 0)
        czk_errorf(e, rc, "%s: written, but cannot fsync its directory: %s", w->path,
                   strerror(-rc));
    writer_free(w);
    return rc;
}
