/*
 * convt.h - reference transposed convolution (NCHW, PyTorch's
 * ConvTranspose2d, groups = 1), in double, by its definition.
 */
#ifndef CT_REF_CONVT_H
#define CT_REF_CONVT_H

#include "ops/convt.h"
#include "ref/ref.h"

/* y = conv_transpose(x, w) + b; b may be NULL; d valid, (oh, ow) its output.
 * x: (n, c_in, h, w); w: (c_in, c_out, k, k); b: (c_out); y: (n, c_out, oh, ow) */
void ct_ref_convt2d_forward(const ct_convt2d_desc *d, int oh, int ow, double *y, const double *x, const double *w,
                            const double *b);
/* dx = input gradient (written); dw += weight gradient; db += sums of dy.
 * NULL outputs are skipped. */
void ct_ref_convt2d_backward(const ct_convt2d_desc *d, int oh, int ow, double *dx, double *dw, double *db,
                             const double *dy, const double *x, const double *w);

#endif /* CT_REF_CONVT_H */
