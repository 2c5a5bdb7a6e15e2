/*
 * test_ipc_pool.c — shared-memory pools:
 *  - the 4 KiB fallback, forced by option and by CZK_POOL_HUGEPAGES=never;
 *  - the hugepage path: as root, reserve a few 2 MiB pages (restoring
 *    /proc/sys/vm/nr_hugepages afterwards), check the pool really uses them
 *    and that they are pre-faulted (HugePages_Free drops at creation), and
 *    that asking for more than is reserved fails at creation (REQUIRE) or
 *    falls back (AUTO) instead of raising SIGBUS later;
 *  - the slot state machine: every transition, stale generations and stale
 *    owners refused, reclaim;
 *  - adoption after the creating process is killed with kill -9: contents
 *    and checksums intact, epoch bumped, DMA slots back to READY, for a
 *    memfd pool (fd kept by this process, as the systemd fdstore would) in
 *    4 KiB and hugepages, and for a named pool file.
 * Exit 77 only when neither hugepages nor the fallback can be exercised.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ipc/msg.h"
#include "ipc/peer.h"
#include "ipc/pool.h"
#include "tutil.h"

#define MIB (1024ull * 1024ull)
#define OWNER_SYNTH 0x207 /* instance id of a pretend synth */

static long saved_nr = -1;

static long read_long(const char *path)
{
    char buf[64] = {0};
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    if (read(fd, buf, sizeof(buf) - 1) <= 0) {
        close(fd);
        return -1;
    }
    close(fd);
    return atol(buf);
}

static int write_long(const char *path, long v)
{
    char buf[64];
    int fd = open(path, O_WRONLY), n;
    if (fd < 0)
        return -errno;
    n = snprintf(buf, sizeof(buf), "%ld\n", v);
    if (write(fd, buf, (size_t)n) != n) {
        int e = -errno;
        close(fd);
        return e;
    }
    close(fd);
    return 0;
}

static long meminfo(const char *key)
{
    char line[256];
    long v = -1;
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
            v = atol(line + strlen(key) + 1);
    fclose(f);
    return v;
}

static pid_t main_pid;
static void restore_at_exit(void)
{
    if (saved_nr >= 0 && getpid() == main_pid) {
        if (write_long("/proc/sys/vm/nr_hugepages", saved_nr) == 0)
            fprintf(stderr, "restored vm.nr_hugepages to %ld\n", saved_nr);
        saved_nr = -1;
    }
}

/* a crash must not leave the host with our hugepage reservation */
static void on_fatal(int sig)
{
    if (saved_nr >= 0 && getpid() == main_pid) {
        char buf[32];
        int fd = open("/proc/sys/vm/nr_hugepages", O_WRONLY), n = snprintf(buf, sizeof(buf), "%ld\n", saved_nr);
        if (fd >= 0) {
            (void)!write(fd, buf, (size_t)n);
            close(fd);
        }
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* data pages of p resident in memory (mincore over the slots) */
static size_t resident_pages(const czk_pool *p)
{
    size_t len = (size_t)p->hdr->slot_count * p->hdr->slot_stride, n = len / 4096, count = 0;
    unsigned char *vec = calloc(n, 1);
    CHECK(vec != NULL);
    CHECK(mincore(czk_slot_data(p, 0), len, vec) == 0);
    for (size_t i = 0; i < n; i++)
        count += vec[i] & 1;
    free(vec);
    return count;
}

static void fill_slot(czk_pool *p, uint32_t slot, uint64_t seed, uint64_t len)
{
    t_pattern(czk_slot_data(p, slot), len, seed);
}

static void check_slot(const czk_pool *p, uint32_t slot, uint64_t seed, uint64_t len)
{
    static uint8_t expect[4 * MIB];
    CHECK(len <= sizeof(expect));
    t_pattern(expect, len, seed);
    CHECK(!memcmp(czk_slot_data(p, slot), expect, len));
}

static void state_machine(czk_pool *p)
{
    czk_error e;
    uint32_t gen, gen2;
    uint64_t ctl;

    CHECK(CZK_SLOT_CTL_STATE(czk_slot_ctl(p, 0)) == CZK_SLOT_FREE);
    CHECK_RC(czk_slot_assign(p, 0, OWNER_SYNTH, 42, 3, 123456789, &gen, &e));
    CHECK(gen == 1);
    ctl = czk_slot_ctl(p, 0);
    CHECK(CZK_SLOT_CTL_STATE(ctl) == CZK_SLOT_ASSIGNED && CZK_SLOT_CTL_OWNER(ctl) == OWNER_SYNTH);
    CHECK(p->slots[0].job_id == 42 && p->slots[0].partition == 3);
    CHECK(czk_slot_assign(p, 0, OWNER_SYNTH, 43, 0, 0, &gen2, &e) == -EBUSY);
    /* wrong owner, wrong generation: refused */
    CHECK(czk_slot_begin_fill(p, 0, gen, OWNER_SYNTH + 1, &e) == -ESTALE);
    CHECK(czk_slot_begin_fill(p, 0, gen + 1, OWNER_SYNTH, &e) == -ESTALE);
    CHECK(czk_slot_publish_ready(p, 0, gen, OWNER_SYNTH, 1, 1, 64, true, &e) == -ESTALE); /* not FILLING yet */
    CHECK_RC(czk_slot_begin_fill(p, 0, gen, OWNER_SYNTH, &e));
    fill_slot(p, 0, 1001, 64 * 1024);
    CHECK(czk_slot_publish_ready(p, 0, gen, OWNER_SYNTH, 1, 1, p->hdr->slot_size + 1, true, &e) == -EINVAL);
    CHECK_RC(czk_slot_publish_ready(p, 0, gen, OWNER_SYNTH, 2048, 1000, 64 * 1024, true, &e));
    CHECK(CZK_SLOT_CTL_STATE(czk_slot_ctl(p, 0)) == CZK_SLOT_READY);
    CHECK_RC(czk_slot_verify(p, 0, &e));
    /* a corrupted payload is detected */
    czk_slot_data(p, 0)[100] ^= 1;
    CHECK(czk_slot_verify(p, 0, &e) == -EBADMSG);
    czk_slot_data(p, 0)[100] ^= 1;
    CHECK(czk_slot_begin_dma(p, 0, gen + 1, &e) == -ESTALE);
    CHECK(czk_slot_release(p, 0, gen, &e) == -ESTALE); /* not DMA yet */
    CHECK_RC(czk_slot_begin_dma(p, 0, gen, &e));
    CHECK(czk_slot_reclaim(p, 0, gen, &e) == -ESTALE); /* DMA is gpud's, not reclaimable */
    CHECK_RC(czk_slot_release(p, 0, gen, &e));
    CHECK(CZK_SLOT_CTL_STATE(czk_slot_ctl(p, 0)) == CZK_SLOT_FREE);
    /* the next assignment gets a new generation; a late READY for the old one fails */
    CHECK_RC(czk_slot_assign(p, 0, OWNER_SYNTH, 44, 0, 0, &gen2, &e));
    CHECK(gen2 == gen + 1);
    CHECK(czk_slot_begin_fill(p, 0, gen, OWNER_SYNTH, &e) == -ESTALE);
    CHECK_RC(czk_slot_begin_fill(p, 0, gen2, OWNER_SYNTH, &e));
    /* the synth dies: gpud reclaims; the zombie's late publish fails */
    CHECK(czk_pool_reclaim_owner(p, OWNER_SYNTH) == 1);
    ctl = czk_slot_ctl(p, 0);
    CHECK(CZK_SLOT_CTL_STATE(ctl) == CZK_SLOT_FREE && CZK_SLOT_CTL_GEN(ctl) == gen2 + 1);
    CHECK(czk_slot_publish_ready(p, 0, gen2, OWNER_SYNTH, 1, 1, 64, false, &e) == -ESTALE);
    CHECK(czk_slot_assign(p, p->hdr->slot_count, 1, 1, 0, 0, &gen, &e) == -ERANGE);
    /* payload layout: a, b, c, w aligned */
    {
        czk_slot_layout l;
        czk_slot_payload_layout(1000, 777, &l);
        CHECK(l.off_a == 0 && l.off_b % CZK_SLOT_SECTION_ALIGN == 0 && l.off_b >= 32000);
        CHECK(l.off_c == 2 * l.off_b && l.off_w == 3 * l.off_b && l.total == l.off_w + 777 * 32);
    }
}

/*
 * Creates a pool in a child, puts slots in every interesting state, hands the
 * fd over, gets killed with SIGKILL; a second child adopts and checks.
 */
static void adopt_case(int huge, const char *path)
{
    const uint64_t slot_size = 1 * MIB + 123, seed = t_rand64();
    int sp[2], fds[1], nfds = 1, status;
    uint8_t buf[CZK_MSG_MAX_RECORD];
    czk_msg m;
    czk_error e;
    pid_t a, c;

    CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == 0);
    a = fork();
    CHECK(a >= 0);
    if (a == 0) {
        czk_pool p;
        czk_pool_opts o = {.pool_id = 5, .numa_node = 0, .slot_count = 4, .slot_size = slot_size,
                           .huge = huge, .path = path, .name = "czk-test-pool"};
        czk_msg pm;
        uint32_t gen;
        close(sp[0]);
        if (czk_pool_create(&p, &o, &e) < 0) {
            fprintf(stderr, "create: %s\n", e.msg);
            _exit(2);
        }
        CHECK(p.hugetlb == (huge == CZK_POOL_HUGE_REQUIRE));
        for (uint32_t s = 0; s < 4; s++)
            fill_slot(&p, s, seed + s, slot_size & ~7ull);
        CHECK_RC(czk_slot_assign(&p, 0, OWNER_SYNTH, 100, 0, 0, &gen, &e));
        CHECK_RC(czk_slot_begin_fill(&p, 0, gen, OWNER_SYNTH, &e));
        CHECK_RC(czk_slot_publish_ready(&p, 0, gen, OWNER_SYNTH, 4, 5, slot_size, true, &e));
        CHECK_RC(czk_slot_assign(&p, 1, OWNER_SYNTH, 100, 1, 0, &gen, &e));
        CHECK_RC(czk_slot_begin_fill(&p, 1, gen, OWNER_SYNTH, &e));
        CHECK_RC(czk_slot_publish_ready(&p, 1, gen, OWNER_SYNTH, 4, 5, slot_size, true, &e));
        CHECK_RC(czk_slot_begin_dma(&p, 1, gen, &e));
        CHECK_RC(czk_slot_assign(&p, 2, OWNER_SYNTH, 100, 2, 0, &gen, &e));
        CHECK_RC(czk_slot_begin_fill(&p, 2, gen, OWNER_SYNTH, &e));
        memset(&pm, 0, sizeof(pm));
        pm.type = CZK_MSG_POOL;
        czk_pool_describe(&p, &pm.u.pool);
        CHECK_RC(czk_peer_send(sp[1], &pm, &p.fd, 1, &e));
        for (;;)
            pause(); /* killed here, with the pool mapped and slots in flight */
    }
    close(sp[1]);
    if (czk_peer_recv(sp[0], buf, sizeof(buf), &m, fds, &nfds, 20000, &e) < 0) {
        fprintf(stderr, "no pool from the creator: %s\n", e.msg);
        exit(1);
    }
    CHECK(m.type == CZK_MSG_POOL && nfds == 1 && m.u.pool.epoch == 1);
    {
        /* the creator is still running: adoption is refused, nothing changes */
        czk_pool q;
        CHECK(czk_pool_adopt(&q, fds[0], NULL, &e) == -EBUSY && strstr(e.msg, "still owned"));
        CHECK_RC(czk_pool_attach(&q, fds[0], &m.u.pool, &e)); /* epoch still 1 */
        czk_pool_close(&q);
    }
    CHECK(kill(a, SIGKILL) == 0);
    CHECK(waitpid(a, &status, 0) == a && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    if (path) { /* a named pool needs nobody to hold it: drop our fd */
        close(fds[0]);
        fds[0] = -1;
    }

    c = fork();
    CHECK(c >= 0);
    if (c == 0) {
        czk_pool p;
        czk_pool_adopt_report rep;
        int fd = fds[0];
        if (path)
            CHECK_RC(czk_pool_open_path(path, &fd, &e));
        if (czk_pool_adopt(&p, fd, &rep, &e) < 0) {
            fprintf(stderr, "adopt: %s\n", e.msg);
            _exit(1);
        }
        CHECK(rep.old_epoch == 1 && rep.new_epoch == 2 && rep.old_owner_pid == (uint32_t)a);
        CHECK(rep.dma_to_ready == 1 && rep.bad_ready == 0);
        CHECK(rep.count[CZK_SLOT_READY] == 2 && rep.count[CZK_SLOT_FILLING] == 1 && rep.count[CZK_SLOT_FREE] == 1);
        CHECK(p.hdr->owner_pid == (uint32_t)getpid() && p.hdr->epoch == 2 && p.hdr->pool_id == 5);
        CHECK(p.hugetlb == (huge == CZK_POOL_HUGE_REQUIRE));
        for (uint32_t s = 0; s < 4; s++)
            check_slot(&p, s, seed + s, slot_size & ~7ull);
        CHECK_RC(czk_slot_verify(&p, 0, &e));
        CHECK_RC(czk_slot_verify(&p, 1, &e));
        CHECK(p.slots[1].job_id == 100 && p.slots[1].partition == 1 && p.slots[1].data_len == slot_size);
        /* the READY slots go on to the GPU with their generation */
        CHECK_RC(czk_slot_begin_dma(&p, 1, CZK_SLOT_CTL_GEN(czk_slot_ctl(&p, 1)), &e));
        /* the synth that was filling slot 2 turns out dead: reclaim */
        CHECK(czk_pool_reclaim_owner(&p, OWNER_SYNTH) == 1);
        CHECK(CZK_SLOT_CTL_STATE(czk_slot_ctl(&p, 2)) == CZK_SLOT_FREE);
        czk_pool_close(&p);
        if (path)
            close(fd);
        _exit(0);
    }
    CHECK(waitpid(c, &status, 0) == c && WIFEXITED(status) && WEXITSTATUS(status) == 0);

    /* a synth holding the old POOL message sees the new epoch and refuses it */
    {
        czk_pool p;
        int fd = fds[0];
        if (path)
            CHECK_RC(czk_pool_open_path(path, &fd, &e));
        CHECK(czk_pool_attach(&p, fd, &m.u.pool, &e) == -ESTALE);
        CHECK_RC(czk_pool_attach(&p, fd, NULL, &e));
        CHECK(p.hdr->epoch == 2 && !p.owner);
        CHECK(CZK_SLOT_CTL_STATE(czk_slot_ctl(&p, 1)) == CZK_SLOT_DMA);
        check_slot(&p, 3, seed + 3, slot_size & ~7ull);
        czk_pool_close(&p);
        close(fd);
    }
    if (path)
        CHECK(czk_pool_destroy_path(path) == 0);
    close(sp[0]);
}

int main(void)
{
    czk_pool p;
    czk_error e;
    int huge_ok = 0, small_ok = 0;

    t_seed("test_ipc_pool");
    main_pid = getpid();
    unsetenv("CZK_POOL_HUGEPAGES");

    /* 1. the 4 KiB fallback, forced by the environment even when REQUIRE is asked */
    {
        czk_pool_opts o = {.pool_id = 1, .numa_node = 0, .slot_count = 3, .slot_size = 300 * 1024,
                           .huge = CZK_POOL_HUGE_REQUIRE};
        setenv("CZK_POOL_HUGEPAGES", "never", 1);
        if (czk_pool_create(&p, &o, &e) < 0) {
            fprintf(stderr, "fallback pool: %s\n", e.msg);
        } else {
            unsetenv("CZK_POOL_HUGEPAGES");
            CHECK(!p.hugetlb && p.page_size == 4096 && !(p.hdr->flags & CZK_POOL_F_HUGETLB));
            CHECK(p.hdr->slot_stride == 300 * 1024 && p.hdr->data_offset % 4096 == 0);
            CHECK(p.hdr->magic == CZK_POOL_MAGIC && p.hdr->layout_version == CZK_POOL_LAYOUT_VERSION);
            state_machine(&p);
            czk_pool_close(&p);
            /* and by the option */
            o.huge = CZK_POOL_HUGE_NEVER;
            CHECK_RC(czk_pool_create(&p, &o, &e));
            CHECK(!p.hugetlb);
            czk_pool_close(&p);
            /* deferred pre-faulting: the data pages exist only after czk_pool_prefault */
            o.defer_prefault = 1;
            CHECK_RC(czk_pool_create(&p, &o, &e));
            CHECK(p.prefault_pending && p.hdr->magic == CZK_POOL_MAGIC);
            CHECK(resident_pages(&p) == 0);
            CHECK_RC(czk_pool_prefault(&p, &e));
            CHECK(!p.prefault_pending && resident_pages(&p) == p.hdr->slot_count * (p.hdr->slot_stride / 4096));
            CHECK_RC(czk_pool_prefault(&p, &e)); /* a second call does nothing */
            state_machine(&p);
            czk_pool_close(&p);
            o.defer_prefault = 0;
            small_ok = 1;
        }
        unsetenv("CZK_POOL_HUGEPAGES");
    }
    /* invalid geometry */
    {
        czk_pool_opts o = {.slot_count = 0, .slot_size = 1, .numa_node = -1};
        CHECK(czk_pool_create(&p, &o, &e) == -EINVAL);
        o.slot_count = 1;
        o.numa_node = 4000;
        o.huge = CZK_POOL_HUGE_NEVER;
        CHECK(czk_pool_create(&p, &o, &e) < 0);
    }

    /* 2. hugepages: reserve a few, use them, exhaust them */
    saved_nr = read_long("/proc/sys/vm/nr_hugepages");
    if (saved_nr >= 0 && write_long("/proc/sys/vm/nr_hugepages", saved_nr + 8) == 0) {
        long free0;
        atexit(restore_at_exit);
        signal(SIGSEGV, on_fatal);
        signal(SIGBUS, on_fatal);
        signal(SIGABRT, on_fatal);
        signal(SIGTERM, on_fatal);
        signal(SIGINT, on_fatal);
        free0 = meminfo("HugePages_Free");
        if (free0 >= 4) {
            /* header page + 2 slots of exactly one 2 MiB page */
            czk_pool_opts o = {.pool_id = 2, .numa_node = 0, .slot_count = 2, .slot_size = 2 * MIB,
                               .huge = CZK_POOL_HUGE_REQUIRE};
            long free1;
            CHECK_RC(czk_pool_create(&p, &o, &e));
            free1 = meminfo("HugePages_Free");
            CHECK(p.hugetlb && p.page_size == 2 * MIB && (p.hdr->flags & CZK_POOL_F_HUGETLB));
            CHECK(p.size == 6 * MIB);
            CHECK(free0 - free1 == 3); /* pre-faulted at creation, not on first touch */
            state_machine(&p);
            czk_pool_close(&p);
            CHECK(meminfo("HugePages_Free") == free0); /* last reference gone: pages back */
            /* deferred: only the header page is touched until czk_pool_prefault */
            o.defer_prefault = 1;
            CHECK_RC(czk_pool_create(&p, &o, &e));
            CHECK(free0 - meminfo("HugePages_Free") == 1 && p.prefault_pending);
            CHECK_RC(czk_pool_prefault(&p, &e));
            CHECK(free0 - meminfo("HugePages_Free") == 3 && !p.prefault_pending);
            czk_pool_close(&p);
            CHECK(meminfo("HugePages_Free") == free0);
            o.defer_prefault = 0;

            /* more than reserved: an error now (REQUIRE) or a logged fallback (AUTO) */
            o.slot_count = (uint32_t)free0 + 4;
            CHECK(czk_pool_create(&p, &o, &e) < 0);
            fprintf(stderr, "expected failure: %s\n", e.msg);
            CHECK(meminfo("HugePages_Free") == free0);
            o.huge = CZK_POOL_HUGE_AUTO;
            CHECK_RC(czk_pool_create(&p, &o, &e));
            CHECK(!p.hugetlb && p.page_size == 4096);
            czk_pool_close(&p);

            /* the environment can also demand hugepages */
            setenv("CZK_POOL_HUGEPAGES", "require", 1);
            CHECK(czk_pool_create(&p, &o, &e) < 0);
            unsetenv("CZK_POOL_HUGEPAGES");

            adopt_case(CZK_POOL_HUGE_REQUIRE, NULL);
            CHECK(meminfo("HugePages_Free") == free0);
            huge_ok = 1;
        } else {
            fprintf(stderr, "reserved hugepages did not materialise (free %ld): hugepage path not tested\n", free0);
        }
        restore_at_exit();
    } else {
        fprintf(stderr, "cannot reserve hugepages (not root?): hugepage path not tested\n");
        saved_nr = -1;
    }

    /* 3. adoption after kill -9: memfd in 4 KiB pages, and a named pool file */
    if (small_ok) {
        char path[128];
        adopt_case(CZK_POOL_HUGE_NEVER, NULL);
        snprintf(path, sizeof(path), "%s/czk-test-pool-%d", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
                 (int)getpid());
        adopt_case(CZK_POOL_HUGE_NEVER, path);
    }

    if (!huge_ok && !small_ok) {
        fprintf(stderr, "test_ipc_pool: neither hugepages nor the fallback could be exercised: skip\n");
        return 77;
    }
    fprintf(stderr, "test_ipc_pool: ok (hugepages %s, fallback %s)\n", huge_ok ? "tested" : "NOT tested",
            small_ok ? "tested" : "NOT tested");
    return 0;
}
