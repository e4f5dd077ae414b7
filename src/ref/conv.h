/*
 * conv.h - reference 2-D convolution (NCHW, PyTorch's Conv2d, any groups).
 */
#ifndef CT_REF_CONV_H
#define CT_REF_CONV_H

#include "ops/conv.h"
#include "ref/ref.h"

/* y = conv(x, w) + b; b may be NULL. The descriptor must be valid
 * (ct_conv2d_out_shape), oh and ow are its output size.
 * x: (n, c_in, h, w); w: (c_out, c_in, kh, kw); b: (c_out); y: (n, c_out, oh, ow) */
void ct_ref_conv2d_forward(const ct_conv2d_desc *d, double *y, const double *x, const double *w,
                           const double *b);
/* dx = input gradient (written); dw += weight gradient; db += sums of dy.
 * NULL outputs are skipped. Shapes as above, dy as y. */
void ct_ref_conv2d_backward(const ct_conv2d_desc *d, double *dx, double *dw, double *db,
                            const double *dy, const double *x, const double *w);

/* The same with `groups` groups (dividing c_in and c_out): w is
 * (c_out, c_in / groups, kh, kw) */
void ct_ref_gconv2d_forward(const ct_conv2d_desc *d, int groups, double *y, const double *x, const double *w,
                            const double *b);
void ct_ref_gconv2d_backward(const ct_conv2d_desc *d, int groups, double *dx, double *dw, double *db,
                             const double *dy, const double *x, const double *w);

#endif /* CT_REF_CONV_H */
