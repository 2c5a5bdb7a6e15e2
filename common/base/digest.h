/*
 * digest.h — SHA-256 through OpenSSL's libcrypto: identity records of proof
 * files, key digests that daemons compare, witness digests bound to request
 * ids.  One-shot and streaming forms; hex output is lower case.
 */
#ifndef CZK_BASE_DIGEST_H
#define CZK_BASE_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define CZK_SHA256_LEN 32
#define CZK_SHA256_HEX 65 /* 64 digits and a NUL */

typedef struct czk_sha256 czk_sha256; /* opaque streaming state */

/* 0 or -ENOMEM */
int czk_sha256_new(czk_sha256 **s);
void czk_sha256_update(czk_sha256 *s, const void *p, size_t n);
/* writes the digest and frees s */
void czk_sha256_final(czk_sha256 *s, uint8_t out[CZK_SHA256_LEN]);

void czk_sha256_buf(const void *p, size_t n, uint8_t out[CZK_SHA256_LEN]);
void czk_sha256_hex(const void *p, size_t n, char out[CZK_SHA256_HEX]);
/* 64 hex digits of d into out */
void czk_hex(const uint8_t *d, size_t n, char *out);

#endif
