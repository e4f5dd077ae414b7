/*
 * batchnorm_host.h - batch norm forward and backward on the host, for the
 * CPU class where ct_batchnorm_host_ok says so (batchnorm_host.c). The
 * launchers of batchnorm.c check the arguments and call these with the same
 * meanings: train selects the saved statistics (forward: compute them and
 * update the running ones; backward: mean and invstd) or the running ones
 * (mean and variance).
 */
#ifndef CT_HOST_BATCHNORM_HOST_H
#define CT_HOST_BATCHNORM_HOST_H

#include "ops/ops.h"

/* The CPU class with the host GEMM path, on a CPU with AVX-512. */
int ct_batchnorm_host_ok(const ct_context *ctx);

int ct_batchnorm_host_forward(ct_context *ctx, ct_buf y, ct_buf save_mean, ct_buf save_invstd,
                              ct_buf running_mean, ct_buf running_var, ct_buf x, ct_buf gamma,
                              ct_buf beta, size_t N, size_t C, size_t HW, float momentum, float eps,
                              int train, int relu);

/* With relu, the mask from the forward's pre-ReLU value recomputed from x,
 * gamma and beta with the forward's operations (the same bits), where the
 * kernels read y: one stream fewer over memory. */
int ct_batchnorm_host_backward(ct_context *ctx, ct_buf dx, ct_buf dgamma, ct_buf dbeta, ct_buf dy,
                               ct_buf x, ct_buf gamma, ct_buf beta, ct_buf mean, ct_buf stat,
                               size_t N, size_t C, size_t HW, float eps, int train, int relu);

#endif /* CT_HOST_BATCHNORM_HOST_H */
