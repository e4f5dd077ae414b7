/*
 * conv_lane.h - conv2d as direct convolutions for runtimes that run
 * work-items as SIMD lanes (src/ops/conv_lane.c, cl_kernels/conv_lane.cl):
 * the GPU class's convolutions on Mesa's llvmpipe and other CPU runtimes
 * that are not pocl (ct_gemm_cl_reg_device), where the implicit GEMM's
 * local-memory tiles and im2col's column matrices are both slow.
 * ct_conv2d_forward and ct_conv2d_backward call these after their checks,
 * so every path accepts and refuses the same arguments. No workspace but
 * the context's split-K one for the weight gradient's slices.
 */
#ifndef CT_OPS_CONV_LANE_H
#define CT_OPS_CONV_LANE_H

#include "ops/conv.h"

/* Whether the context runs conv2d with these kernels: the GPU class on a
 * device ct_gemm_cl_reg_device names, or on any device with
 * CLTRAIN_CONV=lane (ctx->conv_direct == 2); never with
 * CLTRAIN_CONV=im2col, nor at 16-bit precision (they do not round their
 * operands: im2col and the products' 16-bit kernels do). The kernels index with int: devices whose buffers
 * can exceed 2^31 - 1 floats (CL_DEVICE_MAX_MEM_ALLOC_SIZE) are left to
 * the other paths. */
int ct_conv2d_lane_ok(const ct_context *ctx, const ct_conv2d_desc *d);

/* y = conv(x, w) + b (b.mem NULL: none); oh, ow from ct_conv2d_out_shape */
int ct_conv2d_lane_forward(ct_context *ctx, const ct_conv2d_desc *d, int oh, int ow, ct_buf y,
                           ct_buf x, ct_buf w, ct_buf b);

/* dx = the input gradient (written), dw += the weight gradient; either
 * skipped where its mem is NULL */
int ct_conv2d_lane_backward(ct_context *ctx, const ct_conv2d_desc *d, int oh, int ow, ct_buf dx,
                            ct_buf dw, ct_buf dy, ct_buf x, ct_buf w);

#endif /* CT_OPS_CONV_LANE_H */
