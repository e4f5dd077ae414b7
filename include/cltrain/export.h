/*
 * cltrain/export.h - exporting a checkpoint's network as an ONNX model
 * (opset 17, IR version 8) that onnxruntime and other ONNX runtimes run
 * for inference: batch normalization with its running statistics, dropout
 * as identity. docs/ONNX.md lists how each layer type is written, the
 * graph's inputs and outputs, and how to run the file.
 */
#ifndef CLTRAIN_EXPORT_H
#define CLTRAIN_EXPORT_H

#include <stddef.h>

#include "cltrain/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What an export wrote. */
typedef struct ct_export_info {
    int opset;              /* of the default ONNX domain: 17 */
    int ir_version;         /* 8 */
    size_t nodes;           /* operator nodes in the graph */
    size_t initializers;    /* constant tensors: parameters, running statistics, shapes */
    size_t params;          /* trainable parameters of the model (as `cltrain model` counts) */
} ct_export_info;

/* Writes the network of checkpoint `weights` to `path` as ONNX. The model
 * is the checkpoint's own unless `model` (zoo name or file) is given, which
 * must then match it. The graph's input "input" is one batch of what the
 * model's input layer takes, with a dynamic batch dimension N: (N, C, H, W)
 * or (N, F) floats, already normalized as cltrain's data loader does, or
 * (N, T) int64 token ids; its outputs are "logits" and "probabilities"
 * (softmax) for a softmax_cross_entropy head, "output" for mse. The file
 * is written atomically: on any failure `path` is left as it was. Needs no
 * OpenCL device. info may be NULL. A layer the exporter cannot express is
 * CT_ERR_UNSUPPORTED naming the layer and its type. */
CT_API int ct_export_onnx(const char *model, const char *weights, const char *path, ct_export_info *info);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_EXPORT_H */
