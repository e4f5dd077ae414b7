/*
 * trainer.c - the training loop, evaluation and prediction.
 *
 * One step: the loader thread has the batch decoded; it is uploaded, the
 * gradients zeroed, forward, backward, optional clipping, one optimizer
 * kernel; the batch's loss and correct count are added to device
 * accumulators, read back only when a progress report or the epoch's end
 * needs them. Training drops the last partial batch (the net is planned
 * for one batch size); evaluation covers every sample.
 *
 * Nothing here prints: the plan, progress, epoch reports and predictions
 * reach the caller through callbacks and returned data (the CLI prints
 * them).
 *
 * Data-parallel runs (several devices, several MPI ranks) use the same
 * loop over a group of replicas (src/train/parallel.c): each replica
 * computes its rows' gradients, the group sums them, every replica takes
 * the same optimizer step. With one replica and one rank the group adds
 * nothing to the step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer.h"
#include "cltrain/data.h"
#include "cltrain/parallel.h"
#include "cltrain/train.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "nn/net.h"
#include "ops/eltwise.h"
#include "optim/optim.h"
#include "optim/schedule.h"
#include "train/checkpoint.h"
#include "train/finite.h"
#include "train/mpi.h"
#include "train/parallel.h"

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
    o->check_finite = 100;
    o->augment = -1;
    o->progress_interval = 0.5;
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

/* Passes the dry run's layer table and memory plan to o->on_plan. */
static int report_plan(ct_context *ctx, const ct_net *net, const ct_train_options *o)
{
    if (!o->on_plan)
        return CT_OK;
    const ct_model *m = net->model;
    size_t text_n = ct_net_format_plan(net, NULL, 0) + 1;
    ct_plan_layer *rows = calloc(m->count, sizeof *rows);
    char(*shapes)[64] = calloc(m->count, sizeof *shapes);
    char *text = malloc(text_n);
    if (!rows || !shapes || !text) {
        free(rows);
        free(shapes);
        free(text);
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    }
    for (size_t i = 0; i < m->count; i++) {
        const ct_layer *l = &m->layers[i];
        ct_shape_str(&l->out, shapes[i], sizeof shapes[i]);
        rows[i] = (ct_plan_layer){ l->name, l->type->name, l->inputs_text, shapes[i], l->param_count };
    }
    ct_net_format_plan(net, text, text_n);
    ct_plan_report r = { rows, m->count, m->param_count, net->batch, text };
    o->on_plan(o->user, &r);
    free(rows);
    free(shapes);
    free(text);
    return CT_OK;
}

/* Appends one JSON line to the --log file (a file the caller asked for;
 * nothing is written when it cannot be opened). */
static void log_json(const char *path, const ct_epoch_report *r, const char *kind)
{
    if (!path)
        return;
    /* room for every number at full length: %.1f of a huge rate is ~310 digits */
    char line[2048];
    int n = snprintf(line, sizeof line, "{\"event\": \"%s\", \"epoch\": %d, \"step\": %ld, \"lr\": %.8g, "
                     "\"train_loss\": %.8g, \"train_accuracy\": %.6f, \"test_loss\": %.8g, "
                     "\"test_accuracy\": %.6f, \"seconds\": %.3f, \"samples_per_second\": %.1f}\n", kind,
                     r->epoch, r->step, r->lr, r->train_loss, r->train_accuracy,
                     isnan(r->test_loss) ? -1.0 : r->test_loss, isnan(r->test_accuracy) ? -1.0 : r->test_accuracy,
                     r->seconds, r->samples_per_second);
    if (n <= 0 || (size_t)n >= sizeof line)
        return;
    FILE *f = fopen(path, "a");
    if (!f)
        return;
    fwrite(line, 1, (size_t)n, f);
    fclose(f);
}

/* ---- training ---- */

/* Uploads replica r's rows of a batch into its slot k on its transfer
 * queue, after the last step that read the slot; r->wrote[k] signals it. */
static int upload_async(ct_replica *r, const ct_batch *b, int k)
{
    ct_net *net = r->net;
    cl_command_queue q = r->ctx->transfer;
    size_t per = net->rt[0].out_n / (size_t)net->batch;
    size_t xin = r->rows * per * sizeof(float);
    cl_event after = r->used[k], x_done = NULL;
    ct_count_h2d(r->ctx, xin + r->rows * sizeof(int32_t));
    cl_int err = clEnqueueWriteBuffer(q, net->slot[k], CL_FALSE, 0, xin, b->x + r->row0 * per,
                                      after ? 1 : 0, after ? &after : NULL, &x_done);
    if (err == CL_SUCCESS) {
        err = clEnqueueWriteBuffer(q, net->slot[k], CL_FALSE, net->slot_label_off * sizeof(float),
                                   r->rows * sizeof(int32_t), b->y + r->row0, 1, &x_done, &r->wrote[k]);
        clReleaseEvent(x_done);
    }
    if (err == CL_SUCCESS)
        err = clFlush(q);
    return err == CL_SUCCESS ? CT_OK : ct_cl_fail(r->ctx, err, "uploading a batch");
}

static int upload_all(ct_group *g, const ct_batch *b, int k)
{
    for (size_t i = 0; i < g->count; i++) {
        int st = upload_async(&g->rep[i], b, k);
        if (st)
            return i ? ct_fail_keep(g->rep[0].ctx, st) : st;
    }
    return CT_OK;
}

typedef struct step_args {
    uint64_t seed;
    long step;
    int cur;
} step_args;

/* A replica's part of a step up to its gradients (on its own thread when
 * there are several): wait for its upload, forward, backward. */
static int replica_compute(ct_replica *r, void *user)
{
    const step_args *a = user;
    cl_int err = clEnqueueBarrierWithWaitList(r->ctx->queue, 1, &r->wrote[a->cur], NULL);
    if (err != CL_SUCCESS)
        return ct_cl_fail(r->ctx, err, "waiting for a batch upload");
    ct_net_use_slot(r->net, a->cur);
    int st;
    if ((st = ct_net_zero_grads(r->net)) || (st = ct_net_forward(r->net, 1, a->seed, a->step)) ||
        (st = ct_net_backward(r->net, a->seed, a->step)))
        return st;
    return CT_OK;
}

/* The rest of the step, on (reduced) gradients: clipping, the optimizer,
 * the accumulators, and the marker after which slot `cur` may be reused. */
static int replica_update(ct_replica *r, const ct_train_options *o, const ct_optim_desc *od, long step,
                          float lr, int cur)
{
    ct_context *ctx = r->ctx;
    ct_net *net = r->net;
    ct_buf grads = { net->arena[CT_ARENA_GRADS].mem, 0 }, acc = { r->acc, 0 };
    int st;
    if (o->clip > 0 && ((st = ct_grad_norm(ctx, (ct_buf){ r->norm_ws, 0 }, grads, net->nparams,
                                           (ct_buf){ r->norm_ws, 16 })) ||
                        (st = ct_grad_clip(ctx, grads, net->nparams, (ct_buf){ r->norm_ws, 0 }, o->clip))))
        return st;
    if ((st = ct_optim_step(ctx, od, (ct_buf){ net->arena[CT_ARENA_PARAMS].mem, 0 }, grads,
                            (ct_buf){ r->state, 0 }, net->arena_size[CT_ARENA_PARAMS], step, lr)))
        return st;
    /* loss sum += mean loss * rows; correct sum += correct */
    if ((st = ct_axpy(ctx, acc, (float)r->rows, net->loss, 1)) ||
        (st = ct_add_accumulate(ctx, ct_buf_at(acc, 1), net->correct, 1)))
        return st;
    if (r->used[cur])
        clReleaseEvent(r->used[cur]);
    r->used[cur] = NULL;
    cl_int err = clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &r->used[cur]);
    /* the next upload into slot `cur` waits on this marker from the transfer
     * queue, and OpenCL requires the queue holding an event that another
     * queue waits on to be flushed: rusticl submits nothing before a flush,
     * so a step that blocks on nothing (the GPU class) would leave the
     * upload, and the step after it, waiting forever */
    if (err == CL_SUCCESS)
        err = clFlush(ctx->queue);
    return err == CL_SUCCESS ? CT_OK : ct_cl_fail(ctx, err, "marking a step");
}

/* Waits for the uploads still in flight and drops the epoch's events. */
static void settle_events(ct_group *g)
{
    for (size_t i = 0; i < g->count; i++)
        for (int k = 0; k < 2; k++) {
            ct_replica *r = &g->rep[i];
            if (r->wrote[k]) {
                clWaitForEvents(1, &r->wrote[k]);
                clReleaseEvent(r->wrote[k]);
            }
            if (r->used[k])
                clReleaseEvent(r->used[k]);
            r->wrote[k] = r->used[k] = NULL;
        }
}

/* Each replica's optimizer state, gradient-norm workspace and accumulators. */
static int replica_buffers(ct_group *g, size_t state_n)
{
    for (size_t i = 0; i < g->count; i++) {
        ct_replica *r = &g->rep[i];
        size_t nws = ct_grad_norm_workspace_size(r->net->nparams) + 16;
        int st;
        if ((state_n && (st = ct_buffer_create(r->ctx, state_n * sizeof(float), &r->state))) ||
            (st = ct_buffer_create(r->ctx, nws * sizeof(float), &r->norm_ws)) ||
            (state_n && (st = ct_fill(r->ctx, (ct_buf){ r->state, 0 }, state_n, 0.0f))) ||
            (st = ct_buffer_create(r->ctx, 4 * sizeof(float), &r->acc)))
            return i ? ct_fail_keep(g->rep[0].ctx, st) : st;
    }
    return CT_OK;
}

int ct_train(ct_context *ctx, const ct_train_options *opt)
{
    CT_VALIDATE(ctx, ctx && opt);
    return ct_train_parallel(&ctx, 1, NULL, opt);
}

int ct_train_parallel(ct_context *const *ctxs, size_t count, const double *shares,
                      const ct_train_options *opt)
{
    CT_VALIDATE(NULL, ctxs && count >= 1 && ctxs[0] && opt);
    ct_context *ctx = ctxs[0];
    for (size_t i = 1; i < count; i++)
        CT_VALIDATE(ctx, ctxs[i]);
    ct_train_options o = *opt;
    if (o.epochs < 1 || o.epochs > 100000)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "epochs must be in [1, 100000], not %d", o.epochs);
    if (o.batch < 1)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "the batch must be at least 1, not %d", o.batch);
    session s;
    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    ct_group g;
    ct_loader *ld = NULL;
    ct_finite fin;
    memset(&fin, 0, sizeof fin);
    int st = ct_group_init(&g, ctxs, count, shares, (size_t)o.batch);
    int parallel = ct_group_parallel(&g), lead = g.rank == 0;
    if (st)
        goto done;
    g.rep[0].net = &s.net;
    st = open_model(&s, o.resume ? (opt->model ? o.model : NULL) : (o.model ? o.model : "cnn"), o.resume);
    if (st)
        goto done;
    st = ct_net_plan_grouped(ctx, s.model, (int)g.rep[0].rows, o.bn_groups > 1 ? o.bn_groups : 1, &s.net);
    s.planned = 1;
    if (st)
        goto done;
    if (o.dry_run) {
        if (lead)
            st = report_plan(ctx, &s.net, &o);
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
    {
        /* every rank must train the same thing, or the collectives below
         * would mix unequal buffers */
        const uint64_t facts[] = { s.net.nparams, s.net.nbuffers, (uint64_t)o.batch,
                                   ct_dataset_count(s.train), ct_dataset_count(s.test), (uint64_t)o.epochs,
                                   (uint64_t)od.kind, o.resume ? 1u : 0u };
        static const char *const names[] = { "parameter count", "running-statistics count", "batch",
                                             "training-set size", "test-set size", "epoch count",
                                             "optimizer", "resuming" };
        if ((st = ct_group_check_same(&g, ct_model_text(s.model), facts, names, CT_ARRAY_LEN(facts))))
            goto done;
    }
    if ((st = ct_net_alloc(&s.net)) || (parallel && (st = ct_group_plan(&g, s.model, o.bn_groups > 1 ? o.bn_groups : 1))))
        goto done;
    size_t state_n = ct_optim_state_size(&od, s.net.nparams);
    if ((st = replica_buffers(&g, state_n)))
        goto done;
    if ((st = ct_finite_init(&fin, &s.net, o.check_finite)))
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
        if ((st = ct_checkpoint_load(&s.net, s.ckpt, o.resume, g.rep[0].state, state_n, &meta)))
            goto done;
        first_epoch = meta.epoch;
        step = meta.step;
        ct_finite_saved(&fin, o.resume, meta.epoch, meta.step, 1);
        if (!opt->seed || opt->seed == 1)
            o.seed = meta.seed;
    } else if ((st = ct_net_init_params(&s.net, o.seed))) {
        goto done;
    }
    if (parallel) {
        /* rank 0's start everywhere: the same parameters, state and counters */
        int64_t at[3] = { first_epoch, step, (int64_t)o.seed };
        if ((st = ct_mpi_bcast(ctx, at, sizeof at)) || (st = ct_group_broadcast(&g, state_n)))
            goto done;
        first_epoch = (int)at[0];
        step = at[1];
        o.seed = (uint64_t)at[2];
    }
    ct_loader_options lo;
    ct_loader_defaults(&lo);
    lo.batch = g.local;
    lo.seed = o.seed;
    lo.drop_last = 1;
    if (g.world > 1) {
        lo.rank = g.rank;
        lo.world = g.world;
        lo.shard_block = g.local;
        lo.even_shards = 1;
    }
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
    int report = lead && o.on_progress;
    size_t total = (size_t)per_epoch * (size_t)o.batch;
    for (int epoch = first_epoch; epoch < o.epochs && !st; epoch++) {
        double t0 = ct_now(), last_draw = 0;
        size_t seen = 0;
        float lr = 0;
        for (size_t i = 0; i < g.count && !st; i++)
            if ((st = ct_fill(g.rep[i].ctx, (ct_buf){ g.rep[i].acc, 0 }, 4, 0.0f)) && i)
                ct_fail_keep(ctx, st);
        if (st || (st = ct_loader_start_epoch(ld, (uint64_t)epoch)))
            break;
        /* Double-buffered batches: while step k computes from slot k % 2,
         * batch k + 1 is uploaded into the other slot on the transfer queue,
         * after the step that last read that slot (its marker) is done. */
        ct_batch b;
        int cur = 0;
        if ((st = ct_loader_next(ld, &b)) != CT_OK)
            ct_fail_keep(ctx, st);
        else if (b.n)
            st = upload_all(&g, &b, cur);
        while (!st && b.n) {
            step++;
            lr = ct_lr_at(&sched, step - 1);
            /* forward and backward on every replica; with several, the
             * gradients are summed and every replica gets the sum */
            step_args a = { o.seed, step, cur };
            if ((st = ct_group_step(&g, replica_compute, &a, parallel)) ||
                (st = ct_finite_step(&fin, &s.net, o.seed, step, epoch + 1)))
                break;
            for (size_t i = 0; i < g.count && !st; i++)
                if ((st = replica_update(&g.rep[i], &o, &od, step, lr, cur)) && i)
                    ct_fail_keep(ctx, st);
            if (st)
                break;
            /* the loader may reuse b's memory at the next call: its uploads must be done */
            for (size_t i = 0; i < g.count && !st; i++) {
                st = ct_event_wait(g.rep[i].ctx, g.rep[i].wrote[cur], "waiting for a batch upload");
                clReleaseEvent(g.rep[i].wrote[cur]);
                g.rep[i].wrote[cur] = NULL;
            }
            if (st) {
                if (g.count > 1)
                    ct_fail_keep(ctx, st);
                break;
            }
            if ((st = ct_loader_next(ld, &b)) != CT_OK) {
                ct_fail_keep(ctx, st);
                break;
            }
            if (b.n && (st = upload_all(&g, &b, 1 - cur)))
                break;
            cur = 1 - cur;
            seen += g.batch;
            double now = ct_now(), h[2];
            if (report && now - last_draw > o.progress_interval) {
                /* this rank's samples only: no collective at a time-based moment */
                size_t mine = seen / (size_t)g.world;
                if ((st = ct_group_totals(&g, 0, &h[0], &h[1])))
                    break;
                double rate = (double)seen / (now - t0);
                ct_progress p = { epoch + 1, o.epochs, seen, total, h[0] / (double)mine, h[1] / (double)mine,
                                  rate, (double)(total - seen) / rate, 0 };
                o.on_progress(o.user, &p);
                last_draw = now;
            }
            if (o.log_every > 0 && step % o.log_every == 0 && o.log) {
                if ((st = ct_group_totals(&g, 1, &h[0], &h[1])))
                    break;
                ct_epoch_report r = { epoch + 1, o.epochs, step, h[0] / (double)seen, h[1] / (double)seen,
                                      NAN, NAN, ct_now() - t0, (double)seen / (ct_now() - t0), lr };
                if (lead)
                    log_json(o.log, &r, "step");
            }
        }
        settle_events(&g);
        if (st)
            break;
        double h[2];
        if ((st = ct_group_totals(&g, 1, &h[0], &h[1])))
            break;
        double secs = ct_now() - t0;
        ct_epoch_report r = { epoch + 1, o.epochs, step, h[0] / (double)seen, h[1] / (double)seen, NAN,
                              NAN, secs, (double)seen / secs, lr };
        if (report) {
            ct_progress p = { epoch + 1, o.epochs, seen, total, r.train_loss, r.train_accuracy,
                              r.samples_per_second, 0, 1 };
            o.on_progress(o.user, &p);
        }
        if (parallel && (st = ct_group_average_buffers(&g)))
            break;
        if ((st = ct_finite_epoch(&fin, &s.net, o.seed, r.train_loss, step, epoch + 1)))
            break;
        if (!lead)
            continue; /* evaluation, checkpoints and reports: rank 0 */
        if (ct_dataset_count(s.test) &&
            (st = evaluate(&s, s.test, &r.test_loss, &r.test_accuracy, NULL)))
            break;
        if (o.out) {
            ct_ckpt_meta meta = { epoch + 1, step, o.seed, "", o.batch, "" };
            snprintf(meta.optimizer, sizeof meta.optimizer, "%s", ct_optim_name(od.kind));
            snprintf(meta.data, sizeof meta.data, "%s", data);
            if ((st = ct_checkpoint_save(&s.net, g.rep[0].state, state_n, &meta, o.out)))
                break;
            ct_finite_saved(&fin, o.out, epoch + 1, step, 0);
        }
        log_json(o.log, &r, "epoch");
        if (o.on_epoch)
            o.on_epoch(o.user, &r);
    }
done:
    ct_finite_release(&fin);
    ct_loader_free(&ld);
    ct_group_free(&g);
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

void ct_predictions_free(ct_predictions *p)
{
    if (!p)
        return;
    free(p->index);
    free(p->label);
    free(p->classes);
    free(p->probability);
    memset(p, 0, sizeof *p);
}

int ct_predict(ct_context *ctx, const char *model, const char *weights, const char *data, size_t count,
               int top_k, ct_predictions *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    CT_VALIDATE(ctx, ctx && weights && count > 0 && top_k > 0 && out);
    session s;
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
    const ct_lrt *lg = logits_of(&s.net);
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
            size_t at = out->count++;
            out->index[at] = b.index[r];
            out->label[at] = b.y[r];
            /* the k most probable by repeated scans: k is small */
            memset(used, 0, K);
            for (size_t t = 0; t < k_n; t++) {
                size_t best = K;
                for (size_t k = 0; k < K; k++)
                    if (!used[k] && (best == K || x[k] > x[best]))
                        best = k;
                used[best] = 1;
                out->classes[at * k_n + t] = (int)best;
                out->probability[at * k_n + t] = exp((double)x[best] - mx) / se;
            }
        }
    }
done:
    free(used);
    free(z);
    ct_loader_free(&ld);
    session_free(&s);
    if (st)
        ct_predictions_free(out);
    return st;
}
