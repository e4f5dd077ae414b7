/*
 * vmath512.h - exp, sigmoid, tanh and erfc on 16 floats at a time for the
 * host ops, the mask of a vector's first lanes, a 16 x 16 transpose and bf16
 * pairs (AVX-512; include only
 * where CT_HOST_X86 is defined, call only where ct_host_avx512() says so).
 *
 * exp: x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts, so r is exact
 * to a few ulp), exp(r) by the classic degree-7 minimax polynomial of the
 * Cephes library's expf, then 2^n by scalef (which gives inf and 0 past
 * the float range); x clamped to [-104, 89] first, where exp already is 0
 * or inf, so huge inputs (a diverging run) still give 0 and inf.
 * tanh: for |x| < 0.625 the odd polynomial of Cephes's tanhf (relative
 * error ~1 ulp near 0, where 1 - 2 / (e^2x + 1) would cancel), else
 * 1 - 2 / (e^2|x| + 1) with the sign put back.
 * sigmoid: 1 / (1 + exp(-x)).
 * Measured against the double functions on [-87, 88] in steps of 1e-5:
 * exp and tanh within 1 ulp, sigmoid within 3 ulp.
 * These round differently from an OpenCL compiler's exp and tanh, so the
 * host LSTM's bits differ from the kernels' by a few ulp per activation.
 */
#ifndef CT_HOST_VMATH512_H
#define CT_HOST_VMATH512_H

#include <immintrin.h>

#include "host/host_work.h"

/* the first min(left, 16) lanes */
static CT_AVX512 inline __mmask16 ct_tail16(size_t left)
{
    return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
}

/* r[0..16) transposed in place: the off-diagonal halves of blocks of
 * b = 8, 4, 2, 1 rows swapped in turn. */
static CT_AVX512 inline void ct_tr16(__m512 *r)
{
    for (int b = 8; b; b >>= 1) {
        int lo[16], hi[16];
        for (int l = 0; l < 16; l++) {
            lo[l] = l & b ? 16 + l - b : l;
            hi[l] = l & b ? 16 + l : l + b;
        }
        __m512i il = _mm512_loadu_si512(lo), ih = _mm512_loadu_si512(hi);
        for (int i = 0; i < 16; i++) {
            if (i & b)
                continue;
            __m512 x = r[i], y = r[i + b];
            r[i] = _mm512_permutex2var_ps(x, il, y);
            r[i + b] = _mm512_permutex2var_ps(x, ih, y);
        }
    }
}

/* lo and hi rounded to bf16 (to nearest even) as pairs, lane l holding
 * lo[l] in its low half and hi[l] in its high half */
static CT_AVX512BF16 inline __m512i ct_v_bf16_pairs(__m512 lo, __m512 hi)
{
    __m512i l16 = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(lo));
    __m512i h16 = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(hi));
    return _mm512_or_si512(l16, _mm512_slli_epi32(h16, 16));
}

/* v rounded to bf16's 8 significant bits, to nearest even (NaNs kept) */
static CT_AVX512 inline __m512 ct_v_round_bf16(__m512 v)
{
    __m512i u = _mm512_castps_si512(v);
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), odd));
    r = _mm512_and_si512(r, _mm512_set1_epi32((int)0xffff0000u));
    return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), _mm512_castsi512_ps(r), v);
}

/* v rounded to IEEE half (F16C's conversion, to nearest even; beyond
 * 65504 Inf) and back */
static CT_AVX512 inline __m512 ct_v_round_fp16(__m512 v)
{
    return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/* v rounded to bf16 (fp16 == 0) or to IEEE half and back */
static CT_AVX512 inline __m512 ct_v_round16(__m512 v, int fp16)
{
    return fp16 ? ct_v_round_fp16(v) : ct_v_round_bf16(v);
}

/* n floats from src rounded (ct_v_round16) into dst; dst == src rounds in
 * place */
static CT_AVX512 inline void ct_round16_copy(float *dst, const float *src, size_t n, int fp16)
{
    for (size_t e = 0; e < n; e += 16) {
        __mmask16 m = ct_tail16(n - e);
        _mm512_mask_storeu_ps(dst + e, m, ct_v_round16(_mm512_maskz_loadu_ps(m, src + e), fp16));
    }
}

static CT_AVX512 inline __m512 ct_v_exp(__m512 x)
{
    const __m512 log2e = _mm512_set1_ps(1.44269504088896341f);
    const __m512 c1 = _mm512_set1_ps(0.693359375f), c2 = _mm512_set1_ps(-2.12194440e-4f);
    /* past [-104, 89] exp is 0 or inf in float, and the reduction below
     * would lose r (n c1 inexact for |n| ~ 2^24 and up, then a garbage p):
     * clamp there (operands in this order keep a NaN: max and min return
     * their second operand when either is NaN) */
    x = _mm512_min_ps(_mm512_set1_ps(89.0f), _mm512_max_ps(_mm512_set1_ps(-104.0f), x));
    __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, log2e), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, c1, x);
    r = _mm512_fnmadd_ps(n, c2, r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    /* n past the exponent range at the clamp's ends: scalef saturates to
     * inf or 0; NaN stays NaN through the arithmetic */
    return _mm512_scalef_ps(p, n);
}

static CT_AVX512 inline __m512 ct_v_sigmoid(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    return _mm512_div_ps(one, _mm512_add_ps(one, ct_v_exp(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

static CT_AVX512 inline __m512 ct_v_tanh(__m512 x)
{
    const __m512 one = _mm512_set1_ps(1.0f), two = _mm512_set1_ps(2.0f);
    __m512 ax = _mm512_abs_ps(x);
    /* large: 1 - 2 / (e^2|x| + 1), sign of x */
    __m512 e = ct_v_exp(_mm512_mul_ps(ax, two));
    __m512 big = _mm512_sub_ps(one, _mm512_div_ps(two, _mm512_add_ps(e, one)));
    big = _mm512_castsi512_ps(_mm512_or_si512(
        _mm512_castps_si512(big),
        _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32((int)0x80000000u))));
    /* small: x + x z P(z), z = x^2 */
    __m512 z = _mm512_mul_ps(x, x);
    __m512 p = _mm512_set1_ps(-5.70498872745e-3f);
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(2.06390887954e-2f));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-5.37397155531e-2f));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(1.33314422036e-1f));
    p = _mm512_fmadd_ps(p, z, _mm512_set1_ps(-3.33332819422e-1f));
    __m512 small = _mm512_fmadd_ps(_mm512_mul_ps(p, z), x, x);
    __mmask16 is_small = _mm512_cmp_ps_mask(ax, _mm512_set1_ps(0.625f), _CMP_LT_OQ);
    return _mm512_mask_blend_ps(is_small, big, small);
}

/* erfc(a) for a >= 0 (NaN stays NaN) to a relative error of about 1.2e-7
 * plus exp's: t exp(-a^2 + P(t)), t = 1 / (1 + a / 2), P a degree-9
 * Chebyshev fit (Numerical Recipes' erfcc). Relative accuracy holds in the
 * tail, where 1 - erf(a) would cancel. */
static CT_AVX512 inline __m512 ct_v_erfc_pos(__m512 a)
{
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(a, _mm512_set1_ps(0.5f), one));
    __m512 p = _mm512_set1_ps(0.17087277f);
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.82215223f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.48851587f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.13520398f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.27886807f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.18628806f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.09678418f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.37409196f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.00002368f));
    p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.26551223f));
    return _mm512_mul_ps(t, ct_v_exp(_mm512_fnmadd_ps(a, a, p)));
}

/* 1 + erf(x / sqrt 2) = erfc(-x / sqrt 2), twice the normal CDF at x,
 * without cancellation for x < 0 */
static CT_AVX512 inline __m512 ct_v_ncdf2(__m512 x)
{
    __m512 e = ct_v_erfc_pos(_mm512_mul_ps(_mm512_abs_ps(x), _mm512_set1_ps(0.70710678118654752f)));
    __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    return _mm512_mask_blend_ps(neg, _mm512_sub_ps(_mm512_set1_ps(2.0f), e), e);
}

#endif /* CT_HOST_VMATH512_H */
