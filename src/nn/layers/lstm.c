/*
 * lstm.c - a stacked LSTM over a sequence (T, N, F) -> (T, N, hidden), as
 * torch.nn.LSTM with zero initial states: parameters weight_ih_lK (4H, in),
 * weight_hh_lK (4H, H), bias_ih_lK, bias_hh_lK (4H) per layer K, gates in
 * PyTorch's order (i, f, g, o), all uniform in +-1/sqrt(H). The forward
 * saves every layer's gates, cell states and outputs for the backward.
 */
#include <math.h>

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

CT_LAYER_TYPE(lstm, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .infer = infer, .init = init,
              .plan = plan, .forward = forward, .backward = backward, .flops = flops);
