/*
 * test_cuda_arch.c — czk_cuda_device_check (czk_cuda.h): the GPU present
 * runs this build's kernels (0); a kernel built for sm_80 only
 * (arch_foreign.cu) on a GPU outside the sm_8x family is -ENOEXEC, with a
 * message naming the GPU's sm_XY, the build's CZK_CUDA_ARCH and the cmake
 * option to use; the GPU stays usable after that refusal (a context is
 * made, which runs kernels); a device that does not exist is -ENODEV.
 * Exit 77 without a GPU.
 */
#include "tests/cuda/cuda_test_util.h"

const void *czk_test_foreign_kernel(void);

int main(void)
{
    czk_cuda_dev_info info;
    char want[64];
    int n, r;

    if (czk_cuda_device_count(&n) != 0 || n == 0) {
        printf("no cuda device (%s): skipping\n", czk_cuda_last_error());
        return 77;
    }
    CHECK(czk_cuda_device_info(0, &info) == 0, "czk_cuda_device_info: %s", czk_cuda_last_error());
    r = czk_cuda_device_check(0);
    CHECK(r == 0, "GPU 0 (%s, sm_%d%d) refused this build's kernels: %d %s", info.name, info.cc_major, info.cc_minor,
          r, czk_cuda_last_error());
    r = czk_cuda_device_check(n);
    CHECK(r == -ENODEV, "GPU %d of %d: %d, want -ENODEV", n, n, r);
    if (info.cc_major == 8) {
        printf("GPU 0 is sm_%d%d, which runs sm_80 code: the refusal is not tested here\n", info.cc_major,
               info.cc_minor);
    } else {
        r = czk_cuda_kernel_check_(0, czk_test_foreign_kernel());
        CHECK(r == -ENOEXEC, "an sm_80 kernel on sm_%d%d: %d (%s), want -ENOEXEC", info.cc_major, info.cc_minor, r,
              czk_cuda_last_error());
        snprintf(want, sizeof(want), "is sm_%d%d,", info.cc_major, info.cc_minor);
        CHECK(strstr(czk_cuda_last_error(), want), "the message does not say \"%s\": %s", want, czk_cuda_last_error());
        CHECK(strstr(czk_cuda_last_error(), info.name), "the message does not name the GPU: %s", czk_cuda_last_error());
        snprintf(want, sizeof(want), "-DCZK_CUDA_ARCH=%d%d", info.cc_major, info.cc_minor);
        CHECK(strstr(czk_cuda_last_error(), want) && strstr(czk_cuda_last_error(), "built for CZK_CUDA_ARCH=\""),
              "the message does not give the build's architectures and \"%s\": %s", want, czk_cuda_last_error());
        printf("refused as it should be: %s\n", czk_cuda_last_error());
    }
    czk_cuda_ctx *ctx = tu_ctx(12, 4096, 1); /* after the refusal: the device still runs czk's kernels */
    czk_cuda_ctx_free(ctx);
    printf("test_cuda_arch: %s\n", t_failures ? "FAILED" : "ok");
    return t_failures ? 1 : 0;
}
