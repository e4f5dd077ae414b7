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

CT_LAYER_TYPE(lrn, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .infer = infer, .plan = plan,
              .forward = forward, .backward = backward);
