/*
 * conv_igemm.h - conv2d as implicit GEMMs on the GPU class
 * (src/ops/conv_igemm.c): ct_conv2d_forward and ct_conv2d_backward call
 * these after their checks, so both paths accept and refuse the same
 * arguments. The whole batch is one launch per product; no workspace.
 */
#ifndef CT_OPS_CONV_IGEMM_H
#define CT_OPS_CONV_IGEMM_H

#include "ops/conv.h"

/* Whether the context runs conv2d as implicit GEMMs: the GPU class on a
 * device cltrain's own tiles suit (ct_gemm_cl_device_ok: not Mesa's
 * llvmpipe), unless CLTRAIN_CONV=im2col. */
int ct_conv2d_igemm_ok(const ct_context *ctx, const ct_conv2d_desc *d);

/* Whether the input gradient runs as an implicit GEMM too: stride 1 (a
 * stride s would make (s^2 - 1) / s^2 of its products zeros; such layers
 * keep col2im for it, and their workspace), or any stride with 16-bit
 * activation storage (ct_context_set_act16), which col2im does not read. */
int ct_conv2d_igemm_dx_ok(const ct_context *ctx, const ct_conv2d_desc *d);

/* y = conv(x, w) + b (b.mem NULL: none); oh, ow from ct_conv2d_out_shape */
int ct_conv2d_igemm_forward(ct_context *ctx, const ct_conv2d_desc *d, int oh, int ow, ct_buf y,
                            ct_buf x, ct_buf w, ct_buf b);

/* dx = the input gradient (written), dw += the weight gradient; either
 * skipped where its mem is NULL */
int ct_conv2d_igemm_backward(ct_context *ctx, const ct_conv2d_desc *d, int oh, int ow, ct_buf dx,
                             ct_buf dw, ct_buf dy, ct_buf x, ct_buf w);

#endif /* CT_OPS_CONV_IGEMM_H */
