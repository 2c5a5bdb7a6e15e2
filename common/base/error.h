/*
 * error.h — an error value with a message for the caller to show.
 * Readers and parsers fill a czk_error naming the file, section or field and
 * what was expected, and return -errno (docs/style.md: errors are values).  The
 * caller decides whether to log it (CLI), send it to a client (daemon), or both.
 */
#ifndef CZK_ERROR_H
#define CZK_ERROR_H

#include <stddef.h>

typedef struct czk_error {
    int code;       /* -errno, 0 when none */
    char msg[512];
} czk_error;

/* sets e (when non-NULL) and returns code; code must be negative */
int czk_errorf(czk_error *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
