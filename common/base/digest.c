/* digest.c — SHA-256 over OpenSSL EVP (see digest.h). */
#include <errno.h>
#include <openssl/evp.h>
#include <stdlib.h>

#include "common/base/digest.h"

struct czk_sha256 {
    EVP_MD_CTX *ctx;
};

int czk_sha256_new(czk_sha256 **out)
{
    czk_sha256 *s = malloc(sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->ctx = EVP_MD_CTX_new();
    if (!s->ctx || EVP_DigestInit_ex(s->ctx, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(s->ctx);
        free(s);
        return -ENOMEM;
    }
    *out = s;
    return 0;
}

void czk_sha256_update(czk_sha256 *s, const void *p, size_t n)
{
    EVP_DigestUpdate(s->ctx, p, n);
}

void czk_sha256_final(czk_sha256 *s, uint8_t out[CZK_SHA256_LEN])
{
    unsigned len = CZK_SHA256_LEN;
    EVP_DigestFinal_ex(s->ctx, out, &len);
    EVP_MD_CTX_free(s->ctx);
    free(s);
}

void czk_sha256_buf(const void *p, size_t n, uint8_t out[CZK_SHA256_LEN])
{
    unsigned len = CZK_SHA256_LEN;
    /* EVP_Digest allocates nothing it can fail on for SHA-256 in practice;
     * on failure out is left zero, which no real digest equals */
    for (int i = 0; i < CZK_SHA256_LEN; i++)
        out[i] = 0;
    EVP_Digest(p, n, out, &len, EVP_sha256(), NULL);
}

void czk_hex(const uint8_t *d, size_t n, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[2 * n] = 0;
}

void czk_sha256_hex(const void *p, size_t n, char out[CZK_SHA256_HEX])
{
    uint8_t d[CZK_SHA256_LEN];
    czk_sha256_buf(p, n, d);
    czk_hex(d, CZK_SHA256_LEN, out);
}
