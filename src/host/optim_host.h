/*
 * optim_host.h - the optimizer steps on the host pool (host_work.h) for
 * contexts whose device class runs host ops (host_pool: the CPU class on
 * the host GEMM path). An optimizer step streams every parameter, its
 * gradient and its state once: on pocl the kernels ran at a third of the
 * memory bandwidth a vector loop on the host pool reaches (SGD with
 * momentum on AlexNet-S's 61 M parameters: 46 ms as a kernel, 18 ms here).
 *
 * ct_optim_step (optim.c) checks its arguments and calls these where
 * ct_optim_host_ok says so. The arguments are the kernels'
 * (cl_kernels/optim.cl).
 */
#ifndef CT_HOST_OPTIM_HOST_H
#define CT_HOST_OPTIM_HOST_H

#include "ops/ops.h"

/* Below this many parameters the kernel runs (it does not block). */
#define CT_OPTIM_HOST_MIN 4096

int ct_optim_host_ok(const ct_context *ctx, size_t n);

/* b: the momentum (unused, any buffer, when mu is 0); zero: then g = 0 */
int ct_host_sgd_step(ct_context *ctx, ct_buf p, ct_buf g, ct_buf b, size_t n, float lr, float wd,
                     float mu, float one_minus_damp, int nesterov, int first, int zero);
int ct_host_adam_step(ct_context *ctx, ct_buf p, ct_buf g, ct_buf m, ct_buf v, size_t n, float decay,
                      float l2, float beta1, float one_minus_beta1, float beta2, float one_minus_beta2,
                      float step_size, float bc2_sqrt, float eps, int first, int zero);

#endif /* CT_HOST_OPTIM_HOST_H */
