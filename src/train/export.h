/*
 * export.h - the ONNX export's graph, apart from writing it (ct_export_onnx
 * in cltrain/export.h writes it): the fuzz target builds graphs from any
 * checkpoint the reader accepts without touching the disk.
 */
#ifndef CT_TRAIN_EXPORT_H
#define CT_TRAIN_EXPORT_H

#include "io/onnx.h"
#include "io/safetensors.h"
#include "nn/model.h"

/* The graph of model m with the parameters of checkpoint f (read from
 * `weights`, the name messages use), every tensor checked against m; on
 * failure *out is NULL. Free it with ct_onnx_free. */
int ct_export_graph(const ct_model *m, const ct_st_file *f, const char *weights, ct_onnx **out);

#endif /* CT_TRAIN_EXPORT_H */
