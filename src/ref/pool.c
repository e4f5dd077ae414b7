/*
 * pool.c - reference pooling, in double. Written as scatters over the
 * windows (the way PyTorch's CPU kernels are), a different route from the
 * gathers of cl_kernels/pool.cl, so the two do not share an indexing bug.
 */
#include <math.h>
#include <string.h>

#include "ref/pool.h"

static int out_h(const ct_pool2d *p)
{
    return ct_pool_out_dim(p->h, p->kh, p->sh, p->ph);
}

static int out_w(const ct_pool2d *p)
{
    return ct_pool_out_dim(p->w, p->kw, p->sw, p->pw);
}

/* One window of plane-local coordinates, clipped to the input. */
typedef struct window {
    int y0, y1, x0, x1; /* [y0, y1) x [x0, x1) inside the input */
    int area_padded;    /* PyTorch's count_include_pad divisor */
} window;

static window window_at(const ct_pool2d *p, int oy, int ox)
{
    window r;
    int y0 = oy * p->sh - p->ph, x0 = ox * p->sw - p->pw;
    int y1 = y0 + p->kh < p->h + p->ph ? y0 + p->kh : p->h + p->ph;
    int x1 = x0 + p->kw < p->w + p->pw ? x0 + p->kw : p->w + p->pw;
    r.area_padded = (y1 - y0) * (x1 - x0);
    r.y0 = y0 > 0 ? y0 : 0;
    r.x0 = x0 > 0 ? x0 : 0;
    r.y1 = y1 < p->h ? y1 : p->h;
    r.x1 = x1 < p->w ? x1 : p->w;
    return r;
}

/* The first maximum of a window (NaN wins, as in PyTorch), plane-local. */
static size_t argmax_of(const ct_pool2d *p, const window *r, const double *xp)
{
    size_t best = (size_t)r->y0 * (size_t)p->w + (size_t)r->x0;
    double m = -INFINITY;
    for (int y = r->y0; y < r->y1; y++)
        for (int x = r->x0; x < r->x1; x++) {
            size_t k = (size_t)y * (size_t)p->w + (size_t)x;
            if (xp[k] > m || isnan(xp[k])) {
                m = xp[k];
                best = k;
            }
        }
    return best;
}

void ct_ref_maxpool_forward(const ct_pool2d *p, double *y, const double *x)
{
    int oh = out_h(p), ow = out_w(p);
    size_t planes = (size_t)p->n * (size_t)p->c, in = (size_t)p->h * (size_t)p->w;
    for (size_t pl = 0; pl < planes; pl++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                window r = window_at(p, oy, ox);
                const double *xp = x + pl * in;
                y[(pl * (size_t)oh + (size_t)oy) * (size_t)ow + (size_t)ox] =
                    xp[argmax_of(p, &r, xp)];
            }
}

void ct_ref_maxpool_backward(const ct_pool2d *p, double *dx, const double *dy, const double *x)
{
    int oh = out_h(p), ow = out_w(p);
    size_t planes = (size_t)p->n * (size_t)p->c, in = (size_t)p->h * (size_t)p->w;
    memset(dx, 0, planes * in * sizeof *dx);
    for (size_t pl = 0; pl < planes; pl++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                window r = window_at(p, oy, ox);
                dx[pl * in + argmax_of(p, &r, x + pl * in)] +=
                    dy[(pl * (size_t)oh + (size_t)oy) * (size_t)ow + (size_t)ox];
            }
}

static double divisor_of(const ct_pool2d *p, const window *r)
{
    return p->count_include_pad ? r->area_padded : (r->y1 - r->y0) * (r->x1 - r->x0);
}

void ct_ref_avgpool_forward(const ct_pool2d *p, double *y, const double *x)
{
    int oh = out_h(p), ow = out_w(p);
    size_t planes = (size_t)p->n * (size_t)p->c, in = (size_t)p->h * (size_t)p->w;
    for (size_t pl = 0; pl < planes; pl++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                window r = window_at(p, oy, ox);
                double s = 0;
                for (int yy = r.y0; yy < r.y1; yy++)
                    for (int xx = r.x0; xx < r.x1; xx++)
                        s += x[pl * in + (size_t)yy * (size_t)p->w + (size_t)xx];
                y[(pl * (size_t)oh + (size_t)oy) * (size_t)ow + (size_t)ox] = s / divisor_of(p, &r);
            }
}

void ct_ref_avgpool_backward(const ct_pool2d *p, double *dx, const double *dy)
{
    int oh = out_h(p), ow = out_w(p);
    size_t planes = (size_t)p->n * (size_t)p->c, in = (size_t)p->h * (size_t)p->w;
    memset(dx, 0, planes * in * sizeof *dx);
    for (size_t pl = 0; pl < planes; pl++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                window r = window_at(p, oy, ox);
                double g = dy[(pl * (size_t)oh + (size_t)oy) * (size_t)ow + (size_t)ox] /
                           divisor_of(p, &r);
                for (int yy = r.y0; yy < r.y1; yy++)
                    for (int xx = r.x0; xx < r.x1; xx++)
                        dx[pl * in + (size_t)yy * (size_t)p->w + (size_t)xx] += g;
            }
}

void ct_ref_global_avgpool_forward(double *y, const double *x, int n, int c, int h, int w)
{
    size_t planes = (size_t)n * (size_t)c, hw = (size_t)h * (size_t)w;
    for (size_t pl = 0; pl < planes; pl++) {
        double s = 0;
        for (size_t j = 0; j < hw; j++)
            s += x[pl * hw + j];
        y[pl] = s / (double)hw;
    }
}

void ct_ref_global_avgpool_backward(double *dx, const double *dy, int n, int c, int h, int w)
{
    size_t planes = (size_t)n * (size_t)c, hw = (size_t)h * (size_t)w;
    for (size_t pl = 0; pl < planes; pl++)
        for (size_t j = 0; j < hw; j++)
            dx[pl * hw + j] = dy[pl] / (double)hw;
}
