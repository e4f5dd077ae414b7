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

#include "host/host_work.h"
#include "ops/conv.h"

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
