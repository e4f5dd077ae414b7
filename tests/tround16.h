/*
 * tround16.h - a float rounded to bf16 or IEEE half by the formats'
 * definitions, in double, for the tests that hold 16-bit products to their
 * bounds (test_gemm_bf16.c, test_conv_bf16.c).
 */
#ifndef CT_TESTS_TROUND16_H
#define CT_TESTS_TROUND16_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* x rounded to nearest even: bf16 (8 significant bits; finite x), or with
 * `half` IEEE half (11 significant bits, subnormal steps of 2^-24 below
 * 2^-14, Inf from 65520 on) */
static inline double tround16(float x, int half)
{
    if (half) {
        double a = fabs((double)x);
        if (a >= 65520.0) /* 65504 and half a step: rounds to Inf */
            return copysign(INFINITY, x);
        int e;
        frexp(a, &e);
        double step = a < 0x1p-14 ? 0x1p-24 : ldexp(1.0, e - 11);
        return copysign(nearbyint(a / step) * step, x);
    }
    uint32_t u;
    memcpy(&u, &x, 4);
    u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    float r;
    memcpy(&r, &u, 4);
    return r;
}

#endif /* CT_TESTS_TROUND16_H */
