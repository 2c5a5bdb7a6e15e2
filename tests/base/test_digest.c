/* test_digest — common/base/digest against the FIPS 180-4 example vectors,
 * and the streaming form against the one-shot form on random splits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/digest.h"
#include "tests/common/test_util.h"

static int check(const char *msg, size_t len, const char *want)
{
    char hex[CZK_SHA256_HEX];
    czk_sha256_hex(msg, len, hex);
    if (strcmp(hex, want)) {
        fprintf(stderr, "sha256(\"%.20s...\", %zu) = %s, want %s\n", msg, len, hex, want);
        return 1;
    }
    return 0;
}

int main(void)
{
    static char million[1000000];
    uint8_t buf[4096], a[CZK_SHA256_LEN], b[CZK_SHA256_LEN];
    int bad = 0;

    memset(million, 'a', sizeof(million));
    bad |= check("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    bad |= check("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    bad |= check("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
                 "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    bad |= check(million, sizeof(million), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

    t_seed("test_digest");
    for (int t = 0; t < 50; t++) {
        size_t n = t_rand64() % sizeof(buf), off = 0;
        czk_sha256 *s;
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)t_rand64();
        czk_sha256_buf(buf, n, a);
        if (czk_sha256_new(&s) < 0)
            return 1;
        while (off < n) {
            size_t k = 1 + t_rand64() % (n - off);
            czk_sha256_update(s, buf + off, k);
            off += k;
        }
        czk_sha256_final(s, b);
        if (memcmp(a, b, sizeof(a))) {
            fprintf(stderr, "streaming digest of %zu bytes differs from the one-shot digest\n", n);
            bad = 1;
        }
    }
    bad |= t_failures != 0;
    if (!bad)
        printf("sha256: FIPS vectors and 50 random streaming splits agree\n");
    return bad;
}
