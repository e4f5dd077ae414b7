/*
 * pool_host.c - the host max pool forward of pool_host.h.
 *
 * One work item per (image, channel) plane on the context's thread pool
 * (host_work.h); each window is scanned by maxpool_fwd_f32's rule.
 */
#include "ops/pool_host.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ops/host_work.h"
#include "ops/hostmap.h"

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
    ct_host_work *hw;
    int st = ct_host_work_get(ctx, 16, 16, 1, &hw);
    if (st)
        return st;
    size_t planes = (size_t)p->n * p->c, ny = planes * (size_t)oh * ow;
    ct_hmap_range r[3] = {
        { x.mem, x.off, planes * (size_t)p->h * p->w, 0, NULL },
        { y.mem, y.off, ny, 1, NULL },
        { argmax.mem, argmax.off, argmax.mem ? ny : 0, 1, NULL },
    };
    ct_hmap hm;
    if ((st = ct_hmap_map(ctx, r, 3, &hm, "max pool forward")))
        return st;
    /* the argmax record is int32 in a float-typed buffer */
    hpool hp = { p, oh, ow, ct_host_avx2_fma(), r[0].host, r[1].host, (int *)(void *)r[2].host };
    ct_pool_run(hw->pool, planes, maxpool_plane, &hp);
    return ct_hmap_unmap(ctx, &hm, CT_OK, "max pool forward");
}
