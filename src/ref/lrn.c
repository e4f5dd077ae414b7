/*
 * lrn.c - reference local response normalization, in double. The backward
 * scatters each channel's contribution over its window, the transpose of
 * the gather in cl_kernels/lrn.cl.
 */
#include <math.h>

#include "ref/lrn.h"

/* The window of channel c: [*lo, *hi], clipped to [0, channels). */
static void window_of(const ct_lrn *p, int c, int channels, int *lo, int *hi)
{
    *lo = c - p->size / 2 > 0 ? c - p->size / 2 : 0;
    *hi = c + (p->size - 1) / 2 < channels - 1 ? c + (p->size - 1) / 2 : channels - 1;
}

/* k + alpha/size * (sum of squares over the window of c), column xc with
 * channel stride hw */
static double scale_of(const ct_lrn *p, const double *xc, int c, int channels, size_t hw)
{
    int lo, hi;
    window_of(p, c, channels, &lo, &hi);
    double s = 0;
    for (int j = lo; j <= hi; j++)
        s += xc[(size_t)j * hw] * xc[(size_t)j * hw];
    return (double)p->k + (double)p->alpha / p->size * s;
}

void ct_ref_lrn_forward(const ct_lrn *p, double *y, const double *x, int n, int c, int hw)
{
    size_t plane = (size_t)c * (size_t)hw;
    for (size_t b = 0; b < (size_t)n; b++)
        for (size_t r = 0; r < (size_t)hw; r++) {
            const double *xc = x + b * plane + r;
            for (int ch = 0; ch < c; ch++)
                y[b * plane + (size_t)ch * (size_t)hw + r] =
                    xc[(size_t)ch * (size_t)hw] *
                    pow(scale_of(p, xc, ch, c, (size_t)hw), -(double)p->beta);
        }
}

void ct_ref_lrn_backward(const ct_lrn *p, double *dx, const double *dy, const double *x, int n,
                         int c, int hw)
{
    size_t plane = (size_t)c * (size_t)hw, st = (size_t)hw;
    double beta = p->beta, alpha_n = (double)p->alpha / p->size;
    for (size_t b = 0; b < (size_t)n; b++)
        for (size_t r = 0; r < (size_t)hw; r++) {
            const double *xc = x + b * plane + r, *dyc = dy + b * plane + r;
            double *dxc = dx + b * plane + r;
            for (int ch = 0; ch < c; ch++)
                dxc[(size_t)ch * st] =
                    dyc[(size_t)ch * st] * pow(scale_of(p, xc, ch, c, st), -beta);
            /* y_c depends on every x_j of its window through s_c */
            for (int ch = 0; ch < c; ch++) {
                double s = scale_of(p, xc, ch, c, st);
                double g = dyc[(size_t)ch * st] * xc[(size_t)ch * st] * pow(s, -beta - 1);
                int lo, hi;
                window_of(p, ch, c, &lo, &hi);
                for (int j = lo; j <= hi; j++)
                    dxc[(size_t)j * st] -= 2 * alpha_n * beta * xc[(size_t)j * st] * g;
            }
        }
}
