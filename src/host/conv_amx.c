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
#include "host/amx.h"
#include "host/conv_same512.h"
#include "host/vmath512.h"

typedef struct aconv {
    int n, ci, h, w, co, kh, kw, ph, pw, oh;
    int wp, cu, kb, cup, ncpb, cop, taps, mo; /* mo: 16-channel tiles per block of sums (1 or 2) */
    int qstep;                                /* q tiles per block of sums: 32 mo q in all */
    size_t plane;                             /* uint32 per padded pair plane */
    size_t nq;                                /* q tiles of 16 */
    int items_per_img, oblocks;
    const float *x, *bias;
    float *y;
    const uint32_t *wa;
    const int32_t *dst; /* per q: the output pixel r w + col, or -1 in the padding */
    ct_host_work *hw;
} aconv;

/* The weights as A tiles: (tap, pair block, p->cop channels, kb pairs) */
static void pack_weights(const aconv *p, const ct_conv512_wsrc *ws, uint32_t *d)
{
    for (int t = 0; t < p->taps; t++)
        for (int b = 0; b < p->ncpb; b++)
            for (int o = 0; o < p->cop; o++)
                for (int k = 0; k < p->kb; k++)
                    *d++ = ct_conv512_weight_pair(ws, o, 2 * (b * p->kb + k), t / p->kw, t % p->kw);
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
                _mm512_mask_storeu_epi32(row + e, m, ct_v_bf16_pairs(a, b));
            }
        }
    }
}

/* The sums' rows o0 .. o0 + rows of y (image yimg) from t (rows of 16 nq
 * lanes, q from q0), plus the bias; lanes in the padding dropped */
static CT_AVX512 void store(const aconv *p, const float *t, int ld, float *yimg, int o0, int rows, size_t q0,
                            int nq)
{
    size_t P = (size_t)p->oh * p->w;
    for (int o = 0; o < rows && o0 + o < p->co; o++) {
        __m512 b = _mm512_set1_ps(p->bias ? p->bias[o0 + o] : 0.0f);
        float *yo = yimg + (size_t)(o0 + o) * P;
        for (int s = 0; s < nq; s++) {
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
    _Alignas(64) ct_amx_config cfg; /* A tiles of kb pairs, B tiles of kb pair rows */
    ct_amx_config_full(&cfg);
    cfg.colsb[4] = cfg.colsb[5] = (uint16_t)(4 * p->kb);
    cfg.rows[6] = cfg.rows[7] = (uint8_t)p->kb, cfg.colsb[6] = cfg.colsb[7] = 64;
    _tile_loadconfig(&cfg);
    __asm__ volatile("" ::: "memory"); /* the tile instructions' asm names no memory */
    size_t sa = (size_t)4 * p->kb, sb = p->plane * 4, ablk = (size_t)p->cop * p->kb;
    for (int ob = ob0; ob < ob1; ob++) {
        int o0 = ob * 16 * p->mo;
        for (size_t qt = 0; qt < p->nq; qt += (size_t)p->qstep) {
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

/* The frame both directions share: an (n, ci, h, w) input padded by ph, pw
 * against (co, ci, kh, kw) weights, oh output rows, wp padded columns */
static void frame(aconv *p, int n, int ci, int co, int h, int w, int kh, int kw, int ph, int pw)
{
    p->n = n, p->ci = ci, p->co = co, p->h = h, p->w = w, p->kh = kh, p->kw = kw, p->ph = ph, p->pw = pw;
    p->oh = h + 2 * ph - kh + 1;
    p->wp = w + kw - 1;
    p->taps = kh * kw;
}

int ct_conv_amx_same(ct_context *ctx, const ct_conv2d_desc *d, int flip, float *y, const float *x,
                     const float *w, const float *b)
{
    aconv p;
    memset(&p, 0, sizeof p);
    /* the convolution the tiles compute: flip runs the input gradient, dy
     * (n, c_out, oh, w) into dx (n, c_in, h, w) with the padding mirrored */
    if (!flip)
        frame(&p, d->n, d->c_in, d->c_out, d->h, d->w, d->kh, d->kw, d->pad_h, d->pad_w);
    else
        frame(&p, d->n, d->c_out, d->c_in, d->h + 2 * d->pad_h - d->kh + 1, d->w, d->kh, d->kw,
              d->kh - 1 - d->pad_h, d->kw - 1 - d->pad_w);
    p.cu = (p.ci + 1) / 2;
    p.kb = p.cu < 16 ? p.cu : 16;
    p.cup = (p.cu + p.kb - 1) / p.kb * p.kb;
    p.ncpb = p.cup / p.kb;
    p.mo = p.co > 16 ? 2 : 1;
    p.cop = (p.co + 16 * p.mo - 1) / (16 * p.mo) * 16 * p.mo;
    p.oblocks = p.cop / (16 * p.mo);
    p.qstep = p.mo == 2 ? 2 : 4;
    size_t nq = ((size_t)p.oh * p.wp + 15) / 16;
    p.nq = (nq + (size_t)p.qstep - 1) / (size_t)p.qstep * (size_t)p.qstep; /* whole blocks of sums */
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
        ct_conv512_wsrc ws = { w, d->c_out, d->c_in, d->kh, d->kw, flip };
        pack_weights(&p, &ws, (uint32_t *)(void *)hw->wpack);
        p.x = x, p.y = y, p.bias = b, p.wa = (const uint32_t *)(const void *)hw->wpack, p.dst = dst, p.hw = hw;
        p.items_per_img = p.n >= 2 * hw->threads ? 1 : p.oblocks;
        ct_pool_run(hw->pool, (size_t)p.n * p.items_per_img, item_fn, &p);
    }
    free(dst);
    return st;
}

/* The weight gradient. Over the forward's padded frame (Wp columns), with
 * q = r Wp + col as above and Q of them per image (oh Wp rounded up to
 * 32), dw(o, c, i, j) = sum over images and q of dy'(o, q) x'(c, q + i Wp
 * + j), dy' zero in the padding columns: a GEMM of M = output channels,
 * N = input channels, K = pixels. A tiles: dy' of 16 channels as pairs of
 * consecutive q (each image's dy' copied so, a row per channel); B tiles:
 * 16 pairs of consecutive padded pixels x 16 input channels, copied per
 * image twice, pairs starting at even (E) and at odd (O) pixels, so that
 * a tap's offset, even or odd, is a whole row offset into one of them. A
 * block of sums is 16 output x 16 input channels x up to 4 taps (four
 * accumulator tiles sharing each A tile). Items are DW_GROUPS fixed groups
 * of images (fewer with fewer images): each copies an image into its
 * thread's scratch, where it stays in cache while every block of sums
 * takes the image's products (each block's partial sums loaded from and
 * stored to the group's buffer around it); the groups' sums are then
 * added to dw in group order, so the result does not depend on the thread
 * count. */
#define DW_GROUPS 16

typedef struct adw {
    aconv g;
    size_t Q, R;     /* q per image (a multiple of 32); pair rows of E and O */
    int cip, cob, cib, tgroups, groups;
    size_t blocks;   /* cob cib tgroups blocks of 4 x 256 sums */
    float *part;     /* per group: blocks x 4 x 256 partial sums */
    const float *dy;
    float *dw;
} adw;

/* Image n's copies into the thread's scratch: E and O (R rows of cip
 * pairs each), then dy' (cop rows of Q / 2 pairs); pl: a float scratch of
 * 16 padded planes */
static CT_AVX512BF16 void dw_copies(const adw *a, int n, uint32_t *e, float *pl)
{
    const aconv *p = &a->g;
    size_t span = 2 * a->R + 32, hw = (size_t)p->h * p->w, P = (size_t)p->oh * p->w;
    uint32_t *o = e + a->R * a->cip;
    for (int c0 = 0; c0 < a->cip; c0 += 16) {
        /* 16 channels' padded planes, then 16 x 16 blocks of pairs transposed */
        for (int c = 0; c < 16; c++) {
            float *d = pl + (size_t)c * span;
            memset(d, 0, span * sizeof *d);
            if (c0 + c >= p->ci)
                continue;
            const float *xc = p->x + ((size_t)n * p->ci + (size_t)(c0 + c)) * hw;
            for (int r = 0; r < p->h; r++)
                memcpy(d + (size_t)(r + p->ph) * p->wp + p->pw, xc + (size_t)r * p->w, (size_t)p->w * sizeof *d);
        }
        for (size_t j0 = 0; j0 < a->R; j0 += 16)
            for (int odd = 0; odd < 2; odd++) {
                __m512 r[16];
                for (int c = 0; c < 16; c++) {
                    const float *src = pl + (size_t)c * span + 2 * j0 + (size_t)odd;
                    __m512 lo = _mm512_loadu_ps(src), hi = _mm512_loadu_ps(src + 16);
                    r[c] = _mm512_castsi512_ps((__m512i)_mm512_cvtne2ps_pbh(hi, lo));
                }
                ct_tr16(r);
                uint32_t *d = (odd ? o : e) + j0 * (size_t)a->cip + (size_t)c0;
                for (size_t j = 0; j < 16; j++)
                    _mm512_storeu_ps((float *)(d + j * (size_t)a->cip), r[j]);
            }
    }
    uint32_t *dp = o + a->R * a->cip;
    for (int oc = 0; oc < p->cop; oc++, dp += a->Q / 2) {
        memset(pl, 0, a->Q * sizeof *pl);
        if (oc < p->co) {
            const float *dyo = a->dy + ((size_t)n * p->co + (size_t)oc) * P;
            for (int r = 0; r < p->oh; r++)
                memcpy(pl + (size_t)r * p->wp, dyo + (size_t)r * p->w, (size_t)p->w * sizeof *pl);
        }
        for (size_t q = 0; q < a->Q; q += 32)
            _mm512_storeu_si512(dp + q / 2, (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(pl + q + 16),
                                                                         _mm512_loadu_ps(pl + q)));
    }
}

/* One image's products into block b's partial sums t (4 x 256 floats) */
static CT_AMX void dw_block(const adw *a, size_t b, const uint32_t *e, float *t)
{
    const aconv *p = &a->g;
    int tg = (int)(b % (size_t)a->tgroups), rest = (int)(b / (size_t)a->tgroups);
    int cb = rest % a->cib, ob = rest / a->cib;
    int t0 = 4 * tg, nt = p->taps - t0 < 4 ? p->taps - t0 : 4;
    const uint32_t *eo[4];
    for (int u = 0; u < 4; u++) {
        size_t f = u < nt ? (size_t)((t0 + u) / p->kw) * p->wp + (size_t)((t0 + u) % p->kw) : 0;
        eo[u] = e + (f & 1) * a->R * (size_t)a->cip + (f / 2) * (size_t)a->cip + (size_t)cb * 16;
    }
    size_t kp = a->Q / 2, sa = kp * 4, sb = (size_t)a->cip * 4;
    const uint32_t *ar = e + 2 * a->R * (size_t)a->cip + (size_t)ob * 16 * kp;
    _tile_loadd(0, t, 64);
    _tile_loadd(1, t + 256, 64);
    _tile_loadd(2, t + 512, 64);
    _tile_loadd(3, t + 768, 64);
    for (size_t j0 = 0; j0 < kp; j0 += 16) {
        size_t jo = j0 * (size_t)a->cip;
        _tile_loadd(4, ar + j0, sa);
        _tile_loadd(6, eo[0] + jo, sb);
        _tile_dpbf16ps(0, 4, 6);
        if (nt > 1) {
            _tile_loadd(7, eo[1] + jo, sb);
            _tile_dpbf16ps(1, 4, 7);
        }
        if (nt > 2) {
            _tile_loadd(6, eo[2] + jo, sb);
            _tile_dpbf16ps(2, 4, 6);
        }
        if (nt > 3) {
            _tile_loadd(7, eo[3] + jo, sb);
            _tile_dpbf16ps(3, 4, 7);
        }
    }
    _tile_stored(0, t, 64);
    _tile_stored(1, t + 256, 64);
    _tile_stored(2, t + 512, 64);
    _tile_stored(3, t + 768, 64);
    __asm__ volatile("" ::: "memory"); /* the tile instructions' asm names no memory */
}

static CT_AMX void dw_group(void *arg, size_t g, int thread)
{
    const adw *a = arg;
    const aconv *p = &a->g;
    size_t span = 2 * a->R + 32;
    float *pl = p->hw->scratch[thread];
    uint32_t *e = (uint32_t *)(void *)(pl + 16 * span);
    float *part = a->part + g * a->blocks * 1024;
    memset(part, 0, a->blocks * 1024 * sizeof *part);
    int n0 = (int)(g * (size_t)p->n / (size_t)a->groups), n1 = (int)((g + 1) * (size_t)p->n / (size_t)a->groups);
    _Alignas(64) ct_amx_config cfg;
    ct_amx_config_full(&cfg);
    for (int n = n0; n < n1; n++) {
        dw_copies(a, n, e, pl);
        _tile_loadconfig(&cfg);
        __asm__ volatile("" ::: "memory"); /* the copies were written before */
        for (size_t b = 0; b < a->blocks; b++)
            dw_block(a, b, e, part + b * 1024);
        _tile_release();
    }
}

/* dw += the groups' sums, in group order; item: a block of sums */
static void dw_add(void *arg, size_t b, int thread)
{
    (void)thread;
    const adw *a = arg;
    const aconv *p = &a->g;
    int tg = (int)(b % (size_t)a->tgroups), rest = (int)(b / (size_t)a->tgroups);
    int cb = rest % a->cib, ob = rest / a->cib;
    int t0 = 4 * tg, nt = p->taps - t0 < 4 ? p->taps - t0 : 4;
    for (int u = 0; u < nt; u++)
        for (int o = 0; o < 16 && ob * 16 + o < p->co; o++)
            for (int c = 0; c < 16 && cb * 16 + c < p->ci; c++) {
                float *d = a->dw + ((size_t)(ob * 16 + o) * p->ci + (size_t)(cb * 16 + c)) * p->taps + (size_t)(t0 + u);
                for (int g = 0; g < a->groups; g++)
                    *d += a->part[((size_t)g * a->blocks + b) * 1024 + (size_t)u * 256 + (size_t)o * 16 + (size_t)c];
            }
}

/* Input channels from which the tiles pay: 16 (8 pairs, half a tile's
 * depth); AlexNet-R's first layer (3 channels) ran 3x slower on the tiles
 * than on the vector kernels, ResNet-56's 16-channel layers faster */
#define AMX_LEAST_CHANNELS 16

int ct_conv_amx_same_takes(const ct_conv2d_desc *d, int flip)
{
    return (flip ? d->c_out : d->c_in) >= AMX_LEAST_CHANNELS;
}

int ct_conv_amx_dw_takes(const ct_conv2d_desc *d)
{
    return d->stride_h == 1 && d->stride_w == 1 && d->dil_h == 1 && d->dil_w == 1 && d->pad_h < d->kh &&
           2 * d->pad_w == d->kw - 1 && d->c_in >= AMX_LEAST_CHANNELS;
}

int ct_conv_amx_dw(ct_context *ctx, const ct_conv2d_desc *d, float *dw, const float *dy, const float *x)
{
    adw a;
    memset(&a, 0, sizeof a);
    aconv *p = &a.g;
    frame(p, d->n, d->c_in, d->c_out, d->h, d->w, d->kh, d->kw, d->pad_h, d->pad_w);
    p->cop = (p->co + 15) / 16 * 16;
    a.cip = (p->ci + 15) / 16 * 16;
    a.cob = p->cop / 16, a.cib = a.cip / 16;
    a.tgroups = (p->taps + 3) / 4;
    a.blocks = (size_t)a.cob * a.cib * a.tgroups;
    a.groups = p->n < DW_GROUPS ? p->n : DW_GROUPS;
    a.Q = ((size_t)p->oh * p->wp + 31) / 32 * 32;
    size_t maxoff = (size_t)(p->kh - 1) * p->wp + (size_t)(p->kw - 1);
    a.R = (a.Q / 2 + maxoff / 2 + 1 + 15) / 16 * 16; /* whole blocks of 16 rows */
    if (2 * a.R + 32 < (size_t)(p->oh + p->kh - 1) * p->wp) /* the frame fits the planes */
        a.R = ((size_t)(p->oh + p->kh - 1) * p->wp / 2 + 16) / 16 * 16;
    ct_host_work *hw;
    /* per thread: 16 padded planes (or a dy' row), E, O and dy' */
    size_t span = 2 * a.R + 32; /* > Q: a plane's room holds a dy' row too */
    size_t per = 16 * span + 2 * a.R * (size_t)a.cip + (size_t)p->cop * (a.Q / 2) + 16;
    float *part;
    int st = ct_host_work_get(ctx, per, 16, 1, &hw);
    if (st || (st = ct_host_work_big(ctx, hw, 0, (size_t)a.groups * a.blocks * 1024, &part)))
        return st;
    p->x = x, p->hw = hw;
    a.dy = dy, a.dw = dw, a.part = part;
    ct_pool_run(hw->pool, (size_t)a.groups, dw_group, &a);
    ct_pool_run(hw->pool, a.blocks, dw_add, &a);
    return CT_OK;
}

#else

int ct_conv_amx_same_takes(const ct_conv2d_desc *d, int flip)
{
    (void)d, (void)flip;
    return 0;
}

/* The frame both directions share: an (n, ci, h, w) input padded by ph, pw
 * against (co, ci, kh, kw) weights, oh output rows, wp padded columns */
static void frame(aconv *p, int n, int ci, int co, int h, int w, int kh, int kw, int ph, int pw)
{
    p->n = n, p->ci = ci, p->co = co, p->h = h, p->w = w, p->kh = kh, p->kw = kw, p->ph = ph, p->pw = pw;
    p->oh = h + 2 * ph - kh + 1;
    p->wp = w + kw - 1;
    p->taps = kh * kw;
}

int ct_conv_amx_same(ct_context *ctx, const ct_conv2d_desc *d, int flip, float *y, const float *x,
                     const float *w, const float *b)
{
    (void)d, (void)flip, (void)y, (void)x, (void)w, (void)b;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d host path: AMX not built for this CPU");
}

int ct_conv_amx_dw_takes(const ct_conv2d_desc *d)
{
    (void)d;
    return 0;
}

int ct_conv_amx_dw(ct_context *ctx, const ct_conv2d_desc *d, float *dw, const float *dy, const float *x)
{
    (void)d, (void)dw, (void)dy, (void)x;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d host path: AMX not built for this CPU");
}

#endif
