/*
 * conv_transpose2d.c - a 2-D transposed convolution on NCHW images, y =
 * act(conv_transpose(x, W) + b): U-Net's and autoencoders' learned
 * upsampling. Parameters as torch.nn.ConvTranspose2d (groups = 1): weight
 * (C, out, k, k), bias (out). It runs on the convolution's launchers
 * (ops/convt.h), so its columns share conv2d's scratch. With act=gelu the
 * pre-activation is saved for the backward.
 */
#include <stdio.h>

#include "nn/layer.h"
#include "ops/act.h"
#include "ops/convt.h"

enum { K_OUT, K_KERNEL, K_STRIDE, K_PAD, K_OUT_PAD, K_DILATION, K_BIAS, K_ACT };

static const ct_key_spec keys[] = {
    CT_KEY_INT_("out", 1, 0, 1, 1 << 16, "output channels"),
    CT_KEY_INT_("kernel", 1, 0, 1, 64, "kernel height and width"),
    CT_KEY_INT_("stride", 0, 1, 1, 64, "stride"),
    CT_KEY_INT_("pad", 0, 0, 0, 64, "padding taken from each side of the output"),
    CT_KEY_INT_("output_padding", 0, 0, 0, 63, "rows and columns added at the bottom and right (below the stride)"),
    CT_KEY_INT_("dilation", 0, 1, 1, 64, "dilation"),
    CT_KEY_BOOL_("bias", 1, "add a bias"),
    CT_KEY_ACT_,
};

typedef struct convt_state {
    ct_convt2d_desc d;
    int act; /* enum ct_act */
    int hw;  /* output pixels per channel */
} convt_state;
CT_STATE_FITS(convt_state);

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_image(in, err, n, "conv_transpose2d");
    if (st)
        return st;
    int out = (int)l->v[K_OUT], k = (int)l->v[K_KERNEL], s = (int)l->v[K_STRIDE], p = (int)l->v[K_PAD];
    int op = (int)l->v[K_OUT_PAD], d = (int)l->v[K_DILATION];
    long span = (long)d * (k - 1) + op + 1 - 2L * p;
    long oh = (long)(in->d[1] - 1) * s + span, ow = (long)(in->d[2] - 1) * s + span;
    if (op >= s || oh < 1 || ow < 1 || oh > 1 << 20 || ow > 1 << 20) {
        char what[200];
        snprintf(what, sizeof what, "conv_transpose2d kernel %d, stride %d, pad %d, output_padding %d, dilation %d "
                 "(output_padding must be below the stride, the output from 1 to 2^20 wide: here %ldx%ld)",
                 k, s, p, op, d, oh, ow);
        return ct_shape_err(err, n, what, in);
    }
    ct_set_shape(&l->out, 3, out, (int)oh, (int)ow);
    ct_layer_add_param(l, "weight", 1, 4, in->d[0], out, k, k);
    if (l->v[K_BIAS])
        ct_layer_add_param(l, "bias", 1, 1, out, 0, 0, 0);
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    const ct_net *net = ct_plan_net(p);
    const ct_shape *is = &net->model->layers[l->inputs[0]].out;
    convt_state *s = CT_LAYER_STATE(r, convt_state);
    s->d = (ct_convt2d_desc){ net->batch, is->d[0], is->d[1], is->d[2], (int)l->v[K_OUT], (int)l->v[K_KERNEL],
                              (int)l->v[K_STRIDE], (int)l->v[K_PAD], (int)l->v[K_OUT_PAD], (int)l->v[K_DILATION] };
    s->act = (int)l->v[K_ACT];
    s->hw = l->out.d[1] * l->out.d[2];
    if (ct_act_needs_input((ct_act)s->act))
        r->saved_n = r->out_n; /* the pre-activation */
    ct_plan_scratch(p, ct_convt2d_workspace_for(net->ctx, &s->d));
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    const convt_state *s = CT_LAYER_STATE(c->r, convt_state);
    ct_buf z = ct_act_needs_input((ct_act)s->act) ? c->r->saved : c->r->out;
    ct_buf b = ct_layer_bias(c->l, c->r->param);
    int st = ct_convt2d_forward(c->ctx, &s->d, z, c->x, c->r->param, ct_layer_fuses_bias(c, s->act) ? ct_none() : b,
                                c->net->scratch, c->net->scratch_n);
    if (st || !s->act)
        return st;
    return ct_layer_act_forward(c, s->act, z, b, s->d.n, s->d.c_out, s->hw);
}

static int backward(const ct_layer_call *c)
{
    const convt_state *s = CT_LAYER_STATE(c->r, convt_state);
    ct_buf z = ct_act_needs_input((ct_act)s->act) ? c->r->saved : c->r->out;
    ct_buf db = ct_layer_bias(c->l, c->r->grad);
    int st = ct_layer_act_backward(c, s->act, z, &db, s->d.n, s->d.c_out, s->hw);
    if (st)
        return st;
    return ct_convt2d_backward(c->ctx, &s->d, c->dx_needed ? c->dx : ct_none(), c->r->grad, db, c->dy, c->x,
                               c->r->param, c->net->scratch, c->net->scratch_n);
}

/* PyTorch's: Kaiming-uniform over the weight's dimension 1 on (out k k) */
static void init(const ct_layer *l, float *params, float *buffers, ct_init_rng *g)
{
    (void)buffers;
    ct_init_fan_in_uniform(l, params, g);
}

static double flops(const ct_net *net, size_t i)
{
    const ct_layer *l = &net->model->layers[i];
    const ct_param_spec *w = &l->params[0];
    const ct_shape *is = &net->model->layers[l->inputs[0]].out;
    return 2.0 * net->batch * (double)is->d[1] * is->d[2] * w->shape[0] * w->shape[1] * w->shape[2] * w->shape[3];
}

/* ConvTranspose, then the activation */
static int export_onnx(const ct_layer_export *e)
{
    const ct_layer *l = e->l;
    int act = (int)l->v[K_ACT];
    int64_t k = (int64_t)l->v[K_KERNEL], s = (int64_t)l->v[K_STRIDE], p = (int64_t)l->v[K_PAD];
    int64_t op = (int64_t)l->v[K_OUT_PAD], d = (int64_t)l->v[K_DILATION];
    const char *w = ct_export_param(e, 0), *z = act ? ct_export_tmp(e, "z") : e->y;
    ct_onnx_attr a[] = { CT_ONNX_INTS("kernel_shape", k, k), CT_ONNX_INTS("strides", s, s),
                         CT_ONNX_INTS("pads", p, p, p, p), CT_ONNX_INTS("dilations", d, d),
                         CT_ONNX_INTS("output_padding", op, op) };
    if (l->nparams > 1)
        ct_onnx_node(e->g, "ConvTranspose", CT_ONNX_NAMES(e->x, w, ct_export_param(e, 1)), CT_ONNX_NAMES(z), a, 5);
    else
        ct_onnx_node(e->g, "ConvTranspose", CT_ONNX_NAMES(e->x, w), CT_ONNX_NAMES(z), a, 5);
    return act ? ct_export_act(e, act, z, e->y) : ct_onnx_status(e->g);
}

CT_LAYER_TYPE(conv_transpose2d, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .infer = infer, .init = init,
              .plan = plan, .forward = forward, .backward = backward, .flops = flops,
              .export_onnx = export_onnx);
