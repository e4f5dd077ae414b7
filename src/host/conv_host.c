/*
 * conv_host.c - the direct stride-1 convolution of conv_host.h.
 *
 * Layout. Each worker copies the input planes it needs into a zero-padded
 * scratch plane (hp rows of wpp floats, wpp = ow rounded up to 8, plus
 * kw - 1), so the inner loops have no bounds tests: a tile's vector loads
 * stay inside the row, and the lanes past ow are computed and then masked
 * off at the store. Weights are packed as (c_out / 4, c_in, kh, kw, 4) so
 * the four output channels' weights of one tap sit together for the
 * broadcasts; channels past c_out pack as zeros and are never stored.
 *
 * Work decomposition (fixed, so any number of threads gives the same bits):
 * forward and input gradient: one item per image (per image and channel
 * block when the batch is smaller than 2 items per thread); weight
 * gradient: one item per (4 output channels, input channel), each summing
 * over the whole batch in image order; bias gradient: one item per channel.
 * A 1x1 unpadded convolution's gradients are host-BLAS products instead,
 * an image at a time in image order (as deterministic as the dense layers'
 * products, which the host BLAS computes too).
 */
#include "host/conv_host.h"

#include <cblas.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/conv_host512.h"
#include "host/host_work.h"
#include "host/hostmap.h"

#ifdef CT_HOST_X86
#include <immintrin.h>
#endif

static size_t round_up(size_t a, size_t m)
{
    return (a + m - 1) / m * m;
}

/* One stride-1 convolution over a batch, as the forward pass sees it (the
 * input gradient is one too, with dy as its input). */
typedef struct dconv {
    int n, ci, h, w;        /* input (n, ci, h, w) */
    int co, kh, kw, ph, pw; /* output channels, kernel, padding */
    int oh, ow;
    int hp, wpp;            /* padded plane */
    size_t plane;           /* hp * wpp, rounded up to 16 */
    size_t x_img, y_img;    /* elements per image */
    int ncb, group, items_per_img; /* 4-channel blocks; blocks per work item */
    const float *x;         /* (n, ci, h, w) */
    float *y;               /* (n, co, oh, ow) */
    const float *bias;      /* (co) or NULL */
    const float *wpk;       /* (ncb, ci, kh, kw, 4) */
    const int *off;         /* (ci, kh, kw): tap offsets in the padded planes */
    ct_host_work *hw;
    /* weight and bias gradients */
    const float *dy;        /* (n, co, oh, ow) */
    float *dw, *db;
} dconv;

static void geometry(dconv *p, int n, int ci, int h, int w, int co, int kh, int kw, int ph, int pw)
{
    p->n = n, p->ci = ci, p->h = h, p->w = w, p->co = co, p->kh = kh, p->kw = kw;
    p->ph = ph, p->pw = pw;
    p->oh = h + 2 * ph - kh + 1;
    p->ow = w + 2 * pw - kw + 1;
    p->hp = h + 2 * ph;
    p->wpp = (int)round_up((size_t)p->ow, 8) + kw - 1;
    p->plane = round_up((size_t)p->hp * (size_t)p->wpp, 16);
    p->x_img = (size_t)ci * h * w;
    p->y_img = (size_t)co * p->oh * p->ow;
    p->ncb = (co + 3) / 4;
}

/* The output's true shape where the convolution is strided (a strided
 * 1x1 one, which only the AVX-512 kernels take): the mappings and the bias
 * gradient use it. */
static void output_shape(dconv *p, const ct_conv2d_desc *d)
{
    if (ct_conv2d_out_shape(NULL, d, &p->oh, &p->ow) == CT_OK)
        p->y_img = (size_t)p->co * p->oh * p->ow;
}

/* planes (c, h, w) -> zero-padded (c, hp, wpp) at a stride of `plane` */
static void pad_planes(const dconv *p, const float *x, int c, float *xp)
{
    size_t rowb = (size_t)p->wpp * sizeof(float);
    for (int ch = 0; ch < c; ch++) {
        float *dst = xp + (size_t)ch * p->plane;
        const float *src = x + (size_t)ch * p->h * p->w;
        memset(dst, 0, (size_t)p->ph * rowb);
        for (int r = 0; r < p->h; r++) {
            float *row = dst + (size_t)(p->ph + r) * p->wpp;
            memset(row, 0, (size_t)p->pw * sizeof(float));
            memcpy(row + p->pw, src + (size_t)r * p->w, (size_t)p->w * sizeof(float));
            memset(row + p->pw + p->w, 0, (size_t)(p->wpp - p->pw - p->w) * sizeof(float));
        }
        /* the rows below, and the slack up to the plane's stride */
        memset(dst + (size_t)(p->ph + p->h) * p->wpp, 0,
               (p->plane - (size_t)(p->ph + p->h) * p->wpp) * sizeof(float));
    }
}

/* Each tap's offset in the padded planes, in tap order (channel, kernel
 * row, kernel column) as the weights are packed. */
static void tap_offsets(const dconv *p, int *off)
{
    for (int c = 0; c < p->ci; c++)
        for (int i = 0; i < p->kh; i++)
            for (int j = 0; j < p->kw; j++)
                *off++ = (int)((size_t)c * p->plane + (size_t)i * p->wpp + (size_t)j);
}

/* forward weights (co, ci, kh, kw) -> (ncb, ci, kh, kw, 4) */
static void pack_forward(const float *w, int co, int ci, int kh, int kw, float *out)
{
    int ncb = (co + 3) / 4, taps = kh * kw;
    for (int cb = 0; cb < ncb; cb++)
        for (int c = 0; c < ci; c++)
            for (int t = 0; t < taps; t++)
                for (int q = 0; q < 4; q++) {
                    int o = 4 * cb + q;
                    *out++ = o < co ? w[((size_t)o * ci + c) * taps + t] : 0.0f;
                }
}

/* The input gradient's weights: w'(ci, co, i, j) = w(co, ci, kh-1-i, kw-1-j),
 * packed as (ceil(ci / 4), co, kh, kw, 4). */
static void pack_backward(const float *w, int co, int ci, int kh, int kw, float *out)
{
    int ncb = (ci + 3) / 4, taps = kh * kw;
    for (int cb = 0; cb < ncb; cb++)
        for (int o = 0; o < co; o++)
            for (int i = 0; i < kh; i++)
                for (int j = 0; j < kw; j++)
                    for (int q = 0; q < 4; q++) {
                        int c = 4 * cb + q;
                        *out++ = c < ci ? w[((size_t)o * ci + c) * taps +
                                            (size_t)(kh - 1 - i) * kw + (kw - 1 - j)]
                                        : 0.0f;
                    }
}

#ifdef CT_HOST_X86

static CT_AVX2 inline __m256i tail_mask(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static CT_AVX2 inline void store_vec(float *dst, __m256 v, int n)
{
    if (n >= 8)
        _mm256_storeu_ps(dst, v);
    else
        _mm256_maskstore_ps(dst, tail_mask(n), v);
}

/* One vector of 8 pixels of each of the block's valid channels. */
static CT_AVX2 inline void store_row(float *y, size_t P, int cvalid, int n, __m256 c0,
                                     __m256 c1, __m256 c2, __m256 c3)
{
    store_vec(y, c0, n);
    if (cvalid > 1)
        store_vec(y + P, c1, n);
    if (cvalid > 2)
        store_vec(y + 2 * P, c2, n);
    if (cvalid > 3)
        store_vec(y + 3 * P, c3, n);
}

/* One tile: 4 output channels x NV vectors of 8 output pixels. The vectors
 * run along the output rows and may continue on the next row, so narrow
 * images fill tiles too: vector v reads the padded input at xs + dv[v] and
 * writes y + ov[v], with nv[v] valid pixels (the rest masked off). off[t]:
 * where tap t (channel, kernel row, kernel column) reads relative to
 * that; wk: the block's packed weights. One flat loop over the taps keeps
 * the 4 NV sums in registers. */
/* One output channel's part of a tap: its weight times the tile's vectors. */
#define TILE_CHANNEL(NV, Q, S0, S1, S2)                                                           \
    do {                                                                                          \
        __m256 w = _mm256_broadcast_ss(wk + (Q));                                                 \
        S0 = _mm256_fmadd_ps(w, x0, S0);                                                          \
        if (NV > 1)                                                                               \
            S1 = _mm256_fmadd_ps(w, x1, S1);                                                      \
        if (NV > 2)                                                                               \
            S2 = _mm256_fmadd_ps(w, x2, S2);                                                      \
    } while (0)

#define DEF_TILE(NV)                                                                              \
    static CT_AVX2 void tile##NV(const float *xs, const long *dv, const int *off, int taps,      \
                              const float *wk, float *y, const long *ov, const int *nv, size_t P, \
                              int cvalid, const float *b4)                                        \
    {                                                                                             \
        /* named sums, not arrays: GCC keeps arrays of vectors in memory */                       \
        __m256 a00, a01, a02, a10, a11, a12, a20, a21, a22, a30, a31, a32;                        \
        a00 = a01 = a02 = _mm256_set1_ps(b4[0]);                                                  \
        a10 = a11 = a12 = _mm256_set1_ps(b4[1]);                                                  \
        a20 = a21 = a22 = _mm256_set1_ps(b4[2]);                                                  \
        a30 = a31 = a32 = _mm256_set1_ps(b4[3]);                                                  \
        const float *x0p = xs + dv[0], *x1p = xs + dv[NV > 1 ? 1 : 0];                            \
        const float *x2p = xs + dv[NV > 2 ? 2 : 0];                                               \
        for (int t = 0; t < taps; t++, wk += 4) {                                                 \
            long o = off[t];                                                                      \
            __m256 x0 = _mm256_loadu_ps(x0p + o), x1 = x0, x2 = x0;                                \
            if (NV > 1)                                                                           \
                x1 = _mm256_loadu_ps(x1p + o);                                                    \
            if (NV > 2)                                                                           \
                x2 = _mm256_loadu_ps(x2p + o);                                                    \
            TILE_CHANNEL(NV, 0, a00, a01, a02);                                                   \
            TILE_CHANNEL(NV, 1, a10, a11, a12);                                                   \
            TILE_CHANNEL(NV, 2, a20, a21, a22);                                                   \
            TILE_CHANNEL(NV, 3, a30, a31, a32);                                                   \
        }                                                                                         \
        store_row(y + ov[0], P, cvalid, nv[0], a00, a10, a20, a30);                               \
        if (NV > 1)                                                                               \
            store_row(y + ov[NV > 1 ? 1 : 0], P, cvalid, nv[NV > 1 ? 1 : 0], a01, a11, a21, a31); \
        if (NV > 2)                                                                               \
            store_row(y + ov[NV > 2 ? 2 : 0], P, cvalid, nv[NV > 2 ? 2 : 0], a02, a12, a22, a32); \
    }

DEF_TILE(1)
DEF_TILE(2)
DEF_TILE(3)

/* Channel blocks [cb0, cb1) of one image from its padded planes: the
 * output's 8-pixel vectors in row order, three to a tile. */
static CT_AVX2 void forward_blocks(const dconv *p, const float *xp, int cb0, int cb1,
                                   float *yimg)
{
    size_t P = (size_t)p->oh * p->ow;
    int taps = p->ci * p->kh * p->kw, vpr = (p->ow + 7) / 8, nvec = p->oh * vpr;
    size_t wblock = (size_t)taps * 4;
    for (int cb = cb0; cb < cb1; cb++) {
        const float *wk = p->wpk + (size_t)cb * wblock;
        int cvalid = p->co - 4 * cb < 4 ? p->co - 4 * cb : 4;
        float b4[4] = { 0, 0, 0, 0 };
        for (int q = 0; q < cvalid && p->bias; q++)
            b4[q] = p->bias[4 * cb + q];
        float *yc = yimg + (size_t)4 * cb * P;
        for (int v0 = 0; v0 < nvec; v0 += 3) {
            long dv[3], ov[3];
            int nv[3], k = nvec - v0 < 3 ? nvec - v0 : 3;
            for (int v = 0; v < k; v++) {
                int r = (v0 + v) / vpr, o = (v0 + v) % vpr * 8;
                dv[v] = (long)r * p->wpp + o;
                ov[v] = (long)r * p->ow + o;
                nv[v] = p->ow - o;
            }
            if (k == 3)
                tile3(xp, dv, p->off, taps, wk, yc, ov, nv, P, cvalid, b4);
            else if (k == 2)
                tile2(xp, dv, p->off, taps, wk, yc, ov, nv, P, cvalid, b4);
            else
                tile1(xp, dv, p->off, taps, wk, yc, ov, nv, P, cvalid, b4);
        }
    }
}

static void forward_item(void *arg, size_t item, int thread)
{
    const dconv *p = arg;
    int n = (int)(item / (size_t)p->items_per_img), g = (int)(item % (size_t)p->items_per_img);
    float *xp = p->hw->scratch[thread];
    if (p->hw->cached[thread] != n) {
        pad_planes(p, p->x + (size_t)n * p->x_img, p->ci, xp);
        p->hw->cached[thread] = n;
    }
    int cb0 = g * p->group, cb1 = cb0 + p->group < p->ncb ? cb0 + p->group : p->ncb;
    forward_blocks(p, xp, cb0, cb1, p->y + (size_t)n * p->y_img);
}

static CT_AVX2 float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* dw of the output channel blocks [g group, (g + 1) group) and input
 * channel c, over the whole batch: for each block, kernel row and group of
 * 3 taps, 4 x 3 vector sums over the output pixels, kept in scratch between
 * images. Several blocks share each padded plane, which amortizes the
 * padding copy. */
static CT_AVX2 void weight_item(void *arg, size_t item, int thread)
{
    const dconv *p = arg;
    int g = (int)(item / (size_t)p->ci), c = (int)(item % (size_t)p->ci);
    int cb0 = g * p->group, cb1 = cb0 + p->group < p->ncb ? cb0 + p->group : p->ncb;
    int nch = (p->kw + 2) / 3;
    size_t P = (size_t)p->oh * p->ow;
    float *xp = p->hw->scratch[thread];
    __m256 *acc0 = (__m256 *)(void *)(xp + p->plane + 16);
    size_t per_block = (size_t)p->kh * nch * 12;
    for (size_t k = 0; k < per_block * (size_t)(cb1 - cb0); k++)
        acc0[k] = _mm256_setzero_ps();
    int full = p->ow / 8 * 8, tail = p->ow - full;
    for (int n = 0; n < p->n; n++) {
        pad_planes(p, p->x + (size_t)n * p->x_img + (size_t)c * p->h * p->w, 1, xp);
        for (int cb = cb0; cb < cb1; cb++) {
            int cvalid = p->co - 4 * cb < 4 ? p->co - 4 * cb : 4;
            __m256 *acc = acc0 + per_block * (size_t)(cb - cb0);
            const float *dyq[4];
            for (int q = 0; q < 4; q++)
                dyq[q] = p->dy + (size_t)n * p->y_img +
                         (size_t)(4 * cb + (q < cvalid ? q : cvalid - 1)) * P;
            for (int i = 0; i < p->kh; i++)
                for (int ch = 0; ch < nch; ch++) {
                    __m256 *a = acc + ((size_t)i * nch + ch) * 12;
                    __m256 s00 = a[0], s01 = a[1], s02 = a[2], s10 = a[3], s11 = a[4], s12 = a[5];
                    __m256 s20 = a[6], s21 = a[7], s22 = a[8], s30 = a[9], s31 = a[10], s32 = a[11];
                    for (int r = 0; r < p->oh; r++) {
                        const float *xr = xp + (size_t)(r + i) * p->wpp + 3 * ch;
                        size_t ro = (size_t)r * p->ow;
                        /* full vectors, then the row's tail with dy masked to 0 (past the row
                         * it would read the next one); the mask is built only there, so
                         * the 12 sums, 3 x vectors and 1 dy vector fit the 16 registers */
#define DW_CHANNEL(LOAD, Q, S0, S1, S2)                                                           \
    do {                                                                                          \
        __m256 d = LOAD(dyq[Q] + ro + o);                                                         \
        S0 = _mm256_fmadd_ps(d, x0, S0);                                                          \
        S1 = _mm256_fmadd_ps(d, x1, S1);                                                          \
        S2 = _mm256_fmadd_ps(d, x2, S2);                                                          \
    } while (0)
#define DW_STEP(LOAD)                                                                             \
    do {                                                                                          \
        __m256 x0 = _mm256_loadu_ps(xr + o), x1 = _mm256_loadu_ps(xr + o + 1);                   \
        __m256 x2 = _mm256_loadu_ps(xr + o + 2);                                                  \
        DW_CHANNEL(LOAD, 0, s00, s01, s02);                                                       \
        DW_CHANNEL(LOAD, 1, s10, s11, s12);                                                       \
        DW_CHANNEL(LOAD, 2, s20, s21, s22);                                                       \
        DW_CHANNEL(LOAD, 3, s30, s31, s32);                                                       \
    } while (0)
#define LOAD_FULL(ptr) _mm256_loadu_ps(ptr)
#define LOAD_TAIL(ptr) _mm256_maskload_ps(ptr, tail_mask(tail))
                        int o = 0;
                        for (; o < full; o += 8)
                            DW_STEP(LOAD_FULL);
                        if (tail)
                            DW_STEP(LOAD_TAIL);
#undef LOAD_FULL
#undef LOAD_TAIL
#undef DW_STEP
#undef DW_CHANNEL
                    }
                    a[0] = s00, a[1] = s01, a[2] = s02, a[3] = s10, a[4] = s11, a[5] = s12;
                    a[6] = s20, a[7] = s21, a[8] = s22, a[9] = s30, a[10] = s31, a[11] = s32;
                }
        }
    }
    size_t taps = (size_t)p->kh * p->kw;
    for (int cb = cb0; cb < cb1; cb++) {
        int cvalid = p->co - 4 * cb < 4 ? p->co - 4 * cb : 4;
        const __m256 *acc = acc0 + per_block * (size_t)(cb - cb0);
        for (int q = 0; q < cvalid; q++) {
            float *dwq = p->dw + ((size_t)(4 * cb + q) * p->ci + c) * taps;
            for (int i = 0; i < p->kh; i++)
                for (int j = 0; j < p->kw; j++)
                    dwq[(size_t)i * p->kw + j] += hsum(acc[((size_t)i * nch + j / 3) * 12 + q * 3 + j % 3]);
        }
    }
}

static CT_AVX2 void bias_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const dconv *p = arg;
    size_t P = (size_t)p->oh * p->ow, full = P / 8 * 8;
    __m256 s = _mm256_setzero_ps();
    float t = 0;
    for (int n = 0; n < p->n; n++) {
        const float *d = p->dy + (size_t)n * p->y_img + item * P;
        for (size_t k = 0; k < full; k += 8)
            s = _mm256_add_ps(s, _mm256_loadu_ps(d + k));
        for (size_t k = full; k < P; k++)
            t += d[k];
    }
    p->db[item] += hsum(s) + t;
}

#endif /* CT_HOST_X86 */

int ct_conv2d_host_ok(const ct_context *ctx, const ct_conv2d_desc *d)
{
    if (!ctx || !d || !ctx->cls.host_conv || !ct_host_avx2_fma())
        return 0;
    /* strided 1x1 convolutions: AVX-512 only */
    if (d->stride_h != 1 || d->stride_w != 1) {
        int oh = 0, ow = 0;
        return ct_host_avx512() && ct_conv512_applies(d) && !ct_conv2d_out_shape(NULL, d, &oh, &ow);
    }
    if (d->stride_h != 1 || d->stride_w != 1 || d->dil_h != 1 || d->dil_w != 1 ||
        d->pad_h >= d->kh || d->pad_w >= d->kw)
        return 0;
    /* 16-bit operands: only the AVX-512 forms round them; the others take
     * im2col and the host GEMM, which does */
    if (ctx->precision != CT_PRECISION_FP32 && !(ct_host_avx512() && ct_conv512_applies(d)))
        return 0;
    int oh = 0, ow = 0;
    if (ct_conv2d_out_shape(NULL, d, &oh, &ow))
        return 0;
    /* both directions' padded planes must stay well inside int range */
    size_t big = (size_t)(d->h + 2 * d->kh) * (size_t)(d->w + 2 * d->kw + 8);
    size_t c = (size_t)(d->c_in > d->c_out ? d->c_in : d->c_out);
    return big * c < ((size_t)1 << 30);
}

#ifdef CT_HOST_X86
static void set_items(dconv *p, int threads)
{
    /* whole images when there are enough; else images x channel blocks */
    p->group = p->n >= 2 * threads ? p->ncb : 1;
    p->items_per_img = (p->ncb + p->group - 1) / p->group;
}
#endif

int ct_conv2d_host_forward(ct_context *ctx, const ct_conv2d_desc *d, ct_buf y, ct_buf x, ct_buf w,
                           ct_buf b)
{
#ifdef CT_HOST_X86
    if (!ct_conv2d_host_ok(ctx, d))
        return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d host path: this convolution or device "
                       "is not supported by it");
    dconv p;
    memset(&p, 0, sizeof p);
    geometry(&p, d->n, d->c_in, d->h, d->w, d->c_out, d->kh, d->kw, d->pad_h, d->pad_w);
    output_shape(&p, d);
    size_t nw = (size_t)d->c_out * d->c_in * d->kh * d->kw;
    ct_host_work *hw = NULL;
    size_t taps = (size_t)d->c_in * d->kh * d->kw;
    int wide = ct_host_avx512() && ct_conv512_applies(d), st;
    if (!wide && (st = ct_host_work_get(ctx, (size_t)p.ci * p.plane + 16, (size_t)p.ncb * 4 * taps,
                                        taps, &hw)))
        return st;
    ct_hmap_range r[4] = {
        { x.mem, x.off, (size_t)d->n * p.x_img, 0, NULL },
        { w.mem, w.off, nw, 0, NULL },
        { b.mem, b.off, b.mem ? (size_t)d->c_out : 0, 0, NULL },
        { y.mem, y.off, (size_t)d->n * p.y_img, 1, NULL },
    };
    ct_hmap hm;
    if ((st = ct_hmap_map(ctx, r, 4, &hm, "conv2d forward")))
        return st;
    if (wide) {
        st = ct_conv512_forward(ctx, d, r[3].host, r[0].host, r[1].host, r[2].host);
        return ct_hmap_unmap(ctx, &hm, st, "conv2d forward");
    }
    pack_forward(r[1].host, d->c_out, d->c_in, d->kh, d->kw, hw->wpack);
    p.x = r[0].host;
    p.bias = r[2].host;
    p.y = r[3].host;
    p.wpk = hw->wpack;
    tap_offsets(&p, hw->toff);
    p.off = hw->toff;
    p.hw = hw;
    set_items(&p, hw->threads);
    ct_pool_run(hw->pool, (size_t)p.n * p.items_per_img, forward_item, &p);
    return ct_hmap_unmap(ctx, &hm, CT_OK, "conv2d forward");
#else
    (void)d, (void)y, (void)x, (void)w, (void)b;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d host path: not built for this CPU");
#endif
}

int ct_conv2d_host_backward(ct_context *ctx, const ct_conv2d_desc *d, ct_buf dx, ct_buf dw,
                            ct_buf db, ct_buf dy, ct_buf x, ct_buf w)
{
#ifdef CT_HOST_X86
    if (!ct_conv2d_host_ok(ctx, d))
        return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d host path: this convolution or device "
                       "is not supported by it");
    /* the input gradient as a forward convolution of dy */
    dconv g, f;
    memset(&g, 0, sizeof g);
    memset(&f, 0, sizeof f);
    geometry(&f, d->n, d->c_in, d->h, d->w, d->c_out, d->kh, d->kw, d->pad_h, d->pad_w);
    geometry(&g, d->n, d->c_out, f.oh, f.ow, d->c_in, d->kh, d->kw, d->kh - 1 - d->pad_h,
             d->kw - 1 - d->pad_w);
    output_shape(&f, d);
    size_t taps = (size_t)d->kh * d->kw, nw = (size_t)d->c_out * d->c_in * taps;
    /* Which kernels: AVX-512; else an unpadded stride-1 1x1 through the
     * host BLAS (a strided one only reaches here with AVX-512,
     * ct_conv2d_host_ok); else the AVX2 kernels below, the only ones that
     * need this file's scratch. (The 1x1s that widen a large plane,
     * ResNet-50's 64 -> 256 at 56x56, went to the host BLAS on AVX-512 too
     * until the weight gradient's broadcast form: backward 16.3 -> 13.7 ms
     * each on the AVX-512 kernels.) */
    int blas_1x1 = d->kh == 1 && d->kw == 1 && d->pad_h == 0 && d->pad_w == 0 &&
                   d->stride_h == 1 && d->stride_w == 1;
    int wide = ct_host_avx512() && ct_conv512_applies(d);
    ct_host_work *hw;
    int st;
    if (wide || blas_1x1) {
        st = ct_host_work_get(ctx, 16, 16, 1, &hw);
    } else {
        /* weight-gradient items: (channel blocks, input channel), as many
         * blocks per item as still leaves 4 items per thread */
        int threads = ct_host_work_threads(ctx);
        f.group = f.ncb;
        while (f.group > 1 && (size_t)d->c_in * (size_t)((f.ncb + f.group - 1) / f.group) <
                                  4 * (size_t)(threads > 0 ? threads : 1))
            f.group = (f.group + 1) / 2;
        size_t nacc = (size_t)f.group * d->kh * ((d->kw + 2) / 3) * 12 * 8;
        size_t need_g = dx.mem ? (size_t)g.ci * g.plane + 16 : 0;
        size_t need_f = f.plane + 16 + 16 + nacc;
        st = ct_host_work_get(ctx, need_g > need_f ? need_g : need_f,
                              dx.mem ? (size_t)g.ncb * 4 * d->c_out * taps : 16,
                              (size_t)d->c_out * taps, &hw);
    }
    if (st)
        return st;
    ct_hmap_range r[6] = {
        { dy.mem, dy.off, (size_t)d->n * f.y_img, 0, NULL },
        { x.mem, x.off, dw.mem ? (size_t)d->n * f.x_img : 0, 0, NULL },
        { w.mem, w.off, dx.mem ? nw : 0, 0, NULL },
        { dx.mem, dx.off, (size_t)d->n * f.x_img, 1, NULL },
        { dw.mem, dw.off, nw, 1, NULL },
        { db.mem, db.off, (size_t)d->c_out, 1, NULL },
    };
    ct_hmap hm;
    if ((st = ct_hmap_map(ctx, r, 6, &hm, "conv2d backward")))
        return st;
    f.dy = r[0].host;
    f.x = r[1].host;
    f.dw = r[4].host;
    f.db = r[5].host;
    f.hw = hw;
    if (wide) {
        st = ct_conv512_backward(ctx, d, dx.mem ? r[3].host : NULL, dw.mem ? r[4].host : NULL,
                                 f.dy, f.x, r[2].host);
        if (!st && db.mem)
            ct_pool_run(hw->pool, (size_t)d->c_out, bias_item, &f);
        return ct_hmap_unmap(ctx, &hm, st, "conv2d backward");
    }
    if (blas_1x1) {
        /* 1x1, unpadded: an image (c_in, P) is its own column matrix, so both
         * gradients are plain products through the host BLAS, an image at a
         * time in image order (the tap-group kernels below would compute
         * three taps to use one, and stream dy once per input channel) */
        size_t P = (size_t)f.oh * f.ow;
        int ci = d->c_in, co = d->c_out, np = (int)P;
        for (int n = 0; n < d->n; n++) {
            const float *dyn = f.dy + (size_t)n * f.y_img;
            if (dx.mem) /* dx_n (c_in, P) = w^T (c_in, c_out) . dy_n (c_out, P) */
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, ci, np, co, 1.0f, r[2].host, ci,
                            dyn, np, 0.0f, r[3].host + (size_t)n * f.x_img, np);
            if (dw.mem) /* dw (c_out, c_in) += dy_n (c_out, P) . x_n^T (P, c_in) */
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, co, ci, np, 1.0f, dyn, np,
                            f.x + (size_t)n * f.x_img, np, 1.0f, f.dw, ci);
        }
        if (db.mem)
            ct_pool_run(hw->pool, (size_t)d->c_out, bias_item, &f);
        return ct_hmap_unmap(ctx, &hm, CT_OK, "conv2d backward");
    }
    if (dx.mem) {
        pack_backward(r[2].host, d->c_out, d->c_in, d->kh, d->kw, hw->wpack);
        g.x = r[0].host;
        g.y = r[3].host;
        g.wpk = hw->wpack;
        tap_offsets(&g, hw->toff);
        g.off = hw->toff;
        g.hw = hw;
        set_items(&g, hw->threads);
        ct_pool_run(hw->pool, (size_t)g.n * g.items_per_img, forward_item, &g);
    }
    if (dw.mem)
        ct_pool_run(hw->pool, (size_t)((f.ncb + f.group - 1) / f.group) * f.ci, weight_item, &f);
    if (db.mem)
        ct_pool_run(hw->pool, (size_t)d->c_out, bias_item, &f);
    return ct_hmap_unmap(ctx, &hm, CT_OK, "conv2d backward");
#else
    (void)d, (void)dx, (void)dw, (void)db, (void)dy, (void)x, (void)w;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d host path: not built for this CPU");
#endif
}
