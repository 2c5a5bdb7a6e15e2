/*
 * crc.h — CRC-32 (zlib's polynomial) over buffers of any length; the one
 * checksum of journal records, pool headers and slot payloads.
 */
#ifndef CZK_BASE_CRC_H
#define CZK_BASE_CRC_H

#include <stddef.h>
#include <stdint.h>

/* the CRC of nothing: the value to start a running CRC from */
uint32_t czk_crc32_init(void);

/* continues crc over n bytes at p (n may exceed 4 GiB) */
uint32_t czk_crc32(uint32_t crc, const void *p, size_t n);

#endif
