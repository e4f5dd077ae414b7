/*
 * conv2d.c - a 2-D convolution on NCHW images, y = act(conv(x, W) + b).
 * Parameters as torch.nn.Conv2d: weight (out, C / groups, k, k), bias
 * (out). Square kernels, equal stride, padding and dilation both ways. The
 * columns of the im2col path live in the shared scratch. groups > 1
 * (depthwise at groups = C) takes the grouped kernels (ops/gconv.h), which
 * need none. With act=gelu the pre-activation is saved for the backward.
 */
#include <stdio.h>

#include "nn/layer.h"
#include "ops/act.h"
#include "ops/conv.h"
#include "ops/conv_igemm.h"
#include "ops/gconv.h"

enum { K_OUT, K_KERNEL, K_STRIDE, K_PAD, K_DILATION, K_BIAS, K_ACT, K_GROUPS };

static const ct_key_spec keys[] = {
    CT_KEY_INT_("out", 1, 0, 1, 1 << 16, "output channels"),
    CT_KEY_INT_("kernel", 1, 0, 1, 64, "kernel height and width"),
    CT_KEY_INT_("stride", 0, 1, 1, 64, "stride"),
    CT_KEY_INT_("pad", 0, 0, 0, 64, "zero padding on each side"),
    CT_KEY_INT_("dilation", 0, 1, 1, 64, "dilation"),
    CT_KEY_BOOL_("bias", 1, "add a bias"),
    CT_KEY_ACT_,
    CT_KEY_INT_("groups", 0, 1, 1, 1 << 16, "channel groups (dividing the input's and the output's channels; "
                "depthwise: the input's channels)"),
};

typedef struct conv_state {
    ct_conv2d_desc d;
    int act; /* enum ct_act */
    int groups;
} conv_state;
CT_STATE_FITS(conv_state);

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_image(in, err, n, "conv2d");
    if (st)
        return st;
    int out = (int)l->v[K_OUT], k = (int)l->v[K_KERNEL], s = (int)l->v[K_STRIDE], p = (int)l->v[K_PAD];
    int d = (int)l->v[K_DILATION], g = (int)l->v[K_GROUPS];
    if (in->d[0] % g || out % g) {
        char what[160];
        snprintf(what, sizeof what, "conv2d groups=%d must divide the input's %d channels and out=%d", g,
                 in->d[0], out);
        return ct_shape_err(err, n, what, in);
    }
    int oh = (in->d[1] + 2 * p - d * (k - 1) - 1) / s + 1;
    int ow = (in->d[2] + 2 * p - d * (k - 1) - 1) / s + 1;
    if (in->d[1] + 2 * p - d * (k - 1) - 1 < 0 || in->d[2] + 2 * p - d * (k - 1) - 1 < 0 || oh < 1 || ow < 1) {
        char what[160];
        snprintf(what, sizeof what, "conv2d kernel %d (dilation %d, pad %d) is larger than its "
                 "padded input", k, d, p);
        return ct_shape_err(err, n, what, in);
    }
    ct_set_shape(&l->out, 3, out, oh, ow);
    ct_layer_add_param(l, "weight", 1, 4, out, in->d[0] / g, k, k);
    if (l->v[K_BIAS])
        ct_layer_add_param(l, "bias", 1, 1, out, 0, 0, 0);
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    const ct_net *net = ct_plan_net(p);
    const ct_shape *is = &net->model->layers[l->inputs[0]].out;
    conv_state *s = CT_LAYER_STATE(r, conv_state);
    int k = (int)l->v[K_KERNEL], st = (int)l->v[K_STRIDE], pad = (int)l->v[K_PAD], dil = (int)l->v[K_DILATION];
    ct_conv2d_desc d = { net->batch, is->d[0], is->d[1], is->d[2], (int)l->v[K_OUT], k, k, st, st, pad, pad,
                         dil, dil };
    s->d = d;
    s->act = (int)l->v[K_ACT];
    s->groups = (int)l->v[K_GROUPS];
    if (ct_act_needs_input((ct_act)s->act)) {
        r->saved_n = r->out_n; /* the pre-activation */
        r->saved_act = 1;
    }
    /* 16-bit activations: only the implicit GEMMs have the form */
    if (net->act16 && (s->groups > 1 || !ct_conv2d_igemm_ok(net->ctx, &d)))
        return ct_fail(net->ctx, CT_ERR_UNSUPPORTED, "layer '%s' (conv2d) has no 16-bit form: %s",
                       l->name, !ct_conv2d_igemm_ok(net->ctx, &d) ? "the implicit GEMMs it would take do "
                       "not run on this device" : "groups");
    if (s->groups == 1)
        ct_plan_scratch(p, ct_conv2d_workspace_for(net->ctx, &d));
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    const conv_state *s = CT_LAYER_STATE(c->r, conv_state);
    ct_buf z = ct_act_needs_input((ct_act)s->act) ? c->r->saved : c->r->out;
    ct_buf b = ct_layer_bias(c->l, c->r->param);
    ct_buf bias = ct_layer_fuses_bias(c, s->act) ? ct_none() : b;
    int st = s->groups > 1 ? ct_gconv2d_forward(c->ctx, &s->d, s->groups, z, c->x, c->r->param, bias)
                           : ct_conv2d_forward(c->ctx, &s->d, z, c->x, c->r->param, bias, c->net->scratch,
                                               c->net->scratch_n);
    if (st || !s->act)
        return st;
    return ct_layer_act_forward(c, s->act, z, b, s->d.n, s->d.c_out, c->l->out.d[1] * c->l->out.d[2]);
}

static int backward(const ct_layer_call *c)
{
    const conv_state *s = CT_LAYER_STATE(c->r, conv_state);
    ct_buf z = ct_act_needs_input((ct_act)s->act) ? c->r->saved : c->r->out;
    ct_buf db = ct_layer_bias(c->l, c->r->grad);
    int st = ct_layer_act_backward(c, s->act, z, &db, s->d.n, s->d.c_out, c->l->out.d[1] * c->l->out.d[2]);
    if (st)
        return st;
    ct_buf dx = c->dx_needed ? c->dx : ct_none();
    if (s->groups > 1)
        return ct_gconv2d_backward(c->ctx, &s->d, s->groups, dx, c->r->grad, db, c->dy, c->x, c->r->param);
    return ct_conv2d_backward(c->ctx, &s->d, dx, c->r->grad, db, c->dy, c->x, c->r->param, c->net->scratch,
                              c->net->scratch_n);
}

static void init(const ct_layer *l, float *params, float *buffers, ct_init_rng *g)
{
    (void)buffers;
    ct_init_fan_in_uniform(l, params, g);
}

static double flops(const ct_net *net, size_t i)
{
    const ct_layer *l = &net->model->layers[i];
    const ct_param_spec *w = &l->params[0];
    return 2.0 * net->batch * (double)l->out.d[0] * l->out.d[1] * l->out.d[2] * w->shape[1] * w->shape[2] *
           w->shape[3];
}

/* Conv, then the activation */
static int export_onnx(const ct_layer_export *e)
{
    const ct_layer *l = e->l;
    int act = (int)l->v[K_ACT];
    int64_t k = (int64_t)l->v[K_KERNEL], s = (int64_t)l->v[K_STRIDE], p = (int64_t)l->v[K_PAD];
    int64_t d = (int64_t)l->v[K_DILATION], g = (int64_t)l->v[K_GROUPS];
    const char *w = ct_export_param(e, 0), *z = act ? ct_export_tmp(e, "z") : e->y;
    ct_onnx_attr a[] = { CT_ONNX_INTS("kernel_shape", k, k), CT_ONNX_INTS("strides", s, s),
                         CT_ONNX_INTS("pads", p, p, p, p), CT_ONNX_INTS("dilations", d, d), CT_ONNX_INT("group", g) };
    if (l->nparams > 1)
        ct_onnx_node(e->g, "Conv", CT_ONNX_NAMES(e->x, w, ct_export_param(e, 1)), CT_ONNX_NAMES(z), a, 5);
    else
        ct_onnx_node(e->g, "Conv", CT_ONNX_NAMES(e->x, w), CT_ONNX_NAMES(z), a, 5);
    return act ? ct_export_act(e, act, z, e->y) : ct_onnx_status(e->g);
}

CT_LAYER_TYPE(conv2d, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_ACT16, .infer = infer, .init = init,
              .plan = plan, .forward = forward, .backward = backward, .flops = flops,
              .export_onnx = export_onnx);
