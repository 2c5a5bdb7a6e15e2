/*
 * zkey.c — snarkjs Groth16 proving keys (.zkey version 1): validating reader
 * and writer.  Layout (docs/file-formats.md 4.3):
 *
 *   1 protocol (u32, 1 = groth16)
 *   2 header: u32 n8q | q[n8q] | u32 n8r | r[32] | u32 nVars | u32 nPublic |
 *     u32 domainSize | alpha1 | beta1 | beta2 | gamma2 | delta1 | delta2
 *     (964 bytes for BLS12-381, n8q = 48; 660 for BN254, n8q = 32)
 *   3 IC (nPublic+1 G1)      4 coefficients (u32 n | n x 44-byte entries)
 *   5 A (nVars G1)  6 B1 (nVars G1)  7 B2 (nVars G2)
 *   8 C (nVars-nPublic-1 G1)  9 H (domainSize G1)  10 MPC parameters
 *
 * Points are affine, coordinates little-endian Montgomery, infinity all-zero;
 * that is the czk_g1_aff / czk_g2_aff layout (czk_bn254_g1_aff / _g2_aff for
 * a BN254 key), so point sections are used in place when 8-byte aligned in
 * the mapping and otherwise copied once into an aligned buffer (z->owned[0],
 * one for all such sections, freed by close).  A snarkjs key's sections
 * alternate between 4 and 0 mod 8 (44-byte coefficients, 12-byte section
 * headers), so about half of the point bytes are copied.  Fresh anonymous
 * memory is what costs there (a 4 KiB page fault is ~10 us in a VM, the
 * memcpy itself little), so a buffer of 1 MiB or more is its own 2 MiB
 * aligned mapping with MADV_HUGEPAGE, and each section is copied in the
 * parallel pass that checks its points, block by block, so that the check
 * reads what was just written while it is in cache.
 *
 * Before anything is trusted the reader checks: the container (binfile.c),
 * protocol, both primes equal BLS12-381's q and r (or BN254's, when the
 * caller accepts that curve), nVars/nPublic/domainSize
 * consistent with each other and with the sizes of sections 3-9, every
 * coefficient's matrix (0/1), row (< domainSize), wire (< nVars) and value
 * (< r), every point coordinate < q and every point on its curve (infinity
 * allowed).  Subgroup membership is not checked (snarkjs does not either);
 * the proof is verified with a pairing check before release anyway.  The
 * point checks run in parallel (czk_par_for) for big sections, and 8 points
 * at a time with AVX-512 IFMA where the CPU has it (fpx8.h, bn254_fpx8.h);
 * a point the vector test does not pass (infinity, or a bad point) is looked
 * at again by the scalar check, which also words the error.
 * Section 10 is not needed for proving and is not read.
 */
#include "common/formats/binfile.h"
#include "common/crypto/bn254_curve.h"
#include "common/crypto/curve.h"
#include "common/crypto/field.h"
#include "common/formats/formats.h"
#include "common/base/bigbuf.h"
#include "common/crypto/fpx8.h"
#include "common/crypto/bn254_fpx8.h"
#include "common/crypto/par.h"
#include "common/base/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define G1_BYTES ((uint64_t)sizeof(czk_g1_aff))
#define G2_BYTES ((uint64_t)sizeof(czk_g2_aff))
#define ZKEY_HEADER_BYTES (4 + 48 + 4 + 32 + 3 * 4 + 3 * 96 + 3 * 192)
_Static_assert(ZKEY_HEADER_BYTES == 964, "zkey header section is 964 bytes for BLS12-381");
#define BN_G1_BYTES ((uint64_t)sizeof(czk_bn254_g1_aff))
#define BN_G2_BYTES ((uint64_t)sizeof(czk_bn254_g2_aff))
#define BN_ZKEY_HEADER_BYTES (4 + 32 + 4 + 32 + 3 * 4 + 3 * 64 + 3 * 128)
_Static_assert(BN_ZKEY_HEADER_BYTES == 660, "zkey header section is 660 bytes for BN254");

/* the four kinds of points a zkey holds: curve and group */
enum pt_kind { PT_G1, PT_G2, PT_BN_G1, PT_BN_G2 };

static enum pt_kind pt_kind_of(czk_curve_id curve, bool g2)
{
    if (curve == CZK_CURVE_BN254)
        return g2 ? PT_BN_G2 : PT_BN_G1;
    return g2 ? PT_G2 : PT_G1;
}

static uint64_t pt_bytes(enum pt_kind k)
{
    static const uint64_t b[] = {G1_BYTES, G2_BYTES, BN_G1_BYTES, BN_G2_BYTES};
    return b[k];
}
#define MPC_EMPTY_BYTES (64 + 4)
#define PAR_MIN_POINTS 8192

/* ---- point checks ---- */

/* a coordinate is below q (CV##fp_is_canonical), the common case decided
 * inline: a top limb below q's */
static inline bool fp_ok(const czk_fp *x)
{
    return x->l[CZK_FP_LIMBS - 1] < CZK_FP_MOD.l[CZK_FP_LIMBS - 1] || czk_fp_is_canonical(x);
}

static inline bool bn_fp_ok(const czk_bn254_fp *x)
{
    return x->l[CZK_BN254_LIMBS - 1] < CZK_BN254_FP_MOD.l[CZK_BN254_LIMBS - 1] || czk_bn254_fp_is_canonical(x);
}

/* POINT_PROBLEMS(PFX, CV, CURVE): PFX##g1_problem and PFX##g2_problem, what
 * is wrong with one point of the curve whose names start with CV (czk_,
 * czk_bn254_), or NULL when it is fine; CURVE ("" or "BN254 ") and the
 * equations word the messages */
#define POINT_PROBLEMS(PFX, CV, CURVE, G1_EQ, G2_EQ)                                   \
    static const char *PFX##g1_problem(const CV##g1_aff *p)                            \
    {                                                                                  \
        if (!PFX##fp_ok(&p->x))                                                        \
            return "coordinate x is not below q";                                      \
        if (!PFX##fp_ok(&p->y))                                                        \
            return "coordinate y is not below q";                                      \
        if (!CV##g1_aff_on_curve(p))                                                   \
            return "not on the " CURVE "G1 curve " G1_EQ;                              \
        return NULL;                                                                   \
    }                                                                                  \
    static const char *PFX##g2_problem(const CV##g2_aff *p)                            \
    {                                                                                  \
        static const char *const what[4] = {"coordinate x.c0 is not below q",          \
                                            "coordinate x.c1 is not below q",          \
                                            "coordinate y.c0 is not below q",          \
                                            "coordinate y.c1 is not below q"};         \
        const CV##fp *c[4] = {&p->x.c0, &p->x.c1, &p->y.c0, &p->y.c1};                 \
        for (int k = 0; k < 4; k++)                                                    \
            if (!PFX##fp_ok(c[k]))                                                     \
                return what[k];                                                        \
        if (!CV##g2_aff_on_curve(p))                                                   \
            return "not on the " CURVE "G2 curve " G2_EQ;                              \
        return NULL;                                                                   \
    }
POINT_PROBLEMS(, czk_, "", "y^2 = x^3 + 4", "y^2 = x^3 + 4(1+u)")
POINT_PROBLEMS(bn_, czk_bn254_, "BN254 ", "y^2 = x^3 + 3", "y^2 = x^3 + 3/(9+u)")
#undef POINT_PROBLEMS

/* point i of an array of kind k */
static const char *pt_problem(enum pt_kind k, const void *pts, size_t i)
{
    switch (k) {
    case PT_G1: return g1_problem((const czk_g1_aff *)pts + i);
    case PT_G2: return g2_problem((const czk_g2_aff *)pts + i);
    case PT_BN_G1: return bn_g1_problem((const czk_bn254_g1_aff *)pts + i);
    case PT_BN_G2: return bn_g2_problem((const czk_bn254_g2_aff *)pts + i);
    }
    return "unknown point kind";
}

#ifdef CZK_HAVE_FPX8
/*
 * X8_CHECKS(PFX, CV, X, X2, FP): PFX##first_bad_x8(pts, g2, begin, end), the
 * first point of [begin, end) with a problem, or end, for the curve whose
 * names start with CV, eight points at a time with the IFMA types X (Fp) and
 * X2 (Fp2), FP the Fp type: blocks of 8 whose coordinates are all below q go
 * through the vector on-curve test (b1, b2: the curve's b in G1 and G2 as
 * PFX##x8_b sets them); a lane that fails it (infinity, or a bad point) is
 * looked at again by the scalar check, as is every point of a block with a
 * coordinate not below q, and of the tail.
 */
#define X8_CHECKS(PFX, CV, X, X2, FP)                                                             \
    CZK_IFMA static __mmask8 PFX##g1_on_curve_x8(const char *const p[8], const X##8 *b)         \
    {                                                                                             \
        X##8 x, y, l, r;                                                                          \
        X##8_gather_p(&x, p, 0);                                                                  \
        X##8_gather_p(&y, p, sizeof(FP));                                                         \
        X##8_sqr(&l, &y);                                                                         \
        X##8_sqr(&r, &x);                                                                         \
        X##8_mul(&r, &r, &x);                                                                     \
        X##8_add(&r, &r, b);                                                                      \
        return X##8_eq(&l, &r);                                                                   \
    }                                                                                             \
    CZK_IFMA static __mmask8 PFX##g2_on_curve_x8(const char *const p[8], const X2##8 *b)        \
    {                                                                                             \
        X2##8 x, y, l, r;                                                                         \
        X2##8_gather_p(&x, p, 0);                                                                 \
        X2##8_gather_p(&y, p, 2 * sizeof(FP));                                                    \
        X2##8_sqr_ool(&l, &y);                                                                    \
        X2##8_sqr_ool(&r, &x);                                                                    \
        X2##8_mul_ool(&r, &r, &x);                                                                \
        X2##8_add(&r, &r, b);                                                                     \
        return X2##8_eq(&l, &r);                                                                  \
    }                                                                                             \
    CZK_IFMA static size_t PFX##first_bad_x8(const void *pts, bool g2, size_t begin, size_t end) \
    {                                                                                             \
        const size_t sz = g2 ? sizeof(CV##g2_aff) : sizeof(CV##g1_aff);                           \
        X##8 b1;                                                                                  \
        X2##8 b2;                                                                                 \
        size_t i = begin;                                                                         \
        PFX##x8_b(&b1, &b2);                                                                      \
        for (; i + 8 <= end; i += 8) {                                                            \
            const char *p[8];                                                                     \
            bool canon = true;                                                                    \
            __mmask8 ok;                                                                          \
            int L;                                                                                \
            for (L = 0; L < 8; L++) {                                                             \
                const FP *c = (const FP *)((const char *)pts + (i + L) * sz);                     \
                p[L] = (const char *)c;                                                           \
                for (int k = 0; k < (g2 ? 4 : 2); k++)                                            \
                    canon &= PFX##fp_ok(&c[k]);                                                   \
            }                                                                                     \
            if (!canon)                                                                           \
                break; /* the scalar loop below words it */                                       \
            ok = g2 ? PFX##g2_on_curve_x8(p, &b2) : PFX##g1_on_curve_x8(p, &b1);                  \
            if (ok == 0xff)                                                                       \
                continue;                                                                         \
            for (L = 0; L < 8; L++) {                                                             \
                const void *pt = p[L];                                                            \
                if (!(ok & (1u << L)) && (g2 ? PFX##g2_problem(pt) : PFX##g1_problem(pt)))        \
                    return i + (size_t)L;                                                         \
            }                                                                                     \
        }                                                                                         \
        for (; i < end; i++)                                                                      \
            if (g2 ? PFX##g2_problem((const CV##g2_aff *)pts + i)                                 \
                   : PFX##g1_problem((const CV##g1_aff *)pts + i))                                \
                return i;                                                                         \
        return end;                                                                               \
    }

/* BLS12-381: b = 4, b' = 4 (1 + u) */
CZK_IFMA static void x8_b(czk_fpx8 *b1, czk_fp2x8 *b2)
{
    czk_fp four;
    czk_fp2 four2;

    czk_fp_from_u64(&four, 4);
    four2.c0 = four;
    four2.c1 = four;
    czk_fpx8_set1(b1, &four);
    czk_fp2x8_set1(b2, &four2);
}

/* BN254: b = 3, b' = 3 / (9 + u) */
CZK_IFMA static void bn_x8_b(czk_bn254_fpx8 *b1, czk_bn254_fp2x8 *b2)
{
    czk_bn254_fp three;

    czk_bn254_fp_from_u64(&three, 3);
    czk_bn254_fpx8_set1(b1, &three);
    czk_bn254_fp2x8_set1(b2, &CZK_BN254_G2_B);
}

X8_CHECKS(, czk_, czk_fpx, czk_fp2x, czk_fp)
X8_CHECKS(bn_, czk_bn254_, czk_bn254_fpx, czk_bn254_fp2x, czk_bn254_fp)
#undef X8_CHECKS
#endif

struct pts_check {
    const void *pts;          /* the points checked (and used) */
    const uint8_t *src;       /* non-NULL: pts is a copy to make from src first */
    bool check;               /* false: copy only */
    enum pt_kind kind;
    size_t base;              /* czk_par_for's [begin, end) are relative to it */
    _Atomic size_t first_bad; /* SIZE_MAX: none */
};

/* points per block of the copy-then-check pass: 64-192 KiB, in L2 */
#define COPY_BLOCK ((size_t)1024)

static void note_bad(struct pts_check *c, size_t i)
{
    size_t cur = atomic_load(&c->first_bad);

    while (i < cur && !atomic_compare_exchange_weak(&c->first_bad, &cur, i))
        ;
}

/* the first point of [begin, end) with a problem, or end */
static size_t pts_first_bad(const struct pts_check *c, size_t begin, size_t end)
{
#ifdef CZK_HAVE_FPX8
    if (czk_fpx8_enabled()) {
        if (c->kind == PT_G1 || c->kind == PT_G2)
            return first_bad_x8(c->pts, c->kind == PT_G2, begin, end);
        return bn_first_bad_x8(c->pts, c->kind == PT_BN_G2, begin, end);
    }
#endif
    for (size_t i = begin; i < end; i++)
        if (pt_problem(c->kind, c->pts, i))
            return i;
    return end;
}

static void pts_check_range(void *ctx, size_t begin, size_t end, unsigned worker)
{
    struct pts_check *c = ctx;
    const size_t sz = pt_bytes(c->kind);

    begin += c->base;
    end += c->base;
    for (size_t b = begin; b < end; b += COPY_BLOCK) {
        size_t e = end - b < COPY_BLOCK ? end : b + COPY_BLOCK, i;
        if (c->src)
            memcpy((uint8_t *)c->pts + b * sz, c->src + b * sz, (e - b) * sz);
        if (!c->check)
            continue;
        if ((i = pts_first_bad(c, b, e)) != e) {
            note_bad(c, i);
            return; /* later points of this chunk cannot be the first */
        }
    }
}

/* What a loader asked for (czk_zkey_load_fd's options) and how far it got;
 * NULL where the reader was called without options (open, load). */
struct load_hooks {
    const czk_zkey_load_opts *o;
    uint64_t read, checked;
};

/* the hooks' progress callback; -ECANCELED (with e set) when it asks to stop */
static int hooks_progress(struct load_hooks *h, const char *name, czk_error *e)
{
    if (!h || !h->o || !h->o->progress || h->o->progress(h->o->ctx, h->read, h->checked) == 0)
        return 0;
    return czk_errorf(e, -ECANCELED, "%s: loading stopped", name);
}

/* points per progress step of the checks: about 100 MB of G1 points */
#define CHECK_STEP ((size_t)1 << 20)

/* Checks the n points at pts (check) and/or first copies them there from src
 * (src non-NULL; pts is then the aligned destination), in parallel for big
 * sections; progress is reported for checked points only. */
static int copy_check_points(const char *name, uint32_t sec, const char *what, const void *pts,
                             const uint8_t *src, bool check, size_t n, enum pt_kind kind, struct load_hooks *h,
                             czk_error *e)
{
    struct pts_check c = {.pts = pts, .src = src, .check = check, .kind = kind};
    size_t i;

    atomic_init(&c.first_bad, SIZE_MAX);
    for (size_t begin = 0; begin < n && (check || src); begin += CHECK_STEP) {
        size_t len = n - begin < CHECK_STEP ? n - begin : CHECK_STEP;
        int rc;
        c.base = begin;
        if (len >= PAR_MIN_POINTS && czk_par_for(len, 0, pts_check_range, &c) == 0)
            ;
        else
            pts_check_range(&c, 0, len, 0);
        if (atomic_load(&c.first_bad) != SIZE_MAX)
            break;
        if (h && check) {
            h->checked += (uint64_t)len * pt_bytes(kind);
            if ((rc = hooks_progress(h, name, e)) < 0)
                return rc;
        }
    }
    i = atomic_load(&c.first_bad);
    if (i == SIZE_MAX)
        return 0;
    return czk_errorf(e, -EINVAL, "%s: section %u (%s): point %zu of %zu: %s", name, sec, what, i,
                      n, pt_problem(kind, pts, i));
}

static int check_points(const char *name, uint32_t sec, const char *what, const void *pts,
                        size_t n, enum pt_kind kind, struct load_hooks *h, czk_error *e)
{
    return copy_check_points(name, sec, what, pts, NULL, true, n, kind, h, e);
}

struct point_section {
    uint32_t id;
    const char *what;
    uint64_t count;
    enum pt_kind kind;
    const void **out;
};

/* size of a point section against the header's counts */
static int check_point_section_size(const czk_binfile *bf, const char *name,
                                    const struct point_section *ps, czk_error *e)
{
    const czk_binfile_section *s;
    uint64_t psize = pt_bytes(ps->kind);
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

/* The aligned copies of a key's misaligned point sections: one
 * czk_bigbuf block (huge pages from 1 MiB: the copy runs into fresh memory). */
/* where a point section's payload is in the mapping */
static const uint8_t *section_payload(const czk_binfile *bf, uint32_t id, uint64_t *size)
{
    const czk_binfile_section *s = czk_binfile_find(bf, id);

    *size = s->size;
    return czk_binfile_payload(bf, s);
}

static bool needs_copy(const uint8_t *p, uint64_t size)
{
    return size && (uintptr_t)p % _Alignof(czk_fp) != 0;
}

/* bytes a misaligned section takes in the owned block (64-byte steps) */
static uint64_t copy_bytes(uint64_t size)
{
    return (size + 63) & ~(uint64_t)63;
}

/* use a (size-checked) point section in place, or copy it to *dst (then
 * advanced past it) while its points are checked */
static int map_points(const czk_binfile *bf, const char *name, const struct point_section *ps, uint8_t **dst,
                      struct load_hooks *h, czk_error *e)
{
    uint64_t size;
    const uint8_t *p = section_payload(bf, ps->id, &size), *src = NULL;
    bool check = !(ps->id != 3 && h && h->o && h->o->skip_point_checks); /* else the caller vouches */

    if (needs_copy(p, size)) {
        src = p;
        p = *dst;
        *dst += copy_bytes(size);
    }
    *ps->out = p;
    return copy_check_points(name, ps->id, ps->what, p, src, check, ps->count, ps->kind, h, e);
}

static int header_point(const char *name, const char *what, const uint8_t *src, void *dst,
                        enum pt_kind kind, czk_error *e)
{
    const char *bad;

    memcpy(dst, src, pt_bytes(kind));
    bad = pt_problem(kind, dst, 0);
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

/* the BN254 primes of a header whose n8q is 32 (p at n8q): 0, or -EINVAL
 * naming the file and the prime that is not BN254's */
static int check_bn254_primes(const uint8_t *p, uint64_t size, const char *name, czk_error *e)
{
    char what[64];

    if (size != BN_ZKEY_HEADER_BYTES)
        return czk_errorf(e, -EINVAL, "%s: section 2 (header): %llu bytes, expected %d (BN254 key)", name,
                          (unsigned long long)size, BN_ZKEY_HEADER_BYTES);
    if (memcmp(p + 4, &CZK_BN254_FP_MOD, CZK_BN254_BYTES) != 0) {
        czk_binfile_describe_prime(what, sizeof(what), p + 4, 32);
        return czk_errorf(e, -EINVAL,
                          "%s: section 2 (header): prime q is %s, neither BLS12-381's nor BN254's (bn128): "
                          "unsupported curve",
                          name, what);
    }
    p += 4 + CZK_BN254_BYTES;
    if (czk_le32(p) != CZK_BN254_BYTES || memcmp(p + 4, &CZK_BN254_FR_MOD, CZK_BN254_BYTES) != 0) {
        czk_binfile_describe_prime(what, sizeof(what), p + 4, czk_le32(p) == 32 ? 32 : 0);
        return czk_errorf(e, -EINVAL, "%s: section 2 (header): q is BN254's but prime r is %s, not BN254's r",
                          name, what);
    }
    return 0;
}

static int check_header(czk_zkey *z, const czk_binfile *bf, const char *name, unsigned curves, czk_error *e)
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
    if (n8q == CZK_BN254_BYTES && (curves & CZK_CURVES_BN254) && s->size >= 4 + 32 + 4 + 32) {
        if ((rc = check_bn254_primes(p, s->size, name, e)))
            return rc;
        z->curve = CZK_CURVE_BN254;
        p += 4 + CZK_BN254_BYTES + 4 + CZK_BN254_BYTES;
        goto counts;
    }
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
counts:
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
    /* the six header points, in file order, into the fields of the key's curve */
    const bool bn = z->curve == CZK_CURVE_BN254;
    const enum pt_kind k1 = pt_kind_of(z->curve, false), k2 = pt_kind_of(z->curve, true);
    const struct {
        const char *what;
        void *dst;
        enum pt_kind kind;
    } hp[6] = {
        {"alpha1", bn ? (void *)&z->bn.alpha1 : &z->alpha1, k1}, {"beta1", bn ? (void *)&z->bn.beta1 : &z->beta1, k1},
        {"beta2", bn ? (void *)&z->bn.beta2 : &z->beta2, k2},    {"gamma2", bn ? (void *)&z->bn.gamma2 : &z->gamma2, k2},
        {"delta1", bn ? (void *)&z->bn.delta1 : &z->delta1, k1}, {"delta2", bn ? (void *)&z->bn.delta2 : &z->delta2, k2},
    };
    for (int i = 0; i < 6; p += pt_bytes(hp[i].kind), i++)
        if ((rc = header_point(name, hp[i].what, p, hp[i].dst, hp[i].kind, e)))
            return rc;
    return 0;
}

/* what is wrong with coefficient entry i of z (0, or -EINVAL with e set) */
static int coef_problem(const czk_zkey *z, uint32_t i, const char *name, czk_error *e)
{
    const czk_zkey_coef *c = &z->coefs[i];

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
    if (!czk_binfile_scalar_ok(z->curve, &c->value))
        return czk_errorf(e, -EINVAL, "%s: section 4 (coefficients): entry %u: value is not below r",
                          name, i);
    return 0;
}

struct coefs_check {
    const czk_zkey *z;
    uint64_t r_top;           /* the top limb of the key's r */
    _Atomic size_t first_bad; /* SIZE_MAX: none */
    atomic_bool out_of_order; /* some entry's row is below the one before it */
};

/* the entries of [begin, end) against coef_problem's rules, the common case
 * of a value decided inline (a top limb below r's) */
static void coefs_check_range(void *ctx, size_t begin, size_t end, unsigned worker)
{
    struct coefs_check *x = ctx;
    const czk_zkey *z = x->z;
    uint32_t prev = begin ? z->coefs[begin - 1].constraint : 0;
    bool ooo = false;

    for (size_t i = begin; i < end; i++) {
        const czk_zkey_coef *c = &z->coefs[i];
        uint64_t top;
        memcpy(&top, (const uint8_t *)&c->value + 24, sizeof(top));
        if (c->matrix > 1 || c->constraint >= z->domain_size || c->signal >= z->n_vars ||
            (top >= x->r_top && !czk_binfile_scalar_ok(z->curve, &c->value))) {
            size_t cur = atomic_load(&x->first_bad);
            while (i < cur && !atomic_compare_exchange_weak(&x->first_bad, &cur, i))
                ;
            return; /* later entries of this chunk cannot be the first */
        }
        ooo |= c->constraint < prev;
        prev = c->constraint;
    }
    if (ooo)
        atomic_store(&x->out_of_order, true);
}

/* every coefficient entry checked, in parallel for many: 0 with
 * z->coef_order set, or the error of the first bad entry */
static int coefs_first_bad(czk_zkey *z, const char *name, czk_error *e)
{
    struct coefs_check x = {.z = z};
    size_t i;

    x.r_top = z->curve == CZK_CURVE_BN254 ? CZK_BN254_FR_MOD.l[3] : CZK_FR_MOD.l[3];
    atomic_init(&x.first_bad, SIZE_MAX);
    atomic_init(&x.out_of_order, false);
    if (z->n_coefs < 8 * PAR_MIN_POINTS || czk_par_for(z->n_coefs, 0, coefs_check_range, &x) != 0)
        coefs_check_range(&x, 0, z->n_coefs, 0);
    i = atomic_load(&x.first_bad);
    if (i != SIZE_MAX)
        return coef_problem(z, (uint32_t)i, name, e);
    z->coef_order = atomic_load(&x.out_of_order) ? CZK_COEF_ORDER_OTHER : CZK_COEF_ORDER_BY_ROW;
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
    return coefs_first_bad(z, name, e);
}

/* SHA-256 of the payloads of sections 2 and 3 (czk_zkey_ident in formats.h) */
static int zkey_id_of(const czk_binfile *bf, const char *name, uint8_t out[CZK_SHA256_LEN], czk_error *e)
{
    const czk_binfile_section *h, *ic;
    czk_sha256 *s;
    int rc;

    if ((rc = czk_binfile_require(bf, 2, "header", &h, e)) || (rc = czk_binfile_require(bf, 3, "IC", &ic, e)))
        return rc;
    if ((rc = czk_sha256_new(&s)) < 0)
        return czk_errorf(e, rc, "%s: out of memory for the key digest", name);
    czk_sha256_update(s, czk_binfile_payload(bf, h), h->size);
    czk_sha256_update(s, czk_binfile_payload(bf, ic), ic->size);
    czk_sha256_final(s, out);
    return 0;
}

static int zkey_validate(czk_zkey *z, const char *name, unsigned what, unsigned curves, struct load_hooks *h,
                         czk_error *e)
{
    czk_binfile bf;
    int rc;
    uint64_t nv, np, own = 0;
    uint8_t *dst;

    rc = czk_binfile_parse(&bf, z->map, z->map_size, name, "zkey", 1, e);
    if (rc)
        return rc;
    if ((rc = check_header(z, &bf, name, curves, e)))
        return rc;
    nv = z->n_vars;
    np = z->n_public;
    const czk_binfile_section *coef_sec;
    const bool bn = z->curve == CZK_CURVE_BN254;
    const enum pt_kind k1 = pt_kind_of(z->curve, false), k2 = pt_kind_of(z->curve, true);
    const struct point_section ps[] = {
        {3, "IC", np + 1, k1, bn ? (const void **)&z->bn.ic : (const void **)&z->ic},
        {5, "A", nv, k1, bn ? (const void **)&z->bn.a : (const void **)&z->a},
        {6, "B1", nv, k1, bn ? (const void **)&z->bn.b1 : (const void **)&z->b1},
        {7, "B2", nv, k2, bn ? (const void **)&z->bn.b2 : (const void **)&z->b2},
        {8, "C", nv - np - 1, k1, bn ? (const void **)&z->bn.c : (const void **)&z->c},
        {9, "H", z->domain_size, k1, bn ? (const void **)&z->bn.h : (const void **)&z->h},
    };
    /* the cheap checks of every section first, then the points */
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
        if ((rc = check_point_section_size(&bf, name, &ps[i], e)))
            return rc;
    if (what & CZK_ZKEY_COEFS) {
        if ((rc = check_coefs(z, &bf, name, e)))
            return rc;
    } else if ((rc = czk_binfile_require(&bf, 4, "coefficients", &coef_sec, e))) {
        return rc;
    }
    /* one block for the copies of the misaligned sections */
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
        uint64_t size;
        const uint8_t *p = section_payload(&bf, ps[i].id, &size);
        if ((ps[i].id == 3 || (what & CZK_ZKEY_POINTS)) && needs_copy(p, size))
            own += copy_bytes(size);
    }
    if (own && !(z->owned[0] = czk_bigbuf_alloc(own)))
        return czk_errorf(e, -ENOMEM, "%s: out of memory for an aligned copy of %llu bytes of points", name,
                          (unsigned long long)own);
    dst = z->owned[0];
    for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
        if ((ps[i].id == 3 || (what & CZK_ZKEY_POINTS)) && (rc = map_points(&bf, name, &ps[i], &dst, h, e)))
            return rc;
    z->loaded = what;
    return zkey_id_of(&bf, name, z->ident.id, e);
}

static void stamp_of(const struct stat *st, czk_zkey_stamp *s)
{
    s->dev = (uint64_t)st->st_dev;
    s->ino = (uint64_t)st->st_ino;
    s->size = (uint64_t)st->st_size;
    s->mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static void stamp_fd(int fd, czk_zkey_stamp *s)
{
    struct stat st;

    if (fstat(fd, &st) == 0)
        stamp_of(&st, s);
}

static int zkey_open_fd(czk_zkey *z, int fd, const char *name, unsigned curves, czk_error *e)
{
    int rc;

    memset(z, 0, sizeof(*z));
    rc = czk_binfile_map_fd(&z->map, &z->map_size, fd, name, e);
    if (!rc) {
        stamp_fd(fd, &z->ident.stamp);
        rc = zkey_validate(z, name, CZK_ZKEY_ALL, curves, NULL, e);
    }
    if (rc)
        czk_zkey_close(z);
    return rc;
}

int czk_zkey_open_fd(czk_zkey *z, int fd, const char *name, czk_error *e)
{
    return zkey_open_fd(z, fd, name, CZK_CURVES_BLS12_381, e);
}

int czk_zkey_open_curves(czk_zkey *z, const char *path, unsigned curves, czk_error *e)
{
    int fd, rc;

    memset(z, 0, sizeof(*z));
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        return czk_errorf(e, -err, "%s: cannot open: %s", path, strerror(err));
    }
    rc = zkey_open_fd(z, fd, path, curves, e);
    close(fd);
    return rc;
}

int czk_zkey_open(czk_zkey *z, const char *path, czk_error *e)
{
    return czk_zkey_open_curves(z, path, CZK_CURVES_BLS12_381, e);
}

void czk_zkey_close(czk_zkey *z)
{
    czk_binfile_unmap(z->map, z->map_size);
    czk_bigbuf_free(z->owned[0]);
    memset(z, 0, sizeof(*z));
}

/* ---- private loading and identity ---- */

/* exactly n bytes at off, or -EIO naming what came short (the file shrank) */
static int pread_all(int fd, void *buf, uint64_t n, uint64_t off, const char *name, czk_error *e)
{
    uint8_t *p = buf;

    while (n) {
        size_t chunk = n > (1u << 30) ? (1u << 30) : (size_t)n;
        ssize_t r = pread(fd, p, chunk, (off_t)off);
        if (r < 0) {
            int err = errno;
            if (err == EINTR)
                continue;
            return czk_errorf(e, -err, "%s: read of %llu bytes at %llu failed: %s", name,
                              (unsigned long long)chunk, (unsigned long long)off, strerror(err));
        }
        if (r == 0)
            return czk_errorf(e, -EIO, "%s: the file ended at byte %llu while it was read (changed on disk?)",
                              name, (unsigned long long)off);
        p += r;
        off += (uint64_t)r;
        n -= (uint64_t)r;
    }
    return 0;
}

/* One section as the container declares it (not yet validated). */
typedef struct raw_section {
    uint32_t id;
    uint64_t hdr_off; /* of its 12-byte header */
    uint64_t size;    /* payload bytes, capped to the file */
} raw_section;

/* Walks the container's section headers with pread (no payload read): at most
 * CZK_BINFILE_MAX_SECTIONS + 1 entries, payload sizes capped at the file's
 * end.  The full checks are czk_binfile_parse's, on the loaded bytes. */
static int read_table(int fd, uint64_t fsize, const char *name, uint8_t head[CZK_BINFILE_HEADER_BYTES],
                      raw_section *secs, unsigned *n, czk_error *e)
{
    uint64_t pos = CZK_BINFILE_HEADER_BYTES;
    int rc;

    *n = 0;
    if (fsize < CZK_BINFILE_HEADER_BYTES)
        return czk_errorf(e, -EINVAL, "%s: file is %llu bytes, shorter than the 12-byte header of a .zkey file",
                          name, (unsigned long long)fsize);
    if ((rc = pread_all(fd, head, CZK_BINFILE_HEADER_BYTES, 0, name, e)))
        return rc;
    if (memcmp(head, "zkey", 4) != 0)
        return czk_errorf(e, -EINVAL, "%s: not a .zkey file (bad magic)", name);
    while (pos + CZK_BINFILE_SECTION_HEADER_BYTES <= fsize && *n <= CZK_BINFILE_MAX_SECTIONS) {
        uint8_t sh[CZK_BINFILE_SECTION_HEADER_BYTES];
        raw_section *s = &secs[(*n)++];

        if ((rc = pread_all(fd, sh, sizeof(sh), pos, name, e)))
            return rc;
        s->id = czk_le32(sh);
        s->hdr_off = pos;
        s->size = czk_le64(sh + 4);
        pos += CZK_BINFILE_SECTION_HEADER_BYTES;
        if (s->size > fsize - pos)
            s->size = fsize - pos; /* truncated: the parser words it */
        pos += s->size;
    }
    return 0;
}

static bool section_wanted(uint32_t id, unsigned what)
{
    if (id <= 3)
        return true; /* protocol, header, IC */
    if (id == 4)
        return what & CZK_ZKEY_COEFS;
    if (id >= 5 && id <= 9)
        return what & CZK_ZKEY_POINTS;
    return false; /* 10 (MPC parameters) and unknown ones: never used */
}

/* bytes per read: the unit of progress reports and of cancellation */
#define READ_STEP ((uint64_t)64 << 20)

/* A byte range of the file that is loaded into the private copy. */
typedef struct keep_range {
    uint64_t begin, end;
} keep_range;

/*
 * Reads the file into region: the ranges in keep[] (sorted, disjoint) at
 * their offsets.  With a digest hook every byte of the file goes through it
 * in file order, the bytes outside keep[] read through a scratch buffer;
 * without one those bytes are not read at all.
 */
static int read_ranges(int fd, uint64_t fsize, const char *name, uint8_t *region, const keep_range *keep,
                       unsigned n_keep, struct load_hooks *h, czk_error *e)
{
    const czk_zkey_load_opts *o = h->o;
    int hash_all = o && o->digest;
    uint8_t *scratch = NULL;
    uint64_t off = 0;
    unsigned k = 0;
    int rc = 0;

    if (hash_all && !(scratch = malloc(READ_STEP)))
        return czk_errorf(e, -ENOMEM, "%s: out of memory for the read buffer", name);
    while (off < fsize && !rc) {
        uint64_t n;
        uint8_t *dst;
        while (k < n_keep && keep[k].end <= off)
            k++;
        if (k < n_keep && keep[k].begin <= off) {
            n = keep[k].end - off;
            dst = region + off;
        } else {
            uint64_t next = k < n_keep ? keep[k].begin : fsize;
            if (!hash_all) {
                off = next;
                continue;
            }
            n = next - off;
            dst = scratch;
        }
        if (n > READ_STEP)
            n = READ_STEP;
        if ((rc = pread_all(fd, dst, n, off, name, e)))
            break;
        if (hash_all)
            o->digest(o->ctx, dst, (size_t)n);
        off += n;
        h->read += n;
        rc = hooks_progress(h, name, e);
    }
    free(scratch);
    return rc;
}

int czk_zkey_load_fd(czk_zkey *z, int fd, const char *name, const czk_zkey_load_opts *o, czk_error *e)
{
    raw_section secs[CZK_BINFILE_MAX_SECTIONS + 1];
    keep_range keep[2 * (CZK_BINFILE_MAX_SECTIONS + 1) + 1];
    uint8_t head[CZK_BINFILE_HEADER_BYTES];
    struct load_hooks h = {.o = o};
    unsigned what = o ? o->what & CZK_ZKEY_ALL : 0;
    struct stat st;
    unsigned n, n_keep = 0;
    uint8_t *region;
    int rc;

    memset(z, 0, sizeof(*z));
    if (fstat(fd, &st) < 0) {
        int err = errno;
        return czk_errorf(e, -err, "%s: cannot stat: %s", name, strerror(err));
    }
    if (!S_ISREG(st.st_mode))
        return czk_errorf(e, -EINVAL, "%s: not a regular file", name);
    stamp_of(&st, &z->ident.stamp);
    if ((rc = read_table(fd, (uint64_t)st.st_size, name, head, secs, &n, e)))
        return rc;
    /* The file's layout in private memory: a reservation of the file's size
     * whose pages are touched only where a wanted section is read, so the
     * container parser and the validator work unchanged and the sections
     * left out cost nothing. */
    region = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                  -1, 0);
    if (region == MAP_FAILED) {
        int err = errno;
        return czk_errorf(e, -err, "%s: cannot reserve %lld bytes: %s", name, (long long)st.st_size,
                          strerror(err));
    }
#ifdef MADV_HUGEPAGE
    /* the pages read into are fresh memory: 2 MiB at a time costs a fraction
     * of 512 faults of 4 KiB (see the top of the file); advice only */
    madvise(region, (size_t)st.st_size, MADV_HUGEPAGE);
#endif
    z->map = region;
    z->map_size = (size_t)st.st_size;
    /* what is kept: the container header, every section header, the wanted
     * payloads (read_table's sections are in file order and disjoint) */
    keep[n_keep++] = (keep_range){0, CZK_BINFILE_HEADER_BYTES};
    for (unsigned i = 0; i < n; i++) {
        uint64_t hdr_end = secs[i].hdr_off + CZK_BINFILE_SECTION_HEADER_BYTES;
        if (hdr_end > (uint64_t)st.st_size)
            hdr_end = (uint64_t)st.st_size;
        if (section_wanted(secs[i].id, what) && secs[i].size)
            hdr_end += secs[i].size;
        if (keep[n_keep - 1].end == secs[i].hdr_off)
            keep[n_keep - 1].end = hdr_end;
        else
            keep[n_keep++] = (keep_range){secs[i].hdr_off, hdr_end};
    }
    rc = read_ranges(fd, (uint64_t)st.st_size, name, region, keep, n_keep, &h, e);
    if (!rc && mprotect(region, (size_t)st.st_size, PROT_READ) < 0) {
        int err = errno;
        rc = czk_errorf(e, -err, "%s: cannot protect the loaded key: %s", name, strerror(err));
    }
    if (!rc)
        rc = zkey_validate(z, name, what, o && o->curves ? o->curves : CZK_CURVES_BLS12_381, &h, e);
    if (rc)
        czk_zkey_close(z);
    return rc;
}

int czk_zkey_load(czk_zkey *z, const char *path, unsigned what, czk_error *e)
{
    return czk_zkey_load_curves(z, path, what, CZK_CURVES_BLS12_381, e);
}

int czk_zkey_load_curves(czk_zkey *z, const char *path, unsigned what, unsigned curves, czk_error *e)
{
    czk_zkey_load_opts o = {.what = what, .curves = curves};
    int fd, rc;

    memset(z, 0, sizeof(*z));
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        return czk_errorf(e, -err, "%s: cannot open: %s", path, strerror(err));
    }
    rc = czk_zkey_load_fd(z, fd, path, &o, e);
    close(fd);
    return rc;
}

int czk_zkey_check_points(const czk_zkey *z, const char *name, const czk_zkey_load_opts *o, czk_error *e)
{
    struct load_hooks h = {.o = o};
    uint64_t nv = z->n_vars, np = z->n_public;
    const bool bn = z->curve == CZK_CURVE_BN254;
    const enum pt_kind k1 = pt_kind_of(z->curve, false), k2 = pt_kind_of(z->curve, true);
    const struct {
        uint32_t id;
        const char *what;
        const void *pts;
        uint64_t n;
        enum pt_kind kind;
    } s[] = {
        {5, "A", bn ? (const void *)z->bn.a : z->a, nv, k1},
        {6, "B1", bn ? (const void *)z->bn.b1 : z->b1, nv, k1},
        {7, "B2", bn ? (const void *)z->bn.b2 : z->b2, nv, k2},
        {8, "C", bn ? (const void *)z->bn.c : z->c, nv - np - 1, k1},
        {9, "H", bn ? (const void *)z->bn.h : z->h, z->domain_size, k1},
    };
    int rc;

    if (!(z->loaded & CZK_ZKEY_POINTS))
        return czk_errorf(e, -EINVAL, "%s: the point sections were not loaded", name);
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
        if ((rc = check_points(name, s[i].id, s[i].what, s[i].pts, (size_t)s[i].n, s[i].kind, &h, e)))
            return rc;
    return 0;
}

uint64_t czk_zkey_points_bytes(const czk_zkey *z)
{
    uint64_t nv = z->n_vars, np = z->n_public;
    uint64_t g1 = pt_bytes(pt_kind_of(z->curve, false)), g2 = pt_bytes(pt_kind_of(z->curve, true));
    return nv * g1 * 2 + nv * g2 + (nv - np - 1) * g1 + (uint64_t)z->domain_size * g1;
}

void czk_zkey_id(const czk_zkey *z, uint8_t out[CZK_SHA256_LEN])
{
    memcpy(out, z->ident.id, CZK_SHA256_LEN);
}

void czk_zkey_id_hex(const czk_zkey *z, char out[CZK_ZKEY_ID_HEX])
{
    czk_hex(z->ident.id, CZK_SHA256_LEN, out);
}

int czk_zkey_ident_path(const char *path, czk_zkey_ident *out, czk_error *e)
{
    raw_section secs[CZK_BINFILE_MAX_SECTIONS + 1];
    uint8_t head[CZK_BINFILE_HEADER_BYTES];
    const raw_section *h = NULL, *ic = NULL;
    struct stat st;
    czk_sha256 *s = NULL;
    unsigned n;
    int fd, rc;

    memset(out, 0, sizeof(*out));
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        return czk_errorf(e, -err, "%s: cannot open: %s", path, strerror(err));
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        int err = S_ISREG(st.st_mode) ? errno : EINVAL;
        close(fd);
        return czk_errorf(e, -err, "%s: cannot stat, or not a regular file", path);
    }
    stamp_of(&st, &out->stamp);
    rc = read_table(fd, (uint64_t)st.st_size, path, head, secs, &n, e);
    for (unsigned i = 0; !rc && i < n; i++) {
        if (secs[i].id == 2 && !h)
            h = &secs[i];
        else if (secs[i].id == 3 && !ic)
            ic = &secs[i];
    }
    if (!rc && (!h || !ic))
        rc = czk_errorf(e, -EINVAL, "%s: no %s section: not a complete .zkey file", path, !h ? "header (2)" : "IC (3)");
    if (!rc && (rc = czk_sha256_new(&s)) < 0)
        rc = czk_errorf(e, rc, "%s: out of memory for the key digest", path);
    for (int k = 0; !rc && k < 2; k++) {
        const raw_section *sec = k ? ic : h;
        uint64_t off = sec->hdr_off + CZK_BINFILE_SECTION_HEADER_BYTES, left = sec->size;
        uint8_t buf[16384];
        while (!rc && left) {
            size_t c = left > sizeof(buf) ? sizeof(buf) : (size_t)left;
            if (!(rc = pread_all(fd, buf, c, off, path, e)))
                czk_sha256_update(s, buf, c);
            off += c;
            left -= c;
        }
    }
    close(fd);
    if (s) {
        uint8_t d[CZK_SHA256_LEN];
        czk_sha256_final(s, d); /* frees s */
        if (!rc)
            memcpy(out->id, d, sizeof(d));
    }
    return rc;
}

static void describe_stamp_change(const czk_zkey_stamp *a, const czk_zkey_stamp *b, char *out, size_t n)
{
    if (a->dev != b->dev || a->ino != b->ino)
        snprintf(out, n, "replaced (inode %llu -> %llu, %llu -> %llu bytes)", (unsigned long long)a->ino,
                 (unsigned long long)b->ino, (unsigned long long)a->size, (unsigned long long)b->size);
    else
        snprintf(out, n, "modified in place (%llu -> %llu bytes, mtime moved by %lld ms)",
                 (unsigned long long)a->size, (unsigned long long)b->size,
                 (long long)((b->mtime_ns - a->mtime_ns) / 1000000));
}

int czk_zkey_recheck(const czk_zkey_ident *loaded, const char *path, czk_zkey_ident *now, char *what,
                     size_t what_size)
{
    char was[CZK_ZKEY_ID_HEX], is[CZK_ZKEY_ID_HEX], how[160];
    czk_error e = {0};
    struct stat st;
    char dummy[1];

    if (!what) {
        what = dummy;
        what_size = sizeof(dummy);
    }
    what[0] = 0;
    memset(now, 0, sizeof(*now));
    czk_hex(loaded->id, CZK_SHA256_LEN, was);
    if (stat(path, &st) < 0) {
        int err = errno;
        snprintf(what, what_size, "cannot be read any more (%s); the loaded key id is %s", strerror(err), was);
        return CZK_ZKEY_CHANGED;
    }
    stamp_of(&st, &now->stamp);
    if (!memcmp(&now->stamp, &loaded->stamp, sizeof(now->stamp)))
        return CZK_ZKEY_SAME;
    describe_stamp_change(&loaded->stamp, &now->stamp, how, sizeof(how));
    if (czk_zkey_ident_path(path, now, &e) < 0) {
        snprintf(what, what_size, "%s and no longer readable as a zkey (%s); the loaded key id is %s", how, e.msg,
                 was);
        memset(now->id, 0, sizeof(now->id));
        return CZK_ZKEY_CHANGED;
    }
    czk_hex(now->id, CZK_SHA256_LEN, is);
    if (!memcmp(now->id, loaded->id, CZK_SHA256_LEN)) {
        snprintf(what, what_size, "%s, same key id %s", how, was);
        return CZK_ZKEY_TOUCHED;
    }
    snprintf(what, what_size, "%s: key id on disk %s differs from the loaded %s", how, is, was);
    return CZK_ZKEY_CHANGED;
}

int czk_zkey_recheck_log(const czk_zkey_ident *loaded, czk_zkey_stamp *reported, const char *prog,
                         const char *circuit, const char *path, int verbose)
{
    czk_zkey_ident now;
    char what[512];
    int r = czk_zkey_recheck(loaded, path, &now, what, sizeof(what));

    if (r == CZK_ZKEY_SAME) {
        if (verbose)
            czk_info("circuit %s: %s unchanged since %s loaded it", circuit, path, prog);
        *reported = now.stamp;
        return r;
    }
    if (!verbose && !memcmp(reported, &now.stamp, sizeof(now.stamp)))
        return r; /* said already */
    *reported = now.stamp;
    if (r == CZK_ZKEY_TOUCHED)
        czk_warn("circuit %s: %s changed on disk: %s; %s keeps the key it loaded", circuit, path, what, prog);
    else
        czk_err("circuit %s: %s changed on disk: %s; %s keeps using the key it loaded, and a daemon restarted now "
                "would load another key and be refused this circuit: SIGHUP to czk-gpud (systemctl reload "
                "czk-gpud) switches all three daemons to it after the jobs accepted before, or restart czk-gpud, "
                "czk-synth and czk-finalizer together",
                circuit, path, what, prog);
    return r;
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
    const bool bn = s->curve == CZK_CURVE_BN254;
    if (bn ? (!s->bn.ic || !s->bn.a || !s->bn.b1 || !s->bn.b2 || !s->bn.h ||
              (!s->bn.c && s->n_vars > s->n_public + 1))
           : (!s->ic || !s->a || !s->b1 || !s->b2 || !s->h || (!s->c && s->n_vars > s->n_public + 1)))
        return czk_errorf(e, -EINVAL, "%s: a point or coefficient array is missing", path);
    if (!s->coefs && s->n_coefs)
        return czk_errorf(e, -EINVAL, "%s: a point or coefficient array is missing", path);
    for (uint32_t i = 0; i < s->n_coefs; i++) {
        const czk_zkey_coef *c = &s->coefs[i];

        if (c->matrix > 1 || c->constraint >= s->domain_size || c->signal >= s->n_vars ||
            !czk_binfile_scalar_ok(s->curve, &c->value))
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
    const bool bn = s->curve == CZK_CURVE_BN254;
    const uint64_t g1 = bn ? BN_G1_BYTES : G1_BYTES, g2 = bn ? BN_G2_BYTES : G2_BYTES;
    const czk_zkey_bn254 *b = &s->bn;
    /* the header points, IC and the point sections, in file order */
    const void *hdr[6] = {bn ? (const void *)&b->alpha1 : &s->alpha1, bn ? (const void *)&b->beta1 : &s->beta1,
                          bn ? (const void *)&b->beta2 : &s->beta2,   bn ? (const void *)&b->gamma2 : &s->gamma2,
                          bn ? (const void *)&b->delta1 : &s->delta1, bn ? (const void *)&b->delta2 : &s->delta2};
    const uint64_t hdr_size[6] = {g1, g1, g2, g2, g1, g2};
    const void *ic = bn ? (const void *)b->ic : s->ic;
    const struct {
        uint32_t id;
        const void *pts;
        uint64_t bytes;
    } sec[] = {
        {5, bn ? (const void *)b->a : s->a, nv * g1},   {6, bn ? (const void *)b->b1 : s->b1, nv * g1},
        {7, bn ? (const void *)b->b2 : s->b2, nv * g2}, {8, bn ? (const void *)b->c : s->c, (nv - np - 1) * g1},
        {9, bn ? (const void *)b->h : s->h, (uint64_t)s->domain_size * g1},
    };
    int rc;

    if ((rc = check_spec(path, s, e)))
        return rc;
    rc = czk_binfile_writer_open(&w, path, "zkey", 1, 10, e);
    if (rc)
        return rc;
    czk_binfile_writer_begin_section(w, 1, 4);
    czk_binfile_writer_u32(w, 1); /* groth16 */

    czk_binfile_writer_begin_section(w, 2, bn ? BN_ZKEY_HEADER_BYTES : ZKEY_HEADER_BYTES);
    if (bn) {
        czk_binfile_writer_u32(w, CZK_BN254_BYTES);
        czk_binfile_writer_write(w, &CZK_BN254_FP_MOD, CZK_BN254_BYTES);
        czk_binfile_writer_u32(w, CZK_BN254_BYTES);
        czk_binfile_writer_write(w, &CZK_BN254_FR_MOD, CZK_BN254_BYTES);
    } else {
        czk_binfile_writer_u32(w, CZK_FP_BYTES);
        czk_binfile_writer_write(w, &CZK_FP_MOD, CZK_FP_BYTES);
        czk_binfile_writer_u32(w, CZK_FR_BYTES);
        czk_binfile_writer_write(w, &CZK_FR_MOD, CZK_FR_BYTES);
    }
    czk_binfile_writer_u32(w, s->n_vars);
    czk_binfile_writer_u32(w, s->n_public);
    czk_binfile_writer_u32(w, s->domain_size);
    for (int i = 0; i < 6; i++)
        czk_binfile_writer_write(w, hdr[i], hdr_size[i]);

    czk_binfile_writer_begin_section(w, 3, (np + 1) * g1);
    czk_binfile_writer_write(w, ic, (np + 1) * g1);

    czk_binfile_writer_begin_section(w, 4, 4 + (uint64_t)s->n_coefs * sizeof(czk_zkey_coef));
    czk_binfile_writer_u32(w, s->n_coefs);
    czk_binfile_writer_write(w, s->coefs, (size_t)s->n_coefs * sizeof(czk_zkey_coef));

    for (size_t i = 0; i < sizeof(sec) / sizeof(sec[0]); i++) {
        czk_binfile_writer_begin_section(w, sec[i].id, sec[i].bytes);
        if (sec[i].bytes)
            czk_binfile_writer_write(w, sec[i].pts, sec[i].bytes);
    }

    /* MPC parameters: csHash (zeros: not computed) and no contributions;
     * snarkjs readMPCParams reads exactly this, prove/verify never look. */
    czk_binfile_writer_begin_section(w, 10, MPC_EMPTY_BYTES);
    czk_binfile_writer_zeros(w, MPC_EMPTY_BYTES);
    return czk_binfile_writer_commit(w, e);
}
