/*
 * batchnorm.h - batch normalisation over (N, C, HW): channel-wise for a
 * convolution's (N, C, H, W) output (HW = H * W), feature-wise for a dense
 * layer's (N, F) output (C = F, HW = 1). gamma and beta are the affine
 * weight and bias. relu = 1 fuses a following ReLU (the usual BN + ReLU of
 * ResNets); the backward then needs the fused output y.
 *
 * Training normalises with the batch's mean and biased variance, saves mean
 * and invstd = 1 / sqrt(var + eps) for the backward, and updates the running
 * statistics in place as PyTorch does, with the unbiased variance:
 *   running_mean = (1 - momentum) running_mean + momentum mean
 *   running_var  = (1 - momentum) running_var  + momentum var m / (m - 1)
 * with m = N * HW (at least 2, as PyTorch requires). Inference normalises with
 * the running statistics.
 *
 * Training and the backward take a workspace `work` of
 * ct_batchnorm_workspace_size(N, C, HW) floats, used only inside the call,
 * for the partial sums of the GPU class's two-stage reductions (the CPU
 * class does not touch it).
 */
#ifndef CT_OPS_BATCHNORM_H
#define CT_OPS_BATCHNORM_H

#include "ops/ops.h"

/* Floats of workspace for training and the backward on (N, C, HW). */
size_t ct_batchnorm_workspace_size(size_t N, size_t C, size_t HW);

/* x, y: (N, C, HW); gamma, beta, save_mean, save_invstd, running_mean,
 * running_var: (C); work: (ct_batchnorm_workspace_size). y may alias x. The
 * running buffers may both have a NULL mem (no running statistics kept). */
int ct_batchnorm_forward_train(ct_context *ctx, ct_buf y, ct_buf save_mean, ct_buf save_invstd,
                               ct_buf running_mean, ct_buf running_var, ct_buf x, ct_buf gamma,
                               ct_buf beta, size_t N, size_t C, size_t HW, float momentum,
                               float eps, int relu, ct_buf work);
/* x, y: (N, C, HW); gamma, beta, running_mean, running_var: (C). y may alias x. */
int ct_batchnorm_forward_eval(ct_context *ctx, ct_buf y, ct_buf x, ct_buf gamma, ct_buf beta,
                              ct_buf running_mean, ct_buf running_var, size_t N, size_t C,
                              size_t HW, float eps, int relu);

/* Backward of the training forward: dx written, dgamma and dbeta
 * accumulated (+=). With relu, the ReLU's mask: the kernels read y, the
 * forward's output; the host path (CPU class) recomputes the forward's
 * pre-ReLU value from x, gamma and beta, bit for bit the forward's, and
 * so reads one stream fewer. y and beta are read only with relu (their mem
 * may be NULL otherwise). dx may alias dy.
 * x, y, dy, dx: (N, C, HW); gamma, beta, save_mean, save_invstd, dgamma, dbeta: (C);
 * work: (ct_batchnorm_workspace_size) */
int ct_batchnorm_backward_train(ct_context *ctx, ct_buf dx, ct_buf dgamma, ct_buf dbeta, ct_buf dy,
                                ct_buf x, ct_buf y, ct_buf gamma, ct_buf beta, ct_buf save_mean,
                                ct_buf save_invstd, size_t N, size_t C, size_t HW, int relu,
                                ct_buf work);
/* Backward of the inference forward (statistics are constants):
 * dx = gamma dy / sqrt(running_var + eps), dgamma += sum dy xhat, dbeta +=
 * sum dy. Shapes and aliasing as ct_batchnorm_backward_train. */
int ct_batchnorm_backward_eval(ct_context *ctx, ct_buf dx, ct_buf dgamma, ct_buf dbeta, ct_buf dy,
                               ct_buf x, ct_buf y, ct_buf gamma, ct_buf beta, ct_buf running_mean,
                               ct_buf running_var, size_t N, size_t C, size_t HW, float eps,
                               int relu, ct_buf work);

#endif /* CT_OPS_BATCHNORM_H */
