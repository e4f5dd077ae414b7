/*
 * conv_dw512.c - the convolution's weight gradient with AVX-512, in
 * broadcast form (conv_dw512.h).
 *
 * dw[o][k] = sum over images and output pixels p of dy[o][p] x_k[p], where
 * k = (c, i, j) runs over the input channels and kernel taps and x_k[p] is
 * the input element tap k reads for output pixel p. A tile keeps 24 sums
 * in registers, MR broadcasts x NV vectors of 16 lanes (MR NV = 24): per
 * output pixel, NV aligned vector loads and MR broadcasts (folded into the
 * FMAs) feed 24 FMAs. That is the forward tiles' shape, which runs at ~90%
 * of the FMA peak; the pixel-vector form it replaced (8 output channels x
 * 3 taps of 16-pixel vectors, 11 full-vector loads per 24 FMAs) ran at
 * ~50%. The lanes hold either
 *  - output channels: dy transposed to (P, cop) per image (cop: c_out
 *    rounded up to 16, the extra lanes zero), broadcasts x_k[p] for MR taps
 *    k; a broadcast cannot be masked lane by lane, so x is read from a copy
 *    with the padding written out (xs: (c_in, hp, wp) per image, rows and
 *    columns from -pad), unless the convolution has none; or
 *  - input channels: x padded and transposed to (hp, wp, cip) per image,
 *    broadcasts dy[o][p] for MR output channels o at one kernel tap;
 * whichever moves less memory. Any stride and dilation is only an offset:
 * x_k[p = (r, col)] = xs[c][r s_h + i d_h][col s_w + j d_w].
 *
 * Shared preparation (large weight arrays): dy or x prepared once for the
 * batch; items (tile, range of tap tiles) run over the batch in chunks of
 * output rows, sums carried in the thread's scratch from chunk to chunk,
 * and every sum runs over the images and pixels in order in one item.
 * Local preparation (small ones): items (tile, group of images) prepare
 * each chunk of their images in their own scratch and keep all the tile's
 * sums; dw += the groups' sums in group order. The items and groups depend
 * on the shapes alone, and each sum's order on neither the items nor the
 * threads: the bits do not depend on the thread count.
 *
 * bf16 and fp16 operands (the context's precision): the preparation
 * rounds what it writes (gemm512.h's rounding), and an operand that would
 * be read in place is copied, rounded, first (x as an unpadded "padded"
 * copy; dy whole, for lanes on c_in); the tiles are the float32 ones: each
 * product exact in float32, the sums in float32. (Pairs for AVX512_BF16's
 * dot products would run along the pixels, and a pixel pair's inputs lie
 * side by side only at stride 1: not built.)
 */
#include "host/conv_dw512.h"
#include "host/conv_amx.h"
#include "host/gemm512.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef CT_HOST_X86
#include <immintrin.h>

#include "host/vmath512.h"

typedef struct dwtile {
    int v0, nv, mr; /* first vector along the lanes, vectors, broadcasts per tap tile */
} dwtile;

typedef struct dwitem {
    int tile, kt0, kt1; /* tile; tap tiles [kt0, kt1) */
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
    int nvec;        /* vectors along the lanes: cop / 16 or cip / 16 */
    dwtile *tiles;
    dwitem *items;
    int ntiles, nitems, rows; /* rows: output rows (over the batch) per chunk */
    /* local preparation (see below): groups of images, images per chunk,
     * the most sums of a tile, each group's sums (groups, co, K) */
    int local, groups, chunk_imgs;
    size_t max_sums;
    float *part;
    float *dw;
    ct_host_work *hw;
    int mode;  /* CT_GEMM512_*: the operands' precision (float32, or rounded to bf16 / fp16) */
    int xcopy; /* lanes on c_out: x is read from the copy xpad (padding, or rounding) */
} dwp;

/* A tile's operands: vectors from the pointer the tile is given,
 * broadcasts from bb (plus each tap's offset), each at m *_img + r *_row +
 * col *_col floats for image m, output pixel (r, col). */
typedef struct dwop {
    const float *bb;
    size_t v_img, v_row, v_col, b_img, b_row, b_col;
    int oh, ow;
} dwop;

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

/* v as the mode rounds it (float32: unchanged) */
static CT_AVX512 inline __m512 round16(__m512 v, int mode)
{
    return mode == CT_GEMM512_F32 ? v : ct_v_round16(v, mode == CT_GEMM512_FP16_ROUND);
}

/* One image's dy (co, P) -> dst (P, L): channel blocks [cb0, cb0 + ncb) to
 * lanes [0, 16 ncb) of each row of L floats, 16 x 16 blocks transposed in
 * registers; channels past co read as 0. */
static CT_AVX512 void tr_dy(const dwp *p, const float *dy, float *dst, size_t L, int cb0, int ncb)
{
    __m512 r[16];
    for (int cb = cb0; cb < cb0 + ncb; cb++) {
        const float *src = dy + (size_t)cb * 16 * p->P;
        float *o = dst + (size_t)(cb - cb0) * 16;
        int cn = p->co - cb * 16 < 16 ? p->co - cb * 16 : 16;
        for (size_t q0 = 0; q0 < p->P; q0 += 16) {
            size_t qn = p->P - q0 < 16 ? p->P - q0 : 16;
            __mmask16 qm = (__mmask16)((1u << qn) - 1);
            for (int c = 0; c < 16; c++)
                r[c] = c < cn ? _mm512_maskz_loadu_ps(qm, src + (size_t)c * p->P + q0)
                              : _mm512_setzero_ps();
            transpose16(r);
            for (size_t k = 0; k < qn; k++)
                _mm512_store_ps(o + (q0 + k) * L, round16(r[k], p->mode));
        }
    }
}

/* One image's x (ci, h, w) -> dst (hp, wp, L), the padding written out:
 * channel blocks [cb0, cb0 + ncb) to lanes [0, 16 ncb), 16 x 16 blocks
 * transposed in registers; columns outside x and channels past ci read as
 * 0 (masked loads, which do not touch the lanes they mask, so the row's
 * address may lie outside x). */
static CT_AVX512 void tr_x(const dwp *p, const float *x, float *dst, size_t L, int cb0, int ncb)
{
    size_t plane = (size_t)p->h * p->w;
    __m512 r[16];
    for (int cb = cb0; cb < cb0 + ncb; cb++) {
        const float *xc = x + (size_t)cb * 16 * plane;
        float *o = dst + (size_t)(cb - cb0) * 16;
        int cn = p->ci - cb * 16 < 16 ? p->ci - cb * 16 : 16;
        for (int R = 0; R < p->hp; R++) {
            float *drow = o + (size_t)R * p->wp * L;
            int yy = R - p->ph;
            if (yy < 0 || yy >= p->h) {
                for (int C = 0; C < p->wp; C++)
                    _mm512_store_ps(drow + (size_t)C * L, _mm512_setzero_ps());
                continue;
            }
            for (int C0 = 0; C0 < p->wp; C0 += 16) {
                int cnt = p->wp - C0 < 16 ? p->wp - C0 : 16;
                int lo = p->pw - C0, hi = p->w + p->pw - C0; /* lanes [lo, hi) lie inside x */
                lo = lo < 0 ? 0 : lo;
                hi = hi > cnt ? cnt : hi;
                __mmask16 mk = hi > lo ? (__mmask16)(((1u << (hi - lo)) - 1) << lo) : 0;
                uintptr_t src = (uintptr_t)(xc + (size_t)yy * p->w) +
                                (uintptr_t)((long)(C0 - p->pw) * (long)sizeof(float));
                for (int c = 0; c < 16; c++)
                    r[c] = c < cn ? _mm512_maskz_loadu_ps(
                                        mk, (const void *)(src + (size_t)c * plane * sizeof(float)))
                                  : _mm512_setzero_ps();
                transpose16(r);
                for (int k = 0; k < cnt; k++)
                    _mm512_store_ps(drow + (size_t)(C0 + k) * L, round16(r[k], p->mode));
            }
        }
    }
}

/* One image's x (ci, h, w) -> dst (ci, hp, wp), the padding written out. */
static void pad_x(const dwp *p, const float *x, float *o)
{
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
            if (p->mode == CT_GEMM512_F32)
                memcpy(o + c0, xr, (size_t)(c1 - c0) * sizeof(float));
            else
                ct_round16_copy(o + c0, xr, (size_t)(c1 - c0), p->mode == CT_GEMM512_FP16_ROUND);
            if (c1 < p->wp)
                memset(o + c1, 0, (size_t)(p->wp - c1) * sizeof(float));
        }
}

/* The shared preparation: an item per (image, 16-lane block): dy -> dyt,
 * or x -> xt; with pad_item, x -> xs. */
static void prep_item(void *arg, size_t item, int thread)
{
    (void)thread;
    const dwp *p = arg;
    size_t m = item / (size_t)p->nvec;
    int cb = (int)(item % (size_t)p->nvec);
    if (p->by_ci)
        tr_x(p, p->x + m * (size_t)p->ci * p->h * p->w, p->xt + m * p->xs_plane * p->cip + (size_t)cb * 16,
             (size_t)p->cip, cb, 1);
    else
        tr_dy(p, p->dy + m * (size_t)p->co * p->P, p->dyt + m * p->P * p->cop + (size_t)cb * 16,
              (size_t)p->cop, cb, 1);
}

/* dy of image m rounded into the copy the tiles broadcast from (lanes on
 * c_in in a rounding mode) */
typedef struct rcopy {
    float *dst;
    const float *src;
    size_t per;
    int mode;
} rcopy;

static void round_item(void *arg, size_t m, int thread)
{
    (void)thread;
    const rcopy *r = arg;
    ct_round16_copy(r->dst + m * r->per, r->src + m * r->per, r->per, r->mode == CT_GEMM512_FP16_ROUND);
}

static void pad_item(void *arg, size_t m, int thread)
{
    (void)thread;
    const dwp *p = arg;
    pad_x(p, p->x + m * (size_t)p->ci * p->h * p->w, p->xpad + m * p->xs_img);
}

/* The tiles: sums s<t><v> for tap t (broadcast) x vector v < nv (loaded);
 * the sums past nv are never read or stored, and the compiler drops them. */
#define BEGIN(T)                                                                                  \
    __m512 s##T##0 = a[(T) * nv], s##T##1 = nv > 1 ? a[(T) * nv + 1] : s##T##0,                  \
           s##T##2 = nv > 2 ? a[(T) * nv + 2] : s##T##0
#define END(T)                                                                                    \
    do {                                                                                          \
        a[(T) * nv] = s##T##0;                                                                    \
        if (nv > 1)                                                                               \
            a[(T) * nv + 1] = s##T##1;                                                            \
        if (nv > 2)                                                                               \
            a[(T) * nv + 2] = s##T##2;                                                            \
    } while (0)
#define FMA(T)                                                                                    \
    do {                                                                                          \
        __m512 b = _mm512_set1_ps(xt[T][xo]);                                                     \
        s##T##0 = _mm512_fmadd_ps(b, d0, s##T##0);                                                \
        if (nv > 1)                                                                               \
            s##T##1 = _mm512_fmadd_ps(b, d1, s##T##1);                                            \
        if (nv > 2)                                                                               \
            s##T##2 = _mm512_fmadd_ps(b, d2, s##T##2);                                            \
    } while (0)
#define R8(M) M(0); M(1); M(2); M(3); M(4); M(5); M(6); M(7)
#define R12(M) R8(M); M(8); M(9); M(10); M(11)
#define R24(M) R12(M); M(12); M(13); M(14); M(15); M(16); M(17); M(18); M(19); M(20); M(21); M(22); M(23)

/* One tile: MR broadcasts (at offsets off[0..MR) from o->bb) x NV vectors
 * (from v0, the tile's first lane at image 0, pixel 0), summed over output
 * rows [g0, g1) of the images from 0; a: the 24 sums, (broadcast, vector). */
#define DEF_DWT(NAME, NV, MR, REP)                                                                \
    static CT_AVX512 void NAME(const dwop *o, const long *off, const float *v0, long g0, long g1, \
                               __m512 *a)                                                         \
    {                                                                                             \
        const int nv = NV;                                                                        \
        REP(BEGIN);                                                                               \
        const float *xt[MR];                                                                      \
        long m = g0 / o->oh, r = g0 % o->oh;                                                      \
        for (long g = g0; g < g1; g++, r = r + 1 < o->oh ? r + 1 : (m++, 0)) {                    \
            const float *br = o->bb + (size_t)m * o->b_img + (size_t)r * o->b_row;                \
            const float *d = v0 + (size_t)m * o->v_img + (size_t)r * o->v_row;                    \
            for (int t = 0; t < MR; t++)                                                          \
                xt[t] = br + off[t];                                                              \
            size_t xo = 0;                                                                        \
            for (int col = 0; col < o->ow; col++, d += o->v_col, xo += o->b_col) {                \
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

DEF_DWT(dwt_1, 1, 24, R24)
DEF_DWT(dwt_2, 2, 12, R12)
DEF_DWT(dwt_3, 3, 8, R8)

typedef void (*dwt_fn)(const dwop *, const long *, const float *, long, long, __m512 *);

/* Tap tile kt of a tile whose tap tiles hold mr broadcasts: their offsets
 * into off[0..mr), the vectors' offset (from the tile's first lane, rows of
 * L lanes) into *vo; with the lanes on c_in, a tap tile is one kernel tap x
 * mr output channels (the last ones repeated past c_out, their sums not
 * kept). */
static void tap_tile(const dwp *p, int mr, int kt, size_t L, long *off, size_t *vo)
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
    *vo = ((size_t)i * p->dh * p->wp + (size_t)j * p->dwl) * L;
}

/* Tap tiles along the broadcasts of a tile whose tap tiles hold mr. */
static int tap_tiles(const dwp *p, int mr)
{
    return p->by_ci ? p->taps * ((p->co + mr - 1) / mr) : (p->K + mr - 1) / mr;
}

static dwt_fn tile_fn(const dwtile *t)
{
    return t->nv == 3 ? dwt_3 : t->nv == 2 ? dwt_2 : dwt_1;
}

/* Tile t's sums of tap tiles [kt0, kt1) (at s) into out (co, K) (+= or =). */
static void store_sums(const dwp *p, const dwtile *t, int kt0, int kt1, const __m512 *acc,
                       float *out, int add)
{
    size_t per = (size_t)t->mr * t->nv;
    int per_tap = (p->co + t->mr - 1) / t->mr;
    for (int kt = kt0; kt < kt1; kt++) {
        const float *s = (const float *)(const void *)(acc + (size_t)(kt - kt0) * per);
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
                    size_t at;
                    if (p->by_ci && lane < p->ci)
                        at = ((size_t)o * p->ci + (size_t)lane) * p->taps + (size_t)(kt / per_tap);
                    else if (!p->by_ci && lane < p->co)
                        at = (size_t)lane * p->K + (size_t)k;
                    else
                        continue;
                    float sum = s[((size_t)tp * t->nv + v) * 16 + l];
                    out[at] = add ? out[at] + sum : sum;
                }
        }
    }
}

/* The tiles' operands with rows of L lanes, broadcasts from bb (image 0 of
 * dy, or of x as the tiles read it). */
static dwop operands(const dwp *p, size_t L, const float *bb)
{
    dwop o = { 0 };
    o.oh = p->oh, o.ow = p->ow, o.bb = bb;
    if (p->by_ci) {
        o.v_img = p->xs_plane * L, o.v_row = (size_t)p->sh * p->wp * L, o.v_col = (size_t)p->sw * L;
        o.b_img = (size_t)p->co * p->P, o.b_row = (size_t)p->ow, o.b_col = 1;
    } else {
        o.v_img = p->P * L, o.v_row = (size_t)p->ow * L, o.v_col = L;
        o.b_img = p->xs_img, o.b_row = (size_t)p->sh * p->wp, o.b_col = (size_t)p->sw;
    }
    return o;
}

/* Shared preparation: an item per (tile, range of tap tiles) over the
 * whole batch in chunks of output rows. */
static CT_AVX512 void dw_item(void *arg, size_t it, int thread)
{
    const dwp *p = arg;
    const dwitem *w = p->items + it;
    const dwtile *t = p->tiles + w->tile;
    dwt_fn fn = tile_fn(t);
    __m512 *acc = (__m512 *)(void *)p->hw->scratch[thread];
    size_t per = (size_t)t->mr * t->nv, L = p->by_ci ? (size_t)p->cip : (size_t)p->cop;
    size_t nacc = (size_t)(w->kt1 - w->kt0) * per;
    for (size_t k = 0; k < nacc; k++)
        acc[k] = _mm512_setzero_ps();
    dwop op = operands(p, L, p->by_ci ? p->dy : p->xs);
    const float *vt = (p->by_ci ? p->xt : p->dyt) + (size_t)t->v0 * 16;
    long rows = (long)p->n * p->oh, off[24];
    size_t vo;
    for (long g0 = 0; g0 < rows; g0 += p->rows) {
        long g1 = g0 + p->rows < rows ? g0 + p->rows : rows;
        for (int kt = w->kt0; kt < w->kt1; kt++) {
            tap_tile(p, t->mr, kt, L, off, &vo);
            fn(&op, off, vt + vo, g0, g1, acc + (size_t)(kt - w->kt0) * per);
        }
    }
    store_sums(p, t, w->kt0, w->kt1, acc, p->dw, 1);
}

/*
 * Local preparation, for convolutions whose tiles' sums fit in L2 (the
 * small-channel layers of ResNets, where the shared preparation's passes
 * over memory cost as much as the products): an item per (tile, group of
 * images), which prepares each chunk of its images in its own scratch
 * (only the tile's lanes: dy or x transposed; x padded for lanes on c_out)
 * and runs every tap tile over it. The groups are fixed by the batch size
 * alone, each writes its own sums, and dw += the groups' sums added in
 * group order: the bits do not depend on the threads.
 */
static CT_AVX512 void dw_local_item(void *arg, size_t it, int thread)
{
    const dwp *p = arg;
    const dwtile *t = p->tiles + it / (size_t)p->groups;
    int grp = (int)(it % (size_t)p->groups);
    int m_begin = (int)((long)grp * p->n / p->groups), m_end = (int)((long)(grp + 1) * p->n / p->groups);
    dwt_fn fn = tile_fn(t);
    int kts = tap_tiles(p, t->mr);
    size_t per = (size_t)t->mr * t->nv, L = (size_t)t->nv * 16;
    __m512 *acc = (__m512 *)(void *)p->hw->scratch[thread];
    for (size_t k = 0; k < (size_t)kts * per; k++)
        acc[k] = _mm512_setzero_ps();
    float *lanes = (float *)(void *)(acc + p->max_sums);
    size_t lanes_img = (p->by_ci ? p->xs_plane : p->P) * L;
    float *xpad = lanes + (size_t)p->chunk_imgs * lanes_img;
    size_t x_img = (size_t)p->ci * p->h * p->w;
    int padded = p->xcopy;
    long off[24];
    size_t vo;
    for (int m0 = m_begin; m0 < m_end; m0 += p->chunk_imgs) {
        int mc = m_end - m0 < p->chunk_imgs ? m_end - m0 : p->chunk_imgs;
        for (int mm = 0; mm < mc; mm++) {
            size_t m = (size_t)(m0 + mm);
            if (p->by_ci) {
                tr_x(p, p->x + m * x_img, lanes + (size_t)mm * lanes_img, L, t->v0, t->nv);
            } else {
                tr_dy(p, p->dy + m * (size_t)p->co * p->P, lanes + (size_t)mm * lanes_img, L, t->v0,
                      t->nv);
                if (padded)
                    pad_x(p, p->x + m * x_img, xpad + (size_t)mm * p->xs_img);
            }
        }
        dwop op = operands(p, L, p->by_ci ? p->dy + (size_t)m0 * p->co * p->P
                                          : padded ? xpad : p->x + (size_t)m0 * x_img);
        for (int kt = 0; kt < kts; kt++) {
            tap_tile(p, t->mr, kt, L, off, &vo);
            fn(&op, off, lanes + vo, 0, (long)mc * p->oh, acc + (size_t)kt * per);
        }
    }
    store_sums(p, t, 0, kts, acc, p->part + (size_t)grp * p->co * p->K, 0);
}

/* dw += the groups' sums in group order: an item per 4096 weights. */
static void reduce_item(void *arg, size_t it, int thread)
{
    (void)thread;
    const dwp *p = arg;
    size_t nw = (size_t)p->co * p->K, i0 = it * 4096, i1 = i0 + 4096 < nw ? i0 + 4096 : nw;
    for (size_t i = i0; i < i1; i++) {
        float s = p->part[i];
        for (int g = 1; g < p->groups; g++)
            s += p->part[(size_t)g * nw + i];
        p->dw[i] += s;
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
    if (ct_gemm512_mode(ctx) == CT_GEMM512_BF16_AMX && ct_conv_amx_dw_takes(d))
        return ct_conv_amx_dw(ctx, d, dw, dy, x);
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
    p.mode = ct_gemm512_vec_mode(ctx);
    p.xcopy = padded || (p.mode != CT_GEMM512_F32 && !p.by_ci);
    /* about 512 output pixels per chunk */
    p.rows = p.ow >= 512 ? 1 : 512 / p.ow;
    p.nvec = p.by_ci ? p.cip / 16 : p.cop / 16;
    if (make_tiles(&p)) {
        free(p.tiles);
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d weight gradient: out of host memory");
    }
    for (int t = 0; t < p.ntiles; t++) {
        size_t sums = (size_t)tap_tiles(&p, p.tiles[t].mr) * 24;
        p.max_sums = sums > p.max_sums ? sums : p.max_sums;
    }
    /* Local preparation where every tile's sums fit in 128 KiB (2048
     * vectors). Measured, a layer's weight gradient alone, two threads,
     * shared against local (ms): ResNet-56's 3x3s on 16, 32 and 64
     * channels 2.9 / 1.9, 2.0 / 1.6, 1.9 / 1.6; ResNet-50's 7x7 stem 18.8 /
     * 9.8, its 3x3 on 64 channels at 56x56 10.9 / 8.5, its 1x1s 64 -> 256
     * and 256 -> 64 at 56x56 6.9 / 4.1 and 7.1 / 4.3. Groups of images:
     * about 4 chunks each, at most 16, fixed by the batch and the plane;
     * with 16 groups of one chunk, writing and adding the groups' sums
     * cost more than the local preparation saved (64 channels at 8x8: 2.1
     * against 1.9). */
    p.local = p.max_sums <= 2048 && p.n >= 2;
    size_t per_thread = 32 * 24 * 16 + 16;
    if (p.local) {
        p.chunk_imgs = p.P >= 512 ? 1 : (int)(512 / p.P);
        p.chunk_imgs = p.chunk_imgs > p.n ? p.n : p.chunk_imgs;
        int chunks = (p.n + p.chunk_imgs - 1) / p.chunk_imgs;
        p.groups = chunks / 4 < 1 ? 1 : chunks / 4 > 16 ? 16 : chunks / 4;
        size_t lanes_img = (p.by_ci ? p.xs_plane : p.P) * 48;
        per_thread = p.max_sums * 16 + (size_t)p.chunk_imgs * lanes_img +
                     (!p.by_ci && p.xcopy ? (size_t)p.chunk_imgs * p.xs_img : 0) + 16;
    }

    ct_host_work *hw;
    int st = ct_host_work_get(ctx, per_thread, 16, 1, &hw);
    if (!st && p.local)
        st = ct_host_work_big(ctx, hw, 2, (size_t)p.groups * p.co * p.K, &p.part);
    else if (!st && p.by_ci)
        st = ct_host_work_big(ctx, hw, 0, (size_t)p.n * p.xs_plane * p.cip, &p.xt);
    else if (!st && ((st = ct_host_work_big(ctx, hw, 0, (size_t)p.n * p.P * p.cop, &p.dyt)) == CT_OK) &&
             p.xcopy)
        st = ct_host_work_big(ctx, hw, 1, (size_t)p.n * p.xs_img, &p.xpad);
    rcopy rc = { NULL, dy, (size_t)p.co * p.P, p.mode };
    if (!st && p.by_ci && p.mode != CT_GEMM512_F32 &&
        !(st = ct_host_work_big(ctx, hw, 3, (size_t)p.n * rc.per, &rc.dst))) {
        ct_pool_run(hw->pool, (size_t)p.n, round_item, &rc);
        p.dy = rc.dst;
    }
    if (st) {
        free(p.tiles);
        return st;
    }
    p.hw = hw;
    p.xs = p.xcopy ? p.xpad : x;
    if ((!p.local && make_items(&p, hw->threads) < 0) ||
        (!p.by_ci && !(p.koff = malloc(((size_t)p.K + 24) * sizeof *p.koff)))) {
        free(p.tiles);
        free(p.items);
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "conv2d weight gradient: out of host memory");
    }
    if (!p.by_ci) {
        for (int k = 0; k < p.K; k++) {
            int c = k / p.taps, i = k / p.kw % p.kh, j = k % p.kw;
            p.koff[k] = (long)((size_t)c * p.xs_plane) + (long)i * p.dh * p.wp + (long)j * p.dwl;
        }
        for (int k = p.K; k < p.K + 24; k++) /* a last tile's missing taps: read tap 0, not kept */
            p.koff[k] = 0;
    }
    if (p.local) {
        ct_pool_run(hw->pool, (size_t)p.ntiles * (size_t)p.groups, dw_local_item, &p);
        ct_pool_run(hw->pool, ((size_t)p.co * p.K + 4095) / 4096, reduce_item, &p);
    } else {
        ct_pool_run(hw->pool, (size_t)p.n * (size_t)p.nvec, prep_item, &p);
        if (!p.by_ci && p.xcopy)
            ct_pool_run(hw->pool, (size_t)p.n, pad_item, &p);
        ct_pool_run(hw->pool, (size_t)p.nitems, dw_item, &p);
    }
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
