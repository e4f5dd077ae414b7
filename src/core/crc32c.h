/*
 * crc32c.h - CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the
 * checksum of TensorBoard event-file records (src/io/tfevents.c).
 */
#ifndef CT_CORE_CRC32C_H
#define CT_CORE_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC-32C over `len` more bytes: start with crc = 0;
 * ct_crc32c(ct_crc32c(0, a, n), b, m) equals the CRC of a then b.
 * ct_crc32c(0, "123456789", 9) == 0xE3069283. */
uint32_t ct_crc32c(uint32_t crc, const void *data, size_t len);

/* TensorFlow's masked form, which record framing stores so that a CRC of
 * data that itself holds CRCs is not degenerate:
 * ((crc >> 15) | (crc << 17)) + 0xa282ead8. */
uint32_t ct_crc32c_mask(uint32_t crc);

#endif /* CT_CORE_CRC32C_H */
