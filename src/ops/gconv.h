/*
 * gconv.h - grouped 2-D convolution, NCHW, as PyTorch's Conv2d with
 * groups = G (depthwise at G = c_in): the channels are cut into G groups
 * and output channel k reads only the c_in / G input channels of its
 * group k / (c_out / G). Direct kernels (cl_kernels/gconv.cl) on both
 * device classes, no workspace: the weight gradient's stage-one sums live
 * in a buffer the context keeps.
 */
#ifndef CT_OPS_GCONV_H
#define CT_OPS_GCONV_H

#include "ops/conv.h"

/* Validates d and groups (>= 1, dividing c_in and c_out; every index
 * below 2^32) and gives the output size, as ct_conv2d_out_shape. */
int ct_gconv2d_out_shape(ct_context *ctx, const ct_conv2d_desc *d, int groups, int *oh, int *ow);

/* y = conv(x, w) + b (b.mem NULL: no bias).
 * x: (n, c_in, h, w); w: (c_out, c_in / groups, kh, kw); b: (c_out);
 * y: (n, c_out, oh, ow) */
int ct_gconv2d_forward(ct_context *ctx, const ct_conv2d_desc *d, int groups, ct_buf y, ct_buf x, ct_buf w,
                       ct_buf b);

/* dx = the input gradient (written); dw += the weight gradient; db += the
 * sums of dy over (n, oh, ow). Any of dx, dw, db with mem NULL is skipped.
 * Shapes as above, dy as y. */
int ct_gconv2d_backward(ct_context *ctx, const ct_conv2d_desc *d, int groups, ct_buf dx, ct_buf dw, ct_buf db,
                        ct_buf dy, ct_buf x, ct_buf w);

#endif /* CT_OPS_GCONV_H */
