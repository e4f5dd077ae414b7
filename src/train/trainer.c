/*
 * trainer.c - the training loop, evaluation and prediction.
 *
 * One step: the loader thread has the batch decoded; it is uploaded, the
 * gradients zeroed, forward, backward, optional clipping, one optimizer
 * kernel; the batch's loss and correct count are added to device
 * accumulators, read back only when the progress bar or the epoch's end
 * needs them. Training drops the last partial batch (the net is planned
 * for one batch size); evaluation covers every sample.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cltrain/data.h"
#include "cltrain/train.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "nn/net.h"
#include "ops/eltwise.h"
#include "optim/optim.h"
#include "optim/schedule.h"
#include "train/checkpoint.h"

void ct_train_defaults(ct_train_options *o)
{
    memset(o, 0, sizeof *o);
    o->model = "cnn";
    o->data = "fashion-mnist";
    o->epochs = 5;
    o->batch = 64;
    o->optimizer = "adam";
    o->lr = 0; /* by optimizer */
    o->momentum = 0.9f;
    o->schedule = "cosine";
    o->step_epochs = 1;
    o->gamma = 0.1f;
    o->seed = 1;
    o->augment = -1;
    o->progress = -1;
}

/* ---- shared pieces ---- */

typedef struct session {
    ct_context *ctx;
    ct_model *model;
    ct_net net;
    int planned;
    ct_dataset *train, *test;
    ct_st_file *ckpt;
} session;

static void session_free(session *s)
{
    if (s->planned)
        ct_net_release(&s->net);
    ct_model_free(&s->model);
    ct_dataset_free(&s->train);
    ct_dataset_free(&s->test);
    ct_st_free(&s->ckpt);
}

/* The model: given by name/path, or the checkpoint's own; when both, they
 * must agree. */
static int open_model(session *s, const char *model, const char *weights)
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

/* The dataset must fit the model's input and its classes the model's output. */
static int check_data(session *s, const ct_dataset *ds)
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

static void limit(ct_dataset *ds, size_t n)
{
    if (n && n < ds->n)
        ds->n = n;
}

/* Uploads a batch into the net's input and label slots. */
static int upload(session *s, const ct_batch *b)
{
    ct_net *net = &s->net;
    int st = ct_buffer_write(s->ctx, net->rt[0].out.mem, net->rt[0].out.off * sizeof(float),
                             b->n * (net->rt[0].out_n / (size_t)net->batch) * sizeof(float), b->x);
    if (!st)
        st = ct_buffer_write(s->ctx, net->labels.mem, net->labels.off * sizeof(float),
                             b->n * sizeof(int32_t), b->y);
    return st;
}

/* Uploads a batch into slot k on the transfer queue, after `after` (the
 * last step that read the slot) if given; *done signals completion. */
static int upload_async(session *s, const ct_batch *b, int k, cl_event after, cl_event *done)
{
    ct_net *net = &s->net;
    cl_command_queue q = s->ctx->transfer;
    size_t xin = b->n * (net->rt[0].out_n / (size_t)net->batch) * sizeof(float);
    cl_event x_done = NULL;
    cl_int err = clEnqueueWriteBuffer(q, net->slot[k], CL_FALSE, 0, xin, b->x, after ? 1 : 0,
                                      after ? &after : NULL, &x_done);
    if (err == CL_SUCCESS) {
        err = clEnqueueWriteBuffer(q, net->slot[k], CL_FALSE, net->slot_label_off * sizeof(float),
                                   b->n * sizeof(int32_t), b->y, 1, &x_done, done);
        clReleaseEvent(x_done);
    }
    if (err == CL_SUCCESS)
        err = clFlush(q);
    return err == CL_SUCCESS ? CT_OK : ct_cl_fail(s->ctx, err, "uploading a batch");
}

static const ct_lrt *logits_of(const ct_net *net)
{
    const ct_model *m = net->model;
    return &net->rt[m->layers[m->count - 1].inputs[0]];
}

/* Loss and accuracy of the test split, computed on the host from logits so
 * a partial last batch counts exactly. */
static int evaluate(session *s, ct_dataset *ds, double *loss, double *acc, size_t *count)
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
    const ct_lrt *lg = logits_of(net);
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
        if ((st = upload(s, &b)) || (st = ct_net_forward(net, 0, 0, 0)) ||
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

static int optim_from(ct_context *ctx, const ct_train_options *o, ct_optim_desc *d)
{
    const char *name = o->optimizer ? o->optimizer : "adam";
    if (!strcmp(name, "sgd"))
        ct_optim_defaults(d, CT_OPT_SGD);
    else if (!strcmp(name, "adam"))
        ct_optim_defaults(d, CT_OPT_ADAM);
    else if (!strcmp(name, "adamw"))
        ct_optim_defaults(d, CT_OPT_ADAMW);
    else
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "unknown optimizer '%s': expected sgd, adam or adamw", name);
    d->lr = o->lr > 0 ? o->lr : d->kind == CT_OPT_SGD ? 0.05f : 1e-3f;
    if (d->kind == CT_OPT_SGD) {
        d->momentum = o->momentum;
        d->nesterov = o->nesterov;
    }
    d->weight_decay = o->weight_decay;
    return ct_optim_validate(ctx, d);
}

static int schedule_from(ct_context *ctx, const ct_train_options *o, float lr, long steps_per_epoch,
                         ct_lr_schedule *s)
{
    memset(s, 0, sizeof *s);
    const char *name = o->schedule ? o->schedule : "cosine";
    s->base_lr = lr;
    s->warmup = o->warmup;
    if (!strcmp(name, "constant")) {
        s->kind = CT_LR_CONSTANT;
    } else if (!strcmp(name, "step")) {
        s->kind = CT_LR_STEP;
        s->step_size = (long)o->step_epochs * steps_per_epoch;
        s->gamma = o->gamma;
    } else if (!strcmp(name, "cosine")) {
        s->kind = CT_LR_COSINE;
        s->total = (long)o->epochs * steps_per_epoch - o->warmup;
        if (s->total < 1)
            s->total = 1;
        s->min_lr = 0;
    } else {
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "unknown schedule '%s': expected constant, step or cosine", name);
    }
    return ct_lr_schedule_validate(ctx, s);
}

static void print_plan(const ct_net *net)
{
    const ct_model *m = net->model;
    static const char *const names[CT_ARENA_COUNT] = { "parameters", "gradients", "buffers",
                                                        "activations", "activation grads", "scratch" };
    printf("%-16s %-22s %-22s %-18s %12s\n", "layer", "type", "reads", "output", "params");
    for (size_t i = 0; i < m->count; i++) {
        const ct_layer *l = &m->layers[i];
        char shape[64];
        ct_shape_str(&l->out, shape, sizeof shape);
        printf("%-16s %-22s %-22s %-18s %12zu\n", l->name, l->type->name, l->inputs_text, shape,
               l->param_count);
    }
    printf("total trainable parameters: %zu\n", m->param_count);
    printf("memory plan at batch %d:\n", net->batch);
    double total = 0;
    for (int a = 0; a < CT_ARENA_COUNT; a++) {
        double mb = (double)net->arena_size[a] * 4.0 / 1048576.0;
        total += mb;
        printf("  %-18s %10.2f MiB\n", names[a], mb);
    }
    double slots = 2.0 * (double)net->slot_n * 4.0 / 1048576.0;
    total += slots;
    printf("  %-18s %10.2f MiB (two, so uploads overlap compute)\n", "batch slots", slots);
    printf("  %-18s %10.2f MiB (plus optimizer state)\n", "total", total);
}

/* ---- progress ---- */

static void progress_bar(int epoch, int epochs, size_t done, size_t total, double loss, double acc,
                         double rate, double eta)
{
    int width = 24, fill = total ? (int)((double)width * (double)done / (double)total) : width;
    char bar[32];
    for (int i = 0; i < width; i++)
        bar[i] = i < fill ? '=' : i == fill ? '>' : ' ';
    bar[width] = '\0';
    fprintf(stderr, "\repoch %d/%d [%s] %3.0f%%  loss %.4f  acc %5.2f%%  %6.0f samples/s  ETA %2d:%02d ",
            epoch, epochs, bar, total ? 100.0 * (double)done / (double)total : 100.0, loss, 100 * acc,
            rate, (int)(eta / 60), (int)fmod(eta, 60));
    fflush(stderr);
}

static void log_json(const char *path, const ct_epoch_report *r, const char *kind)
{
    if (!path)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fprintf(f, "{\"event\": \"%s\", \"epoch\": %d, \"step\": %ld, \"lr\": %.8g, \"train_loss\": %.8g, "
            "\"train_accuracy\": %.6f, \"test_loss\": %.8g, \"test_accuracy\": %.6f, \"seconds\": %.3f, "
            "\"samples_per_second\": %.1f}\n", kind, r->epoch, r->step, r->lr, r->train_loss,
            r->train_accuracy, isnan(r->test_loss) ? -1.0 : r->test_loss,
            isnan(r->test_accuracy) ? -1.0 : r->test_accuracy, r->seconds, r->samples_per_second);
    fclose(f);
}

/* ---- training ---- */

int ct_train(ct_context *ctx, const ct_train_options *opt)
{
    CT_VALIDATE(ctx, ctx && opt);
    ct_train_options o = *opt;
    if (o.epochs < 1 || o.epochs > 100000)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "epochs must be in [1, 100000], not %d", o.epochs);
    session s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    cl_mem state = NULL, norm_ws = NULL;
    ct_loader *ld = NULL;
    int st = open_model(&s, o.resume ? (opt->model ? o.model : NULL) : (o.model ? o.model : "cnn"), o.resume);
    if (st)
        goto done;
    st = ct_net_plan(ctx, s.model, o.batch, &s.net);
    s.planned = 1;
    if (st)
        goto done;
    if (o.dry_run) {
        print_plan(&s.net);
        goto done;
    }
    const char *data = o.data ? o.data : "fashion-mnist";
    if ((st = ct_dataset_open(data, CT_SPLIT_TRAIN, &s.train)) ||
        (st = ct_dataset_open(data, CT_SPLIT_TEST, &s.test))) {
        ct_fail_keep(ctx, st);
        goto done;
    }
    limit(s.train, o.train_limit);
    limit(s.test, o.test_limit);
    if ((st = check_data(&s, s.train)))
        goto done;
    if (ct_dataset_count(s.train) < (size_t)o.batch) {
        st = ct_fail(ctx, CT_ERR_INVALID_ARG, "the batch (%d) is larger than the training set (%zu "
                     "samples)", o.batch, ct_dataset_count(s.train));
        goto done;
    }
    ct_optim_desc od;
    if ((st = optim_from(ctx, &o, &od)))
        goto done;
    if ((st = ct_net_alloc(&s.net)))
        goto done;
    size_t state_n = ct_optim_state_size(&od, s.net.nparams);
    size_t nws = ct_grad_norm_workspace_size(s.net.nparams) + 16;
    if ((state_n && (st = ct_buffer_create(ctx, state_n * sizeof(float), &state))) ||
        (st = ct_buffer_create(ctx, nws * sizeof(float), &norm_ws)))
        goto done;
    if (state_n && (st = ct_fill(ctx, (ct_buf){ state, 0 }, state_n, 0.0f)))
        goto done;
    int first_epoch = 0;
    long step = 0;
    if (o.resume) {
        const char *was = ct_st_meta(s.ckpt, "optimizer");
        if (was && strcmp(was, ct_optim_name(od.kind))) {
            st = ct_fail(ctx, CT_ERR_INVALID_ARG, "checkpoint %s was trained with %s, not %s. HINT: "
                         "pass --optimizer %s", o.resume, was, ct_optim_name(od.kind), was);
            goto done;
        }
        ct_ckpt_meta meta;
        if ((st = ct_checkpoint_load(&s.net, s.ckpt, o.resume, state, state_n, &meta)))
            goto done;
        first_epoch = meta.epoch;
        step = meta.step;
        if (!opt->seed || opt->seed == 1)
            o.seed = meta.seed;
    } else if ((st = ct_net_init_params(&s.net, o.seed))) {
        goto done;
    }
    ct_loader_options lo;
    ct_loader_defaults(&lo);
    lo.batch = (size_t)o.batch;
    lo.seed = o.seed;
    lo.drop_last = 1;
    int augment = o.augment >= 0 ? o.augment : !strncmp(data, "cifar10", 7);
    lo.crop_pad = augment ? 4 : 0;
    lo.flip = augment;
    if ((st = ct_loader_create(s.train, &lo, &ld))) {
        ct_fail_keep(ctx, st);
        goto done;
    }
    long per_epoch = (long)ct_loader_batches(ld);
    ct_lr_schedule sched;
    if ((st = schedule_from(ctx, &o, od.lr, per_epoch, &sched)))
        goto done;
    int tty = o.progress >= 0 ? o.progress : isatty(2);
    /* device accumulators of the epoch: loss sum, correct count */
    ct_buf accbuf = { NULL, 0 };
    cl_mem accmem = NULL;
    if ((st = ct_buffer_create(ctx, 4 * sizeof(float), &accmem)))
        goto done;
    accbuf.mem = accmem;
    for (int epoch = first_epoch; epoch < o.epochs && !st; epoch++) {
        double t0 = ct_now(), last_draw = 0;
        size_t seen = 0;
        float lr = 0;
        if ((st = ct_fill(ctx, accbuf, 4, 0.0f)) || (st = ct_loader_start_epoch(ld, (uint64_t)epoch)))
            break;
        /* Double-buffered batches: while step k computes from slot k % 2,
         * batch k + 1 is uploaded into the other slot on the transfer queue,
         * after the step that last read that slot (its marker) is done. */
        ct_batch b;
        cl_event wrote[2] = { NULL, NULL }, used[2] = { NULL, NULL };
        int cur = 0;
        if ((st = ct_loader_next(ld, &b)) != CT_OK)
            ct_fail_keep(ctx, st);
        else if (b.n)
            st = upload_async(&s, &b, cur, NULL, &wrote[cur]);
        while (!st && b.n) {
            step++;
            lr = ct_lr_at(&sched, step - 1);
            cl_int err = clEnqueueBarrierWithWaitList(ctx->queue, 1, &wrote[cur], NULL);
            if (err != CL_SUCCESS) {
                st = ct_cl_fail(ctx, err, "waiting for a batch upload");
                break;
            }
            ct_net_use_slot(&s.net, cur);
            if ((st = ct_net_zero_grads(&s.net)) || (st = ct_net_forward(&s.net, 1, o.seed, step)) ||
                (st = ct_net_backward(&s.net, o.seed, step)))
                break;
            if (o.clip > 0 && ((st = ct_grad_norm(ctx, (ct_buf){ norm_ws, 0 },
                                                   (ct_buf){ s.net.arena[CT_ARENA_GRADS].mem, 0 },
                                                   s.net.nparams, (ct_buf){ norm_ws, 16 })) ||
                               (st = ct_grad_clip(ctx, (ct_buf){ s.net.arena[CT_ARENA_GRADS].mem, 0 },
                                                  s.net.nparams, (ct_buf){ norm_ws, 0 }, o.clip))))
                break;
            if ((st = ct_optim_step(ctx, &od, (ct_buf){ s.net.arena[CT_ARENA_PARAMS].mem, 0 },
                                    (ct_buf){ s.net.arena[CT_ARENA_GRADS].mem, 0 }, (ct_buf){ state, 0 },
                                    s.net.arena_size[CT_ARENA_PARAMS], step, lr)))
                break;
            /* loss sum += mean loss * n; correct sum += correct */
            if ((st = ct_axpy(ctx, accbuf, (float)b.n, s.net.loss, 1)) ||
                (st = ct_add_accumulate(ctx, ct_buf_at(accbuf, 1), s.net.correct, 1)))
                break;
            if (used[cur])
                clReleaseEvent(used[cur]);
            used[cur] = NULL;
            err = clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &used[cur]);
            if (err != CL_SUCCESS) {
                st = ct_cl_fail(ctx, err, "marking a step");
                break;
            }
            size_t n = b.n;
            /* the loader may reuse b's memory at the next call: its upload must be done */
            clWaitForEvents(1, &wrote[cur]);
            clReleaseEvent(wrote[cur]);
            wrote[cur] = NULL;
            if ((st = ct_loader_next(ld, &b)) != CT_OK) {
                ct_fail_keep(ctx, st);
                break;
            }
            if (b.n && (st = upload_async(&s, &b, 1 - cur, used[1 - cur], &wrote[1 - cur])))
                break;
            cur = 1 - cur;
            seen += n;
            double now = ct_now();
            if (tty && now - last_draw > 0.5) {
                float h[2];
                if ((st = ct_buffer_read(ctx, accmem, 0, sizeof h, h)))
                    break;
                double rate = (double)seen / (now - t0);
                size_t total = (size_t)per_epoch * (size_t)o.batch;
                progress_bar(epoch + 1, o.epochs, seen, total, h[0] / (double)seen, h[1] / (double)seen,
                             rate, (double)(total - seen) / rate);
                last_draw = now;
            }
            if (o.log_every > 0 && step % o.log_every == 0 && o.log) {
                float h[2];
                if ((st = ct_buffer_read(ctx, accmem, 0, sizeof h, h)))
                    break;
                ct_epoch_report r = { epoch + 1, o.epochs, step, h[0] / (double)seen, h[1] / (double)seen,
                                      NAN, NAN, ct_now() - t0, (double)seen / (ct_now() - t0), lr };
                log_json(o.log, &r, "step");
            }
        }
        for (int k = 0; k < 2; k++) {
            if (wrote[k]) {
                clWaitForEvents(1, &wrote[k]);
                clReleaseEvent(wrote[k]);
            }
            if (used[k])
                clReleaseEvent(used[k]);
        }
        if (st)
            break;
        float h[2];
        if ((st = ct_buffer_read(ctx, accmem, 0, sizeof h, h)))
            break;
        double secs = ct_now() - t0;
        if (tty)
            fprintf(stderr, "\r%*s\r", 110, "");
        ct_epoch_report r = { epoch + 1, o.epochs, step, h[0] / (double)seen, h[1] / (double)seen, NAN,
                              NAN, secs, (double)seen / secs, lr };
        if (!isfinite(r.train_loss)) {
            st = ct_fail(ctx, CT_ERR_CORRUPT, "the training loss became %g in epoch %d (step %ld). "
                         "HINT: lower the learning rate (--lr) or clip gradients (--clip)",
                         r.train_loss, epoch + 1, step);
            break;
        }
        if (ct_dataset_count(s.test) &&
            (st = evaluate(&s, s.test, &r.test_loss, &r.test_accuracy, NULL)))
            break;
        if (o.out) {
            ct_ckpt_meta meta = { epoch + 1, step, o.seed, "", o.batch, "" };
            snprintf(meta.optimizer, sizeof meta.optimizer, "%s", ct_optim_name(od.kind));
            snprintf(meta.data, sizeof meta.data, "%s", data);
            if ((st = ct_checkpoint_save(&s.net, state, state_n, &meta, o.out)))
                break;
        }
        log_json(o.log, &r, "epoch");
        if (o.on_epoch)
            o.on_epoch(o.user, &r);
    }
    ct_buffer_release(&accmem);
done:
    ct_loader_free(&ld);
    ct_buffer_release(&state);
    ct_buffer_release(&norm_ws);
    session_free(&s);
    return st;
}

/* ---- evaluation and prediction ---- */

static int open_for_inference(session *s, const char *model, const char *weights, const char *data,
                              int batch, size_t lim)
{
    int st = open_model(s, model, weights);
    if (st)
        return st;
    if ((st = ct_dataset_open(data ? data : "fashion-mnist", CT_SPLIT_TEST, &s->test)))
        return ct_fail_keep(s->ctx, st);
    limit(s->test, lim);
    if ((st = check_data(s, s->test)))
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
    session s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    int st = open_for_inference(&s, model, weights, data, batch > 0 ? batch : 256, lim);
    if (!st)
        st = evaluate(&s, s.test, loss, accuracy, samples);
    session_free(&s);
    return st;
}

int ct_predict(ct_context *ctx, const char *model, const char *weights, const char *data, size_t count,
               int top_k)
{
    CT_VALIDATE(ctx, ctx && weights && count > 0 && top_k > 0);
    session s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    int batch = count < 256 ? (int)count : 256;
    int st = open_for_inference(&s, model, weights, data, batch, count);
    ct_loader *ld = NULL;
    float *z = NULL;
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
    const ct_lrt *lg = logits_of(&s.net);
    size_t K = lg->out_n / (size_t)batch;
    if ((size_t)top_k > K)
        top_k = (int)K;
    z = malloc(lg->out_n * sizeof *z);
    if (!z) {
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
        goto done;
    }
    for (;;) {
        ct_batch b;
        if ((st = ct_loader_next(ld, &b))) {
            ct_fail_keep(ctx, st);
            break;
        }
        if (!b.n)
            break;
        if ((st = upload(&s, &b)) || (st = ct_net_forward(&s.net, 0, 0, 0)) ||
            (st = ct_buffer_read(ctx, lg->out.mem, lg->out.off * sizeof(float), b.n * K * sizeof(float), z)))
            break;
        for (size_t r = 0; r < b.n; r++) {
            const float *x = z + r * K;
            double mx = x[0], se = 0;
            for (size_t k = 1; k < K; k++)
                mx = x[k] > mx ? x[k] : mx;
            for (size_t k = 0; k < K; k++)
                se += exp((double)x[k] - mx);
            printf("sample %zu label %d:", b.index[r], b.y[r]);
            int used[1024] = { 0 };
            for (int t = 0; t < top_k && t < 1024; t++) {
                size_t best = K;
                for (size_t k = 0; k < K && k < 1024; k++)
                    if (!used[k] && (best == K || x[k] > x[best]))
                        best = k;
                if (best == K)
                    break;
                used[best] = 1;
                printf(" %zu (%.4f)", best, exp((double)x[best] - mx) / se);
            }
            printf("\n");
        }
    }
done:
    free(z);
    ct_loader_free(&ld);
    session_free(&s);
    return st;
}
