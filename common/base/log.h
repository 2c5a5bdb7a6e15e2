/*
 * log.h — one log line per event, at the point of detection (docs/style.md).
 *
 * Lines go to stderr as "<prog>[pid]: level: message"; lower case, no
 * period.  When stderr is connected to the systemd journal (JOURNAL_STREAM
 * names it), each line starts with the syslog priority prefix ("<3>" ...
 * "<7>") so that `journalctl -p` filters by level.
 *
 * Every line is escaped before it is written: control characters, DEL and
 * bytes that are not valid UTF-8 appear as \xNN, and a backslash as \\, so a
 * string from a client or a file can never forge a line or a terminal
 * sequence.  czk_esc() does the same for a single string (for messages that
 * leave the process other than through the log, e.g. error replies).
 */
#ifndef CZK_LOG_H
#define CZK_LOG_H

#include <stddef.h>

enum { CZK_LOG_ERR = 3, CZK_LOG_WARN = 4, CZK_LOG_INFO = 6, CZK_LOG_DEBUG = 7 };

void czk_log_init(const char *prog, int level);
void czk_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define czk_err(...) czk_log(CZK_LOG_ERR, __VA_ARGS__)
#define czk_warn(...) czk_log(CZK_LOG_WARN, __VA_ARGS__)
#define czk_info(...) czk_log(CZK_LOG_INFO, __VA_ARGS__)
#define czk_debug(...) czk_log(CZK_LOG_DEBUG, __VA_ARGS__)

/* Escapes the NUL-terminated s into buf (n bytes) as described above and
 * returns buf.  A result that does not fit in n - 1 bytes is cut after the
 * last whole piece (an escape or a UTF-8 sequence is never split) and ends in
 * "..." (the empty string when it does not fit and n < 4; n == 0 leaves buf
 * alone). */
const char *czk_esc(const char *s, char *buf, size_t n);

/* The same over len bytes of s (which may hold NULs). */
const char *czk_esc_n(const void *s, size_t len, char *buf, size_t n);

#endif
