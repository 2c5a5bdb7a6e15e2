/*
 * wtns.c — snarkjs witness files (.wtns version 2), reader and atomic writer.
 *
 *   section 1 (header):  u32 n8 (= 32) | prime r[32] LE | u32 nWitness
 *   section 2 (witness): nWitness x value[32], standard form LE, value[0] = 1
 *
 * The reader maps the file and checks the container, that the prime is
 * BLS12-381's r (or BN254's, when the caller accepts it: the curve), the
 * section sizes against nWitness, every value < r and w[0] == 1.  Values are
 * used in place when section 2 is 8-byte aligned in the mapping; a snarkjs
 * file puts it at offset 76, so usually it is copied once into an aligned
 * buffer owned by the czk_wtns, or into the caller's (czk_wtns_load_into).
 */
#include "common/formats/binfile.h"
#include "common/crypto/bn254_field.h"
#include "common/crypto/field.h"
#include "common/formats/formats.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WTNS_HEADER_BYTES (4 + CZK_FR_BYTES + 4)

/* w[0] must be the integer 1 (standard form) */
static const czk_fr FR_STD_ONE = {{1, 0, 0, 0}};

/* the container, the header and section 2's size; w->raw points at the values */
static int wtns_header(czk_wtns *w, const char *name, unsigned curves, czk_error *e)
{
    czk_binfile bf;
    const czk_binfile_section *s1, *s2;
    const uint8_t *p;
    uint32_t n;
    int rc;

    rc = czk_binfile_parse(&bf, w->map, w->map_size, name, "wtns", 2, e);
    if (rc)
        return rc;
    if ((rc = czk_binfile_require(&bf, 1, "header", &s1, e)) ||
        (rc = czk_binfile_require(&bf, 2, "witness", &s2, e)))
        return rc;
    if ((rc = czk_binfile_field_curve(&bf, s1, WTNS_HEADER_BYTES, curves, NULL, &w->curve, &p, e)))
        return rc;
    n = czk_le32(p);
    if (n == 0)
        return czk_errorf(e, -EINVAL,
                          "%s: section 1 (header): nWitness is 0, expected at least 1 (w[0] = 1)",
                          name);
    if (s2->size != (uint64_t)n * CZK_FR_BYTES)
        return czk_errorf(e, -EINVAL,
                          "%s: section 2 (witness): %llu bytes, expected nWitness * 32 = %llu "
                          "(nWitness = %u)",
                          name, (unsigned long long)s2->size,
                          (unsigned long long)n * CZK_FR_BYTES, n);
    w->raw = czk_binfile_payload(&bf, s2);
    w->n_witness = n;
    return 0;
}

/* every value below r and w[0] == 1, where w->w points */
static int wtns_check_values(const czk_wtns *w, const char *name, czk_error *e)
{
    for (uint32_t i = 0; i < w->n_witness; i++)
        if (!czk_binfile_scalar_ok(w->curve, &w->w[i]))
            return czk_errorf(e, -EINVAL,
                              "%s: section 2 (witness): value %u is not below r (not a canonical "
                              "%s scalar)",
                              name, i, w->curve == CZK_CURVE_BN254 ? "BN254" : "BLS12-381");
    if (memcmp(&w->w[0], &FR_STD_ONE, sizeof(FR_STD_ONE)) != 0)
        return czk_errorf(e, -EINVAL, "%s: section 2 (witness): w[0] is not 1", name);
    return 0;
}

/* the values in place (aligned) or in a copy the czk_wtns owns, then checked */
static int wtns_load_own(czk_wtns *w, const char *name, czk_error *e)
{
    if ((uintptr_t)w->raw % _Alignof(czk_fr) == 0) {
        w->w = (const czk_fr *)w->raw;
    } else {
        void *copy = aligned_alloc(64, ((size_t)w->n_witness * CZK_FR_BYTES + 63) & ~(size_t)63);
        if (!copy)
            return czk_errorf(e, -ENOMEM, "%s: out of memory copying %u witness values", name, w->n_witness);
        memcpy(copy, w->raw, (size_t)w->n_witness * CZK_FR_BYTES);
        w->owned = copy;
        w->w = copy;
    }
    return wtns_check_values(w, name, e);
}

int czk_wtns_open_header(czk_wtns *w, const char *path, unsigned curves, czk_error *e)
{
    int rc;

    memset(w, 0, sizeof(*w));
    rc = czk_binfile_map_path(&w->map, &w->map_size, path, e);
    if (!rc)
        rc = wtns_header(w, path, curves, e);
    if (rc)
        czk_wtns_close(w);
    return rc;
}

int czk_wtns_load_into(czk_wtns *w, void *dst, size_t dst_bytes, const char *name, czk_error *e)
{
    size_t bytes = (size_t)w->n_witness * CZK_FR_BYTES;

    if (w->w || !w->raw)
        return czk_errorf(e, -EINVAL, "%s: witness values already loaded, or the header not read", name);
    if ((uintptr_t)dst % _Alignof(czk_fr) || dst_bytes < bytes)
        return czk_errorf(e, -EINVAL, "%s: %u witness values do not fit a %zu-byte buffer at %p", name,
                          w->n_witness, dst_bytes, dst);
    memcpy(dst, w->raw, bytes);
    w->w = dst;
    return wtns_check_values(w, name, e);
}

int czk_wtns_open_fd_curves(czk_wtns *w, int fd, const char *name, unsigned curves, czk_error *e)
{
    int rc;

    memset(w, 0, sizeof(*w));
    rc = czk_binfile_map_fd(&w->map, &w->map_size, fd, name, e);
    if (!rc)
        rc = wtns_header(w, name, curves, e);
    if (!rc)
        rc = wtns_load_own(w, name, e);
    if (rc)
        czk_wtns_close(w);
    return rc;
}

int czk_wtns_open_fd(czk_wtns *w, int fd, const char *name, czk_error *e)
{
    return czk_wtns_open_fd_curves(w, fd, name, CZK_CURVES_BLS12_381, e);
}

int czk_wtns_open_curves(czk_wtns *w, const char *path, unsigned curves, czk_error *e)
{
    int rc = czk_wtns_open_header(w, path, curves, e);

    if (!rc && (rc = wtns_load_own(w, path, e)))
        czk_wtns_close(w);
    return rc;
}

int czk_wtns_open(czk_wtns *w, const char *path, czk_error *e)
{
    return czk_wtns_open_curves(w, path, CZK_CURVES_BLS12_381, e);
}

void czk_wtns_close(czk_wtns *w)
{
    czk_binfile_unmap(w->map, w->map_size);
    if (w->owned) /* the witness is secret: wipe the copy */
        explicit_bzero(w->owned, (size_t)w->n_witness * CZK_FR_BYTES);
    free(w->owned);
    memset(w, 0, sizeof(*w));
}

static int wtns_write(const char *path, czk_curve_id curve, const void *w_std, uint32_t n, czk_error *e)
{
    czk_binfile_writer *wr;
    bool bn = curve == CZK_CURVE_BN254;
    int rc;

    if (n == 0)
        return czk_errorf(e, -EINVAL, "%s: a witness needs at least w[0] = 1", path);
    if (memcmp(w_std, &FR_STD_ONE, sizeof(FR_STD_ONE)) != 0)
        return czk_errorf(e, -EINVAL, "%s: w[0] must be 1 (standard form)", path);
    for (uint32_t i = 0; i < n; i++)
        if (!czk_binfile_scalar_ok(curve, (const uint8_t *)w_std + (size_t)i * CZK_FR_BYTES))
            return czk_errorf(e, -EINVAL, "%s: witness value %u is not below r", path, i);
    rc = czk_binfile_writer_open(&wr, path, "wtns", 2, 2, e);
    if (rc)
        return rc;
    czk_binfile_writer_begin_section(wr, 1, WTNS_HEADER_BYTES);
    czk_binfile_writer_u32(wr, CZK_FR_BYTES);
    if (bn)
        czk_binfile_writer_write(wr, &CZK_BN254_FR_MOD, CZK_BN254_BYTES);
    else
        czk_binfile_writer_write(wr, &CZK_FR_MOD, CZK_FR_BYTES);
    czk_binfile_writer_u32(wr, n);
    czk_binfile_writer_begin_section(wr, 2, (uint64_t)n * CZK_FR_BYTES);
    czk_binfile_writer_write(wr, w_std, (size_t)n * CZK_FR_BYTES);
    return czk_binfile_writer_commit(wr, e);
}

int czk_wtns_write(const char *path, const czk_fr *w_std, uint32_t n, czk_error *e)
{
    return wtns_write(path, CZK_CURVE_BLS12_381, w_std, n, e);
}

int czk_wtns_write_bn254(const char *path, const czk_bn254_fr *w_std, uint32_t n, czk_error *e)
{
    return wtns_write(path, CZK_CURVE_BN254, w_std, n, e);
}
