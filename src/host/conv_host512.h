/*
 * conv_host512.h - the direct host convolution with AVX-512 (F, BW, DQ,
 * VL), for the "same" stride-1 convolutions (output as wide as the input),
 * the unpadded strided 1x1 ones, and other strided ones in their phase
 * form where that pays (conv_host512.c), that conv_host.c hands it where
 * ct_host_avx512() says so. The buffers are
 * already mapped; the context's thread pool and scratch (host_work.h) run
 * it in a fixed decomposition, so results do not depend on the number of
 * threads. The forms: conv_host512.c; layout and tiles: conv_same512.c.
 */
#ifndef CT_HOST_CONV_HOST512_H
#define CT_HOST_CONV_HOST512_H

#include "ops/conv.h"
#include "host/host_work.h"

/* Stride 1, dilation 1, 2 pad_w = kw - 1 (so ow = w), pad_h < kh, kh and kw
 * <= 16; or an unpadded 1x1 at any stride (subsampled first); or a strided
 * one with dilation 1 whose phase form pays (large kernels, narrow inputs). */
int ct_conv512_applies(const ct_conv2d_desc *d);

/* y (n, co, oh, w) = x (n, ci, h, w) * w + b (b may be NULL). */
int ct_conv512_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                       const float *w, const float *b);

/* dx = (or NULL), dw += (or NULL); the bias gradient is conv_host.c's. */
int ct_conv512_backward(ct_context *ctx, const ct_conv2d_desc *d, float *dx, float *dw,
                        const float *dy, const float *x, const float *w);

#endif /* CT_HOST_CONV_HOST512_H */
