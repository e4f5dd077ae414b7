/*
 * pool.h - 2-D max and average pooling over NCHW (PyTorch's max_pool2d and
 * avg_pool2d with ceil_mode false and dilation 1) and global average
 * pooling (N, C, H, W) -> (N, C).
 */
#ifndef CT_OPS_POOL_H
#define CT_OPS_POOL_H

#include "ops/ops.h"

/* The geometry of a 2-D pooling. The output is (n, c, oh, ow) with
 * oh = floor((h + 2 ph - kh) / sh) + 1 and likewise ow. */
typedef struct ct_pool2d {
    int n, c, h, w;  /* input (N, C, H, W) */
    int kh, kw;      /* window */
    int sh, sw;      /* stride */
    int ph, pw;      /* padding on both sides: -inf for max, zeros for average */
    int count_include_pad; /* average pool only: padded zeros count in the divisor */
} ct_pool2d;

/* A square window with equal stride and padding in both directions. */
ct_pool2d ct_pool2d_square(int n, int c, int h, int w, int kernel, int stride, int pad);

/* Output extent of one dimension: floor((in + 2 pad - k) / stride) + 1
 * (may be < 1 for an invalid geometry, which ct_pool2d_validate rejects). */
int ct_pool_out_dim(int in, int k, int stride, int pad);

/* Checks a geometry as PyTorch does (positive sizes, padding at most half
 * the window, an output of at least 1 x 1, element counts within uint).
 * `who` names the caller in the message. Stores the output size. */
int ct_pool2d_validate(ct_context *ctx, const ct_pool2d *p, const char *who, int *oh, int *ow);

/* Whether windows overlap (stride < kernel along some axis): then
 * ct_maxpool_backward needs the argmax record of the forward. */
int ct_maxpool_overlaps(const ct_pool2d *p);

/* y = max over each window of x; when argmax.mem is set, also records each
 * window's argmax (its first maximum, or its last NaN if it holds any, as
 * PyTorch) as an int32 flat index into the window's (H, W) input plane.
 * x: (N, C, H, W), y: (N, C, OH, OW), argmax: (N, C, OH, OW) int32 or none. */
int ct_maxpool_forward(ct_context *ctx, const ct_pool2d *p, ct_buf y, ct_buf x, ct_buf argmax);
/* dx = dy routed to each window's argmax, summed where windows overlap.
 * Overlapping windows read the argmax the forward recorded (required);
 * disjoint ones find it again from x (required) and need no record.
 * dx, x: (N, C, H, W), dy: (N, C, OH, OW), argmax: (N, C, OH, OW) int32.
 * dx is written. */
int ct_maxpool_backward(ct_context *ctx, const ct_pool2d *p, ct_buf dx, ct_buf dy, ct_buf x,
                        ct_buf argmax);

/* y = mean over each window of x (divisor per p->count_include_pad).
 * x: (N, C, H, W), y: (N, C, OH, OW) */
int ct_avgpool_forward(ct_context *ctx, const ct_pool2d *p, ct_buf y, ct_buf x);
/* dx = sum over the windows holding each element of dy / divisor.
 * dx: (N, C, H, W), dy: (N, C, OH, OW). dx is written. */
int ct_avgpool_backward(ct_context *ctx, const ct_pool2d *p, ct_buf dx, ct_buf dy);

/* y = mean of x over H and W. x: (N, C, H, W), y: (N, C) */
int ct_global_avgpool_forward(ct_context *ctx, ct_buf y, ct_buf x, int n, int c, int h, int w);
/* dx = dy / (H W) broadcast. dx: (N, C, H, W), dy: (N, C). dx is written. */
int ct_global_avgpool_backward(ct_context *ctx, ct_buf dx, ct_buf dy, int n, int c, int h, int w);

#endif /* CT_OPS_POOL_H */
