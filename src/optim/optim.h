/*
 * optim.h - optimizers and gradient clipping over flat buffers (kernels in
 * cl_kernels/optim.cl, host reference in src/ref/optim.c).
 *
 * A model's parameters live contiguously in one arena, their gradients in
 * another with the same layout, the optimizer state in a third; one launch
 * updates them all. Semantics are PyTorch 1.13's, operation for operation:
 *
 *   SGD   (torch.optim.SGD, maximize off):
 *           g = grad + wd p;  b = (t == 1) ? g : mu b + (1 - dampening) g;
 *           g = nesterov ? g + mu b : b;  p -= lr g
 *         (the momentum lines only when mu != 0; dampening is supported
 *         though the usual value is 0; Nesterov needs mu > 0 and dampening 0,
 *         as PyTorch insists)
 *   Adam  (torch.optim.Adam, amsgrad and maximize off): L2 decay into g,
 *           g = grad + wd p;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
 *           p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 *   AdamW (torch.optim.AdamW): decoupled decay first, p *= 1 - lr wd, then
 *         the Adam update with g = grad.
 *
 * The step count t (1-based) and the learning rate are launch arguments, so
 * a schedule (src/optim/schedule.h) feeds the lr of each step and nothing is
 * read back. At t == 1 the state is written, never read (PyTorch's zero /
 * clone initialisation), so it needs no zeroing.
 *
 * Gradient clipping (torch.nn.utils.clip_grad_norm_, L2): ct_grad_norm
 * writes ||g||_2 to a 1-element device buffer, ct_grad_clip multiplies g by
 * min(1, max_norm / (norm + 1e-6)) reading that buffer on the device.
 */
#ifndef CT_OPTIM_OPTIM_H
#define CT_OPTIM_OPTIM_H

#include "ops/ops.h"

typedef enum ct_optim_kind {
    CT_OPT_SGD = 0,
    CT_OPT_ADAM = 1,
    CT_OPT_ADAMW = 2,
    CT_OPT_COUNT
} ct_optim_kind;

typedef struct ct_optim_desc {
    ct_optim_kind kind;
    float lr;           /* the base rate (the launch takes each step's rate) */
    float momentum;     /* SGD: mu; 0 is plain SGD without state */
    float dampening;    /* SGD: usually 0 */
    int nesterov;       /* SGD: 0 or 1 */
    float weight_decay; /* SGD and Adam: L2 added to g; AdamW: decoupled */
    float beta1, beta2; /* Adam, AdamW */
    float eps;          /* Adam, AdamW */
} ct_optim_desc;

const char *ct_optim_name(ct_optim_kind kind);

/* PyTorch's defaults for `kind` (lr 0.01 for SGD, which has none; Adam and
 * AdamW: lr 1e-3, betas 0.9 / 0.999, eps 1e-8, AdamW weight decay 0.01). */
void ct_optim_defaults(ct_optim_desc *d, ct_optim_kind kind);

/* Rejects what PyTorch rejects (negative rates, betas outside [0, 1),
 * Nesterov without momentum or with dampening), with a message. */
int ct_optim_validate(ct_context *ctx, const ct_optim_desc *d);

/* Floats of state for n parameters: SGD n with momentum (the buffer b),
 * 0 without; Adam and AdamW 2 n (m in [0, n), v in [n, 2 n)). */
size_t ct_optim_state_size(const ct_optim_desc *d, size_t n);

/*
 * One optimizer step of every parameter: `step` is the 1-based step count t,
 * `lr` this step's learning rate (d->lr is ignored here).
 * params: (n), grads: (n) read only, state: (ct_optim_state_size(d, n));
 * state.mem may be NULL when that size is 0. n == 0 does nothing.
 */
int ct_optim_step(ct_context *ctx, const ct_optim_desc *d, ct_buf params, ct_buf grads,
                  ct_buf state, size_t n, long step, float lr);
/* The same step, then grads = 0, for the next step's backward to add to,
 * in the same pass: each gradient is zeroed once the step has read it, no
 * separate fill writes them all again. The caller marks the net's
 * gradients zero (ct_net.grads_zero) so that ct_net_zero_grads skips them. */
int ct_optim_step_zero_grads(ct_context *ctx, const ct_optim_desc *d, ct_buf params, ct_buf grads,
                             ct_buf state, size_t n, long step, float lr);

/* ct_optim_step_zero_grads on the `count` elements from `off` of a
 * parameter arena of `total` (its state laid out for `total`, as
 * ct_optim_state_size(d, total) gives it): the trainable layers when
 * others are frozen. */
int ct_optim_step_range(ct_context *ctx, const ct_optim_desc *d, ct_buf params, ct_buf grads, ct_buf state,
                        size_t total, size_t off, size_t count, long step, float lr);

/* Floats of workspace ct_grad_norm needs: the per-work-group partial sums
 * (never more than 256, whatever n). */
size_t ct_grad_norm_workspace_size(size_t n);

/* norm[0] = sqrt(sum grads[i]^2), deterministic for a given device (the
 * summation order depends on the device's work-group size only).
 * norm: (1), grads: (n), workspace: (ct_grad_norm_workspace_size(n)).
 * An empty buffer (n == 0) has norm 0. */
int ct_grad_norm(ct_context *ctx, ct_buf norm, ct_buf grads, size_t n, ct_buf workspace);

/* grads *= min(1, max_norm / (norm[0] + 1e-6)), norm read on the device
 * (as written by ct_grad_norm). grads: (n), norm: (1). max_norm >= 0. */
int ct_grad_clip(ct_context *ctx, ct_buf grads, size_t n, ct_buf norm, float max_norm);

#endif /* CT_OPTIM_OPTIM_H */
