/*
 * finetune.c - --init and --freeze (train/finetune.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/runtime.h"
#include "io/safetensors.h"
#include "train/finetune.h"

static size_t numel(const ct_param_spec *p)
{
    size_t n = 1;
    for (int d = 0; d < p->ndim; d++)
        n *= (size_t)p->shape[d];
    return n;
}

/* appends "item" to a comma-separated list in buf, "..." once full */
static void add(char *buf, size_t cap, const char *item)
{
    size_t n = strlen(buf);
    if (n + strlen(item) + 8 >= cap) {
        if (n + 5 < cap && (n < 3 || strcmp(buf + n - 3, "...")))
            snprintf(buf + n, cap - n, "%s...", n ? ", " : "");
        return;
    }
    snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", item);
}

int ct_finetune_init(ct_net *net, const char *path)
{
    ct_context *ctx = net->ctx;
    ct_st_file *f = NULL;
    int st = ct_st_read(path, &f);
    if (st)
        return st;
    size_t np = net->arena_size[CT_ARENA_PARAMS], nb = net->arena_size[CT_ARENA_BUFFERS];
    float *params = calloc(np + 1, sizeof(float)), *buffers = calloc(nb + 1, sizeof(float));
    char loaded[1024] = "", kept[1024] = "";
    size_t nload = 0, nall = 0;
    if (!params || !buffers)
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    if (!st && np)
        st = ct_buffer_read(ctx, net->arena[CT_ARENA_PARAMS].mem, 0, np * sizeof(float), params);
    if (!st && nb)
        st = ct_buffer_read(ctx, net->arena[CT_ARENA_BUFFERS].mem, 0, nb * sizeof(float), buffers);
    const ct_model *m = net->model;
    for (size_t i = 0; !st && i < m->count; i++) {
        const ct_layer *l = &m->layers[i];
        size_t po = net->rt[i].param.off, bo = net->rt[i].buffers.off;
        for (int j = 0; j < l->nparams; j++) {
            const ct_param_spec *p = &l->params[j];
            char name[CT_NAME_MAX + 32], why[CT_NAME_MAX + 96];
            snprintf(name, sizeof name, "%s.%s", l->name, p->suffix);
            const ct_st_tensor *t = ct_st_find(f, name);
            int same = t && t->dtype == CT_ST_F32 && t->ndim == p->ndim;
            for (int d = 0; same && d < p->ndim; d++)
                same = t->shape[d] == p->shape[d];
            nall++;
            if (same) {
                memcpy(p->trainable ? params + po : buffers + bo, t->data, t->nbytes);
                add(loaded, sizeof loaded, name);
                nload++;
            } else {
                snprintf(why, sizeof why, "%s (%s)", name, !t ? "not in the file"
                                                           : t->dtype != CT_ST_F32 ? "not F32 there"
                                                                                   : "another shape there");
                add(kept, sizeof kept, why);
            }
            if (p->trainable)
                po += numel(p);
            else
                bo += numel(p);
        }
    }
    if (!st && !nload)
        st = ct_fail(ctx, CT_ERR_INVALID_ARG, "--init %s: none of its %zu tensors has the name and shape of one of "
                     "the model's %zu (<layer>.weight, ...). HINT: name the layers as in the model the file was "
                     "saved from", path, f->count, nall);
    if (!st && np)
        st = ct_buffer_write(ctx, net->arena[CT_ARENA_PARAMS].mem, 0, np * sizeof(float), params);
    if (!st && nb)
        st = ct_buffer_write(ctx, net->arena[CT_ARENA_BUFFERS].mem, 0, nb * sizeof(float), buffers);
    if (!st)
        ct_log(ctx, CT_LOG_WARN, "--init %s: loaded %zu of the model's %zu tensors (%s)%s%s", path, nload, nall,
               loaded, *kept ? "; kept as initialized: " : "", kept);
    free(params);
    free(buffers);
    ct_st_free(&f);
    return st;
}

/* whether layer name matches pattern (a trailing * matches any rest) */
static int matches(const char *pat, size_t len, const char *name)
{
    if (len && pat[len - 1] == '*')
        return !strncmp(pat, name, len - 1);
    return strlen(name) == len && !strncmp(pat, name, len);
}

int ct_finetune_ranges(const ct_net *net, const char *freeze, size_t **train, size_t *ntrain, size_t **frozen,
                       size_t *nfrozen)
{
    const ct_model *m = net->model;
    *train = *frozen = NULL;
    *ntrain = *nfrozen = 0;
    unsigned char *is = calloc(m->count + 1, 1);
    size_t *tr = calloc(2 * m->count + 2, sizeof *tr), *fr = calloc(2 * m->count + 2, sizeof *fr);
    if (!is || !tr || !fr) {
        free(is), free(tr), free(fr);
        return ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    }
    const char *s = freeze ? freeze : "";
    while (*s) {
        size_t len = strcspn(s, ",");
        int hit = 0;
        for (size_t i = 0; i < m->count; i++)
            if (matches(s, len, m->layers[i].name) && m->layers[i].param_count) {
                is[i] = 1;
                hit = 1;
            }
        if (!hit || !len) {
            int st = ct_fail(net->ctx, CT_ERR_INVALID_ARG, "--freeze %s: '%.*s' names no layer with parameters. "
                             "HINT: give layer names (or prefixes ending in *) of the model, comma-separated",
                             freeze, (int)len, s);
            free(is), free(tr), free(fr);
            return st;
        }
        s += len + (s[len] == ',');
    }
    /* runs of layers in the arena's order, merged where they meet */
    for (size_t i = 0; i < m->count; i++) {
        size_t off = net->rt[i].param.off, n = m->layers[i].param_count;
        if (!n)
            continue;
        size_t *a = is[i] ? fr : tr, *k = is[i] ? nfrozen : ntrain;
        if (*k && a[2 * (*k - 1)] + a[2 * (*k - 1) + 1] == off)
            a[2 * (*k - 1) + 1] += n;
        else
            a[2 * *k] = off, a[2 * *k + 1] = n, ++*k;
    }
    free(is);
    if (!*ntrain) {
        free(tr), free(fr);
        *nfrozen = 0;
        return ct_fail(net->ctx, CT_ERR_INVALID_ARG, "--freeze %s freezes every layer with parameters: nothing "
                       "would train. HINT: leave at least one (a new head) unfrozen", freeze);
    }
    *train = tr;
    *frozen = fr;
    return CT_OK;
}
