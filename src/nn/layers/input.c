/*
 * input.c - the model's first layer: one sample's shape. Its output is the
 * batch slot the trainer uploads into (net.c points it there); it has no
 * forward or backward.
 */
#include <stdio.h>

#include "nn/layer.h"

enum { K_SHAPE, K_FEATURES, K_TOKENS };

static const ct_key_spec keys[] = {
    { "shape", CT_KEY_SHAPE, 0, 0, 1, 1 << 20, "channels x height x width of one image, e.g. 1x28x28", NULL },
    CT_KEY_INT_("features", 0, 0, 1, 1 << 26, "length of one feature vector"),
    CT_KEY_INT_("tokens", 0, 0, 1, 1 << 20, "sequence length of token ids"),
};

static int infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)in, (void)nin;
    int given = (l->shape_key_n > 0) + (l->v[K_FEATURES] > 0) + (l->v[K_TOKENS] > 0);
    if (given != 1) {
        snprintf(err, n, "input needs exactly one of shape=CxHxW, features=F or tokens=T");
        return CT_ERR_PARSE;
    }
    if (l->shape_key_n) {
        if (l->shape_key_n == 1)
            ct_set_shape(&l->out, 1, l->shape_key[0], 0, 0);
        else if (l->shape_key_n == 3)
            ct_set_shape(&l->out, 3, l->shape_key[0], l->shape_key[1], l->shape_key[2]);
        else {
            snprintf(err, n, "input shape= takes CxHxW (or a single length)");
            return CT_ERR_PARSE;
        }
    } else if (l->v[K_FEATURES] > 0) {
        ct_set_shape(&l->out, 1, (int)l->v[K_FEATURES], 0, 0);
    } else {
        ct_set_shape(&l->out, 1, (int)l->v[K_TOKENS], 0, 0);
        l->out.sequence = 1;
        l->out.tokens = 1;
    }
    return CT_OK;
}

/* the graph's input "input": (N, C, H, W) or (N, F) floats, or (N, T) int64 token ids */
static int export_onnx(const ct_layer_export *e)
{
    int64_t dims[4];
    int n = ct_export_dims(&e->l->out, dims);
    return ct_onnx_input(e->g, e->y, e->l->out.tokens ? CT_ONNX_INT64 : CT_ONNX_FLOAT, n, dims);
}

CT_LAYER_TYPE(input, CT_KEYS(keys), .min_inputs = 0, .max_inputs = 0, .flags = CT_LAYER_ACT16, .infer = infer,
              .export_onnx = export_onnx);
