/*
 * conv_host512.c - the AVX-512 kernels of the direct host convolution
 * (conv_host512.h).
 *
 * Layout. A 16-lane vector holds 16 consecutive output pixels of one
 * channel in the flattened (oh * w) plane, so it may span rows (an 8x8
 * image is 4 full vectors, not 8 half-empty ones). Output pixel p = r w + col
 * reads, for kernel tap (c, i, j), element p + i w + j - pw of input plane c
 * padded with ph zero rows above and below (no columns): the same offset
 * for every lane. The lanes whose column col + j - pw falls outside the row
 * would read the neighbouring row's ends instead; a per-vector, per-column
 * mask zeroes them at the load (zero-masking loads cannot fault), so the
 * padding columns cost nothing. That needs the output as wide as the input
 * (2 pw = kw - 1, a "same" convolution), which every stride-1 convolution
 * of the zoo is; conv_host.c keeps the AVX2 kernels for the others.
 *
 * Forward (and the input gradient, the same convolution of dy with the
 * flipped, transposed weights): a tile is 8 output channels x up to 3
 * vectors, 24 sums in registers; per tap, 3 masked loads and 8 weight
 * broadcasts (folded into the FMAs) feed 24 FMAs. Weights are packed as
 * (ceil(c_out / 8), c_in, kh, kw, 8), zeros past c_out.
 *
 * Weight gradient: per item (8-channel blocks, input channel), for each
 * kernel row and group of up to 3 kernel columns, 8 x 3 vector sums over
 * the output pixels, carried across the batch in scratch; image order is
 * fixed, so any number of threads gives the same bits.
 */
#include "ops/conv_host512.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef CT_HOST_X86
#include <immintrin.h>
#endif

static size_t round_up(size_t a, size_t m)
{
    return (a + m - 1) / m * m;
}

int ct_conv512_applies(const ct_conv2d_desc *d)
{
    return d->stride_h == 1 && d->stride_w == 1 && d->dil_h == 1 && d->dil_w == 1 &&
           2 * d->pad_w == d->kw - 1 && d->pad_h < d->kh && d->kw <= 16;
}

#ifdef CT_HOST_X86

/* One same-width, stride-1 convolution over a batch as the forward pass
 * sees it: (n, ci, h, w) -> (n, co, oh, w). */
typedef struct sconv {
    int n, ci, h, w, co, kh, kw, ph, pw, oh;
    size_t P;          /* oh * w pixels per output plane */
    int nvec;          /* ceil(P / 16) */
    size_t plane;      /* floats per padded plane, 16 of slack each side */
    size_t x_img, y_img;
    int ncb, group, items_per_img;
    int wcg, wnb;      /* weight gradient: input channels per item, images per chunk */
    const float *x;
    float *y;
    const float *bias;
    const float *wpk;
    const uint16_t *mask; /* (nvec, kw): lanes that read inside their row (and p < P) */
    ct_host_work *hw;
    const float *dy;
    float *dw;
} sconv;

static void geometry(sconv *p, int n, int ci, int h, int w, int co, int kh, int kw, int ph, int pw)
{
    p->n = n, p->ci = ci, p->h = h, p->w = w, p->co = co, p->kh = kh, p->kw = kw;
    p->ph = ph, p->pw = pw;
    p->oh = h + 2 * ph - kh + 1;
    p->P = (size_t)p->oh * w;
    p->nvec = (int)((p->P + 15) / 16);
    /* 16 floats of slack in front, at least 48 behind: the masked-off lanes
     * of the last vectors point up to 15 + pw floats past the rows */
    p->plane = round_up(16 + (size_t)(h + 2 * ph) * w + 48, 16);
    p->x_img = (size_t)ci * h * w;
    p->y_img = (size_t)co * p->P;
    p->ncb = (co + 7) / 8;
}

static void make_masks(const sconv *p, uint16_t *mask)
{
    for (int v = 0; v < p->nvec; v++)
        for (int j = 0; j < p->kw; j++) {
            unsigned m = 0;
            for (int l = 0; l < 16; l++) {
                size_t px = (size_t)v * 16 + (size_t)l;
                int col = (int)(px % (size_t)p->w) + j - p->pw;
                if (px < p->P && col >= 0 && col < p->w)
                    m |= 1u << l;
            }
            mask[(size_t)v * p->kw + j] = (uint16_t)m;
        }
}

/* planes (c, h, w) -> (c, [16 slack], ph zero rows, h rows, ph zero rows, [slack]) */
static void pad_planes(const sconv *p, const float *x, int c, float *xp)
{
    size_t hw = (size_t)p->h * p->w, top = (size_t)p->ph * p->w;
    for (int ch = 0; ch < c; ch++) {
        float *dst = xp + (size_t)ch * p->plane;
        memset(dst, 0, (16 + top) * sizeof(float));
        memcpy(dst + 16 + top, x + (size_t)ch * hw, hw * sizeof(float));
        memset(dst + 16 + top + hw, 0, (p->plane - 16 - top - hw) * sizeof(float));
    }
}

/* forward weights (co, ci, kh, kw) -> (ceil(co / 8), ci, kh, kw, 8) */
static void pack_forward(const float *w, int co, int ci, int kh, int kw, float *out)
{
    int ncb = (co + 7) / 8, taps = kh * kw;
    for (int cb = 0; cb < ncb; cb++)
        for (int c = 0; c < ci; c++)
            for (int t = 0; t < taps; t++)
                for (int q = 0; q < 8; q++) {
                    int o = 8 * cb + q;
                    *out++ = o < co ? w[((size_t)o * ci + c) * taps + t] : 0.0f;
                }
}

/* the input gradient's: w'(ci, co, i, j) = w(co, ci, kh-1-i, kw-1-j), as
 * (ceil(ci / 8), co, kh, kw, 8) */
static void pack_backward(const float *w, int co, int ci, int kh, int kw, float *out)
{
    int ncb = (ci + 7) / 8, taps = kh * kw;
    for (int cb = 0; cb < ncb; cb++)
        for (int o = 0; o < co; o++)
            for (int i = 0; i < kh; i++)
                for (int j = 0; j < kw; j++)
                    for (int q = 0; q < 8; q++) {
                        int c = 8 * cb + q;
                        *out++ = c < ci ? w[((size_t)o * ci + c) * taps +
                                            (size_t)(kh - 1 - i) * kw + (kw - 1 - j)]
                                        : 0.0f;
                    }
}

static CT_AVX512 inline __mmask16 tail_mask(const sconv *p, int v)
{
    size_t left = p->P - (size_t)v * 16;
    return left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1);
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
 * width KW (0: p->kw). xs: the image's padded planes; wk: the block's
 * packed weights; yc: the block's first output plane. */
#define DEF_TILE(NV, KW)                                                                          \
    static CT_AVX512 void tile_##NV##_##KW(const sconv *p, const float *xs, int v0,               \
                                          const float *wk, float *yc, int cvalid,                \
                                          const float *b8)                                        \
    {                                                                                             \
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
        const uint16_t *m0 = p->mask + (size_t)v0 * kw;                                           \
        const uint16_t *m1 = NV > 1 ? m0 + kw : m0, *m2 = NV > 2 ? m0 + 2 * kw : m0;              \
        const float *xb = xs + 16 + (size_t)v0 * 16 - p->pw;                                      \
        for (int c = 0; c < p->ci; c++)                                                           \
            for (int i = 0; i < p->kh; i++) {                                                     \
                const float *xr = xb + (size_t)c * p->plane + (size_t)i * p->w;                   \
                for (int j = 0; j < kw; j++, wk += 8) {                                           \
                    __m512 x0 = _mm512_maskz_loadu_ps(m0[j], xr + j), x1 = x0, x2 = x0;           \
                    if (NV > 1)                                                                   \
                        x1 = _mm512_maskz_loadu_ps(m1[j], xr + j + 16);                           \
                    if (NV > 2)                                                                   \
                        x2 = _mm512_maskz_loadu_ps(m2[j], xr + j + 32);                           \
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
        __mmask16 t0 = tail_mask(p, v0), t1 = NV > 1 ? tail_mask(p, v0 + 1) : t0;                 \
        __mmask16 t2 = NV > 2 ? tail_mask(p, v0 + 2) : t0;                                        \
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

typedef void (*tile_fn)(const sconv *, const float *, int, const float *, float *, int,
                        const float *);

static tile_fn pick_tile(int nv, int kw)
{
    static const tile_fn t[4][3] = {
        { tile_1_0, tile_2_0, tile_3_0 },
        { tile_1_1, tile_2_1, tile_3_1 },
        { tile_1_3, tile_2_3, tile_3_3 },
        { tile_1_5, tile_2_5, tile_3_5 },
    };
    int k = kw == 1 ? 1 : kw == 3 ? 2 : kw == 5 ? 3 : 0;
    return t[k][nv - 1];
}

/* Channel blocks [cb0, cb1) of one image: its vectors in tiles of 3, the
 * last ones split 2 + 2 rather than 3 + 1. */
static void forward_blocks(const sconv *p, const float *xp, int cb0, int cb1, float *yimg)
{
    size_t wblock = (size_t)p->ci * p->kh * p->kw * 8;
    for (int cb = cb0; cb < cb1; cb++) {
        const float *wk = p->wpk + (size_t)cb * wblock;
        int cvalid = p->co - 8 * cb < 8 ? p->co - 8 * cb : 8;
        float b8[8] = { 0, 0, 0, 0, 0, 0, 0, 0 };
        for (int q = 0; q < cvalid && p->bias; q++)
            b8[q] = p->bias[8 * cb + q];
        float *yc = yimg + (size_t)8 * cb * p->P;
        for (int v0 = 0; v0 < p->nvec;) {
            int left = p->nvec - v0, nv = left == 4 ? 2 : left < 3 ? left : 3;
            pick_tile(nv, p->kw)(p, xp, v0, wk, yc, cvalid, b8);
            v0 += nv;
        }
    }
}

static void forward_item(void *arg, size_t item, int thread)
{
    const sconv *p = arg;
    int n = (int)(item / (size_t)p->items_per_img), g = (int)(item % (size_t)p->items_per_img);
    float *xp = p->hw->scratch[thread];
    if (p->hw->cached[thread] != n) {
        pad_planes(p, p->x + (size_t)n * p->x_img, p->ci, xp);
        p->hw->cached[thread] = n;
    }
    int cb0 = g * p->group, cb1 = cb0 + p->group < p->ncb ? cb0 + p->group : p->ncb;
    forward_blocks(p, xp, cb0, cb1, p->y + (size_t)n * p->y_img);
}

/* The weight gradient's inner loop: 8 output channels x JN kernel columns
 * of one kernel row, summed into a[0..24) over nimg images' vectors. xr:
 * the first image's padded plane at the row and first column; the next
 * image's is xstep further, its dy dstep further. */
#define W_CH(Q)                                                                                   \
    do {                                                                                          \
        __m512 d = _mm512_maskz_loadu_ps(t, dyq[Q] + o);                                          \
        s##Q##0 = _mm512_fmadd_ps(d, x0, s##Q##0);                                                \
        if (jn > 1)                                                                               \
            s##Q##1 = _mm512_fmadd_ps(d, x1, s##Q##1);                                            \
        if (jn > 2)                                                                               \
            s##Q##2 = _mm512_fmadd_ps(d, x2, s##Q##2);                                            \
    } while (0)
#define W_LOAD(Q) __m512 s##Q##0 = a[3 * Q], s##Q##1 = a[3 * Q + 1], s##Q##2 = a[3 * Q + 2]
#define W_SAVE(Q) a[3 * Q] = s##Q##0, a[3 * Q + 1] = s##Q##1, a[3 * Q + 2] = s##Q##2

#define DEF_WROW(JN)                                                                              \
    static CT_AVX512 void wrow_##JN(const sconv *p, const float *xr, size_t xstep,               \
                                    const uint16_t *mk0, const float *const *dy8, size_t dstep,  \
                                    int nimg, __m512 *a)                                          \
    {                                                                                             \
        const int jn = JN;                                                                        \
        W_LOAD(0);                                                                                \
        W_LOAD(1);                                                                                \
        W_LOAD(2);                                                                                \
        W_LOAD(3);                                                                                \
        W_LOAD(4);                                                                                \
        W_LOAD(5);                                                                                \
        W_LOAD(6);                                                                                \
        W_LOAD(7);                                                                                \
        for (int m = 0; m < nimg; m++, xr += xstep) {                                             \
            const float *dyq[8];                                                                  \
            for (int q = 0; q < 8; q++)                                                           \
                dyq[q] = dy8[q] + (size_t)m * dstep;                                              \
            const uint16_t *mk = mk0;                                                             \
            for (int v = 0; v < p->nvec; v++, mk += p->kw) {                                      \
                size_t o = (size_t)v * 16;                                                        \
                __mmask16 t = tail_mask(p, v);                                                    \
                __m512 x0 = _mm512_maskz_loadu_ps(mk[0], xr + o), x1 = x0, x2 = x0;               \
                if (jn > 1)                                                                       \
                    x1 = _mm512_maskz_loadu_ps(mk[1], xr + o + 1);                                \
                if (jn > 2)                                                                       \
                    x2 = _mm512_maskz_loadu_ps(mk[2], xr + o + 2);                                \
                W_CH(0);                                                                          \
                W_CH(1);                                                                          \
                W_CH(2);                                                                          \
                W_CH(3);                                                                          \
                W_CH(4);                                                                          \
                W_CH(5);                                                                          \
                W_CH(6);                                                                          \
                W_CH(7);                                                                          \
            }                                                                                     \
        }                                                                                         \
        W_SAVE(0);                                                                                \
        W_SAVE(1);                                                                                \
        W_SAVE(2);                                                                                \
        W_SAVE(3);                                                                                \
        W_SAVE(4);                                                                                \
        W_SAVE(5);                                                                                \
        W_SAVE(6);                                                                                \
        W_SAVE(7);                                                                                \
    }

DEF_WROW(1)
DEF_WROW(2)
DEF_WROW(3)

/* dw of every output channel and the input channels of item `item` (wcg
 * of them to an item) over the batch, a chunk of wnb images at a time:
 * the chunk's padded planes of those channels in scratch, then per
 * (channel block, input channel, kernel row, column group) 24 sums carried
 * in scratch from chunk to chunk. Each sum runs over the images in order
 * and, within one, over its vectors in order, whatever the chunking and
 * the number of threads. Streaming dy once per item (not once per input
 * channel) is what makes this fast: dy is the big operand. */
static CT_AVX512 void weight_item(void *arg, size_t item, int thread)
{
    const sconv *p = arg;
    int c0 = (int)item * p->wcg, c1 = c0 + p->wcg < p->ci ? c0 + p->wcg : p->ci, cc = c1 - c0;
    int ncg = (p->kw + 2) / 3;
    size_t per_ch = (size_t)p->kh * ncg * 24; /* sums per (block, input channel) */
    float *xp = p->hw->scratch[thread];
    size_t chunk_planes = (size_t)p->wnb * cc * p->plane;
    __m512 *acc0 = (__m512 *)(void *)(xp + chunk_planes);
    for (size_t k = 0; k < per_ch * (size_t)p->ncb * cc; k++)
        acc0[k] = _mm512_setzero_ps();
    size_t hw = (size_t)p->h * p->w;
    for (int n0 = 0; n0 < p->n; n0 += p->wnb) {
        int nb = p->n - n0 < p->wnb ? p->n - n0 : p->wnb;
        /* planes in (input channel, image) order */
        for (int c = 0; c < cc; c++)
            for (int m = 0; m < nb; m++)
                pad_planes(p, p->x + (size_t)(n0 + m) * p->x_img + (size_t)(c0 + c) * hw, 1,
                           xp + ((size_t)c * p->wnb + m) * p->plane);
        for (int cb = 0; cb < p->ncb; cb++) {
            int cvalid = p->co - 8 * cb < 8 ? p->co - 8 * cb : 8;
            const float *dy8[8];
            for (int q = 0; q < 8; q++)
                dy8[q] = p->dy + (size_t)n0 * p->y_img +
                         (size_t)(8 * cb + (q < cvalid ? q : cvalid - 1)) * p->P;
            for (int c = 0; c < cc; c++) {
                __m512 *acc = acc0 + ((size_t)cb * cc + c) * per_ch;
                const float *xc = xp + (size_t)c * p->wnb * p->plane;
                for (int i = 0; i < p->kh; i++)
                    for (int cg = 0; cg < ncg; cg++) {
                        int j0 = 3 * cg, jn = p->kw - j0 < 3 ? p->kw - j0 : 3;
                        const float *xr = xc + 16 + (size_t)i * p->w + j0 - p->pw;
                        __m512 *a = acc + ((size_t)i * ncg + cg) * 24;
                        if (jn == 3)
                            wrow_3(p, xr, p->plane, p->mask + j0, dy8, p->y_img, nb, a);
                        else if (jn == 2)
                            wrow_2(p, xr, p->plane, p->mask + j0, dy8, p->y_img, nb, a);
                        else
                            wrow_1(p, xr, p->plane, p->mask + j0, dy8, p->y_img, nb, a);
                    }
            }
        }
    }
    size_t taps = (size_t)p->kh * p->kw;
    for (int cb = 0; cb < p->ncb; cb++) {
        int cvalid = p->co - 8 * cb < 8 ? p->co - 8 * cb : 8;
        for (int c = 0; c < cc; c++) {
            const __m512 *acc = acc0 + ((size_t)cb * cc + c) * per_ch;
            for (int q = 0; q < cvalid; q++) {
                float *dwq = p->dw + ((size_t)(8 * cb + q) * p->ci + c0 + c) * taps;
                for (int i = 0; i < p->kh; i++)
                    for (int j = 0; j < p->kw; j++)
                        dwq[(size_t)i * p->kw + j] += _mm512_reduce_add_ps(
                            acc[((size_t)i * ncg + j / 3) * 24 + q * 3 + j % 3]);
            }
        }
    }
}

static void set_items(sconv *p, int threads)
{
    p->group = p->n >= 2 * threads ? p->ncb : 1;
    p->items_per_img = (p->ncb + p->group - 1) / p->group;
}

/* The context's scratch for `per` floats a thread and `wpack` packed
 * weights, and room for the masks of each direction. */
static int need(ct_context *ctx, size_t per, size_t wpack, const sconv *f, const sconv *g,
                ct_host_work **hw, uint16_t **fm, uint16_t **gm)
{
    int st = ct_host_work_get(ctx, per, wpack, 1, hw);
    if (st)
        return st;
    *fm = malloc((size_t)f->nvec * f->kw * sizeof **fm);
    *gm = g ? malloc((size_t)g->nvec * g->kw * sizeof **gm) : NULL;
    if (!*fm || (g && !*gm)) {
        free(*fm);
        free(*gm);
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: out of host memory");
    }
    return CT_OK;
}

int ct_conv512_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                       const float *w, const float *b)
{
    sconv f;
    memset(&f, 0, sizeof f);
    geometry(&f, d->n, d->c_in, d->h, d->w, d->c_out, d->kh, d->kw, d->pad_h, d->pad_w);
    ct_host_work *hw;
    uint16_t *fm, *gm;
    int st = need(ctx, (size_t)f.ci * f.plane, (size_t)f.ncb * 8 * f.ci * f.kh * f.kw, &f, NULL,
                  &hw, &fm, &gm);
    if (st)
        return st;
    make_masks(&f, fm);
    pack_forward(w, d->c_out, d->c_in, d->kh, d->kw, hw->wpack);
    f.x = x, f.y = y, f.bias = b, f.wpk = hw->wpack, f.mask = fm, f.hw = hw;
    set_items(&f, hw->threads);
    ct_pool_run(hw->pool, (size_t)f.n * f.items_per_img, forward_item, &f);
    free(fm);
    return CT_OK;
}

int ct_conv512_backward(ct_context *ctx, const ct_conv2d_desc *d, float *dx, float *dw,
                        const float *dy, const float *x, const float *w)
{
    sconv f, g;
    memset(&f, 0, sizeof f);
    memset(&g, 0, sizeof g);
    geometry(&f, d->n, d->c_in, d->h, d->w, d->c_out, d->kh, d->kw, d->pad_h, d->pad_w);
    geometry(&g, d->n, d->c_out, f.oh, d->w, d->c_in, d->kh, d->kw, d->kh - 1 - d->pad_h,
             d->kw - 1 - d->pad_w);
    /* weight-gradient items: input channels, as many to an item as still
     * leaves 4 items per thread; images: chunks whose planes take about
     * 64 KiB and give each load of the sums 64 vectors or more */
    int threads = ct_host_work_threads(ctx);
    size_t want = 4 * (size_t)(threads > 0 ? threads : 1);
    f.wcg = (int)(((size_t)f.ci + want - 1) / want);
    f.wcg = f.wcg < 1 ? 1 : f.wcg;
    size_t fit = (size_t)16384 / ((size_t)f.wcg * f.plane);
    size_t enough = (size_t)(64 + f.nvec - 1) / (size_t)f.nvec;
    f.wnb = (int)(fit < enough ? (fit < 1 ? 1 : fit) : enough);
    f.wnb = f.wnb > f.n ? f.n : f.wnb;
    size_t per_g = dx ? (size_t)g.ci * g.plane : 0;
    size_t per_f = dw ? (size_t)f.wnb * f.wcg * f.plane +
                            (size_t)f.ncb * f.wcg * f.kh * ((f.kw + 2) / 3) * 24 * 16
                      : 0;
    ct_host_work *hw;
    uint16_t *fm, *gm;
    int st = need(ctx, per_g > per_f ? per_g : per_f,
                  dx ? (size_t)g.ncb * 8 * g.ci * g.kh * g.kw : 16, &f, dx ? &g : NULL, &hw, &fm,
                  &gm);
    if (st)
        return st;
    make_masks(&f, fm);
    if (dx) {
        make_masks(&g, gm);
        pack_backward(w, d->c_out, d->c_in, d->kh, d->kw, hw->wpack);
        g.x = dy, g.y = dx, g.wpk = hw->wpack, g.mask = gm, g.hw = hw;
        set_items(&g, hw->threads);
        ct_pool_run(hw->pool, (size_t)g.n * g.items_per_img, forward_item, &g);
    }
    if (dw) {
        f.x = x, f.dy = dy, f.dw = dw, f.mask = fm, f.hw = hw;
        ct_pool_run(hw->pool, (size_t)((f.ci + f.wcg - 1) / f.wcg), weight_item, &f);
    }
    free(fm);
    free(gm);
    return CT_OK;
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
