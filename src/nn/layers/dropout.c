/*
 * dropout.c - inverted dropout: while training each element is zeroed with
 * probability p and the rest scaled by 1/(1-p); otherwise a copy. The mask
 * is not stored: forward and backward draw it from Philox with the step's
 * seed, the layer's index and the element's index in the global batch, so
 * data-parallel replicas together draw what one device would.
 */
#include "nn/layer.h"
#include "ops/dropout.h"
#include "ops/eltwise.h"

enum { K_P };

static const ct_key_spec keys[] = {
    CT_KEY_FLOAT_("p", 0.5, 0, 0.999, "probability of zeroing an element while training"),
};

typedef struct dropout_state {
    float p;
} dropout_state;
CT_STATE_FITS(dropout_state);

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    (void)p;
    CT_LAYER_STATE(r, dropout_state)->p = (float)l->v[K_P];
    return CT_OK;
}

/* The index of element 0 in the global batch's tensor (the optimizer
 * step's, when micro-batches accumulate), so a replica's or micro-batch's
 * mask is its slice of the one-device mask. Sequence layers are (T, N, F):
 * there a part of the batch (a replica's columns, a micro-batch) is no
 * slice, and the offset only gives each part a disjoint range of the mask's
 * stream, of its own size: a mask drawn as one device would draw one, not
 * the one it draws. */
static size_t first_element(const ct_layer_call *c)
{
    return c->net->row_base * (c->r->out_n / (size_t)c->net->batch);
}

static int forward(const ct_layer_call *c)
{
    float p = CT_LAYER_STATE(c->r, dropout_state)->p;
    if (!c->training || p == 0)
        return ct_act_copy(c->ctx, c->r->out, c->x, c->r->out_n);
    return ct_dropout_forward_at(c->ctx, c->r->out, c->x, c->r->out_n, first_element(c), p, c->seed,
                                 (uint32_t)c->index);
}

static int backward(const ct_layer_call *c)
{
    float p = CT_LAYER_STATE(c->r, dropout_state)->p;
    if (!c->dx_needed)
        return CT_OK;
    if (p == 0)
        return ct_act_copy(c->ctx, c->dx, c->dy, c->r->out_n);
    return ct_dropout_backward_at(c->ctx, c->dx, c->dy, c->r->out_n, first_element(c), p, c->seed,
                                  (uint32_t)c->index);
}

/* inference: a copy */
static int export_onnx(const ct_layer_export *e)
{
    return ct_onnx_unary(e->g, "Identity", e->x, e->y);
}

CT_LAYER_TYPE(dropout, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_ACT16, .infer = ct_infer_same, .plan = plan,
              .forward = forward, .backward = backward, .export_onnx = export_onnx);
