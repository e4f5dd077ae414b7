/*
 * softmax_cross_entropy.c - the mean over rows of -log softmax(x)[label],
 * on class scores (N, K) or a sequence's (T*N, K) with a label per row
 * (int32, in the batch slot after the input). The forward also counts the
 * rows whose arg max is the label. On images, (K, H, W) scores with a label
 * per pixel (segmentation): the mean over every pixel of the batch, as
 * PyTorch's cross_entropy on (N, K, H, W) and (N, H, W).
 */
#include "nn/layer.h"
#include "ops/loss.h"

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_floats(in, err, n, "softmax_cross_entropy");
    if (st)
        return st;
    if (in->ndim != 1 && !(in->sequence && in->ndim == 2) && in->ndim != 3)
        return ct_shape_err(err, n, "softmax_cross_entropy needs class scores (K, T x K for a "
                            "sequence, or K x H x W for a label per pixel)", in);
    ct_set_shape(&l->out, 1, 1, 0, 0);
    return CT_OK;
}

/* Whether the last forward left the row statistics in the workspace;
 * pixels per sample when scoring each (else 0). */
typedef struct xent_state {
    int stats;
    int pixels;
} xent_state;
CT_STATE_FITS(xent_state);

/* The workspace is kept from the forward to the backward (r->saved): the
 * GPU class leaves each row's maximum and exponential sum there. */
static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    const ct_lrt *in = &ct_plan_net(p)->rt[l->inputs[0]];
    const ct_shape *is = &ct_plan_net(p)->model->layers[l->inputs[0]].out;
    xent_state *s = CT_LAYER_STATE(r, xent_state);
    s->stats = 0;
    s->pixels = is->ndim == 3 ? is->d[1] * is->d[2] : 0;
    if (s->pixels && ct_plan_net(p)->act16)
        return ct_fail(ct_plan_net(p)->ctx, CT_ERR_UNSUPPORTED, "layer '%s' (softmax_cross_entropy) "
                       "has no 16-bit form: per-pixel scores", l->name);
    size_t rows = in->rows * (size_t)(s->pixels ? s->pixels : 1);
    ct_plan_labels(p, rows, 1);
    r->saved_n = ct_softmax_xent_workspace(rows);
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    size_t N = c->in->rows, K = c->in->out_n / N;
    xent_state *s = CT_LAYER_STATE(c->r, xent_state);
    if (s->pixels)
        return ct_softmax_xent_px_forward(c->ctx, c->net->loss, c->net->correct, c->x, c->net->labels, N,
                                          K / (size_t)s->pixels, (size_t)s->pixels, c->r->saved);
    s->stats = ct_softmax_xent_saves(c->ctx, N, K);
    return ct_softmax_xent_forward(c->ctx, c->net->loss, c->net->correct, c->x, c->net->labels, N, K,
                                   c->r->saved);
}

/* the class may have changed since the forward (tests compare classes on
 * one forward): statistics are read only where that forward saved them */
static int backward(const ct_layer_call *c)
{
    size_t N = c->in->rows, K = c->in->out_n / N;
    const xent_state *s = CT_LAYER_STATE(c->r, xent_state);
    if (s->pixels)
        return ct_softmax_xent_px_backward(c->ctx, c->dx, c->x, c->net->labels, N, K / (size_t)s->pixels,
                                           (size_t)s->pixels, c->net->loss_scale);
    ct_buf ws = s->stats ? c->r->saved : (ct_buf){ NULL, 0 };
    return ct_softmax_xent_backward_saved(c->ctx, c->dx, c->x, c->net->labels, N, K, c->net->loss_scale, ws);
}

/* The graph's outputs: "logits", the scores the loss reads (no softmax:
 * what `cltrain predict` ranks), and "probabilities", their Softmax over
 * the classes; (N, K), (N, T, K) for a language model, or (N, K, H, W) with
 * the softmax over K for a label per pixel */
static int export_onnx(const ct_layer_export *e)
{
    int64_t dims[4];
    int n = ct_export_dims(e->in, dims);
    ct_onnx_unary(e->g, "Identity", e->x, "logits");
    ct_onnx_node(e->g, "Softmax", CT_ONNX_NAMES(e->x), CT_ONNX_NAMES("probabilities"),
                 CT_ONNX_ATTRS(CT_ONNX_INT("axis", e->in->ndim == 3 && !e->in->sequence ? 1 : -1)));
    ct_onnx_output(e->g, "logits", CT_ONNX_FLOAT, n, dims);
    return ct_onnx_output(e->g, "probabilities", CT_ONNX_FLOAT, n, dims);
}

CT_LAYER_TYPE(softmax_cross_entropy, .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_LOSS | CT_LAYER_ACT16, .infer = infer,
              .plan = plan, .forward = forward, .backward = backward, .export_onnx = export_onnx);
