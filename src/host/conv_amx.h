/*
 * conv_amx.h - "same" stride-1 convolutions with bf16 operands on AMX
 * tiles (conv_amx.c): what conv_same512.c's forward and input gradient
 * and conv_dw512.c's weight gradient run where the context's products are
 * bf16 on AMX (gemm512.h's CT_GEMM512_BF16_AMX). The buffers are already mapped; the context's
 * thread pool and scratch (host_work.h) run it in a fixed decomposition,
 * so results do not depend on the number of threads. Call only where
 * ct_host_amx() says so.
 */
#ifndef CT_HOST_CONV_AMX_H
#define CT_HOST_CONV_AMX_H

#include "host/host_work.h"
#include "ops/conv.h"

/* Whether the tiles pay for d (the input channels of the convolution
 * they compute: c_in, or with flip c_out) */
int ct_conv_amx_same_takes(const ct_conv2d_desc *d, int flip);

/* d as ct_conv512_same_forward's (stride 1, dilation 1, pad_h < kh,
 * pad_w < kw; the output as wide as the input), without tap ranges.
 * flip 0: y (n, c_out, oh, w) = x (n, c_in, h, w) * w + b (b may be NULL);
 * flip 1: y = the input gradient dx (n, c_in, h, w) from x = dy
 * (n, c_out, oh, w), the flipped, transposed weights (b NULL). */
int ct_conv_amx_same(ct_context *ctx, const ct_conv2d_desc *d, int flip, float *y, const float *x,
                     const float *w, const float *b);

/* Whether ct_conv_amx_dw takes d: stride 1, dilation 1, pad_h < kh, the
 * output as wide as the input (2 pad_w = kw - 1), and the tiles pay (16
 * input channels or more). */
int ct_conv_amx_dw_takes(const ct_conv2d_desc *d);

/* dw (c_out, c_in, kh, kw) += the weight gradient of d over the batch from
 * x (n, c_in, h, w) and dy (n, c_out, oh, w), bf16 operands on AMX tiles.
 * Uses the shared buffer 0 of the context's host work. */
int ct_conv_amx_dw(ct_context *ctx, const ct_conv2d_desc *d, float *dw, const float *dy, const float *x);

#endif /* CT_HOST_CONV_AMX_H */
