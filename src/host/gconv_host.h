/*
 * gconv_host.h - grouped convolution on the host pool, for the CPU class
 * (src/ops/gconv.c calls it where the class has a host pool). Arguments as
 * ops/gconv.h's, the descriptor already checked; oh, ow its output size.
 * The backward leaves the bias gradient to the caller.
 */
#ifndef CT_HOST_GCONV_HOST_H
#define CT_HOST_GCONV_HOST_H

#include "ops/gconv.h"

int ct_gconv2d_host_forward(ct_context *ctx, const ct_conv2d_desc *d, int groups, int oh, int ow, ct_buf y,
                            ct_buf x, ct_buf w, ct_buf b);
int ct_gconv2d_host_backward(ct_context *ctx, const ct_conv2d_desc *d, int groups, int oh, int ow, ct_buf dx,
                             ct_buf dw, ct_buf dy, ct_buf x, ct_buf w);

#endif /* CT_HOST_GCONV_HOST_H */
