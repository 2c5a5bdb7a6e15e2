/*
 * bigbuf.h — 64-byte aligned buffers for large, short-lived data (the
 * prover's vectors, a key's aligned point copies, MSM scratch).
 *
 * Fresh memory is what costs there: a 4 KiB page fault is ~10 us in a VM,
 * so a multi-MiB buffer in 4 KiB pages pays milliseconds before it is used.
 * From CZK_BIGBUF_MAP_MIN bytes a buffer is its own anonymous mapping,
 * 2 MiB aligned and a multiple of 2 MiB long, with MADV_HUGEPAGE (advice:
 * 4 KiB pages where the kernel refuses); below, a malloc block.  The length
 * is kept in a header before the data (in the 4 KiB page before a mapping,
 * so a mapping of k huge pages touches k of them).  Contents unspecified.
 * Thread-safe; no wiping (callers wipe what is secret before freeing).
 */
#ifndef CZK_BASE_BIGBUF_H
#define CZK_BASE_BIGBUF_H

#include <stddef.h>

#define CZK_BIGBUF_MAP_MIN ((size_t)1 << 20)

/* bytes of 64-byte aligned memory; NULL when out of memory */
void *czk_bigbuf_alloc(size_t bytes);
/* the length of the mapping czk_bigbuf_alloc(bytes) makes, or 0 when it
 * makes a malloc block (below CZK_BIGBUF_MAP_MIN, or beyond SIZE_MAX / 2) */
size_t czk_bigbuf_map_len(size_t bytes);
/* the length of p's mapping (a multiple of 2 MiB, at least the bytes asked
 * for), or 0 for a malloc block */
size_t czk_bigbuf_mapped(const void *p);
/* frees p (NULL: nothing) */
void czk_bigbuf_free(void *p);

#endif
