/*
 * to_sequence.c - an image (C, H, W) as a sequence of H W steps of C
 * features, (H W) x C, in row-major pixel order: a vision transformer's
 * patches after the patch embedding (a strided conv2d), as PyTorch's
 * x.flatten(2).transpose(1, 2). At run time images are (N, C, H W) and
 * sequences (T, N, C): a tiled transpose each way (ops/transpose.h).
 */
#include "nn/layer.h"
#include "ops/transpose.h"

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_image(in, err, n, "to_sequence");
    if (st)
        return st;
    ct_set_shape(&l->out, 2, in->d[1] * in->d[2], in->d[0], 0);
    l->out.sequence = 1;
    return CT_OK;
}

static int forward(const ct_layer_call *c)
{
    const ct_shape *s = &c->l->out;
    return ct_image_to_seq(c->ctx, c->r->out, c->x, (size_t)c->net->batch, (size_t)s->d[1], (size_t)s->d[0]);
}

static int backward(const ct_layer_call *c)
{
    if (!c->dx_needed)
        return CT_OK;
    const ct_shape *s = &c->l->out;
    return ct_seq_to_image(c->ctx, c->dx, c->dy, (size_t)c->net->batch, (size_t)s->d[1], (size_t)s->d[0]);
}

/* Reshape (N, C, H W), then Transpose to (N, H W, C): the exported graph's
 * sequences are batch-first */
static int export_onnx(const ct_layer_export *e)
{
    const char *shape = ct_export_tmp(e, "shape"), *flat = ct_export_tmp(e, "flat");
    int64_t dims[1] = { 3 }, to[3] = { 0, e->l->out.d[1], e->l->out.d[0] };
    ct_onnx_init_int64(e->g, shape, 1, dims, to);
    ct_onnx_node(e->g, "Reshape", CT_ONNX_NAMES(e->x, shape), CT_ONNX_NAMES(flat), CT_ONNX_NO_ATTRS);
    return ct_onnx_node(e->g, "Transpose", CT_ONNX_NAMES(flat), CT_ONNX_NAMES(e->y),
                        CT_ONNX_ATTRS(CT_ONNX_INTS("perm", 0, 2, 1)));
}

CT_LAYER_TYPE(to_sequence, .min_inputs = 1, .max_inputs = 1, .infer = infer, .forward = forward,
              .backward = backward, .export_onnx = export_onnx);
