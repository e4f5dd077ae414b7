/*
 * conv.c - reference 2-D convolution, in double, by its definition:
 * y[i][o][oy][ox] = b[o] + sum over (c, ky, kx) of
 *   w[o][c][ky][kx] * x[i][g Cg + c][oy sh - ph + ky dh][ox sw - pw + kx dw]  (0 outside),
 * with G groups of Cg = c_in / G input channels, g = o / (c_out / G) (G = 1:
 * every input channel).
 * The backward pass walks the same terms and distributes dy.
 */
#include <string.h>

#include "ref/conv.h"
#include "ref/dense.h"

/* Calls the body for every in-bounds term of output pixel (i, o, oy, ox);
 * xi, wi, yi are the flat indices of its x, w and y elements. */
#define CONV_TERMS(d, G, oh, ow, body)                                                         \
    for (int i = 0; i < (d)->n; i++)                                                           \
        for (int o = 0; o < (d)->c_out; o++)                                                   \
            for (int oy = 0; oy < (oh); oy++)                                                  \
                for (int ox = 0; ox < (ow); ox++) {                                            \
                    size_t yi = (((size_t)i * (d)->c_out + o) * (oh) + oy) * (ow) + ox;        \
                    int cg = (d)->c_in / (G), c0 = o / ((d)->c_out / (G)) * cg;                \
                    for (int c = 0; c < cg; c++)                                               \
                        for (int ky = 0; ky < (d)->kh; ky++) {                                 \
                            int iy = oy * (d)->stride_h - (d)->pad_h + ky * (d)->dil_h;        \
                            if (iy < 0 || iy >= (d)->h)                                        \
                                continue;                                                      \
                            for (int kx = 0; kx < (d)->kw; kx++) {                             \
                                int ix = ox * (d)->stride_w - (d)->pad_w + kx * (d)->dil_w;    \
                                if (ix < 0 || ix >= (d)->w)                                    \
                                    continue;                                                  \
                                size_t xi = (((size_t)i * (d)->c_in + c0 + c) * (d)->h + iy) * \
                                            (d)->w + ix;                                       \
                                size_t wi = (((size_t)o * cg + c) * (d)->kh + ky) *            \
                                            (d)->kw + kx;                                      \
                                body;                                                          \
                            }                                                                  \
                        }                                                                      \
                }

static void out_size(const ct_conv2d_desc *d, int *oh, int *ow)
{
    *oh = (d->h + 2 * d->pad_h - d->dil_h * (d->kh - 1) - 1) / d->stride_h + 1;
    *ow = (d->w + 2 * d->pad_w - d->dil_w * (d->kw - 1) - 1) / d->stride_w + 1;
}

void ct_ref_gconv2d_forward(const ct_conv2d_desc *d, int groups, double *y, const double *x, const double *w,
                            const double *b)
{
    int oh, ow;
    out_size(d, &oh, &ow);
    size_t P = (size_t)oh * ow;
    for (size_t k = 0; k < (size_t)d->n * d->c_out; k++)
        for (size_t p = 0; p < P; p++)
            y[k * P + p] = b ? b[k % (size_t)d->c_out] : 0.0;
    CONV_TERMS(d, groups, oh, ow, y[yi] += w[wi] * x[xi]);
}

void ct_ref_conv2d_forward(const ct_conv2d_desc *d, double *y, const double *x, const double *w,
                           const double *b)
{
    ct_ref_gconv2d_forward(d, 1, y, x, w, b);
}

void ct_ref_gconv2d_backward(const ct_conv2d_desc *d, int groups, double *dx, double *dw, double *db,
                             const double *dy, const double *x, const double *w)
{
    int oh, ow;
    out_size(d, &oh, &ow);
    if (dx)
        memset(dx, 0, (size_t)d->n * d->c_in * d->h * d->w * sizeof *dx);
    if (dx || dw)
        CONV_TERMS(d, groups, oh, ow, {
            if (dx)
                dx[xi] += w[wi] * dy[yi];
            if (dw)
                dw[wi] += x[xi] * dy[yi];
        });
    if (db)
        ct_ref_bias_backward(db, dy, d->n, d->c_out, oh * ow);
}

void ct_ref_conv2d_backward(const ct_conv2d_desc *d, double *dx, double *dw, double *db,
                            const double *dy, const double *x, const double *w)
{
    ct_ref_gconv2d_backward(d, 1, dx, dw, db, dy, x, w);
}
