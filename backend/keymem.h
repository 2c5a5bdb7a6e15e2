/*
 * keymem.h — a circuit's key points in device memory that survives a
 * restart of czk-gpud (cuda backend).
 *
 * The five point sections of one circuit on one GPU (A, B1, B2, C, H, in the
 * zkey's affine layout) live in one fd-shareable allocation
 * (backend/cuda/czk_cuda_vmm.h).  Section C is indexed by witness variable
 * like A, B1 and B2: its first n_public + 1 points (the constant's and the
 * public inputs', which the zkey's C has none of) are infinity (all zero), so
 * the C MSM runs over the whole witness and shares the sorted digits of A's
 * (backend_cuda.c).  Its first CZK_KEYMEM_HDR bytes describe it:
 * magic, the key id, the zkey file's stamp (device, inode, size, mtime) when
 * it was read, the circuit's sizes and the section offsets, under a CRC.
 * Under systemd, gpud puts the allocation's fd into the service's fd store as
 * "key-<gpu>-<first 24 hex digits of the key id>" once the upload is complete
 * (the header is written last).  A restarted gpud takes it back
 * (czk_keymem_attach): when the header names the same key id, the same file
 * stamp and the same sizes as the zkey on disk now, the memory is mapped and
 * used as it is — no read of the points, no upload — so a restart takes the
 * same time at any key size.  Any mismatch (the file was replaced, touched or
 * rewritten, another key, a torn header) drops the stored copy and the key is
 * loaded and checked from the file as on a first start.  The device copy was
 * made from points that passed gpud's checks, so it is never less trustworthy
 * than the file.
 *
 * Outside systemd (no NOTIFY_SOCKET) nothing is stored and attach finds
 * nothing.  Thread-safe: one call per circuit at a time (gpud: the circuit's
 * loader thread).
 */
#ifndef CZK_BACKEND_KEYMEM_H
#define CZK_BACKEND_KEYMEM_H

#include <stddef.h>
#include <stdint.h>

#include "backend/cuda/czk_cuda.h"
#include "backend/cuda/czk_cuda_vmm.h"
#include "common/base/error.h"
#include "common/formats/formats.h"

#define CZK_KEYMEM_HDR 4096u

enum { CZK_KEYMEM_A, CZK_KEYMEM_B1, CZK_KEYMEM_B2, CZK_KEYMEM_C, CZK_KEYMEM_H, CZK_KEYMEM_SECTIONS };

/* infinity points that lead section C: those of the public inputs and the constant one */
#define CZK_KEYMEM_C_LEAD(z) ((uint64_t)(z)->n_public + 1)

typedef struct czk_keymem {
    czk_cuda_vmm vm;
    uint64_t off[CZK_KEYMEM_SECTIONS]; /* byte offset of each section in vm */
    uint64_t n[CZK_KEYMEM_SECTIONS];   /* points in each section */
    char name[64];                     /* the fd store name */
    int stored;                        /* the fd is in the fd store */
} czk_keymem;

/* allocates the memory for z's sections on device (z: sizes and key id; its
 * points are not read) and lays the sections out; the header is not written
 * yet, so the memory describes nothing until czk_keymem_seal */
int czk_keymem_alloc(int device, const czk_zkey *z, czk_keymem *km, czk_error *e);

/* device address of section s */
static inline void *czk_keymem_section(const czk_keymem *km, int s)
{
    return (char *)km->vm.ptr + km->off[s];
}

/* after every section was uploaded: writes the header and, under systemd,
 * puts the fd into the fd store (replacing an entry of the same name).
 * Returns 1 stored, 0 not under systemd (nothing stored), or -errno. */
int czk_keymem_seal(czk_keymem *km, const czk_zkey *z, czk_error *e);

/* takes "key-<device>-<id>" from the fds systemd handed back at start and
 * maps it when its header matches z (key id, file stamp, sizes).  Returns 1
 * attached (km ready to use, still stored), 0 nothing usable (why is logged;
 * a mismatching entry is dropped from the fd store), or -errno. */
int czk_keymem_attach(int device, const czk_zkey *z, czk_keymem *km, czk_error *e);

/* unmaps km in this process; with drop, also removes it from the fd store so
 * that the device memory is freed when gpud exits */
void czk_keymem_free(czk_keymem *km, int drop);

/* the name under which z's memory on device is stored */
void czk_keymem_name(int device, const czk_zkey *z, char name[64]);

#endif
