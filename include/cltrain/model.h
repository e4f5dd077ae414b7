/*
 * cltrain/model.h - models: parsed from the plain-text model format
 * (docs/MODEL_FORMAT.md) or taken from the built-in zoo, with every layer's
 * output shape inferred and its parameters counted. A model is a
 * description; it holds no device memory.
 */
#ifndef CLTRAIN_MODEL_H
#define CLTRAIN_MODEL_H

#include <stddef.h>

#include "cltrain/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ct_model ct_model;

/* Parses a model. `source` names the text in error messages ("model.txt").
 * Errors: CT_ERR_PARSE naming source:line:column and what was expected;
 * CT_ERR_SHAPE naming the first layer whose input does not fit, with both
 * shapes. The message is in ct_last_error(). */
CT_API int ct_model_from_text(const char *text, const char *source, ct_model **model);
CT_API int ct_model_from_file(const char *path, ct_model **model);
/* A model of the built-in zoo by name (ct_zoo_names). */
CT_API int ct_model_from_zoo(const char *name, ct_model **model);
/* A zoo name, or else a file path. */
CT_API int ct_model_open(const char *name_or_path, ct_model **model);
CT_API void ct_model_free(ct_model **model);

/* The zoo: NULL-terminated names; a one-line description; the model text. */
CT_API const char *const *ct_zoo_names(void);
CT_API const char *ct_zoo_description(const char *name);
CT_API const char *ct_zoo_text(const char *name);

/* The model's own text, exactly as parsed. */
CT_API const char *ct_model_text(const ct_model *model);
/* Trainable parameters, counted as PyTorch counts them. */
CT_API size_t ct_model_param_count(const ct_model *model);
CT_API size_t ct_model_layer_count(const ct_model *model);

typedef struct ct_layer_info {
    const char *name;
    const char *type;     /* "conv2d", "dense", ... */
    int line;             /* in the model text */
    int ndim;             /* output shape of one sample: (C, H, W), (F), (T, F) ... */
    int shape[4];
    int sequence;         /* the output is a sequence (T first) */
    size_t params;        /* trainable parameters */
    const char *inputs;   /* the names it reads, comma-separated */
} ct_layer_info;

CT_API int ct_model_layer_info(const ct_model *model, size_t index, ct_layer_info *info);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_MODEL_H */
