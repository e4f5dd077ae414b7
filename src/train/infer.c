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

int ct_evaluate(ct_context *ctx, const char *model, const char *weights, const char *data, int batch,
                size_t lim, double *loss, double *accuracy, size_t *samples)
{
    CT_VALIDATE(ctx, ctx && weights && loss && accuracy);
    ct_session s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    int st = open_for_inference(&s, model, weights, data, batch > 0 ? batch : 256, lim);
    if (!st)
        st = ct_session_evaluate(&s, s.test, loss, accuracy, samples);
    ct_session_free(&s);
    return st;
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
    memset(p, 0, sizeof *p);
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
    ct_loader_options lo;
    ct_loader_defaults(&lo);
    lo.batch = (size_t)batch;
    lo.shuffle = 0;
    if ((st = ct_loader_create(s.test, &lo, &ld)) || (st = ct_loader_start_epoch(ld, 0))) {
        ct_fail_keep(ctx, st);
        goto done;
    }
    const ct_lrt *lg = ct_session_logits(&s.net);
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
        if ((st = ct_loader_next(ld, &b))) {
            ct_fail_keep(ctx, st);
            break;
        }
        if (!b.n)
            break;
        if (out->count + b.n > n) {
            st = ct_fail(ctx, CT_ERR_INTERNAL, "prediction: the loader gave more than %zu samples", n);
            break;
        }
        if ((st = ct_session_upload(&s, &b)) || (st = ct_net_forward(&s.net, 0, 0, 0)) ||
            (st = ct_buffer_read(ctx, lg->out.mem, lg->out.off * sizeof(float), b.n * K * sizeof(float), z)))
            break;
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
        if (st || (st = ct_buffer_write(ctx, s.net.rt[0].out.mem, s.net.rt[0].out.off * sizeof(float),
                                        T * batch * sizeof *ids, ids)) ||
            (st = ct_net_forward(&s.net, 0, 0, 0)) ||
            (st = ct_buffer_read(ctx, lg->out.mem, lg->out.off * sizeof(float), lg->out_n * sizeof(float), z)))
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
