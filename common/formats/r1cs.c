/*
 * r1cs.c — circom constraint systems (.r1cs version 1): validating reader,
 * constraint walker, and the streaming writer used by gen-circuit.
 *
 *   section 1 (header, 64 bytes): u32 n8 (= 32) | prime r[32] | u32 nWires |
 *       u32 nPubOut | u32 nPubIn | u32 nPrvIn | u64 nLabels | u32 nConstraints
 *   section 2 (constraints): nConstraints x (A, B, C), each linear combination
 *       u32 nTerms | nTerms x { u32 wire | coef[32] standard form }
 *   section 3 (wire-to-label map, optional for the reader): nWires x u64 label
 *
 * circom writes the sections as 2, 1, 3.  The reader checks the whole of
 * section 2 once at open (term counts within the section, wire < nWires,
 * coefficients < r of the header's curve, no bytes left over), so czk_r1cs_foreach walks it
 * without further checks.  Terms are 36 bytes and unaligned: callbacks read
 * them through the packed czk_r1cs_term type.
 */
#include "common/formats/binfile.h"
#include "common/crypto/field.h"
#include "common/formats/formats.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define R1CS_HEADER_BYTES 64
#define TERM_BYTES ((uint64_t)sizeof(czk_r1cs_term))
_Static_assert(sizeof(czk_r1cs_term) == 36, "r1cs term is 36 bytes");

static const char LC_NAME[3] = {'A', 'B', 'C'};

/* check one linear combination at *pos of p[0..size); advances *pos */
static int check_lc(const czk_r1cs *r, const char *name, const uint8_t *p, uint64_t size,
                    uint64_t *pos, uint32_t ci, int which, czk_error *e)
{
    uint32_t nt;
    const uint8_t *t;

    if (size - *pos < 4)
        return czk_errorf(e, -EINVAL,
                          "%s: section 2 (constraints): constraint %u of %u, %c: section ends "
                          "before its term count (offset %llu of %llu)",
                          name, ci, r->n_constraints, LC_NAME[which], (unsigned long long)*pos,
                          (unsigned long long)size);
    nt = czk_le32(p + *pos);
    *pos += 4;
    if ((uint64_t)nt * TERM_BYTES > size - *pos)
        return czk_errorf(e, -EINVAL,
                          "%s: section 2 (constraints): constraint %u of %u, %c: %u terms need "
                          "%llu bytes but only %llu are left in the section",
                          name, ci, r->n_constraints, LC_NAME[which], nt,
                          (unsigned long long)nt * TERM_BYTES,
                          (unsigned long long)(size - *pos));
    t = p + *pos;
    for (uint32_t k = 0; k < nt; k++, t += TERM_BYTES) {
        uint32_t wire = czk_le32(t);

        if (wire >= r->n_wires)
            return czk_errorf(e, -EINVAL,
                              "%s: section 2 (constraints): constraint %u, %c term %u: wire %u is "
                              "not below nWires = %u",
                              name, ci, LC_NAME[which], k, wire, r->n_wires);
        if (!czk_binfile_scalar_ok(r->curve, t + 4))
            return czk_errorf(e, -EINVAL,
                              "%s: section 2 (constraints): constraint %u, %c term %u: "
                              "coefficient is not below r",
                              name, ci, LC_NAME[which], k);
    }
    *pos += (uint64_t)nt * TERM_BYTES;
    return 0;
}

static int r1cs_validate(czk_r1cs *r, const char *name, unsigned curves, czk_error *e)
{
    czk_binfile bf;
    const czk_binfile_section *s1, *s2, *s3;
    const uint8_t *p;
    uint64_t pos, n_io;
    int rc;

    rc = czk_binfile_parse(&bf, r->map, r->map_size, name, "r1cs", 1, e);
    if (rc)
        return rc;
    if ((rc = czk_binfile_require(&bf, 1, "header", &s1, e)) ||
        (rc = czk_binfile_require(&bf, 2, "constraints", &s2, e)))
        return rc;
    if ((rc = czk_binfile_field_curve(&bf, s1, R1CS_HEADER_BYTES, curves, "compile with circom -p bls12381",
                                      &r->curve, &p, e)))
        return rc;
    r->n_wires = czk_le32(p);
    r->n_pub_out = czk_le32(p + 4);
    r->n_pub_in = czk_le32(p + 8);
    r->n_prv_in = czk_le32(p + 12);
    r->n_labels = czk_le64(p + 16);
    r->n_constraints = czk_le32(p + 24);
    n_io = 1 + (uint64_t)r->n_pub_out + r->n_pub_in + r->n_prv_in;
    if (n_io > r->n_wires)
        return czk_errorf(e, -EINVAL,
                          "%s: section 1 (header): nWires = %u but the constant wire and the "
                          "inputs/outputs need %llu (1 + nPubOut %u + nPubIn %u + nPrvIn %u)",
                          name, r->n_wires, (unsigned long long)n_io, r->n_pub_out, r->n_pub_in,
                          r->n_prv_in);

    /* every constraint takes at least three term counts */
    if ((uint64_t)r->n_constraints * 12 > s2->size)
        return czk_errorf(e, -EINVAL,
                          "%s: section 2 (constraints): %llu bytes cannot hold nConstraints = %u "
                          "(at least 12 bytes each)",
                          name, (unsigned long long)s2->size, r->n_constraints);
    p = czk_binfile_payload(&bf, s2);
    pos = 0;
    for (uint32_t ci = 0; ci < r->n_constraints; ci++)
        for (int which = 0; which < 3; which++)
            if ((rc = check_lc(r, name, p, s2->size, &pos, ci, which, e)))
                return rc;
    if (pos != s2->size)
        return czk_errorf(e, -EINVAL,
                          "%s: section 2 (constraints): %llu bytes left after the %u constraints "
                          "of the header (section is %llu bytes)",
                          name, (unsigned long long)(s2->size - pos), r->n_constraints,
                          (unsigned long long)s2->size);
    r->constraints = p;
    r->constraints_size = s2->size;

    s3 = czk_binfile_find(&bf, 3);
    if (s3) {
        if (s3->size != (uint64_t)r->n_wires * 8)
            return czk_errorf(e, -EINVAL,
                              "%s: section 3 (wire-to-label map): %llu bytes, expected nWires * 8 "
                              "= %llu",
                              name, (unsigned long long)s3->size, (unsigned long long)r->n_wires * 8);
        p = czk_binfile_payload(&bf, s3);
        for (uint32_t i = 0; i < r->n_wires; i++) {
            uint64_t label = czk_le64(p + (uint64_t)i * 8);
            if (label >= r->n_labels)
                return czk_errorf(e, -EINVAL,
                                  "%s: section 3 (wire-to-label map): wire %u has label %llu, not "
                                  "below nLabels = %llu",
                                  name, i, (unsigned long long)label,
                                  (unsigned long long)r->n_labels);
        }
    }
    return 0;
}

int czk_r1cs_open_curves(czk_r1cs *r, const char *path, unsigned curves, czk_error *e)
{
    int rc;

    memset(r, 0, sizeof(*r));
    rc = czk_binfile_map_path(&r->map, &r->map_size, path, e);
    if (!rc)
        rc = r1cs_validate(r, path, curves, e);
    if (rc)
        czk_r1cs_close(r);
    return rc;
}

int czk_r1cs_open(czk_r1cs *r, const char *path, czk_error *e)
{
    return czk_r1cs_open_curves(r, path, CZK_CURVES_BLS12_381, e);
}

/* additive: the same checks for an already open descriptor (fuzzing, daemons) */
int czk_r1cs_open_fd(czk_r1cs *r, int fd, const char *name, czk_error *e)
{
    int rc;

    memset(r, 0, sizeof(*r));
    rc = czk_binfile_map_fd(&r->map, &r->map_size, fd, name, e);
    if (!rc)
        rc = r1cs_validate(r, name, CZK_CURVES_BLS12_381, e);
    if (rc)
        czk_r1cs_close(r);
    return rc;
}

void czk_r1cs_close(czk_r1cs *r)
{
    czk_binfile_unmap(r->map, r->map_size);
    memset(r, 0, sizeof(*r));
}

int czk_r1cs_foreach_chunk(const czk_r1cs *r, const czk_r1cs_chunk *c, czk_r1cs_constraint_fn cb, void *ctx)
{
    const uint8_t *p = r->constraints + c->pos;

    for (uint32_t ci = c->first; ci < c->first + c->count; ci++) {
        const czk_r1cs_term *lc[3];
        uint32_t n[3];
        int rc;

        for (int k = 0; k < 3; k++) {
            n[k] = czk_le32(p);
            lc[k] = (const czk_r1cs_term *)(p + 4);
            p += 4 + (size_t)n[k] * TERM_BYTES;
        }
        rc = cb(ctx, ci, lc[0], n[0], lc[1], n[1], lc[2], n[2]);
        if (rc)
            return rc;
    }
    return 0;
}

int czk_r1cs_foreach(const czk_r1cs *r, czk_r1cs_constraint_fn cb, void *ctx)
{
    const czk_r1cs_chunk all = { .first = 0, .count = r->n_constraints };

    return czk_r1cs_foreach_chunk(r, &all, cb, ctx);
}

void czk_r1cs_chunks(const czk_r1cs *r, czk_r1cs_chunk *chunks, size_t n, uint64_t *ab_total)
{
    const uint32_t per = (uint32_t)((r->n_constraints + n - 1) / (n ? n : 1));
    uint64_t pos = 0, ab = 0;
    uint32_t ci = 0;

    for (size_t i = 0; i < n; i++) {
        const uint32_t count = r->n_constraints - ci < per ? r->n_constraints - ci : per;

        chunks[i] = (czk_r1cs_chunk){ .first = ci, .count = count, .pos = pos, .ab_before = ab };
        for (uint32_t k = 0; k < count; k++) {
            for (int m = 0; m < 3; m++) {
                const uint32_t nt = czk_le32(r->constraints + pos);

                if (m < 2)
                    ab += nt;
                pos += 4 + (uint64_t)nt * TERM_BYTES;
            }
        }
        ci += count;
    }
    *ab_total = ab;
}

/* ---- streaming writer ---- */

struct czk_r1cs_writer {
    czk_binfile_writer *w;
    char path[4096];
    czk_curve_id curve;
    uint32_t n_wires, n_constraints;
    uint64_t n_constraints_off; /* file offset of the header's nConstraints */
};

int czk_r1cs_writer_open(czk_r1cs_writer **wrp, const char *path, uint32_t n_wires,
                         uint32_t n_pub_out, uint32_t n_pub_in, uint32_t n_prv_in, czk_error *e)
{
    return czk_r1cs_writer_open_curve(wrp, path, CZK_CURVE_BLS12_381, n_wires, n_pub_out, n_pub_in, n_prv_in, e);
}

int czk_r1cs_writer_open_curve(czk_r1cs_writer **wrp, const char *path, czk_curve_id curve, uint32_t n_wires,
                               uint32_t n_pub_out, uint32_t n_pub_in, uint32_t n_prv_in, czk_error *e)
{
    czk_r1cs_writer *wr;
    uint64_t n_io = 1 + (uint64_t)n_pub_out + n_pub_in + n_prv_in;
    int rc;

    *wrp = NULL;
    if (n_io > n_wires)
        return czk_errorf(e, -EINVAL,
                          "%s: nWires = %u is less than 1 + nPubOut + nPubIn + nPrvIn = %llu",
                          path, n_wires, (unsigned long long)n_io);
    wr = calloc(1, sizeof(*wr));
    if (!wr)
        return czk_errorf(e, -ENOMEM, "%s: out of memory for the r1cs writer", path);
    snprintf(wr->path, sizeof(wr->path), "%s", path);
    rc = czk_binfile_writer_open(&wr->w, path, "r1cs", 1, 3, e);
    if (rc) {
        free(wr);
        return rc;
    }
    wr->n_wires = n_wires;
    wr->curve = curve;
    czk_binfile_writer_begin_section(wr->w, 1, R1CS_HEADER_BYTES);
    czk_binfile_writer_u32(wr->w, CZK_FR_BYTES);
    if (curve == CZK_CURVE_BN254)
        czk_binfile_writer_write(wr->w, &CZK_BN254_FR_MOD, CZK_BN254_BYTES);
    else
        czk_binfile_writer_write(wr->w, &CZK_FR_MOD, CZK_FR_BYTES);
    czk_binfile_writer_u32(wr->w, n_wires);
    czk_binfile_writer_u32(wr->w, n_pub_out);
    czk_binfile_writer_u32(wr->w, n_pub_in);
    czk_binfile_writer_u32(wr->w, n_prv_in);
    czk_binfile_writer_u64(wr->w, n_wires); /* nLabels: labels are the wire ids */
    wr->n_constraints_off = czk_binfile_writer_tell(wr->w);
    czk_binfile_writer_u32(wr->w, 0);       /* nConstraints, patched at close */
    czk_binfile_writer_begin_section(wr->w, 2, UINT64_MAX);
    *wrp = wr;
    return 0;
}

static int write_lc(czk_r1cs_writer *wr, const czk_r1cs_term *t, uint32_t n, int which)
{
    for (uint32_t k = 0; k < n; k++) {
        if (t[k].wire >= wr->n_wires)
            return czk_binfile_writer_fail(wr->w, -EINVAL,
                                           "%s: constraint %u, %c term %u: wire %u is not below "
                                           "nWires = %u",
                                           wr->path, wr->n_constraints, LC_NAME[which], k,
                                           t[k].wire, wr->n_wires);
        if (!czk_binfile_scalar_ok(wr->curve, &t[k].coef))
            return czk_binfile_writer_fail(wr->w, -EINVAL,
                                           "%s: constraint %u, %c term %u: coefficient is not "
                                           "below r",
                                           wr->path, wr->n_constraints, LC_NAME[which], k);
    }
    czk_binfile_writer_u32(wr->w, n);
    return czk_binfile_writer_write(wr->w, t, (size_t)n * TERM_BYTES);
}

int czk_r1cs_writer_add(czk_r1cs_writer *wr, const czk_r1cs_term *a, uint32_t na,
                        const czk_r1cs_term *b, uint32_t nb, const czk_r1cs_term *c, uint32_t nc)
{
    int rc;

    if (wr->n_constraints == UINT32_MAX)
        return czk_binfile_writer_fail(wr->w, -EOVERFLOW, "%s: more than %u constraints",
                                       wr->path, UINT32_MAX);
    if ((rc = write_lc(wr, a, na, 0)) || (rc = write_lc(wr, b, nb, 1)) ||
        (rc = write_lc(wr, c, nc, 2)))
        return rc;
    wr->n_constraints++;
    return 0;
}

int czk_r1cs_writer_close(czk_r1cs_writer *wr, czk_error *e)
{
    int rc;

    czk_binfile_writer_begin_section(wr->w, 3, (uint64_t)wr->n_wires * 8);
    for (uint64_t i = 0; i < wr->n_wires; i++)
        czk_binfile_writer_u64(wr->w, i);
    czk_binfile_writer_patch(wr->w, wr->n_constraints_off, &wr->n_constraints, 4);
    rc = czk_binfile_writer_commit(wr->w, e);
    free(wr);
    return rc;
}
