/*
 * posembed.c - a learned position embedding added to a sequence (T x E):
 * y[t, n, :] = x[t, n, :] + weight[t, :], with `weight` (max_len, E) and
 * T <= max_len. The weight starts N(0, std^2): std=1 by default, as
 * torch.nn.Embedding's; GPT-2 starts its own at std=0.02.
 */
#include <stdio.h>

#include "nn/layer.h"
#include "ops/posembed.h"

enum { K_MAX_LEN, K_STD };

static const ct_key_spec keys[] = {
    CT_KEY_INT_("max_len", 1, 0, 1, 1 << 20, "positions in the table (at least the sequence's T)"),
    CT_KEY_FLOAT_("std", 1, 1e-6, 10, "initialize the weight N(0, std^2)"),
};

typedef struct posembed_state {
    size_t T, E;
} posembed_state;
CT_STATE_FITS(posembed_state);

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    int st = ct_infer_same(l, in, nin, err, n);
    if (st)
        return st;
    if (!in->sequence || in->ndim != 2)
        return ct_shape_err(err, n, "posembed needs a sequence of vectors (T x E), e.g. from an "
                            "embedding", in);
    int max_len = (int)l->v[K_MAX_LEN];
    if (in->d[0] > max_len) {
        snprintf(err, n, "posembed max_len=%d holds fewer positions than its input's %d steps. "
                 "HINT: max_len=%d or more", max_len, in->d[0], in->d[0]);
        return CT_ERR_SHAPE;
    }
    ct_layer_add_param(l, "weight", 1, 2, max_len, in->d[1], 0, 0);
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    (void)p;
    posembed_state *s = CT_LAYER_STATE(r, posembed_state);
    s->T = (size_t)l->out.d[0];
    s->E = (size_t)l->out.d[1];
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    const posembed_state *s = CT_LAYER_STATE(c->r, posembed_state);
    return ct_posembed_forward(c->ctx, c->r->out, c->x, c->r->param, s->T, (size_t)c->net->batch,
                               s->E);
}

static int backward(const ct_layer_call *c)
{
    const posembed_state *s = CT_LAYER_STATE(c->r, posembed_state);
    return ct_posembed_backward(c->ctx, c->dx_needed ? c->dx : ct_none(), c->r->grad, c->dy, s->T,
                                (size_t)c->net->batch, s->E);
}

static void init(const ct_layer *l, float *params, float *buffers, ct_init_rng *g)
{
    (void)buffers;
    ct_init_normal_fill(params, l->param_count, l->v[K_STD], g);
}

/* Add of the weight's first T rows, (T, E), broadcast over the batch */
static int export_onnx(const ct_layer_export *e)
{
    ct_onnx *g = e->g;
    int64_t T = e->in->d[0];
    const char *w = ct_export_param(e, 0);
    if (T < (int64_t)e->l->v[K_MAX_LEN]) {
        const char *rows = ct_export_tmp(e, "rows");
        const char *starts = ct_onnx_ints(g, ct_export_tmp(e, "starts"), 1, (int64_t[]){ 0 });
        const char *ends = ct_onnx_ints(g, ct_export_tmp(e, "ends"), 1, (int64_t[]){ T });
        const char *axes = ct_onnx_ints(g, ct_export_tmp(e, "axes"), 1, (int64_t[]){ 0 });
        ct_onnx_node(g, "Slice", CT_ONNX_NAMES(w, starts, ends, axes), CT_ONNX_NAMES(rows), CT_ONNX_NO_ATTRS);
        w = rows;
    }
    return ct_onnx_binary(g, "Add", e->x, w, e->y);
}

CT_LAYER_TYPE(posembed, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_ACT16,
              .infer = infer, .init = init, .plan = plan, .forward = forward, .backward = backward,
              .export_onnx = export_onnx);
