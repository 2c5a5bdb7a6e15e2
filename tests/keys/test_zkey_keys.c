/*
 * test_zkey_keys.c — key identity and private loading of zkeys
 * (common/formats/zkey.c): czk_zkey_id is the same for the same file however it
 * is read (open, load, ident_path), differs for another setup of the same
 * circuit and for one changed byte anywhere in the header or IC; a zkey
 * loaded with czk_zkey_load keeps every byte it loaded after the file is
 * truncated or overwritten in place (no SIGBUS, no other key); sections
 * not asked for are not there; czk_zkey_recheck tells unchanged, touched,
 * modified in place and replaced files apart.
 * usage: test_zkey_keys FIXTURES_DIR
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/formats/binfile.h"
#include "common/formats/formats.h"
#include "common/groth16/setup.h"
#include "tests/common/test_util.h"

static char dir[256];

static uint64_t t_range(uint64_t lo, uint64_t hi) /* inclusive */
{
    return lo + t_rand64() % (hi - lo + 1);
}

static void t_fill(void *p, size_t n)
{
    uint8_t *b = p;
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)t_rand64();
}

static void copy_file(const char *from, const char *to)
{
    char cmd[2100];
    snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", from, to);
    CHECK(system(cmd) == 0, "%s", cmd);
}

static uint64_t file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* payload offset and size of section id in the file at p */
static int section_of(const char *p, uint32_t id, uint64_t *off, uint64_t *size)
{
    const uint8_t *map;
    size_t n;
    czk_binfile bf;
    czk_error e = {0};
    int found = 0;

    if (czk_binfile_map_path(&map, &n, p, &e) < 0 || czk_binfile_parse(&bf, map, n, p, "zkey", 1, &e) < 0)
        return 0;
    const czk_binfile_section *s = czk_binfile_find(&bf, id);
    if (s) {
        *off = s->offset, *size = s->size, found = 1;
    }
    czk_binfile_unmap(map, n);
    return found;
}

static void flip_byte(const char *p, uint64_t off)
{
    int fd = open(p, O_RDWR);
    uint8_t b;
    CHECK(fd >= 0 && pread(fd, &b, 1, (off_t)off) == 1, "read %s", p);
    b ^= (uint8_t)(1u << t_range(0, 7));
    CHECK(pwrite(fd, &b, 1, (off_t)off) == 1, "write %s", p);
    close(fd);
}

static void ident(const char *p, uint8_t out[CZK_SHA256_LEN])
{
    czk_zkey_ident id;
    czk_error e = {0};
    CHECK(czk_zkey_ident_path(p, &id, &e) == 0, "ident %s: %s", p, e.msg);
    memcpy(out, id.id, CZK_SHA256_LEN);
}

static void test_ids(const char *fix)
{
    char zk[512], r1cs[512], other[512], flip[512];
    uint8_t a[32], b[32], c[32];
    czk_zkey z1, z2;
    czk_error e = {0};
    uint64_t off, size;

    snprintf(zk, sizeof(zk), "%s/multi/circuit.zkey", fix);
    snprintf(r1cs, sizeof(r1cs), "%s/multi/circuit.r1cs", fix);
    CHECK(czk_zkey_open(&z1, zk, &e) == 0, "%s", e.msg);
    CHECK(czk_zkey_load(&z2, zk, CZK_ZKEY_ALL, &e) == 0, "%s", e.msg);
    czk_zkey_id(&z1, a);
    czk_zkey_id(&z2, b);
    ident(zk, c);
    CHECK(!memcmp(a, b, 32) && !memcmp(a, c, 32), "the same file gives the same key id (open, load, ident_path)");
    {
        char h1[CZK_ZKEY_ID_HEX], h2[CZK_ZKEY_ID_HEX];
        czk_zkey_id_hex(&z1, h1);
        czk_hex(c, 32, h2);
        CHECK(strlen(h1) == 64 && !strcmp(h1, h2), "hex id %s", h1);
    }
    czk_zkey_close(&z1);
    czk_zkey_close(&z2);

    /* a second setup of the same circuit: another delta, another id; a
     * different circuit: another id */
    snprintf(other, sizeof(other), "%s/other.zkey", dir);
    CHECK(czk_setup_dev(r1cs, other, 2, NULL, &e) == 0, "setup: %s", e.msg);
    ident(other, b);
    CHECK(memcmp(a, b, 32) != 0, "another setup of the same circuit has another key id");
    snprintf(flip, sizeof(flip), "%s/linear/circuit.zkey", fix);
    ident(flip, b);
    CHECK(memcmp(a, b, 32) != 0, "another circuit has another key id");

    /* one changed byte anywhere in sections 2 and 3 changes the id; the
     * point sections beyond are not part of it (the cheap digest) */
    snprintf(flip, sizeof(flip), "%s/flip.zkey", dir);
    for (uint32_t sec = 2; sec <= 3; sec++) {
        CHECK(section_of(zk, sec, &off, &size), "section %u", sec);
        for (int k = 0; k < 40; k++) {
            uint64_t at = off + t_range(0, size - 1);
            copy_file(zk, flip);
            flip_byte(flip, at);
            ident(flip, b);
            CHECK(memcmp(a, b, 32) != 0, "a flipped byte at %llu (section %u) leaves the key id unchanged",
                  (unsigned long long)at, sec);
        }
    }
    CHECK(section_of(zk, 9, &off, &size), "section 9");
    copy_file(zk, flip);
    flip_byte(flip, off + t_range(0, size - 1));
    ident(flip, b);
    CHECK(!memcmp(a, b, 32), "section 9 (H) is not part of the key id");
}

static void test_load(const char *fix)
{
    char zk[512], src[512], what[512], other[512], r1cs[512];
    czk_zkey ref, z, zc, zn;
    czk_zkey_ident now;
    czk_error e = {0};
    int fd;

    snprintf(src, sizeof(src), "%s/multi/circuit.zkey", fix);
    snprintf(r1cs, sizeof(r1cs), "%s/multi/circuit.r1cs", fix);
    snprintf(zk, sizeof(zk), "%s/live.zkey", dir);
    copy_file(src, zk);
    CHECK(czk_zkey_open(&ref, src, &e) == 0, "%s", e.msg);
    CHECK(czk_zkey_load(&z, zk, CZK_ZKEY_ALL, &e) == 0, "%s", e.msg);
    CHECK(czk_zkey_load(&zc, zk, CZK_ZKEY_COEFS, &e) == 0, "%s", e.msg);
    CHECK(czk_zkey_load(&zn, zk, 0, &e) == 0, "%s", e.msg);
    CHECK(czk_zkey_recheck(&z.ident, zk, &now, what, sizeof(what)) == CZK_ZKEY_SAME, "fresh: %s", what);

    /* what was asked for, and only that */
    CHECK(zc.coefs && zc.n_coefs == ref.n_coefs && !zc.a && !zc.h && !zc.b2 && zc.ic, "coefficients only");
    CHECK(!zn.coefs && zn.n_coefs == 0 && !zn.a && zn.ic, "header and IC only");
    CHECK(zn.n_vars == ref.n_vars && zn.n_public == ref.n_public && zn.domain_size == ref.domain_size &&
              !memcmp(&zn.delta2, &ref.delta2, sizeof(ref.delta2)), "header fields");

    /* truncate in place, then overwrite in place with random bytes: the
     * loaded keys read exactly what they loaded (no SIGBUS) */
    fd = open(zk, O_RDWR);
    CHECK(fd >= 0 && ftruncate(fd, 100) == 0, "truncate");
    CHECK(czk_zkey_recheck(&z.ident, zk, &now, what, sizeof(what)) == CZK_ZKEY_CHANGED &&
              strstr(what, "modified in place"), "truncated: %s", what);
    printf("truncated: %s\n", what);
    {
        uint8_t junk[4096];
        uint64_t n = file_size(src);
        for (uint64_t o = 0; o < n; o += sizeof(junk)) {
            t_fill(junk, sizeof(junk));
            CHECK(pwrite(fd, junk, sizeof(junk), (off_t)o) == (ssize_t)sizeof(junk), "overwrite");
        }
    }
    close(fd);
    CHECK(!memcmp(z.a, ref.a, ref.n_vars * sizeof(czk_g1_aff)) &&
              !memcmp(z.b2, ref.b2, ref.n_vars * sizeof(czk_g2_aff)) &&
              !memcmp(z.h, ref.h, ref.domain_size * sizeof(czk_g1_aff)) &&
              !memcmp(z.ic, ref.ic, (ref.n_public + 1) * sizeof(czk_g1_aff)),
          "points survive truncation and overwriting");
    CHECK(!memcmp(zc.coefs, ref.coefs, (size_t)ref.n_coefs * sizeof(czk_zkey_coef)),
          "coefficients survive truncation and overwriting");
    CHECK(czk_zkey_recheck(&z.ident, zk, &now, what, sizeof(what)) == CZK_ZKEY_CHANGED &&
              strstr(what, "no longer readable"), "overwritten: %s", what);
    printf("overwritten: %s\n", what);
    CHECK(czk_zkey_load(&zn, zk, 0, &e) < 0, "a garbage file does not load");

    /* replaced by rename with another setup: another key id, named */
    czk_zkey_close(&z);
    copy_file(src, zk);
    CHECK(czk_zkey_load(&z, zk, CZK_ZKEY_ALL, &e) == 0, "%s", e.msg);
    snprintf(other, sizeof(other), "%s/other2.zkey", dir);
    CHECK(czk_setup_dev(r1cs, other, 2, NULL, &e) == 0, "%s", e.msg);
    CHECK(rename(other, zk) == 0, "rename");
    CHECK(czk_zkey_recheck(&z.ident, zk, &now, what, sizeof(what)) == CZK_ZKEY_CHANGED &&
              strstr(what, "replaced") && strstr(what, "differs"), "replaced: %s", what);
    printf("replaced: %s\n", what);
    /* the same key copied over it: touched, same id */
    copy_file(src, zk);
    CHECK(czk_zkey_recheck(&z.ident, zk, &now, what, sizeof(what)) == CZK_ZKEY_TOUCHED &&
              !memcmp(now.id, z.ident.id, 32), "same key again: %s", what);
    unlink(zk);
    CHECK(czk_zkey_recheck(&z.ident, zk, &now, what, sizeof(what)) == CZK_ZKEY_CHANGED, "removed: %s", what);
    czk_zkey_close(&z);
    czk_zkey_close(&zc);
    czk_zkey_close(&ref);
}

int main(int argc, char **argv)
{
    char cmd[600];

    if (argc != 2) {
        fprintf(stderr, "usage: %s FIXTURES_DIR\n", argv[0]);
        return 2;
    }
    t_seed("test_zkey_keys");
    snprintf(dir, sizeof(dir), "/tmp/czk-keys.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    test_ids(argv[1]);
    test_load(argv[1]);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    if (t_failures) {
        fprintf(stderr, "test_zkey_keys: %d checks failed\n", t_failures);
        return 1;
    }
    printf("test_zkey_keys: ok\n");
    return 0;
}
