/*
 * amx.h - the AMX tile configuration the bf16 tiles of gemm512.c and
 * conv_amx.c load (include only where CT_HOST_X86 is defined; load only
 * where ct_host_amx() says so).
 */
#ifndef CT_HOST_AMX_H
#define CT_HOST_AMX_H

#include <stdint.h>
#include <string.h>

/* LDTILECFG's 64-byte operand: palette 1, per tile its bytes per row
 * (colsb) and rows */
typedef struct ct_amx_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} ct_amx_config;

/* Palette 1 with tiles 0-7 of 16 rows of 64 bytes (16 floats, 16 bf16
 * pairs), the others unused */
static inline void ct_amx_config_full(ct_amx_config *c)
{
    memset(c, 0, sizeof *c);
    c->palette = 1;
    for (int i = 0; i < 8; i++)
        c->rows[i] = 16, c->colsb[i] = 64;
}

#endif /* CT_HOST_AMX_H */
