/*
 * fuzz_formats.c — libFuzzer target for one reader, chosen at compile time:
 * CZK_FUZZ_KIND 0 = zkey, 1 = wtns, 2 = r1cs.  The input is put in a memfd
 * and opened through the real mmap path; when the reader accepts it, every
 * byte it hands out (points, coefficients, witness, constraints) is read, so
 * a pointer or length it got wrong shows up under ASan or as a crash.
 * Built with clang -fsanitize=fuzzer,address,undefined (tests/formats/
 * CMakeLists.txt), or linked with fuzz_replay.c when there is no libFuzzer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/formats/formats.h"

#ifndef CZK_FUZZ_KIND
#error "define CZK_FUZZ_KIND (0 zkey, 1 wtns, 2 r1cs)"
#endif

static volatile uint8_t sink;

static void touch(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint8_t x = 0;

    for (size_t i = 0; i < n; i++)
        x ^= b[i];
    sink ^= x;
}

#if CZK_FUZZ_KIND == 2
static int walk(void *ctx, uint32_t index, const czk_r1cs_term *a, uint32_t na,
                const czk_r1cs_term *b, uint32_t nb, const czk_r1cs_term *c, uint32_t nc)
{
    const czk_r1cs *r = ctx;
    const czk_r1cs_term *lc[3] = {a, b, c};
    uint32_t n[3] = {na, nb, nc};

    for (int k = 0; k < 3; k++)
        for (uint32_t i = 0; i < n[k]; i++) {
            czk_r1cs_term t;
            memcpy(&t, &lc[k][i], sizeof(t));
            if (t.wire >= r->n_wires)
                abort(); /* the reader promised wire < nWires */
            touch(&t, sizeof(t));
        }
    return 0;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    czk_error e = {0};
    int rc;

    if (fd < 0 && (fd = memfd_create("czk-fuzz", MFD_CLOEXEC)) < 0) {
        perror("memfd_create");
        abort();
    }
    if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
        perror("memfd write");
        abort();
    }
#if CZK_FUZZ_KIND == 0
    czk_zkey z;
    rc = czk_zkey_open_fd(&z, fd, "fuzz.zkey", &e);
    if (!rc) {
        touch(z.ic, sizeof(*z.ic) * ((size_t)z.n_public + 1));
        touch(z.a, sizeof(*z.a) * z.n_vars);
        touch(z.b1, sizeof(*z.b1) * z.n_vars);
        touch(z.b2, sizeof(*z.b2) * z.n_vars);
        touch(z.c, sizeof(*z.c) * ((size_t)z.n_vars - z.n_public - 1));
        touch(z.h, sizeof(*z.h) * z.domain_size);
        touch(z.coefs, sizeof(*z.coefs) * z.n_coefs);
        for (uint32_t i = 0; i < z.n_coefs; i++) {
            czk_zkey_coef c;
            memcpy(&c, &z.coefs[i], sizeof(c));
            if (c.matrix > 1 || c.constraint >= z.domain_size || c.signal >= z.n_vars)
                abort(); /* the reader promised these */
        }
        czk_zkey_close(&z);
    }
#elif CZK_FUZZ_KIND == 1
    czk_wtns w;
    rc = czk_wtns_open_fd(&w, fd, "fuzz.wtns", &e);
    if (!rc) {
        touch(w.w, sizeof(*w.w) * w.n_witness);
        czk_wtns_close(&w);
    }
#else
    czk_r1cs r;
    rc = czk_r1cs_open_fd(&r, fd, "fuzz.r1cs", &e);
    if (!rc) {
        czk_r1cs_foreach(&r, walk, &r);
        czk_r1cs_close(&r);
    }
#endif
    if (rc && (e.code != rc || !e.msg[0]))
        abort(); /* every refusal carries its code and a message */
    return 0;
}
