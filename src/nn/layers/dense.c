/*
 * dense.c - a fully connected layer, y = act(x W^T + b), on features (N, F)
 * or on each step of a sequence (T*N, F). Parameters as torch.nn.Linear:
 * weight (out, F), bias (out). With act=gelu the pre-activation is saved
 * for the backward; other activations are inverted from y. Initialized as
 * torch.nn.Linear (uniform in +-1/sqrt(fan_in)), or with std=S the weight
 * N(0, S^2) and the bias zero (GPT-2's scheme).
 *
 * With 16-bit activation storage the products read and write the 16-bit
 * input, output and their gradients in place (ct_dense_forward_s), the
 * weights, bias and their gradients float32.
 */
#include "nn/layer.h"
#include "ops/act.h"
#include "ops/dense.h"

enum { K_OUT, K_BIAS, K_ACT, K_STD };

static const ct_key_spec keys[] = {
    CT_KEY_INT_("out", 1, 0, 1, 1 << 24, "output features"),
    CT_KEY_BOOL_("bias", 1, "add a bias"),
    CT_KEY_ACT_,
    CT_KEY_FLOAT_("std", 0, 0, 10, "initialize the weight N(0, std^2) and the bias 0; 0: as torch.nn.Linear"),
};

typedef struct dense_state {
    int out, in; /* features */
    int act;     /* enum ct_act */
} dense_state;
CT_STATE_FITS(dense_state);

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_floats(in, err, n, "dense");
    if (st)
        return st;
    int out = (int)l->v[K_OUT];
    size_t fan_in = in->sequence ? (size_t)in->d[in->ndim - 1] : ct_shape_numel(in);
    if (fan_in > (1u << 26))
        return ct_shape_err(err, n, "dense has more than 2^26 inputs", in);
    if (in->sequence) {
        ct_set_shape(&l->out, 2, in->d[0], out, 0);
        l->out.sequence = 1;
    } else {
        ct_set_shape(&l->out, 1, out, 0, 0);
    }
    ct_layer_add_param(l, "weight", 1, 2, out, (int)fan_in, 0, 0);
    if (l->v[K_BIAS])
        ct_layer_add_param(l, "bias", 1, 1, out, 0, 0, 0);
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    (void)p;
    dense_state *s = CT_LAYER_STATE(r, dense_state);
    s->out = (int)l->v[K_OUT];
    s->in = l->params[0].shape[1];
    s->act = (int)l->v[K_ACT];
    if (ct_act_needs_input((ct_act)s->act)) {
        r->saved_n = r->out_n; /* the pre-activation */
        r->saved_act = 1;
    }
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    const dense_state *s = CT_LAYER_STATE(c->r, dense_state);
    ct_buf z = ct_act_needs_input((ct_act)s->act) ? c->r->saved : c->r->out;
    ct_buf b = ct_layer_bias(c->l, c->r->param);
    int s16 = c->net->act16 ? CT_DENSE_X16 | CT_DENSE_Y16 : 0;
    if (ct_layer_fuses_bias(c, s->act)) /* GPU class: one pass adds the bias and applies act */
        return ct_dense_forward_s(c->ctx, z, c->x, c->r->param, b, (int)c->r->rows, s->in, s->out,
                                  (ct_act)s->act, s16);
    int st = ct_dense_forward_s(c->ctx, z, c->x, c->r->param, b, (int)c->r->rows, s->in, s->out, CT_ACT_NONE,
                                s16);
    if (st || !s->act)
        return st;
    return ct_act_forward(c->ctx, (ct_act)s->act, c->r->out, z, c->r->out_n);
}

static int backward(const ct_layer_call *c)
{
    const dense_state *s = CT_LAYER_STATE(c->r, dense_state);
    ct_buf z = ct_act_needs_input((ct_act)s->act) ? c->r->saved : c->r->out;
    ct_buf db = ct_layer_bias(c->l, c->r->grad);
    int st = ct_layer_act_backward(c, s->act, z, &db, (int)c->r->rows, s->out, 1);
    if (st)
        return st;
    return ct_dense_backward_s(c->ctx, c->dx_needed ? c->dx : ct_none(), c->r->grad, db, c->dy, c->x,
                               c->r->param, (int)c->r->rows, s->in, s->out, 0, 0,
                               c->net->act16 ? CT_DENSE_X16 | CT_DENSE_Y16 : 0);
}

static void init(const ct_layer *l, float *params, float *buffers, ct_init_rng *g)
{
    (void)buffers;
    double std = l->v[K_STD];
    if (!(std > 0)) {
        ct_init_fan_in_uniform(l, params, g);
        return;
    }
    size_t nw = (size_t)l->params[0].shape[0] * (size_t)l->params[0].shape[1];
    ct_init_normal_fill(params, nw, std, g);
    for (size_t e = nw; e < l->param_count; e++)
        params[e] = 0.0f;
}

static double flops(const ct_net *net, size_t i)
{
    const ct_param_spec *w = &net->model->layers[i].params[0];
    return 2.0 * (double)net->rt[i].rows * (double)w->shape[1] * (double)w->shape[0];
}

/* Gemm (transB) over (N, F), a flattened image or each step of (N, T, F),
 * then the activation */
static int export_onnx(const ct_layer_export *e)
{
    int act = (int)e->l->v[K_ACT];
    const char *w = ct_export_param(e, 0), *b = e->l->nparams > 1 ? ct_export_param(e, 1) : "";
    const char *z = act ? ct_export_tmp(e, "z") : e->y;
    ct_export_linear(e, e->x, e->in, w, b, (int)e->l->v[K_OUT], z, "linear");
    return act ? ct_export_act(e, act, z, e->y) : ct_onnx_status(e->g);
}

CT_LAYER_TYPE(dense, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_ACT16, .infer = infer, .init = init,
              .plan = plan, .forward = forward, .backward = backward, .flops = flops,
              .export_onnx = export_onnx);
