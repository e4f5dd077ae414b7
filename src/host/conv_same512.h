/*
 * conv_same512.h - the AVX-512 tiles of the direct host convolution for
 * "same" stride-1 convolutions (output as wide as the input), forward and
 * input gradient (conv_same512.c). conv_host512.c calls them, directly or
 * on the subsampled or phase-split forms it makes of other convolutions.
 * The buffers are already mapped; the context's thread pool and scratch
 * (host_work.h) run the tiles in a fixed decomposition, so results do not
 * depend on the number of threads. x86 only (CT_HOST_X86), called only
 * where ct_host_avx512() says so.
 */
#ifndef CT_HOST_CONV_SAME512_H
#define CT_HOST_CONV_SAME512_H

#include <stdint.h>

#include "host/host_work.h"
#include "ops/conv.h"

/* The weights a tile computes with: w (c_out, c_in, kh, kw) of the forward,
 * or (flip) the input gradient's w(c, o, kh-1-i, kw-1-j), the tiles' output
 * channel o being the forward's input channel */
typedef struct ct_conv512_wsrc {
    const float *w;
    int co, ci, kh, kw, flip; /* the forward's c_out and c_in */
} ct_conv512_wsrc;

/* The weight of tile output channel o, input channel c at tap (i, j);
 * zero outside the channels */
float ct_conv512_weight(const ct_conv512_wsrc *s, int o, int c, int i, int j);

/* Channels c (low half) and c + 1 of the same as a pair of bf16, rounded
 * to nearest even */
uint32_t ct_conv512_weight_pair(const ct_conv512_wsrc *s, int o, int c, int i, int j);

/* d: stride 1, dilation 1, pad_h < kh, pad_w < kw, kh and kw <= 16. The
 * output is computed as wide as the input (w columns): the convolution's
 * own where 2 pad_w = kw - 1, else with extra columns that the phase form
 * crops off.
 * y (n, c_out, oh, w) = x (n, c_in, h, w) * w + b (b may be NULL). rc: NULL,
 * or per input channel c the taps that are not zero, rows [rc[4c],
 * rc[4c + 1]) x columns [rc[4c + 2], rc[4c + 3]) (the phase form's): only
 * those are packed and read. */
int ct_conv512_same_forward(ct_context *ctx, const ct_conv2d_desc *d, float *y, const float *x,
                            const float *w, const float *b, const int *rc);

/* dx (n, c_in, h, w) = the input gradient from dy (n, c_out, oh, w): the
 * forward tiles over dy with the flipped, transposed weights; d and rc as
 * ct_conv512_same_forward's. */
int ct_conv512_same_dx(ct_context *ctx, const ct_conv2d_desc *d, float *dx, const float *dy,
                       const float *w, const int *rc);

#endif /* CT_HOST_CONV_SAME512_H */
