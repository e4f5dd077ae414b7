/*
 * sha256.h - SHA-256 (FIPS 180-4), for kernel-cache keys and payload checks.
 */
#ifndef CT_CORE_SHA256_H
#define CT_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct ct_sha256 {
    uint32_t h[8];
    uint64_t length;   /* bytes hashed so far */
    uint8_t block[64];
    size_t fill;       /* bytes waiting in block */
} ct_sha256;

void ct_sha256_init(ct_sha256 *s);
void ct_sha256_update(ct_sha256 *s, const void *data, size_t len);
void ct_sha256_final(ct_sha256 *s, uint8_t digest[32]);

/* Hashes a NUL-terminated string followed by its terminator, so that the
 * fields "ab","c" and "a","bc" hash differently. */
void ct_sha256_field(ct_sha256 *s, const char *str);

/* 64 lowercase hex digits and a NUL. */
void ct_sha256_hex(const uint8_t digest[32], char hex[65]);

#endif /* CT_CORE_SHA256_H */
