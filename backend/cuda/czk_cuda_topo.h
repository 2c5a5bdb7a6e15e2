/*
 * czk_cuda_topo.h — where a CUDA device sits in the host: its PCI address,
 * for the NUMA node nearest it (backend/backend_cuda.c reads sysfs).  Plain
 * C, as czk_cuda.h; 0 or -errno (-ENODEV: no such device, -EIO: the runtime
 * failed), the reason kept for czk_cuda_last_error().
 */
#ifndef CZK_CUDA_TOPO_H
#define CZK_CUDA_TOPO_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* device's PCI address as sysfs names it, "dddd:bb:dd.f" in lower case
 * (n >= 16; cudaDeviceGetPCIBusId gives upper-case hex) */
int czk_cuda_device_pci_id(int device, char *out, size_t n);

#ifdef __cplusplus
}
#endif

#endif
