/*
 * convt.c - reference transposed convolution, in double, by its definition:
 * every input pixel (i, c, iy, ix) adds w[c][o][ky][kx] x[i][c][iy][ix] to
 * y[i][o][iy s - p + ky d][ix s - p + kx d] where that lies in the output.
 * The backward walks the same terms: dx gathers w dy, dw gathers x dy.
 */
#include <string.h>

#include "ref/convt.h"
#include "ref/dense.h"

#define CONVT_TERMS(d, oh, ow, body)                                                                   \
    for (int i = 0; i < (d)->n; i++)                                                                   \
        for (int c = 0; c < (d)->c_in; c++)                                                            \
            for (int iy = 0; iy < (d)->h; iy++)                                                        \
                for (int ix = 0; ix < (d)->w; ix++) {                                                  \
                    size_t xi = (((size_t)i * (d)->c_in + c) * (d)->h + iy) * (d)->w + ix;             \
                    for (int o = 0; o < (d)->c_out; o++)                                               \
                        for (int ky = 0; ky < (d)->k; ky++) {                                          \
                            int oy = iy * (d)->stride - (d)->pad + ky * (d)->dil;                      \
                            if (oy < 0 || oy >= (oh))                                                  \
                                continue;                                                              \
                            for (int kx = 0; kx < (d)->k; kx++) {                                      \
                                int ox = ix * (d)->stride - (d)->pad + kx * (d)->dil;                  \
                                if (ox < 0 || ox >= (ow))                                              \
                                    continue;                                                          \
                                size_t yi = (((size_t)i * (d)->c_out + o) * (oh) + oy) * (ow) + ox;    \
                                size_t wi = (((size_t)c * (d)->c_out + o) * (d)->k + ky) * (d)->k + kx; \
                                body;                                                                  \
                            }                                                                          \
                        }                                                                              \
                }

void ct_ref_convt2d_forward(const ct_convt2d_desc *d, int oh, int ow, double *y, const double *x, const double *w,
                            const double *b)
{
    size_t P = (size_t)oh * ow;
    for (size_t k = 0; k < (size_t)d->n * d->c_out; k++)
        for (size_t p = 0; p < P; p++)
            y[k * P + p] = b ? b[k % (size_t)d->c_out] : 0.0;
    CONVT_TERMS(d, oh, ow, y[yi] += w[wi] * x[xi]);
}

void ct_ref_convt2d_backward(const ct_convt2d_desc *d, int oh, int ow, double *dx, double *dw, double *db,
                             const double *dy, const double *x, const double *w)
{
    if (dx)
        memset(dx, 0, (size_t)d->n * d->c_in * d->h * d->w * sizeof *dx);
    if (dx || dw)
        CONVT_TERMS(d, oh, ow, {
            if (dx)
                dx[xi] += w[wi] * dy[yi];
            if (dw)
                dw[wi] += x[xi] * dy[yi];
        });
    if (db)
        ct_ref_bias_backward(db, dy, d->n, d->c_out, oh * ow);
}
