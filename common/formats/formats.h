/*
 * formats.h — snarkjs/circom binary files: the iden3 section container,
 * .zkey (groth16), .wtns (v2), .r1cs (v1); readers map the file (no copy) and
 * validate everything before trusting it; writers for what czk generates.
 * Exact formats: docs/file-formats.md sections 3 and 4.
 *
 * Pointers into a mapped file: point sections are used in place when they are
 * 8-byte aligned in the file, otherwise copied once into an aligned buffer.
 */
#ifndef CZK_FORMATS_H
#define CZK_FORMATS_H

#include <stdint.h>
#include <stddef.h>

#include "common/crypto/curve.h"
#include "common/base/error.h"

/* one entry of zkey section 4, as stored (44 bytes, unaligned) */
typedef struct __attribute__((packed)) czk_zkey_coef {
    uint32_t matrix;     /* 0 = A, 1 = B */
    uint32_t constraint; /* row */
    uint32_t signal;     /* wire */
    czk_fr value;        /* coef * R^2 mod r ("Montgomery of Montgomery") */
} czk_zkey_coef;
_Static_assert(sizeof(czk_zkey_coef) == 44, "zkey coefficient entry is 44 bytes");

typedef struct czk_zkey {
    const uint8_t *map;   /* whole file, read-only mapping */
    size_t map_size;
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
    void *owned[8];         /* aligned copies made by the reader, freed on close */
} czk_zkey;

typedef struct czk_wtns {
    const uint8_t *map;
    size_t map_size;
    uint32_t n_witness;
    const czk_fr *w;        /* standard form, w[0] == 1 */
    void *owned;
} czk_wtns;

typedef struct czk_r1cs {
    const uint8_t *map;
    size_t map_size;
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
void czk_zkey_close(czk_zkey *z);
int czk_wtns_open(czk_wtns *w, const char *path, czk_error *e);
int czk_wtns_open_fd(czk_wtns *w, int fd, const char *name, czk_error *e);
void czk_wtns_close(czk_wtns *w);
int czk_r1cs_open(czk_r1cs *r, const char *path, czk_error *e);
int czk_r1cs_open_fd(czk_r1cs *r, int fd, const char *name, czk_error *e);
void czk_r1cs_close(czk_r1cs *r);
/* walk constraints: cb gets the three linear combinations (terms unaligned: memcpy) */
typedef int (*czk_r1cs_constraint_fn)(void *ctx, uint32_t index,
                                      const czk_r1cs_term *a, uint32_t na,
                                      const czk_r1cs_term *b, uint32_t nb,
                                      const czk_r1cs_term *c, uint32_t nc);
int czk_r1cs_foreach(const czk_r1cs *r, czk_r1cs_constraint_fn cb, void *ctx);

/* Writers (atomic: temp file, fsync, rename). */
int czk_wtns_write(const char *path, const czk_fr *w_std, uint32_t n, czk_error *e);
/* streaming r1cs writer for gen-circuit */
typedef struct czk_r1cs_writer czk_r1cs_writer;
int czk_r1cs_writer_open(czk_r1cs_writer **wr, const char *path, uint32_t n_wires, uint32_t n_pub_out,
                         uint32_t n_pub_in, uint32_t n_prv_in, czk_error *e);
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
} czk_zkey_spec;
int czk_zkey_write(const char *path, const czk_zkey_spec *s, czk_error *e);

#endif
