/*
 * layers.c - the layer types of the model format: their keys (with
 * defaults and ranges), how many inputs they read, and their shape and
 * parameter inference. docs/MODEL_FORMAT.md documents the same table.
 */
#include <stdio.h>
#include <string.h>

#include "nn/model.h"

#define BIG 1e9
#define INTKEY(n, req, d, lo, hi, h) { n, CT_KEY_INT, req, d, lo, hi, h }
#define FLOATKEY(n, d, lo, hi, h) { n, CT_KEY_FLOAT, 0, d, lo, hi, h }
#define BOOLKEY(n, d, h) { n, CT_KEY_BOOL, 0, d, 0, 1, h }
#define ACTKEY { "act", CT_KEY_ACT, 0, 0, 0, 5, "fused activation: none, relu, leaky_relu, sigmoid, tanh, gelu" }

double ct_layer_key(const ct_layer *l, const char *key)
{
    for (int i = 0; i < l->type->nkeys; i++)
        if (!strcmp(l->type->keys[i].name, key))
            return l->v[i];
    return 0;
}

size_t ct_shape_numel(const ct_shape *s)
{
    size_t n = 1;
    for (int i = 0; i < s->ndim; i++)
        n *= (size_t)s->d[i];
    return n;
}

void ct_shape_str(const ct_shape *s, char *buf, size_t size)
{
    int at = 0;
    buf[0] = '\0';
    for (int i = 0; i < s->ndim && at >= 0 && (size_t)at < size; i++)
        at += snprintf(buf + at, size - (size_t)at, "%s%d", i ? "x" : "", s->d[i]);
    if (s->tokens && at >= 0 && (size_t)at < size)
        snprintf(buf + at, size - (size_t)at, " tokens");
    else if (s->sequence && at >= 0 && (size_t)at < size)
        snprintf(buf + at, size - (size_t)at, " (sequence)");
}

static void set_shape(ct_shape *s, int ndim, int a, int b, int c)
{
    memset(s, 0, sizeof *s);
    s->ndim = ndim;
    s->d[0] = a;
    s->d[1] = b;
    s->d[2] = c;
}

static void add_param(ct_layer *l, const char *suffix, int trainable, int ndim, int a, int b, int c, int d)
{
    ct_param_spec *p = &l->params[l->nparams++];
    p->suffix = suffix;
    p->trainable = trainable;
    p->ndim = ndim;
    p->shape[0] = a, p->shape[1] = b, p->shape[2] = c, p->shape[3] = d;
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= (size_t)p->shape[i];
    if (trainable)
        l->param_count += n;
    else
        l->buffer_count += n;
}

static int shape_err(char *err, size_t n, const char *what, const ct_shape *in)
{
    char s[64];
    ct_shape_str(in, s, sizeof s);
    snprintf(err, n, "%s, but its input has shape %s", what, s);
    return CT_ERR_SHAPE;
}

static int need_image(const ct_shape *in, char *err, size_t n, const char *type)
{
    if (in->ndim != 3 || in->sequence || in->tokens) {
        char what[128];
        snprintf(what, sizeof what, "%s needs an image input (channels x height x width)", type);
        return shape_err(err, n, what, in);
    }
    return CT_OK;
}

static int need_floats(const ct_shape *in, char *err, size_t n, const char *type)
{
    if (in->tokens) {
        char what[128];
        snprintf(what, sizeof what, "%s needs float values, not token ids (put an embedding first)", type);
        return shape_err(err, n, what, in);
    }
    return CT_OK;
}

/* ---- input ---- */
static const ct_key_spec input_keys[] = {
    { "shape", CT_KEY_SHAPE, 0, 0, 1, 1 << 20, "channels x height x width of one image, e.g. 1x28x28" },
    INTKEY("features", 0, 0, 1, 1 << 26, "length of one feature vector"),
    INTKEY("tokens", 0, 0, 1, 1 << 20, "sequence length of token ids"),
};

static int infer_input(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)in, (void)nin;
    int given = (l->shape_key_n > 0) + (l->v[1] > 0) + (l->v[2] > 0);
    if (given != 1) {
        snprintf(err, n, "input needs exactly one of shape=CxHxW, features=F or tokens=T");
        return CT_ERR_PARSE;
    }
    if (l->shape_key_n) {
        if (l->shape_key_n == 1)
            set_shape(&l->out, 1, l->shape_key[0], 0, 0);
        else if (l->shape_key_n == 3)
            set_shape(&l->out, 3, l->shape_key[0], l->shape_key[1], l->shape_key[2]);
        else {
            snprintf(err, n, "input shape= takes CxHxW (or a single length)");
            return CT_ERR_PARSE;
        }
    } else if (l->v[1] > 0) {
        set_shape(&l->out, 1, (int)l->v[1], 0, 0);
    } else {
        set_shape(&l->out, 1, (int)l->v[2], 0, 0);
        l->out.sequence = 1;
        l->out.tokens = 1;
    }
    return CT_OK;
}

/* ---- dense ---- */
static const ct_key_spec dense_keys[] = {
    INTKEY("out", 1, 0, 1, 1 << 24, "output features"),
    BOOLKEY("bias", 1, "add a bias"),
    ACTKEY,
};

static int infer_dense(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = need_floats(in, err, n, "dense");
    if (st)
        return st;
    int out = (int)l->v[0];
    size_t fan_in = in->sequence ? (size_t)in->d[in->ndim - 1] : ct_shape_numel(in);
    if (fan_in > (1u << 26))
        return shape_err(err, n, "dense has more than 2^26 inputs", in);
    if (in->sequence) {
        set_shape(&l->out, 2, in->d[0], out, 0);
        l->out.sequence = 1;
    } else {
        set_shape(&l->out, 1, out, 0, 0);
    }
    add_param(l, "weight", 1, 2, out, (int)fan_in, 0, 0);
    if (l->v[1])
        add_param(l, "bias", 1, 1, out, 0, 0, 0);
    return CT_OK;
}

/* ---- conv2d ---- */
static const ct_key_spec conv_keys[] = {
    INTKEY("out", 1, 0, 1, 1 << 16, "output channels"),
    INTKEY("kernel", 1, 0, 1, 64, "kernel height and width"),
    INTKEY("stride", 0, 1, 1, 64, "stride"),
    INTKEY("pad", 0, 0, 0, 64, "zero padding on each side"),
    INTKEY("dilation", 0, 1, 1, 64, "dilation"),
    BOOLKEY("bias", 1, "add a bias"),
    ACTKEY,
};

static int infer_conv(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = need_image(in, err, n, "conv2d");
    if (st)
        return st;
    int out = (int)l->v[0], k = (int)l->v[1], s = (int)l->v[2], p = (int)l->v[3], d = (int)l->v[4];
    int oh = (in->d[1] + 2 * p - d * (k - 1) - 1) / s + 1;
    int ow = (in->d[2] + 2 * p - d * (k - 1) - 1) / s + 1;
    if (in->d[1] + 2 * p - d * (k - 1) - 1 < 0 || in->d[2] + 2 * p - d * (k - 1) - 1 < 0 || oh < 1 || ow < 1) {
        char what[160];
        snprintf(what, sizeof what, "conv2d kernel %d (dilation %d, pad %d) is larger than its "
                 "padded input", k, d, p);
        return shape_err(err, n, what, in);
    }
    set_shape(&l->out, 3, out, oh, ow);
    add_param(l, "weight", 1, 4, out, in->d[0], k, k);
    if (l->v[5])
        add_param(l, "bias", 1, 1, out, 0, 0, 0);
    return CT_OK;
}

/* ---- batchnorm ---- */
static const ct_key_spec bn_keys[] = {
    FLOATKEY("eps", 1e-5, 1e-12, 1, "added to the variance"),
    FLOATKEY("momentum", 0.1, 0, 1, "running statistics update rate (PyTorch's convention)"),
    ACTKEY,
};

static int infer_bn(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = need_floats(in, err, n, "batchnorm");
    if (st)
        return st;
    if (in->sequence || (in->ndim != 3 && in->ndim != 1))
        return shape_err(err, n, "batchnorm needs an image (CxHxW) or a feature vector", in);
    int act = (int)l->v[2];
    if (act != 0 && act != 1) {
        snprintf(err, n, "batchnorm fuses only act=relu");
        return CT_ERR_PARSE;
    }
    l->out = *in;
    int c = in->d[0];
    add_param(l, "weight", 1, 1, c, 0, 0, 0);
    add_param(l, "bias", 1, 1, c, 0, 0, 0);
    add_param(l, "running_mean", 0, 1, c, 0, 0, 0);
    add_param(l, "running_var", 0, 1, c, 0, 0, 0);
    return CT_OK;
}

/* ---- element-wise ---- */
static int infer_same(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = need_floats(in, err, n, l->type->name);
    if (st)
        return st;
    l->out = *in;
    return CT_OK;
}

static const ct_key_spec dropout_keys[] = {
    FLOATKEY("p", 0.5, 0, 0.999, "probability of zeroing an element while training"),
};

/* ---- pooling ---- */
static const ct_key_spec maxpool_keys[] = {
    INTKEY("kernel", 1, 0, 1, 64, "window height and width"),
    INTKEY("stride", 0, -1, -1, 64, "stride (default: the kernel size)"),
    INTKEY("pad", 0, 0, 0, 32, "padding on each side (at most kernel/2)"),
};

static const ct_key_spec avgpool_keys[] = {
    INTKEY("kernel", 1, 0, 1, 64, "window height and width"),
    INTKEY("stride", 0, -1, -1, 64, "stride (default: the kernel size)"),
    INTKEY("pad", 0, 0, 0, 32, "zero padding on each side (at most kernel/2)"),
    BOOLKEY("count_include_pad", 1, "padding zeros count in the average"),
};

static int infer_pool(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = need_image(in, err, n, l->type->name);
    if (st)
        return st;
    int k = (int)l->v[0], s = l->v[1] < 0 ? k : (int)l->v[1], p = (int)l->v[2];
    if (s == 0) {
        snprintf(err, n, "%s stride must be at least 1", l->type->name);
        return CT_ERR_PARSE;
    }
    l->v[1] = s;
    if (2 * p > k) {
        snprintf(err, n, "%s pad=%d is more than half the kernel %d", l->type->name, p, k);
        return CT_ERR_PARSE;
    }
    int oh = (in->d[1] + 2 * p - k) / s + 1, ow = (in->d[2] + 2 * p - k) / s + 1;
    if (in->d[1] + 2 * p < k || in->d[2] + 2 * p < k) {
        char what[96];
        snprintf(what, sizeof what, "%s kernel %d is larger than its padded input", l->type->name, k);
        return shape_err(err, n, what, in);
    }
    set_shape(&l->out, 3, in->d[0], oh, ow);
    return CT_OK;
}

static int infer_gap(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = need_image(in, err, n, "global_avgpool");
    if (st)
        return st;
    set_shape(&l->out, 1, in->d[0], 0, 0);
    return CT_OK;
}

static int infer_flatten(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = need_floats(in, err, n, "flatten");
    if (st)
        return st;
    if (in->sequence)
        return shape_err(err, n, "flatten does not apply to sequences", in);
    set_shape(&l->out, 1, (int)ct_shape_numel(in), 0, 0);
    return CT_OK;
}

/* ---- lrn ---- */
static const ct_key_spec lrn_keys[] = {
    INTKEY("size", 1, 0, 1, 64, "channels in the window"),
    FLOATKEY("alpha", 1e-4, 0, 1e3, "scale (PyTorch's: divided by size)"),
    FLOATKEY("beta", 0.75, 0, 10, "exponent"),
    FLOATKEY("k", 1.0, 0, 1e3, "additive constant"),
};

static int infer_lrn(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = need_image(in, err, n, "lrn");
    if (st)
        return st;
    l->out = *in;
    return CT_OK;
}

/* ---- add ---- */
static int infer_add(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    if (nin != 2) {
        snprintf(err, n, "add needs two inputs: from=A,B");
        return CT_ERR_PARSE;
    }
    int st = need_floats(&in[0], err, n, "add");
    if (st)
        return st;
    int same = in[0].ndim == in[1].ndim && in[0].sequence == in[1].sequence;
    for (int i = 0; same && i < in[0].ndim; i++)
        same = in[0].d[i] == in[1].d[i];
    if (!same) {
        char a[64], b[64];
        ct_shape_str(&in[0], a, sizeof a);
        ct_shape_str(&in[1], b, sizeof b);
        snprintf(err, n, "add needs inputs of one shape, but they are %s and %s", a, b);
        return CT_ERR_SHAPE;
    }
    l->out = in[0];
    return CT_OK;
}

/* ---- shortcut_a ---- */
static const ct_key_spec shortcut_keys[] = {
    INTKEY("stride", 1, 0, 1, 16, "spatial subsampling"),
    INTKEY("out", 1, 0, 1, 1 << 16, "output channels (the extra ones are zero)"),
};

static int infer_shortcut(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = need_image(in, err, n, "shortcut_a");
    if (st)
        return st;
    int s = (int)l->v[0], out = (int)l->v[1];
    if (out < in->d[0]) {
        char what[96];
        snprintf(what, sizeof what, "shortcut_a out=%d is fewer than its input channels", out);
        return shape_err(err, n, what, in);
    }
    set_shape(&l->out, 3, out, (in->d[1] + s - 1) / s, (in->d[2] + s - 1) / s);
    return CT_OK;
}

/* ---- embedding ---- */
static const ct_key_spec embedding_keys[] = {
    INTKEY("vocab", 1, 0, 1, 1 << 24, "number of token ids"),
    INTKEY("dim", 1, 0, 1, 1 << 16, "vector length"),
};

static int infer_embedding(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    if (!in->tokens)
        return shape_err(err, n, "embedding needs token ids (input tokens=T)", in);
    int dim = (int)l->v[1];
    set_shape(&l->out, 2, in->d[0], dim, 0);
    l->out.sequence = 1;
    add_param(l, "weight", 1, 2, (int)l->v[0], dim, 0, 0);
    return CT_OK;
}

/* ---- lstm ---- */
static const ct_key_spec lstm_keys[] = {
    INTKEY("hidden", 1, 0, 1, 1 << 14, "hidden size"),
    INTKEY("layers", 0, 1, 1, 4, "stacked layers"),
};

static const char *const lstm_names[4][4] = {
    { "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0" },
    { "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1" },
    { "weight_ih_l2", "weight_hh_l2", "bias_ih_l2", "bias_hh_l2" },
    { "weight_ih_l3", "weight_hh_l3", "bias_ih_l3", "bias_hh_l3" },
};

static int infer_lstm(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    if (!in->sequence || in->tokens || in->ndim != 2)
        return shape_err(err, n, "lstm needs a sequence of vectors (T x F), e.g. from an embedding", in);
    int h = (int)l->v[0], layers = (int)l->v[1];
    set_shape(&l->out, 2, in->d[0], h, 0);
    l->out.sequence = 1;
    for (int k = 0; k < layers; k++) {
        add_param(l, lstm_names[k][0], 1, 2, 4 * h, k ? h : in->d[1], 0, 0);
        add_param(l, lstm_names[k][1], 1, 2, 4 * h, h, 0, 0);
        add_param(l, lstm_names[k][2], 1, 1, 4 * h, 0, 0, 0);
        add_param(l, lstm_names[k][3], 1, 1, 4 * h, 0, 0, 0);
    }
    return CT_OK;
}

/* ---- losses ---- */
static int infer_xent(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = need_floats(in, err, n, "softmax_cross_entropy");
    if (st)
        return st;
    if (in->ndim != 1 && !(in->sequence && in->ndim == 2))
        return shape_err(err, n, "softmax_cross_entropy needs class scores (K, or T x K for a "
                         "sequence)", in);
    set_shape(&l->out, 1, 1, 0, 0);
    return CT_OK;
}

static int infer_mse(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = need_floats(in, err, n, "mse");
    if (st)
        return st;
    set_shape(&l->out, 1, 1, 0, 0);
    return CT_OK;
}

#define TYPE(n, keys, mn, mx, loss, fn) \
    static const ct_layer_type type_##n = { #n, keys, (int)(sizeof(keys) / sizeof(ct_key_spec)), mn, mx, loss, fn }
#define TYPE0(n, mn, mx, loss, fn) static const ct_layer_type type_##n = { #n, NULL, 0, mn, mx, loss, fn }

TYPE(input, input_keys, 0, 0, 0, infer_input);
TYPE(dense, dense_keys, 1, 1, 0, infer_dense);
TYPE(conv2d, conv_keys, 1, 1, 0, infer_conv);
TYPE(batchnorm, bn_keys, 1, 1, 0, infer_bn);
TYPE0(relu, 1, 1, 0, infer_same);
TYPE0(leaky_relu, 1, 1, 0, infer_same);
TYPE0(sigmoid, 1, 1, 0, infer_same);
TYPE0(tanh, 1, 1, 0, infer_same);
TYPE0(gelu, 1, 1, 0, infer_same);
TYPE(dropout, dropout_keys, 1, 1, 0, infer_same);
TYPE(maxpool, maxpool_keys, 1, 1, 0, infer_pool);
TYPE(avgpool, avgpool_keys, 1, 1, 0, infer_pool);
TYPE0(global_avgpool, 1, 1, 0, infer_gap);
TYPE0(flatten, 1, 1, 0, infer_flatten);
TYPE(lrn, lrn_keys, 1, 1, 0, infer_lrn);
TYPE0(add, 2, 2, 0, infer_add);
TYPE(shortcut_a, shortcut_keys, 1, 1, 0, infer_shortcut);
TYPE(embedding, embedding_keys, 1, 1, 0, infer_embedding);
TYPE(lstm, lstm_keys, 1, 1, 0, infer_lstm);
TYPE0(softmax_cross_entropy, 1, 1, 1, infer_xent);
TYPE0(mse, 1, 1, 1, infer_mse);

const ct_layer_type *const ct_layer_types[] = {
    &type_input, &type_dense, &type_conv2d, &type_batchnorm, &type_relu, &type_leaky_relu,
    &type_sigmoid, &type_tanh, &type_gelu, &type_dropout, &type_maxpool, &type_avgpool,
    &type_global_avgpool, &type_flatten, &type_lrn, &type_add, &type_shortcut_a,
    &type_embedding, &type_lstm, &type_softmax_cross_entropy, &type_mse, NULL,
};

const ct_layer_type *ct_layer_type_find(const char *name)
{
    for (int i = 0; ct_layer_types[i]; i++)
        if (!strcmp(ct_layer_types[i]->name, name))
            return ct_layer_types[i];
    return NULL;
}
