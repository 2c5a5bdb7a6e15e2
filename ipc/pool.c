/*
 * pool.c — hugepage-backed, NUMA-bound shared-memory pools and the lock-free
 * slot state machine (see pool.h and layout.h).
 *
 * Ownership without locks: the pool header is written only by the owner
 * (gpud) at creation and adoption; each slot's control word changes only by
 * CAS from the state its current owner holds, so exactly one process can
 * perform each transition and a stale one fails with -ESTALE.  Slot header
 * data fields are written by the slot's owner before the release CAS that
 * hands the slot on, and read after an acquire load by the next owner.
 */
#include "common/base/crc.h"
#include "common/base/clock.h"
#include "ipc/pool.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <numa.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "common/base/log.h"
#include "ipc/msg.h"
#include "ipc/peer.h" /* czk_proc_start_time */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MFD_HUGETLB
#define MFD_HUGETLB 0x0004u
#endif
#ifndef MFD_HUGE_SHIFT
#define MFD_HUGE_SHIFT 26
#endif

#define MIB (1024ull * 1024ull)

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* Slot payloads are large (hundreds of MiB at 2^22 and up) and zlib's crc32
 * runs at ~2 GB/s on one core, which would put seconds on the critical path of
 * every partition: split the payload into pieces checksummed by short-lived
 * threads and join the pieces with crc32_combine64 (same value as one pass). */
#define CRC_PAR_MIN_PIECE ((uint64_t)8 << 20)
#define CRC_PAR_MAX_THREADS 16

struct crc_piece {
    const uint8_t *b;
    uint64_t n;
    uint32_t crc;
};

static void *crc_piece_run(void *arg)
{
    struct crc_piece *pc = arg;
    pc->crc = czk_crc32(czk_crc32_init(), pc->b, pc->n);
    return NULL;
}

static uint32_t crc_bytes(uint32_t crc, const void *p, uint64_t n)
{
    struct crc_piece pc[CRC_PAR_MAX_THREADS];
    pthread_t th[CRC_PAR_MAX_THREADS];
    int started[CRC_PAR_MAX_THREADS] = {0};
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    const char *env = getenv("CZK_CRC_THREADS");
    uint64_t k, piece, off = 0;

    k = env ? strtoull(env, NULL, 10) : (uint64_t)(ncpu > 0 ? ncpu : 1);
    if (k > CRC_PAR_MAX_THREADS)
        k = CRC_PAR_MAX_THREADS;
    if (k > n / CRC_PAR_MIN_PIECE)
        k = n / CRC_PAR_MIN_PIECE;
    if (k < 2)
        return czk_crc32(crc, p, n);
    piece = n / k;
    for (uint64_t i = 0; i < k; i++) {
        pc[i].b = (const uint8_t *)p + off;
        pc[i].n = i + 1 == k ? n - off : piece;
        off += pc[i].n;
        /* piece 0 runs on this thread; a thread that cannot start runs here too */
        if (i > 0 && pthread_create(&th[i], NULL, crc_piece_run, &pc[i]) == 0)
            started[i] = 1;
    }
    for (uint64_t i = 0; i < k; i++)
        if (!started[i])
            crc_piece_run(&pc[i]);
    for (uint64_t i = 0; i < k; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        crc = (uint32_t)crc32_combine64(crc, pc[i].crc, (z_off64_t)pc[i].n);
    }
    return crc;
}

static uint32_t pool_header_crc(const czk_pool_header *h, uint32_t layout_version)
{
    czk_pool_header c;
    memcpy(&c, h, offsetof(czk_pool_header, header_crc));
    c.layout_version = layout_version;
    return crc_bytes(czk_crc32_init(), &c, offsetof(czk_pool_header, header_crc));
}

static uint32_t slot_header_crc(const czk_slot_header *s)
{
    return crc_bytes(czk_crc32_init(), (const uint8_t *)s + 8, 52);
}

const char *czk_slot_state_name(uint32_t state)
{
    static const char *names[] = {"FREE", "ASSIGNED", "FILLING", "READY", "DMA"};
    return state < CZK_SLOT_STATE_COUNT ? names[state] : "?";
}

static int huge_mode(const czk_pool_opts *o)
{
    const char *env = getenv("CZK_POOL_HUGEPAGES");
    if (env && *env) {
        if (!strcmp(env, "never") || !strcmp(env, "0") || !strcmp(env, "off"))
            return CZK_POOL_HUGE_NEVER;
        if (!strcmp(env, "require"))
            return CZK_POOL_HUGE_REQUIRE;
        if (!strcmp(env, "auto"))
            return CZK_POOL_HUGE_AUTO;
        czk_warn("ignoring CZK_POOL_HUGEPAGES=\"%s\" (expected never, auto or require)", env);
    }
    return o->huge;
}

static int bind_node(void *addr, size_t len, int node, czk_error *err)
{
    unsigned long mask[1024 / (8 * sizeof(unsigned long))];

    if (node >= 1024)
        return czk_errorf(err, -EINVAL, "numa node %d out of range", node);
    if (numa_available() < 0) {
        if (node == 0) {
            czk_info("numa not available on this host: node 0 requested, pool left unbound");
            return 0;
        }
        return czk_errorf(err, -ENODEV, "numa node %d requested but numa is not available on this host", node);
    }
    if (node > numa_max_node())
        return czk_errorf(err, -EINVAL, "numa node %d does not exist (highest is %d)", node, numa_max_node());
    memset(mask, 0, sizeof(mask));
    mask[node / (8 * sizeof(unsigned long))] |= 1ul << (node % (8 * sizeof(unsigned long)));
    if (mbind(addr, len, MPOL_BIND, mask, 1024, 0) < 0)
        return czk_errorf(err, -errno, "could not bind pool memory to numa node %d: %s", node, strerror(errno));
    return 1;
}

/* checks the node of up to 256 pages spread over the mapping */
static int verify_node(void *addr, size_t len, uint64_t page, int node, czk_error *err)
{
    enum { N = 256 };
    void *pages[N];
    int status[N];
    uint64_t npages = len / page, step = npages > N ? npages / N : 1;
    unsigned long n = 0;

    for (uint64_t i = 0; i < npages && n < N; i += step)
        pages[n++] = (uint8_t *)addr + i * page;
    if (move_pages(0, n, pages, NULL, status, 0) < 0) {
        czk_warn("could not verify numa placement of the pool: %s", strerror(errno));
        return 0;
    }
    for (unsigned long i = 0; i < n; i++)
        if (status[i] != node)
            return czk_errorf(err, -ENOMEM, "pool page at offset %llu is on numa node %d, not %d (node out of memory?)",
                              (unsigned long long)((uint8_t *)pages[i] - (uint8_t *)addr), status[i], node);
    return 0;
}

/* one thread's share of the pre-faulting: MADV_POPULATE_WRITE over [p, p + len) */
typedef struct populate_part {
    uint8_t *p;
    size_t len;
    int err; /* errno, 0 */
    pthread_t th;
} populate_part;

static void *populate_main(void *arg)
{
    populate_part *q = arg;
    q->err = madvise(q->p, q->len, MADV_POPULATE_WRITE) == 0 ? 0 : errno;
    return NULL;
}

#define POPULATE_THREADS_MAX 16
#define POPULATE_PART_MIN ((size_t)256 << 20)

/* MADV_POPULATE_WRITE over the whole range, split over up to
 * POPULATE_THREADS_MAX threads (zeroing the pages is the cost, and it scales
 * with cores: a 3 GiB pool of 4 KiB pages takes 1.5 s on one thread); the
 * parts are multiples of page.  0 or the first errno. */
static int populate(void *addr, size_t len, uint64_t page)
{
    populate_part parts[POPULATE_THREADS_MAX];
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    size_t n = len / POPULATE_PART_MIN, per;
    int err = 0;

    if (n > POPULATE_THREADS_MAX)
        n = POPULATE_THREADS_MAX;
    if (ncpu > 0 && n > (size_t)ncpu)
        n = (size_t)ncpu;
    if (n <= 1)
        return madvise(addr, len, MADV_POPULATE_WRITE) == 0 ? 0 : errno;
    per = (len / n + page - 1) / page * page;
    size_t started = 0;
    for (size_t i = 0, off = 0; i < n && off < len; i++, off += per) {
        parts[i].p = (uint8_t *)addr + off;
        parts[i].len = len - off < per ? len - off : per;
        parts[i].err = 0;
        if (pthread_create(&parts[i].th, NULL, populate_main, &parts[i]) != 0) {
            populate_main(&parts[i]); /* no thread: this one does it */
            parts[i].th = 0;
        }
        started = i + 1;
    }
    for (size_t i = 0; i < started; i++) {
        if (parts[i].th)
            pthread_join(parts[i].th, NULL);
        if (parts[i].err && !err)
            err = parts[i].err;
    }
    return err;
}

/* pre-fault every page so exhaustion is an error here, never a SIGBUS later */
static int prefault(int fd, void *addr, size_t len, uint64_t page, czk_error *err)
{
    if ((errno = populate(addr, len, page)) == 0)
        return 0;
    if (errno != EINVAL)
        return czk_errorf(err, errno == EFAULT ? -ENOMEM : -errno,
                          "could not pre-fault %zu bytes of pool memory: %s (hugepage reserve or memory exhausted?)",
                          len, strerror(errno));
    /* kernels before 5.14: allocate through the file instead */
    int r = posix_fallocate(fd, 0, (off_t)len);
    if (r)
        return czk_errorf(err, -r, "could not allocate %zu bytes of pool memory: %s", len, strerror(r));
    return 0;
}

static void pool_reset(czk_pool *p)
{
    memset(p, 0, sizeof(*p));
    p->fd = -1;
    p->bound_node = -1;
}

int czk_pool_create(czk_pool *p, const czk_pool_opts *o, czk_error *err)
{
    uint64_t hp = o->huge_page_size ? o->huge_page_size : 2 * MIB;
    uint64_t page, stride, data_off, total;
    int mode = huge_mode(o), fd = -1, r, bound = 0;
    bool huge = false;
    const char *name = o->name ? o->name : "czk-pool";
    czk_pool_header *h;
    void *base = MAP_FAILED;
    struct timespec t0, t1;

    pool_reset(p);
    if (o->slot_count == 0 || o->slot_count > CZK_POOL_MAX_SLOTS)
        return czk_errorf(err, -EINVAL, "pool slot count %u out of range 1..%u", o->slot_count, CZK_POOL_MAX_SLOTS);
    if (o->slot_size == 0 || o->slot_size > (1ull << 40))
        return czk_errorf(err, -EINVAL, "pool slot size %llu out of range", (unsigned long long)o->slot_size);
    if (hp != 2 * MIB && hp != 1024 * MIB)
        return czk_errorf(err, -EINVAL, "hugepage size %llu not supported (2 MiB or 1 GiB)", (unsigned long long)hp);

    if (o->path) {
        struct statfs sfs;
        fd = open(o->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0660);
        if (fd < 0)
            return czk_errorf(err, -errno, "could not create pool file \"%s\": %s", o->path, strerror(errno));
        if (fstatfs(fd, &sfs) == 0 && (unsigned long)sfs.f_type == HUGETLBFS_MAGIC) {
            huge = true;
            hp = (uint64_t)sfs.f_bsize;
        }
        if (mode == CZK_POOL_HUGE_REQUIRE && !huge) {
            r = czk_errorf(err, -EINVAL, "pool file \"%s\" is not on hugetlbfs but hugepages are required", o->path);
            goto fail;
        }
    } else if (mode != CZK_POOL_HUGE_NEVER) {
        unsigned shift = hp == 2 * MIB ? 21 : 30;
        fd = memfd_create(name, MFD_CLOEXEC | MFD_HUGETLB | (shift << MFD_HUGE_SHIFT));
        if (fd >= 0)
            huge = true;
        else if (mode == CZK_POOL_HUGE_REQUIRE)
            return czk_errorf(err, -errno, "could not create a hugetlb memfd: %s", strerror(errno));
        else
            czk_warn("hugetlb memfd not available (%s): falling back to 4 KiB pages, host-to-device copies "
                     "will be slower", strerror(errno));
    }
retry_small:
    page = huge ? hp : (uint64_t)sysconf(_SC_PAGESIZE);
    stride = round_up(o->slot_size, page);
    data_off = round_up(CZK_POOL_HEADER_SIZE + (uint64_t)o->slot_count * CZK_SLOT_HEADER_SIZE, page);
    total = data_off + stride * o->slot_count;
    if (fd < 0) {
        fd = memfd_create(name, MFD_CLOEXEC);
        if (fd < 0)
            return czk_errorf(err, -errno, "could not create a memfd for the pool: %s", strerror(errno));
    }
    if (ftruncate(fd, (off_t)total) < 0) {
        r = czk_errorf(err, -errno, "could not size the pool to %llu bytes: %s", (unsigned long long)total,
                       strerror(errno));
        goto fail;
    }
    base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        int e = errno;
        if (huge && !o->path && mode == CZK_POOL_HUGE_AUTO) {
            czk_warn("no hugepages for a %llu MiB pool (mmap: %s; reserve them in /proc/sys/vm/nr_hugepages): "
                     "falling back to 4 KiB pages, host-to-device copies will be slower",
                     (unsigned long long)(total / MIB), strerror(e));
            close(fd);
            fd = -1;
            huge = false;
            goto retry_small;
        }
        r = czk_errorf(err, -e, "could not map a %llu byte pool%s: %s", (unsigned long long)total,
                       huge ? " in hugepages (too few reserved?)" : "", strerror(e));
        goto fail;
    }
    if (o->numa_node >= 0) {
        bound = bind_node(base, total, o->numa_node, err);
        if (bound < 0) {
            r = bound;
            goto fail;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    r = o->defer_prefault ? 0 : prefault(fd, base, total, page, err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (r < 0) {
        if (huge && !o->path && mode == CZK_POOL_HUGE_AUTO) {
            czk_warn("could not pre-fault hugepages for the pool (%s): falling back to 4 KiB pages", err ? err->msg : "");
            munmap(base, total);
            base = MAP_FAILED;
            close(fd);
            fd = -1;
            huge = false;
            goto retry_small;
        }
        goto fail;
    }
    if (bound > 0 && !o->defer_prefault && (r = verify_node(base, total, page, o->numa_node, err)) < 0)
        goto fail;

    p->fd = fd;
    p->base = base;
    p->size = total;
    p->hdr = h = base;
    p->slots = (czk_slot_header *)((uint8_t *)base + CZK_POOL_HEADER_SIZE);
    p->page_size = page;
    p->hugetlb = huge;
    p->owner = true;
    p->prefault_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    p->prefault_pending = o->defer_prefault != 0;
    p->bound_node = bound > 0 ? o->numa_node : -1;

    /* pages are zero: slots start FREE with generation 0 */
    memset(h, 0, sizeof(*h));
    h->magic = CZK_POOL_MAGIC;
    h->header_size = CZK_POOL_HEADER_SIZE;
    h->pool_id = o->pool_id;
    h->numa_node = o->numa_node;
    h->slot_count = o->slot_count;
    h->flags = (huge ? CZK_POOL_F_HUGETLB : 0) | (bound > 0 ? CZK_POOL_F_NUMA_BOUND : 0);
    h->page_size = page;
    h->slot_size = o->slot_size;
    h->slot_stride = stride;
    h->slot_hdr_offset = CZK_POOL_HEADER_SIZE;
    h->data_offset = data_off;
    h->total_size = total;
    h->created_ns = czk_real_ns();
    h->header_crc = pool_header_crc(h, CZK_POOL_LAYOUT_VERSION);
    h->epoch = 1;
    h->owner_pid = (uint32_t)getpid();
    h->owner_start = czk_proc_start_time(getpid());
    __atomic_store_n(&h->layout_version, CZK_POOL_LAYOUT_VERSION, __ATOMIC_RELEASE);
    if (o->defer_prefault)
        czk_info("pool %u: %u slots of %llu bytes, %llu MiB in %s pages, numa node %d%s, to be pre-faulted",
                 o->pool_id, o->slot_count, (unsigned long long)o->slot_size, (unsigned long long)(total / MIB),
                 huge ? (page == 2 * MIB ? "2 MiB" : "1 GiB") : "4 KiB", o->numa_node,
                 bound > 0 ? " (bound)" : " (unbound)");
    else
        czk_info("pool %u: %u slots of %llu bytes, %llu MiB in %s pages, numa node %d%s, pre-faulted in %.3f s",
                 o->pool_id, o->slot_count, (unsigned long long)o->slot_size, (unsigned long long)(total / MIB),
                 huge ? (page == 2 * MIB ? "2 MiB" : "1 GiB") : "4 KiB", o->numa_node,
                 bound > 0 ? " (bound)" : " (unbound)", p->prefault_s);
    return 0;
fail:
    if (base != MAP_FAILED)
        munmap(base, total);
    if (fd >= 0)
        close(fd);
    if (o->path)
        unlink(o->path);
    pool_reset(p);
    return r;
}

int czk_pool_prefault(czk_pool *p, czk_error *err)
{
    struct timespec t0, t1;
    int r;

    if (!p->prefault_pending)
        return 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    r = prefault(p->fd, p->base, p->size, p->page_size, err);
    if (r == 0 && p->bound_node >= 0)
        r = verify_node(p->base, p->size, p->page_size, p->bound_node, err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (r < 0)
        return r;
    p->prefault_pending = false;
    p->prefault_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    czk_info("pool %u: %llu MiB pre-faulted in %.3f s", p->hdr->pool_id, (unsigned long long)(p->size / MIB),
             p->prefault_s);
    return 0;
}

/* maps fd and checks the header; shared by adopt and attach.  populate: map
 * with MAP_POPULATE (the page tables built now rather than fault by fault) */
static int map_and_check(czk_pool *p, int fd_in, int populate, czk_error *err)
{
    struct stat st;
    czk_pool_header hc;
    const czk_pool_header *h;
    void *base;
    int fd;

    pool_reset(p);
    fd = fcntl(fd_in, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
        return czk_errorf(err, -errno, "could not dup pool fd %d: %s", fd_in, strerror(errno));
    if (fstat(fd, &st) < 0 || st.st_size < (off_t)CZK_POOL_HEADER_SIZE) {
        close(fd);
        return czk_errorf(err, -EBADF, "pool fd %d is not a pool (size %lld)", fd_in, (long long)st.st_size);
    }
    /* read the header first, without trusting any size in it */
    if (pread(fd, &hc, sizeof(hc), 0) != (ssize_t)sizeof(hc)) {
        /* hugetlbfs does not support read(2): map one page instead */
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            int e = errno;
            close(fd);
            return czk_errorf(err, -e, "could not map pool fd %d: %s", fd_in, strerror(e));
        }
        memcpy(&hc, m, sizeof(hc));
        munmap(m, (size_t)st.st_size);
    }
    h = &hc;
    if (h->magic != CZK_POOL_MAGIC || h->header_size != CZK_POOL_HEADER_SIZE) {
        close(fd);
        return czk_errorf(err, -EBADMSG, "pool fd %d has no czk pool header (magic %016llx)", fd_in,
                          (unsigned long long)h->magic);
    }
    if (h->layout_version != CZK_POOL_LAYOUT_VERSION) {
        close(fd);
        return czk_errorf(err, -EPROTO, "pool has layout version %u, this build uses %u", h->layout_version,
                          CZK_POOL_LAYOUT_VERSION);
    }
    if (h->header_crc != pool_header_crc(h, h->layout_version)) {
        close(fd);
        return czk_errorf(err, -EBADMSG, "pool header crc mismatch (corrupt or foreign pool)");
    }
    if (h->total_size != (uint64_t)st.st_size || h->slot_count == 0 || h->slot_count > CZK_POOL_MAX_SLOTS ||
        h->slot_stride < h->slot_size || h->data_offset < CZK_POOL_HEADER_SIZE + (uint64_t)h->slot_count * 64 ||
        h->data_offset + h->slot_stride * h->slot_count > h->total_size) {
        close(fd);
        return czk_errorf(err, -EBADMSG, "pool geometry is inconsistent (size %lld, header says %llu)",
                          (long long)st.st_size, (unsigned long long)h->total_size);
    }
    /* the pages already exist (pre-faulted by the creator): mapping cannot SIGBUS */
    base = mmap(NULL, h->total_size, PROT_READ | PROT_WRITE, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, 0);
    if (base == MAP_FAILED) {
        int e = errno;
        close(fd);
        return czk_errorf(err, -e, "could not map pool of %llu bytes: %s", (unsigned long long)h->total_size,
                          strerror(e));
    }
    p->fd = fd;
    p->base = base;
    p->size = h->total_size;
    p->hdr = base;
    p->slots = (czk_slot_header *)((uint8_t *)base + CZK_POOL_HEADER_SIZE);
    p->page_size = h->page_size;
    p->hugetlb = (h->flags & CZK_POOL_F_HUGETLB) != 0;
    return 0;
}

int czk_pool_attach(czk_pool *p, int fd, const struct czk_msg_pool *expect, czk_error *err)
{
    int r = map_and_check(p, fd, 1, err);
    if (r < 0)
        return r;
    if (expect) {
        const czk_pool_header *h = p->hdr;
        if (expect->pool_id != h->pool_id || expect->slot_count != h->slot_count ||
            expect->slot_size != h->slot_size || expect->total_size != h->total_size ||
            expect->layout_version != CZK_POOL_LAYOUT_VERSION) {
            czk_pool_close(p);
            return czk_errorf(err, -EBADMSG, "pool fd does not match its POOL message (pool %u)", expect->pool_id);
        }
        uint64_t epoch = __atomic_load_n(&h->epoch, __ATOMIC_ACQUIRE);
        if (expect->epoch != epoch) {
            uint32_t id = h->pool_id;
            czk_pool_close(p);
            return czk_errorf(err, -ESTALE, "pool %u epoch %llu does not match POOL message epoch %llu", id,
                              (unsigned long long)epoch, (unsigned long long)expect->epoch);
        }
    }
    return 0;
}

int czk_pool_adopt(czk_pool *p, int fd, czk_pool_adopt_report *rep, czk_error *err)
{
    czk_pool_adopt_report local;
    czk_pool_header *h;
    int r = map_and_check(p, fd, 0, err);

    if (r < 0)
        return r;
    if (!rep)
        rep = &local;
    memset(rep, 0, sizeof(*rep));
    h = p->hdr;
    /* the same process (pid and start time) still running means two owners */
    if (h->owner_pid && (pid_t)h->owner_pid != getpid() && h->owner_start &&
        czk_proc_start_time((pid_t)h->owner_pid) == h->owner_start) {
        uint32_t pid = h->owner_pid, id = h->pool_id;
        czk_pool_close(p);
        return czk_errorf(err, -EBUSY, "pool %u is still owned by running process %u: not adopting it", id, pid);
    }
    p->owner = true;
    rep->old_epoch = h->epoch;
    rep->old_owner_pid = h->owner_pid;
    /* the previous owner is gone (that is why we adopt): we are the only writer */
    h->owner_pid = (uint32_t)getpid();
    h->owner_start = czk_proc_start_time(getpid());
    h->adopted_ns = czk_real_ns();
    __atomic_store_n(&h->epoch, rep->old_epoch + 1, __ATOMIC_RELEASE);
    rep->new_epoch = rep->old_epoch + 1;
    for (uint32_t i = 0; i < h->slot_count; i++) {
        uint64_t ctl = czk_slot_ctl(p, i);
        uint32_t st = CZK_SLOT_CTL_STATE(ctl);
        if (st == CZK_SLOT_DMA) {
            /* the copy died with the old owner; the payload is intact */
            uint64_t nctl = CZK_SLOT_CTL(CZK_SLOT_CTL_GEN(ctl), CZK_SLOT_CTL_OWNER(ctl), CZK_SLOT_READY);
            if (__atomic_compare_exchange_n(&p->slots[i].ctl, &ctl, nctl, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                rep->dma_to_ready++;
                st = CZK_SLOT_READY;
            }
        }
        /* the header only: the payload's checksum (gigabytes at 2^24) is
         * checked once, by the consumer, before the copy (gpud's worker) */
        if (st == CZK_SLOT_READY && czk_slot_verify_header(p, i, NULL) < 0) {
            czk_warn("pool %u slot %u: READY but its header checksum does not match: freeing it", h->pool_id, i);
            ctl = czk_slot_ctl(p, i);
            uint64_t nctl = CZK_SLOT_CTL(CZK_SLOT_CTL_GEN(ctl) + 1, 0, CZK_SLOT_FREE);
            if (__atomic_compare_exchange_n(&p->slots[i].ctl, &ctl, nctl, false, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                rep->bad_ready++;
                st = CZK_SLOT_FREE;
            }
        }
        if (st < CZK_SLOT_STATE_COUNT)
            rep->count[st]++;
    }
    czk_info("adopted pool %u (epoch %llu -> %llu, previous owner pid %u): %u free, %u assigned, %u filling, "
             "%u ready (%u recovered from dma)",
             h->pool_id, (unsigned long long)rep->old_epoch, (unsigned long long)rep->new_epoch, rep->old_owner_pid,
             rep->count[CZK_SLOT_FREE], rep->count[CZK_SLOT_ASSIGNED], rep->count[CZK_SLOT_FILLING],
             rep->count[CZK_SLOT_READY], rep->dma_to_ready);
    return 0;
}

int czk_pool_open_path(const char *path, int *fd_out, czk_error *err)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return czk_errorf(err, -errno, "could not open pool file \"%s\": %s", path, strerror(errno));
    *fd_out = fd;
    return 0;
}

void czk_pool_describe(const czk_pool *p, struct czk_msg_pool *m)
{
    memset(m, 0, sizeof(*m));
    m->pool_id = p->hdr->pool_id;
    m->numa_node = p->hdr->numa_node;
    m->slot_count = p->hdr->slot_count;
    m->layout_version = CZK_POOL_LAYOUT_VERSION;
    m->slot_size = p->hdr->slot_size;
    m->epoch = __atomic_load_n(&p->hdr->epoch, __ATOMIC_ACQUIRE);
    m->total_size = p->hdr->total_size;
}

void czk_pool_close(czk_pool *p)
{
    if (p->base)
        munmap(p->base, p->size);
    if (p->fd >= 0)
        close(p->fd);
    pool_reset(p);
}

int czk_pool_destroy_path(const char *path)
{
    return unlink(path) < 0 ? -errno : 0;
}

void czk_slot_payload_layout(uint64_t domain_size, uint64_t n_vars, czk_slot_layout *l)
{
    uint64_t abc = round_up(domain_size * CZK_FR_BYTES, CZK_SLOT_SECTION_ALIGN);
    l->off_a = 0;
    l->off_b = abc;
    l->off_c = 2 * abc;
    l->off_w = 3 * abc;
    l->total = l->off_w + n_vars * CZK_FR_BYTES;
}

/* ------------------------------------------------- slot transitions --- */

static int cas_ctl(czk_pool *p, uint32_t slot, uint64_t expect, uint64_t next, const char *what, czk_error *err)
{
    uint64_t cur = expect;
    if (slot >= p->hdr->slot_count)
        return czk_errorf(err, -ERANGE, "%s: slot %u out of range (pool has %u)", what, slot, p->hdr->slot_count);
    if (__atomic_compare_exchange_n(&p->slots[slot].ctl, &cur, next, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return 0;
    return czk_errorf(err, -ESTALE, "%s: slot %u is %s gen %u owner %u, expected %s gen %u owner %u", what, slot,
                      czk_slot_state_name(CZK_SLOT_CTL_STATE(cur)), CZK_SLOT_CTL_GEN(cur), CZK_SLOT_CTL_OWNER(cur),
                      czk_slot_state_name(CZK_SLOT_CTL_STATE(expect)), CZK_SLOT_CTL_GEN(expect),
                      CZK_SLOT_CTL_OWNER(expect));
}

int czk_slot_assign(czk_pool *p, uint32_t slot, uint32_t owner, uint64_t job_id, uint32_t partition,
                    uint64_t lease_deadline_ns, uint32_t *gen, czk_error *err)
{
    uint64_t ctl;
    czk_slot_header *s;

    if (slot >= p->hdr->slot_count)
        return czk_errorf(err, -ERANGE, "assign: slot %u out of range (pool has %u)", slot, p->hdr->slot_count);
    ctl = czk_slot_ctl(p, slot);
    if (CZK_SLOT_CTL_STATE(ctl) != CZK_SLOT_FREE)
        return czk_errorf(err, -EBUSY, "assign: slot %u is %s, not FREE", slot,
                          czk_slot_state_name(CZK_SLOT_CTL_STATE(ctl)));
    /* FREE slots belong to gpud: the data fields can be written before the CAS */
    s = &p->slots[slot];
    s->job_id = job_id;
    s->partition = partition;
    s->lease_deadline = lease_deadline_ns;
    s->flags = 0;
    s->domain_size = s->n_vars = s->data_len = 0;
    s->payload_crc = s->hdr_crc = 0;
    uint32_t ng = CZK_SLOT_CTL_GEN(ctl) + 1;
    int r = cas_ctl(p, slot, ctl, CZK_SLOT_CTL(ng, owner, CZK_SLOT_ASSIGNED), "assign", err);
    if (r == 0 && gen)
        *gen = ng;
    return r;
}

int czk_slot_begin_fill(czk_pool *p, uint32_t slot, uint32_t gen, uint32_t owner, czk_error *err)
{
    return cas_ctl(p, slot, CZK_SLOT_CTL(gen, owner, CZK_SLOT_ASSIGNED), CZK_SLOT_CTL(gen, owner, CZK_SLOT_FILLING),
                   "begin fill", err);
}

int czk_slot_publish_ready(czk_pool *p, uint32_t slot, uint32_t gen, uint32_t owner, uint64_t domain_size,
                           uint64_t n_vars, uint64_t data_len, bool with_crc, czk_error *err)
{
    czk_slot_header *s;
    uint64_t ctl;

    if (slot >= p->hdr->slot_count)
        return czk_errorf(err, -ERANGE, "publish ready: slot %u out of range", slot);
    if (data_len > p->hdr->slot_size)
        return czk_errorf(err, -EINVAL, "publish ready: slot %u data length %llu exceeds slot size %llu", slot,
                          (unsigned long long)data_len, (unsigned long long)p->hdr->slot_size);
    ctl = czk_slot_ctl(p, slot);
    if (ctl != CZK_SLOT_CTL(gen, owner, CZK_SLOT_FILLING))
        return cas_ctl(p, slot, CZK_SLOT_CTL(gen, owner, CZK_SLOT_FILLING), 0, "publish ready", err);
    s = &p->slots[slot];
    s->domain_size = domain_size;
    s->n_vars = n_vars;
    s->data_len = data_len;
    s->flags = with_crc ? CZK_SLOT_F_CRC : 0;
    s->payload_crc = with_crc ? crc_bytes(czk_crc32_init(), czk_slot_data(p, slot), data_len) : 0;
    s->hdr_crc = slot_header_crc(s);
    return cas_ctl(p, slot, ctl, CZK_SLOT_CTL(gen, owner, CZK_SLOT_READY), "publish ready", err);
}

static int gpud_step(czk_pool *p, uint32_t slot, uint32_t gen, uint32_t from, uint32_t to, const char *what,
                     czk_error *err)
{
    uint64_t ctl;
    if (slot >= p->hdr->slot_count)
        return czk_errorf(err, -ERANGE, "%s: slot %u out of range", what, slot);
    ctl = czk_slot_ctl(p, slot);
    if (CZK_SLOT_CTL_GEN(ctl) != gen || CZK_SLOT_CTL_STATE(ctl) != from)
        return cas_ctl(p, slot, CZK_SLOT_CTL(gen, CZK_SLOT_CTL_OWNER(ctl), from), 0, what, err);
    return cas_ctl(p, slot, ctl, CZK_SLOT_CTL(gen, CZK_SLOT_CTL_OWNER(ctl), to), what, err);
}

int czk_slot_begin_dma(czk_pool *p, uint32_t slot, uint32_t gen, czk_error *err)
{
    return gpud_step(p, slot, gen, CZK_SLOT_READY, CZK_SLOT_DMA, "begin dma", err);
}

int czk_slot_release(czk_pool *p, uint32_t slot, uint32_t gen, czk_error *err)
{
    uint64_t ctl;
    if (slot >= p->hdr->slot_count)
        return czk_errorf(err, -ERANGE, "release: slot %u out of range", slot);
    ctl = czk_slot_ctl(p, slot);
    if (CZK_SLOT_CTL_GEN(ctl) != gen || CZK_SLOT_CTL_STATE(ctl) != CZK_SLOT_DMA)
        return cas_ctl(p, slot, CZK_SLOT_CTL(gen, CZK_SLOT_CTL_OWNER(ctl), CZK_SLOT_DMA), 0, "release", err);
    return cas_ctl(p, slot, ctl, CZK_SLOT_CTL(gen, 0, CZK_SLOT_FREE), "release", err);
}

int czk_slot_reclaim(czk_pool *p, uint32_t slot, uint32_t gen, czk_error *err)
{
    uint64_t ctl;
    uint32_t st;
    if (slot >= p->hdr->slot_count)
        return czk_errorf(err, -ERANGE, "reclaim: slot %u out of range", slot);
    ctl = czk_slot_ctl(p, slot);
    st = CZK_SLOT_CTL_STATE(ctl);
    if (CZK_SLOT_CTL_GEN(ctl) != gen || (st != CZK_SLOT_ASSIGNED && st != CZK_SLOT_FILLING))
        return czk_errorf(err, -ESTALE, "reclaim: slot %u is %s gen %u, expected ASSIGNED/FILLING gen %u", slot,
                          czk_slot_state_name(st), CZK_SLOT_CTL_GEN(ctl), gen);
    return cas_ctl(p, slot, ctl, CZK_SLOT_CTL(gen + 1, 0, CZK_SLOT_FREE), "reclaim", err);
}

int czk_pool_reclaim_owner(czk_pool *p, uint32_t owner)
{
    int n = 0;
    for (uint32_t i = 0; i < p->hdr->slot_count; i++) {
        uint64_t ctl = czk_slot_ctl(p, i);
        uint32_t st = CZK_SLOT_CTL_STATE(ctl);
        if (CZK_SLOT_CTL_OWNER(ctl) == owner && (st == CZK_SLOT_ASSIGNED || st == CZK_SLOT_FILLING) &&
            czk_slot_reclaim(p, i, CZK_SLOT_CTL_GEN(ctl), NULL) == 0) {
            czk_info("pool %u slot %u: reclaimed from owner %u (was %s gen %u)", p->hdr->pool_id, i, owner,
                     czk_slot_state_name(st), CZK_SLOT_CTL_GEN(ctl));
            n++;
        }
    }
    return n;
}

int czk_slot_verify_header(const czk_pool *p, uint32_t slot, czk_error *err)
{
    const czk_slot_header *s;
    if (slot >= p->hdr->slot_count)
        return czk_errorf(err, -ERANGE, "verify: slot %u out of range", slot);
    s = &p->slots[slot];
    (void)czk_slot_ctl(p, slot); /* acquire: pairs with the filler's release */
    if (s->hdr_crc != slot_header_crc(s))
        return czk_errorf(err, -EBADMSG, "slot %u header crc mismatch", slot);
    if (s->data_len > p->hdr->slot_size)
        return czk_errorf(err, -EBADMSG, "slot %u data length %llu exceeds slot size", slot,
                          (unsigned long long)s->data_len);
    return 0;
}

int czk_slot_verify(const czk_pool *p, uint32_t slot, czk_error *err)
{
    const czk_slot_header *s = &p->slots[slot < p->hdr->slot_count ? slot : 0];
    int r = czk_slot_verify_header(p, slot, err);
    if (r < 0)
        return r;
    if ((s->flags & CZK_SLOT_F_CRC) &&
        s->payload_crc != crc_bytes(czk_crc32_init(), czk_slot_data(p, slot), s->data_len))
        return czk_errorf(err, -EBADMSG, "slot %u payload crc mismatch", slot);
    return 0;
}
