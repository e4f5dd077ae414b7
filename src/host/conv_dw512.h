/*
 * conv_dw512.h - the convolution's weight gradient on the host with
 * AVX-512, in broadcast form (output or input channels along the vector
 * lanes; the layouts and tiles: conv_dw512.c), for any stride, padding and
 * dilation.
 * The buffers are already mapped; the context's thread pool and shared
 * buffers (host_work.h) run it in a fixed decomposition, so the result does
 * not depend on the number of threads.
 */
#ifndef CT_HOST_CONV_DW512_H
#define CT_HOST_CONV_DW512_H

#include "ops/conv.h"
#include "host/host_work.h"

/* dw (c_out, c_in, kh, kw) += the gradient of the convolution d over the
 * batch, from x (n, c_in, h, w) and dy (n, c_out, oh, ow). Uses the shared
 * buffers 0 to 2 of the context's host work. */
int ct_conv512_dw(ct_context *ctx, const ct_conv2d_desc *d, float *dw, const float *dy,
                  const float *x);

#endif /* CT_HOST_CONV_DW512_H */
