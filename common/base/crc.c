/*
 * crc.c — CRC-32 through zlib, in chunks that fit zlib's uInt length.
 */
#include <zlib.h>

#include "common/base/crc.h"

uint32_t czk_crc32_init(void) { return (uint32_t)crc32(0L, Z_NULL, 0); }

uint32_t czk_crc32(uint32_t crc, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        uInt chunk = n > (1u << 30) ? (1u << 30) : (uInt)n;
        crc = (uint32_t)crc32(crc, b, chunk);
        b += chunk;
        n -= chunk;
    }
    return crc;
}
