/*
 * add.c - the sum of two layers' outputs of one shape (residual
 * connections): from=A,B. Its backward hands dy to both inputs itself, in
 * one pass: a copy, or an add into a gradient that other layers also write
 * unless it is the first writer there (ct_net_grad_first).
 */
#include <stdio.h>

#include "nn/layer.h"
#include "ops/eltwise.h"

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    if (nin != 2) {
        snprintf(err, n, "add needs two inputs: from=A,B");
        return CT_ERR_PARSE;
    }
    int st = ct_need_floats(&in[0], err, n, "add");
    if (st)
        return st;
    int same = in[0].ndim == in[1].ndim && in[0].sequence == in[1].sequence;
    for (int i = 0; same && i < in[0].ndim; i++)
        same = in[0].d[i] == in[1].d[i];
    if (!same) {
        char a[64], b[64];
        ct_shape_str(&in[0], a, sizeof a);
        ct_shape_str(&in[1], b, sizeof b);
        snprintf(err, n, "add needs inputs of one shape, but they are %s and %s", a, b);
        return CT_ERR_SHAPE;
    }
    l->out = in[0];
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    return ct_add_forward(c->ctx, c->r->out, c->x, c->net->rt[c->l->inputs[1]].out, c->r->out_n);
}

static int backward(const ct_layer_call *c)
{
    int acc[2];
    ct_buf d[2] = { ct_layer_input_grad(c, 0, &acc[0]), ct_layer_input_grad(c, 1, &acc[1]) };
    if (d[0].mem && d[1].mem && d[0].mem == d[1].mem && d[0].off == d[1].off) {
        /* from=A,A: dA = 2 dy (or += 2 dy), in two passes */
        int st = ct_add_backward_acc(c->ctx, d[0], acc[0], (ct_buf){ NULL, 0 }, 0, c->dy, c->r->out_n);
        return st ? st : ct_add_accumulate(c->ctx, d[1], c->dy, c->r->out_n);
    }
    /* both inputs' gradients in one pass */
    return ct_add_backward_acc(c->ctx, d[0], acc[0], d[1], acc[1], c->dy, c->r->out_n);
}

/* Add of the two inputs */
static int export_onnx(const ct_layer_export *e)
{
    return ct_onnx_binary(e->g, "Add", e->x, e->names[e->l->inputs[1]], e->y);
}

CT_LAYER_TYPE(add, .min_inputs = 2, .max_inputs = 2, .flags = CT_LAYER_OWN_GRADS | CT_LAYER_ACT16, .infer = infer,
              .forward = forward, .backward = backward, .export_onnx = export_onnx);
