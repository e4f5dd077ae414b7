/*
 * conv_same512.c - the AVX-512 tiles of the direct host convolution for
 * "same" stride-1 convolutions, forward and input gradient
 * (conv_same512.h).
 *
 * Layout. A 16-lane vector holds 16 consecutive output pixels of one
 * channel in the flattened (oh * w) plane, so it may span rows (an 8x8
 * image is 4 full vectors, not 8 half-empty ones). Output pixel p = r w + col
 * reads, for kernel tap (c, i, j), element p + (i - ph) w + j - pw of input
 * plane c: the same offset for every lane, so one unaligned load serves a
 * vector. Lanes whose row r + i - ph or column col + j - pw falls outside
 * the plane would read a neighbouring row or plane instead; a mask per
 * (vector, tap) zeroes them at the load (zero-masking loads do not fault on
 * the lanes they mask), so the padding costs no copies and no
 * instructions. That needs the output as wide as the input (2 pw = kw - 1,
 * a "same" convolution), which every stride-1 convolution of the zoo is;
 * conv_host.c keeps the AVX2 kernels for the others. Addresses that may
 * point before a buffer are kept as integers until the masked load.
 *
 * Forward (and the input gradient, the same convolution of dy with the
 * flipped, transposed weights): a tile is 8 output channels x up to 3
 * vectors, 24 sums in registers; per tap, 3 masked loads and 8 weight
 * broadcasts (folded into the FMAs) feed 24 FMAs. Weights are packed as
 * (ceil(c_out / 8), c_in, kh, kw, 8), zeros past c_out.
 *
 * bf16 and fp16 operands (the context's precision, gemm512.h's modes):
 * with AVX512_BF16 the image copy is made of bf16 pairs of input channels
 * (a 32-bit lane holds channels 2c and 2c + 1 of one pixel, so the pair
 * planes have the float planes' addresses and masks) and the weights are
 * packed as the same pairs; a tap is then 8 vdpbf16ps per vector, each
 * lane adding both channels' products in float32: half the instructions
 * and half the bytes of the float32 tiles. Without it (and for fp16) the
 * image copy and the packed weights are rounded in place and the float32
 * tiles run on them: the same products, exact in float32, summed in
 * float32 (in another order than the pairs).
 */
#include "host/conv_same512.h"
#include "core/half.h"
#include "host/conv_amx.h"
#include "host/gemm512.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef CT_HOST_X86
#include "host/vmath512.h"

/* One same-width, stride-1 convolution over a batch as the forward pass
 * sees it: (n, ci, h, w) -> (n, co, oh, w). */
typedef struct sconv {
    int n, ci, h, w, co, kh, kw, ph, pw, oh;
    size_t P, hw;      /* oh * w output pixels, h * w input pixels per plane */
    int nvec;          /* ceil(P / 16) */
    int taps;          /* kh * kw */
    size_t x_img, y_img;
    int ncb;           /* 8-channel output blocks */
    int group, items_per_img;    /* blocks per item, items per image */
    const float *x;
    float *y;
    const float *bias;
    const float *wpk;
    const uint16_t *mask; /* (nvec, kh, kw): lanes reading inside the plane (and p < P) */
    /* NULL, or the taps that are not zero, as rows [i0, i1) x columns
     * [j0, j1) (4 ints each): per input channel (forward and weight
     * gradient), or with rng_by_block per 8-channel output block (the
     * input gradient); the packed weights hold those taps only */
    const int *rng;
    int rng_by_block;
    const size_t *wofs;   /* with rng_by_block: each block's packed weights' offset */
    size_t wblock;        /* else: floats of packed weights per block */
    ct_host_work *hw_;
    int mode;             /* CT_GEMM512_*: the operands' precision */
    int cu;               /* channel units the tiles walk: ci, or ceil(ci / 2) bf16 pairs */
} sconv;

static void geometry(sconv *p, int n, int ci, int h, int w, int co, int kh, int kw, int ph, int pw)
{
    p->n = n, p->ci = ci, p->h = h, p->w = w, p->co = co, p->kh = kh, p->kw = kw;
    p->ph = ph, p->pw = pw;
    p->oh = h + 2 * ph - kh + 1;
    p->P = (size_t)p->oh * w;
    p->hw = (size_t)h * w;
    p->nvec = (int)((p->P + 15) / 16);
    p->taps = kh * kw;
    p->x_img = (size_t)ci * p->hw;
    p->y_img = (size_t)co * p->P;
    p->ncb = (co + 7) / 8;
}

static void make_masks(const sconv *p, uint16_t *mask)
{
    for (int v = 0; v < p->nvec; v++)
        for (int i = 0; i < p->kh; i++)
            for (int j = 0; j < p->kw; j++) {
                unsigned m = 0;
                for (int l = 0; l < 16; l++) {
                    size_t px = (size_t)v * 16 + (size_t)l;
                    int row = (int)(px / (size_t)p->w) + i - p->ph;
                    int col = (int)(px % (size_t)p->w) + j - p->pw;
                    if (px < p->P && row >= 0 && row < p->h && col >= 0 && col < p->w)
                        m |= 1u << l;
                }
                *mask++ = (uint16_t)m;
            }
}

/* base + off floats, as an integer: it may lie before the buffer, where
 * only masked-off lanes look */
static inline uintptr_t addr(const float *base, long off)
{
    return (uintptr_t)base + (uintptr_t)(off * (long)sizeof(float));
}

#define LDM(m, a) _mm512_maskz_loadu_ps((m), (const void *)(a))

/* The tap range of input channel c for output block cb (sconv.rng). */
static inline const int *tap_range(const sconv *p, int cb, int c, const int *full)
{
    return !p->rng ? full : p->rng + 4 * (p->rng_by_block ? cb : c);
}

float ct_conv512_weight(const ct_conv512_wsrc *s, int o, int c, int i, int j)
{
    if (!s->flip)
        return o < s->co && c < s->ci ? s->w[((size_t)o * s->ci + c) * s->kh * s->kw + (size_t)i * s->kw + j]
                                      : 0.0f;
    /* tiles' output channel o is the forward's input channel, c its output channel */
    return o < s->ci && c < s->co
               ? s->w[((size_t)c * s->ci + o) * s->kh * s->kw + (size_t)(s->kh - 1 - i) * s->kw + (s->kw - 1 - j)]
               : 0.0f;
}

uint32_t ct_conv512_weight_pair(const ct_conv512_wsrc *s, int o, int c, int i, int j)
{
    return ct_bf16_from_f32(ct_conv512_weight(s, o, c, i, j)) |
           (uint32_t)ct_bf16_from_f32(ct_conv512_weight(s, o, c + 1, i, j)) << 16;
}

/* The tiles' weights as (blocks of 8 output lanes, channel units, the taps
 * in p's ranges, 8), floats or (pair mode) bf16 pairs, rounded in the
 * rounding modes. */
static void pack_weights(const sconv *p, const ct_conv512_wsrc *s, float *out)
{
    int full[4] = { 0, p->kh, 0, p->kw }, pairs = p->mode == CT_GEMM512_BF16_DOT;
    uint32_t *q32 = (uint32_t *)out;
    for (int cb = 0; cb < p->ncb; cb++)
        for (int c = 0; c < p->cu; c++) {
            const int *r = tap_range(p, cb, c, full);
            for (int i = r[0]; i < r[1]; i++)
                for (int j = r[2]; j < r[3]; j++)
                    for (int q = 0; q < 8; q++) {
                        int o = 8 * cb + q;
                        if (pairs) {
                            *q32++ = ct_conv512_weight_pair(s, o, 2 * c, i, j);
                            continue;
                        }
                        *out++ = ct_conv512_weight(s, o, c, i, j);
                    }
        }
}

/* The pair mode's image copy: planes c of x (ci, hw) as ceil(ci / 2) pair
 * planes, lane p of pair plane c holding channels 2c (low half) and
 * 2c + 1 (zero past ci) of pixel p, rounded to nearest even. */
static CT_AVX512BF16 void pair_image(const float *x, int ci, size_t hw, uint32_t *d)
{
    for (int c = 0; c < ci; c += 2, d += hw) {
        const float *lo = x + (size_t)c * hw, *hi = c + 1 < ci ? lo + hw : NULL;
        for (size_t e = 0; e < hw; e += 16) {
            __mmask16 m = ct_tail16(hw - e < 16 ? hw - e : 16);
            __m512 a = _mm512_maskz_loadu_ps(m, lo + e);
            __m512 b = hi ? _mm512_maskz_loadu_ps(m, hi + e) : _mm512_setzero_ps();
            _mm512_mask_storeu_epi32(d + e, m, ct_v_bf16_pairs(a, b));
        }
    }
}

static CT_AVX512 inline __mmask16 tail_mask(const sconv *p, int v)
{
    return ct_tail16(p->P - (size_t)v * 16);
}

/* One output channel's part of a tap: its weight times the tile's vectors. */
#define T_CH(Q)                                                                                   \
    do {                                                                                          \
        __m512 wq = _mm512_set1_ps(wk[Q]);                                                        \
        a##Q##0 = _mm512_fmadd_ps(wq, x0, a##Q##0);                                               \
        if (nv > 1)                                                                               \
            a##Q##1 = _mm512_fmadd_ps(wq, x1, a##Q##1);                                           \
        if (nv > 2)                                                                               \
            a##Q##2 = _mm512_fmadd_ps(wq, x2, a##Q##2);                                           \
    } while (0)

#define T_INIT(Q) __m512 a##Q##0 = _mm512_set1_ps(b8[Q]), a##Q##1 = a##Q##0, a##Q##2 = a##Q##0

#define T_STORE(Q)                                                                                \
    do {                                                                                          \
        if (Q < cvalid) {                                                                         \
            float *yq = yc + (size_t)(Q) * p->P + (size_t)v0 * 16;                                \
            _mm512_mask_storeu_ps(yq, t0, a##Q##0);                                               \
            if (nv > 1)                                                                           \
                _mm512_mask_storeu_ps(yq + 16, t1, a##Q##1);                                      \
            if (nv > 2)                                                                           \
                _mm512_mask_storeu_ps(yq + 32, t2, a##Q##2);                                      \
        }                                                                                         \
    } while (0)

/* The pair mode's part of a tap for one output channel: a vdpbf16ps per
 * vector against the broadcast weight pair (each lane adds both channels'
 * products in float32). */
#define B_CH(Q)                                                                                   \
    do {                                                                                          \
        __m512bh wq = (__m512bh)_mm512_set1_epi32((int)wk[Q]);                                     \
        a##Q##0 = _mm512_dpbf16_ps(a##Q##0, (__m512bh)x0, wq);                                    \
        if (nv > 1)                                                                               \
            a##Q##1 = _mm512_dpbf16_ps(a##Q##1, (__m512bh)x1, wq);                                \
        if (nv > 2)                                                                               \
            a##Q##2 = _mm512_dpbf16_ps(a##Q##2, (__m512bh)x2, wq);                                \
    } while (0)

#define LDM32(m, a) _mm512_maskz_loadu_epi32((m), (const void *)(a))

/* 8 output channels (cvalid of them stored) x NV vectors from v0, kernel
 * width KW (0: p->kw; R: p->kw and p's tap ranges). ximg: the image's
 * input; wk: the block's (cb's) packed weights; yc: its first output plane.
 * The float32 tiles (ATTR CT_AVX512, WT float, VT __m512, LD LDM, CH T_CH)
 * and the pair tiles (CT_AVX512BF16, uint32_t pairs, __m512i, LDM32, B_CH)
 * walk the same loops: a 32-bit lane is a float or a pair of bf16
 * channels of one pixel, p->cu channel units. */
#define DEF_TILE_GEN(NAME, NV, KW, RANGED, ATTR, WT, VT, LD, CH)                                  \
    static ATTR void NAME(const sconv *p, const float *ximg, int v0, const float *wk_, float *yc, \
                          int cvalid, const float *b8, int cb)                                    \
    {                                                                                             \
        const int ranged = RANGED;                                                                \
        const int kw = KW ? KW : p->kw, nv = NV;                                                  \
        const WT *wk = (const WT *)(const void *)wk_;                                             \
        /* named sums, not arrays: GCC keeps arrays of vectors in memory */                       \
        T_INIT(0);                                                                                \
        T_INIT(1);                                                                                \
        T_INIT(2);                                                                                \
        T_INIT(3);                                                                                \
        T_INIT(4);                                                                                \
        T_INIT(5);                                                                                \
        T_INIT(6);                                                                                \
        T_INIT(7);                                                                                \
        const uint16_t *m0 = p->mask + (size_t)v0 * p->taps;                                      \
        const uint16_t *m1 = nv > 1 ? m0 + p->taps : m0, *m2 = nv > 2 ? m0 + 2 * p->taps : m0;    \
        uintptr_t xb = addr(ximg, (long)v0 * 16 - (long)p->ph * p->w - p->pw);                    \
        for (int c = 0; c < p->cu; c++) {                                                         \
            int i0 = 0, i1 = p->kh, j0 = 0, j1 = kw;                                              \
            if (ranged) {                                                                         \
                const int *r = tap_range(p, cb, c, NULL);                                         \
                i0 = r[0], i1 = r[1], j0 = r[2], j1 = r[3];                                       \
            }                                                                                     \
            for (int i = i0; i < i1; i++) {                                                       \
                uintptr_t xr = xb + ((size_t)c * p->hw + (size_t)i * p->w) * sizeof(float);       \
                int t = i * kw;                                                                   \
                for (int j = j0; j < j1; j++, wk += 8) {                                          \
                    uintptr_t xa = xr + (size_t)j * sizeof(float);                                \
                    VT x0 = LD(m0[t + j], xa), x1 = x0, x2 = x0;                                  \
                    if (nv > 1)                                                                   \
                        x1 = LD(m1[t + j], xa + 64);                                              \
                    if (nv > 2)                                                                   \
                        x2 = LD(m2[t + j], xa + 128);                                             \
                    CH(0);                                                                        \
                    CH(1);                                                                        \
                    CH(2);                                                                        \
                    CH(3);                                                                        \
                    CH(4);                                                                        \
                    CH(5);                                                                        \
                    CH(6);                                                                        \
                    CH(7);                                                                        \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        __mmask16 t0 = tail_mask(p, v0), t1 = nv > 1 ? tail_mask(p, v0 + 1) : t0;                 \
        __mmask16 t2 = nv > 2 ? tail_mask(p, v0 + 2) : t0;                                        \
        (void)t1, (void)t2;                                                                       \
        T_STORE(0);                                                                               \
        T_STORE(1);                                                                               \
        T_STORE(2);                                                                               \
        T_STORE(3);                                                                               \
        T_STORE(4);                                                                               \
        T_STORE(5);                                                                               \
        T_STORE(6);                                                                               \
        T_STORE(7);                                                                               \
    }

#define DEF_TILE_AS(NAME, NV, KW, RANGED) DEF_TILE_GEN(NAME, NV, KW, RANGED, CT_AVX512, float, __m512, LDM, T_CH)
#define DEF_BTILE_AS(NAME, NV, KW, RANGED)                                                        \
    DEF_TILE_GEN(NAME, NV, KW, RANGED, CT_AVX512BF16, uint32_t, __m512i, LDM32, B_CH)
#define DEF_TILE(NV, KW) DEF_TILE_AS(tile_##NV##_##KW, NV, KW, 0)
#define DEF_BTILE(NV, KW) DEF_BTILE_AS(btile_##NV##_##KW, NV, KW, 0)

DEF_TILE(1, 0)
DEF_TILE(2, 0)
DEF_TILE(3, 0)
DEF_TILE(1, 1)
DEF_TILE(2, 1)
DEF_TILE(3, 1)
DEF_TILE(1, 3)
DEF_TILE(2, 3)
DEF_TILE(3, 3)
DEF_TILE(1, 5)
DEF_TILE(2, 5)
DEF_TILE(3, 5)
DEF_TILE_AS(tile_1_r, 1, 0, 1)
DEF_TILE_AS(tile_2_r, 2, 0, 1)
DEF_TILE_AS(tile_3_r, 3, 0, 1)
DEF_BTILE(1, 0)
DEF_BTILE(2, 0)
DEF_BTILE(3, 0)
DEF_BTILE(1, 1)
DEF_BTILE(2, 1)
DEF_BTILE(3, 1)
DEF_BTILE(1, 3)
DEF_BTILE(2, 3)
DEF_BTILE(3, 3)
DEF_BTILE(1, 5)
DEF_BTILE(2, 5)
DEF_BTILE(3, 5)
DEF_BTILE_AS(btile_1_r, 1, 0, 1)
DEF_BTILE_AS(btile_2_r, 2, 0, 1)
DEF_BTILE_AS(btile_3_r, 3, 0, 1)

typedef void (*tile_fn)(const sconv *, const float *, int, const float *, float *, int,
                        const float *, int);

static tile_fn pick_tile(const sconv *p, int nv)
{
    static const tile_fn t[2][5][3] = {
        {
            { tile_1_0, tile_2_0, tile_3_0 },
            { tile_1_1, tile_2_1, tile_3_1 },
            { tile_1_3, tile_2_3, tile_3_3 },
            { tile_1_5, tile_2_5, tile_3_5 },
            { tile_1_r, tile_2_r, tile_3_r },
        },
        {
            { btile_1_0, btile_2_0, btile_3_0 },
            { btile_1_1, btile_2_1, btile_3_1 },
            { btile_1_3, btile_2_3, btile_3_3 },
            { btile_1_5, btile_2_5, btile_3_5 },
            { btile_1_r, btile_2_r, btile_3_r },
        },
    };
    int kw = p->kw, k = p->rng ? 4 : kw == 1 ? 1 : kw == 3 ? 2 : kw == 5 ? 3 : 0;
    return t[p->mode == CT_GEMM512_BF16_DOT][k][nv - 1];
}

/* Channel blocks [cb0, cb1) of image n: its vectors in tiles of 3, the
 * last ones split 2 + 2 rather than 3 + 1. */
static void forward_item(void *arg, size_t item, int thread)
{
    const sconv *p = arg;
    int n = (int)(item / (size_t)p->items_per_img), g = (int)(item % (size_t)p->items_per_img);
    int cb0 = g * p->group, cb1 = cb0 + p->group < p->ncb ? cb0 + p->group : p->ncb;
    /* a copy of the image in the thread's scratch: the tiles read 3 rows of
     * every input plane at once, tens of streams that the hardware
     * prefetchers do not follow in a buffer fresh from memory, while the
     * copy streams it once (ResNet-50's 56x56 convolutions: 1.4x faster) */
    const float *ximg = p->hw_->scratch[thread];
    if (p->hw_->cached[thread] != n) {
        const float *xn = p->x + (size_t)n * p->x_img;
        if (p->mode == CT_GEMM512_BF16_DOT) {
            pair_image(xn, p->ci, p->hw, (uint32_t *)(void *)p->hw_->scratch[thread]);
        } else if (p->mode == CT_GEMM512_F32) {
            memcpy(p->hw_->scratch[thread], xn, p->x_img * sizeof(float));
        } else {
            ct_round16_copy(p->hw_->scratch[thread], xn, p->x_img, p->mode == CT_GEMM512_FP16_ROUND);
        }
        p->hw_->cached[thread] = n;
    }
    float *yimg = p->y + (size_t)n * p->y_img;
    for (int cb = cb0; cb < cb1; cb++) {
        const float *wk = p->wpk + (p->wofs ? p->wofs[cb] : (size_t)cb * p->wblock);
        int cvalid = p->co - 8 * cb < 8 ? p->co - 8 * cb : 8;
        float b8[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
        for (int q = 0; q < cvalid && p->bias; q++)
            b8[q] = p->bias[8 * cb + q];
        float *yc = yimg + (size_t)8 * cb * p->P;
        for (int v0 = 0; v0 < p->nvec;) {
            int left = p->nvec - v0, nv = left == 4 ? 2 : left < 3 ? left : 3;
            pick_tile(p, nv)(p, ximg, v0, wk, yc, cvalid, b8, cb);
            v0 += nv;
        }
    }
}

static void set_items(sconv *p, int threads)
{
    p->group = p->n >= 2 * threads ? p->ncb : 1;
    p->items_per_img = (p->ncb + p->group - 1) / p->group;
}

static int masks_for(ct_context *ctx, const sconv *p, uint16_t **m)
{
    *m = malloc((size_t)p->nvec * p->taps * sizeof **m);
    if (!*m)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: out of host memory");
    make_masks(p, *m);
    return CT_OK;
}

/* The operands' precision (ctx's, gemm512.h's modes) and the channel
 * units the tiles walk */
static void set_mode(sconv *p, const ct_context *ctx)
{
    p->mode = ct_gemm512_vec_mode(ctx);
    p->cu = p->mode == CT_GEMM512_BF16_DOT ? (p->ci + 1) / 2 : p->ci;
}

/* Floats of scratch per thread: the image copy (pairs: the odd channel
 * count's last pair plane) and the masked loads' slack */
static size_t scratch_floats(const sconv *p)
{
    return (size_t)p->cu * p->hw + p->hw + 16;
}

/* Floats of packed weights per output block of f, whose ranges (if any)
 * are per channel unit. */
static size_t forward_wblock(const sconv *f)
{
    if (!f->rng)
        return (size_t)f->cu * f->taps * 8;
    size_t t = 0;
    for (int c = 0; c < f->cu; c++)
        t += (size_t)(f->rng[4 * c + 1] - f->rng[4 * c]) * (size_t)(f->rng[4 * c + 3] - f->rng[4 * c + 2]);
    return t * 8;
}

/* The pair mode's ranges: per pair, the union of its channels' (rc's) */
static int *pair_ranges(const sconv *p, const int *rc)
{
    int *r = malloc((size_t)p->cu * 4 * sizeof *r);
    for (int c = 0; r && c < p->cu; c++) {
        const int *a = rc + 8 * c, *b = 2 * c + 1 < p->ci ? a + 4 : a;
        int ea = a[0] >= a[1] || a[2] >= a[3], eb = b[0] >= b[1] || b[2] >= b[3];
        if (ea)
            a = b;
        if (eb)
            b = a;
        r[4 * c] = a[0] < b[0] ? a[0] : b[0], r[4 * c + 1] = a[1] > b[1] ? a[1] : b[1];
        r[4 * c + 2] = a[2] < b[2] ? a[2] : b[2], r[4 * c + 3] = a[3] > b[3] ? a[3] : b[3];
    }
    return r;
}

/* y = x * w + b; rc: NULL, or the taps of each input channel that are not
 * zero (sconv.rng) */
int ct_conv512_same_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                            const float *w, const float *b, const int *rc)
{
    if (!rc && ct_gemm512_mode(ctx) == CT_GEMM512_BF16_AMX && ct_conv_amx_same_takes(d, 0))
        return ct_conv_amx_same(ctx, d, 0, y, x, w, b);
    sconv f;
    memset(&f, 0, sizeof f);
    geometry(&f, d->n, d->c_in, d->h, d->w, d->c_out, d->kh, d->kw, d->pad_h, d->pad_w);
    set_mode(&f, ctx);
    int *prng = NULL;
    if (rc && f.mode == CT_GEMM512_BF16_DOT && !(prng = pair_ranges(&f, rc)))
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: out of host memory");
    f.rng = prng ? prng : rc;
    f.wblock = forward_wblock(&f);
    ct_host_work *hw;
    uint16_t *fm = NULL;
    int st = ct_host_work_get(ctx, scratch_floats(&f), (size_t)f.ncb * f.wblock, 1, &hw);
    if (!st && !(st = masks_for(ctx, &f, &fm))) {
        ct_conv512_wsrc ws = { w, d->c_out, d->c_in, d->kh, d->kw, 0 };
        pack_weights(&f, &ws, hw->wpack);
        if (f.mode == CT_GEMM512_BF16_ROUND || f.mode == CT_GEMM512_FP16_ROUND)
            ct_round16_copy(hw->wpack, hw->wpack, (size_t)f.ncb * f.wblock, f.mode == CT_GEMM512_FP16_ROUND);
        f.x = x, f.y = y, f.bias = b, f.wpk = hw->wpack, f.mask = fm, f.hw_ = hw;
        set_items(&f, hw->threads);
        ct_pool_run(hw->pool, (size_t)f.n * f.items_per_img, forward_item, &f);
    }
    free(fm);
    free(prng);
    return st;
}

/* The input gradient's tap ranges per block of its output channels (the
 * forward's input channels): the union of the block's channels' flipped
 * ranges. rng: (g->ncb, 4); wofs: (g->ncb); returns the packed floats. */
static size_t backward_ranges(const sconv *g, const int *rc, int *rng, size_t *wofs)
{
    size_t off = 0;
    for (int cb = 0; cb < g->ncb; cb++) {
        int *r = rng + 4 * cb;
        r[0] = g->kh, r[1] = 0, r[2] = g->kw, r[3] = 0;
        for (int c = 8 * cb; c < 8 * cb + 8 && c < g->co; c++) {
            const int *f = rc + 4 * c;
            int i0 = g->kh - f[1], i1 = g->kh - f[0], j0 = g->kw - f[3], j1 = g->kw - f[2];
            r[0] = i0 < r[0] ? i0 : r[0], r[1] = i1 > r[1] ? i1 : r[1];
            r[2] = j0 < r[2] ? j0 : r[2], r[3] = j1 > r[3] ? j1 : r[3];
        }
        wofs[cb] = off;
        off += (size_t)g->cu * (size_t)(r[1] - r[0]) * (size_t)(r[3] - r[2]) * 8;
    }
    return off;
}

/* dx = the input gradient, the forward tiles run over dy with the flipped,
 * transposed weights; rc as ct_conv512_same_forward's */
int ct_conv512_same_dx(ct_context *ctx, const ct_conv2d_desc *d, float *dx, const float *dy,
                       const float *w, const int *rc)
{
    if (!rc && ct_gemm512_mode(ctx) == CT_GEMM512_BF16_AMX && ct_conv_amx_same_takes(d, 1))
        return ct_conv_amx_same(ctx, d, 1, dx, dy, w, NULL);
    sconv f, g;
    memset(&f, 0, sizeof f);
    memset(&g, 0, sizeof g);
    geometry(&f, d->n, d->c_in, d->h, d->w, d->c_out, d->kh, d->kw, d->pad_h, d->pad_w);
    geometry(&g, d->n, d->c_out, f.oh, d->w, d->c_in, d->kh, d->kw, d->kh - 1 - d->pad_h,
             d->kw - 1 - d->pad_w);
    set_mode(&g, ctx);
    int *grng = NULL;
    size_t *gofs = NULL, npack = (size_t)g.ncb * 8 * g.cu * g.taps;
    if (rc) {
        grng = malloc((size_t)g.ncb * 4 * sizeof *grng);
        gofs = malloc((size_t)g.ncb * sizeof *gofs);
        if (!grng || !gofs) {
            free(grng);
            free(gofs);
            return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: out of host memory");
        }
        npack = backward_ranges(&g, rc, grng, gofs);
        g.rng = grng, g.rng_by_block = 1, g.wofs = gofs;
    }
    g.wblock = (size_t)g.cu * g.taps * 8;
    ct_host_work *hw;
    uint16_t *gm = NULL;
    int st = ct_host_work_get(ctx, scratch_floats(&g), npack, 1, &hw);
    if (!st && !(st = masks_for(ctx, &g, &gm))) {
        ct_conv512_wsrc ws = { w, d->c_out, d->c_in, d->kh, d->kw, 1 };
        pack_weights(&g, &ws, hw->wpack);
        if (g.mode == CT_GEMM512_BF16_ROUND || g.mode == CT_GEMM512_FP16_ROUND)
            ct_round16_copy(hw->wpack, hw->wpack, npack, g.mode == CT_GEMM512_FP16_ROUND);
        g.x = dy, g.y = dx, g.wpk = hw->wpack, g.mask = gm, g.hw_ = hw;
        set_items(&g, hw->threads);
        ct_pool_run(hw->pool, (size_t)g.n * g.items_per_img, forward_item, &g);
    }
    free(gm);
    free(grng);
    free(gofs);
    return st;
}

#else /* not x86: never called (ct_host_avx512() is 0) */

int ct_conv512_same_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                            const float *w, const float *b, const int *rc)
{
    (void)d, (void)y, (void)x, (void)w, (void)b, (void)rc;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d host path: AVX-512 not built for this CPU");
}

int ct_conv512_same_dx(ct_context *ctx, const ct_conv2d_desc *d, float *dx, const float *dy,
                       const float *w, const int *rc)
{
    (void)d, (void)dx, (void)dy, (void)w, (void)rc;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d host path: AVX-512 not built for this CPU");
}

#endif
