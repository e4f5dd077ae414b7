/*
 * batchnorm.c - batch normalization over N (and H, W) per channel of an
 * image (N, C, H, W) or a feature vector (N, C), with an optional fused
 * ReLU. Parameters as torch.nn.BatchNorm2d: weight, bias (C); buffers
 * running_mean, running_var (C), and in checkpoints PyTorch's int64
 * num_batches_tracked (the micro-batches trained). Training saves each group's mean and
 * 1/std (C each) for the backward; with net->bn_groups G > 1 ("ghost" batch
 * norm) each of G equal parts of the batch has its own statistics. The
 * reductions' partial sums live in the net's shared scratch.
 */
#include <stdio.h>
#include <string.h>

#include "nn/layer.h"
#include "ops/act.h"
#include "ops/batchnorm.h"

enum { K_EPS, K_MOMENTUM, K_ACT };

static const ct_key_spec keys[] = {
    CT_KEY_FLOAT_("eps", 1e-5, 1e-12, 1, "added to the variance"),
    CT_KEY_FLOAT_("momentum", 0.1, 0, 1, "running statistics update rate (PyTorch's convention)"),
    CT_KEY_ACT_,
};

typedef struct bn_state {
    size_t C, HW;
    float eps, momentum;
    int relu;
} bn_state;
CT_STATE_FITS(bn_state);

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_floats(in, err, n, "batchnorm");
    if (st)
        return st;
    if (in->sequence || (in->ndim != 3 && in->ndim != 1))
        return ct_shape_err(err, n, "batchnorm needs an image (CxHxW) or a feature vector", in);
    int act = (int)l->v[K_ACT];
    if (act != 0 && act != 1) {
        snprintf(err, n, "batchnorm fuses only act=relu");
        return CT_ERR_PARSE;
    }
    l->out = *in;
    int c = in->d[0];
    ct_layer_add_param(l, "weight", 1, 1, c, 0, 0, 0);
    ct_layer_add_param(l, "bias", 1, 1, c, 0, 0, 0);
    ct_layer_add_param(l, "running_mean", 0, 1, c, 0, 0, 0);
    ct_layer_add_param(l, "running_var", 0, 1, c, 0, 0, 0);
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    bn_state *s = CT_LAYER_STATE(r, bn_state);
    s->C = (size_t)l->out.d[0];
    s->HW = l->out.ndim == 3 ? (size_t)l->out.d[1] * l->out.d[2] : 1;
    s->eps = (float)l->v[K_EPS];
    s->momentum = (float)l->v[K_MOMENTUM];
    s->relu = l->v[K_ACT] != 0;
    const ct_net *net = ct_plan_net(p);
    r->saved_n = 2 * s->C * (size_t)net->bn_groups; /* mean, 1/std per group */
    ct_plan_scratch(p, ct_batchnorm_workspace_size((size_t)(net->batch / net->bn_groups), s->C, s->HW));
    return CT_OK;
}

/* Ghost batch norm: each of the G parts of the batch is normalized with its
 * own statistics. The running statistics take part g with momentum
 * a_g = (m/G) / (1 - (G-g) m/G), g = 1..G, so that after all parts they are
 * (1 - m) r + (m/G) sum_g stat_g: the average of what G replicas, each
 * updating from its own part with momentum m, hold (the data-parallel
 * trainer averages the replicas' running statistics). */
static int forward_groups(const ct_layer_call *c, const bn_state *s)
{
    const ct_lrt *r = c->r;
    size_t C = s->C, G = (size_t)c->net->bn_groups, part = (size_t)c->net->batch / G, each = part * C * s->HW;
    int st = CT_OK;
    for (size_t g = 1; g <= G && !st; g++) {
        double share = (double)s->momentum / (double)G;
        float a = (float)(share / (1.0 - (double)(G - g) * share));
        st = ct_batchnorm_forward_train(c->ctx, ct_buf_at(r->out, (g - 1) * each),
                                        ct_buf_at(r->saved, 2 * C * (g - 1)),
                                        ct_buf_at(r->saved, 2 * C * (g - 1) + C), r->buffers,
                                        ct_buf_at(r->buffers, C), ct_buf_at(c->x, (g - 1) * each), r->param,
                                        ct_buf_at(r->param, C), part, C, s->HW, a, s->eps, s->relu,
                                        c->net->scratch);
    }
    return st;
}

static int forward(const ct_layer_call *c)
{
    const bn_state *s = CT_LAYER_STATE(c->r, bn_state);
    const ct_lrt *r = c->r;
    ct_buf gamma = r->param, beta = ct_buf_at(r->param, s->C);
    ct_buf rm = r->buffers, rv = ct_buf_at(r->buffers, s->C);
    if (c->training && c->net->bn_groups > 1)
        return forward_groups(c, s);
    if (c->training)
        return ct_batchnorm_forward_train(c->ctx, r->out, r->saved, ct_buf_at(r->saved, s->C), rm, rv, c->x,
                                          gamma, beta, (size_t)c->net->batch, s->C, s->HW, s->momentum,
                                          s->eps, s->relu, c->net->scratch);
    return ct_batchnorm_forward_eval(c->ctx, r->out, c->x, gamma, beta, rm, rv, (size_t)c->net->batch, s->C,
                                     s->HW, s->eps, s->relu);
}

static int backward(const ct_layer_call *c)
{
    const bn_state *s = CT_LAYER_STATE(c->r, bn_state);
    const ct_lrt *r = c->r;
    size_t C = s->C, G = (size_t)c->net->bn_groups, part = (size_t)c->net->batch / G, each = part * C * s->HW;
    int st = CT_OK;
    for (size_t g = 0; g < G && !st; g++)
        st = ct_batchnorm_backward_train(c->ctx, ct_buf_at(c->dx, g * each), r->grad, ct_buf_at(r->grad, C),
                                         ct_buf_at(c->dy, g * each), ct_buf_at(c->x, g * each),
                                         ct_buf_at(r->out, g * each), r->param, ct_buf_at(r->param, C),
                                         ct_buf_at(r->saved, 2 * C * g),
                                         ct_buf_at(r->saved, 2 * C * g + C), part, C, s->HW, s->relu,
                                         c->net->scratch);
    return st;
}

/* weight 1, bias 0; running mean 0, running variance 1 */
static void init(const ct_layer *l, float *params, float *buffers, ct_init_rng *g)
{
    (void)g;
    size_t at = 0, bat = 0;
    for (int j = 0; j < l->nparams; j++) {
        const ct_param_spec *ps = &l->params[j];
        size_t n = ct_param_numel(ps);
        float *dst = ps->trainable ? params + at : buffers + bat;
        float v = !strcmp(ps->suffix, "weight") || !strcmp(ps->suffix, "running_var") ? 1.0f : 0.0f;
        for (size_t e = 0; e < n; e++)
            dst[e] = v;
        *(ps->trainable ? &at : &bat) += n;
    }
}

/* BatchNormalization in its inference form (the running statistics), then
 * the fused ReLU */
static int export_onnx(const ct_layer_export *e)
{
    int relu = e->l->v[K_ACT] != 0;
    const char *z = relu ? ct_export_tmp(e, "z") : e->y;
    const char *w = ct_export_param(e, 0), *b = ct_export_param(e, 1);
    const char *m = ct_export_param(e, 2), *v = ct_export_param(e, 3);
    ct_onnx_node(e->g, "BatchNormalization", CT_ONNX_NAMES(e->x, w, b, m, v), CT_ONNX_NAMES(z),
                 CT_ONNX_ATTRS(CT_ONNX_FLOAT("epsilon", e->l->v[K_EPS])));
    return relu ? ct_export_act(e, CT_ACT_RELU, z, e->y) : ct_onnx_status(e->g);
}

CT_LAYER_TYPE(batchnorm, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_ACT16, .step_count = "num_batches_tracked",
              .infer = infer, .init = init, .plan = plan, .forward = forward, .backward = backward,
              .export_onnx = export_onnx);
