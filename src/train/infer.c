/*
 * infer.c - evaluation and prediction from a checkpoint: the model is the
 * checkpoint's own (or a given one that must match it), planned at the
 * batch asked for, its parameters and running statistics loaded.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cltrain/train.h"
#include "train/checkpoint.h"
#include "train/session.h"

static int open_for_inference(ct_session *s, const char *model, const char *weights, const char *data,
                              int batch, size_t lim)
{
    int st = ct_session_open_model(s, model, weights);
    if (st)
        return st;
    /* text: tokenized as training did, with its class names */
    ct_text_options to;
    ct_tokenizer *tok;
    char **names;
    if ((st = ct_session_text_options(s, weights, &to, &tok, &names)))
        return st;
    st = ct_session_open_data(s, data ? data : "fashion-mnist", CT_SPLIT_TEST, &to, &s->test);
    ct_session_text_free(&tok, &names, to.nclasses);
    if (st)
        return st;
    ct_session_limit(s->test, lim);
    /* images and tables: normalized with the training split's statistics */
    if ((st = ct_session_apply_norm(s, weights, s->test)))
        return st;
    if ((st = ct_session_check_data(s, s->test)))
        return st;
    if ((st = ct_net_plan(s->ctx, s->model, batch, &s->net)))
        return st;
    s->planned = 1;
    if ((st = ct_net_alloc(&s->net)))
        return st;
    return ct_checkpoint_load(&s->net, s->ckpt, weights, NULL, 0, NULL);
}

int ct_evaluate_metrics(ct_context *ctx, const char *model, const char *weights, const char *data,
                        int batch, size_t lim, ct_eval_metrics *out)
{
    CT_VALIDATE(ctx, ctx && weights && out);
    memset(out, 0, sizeof *out);
    out->loss = out->accuracy = out->rmse = out->mae = NAN;
    ct_session s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    int st = open_for_inference(&s, model, weights, data, batch > 0 ? batch : 256, lim);
    if (!st && ct_session_regression(s.model)) {
        out->regression = 1;
        out->targets = ct_dataset_targets(s.test);
        st = ct_session_evaluate_targets(&s, s.test, &out->loss, &out->mae, &out->samples);
        out->rmse = sqrt(out->loss);
    } else if (!st) {
        st = ct_session_evaluate(&s, s.test, &out->loss, &out->accuracy, &out->samples);
    }
    ct_session_free(&s);
    return st;
}

int ct_evaluate(ct_context *ctx, const char *model, const char *weights, const char *data, int batch,
                size_t lim, double *loss, double *accuracy, size_t *samples)
{
    CT_VALIDATE(ctx, ctx && weights && loss && accuracy);
    ct_eval_metrics m;
    int st = ct_evaluate_metrics(ctx, model, weights, data, batch, lim, &m);
    if (st)
        return st;
    *loss = m.loss;
    *accuracy = m.accuracy;
    if (samples)
        *samples = m.samples;
    return CT_OK;
}

/* The k most probable of K scores x with their softmax probabilities, by
 * repeated scans (k is small); used: K bytes of workspace. */
static void top_classes(const float *x, size_t K, size_t k_n, unsigned char *used, int *classes, double *prob)
{
    double mx = x[0], se = 0;
    for (size_t k = 1; k < K; k++)
        mx = x[k] > mx ? x[k] : mx;
    for (size_t k = 0; k < K; k++)
        se += exp((double)x[k] - mx);
    memset(used, 0, K);
    for (size_t t = 0; t < k_n; t++) {
        size_t best = K;
        for (size_t k = 0; k < K; k++)
            if (!used[k] && (best == K || x[k] > x[best]))
                best = k;
        used[best] = 1;
        classes[t] = (int)best;
        prob[t] = exp((double)x[best] - mx) / se;
    }
}

/* The checkpoint's class names into the predictions (none: NULL). */
static int take_names(ct_predictions *out, char ***names, int n)
{
    out->class_names = *names;
    out->nclasses = n;
    *names = NULL;
    return CT_OK;
}

void ct_predictions_free(ct_predictions *p)
{
    if (!p)
        return;
    free(p->index);
    free(p->label);
    free(p->classes);
    free(p->probability);
    for (int k = 0; p->class_names && k < p->nclasses; k++)
        free(p->class_names[k]);
    free(p->class_names);
    free(p->predicted);
    free(p->target);
    for (int k = 0; p->target_names && k < p->ntargets; k++)
        free(p->target_names[k]);
    free(p->target_names);
    memset(p, 0, sizeof *p);
}

/* A regression model's predictions and the data's targets, (count, K) each
 * (a multi-label model's: each label's probability, the logit's sigmoid). */
static int predict_values(ct_session *s, ct_loader *ld, const ct_lrt *out_rt, ct_predictions *out)
{
    size_t n = ct_dataset_count(s->test), K = (size_t)ct_dataset_targets(s->test);
    out->ntargets = (int)K;
    out->index = malloc(n * sizeof *out->index);
    out->label = malloc(n * sizeof *out->label);
    out->predicted = malloc(n * K * sizeof *out->predicted);
    out->target = malloc(n * K * sizeof *out->target);
    out->target_names = calloc(K, sizeof *out->target_names);
    if (!out->index || !out->label || !out->predicted || !out->target || !out->target_names)
        return ct_fail(s->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    for (size_t k = 0; k < K; k++)
        if (!(out->target_names[k] = strdup(ct_dataset_target_name(s->test, (int)k))))
            return ct_fail(s->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    for (;;) {
        ct_batch b;
        int st = ct_loader_next(ld, &b);
        if (st)
            return ct_fail_keep(s->ctx, st);
        if (!b.n)
            return CT_OK;
        if (out->count + b.n > n)
            return ct_fail(s->ctx, CT_ERR_INTERNAL, "prediction: the loader gave more than %zu samples", n);
        if ((st = ct_session_upload(s, &b)) || (st = ct_net_forward(&s->net, 0, 0, 0)) ||
            (st = ct_net_read_out(&s->net, (size_t)(out_rt - s->net.rt), 0, b.n * K,
                                  out->predicted + out->count * K)))
            return st;
        if (ct_session_multilabel(s->model))
            for (size_t i = out->count * K; i < (out->count + b.n) * K; i++)
                out->predicted[i] = 1.0f / (1.0f + expf(-out->predicted[i]));
        memcpy(out->target + out->count * K, b.t, b.n * K * sizeof *out->target);
        for (size_t r = 0; r < b.n; r++) {
            out->index[out->count + r] = b.index[r];
            out->label[out->count + r] = -1;
        }
        out->count += b.n;
    }
}

int ct_predict(ct_context *ctx, const char *model, const char *weights, const char *data, size_t count,
               int top_k, ct_predictions *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    CT_VALIDATE(ctx, ctx && weights && count > 0 && top_k > 0 && out);
    ct_session s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    int batch = count < 256 ? (int)count : 256;
    int st = open_for_inference(&s, model, weights, data, batch, count);
    ct_loader *ld = NULL;
    float *z = NULL;
    unsigned char *used = NULL;
    if (st)
        goto done;
    if ((st = ct_session_loader(&s, s.test, (size_t)batch, &ld)))
        goto done;
    const ct_lrt *lg = ct_session_logits(&s.net);
    if (ct_session_regression(s.model) || ct_session_multilabel(s.model)) {
        st = predict_values(&s, ld, lg, out);
        goto done;
    }
    const ct_shape *ls = &s.model->layers[s.model->layers[s.model->count - 1].inputs[0]].out;
    if (ls->ndim == 3 && !ls->sequence) {
        st = ct_fail(ctx, CT_ERR_UNSUPPORTED, "checkpoint %s holds a model that scores every pixel (%dx%d, %d "
                     "classes). HINT: `cltrain eval` gives its pixel accuracy, `cltrain predict --logits` its scores "
                     "per pixel", weights, ls->d[1], ls->d[2], ls->d[0]);
        goto done;
    }
    if (lg->rows != (size_t)batch) {
        st = ct_fail(ctx, CT_ERR_INVALID_ARG, "checkpoint %s holds a language model (it scores every "
                     "token). HINT: sample from it with `cltrain generate`", weights);
        goto done;
    }
    {
        ct_text_options to;
        ct_tokenizer *tok;
        char **names;
        if (!(st = ct_session_text_options(&s, weights, &to, &tok, &names)))
            take_names(out, &names, to.nclasses);
        ct_session_text_free(&tok, &names, to.nclasses);
        if (st)
            goto done;
    }
    size_t K = lg->out_n / (size_t)batch, n = ct_dataset_count(s.test);
    if ((size_t)top_k > K)
        top_k = (int)K;
    size_t k_n = (size_t)top_k;
    z = malloc(lg->out_n * sizeof *z);
    used = malloc(K);
    out->index = malloc(n * sizeof *out->index);
    out->label = malloc(n * sizeof *out->label);
    out->classes = malloc(n * k_n * sizeof *out->classes);
    out->probability = malloc(n * k_n * sizeof *out->probability);
    if (!z || !used || !out->index || !out->label || !out->classes || !out->probability) {
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
        goto done;
    }
    out->top_k = top_k;
    for (;;) {
        ct_batch b;
        if ((st = ct_session_forward_next(&s, ld, lg, K, z, &b)) || !b.n)
            break;
        if (out->count + b.n > n) {
            st = ct_fail(ctx, CT_ERR_INTERNAL, "prediction: the loader gave more than %zu samples", n);
            break;
        }
        for (size_t r = 0; r < b.n; r++) {
            size_t at = out->count++;
            out->index[at] = b.index[r];
            out->label[at] = b.y[r];
            top_classes(z + r * K, K, k_n, used, out->classes + at * k_n, out->probability + at * k_n);
        }
    }
done:
    free(used);
    free(z);
    ct_loader_free(&ld);
    ct_session_free(&s);
    if (st)
        ct_predictions_free(out);
    return st;
}

void ct_outputs_free(ct_outputs *o)
{
    if (!o)
        return;
    free(o->index);
    free(o->x);
    free(o->ids);
    free(o->y);
    free(o->label);
    memset(o, 0, sizeof *o);
}

int ct_predict_outputs(ct_context *ctx, const char *model, const char *weights, const char *data, size_t count,
                       ct_outputs *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    CT_VALIDATE(ctx, ctx && weights && count > 0 && out);
    ct_session s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    int batch = count < 64 ? (int)count : 64;
    int st = open_for_inference(&s, model, weights, data, batch, count);
    ct_loader *ld = NULL;
    float *z = NULL;
    if (st)
        goto done;
    if ((st = ct_session_loader(&s, s.test, (size_t)batch, &ld)))
        goto done;
    const ct_model *m = s.model;
    const ct_layer *in = &m->layers[0], *lgl = &m->layers[m->layers[m->count - 1].inputs[0]];
    const ct_lrt *lg = ct_session_logits(&s.net);
    size_t per = lg->rows / (size_t)batch; /* T of a language model's scores, else 1 */
    size_t K = lg->out_n / lg->rows, n = ct_dataset_count(s.test);
    out->tokens = in->out.tokens;
    out->input_ndim = in->out.ndim;
    for (int d = 0; d < in->out.ndim; d++)
        out->input_shape[d] = in->out.d[d];
    out->input_n = ct_shape_numel(&in->out);
    out->output_ndim = lgl->out.ndim;
    for (int d = 0; d < lgl->out.ndim; d++)
        out->output_shape[d] = lgl->out.d[d];
    out->output_n = per * K;
    /* language-model data: a label per position (labels per sample > 1);
     * a label per pixel: the sample's plane of them */
    size_t px = ct_dataset_seq(s.test) ? 1 : (size_t)ct_dataset_labels_per_sample(s.test);
    out->label_n = per > 1 && ct_dataset_labels_per_sample(s.test) > 1 ? per : px;
    z = malloc(lg->out_n * sizeof *z);
    out->index = malloc(n * sizeof *out->index);
    if (out->tokens)
        out->ids = malloc(n * out->input_n * sizeof *out->ids);
    else
        out->x = malloc(n * out->input_n * sizeof *out->x);
    out->y = malloc(n * out->output_n * sizeof *out->y);
    out->label = malloc(n * out->label_n * sizeof *out->label);
    if (!z || !out->index || !(out->ids || out->x) || !out->y || !out->label) {
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
        goto done;
    }
    for (;;) {
        ct_batch b;
        if ((st = ct_session_forward_next(&s, ld, lg, 0, z, &b)) || !b.n)
            break;
        if (out->count + b.n > n) {
            st = ct_fail(ctx, CT_ERR_INTERNAL, "prediction: the loader gave more than %zu samples", n);
            break;
        }
        for (size_t i = 0; i < b.n; i++) {
            size_t at = out->count++;
            out->index[at] = b.index[i];
            if (b.tokens) /* (T, stride) time-major */
                for (size_t t = 0; t < out->input_n; t++)
                    out->ids[at * out->input_n + t] = b.tokens[t * b.stride + i];
            else
                memcpy(out->x + at * out->input_n, b.x + i * out->input_n, out->input_n * sizeof(float));
            /* float targets (regression, multi-label) have no label: -1 */
            for (size_t t = 0; t < out->label_n; t++)
                out->label[at * out->label_n + t] = !b.y ? -1
                                                    : px > 1 ? b.y[i * px + t]
                                                    : out->label_n > 1 ? b.y[t * b.stride + i] : b.y[i];
            /* rows (t, i) of a sequence's scores are time-major: row t * batch + i */
            for (size_t t = 0; t < per; t++)
                memcpy(out->y + at * out->output_n + t * K, z + (t * (size_t)batch + i) * K, K * sizeof(float));
        }
    }
done:
    free(z);
    ct_loader_free(&ld);
    ct_session_free(&s);
    if (st)
        ct_outputs_free(out);
    return st;
}

int ct_predict_text(ct_context *ctx, const char *weights, const char *const *texts, size_t count, int top_k,
                    ct_predictions *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    CT_VALIDATE(ctx, ctx && weights && texts && count > 0 && top_k > 0 && out);
    for (size_t i = 0; i < count; i++)
        CT_VALIDATE(ctx, texts[i]);
    ct_session s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    ct_tokenizer *tok = NULL;
    char **names = NULL;
    int nnames = 0;
    size_t batch = count < 64 ? count : 64;
    int32_t *ids = NULL;
    float *z = NULL;
    unsigned char *used = NULL;
    int st = ct_session_open_text_checkpoint(&s, weights, (int)batch, 0, &tok, &names, &nnames);
    if (st)
        goto done;
    const ct_lrt *lg = ct_session_logits(&s.net);
    size_t T = (size_t)s.model->layers[0].out.d[0], K = lg->out_n / batch;
    size_t k_n = (size_t)top_k < K ? (size_t)top_k : K;
    ids = malloc(T * batch * sizeof *ids);
    z = malloc(lg->out_n * sizeof *z);
    used = malloc(K);
    out->index = malloc(count * sizeof *out->index);
    out->label = malloc(count * sizeof *out->label);
    out->classes = malloc(count * k_n * sizeof *out->classes);
    out->probability = malloc(count * k_n * sizeof *out->probability);
    if (!ids || !z || !used || !out->index || !out->label || !out->classes || !out->probability) {
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
        goto done;
    }
    out->top_k = (int)k_n;
    take_names(out, &names, nnames);
    int32_t *one = malloc(T * sizeof *one);
    if (!one) {
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
        goto done;
    }
    for (size_t at = 0; at < count && !st; at += batch) {
        size_t n = count - at < batch ? count - at : batch;
        /* (T, N) time-major, padded with the padding id */
        memset(ids, 0, T * batch * sizeof *ids);
        for (size_t i = 0; i < n && !st; i++) {
            size_t got = 0;
            if ((st = ct_tokenizer_encode(tok, texts[at + i], strlen(texts[at + i]), one, T, &got))) {
                st = ct_fail(ctx, st, "text %zu: %s", at + i + 1, ct_last_error());
                break;
            }
            for (size_t t = 0; t < (got < T ? got : T); t++)
                ids[t * batch + i] = one[t];
        }
        if (st || (st = ct_buffer_write(ctx, s.net.input.mem, s.net.input.off * sizeof(float),
                                        T * batch * sizeof *ids, ids)) ||
            (st = ct_net_forward(&s.net, 0, 0, 0)) ||
            (st = ct_net_read_out(&s.net, (size_t)(lg - s.net.rt), 0, lg->out_n, z)))
            break;
        for (size_t i = 0; i < n; i++) {
            size_t j = out->count++;
            out->index[j] = at + i;
            out->label[j] = -1;
            top_classes(z + i * K, K, k_n, used, out->classes + j * k_n, out->probability + j * k_n);
        }
    }
    free(one);
done:
    free(ids);
    free(z);
    free(used);
    ct_session_text_free(&tok, &names, nnames);
    ct_session_free(&s);
    if (st)
        ct_predictions_free(out);
    return st;
}
