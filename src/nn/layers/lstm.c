/*
 * lstm.c - a stacked LSTM over a sequence (T, N, F) -> (T, N, hidden), as
 * torch.nn.LSTM with zero initial states: parameters weight_ih_lK (4H, in),
 * weight_hh_lK (4H, H), bias_ih_lK, bias_hh_lK (4H) per layer K, gates in
 * PyTorch's order (i, f, g, o), all uniform in +-1/sqrt(H) (keys, shapes,
 * init and ONNX form shared with the GRU: rnn.c). The forward saves every
 * layer's gates, cell states and outputs for the backward.
 */
#include "nn/layers/rnn.h"
#include "ops/lstm.h"

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    const ct_rnn_desc *d = ct_rnn_layer_plan(p, l, r);
    r->saved_n = (ct_lstm_workspace_size(d) + sizeof(float) - 1) / sizeof(float);
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    return ct_lstm_forward(c->ctx, ct_rnn_layer_desc(c->r), c->r->out, ct_none(), ct_none(), c->x,
                           c->r->param, c->r->saved);
}

static int backward(const ct_layer_call *c)
{
    return ct_lstm_backward(c->ctx, ct_rnn_layer_desc(c->r), c->dx, c->r->grad, c->dy, c->x,
                            c->r->param, c->r->saved);
}

/* ONNX's LSTM (rnn.h): gates from PyTorch's order (i, f, g, o) to ONNX's
 * (i, o, f, c); ONNX's gate b is PyTorch's onnx_gate[b]. */
static const int onnx_gate[4] = { 0, 3, 1, 2 };

static int export_onnx(const ct_layer_export *e)
{
    const ct_rnn_onnx form = { "LSTM", onnx_gate, NULL };
    return ct_rnn_layer_export(e, &form);
}

CT_LAYER_TYPE(lstm, CT_RNN_KEYS, .min_inputs = 1, .max_inputs = 1, .variant = 4,
              .infer = ct_rnn_layer_infer, .init = ct_rnn_layer_init, .plan = plan, .forward = forward,
              .backward = backward, .flops = ct_rnn_layer_flops, .export_onnx = export_onnx);
