/*
 * conv_host512.c - the AVX-512 kernels of the direct host convolution
 * (conv_host512.h).
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
 * The weight gradient is conv_dw512.c's (broadcast form, any stride).
 *
 * 1x1 convolutions on planes of fewer than 256 pixels (ResNet-50's 7x7 and
 * 14x14 ones) run instead as three GEMMs over the whole batch on
 * channel-major copies of x and dy (gemm512.h), whose tiles stay full.
 */
#include "ops/conv_host512.h"
#include "ops/conv_dw512.h"
#include "ops/gemm512.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef CT_HOST_X86
#include "ops/vmath512.h"
#endif

/* Output planes (pixels) below which a 1x1 convolution runs as GEMMs on
 * channel-major copies (below). ResNet-50, `bench --profile`, forward +
 * backward ms: layer4's 7x7 1x1s 20-35 -> 13-15 each and the stride-2
 * downsample 56-64 -> 27; layer3's 14x14 ones about even or a little
 * faster (layer4_0_conv1 38 -> 27-30); layer2's 28x28 ones slower (25 ->
 * 38), so 14x14 is the largest plane that takes this form. */
#define GEMM_1X1_PLANE 256

static int strided_1x1(const ct_conv2d_desc *d)
{
    return d->kh == 1 && d->kw == 1 && d->pad_h == 0 && d->pad_w == 0 && d->dil_h == 1 &&
           d->dil_w == 1 && (d->stride_h != 1 || d->stride_w != 1);
}

/* A strided convolution other than an unpadded 1x1 one: it runs in its
 * phase form (below) where that pays; the phase kernel must fit the tiles
 * (<= 16 taps a side) and its planes stay well inside int range. */
static int phased(const ct_conv2d_desc *d)
{
    if ((d->stride_h == 1 && d->stride_w == 1) || strided_1x1(d) || d->dil_h != 1 || d->dil_w != 1)
        return 0;
    int oh, ow;
    if (ct_conv2d_out_shape(NULL, d, &oh, &ow))
        return 0;
    int kqh = (d->kh + d->stride_h - 1) / d->stride_h, kqw = (d->kw + d->stride_w - 1) / d->stride_w;
    size_t hq = (size_t)oh + (size_t)kqh - 1, wq = (size_t)ow + (size_t)kqw - 1;
    size_t cq = (size_t)d->c_in * d->stride_h * d->stride_w;
    size_t c = cq > (size_t)d->c_out ? cq : (size_t)d->c_out;
    /* Where it pays, measured: the forward and the input gradient skip the
     * zero taps, and the weight gradient reads x itself (conv_dw512.c), so
     * the form costs its copies; it wins for large kernels (AlexNet's 11x11
     * at 4, ResNet's 7x7 at 2) and for inputs of up to 256 channels.
     * ResNet-50's 3x3s at stride 2, `bench --profile` forward / backward
     * ms, im2col against phased, two runs: 128 channels 27-29 / 48-55
     * against 18 / 30, 256 channels 22-24 / 38-39 against 16 / 28, but 512
     * channels at 7x7 out 18-22 / 34-40 against 22 / 41-42. */
    long taps = (long)d->kh * d->kw, qtaps = (long)d->stride_h * d->stride_w * kqh * kqw;
    return kqh <= 16 && kqw <= 16 && c * hq * wq < ((size_t)1 << 30) &&
           (5 * qtaps <= 7 * taps || d->c_in <= 256);
}

int ct_conv512_applies(const ct_conv2d_desc *d)
{
    if (strided_1x1(d) || phased(d))
        return 1;
    return d->stride_h == 1 && d->stride_w == 1 && d->dil_h == 1 && d->dil_w == 1 &&
           2 * d->pad_w == d->kw - 1 && d->pad_h < d->kh && d->kw <= 16 && d->kh <= 16;
}

#ifdef CT_HOST_X86

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

/* forward weights (co, ci, kh, kw) -> (ceil(co / 8), ci, kh, kw, 8), the
 * taps in p's ranges only */
static void pack_forward(const sconv *p, const float *w, int co, int ci, int kh, int kw, float *out)
{
    int ncb = (co + 7) / 8, taps = kh * kw, full[4] = { 0, kh, 0, kw };
    for (int cb = 0; cb < ncb; cb++)
        for (int c = 0; c < ci; c++) {
            const int *r = tap_range(p, cb, c, full);
            for (int i = r[0]; i < r[1]; i++)
                for (int j = r[2]; j < r[3]; j++)
                    for (int q = 0; q < 8; q++) {
                        int o = 8 * cb + q;
                        *out++ = o < co ? w[((size_t)o * ci + c) * taps + (size_t)i * kw + j] : 0.0f;
                    }
        }
}

/* the input gradient's: w'(ci, co, i, j) = w(co, ci, kh-1-i, kw-1-j), as
 * (ceil(ci / 8), co, kh, kw, 8), the taps in g's ranges only */
static void pack_backward(const sconv *g, const float *w, int co, int ci, int kh, int kw, float *out)
{
    int ncb = (ci + 7) / 8, taps = kh * kw, full[4] = { 0, kh, 0, kw };
    for (int cb = 0; cb < ncb; cb++)
        for (int o = 0; o < co; o++) {
            const int *r = tap_range(g, cb, o, full);
            for (int i = r[0]; i < r[1]; i++)
                for (int j = r[2]; j < r[3]; j++)
                    for (int q = 0; q < 8; q++) {
                        int c = 8 * cb + q;
                        *out++ = c < ci ? w[((size_t)o * ci + c) * taps +
                                            (size_t)(kh - 1 - i) * kw + (kw - 1 - j)]
                                        : 0.0f;
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

/* 8 output channels (cvalid of them stored) x NV vectors from v0, kernel
 * width KW (0: p->kw; R: p->kw and p's tap ranges). ximg: the image's
 * input; wk: the block's (cb's) packed weights; yc: its first output plane. */
#define DEF_TILE_AS(NAME, NV, KW, RANGED)                                                         \
    static CT_AVX512 void NAME(const sconv *p, const float *ximg, int v0, const float *wk,        \
                               float *yc, int cvalid, const float *b8, int cb)                    \
    {                                                                                             \
        const int ranged = RANGED;                                                                \
        const int kw = KW ? KW : p->kw, nv = NV;                                                  \
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
        for (int c = 0; c < p->ci; c++) {                                                         \
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
                    __m512 x0 = LDM(m0[t + j], xa), x1 = x0, x2 = x0;                             \
                    if (nv > 1)                                                                   \
                        x1 = LDM(m1[t + j], xa + 64);                                             \
                    if (nv > 2)                                                                   \
                        x2 = LDM(m2[t + j], xa + 128);                                            \
                    T_CH(0);                                                                      \
                    T_CH(1);                                                                      \
                    T_CH(2);                                                                      \
                    T_CH(3);                                                                      \
                    T_CH(4);                                                                      \
                    T_CH(5);                                                                      \
                    T_CH(6);                                                                      \
                    T_CH(7);                                                                      \
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

#define DEF_TILE(NV, KW) DEF_TILE_AS(tile_##NV##_##KW, NV, KW, 0)

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

typedef void (*tile_fn)(const sconv *, const float *, int, const float *, float *, int,
                        const float *, int);

static tile_fn pick_tile(const sconv *p, int nv)
{
    static const tile_fn t[5][3] = {
        { tile_1_0, tile_2_0, tile_3_0 },
        { tile_1_1, tile_2_1, tile_3_1 },
        { tile_1_3, tile_2_3, tile_3_3 },
        { tile_1_5, tile_2_5, tile_3_5 },
        { tile_1_r, tile_2_r, tile_3_r },
    };
    int kw = p->kw, k = p->rng ? 4 : kw == 1 ? 1 : kw == 3 ? 2 : kw == 5 ? 3 : 0;
    return t[k][nv - 1];
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
        memcpy(p->hw_->scratch[thread], p->x + (size_t)n * p->x_img, p->x_img * sizeof(float));
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

/* Floats of packed weights per output block of f, whose ranges (if any)
 * are per input channel. */
static size_t forward_wblock(const sconv *f)
{
    if (!f->rng)
        return (size_t)f->ci * f->taps * 8;
    size_t t = 0;
    for (int c = 0; c < f->ci; c++)
        t += (size_t)(f->rng[4 * c + 1] - f->rng[4 * c]) * (size_t)(f->rng[4 * c + 3] - f->rng[4 * c + 2]);
    return t * 8;
}

/* y = x * w + b; rc: NULL, or the taps of each input channel that are not
 * zero (sconv.rng) */
static int same_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                        const float *w, const float *b, const int *rc)
{
    sconv f;
    memset(&f, 0, sizeof f);
    geometry(&f, d->n, d->c_in, d->h, d->w, d->c_out, d->kh, d->kw, d->pad_h, d->pad_w);
    f.rng = rc;
    f.wblock = forward_wblock(&f);
    ct_host_work *hw;
    int st = ct_host_work_get(ctx, f.x_img + 16, (size_t)f.ncb * f.wblock, 1, &hw);
    uint16_t *fm = NULL;
    if (st || (st = masks_for(ctx, &f, &fm)))
        return st;
    pack_forward(&f, w, d->c_out, d->c_in, d->kh, d->kw, hw->wpack);
    f.x = x, f.y = y, f.bias = b, f.wpk = hw->wpack, f.mask = fm, f.hw_ = hw;
    set_items(&f, hw->threads);
    ct_pool_run(hw->pool, (size_t)f.n * f.items_per_img, forward_item, &f);
    free(fm);
    return CT_OK;
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
        off += (size_t)g->ci * (size_t)(r[1] - r[0]) * (size_t)(r[3] - r[2]) * 8;
    }
    return off;
}

/* dx = the input gradient, the forward tiles run over dy with the flipped,
 * transposed weights; rc as same_forward's */
static int same_dx(ct_context *ctx, const ct_conv2d_desc *d, float *dx, const float *dy,
                   const float *w, const int *rc)
{
    sconv f, g;
    memset(&f, 0, sizeof f);
    memset(&g, 0, sizeof g);
    geometry(&f, d->n, d->c_in, d->h, d->w, d->c_out, d->kh, d->kw, d->pad_h, d->pad_w);
    geometry(&g, d->n, d->c_out, f.oh, d->w, d->c_in, d->kh, d->kw, d->kh - 1 - d->pad_h,
             d->kw - 1 - d->pad_w);
    int *grng = NULL;
    size_t *gofs = NULL, npack = (size_t)g.ncb * 8 * g.ci * g.taps;
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
    g.wblock = (size_t)g.ci * g.taps * 8;
    ct_host_work *hw;
    uint16_t *gm = NULL;
    int st = ct_host_work_get(ctx, g.x_img + 16, npack, 1, &hw);
    if (!st && !(st = masks_for(ctx, &g, &gm))) {
        pack_backward(&g, w, d->c_out, d->c_in, d->kh, d->kw, hw->wpack);
        g.x = dy, g.y = dx, g.wpk = hw->wpack, g.mask = gm, g.hw_ = hw;
        set_items(&g, hw->threads);
        ct_pool_run(hw->pool, (size_t)g.n * g.items_per_img, forward_item, &g);
    }
    free(gm);
    free(grng);
    free(gofs);
    return st;
}

/* A strided 1x1 convolution is the 1x1 convolution of the subsampled
 * input: (n, c, h, w) -> (n, c, oh, ow) at the strides, copied into a
 * shared buffer by image; its input gradient is the subsampled one
 * scattered back, zeros elsewhere. */
typedef struct subsample {
    const ct_conv2d_desc *d;
    int oh, ow;
    const float *src;
    float *dst;
    int scatter; /* dst (n, c, h, w) <- src (n, c, oh, ow) */
} subsample;

static void subsample_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const subsample *s = arg;
    const ct_conv2d_desc *d = s->d;
    size_t big = (size_t)d->c_in * d->h * d->w, small = (size_t)d->c_in * s->oh * s->ow;
    if (s->scatter) {
        float *dst = s->dst + item * big;
        const float *src = s->src + item * small;
        memset(dst, 0, big * sizeof(float));
        for (int c = 0; c < d->c_in; c++)
            for (int r = 0; r < s->oh; r++)
                for (int k = 0; k < s->ow; k++)
                    dst[((size_t)c * d->h + (size_t)r * d->stride_h) * d->w +
                        (size_t)k * d->stride_w] = *src++;
    } else {
        const float *src = s->src + item * big;
        float *dst = s->dst + item * small;
        for (int c = 0; c < d->c_in; c++)
            for (int r = 0; r < s->oh; r++)
                for (int k = 0; k < s->ow; k++)
                    *dst++ = src[((size_t)c * d->h + (size_t)r * d->stride_h) * d->w +
                                 (size_t)k * d->stride_w];
    }
}

static int strided_setup(ct_context *ctx, const ct_conv2d_desc *d, ct_conv2d_desc *d1,
                         ct_host_work **hw, subsample *s)
{
    memset(s, 0, sizeof *s);
    s->d = d;
    s->oh = (d->h - 1) / d->stride_h + 1;
    s->ow = (d->w - 1) / d->stride_w + 1;
    *d1 = *d;
    d1->h = s->oh, d1->w = s->ow, d1->stride_h = d1->stride_w = 1;
    return ct_host_work_get(ctx, 16, 16, 1, hw);
}

/*
 * A 1x1 unpadded convolution (any stride) over small planes as products on
 * channel-major copies: x (n, c_in, h, w), sampled at the strides, copied
 * to xc (c_in, n P) and dy (n, c_out, P) to dyc (c_out, n P), so that
 * y = w xc, dx = w^T dyc and dw += dyc xc^T are each one GEMM over the whole
 * batch (gemm512.h), whose tiles stay full where a plane of P pixels would
 * fill its vectors only partly (ResNet-50's layer4: 49 pixels in 4
 * vectors).
 */
static int gemm_1x1(const ct_conv2d_desc *d)
{
    if (d->kh != 1 || d->kw != 1 || d->pad_h || d->pad_w || d->dil_h != 1 || d->dil_w != 1)
        return 0;
    int oh, ow;
    if (ct_conv2d_out_shape(NULL, d, &oh, &ow))
        return 0;
    return (size_t)oh * ow < GEMM_1X1_PLANE;
}

/* An NCHW tensor (n, c, h, w) sampled at strides sh, sw into oh x ow
 * planes, and its channel-major copy (c, n oh ow); an item per image. */
typedef struct cmcopy {
    size_t n, c, h, w, sh, sw, oh, ow;
    const float *src;  /* to_cm: the NCHW tensor; from_cm: the copy */
    const float *bias; /* from_cm, stride 1: added per channel where set */
    float *dst;
} cmcopy;

static void to_cm_item(void *arg, size_t img, int thread)
{
    (void)thread;
    const cmcopy *q = arg;
    size_t P = q->oh * q->ow;
    for (size_t c = 0; c < q->c; c++) {
        const float *s = q->src + (img * q->c + c) * q->h * q->w;
        float *t = q->dst + c * q->n * P + img * P;
        if (q->sh == 1 && q->sw == 1) {
            memcpy(t, s, P * sizeof *t);
            continue;
        }
        for (size_t r = 0; r < q->oh; r++)
            for (size_t k = 0; k < q->ow; k++)
                *t++ = s[r * q->sh * q->w + k * q->sw];
    }
}

/* the copy back, zeros off the samples */
static void from_cm_item(void *arg, size_t img, int thread)
{
    (void)thread;
    const cmcopy *q = arg;
    size_t P = q->oh * q->ow;
    for (size_t c = 0; c < q->c; c++) {
        const float *s = q->src + c * q->n * P + img * P;
        float *t = q->dst + (img * q->c + c) * q->h * q->w;
        if (q->sh == 1 && q->sw == 1) {
            if (q->bias)
                for (size_t i = 0; i < P; i++)
                    t[i] = s[i] + q->bias[c];
            else
                memcpy(t, s, P * sizeof *t);
            continue;
        }
        memset(t, 0, q->h * q->w * sizeof *t);
        for (size_t r = 0; r < q->oh; r++)
            for (size_t k = 0; k < q->ow; k++)
                t[r * q->sh * q->w + k * q->sw] = *s++;
    }
}

static int gemm1x1_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                           const float *w, const float *b)
{
    int oh, ow, st;
    ct_host_work *hw;
    float *xc, *yc;
    if ((st = ct_conv2d_out_shape(ctx, d, &oh, &ow)))
        return st;
    size_t n = (size_t)d->n, nP = n * oh * ow, ci = (size_t)d->c_in, co = (size_t)d->c_out;
    if ((st = ct_host_work_get(ctx, 16, 16, 1, &hw)) || (st = ct_host_work_big(ctx, hw, 0, ci * nP, &xc)) ||
        (st = ct_host_work_big(ctx, hw, 1, co * nP, &yc)))
        return st;
    cmcopy xq = { n, ci, (size_t)d->h, (size_t)d->w, (size_t)d->stride_h, (size_t)d->stride_w,
                  (size_t)oh, (size_t)ow, x, NULL, xc };
    ct_pool_run(hw->pool, n, to_cm_item, &xq);
    if ((st = ct_gemm512(ctx, hw, 0, 0, co, nP, ci, 1.0f, w, ci, xc, nP, 0.0f, yc, nP)))
        return st;
    cmcopy yq = { n, co, (size_t)oh, (size_t)ow, 1, 1, (size_t)oh, (size_t)ow, yc, b, y };
    ct_pool_run(hw->pool, n, from_cm_item, &yq);
    return CT_OK;
}

static int gemm1x1_backward(ct_context *ctx, const ct_conv2d_desc *d, float *dx, float *dw,
                            const float *dy, const float *x, const float *w)
{
    int oh, ow, st;
    ct_host_work *hw;
    float *dyc, *c2;
    if ((st = ct_conv2d_out_shape(ctx, d, &oh, &ow)))
        return st;
    size_t n = (size_t)d->n, nP = n * oh * ow, ci = (size_t)d->c_in, co = (size_t)d->c_out;
    if ((st = ct_host_work_get(ctx, 16, 16, 1, &hw)) || (st = ct_host_work_big(ctx, hw, 0, co * nP, &dyc)) ||
        (st = ct_host_work_big(ctx, hw, 1, ci * nP, &c2)))
        return st;
    cmcopy dyq = { n, co, (size_t)oh, (size_t)ow, 1, 1, (size_t)oh, (size_t)ow, dy, NULL, dyc };
    ct_pool_run(hw->pool, n, to_cm_item, &dyq);
    /* x's geometry; c2 holds dx's copy, then x's */
    cmcopy xq = { n, ci, (size_t)d->h, (size_t)d->w, (size_t)d->stride_h, (size_t)d->stride_w,
                  (size_t)oh, (size_t)ow, c2, NULL, dx };
    if (dx) { /* dx (c_in, n P) = w^T (c_in, c_out) . dyc (c_out, n P) */
        if ((st = ct_gemm512(ctx, hw, 1, 0, ci, nP, co, 1.0f, w, ci, dyc, nP, 0.0f, c2, nP)))
            return st;
        ct_pool_run(hw->pool, n, from_cm_item, &xq);
    }
    if (dw) { /* dw (c_out, c_in) += dyc (c_out, n P) . xc^T (n P, c_in) */
        xq.src = x, xq.dst = c2;
        ct_pool_run(hw->pool, n, to_cm_item, &xq);
        if ((st = ct_gemm512(ctx, hw, 0, 1, co, ci, nP, 1.0f, dyc, nP, c2, nP, 1.0f, dw, ci)))
            return st;
    }
    return CT_OK;
}

/*
 * The phase form of a strided convolution. With stride s and kernel k along
 * a dimension, tap i = s a + u (u < s) of output r reads input s (r + a) + u
 * - pad: for each phase u, a stride-1 read of the plane subsampled at
 * s R + u - pad. So the input becomes s_h s_w phase planes per channel,
 * xq (n, s_h s_w c_in, hq, wq), phase-major: plane (u s_w + v) c_in + c holds
 * x[c][s_h R + u - pad_h][s_w C + v - pad_w] (zero outside x), and the
 * convolution a stride-1, unpadded one over them with a kqh x kqw kernel,
 * kq = ceil(k / s): wq[o][(u, v, c)][a, b] = w[o][c][s_h a + u][s_w b + v].
 * Phase (u, v) has ceil((k_h - u) / s_h) x ceil((k_w - v) / s_w) real taps
 * (a prefix of rows and columns), the rest are zero: the forward tiles and
 * the input gradient's skip them (sconv.rng). The tiles need the output as
 * wide as the input: it is computed wq wide, hq = oh + kqh - 1 rows of
 * phase planes give oh rows, and the kqw - 1 extra columns (reading
 * zero-masked lanes past each row) are cropped off; backward, dy is widened
 * with zero columns, and the input gradient (the transposed convolution,
 * whose planes are xq's) scatters back through the phases, each input
 * element from exactly one phase element. The weight gradient needs no
 * phases (conv_dw512.c reads x at the strides).
 */
typedef struct phase {
    const ct_conv2d_desc *d;
    int oh, ow, kqh, kqw, hq, wq, cq;
    const float *src;
    float *dst;
    int dir; /* PH_IN, PH_DX, PH_CROP, PH_WIDEN */
} phase;

enum { PH_IN, PH_DX, PH_CROP, PH_WIDEN };

static void phase_setup(const ct_conv2d_desc *d, phase *q, ct_conv2d_desc *dq)
{
    memset(q, 0, sizeof *q);
    q->d = d;
    ct_conv2d_out_shape(NULL, d, &q->oh, &q->ow);
    q->kqh = (d->kh + d->stride_h - 1) / d->stride_h;
    q->kqw = (d->kw + d->stride_w - 1) / d->stride_w;
    q->hq = q->oh + q->kqh - 1;
    q->wq = q->ow + q->kqw - 1;
    q->cq = d->c_in * d->stride_h * d->stride_w;
    *dq = *d;
    dq->c_in = q->cq, dq->h = q->hq, dq->w = q->wq, dq->kh = q->kqh, dq->kw = q->kqw;
    dq->stride_h = dq->stride_w = 1, dq->pad_h = dq->pad_w = 0;
}

/* One image: x -> xq, dxq -> dx, y wide -> y, or dy -> dy wide. */
static void phase_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const phase *q = arg;
    const ct_conv2d_desc *d = q->d;
    int sh = d->stride_h, sw = d->stride_w;
    size_t x_img = (size_t)d->c_in * d->h * d->w, xq_img = (size_t)q->cq * q->hq * q->wq;
    size_t y_img = (size_t)d->c_out * q->oh * q->ow, yw_img = (size_t)d->c_out * q->oh * q->wq;
    if (q->dir == PH_IN) {
        const float *x = q->src + item * x_img;
        float *o = q->dst + item * xq_img;
        for (int u = 0; u < sh; u++)
            for (int v = 0; v < sw; v++)
                for (int c = 0; c < d->c_in; c++)
                    for (int R = 0; R < q->hq; R++, o += q->wq) {
                        int yy = sh * R + u - d->pad_h;
                        if (yy < 0 || yy >= d->h) {
                            memset(o, 0, (size_t)q->wq * sizeof(float));
                            continue;
                        }
                        const float *xr = x + ((size_t)c * d->h + (size_t)yy) * d->w;
                        for (int C = 0; C < q->wq; C++) {
                            int xx = sw * C + v - d->pad_w;
                            o[C] = xx >= 0 && xx < d->w ? xr[xx] : 0.0f;
                        }
                    }
    } else if (q->dir == PH_DX) {
        const float *g = q->src + item * xq_img;
        float *dx = q->dst + item * x_img;
        for (int c = 0; c < d->c_in; c++)
            for (int yy = 0; yy < d->h; yy++) {
                float *dr = dx + ((size_t)c * d->h + (size_t)yy) * d->w;
                int R = (yy + d->pad_h) / sh, u = (yy + d->pad_h) % sh;
                if (R >= q->hq) { /* below every window: no gradient */
                    memset(dr, 0, (size_t)d->w * sizeof(float));
                    continue;
                }
                for (int xx = 0; xx < d->w; xx++) {
                    int C = (xx + d->pad_w) / sw, v = (xx + d->pad_w) % sw;
                    dr[xx] = C < q->wq ? g[(((size_t)u * sw + (size_t)v) * d->c_in + (size_t)c) *
                                               q->hq * q->wq + (size_t)R * q->wq + (size_t)C]
                                       : 0.0f;
                }
            }
    } else if (q->dir == PH_CROP) {
        const float *yw = q->src + item * yw_img;
        float *y = q->dst + item * y_img;
        for (size_t r = 0; r < (size_t)d->c_out * q->oh; r++)
            memcpy(y + r * q->ow, yw + r * q->wq, (size_t)q->ow * sizeof(float));
    } else {
        const float *dy = q->src + item * y_img;
        float *yw = q->dst + item * yw_img;
        for (size_t r = 0; r < (size_t)d->c_out * q->oh; r++) {
            memcpy(yw + r * q->wq, dy + r * q->ow, (size_t)q->ow * sizeof(float));
            memset(yw + r * q->wq + q->ow, 0, (size_t)(q->wq - q->ow) * sizeof(float));
        }
    }
}

/* wq from w: an item per output channel, zeros at the taps past the kernel */
typedef struct phase_w {
    const phase *q;
    const float *src;
    float *dst;
} phase_w;

static void phase_w_item(void *arg, size_t o, int thread)
{
    (void)thread;
    const phase_w *pw = arg;
    const phase *q = pw->q;
    const ct_conv2d_desc *d = q->d;
    int sh = d->stride_h, sw = d->stride_w;
    size_t per_o = (size_t)d->c_in * d->kh * d->kw, per_oq = (size_t)q->cq * q->kqh * q->kqw;
    for (int c = 0; c < d->c_in; c++)
        for (int u = 0; u < sh; u++)
            for (int v = 0; v < sw; v++)
                for (int a = 0; a < q->kqh; a++)
                    for (int b = 0; b < q->kqw; b++) {
                        int i = sh * a + u, j = sw * b + v;
                        size_t kq = o * per_oq + ((((size_t)u * sw + (size_t)v) * d->c_in + (size_t)c) *
                                                      q->kqh + (size_t)a) * q->kqw + (size_t)b;
                        pw->dst[kq] = i < d->kh && j < d->kw
                                          ? pw->src[o * per_o + ((size_t)c * d->kh + (size_t)i) * d->kw + (size_t)j]
                                          : 0.0f;
                    }
}

/* The taps of each phase channel that are not zero (sconv.rng): phase
 * (u, v) has ceil((kh - u) / s_h) x ceil((kw - v) / s_w) of them. */
static int *phase_ranges(ct_context *ctx, const phase *q)
{
    const ct_conv2d_desc *d = q->d;
    int *r = malloc((size_t)q->cq * 4 * sizeof *r);
    if (!r) {
        ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: out of host memory");
        return NULL;
    }
    for (int k = 0; k < q->cq; k++) {
        int ph = k / d->c_in, u = ph / d->stride_w, v = ph % d->stride_w;
        int *t = r + 4 * k;
        t[0] = 0, t[1] = d->kh > u ? (d->kh - u + d->stride_h - 1) / d->stride_h : 0;
        t[2] = 0, t[3] = d->kw > v ? (d->kw - v + d->stride_w - 1) / d->stride_w : 0;
    }
    return r;
}

static int phase_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                         const float *w, const float *b)
{
    phase q;
    ct_conv2d_desc dq;
    phase_setup(d, &q, &dq);
    ct_host_work *hw;
    float *xq, *yw, *wq;
    size_t nwq = (size_t)d->c_out * q.cq * q.kqh * q.kqw;
    int st = ct_host_work_get(ctx, 16, 16, 1, &hw);
    if (st || (st = ct_host_work_big(ctx, hw, 0, (size_t)d->n * q.cq * q.hq * q.wq, &xq)) ||
        (st = ct_host_work_big(ctx, hw, 1, (size_t)d->n * d->c_out * q.oh * q.wq, &yw)) ||
        (st = ct_host_work_big(ctx, hw, 3, nwq, &wq)))
        return st;
    phase_w pw = { &q, w, wq };
    ct_pool_run(hw->pool, (size_t)d->c_out, phase_w_item, &pw);
    q.dir = PH_IN, q.src = x, q.dst = xq;
    ct_pool_run(hw->pool, (size_t)d->n, phase_item, &q);
    int *rc = phase_ranges(ctx, &q);
    if (!rc)
        return CT_ERR_NO_MEMORY;
    st = same_forward(ctx, &dq, yw, xq, wq, b, rc);
    free(rc);
    if (st)
        return st;
    q.dir = PH_CROP, q.src = yw, q.dst = y;
    ct_pool_run(hw->pool, (size_t)d->n, phase_item, &q);
    return CT_OK;
}

/* dx of a phased convolution: dy widened, the transposed convolution over
 * the phase planes, scattered back */
static int phase_dx(ct_context *ctx, const ct_conv2d_desc *d, float *dx, const float *dy,
                    const float *w)
{
    phase q;
    ct_conv2d_desc dq;
    phase_setup(d, &q, &dq);
    ct_host_work *hw;
    float *dyw, *dxq, *wq;
    size_t nwq = (size_t)d->c_out * q.cq * q.kqh * q.kqw, nxq = (size_t)d->n * q.cq * q.hq * q.wq;
    int st = ct_host_work_get(ctx, 16, 16, 1, &hw);
    if (st || (st = ct_host_work_big(ctx, hw, 1, (size_t)d->n * d->c_out * q.oh * q.wq, &dyw)) ||
        (st = ct_host_work_big(ctx, hw, 3, nwq, &wq)) ||
        (st = ct_host_work_big(ctx, hw, 2, nxq, &dxq)))
        return st;
    q.dir = PH_WIDEN, q.src = dy, q.dst = dyw;
    ct_pool_run(hw->pool, (size_t)d->n, phase_item, &q);
    phase_w pw = { &q, w, wq };
    ct_pool_run(hw->pool, (size_t)d->c_out, phase_w_item, &pw);
    int *rc = phase_ranges(ctx, &q);
    if (!rc)
        return CT_ERR_NO_MEMORY;
    st = same_dx(ctx, &dq, dxq, dyw, wq, rc);
    free(rc);
    if (st)
        return st;
    q.dir = PH_DX, q.src = dxq, q.dst = dx;
    ct_pool_run(hw->pool, (size_t)d->n, phase_item, &q);
    return CT_OK;
}

int ct_conv512_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                       const float *w, const float *b)
{
    if (gemm_1x1(d))
        return gemm1x1_forward(ctx, d, y, x, w, b);
    if (phased(d))
        return phase_forward(ctx, d, y, x, w, b);
    if (!strided_1x1(d))
        return same_forward(ctx, d, y, x, w, b, NULL);
    ct_conv2d_desc d1;
    ct_host_work *hw;
    subsample s;
    float *xs;
    int st = strided_setup(ctx, d, &d1, &hw, &s);
    if (st || (st = ct_host_work_big(ctx, hw, 0, (size_t)d->n * d->c_in * s.oh * s.ow, &xs)))
        return st;
    s.src = x, s.dst = xs;
    ct_pool_run(hw->pool, (size_t)d->n, subsample_item, &s);
    return same_forward(ctx, &d1, y, xs, w, b, NULL);
}

/* dx through the forward tiles (phased, subsampled or direct), then dw in
 * broadcast form from x and dy as they are (conv_dw512.c) */
int ct_conv512_backward(ct_context *ctx, const ct_conv2d_desc *d, float *dx, float *dw,
                        const float *dy, const float *x, const float *w)
{
    if (gemm_1x1(d))
        return gemm1x1_backward(ctx, d, dx, dw, dy, x, w);
    int st = CT_OK;
    if (dx && phased(d)) {
        st = phase_dx(ctx, d, dx, dy, w);
    } else if (dx && !strided_1x1(d)) {
        st = same_dx(ctx, d, dx, dy, w, NULL);
    } else if (dx) {
        ct_conv2d_desc d1;
        ct_host_work *hw;
        subsample s;
        float *dxs;
        if ((st = strided_setup(ctx, d, &d1, &hw, &s)) ||
            (st = ct_host_work_big(ctx, hw, 1, (size_t)d->n * d->c_in * s.oh * s.ow, &dxs)) ||
            (st = same_dx(ctx, &d1, dxs, dy, w, NULL)))
            return st;
        s.src = dxs, s.dst = dx, s.scatter = 1;
        ct_pool_run(hw->pool, (size_t)d->n, subsample_item, &s);
    }
    if (!st && dw)
        st = ct_conv512_dw(ctx, d, dw, dy, x);
    return st;
}

#else /* !CT_HOST_X86 */

int ct_conv512_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                       const float *w, const float *b)
{
    (void)d, (void)y, (void)x, (void)w, (void)b;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d host path: AVX-512 not built for this CPU");
}

int ct_conv512_backward(ct_context *ctx, const ct_conv2d_desc *d, float *dx, float *dw,
                        const float *dy, const float *x, const float *w)
{
    (void)d, (void)dx, (void)dw, (void)dy, (void)x, (void)w;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d host path: AVX-512 not built for this CPU");
}

#endif
