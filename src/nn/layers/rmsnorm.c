/*
 * rmsnorm.c - RMS normalization over the last dimension of a feature vector
 * (F) or of each step of a sequence (T x F), as torch.nn.RMSNorm(F, eps):
 * parameter `weight` (F, initially 1). The forward saves each row's
 * 1 / rms for the backward.
 */
#include "nn/layer.h"
#include "ops/rmsnorm.h"

enum { K_EPS };

static const ct_key_spec keys[] = {
    CT_KEY_FLOAT_("eps", 1e-6, 1e-12, 1, "added to the mean of the squares"),
};

typedef struct rmsnorm_state {
    size_t F;
    float eps;
} rmsnorm_state;
CT_STATE_FITS(rmsnorm_state);

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    int st = ct_infer_same(l, in, nin, err, n);
    if (st)
        return st;
    if (in->ndim != (in->sequence ? 2 : 1))
        return ct_shape_err(err, n, "rmsnorm needs a feature vector (F) or a sequence of them (T x F)", in);
    ct_layer_add_param(l, "weight", 1, 1, in->d[in->ndim - 1], 0, 0, 0);
    return CT_OK;
}

static int plan(ct_plan *p, const ct_layer *l, ct_lrt *r)
{
    rmsnorm_state *s = CT_LAYER_STATE(r, rmsnorm_state);
    s->F = (size_t)l->out.d[l->out.ndim - 1];
    s->eps = (float)l->v[K_EPS];
    r->saved_n = r->rows;                                         /* 1 / rms per row */
    ct_plan_scratch(p, ct_rmsnorm_workspace_size(r->rows, s->F)); /* the backward's partial sums */
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    const rmsnorm_state *s = CT_LAYER_STATE(c->r, rmsnorm_state);
    const ct_lrt *r = c->r;
    return ct_rmsnorm_forward(c->ctx, r->out, r->saved, c->x, r->param, r->rows, s->F, s->eps);
}

static int backward(const ct_layer_call *c)
{
    const rmsnorm_state *s = CT_LAYER_STATE(c->r, rmsnorm_state);
    const ct_lrt *r = c->r;
    return ct_rmsnorm_backward(c->ctx, c->dx_needed ? c->dx : ct_none(), c->dx_accumulate, r->grad, c->dy, c->x,
                               r->param, r->saved, r->rows, s->F, c->net->scratch);
}

/* weight 1 */
static void init(const ct_layer *l, float *params, float *buffers, ct_init_rng *g)
{
    (void)buffers;
    (void)g;
    for (size_t e = 0; e < l->param_count; e++)
        params[e] = 1.0f;
}

/* x / sqrt(ReduceMean(x x, last axis) + eps) * weight (opset 17 has no
 * RMSNormalization) */
static int export_onnx(const ct_layer_export *e)
{
    ct_onnx *g = e->g;
    const char *w = ct_export_param(e, 0);
    const char *sq = ct_export_tmp(e, "square"), *ms = ct_export_tmp(e, "mean_square");
    const char *me = ct_export_tmp(e, "plus_eps"), *rms = ct_export_tmp(e, "rms");
    const char *xn = ct_export_tmp(e, "normalized");
    const char *eps = ct_onnx_scalar(g, ct_export_tmp(e, "eps"), (float)e->l->v[K_EPS]);
    ct_onnx_binary(g, "Mul", e->x, e->x, sq);
    ct_onnx_node(g, "ReduceMean", CT_ONNX_NAMES(sq), CT_ONNX_NAMES(ms),
                 CT_ONNX_ATTRS(CT_ONNX_INTS("axes", -1), CT_ONNX_INT("keepdims", 1)));
    ct_onnx_binary(g, "Add", ms, eps, me);
    ct_onnx_unary(g, "Sqrt", me, rms);
    ct_onnx_binary(g, "Div", e->x, rms, xn);
    return ct_onnx_binary(g, "Mul", xn, w, e->y);
}

CT_LAYER_TYPE(rmsnorm, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_ACCUM_DX,
              .infer = infer, .init = init, .plan = plan, .forward = forward, .backward = backward,
              .export_onnx = export_onnx);
