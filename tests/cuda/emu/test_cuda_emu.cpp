/*
 * test_cuda_emu.cpp — the CUDA emulator (tests/cuda/emu/cuda_emu.h) on
 * kernels written as for nvcc: the built-in index variables over 2-D and 3-D
 * grids and blocks and the order of the blocks; block reductions through a
 * static __shared__ array and __syncthreads (also with threads that returned
 * before the barrier) and __syncthreads_count/_and/_or; __shfl_xor_sync
 * butterflies over whole warps and 8-lane segments, __shfl_sync with
 * per-lane sources, __shfl_up_sync and __shfl_down_sync at the segment
 * edges, on 4- and 8-byte values; lane pairs with two-lane masks that take
 * different branches and different numbers of shuffles and votes, or return
 * before them, then a whole-warp ballot; the votes and __activemask; the
 * atomics; dynamic shared memory; a launch of 4096 threads doing 100
 * shuffles each (timed).  Every result is compared with values computed
 * here without the emulator.  Then, each in a forked child that must abort
 * with a message: one lane of a pair returning while its partner shuffles,
 * a barrier against a waiting shuffle, two kinds of collective on one mask,
 * a source lane outside the mask, a mask naming lanes outside the block, a
 * mask without the calling lane.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "tests/cuda/emu/cuda_emu.h"

#include "tests/common/test_util.h"

static uint32_t rnd() { return (uint32_t)(t_rand64() >> 16); }
static std::vector<uint32_t> rnd_vec(size_t n)
{
    std::vector<uint32_t> v(n);
    for (uint32_t &x : v)
        x = rnd();
    return v;
}
static uint32_t rotl(uint32_t x, unsigned r) { return (x << r) | (x >> (32 - r)); }

/* ---- indices ---- */

__global__ void k_index(uint32_t *out, uint32_t *hits, uint32_t *order, uint32_t *ctr)
{
    unsigned blin = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    unsigned tlin = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    unsigned g = blin * (blockDim.x * blockDim.y * blockDim.z) + tlin;
    uint32_t *o = out + 8 * g;
    o[0] = threadIdx.x;
    o[1] = threadIdx.y;
    o[2] = threadIdx.z;
    o[3] = blockIdx.x;
    o[4] = blockIdx.y;
    o[5] = blockIdx.z;
    o[6] = blockDim.x | blockDim.y << 10 | blockDim.z << 20;
    o[7] = gridDim.x | gridDim.y << 10 | gridDim.z << 20;
    atomicAdd(&hits[g], 1u);
    if (tlin == 0)
        order[blin] = atomicAdd(ctr, 1u);
}

static void test_index(dim3 grid, dim3 block)
{
    unsigned nb = grid.x * grid.y * grid.z, nt = block.x * block.y * block.z;
    std::vector<uint32_t> out(8 * nb * nt, 0xffffffffu), hits(nb * nt), order(nb, 0xffffffffu);
    uint32_t ctr = 0;
    emu_launch(grid, block, [&] { k_index(out.data(), hits.data(), order.data(), &ctr); });
    int bad = 0;
    for (unsigned bz = 0, b = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++, b++) {
                bad += order[b] != b;
                for (unsigned tz = 0, t = 0; tz < block.z; tz++)
                    for (unsigned ty = 0; ty < block.y; ty++)
                        for (unsigned tx = 0; tx < block.x; tx++, t++) {
                            const uint32_t want[8] = {tx, ty, tz, bx, by, bz, block.x | block.y << 10 | block.z << 20,
                                                      grid.x | grid.y << 10 | grid.z << 20};
                            bad += memcmp(&out[8 * (b * nt + t)], want, sizeof want) != 0;
                            bad += hits[b * nt + t] != 1;
                        }
            }
    CHECK(bad == 0 && ctr == nb, "indices, grid (%u,%u,%u) block (%u,%u,%u): %d wrong", grid.x, grid.y, grid.z,
          block.x, block.y, block.z, bad);
}

/* ---- __syncthreads and static __shared__ ---- */

/* out[b] = sum of the block's 256 inputs (tree through shared memory);
 * red[3b..3b+2] = __syncthreads_count(odd), _and(!= stop), _or(== stop) */
__global__ void k_reduce(const uint32_t *in, uint32_t stop, uint32_t *out, int *red)
{
    __shared__ uint32_t s[256];
    unsigned t = threadIdx.x;
    uint32_t v = in[blockIdx.x * 256 + t];
    s[t] = v;
    __syncthreads();
    for (unsigned w = 128; w; w >>= 1) {
        if (t < w)
            s[t] += s[t + w];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = s[0];
    int c = __syncthreads_count(v & 1);
    int a = __syncthreads_and(v != stop);
    int o = __syncthreads_or(v == stop);
    if (t == 255) {
        red[3 * blockIdx.x] = c;
        red[3 * blockIdx.x + 1] = a;
        red[3 * blockIdx.x + 2] = o;
    }
}

/* threads at or above n return at once; the others add into one shared
 * word between two barriers (threads that returned do not count) */
__global__ void k_partial(const uint32_t *in, unsigned n, uint32_t *out)
{
    __shared__ uint32_t acc;
    unsigned t = threadIdx.x;
    if (t >= n)
        return;
    if (t == 0)
        acc = 0;
    __syncthreads();
    atomicAdd(&acc, in[blockIdx.x * blockDim.x + t]);
    __syncthreads();
    if (t == n - 1)
        out[blockIdx.x] = acc;
}

static void test_sync()
{
    const unsigned nb = 6;
    std::vector<uint32_t> in = rnd_vec(256 * nb), out(nb);
    std::vector<int> red(3 * nb);
    uint32_t stop = in[3 * 256 + 77]; /* in block 3 only */
    for (unsigned i = 0; i < in.size(); i++)
        if (in[i] == stop && i / 256 != 3)
            in[i]++;
    emu_launch(nb, 256, [&] { k_reduce(in.data(), stop, out.data(), red.data()); });
    for (unsigned b = 0; b < nb; b++) {
        uint32_t sum = 0;
        int odd = 0;
        for (unsigned t = 0; t < 256; t++) {
            sum += in[256 * b + t];
            odd += in[256 * b + t] & 1;
        }
        CHECK(out[b] == sum, "block reduction %u: %08x, want %08x", b, out[b], sum);
        CHECK(red[3 * b] == odd && red[3 * b + 1] == (b != 3) && red[3 * b + 2] == (b == 3),
              "__syncthreads_count/and/or in block %u: %d %d %d, want %d %d %d", b, red[3 * b], red[3 * b + 1],
              red[3 * b + 2], odd, b != 3, b == 3);
    }

    const unsigned bs = 160, n = 100;
    std::vector<uint32_t> in2 = rnd_vec(bs * 3), out2(3, 0);
    emu_launch(3, bs, [&] { k_partial(in2.data(), n, out2.data()); });
    for (unsigned b = 0; b < 3; b++) {
        uint32_t sum = 0;
        for (unsigned t = 0; t < n; t++)
            sum += in2[b * bs + t];
        CHECK(out2[b] == sum, "barrier after returned threads, block %u: %08x, want %08x", b, out2[b], sum);
    }
}

/* ---- shuffles over whole warps ---- */

/* a 2-D block: lanes follow the linear tid */
__global__ void k_butterfly(const uint32_t *in, unsigned long long *sum64, uint32_t *sum8, int *min32)
{
    unsigned lin = threadIdx.x + blockDim.x * threadIdx.y;
    unsigned g = blockIdx.x * blockDim.x * blockDim.y + lin;
    unsigned long long v = (unsigned long long)in[g] << 20;
    for (int o = 16; o; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    sum64[g] = v;
    uint32_t w = in[g];
    for (int o = 4; o; o >>= 1)
        w += __shfl_xor_sync(0xffffffffu, w, o, 8);
    sum8[g] = w;
    int m = (int)in[g];
    for (int o = 1; o < 32; o <<= 1) {
        int x = __shfl_xor_sync(0xffffffffu, m, o);
        m = x < m ? x : m;
    }
    min32[g] = m;
}

__global__ void k_shfl(const uint32_t *in, uint32_t *idx, uint32_t *idx16, uint32_t *up, uint32_t *up8,
                       uint32_t *down8, uint32_t *xor8, double *dbl, int *neg)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
    uint32_t v = in[g];
    idx[g] = __shfl_sync(0xffffffffu, v, (lane * 7 + 3) & 31);
    idx16[g] = __shfl_sync(0xffffffffu, v, lane * 5 + 40, 16);
    up[g] = __shfl_up_sync(0xffffffffu, v, 3);
    up8[g] = __shfl_up_sync(0xffffffffu, v, 3, 8);
    down8[g] = __shfl_down_sync(0xffffffffu, v, 2, 8);
    xor8[g] = __shfl_xor_sync(0xffffffffu, v, 9, 8); /* a later segment: own value */
    dbl[g] = __shfl_down_sync(0xffffffffu, v * 0.5, 5);
    neg[g] = __shfl_sync(0xffffffffu, -(int)v, 31 - lane);
}

static void test_warp_shuffles()
{
    const dim3 block(8, 12); /* 96 threads: 3 warps of rows */
    const unsigned nb = 5, nt = 96, n = nb * nt;
    std::vector<uint32_t> in = rnd_vec(n), sum8(n);
    std::vector<unsigned long long> sum64(n);
    std::vector<int> min32(n);
    emu_launch(nb, block, [&] { k_butterfly(in.data(), sum64.data(), sum8.data(), min32.data()); });
    int bad = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned w = i & ~31u, s = i & ~7u;
        unsigned long long e64 = 0;
        int emin = (int)in[w];
        for (unsigned j = 0; j < 32; j++) {
            e64 += (unsigned long long)in[w + j] << 20;
            emin = (int)in[w + j] < emin ? (int)in[w + j] : emin;
        }
        uint32_t e8 = 0;
        for (unsigned j = 0; j < 8; j++)
            e8 += in[s + j];
        bad += sum64[i] != e64 || sum8[i] != e8 || min32[i] != emin;
    }
    CHECK(bad == 0, "xor butterflies: %d wrong", bad);

    std::vector<uint32_t> idx(n), idx16(n), up(n), up8(n), down8(n), xor8(n);
    std::vector<double> dbl(n);
    std::vector<int> neg(n);
    emu_launch(nb, nt, [&] {
        k_shfl(in.data(), idx.data(), idx16.data(), up.data(), up8.data(), down8.data(), xor8.data(), dbl.data(),
               neg.data());
    });
    bad = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned w = i & ~31u, lane = i & 31;
        bad += idx[i] != in[w + ((lane * 7 + 3) & 31)];
        bad += idx16[i] != in[w + (lane & 16) + ((lane * 5 + 40) & 15)];
        bad += up[i] != (lane >= 3 ? in[i - 3] : in[i]);
        bad += up8[i] != ((lane & 7) >= 3 ? in[i - 3] : in[i]);
        bad += down8[i] != ((lane & 7) + 2 < 8 ? in[i + 2] : in[i]);
        bad += xor8[i] != ((lane ^ 9) <= (lane | 7) ? in[w + (lane ^ 9)] : in[i]);
        bad += dbl[i] != (lane + 5 < 32 ? in[i + 5] : in[i]) * 0.5;
        bad += neg[i] != -(int)in[w + 31 - lane];
    }
    CHECK(bad == 0, "__shfl_sync/_up/_down: %d wrong", bad);
}

/* ---- lane pairs ---- */

/* what pair p does: 0 return at once, 1 xor rounds, 2 broadcasts from the
 * pair's even lane, 3 votes then reads from the odd lane */
static unsigned pair_kind(unsigned p) { return (p * 2654435761u >> 7) % 4; }

template <bool full_ballot> __global__ void k_pairs(const uint32_t *in, uint32_t *out, uint32_t *bal)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31, p = g >> 1;
    unsigned mask = 3u << (lane & 30);
    unsigned kind = pair_kind(p), rounds = 1 + p % 5;
    uint32_t v = in[g];
    if (kind == 0 && !full_ballot)
        return;
    if (kind == 1) {
        for (unsigned i = 0; i < rounds; i++)
            v = v * 3 + __shfl_xor_sync(mask, v, 1) + i;
    } else if (kind == 2) {
        for (unsigned i = 0; i < rounds; i++)
            v = rotl(v + __shfl_sync(mask, v, lane & 30) + (lane & 1), 5);
    } else if (kind == 3) {
        unsigned b = __ballot_sync(mask, v & 1);
        int all = __all_sync(mask, v & 2), any = __any_sync(mask, v & 4);
        v += b * 7 + all * 1000 + any * 10;
        for (unsigned i = 0; i < rounds + 2; i++)
            v ^= __shfl_sync(mask, v, (lane & 30) | 1) >> 1;
    }
    out[g] = v;
    if (full_ballot)
        bal[g] = __ballot_sync(0xffffffffu, v & 1);
}

/* the same, pair by pair, without the emulator; lane l0 = the even lane */
static void pair_ref(unsigned p, unsigned l0, uint32_t &a, uint32_t &b)
{
    unsigned kind = pair_kind(p), rounds = 1 + p % 5;
    if (kind == 1) {
        for (unsigned i = 0; i < rounds; i++) {
            uint32_t na = a * 3 + b + i, nb = b * 3 + a + i;
            a = na, b = nb;
        }
    } else if (kind == 2) {
        for (unsigned i = 0; i < rounds; i++) {
            uint32_t na = rotl(a + a, 5), nb = rotl(b + a + 1, 5);
            a = na, b = nb;
        }
    } else if (kind == 3) {
        unsigned bl = (a & 1) << l0 | (b & 1) << (l0 + 1);
        int all = (a & 2) && (b & 2), any = (a & 4) || (b & 4);
        a += bl * 7 + all * 1000 + any * 10;
        b += bl * 7 + all * 1000 + any * 10;
        for (unsigned i = 0; i < rounds + 2; i++) {
            uint32_t s = b >> 1;
            a ^= s, b ^= s;
        }
    }
}

static void test_pairs()
{
    const unsigned nb = 4, nt = 128, n = nb * nt;
    std::vector<uint32_t> in = rnd_vec(n);
    int kinds[4] = {0, 0, 0, 0};
    for (unsigned p = 0; p < n / 2; p++)
        kinds[pair_kind(p)]++;
    CHECK(kinds[0] && kinds[1] && kinds[2] && kinds[3], "pair kinds do not all occur");

    /* pairs returning early, the others diverging */
    std::vector<uint32_t> out(n, 0xdeadbeefu);
    emu_launch(nb, nt, [&] { k_pairs<false>(in.data(), out.data(), nullptr); });
    int bad = 0;
    for (unsigned i = 0; i < n; i += 2) {
        uint32_t a = in[i], b = in[i + 1];
        pair_ref(i / 2, i & 31, a, b);
        if (pair_kind(i / 2) == 0)
            a = b = 0xdeadbeefu;
        bad += out[i] != a || out[i + 1] != b;
    }
    CHECK(bad == 0, "diverging lane pairs: %d wrong", bad);

    /* no early returns; after the pairs' different numbers of collectives,
     * one ballot over the whole warp */
    std::vector<uint32_t> bal(n);
    emu_launch(nb, nt, [&] { k_pairs<true>(in.data(), out.data(), bal.data()); });
    bad = 0;
    std::vector<uint32_t> ref(n);
    for (unsigned i = 0; i < n; i += 2) {
        ref[i] = in[i], ref[i + 1] = in[i + 1];
        pair_ref(i / 2, i & 31, ref[i], ref[i + 1]);
    }
    for (unsigned i = 0; i < n; i++) {
        uint32_t eb = 0;
        for (unsigned j = 0; j < 32; j++)
            eb |= (ref[(i & ~31u) + j] & 1) << j;
        bad += out[i] != ref[i] || bal[i] != eb;
    }
    CHECK(bad == 0, "pairs then a whole-warp ballot: %d wrong", bad);
}

/* ---- votes ---- */

__global__ void k_votes(const uint32_t *in, int *all, int *any, uint32_t *bal, uint32_t *act)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31, w = g >> 5;
    act[g] = __activemask();
    int pred = w % 3 == 0 ? 1 : w % 3 == 1 ? lane == 17 : (int)(in[g] & 1);
    all[g] = __all_sync(0xffffffffu, pred);
    any[g] = __any_sync(0xffffffffu, pred && w % 3 != 1);
    bal[g] = __ballot_sync(0xffffffffu, pred);
}

__global__ void k_syncwarp_tail(uint32_t *out)
{
    /* 48 threads: the second warp has lanes 0..15 */
    unsigned t = threadIdx.x, am = __activemask();
    __shared__ uint32_t s[48];
    s[t] = t * t;
    __syncwarp(t < 32 ? 0xffffffffu : 0xffffu);
    out[t] = s[t ^ 1] + am;
}

/* lanes 20 and up return at once; after the barrier the others see them
 * gone (and, before the second one, one another) */
__global__ void k_active(uint32_t *out)
{
    if ((threadIdx.x & 31) >= 20)
        return;
    __syncthreads();
    unsigned am = __activemask();
    __syncthreads();
    out[threadIdx.x] = am;
}

static void test_votes()
{
    const unsigned n = 6 * 32;
    std::vector<uint32_t> in = rnd_vec(n), bal(n), act(n);
    std::vector<int> all(n), any(n);
    emu_launch(2, 96, [&] { k_votes(in.data(), all.data(), any.data(), bal.data(), act.data()); });
    int bad = 0;
    for (unsigned w = 0; w < 6; w++) {
        uint32_t eb = 0;
        for (unsigned l = 0; l < 32; l++)
            eb |= (uint32_t)(w % 3 == 0 ? 1 : w % 3 == 1 ? l == 17 : (int)(in[32 * w + l] & 1)) << l;
        for (unsigned l = 0; l < 32; l++) {
            unsigned i = 32 * w + l;
            bad += all[i] != (eb == 0xffffffffu) || any[i] != (w % 3 != 1 && eb != 0) || bal[i] != eb;
            bad += act[i] != 0xffffffffu;
        }
    }
    CHECK(bad == 0, "votes: %d wrong", bad);
    std::vector<uint32_t> o(48);
    emu_launch(1, 48, [&] { k_syncwarp_tail(o.data()); });
    bad = 0;
    for (unsigned t = 0; t < 48; t++)
        bad += o[t] != (t ^ 1) * (t ^ 1) + (t < 32 ? 0xffffffffu : 0xffffu);
    CHECK(bad == 0, "__syncwarp / __activemask in a partial warp: %d wrong", bad);
    std::vector<uint32_t> a(64, 0);
    emu_launch(1, 64, [&] { k_active(a.data()); });
    bad = 0;
    for (unsigned t = 0; t < 64; t++)
        bad += a[t] != ((t & 31) < 20 ? 0xfffffu : 0u);
    CHECK(bad == 0, "__activemask after lanes returned: %d wrong", bad);
}

/* ---- atomics ---- */

struct atom_out {
    uint32_t hist[16], mx, mn, orv, andv, cas_sum, ticket_max;
    unsigned long long sum64, mx64;
    int isum;
    float fsum;
};

__global__ void k_atomics(const uint32_t *in, atom_out *o, uint32_t *ticket, uint32_t *slot, uint32_t *prev,
                          uint32_t *blk)
{
    __shared__ uint32_t sh;
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t v = in[g];
    if (threadIdx.x == 0)
        sh = 0;
    __syncthreads();
    atomicAdd(&sh, v & 7);
    atomicAdd(&o->hist[v & 15], 1u);
    atomicMax(&o->mx, v);
    atomicMin(&o->mn, v);
    atomicOr(&o->orv, 1u << (v & 31));
    atomicAnd(&o->andv, ~(1u << (v % 29)));
    atomicAdd(&o->sum64, (unsigned long long)v << 8);
    atomicMax(&o->mx64, (unsigned long long)v * v);
    atomicAdd(&o->isum, (int)(v & 0xff) - 128);
    atomicAdd(&o->fsum, (float)(v & 3));
    uint32_t old = o->cas_sum, assumed;
    do {
        assumed = old;
        old = atomicCAS(&o->cas_sum, assumed, assumed + (v >> 4));
    } while (old != assumed);
    ticket[g] = atomicAdd(&o->ticket_max, 1u);
    prev[g] = atomicExch(&slot[v % 64], g + 1);
    __syncthreads();
    if (threadIdx.x == 0)
        blk[blockIdx.x] = sh;
}

static void test_atomics()
{
    const unsigned nb = 3, nt = 128, n = nb * nt;
    std::vector<uint32_t> in = rnd_vec(n), ticket(n), slot(64, 0), prev(n), blk(nb);
    atom_out o;
    memset(&o, 0, sizeof o);
    o.mn = 0xffffffffu;
    o.andv = 0xffffffffu;
    emu_launch(nb, nt, [&] { k_atomics(in.data(), &o, ticket.data(), slot.data(), prev.data(), blk.data()); });
    atom_out e;
    memset(&e, 0, sizeof e);
    e.mn = 0xffffffffu;
    e.andv = 0xffffffffu;
    std::vector<uint32_t> eblk(nb, 0), seen(n, 0), eslot(64, 0);
    for (unsigned i = 0; i < n; i++) {
        uint32_t v = in[i];
        e.hist[v & 15]++;
        e.mx = v > e.mx ? v : e.mx;
        e.mn = v < e.mn ? v : e.mn;
        e.orv |= 1u << (v & 31);
        e.andv &= ~(1u << (v % 29));
        e.sum64 += (unsigned long long)v << 8;
        e.mx64 = (unsigned long long)v * v > e.mx64 ? (unsigned long long)v * v : e.mx64;
        e.isum += (int)(v & 0xff) - 128;
        e.fsum += (float)(v & 3);
        e.cas_sum += v >> 4;
        eblk[i / nt] += v & 7;
        if (ticket[i] < n)
            seen[ticket[i]]++;
    }
    int bad = memcmp(e.hist, o.hist, sizeof e.hist) != 0;
    bad += e.mx != o.mx || e.mn != o.mn || e.orv != o.orv || e.andv != o.andv || e.sum64 != o.sum64 ||
           e.mx64 != o.mx64 || e.isum != o.isum || e.fsum != o.fsum || e.cas_sum != o.cas_sum || o.ticket_max != n;
    for (unsigned i = 0; i < n; i++)
        bad += seen[i] != 1;
    bad += blk != eblk;
    /* atomicExch: the threads of a slot, in ticket order, each saw the one before */
    std::vector<unsigned> by_ticket(n);
    for (unsigned i = 0; i < n; i++)
        if (ticket[i] < n)
            by_ticket[ticket[i]] = i;
    for (unsigned k = 0; k < n; k++) {
        unsigned i = by_ticket[k];
        bad += prev[i] != eslot[in[i] % 64];
        eslot[in[i] % 64] = i + 1;
    }
    bad += slot != eslot;
    CHECK(bad == 0, "atomics: %d wrong", bad);
}

/* ---- dynamic shared memory, emu_launch_kernel, a template kernel ---- */

template <class T> __global__ void k_reverse(const T *in, T *out, int *zero_ok)
{
    T *s = static_cast<T *>(emu_dyn_shared());
    unsigned t = threadIdx.x, n = blockDim.x, g = blockIdx.x * n + t;
    if (blockIdx.x == 0 && s[t] != 0)
        *zero_ok = 0;
    s[t] = in[g];
    __syncthreads();
    out[g] = s[n - 1 - t];
}

static void test_dyn_shared()
{
    const unsigned nb = 4, nt = 64, n = nb * nt;
    std::vector<unsigned long long> in(n), out(n);
    for (auto &x : in)
        x = (unsigned long long)rnd() << 32 | rnd();
    int zero_ok = 1;
    emu_launch_kernel(nb, nt, nt * sizeof(unsigned long long), k_reverse<unsigned long long>, in.data(), out.data(),
                      &zero_ok);
    int bad = 0;
    for (unsigned i = 0; i < n; i++)
        bad += out[i] != in[(i & ~(nt - 1)) + nt - 1 - (i & (nt - 1))];
    CHECK(bad == 0 && zero_ok, "dynamic shared memory: %d wrong, zeroed %d", bad, zero_ok);
}

/* ---- intrinsics ---- */

static void test_intrinsics()
{
    CHECK(__brev(1u) == 0x80000000u && __brev(0x12345678u) == 0x1e6a2c48u, "__brev");
    CHECK(__brevll(1ull) == 1ull << 63 && __brevll(0x00000000ffffffffull) == 0xffffffff00000000ull, "__brevll");
    CHECK(__clz(0) == 32 && __clz(1) == 31 && __clz(-1) == 0 && __clzll(0) == 64 && __clzll(1ll << 40) == 23, "__clz");
    CHECK(__popc(0xf0f0u) == 8 && __popcll(~0ull) == 64, "__popc");
    CHECK(__ffs(0) == 0 && __ffs(8) == 4 && __ffsll(1ll << 40) == 41, "__ffs");
    CHECK(__umulhi(0xffffffffu, 0xffffffffu) == 0xfffffffeu && __mulhi(-2, 0x40000000) == -1, "__umulhi");
    CHECK(__umul64hi(~0ull, ~0ull) == ~0ull - 1 && __mul64hi(-1, 5) == -1, "__umul64hi");
    CHECK(__mul24(0x01000003, 5) == 15 && __mul24(0x00ffffff, 2) == -2 && __umul24(0xff000002u, 3) == 6, "__mul24");
    CHECK(__funnelshift_l(0x80000000u, 1u, 1) == 3u && __funnelshift_l(1u, 2u, 33) == 4u &&
              __funnelshift_lc(1u, 2u, 40) == 1u && __funnelshift_r(2u, 1u, 1) == 0x80000001u &&
              __funnelshift_rc(2u, 7u, 99) == 7u,
          "__funnelshift");
    CHECK(__byte_perm(0x33221100u, 0x77665544u, 0x5140) == 0x55114400u, "__byte_perm");
    uint4 q = make_uint4(1, 2, 3, 4);
    CHECK(__ldg(&q).w == 4 && alignof(uint4) == 16 && alignof(uint2) == 8, "__ldg / vector types");
    unsigned u = 5;
    CHECK(atomicInc(&u, 5) == 5 && u == 0 && atomicDec(&u, 9) == 0 && u == 9, "atomicInc/Dec");
}

/* ---- speed ---- */

__global__ void k_spin(uint32_t *v)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t x = v[g];
    for (int i = 0; i < 100; i++)
        x = x * 0x9e3779b1u + __shfl_xor_sync(0xffffffffu, x, 1 << (i % 5));
    v[g] = x;
}

static void test_speed()
{
    const unsigned nb = 16, nt = 256, n = nb * nt;
    std::vector<uint32_t> v = rnd_vec(n), e = v;
    for (unsigned w = 0; w < n; w += 32)
        for (int i = 0; i < 100; i++) {
            uint32_t old[32];
            memcpy(old, &e[w], sizeof old);
            for (unsigned l = 0; l < 32; l++)
                e[w + l] = old[l] * 0x9e3779b1u + old[l ^ (1u << (i % 5))];
        }
    auto t0 = std::chrono::steady_clock::now();
    emu_launch(nb, nt, [&] { k_spin(v.data()); });
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(v == e, "4096 threads x 100 shuffles: wrong results");
    printf("4096 threads x 100 shuffles: %.3f s\n", s);
}

/* ---- errors: the child must abort with a message ---- */

static void expect_abort(const char *what, void (*fn)(), const char *needle1, const char *needle2)
{
    fflush(stdout);
    int pfd[2];
    if (pipe(pfd)) {
        perror("pipe");
        exit(2);
    }
    pid_t pid = fork();
    if (pid == 0) {
        struct rlimit rl = {0, 0};
        setrlimit(RLIMIT_CORE, &rl);
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        fn();
        _exit(0);
    }
    close(pfd[1]);
    std::string msg;
    char buf[4096];
    ssize_t r;
    while ((r = read(pfd[0], buf, sizeof buf)) > 0)
        msg.append(buf, (size_t)r);
    close(pfd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    bool aborted = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
    bool said = strstr(msg.c_str(), needle1) && strstr(msg.c_str(), needle2);
    CHECK(aborted && said, "%s: %s, message:\n%s(wanted \"%s\" and \"%s\")", what,
          aborted ? "aborted" : "did not abort", msg.c_str(), needle1, needle2);
    if (getenv("CZK_EMU_SHOW"))
        printf("--- %s:\n%s", what, msg.c_str());
}

__global__ void k_bad_pair_return(uint32_t *v)
{
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
    if (blockIdx.x == 1 && threadIdx.x == 37) /* lane 5: its partner, lane 4, shuffles */
        return;
    v[g] += __shfl_xor_sync(3u << (lane & 30), v[g], 1);
}
static void bad_pair_return()
{
    std::vector<uint32_t> v(128);
    emu_launch(2, 64, [&] { k_bad_pair_return(v.data()); });
}

__global__ void k_bad_barrier()
{
    unsigned lane = threadIdx.x & 31;
    if (threadIdx.x == 5) /* lane 4 is at the barrier instead */
        __shfl_xor_sync(3u << (lane & 30), 1u, 1);
    __syncthreads();
}
static void bad_barrier() { emu_launch(1, 64, [] { k_bad_barrier(); }); }

__global__ void k_bad_kinds()
{
    unsigned lane = threadIdx.x & 31, mask = 3u << (lane & 30);
    if (lane & 1)
        __ballot_sync(mask, 1);
    else
        __shfl_xor_sync(mask, 1u, 1);
}
static void bad_kinds() { emu_launch(1, 32, [] { k_bad_kinds(); }); }

static void bad_src() { emu_launch(1, 32, [] { __shfl_sync(3u << (threadIdx.x & 30), 1, (threadIdx.x & 30) + 2); }); }
static void bad_block_mask() { emu_launch(1, 48, [] { __syncwarp(0xffffffffu); }); }
static void bad_own_lane() { emu_launch(1, 32, [] { __ballot_sync(1u << ((threadIdx.x + 1) & 31), 1); }); }

int main()
{
    t_seed("test_cuda_emu");
    auto t0 = std::chrono::steady_clock::now();
    test_intrinsics();
    test_index(dim3(3, 2), dim3(16, 5));
    test_index(dim3(2, 3, 2), dim3(4, 3, 5));
    test_sync();
    test_warp_shuffles();
    test_pairs();
    test_votes();
    test_atomics();
    test_dyn_shared();
    test_speed();
    expect_abort("a pair's lane returns while its partner shuffles", bad_pair_return,
                 "lane 5, named in the mask, has returned",
                 "block (1,0,0) thread (36,0,0) [warp 1 lane 4] waits at __shfl_xor_sync(mask 0x00000030)");
    expect_abort("__syncthreads against a waiting shuffle", bad_barrier,
                 "thread (5,0,0) [warp 0 lane 5] waits at __shfl_xor_sync",
                 "lane 4, named in the mask, waits at __syncthreads");
    expect_abort("two kinds of collective on one mask", bad_kinds, "waits at __shfl_xor_sync(mask 0x00000003)",
                 "lane 1, named in the mask, waits at __ballot_sync");
    expect_abort("a source lane outside the mask", bad_src, "source lane 2 is not in the mask",
                 "__shfl_sync(mask 0x00000003)");
    expect_abort("a mask naming lanes outside the block", bad_block_mask, "outside the block", "[warp 1 lane 0]");
    expect_abort("a mask without the calling lane", bad_own_lane, "the calling lane is not in the mask",
                 "__ballot_sync");
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (t_failures) {
        printf("test_cuda_emu: %d check(s) failed\n", t_failures);
        return 1;
    }
    printf("test_cuda_emu: all checks passed (%.2f s)\n", s);
    return 0;
}
