/*
 * act.h - element-wise activations: relu, leaky relu, sigmoid, tanh, gelu
 * (the erf form, as PyTorch's default), silu, hardswish and relu6, as
 * PyTorch defines them (hardswish's gradient included: (2x + 3) / 6 on
 * [-3, 3], 0 below, 1 above).
 */
#ifndef CT_OPS_ACT_H
#define CT_OPS_ACT_H

#include "ops/ops.h"

/* The order is part of the kernels' interface (cl_kernels/act.cl). */
typedef enum ct_act {
    CT_ACT_NONE = 0,
    CT_ACT_RELU = 1,
    CT_ACT_LEAKY_RELU = 2, /* slope 0.01, as PyTorch's default */
    CT_ACT_SIGMOID = 3,
    CT_ACT_TANH = 4,
    CT_ACT_GELU = 5,
    CT_ACT_SILU = 6,      /* x sigmoid(x) */
    CT_ACT_HARDSWISH = 7, /* x min(max(x + 3, 0), 6) / 6 */
    CT_ACT_RELU6 = 8,     /* min(max(x, 0), 6) */
    CT_ACT_COUNT
} ct_act;

#define CT_LEAKY_SLOPE 0.01f

const char *ct_act_name(ct_act act);

/* Whether act's derivative needs its input (the pre-activation), not only
 * its output: gelu, silu and hardswish, whose outputs do not determine
 * their inputs. A layer with such an activation fused keeps the
 * pre-activation for its backward. */
int ct_act_needs_input(ct_act act);

/* y = act(x); y may alias x. x, y: (n) */
int ct_act_forward(ct_context *ctx, ct_act act, ct_buf y, ct_buf x, size_t n);
/* dx = dy * act'(x), from the forward input x (and its output y, which the
 * sigmoid and tanh derivatives use). dx may alias dy. All (n). */
int ct_act_backward(ct_context *ctx, ct_act act, ct_buf dx, ct_buf dy, ct_buf x, ct_buf y, size_t n);

#endif /* CT_OPS_ACT_H */
