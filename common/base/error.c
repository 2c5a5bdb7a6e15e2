/* error.c — see error.h */
#include "common/base/error.h"

#include <stdarg.h>
#include <stdio.h>

int czk_errorf(czk_error *e, int code, const char *fmt, ...)
{
    va_list ap;

    if (!e)
        return code;
    e->code = code;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
    va_end(ap);
    return code;
}
