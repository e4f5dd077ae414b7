/*
 * layernorm.h - layer normalization over the last dimension, as
 * torch.nn.LayerNorm(F): each row of x (R, F) (R = N for feature vectors,
 * T N for a sequence) becomes y = (x - mean) rstd w + b, with the row's
 * mean, its biased variance and rstd = 1 / sqrt(var + eps).
 *
 * The forward saves mean and rstd (R) for the backward, which writes dx
 * and accumulates dw and db (+=). GPU class: a work-group per row with a
 * tree reduction; CPU class: a work-item per row. The parameter gradients
 * are column sums in a fixed order (GPU class: two stages through a
 * workspace; CPU class: a work-item per column, or on AVX-512 CPUs the
 * host pool over the same slices of rows, src/host/layernorm_host.c):
 * deterministic, no atomics.
 *
 * With 16-bit activation storage (ct_context_set_act16) x, y, dy and dx
 * are in the storage's format and the GPU-class kernels run; w, b, mean,
 * rstd, dw, db and the workspace are float32 either way.
 */
#ifndef CT_OPS_LAYERNORM_H
#define CT_OPS_LAYERNORM_H

#include "ops/ops.h"

/* y (R, F), mean (R), rstd (R) from x (R, F), w (F), b (F); eps > 0 */
int ct_layernorm_forward(ct_context *ctx, ct_buf y, ct_buf mean, ct_buf rstd, ct_buf x, ct_buf w,
                         ct_buf b, size_t R, size_t F, float eps);
/* Floats of workspace the backward takes for (R, F). */
size_t ct_layernorm_workspace_size(size_t R, size_t F);
/* The backward's S slices of L rows for its column sums (the last may be
 * shorter, none empty): the shape alone decides them, so the summation
 * order is the same on every run and thread count. */
void ct_layernorm_slices(size_t R, size_t F, size_t *S, size_t *L);
/* dx (R, F) written (skipped when dx.mem is NULL); dw (F) and db (F)
 * accumulated; from dy (R, F), x (R, F), w (F) and the forward's mean and
 * rstd (R). work: (ct_layernorm_workspace_size(R, F)), used only inside the
 * call for the GPU class's partial sums (the CPU class does not touch it). */
int ct_layernorm_backward(ct_context *ctx, ct_buf dx, ct_buf dw, ct_buf db, ct_buf dy, ct_buf x,
                          ct_buf w, ct_buf mean, ct_buf rstd, size_t R, size_t F, ct_buf work);
/* The same, with dx_acc: dx += the input gradient (a gradient other layers
 * write too) in the same pass. On the GPU class the parameters' second
 * stage goes with dx's pass: two launches in all. */
int ct_layernorm_backward_acc(ct_context *ctx, ct_buf dx, int dx_acc, ct_buf dw, ct_buf db, ct_buf dy,
                              ct_buf x, ct_buf w, ct_buf mean, ct_buf rstd, size_t R, size_t F,
                              ct_buf work);

#endif /* CT_OPS_LAYERNORM_H */
