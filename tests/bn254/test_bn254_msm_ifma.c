/*
 * test_bn254_msm_ifma.c — BN254's AVX-512 IFMA batch-affine flush
 * (czk_msm_ifma_flush_bn254_g1 / _g2, common/crypto/msm_ifma.c over the
 * 5 x 52-bit lanes of bn254_fpx8.h) called directly, against the curve's
 * own Jacobian additions.  The MSM never hands the flush a base equal to
 * its bucket's point or to its negation (its queue sends those to XYZZ
 * first), so this is where the flush's own "same x" path is checked.
 *
 * Buckets and bases are random multiples of the generator.  In each batch
 * of cnt additions (cnt = 1, 7, 8, 9, 150: partial and full 8-lane steps,
 * two chains) the bucket indexes are distinct and random, the signs
 * random, and some bases are set to their bucket's point (P + P) or to its
 * negation (P - P and, with the sign, -(-P) + P): those additions must come
 * back in same[] (exactly those, in order) with their buckets untouched;
 * every other bucket must equal bucket + (+-base) computed with
 * czk_bn254_g*_add and converted to affine, bit for bit (canonical).
 * Skips (77) when the CPU has no AVX-512 IFMA or CZK_NO_IFMA is set.
 * Usage: test_bn254_msm_ifma
 */
#include <stdlib.h>

#include "common/crypto/fpx8.h"
#include "common/crypto/msm_ifma.h"
#include "tests/bn254/bn_util.h"

#define NBK 300

/* a random point k G, k uniform below 2^252 (not t_rand_mod: its edge
 * values 0, 1, r - 1 would give infinity, which the flush never gets, and
 * coincidences with the planned "same x" additions) */
#define RAND_POINT(G, out)                                         \
    do {                                                           \
        czk_bn254_fr k_ = {{t_rand64(), t_rand64(), t_rand64(),    \
                            t_rand64() & 0x0fffffffffffffffULL}};  \
        czk_bn254_##G j_;                                          \
        czk_bn254_##G##_mul_aff(&j_, &GEN, &k_);                   \
        czk_bn254_##G##_to_aff(out, &j_);                          \
    } while (0)

#define FLUSH_TEST(G, GEN_)                                                                               \
    static void test_##G(size_t cnt)                                                                      \
    {                                                                                                     \
        static const czk_bn254_##G##_aff *pbase[NBK];                                                     \
        static czk_bn254_##G##_aff bk[NBK], want[NBK], base[NBK];                                         \
        static uint32_t pidx[NBK], same[NBK], want_same[NBK];                                             \
        static uint8_t pneg[NBK], used[NBK];                                                              \
        const czk_bn254_##G##_aff GEN = GEN_;                                                             \
        void *scr = aligned_alloc(64, (czk_msm_ifma_scratch_bytes_bn254_##G(cnt) + 63) & ~(size_t)63);    \
        size_t j, nsame, nwant = 0, i;                                                                    \
                                                                                                          \
        memset(used, 0, sizeof(used));                                                                    \
        for (i = 0; i < NBK; i++)                                                                         \
            RAND_POINT(G, &bk[i]);                                                                        \
        for (j = 0; j < cnt; j++) {                                                                       \
            unsigned pick = (unsigned)(t_rand64() % 8);                                                   \
            do                                                                                            \
                pidx[j] = (uint32_t)(t_rand64() % NBK);                                                   \
            while (used[pidx[j]]);                                                                        \
            used[pidx[j]] = 1;                                                                            \
            pneg[j] = (uint8_t)(t_rand64() & 1);                                                          \
            if (pick == 0)                                                                                \
                base[j] = bk[pidx[j]];                                                                    \
            else if (pick == 1)                                                                           \
                czk_bn254_##G##_aff_neg(&base[j], &bk[pidx[j]]);                                          \
            else                                                                                          \
                RAND_POINT(G, &base[j]);                                                                  \
            pbase[j] = &base[j];                                                                          \
            if (pick <= 1)                                                                                \
                want_same[nwant++] = (uint32_t)j;                                                         \
        }                                                                                                 \
        memcpy(want, bk, sizeof(bk));                                                                     \
        for (j = 0; j < cnt; j++) {                                                                       \
            czk_bn254_##G a, b;                                                                           \
            czk_bn254_##G##_aff nb;                                                                       \
            if (pick_is_same(want_same, nwant, j))                                                        \
                continue;                                                                                 \
            nb = base[j];                                                                                 \
            if (pneg[j])                                                                                  \
                czk_bn254_##G##_aff_neg(&nb, &base[j]);                                                   \
            czk_bn254_##G##_from_aff(&a, &bk[pidx[j]]);                                                   \
            czk_bn254_##G##_from_aff(&b, &nb);                                                            \
            czk_bn254_##G##_add(&a, &a, &b);                                                              \
            czk_bn254_##G##_to_aff(&want[pidx[j]], &a);                                                   \
        }                                                                                                 \
        nsame = czk_msm_ifma_flush_bn254_##G(bk, pidx, pbase, pneg, cnt, scr, same);                      \
        CHECK(nsame == nwant && !memcmp(same, want_same, nwant * sizeof(*same)),                          \
              #G " cnt=%zu: %zu additions left to the caller, want %zu", cnt, nsame, nwant);              \
        for (i = 0; i < NBK; i++)                                                                         \
            CHECK(!memcmp(&bk[i], &want[i], sizeof(bk[i])), #G " cnt=%zu: bucket %zu differs", cnt, i);    \
        free(scr);                                                                                        \
    }

/* j is one of the additions expected in same[] */
static int pick_is_same(const uint32_t *s, size_t n, size_t j)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] == j)
            return 1;
    return 0;
}

FLUSH_TEST(g1, CZK_BN254_G1_GEN)
FLUSH_TEST(g2, CZK_BN254_G2_GEN)

int main(void)
{
    static const size_t cnts[] = {1, 7, 8, 9, 150};

    t_seed("test_bn254_msm_ifma");
    if (!czk_fpx8_enabled()) {
        printf("test_bn254_msm_ifma: skipped: no AVX-512 IFMA on this CPU or CZK_NO_IFMA set\n");
        return 77;
    }
    bn_init();
    for (size_t c = 0; c < sizeof(cnts) / sizeof(cnts[0]); c++) {
        test_g1(cnts[c]);
        test_g2(cnts[c]);
    }
    printf("test_bn254_msm_ifma: %s\n", t_failures ? "FAILED" : "ok");
    return t_failures ? 1 : 0;
}
