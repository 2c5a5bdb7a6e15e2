/*
 * test_esc.c — czk_esc / czk_esc_n (common/base/log.c), the escaping every log
 * line and every client-facing string goes through:
 *   - control characters, DEL and backslash are escaped, printable ASCII kept;
 *   - invalid UTF-8 (stray continuation bytes, overlong forms, surrogates,
 *     values past U+10FFFF, sequences cut short) appears byte by byte as \xNN,
 *     valid multi-byte sequences (2, 3 and 4 bytes, the edges of each range)
 *     are kept whole;
 *   - NULs inside czk_esc_n's input are escaped;
 *   - truncation: a result that fits (even exactly) is whole; one that does
 *     not ends in "...", is the longest run of whole pieces that leaves room
 *     for it, and never splits an escape or a UTF-8 sequence;
 *   - on random bytes, the output is always valid UTF-8 without control
 *     bytes, checked by a validator written from the Unicode well-formed
 *     byte-sequence table (independent of log.c's decoder).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/log.h"
#include "tests/common/test_util.h"

static void expect(const char *in, size_t len, const char *want)
{
    char out[512];

    czk_esc_n(in, len, out, sizeof(out));
    CHECK(!strcmp(out, want), "escaping %zu bytes: got \"%s\", want \"%s\"", len, out, want);
}
#define EXPECT(lit, want) expect(lit, sizeof(lit) - 1, want)

/* Unicode 15, table 3-7 "well-formed UTF-8 byte sequences"; 1 when s[0..n) is
 * valid UTF-8 holding no C0 control and no DEL */
static int clean_utf8(const uint8_t *s, size_t n)
{
    static const struct { uint8_t lo0, hi0, lo1, hi1; int len; } rows[] = {
        {0xc2, 0xdf, 0x80, 0xbf, 2}, {0xe0, 0xe0, 0xa0, 0xbf, 3}, {0xe1, 0xec, 0x80, 0xbf, 3},
        {0xed, 0xed, 0x80, 0x9f, 3}, {0xee, 0xef, 0x80, 0xbf, 3}, {0xf0, 0xf0, 0x90, 0xbf, 4},
        {0xf1, 0xf3, 0x80, 0xbf, 4}, {0xf4, 0xf4, 0x80, 0x8f, 4},
    };
    size_t i = 0;

    while (i < n) {
        int row = -1;
        if (s[i] < 0x20 || s[i] == 0x7f)
            return 0;
        if (s[i] < 0x80) {
            i++;
            continue;
        }
        for (int r = 0; r < 8; r++)
            if (s[i] >= rows[r].lo0 && s[i] <= rows[r].hi0)
                row = r;
        if (row < 0 || i + (size_t)rows[row].len > n || s[i + 1] < rows[row].lo1 || s[i + 1] > rows[row].hi1)
            return 0;
        for (int k = 2; k < rows[row].len; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xbf)
                return 0;
        i += (size_t)rows[row].len;
    }
    return 1;
}

static void fixed_cases(void)
{
    char out[64];

    EXPECT("plain text, 100% ASCII: ok ~{}", "plain text, 100% ASCII: ok ~{}");
    EXPECT("a\nb\rc\td\x01\x1f", "a\\x0ab\\x0dc\\x09d\\x01\\x1f");
    EXPECT("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m");
    EXPECT("del\x7f", "del\\x7f");
    EXPECT("back\\slash \\x41", "back\\\\slash \\\\x41");
    EXPECT("nul\0inside", "nul\\x00inside");
    /* the bytes of the issue: not UTF-8, DEL */
    EXPECT("\xff\x7f", "\\xff\\x7f");
    /* stray continuation bytes, bytes that never start a sequence */
    EXPECT("\x80\xbf\xc0\xc1\xf5\xfe", "\\x80\\xbf\\xc0\\xc1\\xf5\\xfe");
    /* overlong: '/' in two bytes, U+007F in three, U+FFFF in four */
    EXPECT("\xc0\xaf", "\\xc0\\xaf");
    EXPECT("\xe0\x81\xbf", "\\xe0\\x81\\xbf");
    EXPECT("\xf0\x8f\xbf\xbf", "\\xf0\\x8f\\xbf\\xbf");
    /* surrogates U+D800 and U+DFFF; past U+10FFFF */
    EXPECT("\xed\xa0\x80", "\\xed\\xa0\\x80");
    EXPECT("\xed\xbf\xbf", "\\xed\\xbf\\xbf");
    EXPECT("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80");
    /* cut short: at the end, and followed by ASCII */
    EXPECT("x\xe2\x82", "x\\xe2\\x82");
    EXPECT("\xe2\x82x", "\\xe2\\x82x");
    EXPECT("\xf0\x9f\x98", "\\xf0\\x9f\\x98");
    /* valid multi-byte kept whole, including the edges of every range */
    EXPECT("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
    EXPECT("\xc2\x80\xdf\xbf", "\xc2\x80\xdf\xbf");                 /* U+0080, U+07FF */
    EXPECT("\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf",      /* U+0800, U+D7FF, U+E000, U+FFFF */
           "\xe0\xa0\x80\xed\x9f\xbf\xee\x80\x80\xef\xbf\xbf");
    EXPECT("\xf0\x90\x80\x80\xf4\x8f\xbf\xbf", "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"); /* U+10000, U+10FFFF */
    /* a valid sequence next to an invalid one */
    EXPECT("\xc3\xa9\xc3", "\xc3\xa9\\xc3");

    /* czk_esc: NUL-terminated, NULL */
    CHECK(!strcmp(czk_esc("a\tb", out, sizeof(out)), "a\\x09b"), "czk_esc: \"%s\"", out);
    CHECK(!strcmp(czk_esc(NULL, out, sizeof(out)), "(null)"), "czk_esc(NULL): \"%s\"", out);

    /* truncation: exact fit, one byte short, pieces never split */
    CHECK(!strcmp(czk_esc("abcd", out, 5), "abcd"), "exact fit: \"%s\"", out);
    CHECK(!strcmp(czk_esc("abcde", out, 5), "a..."), "one short: \"%s\"", out);
    CHECK(!strcmp(czk_esc("\x1b\x1b", out, 9), "\\x1b\\x1b"), "escapes, exact fit: \"%s\"", out);
    CHECK(!strcmp(czk_esc("\x1b\x1b", out, 8), "\\x1b..."), "escapes, one short: \"%s\"", out);
    CHECK(!strcmp(czk_esc("a\x1b\x1b", out, 8), "a..."), "escape not split: \"%s\"", out);
    CHECK(!strcmp(czk_esc("a\xe2\x82\xac", out, 5), "a\xe2\x82\xac"), "UTF-8, exact fit: \"%s\"", out);
    CHECK(!strcmp(czk_esc("\xe2\x82\xac\xe2\x82\xac", out, 6), "..."), "UTF-8 not split: \"%s\"", out);
    CHECK(!strcmp(czk_esc("abcdef", out, 3), ""), "n < 4, too long: \"%s\"", out);
    CHECK(!strcmp(czk_esc("ab", out, 3), "ab"), "n < 4, fits: \"%s\"", out);
    out[0] = 'Z';
    czk_esc("abc", out, 0);
    CHECK(out[0] == 'Z', "n == 0 wrote into the buffer");
}

/* random byte strings, biased towards the interesting bytes */
static size_t random_bytes(uint8_t *b, size_t cap)
{
    static const uint8_t pick[] = {0x00, 0x0a, 0x1b, 0x5c, 0x7f, 0x80, 0xbf, 0xc0, 0xc2, 0xc3, 0xdf, 0xe0, 0xe2,
                                   0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x9f, 0xa0, 0x8f, 0x90, 'a', 'Z', ' '};
    size_t n = (size_t)(t_rand64() % cap);

    for (size_t i = 0; i < n; i++) {
        uint64_t r = t_rand64();
        b[i] = (r & 3) ? pick[(r >> 8) % sizeof(pick)] : (uint8_t)(r >> 16);
    }
    return n;
}

static void random_cases(void)
{
    uint8_t in[48];
    char full[4 * sizeof(in) + 1], out[4 * sizeof(in) + 8], pre[4 * sizeof(in) + 1];

    for (int iter = 0; iter < 3000; iter++) {
        size_t n = random_bytes(in, sizeof(in)), flen;

        czk_esc_n(in, n, full, sizeof(full));
        flen = strlen(full);
        CHECK(clean_utf8((const uint8_t *)full, flen), "output is not clean UTF-8 (iteration %d)", iter);
        for (size_t cap = 1; cap <= flen + 2; cap++) {
            size_t olen, best = 0;

            memset(out, 'Q', sizeof(out));
            czk_esc_n(in, n, out, cap);
            olen = strlen(out);
            CHECK(olen < cap, "cap %zu: %zu bytes written", cap, olen);
            CHECK(out[cap] == 'Q', "cap %zu: wrote past the buffer", cap);
            if (flen < cap) {
                CHECK(!strcmp(out, full), "cap %zu: \"%s\" fits but came out as \"%s\"", cap, full, out);
                continue;
            }
            if (cap < 4) {
                CHECK(olen == 0, "cap %zu: \"%s\" for a result that does not fit", cap, out);
                continue;
            }
            CHECK(olen >= 3 && !strcmp(out + olen - 3, "..."), "cap %zu: truncated without \"...\": %s", cap,
                  out);
            CHECK(clean_utf8((const uint8_t *)out, olen), "cap %zu: truncated output is not clean UTF-8", cap);
            /* the kept part is the escape of some prefix of the input, the
             * longest one that leaves room for "..." */
            for (size_t j = 0; j <= n; j++) {
                czk_esc_n(in, j, pre, sizeof(pre));
                if (strlen(pre) + 3 < cap && !strncmp(pre, full, strlen(pre)))
                    best = strlen(pre) > best ? strlen(pre) : best;
            }
            CHECK(olen - 3 == best && !strncmp(out, full, best), "cap %zu: kept %zu bytes, the longest whole "
                  "prefix is %zu", cap, olen - 3, best);
        }
    }
}

int main(void)
{
    t_seed("test_esc");
    fixed_cases();
    random_cases();
    if (t_failures)
        fprintf(stderr, "test_esc: %d check(s) failed\n", t_failures);
    else
        printf("test_esc: ok\n");
    return t_failures ? 1 : 0;
}
