/*
 * topo.cu — a CUDA device's PCI address (czk_cuda_topo.h).
 */
#include <ctype.h>
#include <errno.h>

#include "backend/cuda/czk_cuda_topo.h"
#include "backend/cuda/internal.cuh"

extern "C" int czk_cuda_device_pci_id(int device, char *out, size_t n)
{
    if (n < 16)
        return -EINVAL;
    CZK_CU(cudaDeviceGetPCIBusId(out, (int)n, device));
    for (char *p = out; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return 0;
}
