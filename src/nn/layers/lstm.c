/*
 * lstm.c - a stacked LSTM over a sequence (T, N, F) -> (T, N, hidden), as
 * torch.nn.LSTM with zero initial states: parameters weight_ih_lK (4H, in),
 * weight_hh_lK (4H, H), bias_ih_lK, bias_hh_lK (4H) per layer K, gates in
 * PyTorch's order (i, f, g, o), all uniform in +-1/sqrt(H). The forward
 * saves every layer's gates, cell states and outputs for the backward.
 */
#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer.h"
#include "ops/lstm.h"

enum { K_HIDDEN, K_LAYERS };

static const ct_key_spec keys[] = {
    CT_KEY_INT_("hidden", 1, 0, 1, 1 << 14, "hidden size"),
    CT_KEY_INT_("layers", 0, 1, 1, 4, "stacked layers"),
};

static const char *const names[4][4] = {
    { "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0" },
    { "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1" },
    { "weight_ih_l2", "weight_hh_l2", "bias_ih_l2", "bias_hh_l2" },
    { "weight_ih_l3", "weight_hh_l3", "bias_ih_l3", "bias_hh_l3" },
};

typedef struct lstm_state {
    ct_lstm_desc d;
} lstm_state;
CT_STATE_FITS(lstm_state);

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    if (!in->sequence || in->tokens || in->ndim != 2)
        return ct_shape_err(err, n, "lstm needs a sequence of vectors (T x F), e.g. from an embedding", in);
    int h = (int)l->v[K_HIDDEN], layers = (int)l->v[K_LAYERS];
    ct_set_shape(&l->out, 2, in->d[0], h, 0);
    l->out.sequence = 1;
    for (int k = 0; k < layers; k++) {
        ct_layer_add_param(l, names[k][0], 1, 2, 4 * h, k ? h : in->d[1], 0, 0);
        ct_layer_add_param(l, names[k][1], 1, 2, 4 * h, h, 0, 0);
        ct_layer_add_param(l, names[k][2], 1, 1, 4 * h, 0, 0, 0);
        ct_layer_add_param(l, names[k][3], 1, 1, 4 * h, 0, 0, 0);
    }
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    const ct_net *net = ct_plan_net(p);
    const ct_shape *is = &net->model->layers[l->inputs[0]].out;
    ct_lstm_desc d = { is->d[0], net->batch, is->d[1], (int)l->v[K_HIDDEN], (int)l->v[K_LAYERS] };
    CT_LAYER_STATE(r, lstm_state)->d = d;
    r->saved_n = (ct_lstm_workspace_size(&d) + sizeof(float) - 1) / sizeof(float);
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    return ct_lstm_forward(c->ctx, &CT_LAYER_STATE(c->r, lstm_state)->d, c->r->out, ct_none(), ct_none(), c->x,
                           c->r->param, c->r->saved);
}

static int backward(const ct_layer_call *c)
{
    return ct_lstm_backward(c->ctx, &CT_LAYER_STATE(c->r, lstm_state)->d, c->dx, c->r->grad, c->dy, c->x,
                            c->r->param, c->r->saved);
}

static void init(const ct_layer *l, float *params, float *buffers, ct_init_rng *g)
{
    (void)buffers;
    double bound = 1.0 / sqrt(l->v[K_HIDDEN]);
    for (size_t e = 0; e < l->param_count; e++)
        params[e] = (float)((2.0 * ct_init_uniform(g) - 1.0) * bound);
}

static double flops(const ct_net *net, size_t i)
{
    const ct_lstm_desc *d = &CT_LAYER_STATE(&net->rt[i], lstm_state)->d;
    double f = 0;
    for (int k = 0; k < d->layers; k++)
        f += 2.0 * d->T * d->N * 4.0 * d->hidden * ((k ? d->hidden : d->input) + d->hidden);
    return f;
}

/* ONNX's LSTM per stacked layer, time-major inside: (N, T, F) is
 * transposed to (T, N, F), each layer's Y (T, 1, N, H) squeezed to the next
 * one's input, and the last transposed back to (N, T, H). Gates go from
 * PyTorch's order (i, f, g, o) to ONNX's (i, o, f, c): W (1, 4H, in) and
 * R (1, 4H, H) from weight_ih and weight_hh, B (1, 8H) = [Wb, Rb] from
 * bias_ih and bias_hh. Zero initial states, as cltrain's. */
static const int onnx_gate[4] = { 0, 3, 1, 2 }; /* ONNX's gate b is PyTorch's onnx_gate[b] */

/* parameter j of the layer with its gate blocks (H rows of `cols` each) in ONNX's order */
static void reorder(const ct_layer_export *e, int j, float *tmp, float *dst, size_t H, size_t cols)
{
    ct_export_floats(e, j, tmp);
    for (int b = 0; b < 4; b++)
        memcpy(dst + (size_t)b * H * cols, tmp + (size_t)onnx_gate[b] * H * cols, H * cols * sizeof(float));
}

static int export_onnx(const ct_layer_export *e)
{
    ct_onnx *g = e->g;
    const ct_layer *l = e->l;
    int64_t H = (int64_t)l->v[K_HIDDEN];
    size_t most = 8 * (size_t)H;
    for (int j = 0; j < l->nparams; j++)
        most = ct_param_numel(&l->params[j]) > most ? ct_param_numel(&l->params[j]) : most;
    float *tmp = malloc(most * sizeof *tmp), *dst = malloc(most * sizeof *dst);
    if (!tmp || !dst) {
        free(tmp);
        free(dst);
        return ct_onnx_fail(g, ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory exporting layer '%s'",
                                       l->name));
    }
    const char *axis1 = ct_onnx_ints(g, ct_export_tmp(e, "axis1"), 1, (int64_t[]){ 1 });
    const char *x = ct_export_tmp(e, "time_major");
    ct_onnx_node(g, "Transpose", CT_ONNX_NAMES(e->x), CT_ONNX_NAMES(x),
                 CT_ONNX_ATTRS(CT_ONNX_INTS("perm", 1, 0, 2)));
    for (int k = 0; k < (int)l->v[K_LAYERS]; k++) {
        int64_t in = l->params[4 * k].shape[1];
        const char *W = ct_onnx_name(g, "%s/W_l%d", l->name, k), *R = ct_onnx_name(g, "%s/R_l%d", l->name, k);
        const char *B = ct_onnx_name(g, "%s/B_l%d", l->name, k), *Y = ct_onnx_name(g, "%s/Y_l%d", l->name, k);
        reorder(e, 4 * k, tmp, dst, (size_t)H, (size_t)in);
        ct_onnx_init_float(g, W, 3, (int64_t[]){ 1, 4 * H, in }, dst);
        reorder(e, 4 * k + 1, tmp, dst, (size_t)H, (size_t)H);
        ct_onnx_init_float(g, R, 3, (int64_t[]){ 1, 4 * H, H }, dst);
        reorder(e, 4 * k + 2, tmp, dst, (size_t)H, 1);
        reorder(e, 4 * k + 3, tmp, dst + 4 * H, (size_t)H, 1);
        ct_onnx_init_float(g, B, 2, (int64_t[]){ 1, 8 * H }, dst);
        ct_onnx_node(g, "LSTM", CT_ONNX_NAMES(x, W, R, B), CT_ONNX_NAMES(Y),
                     CT_ONNX_ATTRS(CT_ONNX_INT("hidden_size", H)));
        x = ct_onnx_name(g, "%s/h_l%d", l->name, k);
        ct_onnx_binary(g, "Squeeze", Y, axis1, x);
    }
    free(tmp);
    free(dst);
    return ct_onnx_node(g, "Transpose", CT_ONNX_NAMES(x), CT_ONNX_NAMES(e->y),
                        CT_ONNX_ATTRS(CT_ONNX_INTS("perm", 1, 0, 2)));
}

CT_LAYER_TYPE(lstm, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .infer = infer, .init = init,
              .plan = plan, .forward = forward, .backward = backward, .flops = flops,
              .export_onnx = export_onnx);
