/*
 * binfile.h — the iden3 binary section container shared by .r1cs, .wtns,
 * .zkey and .ptau (snarkjs @iden3/binfileutils):
 *
 *   magic[4] | u32 version | u32 nSections | nSections x { u32 id | u64 size | payload }
 *
 * all integers little-endian.  Writers put sections in any order (circom
 * writes r1cs as 2,1,3), so a reader first builds a table id -> (offset,
 * size) and then looks sections up by id.
 *
 * The file is mapped read-only (never copied) and the table is validated
 * before anything in it is trusted: the magic, the version, every section
 * header and payload within the file, no section id twice, no bytes after
 * the last section, and (czk_binfile_require) the ids a format needs.
 * Sections cannot overlap: each header sits right after the previous payload,
 * so a section size that reaches into the next section shows up as a missing
 * or truncated section instead, and is reported as such.
 *
 * Errors name the file and what was expected vs found (czk_error) and return
 * -EINVAL for a malformed file, -errno for open/map failures.
 */
#ifndef CZK_BINFILE_H
#define CZK_BINFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/base/error.h"
#include "common/formats/formats.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "czk reads snarkjs files in place and needs a little-endian host"
#endif

#define CZK_BINFILE_MAX_SECTIONS 64
#define CZK_BINFILE_HEADER_BYTES 12         /* magic, version, nSections */
#define CZK_BINFILE_SECTION_HEADER_BYTES 12 /* id, size */

typedef struct czk_binfile_section {
    uint32_t id;
    uint64_t offset; /* of the payload, from the start of the file */
    uint64_t size;   /* payload bytes */
} czk_binfile_section;

typedef struct czk_binfile {
    const char *name;      /* for messages; the caller's string, not copied */
    const uint8_t *data;   /* whole file */
    size_t size;
    uint32_t version;
    uint32_t n_sections;
    czk_binfile_section sec[CZK_BINFILE_MAX_SECTIONS]; /* in file order */
} czk_binfile;

/* Map a whole file read-only.  *map is NULL for an empty file.  map_fd does
 * not close fd; map_path opens, maps and closes.  Only regular files. */
int czk_binfile_map_fd(const uint8_t **map, size_t *size, int fd, const char *name, czk_error *e);
int czk_binfile_map_path(const uint8_t **map, size_t *size, const char *path, czk_error *e);
void czk_binfile_unmap(const uint8_t *map, size_t size);

/* Validate the container of data[0..size) and fill bf: magic must equal
 * magic[0..4), version must equal `version`. */
int czk_binfile_parse(czk_binfile *bf, const uint8_t *data, size_t size, const char *name,
                      const char magic[4], uint32_t version, czk_error *e);

/* the section with this id, or NULL */
const czk_binfile_section *czk_binfile_find(const czk_binfile *bf, uint32_t id);

/* like find, but a missing section is an error naming `what` ("header") */
int czk_binfile_require(const czk_binfile *bf, uint32_t id, const char *what,
                        const czk_binfile_section **s, czk_error *e);

/* payload of a section (data + offset) */
static inline const uint8_t *czk_binfile_payload(const czk_binfile *bf, const czk_binfile_section *s)
{
    return bf->data + s->offset;
}

/* describe a prime found in a header for an error message, e.g.
 * "bn128's r" or "an unknown 48-byte prime"; out is always NUL-terminated */
void czk_binfile_describe_prime(char *out, size_t out_size, const uint8_t *p, uint32_t n8);

/* The field header that .r1cs and .wtns start their header section s with:
 * u32 n8 | prime[n8] LE | the format's fields, header_bytes in all.  Checks
 * that n8 fits in s, that n8 == prime_bytes, that s is exactly header_bytes
 * long and that the prime equals prime[0..prime_bytes); prime_name names it
 * in messages ("BLS12-381's r"), hint (or NULL) is appended to the message
 * for a different prime of the right size.  *rest: the bytes after the
 * prime.  0 or -EINVAL with e naming the file, the section and the field. */
int czk_binfile_check_field_header(const czk_binfile *bf, const czk_binfile_section *s,
                                   uint64_t header_bytes, const void *prime, uint32_t prime_bytes,
                                   const char *prime_name, const char *hint, const uint8_t **rest,
                                   czk_error *e);

/* The field header of a .r1cs / .wtns (as czk_binfile_check_field_header)
 * whose prime r names the curve: BLS12-381's r, or BN254's r when `curves`
 * has CZK_CURVES_BN254.  A prime of no accepted curve gets the message of
 * czk_binfile_check_field_header for BLS12-381's r (with hint), or, when
 * BN254 is accepted, one naming both curves and the prime found. */
int czk_binfile_field_curve(const czk_binfile *bf, const czk_binfile_section *s, uint64_t header_bytes,
                            unsigned curves, const char *hint, czk_curve_id *curve, const uint8_t **rest,
                            czk_error *e);

/* the 32 little-endian bytes at p (unaligned) are a scalar below the r of
 * `curve`: a witness value, an r1cs coefficient, a zkey coefficient */
bool czk_binfile_scalar_ok(czk_curve_id curve, const void *p);

/* Streamed writing of a container to a temp file that is renamed over the
 * target when done (temp in the same directory, fsync file, rename, fsync
 * directory).  Writes are buffered; any failure is kept and reported by
 * commit, which removes the temp file. */
typedef struct czk_binfile_writer czk_binfile_writer;
int czk_binfile_writer_open(czk_binfile_writer **w, const char *path, const char magic[4],
                            uint32_t version, uint32_t n_sections, czk_error *e);
/* start a section whose payload size is known (checked at the next
 * begin_section/commit) or unknown (size = UINT64_MAX, patched at its end) */
int czk_binfile_writer_begin_section(czk_binfile_writer *w, uint32_t id, uint64_t size);
int czk_binfile_writer_write(czk_binfile_writer *w, const void *p, size_t n);
int czk_binfile_writer_u32(czk_binfile_writer *w, uint32_t v);
int czk_binfile_writer_u64(czk_binfile_writer *w, uint64_t v);
int czk_binfile_writer_zeros(czk_binfile_writer *w, size_t n);
/* overwrite bytes already written at absolute file offset off */
int czk_binfile_writer_patch(czk_binfile_writer *w, uint64_t off, const void *p, size_t n);
/* absolute offset of the next byte to be written */
uint64_t czk_binfile_writer_tell(const czk_binfile_writer *w);
/* record a caller-detected error (first one wins) so that commit reports it */
int czk_binfile_writer_fail(czk_binfile_writer *w, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* finish: check section count and sizes, flush, fsync, rename; always frees w */
int czk_binfile_writer_commit(czk_binfile_writer *w, czk_error *e);
/* give up: remove the temp file and free w */
void czk_binfile_writer_abort(czk_binfile_writer *w);

/* little-endian loads from unaligned bytes */
static inline uint32_t czk_le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t czk_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

#endif
