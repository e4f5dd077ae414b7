/*
 * shortcut.h - the ResNet option-A shortcut (He et al. 2016, CIFAR
 * variant): identity on a subsampled grid, zero channels appended.
 *   y[:, :C] = x[:, :, ::stride, ::stride],  y[:, C:] = 0
 * This matches the golden vectors (tests/golden/data/shortcut_a_0), whose
 * zeros all come after the copied channels, rather than the reference
 * code's F.pad that splits them between both sides.
 */
#ifndef CT_OPS_SHORTCUT_H
#define CT_OPS_SHORTCUT_H

#include "ops/ops.h"

/* Output spatial extent: ceil(in / stride), as x[..., ::stride] gives. */
int ct_shortcut_a_out_dim(int in, int stride);

/* x: (N, C, H, W), y: (N, out_channels, ceil(H/stride), ceil(W/stride));
 * out_channels >= C. */
int ct_shortcut_a_forward(ct_context *ctx, ct_buf y, ct_buf x, int n, int c, int h, int w,
                          int stride, int out_channels);
/* dx: (N, C, H, W), written; dy: (N, out_channels, ceil(H/stride), ceil(W/stride)) */
int ct_shortcut_a_backward(ct_context *ctx, ct_buf dx, ct_buf dy, int n, int c, int h, int w,
                           int stride, int out_channels);

#endif /* CT_OPS_SHORTCUT_H */
