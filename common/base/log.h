/*
 * log.h — one log line per event, at the point of detection (STYLE.md).
 * Lines go to stderr as "<prog>[pid]: level: message"; lower case, no period.
 */
#ifndef CZK_LOG_H
#define CZK_LOG_H

enum { CZK_LOG_ERR = 3, CZK_LOG_WARN = 4, CZK_LOG_INFO = 6, CZK_LOG_DEBUG = 7 };

void czk_log_init(const char *prog, int level);
void czk_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define czk_err(...) czk_log(CZK_LOG_ERR, __VA_ARGS__)
#define czk_warn(...) czk_log(CZK_LOG_WARN, __VA_ARGS__)
#define czk_info(...) czk_log(CZK_LOG_INFO, __VA_ARGS__)
#define czk_debug(...) czk_log(CZK_LOG_DEBUG, __VA_ARGS__)

#endif
