/*
 * checkpoint.c - saving and loading nets as safetensors files that
 * PyTorch's safetensors.torch.load_file reads directly (F32, PyTorch names
 * and layouts).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cltrain/train.h"
#include "nn/layer.h"
#include "train/checkpoint.h"

#define FORMAT "cltrain-checkpoint-1"

static size_t spec_numel(const ct_param_spec *p)
{
    size_t n = 1;
    for (int d = 0; d < p->ndim; d++)
        n *= (size_t)p->shape[d];
    return n;
}

/* Copies of the parameter, buffer and optimizer arenas in host memory. */
typedef struct host_copy {
    float *params, *buffers, *state;
} host_copy;

static int read_arena(ct_net *net, int a, float **out)
{
    size_t n = net->arena_size[a];
    *out = malloc((n ? n : 1) * sizeof(float));
    if (!*out)
        return ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory (%zu floats)", n);
    return n ? ct_buffer_read(net->ctx, net->arena[a].mem, 0, n * sizeof(float), *out) : CT_OK;
}

int ct_checkpoint_save(ct_net *net, cl_mem optim_state, size_t state_n, const ct_ckpt_meta *meta,
                       const char *path)
{
    const ct_model *m = net->model;
    host_copy h = { NULL, NULL, NULL };
    ct_st_out *t = NULL;
    char **names = NULL;
    size_t nt = 0, cap = 1;
    int st = read_arena(net, CT_ARENA_PARAMS, &h.params);
    if (!st)
        st = read_arena(net, CT_ARENA_BUFFERS, &h.buffers);
    if (!st && state_n) {
        h.state = malloc(state_n * sizeof(float));
        st = !h.state ? ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory")
                      : ct_buffer_read(net->ctx, optim_state, 0, state_n * sizeof(float), h.state);
    }
    /* every batch norm's num_batches_tracked: PyTorch counts training
     * forwards, `accumulate` micro-batches per optimizer step */
    int64_t steps = (int64_t)meta->step * (meta->accumulate > 1 ? meta->accumulate : 1);
    for (size_t i = 0; i < m->count; i++)
        cap += (size_t)m->layers[i].nparams + (m->layers[i].type->step_count != NULL);
    t = calloc(cap, sizeof *t);
    names = calloc(cap, sizeof *names);
    if (!st && (!t || !names))
        st = ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    for (size_t i = 0; !st && i < m->count; i++) {
        const ct_layer *l = &m->layers[i];
        const ct_lrt *r = &net->rt[i];
        size_t po = r->param.off, bo = r->buffers.off;
        for (int j = 0; j < l->nparams; j++) {
            const ct_param_spec *p = &l->params[j];
            size_t len = strlen(l->name) + strlen(p->suffix) + 2;
            names[nt] = malloc(len);
            if (!names[nt]) {
                st = ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory");
                break;
            }
            snprintf(names[nt], len, "%s.%s", l->name, p->suffix);
            t[nt].name = names[nt];
            t[nt].ndim = p->ndim;
            for (int d = 0; d < p->ndim; d++)
                t[nt].shape[d] = p->shape[d];
            t[nt].data = p->trainable ? h.params + po : h.buffers + bo;
            if (p->trainable)
                po += spec_numel(p);
            else
                bo += spec_numel(p);
            nt++;
        }
        if (!st && l->type->step_count) {
            size_t len = strlen(l->name) + strlen(l->type->step_count) + 2;
            if (!(names[nt] = malloc(len))) {
                st = ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory");
                break;
            }
            snprintf(names[nt], len, "%s.%s", l->name, l->type->step_count);
            t[nt].name = names[nt];
            t[nt].ndim = 0;
            t[nt].i64 = &steps;
            nt++;
        }
    }
    if (!st && state_n) {
        t[nt].name = "optimizer.state";
        t[nt].ndim = 1;
        t[nt].shape[0] = (int64_t)state_n;
        t[nt].data = h.state;
        nt++;
    }
    if (!st) {
        char epoch[32], step[32], seed[32], batch[32], accumulate[32], scale[32];
        snprintf(scale, sizeof scale, "%.0f", (double)meta->loss_scale);
        const char *prec = ct_precision_str((ct_precision)meta->precision);
        snprintf(epoch, sizeof epoch, "%d", meta->epoch);
        snprintf(step, sizeof step, "%ld", meta->step);
        snprintf(seed, sizeof seed, "%" PRIu64, meta->seed);
        snprintf(batch, sizeof batch, "%d", meta->batch);
        snprintf(accumulate, sizeof accumulate, "%d", meta->accumulate > 1 ? meta->accumulate : 1);
        const char *keys[] = { "format", "cltrain_version", "model", "epoch", "step", "seed",
                               "optimizer", "batch", "accumulate", "precision", "data", "tokens", "classes",
                               "normalize", "loss_scale" };
        const char *vals[] = { FORMAT, ct_version(), m->text, epoch, step, seed, meta->optimizer,
                               batch, accumulate, prec, meta->data, meta->tokens, meta->classes, meta->normalize,
                               scale };
        size_t nkeys = CT_ARRAY_LEN(keys) - 4;
        if (meta->loss_scale > 0)
            keys[nkeys] = "loss_scale", vals[nkeys++] = scale;
        if (meta->tokens)
            keys[nkeys] = "tokens", vals[nkeys++] = meta->tokens;
        if (meta->classes)
            keys[nkeys] = "classes", vals[nkeys++] = meta->classes;
        if (meta->normalize)
            keys[nkeys] = "normalize", vals[nkeys++] = meta->normalize;
        st = ct_st_write(path, t, nt, keys, vals, nkeys);
        if (st)
            ct_fail_keep(net->ctx, st);
    }
    for (size_t i = 0; names && i < cap; i++)
        free(names[i]);
    free(names);
    free(t);
    free(h.params);
    free(h.buffers);
    free(h.state);
    return st;
}

const char *ct_checkpoint_model_text(const ct_st_file *f)
{
    return ct_st_meta(f, "model");
}

int ct_checkpoint_check_format(ct_context *ctx, const ct_st_file *f, const char *path)
{
    const char *fmt = ct_st_meta(f, "format");
    if (!fmt || strcmp(fmt, FORMAT))
        return ct_fail(ctx, CT_ERR_CORRUPT, "%s is not a cltrain checkpoint (metadata format "
                       "is %s%s%s, expected %s)", path, fmt ? "'" : "missing", fmt ? fmt : "",
                       fmt ? "'" : "", FORMAT);
    return CT_OK;
}

int ct_checkpoint_tensor(ct_context *ctx, const ct_st_file *f, const char *path, const ct_layer *l, int j,
                         const ct_st_tensor **out)
{
    const ct_param_spec *p = &l->params[j];
    char name[160];
    snprintf(name, sizeof name, "%s.%s", l->name, p->suffix);
    const ct_st_tensor *t = ct_st_find(f, name);
    *out = NULL;
    int same = t && t->ndim == p->ndim;
    for (int d = 0; same && d < p->ndim; d++)
        same = t->shape[d] == p->shape[d];
    if (!t)
        return ct_fail(ctx, CT_ERR_CORRUPT, "checkpoint %s has no tensor '%s' (%s layer "
                       "'%s'): it was saved from another model", path, name, l->type->name, l->name);
    if (t->dtype != CT_ST_F32)
        return ct_fail(ctx, CT_ERR_CORRUPT, "checkpoint %s: tensor '%s' is %s, expected F32",
                       path, name, ct_st_dtype_name(t->dtype));
    if (!same) {
        char want[64] = "", got[64] = "";
        for (int d = 0, a = 0; d < p->ndim; d++)
            a += snprintf(want + a, sizeof want - (size_t)a, "%s%d", d ? "x" : "", p->shape[d]);
        for (int d = 0, a = 0; d < t->ndim; d++)
            a += snprintf(got + a, sizeof got - (size_t)a, "%s%lld", d ? "x" : "", (long long)t->shape[d]);
        return ct_fail(ctx, CT_ERR_SHAPE, "checkpoint %s: tensor '%s' has shape %s, the "
                       "model needs %s", path, name, got, want);
    }
    *out = t;
    return CT_OK;
}

static int meta_long(const ct_st_file *f, const char *path, const char *key, long *out)
{
    const char *v = ct_st_meta(f, key);
    char *end = NULL;
    errno = 0;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || end == v || *end || errno || x < 0)
        return ct_fail(NULL, CT_ERR_CORRUPT, "checkpoint %s: metadata '%s' is %s%s%s", path, key,
                       v ? "'" : "missing", v ? v : "", v ? "', not a count" : "");
    *out = x;
    return CT_OK;
}

/* A layer's step count (num_batches_tracked), when f has it: an int64
 * scalar as PyTorch writes it. Its value is not needed (the run's step
 * count is in the metadata); checkpoints written before it was kept, and
 * files of other origins, lack it. */
static int step_count(ct_context *ctx, const ct_st_file *f, const char *path, const ct_layer *l,
                      size_t *expected)
{
    char name[2 * CT_NAME_MAX];
    snprintf(name, sizeof name, "%s.%s", l->name, l->type->step_count);
    const ct_st_tensor *t = ct_st_find(f, name);
    if (!t)
        return CT_OK;
    if ((t->dtype != CT_ST_I64 && t->dtype != CT_ST_I32) || t->numel != 1)
        return ct_fail(ctx, CT_ERR_CORRUPT, "checkpoint %s: tensor '%s' is %s of %zu elements, expected one "
                       "integer (the micro-batches trained)", path, name, ct_st_dtype_name(t->dtype), t->numel);
    ++*expected;
    return CT_OK;
}

int ct_checkpoint_accumulate(ct_context *ctx, const ct_st_file *f, const char *path, int *k)
{
    long x = 1;
    int st = ct_st_meta(f, "accumulate") ? meta_long(f, path, "accumulate", &x) : CT_OK;
    if (st)
        return ct_fail_keep(ctx, st);
    if (x < 1 || x > CT_TRAIN_ACCUMULATE_MAX)
        return ct_fail(ctx, CT_ERR_CORRUPT, "checkpoint %s: metadata 'accumulate' is %ld, not in [1, %d]",
                       path, x, CT_TRAIN_ACCUMULATE_MAX);
    *k = (int)x;
    return CT_OK;
}

int ct_checkpoint_precision(ct_context *ctx, const ct_st_file *f, const char *path, int *precision)
{
    const char *v = ct_st_meta(f, "precision");
    *precision = CT_PRECISION_FP32;
    if (!v || !strcmp(v, "fp32"))
        return CT_OK;
    if (!strcmp(v, "bf16") || !strcmp(v, "fp16")) {
        *precision = v[0] == 'b' ? CT_PRECISION_BF16 : CT_PRECISION_FP16;
        return CT_OK;
    }
    return ct_fail(ctx, CT_ERR_CORRUPT, "checkpoint %s: metadata 'precision' is \"%.40s\", not fp32, bf16 or fp16",
                   path, v);
}

int ct_checkpoint_loss_scale(ct_context *ctx, const ct_st_file *f, const char *path, float *scale)
{
    long x = 0;
    *scale = 0;
    int st = ct_st_meta(f, "loss_scale") ? meta_long(f, path, "loss_scale", &x) : CT_OK;
    if (st)
        return ct_fail_keep(ctx, st);
    if (ct_st_meta(f, "loss_scale") && (x < 1 || x > (1L << 24) || (x & (x - 1))))
        return ct_fail(ctx, CT_ERR_CORRUPT, "checkpoint %s: metadata 'loss_scale' is %ld, not a power of two in "
                       "[1, 2^24]", path, x);
    *scale = (float)x;
    return CT_OK;
}

int ct_checkpoint_check(const ct_net *net, const ct_st_file *f, const char *path, size_t state_n,
                        float *params, float *buffers, const ct_st_tensor **state, ct_ckpt_meta *meta)
{
    const ct_model *m = net->model;
    *state = NULL;
    long epoch = 0, step = 0, seed = 0, batch = 0;
    int st = ct_checkpoint_check_format(net->ctx, f, path);
    if (st)
        return st;
    if ((st = meta_long(f, path, "epoch", &epoch)) || (st = meta_long(f, path, "step", &step)) ||
        (st = meta_long(f, path, "seed", &seed)) || (st = meta_long(f, path, "batch", &batch)))
        return ct_fail_keep(net->ctx, st);
    if (meta) {
        memset(meta, 0, sizeof *meta);
        meta->epoch = (int)epoch;
        meta->step = step;
        meta->seed = (uint64_t)seed;
        meta->batch = (int)batch;
        const char *o = ct_st_meta(f, "optimizer");
        snprintf(meta->optimizer, sizeof meta->optimizer, "%s", o ? o : "");
        const char *d = ct_st_meta(f, "data");
        snprintf(meta->data, sizeof meta->data, "%s", d ? d : "");
        if ((st = ct_checkpoint_accumulate(net->ctx, f, path, &meta->accumulate)))
            return st;
    }
    size_t expected = 0;
    for (size_t i = 0; !st && i < m->count; i++) {
        const ct_layer *l = &m->layers[i];
        const ct_lrt *r = &net->rt[i];
        size_t po = r->param.off, bo = r->buffers.off;
        for (int j = 0; j < l->nparams && !st; j++) {
            const ct_param_spec *p = &l->params[j];
            const ct_st_tensor *t = NULL;
            expected++;
            if (!(st = ct_checkpoint_tensor(net->ctx, f, path, l, j, &t))) {
                float *dst = p->trainable ? params + po : buffers + bo;
                memcpy(dst, t->data, t->nbytes); /* little-endian hosts: F32 bytes as they are */
                if (p->trainable)
                    po += spec_numel(p);
                else
                    bo += spec_numel(p);
            }
        }
    }
    for (size_t i = 0; !st && i < m->count; i++)
        if (m->layers[i].type->step_count)
            st = step_count(net->ctx, f, path, &m->layers[i], &expected);
    const ct_st_tensor *ot = ct_st_find(f, "optimizer.state");
    if (!st && state_n) {
        if (!ot || ot->dtype != CT_ST_F32 || ot->numel != state_n)
            st = ct_fail(net->ctx, CT_ERR_CORRUPT, "checkpoint %s: %s (expected %zu floats of "
                         "optimizer state for this optimizer). HINT: resume with the optimizer the "
                         "run was started with", path, ot ? "the optimizer state has another size"
                                                          : "no optimizer state", state_n);
    }
    if (!st && f->count != expected + (ot ? 1 : 0)) {
        for (size_t i = 0; i < f->count && !st; i++) {
            int known = !strcmp(f->tensors[i].name, "optimizer.state");
            for (size_t k = 0; !known && k < m->count; k++) {
                size_t ln = strlen(m->layers[k].name);
                known = !strncmp(f->tensors[i].name, m->layers[k].name, ln) && f->tensors[i].name[ln] == '.';
            }
            if (!known)
                st = ct_fail(net->ctx, CT_ERR_CORRUPT, "checkpoint %s has tensor '%s', which no "
                             "layer of the model has: it was saved from another model", path,
                             f->tensors[i].name);
        }
    }
    if (!st && state_n)
        *state = ot;
    return st;
}

int ct_checkpoint_load(ct_net *net, const ct_st_file *f, const char *path, cl_mem optim_state,
                       size_t state_n, ct_ckpt_meta *meta)
{
    const ct_st_tensor *ot = NULL;
    int st = CT_OK;
    if (!optim_state)
        state_n = 0;
    float *params = calloc(net->arena_size[CT_ARENA_PARAMS] + 1, sizeof(float));
    float *buffers = calloc(net->arena_size[CT_ARENA_BUFFERS] + 1, sizeof(float));
    if (!params || !buffers)
        st = ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    if (!st)
        st = ct_checkpoint_check(net, f, path, state_n, params, buffers, &ot, meta);
    if (!st && net->arena_size[CT_ARENA_PARAMS])
        st = ct_buffer_write(net->ctx, net->arena[CT_ARENA_PARAMS].mem, 0,
                             net->arena_size[CT_ARENA_PARAMS] * sizeof(float), params);
    if (!st && net->arena_size[CT_ARENA_BUFFERS])
        st = ct_buffer_write(net->ctx, net->arena[CT_ARENA_BUFFERS].mem, 0,
                             net->arena_size[CT_ARENA_BUFFERS] * sizeof(float), buffers);
    if (!st && state_n)
        st = ct_buffer_write(net->ctx, optim_state, 0, state_n * sizeof(float), ot->data);
    free(params);
    free(buffers);
    return st;
}
