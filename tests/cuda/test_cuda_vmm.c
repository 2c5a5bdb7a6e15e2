/* test_cuda_vmm — device memory that outlives its creator (czk_cuda_vmm.h):
 * the parent fills an allocation with seeded random bytes, starts a child that
 * inherits only the exported fd, then drops every reference of its own; the
 * child maps the memory from the fd and must read back exactly those bytes.
 * Also: an import with the wrong size is refused.  Exits 77 without a GPU
 * or without fd-shareable allocations. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/cuda/czk_cuda.h"
#include "backend/cuda/czk_cuda_vmm.h"

#define BYTES ((size_t)48 << 20)

static void fill(uint8_t *b, size_t n, uint64_t seed)
{
    uint64_t x = seed | 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b[i] = (uint8_t)(x >> 24);
    }
}

static int child(int fd, size_t size, uint64_t seed, int go)
{
    char c;
    czk_cuda_vmm m;
    if (read(go, &c, 1) != 1) /* the parent has dropped its references */
        return 3;
    if (czk_cuda_vmm_import(0, fd, size + 4096, &m) == 0) {
        fprintf(stderr, "import with a wrong size was accepted\n");
        return 1;
    }
    if (czk_cuda_vmm_import(0, fd, size, &m) < 0) {
        fprintf(stderr, "import: %s\n", czk_cuda_last_error());
        return 1;
    }
    uint8_t *want = malloc(BYTES), *got = malloc(BYTES);
    fill(want, BYTES, seed);
    if (czk_cuda_vmm_read(&m, 0, got, BYTES) < 0 || memcmp(want, got, BYTES)) {
        fprintf(stderr, "the bytes read back from the imported memory differ\n");
        return 1;
    }
    czk_cuda_vmm_free(&m);
    printf("test_cuda_vmm: child read back %zu bytes after the creator let go\n", (size_t)BYTES);
    return 0;
}

int main(int argc, char **argv)
{
    int n = 0;
    if (argc == 5)
        return child(atoi(argv[1]), strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0), atoi(argv[4]));
    if (czk_cuda_device_count(&n) < 0 || n == 0) {
        printf("test_cuda_vmm: no GPU, skipped\n");
        return 77;
    }
    if (!czk_cuda_vmm_supported(0)) {
        printf("test_cuda_vmm: GPU 0 cannot export POSIX-fd allocations, skipped\n");
        return 77;
    }
    const char *env = getenv("CZK_TEST_SEED");
    uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)getpid() * 0x9e3779b97f4a7c15ULL;
    printf("test_cuda_vmm: seed 0x%llx (set CZK_TEST_SEED to replay)\n", (unsigned long long)seed);
    czk_cuda_vmm m;
    if (czk_cuda_vmm_alloc(0, BYTES, &m) < 0) {
        fprintf(stderr, "alloc: %s\n", czk_cuda_last_error());
        return 1;
    }
    uint8_t *b = malloc(BYTES);
    fill(b, BYTES, seed);
    if (czk_cuda_vmm_write(&m, 0, b, BYTES) < 0 || czk_cuda_vmm_write(&m, m.size, b, 1) == 0) {
        fprintf(stderr, "write, or an out-of-range write accepted\n");
        return 1;
    }
    int fd = fcntl(m.fd, F_DUPFD, 3), go[2]; /* no CLOEXEC: the child inherits this one */
    if (fd < 0 || pipe(go) < 0)
        return 1;
    char a1[16], a2[32], a3[32], a4[16];
    snprintf(a1, sizeof a1, "%d", fd);
    snprintf(a2, sizeof a2, "%zu", m.size);
    snprintf(a3, sizeof a3, "0x%llx", (unsigned long long)seed);
    snprintf(a4, sizeof a4, "%d", go[0]);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], a1, a2, a3, a4, (char *)NULL);
        _exit(4);
    }
    close(fd); /* the child's inherited copy is now the only fd besides m.fd */
    czk_cuda_vmm_free(&m);
    if (write(go[1], "g", 1) != 1)
        return 1;
    int st;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "child failed (status %d)\n", st);
        return 1;
    }
    printf("test_cuda_vmm: ok\n");
    return 0;
}
