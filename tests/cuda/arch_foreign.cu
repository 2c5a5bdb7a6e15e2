/*
 * arch_foreign.cu — a kernel built for sm_80 only (SASS, no PTX: CMake
 * CUDA_ARCHITECTURES 80-real), which no GPU outside the sm_8x family can
 * load: test_cuda_arch's stand-in for czk's kernels on a GPU they were not
 * built for.
 */
static __global__ void k_foreign(int *x)
{
    if (x)
        *x = 1;
}

extern "C" const void *czk_test_foreign_kernel(void) { return (const void *)k_foreign; }
