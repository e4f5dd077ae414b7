/*
 * gconv_host.c - grouped convolution on the host pool (gconv_host.h): the
 * CPU class's depthwise and grouped layers. pocl runs the per-element
 * kernels of cl_kernels/gconv.cl a work-item at a time through their
 * bounds tests; here each work item owns whole planes and runs each tap as
 * a loop over the output columns that tap reaches in bounds (found once
 * per row), contiguous at stride 1, which the compiler vectorizes.
 *
 * Work items and their order are fixed by the shape, each result summed in
 * a fixed order by one item, so the bits do not depend on the thread
 * count: forward, an output plane (i, k) per item, its sums over (c, ky,
 * kx) in that order; input gradient, an input plane (i, c) per item,
 * gathered over (k, ky, kx); weight gradient, a weight row (k, c) per item,
 * each tap's sum over (i, oy, ox) in that order in float64, added to dw
 * once.
 */
#include "host/gconv_host.h"

#include <string.h>

#include "host/host_work.h"
#include "ops/dense.h"

typedef struct hgc {
    const ct_conv2d_desc *d;
    int G, oh, ow, cg, kg;
    const float *x, *w, *b, *dy;
    float *y, *dx, *dw;
} hgc;

/* The output columns [*lo, *hi) whose input column ox s - p + kx d lies in
 * [0, w) */
static void col_range(int kx_off, int s, int w, int ow, int *lo, int *hi)
{
    /* ox s + kx_off >= 0 and ox s + kx_off <= w - 1 */
    int a = kx_off >= 0 ? 0 : (-kx_off + s - 1) / s;
    int b = w - 1 - kx_off < 0 ? -1 : (w - 1 - kx_off) / s;
    *lo = a;
    *hi = b + 1 < ow ? b + 1 : ow;
    if (*hi < *lo)
        *hi = *lo;
}

static void fwd_plane(void *arg, size_t item, int thread)
{
    (void)thread;
    const hgc *h = arg;
    const ct_conv2d_desc *d = h->d;
    int i = (int)(item / (size_t)d->c_out), k = (int)(item % (size_t)d->c_out), g = k / h->kg;
    size_t P = (size_t)h->oh * h->ow;
    float *y = h->y + item * P;
    float b0 = h->b ? h->b[k] : 0.0f;
    for (size_t p = 0; p < P; p++)
        y[p] = b0;
    for (int c = 0; c < h->cg; c++) {
        const float *xp = h->x + ((size_t)i * d->c_in + (size_t)g * h->cg + c) * d->h * d->w;
        const float *wp = h->w + ((size_t)k * h->cg + c) * d->kh * d->kw;
        for (int ky = 0; ky < d->kh; ky++)
            for (int kx = 0; kx < d->kw; kx++) {
                float wv = wp[ky * d->kw + kx];
                int off = kx * d->dil_w - d->pad_w, lo, hi;
                col_range(off, d->stride_w, d->w, h->ow, &lo, &hi);
                for (int oy = 0; oy < h->oh; oy++) {
                    int iy = oy * d->stride_h - d->pad_h + ky * d->dil_h;
                    if (iy < 0 || iy >= d->h)
                        continue;
                    const float *xr = xp + (size_t)iy * d->w + off;
                    float *yr = y + (size_t)oy * h->ow;
                    if (d->stride_w == 1)
                        for (int ox = lo; ox < hi; ox++)
                            yr[ox] += wv * xr[ox];
                    else
                        for (int ox = lo; ox < hi; ox++)
                            yr[ox] += wv * xr[(size_t)ox * d->stride_w];
                }
            }
    }
}

static void bwd_data_plane(void *arg, size_t item, int thread)
{
    (void)thread;
    const hgc *h = arg;
    const ct_conv2d_desc *d = h->d;
    int i = (int)(item / (size_t)d->c_in), c = (int)(item % (size_t)d->c_in), g = c / h->cg, cl = c - g * h->cg;
    float *dx = h->dx + item * (size_t)d->h * d->w;
    memset(dx, 0, (size_t)d->h * d->w * sizeof *dx);
    for (int k = g * h->kg; k < (g + 1) * h->kg; k++) {
        const float *dp = h->dy + ((size_t)i * d->c_out + k) * h->oh * h->ow;
        const float *wp = h->w + ((size_t)k * h->cg + cl) * d->kh * d->kw;
        for (int ky = 0; ky < d->kh; ky++)
            for (int kx = 0; kx < d->kw; kx++) {
                float wv = wp[ky * d->kw + kx];
                int off = kx * d->dil_w - d->pad_w, lo, hi;
                col_range(off, d->stride_w, d->w, h->ow, &lo, &hi);
                for (int oy = 0; oy < h->oh; oy++) {
                    int iy = oy * d->stride_h - d->pad_h + ky * d->dil_h;
                    if (iy < 0 || iy >= d->h)
                        continue;
                    float *xr = dx + (size_t)iy * d->w + off;
                    const float *dr = dp + (size_t)oy * h->ow;
                    if (d->stride_w == 1)
                        for (int ox = lo; ox < hi; ox++)
                            xr[ox] += wv * dr[ox];
                    else
                        for (int ox = lo; ox < hi; ox++)
                            xr[(size_t)ox * d->stride_w] += wv * dr[ox];
                }
            }
    }
}

static void bwd_weight_row(void *arg, size_t item, int thread)
{
    (void)thread;
    const hgc *h = arg;
    const ct_conv2d_desc *d = h->d;
    int k = (int)(item / (size_t)h->cg), c = (int)(item % (size_t)h->cg), g = k / h->kg;
    float *dw = h->dw + item * (size_t)d->kh * d->kw;
    for (int ky = 0; ky < d->kh; ky++)
        for (int kx = 0; kx < d->kw; kx++) {
            int off = kx * d->dil_w - d->pad_w, lo, hi;
            col_range(off, d->stride_w, d->w, h->ow, &lo, &hi);
            double acc = 0;
            for (int i = 0; i < d->n; i++) {
                const float *xp = h->x + ((size_t)i * d->c_in + (size_t)g * h->cg + c) * d->h * d->w;
                const float *dp = h->dy + ((size_t)i * d->c_out + k) * h->oh * h->ow;
                for (int oy = 0; oy < h->oh; oy++) {
                    int iy = oy * d->stride_h - d->pad_h + ky * d->dil_h;
                    if (iy < 0 || iy >= d->h)
                        continue;
                    const float *xr = xp + (size_t)iy * d->w + off, *dr = dp + (size_t)oy * h->ow;
                    float s = 0.0f;
                    if (d->stride_w == 1)
                        for (int ox = lo; ox < hi; ox++)
                            s += dr[ox] * xr[ox];
                    else
                        for (int ox = lo; ox < hi; ox++)
                            s += dr[ox] * xr[(size_t)ox * d->stride_w];
                    acc += s;
                }
            }
            dw[ky * d->kw + kx] += (float)acc;
        }
}

int ct_gconv2d_host_forward(ct_context *ctx, const ct_conv2d_desc *d, int groups, int oh, int ow, ct_buf y,
                            ct_buf x, ct_buf w, ct_buf b)
{
    size_t nx = (size_t)d->n * d->c_in * d->h * d->w, ny = (size_t)d->n * d->c_out * oh * ow;
    size_t nw = (size_t)d->c_out * (d->c_in / groups) * d->kh * d->kw;
    ct_hmap_range r[4] = { { x.mem, x.off, nx, 0, NULL }, { w.mem, w.off, nw, 0, NULL },
                           { b.mem, b.off, b.mem ? (size_t)d->c_out : 0, 0, NULL }, { y.mem, y.off, ny, 1, NULL } };
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, 4, &hm, &pool, "grouped convolution forward");
    if (st)
        return st;
    hgc h = { d, groups, oh, ow, d->c_in / groups, d->c_out / groups, r[0].host, r[1].host,
              b.mem ? r[2].host : NULL, NULL, r[3].host, NULL, NULL };
    ct_pool_run(pool, (size_t)d->n * d->c_out, fwd_plane, &h);
    return ct_hmap_unmap(ctx, &hm, CT_OK, "grouped convolution forward");
}

int ct_gconv2d_host_backward(ct_context *ctx, const ct_conv2d_desc *d, int groups, int oh, int ow, ct_buf dx,
                             ct_buf dw, ct_buf dy, ct_buf x, ct_buf w)
{
    size_t nx = (size_t)d->n * d->c_in * d->h * d->w, ny = (size_t)d->n * d->c_out * oh * ow;
    size_t nw = (size_t)d->c_out * (d->c_in / groups) * d->kh * d->kw;
    ct_hmap_range r[5] = { { dy.mem, dy.off, ny, 0, NULL }, { x.mem, x.off, dw.mem ? nx : 0, 0, NULL },
                           { w.mem, w.off, dx.mem ? nw : 0, 0, NULL }, { dx.mem, dx.off, dx.mem ? nx : 0, 1, NULL },
                           { dw.mem, dw.off, dw.mem ? nw : 0, 1, NULL } };
    ct_pool *pool;
    ct_hmap hm;
    int st = ct_host_begin(ctx, r, 5, &hm, &pool, "grouped convolution backward");
    if (st)
        return st;
    hgc h = { d, groups, oh, ow, d->c_in / groups, d->c_out / groups, r[1].host, r[2].host, NULL, r[0].host,
              NULL, r[3].host, r[4].host };
    if (dx.mem)
        ct_pool_run(pool, (size_t)d->n * d->c_in, bwd_data_plane, &h);
    if (dw.mem)
        ct_pool_run(pool, (size_t)d->c_out * h.cg, bwd_weight_row, &h);
    return ct_hmap_unmap(ctx, &hm, CT_OK, "grouped convolution backward");
}
