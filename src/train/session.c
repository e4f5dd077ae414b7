/*
 * session.c - what training, evaluation and prediction share
 * (src/train/session.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cJSON.h>

#include "cl/runtime.h"
#include "nn/layer.h"
#include "train/checkpoint.h"
#include "train/session.h"

void ct_session_free(ct_session *s)
{
    if (s->planned)
        ct_net_release(&s->net);
    ct_model_free(&s->model);
    ct_dataset_free(&s->train);
    ct_dataset_free(&s->test);
    ct_st_free(&s->ckpt);
}

int ct_session_open_model(ct_session *s, const char *model, const char *weights)
{
    int st;
    if (weights) {
        st = ct_st_read(weights, &s->ckpt);
        if (st)
            return ct_fail(s->ctx, st, "cannot load checkpoint: %s", ct_last_error());
        const char *text = ct_checkpoint_model_text(s->ckpt);
        if (!text)
            return ct_fail(s->ctx, CT_ERR_CORRUPT, "checkpoint %s holds no model text (metadata "
                           "'model'): not a cltrain checkpoint", weights);
        if (!model) {
            st = ct_model_from_text(text, weights, &s->model);
            return st ? ct_fail_keep(s->ctx, st) : CT_OK;
        }
    }
    st = ct_model_open(model, &s->model);
    if (st)
        return ct_fail_keep(s->ctx, st);
    if (weights && strcmp(ct_model_text(s->model), ct_checkpoint_model_text(s->ckpt)))
        return ct_fail(s->ctx, CT_ERR_INVALID_ARG, "checkpoint %s was saved from another model "
                       "than %s. HINT: leave out --model to use the checkpoint's own", weights, model);
    return CT_OK;
}

/* The vocabulary of the layer reading the token ids (layer 0), or 0. */
static int token_vocab(const ct_model *m)
{
    for (size_t i = 1; i < m->count; i++)
        if (m->layers[i].ninputs && m->layers[i].inputs[0] == 0 && ct_layer_key(&m->layers[i], "vocab") > 0)
            return (int)ct_layer_key(&m->layers[i], "vocab");
    return 0;
}

/* A text dataset against a model reading tokens: sequence length, the
 * vocabulary against the embedding, and the labels against the scores. */
static int check_text(ct_session *s, const ct_dataset *ds)
{
    const ct_model *m = s->model;
    const ct_layer *in = &m->layers[0];
    const ct_layer *lg = &m->layers[m->layers[m->count - 1].inputs[0]];
    int T = ct_dataset_seq(ds), k = lg->out.d[lg->out.ndim - 1];
    if (!in->out.tokens)
        return ct_fail(s->ctx, CT_ERR_SHAPE, "dataset %s holds text (token ids) but model %s takes "
                       "numbers. HINT: a text model starts with `input tokens=T` and an embedding",
                       ct_dataset_name(ds), m->source);
    if (!T)
        return ct_fail(s->ctx, CT_ERR_SHAPE, "model %s reads token sequences (input tokens=%d) but "
                       "dataset %s holds images or tables. HINT: use text:, textdir: or csv:FILE:text=COL "
                       "data", m->source, in->out.d[0], ct_dataset_name(ds));
    if (T != in->out.d[0])
        return ct_fail(s->ctx, CT_ERR_SHAPE, "dataset %s gives %d tokens per sample but model %s "
                       "takes %d. HINT: add :seq=%d to the data spec", ct_dataset_name(ds), T, m->source,
                       in->out.d[0], in->out.d[0]);
    size_t ids = ct_tokenizer_size(ct_dataset_tokenizer(ds));
    int vocab = token_vocab(m);
    if (vocab && ids > (size_t)vocab)
        return ct_fail(s->ctx, CT_ERR_SHAPE, "dataset %s has a vocabulary of %zu token ids but the "
                       "embedding of model %s takes %d. HINT: use :vocab=%d (or less) in the data spec, "
                       "or a larger embedding vocab=", ct_dataset_name(ds), ids, m->source, vocab,
                       vocab > 2 ? vocab - 2 : 1);
    if (ct_dataset_labels_per_sample(ds) > 1) { /* a language model: the next token of every position */
        if (!lg->out.sequence)
            return ct_fail(s->ctx, CT_ERR_SHAPE, "dataset %s is language-model data (a target per "
                           "token) but model %s scores whole samples. HINT: leave out the pooling, so "
                           "the classifier scores every position", ct_dataset_name(ds), m->source);
        if ((size_t)k < ids)
            return ct_fail(s->ctx, CT_ERR_SHAPE, "model %s scores %d classes per token but dataset %s "
                           "has %zu token ids", m->source, k, ct_dataset_name(ds), ids);
        return CT_OK;
    }
    if (lg->out.sequence)
        return ct_fail(s->ctx, CT_ERR_SHAPE, "dataset %s has one label per sample but model %s scores "
                       "every token. HINT: pool the sequence (seqpool) before the classifier",
                       ct_dataset_name(ds), m->source);
    return CT_OK;
}

int ct_session_regression(const ct_model *m)
{
    return m->layers[m->count - 1].type->id == CT_LAYER_ID_mse;
}

int ct_session_multilabel(const ct_model *m)
{
    return m->layers[m->count - 1].type->id == CT_LAYER_ID_bce_logits;
}

/* The loss against the data: mse (regression) takes target= data whose
 * targets per sample match the values the model predicts; a classifier
 * takes class labels. */
static int check_loss(ct_session *s, const ct_dataset *ds)
{
    const ct_model *m = s->model;
    const ct_layer *loss = &m->layers[m->count - 1];
    const ct_layer *lg = &m->layers[loss->inputs[0]];
    int K = ct_dataset_targets(ds);
    if (ct_session_multilabel(m)) {
        size_t per = ct_shape_numel(&lg->out);
        if (!K)
            return ct_fail(s->ctx, CT_ERR_INVALID_ARG, "model %s ends in bce_logits (multi-label) but dataset %s "
                           "has class labels, not targets. HINT: give K float targets per sample (npy:X.npy,Y.npy "
                           "with Y (N, K) of 0 and 1), or end the model in softmax_cross_entropy",
                           m->source, ct_dataset_name(ds));
        if (per != (size_t)K)
            return ct_fail(s->ctx, CT_ERR_SHAPE, "model %s gives %zu logits per sample (layer %s) but dataset %s has "
                           "%d labels per sample. HINT: give its last dense layer out=%d", m->source, per, lg->name,
                           ct_dataset_name(ds), K, K);
        return CT_OK;
    }
    if (!ct_session_regression(m)) {
        if (K)
            return ct_fail(s->ctx, CT_ERR_INVALID_ARG, "dataset %s holds regression targets (target=) "
                           "but model %s ends in %s, a classifier. HINT: end the model in `loss: mse` "
                           "after a dense layer with out=%d, or give class labels with label=COL in "
                           "place of target=", ct_dataset_name(ds), m->source, loss->type->name, K);
        return CT_OK;
    }
    if (!K)
        return ct_fail(s->ctx, CT_ERR_INVALID_ARG, "model %s ends in mse (regression) but dataset %s "
                       "has class labels, not targets. HINT: name the target columns with "
                       "csv:FILE:target=COL[,COL...], or end the model in softmax_cross_entropy to "
                       "classify", m->source, ct_dataset_name(ds));
    size_t per = ct_shape_numel(&lg->out);
    if (lg->out.sequence || per != (size_t)K)
        return ct_fail(s->ctx, CT_ERR_SHAPE, "model %s predicts %zu value%s per sample (layer %s) but "
                       "dataset %s has %d target%s. HINT: give its last dense layer out=%d",
                       m->source, per, per == 1 ? "" : "s", lg->name, ct_dataset_name(ds), K,
                       K == 1 ? "" : "s", K);
    return CT_OK;
}

int ct_session_check_data(ct_session *s, const ct_dataset *ds)
{
    const ct_model *m = s->model;
    const ct_layer *in = &m->layers[0];
    const ct_layer *loss = &m->layers[m->count - 1];
    const ct_layer *lg = &m->layers[loss->inputs[0]];
    int st = check_loss(s, ds);
    if (st)
        return st;
    st = in->out.tokens || ct_dataset_seq(ds) ? check_text(s, ds) : CT_OK;
    if (st)
        return st;
    if (!in->out.tokens) {
        int c, h, w;
        ct_dataset_shape(ds, &c, &h, &w);
        size_t numel = ct_shape_numel(&in->out);
        int fits = in->out.ndim == 3 ? in->out.d[0] == c && in->out.d[1] == h && in->out.d[2] == w
                                     : numel == (size_t)c * (size_t)h * (size_t)w;
        if (!fits) {
            char want[64];
            ct_shape_str(&in->out, want, sizeof want);
            return ct_fail(s->ctx, CT_ERR_SHAPE, "dataset %s has samples of %dx%dx%d but model %s takes %s",
                           ct_dataset_name(ds), c, h, w, m->source, want);
        }
    }
    int pixel_scores = !lg->out.tokens && !lg->out.sequence && lg->out.ndim == 3;
    if (!ct_dataset_seq(ds) && !ct_dataset_targets(ds) && !ct_session_regression(m)) {
        int c, h, w;
        ct_dataset_shape(ds, &c, &h, &w);
        if (ct_dataset_labels_per_sample(ds) > 1) { /* a label per pixel */
            if (!pixel_scores || lg->out.d[1] != h || lg->out.d[2] != w)
                return ct_fail(s->ctx, CT_ERR_SHAPE, "dataset %s has a label per pixel (%dx%d) but model %s does "
                               "not score each of them (layer %s). HINT: end the model in a convolution giving K "
                               "class planes of %dx%d before softmax_cross_entropy", ct_dataset_name(ds), h, w,
                               m->source, lg->name, h, w);
            if (ct_dataset_classes(ds) > lg->out.d[0])
                return ct_fail(s->ctx, CT_ERR_SHAPE, "dataset %s has %d classes but model %s scores %d per pixel",
                               ct_dataset_name(ds), ct_dataset_classes(ds), m->source, lg->out.d[0]);
            return CT_OK;
        }
        if (pixel_scores)
            return ct_fail(s->ctx, CT_ERR_SHAPE, "model %s scores every pixel (layer %s) but dataset %s has one "
                           "label per sample. HINT: pool and flatten before the classifier, or give per-pixel "
                           "labels (npy: Y (N, H, W))", m->source, lg->name, ct_dataset_name(ds));
    }
    int k = lg->out.d[lg->out.ndim - 1];
    if (!ct_dataset_targets(ds) && ct_dataset_labels_per_sample(ds) == 1 && ct_dataset_classes(ds) > k)
        return ct_fail(s->ctx, CT_ERR_SHAPE, "dataset %s has %d classes but model %s scores %d",
                       ct_dataset_name(ds), ct_dataset_classes(ds), m->source, k);
    return CT_OK;
}

int ct_session_open_data(ct_session *s, const char *spec, int split, const ct_text_options *o,
                         ct_dataset **out)
{
    ct_data_hints hints = { 0, 0, 0, 1 };
    const ct_shape *in = s->model ? &s->model->layers[0].out : NULL;
    if (in && !in->tokens && in->ndim == 3)
        hints = (ct_data_hints){ in->d[0], in->d[1], in->d[2], 1 };
    int st = ct_dataset_open_hinted(spec, split, o, &hints, out);
    return st ? ct_fail_keep(s->ctx, st) : CT_OK;
}

int ct_session_train_norm(ct_session *s, const char *resume)
{
    ct_dataset *tr = s->train;
    s->norm_images = -1;
    if (!tr || !tr->norm_from_train || tr->storage == CT_STORE_TOKENS)
        return CT_OK;
    if (resume && s->ckpt && ct_st_meta(s->ckpt, "normalize")) {
        /* the statistics the run began with, not new ones (a sample drawn
         * again, or other files, would shift every input) */
        int st = ct_session_apply_norm(s, resume, tr);
        if (!st && s->test && s->test->c == tr->c)
            st = ct_session_apply_norm(s, resume, s->test);
        return st;
    }
    float *mean = malloc((size_t)tr->c * sizeof *mean), *sd = malloc((size_t)tr->c * sizeof *sd);
    size_t used = 0;
    int st = !mean || !sd ? ct_fail(s->ctx, CT_ERR_NO_MEMORY, "out of host memory")
             : tr->storage == CT_STORE_FILES ? ct_imagefolder_stats(tr, s->threads, mean, sd, &used, NULL)
                                             : ct_dataset_compute_norm(tr, mean, sd, tr->c);
    if (!st && tr->storage == CT_STORE_FILES)
        s->norm_images = (long)used;
    if (!st)
        st = ct_dataset_set_norm(tr, mean, sd, tr->c);
    if (!st && s->test && s->test->c == tr->c)
        st = ct_dataset_set_norm(s->test, mean, sd, tr->c);
    free(mean);
    free(sd);
    return st ? ct_fail_keep(s->ctx, st) : CT_OK;
}

int ct_session_threads(int option)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return option > 0 ? option : cores < 1 ? 1 : cores > 256 ? 256 : (int)cores;
}

long ct_session_skipped(const ct_session *s, const ct_loader *ld, int epoch)
{
    if (!s->train || s->train->storage != CT_STORE_FILES || !s->train->skip_bad)
        return -1;
    const char *first;
    size_t n = ct_loader_skipped(ld, &first);
    if (n && epoch >= 1)
        ct_log(s->ctx, CT_LOG_WARN, "epoch %d: %zu training file%s did not decode and %s skipped (bad=skip), "
               "the first: %s", epoch, n, n == 1 ? "" : "s", n == 1 ? "was" : "were", first);
    return (long)n;
}

char *ct_session_norm_json(const ct_dataset *ds)
{
    if (!ds || ds->storage == CT_STORE_TOKENS)
        return NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON *m = o ? cJSON_AddArrayToObject(o, "mean") : NULL;
    cJSON *sd = o ? cJSON_AddArrayToObject(o, "std") : NULL;
    int ok = m && sd;
    for (int c = 0; ok && c < ds->c; c++) {
        cJSON *a = cJSON_CreateNumber((double)ds->mean[c]), *b = cJSON_CreateNumber((double)ds->std[c]);
        ok = a && b && cJSON_AddItemToArray(m, a) && cJSON_AddItemToArray(sd, b);
        if (!ok) {
            cJSON_Delete(a);
            cJSON_Delete(b);
        }
    }
    char *json = ok ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    return json;
}

int ct_session_apply_norm(ct_session *s, const char *weights, ct_dataset *ds)
{
    const char *j = s->ckpt ? ct_st_meta(s->ckpt, "normalize") : NULL;
    if (!j || ds->storage == CT_STORE_TOKENS)
        return CT_OK;
    cJSON *o = cJSON_Parse(j);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "mean");
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(o, "std");
    int n = cJSON_IsArray(m) && cJSON_IsArray(sd) ? cJSON_GetArraySize(m) : -1;
    int st = CT_OK;
    if (n < 1 || n > (1 << 24) || n != cJSON_GetArraySize(sd) || cJSON_GetArraySize(o) != 2)
        st = ct_fail(s->ctx, CT_ERR_CORRUPT, "checkpoint %s: metadata 'normalize' is not "
                     "{\"mean\":[...],\"std\":[...]} with one number per channel", weights);
    else if (n != ds->c)
        st = ct_fail(s->ctx, CT_ERR_SHAPE, "checkpoint %s was trained on data of %d channels "
                     "(its normalization has %d), but %s has %d; HINT: evaluate on data shaped as the "
                     "training data was", weights, n, n, ct_dataset_name(ds), ds->c);
    float *mean = st ? NULL : malloc((size_t)n * sizeof *mean);
    float *dev = st ? NULL : malloc((size_t)n * sizeof *dev);
    if (!st && (!mean || !dev))
        st = ct_fail(s->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    for (int c = 0; !st && c < n; c++) {
        const cJSON *a = cJSON_GetArrayItem(m, c), *b = cJSON_GetArrayItem(sd, c);
        if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b))
            st = ct_fail(s->ctx, CT_ERR_CORRUPT, "checkpoint %s: metadata 'normalize': channel %d is "
                         "not a number", weights, c);
        else {
            mean[c] = (float)a->valuedouble;
            dev[c] = (float)b->valuedouble;
        }
    }
    if (!st && (st = ct_dataset_set_norm(ds, mean, dev, n)))
        st = ct_fail(s->ctx, CT_ERR_CORRUPT, "checkpoint %s: metadata 'normalize': %s", weights,
                     ct_last_error());
    free(mean);
    free(dev);
    cJSON_Delete(o);
    return st;
}

void ct_session_limit(ct_dataset *ds, size_t n)
{
    if (n && n < ds->n)
        ds->n = n;
}

size_t ct_batch_input_bytes(const ct_batch *b, size_t row_elems)
{
    return b->tokens ? b->seq * b->stride * sizeof(int32_t) : b->n * row_elems * sizeof(float);
}

size_t ct_batch_label_bytes(const ct_batch *b, const ct_net *net)
{
    if (b->t) /* regression: K float targets per sample */
        return b->n * b->ntargets * sizeof(float);
    /* a language model's net reads a label per token: T per sample */
    return (b->tokens && net->label_n > (size_t)net->batch ? b->seq * b->stride
                                                            : b->n * (b->label_per ? b->label_per : 1)) *
           sizeof(int32_t);
}

int ct_session_upload(ct_session *s, const ct_batch *b)
{
    ct_net *net = &s->net;
    const void *x = b->tokens ? (const void *)b->tokens : (const void *)b->x;
    int st = ct_buffer_write(s->ctx, net->input.mem, net->input.off * sizeof(float),
                             ct_batch_input_bytes(b, net->rt[0].out_n / (size_t)net->batch), x);
    if (!st)
        st = ct_buffer_write(s->ctx, net->labels.mem, net->labels.off * sizeof(float),
                             ct_batch_label_bytes(b, net), ct_batch_labels(b, 0));
    return st;
}

int ct_session_forward_next(ct_session *s, ct_loader *ld, const ct_lrt *rt, size_t per_sample,
                            float *dst, ct_batch *b)
{
    int st = ct_loader_next(ld, b);
    if (st)
        return ct_fail_keep(s->ctx, st);
    if (!b->n)
        return CT_OK;
    size_t n = per_sample ? b->n * per_sample : rt->out_n;
    if ((st = ct_session_upload(s, b)) || (st = ct_net_forward(&s->net, 0, 0, 0)))
        return st;
    return ct_net_read_out(&s->net, (size_t)(rt - s->net.rt), 0, n, dst);
}

const void *ct_batch_labels(const ct_batch *b, size_t row0)
{
    return b->t ? (const void *)(b->t + row0 * b->ntargets)
                : (const void *)(b->y + row0 * (b->label_per ? b->label_per : 1));
}

int ct_session_loader(ct_session *s, ct_dataset *ds, size_t batch, ct_loader **out)
{
    ct_loader_options lo;
    ct_loader_defaults(&lo);
    lo.batch = batch;
    lo.shuffle = 0;
    lo.threads = s->threads;
    int st = ct_loader_create(ds, &lo, out);
    if (!st && (st = ct_loader_start_epoch(*out, 0)))
        ct_loader_free(out);
    return st ? ct_fail_keep(s->ctx, st) : CT_OK;
}

/* Two means over every predicted value and its target, from the net's
 * outputs (N, K) read to the host: squared and absolute errors, or with
 * bce_logits (multilabel) the binary cross-entropy on the logits and the
 * fraction of labels right (logit > 0 where the target > 0.5). */
static int evaluate_floats(ct_session *s, ct_dataset *ds, int multilabel, double *m0, double *m1, size_t *count)
{
    ct_net *net = &s->net;
    ct_loader *ld = NULL;
    int st = ct_session_loader(s, ds, (size_t)net->batch, &ld);
    if (st)
        return st;
    const ct_lrt *out = ct_session_logits(net);
    float *pred = malloc(out->out_n * sizeof *pred);
    double s0 = 0, s1 = 0;
    size_t n = 0, elems = 0;
    if (!pred)
        st = ct_fail(s->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    while (!st) {
        ct_batch b;
        if ((st = ct_session_forward_next(s, ld, out, (size_t)ds->ntargets, pred, &b)) || b.n == 0)
            break;
        /* a partial batch's rows are i < b.n; the predictions are (N, K) as the targets */
        for (size_t i = 0; i < b.n * b.ntargets; i++) {
            double x = pred[i], t = b.t[i], d = x - t;
            s0 += multilabel ? (x > 0 ? x : 0) - x * t + log1p(exp(-fabs(x))) : d * d;
            s1 += multilabel ? (double)((x > 0) == (t > 0.5)) : fabs(d);
        }
        n += b.n;
        elems += b.n * b.ntargets;
    }
    free(pred);
    ct_loader_free(&ld);
    if (st)
        return st;
    *m0 = elems ? s0 / (double)elems : NAN;
    *m1 = elems ? s1 / (double)elems : NAN;
    if (count)
        *count = n;
    return CT_OK;
}

int ct_session_evaluate_targets(ct_session *s, ct_dataset *ds, double *mse, double *mae, size_t *count)
{
    return evaluate_floats(s, ds, 0, mse, mae, count);
}

const ct_lrt *ct_session_logits(const ct_net *net)
{
    const ct_model *m = net->model;
    return &net->rt[m->layers[m->count - 1].inputs[0]];
}

int ct_session_evaluate(ct_session *s, ct_dataset *ds, double *loss, double *acc, size_t *count)
{
    if (ct_session_multilabel(s->model)) /* bce on the logits, the fraction of labels right */
        return evaluate_floats(s, ds, 1, loss, acc, count);
    ct_net *net = &s->net;
    ct_loader *ld = NULL;
    int st = ct_session_loader(s, ds, (size_t)net->batch, &ld);
    if (st)
        return st;
    const ct_lrt *lg = ct_session_logits(net);
    size_t K = lg->out_n / lg->rows, per = lg->rows / (size_t)net->batch; /* per: T of a language model */
    /* px: a label per pixel, the scores (K, P) planes per sample */
    size_t px = ct_dataset_seq(ds) ? 1 : (size_t)ct_dataset_labels_per_sample(ds);
    if (px > 1)
        K /= px;
    float *logits = malloc(lg->out_n * sizeof *logits);
    double sum = 0;
    size_t correct = 0, n = 0;
    if (!logits)
        st = ct_fail(s->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    while (!st) {
        ct_batch b;
        if ((st = ct_session_forward_next(s, ld, lg, 0, logits, &b)) || b.n == 0)
            break;
        /* the logits' rows (t, i) of a language model, time-major; the
         * samples' rows otherwise; a partial batch's rows are i < b.n */
        for (size_t u = 0; u < b.n * per * px; u++) {
            size_t r = per > 1 ? (u % per) * (size_t)net->batch + u / per : u / px;
            int32_t y = b.y[per > 1 ? (u % per) * b.stride + u / per : u];
            /* score k of row r (pixel u % px of sample r) */
            const float *z = logits + r * K * px + u % px;
            size_t best = 0;
            for (size_t k = 1; k < K; k++)
                if (z[k * px] > z[best * px])
                    best = k;
            double mx = z[best * px], se = 0;
            for (size_t k = 0; k < K; k++)
                se += exp((double)z[k * px] - mx);
            sum += log(se) + mx - (double)z[(size_t)y * px];
            correct += best == (size_t)y;
        }
        n += b.n * per * px;
    }
    free(logits);
    ct_loader_free(&ld);
    if (st)
        return st;
    *loss = n ? sum / (double)n : NAN;
    *acc = n ? (double)correct / (double)n : NAN;
    if (count)
        *count = n;
    return CT_OK;
}

/* ---- what a checkpoint keeps of a text dataset ---- */

char *ct_session_tokens_json(const ct_dataset *ds)
{
    const ct_tokenizer *tok = ct_dataset_tokenizer(ds);
    if (!tok)
        return NULL;
    size_t n = ct_tokenizer_to_json(tok, NULL, 0) + 1;
    char *json = malloc(n);
    if (json)
        ct_tokenizer_to_json(tok, json, n);
    return json;
}

char *ct_session_classes_json(const ct_dataset *ds)
{
    if (!ct_dataset_class_name(ds, 0))
        return NULL;
    cJSON *a = cJSON_CreateArray();
    for (int k = 0; a && k < ct_dataset_classes(ds); k++) {
        cJSON *name = cJSON_CreateString(ct_dataset_class_name(ds, k));
        if (!name || !cJSON_AddItemToArray(a, name)) {
            cJSON_Delete(name);
            cJSON_Delete(a);
            return NULL;
        }
    }
    char *json = a ? cJSON_PrintUnformatted(a) : NULL;
    cJSON_Delete(a);
    return json;
}

int ct_session_text_options(ct_session *s, const char *weights, ct_text_options *o, ct_tokenizer **tok,
                            char ***names)
{
    ct_text_defaults(o);
    *tok = NULL;
    *names = NULL;
    const char *tj = s->ckpt ? ct_st_meta(s->ckpt, "tokens") : NULL;
    const char *cj = s->ckpt ? ct_st_meta(s->ckpt, "classes") : NULL;
    int st;
    if (tj && (st = ct_tokenizer_from_json(tj, strlen(tj), tok)))
        return ct_fail(s->ctx, st, "checkpoint %s: metadata 'tokens': %s", weights, ct_last_error());
    o->tokenizer = *tok;
    if (!cj)
        return CT_OK;
    cJSON *a = cJSON_Parse(cj);
    int n = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : -1;
    if (n < 1 || n > (1 << 20)) {
        cJSON_Delete(a);
        return ct_fail(s->ctx, CT_ERR_CORRUPT, "checkpoint %s: metadata 'classes' is not a JSON array of "
                       "class names", weights);
    }
    *names = calloc((size_t)n, sizeof **names);
    for (int k = 0; *names && k < n; k++) {
        const cJSON *e = cJSON_GetArrayItem(a, k);
        if (!cJSON_IsString(e) || !e->valuestring[0]) {
            cJSON_Delete(a);
            return ct_fail(s->ctx, CT_ERR_CORRUPT, "checkpoint %s: metadata 'classes': entry %d is not a "
                           "class name", weights, k);
        }
        if (!((*names)[k] = strdup(e->valuestring)))
            break;
    }
    cJSON_Delete(a);
    if (!*names || !(*names)[n - 1])
        return ct_fail(s->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    o->classes = (const char *const *)*names;
    o->nclasses = n;
    return CT_OK;
}

void ct_session_text_free(ct_tokenizer **tok, char ***names, int n)
{
    ct_tokenizer_free(tok);
    for (int k = 0; *names && k < n; k++)
        free((*names)[k]);
    free(*names);
    *names = NULL;
}

int ct_session_open_text_checkpoint(ct_session *s, const char *weights, int batch, int lm, ct_tokenizer **tok,
                                    char ***names, int *nnames)
{
    *tok = NULL;
    *names = NULL;
    *nnames = 0;
    int st = ct_session_open_model(s, NULL, weights);
    if (st)
        return st;
    const ct_model *m = s->model;
    const ct_layer *lg = &m->layers[m->layers[m->count - 1].inputs[0]];
    if (!m->layers[0].out.tokens || !ct_st_meta(s->ckpt, "tokens"))
        return ct_fail(s->ctx, CT_ERR_INVALID_ARG, "checkpoint %s was not trained on text (its model reads "
                       "no tokens, or it holds no tokenizer). HINT: use a checkpoint of a model trained "
                       "on text:, textdir: or csv:...:text= data", weights);
    if (lm != lg->out.sequence)
        return ct_fail(s->ctx, CT_ERR_INVALID_ARG, "checkpoint %s holds a %s. HINT: %s", weights,
                       lg->out.sequence ? "language model (it scores every token)"
                                        : "text classifier (it scores whole texts)",
                       lg->out.sequence ? "sample from it with `cltrain generate`"
                                        : "classify with `cltrain predict --text`");
    ct_text_options to;
    if ((st = ct_session_text_options(s, weights, &to, tok, names)))
        return st;
    *nnames = to.nclasses;
    int vocab = token_vocab(m), k = lg->out.d[lg->out.ndim - 1];
    size_t ids = ct_tokenizer_size(*tok);
    if ((vocab && ids > (size_t)vocab) || (lm && ids > (size_t)k) || (*nnames && *nnames > k))
        return ct_fail(s->ctx, CT_ERR_CORRUPT, "checkpoint %s: its vocabulary (%zu ids) or classes (%d) do "
                       "not match its model (embedding vocab=%d, %d scores)", weights, ids, *nnames, vocab, k);
    if ((st = ct_net_plan(s->ctx, s->model, batch, &s->net)))
        return st;
    s->planned = 1;
    if ((st = ct_net_alloc(&s->net)))
        return st;
    return ct_checkpoint_load(&s->net, s->ckpt, weights, NULL, 0, NULL);
}
