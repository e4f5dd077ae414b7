/*
 * mul.c - the gating multiply: from=X,G, y = x g. G is X's shape (an
 * element-wise product) or one value per channel of an image X: (C), as a
 * dense layer gives it, or (C, 1, 1) (squeeze-and-excitation's gate,
 * broadcast over H x W). Its backward writes or adds both inputs'
 * gradients itself, as add does: dx = dy g, dg = the sums of dy x over each
 * channel's H x W.
 */
#include <stdio.h>

#include "nn/layer.h"
#include "ops/eltwise.h"

/* Whether gate shape g broadcasts over image x: (C) or (C, 1, 1) */
static int is_gate(const ct_shape *x, const ct_shape *g)
{
    return x->ndim == 3 && !x->sequence && !g->sequence &&
           ((g->ndim == 1 && g->d[0] == x->d[0]) ||
            (g->ndim == 3 && g->d[0] == x->d[0] && g->d[1] == 1 && g->d[2] == 1));
}

static int same_shape(const ct_shape *a, const ct_shape *b)
{
    int same = a->ndim == b->ndim && a->sequence == b->sequence;
    for (int i = 0; same && i < a->ndim; i++)
        same = a->d[i] == b->d[i];
    return same;
}

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    if (nin != 2) {
        snprintf(err, n, "mul needs two inputs: from=X,GATE");
        return CT_ERR_PARSE;
    }
    int st = ct_need_floats(&in[0], err, n, "mul");
    if (!st)
        st = ct_need_floats(&in[1], err, n, "mul");
    if (st)
        return st;
    if (!same_shape(&in[0], &in[1]) && !is_gate(&in[0], &in[1])) {
        char a[64], b[64];
        ct_shape_str(&in[0], a, sizeof a);
        ct_shape_str(&in[1], b, sizeof b);
        snprintf(err, n, "mul needs inputs of one shape, or an image and one value per channel ((C) or "
                 "(C, 1, 1)), but they are %s and %s", a, b);
        return CT_ERR_SHAPE;
    }
    l->out = in[0];
    return CT_OK;
}

/* The elements per gate value: H W for a gate, 1 for one shape */
static size_t per_gate(const ct_layer_call *c)
{
    const ct_shape *x = &c->net->model->layers[c->l->inputs[0]].out;
    const ct_shape *g = &c->net->model->layers[c->l->inputs[1]].out;
    return same_shape(x, g) ? 1 : (size_t)x->d[1] * (size_t)x->d[2];
}

static int forward(const ct_layer_call *c)
{
    size_t hw = per_gate(c);
    return ct_mul_forward(c->ctx, c->r->out, c->x, c->net->rt[c->l->inputs[1]].out, c->r->out_n / hw, hw);
}

static int backward(const ct_layer_call *c)
{
    int acc[2];
    ct_buf d[2] = { ct_layer_input_grad(c, 0, &acc[0]), ct_layer_input_grad(c, 1, &acc[1]) };
    size_t hw = per_gate(c);
    ct_buf x = c->x, g = c->net->rt[c->l->inputs[1]].out;
    if (d[0].mem && d[1].mem && d[0].mem == d[1].mem && d[0].off == d[1].off) {
        /* from=A,A (x squared): dA = 2 dy x, or += 2 dy x, in two passes that
         * each add dy x */
        int st = ct_mul_backward(c->ctx, d[0], acc[0], ct_none(), 0, c->dy, x, g, c->r->out_n, 1);
        return st ? st : ct_mul_backward(c->ctx, d[1], 1, ct_none(), 0, c->dy, x, g, c->r->out_n, 1);
    }
    return ct_mul_backward(c->ctx, d[0], acc[0], d[1], acc[1], c->dy, x, g, c->r->out_n / hw, hw);
}

/* Mul; a (C) gate unsqueezed to (C, 1, 1) first, so that it broadcasts over
 * H and W as numpy's rules line it up from the right */
static int export_onnx(const ct_layer_export *e)
{
    const ct_shape *x = &e->model->layers[e->l->inputs[0]].out;
    const ct_shape *g = &e->model->layers[e->l->inputs[1]].out;
    const char *gate = e->names[e->l->inputs[1]];
    if (!same_shape(x, g) && g->ndim == 1) {
        const int64_t v[2] = { 2, 3 };
        const char *axes = ct_onnx_ints(e->g, ct_export_tmp(e, "axes"), 2, v);
        const char *g4 = ct_export_tmp(e, "gate");
        ct_onnx_node(e->g, "Unsqueeze", CT_ONNX_NAMES(gate, axes), CT_ONNX_NAMES(g4), CT_ONNX_NO_ATTRS);
        gate = g4;
    }
    return ct_onnx_binary(e->g, "Mul", e->x, gate, e->y);
}

CT_LAYER_TYPE(mul, .min_inputs = 2, .max_inputs = 2, .flags = CT_LAYER_OWN_GRADS, .infer = infer,
              .forward = forward, .backward = backward, .export_onnx = export_onnx);
