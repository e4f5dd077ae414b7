/*
 * half.h - float32 to and from the 16-bit storage formats, on the host:
 * bf16 (a float's upper half) and IEEE fp16, rounding to nearest even as
 * the kernels' ct_st does (cl_kernels/common.cl), so host and device agree
 * bit for bit. NaN stays NaN (quiet); fp16 overflows to infinity from
 * 65520 and keeps its subnormals (multiples of 2^-24 below 2^-14).
 */
#ifndef CT_CORE_HALF_H
#define CT_CORE_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint32_t ct_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float ct_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint16_t ct_bf16_from_f32(float f)
{
    uint32_t u = ct_f32_bits(f);
    if (isnan(f))
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static inline float ct_f32_from_bf16(uint16_t h)
{
    return ct_bits_f32((uint32_t)h << 16);
}

static inline uint16_t ct_fp16_from_f32(float f)
{
    uint32_t u = ct_f32_bits(f), a = u & 0x7fffffffu;
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    if (a > 0x7f800000u) /* NaN, made quiet, its top payload bits kept */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) /* from 65520 (the tie above 65504 rounds to the even infinity) */
        return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x38800000u) { /* normal from 2^-14: 10 fraction bits, rebiased from 127 to 15 */
        uint32_t r = a + 0xfffu + ((a >> 13) & 1u);
        return (uint16_t)(sign | ((r >> 13) - (112u << 10)));
    }
    /* subnormal: the nearest multiple of 2^-24 (x 2^24 is exact; lrintf
     * rounds to nearest even in the default mode) */
    return (uint16_t)(sign | (uint16_t)lrintf(ct_bits_f32(a) * 16777216.0f));
}

static inline float ct_f32_from_fp16(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0)
        return ct_bits_f32(sign | ct_f32_bits(ldexpf((float)m, -24)));
    if (e == 31)
        return ct_bits_f32(sign | 0x7f800000u | (m << 13));
    return ct_bits_f32(sign | ((e + 112u) << 23) | (m << 13));
}

/* x rounded to the 16-bit format f (1 bf16, 2 fp16; else float32) */
static inline float ct_round_to(int f, float x)
{
    return f == 1 ? ct_f32_from_bf16(ct_bf16_from_f32(x))
           : f == 2 ? ct_f32_from_fp16(ct_fp16_from_f32(x))
                    : x;
}

#endif /* CT_CORE_HALF_H */
