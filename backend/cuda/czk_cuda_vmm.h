/*
 * czk_cuda_vmm.h — device memory that outlives the process that filled it.
 *
 * A czk_cuda_vmm is one device allocation made through CUDA's virtual memory
 * management (cuMemCreate) with a POSIX file descriptor as its shareable
 * handle.  The physical memory lives as long as ANY reference to it does: a
 * mapping in a process, or an open copy of the fd in any process.  czk-gpud
 * puts the fd of each circuit's device-resident key points into systemd's fd
 * store (common/runtime/daemon.h); a restarted gpud gets it back and maps the
 * same memory again in well under a millisecond (measured on the H200: 9 GiB
 * imported and mapped in < 1 ms), so a restart does not depend on key size.
 *
 * The driver API is reached through cudaGetDriverEntryPointByVersion, so
 * binaries do not link libcuda and still load on a host without a driver
 * (czk_cuda_vmm_supported then says no).  All functions are thread-safe and
 * return 0 or -errno (-ENODEV no driver or device, -ENOTSUP the device cannot
 * export POSIX fds, -ENOMEM no device memory, -EIO any other failure, logged
 * once and kept for czk_cuda_last_error()).
 */
#ifndef CZK_CUDA_VMM_H
#define CZK_CUDA_VMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct czk_cuda_vmm {
    void *ptr;           /* device address of the mapping, valid in this process */
    size_t size;         /* mapped bytes: the request rounded up to the granularity */
    int fd;              /* the shareable handle (owned; closed by czk_cuda_vmm_free) */
    int device;
    unsigned long long handle; /* CUmemGenericAllocationHandle */
} czk_cuda_vmm;

/* 1 when device can create and export fd-shareable allocations, else 0 */
int czk_cuda_vmm_supported(int device);

/* the size czk_cuda_vmm_alloc(device, bytes) maps (bytes rounded up to the
 * device's recommended granularity); 0 when the device cannot tell */
size_t czk_cuda_vmm_round(int device, size_t bytes);

/* allocates at least bytes on device, maps it read-write for this process and
 * exports it as an fd (m->fd) */
int czk_cuda_vmm_alloc(int device, size_t bytes, czk_cuda_vmm *m);

/* maps the allocation behind fd (from czk_cuda_vmm_alloc, in this process or
 * another one, e.g. handed back by the fd store).  fd is duplicated, the
 * caller keeps its own.  bytes must be the allocation's size as recorded by
 * its creator (m->size there); -EINVAL when the driver disagrees. */
int czk_cuda_vmm_import(int device, int fd, size_t bytes, czk_cuda_vmm *m);

/* synchronous copies between host memory and [off, off + n) of m */
int czk_cuda_vmm_write(czk_cuda_vmm *m, size_t off, const void *src, size_t n);
int czk_cuda_vmm_read(const czk_cuda_vmm *m, size_t off, void *dst, size_t n);

/* unmaps and drops this process's references (mapping, handle, fd); the
 * memory is freed when no other process holds an fd or a mapping.  Safe on a
 * zeroed struct. */
void czk_cuda_vmm_free(czk_cuda_vmm *m);

#ifdef __cplusplus
}
#endif

#endif
