/*
 * checkpoint.h - safetensors checkpoints of a net: every parameter and
 * running statistic as `<layer>.<name>` in PyTorch's layout (and batch
 * norm's num_batches_tracked, an int64 scalar: the micro-batches trained),
 * the optimizer state as `optimizer.state`, and metadata (the model text,
 * epoch, step, seed, optimizer, batch, micro-batches per step
 * ("accumulate"), version; for text data the tokenizer, "tokens", and for
 * named classes their names, "classes"; for images and tables the
 * normalization, "normalize"). Loading leaves meta->tokens, meta->classes
 * and meta->normalize NULL: read them with ct_st_meta.
 */
#ifndef CT_TRAIN_CHECKPOINT_H
#define CT_TRAIN_CHECKPOINT_H

#include "io/safetensors.h"
#include "nn/net.h"

typedef struct ct_ckpt_meta {
    int epoch;            /* completed epochs */
    long step;            /* optimizer steps taken */
    uint64_t seed;
    char optimizer[16];
    int batch;
    char data[256];
    const char *tokens;   /* text data: the tokenizer (ct_tokenizer_to_json), or NULL */
    const char *classes;  /* named classes: a JSON array of the names in id order, or NULL */
    const char *normalize; /* images and tables: {"mean":[...],"std":[...]} per channel, or NULL */
    int accumulate;       /* micro-batches of `batch` rows per optimizer step (1: none) */
    int precision;        /* ct_precision of the matrix products (the weights stay float32) */
    float loss_scale;     /* fp16's dynamic loss scale; 0: none */
} ct_ckpt_meta;

/* Writes atomically; the previous file survives any failure. */
int ct_checkpoint_save(ct_net *net, cl_mem optim_state, size_t state_n, const ct_ckpt_meta *meta,
                       const char *path);

/* Reads `path` (tensors checked against the net by name, shape and dtype)
 * into the net's parameters and buffers, and the optimizer state when
 * optim_state is given. */
int ct_checkpoint_load(ct_net *net, const ct_st_file *f, const char *path, cl_mem optim_state,
                       size_t state_n, ct_ckpt_meta *meta);

/* The host half of ct_checkpoint_load, which needs no device: checks the
 * metadata and every tensor against the planned net and copies them into
 * params and buffers (host arrays of the net's parameter and buffer arena
 * sizes). With state_n > 0, *state is the optimizer state tensor of exactly
 * state_n F32 values; otherwise NULL. */
int ct_checkpoint_check(const ct_net *net, const ct_st_file *f, const char *path, size_t state_n,
                        float *params, float *buffers, const ct_st_tensor **state, ct_ckpt_meta *meta);

/* The metadata's format is a cltrain checkpoint's; else CT_ERR_CORRUPT
 * naming path. */
int ct_checkpoint_check_format(ct_context *ctx, const ct_st_file *f, const char *path);
/* Parameter j of layer l as f holds it, `<layer>.<suffix>`: present, F32
 * and of the model's shape, else an error naming the tensor. */
int ct_checkpoint_tensor(ct_context *ctx, const ct_st_file *f, const char *path, const ct_layer *l, int j,
                         const ct_st_tensor **out);

/* The micro-batches per optimizer step of the run that wrote f: its
 * "accumulate" metadata, 1 when it has none (a checkpoint written before
 * it was kept); CT_ERR_CORRUPT naming path when it is not a count in
 * [1, CT_TRAIN_ACCUMULATE_MAX]. */
int ct_checkpoint_accumulate(ct_context *ctx, const ct_st_file *f, const char *path, int *k);
/* The "precision" metadata (fp32 or bf16), fp32 when it has none (a
 * checkpoint written before precisions); CT_ERR_CORRUPT otherwise. */
int ct_checkpoint_precision(ct_context *ctx, const ct_st_file *f, const char *path, int *precision);
/* The "loss_scale" metadata (fp16's scale when saved), 0 when it has none;
 * CT_ERR_CORRUPT when it is not a power of two in [1, 2^24]. */
int ct_checkpoint_loss_scale(ct_context *ctx, const ct_st_file *f, const char *path, float *scale);

/* The model text stored in a checkpoint (a pointer into f), or NULL. */
const char *ct_checkpoint_model_text(const ct_st_file *f);

#endif /* CT_TRAIN_CHECKPOINT_H */
