/*
 * loss_host.h - softmax cross-entropy on the host pool (host_work.h) for
 * contexts whose device class says so (host_pool: the CPU class on the host
 * GEMM path), with the meanings of the CPU-class kernels of
 * cl_kernels/loss.cl (softmax_xent_rows_f32 + softmax_xent_sum_f32 forward,
 * softmax_xent_bwd_rows_f32 backward). A language model's loss reads T*N
 * rows of a vocabulary's logits between two host GEMMs; as kernels it
 * handed the cores to pocl's workers and back twice per step.
 *
 * AVX-512 CPUs only: the exps come from host/vmath512.h (within 1 ulp), so
 * the bits differ from the kernels' by the exp's rounding, within the
 * tolerances of src/check/loss.c. (A scalar loop with expf measured twice
 * the kernels' time.)
 *
 * ct_softmax_xent_forward and ct_softmax_xent_backward (loss.c) check
 * their arguments and call these where ct_loss_host_ok says so.
 */
#ifndef CT_HOST_LOSS_HOST_H
#define CT_HOST_LOSS_HOST_H

#include "ops/ops.h"

/* Logit counts (N K) below this stay with the kernels: a host op maps its
 * buffers (a blocking call), a kernel launch does not block. */
#define CT_LOSS_HOST_MIN 4096

/* The context's class runs softmax cross-entropy over (N, K) logits on the host. */
int ct_loss_host_ok(const ct_context *ctx, size_t N, size_t K);

/* As ct_softmax_xent_forward with ws given (2 N floats: row losses, row
 * hits). x: (N, K), labels: (N) int32, loss: (1), correct: (1) or NULL */
int ct_host_softmax_xent_forward(ct_context *ctx, ct_buf loss, ct_buf correct, ct_buf x,
                                 ct_buf labels, size_t N, size_t K, ct_buf ws);
/* dx = (softmax(x) - onehot(labels)) * scale, scale = dloss_scale / N as the
 * launcher computes it. x, dx: (N, K), labels: (N) int32 */
int ct_host_softmax_xent_backward(ct_context *ctx, ct_buf dx, ct_buf x, ct_buf labels, size_t N,
                                  size_t K, float scale);

#endif /* CT_HOST_LOSS_HOST_H */
