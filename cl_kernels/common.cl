/*
 * common.cl - shared by every program: index helpers and the counter-based
 * RNG (Philox4x32-10, as Salmon et al. 2011 define it). src/core/philox.c
 * computes the same stream on the host, so a seed gives the same numbers on
 * every device and in the host references.
 */

#define CT_PHILOX_M0 0xD2511F53u
#define CT_PHILOX_M1 0xCD9E8D57u
#define CT_PHILOX_W0 0x9E3779B9u
#define CT_PHILOX_W1 0xBB67AE85u

inline uint4 ct_philox4x32(uint4 ctr, uint2 key)
{
    for (int i = 0; i < 10; i++) {
        uint lo0 = CT_PHILOX_M0 * ctr.x, hi0 = mul_hi(CT_PHILOX_M0, ctr.x);
        uint lo1 = CT_PHILOX_M1 * ctr.z, hi1 = mul_hi(CT_PHILOX_M1, ctr.z);
        ctr = (uint4)(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
        key += (uint2)(CT_PHILOX_W0, CT_PHILOX_W1);
    }
    return ctr;
}

/* A uniform float in [0, 1) from 24 random bits. */
inline float ct_u01(uint x)
{
    return (float)(x >> 8) * (1.0f / 16777216.0f);
}

/* a * b + c: fused where the device does fma in hardware (CT_HAS_FMA, from
 * CL_FP_FMA); elsewhere mad(), which may round twice: fma() must be exact,
 * and a device without it emulates it in software (Mesa's llvmpipe ran
 * the register-tile SGEMM at 0.9 GFLOP/s with fma(), 5-7.5 with mad()). */
#if CT_HAS_FMA
#define ct_fma(a, b, c) fma(a, b, c)
#else
#define ct_fma(a, b, c) mad(a, b, c)
#endif

/* x / d for 0 <= x < 2^31 through d's pair md = ct_fastdiv(d) (src/ops/ops.h):
 * a multiply and a shift instead of a division */
inline uint ct_udiv(uint x, uint2 md)
{
    return md.x ? mul_hi(x, md.x) >> md.y : x;
}

/* red[0..wg) summed into red[0] in a fixed order (a halving tree; wg a
 * power of two); every work-item of the group calls it */
inline void ct_tree_sum(__local float *red, uint lid, uint wg)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = wg / 2; s > 0; s >>= 1) {
        if (lid < s)
            red[lid] += red[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* 16-bit matrix operands: the products' program variants define CT_OPS16
 * (1 bf16, 2 fp16; src/cl/runtime.h), and their kernels pass every operand
 * they load through ct_op16 (scalars) or ct_op16_4 / _8 / _16, which
 * round it to the format to nearest even as the CPU class's packing does,
 * in integer and float arithmetic that vectorizes (no half type, no
 * extension): bf16 keeps the float's upper half (NaN kept); fp16 keeps 10
 * fraction bits, below 2^-14 multiples of 2^-24 (its subnormals: x + 0.5
 * - 0.5 rounds there, the float's quantum at 0.5 being 2^-24), from 65520
 * infinity (the tie above 65504 goes to the even infinity), NaN kept. Sums
 * stay float32. Elsewhere they return their operand. */
#ifndef CT_OPS16
#define CT_OPS16 0
#endif
#define CT_CAT2(a, b) a##b
#define CT_CAT(a, b) CT_CAT2(a, b)
#if CT_OPS16
#if CT_OPS16 == 1
#define CT_OP16_BODY(T, U)                                                                        \
    {                                                                                             \
        const U u = CT_CAT(as_, U)(x);                                                            \
        const U r = (u + (U)0x7fffu + ((u >> 16) & (U)1u)) & (U)0xffff0000u;                      \
        return select(CT_CAT(as_, T)(r), x, CT_CAT(as_, U)(isnan(x)));                            \
    }
#else
#define CT_OP16_BODY(T, U)                                                                        \
    {                                                                                             \
        const U u = CT_CAT(as_, U)(x), sign = u & (U)0x80000000u, a = u ^ sign;                   \
        const U nrm = (a + (U)0xfffu + ((a >> 13) & (U)1u)) & (U)0xffffe000u;                     \
        const U sub = CT_CAT(as_, U)((CT_CAT(as_, T)(a) + (T)0.5f) - (T)0.5f);                    \
        U r = select(nrm, sub, a < (U)0x38800000u);       /* below 2^-14 */                      \
        r = select(r, (U)0x7f800000u, a >= (U)0x477ff000u); /* from 65520 */                      \
        return select(CT_CAT(as_, T)(r | sign), x, CT_CAT(as_, U)(isnan(x)));                     \
    }
#endif
/* (for scalars select takes b where c is not 0, for vectors where its
 * lane's top bit is set: comparisons and isnan give 1 and -1 to match) */
inline float ct_op16(float x) CT_OP16_BODY(float, uint)
inline float4 ct_op16_4(float4 x) CT_OP16_BODY(float4, uint4)
inline float8 ct_op16_8(float8 x) CT_OP16_BODY(float8, uint8)
inline float16 ct_op16_16(float16 x) CT_OP16_BODY(float16, uint16)
#else
#define ct_op16(x) (x)
#define ct_op16_4(x) (x)
#define ct_op16_8(x) (x)
#define ct_op16_16(x) (x)
#endif

/* Activation storage: a program variant with CT_ACT16 (1 bf16, 2 fp16;
 * src/cl/runtime.h) stores activations and their gradients in 16 bits,
 * the arguments its kernels type ct_at. ct_ld loads element i as float
 * (exact: every 16-bit value is a float), ct_st rounds v to nearest even
 * and stores it: bf16 keeps the float's upper half (NaN kept quiet), fp16
 * through vstore_half_rte (core OpenCL 1.2: no extension, subnormals,
 * infinity from 65520). Without CT_ACT16 they are plain float accesses,
 * so the float32 program is the same code. */
#ifndef CT_ACT16
#define CT_ACT16 0
#endif
#if CT_ACT16
typedef ushort ct_at;
#if CT_ACT16 == 1
inline float ct_ld(__global const ct_at *p, size_t i)
{
    return as_float((uint)p[i] << 16);
}

inline void ct_st(__global ct_at *p, size_t i, float v)
{
    uint u = as_uint(v);
    uint r = isnan(v) ? u | 0x400000u : u + 0x7fffu + ((u >> 16) & 1u);
    p[i] = (ushort)(r >> 16);
}
#else
inline float ct_ld(__global const ct_at *p, size_t i)
{
    return vload_half(i, (__global const half *)p);
}

inline void ct_st(__global ct_at *p, size_t i, float v)
{
    vstore_half_rte(v, i, (__global half *)p);
}
#endif
#else
typedef float ct_at;
#define ct_ld(p, i) ((p)[i])
#define ct_st(p, i, v) ((p)[i] = (v))
#endif

/* The same for chunk q of 8 elements (elements 8q .. 8q + 7) */
#if CT_ACT16 == 1
inline float8 ct_ld8(__global const ct_at *p, size_t q)
{
    return as_float8(convert_uint8(vload8(q, p)) << 16);
}

inline void ct_st8(__global ct_at *p, size_t q, float8 v)
{
    const uint8 u = as_uint8(v);
    const uint8 r = select(u + 0x7fffu + ((u >> 16) & 1u), u | 0x400000u, isnan(v));
    vstore8(convert_ushort8(r >> 16), q, p);
}
#elif CT_ACT16 == 2
/* element by element: vload_half8 / vstore_half8 need only 2-byte
 * alignment, but pocl 3.1's crash on rows that start between 16-byte
 * lines (a softmax row of K = 517) */
inline float8 ct_ld8(__global const ct_at *p, size_t q)
{
    float t[8];
    for (int e = 0; e < 8; e++)
        t[e] = vload_half(8 * q + e, (__global const half *)p);
    return vload8(0, t);
}

inline void ct_st8(__global ct_at *p, size_t q, float8 v)
{
    float t[8];
    vstore8(v, 0, t);
    for (int e = 0; e < 8; e++)
        vstore_half_rte(t[e], 8 * q + e, (__global half *)p);
}
#else
#define ct_ld8(p, q) vload8(q, p)
#define ct_st8(p, q, v) vstore8(v, q, p)
#endif

/* An own product's operand (gemm.cl, gemm_reg.cl, splitk.cl): float32, or,
 * in a storage variant with the operand's bit set in the launch's s16 (1 A,
 * 2 B, 4 C), the activation storage's 16 bits, so that a dense layer's
 * input, output and gradients stay 16-bit on their way through the
 * product. Indices count the operand's own elements (offsets included);
 * h is the same for every work-item of a launch. */
#if CT_ACT16
inline float ct_gld(__global const float *p, ulong i, int h)
{
    return h ? ct_ld((__global const ct_at *)p, i) : p[i];
}

inline void ct_gst(__global float *p, ulong i, float v, int h)
{
    if (h)
        ct_st((__global ct_at *)p, i, v);
    else
        p[i] = v;
}

#if CT_ACT16 == 1
#define CT_GLD_N(N)                                                                               \
    inline CT_CAT(float, N) CT_CAT(ct_gld, N)(__global const float *p, ulong i, int h)            \
    {                                                                                             \
        if (!h)                                                                                   \
            return CT_CAT(vload, N)(0, p + i);                                                    \
        const CT_CAT(ushort, N) u = CT_CAT(vload, N)(0, (__global const ushort *)p + i);          \
        return CT_CAT(as_float, N)(CT_CAT(convert_uint, N)(u) << 16);                             \
    }
#else
/* element by element, as ct_ld8 (pocl 3.1 and unaligned vload_halfN) */
#define CT_GLD_N(N)                                                                               \
    inline CT_CAT(float, N) CT_CAT(ct_gld, N)(__global const float *p, ulong i, int h)            \
    {                                                                                             \
        if (!h)                                                                                   \
            return CT_CAT(vload, N)(0, p + i);                                                    \
        float t[N];                                                                               \
        for (int e = 0; e < N; e++)                                                               \
            t[e] = vload_half(i + e, (__global const half *)p);                                   \
        return CT_CAT(vload, N)(0, t);                                                            \
    }
#endif
CT_GLD_N(4)
CT_GLD_N(16)
#else
#define ct_gld(p, i, h) ((p)[i])
#define ct_gst(p, i, v, h) ((p)[i] = (v))
#define ct_gld4(p, i, h) vload4(0, (p) + (i))
#define ct_gld16(p, i, h) vload16(0, (p) + (i))
#endif

/* The SGEMM kernels' parameters (gemm.cl's tiles, gemm_reg.cl's register
 * tiles: src/ops/gemm_cl.c launches either with the same arguments) */
#define CT_GEMM_PARAMS                                                                            \
    __global const float *a, ulong a_off, uint lda, __global const float *b, ulong b_off,         \
        uint ldb, __global float *c, ulong c_off, uint ldc, ulong c_stride, uint m, uint n,       \
        uint k, uint kc, float alpha, float beta, __global const float *bias, ulong bias_off,    \
        int has_bias, int act, int zs, uint nb2, ulong as1, ulong as2, ulong bs1, ulong bs2,     \
        ulong cs1, ulong cs2, int s16

/* The logistic function, for the recurrent cells' gates (lstm.cl, gru.cl):
 * the same expression as ct_act_f's sigmoid. */
inline float ct_sigmoid(float x)
{
    return 1.0f / (1.0f + exp(-x));
}

/* Activations, shared by act.cl and the fused bias + activation kernels.
 * `act` follows enum ct_act (src/ops/act.h). */
#define CT_LEAKY_SLOPE 0.01f
#define CT_INV_SQRT2 0.70710678118654752f
#define CT_INV_SQRT2PI 0.39894228040143268f

inline float ct_act_f(int act, float x)
{
    switch (act) {
    case 1: return fmax(x, 0.0f);
    case 2: return x > 0.0f ? x : CT_LEAKY_SLOPE * x;
    case 3: return 1.0f / (1.0f + exp(-x));
    case 4: return tanh(x);
    case 5: return 0.5f * x * (1.0f + erf(x * CT_INV_SQRT2));
    case 6: return x / (1.0f + exp(-x));
    case 7: {
        float t = x + 3.0f;
        t = t > 6.0f ? 6.0f : t > 0.0f ? t : 0.0f;
        return x * t / 6.0f;
    }
    case 8: return x > 6.0f ? 6.0f : x > 0.0f ? x : 0.0f;
    default: return x;
    }
}

/* d act / dx at x (forward output y where cheaper; relu6's from y too,
 * when a fused layer passes y for x: 0 < y < 6 where 0 < x < 6) */
inline float ct_act_df(int act, float x, float y)
{
    switch (act) {
    case 1: return x > 0.0f ? 1.0f : 0.0f;
    case 2: return x > 0.0f ? 1.0f : CT_LEAKY_SLOPE;
    case 3: return y * (1.0f - y);
    case 4: return 1.0f - y * y;
    case 5: return 0.5f * (1.0f + erf(x * CT_INV_SQRT2)) + x * CT_INV_SQRT2PI * exp(-0.5f * x * x);
    case 6: {
        float s = 1.0f / (1.0f + exp(-x));
        return s * (1.0f + x * (1.0f - s));
    }
    case 7: return x < -3.0f ? 0.0f : x <= 3.0f ? x / 3.0f + 0.5f : 1.0f;
    case 8: return x > 0.0f && x < 6.0f ? 1.0f : 0.0f;
    default: return 1.0f;
    }
}
