/*
 * session.c - what training, evaluation and prediction share
 * (src/train/session.h).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

int ct_session_check_data(ct_session *s, const ct_dataset *ds)
{
    const ct_model *m = s->model;
    const ct_layer *in = &m->layers[0];
    const ct_layer *loss = &m->layers[m->count - 1];
    if (in->out.tokens)
        return ct_fail(s->ctx, CT_ERR_UNSUPPORTED, "model %s reads token sequences; training it "
                       "needs a text dataset, which cltrain does not read yet (`cltrain bench` runs it "
                       "on synthetic tokens)", m->source);
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
    if (!strcmp(loss->type->name, "softmax_cross_entropy")) {
        const ct_layer *lg = &m->layers[loss->inputs[0]];
        int k = lg->out.d[lg->out.ndim - 1];
        if (ct_dataset_classes(ds) > k)
            return ct_fail(s->ctx, CT_ERR_SHAPE, "dataset %s has %d classes but model %s scores %d",
                           ct_dataset_name(ds), ct_dataset_classes(ds), m->source, k);
    } else {
        return ct_fail(s->ctx, CT_ERR_UNSUPPORTED, "model %s ends in %s; training with it needs "
                       "regression targets, which the datasets do not provide yet", m->source,
                       loss->type->name);
    }
    return CT_OK;
}

void ct_session_limit(ct_dataset *ds, size_t n)
{
    if (n && n < ds->n)
        ds->n = n;
}

int ct_session_upload(ct_session *s, const ct_batch *b)
{
    ct_net *net = &s->net;
    int st = ct_buffer_write(s->ctx, net->rt[0].out.mem, net->rt[0].out.off * sizeof(float),
                             b->n * (net->rt[0].out_n / (size_t)net->batch) * sizeof(float), b->x);
    if (!st)
        st = ct_buffer_write(s->ctx, net->labels.mem, net->labels.off * sizeof(float),
                             b->n * sizeof(int32_t), b->y);
    return st;
}

const ct_lrt *ct_session_logits(const ct_net *net)
{
    const ct_model *m = net->model;
    return &net->rt[m->layers[m->count - 1].inputs[0]];
}

int ct_session_evaluate(ct_session *s, ct_dataset *ds, double *loss, double *acc, size_t *count)
{
    ct_net *net = &s->net;
    ct_loader_options lo;
    ct_loader_defaults(&lo);
    lo.batch = (size_t)net->batch;
    lo.shuffle = 0;
    ct_loader *ld = NULL;
    int st = ct_loader_create(ds, &lo, &ld);
    if (st)
        return ct_fail_keep(s->ctx, st);
    const ct_lrt *lg = ct_session_logits(net);
    size_t K = lg->out_n / (size_t)net->batch;
    float *logits = malloc(lg->out_n * sizeof *logits);
    double sum = 0;
    size_t correct = 0, n = 0;
    if (!logits)
        st = ct_fail(s->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    if (!st)
        st = ct_loader_start_epoch(ld, 0);
    while (!st) {
        ct_batch b;
        if ((st = ct_loader_next(ld, &b)) != CT_OK) {
            ct_fail_keep(s->ctx, st);
            break;
        }
        if (b.n == 0)
            break;
        if ((st = ct_session_upload(s, &b)) || (st = ct_net_forward(net, 0, 0, 0)) ||
            (st = ct_buffer_read(s->ctx, lg->out.mem, lg->out.off * sizeof(float), b.n * K * sizeof(float), logits)))
            break;
        for (size_t r = 0; r < b.n; r++) {
            const float *z = logits + r * K;
            size_t best = 0;
            double mx = z[0];
            for (size_t k = 1; k < K; k++)
                if (z[k] > z[best])
                    best = k;
            mx = z[best];
            double se = 0;
            for (size_t k = 0; k < K; k++)
                se += exp((double)z[k] - mx);
            sum += log(se) + mx - (double)z[b.y[r]];
            correct += best == (size_t)b.y[r];
        }
        n += b.n;
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
