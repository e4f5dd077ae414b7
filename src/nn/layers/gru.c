/*
 * gru.c - a stacked GRU over a sequence (T, N, F) -> (T, N, hidden), as
 * torch.nn.GRU with a zero initial state: parameters weight_ih_lK (3H, in),
 * weight_hh_lK (3H, H), bias_ih_lK, bias_hh_lK (3H) per layer K, gates in
 * PyTorch's order (r, z, n), all uniform in +-1/sqrt(H) (keys, shapes,
 * init and ONNX form shared with the LSTM: rnn.c). The forward saves every
 * layer's gates, W_hn h + b_hn and outputs for the backward.
 */
#include "nn/layers/rnn.h"
#include "ops/gru.h"

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    const ct_rnn_desc *d = ct_rnn_layer_plan(p, l, r);
    r->saved_n = (ct_gru_workspace_size(d) + sizeof(float) - 1) / sizeof(float);
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    return ct_gru_forward(c->ctx, ct_rnn_layer_desc(c->r), c->r->out, ct_none(), c->x, c->r->param,
                          c->r->saved);
}

static int backward(const ct_layer_call *c)
{
    return ct_gru_backward(c->ctx, ct_rnn_layer_desc(c->r), c->dx, c->r->grad, c->dy, c->x,
                           c->r->param, c->r->saved);
}

/* ONNX's GRU (rnn.h): gates from PyTorch's order (r, z, n) to ONNX's
 * (z, r, h); ONNX's gate b is PyTorch's onnx_gate[b]. linear_before_reset
 * = 1 is PyTorch's n: r scales W_hn h + b_hn, not h before the product. */
static const int onnx_gate[3] = { 1, 0, 2 };

static int export_onnx(const ct_layer_export *e)
{
    const ct_onnx_attr lbr = CT_ONNX_INT("linear_before_reset", 1);
    const ct_rnn_onnx form = { "GRU", onnx_gate, &lbr };
    return ct_rnn_layer_export(e, &form);
}

CT_LAYER_TYPE(gru, CT_RNN_KEYS, .min_inputs = 1, .max_inputs = 1, .variant = 3,
              .infer = ct_rnn_layer_infer, .init = ct_rnn_layer_init, .plan = plan, .forward = forward,
              .backward = backward, .flops = ct_rnn_layer_flops, .export_onnx = export_onnx);
