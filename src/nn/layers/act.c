/*
 * act.c - the element-wise activations as layers: relu, leaky_relu
 * (slope 0.01), sigmoid, tanh, gelu (erf form), silu, hardswish and relu6,
 * y = f(x) on any float
 * shape. They share everything but f, which the type's variant names
 * (enum ct_act); the backward reads x or y, whichever f' needs.
 */
#include "nn/layer.h"
#include "ops/act.h"

static int forward(const ct_layer_call *c)
{
    return ct_act_forward(c->ctx, (ct_act)c->l->type->variant, c->r->out, c->x, c->r->out_n);
}

static int backward(const ct_layer_call *c)
{
    if (!c->dx_needed)
        return CT_OK;
    return ct_act_backward(c->ctx, (ct_act)c->l->type->variant, c->dx, c->dy, c->x, c->r->out, c->r->out_n);
}

/* Relu, LeakyRelu (alpha 0.01), Sigmoid, Tanh, HardSwish; gelu as 0.5 x (1 +
 * Erf(x / sqrt 2)), silu as x Sigmoid(x), relu6 as Clip(x, 0, 6) */
static int export_onnx(const ct_layer_export *e)
{
    return ct_export_act(e, e->l->type->variant, e->x, e->y);
}

#define ACT_TYPE(n, act)                                                                                      \
    CT_LAYER_TYPE(n, .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_ACT16, .variant = act, .infer = ct_infer_same,              \
                  .forward = forward, .backward = backward, .export_onnx = export_onnx)

ACT_TYPE(relu, CT_ACT_RELU);
ACT_TYPE(leaky_relu, CT_ACT_LEAKY_RELU);
ACT_TYPE(sigmoid, CT_ACT_SIGMOID);
ACT_TYPE(tanh, CT_ACT_TANH);
ACT_TYPE(gelu, CT_ACT_GELU);
ACT_TYPE(silu, CT_ACT_SILU);
ACT_TYPE(hardswish, CT_ACT_HARDSWISH);
ACT_TYPE(relu6, CT_ACT_RELU6);
