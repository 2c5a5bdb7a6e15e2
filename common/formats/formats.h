/*
 * formats.h — snarkjs/circom binary files: the iden3 section container,
 * .zkey (groth16), .wtns (v2), .r1cs (v1); readers map the file (no copy) and
 * validate everything before trusting it; writers for what czk generates.
 * Exact formats: docs/file-formats.md sections 3 and 4.
 *
 * Pointers into a mapped file: point sections are used in place when they are
 * 8-byte aligned in the file, otherwise copied once into an aligned buffer.
 *
 * Curves: a file's header names its primes, and that picks the curve
 * (docs/file-formats.md 4.0): BLS12-381 or BN254 (snarkjs "bn128").  The
 * plain readers (czk_zkey_open, czk_zkey_load, czk_wtns_open, czk_r1cs_open
 * and their _fd forms) accept BLS12-381 only, for callers that know only
 * BLS12-381 types; a BN254 file is refused there with an error that names
 * the file and the curve.  The _curves readers (and czk_zkey_load_opts.curves)
 * take a mask of the curves the caller handles and set the struct's `curve`:
 * the daemons and `czk prove` read with both (common/groth16/any.h).  The
 * BLS12-381 fields keep their names and types; a BN254 zkey fills `bn`
 * (BN254-typed points) and leaves the BLS12-381 point fields zero / NULL,
 * so code that knows only BLS12-381 can never read BN254 points as its own.
 */
#ifndef CZK_FORMATS_H
#define CZK_FORMATS_H

#include <stdint.h>
#include <stddef.h>

#include "common/crypto/bn254_curve.h"
#include "common/crypto/curve.h"
#include "common/base/digest.h"
#include "common/base/error.h"

/* the curve of a file, from its header's primes (BLS12-381 is 0: zeroed
 * structs and specs mean BLS12-381, as before BN254 existed) */
typedef enum czk_curve_id { CZK_CURVE_BLS12_381 = 0, CZK_CURVE_BN254 = 1 } czk_curve_id;
#define CZK_CURVES_BLS12_381 (1u << CZK_CURVE_BLS12_381)
#define CZK_CURVES_BN254 (1u << CZK_CURVE_BN254)
#define CZK_CURVES_ALL (CZK_CURVES_BLS12_381 | CZK_CURVES_BN254)
/* "BLS12-381", "BN254 (bn128)"; "an unknown curve" for other values */
const char *czk_curve_name(czk_curve_id c);
/* the "curve" of snarkjs' JSON files: "bls12381", "bn128" (NULL for others) */
const char *czk_curve_snarkjs(czk_curve_id c);

/* one entry of zkey section 4, as stored (44 bytes, unaligned); for a BN254
 * key value holds the bytes of a czk_bn254_fr (same size, same encoding) */
/* the order of section 4's entries: build_abc splits rows among threads
 * only when the entries are by row (snarkjs and czk setup write them so) */
typedef enum czk_zkey_coef_order {
    CZK_COEF_ORDER_UNKNOWN = 0, /* not checked (a czk_zkey filled by other code): build_abc checks */
    CZK_COEF_ORDER_BY_ROW,      /* constraint never decreases */
    CZK_COEF_ORDER_OTHER,
} czk_zkey_coef_order;

typedef struct __attribute__((packed)) czk_zkey_coef {
    uint32_t matrix;     /* 0 = A, 1 = B */
    uint32_t constraint; /* row */
    uint32_t signal;     /* wire */
    czk_fr value;        /* coef * R^2 mod r ("Montgomery of Montgomery") */
} czk_zkey_coef;
_Static_assert(sizeof(czk_zkey_coef) == 44, "zkey coefficient entry is 44 bytes");

/*
 * What identifies a loaded zkey: its key id and the file it came from.
 *
 * The key id is SHA-256 over the payload of section 2 (header: primes, nVars,
 * nPublic, domainSize, alpha1, beta1, beta2, gamma2, delta1, delta2) followed
 * by the payload of section 3 (IC), as stored in the file.  It costs about
 * 1 KB + 96 bytes per public input to compute, whatever the file's size, and
 * it differs between any two setups (delta is random in each) and between two
 * circuits.  Daemons compare it to agree on the key they prove with.
 */
typedef struct czk_zkey_stamp {
    uint64_t dev, ino, size;
    int64_t mtime_ns;
} czk_zkey_stamp;

typedef struct czk_zkey_ident {
    uint8_t id[CZK_SHA256_LEN];
    czk_zkey_stamp stamp; /* of the file when it was read */
} czk_zkey_ident;
#define CZK_ZKEY_ID_HEX CZK_SHA256_HEX /* 64 hex digits and a NUL */

/* a BN254 key's points: header points and point sections, as in czk_zkey */
typedef struct czk_zkey_bn254 {
    czk_bn254_g1_aff alpha1, beta1, delta1;
    czk_bn254_g2_aff beta2, gamma2, delta2;
    const czk_bn254_g1_aff *ic, *a, *b1, *c, *h;
    const czk_bn254_g2_aff *b2;
} czk_zkey_bn254;

typedef struct czk_zkey {
    const uint8_t *map;   /* whole file: a read-only mapping (open), or private memory (load) */
    size_t map_size;
    czk_zkey_ident ident;
    unsigned loaded;      /* czk_zkey_load's sections; CZK_ZKEY_ALL after open */
    uint32_t n_vars, n_public, domain_size, log_domain;
    czk_g1_aff alpha1, beta1, delta1;
    czk_g2_aff beta2, gamma2, delta2;
    const czk_g1_aff *ic;   /* n_public + 1 */
    const czk_g1_aff *a;    /* n_vars */
    const czk_g1_aff *b1;   /* n_vars */
    const czk_g2_aff *b2;   /* n_vars */
    const czk_g1_aff *c;    /* n_vars - n_public - 1 (wires n_public+1 ..) */
    const czk_g1_aff *h;    /* domain_size */
    uint32_t n_coefs;
    const czk_zkey_coef *coefs;
    czk_zkey_coef_order coef_order; /* found by the reader's check of section 4 */
    void *owned[8];         /* aligned copies made by the reader (owned[0]: one block for all), freed on close */
    czk_curve_id curve;     /* BLS12-381: the fields above; BN254: bn below */
    czk_zkey_bn254 bn;      /* the same points of a BN254 key (zero for BLS12-381) */
} czk_zkey;

typedef struct czk_wtns {
    const uint8_t *map;
    size_t map_size;
    uint32_t n_witness;
    union {                       /* standard form, w[0] == 1 */
        const czk_fr *w;          /* curve == CZK_CURVE_BLS12_381 */
        const czk_bn254_fr *w_bn; /* curve == CZK_CURVE_BN254 */
    };
    const uint8_t *raw;           /* section 2 in the mapping (may be misaligned) */
    void *owned;
    czk_curve_id curve;
} czk_wtns;

typedef struct czk_r1cs {
    const uint8_t *map;
    size_t map_size;
    czk_curve_id curve;           /* a BN254 term's coef holds a czk_bn254_fr */
    uint32_t n_wires, n_pub_out, n_pub_in, n_prv_in, n_constraints;
    uint64_t n_labels;
    const uint8_t *constraints;  /* section 2 payload, validated */
    size_t constraints_size;
} czk_r1cs;

/* a linear combination term as stored in .r1cs (standard-form coefficient) */
typedef struct __attribute__((packed)) czk_r1cs_term { uint32_t wire; czk_fr coef; } czk_r1cs_term;

/* Open and validate; errors name the file, section/field, and what was expected.
 * Checks: magic, version, section table (bounds, overlaps, duplicates, required
 * ids), primes equal BLS12-381's, sizes consistent with counts, zkey points on
 * the curve, coefficient indices in range. */
int czk_zkey_open(czk_zkey *z, const char *path, czk_error *e);
int czk_zkey_open_fd(czk_zkey *z, int fd, const char *name, czk_error *e);
/* the same for the curves in the mask `curves` (CZK_CURVES_*) */
int czk_zkey_open_curves(czk_zkey *z, const char *path, unsigned curves, czk_error *e);
void czk_zkey_close(czk_zkey *z);

/*
 * czk_zkey_load: like czk_zkey_open, but the sections are read (pread) into
 * private anonymous memory instead of being mapped, so the zkey stays intact
 * and readable when the file is later truncated, overwritten or replaced:
 * a long-running daemon never takes SIGBUS or reads a key it did not
 * validate.  The header and IC are always read; `what` adds the coefficients
 * (section 4: what a synthesizer needs) and/or the point sections 5-9 (what
 * the MSMs need).  Sections not asked for are size-checked against the
 * header but neither read nor validated: their pointers are NULL (n_coefs 0)
 * and they cost almost no memory (the region is reserved and advised to use
 * huge pages: at most the 2 MiB page at each edge of a loaded section).
 *
 * Cost: the private copy is anonymous memory that the kernel cannot drop
 * the way it drops page cache: a 2^24-constraint zkey is about 13.5 GB of
 * points and 1-2 GB of coefficients, and while it is read the page cache
 * holds a second (reclaimable) copy.  Choose the sections you use.
 */
#define CZK_ZKEY_COEFS 0x1u  /* section 4 */
#define CZK_ZKEY_POINTS 0x2u /* sections 5-9: A, B1, B2, C, H */
#define CZK_ZKEY_ALL (CZK_ZKEY_COEFS | CZK_ZKEY_POINTS)
int czk_zkey_load(czk_zkey *z, const char *path, unsigned what, czk_error *e);
/* the same for the curves in the mask `curves` (CZK_CURVES_*) */
int czk_zkey_load_curves(czk_zkey *z, const char *path, unsigned what, unsigned curves, czk_error *e);

/*
 * czk_zkey_load_fd: czk_zkey_load from an open file (the caller keeps fd and
 * may fstat it for the identity of exactly what was read), with the hooks a
 * long-running loader needs (czk-gpud loads each key on a thread of its own):
 *  - skip_point_checks: the point sections 5-9 are not checked on their
 *    curves (the caller vouches for them, e.g. from its record of an earlier
 *    check of the same bytes: it must then compare the digest before it
 *    trusts them, and run czk_zkey_check_points when it differs).  Every
 *    other check (container, header, sizes, IC) runs as always;
 *  - digest: every byte of the file, from the first to the last, in file
 *    order, is passed to it as it is read (the sections that are not loaded
 *    are read through a scratch buffer for it): a digest of the whole file in
 *    the same pass;
 *  - progress: called after each read (at most 64 MiB) and each checked piece
 *    (about 1 Mi points) with the bytes read and the point bytes checked so
 *    far; a non-zero return stops the load with -ECANCELED.
 * The callbacks run on the calling thread.
 */
typedef struct czk_zkey_load_opts {
    unsigned what; /* CZK_ZKEY_COEFS / CZK_ZKEY_POINTS, as czk_zkey_load's `what` */
    int skip_point_checks;
    void (*digest)(void *ctx, const void *p, size_t n);
    int (*progress)(void *ctx, uint64_t read, uint64_t checked);
    void *ctx;
    unsigned curves; /* CZK_CURVES_* accepted; 0 = BLS12-381 only */
} czk_zkey_load_opts;
int czk_zkey_load_fd(czk_zkey *z, int fd, const char *name, const czk_zkey_load_opts *o, czk_error *e);

/* The point checks of sections 5-9 (on their curves, coordinates below q)
 * of a key loaded with CZK_ZKEY_POINTS, e.g. after skip_point_checks: the
 * load's errors, and o's progress hook (checked bytes; o may be NULL). */
int czk_zkey_check_points(const czk_zkey *z, const char *name, const czk_zkey_load_opts *o, czk_error *e);

/* bytes of the point sections 5-9, from the header's counts */
uint64_t czk_zkey_points_bytes(const czk_zkey *z);

/* the key id of a zkey opened or loaded above (see czk_zkey_ident) */
void czk_zkey_id(const czk_zkey *z, uint8_t out[CZK_SHA256_LEN]);
void czk_zkey_id_hex(const czk_zkey *z, char out[CZK_ZKEY_ID_HEX]);

/*
 * The key id of the file at path, read without loading or validating it
 * (the container's section table, then sections 2 and 3): what a daemon
 * computes to see whether the file on disk is still the key it loaded.
 * Fills the file's stamp too.  0, or -errno / -EINVAL (not a zkey container,
 * section 2 or 3 missing) with e naming the file.
 */
int czk_zkey_ident_path(const char *path, czk_zkey_ident *out, czk_error *e);

/*
 * Compares the file at path with what was loaded from it (`loaded`).
 * Returns CZK_ZKEY_SAME when the path still names the same file with the same
 * size and modification time; otherwise reads the file's key id and returns
 * CZK_ZKEY_TOUCHED (changed on disk but the same key id: touched, or copied
 * over with the same key) or CZK_ZKEY_CHANGED (another key id, or unreadable
 * or gone).  *now gets the file's stamp and id (zeroed when unreadable);
 * what (may be NULL) gets one line for the log saying what changed, e.g.
 * "replaced (inode 12 -> 34, 1000 -> 2000 bytes): key id on disk 1f..
 * differs from the loaded ab..".  Never touches the loaded key's memory.
 */
enum { CZK_ZKEY_SAME = 0, CZK_ZKEY_TOUCHED = 1, CZK_ZKEY_CHANGED = 2 };
int czk_zkey_recheck(const czk_zkey_ident *loaded, const char *path, czk_zkey_ident *now, char *what,
                     size_t what_size);

/*
 * A daemon's re-validation point (start-up check timer, SIGHUP): runs
 * czk_zkey_recheck and logs the outcome for circuit `circuit` of program
 * `prog`, once per change (*reported holds the stamp last reported; set it
 * to loaded->stamp after loading): a warning for CZK_ZKEY_TOUCHED, an error
 * naming both key ids for CZK_ZKEY_CHANGED, and with verbose an info line
 * when nothing changed.  Returns what czk_zkey_recheck returned.
 */
int czk_zkey_recheck_log(const czk_zkey_ident *loaded, czk_zkey_stamp *reported, const char *prog,
                         const char *circuit, const char *path, int verbose);
int czk_wtns_open(czk_wtns *w, const char *path, czk_error *e);
int czk_wtns_open_fd(czk_wtns *w, int fd, const char *name, czk_error *e);
int czk_wtns_open_curves(czk_wtns *w, const char *path, unsigned curves, czk_error *e);
int czk_wtns_open_fd_curves(czk_wtns *w, int fd, const char *name, unsigned curves, czk_error *e);
/*
 * Two steps instead of czk_wtns_open_curves, for a caller that has a place
 * for the values (czk-synth: the slot's witness region): open_header maps the
 * file and checks the container, the prime against curves and section 2's
 * size, leaving w->w NULL (n_witness and curve set, the values unread);
 * load_into then copies the values into dst (8-byte aligned, dst_bytes at
 * least n_witness * 32) and checks them there (each below r, w[0] == 1),
 * with w->w = dst.  dst stays the caller's: close neither wipes nor frees it.
 */
int czk_wtns_open_header(czk_wtns *w, const char *path, unsigned curves, czk_error *e);
int czk_wtns_load_into(czk_wtns *w, void *dst, size_t dst_bytes, const char *name, czk_error *e);
void czk_wtns_close(czk_wtns *w);
int czk_r1cs_open(czk_r1cs *r, const char *path, czk_error *e);
int czk_r1cs_open_fd(czk_r1cs *r, int fd, const char *name, czk_error *e);
int czk_r1cs_open_curves(czk_r1cs *r, const char *path, unsigned curves, czk_error *e);
void czk_r1cs_close(czk_r1cs *r);
/* walk constraints: cb gets the three linear combinations (terms unaligned: memcpy) */
typedef int (*czk_r1cs_constraint_fn)(void *ctx, uint32_t index,
                                      const czk_r1cs_term *a, uint32_t na,
                                      const czk_r1cs_term *b, uint32_t nb,
                                      const czk_r1cs_term *c, uint32_t nc);
int czk_r1cs_foreach(const czk_r1cs *r, czk_r1cs_constraint_fn cb, void *ctx);
/* the constraints cut into chunks for walks in parallel: constraints
 * [first, first + count), starting at byte pos of section 2, after ab_before
 * A and B terms (those of all constraints before first) */
typedef struct czk_r1cs_chunk {
    uint32_t first, count;
    uint64_t pos, ab_before;
} czk_r1cs_chunk;
/* cuts r's constraints into n chunks of ceil(nConstraints / n) (trailing
 * ones may be empty); *ab_total: the A and B terms of all constraints */
void czk_r1cs_chunks(const czk_r1cs *r, czk_r1cs_chunk *chunks, size_t n, uint64_t *ab_total);
/* czk_r1cs_foreach over one chunk's constraints (index: the constraint's) */
int czk_r1cs_foreach_chunk(const czk_r1cs *r, const czk_r1cs_chunk *c, czk_r1cs_constraint_fn cb, void *ctx);

/* Writers (atomic: temp file, fsync, rename). */
int czk_wtns_write(const char *path, const czk_fr *w_std, uint32_t n, czk_error *e);
int czk_wtns_write_bn254(const char *path, const czk_bn254_fr *w_std, uint32_t n, czk_error *e);
/* streaming r1cs writer for gen-circuit (_curve: the header names that
 * curve's r and the terms' coefs are checked below it) */
typedef struct czk_r1cs_writer czk_r1cs_writer;
int czk_r1cs_writer_open(czk_r1cs_writer **wr, const char *path, uint32_t n_wires, uint32_t n_pub_out,
                         uint32_t n_pub_in, uint32_t n_prv_in, czk_error *e);
int czk_r1cs_writer_open_curve(czk_r1cs_writer **wr, const char *path, czk_curve_id curve, uint32_t n_wires,
                               uint32_t n_pub_out, uint32_t n_pub_in, uint32_t n_prv_in, czk_error *e);
int czk_r1cs_writer_add(czk_r1cs_writer *wr, const czk_r1cs_term *a, uint32_t na,
                        const czk_r1cs_term *b, uint32_t nb, const czk_r1cs_term *c, uint32_t nc);
int czk_r1cs_writer_close(czk_r1cs_writer *wr, czk_error *e); /* finalises header counts */

/* zkey writer: the caller fills a header and the arrays; writes sections 1-10
 * (section 10: csHash of zeros and no contributions is accepted by snarkjs prove/verify). */
typedef struct czk_zkey_spec {
    uint32_t n_vars, n_public, domain_size;
    czk_g1_aff alpha1, beta1, delta1;
    czk_g2_aff beta2, gamma2, delta2;
    const czk_g1_aff *ic, *a, *b1, *c, *h;
    const czk_g2_aff *b2;
    uint32_t n_coefs;
    const czk_zkey_coef *coefs;
    czk_curve_id curve;          /* BN254: the points come from bn, the fields above are unused */
    czk_zkey_bn254 bn;
} czk_zkey_spec;
int czk_zkey_write(const char *path, const czk_zkey_spec *s, czk_error *e);

#endif
