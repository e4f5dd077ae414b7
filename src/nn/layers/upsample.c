/*
 * upsample.c - 2-D upsampling of images by an integer scale: mode=nearest
 * or bilinear (align_corners=False), as torch.nn.Upsample(scale_factor=S):
 * (C, H, W) -> (C, S H, S W).
 */
#include "nn/layer.h"
#include "ops/upsample.h"

enum { K_MODE, K_SCALE };

static const char *const mode_names[] = { "nearest", "bilinear", NULL };

static const ct_key_spec keys[] = {
    CT_KEY_CHOICE_("mode", 0, mode_names, 2, "nearest or bilinear (align_corners=False)"),
    CT_KEY_INT_("scale", 0, 2, 1, 64, "the integer factor of height and width"),
};

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_image(in, err, n, "upsample");
    if (st)
        return st;
    int S = (int)l->v[K_SCALE];
    if ((long long)in->d[1] * S > 1 << 16 || (long long)in->d[2] * S > 1 << 16)
        return ct_shape_err(err, n, "upsample makes images larger than 65536 on a side from", in);
    ct_set_shape(&l->out, 3, in->d[0], in->d[1] * S, in->d[2] * S);
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    const ct_shape *s = &c->net->model->layers[c->l->inputs[0]].out;
    return ct_upsample_forward(c->ctx, c->r->out, c->x, c->r->rows * (size_t)s->d[0], s->d[1], s->d[2],
                               (int)c->l->v[K_SCALE], (int)c->l->v[K_MODE]);
}

static int backward(const ct_layer_call *c)
{
    const ct_shape *s = &c->net->model->layers[c->l->inputs[0]].out;
    if (!c->dx_needed)
        return CT_OK;
    return ct_upsample_backward(c->ctx, c->dx, c->dy, c->r->rows * (size_t)s->d[0], s->d[1], s->d[2],
                                (int)c->l->v[K_SCALE], (int)c->l->v[K_MODE]);
}

/* Resize with scales (1, 1, S, S): nearest as PyTorch exports it
 * (asymmetric coordinates, floor), bilinear as linear with
 * pytorch_half_pixel coordinates */
static int export_onnx(const ct_layer_export *e)
{
    float S = (float)e->l->v[K_SCALE];
    const float sc[4] = { 1.0f, 1.0f, S, S };
    const int64_t dims[1] = { 4 };
    const char *scales = ct_export_tmp(e, "scales");
    ct_onnx_init_float(e->g, scales, 1, dims, sc);
    if (e->l->v[K_MODE] == 0)
        return ct_onnx_node(e->g, "Resize", CT_ONNX_NAMES(e->x, "", scales), CT_ONNX_NAMES(e->y),
                            CT_ONNX_ATTRS(CT_ONNX_STR("mode", "nearest"),
                                          CT_ONNX_STR("coordinate_transformation_mode", "asymmetric"),
                                          CT_ONNX_STR("nearest_mode", "floor")));
    return ct_onnx_node(e->g, "Resize", CT_ONNX_NAMES(e->x, "", scales), CT_ONNX_NAMES(e->y),
                        CT_ONNX_ATTRS(CT_ONNX_STR("mode", "linear"),
                                      CT_ONNX_STR("coordinate_transformation_mode", "pytorch_half_pixel")));
}

CT_LAYER_TYPE(upsample, CT_KEYS(keys), .min_inputs = 1, .max_inputs = 1, .infer = infer, .forward = forward,
              .backward = backward, .export_onnx = export_onnx);
