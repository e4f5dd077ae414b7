/*
 * conv.h - 2-D convolution, NCHW, as PyTorch's Conv2d with groups = 1
 * (cross-correlation; stride, zero padding and dilation per axis).
 *
 * Computed as three implicit GEMMs on the GPU class (ops/conv_igemm.h: no
 * workspace used, but for strided layers' input gradients), elsewhere as
 * im2col + GEMM. The column matrix lives in a workspace the
 * caller owns (the network's memory plan shares one across layers):
 * ct_conv2d_workspace says how big it should be. Any workspace of at least
 * c_in * kh * kw * oh * ow floats works (one image per GEMM); a larger one
 * lets one GEMM cover several images, which is faster on most devices.
 */
#ifndef CT_OPS_CONV_H
#define CT_OPS_CONV_H

#include "ops/ops.h"

typedef struct ct_conv2d_desc {
    int n, c_in, h, w;      /* input (n, c_in, h, w) */
    int c_out, kh, kw;      /* weights (c_out, c_in, kh, kw) */
    int stride_h, stride_w; /* >= 1 */
    int pad_h, pad_w;       /* >= 0, zeros on both sides */
    int dil_h, dil_w;       /* >= 1 */
} ct_conv2d_desc;

/* Validates the descriptor and gives the output's height and width:
 * oh = (h + 2 pad_h - dil_h (kh - 1) - 1) / stride_h + 1, likewise ow.
 * CT_ERR_SHAPE if the output would be empty; ctx may be NULL. */
int ct_conv2d_out_shape(ct_context *ctx, const ct_conv2d_desc *d, int *oh, int *ow);

/* The geometry as the direct kernels take it (cl_kernels/conv_igemm.cl's
 * conv_igemm_*, cl_kernels/conv_lane.cl): n, c_in, h, w, c_out, kh, kw,
 * stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, oh, ow, 0. */
cl_int16 ct_conv2d_geom16(const ct_conv2d_desc *d, int oh, int ow);

/* The workspace, in floats, that the launchers use best: columns for as
 * many images as fit in CT_CONV_WS_TARGET floats (at least one). 0 for an
 * invalid descriptor. */
#define CT_CONV_WS_TARGET ((size_t)1 << 23) /* 32 MiB */
size_t ct_conv2d_workspace(const ct_conv2d_desc *d);

/* The same for the device class of ctx: on the GPU class columns for as
 * many images as fit in CT_CONV_WS_TARGET_GPU floats, but no more than
 * 1/32 of the device's memory nor its largest allocation (and never less
 * than ct_conv2d_workspace): fewer, wider GEMMs and fewer im2col, reorder
 * and col2im launches (ResNet-56's first stage at batch 128: one chunk of
 * images instead of three). */
#define CT_CONV_WS_TARGET_GPU ((size_t)1 << 25) /* 128 MiB */
size_t ct_conv2d_workspace_for(const ct_context *ctx, const ct_conv2d_desc *d);

/* y = conv(x, w) + b. b.mem == NULL: no bias.
 * x: (n, c_in, h, w); w: (c_out, c_in, kh, kw); b: (c_out); y: (n, c_out, oh, ow);
 * ws: (ws_elems) scratch, contents undefined before and after */
int ct_conv2d_forward(ct_context *ctx, const ct_conv2d_desc *d, ct_buf y, ct_buf x, ct_buf w,
                      ct_buf b, ct_buf ws, size_t ws_elems);

/* dx = conv2d's input gradient (written); dw += weight gradient; db += sums
 * of dy over n, oh, ow. Any of dx, dw, db with mem == NULL is skipped.
 * dy: (n, c_out, oh, ow); x, dx: (n, c_in, h, w); w, dw: (c_out, c_in, kh, kw);
 * db: (c_out); ws: (ws_elems) scratch */
int ct_conv2d_backward(ct_context *ctx, const ct_conv2d_desc *d, ct_buf dx, ct_buf dw, ct_buf db,
                       ct_buf dy, ct_buf x, ct_buf w, ct_buf ws, size_t ws_elems);

/* The column matrix of the first cnt images of x, as the forward builds it
 * (the class's im2col kernel and work-groups): col (K, cnt oh ow) of
 * col_elems floats, K = c_in kh kw (benchmarks that compare other
 * convolution schemes use it) */
int ct_conv2d_im2col(ct_context *ctx, const ct_conv2d_desc *d, ct_buf col, size_t col_elems, ct_buf x,
                     int cnt);

#endif /* CT_OPS_CONV_H */
