/*
 * conv_dw512.c - the convolution's weight gradient with AVX-512, in
 * broadcast form (conv_dw512.h).
 *
 * dw[o][k] = sum over images and output pixels p of dy[o][p] x_k[p], where
 * k = (c, i, j) runs over the input channels and kernel taps and x_k[p] is
 * the input element tap k reads for output pixel p. A vector holds 16
 * output channels: dy is transposed first into dyt (n, P, cop), the output
 * channels of a pixel contiguous (cop: c_out rounded up to 16, the extra
 * lanes zero), and a tile sums MR taps x NV vectors of output channels
 * (MR NV = 24 sums in registers): per output pixel, NV aligned loads of dyt
 * and MR broadcasts of x_k[p] feed 24 FMAs. That is the forward tiles'
 * shape (few vector loads, broadcasts folded into the FMAs), which runs at
 * ~90% of the FMA peak, where the pixel-vector form (conv_host512.c: 8
 * channels x 3 taps, 11 full-vector loads per 24 FMAs) ran at ~50%.
 *
 * A broadcast cannot be masked lane by lane, so x is read from a copy with
 * the padding written out (xs: (n, c_in, hp, wp), rows and columns from
 * -pad), unless the convolution has none; any stride and dilation is then
 * only an offset: x_k[p = (r, col)] = xs[c][r s_h + i d_h][col s_w + j d_w].
 *
 * Work items: (tile of output-channel vectors, range of tap tiles); each
 * runs over the batch in chunks of output rows (images in order), its
 * sums carried in the thread's scratch from chunk to chunk, so a chunk of
 * dyt stays in cache while every tap tile of the item reads it. Every sum
 * runs over the images in order and within one over its pixels in order,
 * in one item, whatever the items and threads: the bits depend on neither.
 * The sums are added into dw at the end.
 */
#include "ops/conv_dw512.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef CT_HOST_X86
#include <immintrin.h>

typedef struct dwtile {
    int v0, nv, mr; /* first output-channel vector, vectors, taps per tap tile */
} dwtile;

typedef struct dwitem {
    int tile, kt0, kt1; /* co tile; tap tiles [kt0, kt1) */
} dwitem;

typedef struct dwp {
    int n, ci, co, kh, kw, sh, sw, dh, dwl, ph, pw, h, w, oh, ow;
    int hp, wp, cop, cip, K, taps;
    int by_ci;       /* the lanes hold input channels (else output channels) */
    size_t P, xs_img, xs_plane;
    const float *x, *dy;
    const float *xs; /* lanes on c_out: x, or its padded copy (n, ci, hp, wp) */
    float *dyt;      /* lanes on c_out: dy transposed (n, P, cop) */
    float *xpad;     /* lanes on c_out: the padded copy's storage */
    float *xt;       /* lanes on c_in: x padded and transposed (n, hp, wp, cip) */
    long *koff;      /* lanes on c_out: K + 24 taps' offsets into an image of xs */
    /* the tiles' operands: vectors from vb, broadcasts from bb, each at
     * m *_img + r *_row + col *_col floats for image m, output pixel (r, col) */
    const float *vb, *bb;
    size_t v_img, v_row, v_col, b_img, b_row, b_col;
    int nvec;        /* vectors along the lanes: cop / 16 or cip / 16 */
    dwtile *tiles;
    dwitem *items;
    int ntiles, nitems, rows; /* rows: output rows (over the batch) per chunk */
    float *dw;
    ct_host_work *hw;
} dwp;

/* r[0..16) transposed in registers: r[k] lane l <- r[l] lane k. */
static CT_AVX512 inline void transpose16(__m512 *r)
{
    __m512 t[16], u[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) {
        u[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 4; k++) {
            t[8 * i + k] = _mm512_shuffle_f32x4(u[8 * i + k], u[8 * i + 4 + k], 0x88);
            t[8 * i + 4 + k] = _mm512_shuffle_f32x4(u[8 * i + k], u[8 * i + 4 + k], 0xDD);
        }
    for (int k = 0; k < 8; k++) {
        r[k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0x88);
        r[8 + k] = _mm512_shuffle_f32x4(t[k], t[8 + k], 0xDD);
    }
}

/* dy (n, co, P) -> dyt (n, P, cop): an item per (image, 16-channel block),
 * 16 x 16 blocks transposed in registers; channels past co read as 0. */
static CT_AVX512 void transpose_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const dwp *p = arg;
    size_t m = item / (size_t)(p->cop / 16), cb = item % (size_t)(p->cop / 16);
    const float *src = p->dy + (m * (size_t)p->co + cb * 16) * p->P;
    float *dst = p->dyt + m * p->P * (size_t)p->cop + cb * 16;
    int cn = p->co - (int)cb * 16 < 16 ? p->co - (int)cb * 16 : 16;
    __m512 r[16];
    for (size_t q0 = 0; q0 < p->P; q0 += 16) {
        size_t qn = p->P - q0 < 16 ? p->P - q0 : 16;
        __mmask16 qm = (__mmask16)((1u << qn) - 1);
        for (int c = 0; c < 16; c++)
            r[c] = c < cn ? _mm512_maskz_loadu_ps(qm, src + (size_t)c * p->P + q0) : _mm512_setzero_ps();
        transpose16(r);
        for (size_t k = 0; k < qn; k++)
            _mm512_store_ps(dst + (q0 + k) * (size_t)p->cop, r[k]);
    }
}

/* x -> xt (n, hp, wp, cip), the padding written out: an item per (image,
 * 16-channel block), 16 x 16 blocks transposed in registers; columns
 * outside x and channels past ci read as 0 (masked loads, which do not
 * touch the lanes they mask, so the row's address may lie outside x). */
static CT_AVX512 void xt_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const dwp *p = arg;
    size_t nb = (size_t)p->cip / 16, m = item / nb, cb = item % nb;
    size_t plane = (size_t)p->h * p->w;
    const float *x = p->x + (m * (size_t)p->ci + cb * 16) * plane;
    float *dst = p->xt + m * (size_t)p->hp * p->wp * p->cip + cb * 16;
    int cn = p->ci - (int)cb * 16 < 16 ? p->ci - (int)cb * 16 : 16;
    __m512 r[16];
    for (int R = 0; R < p->hp; R++) {
        float *drow = dst + (size_t)R * p->wp * p->cip;
        int yy = R - p->ph;
        if (yy < 0 || yy >= p->h) {
            for (int C = 0; C < p->wp; C++)
                _mm512_store_ps(drow + (size_t)C * p->cip, _mm512_setzero_ps());
            continue;
        }
        for (int C0 = 0; C0 < p->wp; C0 += 16) {
            int cnt = p->wp - C0 < 16 ? p->wp - C0 : 16;
            int lo = p->pw - C0, hi = p->w + p->pw - C0; /* lanes [lo, hi) lie inside x */
            lo = lo < 0 ? 0 : lo;
            hi = hi > cnt ? cnt : hi;
            __mmask16 mk = hi > lo ? (__mmask16)(((1u << (hi - lo)) - 1) << lo) : 0;
            uintptr_t src = (uintptr_t)(x + (size_t)yy * p->w) +
                            (uintptr_t)((long)(C0 - p->pw) * (long)sizeof(float));
            for (int c = 0; c < 16; c++)
                r[c] = c < cn ? _mm512_maskz_loadu_ps(mk, (const void *)(src + (size_t)c * plane *
                                                                                 sizeof(float)))
                              : _mm512_setzero_ps();
            transpose16(r);
            for (int k = 0; k < cnt; k++)
                _mm512_store_ps(drow + (size_t)(C0 + k) * p->cip, r[k]);
        }
    }
}

/* x -> xs with the padding written out: one image per item. */
static void pad_item(void *arg, size_t m, int thread)
{
    (void)thread;
    const dwp *p = arg;
    const float *x = p->x + m * (size_t)p->ci * p->h * p->w;
    float *o = p->xpad + m * p->xs_img;
    for (int c = 0; c < p->ci; c++)
        for (int r = 0; r < p->hp; r++, o += p->wp) {
            int yy = r - p->ph;
            if (yy < 0 || yy >= p->h) {
                memset(o, 0, (size_t)p->wp * sizeof(float));
                continue;
            }
            const float *xr = x + ((size_t)c * p->h + (size_t)yy) * p->w;
            int c0 = p->pw, c1 = p->pw + p->w < p->wp ? p->pw + p->w : p->wp;
            memset(o, 0, (size_t)c0 * sizeof(float));
            memcpy(o + c0, xr, (size_t)(c1 - c0) * sizeof(float));
            if (c1 < p->wp)
                memset(o + c1, 0, (size_t)(p->wp - c1) * sizeof(float));
        }
}

/* The tiles: sums s<t><v> for tap t (broadcast) x vector v (loaded). */
#define B1(T) __m512 s##T##0 = a[(T) * nv]
#define B2(T) __m512 s##T##0 = a[(T) * nv], s##T##1 = a[(T) * nv + 1]
#define B3(T) __m512 s##T##0 = a[(T) * nv], s##T##1 = a[(T) * nv + 1], s##T##2 = a[(T) * nv + 2]
#define E1(T) a[(T) * nv] = s##T##0
#define E2(T) a[(T) * nv] = s##T##0, a[(T) * nv + 1] = s##T##1
#define E3(T) a[(T) * nv] = s##T##0, a[(T) * nv + 1] = s##T##1, a[(T) * nv + 2] = s##T##2
#define F1(T)                                                                                     \
    do {                                                                                          \
        __m512 b = _mm512_set1_ps(xt[T][xo]);                                                     \
        s##T##0 = _mm512_fmadd_ps(b, d0, s##T##0);                                                \
    } while (0)
#define F2(T)                                                                                     \
    do {                                                                                          \
        __m512 b = _mm512_set1_ps(xt[T][xo]);                                                     \
        s##T##0 = _mm512_fmadd_ps(b, d0, s##T##0);                                                \
        s##T##1 = _mm512_fmadd_ps(b, d1, s##T##1);                                                \
    } while (0)
#define F3(T)                                                                                     \
    do {                                                                                          \
        __m512 b = _mm512_set1_ps(xt[T][xo]);                                                     \
        s##T##0 = _mm512_fmadd_ps(b, d0, s##T##0);                                                \
        s##T##1 = _mm512_fmadd_ps(b, d1, s##T##1);                                                \
        s##T##2 = _mm512_fmadd_ps(b, d2, s##T##2);                                                \
    } while (0)
#define R8(M) M(0); M(1); M(2); M(3); M(4); M(5); M(6); M(7)
#define R12(M) R8(M); M(8); M(9); M(10); M(11)
#define R24(M) R12(M); M(12); M(13); M(14); M(15); M(16); M(17); M(18); M(19); M(20); M(21); M(22); M(23)

/* One tile: MR broadcasts (at offsets off[0..MR) from p->bb) x NV vectors
 * (from v0, the tile's first lane at image 0, pixel 0), summed over output
 * rows [g0, g1) of the batch; a: the 24 sums, (broadcast, vector). */
#define DEF_DWT(NAME, NV, MR, REP, BEGIN, FMA, END)                                               \
    static CT_AVX512 void NAME(const dwp *p, const long *off, const float *v0, long g0, long g1, \
                               __m512 *a)                                                         \
    {                                                                                             \
        const int nv = NV;                                                                        \
        REP(BEGIN);                                                                               \
        const float *xt[MR];                                                                      \
        long m = g0 / p->oh, r = g0 % p->oh;                                                      \
        for (long g = g0; g < g1; g++, r = r + 1 < p->oh ? r + 1 : (m++, 0)) {                    \
            const float *br = p->bb + (size_t)m * p->b_img + (size_t)r * p->b_row;                \
            const float *d = v0 + (size_t)m * p->v_img + (size_t)r * p->v_row;                    \
            for (int t = 0; t < MR; t++)                                                          \
                xt[t] = br + off[t];                                                              \
            size_t xo = 0;                                                                        \
            for (int col = 0; col < p->ow; col++, d += p->v_col, xo += p->b_col) {                \
                __m512 d0 = _mm512_load_ps(d), d1 = d0, d2 = d0;                                  \
                if (nv > 1)                                                                       \
                    d1 = _mm512_load_ps(d + 16);                                                  \
                if (nv > 2)                                                                       \
                    d2 = _mm512_load_ps(d + 32);                                                  \
                (void)d1, (void)d2;                                                               \
                REP(FMA);                                                                         \
            }                                                                                     \
        }                                                                                         \
        REP(END);                                                                                 \
    }

DEF_DWT(dwt_1, 1, 24, R24, B1, F1, E1)
DEF_DWT(dwt_2, 2, 12, R12, B2, F2, E2)
DEF_DWT(dwt_3, 3, 8, R8, B3, F3, E3)

typedef void (*dwt_fn)(const dwp *, const long *, const float *, long, long, __m512 *);

/* Tap tile kt of a tile whose tap tiles hold mr broadcasts: their offsets
 * into off[0..mr), the vectors' offset (from the tile's first lane) into
 * *vo; with the lanes on c_in, a tap tile is one kernel tap x mr output
 * channels (the last ones repeated past c_out, their sums not kept). */
static void tap_tile(const dwp *p, int mr, int kt, long *off, size_t *vo)
{
    if (!p->by_ci) {
        memcpy(off, p->koff + (size_t)kt * mr, (size_t)mr * sizeof *off);
        *vo = 0;
        return;
    }
    int per_tap = (p->co + mr - 1) / mr, tap = kt / per_tap, o0 = kt % per_tap * mr;
    int i = tap / p->kw, j = tap % p->kw;
    for (int t = 0; t < mr; t++)
        off[t] = (long)((size_t)(o0 + t < p->co ? o0 + t : p->co - 1) * p->P);
    *vo = ((size_t)i * p->dh * p->wp + (size_t)j * p->dwl) * p->cip;
}

/* Tap tiles along the broadcasts of a tile whose tap tiles hold mr. */
static int tap_tiles(const dwp *p, int mr)
{
    return p->by_ci ? p->taps * ((p->co + mr - 1) / mr) : (p->K + mr - 1) / mr;
}

static CT_AVX512 void dw_item(void *arg, size_t it, int thread)
{
    const dwp *p = arg;
    const dwitem *w = p->items + it;
    const dwtile *t = p->tiles + w->tile;
    dwt_fn fn = t->nv == 3 ? dwt_3 : t->nv == 2 ? dwt_2 : dwt_1;
    __m512 *acc = (__m512 *)(void *)p->hw->scratch[thread];
    size_t per = (size_t)t->mr * t->nv;
    size_t nacc = (size_t)(w->kt1 - w->kt0) * per;
    for (size_t k = 0; k < nacc; k++)
        acc[k] = _mm512_setzero_ps();
    const float *vt = p->vb + (size_t)t->v0 * 16;
    long rows = (long)p->n * p->oh, off[24];
    size_t vo;
    for (long g0 = 0; g0 < rows; g0 += p->rows) {
        long g1 = g0 + p->rows < rows ? g0 + p->rows : rows;
        for (int kt = w->kt0; kt < w->kt1; kt++) {
            tap_tile(p, t->mr, kt, off, &vo);
            fn(p, off, vt + vo, g0, g1, acc + (size_t)(kt - w->kt0) * per);
        }
    }
    for (int kt = w->kt0; kt < w->kt1; kt++) {
        const float *s = (const float *)(const void *)(acc + (size_t)(kt - w->kt0) * per);
        int per_tap = (p->co + t->mr - 1) / t->mr;
        for (int tp = 0; tp < t->mr; tp++) {
            /* the broadcast's output channel o or tap k, its lanes' k or o */
            int k = 0, o = 0;
            if (p->by_ci) {
                o = kt % per_tap * t->mr + tp;
                if (o >= p->co)
                    break;
            } else if ((k = kt * t->mr + tp) >= p->K) {
                break;
            }
            for (int v = 0; v < t->nv; v++)
                for (int l = 0; l < 16; l++) {
                    int lane = (t->v0 + v) * 16 + l;
                    float sum = s[((size_t)tp * t->nv + v) * 16 + l];
                    if (p->by_ci && lane < p->ci)
                        p->dw[((size_t)o * p->ci + (size_t)lane) * p->taps + (size_t)(kt / per_tap)] += sum;
                    else if (!p->by_ci && lane < p->co)
                        p->dw[(size_t)lane * p->K + (size_t)k] += sum;
                }
        }
    }
}

/* Tiles of 3 vectors along the lanes, the rest as 2 + 2, 2 or 1. */
static int make_tiles(dwp *p)
{
    int nvec = p->nvec, nt = 0;
    p->tiles = malloc((size_t)(nvec + 1) * sizeof *p->tiles);
    if (!p->tiles)
        return -1;
    for (int v = 0; v < nvec;) {
        int left = nvec - v, nv = left == 4 ? 2 : left >= 3 ? 3 : left;
        p->tiles[nt].v0 = v, p->tiles[nt].nv = nv, p->tiles[nt].mr = 24 / nv;
        nt++, v += nv;
    }
    p->ntiles = nt;
    return 0;
}

/* Items: each tile's tap tiles in groups of at most 32 (their sums take
 * 48 KiB), fewer where that leaves under 4 items per thread. */
static int make_items(dwp *p, int threads)
{
    size_t want = 4 * (size_t)(threads > 0 ? threads : 1);
    int gmax = 32;
    for (;;) {
        size_t items = 0;
        for (int t = 0; t < p->ntiles; t++) {
            int kts = tap_tiles(p, p->tiles[t].mr);
            items += (size_t)((kts + gmax - 1) / gmax);
        }
        if (items >= want || gmax == 1)
            break;
        gmax = (gmax + 1) / 2;
    }
    size_t cap = 0;
    for (int t = 0; t < p->ntiles; t++) {
        int kts = tap_tiles(p, p->tiles[t].mr);
        cap += (size_t)((kts + gmax - 1) / gmax);
    }
    p->items = malloc(cap * sizeof *p->items);
    if (!p->items)
        return -1;
    int n = 0;
    for (int t = 0; t < p->ntiles; t++) {
        int kts = tap_tiles(p, p->tiles[t].mr);
        for (int k = 0; k < kts; k += gmax) {
            p->items[n].tile = t, p->items[n].kt0 = k;
            p->items[n].kt1 = k + gmax < kts ? k + gmax : kts;
            n++;
        }
    }
    p->nitems = n;
    return gmax;
}

int ct_conv512_dw(ct_context *ctx, const ct_conv2d_desc *d, float *dw, const float *dy,
                  const float *x)
{
    dwp p;
    memset(&p, 0, sizeof p);
    if (ct_conv2d_out_shape(ctx, d, &p.oh, &p.ow))
        return CT_ERR_INVALID_ARG;
    p.n = d->n, p.ci = d->c_in, p.co = d->c_out, p.kh = d->kh, p.kw = d->kw;
    p.sh = d->stride_h, p.sw = d->stride_w, p.dh = d->dil_h, p.dwl = d->dil_w;
    p.ph = d->pad_h, p.pw = d->pad_w, p.h = d->h, p.w = d->w;
    p.P = (size_t)p.oh * p.ow;
    p.cop = (p.co + 15) / 16 * 16;
    p.cip = (p.ci + 15) / 16 * 16;
    p.taps = p.kh * p.kw;
    p.K = p.ci * p.taps;
    int padded = p.ph || p.pw;
    p.hp = padded ? (p.oh - 1) * p.sh + (p.kh - 1) * p.dh + 1 : p.h;
    p.wp = padded ? (p.ow - 1) * p.sw + (p.kw - 1) * p.dwl + 1 : p.w;
    p.xs_plane = (size_t)p.hp * p.wp;
    p.xs_img = (size_t)p.ci * p.xs_plane;
    p.x = x, p.dy = dy, p.dw = dw;
    /* Which operand goes along the lanes: the one whose preparation moves
     * less memory (lanes on c_out: dy transposed, and x padded if it has
     * padding; lanes on c_in: x padded and transposed, dy read as it is),
     * c_in only from 32 channels. Measured (a layer's weight gradient
     * alone, two threads, ms, lanes on c_out / c_in): ResNet-50's 3x3 on
     * 512 channels at 7x7 13.9 / 10.1, its 1x1 64 -> 256 at 56x56 9.9 /
     * 6.3, ResNet-56's 3x3s on 32 and 64 channels 1.57 / 1.47 and 1.57 /
     * 1.41, but on 16 channels 2.09 / 3.41 (one vector of c_in: 24
     * broadcasts of 16 output channels waste a third), AlexNet's 3x3s
     * within 5% either way. */
    size_t prep_co = p.P * p.cop + (padded ? p.xs_img : 0), prep_ci = p.xs_plane * p.cip;
    p.by_ci = p.ci >= 32 && prep_ci <= prep_co;
    /* about 512 output pixels per chunk */
    p.rows = p.ow >= 512 ? 1 : 512 / p.ow;

    ct_host_work *hw;
    int st = ct_host_work_get(ctx, 32 * 24 * 16 + 16, 16, 1, &hw);
    if (st)
        return st;
    p.hw = hw;
    if (p.by_ci) {
        if ((st = ct_host_work_big(ctx, hw, 0, (size_t)p.n * p.xs_plane * p.cip, &p.xt)))
            return st;
        p.vb = p.xt, p.v_img = p.xs_plane * p.cip, p.v_row = (size_t)p.sh * p.wp * p.cip;
        p.v_col = (size_t)p.sw * p.cip;
        p.bb = dy, p.b_img = (size_t)p.co * p.P, p.b_row = (size_t)p.ow, p.b_col = 1;
        p.nvec = p.cip / 16;
    } else {
        if ((st = ct_host_work_big(ctx, hw, 0, (size_t)p.n * p.P * p.cop, &p.dyt)) ||
            (padded && (st = ct_host_work_big(ctx, hw, 1, (size_t)p.n * p.xs_img, &p.xpad))))
            return st;
        p.xs = padded ? p.xpad : x;
        p.vb = p.dyt, p.v_img = p.P * p.cop, p.v_row = (size_t)p.ow * p.cop, p.v_col = p.cop;
        p.bb = p.xs, p.b_img = p.xs_img, p.b_row = (size_t)p.sh * p.wp, p.b_col = (size_t)p.sw;
        p.nvec = p.cop / 16;
    }
    if (make_tiles(&p) || make_items(&p, hw->threads) < 0 ||
        (!p.by_ci && !(p.koff = malloc(((size_t)p.K + 24) * sizeof *p.koff)))) {
        free(p.tiles);
        free(p.items);
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d weight gradient: out of host memory");
    }
    if (p.by_ci) {
        ct_pool_run(hw->pool, (size_t)p.n * (size_t)(p.cip / 16), xt_item, &p);
    } else {
        for (int k = 0; k < p.K; k++) {
            int c = k / p.taps, i = k / p.kw % p.kh, j = k % p.kw;
            p.koff[k] = (long)((size_t)c * p.xs_plane) + (long)i * p.dh * p.wp + (long)j * p.dwl;
        }
        for (int k = p.K; k < p.K + 24; k++) /* a last tile's missing taps: read tap 0, not kept */
            p.koff[k] = 0;
        ct_pool_run(hw->pool, (size_t)p.n * (size_t)(p.cop / 16), transpose_item, &p);
        if (padded)
            ct_pool_run(hw->pool, (size_t)p.n, pad_item, &p);
    }
    ct_pool_run(hw->pool, (size_t)p.nitems, dw_item, &p);
    free(p.tiles);
    free(p.items);
    free(p.koff);
    return CT_OK;
}

#else /* !CT_HOST_X86 */

int ct_conv512_dw(ct_context *ctx, const ct_conv2d_desc *d, float *dw, const float *dy,
                  const float *x)
{
    (void)d, (void)dw, (void)dy, (void)x;
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "conv2d weight gradient: AVX-512 not built for this CPU");
}

#endif
