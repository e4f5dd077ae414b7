/*
 * convt.h - 2-D transposed convolution, NCHW, as PyTorch's
 * ConvTranspose2d with groups = 1: each input pixel scatters its weighted
 * kernel into the output, y[o, iy s - p + ky d, ix s - p + kx d] +=
 * w[i, o, ky, kx] x[i, iy, ix]; output size (h - 1) s - 2 p + d (k - 1) +
 * output_padding + 1. Weights (c_in, c_out, k, k), PyTorch's layout.
 *
 * It is the input gradient of the convolution D that maps (c_out, oh, ow)
 * to (c_in, h, w) with the same kernel, stride, padding and dilation and
 * weights (c_in, c_out, k, k), so it runs on conv2d's launchers: the
 * forward is D's input gradient, the input gradient is D's forward, the
 * weight gradient is D's weight gradient with x as D's output gradient
 * and dy as D's input. That holds for output_padding < stride (D's output
 * size is then exactly h), which the launchers require.
 */
#ifndef CT_OPS_CONVT_H
#define CT_OPS_CONVT_H

#include "ops/conv.h"

typedef struct ct_convt2d_desc {
    int n, c_in, h, w; /* input (n, c_in, h, w) */
    int c_out, k;      /* weights (c_in, c_out, k, k) */
    int stride, pad, out_pad, dil;
} ct_convt2d_desc;

/* Validates d and gives the output size; CT_ERR_SHAPE naming the values
 * otherwise (output_padding must be below the stride). */
int ct_convt2d_out_shape(ct_context *ctx, const ct_convt2d_desc *d, int *oh, int *ow);

/* The workspace in floats the launchers use best (conv2d's for D). */
size_t ct_convt2d_workspace_for(const ct_context *ctx, const ct_convt2d_desc *d);

/* y = conv_transpose(x, w) + b (b.mem NULL: no bias).
 * x: (n, c_in, h, w); w: (c_in, c_out, k, k); b: (c_out); y: (n, c_out, oh, ow) */
int ct_convt2d_forward(ct_context *ctx, const ct_convt2d_desc *d, ct_buf y, ct_buf x, ct_buf w, ct_buf b,
                       ct_buf ws, size_t ws_elems);

/* dx = the input gradient (written); dw += the weight gradient; db += the
 * sums of dy over (n, oh, ow). mem NULL skips one. Shapes as above. */
int ct_convt2d_backward(ct_context *ctx, const ct_convt2d_desc *d, ct_buf dx, ct_buf dw, ct_buf db, ct_buf dy,
                        ct_buf x, ct_buf w, ct_buf ws, size_t ws_elems);

#endif /* CT_OPS_CONVT_H */
