/*
 * layout.h — every byte layout that is shared between processes or survives a
 * restart: the shared-memory pool header, the per-slot header, the slot payload
 * layout, and the journal file and record headers (docs/style.md: one header for
 * every shared layout).
 *
 * Rules that hold for everything in this file:
 *  - fixed-width little-endian fields (x86-64 and aarch64 hosts only), offsets
 *    relative to the start of the mapping or file, never pointers (each process
 *    maps the pool at its own address);
 *  - a magic and a layout version at the start; any change to a struct below
 *    bumps the matching *_VERSION, and the _Static_asserts make an accidental
 *    change break the build rather than a running system;
 *  - fields written by one process and read by another are accessed only with
 *    the __atomic builtins (release store to publish, acquire load to read);
 *    the accessors in pool.h do that, nothing else should touch them.
 *
 * Pool mapping (offsets from the start of the memfd / hugetlbfs file):
 *
 *   0                      czk_pool_header (4096 bytes)
 *   4096                   czk_slot_header[slot_count] (64 bytes each)
 *   data_offset            slot 0 payload, slot_stride bytes
 *   data_offset + stride   slot 1 payload ...
 *
 * data_offset and slot_stride are multiples of the pool's page size (2 MiB or
 * 1 GiB for hugepages, 4 KiB on the fallback), so every slot payload starts on
 * its own page and is aligned for DMA and for cudaHostRegister.
 */
#ifndef CZK_IPC_LAYOUT_H
#define CZK_IPC_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- pool --- */

#define CZK_POOL_MAGIC 0x4c4f4f50204b5a43ull /* "CZK POOL" little-endian */
#define CZK_POOL_LAYOUT_VERSION 1u
#define CZK_POOL_HEADER_SIZE 4096u
#define CZK_SLOT_HEADER_SIZE 64u
#define CZK_POOL_MAX_SLOTS 4096u

/* czk_pool_header.flags */
#define CZK_POOL_F_HUGETLB 0x1u /* backed by hugetlb pages of page_size bytes */
#define CZK_POOL_F_NUMA_BOUND 0x2u /* mbind(MPOL_BIND) to numa_node was applied */

/*
 * The pool header.  Written by the pool owner (czk-gpud) only: at creation, and
 * at adoption by a restarted owner (epoch, owner_pid, owner_start).  Other
 * processes only read it.  layout_version is stored last with a release store,
 * so a reader that sees the right version sees a complete header (Aeron's
 * "await version" rule).  header_crc covers bytes [0, offsetof(header_crc)) with
 * layout_version taken as written, i.e. the immutable geometry plus identity.
 */
typedef struct czk_pool_header {
    uint64_t magic;            /* CZK_POOL_MAGIC */
    uint32_t layout_version;   /* CZK_POOL_LAYOUT_VERSION, stored last */
    uint32_t header_size;      /* CZK_POOL_HEADER_SIZE */
    uint32_t pool_id;          /* chosen by the owner, usually the NUMA node */
    int32_t numa_node;         /* node the pages are bound to, -1 when unbound */
    uint32_t slot_count;       /* number of slots */
    uint32_t flags;            /* CZK_POOL_F_* */
    uint64_t page_size;        /* backing page size in bytes */
    uint64_t slot_size;        /* usable payload bytes per slot (as requested) */
    uint64_t slot_stride;      /* slot_size rounded up to page_size */
    uint64_t slot_hdr_offset;  /* offset of czk_slot_header[0] (= 4096) */
    uint64_t data_offset;      /* offset of slot 0's payload */
    uint64_t total_size;       /* size of the mapping */
    uint64_t created_ns;       /* CLOCK_REALTIME at creation */
    uint32_t header_crc;       /* crc32 (zlib) of the bytes before this field */
    uint32_t reserved0;
    /* mutable, written by the (current) owner only */
    uint64_t epoch;            /* 1 at creation, +1 at every adoption */
    uint32_t owner_pid;        /* pid of the process that created or adopted */
    uint32_t reserved1;
    uint64_t owner_start;      /* owner's start time (/proc/<pid>/stat field 22) */
    uint64_t adopted_ns;       /* CLOCK_REALTIME of the last adoption, 0 if none */
    uint8_t pad[CZK_POOL_HEADER_SIZE - 128];
} czk_pool_header;

_Static_assert(offsetof(czk_pool_header, magic) == 0, "pool header layout");
_Static_assert(offsetof(czk_pool_header, layout_version) == 8, "pool header layout");
_Static_assert(offsetof(czk_pool_header, header_size) == 12, "pool header layout");
_Static_assert(offsetof(czk_pool_header, pool_id) == 16, "pool header layout");
_Static_assert(offsetof(czk_pool_header, numa_node) == 20, "pool header layout");
_Static_assert(offsetof(czk_pool_header, slot_count) == 24, "pool header layout");
_Static_assert(offsetof(czk_pool_header, flags) == 28, "pool header layout");
_Static_assert(offsetof(czk_pool_header, page_size) == 32, "pool header layout");
_Static_assert(offsetof(czk_pool_header, slot_size) == 40, "pool header layout");
_Static_assert(offsetof(czk_pool_header, slot_stride) == 48, "pool header layout");
_Static_assert(offsetof(czk_pool_header, slot_hdr_offset) == 56, "pool header layout");
_Static_assert(offsetof(czk_pool_header, data_offset) == 64, "pool header layout");
_Static_assert(offsetof(czk_pool_header, total_size) == 72, "pool header layout");
_Static_assert(offsetof(czk_pool_header, created_ns) == 80, "pool header layout");
_Static_assert(offsetof(czk_pool_header, header_crc) == 88, "pool header layout");
_Static_assert(offsetof(czk_pool_header, epoch) == 96, "pool header layout");
_Static_assert(offsetof(czk_pool_header, owner_pid) == 104, "pool header layout");
_Static_assert(offsetof(czk_pool_header, owner_start) == 112, "pool header layout");
_Static_assert(offsetof(czk_pool_header, adopted_ns) == 120, "pool header layout");
_Static_assert(offsetof(czk_pool_header, pad) == 128, "pool header layout");
_Static_assert(sizeof(czk_pool_header) == CZK_POOL_HEADER_SIZE, "pool header size");

/* ---------------------------------------------------------------- slot --- */

/*
 * Slot states.  The comment on each says which process writes the transition
 * INTO that state; the writer is always the process that owns the slot at that
 * moment, so no lock is needed (docs/design.md section 4).
 *
 *   FREE     -> ASSIGNED  gpud, before it sends ASSIGN (generation + 1)
 *   ASSIGNED -> FILLING   synth that was named in ASSIGN, when it starts writing
 *   FILLING  -> READY     synth, after the payload and lengths are written and
 *                         before it sends READY
 *   READY    -> DMA       gpud, when it starts copying the slot to the device
 *   DMA      -> FREE      gpud, when the copy is complete, before RELEASE
 *   ASSIGNED/FILLING -> FREE   gpud, reclaim after the owning synth died
 *                         (generation + 1, so late writes by a zombie fail)
 *   DMA      -> READY     a restarted gpud, at adoption (the copy was lost)
 *
 * Every transition is a compare-and-swap on the 64-bit control word `ctl`,
 * which packs generation, owner and state; a writer holding a stale
 * generation (a synth that outlived its lease, a message from before a
 * restart) therefore fails instead of corrupting the slot.  That CAS is the
 * only synchronisation: it is lock-free and has exactly one legitimate writer.
 */
enum czk_slot_state {
    CZK_SLOT_FREE = 0,
    CZK_SLOT_ASSIGNED = 1,
    CZK_SLOT_FILLING = 2,
    CZK_SLOT_READY = 3,
    CZK_SLOT_DMA = 4,
    CZK_SLOT_STATE_COUNT = 5
};

/* ctl = generation(32) << 32 | owner(24) << 8 | state(8) */
#define CZK_SLOT_CTL(gen, owner, state) \
    (((uint64_t)(uint32_t)(gen) << 32) | (((uint64_t)(owner)&0xffffffu) << 8) | ((uint64_t)(state)&0xffu))
#define CZK_SLOT_CTL_GEN(ctl) ((uint32_t)((ctl) >> 32))
#define CZK_SLOT_CTL_OWNER(ctl) ((uint32_t)(((ctl) >> 8) & 0xffffffu))
#define CZK_SLOT_CTL_STATE(ctl) ((uint32_t)((ctl)&0xffu))

/* czk_slot_header.flags */
#define CZK_SLOT_F_CRC 0x1u /* payload_crc is valid for [0, data_len) */

/*
 * One cache line per slot.  ctl is the only field written with atomics; the
 * other fields are plain data written by the slot's current owner before it
 * publishes a state with a release CAS on ctl, and read by the next owner
 * after an acquire load of ctl.
 */
typedef struct czk_slot_header {
    uint64_t ctl;            /* generation | owner | state, see above */
    uint64_t job_id;         /* written by gpud at ASSIGN */
    uint32_t partition;      /* written by gpud at ASSIGN */
    uint32_t flags;          /* CZK_SLOT_F_*, written by the filler */
    uint64_t lease_deadline; /* CLOCK_MONOTONIC ns after which gpud takes the slot back (0: never); gpud at ASSIGN */
    uint64_t domain_size;    /* elements of a, b, c; written by the filler */
    uint64_t n_vars;         /* elements of w; written by the filler */
    uint64_t data_len;       /* payload bytes used; written by the filler */
    uint32_t payload_crc;    /* crc32 (zlib) of payload [0, data_len) */
    uint32_t hdr_crc;        /* crc32 of bytes [8, 60) of this header */
} czk_slot_header;

_Static_assert(offsetof(czk_slot_header, ctl) == 0, "slot header layout");
_Static_assert(offsetof(czk_slot_header, job_id) == 8, "slot header layout");
_Static_assert(offsetof(czk_slot_header, partition) == 16, "slot header layout");
_Static_assert(offsetof(czk_slot_header, flags) == 20, "slot header layout");
_Static_assert(offsetof(czk_slot_header, lease_deadline) == 24, "slot header layout");
_Static_assert(offsetof(czk_slot_header, domain_size) == 32, "slot header layout");
_Static_assert(offsetof(czk_slot_header, n_vars) == 40, "slot header layout");
_Static_assert(offsetof(czk_slot_header, data_len) == 48, "slot header layout");
_Static_assert(offsetof(czk_slot_header, payload_crc) == 56, "slot header layout");
_Static_assert(offsetof(czk_slot_header, hdr_crc) == 60, "slot header layout");
_Static_assert(sizeof(czk_slot_header) == CZK_SLOT_HEADER_SIZE, "slot header size");
_Static_assert(CZK_POOL_HEADER_SIZE + (size_t)CZK_POOL_MAX_SLOTS * CZK_SLOT_HEADER_SIZE <= 2u * 1024 * 1024 / 2,
               "pool + slot headers of a full pool fit well inside one 2 MiB page");

/*
 * Slot payload for the snarkjs Groth16 convention: a, b, c (domain_size Fr
 * elements each, Montgomery form) then w (n_vars Fr, standard form), each
 * section starting on a CZK_SLOT_SECTION_ALIGN boundary for DMA.
 * czk_slot_payload_layout() in pool.h computes the offsets.
 */
#ifndef CZK_FR_BYTES
#define CZK_FR_BYTES 32
#endif
#define CZK_SLOT_SECTION_ALIGN 4096u

/* ------------------------------------------------------------- journal --- */

#define CZK_JOURNAL_MAGIC 0x4c4e524a204b5a43ull /* "CZK JRNL" little-endian */
#define CZK_JOURNAL_VERSION 1u
#define CZK_JOURNAL_REC_MAGIC 0x4352u /* "RC" */
#define CZK_JOURNAL_MAX_PAYLOAD (1u << 20) /* 1 MiB per record */

/* File header, written once when the file is created (and by compaction). */
typedef struct czk_journal_file_header {
    uint64_t magic;        /* CZK_JOURNAL_MAGIC */
    uint32_t version;      /* CZK_JOURNAL_VERSION */
    uint32_t header_size;  /* sizeof(czk_journal_file_header) */
    uint64_t created_ns;   /* CLOCK_REALTIME */
    uint64_t base_seq;     /* seq of the first record in this file */
    uint32_t reserved;
    uint32_t crc;          /* crc32 of bytes [0, 36) */
} czk_journal_file_header;

_Static_assert(offsetof(czk_journal_file_header, magic) == 0, "journal header layout");
_Static_assert(offsetof(czk_journal_file_header, version) == 8, "journal header layout");
_Static_assert(offsetof(czk_journal_file_header, header_size) == 12, "journal header layout");
_Static_assert(offsetof(czk_journal_file_header, created_ns) == 16, "journal header layout");
_Static_assert(offsetof(czk_journal_file_header, base_seq) == 24, "journal header layout");
_Static_assert(offsetof(czk_journal_file_header, reserved) == 32, "journal header layout");
_Static_assert(offsetof(czk_journal_file_header, crc) == 36, "journal header layout");
_Static_assert(sizeof(czk_journal_file_header) == 40, "journal header size");

/*
 * Record header, followed by `len` payload bytes and padding to a multiple of
 * 8.  crc is crc32 (zlib) over the header with crc set to 0, then the payload;
 * a record whose header or payload is cut short or does not match its crc is
 * the torn tail: replay stops there and an appender truncates it away.
 */
#define CZK_JOURNAL_LAG_SHIFT 8
#define CZK_JOURNAL_LAG_MAX 0xffffffu

typedef struct czk_journal_rec_header {
    uint16_t magic;    /* CZK_JOURNAL_REC_MAGIC */
    uint16_t type;     /* application record type, != 0 */
    uint32_t len;      /* payload bytes, <= CZK_JOURNAL_MAX_PAYLOAD */
    uint64_t seq;      /* previous seq + 1 */
    uint32_t flags;    /* bit 0: CZK_JOURNAL_SYNC when it was fsynced on append; bits 8-31: the lag
                          (CZK_JOURNAL_LAG_SHIFT), seq minus the highest seq known durable when it was
                          written, at most CZK_JOURNAL_LAG_MAX; 0 in records of older builds, which
                          synced every record (read as 1) */
    uint32_t crc;
} czk_journal_rec_header;

_Static_assert(offsetof(czk_journal_rec_header, magic) == 0, "journal record layout");
_Static_assert(offsetof(czk_journal_rec_header, type) == 2, "journal record layout");
_Static_assert(offsetof(czk_journal_rec_header, len) == 4, "journal record layout");
_Static_assert(offsetof(czk_journal_rec_header, seq) == 8, "journal record layout");
_Static_assert(offsetof(czk_journal_rec_header, flags) == 16, "journal record layout");
_Static_assert(offsetof(czk_journal_rec_header, crc) == 20, "journal record layout");
_Static_assert(sizeof(czk_journal_rec_header) == 24, "journal record size");

#endif
