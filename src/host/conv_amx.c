/*
 * conv_amx.c - "same" stride-1 convolutions with bf16 operands on AMX
 * tiles, forward and input gradient (conv_amx.h).
 *
 * An implicit GEMM whose B tiles are loaded straight from an image copy:
 * the copy is made of bf16 pairs of input channels (a 32-bit lane holds
 * channels 2c and 2c + 1 of one pixel, as conv_same512.c's pair image),
 * padded with zeros to Wp = w + kw - 1 columns and Hp = oh + kh - 1 rows
 * so that output pixel (r, col), flattened in the padded width as
 * q = r Wp + col, reads element q + i Wp + j of every pair plane at tap
 * (i, j): 16 consecutive q of kb pair planes are one B tile (kb pair rows
 * of 16 pixels, the row stride the plane's), the same tile shape at every
 * tap, no im2col. A tiles are the weights of a tap, 16 output channels x
 * kb channel pairs, packed once per call as (tap, pair block, channel, kb).
 * A tile of sums is 16 output channels x 16 q; per tap and pair block two
 * A and two B tiles feed four TDPBF16PS (32 channels x 32 q), or with 16
 * output channels one A and four B loads feed four. The Wp - w columns of
 * each row that fall in the padding are computed and dropped at the store
 * (a scatter of the valid lanes, plus the bias).
 *
 * Every output element is one tile's sum over the taps and pair blocks in
 * a fixed order, so results do not depend on the thread count. Products
 * of bf16 operands are exact; AMX sums them in float32 (treating bf16
 * subnormals as zero).
 */
#include "host/conv_amx.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef CT_HOST_X86
#include "host/vmath512.h"

typedef struct aconv {
    int n, ci, h, w, co, kh, kw, ph, pw, oh, flip;
    int wp, cu, kb, cup, ncpb, cop, taps, mo; /* mo: 16-channel tiles per block of sums (1 or 2) */
    size_t plane;                             /* uint32 per padded pair plane */
    size_t nq;                                /* q tiles of 16 */
    int items_per_img, oblocks;
    const float *x, *bias;
    float *y;
    const uint32_t *wa;
    const int32_t *dst; /* per q: the output pixel r w + col, or -1 in the padding */
    ct_host_work *hw;
} aconv;

static uint32_t bf16_bits(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (u >> 16) | 0x40u;
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

/* The weight of the convolution the tiles compute: forward w(o, c, i, j),
 * or (flip) the input gradient's w(c, o, kh-1-i, kw-1-j); zero outside. */
static float wt(const aconv *p, const float *w, int o, int c, int i, int j)
{
    if (o >= p->co || c >= p->ci)
        return 0.0f;
    if (!p->flip)
        return w[((size_t)o * p->ci + c) * p->kh * p->kw + (size_t)i * p->kw + j];
    return w[((size_t)c * p->co + o) * p->kh * p->kw + (size_t)(p->kh - 1 - i) * p->kw + (p->kw - 1 - j)];
}

static void pack_weights(const aconv *p, const float *w, uint32_t *d)
{
    for (int t = 0; t < p->taps; t++)
        for (int b = 0; b < p->ncpb; b++)
            for (int o = 0; o < p->cop; o++)
                for (int k = 0; k < p->kb; k++) {
                    int c = 2 * (b * p->kb + k), i = t / p->kw, j = t % p->kw;
                    *d++ = bf16_bits(wt(p, w, o, c, i, j)) | bf16_bits(wt(p, w, o, c + 1, i, j)) << 16;
                }
}

/* Image n as padded pair planes in d (p->cup planes of p->plane) */
static CT_AVX512BF16 void pair_image(const aconv *p, int n, uint32_t *d)
{
    const float *x = p->x + (size_t)n * p->ci * p->h * p->w;
    size_t hw = (size_t)p->h * p->w;
    memset(d, 0, (size_t)p->cup * p->plane * sizeof *d);
    for (int c = 0; c < p->ci; c += 2, d += p->plane) {
        const float *lo = x + (size_t)c * hw, *hi = c + 1 < p->ci ? lo + hw : NULL;
        for (int r = 0; r < p->h; r++) {
            uint32_t *row = d + (size_t)(r + p->ph) * p->wp + p->pw;
            for (int e = 0; e < p->w; e += 16) {
                __mmask16 m = ct_tail16((size_t)(p->w - e));
                __m512 a = _mm512_maskz_loadu_ps(m, lo + (size_t)r * p->w + e);
                __m512 b = hi ? _mm512_maskz_loadu_ps(m, hi + (size_t)r * p->w + e) : _mm512_setzero_ps();
                __m512i l16 = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(a));
                __m512i h16 = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(b));
                _mm512_mask_storeu_epi32(row + e, m, _mm512_or_si512(l16, _mm512_slli_epi32(h16, 16)));
            }
        }
    }
}

typedef struct amx_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_config;

/* The sums' rows o0 .. o0 + rows of y (image yimg) from t (rows of 16 nq
 * lanes, q from q0), plus the bias; lanes in the padding dropped */
static CT_AVX512 void store(const aconv *p, const float *t, int ld, float *yimg, int o0, int rows, size_t q0,
                            int nq)
{
    size_t P = (size_t)p->oh * p->w;
    for (int o = 0; o < rows && o0 + o < p->co; o++) {
        __m512 b = _mm512_set1_ps(p->bias ? p->bias[o0 + o] : 0.0f);
        float *yo = yimg + (size_t)(o0 + o) * P;
        for (int s = 0; s < nq && q0 + 16 * (size_t)s < p->nq * 16; s++) {
            __m512i idx = _mm512_loadu_si512(p->dst + q0 + 16 * (size_t)s);
            __mmask16 m = _mm512_cmpge_epi32_mask(idx, _mm512_setzero_si512());
            __m512 v = _mm512_add_ps(_mm512_loadu_ps(t + (size_t)o * ld + 16 * s), b);
            _mm512_mask_i32scatter_ps(yo, m, idx, v, 4);
        }
    }
}

static CT_AMX void item_fn(void *arg, size_t item, int thread)
{
    const aconv *p = arg;
    int n = (int)(item / (size_t)p->items_per_img), g = (int)(item % (size_t)p->items_per_img);
    int per = (p->oblocks + p->items_per_img - 1) / p->items_per_img;
    int ob0 = g * per, ob1 = ob0 + per < p->oblocks ? ob0 + per : p->oblocks;
    uint32_t *img = (uint32_t *)(void *)p->hw->scratch[thread];
    if (p->hw->cached[thread] != n) {
        pair_image(p, n, img);
        p->hw->cached[thread] = n;
    }
    float *yimg = p->y + (size_t)n * p->co * p->oh * p->w;
    _Alignas(64) float t[32 * 64];
    _Alignas(64) amx_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int i = 0; i < 4; i++)
        cfg.rows[i] = 16, cfg.colsb[i] = 64;
    cfg.rows[4] = cfg.rows[5] = 16, cfg.colsb[4] = cfg.colsb[5] = (uint16_t)(4 * p->kb);
    cfg.rows[6] = cfg.rows[7] = (uint8_t)p->kb, cfg.colsb[6] = cfg.colsb[7] = 64;
    _tile_loadconfig(&cfg);
    __asm__ volatile("" ::: "memory"); /* the tile instructions' asm names no memory */
    size_t sa = (size_t)4 * p->kb, sb = p->plane * 4, ablk = (size_t)p->cop * p->kb;
    int qstep = p->mo == 2 ? 2 : 4;
    for (int ob = ob0; ob < ob1; ob++) {
        int o0 = ob * 16 * p->mo;
        for (size_t qt = 0; qt < p->nq; qt += (size_t)qstep) {
            size_t q0 = qt * 16;
            _tile_zero(0);
            _tile_zero(1);
            _tile_zero(2);
            _tile_zero(3);
            for (int tap = 0; tap < p->taps; tap++) {
                size_t off = q0 + (size_t)(tap / p->kw) * p->wp + (size_t)(tap % p->kw);
                const uint32_t *wa = p->wa + (size_t)tap * p->ncpb * ablk + (size_t)o0 * p->kb;
                const uint32_t *xb = img + off;
                for (int b = 0; b < p->ncpb; b++, wa += ablk, xb += (size_t)p->kb * p->plane) {
                    if (p->mo == 2) {
                        _tile_loadd(4, wa, sa);
                        _tile_loadd(5, wa + 16 * p->kb, sa);
                        _tile_loadd(6, xb, sb);
                        _tile_loadd(7, xb + 16, sb);
                        _tile_dpbf16ps(0, 4, 6);
                        _tile_dpbf16ps(1, 4, 7);
                        _tile_dpbf16ps(2, 5, 6);
                        _tile_dpbf16ps(3, 5, 7);
                    } else {
                        _tile_loadd(4, wa, sa);
                        _tile_loadd(6, xb, sb);
                        _tile_loadd(7, xb + 16, sb);
                        _tile_dpbf16ps(0, 4, 6);
                        _tile_dpbf16ps(1, 4, 7);
                        _tile_loadd(6, xb + 32, sb);
                        _tile_loadd(7, xb + 48, sb);
                        _tile_dpbf16ps(2, 4, 6);
                        _tile_dpbf16ps(3, 4, 7);
                    }
                }
            }
            if (p->mo == 2) { /* 32 channels x 32 q, rows of 32 */
                _tile_stored(0, t, 128);
                _tile_stored(1, t + 16, 128);
                _tile_stored(2, t + 16 * 32, 128);
                _tile_stored(3, t + 16 * 32 + 16, 128);
                __asm__ volatile("" ::: "memory");
                store(p, t, 32, yimg, o0, 32, q0, 2);
            } else { /* 16 channels x 64 q, rows of 64 */
                _tile_stored(0, t, 256);
                _tile_stored(1, t + 16, 256);
                _tile_stored(2, t + 32, 256);
                _tile_stored(3, t + 48, 256);
                __asm__ volatile("" ::: "memory");
                store(p, t, 64, yimg, o0, 16, q0, 4);
            }
        }
    }
    _tile_release();
}

int ct_conv_amx_same(ct_context *ctx, const ct_conv2d_desc *d, int flip, float *y, const float *x,
                     const float *w, const float *b)
{
    aconv p;
    memset(&p, 0, sizeof p);
    /* the convolution the tiles compute: flip runs the input gradient, dy
     * (n, c_out, oh, w) into dx (n, c_in, h, w) with the padding mirrored */
    int oh = d->h + 2 * d->pad_h - d->kh + 1;
    p.n = d->n, p.kh = d->kh, p.kw = d->kw, p.w = d->w, p.flip = flip;
    if (!flip) {
        p.ci = d->c_in, p.co = d->c_out, p.h = d->h, p.ph = d->pad_h, p.pw = d->pad_w;
    } else {
        p.ci = d->c_out, p.co = d->c_in, p.h = oh, p.ph = d->kh - 1 - d->pad_h, p.pw = d->kw - 1 - d->pad_w;
    }
    p.oh = p.h + 2 * p.ph - p.kh + 1;
    p.wp = p.w + p.kw - 1;
    p.taps = p.kh * p.kw;
    p.cu = (p.ci + 1) / 2;
    p.kb = p.cu < 16 ? p.cu : 16;
    p.cup = (p.cu + p.kb - 1) / p.kb * p.kb;
    p.ncpb = p.cup / p.kb;
    p.mo = p.co > 16 ? 2 : 1;
    p.cop = (p.co + 16 * p.mo - 1) / (16 * p.mo) * 16 * p.mo;
    p.oblocks = p.cop / (16 * p.mo);
    int qstep = p.mo == 2 ? 2 : 4;
    size_t nq = ((size_t)p.oh * p.wp + 15) / 16;
    p.nq = (nq + (size_t)qstep - 1) / (size_t)qstep * (size_t)qstep; /* whole blocks of sums */
    /* the last block's B tiles read up to q 16 nq - 1 + (kh - 1) Wp + kw - 1 */
    p.plane = (p.nq * 16 + (size_t)(p.kh - 1) * p.wp + (size_t)p.kw + 15) / 16 * 16;
    if ((size_t)(p.oh + p.kh - 1) * p.wp > p.plane)
        p.plane = ((size_t)(p.oh + p.kh - 1) * p.wp + 15) / 16 * 16;
    int32_t *dst = malloc(p.nq * 16 * sizeof *dst);
    if (!dst)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d host path: out of host memory");
    for (size_t q = 0; q < p.nq * 16; q++) {
        size_t r = q / (size_t)p.wp, col = q % (size_t)p.wp;
        dst[q] = r < (size_t)p.oh && col < (size_t)p.w ? (int32_t)(r * (size_t)p.w + col) : -1;
    }
    ct_host_work *hw;
    size_t wn = (size_t)p.taps * p.cup * p.cop;
    int st = ct_host_work_get(ctx, (size_t)p.cup * p.plane + 16, wn, 1, &hw);
    if (!st) {
        pack_weights(&p, w, (uint32_t *)(void *)hw->wpack);
        p.x = x, p.y = y, p.bias = b, p.wa = (const uint32_t *)(const void *)hw->wpack, p.dst = dst, p.hw = hw;
        p.items_per_img = p.n >= 2 * hw->threads ? 1 : p.oblocks;
        ct_pool_run(hw->pool, (size_t)p.n * p.items_per_img, item_fn, &p);
    }
    free(dst);
    return st;
}

#else

int ct_conv_amx_same(ct_context *ctx, const ct_conv2d_desc *d, int flip, float *y, const float *x,
                     const float *w, const float *b)
{
    (void)d, (void)flip, (void)y, (void)x, (void)w, (void)b;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d host path: AMX not built for this CPU");
}

#endif
