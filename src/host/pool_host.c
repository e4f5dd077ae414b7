/*
 * pool_host.c - the host max pool forward of pool_host.h.
 *
 * One work item per (image, channel) plane on the context's thread pool
 * (host_work.h); each window is scanned by maxpool_fwd_f32's rule.
 */
#include "host/pool_host.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "host/host_work.h"
#include "host/hostmap.h"

#ifdef CT_HOST_X86
#include <immintrin.h>
#endif

typedef struct hpool {
    const ct_pool2d *p;
    int oh, ow;
    int avx2;     /* the CPU has AVX2 */
    const float *x;
    float *y;
    int *am;
} hpool;

/* Which element wins a window is data, so a branch mispredicts about every
 * other time (it tripled the scan's time), and GCC turns `take ? a : b`
 * back into one; bit masks keep the scan branch-free. */
static inline float pick_f(uint32_t mask, float a, float b)
{
    uint32_t ua, ub;
    memcpy(&ua, &a, sizeof ua);
    memcpy(&ub, &b, sizeof ub);
    ua = (ua & mask) | (ub & ~mask);
    memcpy(&a, &ua, sizeof a);
    return a;
}

static inline int pick_i(uint32_t mask, int a, int b)
{
    return (int)(((uint32_t)a & mask) | ((uint32_t)b & ~mask));
}

/* The scan of one window: the last NaN, else the first maximum; the
 * window's start when all are -inf (maxpool_fwd_f32's rule). */
static inline void window_max(const float *xp, int w, int y0, int y1, int x0, int x1, float *out,
                              int *arg)
{
    int best = y0 * w + x0;
    float m = -INFINITY;
    for (int yy = y0; yy < y1; yy++) {
        const float *row = xp + (size_t)yy * w;
        for (int xx = x0; xx < x1; xx++) {
            float v = row[xx];
            uint32_t take = 0u - (uint32_t)((v > m) | (v != v));
            m = pick_f(take, v, m);
            best = pick_i(take, yy * w + xx, best);
        }
    }
    *out = m;
    *arg = best;
}

#ifdef CT_HOST_X86
/* Eight neighbouring interior outputs (ox .. ox + 7) of output row oy in
 * AVX2 lanes: each tap's eight values are gathered at the stride, and
 * compare masks pick, lane by lane, exactly what the scalar scan picks. */
static CT_AVX2 void maxpool_row8(const ct_pool2d *p, const float *xp, int y0, int y1, int ox,
                              float *yr, int *ar)
{
    int x0 = ox * p->sw - p->pw;
    __m256i lane = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                      _mm256_set1_epi32(p->sw));
    __m256 m = _mm256_set1_ps(-INFINITY);
    __m256i best = _mm256_add_epi32(lane, _mm256_set1_epi32(y0 * p->w + x0));
    for (int yy = y0; yy < y1; yy++) {
        const float *row = xp + (size_t)yy * p->w + x0;
        for (int kx = 0; kx < p->kw; kx++) {
            __m256 v = _mm256_i32gather_ps(row + kx, lane, 4);
            __m256 take = _mm256_or_ps(_mm256_cmp_ps(v, m, _CMP_GT_OQ),
                                       _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
            __m256i idx = _mm256_add_epi32(lane, _mm256_set1_epi32(yy * p->w + x0 + kx));
            m = _mm256_blendv_ps(m, v, take);
            best = _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(best),
                                                        _mm256_castsi256_ps(idx), take));
        }
    }
    _mm256_storeu_ps(yr + ox, m);
    if (ar)
        _mm256_storeu_si256((__m256i *)(void *)(ar + ox), best);
}
#endif

/* One plane. Inside the plane (windows not clipped by the padding) four
 * neighbouring outputs are scanned together: each window's scan is one
 * long chain of compare and select, so four independent chains keep the
 * core busy where one leaves it waiting; each output still sees its
 * elements in the same order. */
static void maxpool_plane(void *arg, size_t plane, int thread)
{
    (void)thread;
    const hpool *hp = arg;
    const ct_pool2d *p = hp->p;
    const float *xp = hp->x + plane * (size_t)p->h * p->w;
    size_t o = plane * (size_t)hp->oh * hp->ow;
    /* outputs [lo, hi) have windows wholly inside the row */
    int lo = (p->pw + p->sw - 1) / p->sw, hi = (p->w + p->pw - p->kw) / p->sw + 1;
    hi = hi < hp->ow ? hi : hp->ow;
    lo = lo < hi ? lo : hi;
    for (int oy = 0; oy < hp->oh; oy++) {
        int y0 = oy * p->sh - p->ph, y1 = y0 + p->kh < p->h ? y0 + p->kh : p->h;
        y0 = y0 > 0 ? y0 : 0;
        float *yr = hp->y + o + (size_t)oy * hp->ow;
        int *ar = hp->am ? hp->am + o + (size_t)oy * hp->ow : NULL;
        int ox = 0;
        for (; ox < hp->ow; ox++) {
            if (ox >= lo && ox + 4 <= hi)
                break;
            int x0 = ox * p->sw - p->pw, x1 = x0 + p->kw < p->w ? x0 + p->kw : p->w;
            x0 = x0 > 0 ? x0 : 0;
            int a;
            window_max(xp, p->w, y0, y1, x0, x1, &yr[ox], &a);
            if (ar)
                ar[ox] = a;
        }
#ifdef CT_HOST_X86
        if (hp->avx2 && hi - ox >= 8) {
            for (; ox + 8 <= hi; ox += 8)
                maxpool_row8(p, xp, y0, y1, ox, yr, ar);
            /* the rest as one more block ending at hi, overlapping the last:
             * the outputs computed twice come out the same */
            if (ox < hi) {
                maxpool_row8(p, xp, y0, y1, hi - 8, yr, ar);
                ox = hi;
            }
        }
#endif
        for (; ox + 4 <= hi; ox += 4) {
            int x0 = ox * p->sw - p->pw;
            float m0 = -INFINITY, m1 = -INFINITY, m2 = -INFINITY, m3 = -INFINITY;
            int b0 = y0 * p->w + x0, b1 = b0 + p->sw, b2 = b1 + p->sw, b3 = b2 + p->sw;
            for (int yy = y0; yy < y1; yy++) {
                const float *row = xp + (size_t)yy * p->w + x0;
                int base = yy * p->w + x0;
                for (int kx = 0; kx < p->kw; kx++) {
#define MP_STEP(M, B, U)                                                                          \
    do {                                                                                          \
        float v = row[(U) * p->sw + kx];                                                          \
        uint32_t take = 0u - (uint32_t)((v > M) | (v != v));                                      \
        M = pick_f(take, v, M);                                                                   \
        B = pick_i(take, base + (U) * p->sw + kx, B);                                             \
    } while (0)
                    MP_STEP(m0, b0, 0);
                    MP_STEP(m1, b1, 1);
                    MP_STEP(m2, b2, 2);
                    MP_STEP(m3, b3, 3);
#undef MP_STEP
                }
            }
            yr[ox] = m0, yr[ox + 1] = m1, yr[ox + 2] = m2, yr[ox + 3] = m3;
            if (ar)
                ar[ox] = b0, ar[ox + 1] = b1, ar[ox + 2] = b2, ar[ox + 3] = b3;
        }
        for (; ox < hp->ow; ox++) {
            int x0 = ox * p->sw - p->pw, x1 = x0 + p->kw < p->w ? x0 + p->kw : p->w;
            x0 = x0 > 0 ? x0 : 0;
            int a;
            window_max(xp, p->w, y0, y1, x0, x1, &yr[ox], &a);
            if (ar)
                ar[ox] = a;
        }
    }
}

int ct_maxpool_host_forward(ct_context *ctx, const ct_pool2d *p, int oh, int ow, ct_buf y,
                            ct_buf x, ct_buf argmax)
{
    size_t planes = (size_t)p->n * p->c, ny = planes * (size_t)oh * ow;
    ct_hmap_range r[3] = {
        { x.mem, x.off, planes * (size_t)p->h * p->w, 0, NULL },
        { y.mem, y.off, ny, 1, NULL },
        { argmax.mem, argmax.off, argmax.mem ? ny : 0, 1, NULL },
    };
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, 3, &hm, &pool, "max pool forward");
    if (st)
        return st;
    /* the argmax record is int32 in a float-typed buffer */
    hpool hp = { p, oh, ow, ct_host_avx2_fma(), r[0].host, r[1].host, (int *)(void *)r[2].host };
    ct_pool_run(pool, planes, maxpool_plane, &hp);
    return ct_hmap_unmap(ctx, &hm, CT_OK, "max pool forward");
}

/* ---- backward ---- */

typedef struct hpool_bwd {
    const ct_pool2d *p;
    int oh, ow;
    int avx512;
    const float *x, *dy;
    const int *am;
    float *dx;
} hpool_bwd;

#ifdef CT_HOST_X86
/* 2x2 windows at stride 2, unpadded, n <= 16 of them from output (oy, ox0)
 * whose tiles are exactly their windows: the scan of window_max (first
 * maximum in the order a b / c d, a NaN taking over) lane by lane, then
 * 0 + dy at the winner and 0 at the other three. */
static CT_AVX512 void bwd_2x2_16(const hpool_bwd *hb, const float *xp, float *dxp, size_t o,
                                 int oy, int ox0, int n)
{
    const ct_pool2d *p = hb->p;
    size_t r0 = (size_t)(2 * oy) * p->w + (size_t)(2 * ox0), r1 = r0 + (size_t)p->w;
    __mmask16 lo = (__mmask16)(n >= 8 ? 0xffff : (1u << (2 * n)) - 1);
    __mmask16 hi = (__mmask16)(n > 8 ? (1u << (2 * (n - 8))) - 1 : 0);
    __m512 t0 = _mm512_maskz_loadu_ps(lo, xp + r0), t1 = _mm512_maskz_loadu_ps(hi, xp + r0 + 16);
    __m512 u0 = _mm512_maskz_loadu_ps(lo, xp + r1), u1 = _mm512_maskz_loadu_ps(hi, xp + r1 + 16);
    __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
    __m512 a = _mm512_permutex2var_ps(t0, ev, t1), b = _mm512_permutex2var_ps(t0, od, t1);
    __m512 c = _mm512_permutex2var_ps(u0, ev, u1), d = _mm512_permutex2var_ps(u0, od, u1);
    __m512 m = a;
    __mmask16 tb = _mm512_cmp_ps_mask(b, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q);
    m = _mm512_mask_blend_ps(tb, m, b);
    __mmask16 tc = _mm512_cmp_ps_mask(c, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(c, c, _CMP_UNORD_Q);
    m = _mm512_mask_blend_ps(tc, m, c);
    __mmask16 td = _mm512_cmp_ps_mask(d, m, _CMP_GT_OQ) | _mm512_cmp_ps_mask(d, d, _CMP_UNORD_Q);
    /* the winner: d if td, else c if tc, else b if tb, else a */
    __mmask16 wd = td, wc = (__mmask16)(tc & ~td), wb = (__mmask16)(tb & ~tc & ~td);
    __mmask16 wa = (__mmask16)~(tb | tc | td);
    __mmask16 nm = (__mmask16)(n >= 16 ? 0xffff : (1u << n) - 1);
    __m512 g = _mm512_add_ps(_mm512_setzero_ps(), _mm512_maskz_loadu_ps(nm, hb->dy + o));
    __m512 ga = _mm512_maskz_mov_ps(wa, g), gb = _mm512_maskz_mov_ps(wb, g);
    __m512 gc = _mm512_maskz_mov_ps(wc, g), gd = _mm512_maskz_mov_ps(wd, g);
    /* interleave back: row 0 = a0 b0 a1 b1 ..., row 1 = c0 d0 ... */
    __m512i il = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    __m512i ih = _mm512_add_epi32(il, _mm512_set1_epi32(8));
    _mm512_mask_storeu_ps(dxp + r0, lo, _mm512_permutex2var_ps(ga, il, gb));
    _mm512_mask_storeu_ps(dxp + r0 + 16, hi, _mm512_permutex2var_ps(ga, ih, gb));
    _mm512_mask_storeu_ps(dxp + r1, lo, _mm512_permutex2var_ps(gc, il, gd));
    _mm512_mask_storeu_ps(dxp + r1 + 16, hi, _mm512_permutex2var_ps(gc, ih, gd));
}
#endif

/* Disjoint windows (maxpool_bwd_tile_f32's rule): window (oy, ox) owns the
 * tile of rows [oy sh - ph, (oy + 1) sh - ph) and columns likewise, clipped
 * to the plane, the last tile of each axis stretched to the plane's end;
 * it writes 0 + dy at its argmax (found again from x, as the forward found
 * it) and 0 elsewhere in its tile. */
static void maxpool_bwd_tiles(void *arg, size_t plane, int thread)
{
    (void)thread;
    const hpool_bwd *hb = arg;
    const ct_pool2d *p = hb->p;
    size_t in0 = plane * (size_t)p->h * p->w, out0 = plane * (size_t)hb->oh * hb->ow;
    const float *xp = hb->x + in0;
    float *dxp = hb->dx + in0;
    /* 2x2/2 unpadded: the windows whose tiles are exactly themselves (all
     * but a stretched last row or column of an odd size) 16 at a time */
    int fast = 0;
#ifdef CT_HOST_X86
    fast = hb->avx512 && p->kh == 2 && p->kw == 2 && p->sh == 2 && p->sw == 2 && p->ph == 0 &&
           p->pw == 0;
#endif
    for (int oy = 0; oy < hb->oh; oy++) {
        int ox_from = 0;
#ifdef CT_HOST_X86
        if (fast && (oy < hb->oh - 1 || p->h == 2 * hb->oh)) {
            int nx = hb->ow - (p->w > 2 * hb->ow ? 1 : 0);
            for (; ox_from < nx; ox_from += 16)
                bwd_2x2_16(hb, xp, dxp, out0 + (size_t)oy * hb->ow + (size_t)ox_from, oy, ox_from,
                           nx - ox_from < 16 ? nx - ox_from : 16);
            ox_from = nx;
        }
#endif
        int wy0 = oy * p->sh - p->ph, wy1 = wy0 + p->kh < p->h ? wy0 + p->kh : p->h;
        wy0 = wy0 > 0 ? wy0 : 0;
        int ty0 = wy0, ty1 = oy == hb->oh - 1 ? p->h : (oy + 1) * p->sh - p->ph;
        ty1 = ty1 < p->h ? ty1 : p->h;
        for (int ox = ox_from; ox < hb->ow; ox++) {
            int wx0 = ox * p->sw - p->pw, wx1 = wx0 + p->kw < p->w ? wx0 + p->kw : p->w;
            wx0 = wx0 > 0 ? wx0 : 0;
            int tx1 = ox == hb->ow - 1 ? p->w : (ox + 1) * p->sw - p->pw;
            tx1 = tx1 < p->w ? tx1 : p->w;
            float m;
            int best;
            window_max(xp, p->w, wy0, wy1, wx0, wx1, &m, &best);
            float g = 0.0f + hb->dy[out0 + (size_t)oy * hb->ow + ox];
            for (int yy = ty0; yy < ty1; yy++)
                for (int xx = wx0; xx < tx1; xx++) {
                    int q = yy * p->w + xx;
                    dxp[q] = q == best ? g : 0.0f;
                }
        }
    }
}

/* Overlapping windows: dx = 0, then each output's dy added at its recorded
 * argmax, outputs in row order (the order maxpool_bwd_f32 adds them in). */
static void maxpool_bwd_scatter(void *arg, size_t plane, int thread)
{
    (void)thread;
    const hpool_bwd *hb = arg;
    const ct_pool2d *p = hb->p;
    size_t in0 = plane * (size_t)p->h * p->w, out0 = plane * (size_t)hb->oh * hb->ow;
    float *dxp = hb->dx + in0;
    memset(dxp, 0, (size_t)p->h * p->w * sizeof(float));
    size_t per = (size_t)hb->oh * hb->ow;
    for (size_t o = 0; o < per; o++)
        dxp[hb->am[out0 + o]] += hb->dy[out0 + o];
}

int ct_maxpool_host_backward(ct_context *ctx, const ct_pool2d *p, int oh, int ow, ct_buf dx,
                             ct_buf dy, ct_buf x, ct_buf argmax)
{
    int tiles = !ct_maxpool_overlaps(p);
    size_t planes = (size_t)p->n * p->c, ny = planes * (size_t)oh * ow;
    size_t nx = planes * (size_t)p->h * p->w;
    ct_hmap_range r[4] = {
        { dy.mem, dy.off, ny, 0, NULL },
        { tiles ? x.mem : NULL, x.off, nx, 0, NULL },
        { tiles ? NULL : argmax.mem, argmax.off, ny, 0, NULL },
        { dx.mem, dx.off, nx, 1, NULL },
    };
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, 4, &hm, &pool, "max pool backward");
    if (st)
        return st;
    hpool_bwd hb = { p, oh, ow, ct_host_avx512(), r[1].host, r[0].host, (const int *)(const void *)r[2].host,
                     r[3].host };
    ct_pool_run(pool, planes, tiles ? maxpool_bwd_tiles : maxpool_bwd_scatter, &hb);
    return ct_hmap_unmap(ctx, &hm, CT_OK, "max pool backward");
}

