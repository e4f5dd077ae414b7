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

CT_LAYER_TYPE(shortcut_a, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .infer = infer, .plan = plan,
              .forward = forward, .backward = backward);
