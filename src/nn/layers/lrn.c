/*
 * lrn.c - local response normalization across channels, as
 * torch.nn.LocalResponseNorm: y = x (k + alpha/size sum x^2)^-beta over a
 * window of `size` channels. Training saves the factor (k + ...)^-beta for
 * the backward.
 */
#include "nn/layer.h"
#include "ops/lrn.h"

enum { K_SIZE, K_ALPHA, K_BETA, K_K };

static const ct_key_spec keys[] = {
    CT_KEY_INT_("size", 1, 0, 1, 64, "channels in the window"),
    CT_KEY_FLOAT_("alpha", 1e-4, 0, 1e3, "scale (PyTorch's: divided by size)"),
    CT_KEY_FLOAT_("beta", 0.75, 0, 10, "exponent"),
    CT_KEY_FLOAT_("k", 1.0, 0, 1e3, "additive constant"),
};

typedef struct lrn_state {
    ct_lrn p;
} lrn_state;
CT_STATE_FITS(lrn_state);

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_image(in, err, n, "lrn");
    if (st)
        return st;
    l->out = *in;
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    (void)p;
    ct_lrn *d = &CT_LAYER_STATE(r, lrn_state)->p;
    d->size = (int)l->v[K_SIZE];
    d->alpha = (float)l->v[K_ALPHA];
    d->beta = (float)l->v[K_BETA];
    d->k = (float)l->v[K_K];
    r->saved_n = r->out_n; /* the forward's scale s^-beta */
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    const ct_shape *o = &c->l->out;
    return ct_lrn_forward(c->ctx, &CT_LAYER_STATE(c->r, lrn_state)->p, c->r->out, c->x,
                          c->training ? c->r->saved : ct_none(), c->net->batch, o->d[0], o->d[1] * o->d[2]);
}

static int backward(const ct_layer_call *c)
{
    const ct_shape *o = &c->l->out;
    if (!c->dx_needed)
        return CT_OK;
    return ct_lrn_backward(c->ctx, &CT_LAYER_STATE(c->r, lrn_state)->p, c->dx, c->dy, c->x, c->r->saved,
                           c->net->batch, o->d[0], o->d[1] * o->d[2]);
}

/* ONNX's LRN has PyTorch's formula, and the same window for an odd size
 * (c - (size-1)/2 .. c + (size-1)/2); for an even size PyTorch's window
 * (c - size/2 .. c + (size-1)/2) is not ONNX's (and onnxruntime takes only
 * odd sizes), so it is written out: x (k + alpha * mean of x^2 over the
 * window)^-beta, the mean an AveragePool over channels of the squares
 * padded size/2 before and (size-1)/2 after. */
static int export_onnx(const ct_layer_export *e)
{
    ct_onnx *g = e->g;
    const ct_layer *l = e->l;
    int64_t size = (int64_t)l->v[K_SIZE];
    float alpha = (float)l->v[K_ALPHA], beta = (float)l->v[K_BETA], k = (float)l->v[K_K];
    if (size % 2)
        return ct_onnx_node(g, "LRN", CT_ONNX_NAMES(e->x), CT_ONNX_NAMES(e->y),
                            CT_ONNX_ATTRS(CT_ONNX_INT("size", size), CT_ONNX_FLOAT("alpha", alpha),
                                          CT_ONNX_FLOAT("beta", beta), CT_ONNX_FLOAT("bias", k)));
    const char *sq = ct_export_tmp(e, "sq"), *sq5 = ct_export_tmp(e, "sq5");
    const char *pad = ct_export_tmp(e, "sq5_padded");
    const char *mean5 = ct_export_tmp(e, "mean5"), *mean = ct_export_tmp(e, "mean");
    const char *scaled = ct_export_tmp(e, "alpha_mean"), *base = ct_export_tmp(e, "base");
    const char *factor = ct_export_tmp(e, "factor");
    const char *axis1 = ct_onnx_ints(g, ct_export_tmp(e, "axis1"), 1, (int64_t[]){ 1 });
    const char *pads = ct_onnx_ints(g, ct_export_tmp(e, "pads"), 10,
                                    (int64_t[]){ 0, 0, size / 2, 0, 0, 0, 0, (size - 1) / 2, 0, 0 });
    ct_onnx_binary(g, "Mul", e->x, e->x, sq);
    ct_onnx_binary(g, "Unsqueeze", sq, axis1, sq5); /* (N, 1, C, H, W) */
    ct_onnx_binary(g, "Pad", sq5, pads, pad);
    ct_onnx_node(g, "AveragePool", CT_ONNX_NAMES(pad), CT_ONNX_NAMES(mean5),
                 CT_ONNX_ATTRS(CT_ONNX_INTS("kernel_shape", size, 1, 1)));
    ct_onnx_binary(g, "Squeeze", mean5, axis1, mean);
    ct_onnx_binary(g, "Mul", mean, ct_onnx_scalar(g, ct_export_tmp(e, "alpha"), alpha), scaled);
    ct_onnx_binary(g, "Add", scaled, ct_onnx_scalar(g, ct_export_tmp(e, "k"), k), base);
    ct_onnx_binary(g, "Pow", base, ct_onnx_scalar(g, ct_export_tmp(e, "minus_beta"), -beta), factor);
    return ct_onnx_binary(g, "Mul", e->x, factor, e->y);
}

CT_LAYER_TYPE(lrn, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .infer = infer, .plan = plan,
              .forward = forward, .backward = backward, .export_onnx = export_onnx);
