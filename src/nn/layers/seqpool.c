/*
 * seqpool.c - a sequence pooled over time, (T, N, F) -> (N, F): the mean,
 * the max or the last vector of each sample, over its positions that are
 * not padding. When the model's input is token ids (input tokens=T), a
 * position whose id is 0 is padding; otherwise every position counts. A
 * sample that is all padding gives zeros. Max saves its argmax (int32)
 * for the backward.
 */
#include <math.h>
#include <stdlib.h>

#include "nn/layer.h"
#include "ops/seqpool.h"

enum { K_MODE };

/* in enum ct_seqpool_mode's order */
static const char *const mode_names[] = { "mean", "max", "last", NULL };

static const ct_key_spec keys[] = {
    CT_KEY_CHOICE_("mode", CT_SEQPOOL_MEAN, mode_names, 3, "pooling over time: mean, max or last"),
};

typedef struct seqpool_state {
    ct_seqpool_mode mode;
    size_t T, F;
    int masked; /* the input layer's token ids mark padding */
} seqpool_state;
CT_STATE_FITS(seqpool_state);

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    if (!in->sequence || in->tokens || in->ndim != 2)
        return ct_shape_err(err, n, "seqpool needs a sequence of vectors (T x F), e.g. from an lstm", in);
    ct_set_shape(&l->out, 1, in->d[1], 0, 0);
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    const ct_net *net = ct_plan_net(p);
    const ct_shape *is = &net->model->layers[l->inputs[0]].out, *in0 = &net->model->layers[0].out;
    seqpool_state *s = CT_LAYER_STATE(r, seqpool_state);
    s->mode = (ct_seqpool_mode)l->v[K_MODE];
    s->T = (size_t)is->d[0];
    s->F = (size_t)is->d[1];
    s->masked = in0->tokens;
    if (s->masked && (size_t)in0->d[0] != s->T)
        return ct_fail(net->ctx, CT_ERR_SHAPE, "layer '%s': a sequence of %zu steps, but the input "
                       "has %d tokens per sample to mark its padding", l->name, s->T, in0->d[0]);
    if (s->mode == CT_SEQPOOL_MAX)
        r->saved_n = r->out_n; /* the forward's argmax (int32) */
    return CT_OK;
}

/* the input's token ids, (T, N) int32, or none */
static ct_buf tokens(const ct_layer_call *c, const seqpool_state *s)
{
    return s->masked ? c->net->rt[0].out : ct_none();
}

static int forward(const ct_layer_call *c)
{
    const seqpool_state *s = CT_LAYER_STATE(c->r, seqpool_state);
    ct_buf am = s->mode == CT_SEQPOOL_MAX && c->training ? c->r->saved : ct_none();
    return ct_seqpool_forward(c->ctx, s->mode, c->r->out, am, c->x, tokens(c, s), s->T,
                              (size_t)c->net->batch, s->F);
}

static int backward(const ct_layer_call *c)
{
    const seqpool_state *s = CT_LAYER_STATE(c->r, seqpool_state);
    if (!c->dx_needed)
        return CT_OK;
    return ct_seqpool_backward(c->ctx, s->mode, c->dx, c->dy, c->r->saved, tokens(c, s), s->T,
                               (size_t)c->net->batch, s->F);
}

/* Over the time axis of (N, T, F). With token ids, a position whose id is
 * 0 is padding, as in the net: the real positions' mask (N, T) from the
 * graph's input, then the masked sum over their count, the max over
 * Where(real, x, -inf), or GatherElements at the last real position; a
 * sample with none gives zeros. Without token ids every position counts:
 * ReduceMean, ReduceMax, or Gather of step T-1.
 *
 * export_pooled: over the real positions, their sum (mean), their max, or
 * the last of them. */
static int export_pooled(const ct_layer_export *e, ct_seqpool_mode mode, const char *real, const char *realf,
                         const char *axis1, const char *pooled)
{
    ct_onnx *g = e->g;
    int64_t T = e->in->d[0], F = e->in->d[1];
    const char *axis2 = ct_onnx_ints(g, ct_export_tmp(e, "axis2"), 1, (int64_t[]){ 2 });
    const char *mask = ct_export_tmp(e, "mask"), *masked = ct_export_tmp(e, "masked");
    if (mode == CT_SEQPOOL_MEAN) {
        ct_onnx_binary(g, "Unsqueeze", realf, axis2, mask);
        ct_onnx_binary(g, "Mul", e->x, mask, masked);
        return ct_onnx_node(g, "ReduceSum", CT_ONNX_NAMES(masked, axis1), CT_ONNX_NAMES(pooled),
                            CT_ONNX_ATTRS(CT_ONNX_INT("keepdims", 0)));
    }
    if (mode == CT_SEQPOOL_MAX) {
        const char *minus_inf = ct_onnx_scalar(g, ct_export_tmp(e, "minus_inf"), -INFINITY);
        ct_onnx_binary(g, "Unsqueeze", real, axis2, mask);
        ct_onnx_node(g, "Where", CT_ONNX_NAMES(mask, e->x, minus_inf), CT_ONNX_NAMES(masked), CT_ONNX_NO_ATTRS);
        return ct_onnx_node(g, "ReduceMax", CT_ONNX_NAMES(masked), CT_ONNX_NAMES(pooled),
                            CT_ONNX_ATTRS(CT_ONNX_INTS("axes", 1), CT_ONNX_INT("keepdims", 0)));
    }
    /* the last real position (0 when there is none), gathered for every feature */
    const char *pos = ct_export_tmp(e, "positions"), *none = ct_export_tmp(e, "none");
    const char *at = ct_export_tmp(e, "real_at"), *last = ct_export_tmp(e, "last");
    const char *idx3 = ct_export_tmp(e, "index3"), *idxf = ct_export_tmp(e, "index_f");
    const char *step = ct_export_tmp(e, "last_step");
    const char *shape = ct_onnx_ints(g, ct_export_tmp(e, "index_shape"), 3, (int64_t[]){ 1, 1, F });
    int64_t *t = malloc((size_t)T * sizeof *t);
    if (!t)
        return ct_onnx_fail(g, ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory exporting layer '%s'",
                                       e->l->name));
    for (int64_t i = 0; i < T; i++)
        t[i] = i;
    ct_onnx_init_int64(g, pos, 1, &T, t);
    free(t);
    ct_onnx_init_int64(g, none, 0, NULL, (int64_t[]){ 0 });
    ct_onnx_node(g, "Where", CT_ONNX_NAMES(real, pos, none), CT_ONNX_NAMES(at), CT_ONNX_NO_ATTRS);
    ct_onnx_node(g, "ReduceMax", CT_ONNX_NAMES(at), CT_ONNX_NAMES(last),
                 CT_ONNX_ATTRS(CT_ONNX_INTS("axes", 1), CT_ONNX_INT("keepdims", 1))); /* (N, 1) */
    ct_onnx_binary(g, "Unsqueeze", last, axis2, idx3);
    ct_onnx_binary(g, "Expand", idx3, shape, idxf); /* (N, 1, F) */
    ct_onnx_node(g, "GatherElements", CT_ONNX_NAMES(e->x, idxf), CT_ONNX_NAMES(step),
                 CT_ONNX_ATTRS(CT_ONNX_INT("axis", 1)));
    return ct_onnx_binary(g, "Squeeze", step, axis1, pooled);
}

static int export_onnx(const ct_layer_export *e)
{
    ct_onnx *g = e->g;
    ct_seqpool_mode mode = (ct_seqpool_mode)e->l->v[K_MODE];
    if (!e->model->layers[0].out.tokens) {
        if (mode == CT_SEQPOOL_LAST) {
            const char *last = ct_export_tmp(e, "last");
            ct_onnx_init_int64(g, last, 0, NULL, (int64_t[]){ e->in->d[0] - 1 });
            return ct_onnx_node(g, "Gather", CT_ONNX_NAMES(e->x, last), CT_ONNX_NAMES(e->y),
                                CT_ONNX_ATTRS(CT_ONNX_INT("axis", 1)));
        }
        return ct_onnx_node(g, mode == CT_SEQPOOL_MEAN ? "ReduceMean" : "ReduceMax", CT_ONNX_NAMES(e->x),
                            CT_ONNX_NAMES(e->y),
                            CT_ONNX_ATTRS(CT_ONNX_INTS("axes", 1), CT_ONNX_INT("keepdims", 0)));
    }
    const char *pad_id = ct_export_tmp(e, "pad_id"), *zero = ct_onnx_scalar(g, ct_export_tmp(e, "zero"), 0.0f);
    const char *axis1 = ct_onnx_ints(g, ct_export_tmp(e, "axis1"), 1, (int64_t[]){ 1 });
    const char *pad = ct_export_tmp(e, "is_pad"), *real = ct_export_tmp(e, "real");
    const char *realf = ct_export_tmp(e, "real_f"), *count = ct_export_tmp(e, "count");
    const char *any = ct_export_tmp(e, "any_real"), *pooled = ct_export_tmp(e, "pooled");
    ct_onnx_init_int64(g, pad_id, 0, NULL, (int64_t[]){ 0 });
    ct_onnx_binary(g, "Equal", e->names[0], pad_id, pad);
    ct_onnx_unary(g, "Not", pad, real);
    ct_onnx_node(g, "Cast", CT_ONNX_NAMES(real), CT_ONNX_NAMES(realf),
                 CT_ONNX_ATTRS(CT_ONNX_INT("to", CT_ONNX_FLOAT)));
    ct_onnx_node(g, "ReduceSum", CT_ONNX_NAMES(realf, axis1), CT_ONNX_NAMES(count),
                 CT_ONNX_ATTRS(CT_ONNX_INT("keepdims", 1))); /* (N, 1) */
    ct_onnx_binary(g, "Greater", count, zero, any);
    if (mode == CT_SEQPOOL_MEAN) {
        const char *sum = ct_export_tmp(e, "sum"), *den = ct_export_tmp(e, "divisor");
        export_pooled(e, mode, real, realf, axis1, sum);
        ct_onnx_binary(g, "Max", count, ct_onnx_scalar(g, ct_export_tmp(e, "one"), 1.0f), den);
        return ct_onnx_binary(g, "Div", sum, den, e->y); /* all padding: 0 / 1 */
    }
    export_pooled(e, mode, real, realf, axis1, pooled);
    return ct_onnx_node(g, "Where", CT_ONNX_NAMES(any, pooled, zero), CT_ONNX_NAMES(e->y), CT_ONNX_NO_ATTRS);
}

CT_LAYER_TYPE(seqpool, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .infer = infer, .plan = plan,
              .forward = forward, .backward = backward, .export_onnx = export_onnx);
