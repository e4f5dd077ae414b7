/*
 * conv_host.h - direct stride-1 convolution on the host, for CPU devices
 * that share host memory (the same devices the host GEMM path serves).
 *
 * im2col + GEMM multiplies each column element by only c_out weights, so
 * with the 16-64 output channels of CIFAR networks the GEMM starves on
 * memory traffic; a direct convolution reads each input element once per
 * tap and keeps 4 output channels x 24 pixels of sums in registers (AVX2 +
 * FMA, chosen at run time). The input gradient is the same direct
 * convolution of dy with the flipped, transposed weights; the weight
 * gradient is 4 output channels x 3 taps of dot products over the batch.
 * Work is spread over the cores by the context's thread pool (host_work.h)
 * in a fixed decomposition, so results do not depend on the number of
 * threads.
 */
#ifndef CT_HOST_CONV_HOST_H
#define CT_HOST_CONV_HOST_H

#include "ops/conv.h"

/* Whether the direct host path takes this convolution on this context:
 * the host GEMM path is active, the CPU has AVX2 and FMA, the convolution
 * has stride 1, dilation 1 and padding smaller than the kernel, and
 * CLTRAIN_CONV is not "im2col". */
int ct_conv2d_host_ok(const ct_context *ctx, const ct_conv2d_desc *d);

int ct_conv2d_host_forward(ct_context *ctx, const ct_conv2d_desc *d, ct_buf y, ct_buf x, ct_buf w,
                           ct_buf b);
int ct_conv2d_host_backward(ct_context *ctx, const ct_conv2d_desc *d, ct_buf dx, ct_buf dw,
                            ct_buf db, ct_buf dy, ct_buf x, ct_buf w);

#endif /* CT_HOST_CONV_HOST_H */
