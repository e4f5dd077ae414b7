/*
 * global_avgpool.c - the mean over H x W of each channel: (N, C, H, W) ->
 * (N, C), as torch.nn.AdaptiveAvgPool2d(1) followed by a flatten.
 */
#include "nn/layer.h"
#include "ops/pool.h"

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_image(in, err, n, "global_avgpool");
    if (st)
        return st;
    ct_set_shape(&l->out, 1, in->d[0], 0, 0);
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    const ct_shape *s = &c->net->model->layers[c->l->inputs[0]].out;
    return ct_global_avgpool_forward(c->ctx, c->r->out, c->x, c->net->batch, s->d[0], s->d[1], s->d[2]);
}

static int backward(const ct_layer_call *c)
{
    const ct_shape *s = &c->net->model->layers[c->l->inputs[0]].out;
    if (!c->dx_needed)
        return CT_OK;
    return ct_global_avgpool_backward(c->ctx, c->dx, c->dy, c->net->batch, s->d[0], s->d[1], s->d[2]);
}

/* GlobalAveragePool to (N, C, 1, 1), then Flatten to (N, C) */
static int export_onnx(const ct_layer_export *e)
{
    const char *p = ct_export_tmp(e, "pooled");
    ct_onnx_unary(e->g, "GlobalAveragePool", e->x, p);
    return ct_onnx_node(e->g, "Flatten", CT_ONNX_NAMES(p), CT_ONNX_NAMES(e->y),
                        CT_ONNX_ATTRS(CT_ONNX_INT("axis", 1)));
}

CT_LAYER_TYPE(global_avgpool, .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_ACT16, .infer = infer, .forward = forward,
              .backward = backward, .export_onnx = export_onnx);
