/*
 * rmsnorm.h - RMS normalization over the last dimension, as
 * torch.nn.RMSNorm(F, eps): each row of x (R, F) (R = N for feature
 * vectors, T N for a sequence) becomes y = x rstd w, rstd = 1 / sqrt(mean
 * of the row's squares + eps). The forward saves rstd (R); the backward
 * writes (or adds into) dx and accumulates dw (+=). GPU class: a work-group
 * per row, dw in two stages through a workspace; CPU class: a work-item per
 * row, and one per column for dw. Deterministic, no atomics.
 */
#ifndef CT_OPS_RMSNORM_H
#define CT_OPS_RMSNORM_H

#include "ops/ops.h"

/* y (R, F), rstd (R) from x (R, F) and w (F); eps > 0. y may alias x. */
int ct_rmsnorm_forward(ct_context *ctx, ct_buf y, ct_buf rstd, ct_buf x, ct_buf w, size_t R, size_t F,
                       float eps);
/* Floats of workspace the backward takes for (R, F). */
size_t ct_rmsnorm_workspace_size(size_t R, size_t F);
/* dx (R, F) written, or added with dx_acc (skipped when dx.mem is NULL); dw
 * (F) accumulated; from dy (R, F), x (R, F), w (F) and the forward's rstd
 * (R). work: (ct_rmsnorm_workspace_size(R, F)), the GPU class's partial
 * sums. */
int ct_rmsnorm_backward(ct_context *ctx, ct_buf dx, int dx_acc, ct_buf dw, ct_buf dy, ct_buf x, ct_buf w,
                        ct_buf rstd, size_t R, size_t F, ct_buf work);

#endif /* CT_OPS_RMSNORM_H */
