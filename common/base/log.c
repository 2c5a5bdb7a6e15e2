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

const char *czk_esc_n(const void *src, size_t len, char *buf, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const uint8_t *s = src;
    size_t o = 0, i = 0;

    if (!n)
        return buf;
    while (i < len) {
        char tmp[4];
        size_t k = 0, adv = 1;
        uint8_t b = s[i];

        if (b == '\\') {
            tmp[k++] = '\\', tmp[k++] = '\\';
        } else if (b < 0x20 || b == 0x7f) {
            tmp[k++] = '\\', tmp[k++] = 'x', tmp[k++] = hex[b >> 4], tmp[k++] = hex[b & 15];
        } else if (b < 0x80) {
            tmp[k++] = (char)b;
        } else if ((adv = utf8_len(s + i, len - i)) == 0) {
            adv = 1;
            tmp[k++] = '\\', tmp[k++] = 'x', tmp[k++] = hex[b >> 4], tmp[k++] = hex[b & 15];
        } else {
            /* a valid multi-byte sequence is copied whole or not at all */
            if (o + adv + 4 > n)
                goto trunc;
            memcpy(buf + o, s + i, adv);
            o += adv;
            i += adv;
            continue;
        }
        if (o + k + 4 > n && i + adv < len)
            goto trunc;
        if (o + k + 1 > n)
            goto trunc;
        memcpy(buf + o, tmp, k);
        o += k;
        i += adv;
    }
    buf[o] = 0;
    return buf;
trunc:
    while (o + 4 > n && o > 0)
        o--;
    if (n >= 4) {
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
