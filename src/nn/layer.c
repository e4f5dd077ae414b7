/*
 * layer.c - what the layer modules share: shapes, parameter specs, input
 * checks, key lookup by name (for plan-time and tool use, never per step),
 * the initialization stream, and the ONNX export helpers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/philox.h"
#include "cl/runtime.h"
#include "nn/layer.h"
#include "ops/act.h"
#include "ops/dense.h"

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

void ct_set_shape(ct_shape *s, int ndim, int a, int b, int c)
{
    memset(s, 0, sizeof *s);
    s->ndim = ndim;
    s->d[0] = a;
    s->d[1] = b;
    s->d[2] = c;
}

size_t ct_param_numel(const ct_param_spec *p)
{
    size_t n = 1;
    for (int i = 0; i < p->ndim; i++)
        n *= (size_t)p->shape[i];
    return n;
}

void ct_layer_add_param(ct_layer *l, const char *suffix, int trainable, int ndim, int a, int b, int c, int d)
{
    ct_param_spec *p = &l->params[l->nparams++];
    p->suffix = suffix;
    p->trainable = trainable;
    p->ndim = ndim;
    p->shape[0] = a, p->shape[1] = b, p->shape[2] = c, p->shape[3] = d;
    if (trainable)
        l->param_count += ct_param_numel(p);
    else
        l->buffer_count += ct_param_numel(p);
}

int ct_shape_err(char *err, size_t n, const char *what, const ct_shape *in)
{
    char s[64];
    ct_shape_str(in, s, sizeof s);
    snprintf(err, n, "%s, but its input has shape %s", what, s);
    return CT_ERR_SHAPE;
}

int ct_need_image(const ct_shape *in, char *err, size_t n, const char *type)
{
    if (in->ndim != 3 || in->sequence || in->tokens) {
        char what[128];
        snprintf(what, sizeof what, "%s needs an image input (channels x height x width)", type);
        return ct_shape_err(err, n, what, in);
    }
    return CT_OK;
}

int ct_need_floats(const ct_shape *in, char *err, size_t n, const char *type)
{
    if (in->tokens) {
        char what[128];
        snprintf(what, sizeof what, "%s needs float values, not token ids (put an embedding first)", type);
        return ct_shape_err(err, n, what, in);
    }
    return CT_OK;
}

int ct_infer_same(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n)
{
    (void)nin;
    int st = ct_need_floats(in, err, n, l->type->name);
    if (st)
        return st;
    l->out = *in;
    return CT_OK;
}

/* ---- initialization ---- */

static uint32_t rng_u32(ct_init_rng *r)
{
    if (r->used == 4) {
        ct_philox4x32(r->ctr, r->key, r->block);
        if (++r->ctr[0] == 0)
            r->ctr[1]++;
        r->used = 0;
    }
    return r->block[r->used++];
}

double ct_init_uniform(ct_init_rng *r)
{
    uint64_t hi = rng_u32(r) >> 5, lo = rng_u32(r) >> 6;
    return (double)(hi * 67108864u + lo) / 9007199254740992.0;
}

double ct_init_normal(ct_init_rng *r)
{
    double u1 = ct_init_uniform(r), u2 = ct_init_uniform(r);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
}

void ct_init_normal_fill(float *p, size_t n, double std, ct_init_rng *g)
{
    for (size_t e = 0; e < n; e++)
        p[e] = (float)(ct_init_normal(g) * std);
}

void ct_init_fan_in_uniform(const ct_layer *l, float *params, ct_init_rng *g)
{
    const ct_param_spec *w = &l->params[0];
    double fan_in = 1;
    for (int d = 1; d < w->ndim; d++)
        fan_in *= (double)w->shape[d];
    double bound = 1.0 / sqrt(fan_in);
    for (size_t e = 0; e < l->param_count; e++)
        params[e] = (float)((2.0 * ct_init_uniform(g) - 1.0) * bound);
}

/* ---- a product layer's bias and activation ---- */

ct_buf ct_layer_bias(const ct_layer *l, ct_buf base)
{
    if (l->nparams < 2)
        return ct_none();
    return ct_buf_at(base, ct_param_numel(&l->params[0]));
}

/* Not for gelu, silu or hardswish: their backward reads the pre-activation
 * z + b, which the fused kernel does not keep (it reads z and writes only
 * the output), so those layers add the bias in the product and run the
 * activation apart. */
int ct_layer_fuses_bias(const ct_layer_call *c, int act)
{
    return act && !ct_act_needs_input((ct_act)act) && c->ctx->cls.fuse_bias_act;
}

/* On the CPU class the bias goes with the product (a rank-1 GEMM on the
 * host path, free in the direct convolution) and the activation runs on its
 * own in vector chunks; on the GPU class one kernel does both. */
int ct_layer_act_forward(const ct_layer_call *c, int act, ct_buf z, ct_buf b, int rows, int features, int hw)
{
    if (!ct_layer_fuses_bias(c, act))
        return ct_act_forward(c->ctx, (ct_act)act, c->r->out, z, c->r->out_n);
    return ct_bias_act_forward(c->ctx, c->r->out, z, b, rows, features, hw, (ct_act)act);
}

int ct_layer_act_backward(const ct_layer_call *c, int act, ct_buf z, ct_buf *db, int rows, int features, int hw)
{
    if (!act)
        return CT_OK;
    if (db->mem && ct_layer_fuses_bias(c, act)) {
        /* the activation's backward and the bias sum in one pass */
        int st = ct_bias_act_backward(c->ctx, *db, c->dy, (ct_act)act, z, c->r->out, rows, features, hw);
        *db = ct_none();
        return st;
    }
    return ct_act_backward(c->ctx, (ct_act)act, c->dy, c->dy, z, c->r->out, c->r->out_n);
}

ct_buf ct_layer_input_grad(const ct_layer_call *c, int j, int *accumulate)
{
    int p = c->l->inputs[j];
    *accumulate = 0;
    if (!c->net->rt[p].needs_dout)
        return ct_none();
    *accumulate = c->net->model->layers[p].consumers > 1 && !ct_net_grad_first(c->net, c->index, j);
    return c->net->rt[p].dout;
}

/* ---- ONNX export ---- */

const char *ct_export_tmp(const ct_layer_export *e, const char *what)
{
    return ct_onnx_name(e->g, "%s/%s", e->l->name, what);
}

const char *ct_export_param(const ct_layer_export *e, int j)
{
    const ct_param_spec *p = &e->l->params[j];
    int64_t dims[4];
    for (int d = 0; d < p->ndim; d++)
        dims[d] = p->shape[d];
    const char *name = ct_onnx_name(e->g, "%s.%s", e->l->name, p->suffix);
    ct_onnx_init_float(e->g, name, p->ndim, dims, e->param[j]);
    return name;
}

void ct_export_floats(const ct_layer_export *e, int j, float *dst)
{
    memcpy(dst, e->param[j], ct_param_numel(&e->l->params[j]) * sizeof(float));
}

int ct_export_act(const ct_layer_export *e, int act, const char *x, const char *y)
{
    ct_onnx *g = e->g;
    static const char *const ops[] = { "Identity", "Relu", "LeakyRelu", "Sigmoid", "Tanh" };
    if (act == CT_ACT_LEAKY_RELU)
        return ct_onnx_node(g, "LeakyRelu", CT_ONNX_NAMES(x), CT_ONNX_NAMES(y),
                            CT_ONNX_ATTRS(CT_ONNX_FLOAT("alpha", CT_LEAKY_SLOPE)));
    if (act >= 0 && act < CT_ACT_GELU)
        return ct_onnx_unary(g, ops[act], x, y);
    if (act == CT_ACT_SILU) { /* x sigmoid(x) */
        const char *s = ct_onnx_name(g, "%s/sigmoid", ct_export_tmp(e, "silu"));
        ct_onnx_unary(g, "Sigmoid", x, s);
        return ct_onnx_binary(g, "Mul", x, s, y);
    }
    if (act == CT_ACT_HARDSWISH) /* opset 14 on */
        return ct_onnx_unary(g, "HardSwish", x, y);
    if (act == CT_ACT_RELU6) { /* Clip takes its bounds as inputs from opset 11 */
        const char *p = ct_export_tmp(e, "relu6");
        const char *lo = ct_onnx_scalar(g, ct_onnx_name(g, "%s/min", p), 0.0f);
        const char *hi = ct_onnx_scalar(g, ct_onnx_name(g, "%s/max", p), 6.0f);
        return ct_onnx_node(g, "Clip", CT_ONNX_NAMES(x, lo, hi), CT_ONNX_NAMES(y), CT_ONNX_NO_ATTRS);
    }
    if (act != CT_ACT_GELU)
        return ct_onnx_fail(g, ct_fail(NULL, CT_ERR_INTERNAL, "layer '%s': activation %d has no ONNX form",
                                       e->l->name, act));
    /* 0.5 x (1 + erf(x / sqrt 2)); a layer has one activation, so its
     * tensors are named "<layer>/gelu/..." */
    const char *p = ct_export_tmp(e, "gelu");
    const char *r = ct_onnx_scalar(g, ct_onnx_name(g, "%s/rsqrt2", p), (float)M_SQRT1_2);
    const char *one = ct_onnx_scalar(g, ct_onnx_name(g, "%s/one", p), 1.0f);
    const char *half = ct_onnx_scalar(g, ct_onnx_name(g, "%s/half", p), 0.5f);
    const char *s = ct_onnx_name(g, "%s/scaled", p), *erf = ct_onnx_name(g, "%s/erf", p);
    const char *sum = ct_onnx_name(g, "%s/one_plus", p), *hx = ct_onnx_name(g, "%s/half_x", p);
    ct_onnx_binary(g, "Mul", x, r, s);
    ct_onnx_unary(g, "Erf", s, erf);
    ct_onnx_binary(g, "Add", erf, one, sum);
    ct_onnx_binary(g, "Mul", x, half, hx);
    return ct_onnx_binary(g, "Mul", hx, sum, y);
}

int ct_export_linear(const ct_layer_export *e, const char *x, const ct_shape *in, const char *w, const char *b,
                     int out, const char *y, const char *tag)
{
    ct_onnx *g = e->g;
    const char *l = e->l->name;
    int64_t F = in->sequence ? in->d[in->ndim - 1] : (int64_t)ct_shape_numel(in);
    const char *rows = x, *z = y;
    if (in->sequence) {
        rows = ct_onnx_name(g, "%s/%s_rows", l, tag);
        z = ct_onnx_name(g, "%s/%s_gemm", l, tag);
        const char *shape = ct_onnx_name(g, "%s/%s_rows_shape", l, tag);
        ct_onnx_binary(g, "Reshape", x, ct_onnx_ints(g, shape, 2, (int64_t[]){ -1, F }), rows);
    } else if (in->ndim > 1) {
        rows = ct_onnx_name(g, "%s/%s_flat", l, tag);
        ct_onnx_node(g, "Flatten", CT_ONNX_NAMES(x), CT_ONNX_NAMES(rows), CT_ONNX_ATTRS(CT_ONNX_INT("axis", 1)));
    }
    ct_onnx_attr transb[] = { CT_ONNX_INT("transB", 1) };
    if (*b)
        ct_onnx_node(g, "Gemm", CT_ONNX_NAMES(rows, w, b), CT_ONNX_NAMES(z), transb, 1);
    else
        ct_onnx_node(g, "Gemm", CT_ONNX_NAMES(rows, w), CT_ONNX_NAMES(z), transb, 1);
    if (in->sequence) {
        int64_t T = in->d[0];
        const char *shape = ct_onnx_name(g, "%s/%s_seq_shape", l, tag);
        ct_onnx_binary(g, "Reshape", z, ct_onnx_ints(g, shape, 3, (int64_t[]){ -1, T, out }), y);
    }
    return ct_onnx_status(g);
}

int ct_export_dims(const ct_shape *s, int64_t *dims)
{
    dims[0] = CT_ONNX_BATCH;
    for (int d = 0; d < s->ndim; d++)
        dims[1 + d] = s->d[d];
    return 1 + s->ndim;
}
