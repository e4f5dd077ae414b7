/*
 * seqpool.c - a sequence pooled over time, (T, N, F) -> (N, F): the mean,
 * the max or the last vector of each sample, over its positions that are
 * not padding. When the model's input is token ids (input tokens=T), a
 * position whose id is 0 is padding; otherwise every position counts. A
 * sample that is all padding gives zeros. Max saves its argmax (int32)
 * for the backward.
 */
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

CT_LAYER_TYPE(seqpool, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .infer = infer, .plan = plan,
              .forward = forward, .backward = backward);
