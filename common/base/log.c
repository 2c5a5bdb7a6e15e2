/* log.c — stderr logging with program name and pid, escaped (see log.h). */
#include "common/base/log.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *log_prog = "czk";
static int log_level = CZK_LOG_INFO;
static int log_journal; /* stderr is the journal's stream: add <N> prefixes */

/* JOURNAL_STREAM is "DEV:INO" of the journal's socket; it is inherited by
 * children whose stderr was redirected, so compare with stderr itself */
static int stderr_is_journal(void)
{
    const char *js = getenv("JOURNAL_STREAM");
    unsigned long long dev, ino;
    struct stat st;

    if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
        return 0;
    return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

void czk_log_init(const char *prog, int level)
{
    const char *env = getenv("CZK_LOG_LEVEL");
    log_prog = prog;
    log_level = env ? atoi(env) : level;
    log_journal = stderr_is_journal();
}

/* length of the valid UTF-8 sequence at s (at most len bytes), 0 if none */
static size_t utf8_len(const uint8_t *s, size_t len)
{
    uint32_t c;
    size_t k;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        k = 2, c = s[0] & 0x1f;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        k = 3, c = s[0] & 0x0f;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        k = 4, c = s[0] & 0x07;
    else
        return 0;
    if (k > len)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    /* overlong forms, surrogates and values past U+10FFFF are not UTF-8 */
    if ((k == 3 && c < 0x800) || (k == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    return k;
}

/* the escaped form of the piece at s[0] (one byte, or one whole valid UTF-8
 * sequence) into out[4]; returns its length, *adv = bytes of s it covers */
static size_t esc_piece(const uint8_t *s, size_t len, char out[4], size_t *adv)
{
    static const char hex[] = "0123456789abcdef";
    uint8_t b = s[0];
    size_t k;

    *adv = 1;
    if (b == '\\') {
        out[0] = '\\', out[1] = '\\';
        return 2;
    }
    if (b >= 0x20 && b < 0x7f) {
        out[0] = (char)b;
        return 1;
    }
    if (b >= 0x80 && (k = utf8_len(s, len)) > 0) {
        memcpy(out, s, k);
        *adv = k;
        return k;
    }
    out[0] = '\\', out[1] = 'x', out[2] = hex[b >> 4], out[3] = hex[b & 15];
    return 4;
}

const char *czk_esc_n(const void *src, size_t len, char *buf, size_t n)
{
    const uint8_t *s = src;
    size_t total = 0, o = 0, room;
    char piece[4];

    if (!n)
        return buf;
    /* does all of it fit?  Then no "..." is needed, however close the fit */
    for (size_t i = 0, adv; i < len && total < n; i += adv)
        total += esc_piece(s + i, len - i, piece, &adv);
    room = total < n ? n - 1 : (n >= 4 ? n - 4 : 0);
    for (size_t i = 0, adv; i < len;) {
        size_t k = esc_piece(s + i, len - i, piece, &adv);
        if (o + k > room)
            break;
        memcpy(buf + o, piece, k);
        o += k;
        i += adv;
    }
    if (total >= n && n >= 4) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = 0;
    return buf;
}

const char *czk_esc(const char *s, char *buf, size_t n)
{
    return czk_esc_n(s ? s : "(null)", s ? strlen(s) : 6, buf, n);
}

void czk_log(int level, const char *fmt, ...)
{
    static const char *names[8] = {"emerg", "alert", "crit", "error", "warning", "notice", "info", "debug"};
    char msg[1024], out[2048];
    va_list ap;

    if (level > log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    czk_esc(msg, out, sizeof(out));
    if (log_journal)
        fprintf(stderr, "<%d>%s[%d]: %s: %s\n", level & 7, log_prog, (int)getpid(), names[level & 7], out);
    else
        fprintf(stderr, "%s[%d]: %s: %s\n", log_prog, (int)getpid(), names[level & 7], out);
}
