/*
 * pool.h — shared-memory pools of fixed slots (docs/design.md section 4, "Pool slots").
 *
 * Who calls what:
 *   gpud (the pool owner)
 *     czk_pool_create()   new pool: memfd (or a file on hugetlbfs/tmpfs when
 *                         opts.path is set), hugepages when reserved, bound to
 *                         a NUMA node, every page pre-faulted, headers written
 *     czk_pool_prefault() the pre-faulting of a pool created with defer_prefault
 *     czk_pool_adopt()    after a gpud restart: map the pool fd it got back
 *                         (systemd fdstore, a peer, or the named file), check
 *                         the headers, bump the epoch, turn DMA slots back to
 *                         READY
 *     czk_slot_assign / czk_slot_begin_dma / czk_slot_release / czk_slot_reclaim
 *   synth (fills slots)
 *     czk_pool_attach()   map the fd received in POOL and check it against it
 *     czk_slot_begin_fill / czk_slot_publish_ready
 *   anyone
 *     czk_pool_close(), czk_slot_data(), czk_slot_ctl(), czk_slot_verify()
 *
 * Slot state transitions are CAS operations on one 64-bit word per slot
 * (layout.h explains the states and which process writes each one).  A
 * transition returns -ESTALE when the slot is not in the expected
 * (generation, owner, state): the caller's view is out of date (stale
 * message, reclaimed lease, restart) and it must drop what it was doing.
 *
 * Hugepages: opts.huge = CZK_POOL_HUGE_AUTO tries MFD_HUGETLB and falls back to
 * 4 KiB pages with a warning when none are reserved; _REQUIRE fails instead;
 * _NEVER skips them.  The environment variable CZK_POOL_HUGEPAGES=never
 * (or =require) overrides the option, for tests and for operators.
 * Pre-faulting (MADV_POPULATE_WRITE, else fallocate) turns an exhausted
 * hugepage reserve into an error from czk_pool_create, never a SIGBUS later.
 *
 * Lifetime: a memfd pool lives while any process holds its fd or a mapping,
 * so it survives the crash of any one process as long as another one (a
 * synth, the systemd fdstore) still holds it; a named pool (opts.path) lives
 * until the file is unlinked.
 */
#ifndef CZK_IPC_POOL_H
#define CZK_IPC_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/base/error.h"
#include "ipc/layout.h"

enum czk_pool_huge {
    CZK_POOL_HUGE_AUTO = 0,
    CZK_POOL_HUGE_REQUIRE = 1,
    CZK_POOL_HUGE_NEVER = 2,
};

typedef struct czk_pool_opts {
    uint32_t pool_id;
    int numa_node;          /* -1: do not bind */
    uint32_t slot_count;    /* 1 .. CZK_POOL_MAX_SLOTS */
    uint64_t slot_size;     /* payload bytes per slot */
    int huge;               /* enum czk_pool_huge */
    uint64_t huge_page_size; /* 0 or 2 MiB (default), or 1 GiB */
    const char *path;       /* NULL: anonymous memfd; else create this file (O_EXCL) */
    const char *name;       /* memfd name for /proc/<pid>/fd, default "czk-pool" */
    /* 1: czk_pool_create maps the pool and writes its headers but leaves the
     * pre-faulting to czk_pool_prefault, which must run (and succeed) before
     * any slot is handed out or the pool page-locked.  The fallback from
     * hugepages to 4 KiB pages then happens only at mmap (which reserves the
     * hugepages of a hugetlb memfd); a shortage that shows only when pages
     * are touched (a NUMA-bound node short of hugepages) is
     * czk_pool_prefault's error. */
    int defer_prefault;
} czk_pool_opts;

/* A mapped pool.  Fields are read-only for callers. */
typedef struct czk_pool {
    int fd;
    uint8_t *base;
    size_t size;
    czk_pool_header *hdr;
    czk_slot_header *slots;
    uint64_t page_size;
    bool hugetlb;
    bool owner;           /* created or adopted by this process */
    double prefault_s;    /* time spent pre-faulting (create or czk_pool_prefault) */
    bool prefault_pending; /* created with defer_prefault, czk_pool_prefault not yet done */
    int bound_node;       /* the NUMA node the pages are bound to, -1 */
} czk_pool;

typedef struct czk_pool_adopt_report {
    uint64_t old_epoch, new_epoch;
    uint32_t old_owner_pid;
    uint32_t count[CZK_SLOT_STATE_COUNT]; /* slots per state after adoption */
    uint32_t dma_to_ready;                /* DMA slots turned back to READY */
    uint32_t bad_ready;                   /* READY slots whose crc failed: freed */
} czk_pool_adopt_report;

typedef struct czk_slot_layout {
    uint64_t off_a, off_b, off_c, off_w; /* offsets inside the slot payload */
    uint64_t total;                      /* bytes used */
} czk_slot_layout;

int czk_pool_create(czk_pool *p, const czk_pool_opts *o, czk_error *err);

/* The pre-faulting a pool created with defer_prefault still needs (no-op
 * otherwise): every page touched on several threads, then the NUMA binding
 * checked.  Safe while other threads read the headers. */
int czk_pool_prefault(czk_pool *p, czk_error *err);

/* fd: the pool's fd (dup'ed; the caller keeps its own).  rep may be NULL. */
int czk_pool_adopt(czk_pool *p, int fd, czk_pool_adopt_report *rep, czk_error *err);

/*
 * Maps a pool as a non-owner (synth, finalizer).  When expect is non-NULL
 * (the POOL message that came with fd) its geometry and epoch must match.
 * fd is dup'ed.
 */
struct czk_msg_pool;
int czk_pool_attach(czk_pool *p, int fd, const struct czk_msg_pool *expect, czk_error *err);

/* Opens a named pool file (opts.path of the creator) for adopt/attach. */
int czk_pool_open_path(const char *path, int *fd_out, czk_error *err);

/* Fills a POOL message describing p (the fd travels separately). */
void czk_pool_describe(const czk_pool *p, struct czk_msg_pool *m);

void czk_pool_close(czk_pool *p);

/* Unmaps and removes a named pool file; for anonymous pools same as close. */
int czk_pool_destroy_path(const char *path);

static inline uint8_t *czk_slot_data(const czk_pool *p, uint32_t slot)
{
    return p->base + p->hdr->data_offset + (uint64_t)slot * p->hdr->slot_stride;
}

static inline uint64_t czk_slot_ctl(const czk_pool *p, uint32_t slot)
{
    return __atomic_load_n(&p->slots[slot].ctl, __ATOMIC_ACQUIRE);
}

/* a, b, c then w, each section aligned to CZK_SLOT_SECTION_ALIGN */
void czk_slot_payload_layout(uint64_t domain_size, uint64_t n_vars, czk_slot_layout *l);

/* gpud: FREE -> ASSIGNED, generation + 1; returns the new generation in *gen. */
int czk_slot_assign(czk_pool *p, uint32_t slot, uint32_t owner, uint64_t job_id, uint32_t partition,
                    uint64_t lease_deadline_ns, uint32_t *gen, czk_error *err);
/* synth: ASSIGNED -> FILLING */
int czk_slot_begin_fill(czk_pool *p, uint32_t slot, uint32_t gen, uint32_t owner, czk_error *err);
/* synth: FILLING -> READY, after writing the payload; with_crc computes the payload crc32 */
int czk_slot_publish_ready(czk_pool *p, uint32_t slot, uint32_t gen, uint32_t owner, uint64_t domain_size,
                           uint64_t n_vars, uint64_t data_len, bool with_crc, czk_error *err);
/* gpud: READY -> DMA */
int czk_slot_begin_dma(czk_pool *p, uint32_t slot, uint32_t gen, czk_error *err);
/* gpud: DMA -> FREE (the copy to the device is complete) */
int czk_slot_release(czk_pool *p, uint32_t slot, uint32_t gen, czk_error *err);
/* gpud: ASSIGNED or FILLING -> FREE with generation + 1 (the filler died or its lease expired) */
int czk_slot_reclaim(czk_pool *p, uint32_t slot, uint32_t gen, czk_error *err);
/* gpud: reclaims every ASSIGNED/FILLING slot of owner; returns how many */
int czk_pool_reclaim_owner(czk_pool *p, uint32_t owner);

/* Checks a READY slot's header crc and (when flagged) payload crc. */
int czk_slot_verify(const czk_pool *p, uint32_t slot, czk_error *err);
/* The header crc and the data length only (what adoption checks: the payload
 * is checked once, with czk_slot_verify, before it is used). */
int czk_slot_verify_header(const czk_pool *p, uint32_t slot, czk_error *err);

const char *czk_slot_state_name(uint32_t state);

#endif
