/*
 * fuzz_checkpoint - whole checkpoints: the safetensors reader, then what
 * `--resume` and `eval --weights` do before touching a device: the model
 * text from the metadata is parsed and planned, and every tensor and
 * metadata value is checked against the plan (ct_checkpoint_check). Files
 * without a model text are checked against a small fixed model with
 * parameters and running statistics. When the checkpoint names the
 * optimizer "adam", the optimizer state is required as a resume with Adam
 * requires it: two floats per parameter. Then what `cltrain export` does:
 * the ONNX graph is built from the same model and tensors (not written).
 */
#include <string.h>

#include "fuzz.h"
#include "io/safetensors.h"
#include "nn/model.h"
#include "nn/net.h"
#include "train/checkpoint.h"
#include "train/export.h"

static const char fallback_model[] =
    "input shape=1x4x4\n"
    "conv1: conv2d out=2 kernel=3 pad=1 bias=false\n"
    "bn1: batchnorm act=relu\n"
    "fc1: dense out=3\n"
    "loss: softmax_cross_entropy\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 1 << 20)
        return 0;
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes)
        return 0;
    if (size)
        memcpy(bytes, data, size);
    ct_st_file *f = NULL;
    ct_model *m = NULL;
    ct_net net;
    memset(&net, 0, sizeof net);
    float *params = NULL, *buffers = NULL;
    if (ct_st_parse(bytes, size, "fuzz.safetensors", &f))
        goto done;
    const char *text = ct_checkpoint_model_text(f);
    if (ct_model_from_text(text && strlen(text) < 1 << 14 ? text : fallback_model, "fuzz", &m) ||
        ct_net_plan(NULL, m, 1, &net))
        goto done;
    /* a model text may declare any size; the check copies at most the file's bytes */
    if (net.arena_size[CT_ARENA_PARAMS] + net.arena_size[CT_ARENA_BUFFERS] > (size_t)1 << 22)
        goto done;
    params = calloc(net.arena_size[CT_ARENA_PARAMS] + 1, sizeof(float));
    buffers = calloc(net.arena_size[CT_ARENA_BUFFERS] + 1, sizeof(float));
    if (!params || !buffers)
        goto done;
    const char *opt = ct_st_meta(f, "optimizer");
    size_t state_n = opt && !strcmp(opt, "adam") ? 2 * net.nparams : 0;
    const ct_st_tensor *state = NULL;
    ct_ckpt_meta meta;
    if (ct_checkpoint_check(&net, f, "fuzz.safetensors", state_n, params, buffers, &state, &meta) == 0) {
        FUZZ_CHECK(meta.epoch >= 0 && meta.step >= 0, "negative epoch or step");
        FUZZ_CHECK(!state_n || (state && state->numel == state_n), "optimizer state of the wrong size");
    }
    ct_onnx *g = NULL;
    if (ct_export_graph(m, f, "fuzz.safetensors", &g) == 0)
        FUZZ_CHECK(g && ct_onnx_status(g) == 0, "an exported graph without its error");
    else
        FUZZ_CHECK(!g, "a failed export left a graph");
    ct_onnx_free(&g);
done:
    free(params);
    free(buffers);
    ct_net_release(&net);
    ct_model_free(&m);
    ct_st_free(&f);
    return 0;
}
