/*
 * fuzz_replay.c — standalone driver for fuzz_formats.c when libFuzzer is not
 * available (or for a quick deterministic run): replays every file of the
 * given corpus directories, then N random mutations of each (bit flips, byte
 * and boundary-value overwrites of u32/u64 fields, truncation, extension,
 * removed or duplicated chunks).  A crash or abort() in the target fails it.
 *
 * usage: fuzz_replay N SEED DIR|FILE...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng;

static uint64_t rnd(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t mutate(uint8_t *b, size_t n, size_t cap)
{
    static const uint64_t boundary[] = {0, 1, 2, 0x7fffffff, 0x80000000, 0xffffffff,
                                        0xfffffffe, 0x100000000ull, 0xffffffffffffffffull};
    int rounds = 1 + (int)(rnd() % 4);

    for (int r = 0; r < rounds && n; r++) {
        size_t at = rnd() % n;
        switch (rnd() % 8) {
        case 0: b[at] ^= (uint8_t)(1u << (rnd() % 8)); break;
        case 1: b[at] = (uint8_t)rnd(); break;
        case 2: if (at + 4 <= n) { uint32_t v = (uint32_t)boundary[rnd() % 9]; memcpy(b + at, &v, 4); } break;
        case 3: if (at + 8 <= n) { uint64_t v = boundary[rnd() % 9]; memcpy(b + at, &v, 8); } break;
        case 4: n = at; break; /* truncate */
        case 5: { size_t k = rnd() % 64; if (n + k <= cap) { memset(b + n, (int)rnd(), k); n += k; } } break;
        case 6: { size_t k = rnd() % (n - at + 1); memmove(b + at, b + at + k, n - at - k); n -= k; } break;
        default: { size_t k = rnd() % 128; if (k > n - at) k = n - at; if (n + k <= cap) { memmove(b + at + k, b + at, n - at); n += k; } } break;
        }
    }
    return n;
}

static unsigned long runs;

static void one_file(const char *path, long n_mut)
{
    FILE *f = fopen(path, "rb");
    uint8_t *orig, *buf;
    long n;

    if (!f) {
        perror(path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    orig = malloc((size_t)n + 1);
    buf = malloc((size_t)n + 4096);
    if (!orig || !buf || fread(orig, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    LLVMFuzzerTestOneInput(orig, (size_t)n);
    runs++;
    for (long i = 0; i < n_mut; i++) {
        size_t m;
        memcpy(buf, orig, (size_t)n);
        m = mutate(buf, (size_t)n, (size_t)n + 4096);
        LLVMFuzzerTestOneInput(buf, m);
        runs++;
    }
    free(orig);
    free(buf);
}

int main(int argc, char **argv)
{
    long n_mut;

    if (argc < 4) {
        fprintf(stderr, "usage: %s N SEED DIR|FILE...\n", argv[0]);
        return 2;
    }
    n_mut = strtol(argv[1], NULL, 10);
    rng = strtoull(argv[2], NULL, 0);
    for (int i = 3; i < argc; i++) {
        DIR *d = opendir(argv[i]);
        struct dirent *de;
        if (!d) {
            one_file(argv[i], n_mut);
            continue;
        }
        while ((de = readdir(d))) {
            char path[4096];
            if (de->d_name[0] == '.')
                continue;
            snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
            one_file(path, n_mut);
        }
        closedir(d);
    }
    printf("%lu inputs run, no crash\n", runs);
    return 0;
}
