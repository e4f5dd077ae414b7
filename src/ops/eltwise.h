/*
 * eltwise.h - element-wise arithmetic: the residual add (forward and
 * backward), and the accumulate, scale and axpy the trainer needs where a
 * tensor fans out or gradients are combined, and the count of non-finite
 * values behind the trainer's NaN/Inf check. All operands are (n) and any
 * output may alias an input of the same call (the same elements, not a
 * shifted overlap).
 */
#ifndef CT_OPS_ELTWISE_H
#define CT_OPS_ELTWISE_H

#include "ops/ops.h"

/* y = a + b. y, a, b: (n) */
int ct_add_forward(ct_context *ctx, ct_buf y, ct_buf a, ct_buf b, size_t n);
/* The add's backward is the identity: da = dy and db = dy (written). Either
 * target may be {NULL, 0} to skip it, or dy itself (nothing to copy).
 * da, db, dy: (n) */
int ct_add_backward(ct_context *ctx, ct_buf da, ct_buf db, ct_buf dy, size_t n);
/* The same, with acc_a / acc_b: da += dy / db += dy instead (a gradient
 * other layers write too), in one pass that reads dy once. */
int ct_add_backward_acc(ct_context *ctx, ct_buf da, int acc_a, ct_buf db, int acc_b, ct_buf dy,
                        size_t n);
/* dst += src: the gradient of a tensor read by two consumers gets the
 * second one's contribution. dst, src: (n) activations (16-bit with the
 * context's activation storage, ct_context_set_act16) */
int ct_add_accumulate(ct_context *ctx, ct_buf dst, ct_buf src, size_t n);
/* dst += src over float32 buffers whatever the activation storage (the
 * trainer's counts). dst, src: (n) */
int ct_add_accumulate_f32(ct_context *ctx, ct_buf dst, ct_buf src, size_t n);
/* Activations (16-bit with the context's activation storage) from and to
 * float32: y = x rounded to the storage's format (nearest even), and
 * y = x exactly. Without the storage both are ct_copy. y, x: (n) */
int ct_act_from_f32(ct_context *ctx, ct_buf y, ct_buf x, size_t n);
int ct_act_to_f32(ct_context *ctx, ct_buf y, ct_buf x, size_t n);
/* y = x and y = +0 over activations in the context's storage (ct_copy and
 * ct_fill without it). y, x: (n), not overlapping */
int ct_act_copy(ct_context *ctx, ct_buf y, ct_buf x, size_t n);
int ct_act_zero(ct_context *ctx, ct_buf y, size_t n);
/* x *= s (a plain product: NaN and infinity in x survive s = 0). x: (n) */
int ct_scale(ct_context *ctx, ct_buf x, float s, size_t n);
/* y += a * x. y, x: (n) */
int ct_axpy(ct_context *ctx, ct_buf y, float a, ct_buf x, size_t n);

/* The gating multiply: y = x g, g one value per row of hw elements of x
 * (x (N, C, H, W) and g (N, C): rows = N C, hw = H W; two tensors of one
 * shape: hw = 1). y may alias x. y, x: (rows hw), g: (rows) */
int ct_mul_forward(ct_context *ctx, ct_buf y, ct_buf x, ct_buf g, size_t rows, size_t hw);
/* Its backward: dx = dy g and dg = the rows' sums of dy x (acc_x, acc_g:
 * added into the target instead, a gradient other layers write too);
 * either target may be {NULL, 0} to skip it. dg runs first, so dx may alias
 * dy. dx, dy, x: (rows hw), dg, g: (rows) */
int ct_mul_backward(ct_context *ctx, ct_buf dx, int acc_x, ct_buf dg, int acc_g, ct_buf dy, ct_buf x,
                    ct_buf g, size_t rows, size_t hw);

/* Blocks of rows: dst[r dld + p] = src[r sld + p] for p < len, r < rows
 * (acc: += instead), the concatenation's pieces forward and backward.
 * dst and src must not overlap. */
int ct_copy_rows(ct_context *ctx, ct_buf dst, size_t dld, ct_buf src, size_t sld, size_t len, size_t rows,
                 int acc);

/* Floats of workspace ct_nonfinite_count needs (per-work-group partial
 * counts), for any n. */
size_t ct_nonfinite_count_workspace_size(size_t n);
/* count[0] = how many of x[0..n) are NaN, +Inf or -Inf, written as a float
 * (exact below 2^24; nonzero exactly when the count is). Deterministic: an
 * integer reduction. n == 0 writes 0. The workspace may be reused by the
 * next call (the queue is in order). count: (1), x: (n),
 * workspace: (ct_nonfinite_count_workspace_size(n)) */
int ct_nonfinite_count(ct_context *ctx, ct_buf count, ct_buf x, size_t n, ct_buf workspace);
/* The same over activations in the context's storage (16-bit with
 * ct_context_set_act16). */
int ct_nonfinite_count_act(ct_context *ctx, ct_buf count, ct_buf x, size_t n, ct_buf workspace);

#endif /* CT_OPS_ELTWISE_H */
