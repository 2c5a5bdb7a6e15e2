/*
 * backend.c — the table of compute backends czk-gpud can run (backend.h).
 * The CUDA backend joins this table when it provides a czk_backend_ops.
 */
#include "gpud/backend.h"

#include <errno.h>
#include <string.h>

static const czk_backend_ops *const backends[] = {
    &czk_backend_cpu_ops,
};

const czk_backend_ops *czk_backend_find(const char *name, czk_error *e)
{
    size_t n = sizeof(backends) / sizeof(backends[0]);
    if (!strcmp(name, "auto"))
        return backends[0]; /* the first entry is the preferred one */
    for (size_t i = 0; i < n; i++)
        if (!strcmp(backends[i]->name, name))
            return backends[i];
    czk_errorf(e, -ENOTSUP, "backend \"%s\" is not built into this czk-gpud (available: cpu)", name);
    return NULL;
}
