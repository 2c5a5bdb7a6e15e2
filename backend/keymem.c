/*
 * keymem.c — key points in device memory kept in systemd's fd store
 * (keymem.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/keymem.h"
#include "common/base/crc.h"
#include "common/base/log.h"
#include "common/crypto/curve.h"
#include "common/runtime/daemon.h"

#define KEYMEM_MAGIC "CZKKEYM1"
#define KEYMEM_VERSION 2u /* 2: section C led by the public inputs' infinity points */

/* the header, little-endian as the host writes it (one host, one build) */
typedef struct keymem_hdr {
    char magic[8];
    uint32_t version, hdr_bytes;
    uint8_t key_id[CZK_SHA256_LEN];
    czk_zkey_stamp stamp;
    uint32_t n_vars, n_public, domain_size, reserved;
    uint64_t off[CZK_KEYMEM_SECTIONS], n[CZK_KEYMEM_SECTIONS];
    uint64_t total;
    uint32_t crc; /* of everything above */
} keymem_hdr;

_Static_assert(sizeof(keymem_hdr) <= CZK_KEYMEM_HDR, "keymem header");

void czk_keymem_name(int device, const czk_zkey *z, char name[64])
{
    char suffix[CZK_KEYMEM_SUFFIX];
    czk_keymem_suffix(z->ident.id, suffix);
    snprintf(name, 64, "key-%d%s", device, suffix);
}

/* sections A, B1, B2, C, H after the header, each 256-byte aligned, of the
 * key's curve's affine points (the key id, in the name and the header, says
 * which key and so which curve); C has n_vars points, the first
 * CZK_KEYMEM_C_LEAD(z) of them infinity (keymem.h) */
static uint64_t layout(const czk_zkey *z, uint64_t off[], uint64_t n[])
{
    uint64_t o = CZK_KEYMEM_HDR;
    const uint64_t g1 = czk_groth16_any_point_bytes(z->curve, CZK_G16_PT_A);
    const uint64_t g2 = czk_groth16_any_point_bytes(z->curve, CZK_G16_PT_B2);
    const uint64_t sz[CZK_KEYMEM_SECTIONS] = {g1, g1, g2, g1, g1};
    n[CZK_KEYMEM_A] = n[CZK_KEYMEM_B1] = n[CZK_KEYMEM_B2] = z->n_vars;
    n[CZK_KEYMEM_C] = z->n_vars;
    n[CZK_KEYMEM_H] = z->domain_size;
    for (int s = 0; s < CZK_KEYMEM_SECTIONS; s++) {
        off[s] = o;
        o += (n[s] * sz[s] + 255) & ~(uint64_t)255;
    }
    return o;
}

int czk_keymem_alloc(int device, const czk_zkey *z, czk_keymem *km, czk_error *e)
{
    memset(km, 0, sizeof(*km));
    km->vm.fd = -1;
    uint64_t total = layout(z, km->off, km->n);
    czk_keymem_name(device, z, km->name);
    int r = czk_cuda_vmm_alloc(device, total, &km->vm);
    if (r < 0)
        return czk_errorf(e, r, "key memory %s: %llu MiB on GPU %d: %s", km->name,
                          (unsigned long long)(total >> 20), device, czk_cuda_last_error());
    return 0;
}

static void fill_hdr(keymem_hdr *h, const czk_zkey *z, const czk_keymem *km)
{
    memset(h, 0, sizeof(*h));
    memcpy(h->magic, KEYMEM_MAGIC, 8);
    h->version = KEYMEM_VERSION;
    h->hdr_bytes = (uint32_t)sizeof(*h);
    memcpy(h->key_id, z->ident.id, CZK_SHA256_LEN);
    h->stamp = z->ident.stamp;
    h->n_vars = z->n_vars;
    h->n_public = z->n_public;
    h->domain_size = z->domain_size;
    memcpy(h->off, km->off, sizeof(h->off));
    memcpy(h->n, km->n, sizeof(h->n));
    h->total = layout(z, (uint64_t[CZK_KEYMEM_SECTIONS]){0}, (uint64_t[CZK_KEYMEM_SECTIONS]){0});
    h->crc = czk_crc32(czk_crc32_init(), h, offsetof(keymem_hdr, crc));
}

int czk_keymem_seal(czk_keymem *km, const czk_zkey *z, czk_error *e)
{
    keymem_hdr h;
    int r;
    fill_hdr(&h, z, km);
    if ((r = czk_cuda_vmm_write(&km->vm, 0, &h, sizeof(h))) < 0)
        return czk_errorf(e, r, "key memory %s: writing its header: %s", km->name, czk_cuda_last_error());
    /* an older copy under the same name (handed back at start, not usable):
     * take and close ours, then drop systemd's, before storing this one */
    int old = czk_daemon_fdstore_take(km->name);
    if (old >= 0)
        close(old);
    czk_daemon_fdstore_remove(km->name);
    r = czk_daemon_fdstore_put(km->vm.fd, km->name);
    if (r == -ENOTSUP)
        return 0;
    if (r < 0) {
        czk_warn("key memory %s: not kept in the fd store (%s): a restart will upload the key again", km->name,
                 strerror(-r));
        return 0;
    }
    km->stored = 1;
    return 1;
}

int czk_keymem_attach(int device, const czk_zkey *z, czk_keymem *km, czk_error *e)
{
    keymem_hdr want, got;
    uint64_t total;
    int fd, r;

    memset(km, 0, sizeof(*km));
    km->vm.fd = -1;
    czk_keymem_name(device, z, km->name);
    if ((fd = czk_daemon_fdstore_take(km->name)) < 0)
        return 0;
    total = layout(z, km->off, km->n);
    r = czk_cuda_vmm_import(device, fd, czk_cuda_vmm_round(device, total), &km->vm);
    close(fd);
    if (r < 0) {
        czk_warn("key memory %s from the fd store cannot be mapped (%s): loading the key from its file", km->name,
                 czk_cuda_last_error());
        czk_daemon_fdstore_remove(km->name);
        memset(km, 0, sizeof(*km));
        km->vm.fd = -1;
        return 0;
    }
    fill_hdr(&want, z, km);
    if ((r = czk_cuda_vmm_read(&km->vm, 0, &got, sizeof(got))) < 0) {
        czk_cuda_vmm_free(&km->vm);
        return czk_errorf(e, r, "key memory %s: reading its header: %s", km->name, czk_cuda_last_error());
    }
    const char *why = memcmp(got.magic, KEYMEM_MAGIC, 8) || got.version != KEYMEM_VERSION ? "no valid header"
                      : got.crc != czk_crc32(czk_crc32_init(), &got, offsetof(keymem_hdr, crc))
                          ? "its header's checksum does not match"
                      : memcmp(got.key_id, want.key_id, CZK_SHA256_LEN) ? "another key id"
                      : memcmp(&got.stamp, &want.stamp, sizeof(got.stamp))
                          ? "the zkey file changed since (device, inode, size or mtime)"
                      : memcmp(&got, &want, offsetof(keymem_hdr, crc)) ? "other sizes"
                                                                        : NULL;
    if (why) {
        czk_info("key memory %s from the fd store not used: %s; loading the key from its file", km->name, why);
        czk_cuda_vmm_free(&km->vm);
        czk_daemon_fdstore_remove(km->name);
        memset(km, 0, sizeof(*km));
        km->vm.fd = -1;
        return 0;
    }
    km->stored = 1;
    return 1;
}

void czk_keymem_free(czk_keymem *km, int drop)
{
    if (!km)
        return;
    if (drop && km->stored)
        czk_daemon_fdstore_remove(km->name);
    czk_cuda_vmm_free(&km->vm);
    memset(km, 0, sizeof(*km));
    km->vm.fd = -1;
}
