/*
 * concat.c - the concatenation of 2 to 8 layers' outputs along channels
 * (images: (C_i, H, W) -> (sum C_i, H, W)) or features (vectors, and the
 * steps of sequences): from=A,B,.... A row of the output (a sample, or a
 * step of one) is the inputs' rows one after another, so each input is a
 * block of rows copied into place, and its gradient the block copied (or
 * added, into a gradient other layers write too) back out.
 */
#include <stdio.h>

#include "nn/layer.h"
#include "ops/eltwise.h"

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    if (nin < 2) {
        snprintf(err, n, "concat needs two inputs or more: from=A,B,...");
        return CT_ERR_PARSE;
    }
    ct_shape out = in[0];
    int ax = in[0].sequence ? 1 : 0; /* a sequence (T, F) joins its steps' features */
    for (int i = 0; i < nin; i++) {
        int st = ct_need_floats(&in[i], err, n, "concat");
        if (st)
            return st;
        int same = in[i].ndim == in[0].ndim && in[i].sequence == in[0].sequence && in[0].ndim > ax;
        for (int d = 0; same && d < in[0].ndim; d++)
            same = d == ax || in[i].d[d] == in[0].d[d];
        if (!same) {
            char a[64], b[64];
            ct_shape_str(&in[0], a, sizeof a);
            ct_shape_str(&in[i], b, sizeof b);
            snprintf(err, n, "concat joins channels, features or a sequence's steps' features; the other "
                     "dimensions must agree, but input 1 is %s and input %d %s", a, i + 1, b);
            return CT_ERR_SHAPE;
        }
        if (i)
            out.d[ax] += in[i].d[ax];
    }
    l->out = out;
    return CT_OK;
}

/* The floats of one row (a sample, or a step of a sequence) of a shape */
static size_t row_of(const ct_shape *s)
{
    return ct_shape_numel(s) / (s->sequence ? (size_t)s->d[0] : 1);
}

static size_t row_len(const ct_layer_call *c, int i)
{
    return row_of(&c->net->model->layers[c->l->inputs[i]].out);
}

static int forward(const ct_layer_call *c)
{
    size_t rows = c->r->rows, L = row_of(&c->l->out), at = 0;
    for (int i = 0; i < c->l->ninputs; i++) {
        size_t len = row_len(c, i);
        int st = ct_copy_rows(c->ctx, ct_buf_at(c->r->out, at), L, c->net->rt[c->l->inputs[i]].out, len, len,
                              rows, 0);
        if (st)
            return st;
        at += len;
    }
    return CT_OK;
}

static int backward(const ct_layer_call *c)
{
    size_t rows = c->r->rows, L = row_of(&c->l->out), at = 0;
    for (int i = 0; i < c->l->ninputs; i++) {
        size_t len = row_len(c, i);
        int acc; /* an input named twice: the first copy writes, the second adds */
        ct_buf d = ct_layer_input_grad(c, i, &acc);
        if (d.mem) {
            int st = ct_copy_rows(c->ctx, d, len, ct_buf_at(c->dy, at), L, len, rows, acc);
            if (st)
                return st;
        }
        at += len;
    }
    return CT_OK;
}

/* Concat along channels (axis 1 of (N, C, H, W)) or features (the last) */
static int export_onnx(const ct_layer_export *e)
{
    const char *in[CT_MAX_INPUTS];
    for (int i = 0; i < e->l->ninputs; i++)
        in[i] = e->names[e->l->inputs[i]];
    int64_t axis = e->l->out.ndim == 3 ? 1 : -1;
    return ct_onnx_node(e->g, "Concat", in, e->l->ninputs, CT_ONNX_NAMES(e->y),
                        CT_ONNX_ATTRS(CT_ONNX_INT("axis", axis)));
}

CT_LAYER_TYPE(concat, .min_inputs = 2, .max_inputs = CT_MAX_INPUTS, .flags = CT_LAYER_OWN_GRADS, .infer = infer,
              .forward = forward, .backward = backward, .export_onnx = export_onnx);
