/*
 * vmm.cu — fd-shareable device allocations (czk_cuda_vmm.h) through the CUDA
 * driver's virtual memory management API, looked up at run time with
 * cudaGetDriverEntryPointByVersion (no link against libcuda).
 */
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "backend/cuda/czk_cuda_vmm.h"
#include "backend/cuda/internal.cuh"

namespace {

struct drv {
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
    CUresult (*release)(CUmemGenericAllocationHandle);
    CUresult (*granularity)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
    CUresult (*export_)(void *, CUmemGenericAllocationHandle, CUmemAllocationHandleType, unsigned long long);
    CUresult (*import_)(CUmemGenericAllocationHandle *, void *, CUmemAllocationHandleType);
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
    CUresult (*addr_free)(CUdeviceptr, size_t);
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
    CUresult (*unmap)(CUdeviceptr, size_t);
    CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
    CUresult (*get_prop)(CUmemAllocationProp *, CUmemGenericAllocationHandle);
    CUresult (*dev_attr)(int *, CUdevice_attribute, CUdevice);
    CUresult (*err_str)(CUresult, const char **);
    int ok;
};

drv D;
pthread_once_t D_once = PTHREAD_ONCE_INIT;

template <class F> bool sym(const char *name, F *fn)
{
    cudaDriverEntryPointQueryResult q;
    void *p = NULL;
    if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess || !p)
        return false;
    *fn = (F)p;
    return true;
}

void load(void)
{
    D.ok = sym("cuMemCreate", &D.create) && sym("cuMemRelease", &D.release) &&
           sym("cuMemGetAllocationGranularity", &D.granularity) &&
           sym("cuMemExportToShareableHandle", &D.export_) &&
           sym("cuMemImportFromShareableHandle", &D.import_) && sym("cuMemAddressReserve", &D.reserve) &&
           sym("cuMemAddressFree", &D.addr_free) && sym("cuMemMap", &D.map) && sym("cuMemUnmap", &D.unmap) &&
           sym("cuMemSetAccess", &D.set_access) && sym("cuMemGetAllocationPropertiesFromHandle", &D.get_prop) &&
           sym("cuDeviceGetAttribute", &D.dev_attr) && sym("cuGetErrorString", &D.err_str);
}

int drv_fail(const char *what, CUresult r)
{
    const char *s = NULL;
    if (D.err_str)
        D.err_str(r, &s);
    return czk_cuda_errf_(r == CUDA_ERROR_OUT_OF_MEMORY ? -ENOMEM : -EIO, "%s: %s", what, s ? s : "unknown error");
}

/* makes the runtime's primary context of device current (the VMM calls act on it) */
int use_device(int device)
{
    pthread_once(&D_once, load);
    if (!D.ok)
        return czk_cuda_errf_(-ENODEV, "the CUDA driver offers no virtual memory management API");
    CZK_CU(cudaSetDevice(device));
    CZK_CU(cudaFree(0));
    return 0;
}

void prop_for(int device, CUmemAllocationProp *p)
{
    memset(p, 0, sizeof *p);
    p->type = CU_MEM_ALLOCATION_TYPE_PINNED;
    p->location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p->location.id = device;
    p->requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
}

/* reserves an address range for m->size bytes of m->handle and maps it read-write */
int map_rw(czk_cuda_vmm *m, const CUmemAllocationProp *p)
{
    CUdeviceptr va = 0;
    CUresult r = D.reserve(&va, m->size, 0, 0, 0);
    if (r != CUDA_SUCCESS)
        return drv_fail("cuMemAddressReserve", r);
    if ((r = D.map(va, m->size, 0, m->handle, 0)) != CUDA_SUCCESS) {
        D.addr_free(va, m->size);
        return drv_fail("cuMemMap", r);
    }
    CUmemAccessDesc ad;
    ad.location = p->location;
    ad.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if ((r = D.set_access(va, m->size, &ad, 1)) != CUDA_SUCCESS) {
        D.unmap(va, m->size);
        D.addr_free(va, m->size);
        return drv_fail("cuMemSetAccess", r);
    }
    m->ptr = (void *)va;
    return 0;
}

} // namespace

extern "C" int czk_cuda_vmm_supported(int device)
{
    int v = 0;
    if (use_device(device) < 0)
        return 0;
    if (D.dev_attr(&v, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device) != CUDA_SUCCESS || !v)
        return 0;
    if (D.dev_attr(&v, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, device) != CUDA_SUCCESS)
        return 0;
    return v != 0;
}

extern "C" size_t czk_cuda_vmm_round(int device, size_t bytes)
{
    CUmemAllocationProp p;
    size_t gran = 0;
    if (use_device(device) < 0)
        return 0;
    prop_for(device, &p);
    CUresult r = D.granularity(&gran, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
    if (r != CUDA_SUCCESS || gran == 0) {
        drv_fail("cuMemGetAllocationGranularity", r);
        return 0;
    }
    return (bytes ? bytes + gran - 1 : gran) / gran * gran;
}

extern "C" int czk_cuda_vmm_alloc(int device, size_t bytes, czk_cuda_vmm *m)
{
    CUmemAllocationProp p;
    int rc;

    memset(m, 0, sizeof *m);
    m->fd = -1;
    if ((rc = use_device(device)) < 0)
        return rc;
    prop_for(device, &p);
    m->device = device;
    if ((m->size = czk_cuda_vmm_round(device, bytes)) == 0)
        return -EIO;
    CUresult r;
    CUmemGenericAllocationHandle h;
    if ((r = D.create(&h, m->size, &p, 0)) != CUDA_SUCCESS)
        return drv_fail("cuMemCreate", r);
    m->handle = h;
    int fd = -1;
    if ((r = D.export_(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) != CUDA_SUCCESS) {
        rc = drv_fail("cuMemExportToShareableHandle", r);
        D.release(h);
        return rc;
    }
    m->fd = fd;
    if ((rc = map_rw(m, &p)) < 0) {
        czk_cuda_vmm_free(m);
        return rc;
    }
    return 0;
}

extern "C" int czk_cuda_vmm_import(int device, int fd, size_t bytes, czk_cuda_vmm *m)
{
    CUmemAllocationProp p, got;
    int rc;

    memset(m, 0, sizeof *m);
    m->fd = -1;
    if ((rc = use_device(device)) < 0)
        return rc;
    prop_for(device, &p);
    CUmemGenericAllocationHandle h;
    CUresult r = D.import_(&h, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    if (r != CUDA_SUCCESS)
        return drv_fail("cuMemImportFromShareableHandle", r);
    m->handle = h;
    m->device = device;
    m->size = bytes;
    if ((r = D.get_prop(&got, h)) != CUDA_SUCCESS || got.location.id != device) {
        czk_cuda_vmm_free(m);
        return czk_cuda_errf_(-EINVAL, "imported device memory is not on GPU %d", device);
    }
    if ((m->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3)) < 0) {
        rc = -errno;
        czk_cuda_vmm_free(m);
        return czk_cuda_errf_(rc, "dup of a device-memory fd: %s", strerror(-rc));
    }
    if ((rc = map_rw(m, &p)) < 0) {
        czk_cuda_vmm_free(m);
        return rc == -EIO ? czk_cuda_errf_(-EINVAL, "device memory fd does not hold %zu bytes", bytes) : rc;
    }
    return 0;
}

extern "C" int czk_cuda_vmm_write(czk_cuda_vmm *m, size_t off, const void *src, size_t n)
{
    if (off > m->size || n > m->size - off)
        return czk_cuda_errf_(-EINVAL, "write of %zu bytes at %zu into %zu bytes of device memory", n, off, m->size);
    CZK_CU(cudaSetDevice(m->device));
    CZK_CU(cudaMemcpy((char *)m->ptr + off, src, n, cudaMemcpyHostToDevice));
    return 0;
}

extern "C" int czk_cuda_vmm_read(const czk_cuda_vmm *m, size_t off, void *dst, size_t n)
{
    if (off > m->size || n > m->size - off)
        return czk_cuda_errf_(-EINVAL, "read of %zu bytes at %zu from %zu bytes of device memory", n, off, m->size);
    CZK_CU(cudaSetDevice(m->device));
    CZK_CU(cudaMemcpy(dst, (const char *)m->ptr + off, n, cudaMemcpyDeviceToHost));
    return 0;
}

extern "C" void czk_cuda_vmm_free(czk_cuda_vmm *m)
{
    if (!m)
        return;
    if (m->ptr && D.ok) {
        cudaSetDevice(m->device);
        D.unmap((CUdeviceptr)m->ptr, m->size);
        D.addr_free((CUdeviceptr)m->ptr, m->size);
    }
    if (m->handle && D.ok)
        D.release((CUmemGenericAllocationHandle)m->handle);
    if (m->fd >= 0)
        close(m->fd);
    memset(m, 0, sizeof *m);
    m->fd = -1;
}
