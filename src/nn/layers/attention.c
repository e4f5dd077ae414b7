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
 * workspace (the same size) is the shared scratch. With 16-bit activation
 * storage both hold 16-bit elements (the saved state in the activation
 * arena, the workspace in the first half of the float scratch).
 */
#include <math.h>
#include <stdio.h>

#include <stdlib.h>

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
    r->saved_act = net->act16 != 0; /* 16-bit storage: q, k, v, o and P in it */
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

/* Multi-head self-attention written out: the input projection as Gemm
 * over (N T, E) rows, q, k and v split into heads (N, H, T, D), scores
 * q k^T / sqrt(D) by MatMul, with causal=true a constant (T, T) mask
 * adding -inf above the diagonal (a position sees itself and earlier
 * ones), Softmax over the keys, the weighted values, the heads joined
 * back to (N, T, E) and the output projection. */
static int export_onnx(const ct_layer_export *e)
{
    ct_onnx *g = e->g;
    int64_t T = e->in->d[0], E = e->in->d[1], H = (int64_t)e->l->v[K_HEADS], D = E / H;
    const char *qkv = ct_export_tmp(e, "qkv"), *heads = ct_export_tmp(e, "qkv_heads");
    const char *qkvt = ct_export_tmp(e, "qkv_t"), *kt = ct_export_tmp(e, "k_t");
    const char *s = ct_export_tmp(e, "scores"), *ss = ct_export_tmp(e, "scaled");
    const char *p = ct_export_tmp(e, "probs"), *o = ct_export_tmp(e, "heads");
    const char *ot = ct_export_tmp(e, "heads_t"), *joined = ct_export_tmp(e, "joined");
    const char *qkv_names[3] = { ct_export_tmp(e, "q"), ct_export_tmp(e, "k"), ct_export_tmp(e, "v") };
    const char *scale = ct_onnx_scalar(g, ct_export_tmp(e, "scale"), (float)(1.0 / sqrt((double)D)));
    const char *split = ct_onnx_ints(g, ct_export_tmp(e, "heads_shape"), 5, (int64_t[]){ -1, T, 3, H, D });
    const char *join = ct_onnx_ints(g, ct_export_tmp(e, "joined_shape"), 3, (int64_t[]){ -1, T, E });

    const char *w_in = ct_export_param(e, 0), *b_in = ct_export_param(e, 1);
    ct_export_linear(e, e->x, e->in, w_in, b_in, (int)(3 * E), qkv, "in_proj");
    ct_onnx_binary(g, "Reshape", qkv, split, heads);
    ct_onnx_node(g, "Transpose", CT_ONNX_NAMES(heads), CT_ONNX_NAMES(qkvt),
                 CT_ONNX_ATTRS(CT_ONNX_INTS("perm", 2, 0, 3, 1, 4))); /* (3, N, H, T, D) */
    for (int64_t i = 0; i < 3; i++) {
        const char *at = ct_onnx_name(g, "%s_index", qkv_names[i]);
        ct_onnx_init_int64(g, at, 0, NULL, &i);
        ct_onnx_node(g, "Gather", CT_ONNX_NAMES(qkvt, at), CT_ONNX_NAMES(qkv_names[i]),
                     CT_ONNX_ATTRS(CT_ONNX_INT("axis", 0)));
    }
    ct_onnx_node(g, "Transpose", CT_ONNX_NAMES(qkv_names[1]), CT_ONNX_NAMES(kt),
                 CT_ONNX_ATTRS(CT_ONNX_INTS("perm", 0, 1, 3, 2)));
    ct_onnx_binary(g, "MatMul", qkv_names[0], kt, s);
    ct_onnx_binary(g, "Mul", s, scale, ss);
    if (e->l->v[K_CAUSAL]) {
        const char *masked = ct_export_tmp(e, "masked"), *mask = ct_export_tmp(e, "causal_mask");
        float *m = malloc((size_t)(T * T) * sizeof *m);
        if (!m)
            return ct_onnx_fail(g, ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory exporting layer '%s'",
                                           e->l->name));
        for (int64_t i = 0; i < T; i++)
            for (int64_t j = 0; j < T; j++)
                m[i * T + j] = j > i ? -INFINITY : 0.0f;
        ct_onnx_init_float(g, mask, 2, (int64_t[]){ T, T }, m);
        free(m);
        ct_onnx_binary(g, "Add", ss, mask, masked);
        ss = masked;
    }
    ct_onnx_node(g, "Softmax", CT_ONNX_NAMES(ss), CT_ONNX_NAMES(p), CT_ONNX_ATTRS(CT_ONNX_INT("axis", -1)));
    ct_onnx_binary(g, "MatMul", p, qkv_names[2], o);
    ct_onnx_node(g, "Transpose", CT_ONNX_NAMES(o), CT_ONNX_NAMES(ot),
                 CT_ONNX_ATTRS(CT_ONNX_INTS("perm", 0, 2, 1, 3))); /* (N, T, H, D) */
    ct_onnx_binary(g, "Reshape", ot, join, joined);
    return ct_export_linear(e, joined, e->in, ct_export_param(e, 2), ct_export_param(e, 3), (int)E, e->y,
                            "out_proj");
}

CT_LAYER_TYPE(attention, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_ACT16, .infer = infer,
              .init = init, .plan = plan, .forward = forward, .backward = backward, .flops = flops,
              .export_onnx = export_onnx);
