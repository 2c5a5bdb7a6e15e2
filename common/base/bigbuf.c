/*
 * bigbuf.c — see bigbuf.h.
 */
#include "common/base/bigbuf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE ((size_t)2 << 20)
#define PAGE ((size_t)4096)
#define HDR ((size_t)64)

size_t czk_bigbuf_map_len(size_t bytes)
{
    if (bytes < CZK_BIGBUF_MAP_MIN || bytes > SIZE_MAX / 2)
        return 0;
    return (bytes + HUGE - 1) & ~(HUGE - 1);
}

void *czk_bigbuf_alloc(size_t bytes)
{
    size_t len;
    uint8_t *m, *p;

    if (bytes > SIZE_MAX / 2)
        return NULL;
    if (bytes < CZK_BIGBUF_MAP_MIN) {
        p = aligned_alloc(HDR, HDR + ((bytes + HDR - 1) & ~(HDR - 1)));
        if (!p)
            return NULL;
        memset(p, 0, sizeof(size_t));
        return p + HDR;
    }
    /* len bytes from a 2 MiB boundary, one 4 KiB page before them for the header */
    len = czk_bigbuf_map_len(bytes);
    m = mmap(NULL, len + HUGE + PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    p = (uint8_t *)(((uintptr_t)m + PAGE + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    if (p - PAGE > m)
        munmap(m, (size_t)(p - PAGE - m));
    munmap(p + len, (size_t)(m + len + HUGE + PAGE - (p + len)));
#ifdef MADV_HUGEPAGE
    madvise(p, len, MADV_HUGEPAGE);
#endif
    memcpy(p - HDR, &len, sizeof(len));
    return p;
}

size_t czk_bigbuf_mapped(const void *q)
{
    size_t len;

    memcpy(&len, (const uint8_t *)q - HDR, sizeof(len));
    return len;
}

void czk_bigbuf_free(void *q)
{
    uint8_t *p = q;
    size_t len;

    if (!p)
        return;
    len = czk_bigbuf_mapped(p);
    if (!len)
        free(p - HDR);
    else
        munmap(p - PAGE, len + PAGE);
}
