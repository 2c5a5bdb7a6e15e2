/*
 * test_ipc_crc.c — the slot payload checksum is computed in parallel pieces
 * joined with crc32_combine64; it must equal zlib's one-pass crc32 of the
 * payload for every thread count, and a flipped byte anywhere must fail
 * czk_slot_verify.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ipc/pool.h"

#define T_STOP_AT_FAILURE
#include "tests/common/test_util.h"

int main(void)
{
    const uint64_t len = 37u * 1024 * 1024 + 4093; /* not a multiple of any piece size */
    czk_pool_opts o = {.pool_id = 9, .numa_node = -1, .slot_count = 1, .slot_size = len, .huge = CZK_POOL_HUGE_NEVER};
    static const char *threads[] = {"1", "2", "3", "5", "16"};
    czk_error e = {0};
    czk_pool p;
    uint32_t gen;
    uint8_t *d;
    uLong want;

    t_seed("test_ipc_crc");
    CHECK(czk_pool_create(&p, &o, &e) == 0);
    d = czk_slot_data(&p, 0);
    for (uint64_t i = 0; i < len; i += 8) {
        uint64_t v = t_rand64();
        memcpy(d + i, &v, len - i < 8 ? len - i : 8);
    }
    want = crc32(0L, Z_NULL, 0);
    for (uint64_t off = 0; off < len; off += 1u << 20)
        want = crc32(want, d + off, (uInt)(len - off < (1u << 20) ? len - off : (1u << 20)));

    for (unsigned t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
        setenv("CZK_CRC_THREADS", threads[t], 1);
        CHECK(czk_slot_assign(&p, 0, 77, 1, 0, 0, &gen, &e) == 0);
        CHECK(czk_slot_begin_fill(&p, 0, gen, 77, &e) == 0);
        CHECK(czk_slot_publish_ready(&p, 0, gen, 77, 1, 1, len, true, &e) == 0);
        CHECK(p.slots[0].payload_crc == (uint32_t)want);
        /* verify with another thread count than the one that published */
        setenv("CZK_CRC_THREADS", threads[(t + 2) % 5], 1);
        CHECK(czk_slot_verify(&p, 0, &e) == 0);
        uint64_t at = t_rand64() % len;
        d[at] ^= (uint8_t)(1u << (t_rand64() % 8));
        CHECK(czk_slot_verify(&p, 0, &e) == -EBADMSG && strstr(e.msg, "payload crc"));
        CHECK(czk_slot_begin_dma(&p, 0, gen, &e) == 0);
        CHECK(czk_slot_release(&p, 0, gen, &e) == 0);
        /* the flipped payload is the new payload: recompute the one-pass crc */
        want = crc32(0L, Z_NULL, 0);
        for (uint64_t off = 0; off < len; off += 1u << 20)
            want = crc32(want, d + off, (uInt)(len - off < (1u << 20) ? len - off : (1u << 20)));
    }
    czk_pool_close(&p);
    printf("parallel slot crc equals one-pass crc32 for 1..16 threads; corruption detected\n");
    return 0;
}
