/*
 * cuda_emu.h — run CUDA kernel code on the CPU: the templates and kernels of
 * the backend/cuda headers compiled by g++ as plain C++17 (not nvcc), so that
 * tests check the device algorithms on machines without a GPU.
 *
 * Include it before any backend/cuda header.  It supplies what those headers
 * take from CUDA: the keywords (__device__, __host__, __forceinline__,
 * __noinline__, __launch_bounds__(...) and __constant__ expand to nothing or
 * to plain C++; __global__ marks the function unused, so kernels a test does
 * not launch do not warn; __shared__ is `static`, which works because the
 * blocks of a launch run one after another), the vector types
 * (uint2, uint3, uint4, int2, int3, int4, ulonglong2, longlong2, float2,
 * float4, dim3, with CUDA's member names and alignment) and make_*, the
 * built-in variables threadIdx, blockIdx, blockDim, gridDim and warpSize,
 * the integer intrinsics (__brev, __clz, __popc, __ffs and their ll forms,
 * __umulhi, __umul64hi, __mul24, __funnelshift_*, __byte_perm, __ldg and the
 * other cache-hint loads and stores), the fences (no-ops), atomic*, the block
 * barriers (__syncthreads, __syncthreads_count/_and/_or) and the warp
 * collectives (__syncwarp, __shfl_sync, __shfl_up_sync, __shfl_down_sync,
 * __shfl_xor_sync, __all_sync, __any_sync, __ballot_sync, __activemask).
 * It also asks to silence -Wunknown-pragmas for the rest of the translation
 * unit (the kernels' `#pragma unroll`), which g++ before 13 ignores for
 * pragmas: build with -Wno-unknown-pragmas there.
 *
 * A launch:
 *     emu_launch(grid, block, [&] { k_foo<F>(a, b, n); });
 *     emu_launch(grid, block, shmem_bytes, [&] { ... emu_dyn_shared() ... });
 *     emu_launch_kernel(grid, block, shmem_bytes, k_foo<F>, a, b, n);
 * runs the blocks one after another (blockIdx x fastest), and within a block
 * runs the function once per thread (linear tid = x + y bx + z bx by), each
 * thread a coroutine on its own stack (CZK_EMU_STACK_BYTES, 512 KiB by
 * default, with a guard page below it).  A thread runs until it reaches a
 * collective or returns; the launch returns when every thread has returned.
 * emu_dyn_shared() is the launch's dynamic shared memory (zeroed at the
 * launch; `extern __shared__` itself is not supported: the backend's kernels
 * declare theirs with CZK_DYN_SHARED(T, name), which this header defines as a
 * pointer to it).
 *
 * Collectives.  A warp is 32 consecutive linear tids of a block, lane =
 * tid & 31.  A warp collective completes when every lane named in its mask
 * waits at the same kind of collective (same intrinsic, same mask, same
 * value size); then every member's result is computed from the values all
 * members deposited, and only then do the members resume.  Lanes outside the
 * mask are not involved, so pairs of lanes with their own two-lane masks may
 * diverge from each other freely.  __syncthreads completes when every thread
 * of the block that has not returned waits at a __syncthreads.  Everything
 * CUDA leaves undefined here is treated as a bug in the kernel under test and
 * aborts with a message naming the block, the thread(s) and the operation:
 * a mask without the calling lane or naming lanes outside the block, a
 * shuffle whose source lane is outside the mask, a shfl width that is not a
 * power of two up to 32, and any wait that can never complete (a lane named
 * in a mask has returned — stricter than the hardware, which skips exited
 * lanes — or waits at another kind of collective or another mask, or
 * __syncthreads while some thread waits at a warp collective).  A block of
 * more than 1024 threads aborts, as the launch would fail.
 *
 * Not emulated: the memory model (execution is sequentially consistent, the
 * fences are no-ops, atomics are plain read-modify-writes, which is exact
 * here since threads switch only at collectives), timing and clock(),
 * warp-synchronous code that exchanges data without a collective (implicit
 * lock-step), the legacy non-_sync shuffles and votes, __match_*_sync and
 * __reduce_*_sync, cooperative groups, textures, device-side printf
 * formatting beyond the host's, the device's math functions, and nested
 * launches.  Only one OS thread may launch.  A stack overflow is a SIGSEGV
 * on the guard page.  __shared__ variables keep their contents from one
 * block to the next (on the device they start undefined).  A kernel that
 * says `static __shared__` does not compile (static static).
 *
 * Threads switch with a few instructions of x86-64 assembly (announced to
 * AddressSanitizer when it is on); on other machines, while CET shadow
 * stacks are enforced, or with -DCZK_EMU_UCONTEXT, with swapcontext (about a
 * microsecond per switch: it makes a system call).  Carry state the code
 * under test keeps per OS thread (ff.cuh's emulated carry flag) is shared by
 * the emulated threads, which is harmless while no carry chain spans a
 * collective.  Include the standard headers a test needs before this one:
 * __noinline__ is `__attribute__((noinline))`, which breaks libstdc++
 * headers that spell the attribute __noinline__ (<memory> is included here
 * first; <stacktrace> would fail after this header).
 */
#ifndef CZK_TESTS_CUDA_EMU_CUDA_EMU_H
#define CZK_TESTS_CUDA_EMU_CUDA_EMU_H

#ifdef __CUDACC__
#error "cuda_emu.h emulates CUDA for g++; do not compile it with nvcc"
#endif

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

/* ---- keywords ---- */
#define __device__
#define __host__
#define __global__ __attribute__((unused))
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __constant__
#define __shared__ static
#pragma GCC diagnostic ignored "-Wunknown-pragmas" /* #pragma unroll (g++ >= 13) */

/* ---- vector types ----
 * may_alias: kernels reinterpret their own structs as uint4 for wide loads
 * and stores, which nvcc tolerates and g++'s strict aliasing would not */
#define CZK_EMU_VEC(name, align, T, ...) struct __attribute__((may_alias, aligned(align))) name { T __VA_ARGS__; };
CZK_EMU_VEC(uint2, 8, unsigned int, x, y)
CZK_EMU_VEC(uint3, 4, unsigned int, x, y, z)
CZK_EMU_VEC(uint4, 16, unsigned int, x, y, z, w)
CZK_EMU_VEC(int2, 8, int, x, y)
CZK_EMU_VEC(int3, 4, int, x, y, z)
CZK_EMU_VEC(int4, 16, int, x, y, z, w)
CZK_EMU_VEC(ulonglong2, 16, unsigned long long, x, y)
CZK_EMU_VEC(longlong2, 16, long long, x, y)
CZK_EMU_VEC(float2, 8, float, x, y)
CZK_EMU_VEC(float4, 16, float, x, y, z, w)
#undef CZK_EMU_VEC
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};
static inline uint2 make_uint2(unsigned int x, unsigned int y) { return uint2{x, y}; }
static inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) { return uint3{x, y, z}; }
static inline uint4 make_uint4(unsigned int x, unsigned int y, unsigned int z, unsigned int w)
{
    return uint4{x, y, z, w};
}
static inline int2 make_int2(int x, int y) { return int2{x, y}; }
static inline int3 make_int3(int x, int y, int z) { return int3{x, y, z}; }
static inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
static inline ulonglong2 make_ulonglong2(unsigned long long x, unsigned long long y) { return ulonglong2{x, y}; }
static inline longlong2 make_longlong2(long long x, long long y) { return longlong2{x, y}; }
static inline float2 make_float2(float x, float y) { return float2{x, y}; }
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
static_assert(sizeof(uint2) == 8 && alignof(uint2) == 8 && sizeof(uint4) == 16 && alignof(uint4) == 16 &&
                  sizeof(int4) == 16 && alignof(int4) == 16 && sizeof(ulonglong2) == 16 && sizeof(dim3) == 12,
              "CUDA vector type layout");

/* ---- integer intrinsics ---- */
static inline unsigned int __brev(unsigned int x)
{
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
static inline unsigned long long __brevll(unsigned long long x)
{
    return ((unsigned long long)__brev((unsigned int)x) << 32) | __brev((unsigned int)(x >> 32));
}
static inline int __clz(int x) { return x ? __builtin_clz((unsigned int)x) : 32; }
static inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __popc(unsigned int x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned int __umulhi(unsigned int a, unsigned int b) { return (unsigned int)(((uint64_t)a * b) >> 32); }
static inline int __mulhi(int a, int b) { return (int)(((int64_t)a * b) >> 32); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b)
{
    __extension__ typedef unsigned __int128 u128;
    return (unsigned long long)(((u128)a * b) >> 64);
}
static inline long long __mul64hi(long long a, long long b)
{
    __extension__ typedef __int128 i128;
    return (long long)(((i128)a * b) >> 64);
}
static inline int __mul24(int a, int b)
{
    int64_t a24 = (int32_t)((uint32_t)a << 8) >> 8, b24 = (int32_t)((uint32_t)b << 8) >> 8;
    return (int)(uint32_t)(uint64_t)(a24 * b24);
}
static inline unsigned int __umul24(unsigned int a, unsigned int b) { return (a & 0xffffffu) * (b & 0xffffffu); }
/* hi:lo shifted by shift mod 32 (the c forms: by min(shift, 32)) */
static inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift)
{
    return (unsigned int)(((((uint64_t)hi << 32) | lo) << (shift & 31)) >> 32);
}
static inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift)
{
    return (unsigned int)(((((uint64_t)hi << 32) | lo) << (shift < 32 ? shift : 32)) >> 32);
}
static inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift)
{
    return (unsigned int)((((uint64_t)hi << 32) | lo) >> (shift & 31));
}
static inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift)
{
    return (unsigned int)((((uint64_t)hi << 32) | lo) >> (shift < 32 ? shift : 32));
}
/* byte n of the result is byte (s >> 4n) & 7 of y:x */
static inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s)
{
    uint64_t v = ((uint64_t)y << 32) | x;
    unsigned int r = 0;
    for (int n = 0; n < 4; n++)
        r |= (unsigned int)((v >> (8 * ((s >> (4 * n)) & 7))) & 0xff) << (8 * n);
    return r;
}

/* loads and stores with cache hints: plain accesses */
template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline T __ldcg(const T *p) { return *p; }
template <class T> static inline T __ldca(const T *p) { return *p; }
template <class T> static inline T __ldcs(const T *p) { return *p; }
template <class T> static inline T __ldlu(const T *p) { return *p; }
template <class T> static inline T __ldcv(const T *p) { return *p; }
template <class T> static inline void __stwb(T *p, T v) { *p = v; }
template <class T> static inline void __stcg(T *p, T v) { *p = v; }
template <class T> static inline void __stcs(T *p, T v) { *p = v; }
template <class T> static inline void __stwt(T *p, T v) { *p = v; }

/* fences: execution is sequentially consistent; keep the compiler's order */
static inline void __threadfence() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system() { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
static inline void __nanosleep(unsigned int) {}

/* ---- atomics: threads switch only at collectives, so a plain
 * read-modify-write returning the old value is exact ---- */
#define CZK_EMU_RMW(name, T, expr)                                             \
    static inline T name(T *p, T v)                                            \
    {                                                                          \
        T o = *p;                                                              \
        *p = (expr);                                                           \
        return o;                                                              \
    }
#define CZK_EMU_RMW_INT(name, expr)                                            \
    CZK_EMU_RMW(name, int, expr)                                               \
    CZK_EMU_RMW(name, unsigned int, expr)                                      \
    CZK_EMU_RMW(name, unsigned long long, expr)
CZK_EMU_RMW_INT(atomicAdd, o + v)
CZK_EMU_RMW(atomicAdd, float, o + v)
CZK_EMU_RMW(atomicAdd, double, o + v)
CZK_EMU_RMW(atomicSub, int, o - v)
CZK_EMU_RMW(atomicSub, unsigned int, o - v)
CZK_EMU_RMW_INT(atomicExch, v)
CZK_EMU_RMW(atomicExch, float, v)
CZK_EMU_RMW_INT(atomicMin, v < o ? v : o)
CZK_EMU_RMW(atomicMin, long long, v < o ? v : o)
CZK_EMU_RMW_INT(atomicMax, v > o ? v : o)
CZK_EMU_RMW(atomicMax, long long, v > o ? v : o)
CZK_EMU_RMW_INT(atomicAnd, o & v)
CZK_EMU_RMW_INT(atomicOr, o | v)
CZK_EMU_RMW_INT(atomicXor, o ^ v)
CZK_EMU_RMW(atomicInc, unsigned int, o >= v ? 0u : o + 1)
CZK_EMU_RMW(atomicDec, unsigned int, (o == 0 || o > v) ? v : o - 1)
#undef CZK_EMU_RMW_INT
#undef CZK_EMU_RMW
#define CZK_EMU_CAS(T)                                                         \
    static inline T atomicCAS(T *p, T cmp, T v)                                \
    {                                                                          \
        T o = *p;                                                              \
        if (o == cmp)                                                          \
            *p = v;                                                            \
        return o;                                                              \
    }
CZK_EMU_CAS(int)
CZK_EMU_CAS(unsigned int)
CZK_EMU_CAS(unsigned long long)
CZK_EMU_CAS(unsigned short)
#undef CZK_EMU_CAS

static constexpr int warpSize = 32;

/* ---- the emulated threads ---- */
#ifndef CZK_EMU_STACK_BYTES
#define CZK_EMU_STACK_BYTES (512u << 10)
#endif
#if defined(__SANITIZE_ADDRESS__)
#define CZK_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CZK_EMU_ASAN 1
#endif
#endif
#ifdef CZK_EMU_ASAN /* tell AddressSanitizer which stack is in use */
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if defined(__x86_64__) && !defined(CZK_EMU_UCONTEXT)
#define CZK_EMU_ASM_SWITCH 1
/* czk_emu_swap(save, load): push the callee-saved registers (and MXCSR, x87
 * control word), store the stack pointer to *save, continue on the stack
 * load, popping what its own czk_emu_swap pushed.  Weak: every translation
 * unit that includes this header defines it. */
extern "C" void czk_emu_swap(void **save, void *load);
__asm__(".pushsection .text\n"
        ".weak czk_emu_swap\n"
        ".type czk_emu_swap, @function\n"
        "czk_emu_swap:\n"
        "    pushq %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    pushq %r13\n"
        "    pushq %r14\n"
        "    pushq %r15\n"
        "    subq $8, %rsp\n"
        "    stmxcsr (%rsp)\n"
        "    fnstcw 4(%rsp)\n"
        "    movq %rsp, (%rdi)\n"
        "    movq %rsi, %rsp\n"
        "    ldmxcsr (%rsp)\n"
        "    fldcw 4(%rsp)\n"
        "    addq $8, %rsp\n"
        "    popq %r15\n"
        "    popq %r14\n"
        "    popq %r13\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    ret\n"
        ".size czk_emu_swap, .-czk_emu_swap\n"
        ".popsection\n");
#else
#define CZK_EMU_ASM_SWITCH 0
#endif

namespace czk_emu {

enum op_t : uint8_t {
    OP_NONE, OP_SYNCTHREADS, OP_SYNCWARP, OP_SHFL, OP_SHFL_UP, OP_SHFL_DOWN, OP_SHFL_XOR, OP_ALL, OP_ANY, OP_BALLOT
};
inline const char *op_name(op_t op)
{
    static const char *const n[] = {"(none)", "__syncthreads", "__syncwarp", "__shfl_sync", "__shfl_up_sync",
                                    "__shfl_down_sync", "__shfl_xor_sync", "__all_sync", "__any_sync", "__ballot_sync"};
    return n[op];
}
enum state_t : uint8_t { READY, RUNNING, BLOCKED, DONE };

struct thread {
    void *sp;      /* saved stack pointer (assembly switch) */
    ucontext_t uc; /* saved context (swapcontext) */
    char *stack;   /* lowest address */
    void *fake;    /* AddressSanitizer's fake stack while switched out */
    uint3 tid;
    unsigned lin;
    state_t st;
    op_t op;        /* the collective it waits at (BLOCKED) */
    uint8_t size;   /* shuffled value's size */
    unsigned mask;  /* warp collective's mask */
    unsigned src;   /* shuffle: the lane read, within the warp */
    uint64_t val;   /* deposited value or predicate */
    uint64_t res;   /* result, written before it resumes */
};

struct launch {
    dim3 grid, block;
    uint3 bidx;
    unsigned nthr, live, at_sync;
    std::vector<thread> th;
    std::vector<unsigned> q; /* ring of READY threads */
    unsigned qh, qn;
    thread *cur;
    void *sched_sp;
    ucontext_t sched_uc;
    void *sched_fake;
    const void *sched_stack;
    size_t sched_size;
    bool use_uc;
    void (*call)(void *);
    void *obj;
    void *dyn;
};
inline launch *g_launch = nullptr;

[[noreturn]] __attribute__((format(printf, 1, 2))) inline void die(const char *fmt, ...)
{
    fflush(stdout);
    va_list ap;
    va_start(ap, fmt);
    fputs("cuda_emu: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    abort();
}

inline launch &cur_launch(const char *what)
{
    if (!g_launch || !g_launch->cur)
        die("%s used outside a kernel (emu_launch)", what);
    return *g_launch;
}

/* "block (x,y,z) thread (x,y,z) [warp w lane l]" */
struct tname {
    char s[96];
    tname(const launch &l, const thread &t)
    {
        snprintf(s, sizeof s, "block (%u,%u,%u) thread (%u,%u,%u) [warp %u lane %u]", l.bidx.x, l.bidx.y, l.bidx.z,
                 t.tid.x, t.tid.y, t.tid.z, t.lin >> 5, t.lin & 31);
    }
};

inline void *stack_at(unsigned i)
{
    static std::vector<char *> pool;
    static const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    while (pool.size() <= i) {
        size_t sz = ((size_t)CZK_EMU_STACK_BYTES + page - 1) / page * page;
        void *m = mmap(nullptr, sz + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED)
            die("cannot map a %zu-byte thread stack", sz);
        mprotect(m, page, PROT_NONE); /* guard page */
        pool.push_back((char *)m + page);
    }
    return pool[i];
}

inline void push(launch &l, thread &t)
{
    t.st = READY;
    l.q[(l.qh + l.qn++) % l.nthr] = (unsigned)(&t - l.th.data());
}

/* every live thread waits at __syncthreads: results, then all resume (self,
 * the thread that completed the barrier, continues without a switch) */
inline void release_sync(launch &l, thread *self)
{
    uint64_t cnt = 0;
    for (thread &u : l.th)
        cnt += u.st == BLOCKED && u.val;
    for (thread &u : l.th)
        if (u.st == BLOCKED) {
            u.res = cnt | (uint64_t)l.at_sync << 32;
            if (&u != self)
                push(l, u);
        }
    l.at_sync = 0;
    if (self)
        self->st = RUNNING;
}

/* the two switches: from the scheduler into thread t until it waits or
 * returns; from t back to the scheduler until t is resumed (never, once t
 * has returned) */
inline void enter(launch &l, thread &t)
{
#ifdef CZK_EMU_ASAN
    __sanitizer_start_switch_fiber(&l.sched_fake, t.stack, CZK_EMU_STACK_BYTES);
#endif
#if CZK_EMU_ASM_SWITCH
    if (!l.use_uc)
        czk_emu_swap(&l.sched_sp, t.sp);
    else
#endif
        swapcontext(&l.sched_uc, &t.uc);
#ifdef CZK_EMU_ASAN
    __sanitizer_finish_switch_fiber(l.sched_fake, nullptr, nullptr);
#endif
}
inline void to_scheduler(launch &l, thread &t)
{
#ifdef CZK_EMU_ASAN
    if (t.st == DONE) { /* the frames left on the stack would poison its next use */
        char *lo = (char *)__builtin_frame_address(0) - 4096;
        lo = lo < t.stack ? t.stack : lo;
        __asan_unpoison_memory_region(lo, (size_t)(t.stack + CZK_EMU_STACK_BYTES - lo));
    }
    __sanitizer_start_switch_fiber(t.st == DONE ? nullptr : &t.fake, l.sched_stack, l.sched_size);
#endif
#if CZK_EMU_ASM_SWITCH
    if (!l.use_uc)
        czk_emu_swap(&t.sp, l.sched_sp);
    else
#endif
        swapcontext(&t.uc, &l.sched_uc);
#ifdef CZK_EMU_ASAN
    __sanitizer_finish_switch_fiber(t.fake, nullptr, nullptr);
#endif
}

[[noreturn]] inline void thread_main()
{
    launch &l = *g_launch;
#ifdef CZK_EMU_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &l.sched_stack, &l.sched_size);
#endif
#if __cpp_exceptions
    try {
        l.call(l.obj);
    } catch (...) {
        die("%s: uncaught exception", tname(l, *l.cur).s);
    }
#else
    l.call(l.obj);
#endif
    thread &t = *l.cur;
    t.st = DONE;
    l.live--;
    if (l.live && l.at_sync == l.live) /* it was the last one __syncthreads waited for */
        release_sync(l, nullptr);
    to_scheduler(l, t);
    die("a returned thread was resumed");
}

inline void start(launch &l, thread &t)
{
    char *base = t.stack = (char *)stack_at((unsigned)(&t - l.th.data()));
#if CZK_EMU_ASM_SWITCH
    if (!l.use_uc) {
        uint64_t *sp = (uint64_t *)(((uintptr_t)base + CZK_EMU_STACK_BYTES) & ~(uintptr_t)15);
        uint32_t ctl[2];
        __asm__ volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(ctl[0]), "=m"(ctl[1]));
        *--sp = 0;                                    /* thread_main's return address: never used */
        *--sp = (uint64_t)(uintptr_t)&thread_main;    /* czk_emu_swap returns there */
        for (int i = 0; i < 6; i++)                   /* rbp rbx r12 r13 r14 r15 */
            *--sp = 0;
        *--sp = (uint64_t)ctl[0] | (uint64_t)(ctl[1] & 0xffff) << 32;
        t.sp = sp;
        return;
    }
#endif
    getcontext(&t.uc);
    t.uc.uc_stack.ss_sp = base;
    t.uc.uc_stack.ss_size = CZK_EMU_STACK_BYTES;
    t.uc.uc_link = nullptr;
    makecontext(&t.uc, thread_main, 0);
}

inline bool ucontext_needed()
{
#if CZK_EMU_ASM_SWITCH
    unsigned long long ssp = 0; /* nonzero only while a CET shadow stack is active */
    __asm__ volatile(".byte 0xf3, 0x48, 0x0f, 0x1e, 0xc8" : "+a"(ssp)); /* rdsspq %rax */
    return ssp != 0;
#else
    return true;
#endif
}

/* why thread t (BLOCKED) can never continue */
inline void explain(const launch &l, const thread &t)
{
    if (t.op != OP_SYNCTHREADS)
        fputs("  ", stderr);
    fprintf(stderr, "%s waits at %s", tname(l, t).s, op_name(t.op));
    if (t.op == OP_SYNCTHREADS) {
        for (const thread &u : l.th)
            if (u.st == BLOCKED && u.op != OP_SYNCTHREADS) {
                fprintf(stderr, " while %s waits at %s\n", tname(l, u).s, op_name(u.op));
                return;
            }
        fputc('\n', stderr);
        return;
    }
    fprintf(stderr, "(mask 0x%08x)", t.mask);
    unsigned base = t.lin & ~31u;
    for (unsigned m = t.mask; m; m &= m - 1) {
        const thread &u = l.th[base + __builtin_ctz(m)];
        if (u.st == DONE) {
            fprintf(stderr, ": lane %u, named in the mask, has returned\n", u.lin & 31);
            return;
        }
        if (u.st == BLOCKED && (u.op != t.op || u.mask != t.mask || u.size != t.size)) {
            fprintf(stderr, ": lane %u, named in the mask, waits at %s", u.lin & 31, op_name(u.op));
            if (u.op == OP_SYNCTHREADS)
                fputc('\n', stderr);
            else if (u.op == t.op && u.mask == t.mask)
                fprintf(stderr, " with a %u-byte value, this lane a %u-byte one\n", u.size, t.size);
            else
                fprintf(stderr, "(mask 0x%08x)\n", u.mask);
            return;
        }
    }
    fputc('\n', stderr);
}

[[noreturn]] inline void deadlock(const launch &l)
{
    fflush(stdout);
    unsigned nwarp = 0, nsync = 0;
    const thread *first_sync = nullptr;
    for (const thread &t : l.th)
        if (t.st == BLOCKED && t.op == OP_SYNCTHREADS)
            nsync++, first_sync = first_sync ? first_sync : &t;
        else if (t.st == BLOCKED)
            nwarp++;
    fprintf(stderr,
            "cuda_emu: deadlock in block (%u,%u,%u) of a launch of grid (%u,%u,%u), block (%u,%u,%u): "
            "%u thread(s) wait at collectives that can never complete\n",
            l.bidx.x, l.bidx.y, l.bidx.z, l.grid.x, l.grid.y, l.grid.z, l.block.x, l.block.y, l.block.z,
            nwarp + nsync);
    unsigned shown = 0;
    for (const thread &t : l.th)
        if (t.st == BLOCKED && t.op != OP_SYNCTHREADS && shown++ < 16)
            explain(l, t);
    if (nwarp > 16)
        fprintf(stderr, "  ... and %u more at warp collectives\n", nwarp - 16);
    if (nsync) {
        fprintf(stderr, "  %u thread(s) wait at __syncthreads, the first: ", nsync);
        explain(l, *first_sync);
    }
    fflush(stderr);
    abort();
}

inline void run(launch &l)
{
    l.use_uc = ucontext_needed();
    l.th.assign(l.nthr, thread());
    l.q.assign(l.nthr, 0);
    g_launch = &l;
    const dim3 gr = l.grid, bl = l.block;
    for (unsigned bz = 0; bz < gr.z; bz++)
        for (unsigned by = 0; by < gr.y; by++)
            for (unsigned bx = 0; bx < gr.x; bx++) {
                l.bidx = uint3{bx, by, bz};
                l.qh = l.qn = 0;
                for (unsigned i = 0; i < l.nthr; i++) {
                    thread &t = l.th[i];
                    t.lin = i;
                    t.tid = uint3{i % bl.x, i / bl.x % bl.y, i / (bl.x * bl.y)};
                    t.op = OP_NONE;
                    start(l, t);
                    push(l, t);
                }
                l.live = l.nthr;
                l.at_sync = 0;
                while (l.qn) {
                    thread &t = l.th[l.q[l.qh]];
                    l.qh = (l.qh + 1) % l.nthr;
                    l.qn--;
                    t.st = RUNNING;
                    l.cur = &t;
                    enter(l, t);
                    l.cur = nullptr;
                }
                if (l.live)
                    deadlock(l);
            }
    g_launch = nullptr;
}

/* __syncthreads and its reductions: the number of threads whose pred != 0
 * (low 32 bits) and the number that took part (high 32 bits) */
inline uint64_t block_sync(int pred)
{
    launch &l = cur_launch("__syncthreads");
    thread &t = *l.cur;
    t.st = BLOCKED;
    t.op = OP_SYNCTHREADS;
    t.val = pred != 0;
    if (++l.at_sync < l.live)
        to_scheduler(l, t);
    else
        release_sync(l, &t);
    return t.res;
}

/* a warp collective: deposit val, wait for the mask's lanes, return this lane's result */
inline uint64_t warp_op(op_t op, unsigned mask, uint64_t val, unsigned size, int arg = 0, int width = 32)
{
    launch &l = cur_launch(op_name(op));
    thread &t = *l.cur;
    const unsigned lane = t.lin & 31, base = t.lin & ~31u;
    const unsigned nl = l.nthr - base < 32 ? l.nthr - base : 32;
    const unsigned valid = nl == 32 ? ~0u : (1u << nl) - 1;
    if (!(mask >> lane & 1))
        die("%s: %s(mask 0x%08x): the calling lane is not in the mask", tname(l, t).s, op_name(op), mask);
    if (mask & ~valid)
        die("%s: %s(mask 0x%08x): the mask names lanes outside the block (this warp has lanes 0..%u)",
            tname(l, t).s, op_name(op), mask, nl - 1);
    unsigned src = lane;
    if (op >= OP_SHFL && op <= OP_SHFL_XOR) {
        if (width < 1 || width > 32 || (width & (width - 1)))
            die("%s: %s: width %d is not a power of two up to 32", tname(l, t).s, op_name(op), width);
        const int lo = (int)(lane & ~(unsigned)(width - 1)), hi = lo + width - 1;
        int j = (int)lane;
        if (op == OP_SHFL)
            j = lo | (arg & (width - 1));
        else if (op == OP_SHFL_UP)
            j = (int64_t)lane - (unsigned)arg >= lo ? (int)lane - arg : (int)lane;
        else if (op == OP_SHFL_DOWN)
            j = (int64_t)lane + (unsigned)arg <= hi ? (int)lane + arg : (int)lane;
        else if ((int)(lane ^ (arg & 31)) <= hi)
            j = (int)(lane ^ (arg & 31));
        src = (unsigned)j;
        if (!(mask >> src & 1))
            die("%s: %s(mask 0x%08x): source lane %u is not in the mask", tname(l, t).s, op_name(op), mask, src);
    }
    t.st = BLOCKED;
    t.op = op;
    t.mask = mask;
    t.size = (uint8_t)size;
    t.src = src;
    t.val = val;
    for (unsigned m = mask; m; m &= m - 1) {
        const thread &u = l.th[base + __builtin_ctz(m)];
        if (u.st != BLOCKED || u.op != op || u.mask != mask || u.size != size) {
            to_scheduler(l, t); /* the last lane to arrive computes our result */
            return t.res;
        }
    }
    /* complete: every member's result first, then resume them */
    uint64_t ballot = 0;
    for (unsigned m = mask; m; m &= m - 1)
        if (l.th[base + __builtin_ctz(m)].val)
            ballot |= 1u << __builtin_ctz(m);
    for (unsigned m = mask; m; m &= m - 1) {
        thread &u = l.th[base + __builtin_ctz(m)];
        switch (op) {
        case OP_ALL: u.res = ballot == mask; break;
        case OP_ANY: u.res = ballot != 0; break;
        case OP_BALLOT: u.res = ballot; break;
        case OP_SYNCWARP: u.res = 0; break;
        default: u.res = l.th[base + u.src].val; break;
        }
    }
    for (unsigned m = mask; m; m &= m - 1) {
        thread &u = l.th[base + __builtin_ctz(m)];
        if (&u != &t)
            push(l, u);
    }
    t.st = RUNNING;
    return t.res;
}

template <class T> inline T shfl(op_t op, unsigned mask, T v, int arg, int width)
{
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8, "shuffles move scalars of up to 8 bytes");
    uint64_t x = 0;
    memcpy(&x, &v, sizeof(T));
    x = warp_op(op, mask, x, sizeof(T), arg, width);
    memcpy(&v, &x, sizeof(T));
    return v;
}

} // namespace czk_emu

/* ---- built-in variables ---- */
#define threadIdx (static_cast<const uint3 &>(::czk_emu::cur_launch("threadIdx").cur->tid))
#define blockIdx (static_cast<const uint3 &>(::czk_emu::cur_launch("blockIdx").bidx))
#define blockDim (static_cast<const dim3 &>(::czk_emu::cur_launch("blockDim").block))
#define gridDim (static_cast<const dim3 &>(::czk_emu::cur_launch("gridDim").grid))

/* ---- barriers and warp collectives ---- */
static inline void __syncthreads() { czk_emu::block_sync(0); }
static inline int __syncthreads_count(int pred) { return (int)(uint32_t)czk_emu::block_sync(pred); }
static inline int __syncthreads_and(int pred)
{
    uint64_t r = czk_emu::block_sync(pred);
    return (uint32_t)r == r >> 32;
}
static inline int __syncthreads_or(int pred) { return (uint32_t)czk_emu::block_sync(pred) != 0; }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { czk_emu::warp_op(czk_emu::OP_SYNCWARP, mask, 0, 0); }
static inline int __all_sync(unsigned mask, int pred)
{
    return (int)czk_emu::warp_op(czk_emu::OP_ALL, mask, pred != 0, 0);
}
static inline int __any_sync(unsigned mask, int pred)
{
    return (int)czk_emu::warp_op(czk_emu::OP_ANY, mask, pred != 0, 0);
}
static inline unsigned __ballot_sync(unsigned mask, int pred)
{
    return (unsigned)czk_emu::warp_op(czk_emu::OP_BALLOT, mask, pred != 0, 0);
}
/* the lanes of this warp that have not returned */
static inline unsigned __activemask()
{
    czk_emu::launch &l = czk_emu::cur_launch("__activemask");
    unsigned base = l.cur->lin & ~31u, m = 0;
    for (unsigned i = 0; i < 32 && base + i < l.nthr; i++)
        m |= (unsigned)(l.th[base + i].st != czk_emu::DONE) << i;
    return m;
}
template <class T> static inline T __shfl_sync(unsigned mask, T v, int src_lane, int width = warpSize)
{
    return czk_emu::shfl(czk_emu::OP_SHFL, mask, v, src_lane, width);
}
template <class T> static inline T __shfl_up_sync(unsigned mask, T v, unsigned int delta, int width = warpSize)
{
    return czk_emu::shfl(czk_emu::OP_SHFL_UP, mask, v, (int)delta, width);
}
template <class T> static inline T __shfl_down_sync(unsigned mask, T v, unsigned int delta, int width = warpSize)
{
    return czk_emu::shfl(czk_emu::OP_SHFL_DOWN, mask, v, (int)delta, width);
}
template <class T> static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = warpSize)
{
    return czk_emu::shfl(czk_emu::OP_SHFL_XOR, mask, v, lane_mask, width);
}
[[noreturn]] static inline void __trap()
{
    czk_emu::launch &l = czk_emu::cur_launch("__trap");
    czk_emu::die("%s: __trap()", czk_emu::tname(l, *l.cur).s);
}

/* ---- launches ---- */
/* the launch's dynamic shared memory (the shmem bytes of emu_launch), zeroed
 * at the launch; null without */
static inline void *emu_dyn_shared() { return czk_emu::cur_launch("emu_dyn_shared").dyn; }
/* backend/cuda's spelling of `extern __shared__ T name[]` */
#define CZK_DYN_SHARED(T, name) T *const name = static_cast<T *>(emu_dyn_shared())

template <class Fn> void emu_launch(dim3 grid, dim3 block, size_t shmem, Fn &&fn)
{
    using F = std::remove_reference_t<Fn>;
    if (czk_emu::g_launch)
        czk_emu::die("emu_launch inside a launch");
    const uint64_t n = (uint64_t)block.x * block.y * block.z;
    if (n == 0 || n > 1024)
        czk_emu::die("emu_launch: block (%u,%u,%u) has %llu threads (1 to 1024)", block.x, block.y, block.z,
                     (unsigned long long)n);
    if ((uint64_t)grid.x * grid.y * grid.z == 0)
        czk_emu::die("emu_launch: empty grid (%u,%u,%u)", grid.x, grid.y, grid.z);
    std::unique_ptr<czk_emu::launch> l(new czk_emu::launch());
    l->grid = grid;
    l->block = block;
    l->nthr = (unsigned)n;
    l->call = [](void *o) { (*static_cast<F *>(o))(); };
    l->obj = (void *)std::addressof(fn);
    std::unique_ptr<uint4[]> dyn;
    if (shmem) {
        dyn.reset(new uint4[(shmem + 15) / 16]());
        l->dyn = dyn.get();
    }
    czk_emu::run(*l);
}
template <class Fn> void emu_launch(dim3 grid, dim3 block, Fn &&fn)
{
    emu_launch(grid, block, 0, std::forward<Fn>(fn));
}

/* kernel<<<grid, block, shmem>>>(args...): the arguments are copied once, as a launch does */
template <class K, class... A> void emu_launch_kernel(dim3 grid, dim3 block, size_t shmem, K kernel, A... args)
{
    emu_launch(grid, block, shmem, [&] { kernel(args...); });
}

#endif
