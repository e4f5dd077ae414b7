/*
 * model.h - the parsed model: layers in file order, each with its type, its
 * key values, its inputs and its inferred output shape.
 *
 * Each layer type is a module (src/nn/layers/, contract in src/nn/layer.h):
 * it declares the keys it takes (name, kind, default, range), how many
 * inputs it reads, and a shape function. Key values live in a small array
 * indexed by the key's position in the type's table, so no struct carries
 * every type's fields; each type reads them into its own state at plan time.
 */
#ifndef CT_NN_MODEL_H
#define CT_NN_MODEL_H

#include <stddef.h>

#include "cltrain/model.h"
#include "core/error.h"

#define CT_MAX_KEYS 8
#define CT_NAME_MAX 64
/* the most layers one layer reads (concat) */
#define CT_MAX_INPUTS 8

typedef enum ct_key_kind {
    CT_KEY_INT,
    CT_KEY_FLOAT,
    CT_KEY_BOOL,
    CT_KEY_ACT,   /* none, relu, leaky_relu, sigmoid, tanh, gelu, silu, hardswish, relu6 */
    CT_KEY_SHAPE, /* 1x28x28: up to 3 positive integers */
    CT_KEY_CHOICE, /* one of the names in `choices`, stored as its index */
} ct_key_kind;

typedef struct ct_key_spec {
    const char *name;
    ct_key_kind kind;
    int required;
    double def;      /* the default when not required */
    double min, max; /* valid range (ints and floats) */
    const char *help;
    const char *const *choices; /* CT_KEY_CHOICE: the names, NULL-terminated */
} ct_key_spec;

typedef struct ct_layer ct_layer;

/* A tensor shape of one sample. Images (C, H, W), features (F); with
 * `sequence`, (T, F) or tokens (T): the batch sits after T at run time. */
typedef struct ct_shape {
    int ndim;
    int d[4];
    int sequence;
    int tokens; /* integer token ids, not floats */
} ct_shape;

typedef struct ct_param_spec {
    const char *suffix; /* "weight", "bias", "running_mean", ... */
    int ndim;
    int shape[4];
    int trainable;      /* 0: a buffer (running statistics), saved but not optimized */
} ct_param_spec;

#define CT_MAX_PARAMS 16

/* A layer type's whole contract: src/nn/layer.h. */
typedef struct ct_layer_type ct_layer_type;

struct ct_layer {
    char name[CT_NAME_MAX];
    const ct_layer_type *type;
    int line;
    double v[CT_MAX_KEYS];      /* key values, by the type's key order */
    int shape_key[3];           /* CT_KEY_SHAPE values */
    int shape_key_n;
    int inputs[CT_MAX_INPUTS];  /* indices of the layers read */
    int ninputs;
    char inputs_text[CT_MAX_INPUTS * (CT_NAME_MAX + 1)];
    ct_shape out;
    ct_param_spec params[CT_MAX_PARAMS];
    int nparams;
    size_t param_count;         /* trainable elements */
    size_t buffer_count;        /* non-trainable elements */
    int consumers;              /* how many layers read its output */
};

struct ct_model {
    char *text;
    char *source;
    ct_layer *layers;
    size_t count;
    size_t param_count;
    size_t buffer_count;
};

/* The registry (src/nn/layers/registry.c): every type, indexed by its id
 * and ending in NULL, and lookup by name. */
const ct_layer_type *ct_layer_type_find(const char *name);
extern const ct_layer_type *const ct_layer_types[];
int ct_layer_is_loss(const ct_layer *l);

/* Key lookups by name within a layer (aborts nothing: an unknown name is a
 * programming error reported as 0). */
double ct_layer_key(const ct_layer *l, const char *key);

size_t ct_shape_numel(const ct_shape *s);
/* "1x28x28" */
void ct_shape_str(const ct_shape *s, char *buf, size_t size);

#endif /* CT_NN_MODEL_H */
