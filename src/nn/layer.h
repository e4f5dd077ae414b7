/*
 * layer.h - the contract of a layer type. Each type is one module in
 * src/nn/layers/ (types that share everything, like the activations, share
 * one file) holding all of it: its keys with defaults and ranges, shape and
 * parameter inference, initialization, what it saves for the backward and
 * what workspace it needs (its plan), forward and backward, and how it is
 * written as ONNX nodes (its export). The registry
 * (src/nn/layers/list.h, an X-macro) ties names, ids and these tables
 * together; net.c plans and runs any layer through them and never names a
 * type.
 *
 * Adding a layer type: docs/ARCHITECTURE.md, "Layer types".
 */
#ifndef CT_NN_LAYER_H
#define CT_NN_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "io/onnx.h"
#include "nn/model.h"
#include "nn/net.h"

/* Layer ids, in list order: CT_LAYER_ID_dense, ... */
enum ct_layer_id {
#define CT_LAYER(name, file) CT_LAYER_ID_##name,
#include "nn/layers/list.h"
#undef CT_LAYER
    CT_LAYER_COUNT
};

/* ---- what a forward or backward is given ---- */

typedef struct ct_layer_call {
    ct_net *net;
    ct_context *ctx;
    const ct_layer *l;
    ct_lrt *r;          /* the layer's run-time state: buffers and its own state */
    size_t index;       /* the layer's position in the model */
    const ct_lrt *in;   /* its first input's run-time state (NULL for input) */
    ct_buf x;           /* its first input's output */
    int training;       /* forward: batch statistics and dropout on */
    uint64_t seed;      /* this step's seed (dropout masks) */
    /* backward only */
    ct_buf dy;          /* the gradient of the layer's output */
    ct_buf dx;          /* where the gradient of the first input goes (the producer's own
                           gradient, or a temporary the executor then adds into it) */
    int dx_needed;      /* some earlier layer needs that gradient */
    int dx_accumulate;  /* add into dx, not write it (CT_LAYER_ACCUM_DX layers only) */
} ct_layer_call;

/* ---- planning: what a layer asks of the memory plan ---- */

typedef struct ct_plan ct_plan; /* net.c */

/* The net being planned (batch, bn_groups, rt of earlier layers are set). */
ct_net *ct_plan_net(ct_plan *p);
/* A tensor of n activations in the activation arena, alive through both passes;
 * *dst is set once the plan is placed (and patched at allocation). */
int ct_plan_activation(ct_plan *p, size_t n, ct_buf *dst, const char *layer);
/* A workspace of n floats used only inside one call: all layers share one. */
void ct_plan_scratch(ct_plan *p, size_t n);
/* The loss reads n label elements per batch (int32 class ids, or float
 * regression targets), in the batch slot after the input when in_slot;
 * in_slot 0 leaves them out of the slot. */
void ct_plan_labels(ct_plan *p, size_t n, int in_slot);

/* ---- initialization: a counter-based stream per (seed, layer) ---- */

typedef struct ct_init_rng {
    uint32_t key[2];
    uint32_t ctr[4];
    uint32_t block[4];
    int used;
} ct_init_rng;

double ct_init_uniform(ct_init_rng *g); /* [0, 1) with 53 bits */
double ct_init_normal(ct_init_rng *g);
/* p[0..n) drawn N(0, std^2) */
void ct_init_normal_fill(float *p, size_t n, double std, ct_init_rng *g);

/* ---- ONNX export: what a layer's export hook is given ---- */

/* Tensors in the exported graph are batch-first: every layer's output is
 * (N, its per-sample shape), whatever its run-time layout (sequences are
 * time-major (T, N, F) in the net, (N, T, F) in the graph): images
 * (N, C, H, W), vectors (N, F), sequences (N, T, F), token ids (N, T) as
 * int64. The hook adds the nodes of the layer's inference forward (running
 * statistics, no dropout) reading e->x and writing e->y, and its
 * parameters as initializers (ct_export_param). */
typedef struct ct_layer_export {
    ct_onnx *g;
    const ct_model *model;
    const ct_layer *l;
    const char *const *names; /* each layer's output tensor, by index (set for those before l) */
    const char *x;            /* its first input's tensor */
    const ct_shape *in;       /* its first input's per-sample shape */
    const char *y;            /* the name its output tensor must have */
    const void *const *param; /* l->params[j] as the checkpoint holds it: little-endian F32 in
                                 PyTorch's layout, not necessarily aligned */
} ct_layer_export;

/* ---- the type ---- */

enum {
    CT_LAYER_LOSS = 1,      /* the model's last layer: a scalar from scores and labels */
    CT_LAYER_VIEW = 2,      /* its output is its input's memory (flatten) */
    CT_LAYER_OWN_GRADS = 4, /* its backward delivers its inputs' gradients itself */
    CT_LAYER_ACCUM_DX = 8,  /* its backward adds into dx when dx_accumulate says so (a
                               gradient with several writers, without a pass of its own) */
    CT_LAYER_ACT16 = 16,    /* it runs with 16-bit activation storage (its ops' 16-bit forms,
                               or floats converted around them): r->out, dout and
                               inputs hold 16-bit elements then */
};

struct ct_layer_type {
    const char *name;
    int id;                     /* enum ct_layer_id */
    const ct_key_spec *keys;
    int nkeys;
    int min_inputs, max_inputs; /* 0 for input */
    unsigned flags;
    int variant;                /* for types sharing a module: which one (e.g. enum ct_act) */
    /* A scalar int64 buffer PyTorch's module keeps that counts training
     * forwards (batch norm's num_batches_tracked): checkpoints write the
     * run's micro-batches (steps x accumulate) as `<layer>.<step_count>`;
     * NULL: none. */
    const char *step_count;
    /* Infers the output shape (and the parameter specs) from the inputs';
     * on a mismatch writes the reason to err and returns CT_ERR_SHAPE. */
    int (*infer)(ct_layer *l, const ct_shape *in, int nin, char *err, size_t errlen);
    /* Fills the trainable parameters (PyTorch order) and the buffers. NULL:
     * the type has neither. */
    void (*init)(const ct_layer *l, float *params, float *buffers, ct_init_rng *g);
    /* Reads the keys once into the layer's state (r->state), and asks for
     * saved tensors (r->saved_n) and workspace. NULL: nothing to plan. */
    int (*plan)(ct_plan *p, const ct_layer *l, ct_lrt *r);
    int (*forward)(const ct_layer_call *c);  /* NULL: nothing to compute */
    int (*backward)(const ct_layer_call *c); /* NULL: nothing to compute */
    /* Multiply-adds x 2 of one forward over the batch (bench's GFLOP/s);
     * NULL: none worth counting. */
    double (*flops)(const ct_net *net, size_t index);
    /* Writes the layer as ONNX nodes (see ct_layer_export); on failure
     * returns the status with its message set (ct_fail; the graph's own
     * errors are sticky in e->g), which the exporter prefixes with the
     * layer. NULL: the exporter does not know the type yet (an error
     * naming it). */
    int (*export_onnx)(const ct_layer_export *e);
};

/* Defines `const ct_layer_type ct_layer_<name>` with its name and id from
 * the list, so the two cannot drift apart. */
#define CT_LAYER_TYPE(n, ...) \
    const ct_layer_type ct_layer_##n = { .name = #n, .id = CT_LAYER_ID_##n, __VA_ARGS__ }
#define CT_KEYS(arr) .keys = (arr), .nkeys = (int)(sizeof(arr) / sizeof((arr)[0]))

#define CT_LAYER(name, file) extern const ct_layer_type ct_layer_##name;
#include "nn/layers/list.h"
#undef CT_LAYER

/* A layer's own state in its run-time record (ct_lrt.state); a module
 * states at file scope that its type fits with CT_STATE_FITS(T). */
#define CT_LAYER_STATE(r, T) ((T *)(void *)(r)->state.bytes)
#define CT_STATE_FITS(T) _Static_assert(sizeof(T) <= CT_LAYER_STATE_MAX, #T " does not fit ct_lrt.state")

/* ---- helpers the modules share (src/nn/layer.c) ---- */

#define CT_KEY_INT_(n, req, d, lo, hi, h) { n, CT_KEY_INT, req, d, lo, hi, h, NULL }
#define CT_KEY_FLOAT_(n, d, lo, hi, h) { n, CT_KEY_FLOAT, 0, d, lo, hi, h, NULL }
#define CT_KEY_BOOL_(n, d, h) { n, CT_KEY_BOOL, 0, d, 0, 1, h, NULL }
#define CT_KEY_ACT_ { "act", CT_KEY_ACT, 0, 0, 0, 5, "fused activation: none, relu, leaky_relu, sigmoid, tanh, gelu, silu, hardswish, relu6", NULL }
/* A key naming one of `names` (a NULL-terminated array of count names);
 * its value is the index, the default index d. */
#define CT_KEY_CHOICE_(n, d, names, count, h) { n, CT_KEY_CHOICE, 0, d, 0, (count) - 1, h, names }

static inline ct_buf ct_none(void)
{
    ct_buf b = { NULL, 0 };
    return b;
}

void ct_set_shape(ct_shape *s, int ndim, int a, int b, int c);
void ct_layer_add_param(ct_layer *l, const char *suffix, int trainable, int ndim, int a, int b, int c, int d);
int ct_shape_err(char *err, size_t n, const char *what, const ct_shape *in);
int ct_need_image(const ct_shape *in, char *err, size_t n, const char *type);
int ct_need_floats(const ct_shape *in, char *err, size_t n, const char *type);
/* infer for layers whose output has their (float) input's shape */
int ct_infer_same(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n);
/* The element count of parameter j. */
size_t ct_param_numel(const ct_param_spec *p);
/* PyTorch's kaiming_uniform(a=sqrt(5)) for a weight and its bias: uniform
 * in +-1/sqrt(fan_in), fan_in from the weight's dimensions after the first. */
void ct_init_fan_in_uniform(const ct_layer *l, float *params, ct_init_rng *g);

/* The bias after a weight (dense, conv2d) in base, the layer's parameters
 * or gradients; none without one. */
ct_buf ct_layer_bias(const ct_layer *l, ct_buf base);
/* A product layer's fused activation `act` (enum ct_act) over z (rows,
 * features, hw): whether the class adds the bias in the activation's
 * kernel (then the product leaves it out), the forward into r->out, and the
 * backward in place on dy, which also sums the bias gradient into *db and
 * clears it when fused (the product then skips it). */
int ct_layer_fuses_bias(const ct_layer_call *c, int act);
int ct_layer_act_forward(const ct_layer_call *c, int act, ct_buf z, ct_buf b, int rows, int features, int hw);
int ct_layer_act_backward(const ct_layer_call *c, int act, ct_buf z, ct_buf *db, int rows, int features, int hw);

/* For a layer that delivers its own gradients (CT_LAYER_OWN_GRADS): input
 * j's gradient ({NULL, 0} when nothing needs it), and in *accumulate
 * whether to add into it (other layers write it too and this layer's
 * backward is not the first to: ct_net_grad_first). */
ct_buf ct_layer_input_grad(const ct_layer_call *c, int j, int *accumulate);

/* ---- helpers for export hooks (src/nn/layer.c); errors stick in e->g ---- */

/* "<layer>/<what>": an intermediate tensor or constant of the layer. */
const char *ct_export_tmp(const ct_layer_export *e, const char *what);
/* Parameter j as an initializer named "<layer>.<suffix>" (the checkpoint's
 * name), in its checkpoint shape; returns the name. */
const char *ct_export_param(const ct_layer_export *e, int j);
/* Parameter j's values into dst (ct_param_numel floats), for hooks that
 * rearrange them. */
void ct_export_floats(const ct_layer_export *e, int j, float *dst);
/* A fused activation (enum ct_act) from x to y (none: Identity); gelu is
 * written out in its erf form, which opset 17 has no operator for. */
int ct_export_act(const ct_layer_export *e, int act, const char *x, const char *y);
/* y = x W^T + b as torch.nn.Linear over x of per-sample shape `in`: a
 * vector, an image (flattened first) or a sequence (each step): Gemm, with
 * a Flatten or a Reshape to (N T, F) rows and back around it. w (out, F)
 * and b (out, or "" for none) are tensor names; `tag` names the
 * intermediates "<layer>/<tag>_...". */
int ct_export_linear(const ct_layer_export *e, const char *x, const ct_shape *in, const char *w, const char *b,
                     int out, const char *y, const char *tag);
/* The graph dimensions of a per-sample shape: CT_ONNX_BATCH, then s's;
 * returns their count. */
int ct_export_dims(const ct_shape *s, int64_t *dims);

#endif /* CT_NN_LAYER_H */
