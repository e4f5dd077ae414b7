/*
 * export.c - a checkpoint's network as an ONNX file (cltrain/export.h):
 * the model (the checkpoint's own, or a given one that must match it),
 * every parameter checked against it by name, shape and dtype, then each
 * layer written by its type's export hook (src/nn/layer.h) into a graph
 * built with src/io/onnx.h, and the file written atomically. No device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltrain/export.h"
#include "nn/layer.h"
#include "train/checkpoint.h"
#include "train/export.h"
#include "train/session.h"

/* The graph's own tensor names; a layer named like one of them gets
 * "<name>/out" (layer names hold no '/'). */
static const char *const reserved[] = { "input", "logits", "probabilities", "output" };

static const char *tensor_name(ct_onnx *g, const ct_layer *l, size_t i)
{
    if (i == 0)
        return "input";
    for (size_t k = 0; k < CT_ARRAY_LEN(reserved); k++)
        if (!strcmp(l->name, reserved[k]))
            return ct_onnx_name(g, "%s/out", l->name);
    return ct_onnx_name(g, "%s", l->name);
}

/* The checkpoint's metadata worth keeping with the graph: the model text,
 * what it was trained on, and a text model's tokenizer and class names. */
static void copy_meta(ct_onnx *g, const ct_st_file *f)
{
    static const char *const keys[] = { "model", "data", "epoch", "step", "tokens", "classes" };
    for (size_t k = 0; k < CT_ARRAY_LEN(keys); k++) {
        const char *v = ct_st_meta(f, keys[k]);
        if (v)
            ct_onnx_meta(g, ct_onnx_name(g, "cltrain.%s", keys[k]), v);
    }
}

static int export_layers(ct_onnx *g, const ct_model *m, const ct_st_file *f, const char *weights,
                         const char **names)
{
    for (size_t i = 0; i < m->count; i++) {
        const ct_layer *l = &m->layers[i];
        const void *param[CT_MAX_PARAMS];
        for (int j = 0; j < l->nparams; j++) {
            const ct_st_tensor *t = NULL;
            int st = ct_checkpoint_tensor(NULL, f, weights, l, j, &t);
            if (st)
                return st;
            param[j] = t->data;
        }
        if (!l->type->export_onnx)
            return ct_fail(NULL, CT_ERR_UNSUPPORTED, "cannot export layer '%s' (%s, line %d) to ONNX: the "
                           "exporter does not know %s layers yet", l->name, l->type->name, l->line,
                           l->type->name);
        names[i] = tensor_name(g, l, i);
        ct_layer_export e = { g, m, l, names, l->ninputs ? names[l->inputs[0]] : NULL,
                              l->ninputs ? &m->layers[l->inputs[0]].out : NULL, names[i], param };
        int st = l->type->export_onnx(&e);
        if (st || (st = ct_onnx_status(g)))
            return ct_fail(NULL, st, "cannot export layer '%s' (%s, line %d) to ONNX: %s", l->name,
                           l->type->name, l->line, ct_last_error());
    }
    return CT_OK;
}

int ct_export_graph(const ct_model *m, const ct_st_file *f, const char *weights, ct_onnx **out)
{
    *out = NULL;
    int st = ct_checkpoint_check_format(NULL, f, weights);
    if (st)
        return st;
    ct_onnx *g = ct_onnx_new(m->source);
    const char **names = calloc(m->count, sizeof *names);
    if (!g || !names) {
        free(names);
        ct_onnx_free(&g);
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory exporting %s", weights);
    }
    char doc[256];
    snprintf(doc, sizeof doc, "cltrain %s model %s, exported for inference", ct_version(), m->source);
    ct_onnx_doc(g, doc);
    copy_meta(g, f);
    st = export_layers(g, m, f, weights, names);
    free(names);
    if (st)
        ct_onnx_free(&g);
    *out = g;
    return st;
}

int ct_export_onnx(const char *model, const char *weights, const char *path, ct_export_info *info)
{
    if (info)
        memset(info, 0, sizeof *info);
    CT_VALIDATE(NULL, weights && path);
    ct_session s;
    memset(&s, 0, sizeof s);
    ct_onnx *g = NULL;
    int st = ct_session_open_model(&s, model, weights);
    if (!st)
        st = ct_export_graph(s.model, s.ckpt, weights, &g);
    if (!st && (st = ct_onnx_write(g, path, ct_version())))
        st = ct_fail(NULL, st, "cannot write ONNX file %s: %s", path, ct_last_error());
    if (!st && info) {
        info->opset = CT_ONNX_OPSET;
        info->ir_version = CT_ONNX_IR_VERSION;
        ct_onnx_counts(g, &info->nodes, &info->initializers);
        info->params = s.model->param_count;
    }
    ct_onnx_free(&g);
    ct_session_free(&s);
    return st;
}
