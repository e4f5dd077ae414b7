/*
 * rnn.c - the recurrent layer types' shared keys, shapes, init, plan,
 * flops and ONNX form (rnn.h).
 */
#include "nn/layers/rnn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { K_HIDDEN, K_LAYERS };

const ct_key_spec ct_rnn_keys[2] = {
    CT_KEY_INT_("hidden", 1, 0, 1, 1 << 14, "hidden size"),
    CT_KEY_INT_("layers", 0, 1, 1, CT_RNN_MAX_LAYERS, "stacked layers"),
};

static const char *const names[CT_RNN_MAX_LAYERS][4] = {
    { "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0" },
    { "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1" },
    { "weight_ih_l2", "weight_hh_l2", "bias_ih_l2", "bias_hh_l2" },
    { "weight_ih_l3", "weight_hh_l3", "bias_ih_l3", "bias_hh_l3" },
};

CT_STATE_FITS(ct_rnn_layer_state);

int ct_rnn_layer_infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    if (!in->sequence || in->tokens || in->ndim != 2) {
        char what[96];
        snprintf(what, sizeof what, "%s needs a sequence of vectors (T x F), e.g. from an embedding",
                 l->type->name);
        return ct_shape_err(err, n, what, in);
    }
    int h = (int)l->v[K_HIDDEN], layers = (int)l->v[K_LAYERS], G = l->type->variant;
    ct_set_shape(&l->out, 2, in->d[0], h, 0);
    l->out.sequence = 1;
    for (int k = 0; k < layers; k++) {
        ct_layer_add_param(l, names[k][0], 1, 2, G * h, k ? h : in->d[1], 0, 0);
        ct_layer_add_param(l, names[k][1], 1, 2, G * h, h, 0, 0);
        ct_layer_add_param(l, names[k][2], 1, 1, G * h, 0, 0, 0);
        ct_layer_add_param(l, names[k][3], 1, 1, G * h, 0, 0, 0);
    }
    return CT_OK;
}

void ct_rnn_layer_init(const ct_layer *l, float *params, float *buffers, ct_init_rng *g)
{
    (void)buffers;
    double bound = 1.0 / sqrt(l->v[K_HIDDEN]);
    for (size_t e = 0; e < l->param_count; e++)
        params[e] = (float)((2.0 * ct_init_uniform(g) - 1.0) * bound);
}

const ct_rnn_desc *ct_rnn_layer_plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    const ct_net *net = ct_plan_net(p);
    const ct_shape *is = &net->model->layers[l->inputs[0]].out;
    ct_rnn_desc d = { is->d[0], net->batch, is->d[1], (int)l->v[K_HIDDEN], (int)l->v[K_LAYERS] };
    CT_LAYER_STATE(r, ct_rnn_layer_state)->d = d;
    return ct_rnn_layer_desc(r);
}

const ct_rnn_desc *ct_rnn_layer_desc(const ct_lrt *r)
{
    return &CT_LAYER_STATE(r, const ct_rnn_layer_state)->d;
}

double ct_rnn_layer_flops(const ct_net *net, size_t i)
{
    const ct_rnn_desc *d = ct_rnn_layer_desc(&net->rt[i]);
    double f = 0, G = net->model->layers[i].type->variant;
    for (int k = 0; k < d->layers; k++)
        f += 2.0 * d->T * d->N * G * d->hidden * ((k ? d->hidden : d->input) + d->hidden);
    return f;
}

/* parameter j of the layer with its gate blocks (H rows of `cols` each) in ONNX's order */
static void reorder(const ct_layer_export *e, const int *gate, int G, int j, float *tmp, float *dst,
                    size_t H, size_t cols)
{
    ct_export_floats(e, j, tmp);
    for (int b = 0; b < G; b++)
        memcpy(dst + (size_t)b * H * cols, tmp + (size_t)gate[b] * H * cols, H * cols * sizeof(float));
}

int ct_rnn_layer_export(const ct_layer_export *e, const ct_rnn_onnx *form)
{
    ct_onnx *g = e->g;
    const ct_layer *l = e->l;
    int G = l->type->variant;
    int64_t H = (int64_t)l->v[K_HIDDEN];
    size_t most = 2 * (size_t)G * (size_t)H;
    for (int j = 0; j < l->nparams; j++)
        most = ct_param_numel(&l->params[j]) > most ? ct_param_numel(&l->params[j]) : most;
    float *tmp = malloc(most * sizeof *tmp), *dst = malloc(most * sizeof *dst);
    ct_onnx_attr attrs[2] = { CT_ONNX_INT("hidden_size", H) };
    if (!tmp || !dst) {
        free(tmp);
        free(dst);
        return ct_onnx_fail(g, ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory exporting layer '%s'",
                                       l->name));
    }
    if (form->extra)
        attrs[1] = *form->extra;
    const char *axis1 = ct_onnx_ints(g, ct_export_tmp(e, "axis1"), 1, (int64_t[]){ 1 });
    const char *x = ct_export_tmp(e, "time_major");
    ct_onnx_node(g, "Transpose", CT_ONNX_NAMES(e->x), CT_ONNX_NAMES(x),
                 CT_ONNX_ATTRS(CT_ONNX_INTS("perm", 1, 0, 2)));
    for (int k = 0; k < (int)l->v[K_LAYERS]; k++) {
        int64_t in = l->params[4 * k].shape[1], GH = G * H;
        const char *W = ct_onnx_name(g, "%s/W_l%d", l->name, k), *R = ct_onnx_name(g, "%s/R_l%d", l->name, k);
        const char *B = ct_onnx_name(g, "%s/B_l%d", l->name, k), *Y = ct_onnx_name(g, "%s/Y_l%d", l->name, k);
        reorder(e, form->gate, G, 4 * k, tmp, dst, (size_t)H, (size_t)in);
        ct_onnx_init_float(g, W, 3, (int64_t[]){ 1, GH, in }, dst);
        reorder(e, form->gate, G, 4 * k + 1, tmp, dst, (size_t)H, (size_t)H);
        ct_onnx_init_float(g, R, 3, (int64_t[]){ 1, GH, H }, dst);
        reorder(e, form->gate, G, 4 * k + 2, tmp, dst, (size_t)H, 1);
        reorder(e, form->gate, G, 4 * k + 3, tmp, dst + GH, (size_t)H, 1);
        ct_onnx_init_float(g, B, 2, (int64_t[]){ 1, 2 * GH }, dst);
        ct_onnx_node(g, form->op, CT_ONNX_NAMES(x, W, R, B), CT_ONNX_NAMES(Y), attrs, form->extra ? 2 : 1);
        x = ct_onnx_name(g, "%s/h_l%d", l->name, k);
        ct_onnx_binary(g, "Squeeze", Y, axis1, x);
    }
    free(tmp);
    free(dst);
    return ct_onnx_node(g, "Transpose", CT_ONNX_NAMES(x), CT_ONNX_NAMES(e->y),
                        CT_ONNX_ATTRS(CT_ONNX_INTS("perm", 1, 0, 2)));
}
