/*
 * zkey.c — snarkjs Groth16 proving keys (.zkey version 1): validating reader
 * and writer.  Layout (docs/file-formats.md 4.3):
 *
 *   1 protocol (u32, 1 = groth16)
 *   2 header: u32 n8q | q[48] | u32 n8r | r[32] | u32 nVars | u32 nPublic |
 *     u32 domainSize | alpha1 | beta1 | beta2 | gamma2 | delta1 | delta2 (964 bytes)
 *   3 IC (nPublic+1 G1)      4 coefficients (u32 n | n x 44-byte entries)
 *   5 A (nVars G1)  6 B1 (nVars G1)  7 B2 (nVars G2)
 *   8 C (nVars-nPublic-1 G1)  9 H (domainSize G1)  10 MPC parameters
 *
 * Points are affine, coordinates little-endian Montgomery, infinity all-zero;
 * that is the czk_g1_aff / czk_g2_aff layout, so point sections are used in
 * place when 8-byte aligned in the mapping and otherwise copied once into an
 * aligned buffer (z->owned, freed by close).
 *
 * Before anything is trusted the reader checks: the container (binfile.c),
 * protocol, both primes equal BLS12-381's q and r, nVars/nPublic/domainSize
 * consistent with each other and with the sizes of sections 3-9, every
 * coefficient's matrix (0/1), row (< domainSize), wire (< nVars) and value
 * (< r), every point coordinate < q and every point on its curve (infinity
 * allowed).  Subgroup membership is not checked (snarkjs does not either);
 * the proof is verified with a pairing check before release anyway.  The
 * point checks run in parallel (czk_par_for) for big sections, and 8 points
 * at a time with AVX-512 IFMA where the CPU has it (fpx8.h); a point the
 * vector test does not pass (infinity, or a bad point) is looked at again by
 * the scalar check, which also words the error.
 * Section 10 is not needed for proving and is not read.
 */
#include "common/formats/binfile.h"
#include "common/crypto/curve.h"
#include "common/crypto/field.h"
#include "common/formats/formats.h"
#include "common/crypto/fpx8.h"
#include "common/crypto/par.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#define G1_BYTES ((uint64_t)sizeof(czk_g1_aff))
#define G2_BYTES ((uint64_t)sizeof(czk_g2_aff))
#define ZKEY_HEADER_BYTES (4 + 48 + 4 + 32 + 3 * 4 + 3 * 96 + 3 * 192)
_Static_assert(ZKEY_HEADER_BYTES == 964, "zkey header section is 964 bytes for BLS12-381");
#define MPC_EMPTY_BYTES (64 + 4)
#define PAR_MIN_POINTS 8192

/* ---- point checks ---- */

/* what is wrong with one point, or NULL when it is fine */
static const char *g1_problem(const czk_g1_aff *p)
{
    if (!czk_fp_is_canonical(&p->x))
        return "coordinate x is not below q";
    if (!czk_fp_is_canonical(&p->y))
        return "coordinate y is not below q";
    if (!czk_g1_aff_on_curve(p))
        return "not on the G1 curve y^2 = x^3 + 4";
    return NULL;
}

static const char *g2_problem(const czk_g2_aff *p)
{
    if (!czk_fp_is_canonical(&p->x.c0))
        return "coordinate x.c0 is not below q";
    if (!czk_fp_is_canonical(&p->x.c1))
        return "coordinate x.c1 is not below q";
    if (!czk_fp_is_canonical(&p->y.c0))
        return "coordinate y.c0 is not below q";
    if (!czk_fp_is_canonical(&p->y.c1))
        return "coordinate y.c1 is not below q";
    if (!czk_g2_aff_on_curve(p))
        return "not on the G2 curve y^2 = x^3 + 4(1+u)";
    return NULL;
}

#ifdef CZK_HAVE_FPX8
/* 8 points from p[0..7] (pointers into the section): lanes on the curve */
CZK_IFMA static __mmask8 g1_on_curve_x8(const char *const p[8], const czk_fpx8 *b)
{
    czk_fpx8 x, y, l, r;

    czk_fpx8_gather_p(&x, p, 0);
    czk_fpx8_gather_p(&y, p, sizeof(czk_fp));
    czk_fpx8_sqr(&l, &y);
    czk_fpx8_sqr(&r, &x);
    czk_fpx8_mul(&r, &r, &x);
    czk_fpx8_add(&r, &r, b);
    return czk_fpx8_eq(&l, &r);
}

CZK_IFMA static __mmask8 g2_on_curve_x8(const char *const p[8], const czk_fp2x8 *b)
{
    czk_fp2x8 x, y, l, r;

    czk_fp2x8_gather_p(&x, p, 0);
    czk_fp2x8_gather_p(&y, p, sizeof(czk_fp2));
    czk_fp2x8_sqr_ool(&l, &y);
    czk_fp2x8_sqr_ool(&r, &x);
    czk_fp2x8_mul_ool(&r, &r, &x);
    czk_fp2x8_add(&r, &r, b);
    return czk_fp2x8_eq(&l, &r);
}

/* the first point of [begin, end) with a problem, or end: blocks of 8 whose
 * coordinates are all below q go through the vector on-curve test */
CZK_IFMA static size_t pts_first_bad_x8(const void *pts, bool g2, size_t begin, size_t end)
{
    const size_t sz = g2 ? sizeof(czk_g2_aff) : sizeof(czk_g1_aff);
    czk_fp four;
    czk_fp2 four2;
    czk_fpx8 b1;
    czk_fp2x8 b2;
    size_t i = begin;

    czk_fp_from_u64(&four, 4);
    four2.c0 = four;
    four2.c1 = four;
    czk_fpx8_set1(&b1, &four);
    czk_fp2x8_set1(&b2, &four2); /* 4 (1 + u) */
    for (; i + 8 <= end; i += 8) {
        const char *p[8];
        bool canon = true;
        __mmask8 ok;
        int L;
        for (L = 0; L < 8; L++) {
            const czk_fp *c = (const czk_fp *)((const char *)pts + (i + L) * sz);
            p[L] = (const char *)c;
            for (int k = 0; k < (g2 ? 4 : 2); k++)
                canon &= czk_fp_is_canonical(&c[k]);
        }
        if (!canon)
            break; /* the scalar loop below words it */
        ok = g2 ? g2_on_curve_x8(p, &b2) : g1_on_curve_x8(p, &b1);
        if (ok == 0xff)
            continue;
        for (L = 0; L < 8; L++) {
            const void *pt = p[L];
            if (!(ok & (1u << L)) &&
                (g2 ? g2_problem(pt) : g1_problem(pt)))
                return i + (size_t)L;
        }
    }
    for (; i < end; i++)
        if (g2 ? g2_problem((const czk_g2_aff *)pts + i) : g1_problem((const czk_g1_aff *)pts + i))
            return i;
    return end;
}
#endif

struct pts_check {
    const void *pts;
    bool g2;
    _Atomic size_t first_bad; /* SIZE_MAX: none */
};

static void pts_check_range(void *ctx, size_t begin, size_t end, unsigned worker)
{
    struct pts_check *c = ctx;

#ifdef CZK_HAVE_FPX8
    if (czk_fpx8_enabled()) {
        size_t i = pts_first_bad_x8(c->pts, c->g2, begin, end), cur;
        if (i == end)
            return;
        cur = atomic_load(&c->first_bad);
        while (i < cur && !atomic_compare_exchange_weak(&c->first_bad, &cur, i))
            ;
        return;
    }
#endif
    for (size_t i = begin; i < end; i++) {
        const char *bad = c->g2 ? g2_problem((const czk_g2_aff *)c->pts + i)
                                : g1_problem((const czk_g1_aff *)c->pts + i);
        if (bad) {
            size_t cur = atomic_load(&c->first_bad);
            while (i < cur && !atomic_compare_exchange_weak(&c->first_bad, &cur, i))
                ;
            return; /* later points of this chunk cannot be the first */
        }
    }
}

static int check_points(const char *name, uint32_t sec, const char *what, const void *pts,
                        size_t n, bool g2, czk_error *e)
{
    struct pts_check c = {.pts = pts, .g2 = g2};
    size_t i;

    atomic_init(&c.first_bad, SIZE_MAX);
    if (n >= PAR_MIN_POINTS && czk_par_for(n, 0, pts_check_range, &c) == 0)
        ;
    else
        pts_check_range(&c, 0, n, 0);
    i = atomic_load(&c.first_bad);
    if (i == SIZE_MAX)
        return 0;
    return czk_errorf(e, -EINVAL, "%s: section %u (%s): point %zu of %zu: %s", name, sec, what, i,
                      n, g2 ? g2_problem((const czk_g2_aff *)pts + i)
                            : g1_problem((const czk_g1_aff *)pts + i));
}

struct point_section {
    uint32_t id;
    const char *what;
    uint64_t count;
    bool g2;
    const void **out;
};

/* size of a point section against the header's counts */
static int check_point_section_size(const czk_binfile *bf, const char *name,
                                    const struct point_section *ps, czk_error *e)
{
    const czk_binfile_section *s;
    uint64_t psize = ps->g2 ? G2_BYTES : G1_BYTES;
    int rc;

    if ((rc = czk_binfile_require(bf, ps->id, ps->what, &s, e)))
        return rc;
    if (s->size != ps->count * psize)
        return czk_errorf(e, -EINVAL,
                          "%s: section %u (%s): %llu bytes, expected %llu points of %llu bytes = "
                          "%llu (from the header's nVars/nPublic/domainSize)",
                          name, ps->id, ps->what, (unsigned long long)s->size,
                          (unsigned long long)ps->count, (unsigned long long)psize,
                          (unsigned long long)(ps->count * psize));
    return 0;
}

/* use a (size-checked) point section in place or copy it aligned, then check the points */
static int map_points(czk_zkey *z, const czk_binfile *bf, const char *name,
                      const struct point_section *ps, int *n_owned, czk_error *e)
{
    const czk_binfile_section *s = czk_binfile_find(bf, ps->id);
    const uint8_t *p = czk_binfile_payload(bf, s);

    if ((uintptr_t)p % _Alignof(czk_fp) != 0 && s->size) {
        void *copy = aligned_alloc(64, (s->size + 63) & ~(uint64_t)63);
        if (!copy)
            return czk_errorf(e, -ENOMEM, "%s: section %u (%s): out of memory copying %llu bytes",
                              name, ps->id, ps->what, (unsigned long long)s->size);
        memcpy(copy, p, s->size);
        z->owned[(*n_owned)++] = copy;
        p = copy;
    }
    *ps->out = p;
    return check_points(name, ps->id, ps->what, p, ps->count, ps->g2, e);
}

static int header_point(const char *name, const char *what, const uint8_t *src, void *dst,
                        bool g2, czk_error *e)
{
    const char *bad;

    memcpy(dst, src, g2 ? G2_BYTES : G1_BYTES);
    bad = g2 ? g2_problem(dst) : g1_problem(dst);
    if (bad)
        return czk_errorf(e, -EINVAL, "%s: section 2 (header): %s: %s", name, what, bad);
    return 0;
}

static const char *protocol_name(uint32_t p)
{
    switch (p) {
    case 2: return "plonk";
    case 10: return "fflonk";
    default: return "unknown";
    }
}

static int check_header(czk_zkey *z, const czk_binfile *bf, const char *name, czk_error *e)
{
    const czk_binfile_section *s;
    const uint8_t *p;
    uint32_t n8q, n8r;
    char what[64];
    int rc;

    if ((rc = czk_binfile_require(bf, 1, "protocol", &s, e)))
        return rc;
    if (s->size != 4)
        return czk_errorf(e, -EINVAL, "%s: section 1 (protocol): %llu bytes, expected 4", name,
                          (unsigned long long)s->size);
    p = czk_binfile_payload(bf, s);
    if (czk_le32(p) != 1)
        return czk_errorf(e, -EINVAL,
                          "%s: section 1 (protocol): protocol %u (%s) is not groth16 (1)", name,
                          czk_le32(p), protocol_name(czk_le32(p)));

    if ((rc = czk_binfile_require(bf, 2, "header", &s, e)))
        return rc;
    p = czk_binfile_payload(bf, s);
    if (s->size < 4)
        return czk_errorf(e, -EINVAL, "%s: section 2 (header): %llu bytes, too short for n8q",
                          name, (unsigned long long)s->size);
    n8q = czk_le32(p);
    if (n8q != CZK_FP_BYTES)
        return czk_errorf(e, -EINVAL,
                          "%s: section 2 (header): prime q is not BLS12-381's (found a %s field, "
                          "n8q=%u; expected n8q=48)",
                          name, n8q == 32 ? "bn128-sized" : "wrong-sized", n8q);
    if (s->size != ZKEY_HEADER_BYTES)
        return czk_errorf(e, -EINVAL, "%s: section 2 (header): %llu bytes, expected %d", name,
                          (unsigned long long)s->size, ZKEY_HEADER_BYTES);
    if (memcmp(p + 4, &CZK_FP_MOD, CZK_FP_BYTES) != 0)
        return czk_errorf(e, -EINVAL,
                          "%s: section 2 (header): prime q is not BLS12-381's (a different "
                          "48-byte prime)",
                          name);
    p += 4 + CZK_FP_BYTES;
    n8r = czk_le32(p);
    if (n8r != CZK_FR_BYTES)
        return czk_errorf(e, -EINVAL,
                          "%s: section 2 (header): n8r is %u, expected 32 (BLS12-381's r)", name,
                          n8r);
    if (memcmp(p + 4, &CZK_FR_MOD, CZK_FR_BYTES) != 0) {
        czk_binfile_describe_prime(what, sizeof(what), p + 4, n8r);
        return czk_errorf(e, -EINVAL,
                          "%s: section 2 (header): prime r is not BLS12-381's (found %s)", name,
                          what);
    }
    p += 4 + CZK_FR_BYTES;
    z->n_vars = czk_le32(p);
    z->n_public = czk_le32(p + 4);
    z->domain_size = czk_le32(p + 8);
    p += 12;
    if ((uint64_t)z->n_public + 1 > z->n_vars)
        return czk_errorf(e, -EINVAL,
                          "%s: section 2 (header): nVars = %u, expected at least nPublic + 1 = %llu",
                          name, z->n_vars, (unsigned long long)z->n_public + 1);
    if (z->domain_size == 0 || (z->domain_size & (z->domain_size - 1)))
        return czk_errorf(e, -EINVAL,
                          "%s: section 2 (header): domainSize = %u, expected a power of two", name,
                          z->domain_size);
    if ((uint64_t)z->n_public + 1 > z->domain_size)
        return czk_errorf(e, -EINVAL,
                          "%s: section 2 (header): domainSize = %u, expected at least nPublic + 1 "
                          "= %llu (the public-input rows)",
                          name, z->domain_size, (unsigned long long)z->n_public + 1);
    z->log_domain = (uint32_t)__builtin_ctz(z->domain_size);
    if ((rc = header_point(name, "alpha1", p, &z->alpha1, false, e)) ||
        (rc = header_point(name, "beta1", p + 96, &z->beta1, false, e)) ||
        (rc = header_point(name, "beta2", p + 192, &z->beta2, true, e)) ||
        (rc = header_point(name, "gamma2", p + 384, &z->gamma2, true, e)) ||
        (rc = header_point(name, "delta1", p + 576, &z->delta1, false, e)) ||
        (rc = header_point(name, "delta2", p + 672, &z->delta2, true, e)))
        return rc;
    return 0;
}

static int check_coefs(czk_zkey *z, const czk_binfile *bf, const char *name, czk_error *e)
{
    const czk_binfile_section *s;
    const uint8_t *p;
    uint32_t n;
    int rc;

    if ((rc = czk_binfile_require(bf, 4, "coefficients", &s, e)))
        return rc;
    p = czk_binfile_payload(bf, s);
    if (s->size < 4)
        return czk_errorf(e, -EINVAL,
                          "%s: section 4 (coefficients): %llu bytes, too short for nCoefs", name,
                          (unsigned long long)s->size);
    n = czk_le32(p);
    if (s->size != 4 + (uint64_t)n * sizeof(czk_zkey_coef))
        return czk_errorf(e, -EINVAL,
                          "%s: section 4 (coefficients): %llu bytes, expected 4 + nCoefs * 44 = "
                          "%llu (nCoefs = %u)",
                          name, (unsigned long long)s->size,
                          4 + (unsigned long long)n * sizeof(czk_zkey_coef), n);
    z->coefs = (const czk_zkey_coef *)(p + 4);
    z->n_coefs = n;
    for (uint32_t i = 0; i < n; i++) {
        const czk_zkey_coef *c = &z->coefs[i];
        czk_fr v;

        if (c->matrix > 1)
            return czk_errorf(e, -EINVAL,
                              "%s: section 4 (coefficients): entry %u: matrix %u, expected 0 (A) "
                              "or 1 (B)",
                              name, i, c->matrix);
        if (c->constraint >= z->domain_size)
            return czk_errorf(e, -EINVAL,
                              "%s: section 4 (coefficients): entry %u: constraint %u is not below "
                              "domainSize = %u",
                              name, i, c->constraint, z->domain_size);
        if (c->signal >= z->n_vars)
            return czk_errorf(e, -EINVAL,
                              "%s: section 4 (coefficients): entry %u: signal %u is not below "
                              "nVars = %u",
                              name, i, c->signal, z->n_vars);
        memcpy(&v, &c->value, sizeof(v));
        if (!czk_fr_is_canonical(&v))
            return czk_errorf(e, -EINVAL,
                              "%s: section 4 (coefficients): entry %u: value is not below r",
                              name, i);
    }
    return 0;
}

static int zkey_validate(czk_zkey *z, const char *name, czk_error *e)
{
    czk_binfile bf;
    int rc, n_owned = 0;
    uint64_t nv, np;

    rc = czk_binfile_parse(&bf, z->map, z->map_size, name, "zkey", 1, e);
    if (rc)
        return rc;
    if ((rc = check_header(z, &bf, name, e)))
        return rc;
    nv = z->n_vars;
    np = z->n_public;
    const struct point_section ps[] = {
        {3, "IC", np + 1, false, (const void **)&z->ic},
        {5, "A", nv, false, (const void **)&z->a},
        {6, "B1", nv, false, (const void **)&z->b1},
        {7, "B2", nv, true, (const void **)&z->b2},
        {8, "C", nv - np - 1, false, (const void **)&z->c},
        {9, "H", z->domain_size, false, (const void **)&z->h},
    };
    _Static_assert(sizeof(ps) / sizeof(ps[0]) <= sizeof(z->owned) / sizeof(z->owned[0]),
                   "one owned buffer per point section");
    /* the cheap checks of every section first, then the points */
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
        if ((rc = check_point_section_size(&bf, name, &ps[i], e)))
            return rc;
    if ((rc = check_coefs(z, &bf, name, e)))
        return rc;
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
        if ((rc = map_points(z, &bf, name, &ps[i], &n_owned, e)))
            return rc;
    return 0;
}

int czk_zkey_open_fd(czk_zkey *z, int fd, const char *name, czk_error *e)
{
    int rc;

    memset(z, 0, sizeof(*z));
    rc = czk_binfile_map_fd(&z->map, &z->map_size, fd, name, e);
    if (!rc)
        rc = zkey_validate(z, name, e);
    if (rc)
        czk_zkey_close(z);
    return rc;
}

int czk_zkey_open(czk_zkey *z, const char *path, czk_error *e)
{
    int rc;

    memset(z, 0, sizeof(*z));
    rc = czk_binfile_map_path(&z->map, &z->map_size, path, e);
    if (!rc)
        rc = zkey_validate(z, path, e);
    if (rc)
        czk_zkey_close(z);
    return rc;
}

void czk_zkey_close(czk_zkey *z)
{
    czk_binfile_unmap(z->map, z->map_size);
    for (size_t i = 0; i < sizeof(z->owned) / sizeof(z->owned[0]); i++)
        free(z->owned[i]);
    memset(z, 0, sizeof(*z));
}

/* ---- writer ---- */

static int check_spec(const char *path, const czk_zkey_spec *s, czk_error *e)
{
    if ((uint64_t)s->n_public + 1 > s->n_vars)
        return czk_errorf(e, -EINVAL, "%s: nVars = %u, expected at least nPublic + 1 = %llu",
                          path, s->n_vars, (unsigned long long)s->n_public + 1);
    if (s->domain_size == 0 || (s->domain_size & (s->domain_size - 1)) ||
        (uint64_t)s->n_public + 1 > s->domain_size)
        return czk_errorf(e, -EINVAL,
                          "%s: domainSize = %u, expected a power of two of at least nPublic + 1",
                          path, s->domain_size);
    if (!s->ic || !s->a || !s->b1 || !s->b2 || !s->h || (!s->c && s->n_vars > s->n_public + 1) ||
        (!s->coefs && s->n_coefs))
        return czk_errorf(e, -EINVAL, "%s: a point or coefficient array is missing", path);
    for (uint32_t i = 0; i < s->n_coefs; i++) {
        const czk_zkey_coef *c = &s->coefs[i];
        czk_fr v;

        memcpy(&v, &c->value, sizeof(v));
        if (c->matrix > 1 || c->constraint >= s->domain_size || c->signal >= s->n_vars ||
            !czk_fr_is_canonical(&v))
            return czk_errorf(e, -EINVAL,
                              "%s: coefficient %u: (matrix %u, constraint %u, signal %u) out of "
                              "range for domainSize %u, nVars %u, or value not below r",
                              path, i, c->matrix, c->constraint, c->signal, s->domain_size,
                              s->n_vars);
    }
    return 0;
}

int czk_zkey_write(const char *path, const czk_zkey_spec *s, czk_error *e)
{
    czk_binfile_writer *w;
    uint64_t nv = s->n_vars, np = s->n_public;
    int rc;

    if ((rc = check_spec(path, s, e)))
        return rc;
    rc = czk_binfile_writer_open(&w, path, "zkey", 1, 10, e);
    if (rc)
        return rc;
    czk_binfile_writer_begin_section(w, 1, 4);
    czk_binfile_writer_u32(w, 1); /* groth16 */

    czk_binfile_writer_begin_section(w, 2, ZKEY_HEADER_BYTES);
    czk_binfile_writer_u32(w, CZK_FP_BYTES);
    czk_binfile_writer_write(w, &CZK_FP_MOD, CZK_FP_BYTES);
    czk_binfile_writer_u32(w, CZK_FR_BYTES);
    czk_binfile_writer_write(w, &CZK_FR_MOD, CZK_FR_BYTES);
    czk_binfile_writer_u32(w, s->n_vars);
    czk_binfile_writer_u32(w, s->n_public);
    czk_binfile_writer_u32(w, s->domain_size);
    czk_binfile_writer_write(w, &s->alpha1, G1_BYTES);
    czk_binfile_writer_write(w, &s->beta1, G1_BYTES);
    czk_binfile_writer_write(w, &s->beta2, G2_BYTES);
    czk_binfile_writer_write(w, &s->gamma2, G2_BYTES);
    czk_binfile_writer_write(w, &s->delta1, G1_BYTES);
    czk_binfile_writer_write(w, &s->delta2, G2_BYTES);

    czk_binfile_writer_begin_section(w, 3, (np + 1) * G1_BYTES);
    czk_binfile_writer_write(w, s->ic, (np + 1) * G1_BYTES);

    czk_binfile_writer_begin_section(w, 4, 4 + (uint64_t)s->n_coefs * sizeof(czk_zkey_coef));
    czk_binfile_writer_u32(w, s->n_coefs);
    czk_binfile_writer_write(w, s->coefs, (size_t)s->n_coefs * sizeof(czk_zkey_coef));

    czk_binfile_writer_begin_section(w, 5, nv * G1_BYTES);
    czk_binfile_writer_write(w, s->a, nv * G1_BYTES);
    czk_binfile_writer_begin_section(w, 6, nv * G1_BYTES);
    czk_binfile_writer_write(w, s->b1, nv * G1_BYTES);
    czk_binfile_writer_begin_section(w, 7, nv * G2_BYTES);
    czk_binfile_writer_write(w, s->b2, nv * G2_BYTES);
    czk_binfile_writer_begin_section(w, 8, (nv - np - 1) * G1_BYTES);
    if (nv - np - 1)
        czk_binfile_writer_write(w, s->c, (nv - np - 1) * G1_BYTES);
    czk_binfile_writer_begin_section(w, 9, (uint64_t)s->domain_size * G1_BYTES);
    czk_binfile_writer_write(w, s->h, (uint64_t)s->domain_size * G1_BYTES);

    /* MPC parameters: csHash (zeros: not computed) and no contributions;
     * snarkjs readMPCParams reads exactly this, prove/verify never look. */
    czk_binfile_writer_begin_section(w, 10, MPC_EMPTY_BYTES);
    czk_binfile_writer_zeros(w, MPC_EMPTY_BYTES);
    return czk_binfile_writer_commit(w, e);
}
