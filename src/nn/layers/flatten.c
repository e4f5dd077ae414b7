/*
 * flatten.c - (C, H, W) -> (C*H*W): a view. Its output is its producer's
 * memory, and so is its gradient when nothing else writes that gradient
 * (net.c's plan decides, from CT_LAYER_VIEW); otherwise the backward copies.
 */
#include "nn/layer.h"
#include "ops/eltwise.h"

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_floats(in, err, n, "flatten");
    if (st)
        return st;
    if (in->sequence)
        return ct_shape_err(err, n, "flatten does not apply to sequences", in);
    ct_set_shape(&l->out, 1, (int)ct_shape_numel(in), 0, 0);
    return CT_OK;
}

static int backward(const ct_layer_call *c)
{
    if (!c->dx_needed || c->r->view)
        return CT_OK; /* the gradient is already in place */
    return ct_act_copy(c->ctx, c->dx, c->dy, c->r->out_n);
}

/* Flatten (N, C, H, W) to (N, C H W) */
static int export_onnx(const ct_layer_export *e)
{
    return ct_onnx_node(e->g, "Flatten", CT_ONNX_NAMES(e->x), CT_ONNX_NAMES(e->y),
                        CT_ONNX_ATTRS(CT_ONNX_INT("axis", 1)));
}

CT_LAYER_TYPE(flatten, .min_inputs = 1, .max_inputs = 1, .flags = CT_LAYER_VIEW | CT_LAYER_ACT16, .infer = infer,
              .backward = backward, .export_onnx = export_onnx);
