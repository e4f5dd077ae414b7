/*
 * shortcut.c - reference option-A shortcut, in double: loops over the
 * input grid (the kernels loop over outputs).
 */
#include <string.h>

#include "ref/shortcut.h"

/* Sizes as size_t, and the flat offsets of input (b, ch, iy, ix) and of the
 * output it lands on. */
typedef struct sc_geom {
    size_t n, c, h, w, s, co, oh, ow;
} sc_geom;

static sc_geom geom(int n, int c, int h, int w, int stride, int out_channels)
{
    sc_geom g = { (size_t)n, (size_t)c, (size_t)h, (size_t)w, (size_t)stride,
                  (size_t)out_channels, (size_t)ct_shortcut_a_out_dim(h, stride),
                  (size_t)ct_shortcut_a_out_dim(w, stride) };
    return g;
}

static size_t in_at(const sc_geom *g, size_t b, size_t ch, size_t iy, size_t ix)
{
    return ((b * g->c + ch) * g->h + iy) * g->w + ix;
}

static size_t out_at(const sc_geom *g, size_t b, size_t ch, size_t iy, size_t ix)
{
    return ((b * g->co + ch) * g->oh + iy / g->s) * g->ow + ix / g->s;
}

void ct_ref_shortcut_a_forward(double *y, const double *x, int n, int c, int h, int w, int stride,
                               int out_channels)
{
    sc_geom g = geom(n, c, h, w, stride, out_channels);
    memset(y, 0, g.n * g.co * g.oh * g.ow * sizeof *y);
    for (size_t b = 0; b < g.n; b++)
        for (size_t ch = 0; ch < g.c; ch++)
            for (size_t iy = 0; iy < g.h; iy += g.s)
                for (size_t ix = 0; ix < g.w; ix += g.s)
                    y[out_at(&g, b, ch, iy, ix)] = x[in_at(&g, b, ch, iy, ix)];
}

void ct_ref_shortcut_a_backward(double *dx, const double *dy, int n, int c, int h, int w,
                                int stride, int out_channels)
{
    sc_geom g = geom(n, c, h, w, stride, out_channels);
    memset(dx, 0, g.n * g.c * g.h * g.w * sizeof *dx);
    for (size_t b = 0; b < g.n; b++)
        for (size_t ch = 0; ch < g.c; ch++)
            for (size_t iy = 0; iy < g.h; iy += g.s)
                for (size_t ix = 0; ix < g.w; ix += g.s)
                    dx[in_at(&g, b, ch, iy, ix)] = dy[out_at(&g, b, ch, iy, ix)];
}
