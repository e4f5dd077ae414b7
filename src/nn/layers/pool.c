/*
 * pool.c - max and average pooling over square windows of NCHW images,
 * torch.nn.MaxPool2d / AvgPool2d with equal stride and padding both ways
 * (stride defaults to the kernel). An overlapping max pool saves the
 * forward's argmax (int32, one per output) for the backward; a
 * non-overlapping one finds it again from x.
 */
#include <stdio.h>

#include "nn/layer.h"
#include "ops/pool.h"

enum { K_KERNEL, K_STRIDE, K_PAD, K_COUNT_INCLUDE_PAD };
enum { MAX, AVG };

static const ct_key_spec max_keys[] = {
    CT_KEY_INT_("kernel", 1, 0, 1, 64, "window height and width"),
    CT_KEY_INT_("stride", 0, -1, -1, 64, "stride (default: the kernel size)"),
    CT_KEY_INT_("pad", 0, 0, 0, 32, "padding on each side (at most kernel/2)"),
};

static const ct_key_spec avg_keys[] = {
    CT_KEY_INT_("kernel", 1, 0, 1, 64, "window height and width"),
    CT_KEY_INT_("stride", 0, -1, -1, 64, "stride (default: the kernel size)"),
    CT_KEY_INT_("pad", 0, 0, 0, 32, "zero padding on each side (at most kernel/2)"),
    CT_KEY_BOOL_("count_include_pad", 1, "padding zeros count in the average"),
};

typedef struct pool_state {
    ct_pool2d p;
} pool_state;
CT_STATE_FITS(pool_state);

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_image(in, err, n, l->type->name);
    if (st)
        return st;
    int k = (int)l->v[K_KERNEL], s = l->v[K_STRIDE] < 0 ? k : (int)l->v[K_STRIDE], p = (int)l->v[K_PAD];
    if (s == 0) {
        snprintf(err, n, "%s stride must be at least 1", l->type->name);
        return CT_ERR_PARSE;
    }
    l->v[K_STRIDE] = s;
    if (2 * p > k) {
        snprintf(err, n, "%s pad=%d is more than half the kernel %d", l->type->name, p, k);
        return CT_ERR_PARSE;
    }
    int oh = (in->d[1] + 2 * p - k) / s + 1, ow = (in->d[2] + 2 * p - k) / s + 1;
    if (in->d[1] + 2 * p < k || in->d[2] + 2 * p < k) {
        char what[96];
        snprintf(what, sizeof what, "%s kernel %d is larger than its padded input", l->type->name, k);
        return ct_shape_err(err, n, what, in);
    }
    ct_set_shape(&l->out, 3, in->d[0], oh, ow);
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    const ct_net *net = ct_plan_net(p);
    const ct_shape *is = &net->model->layers[l->inputs[0]].out;
    ct_pool2d *d = &CT_LAYER_STATE(r, pool_state)->p;
    *d = ct_pool2d_square(net->batch, is->d[0], is->d[1], is->d[2], (int)l->v[K_KERNEL], (int)l->v[K_STRIDE],
                          (int)l->v[K_PAD]);
    if (l->type->variant == AVG)
        d->count_include_pad = (int)l->v[K_COUNT_INCLUDE_PAD];
    else if (ct_maxpool_overlaps(d))
        r->saved_n = r->out_n; /* the forward's argmax record (int32) */
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    const ct_pool2d *d = &CT_LAYER_STATE(c->r, pool_state)->p;
    if (c->l->type->variant == AVG)
        return ct_avgpool_forward(c->ctx, d, c->r->out, c->x);
    return ct_maxpool_forward(c->ctx, d, c->r->out, c->x, c->training ? c->r->saved : ct_none());
}

static int backward(const ct_layer_call *c)
{
    const ct_pool2d *d = &CT_LAYER_STATE(c->r, pool_state)->p;
    if (!c->dx_needed)
        return CT_OK;
    if (c->l->type->variant == AVG)
        return ct_avgpool_backward(c->ctx, d, c->dx, c->dy);
    return ct_maxpool_backward(c->ctx, d, c->dx, c->dy, c->x, c->r->saved);
}

/* MaxPool / AveragePool (floor mode, as PyTorch's default) */
static int export_onnx(const ct_layer_export *e)
{
    const ct_layer *l = e->l;
    int64_t k = (int64_t)l->v[K_KERNEL], s = (int64_t)l->v[K_STRIDE], p = (int64_t)l->v[K_PAD];
    int avg = l->type->variant == AVG;
    ct_onnx_attr a[] = { CT_ONNX_INTS("kernel_shape", k, k), CT_ONNX_INTS("strides", s, s),
                         CT_ONNX_INTS("pads", p, p, p, p),
                         CT_ONNX_INT("count_include_pad", avg ? (int64_t)l->v[K_COUNT_INCLUDE_PAD] : 0) };
    return ct_onnx_node(e->g, avg ? "AveragePool" : "MaxPool", CT_ONNX_NAMES(e->x), CT_ONNX_NAMES(e->y), a,
                        avg ? 4 : 3); /* count_include_pad is AveragePool's only */
}

CT_LAYER_TYPE(maxpool, CT_KEYS(max_keys), .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_ACT16, .variant = MAX, .infer = infer,
              .plan = plan, .forward = forward, .backward = backward, .export_onnx = export_onnx);
CT_LAYER_TYPE(avgpool, CT_KEYS(avg_keys), .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_ACT16, .variant = AVG, .infer = infer,
              .plan = plan, .forward = forward, .backward = backward, .export_onnx = export_onnx);
