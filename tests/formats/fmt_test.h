/*
 * fmt_test.h — helpers shared by the file-format tests: reading a whole file,
 * opening a byte buffer through a memfd (so the readers' real mmap path is
 * exercised), an independent walk of the iden3 section headers for building
 * malformed files; CHECK and the generator are tests/common/test_util.h's.
 */
#ifndef CZK_TESTS_FMT_TEST_H
#define CZK_TESTS_FMT_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/formats/formats.h"
#include "tests/common/test_util.h"

typedef struct fmt_buf {
    uint8_t *p;
    size_t n;
} fmt_buf;

static inline fmt_buf fmt_read_file(const char *path)
{
    fmt_buf b = {0};
    FILE *f = fopen(path, "rb");
    long n;

    if (!f) {
        fprintf(stderr, "cannot open %s: %s\n", path, strerror(errno));
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b.p = malloc(n > 0 ? (size_t)n : 1);
    b.n = (size_t)n;
    if (!b.p || fread(b.p, 1, b.n, f) != b.n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    return b;
}

static inline fmt_buf fmt_dup(const uint8_t *p, size_t n)
{
    fmt_buf b = {malloc(n ? n : 1), n};
    memcpy(b.p, p, n);
    return b;
}

/* a memfd holding data, positioned at 0 */
static inline int fmt_memfd(const uint8_t *data, size_t n)
{
    int fd = memfd_create("czk-fmt-test", MFD_CLOEXEC);
    size_t off = 0;

    if (fd < 0) {
        perror("memfd_create");
        exit(2);
    }
    while (off < n) {
        ssize_t k = write(fd, data + off, n - off);
        if (k <= 0) {
            perror("write memfd");
            exit(2);
        }
        off += (size_t)k;
    }
    return fd;
}

enum fmt_kind { FMT_ZKEY, FMT_WTNS, FMT_R1CS };

/* open data as the given kind through a memfd; closes whatever opened */
static inline int fmt_try_open(enum fmt_kind kind, const uint8_t *data, size_t n, const char *name,
                               czk_error *e)
{
    int fd = fmt_memfd(data, n), rc;

    memset(e, 0, sizeof(*e));
    if (kind == FMT_ZKEY) {
        czk_zkey z;
        rc = czk_zkey_open_fd(&z, fd, name, e);
        if (!rc)
            czk_zkey_close(&z);
    } else if (kind == FMT_WTNS) {
        czk_wtns w;
        rc = czk_wtns_open_fd(&w, fd, name, e);
        if (!rc)
            czk_wtns_close(&w);
    } else {
        czk_r1cs r;
        rc = czk_r1cs_open_fd(&r, fd, name, e);
        if (!rc)
            czk_r1cs_close(&r);
    }
    close(fd);
    return rc;
}

/* independent walk of section headers: hdr_off of each section's 12-byte header */
typedef struct fmt_sec {
    uint32_t id;
    size_t hdr_off, off;
    uint64_t size;
} fmt_sec;

static inline int fmt_sections(const uint8_t *p, size_t n, fmt_sec *out, int max)
{
    uint32_t ns;
    size_t pos = 12;
    int k = 0;

    if (n < 12)
        return -1;
    memcpy(&ns, p + 8, 4);
    for (uint32_t i = 0; i < ns && k < max; i++) {
        if (pos + 12 > n)
            return -1;
        memcpy(&out[k].id, p + pos, 4);
        memcpy(&out[k].size, p + pos + 4, 8);
        out[k].hdr_off = pos;
        out[k].off = pos + 12;
        pos += 12 + out[k].size;
        k++;
    }
    return k;
}

static inline const fmt_sec *fmt_find(const fmt_sec *s, int n, uint32_t id)
{
    for (int i = 0; i < n; i++)
        if (s[i].id == id)
            return &s[i];
    return NULL;
}

#endif
