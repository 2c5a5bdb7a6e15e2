/*
 * backend.c — the table of compute backends czk-gpud can run (backend.h),
 * and czk_backend_open: create by name, with the cuda -> cpu fallback.
 * The first entry is the preferred one ("auto").
 */
#include "backend/backend.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/base/log.h"

static const czk_backend_ops *const backends[] = {
#ifdef CZK_HAVE_CUDA_BACKEND
    &czk_backend_cuda_ops,
#endif
    &czk_backend_cpu_ops,
};

const czk_backend_ops *czk_backend_find(const char *name, czk_error *e)
{
    size_t n = sizeof(backends) / sizeof(backends[0]);
    char list[64] = "";
    if (!strcmp(name, "auto"))
        return backends[0]; /* the first entry is the preferred one */
    for (size_t i = 0; i < n; i++)
        if (!strcmp(backends[i]->name, name))
            return backends[i];
    for (size_t i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "", backends[i]->name);
    czk_errorf(e, -ENOTSUP, "backend \"%s\" is not built into this czk (available: %s)", name, list);
    return NULL;
}

int czk_backend_open(const char *name, int fallback, const czk_backend_config *cfg, const czk_backend_ops **ops,
                     czk_backend **out, czk_error *e)
{
    const czk_backend_ops *o = czk_backend_find(name, e);
    int r;

    *out = NULL;
    *ops = NULL;
    if (!o)
        return e ? e->code : -ENOTSUP;
    if (!strcmp(name, "auto"))
        fallback = 1;
    r = o->create(out, cfg, e);
    if (r == 0) {
        *ops = o;
        return 0;
    }
    if (!fallback || o == &czk_backend_cpu_ops || (r != -ENODEV && r != -ENOEXEC && (r != -ENOMEM || cfg->defer_keys)))
        return r;
    czk_warn("%s backend unavailable (%s): falling back to the cpu backend", o->name, e && e->msg[0] ? e->msg : strerror(-r));
    if (e)
        memset(e, 0, sizeof(*e));
    if ((r = czk_backend_cpu_ops.create(out, cfg, e)) < 0)
        return r;
    *ops = &czk_backend_cpu_ops;
    return 0;
}

int czk_backend_setup_accel(const char *name, czk_setup_accel *accel, czk_error *e)
{
    const czk_backend_ops *o = czk_backend_find(name, e);

    memset(accel, 0, sizeof(*accel));
    if (!o)
        return e ? e->code : -ENOTSUP;
    if (o == &czk_backend_cpu_ops) /* "cpu", or "auto" in a czk without the cuda backend */
        return 0;
#ifdef CZK_HAVE_CUDA_BACKEND
    const int is_auto = !strcmp(name, "auto");
    czk_error none = { 0 };
    int r = czk_backend_cuda_setup_accel_(accel, is_auto, is_auto ? &none : e);

    if (r == -ENOEXEC && is_auto) /* a GPU is there but cannot run the kernels: worth saying */
        czk_warn("cuda backend unavailable (%s): the setup runs on the cpu", none.msg);
    return (r == -ENODEV || r == -ENOEXEC) && is_auto ? 0 : r;
#else
    return 0;
#endif
}
