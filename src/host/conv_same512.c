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
 */
#include "host/conv_same512.h"

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
int ct_conv512_same_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
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
 * transposed weights; rc as ct_conv512_same_forward's */
int ct_conv512_same_dx(ct_context *ctx, const ct_conv2d_desc *d, float *dx, const float *dy,
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
