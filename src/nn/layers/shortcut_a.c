/*
 * shortcut_a.c - the CIFAR ResNets' option-A shortcut: the input subsampled
 * by `stride` in H and W, and zero channels appended up to `out`.
 */
#include <stdio.h>

#include "nn/layer.h"
#include "ops/shortcut.h"

enum { K_STRIDE, K_OUT };

static const ct_key_spec keys[] = {
    CT_KEY_INT_("stride", 1, 0, 1, 16, "spatial subsampling"),
    CT_KEY_INT_("out", 1, 0, 1, 1 << 16, "output channels (the extra ones are zero)"),
};

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_image(in, err, n, "shortcut_a");
    if (st)
        return st;
    int s = (int)l->v[K_STRIDE], out = (int)l->v[K_OUT];
    if (out < in->d[0]) {
        char what[96];
        snprintf(what, sizeof what, "shortcut_a out=%d is fewer than its input channels", out);
        return ct_shape_err(err, n, what, in);
    }
    ct_set_shape(&l->out, 3, out, (in->d[1] + s - 1) / s, (in->d[2] + s - 1) / s);
    return CT_OK;
}

typedef struct shortcut_state {
    int stride;
} shortcut_state;
CT_STATE_FITS(shortcut_state);

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    (void)p;
    CT_LAYER_STATE(r, shortcut_state)->stride = (int)l->v[K_STRIDE];
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    const ct_shape *s = &c->net->model->layers[c->l->inputs[0]].out;
    return ct_shortcut_a_forward(c->ctx, c->r->out, c->x, c->net->batch, s->d[0], s->d[1], s->d[2],
                                 CT_LAYER_STATE(c->r, shortcut_state)->stride, c->l->out.d[0]);
}

static int backward(const ct_layer_call *c)
{
    const ct_shape *s = &c->net->model->layers[c->l->inputs[0]].out;
    if (!c->dx_needed)
        return CT_OK;
    return ct_shortcut_a_backward(c->ctx, c->dx, c->dy, c->net->batch, s->d[0], s->d[1], s->d[2],
                                  CT_LAYER_STATE(c->r, shortcut_state)->stride, c->l->out.d[0]);
}

/* Slice with steps (every stride-th row and column from the first), then
 * Pad with zero channels at the end */
static int export_onnx(const ct_layer_export *e)
{
    ct_onnx *g = e->g;
    int64_t s = (int64_t)e->l->v[K_STRIDE], extra = (int64_t)e->l->v[K_OUT] - e->in->d[0];
    const char *x = e->x;
    if (s > 1) {
        const char *sub = extra ? ct_export_tmp(e, "subsampled") : e->y;
        const char *starts = ct_onnx_ints(g, ct_export_tmp(e, "starts"), 2, (int64_t[]){ 0, 0 });
        const char *ends = ct_onnx_ints(g, ct_export_tmp(e, "ends"), 2, (int64_t[]){ INT64_MAX, INT64_MAX });
        const char *axes = ct_onnx_ints(g, ct_export_tmp(e, "axes"), 2, (int64_t[]){ 2, 3 });
        const char *steps = ct_onnx_ints(g, ct_export_tmp(e, "steps"), 2, (int64_t[]){ s, s });
        ct_onnx_node(g, "Slice", CT_ONNX_NAMES(x, starts, ends, axes, steps), CT_ONNX_NAMES(sub),
                     CT_ONNX_NO_ATTRS);
        x = sub;
    }
    if (extra) /* zeros after the channels: pads (begin N, C, H, W, end N, C, H, W) */
        return ct_onnx_binary(g, "Pad", x,
                              ct_onnx_ints(g, ct_export_tmp(e, "pads"), 8, (int64_t[]){ 0, 0, 0, 0, 0, extra, 0, 0 }),
                              e->y);
    if (s == 1)
        return ct_onnx_unary(g, "Identity", x, e->y);
    return ct_onnx_status(g);
}

CT_LAYER_TYPE(shortcut_a, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_ACT16, .infer = infer, .plan = plan,
              .forward = forward, .backward = backward, .export_onnx = export_onnx);
