/*
 * layernorm.c - layer normalization over the last dimension of a feature
 * vector (F) or of each step of a sequence (T x F), as torch.nn.LayerNorm(F):
 * parameters `weight` (F, initially 1) and `bias` (F, initially 0). The
 * forward saves each row's mean and 1/std for the backward. Takes 16-bit
 * activation storage (input, output and their gradients; the statistics
 * and parameters stay float).
 */
#include "nn/layer.h"
#include "ops/layernorm.h"

enum { K_EPS };

static const ct_key_spec keys[] = {
    CT_KEY_FLOAT_("eps", 1e-5, 1e-12, 1, "added to the variance"),
};

typedef struct layernorm_state {
    size_t F;
    float eps;
} layernorm_state;
CT_STATE_FITS(layernorm_state);

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    int st = ct_infer_same(l, in, nin, err, n);
    if (st)
        return st;
    if (in->ndim != (in->sequence ? 2 : 1))
        return ct_shape_err(err, n, "layernorm needs a feature vector (F) or a sequence of them "
                            "(T x F)", in);
    int F = in->d[in->ndim - 1];
    ct_layer_add_param(l, "weight", 1, 1, F, 0, 0, 0);
    ct_layer_add_param(l, "bias", 1, 1, F, 0, 0, 0);
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    layernorm_state *s = CT_LAYER_STATE(r, layernorm_state);
    s->F = (size_t)l->out.d[l->out.ndim - 1];
    s->eps = (float)l->v[K_EPS];
    /* mean, then 1/std, per row: float statistics, not an activation, so
     * saved_act stays 0 and they go in the float saved-state arena even
     * with 16-bit activation storage */
    r->saved_n = 2 * r->rows;
    ct_plan_scratch(p, ct_layernorm_workspace_size(r->rows, s->F)); /* the backward's partial sums */
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    const layernorm_state *s = CT_LAYER_STATE(c->r, layernorm_state);
    const ct_lrt *r = c->r;
    return ct_layernorm_forward(c->ctx, r->out, r->saved, ct_buf_at(r->saved, r->rows), c->x,
                                r->param, ct_buf_at(r->param, s->F), r->rows, s->F, s->eps);
}

static int backward(const ct_layer_call *c)
{
    const layernorm_state *s = CT_LAYER_STATE(c->r, layernorm_state);
    const ct_lrt *r = c->r;
    return ct_layernorm_backward_acc(c->ctx, c->dx_needed ? c->dx : ct_none(), c->dx_accumulate, r->grad,
                                     ct_buf_at(r->grad, s->F), c->dy, c->x, r->param, r->saved,
                                     ct_buf_at(r->saved, r->rows), r->rows, s->F, c->net->scratch);
}

/* weight 1, bias 0 */
static void init(const ct_layer *l, float *params, float *buffers, ct_init_rng *g)
{
    (void)buffers;
    (void)g;
    size_t F = l->param_count / 2;
    for (size_t e = 0; e < F; e++) {
        params[e] = 1.0f;
        params[F + e] = 0.0f;
    }
}

/* LayerNormalization over the last axis (opset 17) */
static int export_onnx(const ct_layer_export *e)
{
    const char *w = ct_export_param(e, 0), *b = ct_export_param(e, 1);
    return ct_onnx_node(e->g, "LayerNormalization", CT_ONNX_NAMES(e->x, w, b), CT_ONNX_NAMES(e->y),
                        CT_ONNX_ATTRS(CT_ONNX_INT("axis", -1), CT_ONNX_FLOAT("epsilon", e->l->v[K_EPS])));
}

CT_LAYER_TYPE(layernorm, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1,
              .flags = CT_LAYER_ACCUM_DX | CT_LAYER_ACT16,
              .infer = infer, .init = init,
              .plan = plan, .forward = forward, .backward = backward, .export_onnx = export_onnx);
