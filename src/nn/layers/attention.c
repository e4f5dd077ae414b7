/*
 * attention.c - multi-head self-attention on a sequence (T x E), output
 * T x E, as nn.MultiheadAttention(E, heads) with query = key = value = the
 * input: parameters in_proj_weight (3E, E) with q, k, v stacked in that
 * order, in_proj_bias (3E), out_proj.weight (E, E), out_proj.bias (E).
 * Scores are scaled by 1/sqrt(E / heads); causal (the default) lets a
 * query see its own position and earlier ones.
 *
 * Init as PyTorch's MultiheadAttention: xavier_uniform on in_proj_weight
 * (bound sqrt(6 / (E + 3E))), out_proj.weight as Linear's weight
 * (uniform in +-1/sqrt(E)), both biases zero; or, with std=S and
 * out_std=S2 (GPT-2's scheme, which scales the residual branches' output
 * projections down by 1/sqrt(2 layers)), in_proj_weight N(0, S^2) and
 * out_proj.weight N(0, S2^2).
 *
 * The forward saves q, k, v, the heads' outputs and the probabilities
 * (N, heads, T, T) of this layer (ops/attention.h); the backward's
 * workspace (the same size) is the shared scratch.
 */
#include <math.h>
#include <stdio.h>

#include "nn/layer.h"
#include "ops/attention.h"

enum { K_HEADS, K_CAUSAL, K_STD, K_OUT_STD };

static const ct_key_spec keys[] = {
    CT_KEY_INT_("heads", 1, 0, 1, 1 << 12, "attention heads (must divide the embedding)"),
    CT_KEY_BOOL_("causal", 1, "a position attends to itself and earlier positions only"),
    CT_KEY_FLOAT_("std", 0, 0, 10, "initialize in_proj_weight N(0, std^2); 0: xavier uniform, as PyTorch"),
    CT_KEY_FLOAT_("out_std", 0, 0, 10, "initialize out_proj.weight N(0, out_std^2); 0: as torch.nn.Linear"),
};

typedef struct attention_state {
    ct_attention_desc d; /* N is the plan's batch */
} attention_state;
CT_STATE_FITS(attention_state);

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    if (!in->sequence || in->tokens || in->ndim != 2)
        return ct_shape_err(err, n, "attention needs a sequence of vectors (T x E), e.g. from an "
                            "embedding", in);
    int E = in->d[1], heads = (int)l->v[K_HEADS];
    if (E % heads) {
        snprintf(err, n, "attention: embedding %d does not divide into heads=%d. HINT: pick heads "
                 "dividing %d", E, heads, E);
        return CT_ERR_SHAPE;
    }
    if (E > (1 << 14))
        return ct_shape_err(err, n, "attention takes an embedding of at most 16384", in);
    ct_set_shape(&l->out, 2, in->d[0], E, 0);
    l->out.sequence = 1;
    ct_layer_add_param(l, "in_proj_weight", 1, 2, 3 * E, E, 0, 0);
    ct_layer_add_param(l, "in_proj_bias", 1, 1, 3 * E, 0, 0, 0);
    ct_layer_add_param(l, "out_proj.weight", 1, 2, E, E, 0, 0);
    ct_layer_add_param(l, "out_proj.bias", 1, 1, E, 0, 0, 0);
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    const ct_net *net = ct_plan_net(p);
    const ct_shape *is = &net->model->layers[l->inputs[0]].out;
    ct_attention_desc d = { (size_t)is->d[0], (size_t)net->batch, (size_t)is->d[1],
                            (size_t)l->v[K_HEADS], (int)l->v[K_CAUSAL] };
    CT_LAYER_STATE(r, attention_state)->d = d;
    r->saved_n = ct_attention_saved(&d);
    ct_plan_scratch(p, ct_attention_work(&d));
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    return ct_attention_forward(c->ctx, &CT_LAYER_STATE(c->r, attention_state)->d, c->r->out,
                                c->r->saved, c->x, c->r->param);
}

static int backward(const ct_layer_call *c)
{
    return ct_attention_backward(c->ctx, &CT_LAYER_STATE(c->r, attention_state)->d,
                                 c->dx_needed ? c->dx : ct_none(), c->r->grad, c->dy, c->x,
                                 c->r->param, c->r->saved, c->net->scratch);
}

static void init(const ct_layer *l, float *params, float *buffers, ct_init_rng *g)
{
    (void)buffers;
    size_t E = (size_t)l->params[2].shape[0];
    double xavier = sqrt(6.0 / (double)(4 * E)), linear = 1.0 / sqrt((double)E);
    float *w_in = params, *b_in = w_in + 3 * E * E, *w_out = b_in + 3 * E, *b_out = w_out + E * E;
    if (l->v[K_STD] > 0)
        ct_init_normal_fill(w_in, 3 * E * E, l->v[K_STD], g);
    else
        for (size_t e = 0; e < 3 * E * E; e++)
            w_in[e] = (float)((2.0 * ct_init_uniform(g) - 1.0) * xavier);
    if (l->v[K_OUT_STD] > 0)
        ct_init_normal_fill(w_out, E * E, l->v[K_OUT_STD], g);
    else
        for (size_t e = 0; e < E * E; e++)
            w_out[e] = (float)((2.0 * ct_init_uniform(g) - 1.0) * linear);
    for (size_t e = 0; e < 3 * E; e++)
        b_in[e] = 0.0f;
    for (size_t e = 0; e < E; e++)
        b_out[e] = 0.0f;
}

/* the projections 2 T N 4E E, the scores and weighted values 2 N T T E
 * (causal does half of that work usefully, but computes all of it) */
static double flops(const ct_net *net, size_t i)
{
    const ct_attention_desc *d = &CT_LAYER_STATE(&net->rt[i], attention_state)->d;
    double T = (double)d->T, N = (double)d->N, E = (double)d->E;
    return 2.0 * T * N * 4.0 * E * E + 2.0 * 2.0 * N * T * T * E;
}

CT_LAYER_TYPE(attention, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .infer = infer,
              .init = init, .plan = plan, .forward = forward, .backward = backward, .flops = flops);
