/*
 * trainer.c - the training loop (evaluation and prediction: infer.c).
 *
 * One step: the loader thread has the batch decoded; it is uploaded, the
 * gradients zeroed, forward, backward, optional clipping, one optimizer
 * kernel; the batch's loss and correct count (regression: its mean
 * absolute error) are added to device accumulators, read back only when a
 * progress report or the epoch's end needs them. Training drops the last partial batch (the net is planned
 * for one batch size); evaluation covers every sample.
 *
 * Gradient accumulation (accumulate K > 1): a step is K micro-batches of
 * the planned batch, forward and backward each, the backwards adding into
 * the gradients (which only the first finds zeroed) with the loss gradient
 * scaled by 1/K; then one reduction, check, clipping and optimizer pass.
 * Steps, the schedule and the reports count optimizer steps.
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

#include "cltrain/data.h"
#include "cltrain/parallel.h"
#include "cltrain/train.h"
#include "cltrain/tune.h"
#include "data/dataset.h"
#include "data/loader.h"
#include "nn/layer.h"
#include "nn/net.h"
#include "ops/eltwise.h"
#include "optim/optim.h"
#include "optim/schedule.h"
#include "train/finetune.h"
#include "train/checkpoint.h"
#include "train/finite.h"
#include "train/options.h"
#include "train/scaler.h"
#include "train/jsonlog.h"
#include "train/mpi.h"
#include "train/parallel.h"
#include "train/session.h"
#include "train/tboard.h"
#include "train/verify.h"

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

/* ---- training ---- */

/* Uploads replica r's rows of a batch into its slot k on its transfer
 * queue, after the last step that read the slot; r->wrote[k] signals it.
 * Images and tables: its rows (their labels, or K float targets each).
 * Text: its columns [row0, row0 + rows) of the (T, N) block of token ids,
 * T rows of `rows` ids one block row apart, which land as its own (T,
 * rows) block; a language model's labels (a label per token, (T, N) too)
 * the same way, a classifier's (a label per text) as a run. */
static int upload_async(ct_replica *r, const ct_batch *b, int k)
{
    ct_net *net = r->net;
    size_t per = net->rt[0].out_n / (size_t)net->batch, id = sizeof(int32_t);
    ct_slot_part x, y = { ct_batch_labels(b, r->row0), r->rows * id, 1, 0 };
    if (b->tokens) {
        x = (ct_slot_part){ b->tokens + r->row0, r->rows * id, b->seq, b->stride * id };
        if (net->label_n > (size_t)net->batch)
            y = (ct_slot_part){ b->y + r->row0, r->rows * id, b->seq, b->stride * id };
    } else {
        x = (ct_slot_part){ b->x + r->row0 * per, r->rows * per * sizeof(float), 1, 0 };
        y.width = b->t ? r->rows * b->ntargets * sizeof(float) : r->rows * b->label_per * id;
    }
    return ct_slot_upload(r->ctx, net, k, &x, &y, r->used[k], &r->wrote[k]);
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
    size_t offset;         /* the micro-batch's first row in the optimizer step's batch */
} step_args;

/* A replica's part of a micro-batch up to its gradients (on its own thread
 * when there are several): wait for its upload, forward, backward. The
 * first micro-batch of a step starts from zero gradients (which the last
 * optimizer pass left, ct_optim_step_zero_grads); the others add to them,
 * as parameter gradients accumulate (+=) in every backward. */
static int replica_compute(ct_replica *r, void *user)
{
    const step_args *a = user;
    cl_int err = clEnqueueBarrierWithWaitList(r->ctx->queue, 1, &r->wrote[a->cur], NULL);
    if (err != CL_SUCCESS)
        return ct_cl_fail(r->ctx, err, "waiting for a batch upload");
    ct_net_use_slot(r->net, a->cur);
    r->net->row_base = a->offset + r->base;
    int st;
    if ((a->offset == 0 && (st = ct_net_zero_grads(r->net))) ||
        (st = ct_net_forward(r->net, 1, a->seed, a->step)) || (st = ct_net_backward(r->net, a->seed, a->step)))
        return st;
    return CT_OK;
}

/* --freeze: the parameter arena's trainable and frozen ranges, (offset,
 * count) pairs (ntrain 0: no --freeze, the whole arena trains) */
typedef struct freeze_plan {
    size_t *train, ntrain, *frozen, nfrozen;
} freeze_plan;

/* The rest of the step, on (reduced) gradients: clipping and the optimizer. */
static int replica_update(ct_replica *r, const ct_train_options *o, const ct_optim_desc *od,
                          const freeze_plan *fz, long step, float lr)
{
    ct_context *ctx = r->ctx;
    ct_net *net = r->net;
    ct_buf grads = { net->arena[CT_ARENA_GRADS].mem, 0 };
    int st;
    /* frozen layers: their gradients are zero, so that clipping's norm
     * leaves them out and the next backward starts from zero */
    for (size_t k = 0; k < fz->nfrozen; k++)
        if ((st = ct_fill(ctx, ct_buf_at(grads, fz->frozen[2 * k]), fz->frozen[2 * k + 1], 0.0f)))
            return st;
    if (o->clip > 0 && ((st = ct_grad_norm(ctx, (ct_buf){ r->norm_ws, 0 }, grads, net->nparams,
                                           (ct_buf){ r->norm_ws, 16 })) ||
                        (st = ct_grad_clip(ctx, grads, net->nparams, (ct_buf){ r->norm_ws, 0 }, o->clip))))
        return st;
    /* the gradients are zeroed with the step, for the next one (the
     * non-finite check has read them already, ct_finite_step) */
    ct_buf params = { net->arena[CT_ARENA_PARAMS].mem, 0 }, state = { r->state, 0 };
    size_t total = net->arena_size[CT_ARENA_PARAMS];
    if (!fz->ntrain && !fz->nfrozen) {
        if ((st = ct_optim_step_zero_grads(ctx, od, params, grads, state, total, step, lr)))
            return st;
    }
    for (size_t k = 0; k < fz->ntrain; k++)
        if ((st = ct_optim_step_range(ctx, od, params, grads, state, total, fz->train[2 * k], fz->train[2 * k + 1],
                                      step, lr)))
            return st;
    net->grads_zero = 1;
    return CT_OK;
}

/* After every micro-batch: its loss and correct count into the
 * accumulators, and the marker after which slot `cur` may be reused. */
static int replica_account(ct_replica *r, int cur)
{
    ct_context *ctx = r->ctx;
    ct_net *net = r->net;
    ct_buf acc = { r->acc, 0 };
    int st;
    /* loss sum += mean loss * rows; correct sum += correct (regression:
     * absolute error sum += mean absolute error * rows) */
    if ((st = ct_axpy(ctx, acc, (float)r->rows, net->loss, 1)) ||
        (st = ct_session_regression(net->model)
                  ? ct_axpy(ctx, ct_buf_at(acc, 1), (float)r->rows, net->correct, 1)
                  : ct_add_accumulate_f32(ctx, ct_buf_at(acc, 1), net->correct, 1)))
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
        ct_slot_events_settle(g->rep[i].wrote, g->rep[i].used);
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

/* One training run: what its steps below share. */
typedef struct run {
    ct_train_options o;        /* the caller's, with the seed a resumed run keeps */
    const ct_train_options *given;
    ct_context *ctx;           /* the first replica's: errors are reported there */
    ct_session s;              /* the model and the first replica's net */
    ct_group g;                /* the replicas (one per device, per rank) */
    const char *data;
    ct_optim_desc od;
    size_t state_n;            /* floats of optimizer state */
    ct_finite fin;
    ct_scaler sc;              /* fp16's loss scale */
    float resume_scale;        /* a resumed checkpoint's loss scale, or 0 */
    ct_loader *ld;
    ct_lr_schedule sched;
    long per_epoch;            /* optimizer steps */
    int accum;                 /* K: micro-batches (of o.batch rows) per optimizer step */
    int parallel, lead;        /* several replicas or ranks; this is rank 0 */
    int first_epoch;
    long step;
    int tokens;                /* language-model data: tokens (labels) per sample; else 0 */
    int labels_per;            /* labels per sample: 1, T (language models) or H W (a label per pixel) */
    int precision;             /* ct_precision of the matrix products */
    int byte_tokens;
    int regression;            /* the model ends in mse: RMSE and MAE in place of accuracy */
    char *tokens_json, *classes_json; /* what checkpoints keep of text data */
    char *norm_json;                  /* ... and of image and table data's normalization */
    ct_tboard tb;              /* the TensorBoard event file (rank 0, with o.tensorboard) */
    freeze_plan fz;            /* --freeze */
} run;

/* K: the option, else a resumed checkpoint's (1 for one without); a
 * resumed run keeps the K it was trained with, as it keeps its optimizer. */
static int resolve_accumulate(run *t)
{
    const ct_train_options *o = &t->o;
    int was = 1, st;
    if (o->resume && (st = ct_checkpoint_accumulate(t->ctx, t->s.ckpt, o->resume, &was)))
        return st;
    t->accum = o->accumulate ? o->accumulate : was;
    if (o->resume && t->accum != was)
        return ct_fail(t->ctx, CT_ERR_INVALID_ARG, "checkpoint %s was trained with %d micro-batch%s per step, "
                       "not %d. HINT: pass --accumulate %d, or leave it out", o->resume, was, was > 1 ? "es" : "",
                       t->accum, was);
    return CT_OK;
}

/* The products' precision: the option, else a resumed checkpoint's (fp32
 * for one without), on every replica's context. */
static int resolve_precision(run *t)
{
    const ct_train_options *o = &t->o;
    int was = CT_PRECISION_FP32, st;
    if (o->resume && (st = ct_checkpoint_precision(t->ctx, t->s.ckpt, o->resume, &was)))
        return st;
    t->precision = o->precision >= 0 ? o->precision : was;
    if (o->resume && (st = ct_checkpoint_loss_scale(t->ctx, t->s.ckpt, o->resume, &t->resume_scale)))
        return st;
    for (size_t i = 0; i < t->g.count; i++)
        if ((st = ct_context_set_precision(t->g.rep[i].ctx, (ct_precision)t->precision)) ||
            (st = ct_net_choose_storage(t->g.rep[i].ctx, t->s.model, NULL)))
            return i ? ct_fail_keep(t->ctx, st) : st;
    return CT_OK;
}

/* The replicas, the model (or the checkpoint's) and the first replica's plan. */
static int open_and_plan(run *t, ct_context *const *ctxs, size_t count, const double *shares)
{
    const ct_train_options *o = &t->o;
    int st = ct_group_init(&t->g, ctxs, count, shares, (size_t)o->batch);
    t->parallel = ct_group_parallel(&t->g);
    t->lead = t->g.rank == 0;
    if (st)
        return st;
    t->g.rep[0].net = &t->s.net;
    st = ct_session_open_model(&t->s, o->resume ? (t->given->model ? o->model : NULL)
                                                 : (o->model ? o->model : "cnn"), o->resume);
    /* the products' precision and the activation storage come before the plan */
    if (st || (st = resolve_accumulate(t)) || (st = resolve_precision(t)))
        return st;
    st = ct_net_plan_grouped(t->ctx, t->s.model, (int)t->g.rep[0].rows, o->bn_groups > 1 ? o->bn_groups : 1,
                             &t->s.net);
    t->s.planned = 1;
    return st;
}

/* Both splits, checked against the model, and the optimizer. */
static int open_data(run *t)
{
    const ct_train_options *o = &t->o;
    int st;
    t->data = o->data ? o->data : "fashion-mnist";
    if ((st = ct_session_open_data(&t->s, t->data, CT_SPLIT_TRAIN, NULL, &t->s.train)) ||
        (st = ct_session_open_data(&t->s, t->data, CT_SPLIT_TEST, NULL, &t->s.test)))
        return st;
    ct_session_limit(t->s.train, o->train_limit);
    ct_session_limit(t->s.test, o->test_limit);
    t->regression = ct_session_regression(t->s.model);
    t->s.threads = ct_session_threads(o->loader_threads);
    if ((st = ct_session_train_norm(&t->s, o->resume)))
        return st;
    if ((st = ct_session_check_data(&t->s, t->s.train)) ||
        (t->regression && (st = ct_session_check_data(&t->s, t->s.test))))
        return st;
    t->tokens_json = ct_session_tokens_json(t->s.train);
    t->classes_json = ct_session_classes_json(t->s.train);
    t->norm_json = ct_session_norm_json(t->s.train);
    if ((!ct_dataset_seq(t->s.train) && !t->norm_json) || (ct_dataset_tokenizer(t->s.train) && !t->tokens_json) ||
        (ct_dataset_class_name(t->s.train, 0) && !t->classes_json))
        return ct_fail(t->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    t->labels_per = ct_dataset_labels_per_sample(t->s.train);
    if (t->labels_per > 1 && ct_dataset_seq(t->s.train)) {
        t->tokens = ct_dataset_seq(t->s.train);
        t->byte_tokens = ct_tokenizer_kind(ct_dataset_tokenizer(t->s.train)) == CT_TOKENS_BYTE;
    }
    if (ct_dataset_count(t->s.train) < (size_t)o->batch)
        return ct_fail(t->ctx, CT_ERR_INVALID_ARG, "the batch (%d) is larger than the training set (%zu "
                       "samples)", o->batch, ct_dataset_count(t->s.train));
    if (ct_dataset_count(t->s.train) / (size_t)o->batch < (size_t)t->accum)
        return ct_fail(t->ctx, CT_ERR_INVALID_ARG, "%d micro-batches of %d per step take %zu samples, more than "
                       "the training set's %zu. HINT: lower --accumulate or --batch", t->accum, o->batch,
                       (size_t)t->accum * (size_t)o->batch, ct_dataset_count(t->s.train));
    return optim_from(t->ctx, o, &t->od);
}

/* Each replica's device verified for the model's ops (train/verify.c),
 * each result passed to on_verify. */
static int verify_devices(run *t)
{
    for (size_t i = 0; i < t->g.count; i++) {
        ct_verify_result r;
        int st = ct_verify_model(t->g.rep[i].ctx, t->s.model, t->o.verify, &r);
        if (st)
            return i ? ct_fail_keep(t->ctx, st) : st;
        if (t->lead && t->o.on_verify && r.mode != CT_VERIFY_OFF)
            t->o.on_verify(t->o.user, t->g.rep[i].ctx, &r);
        /* tuned choices imported from elsewhere are checked here before their first use */
        if ((st = ct_tune_check_imported(t->g.rep[i].ctx, NULL, NULL)))
            return i ? ct_fail_keep(t->ctx, st) : st;
    }
    return CT_OK;
}

/* Every rank must train the same thing, or the collectives would mix
 * unequal buffers. */
static int agree_across_ranks(run *t)
{
    const uint64_t facts[] = { t->s.net.nparams, t->s.net.nbuffers, (uint64_t)t->o.batch,
                               ct_dataset_count(t->s.train), ct_dataset_count(t->s.test), (uint64_t)t->o.epochs,
                               (uint64_t)t->od.kind, t->o.resume ? 1u : 0u, (uint64_t)t->accum };
    static const char *const names[] = { "parameter count", "running-statistics count", "batch",
                                         "training-set size", "test-set size", "epoch count",
                                         "optimizer", "resuming", "micro-batches per step (--accumulate)" };
    return ct_group_check_same(&t->g, ct_model_text(t->s.model), facts, names, CT_ARRAY_LEN(facts));
}

/* The nets' memory, each replica's optimizer state and accumulators, and
 * the non-finite check's. */
static int allocate(run *t)
{
    int st;
    if ((st = ct_net_alloc(&t->s.net)) ||
        (t->parallel && (st = ct_group_plan(&t->g, t->s.model, t->o.bn_groups > 1 ? t->o.bn_groups : 1))))
        return st;
    t->state_n = ct_optim_state_size(&t->od, t->s.net.nparams);
    if ((st = replica_buffers(&t->g, t->state_n)))
        return st;
    /* each micro-batch's mean loss weighs 1/K: the K gradients add up to
     * the gradient of the mean over the step's K batches (times fp16's
     * loss scale, ct_scaler_arm at each step) */
    if ((st = ct_scaler_init(&t->sc, t->ctx, t->precision == CT_PRECISION_FP16,
                             t->o.loss_scale > 0 ? t->o.loss_scale : t->resume_scale,
                             t->s.net.arena_size[CT_ARENA_GRADS])))
        return st;
    ct_scaler_arm(&t->sc, &t->g, t->accum);
    return ct_finite_init(&t->fin, &t->s.net, t->o.check_finite);
}

/* The parameters: the checkpoint's (with its optimizer state, counters and
 * seed) or fresh ones; then rank 0's everywhere. */
static int start_state(run *t)
{
    ct_train_options *o = &t->o;
    int st;
    if (o->resume) {
        const char *was = ct_st_meta(t->s.ckpt, "optimizer");
        if (was && strcmp(was, ct_optim_name(t->od.kind)))
            return ct_fail(t->ctx, CT_ERR_INVALID_ARG, "checkpoint %s was trained with %s, not %s. HINT: "
                           "pass --optimizer %s", o->resume, was, ct_optim_name(t->od.kind), was);
        ct_ckpt_meta meta;
        if ((st = ct_checkpoint_load(&t->s.net, t->s.ckpt, o->resume, t->g.rep[0].state, t->state_n, &meta)))
            return st;
        t->first_epoch = meta.epoch;
        t->step = meta.step;
        ct_finite_saved(&t->fin, o->resume, meta.epoch, meta.step, 1);
        if (!t->given->seed || t->given->seed == 1)
            o->seed = meta.seed;
    } else if ((st = ct_net_init_params(&t->s.net, o->seed)) || (o->init && (st = ct_finetune_init(&t->s.net, o->init)))) {
        return st;
    }
    if (o->freeze && (st = ct_finetune_ranges(&t->s.net, o->freeze, &t->fz.train, &t->fz.ntrain, &t->fz.frozen,
                                              &t->fz.nfrozen)))
        return st;
    if (!t->parallel)
        return CT_OK;
    /* rank 0's start everywhere: the same parameters, state and counters */
    int64_t at[3] = { t->first_epoch, t->step, (int64_t)o->seed };
    if ((st = ct_mpi_bcast(t->ctx, at, sizeof at)) || (st = ct_group_broadcast(&t->g, t->state_n)))
        return st;
    t->first_epoch = (int)at[0];
    t->step = at[1];
    o->seed = (uint64_t)at[2];
    return CT_OK;
}

/* The loader of this rank's share of the training split, and the schedule. */
static int make_loader(run *t)
{
    const ct_train_options *o = &t->o;
    ct_loader_options lo;
    ct_loader_defaults(&lo);
    lo.batch = t->g.local;
    lo.seed = o->seed;
    lo.drop_last = 1;
    if (t->g.world > 1) {
        lo.rank = t->g.rank;
        lo.world = t->g.world;
        lo.shard_block = t->g.local;
        lo.even_shards = 1;
    }
    int augment = o->augment >= 0 ? o->augment : !strncmp(t->data, "cifar10", 7);
    lo.crop_pad = augment ? 4 : 0;
    lo.flip = augment;
    lo.threads = t->s.threads;
    int st = ct_loader_create(t->s.train, &lo, &t->ld);
    if (st)
        return ct_fail_keep(t->ctx, st);
    /* the last micro-batches that make no whole step are dropped, as a
     * batch of K times the rows drops its partial last batch */
    t->per_epoch = (long)(ct_loader_batches(t->ld) / (size_t)t->accum);
    return schedule_from(t->ctx, o, t->od.lr, t->per_epoch, &t->sched);
}

/* An epoch report (no test figures yet) from the device totals h over
 * `seen` samples: loss and correct count, or for regression the sums of the
 * mean squared and mean absolute errors of each sample. */
static ct_epoch_report make_report(const run *t, int epoch, size_t seen, const double h[2], double secs,
                                   float lr)
{
    ct_epoch_report r = { epoch + 1, t->o.epochs, t->step, h[0] / (double)seen,
                          h[1] / ((double)seen * t->labels_per), NAN, NAN, secs,
                          (double)seen / secs, lr, t->tokens, t->byte_tokens, t->regression,
                          NAN, NAN, NAN, NAN, t->sc.on ? t->sc.scale : 0.0f, 0, 0, ct_session_skipped(&t->s, t->ld, -1), t->s.norm_images,
                          ct_group_exposed_ms(&t->g) };
    if (t->regression) {
        r.train_rmse = sqrt(r.train_loss);
        r.train_mae = r.train_accuracy;
        r.train_accuracy = NAN;
    }
    return r;
}

/* Reports progress (at most every progress_interval) and the --log step lines. */
static int report_step(run *t, int epoch, size_t seen, float lr, double t0, double *last_draw)
{
    const ct_train_options *o = &t->o;
    size_t total = (size_t)t->per_epoch * (size_t)t->accum * (size_t)o->batch;
    double now = ct_now(), h[2];
    int st;
    if (t->lead && o->on_progress && now - *last_draw > o->progress_interval) {
        /* this rank's samples only: no collective at a time-based moment */
        size_t mine = seen / (size_t)t->g.world;
        if ((st = ct_group_totals(&t->g, 0, &h[0], &h[1])))
            return st;
        double rate = (double)seen / (now - t0);
        ct_progress p = { epoch + 1, o->epochs, seen, total, h[0] / (double)mine,
                          h[1] / ((double)mine * t->labels_per), rate,
                          (double)(total - seen) / rate, 0, t->regression, NAN, NAN };
        if (t->regression) {
            p.rmse = sqrt(p.loss);
            p.mae = p.accuracy;
            p.accuracy = NAN;
        }
        o->on_progress(o->user, &p);
        *last_draw = now;
    }
    if (o->log_every > 0 && t->step % o->log_every == 0 && o->log) {
        if ((st = ct_group_totals(&t->g, 1, &h[0], &h[1])))
            return st;
        ct_epoch_report r = make_report(t, epoch, seen, h, ct_now() - t0, lr);
        if (t->lead)
            ct_log_json(o->log, &r, "step");
    }
    return CT_OK;
}

/* One epoch's steps, each of K micro-batches (K = 1: one batch).
 * Double-buffered batches: while micro-batch k computes from slot k % 2,
 * micro-batch k + 1 is uploaded into the other slot on the transfer queue,
 * after the micro-batch that last read that slot (its marker) is done. The
 * gradients of a step's micro-batches add up on each replica; only the
 * last one's are reduced over the replicas and ranks, checked, clipped and
 * applied. */
static int run_epoch(run *t, int epoch, size_t *seen, float *lr, double t0)
{
    ct_group *g = &t->g;
    ct_context *ctx = t->ctx;
    double last_draw = 0;
    int st = CT_OK;
    for (size_t i = 0; i < g->count && !st; i++)
        if ((st = ct_fill(g->rep[i].ctx, (ct_buf){ g->rep[i].acc, 0 }, 4, 0.0f)) && i)
            ct_fail_keep(ctx, st);
    if (st || (st = ct_loader_start_epoch(t->ld, (uint64_t)epoch)))
        return st;
    ct_batch b;
    int cur = 0, micro = 0;
    size_t left = (size_t)t->per_epoch * (size_t)t->accum; /* micro-batches of whole steps */
    if ((st = ct_loader_next(t->ld, &b)) != CT_OK)
        ct_fail_keep(ctx, st);
    else if (b.n)
        st = upload_all(g, &b, cur);
    while (!st && b.n && left) {
        int last = micro == t->accum - 1, skip = 0;
        if (micro == 0) {
            ++t->step;
            *lr = ct_lr_at(&t->sched, t->step - 1);
            ct_scaler_arm(&t->sc, g, t->accum);
        }
        long step = t->step;
        /* forward and backward on every replica; at a step's last
         * micro-batch, with several replicas or ranks, the gradients are
         * summed and every replica gets the sum */
        step_args a = { t->o.seed, step, cur, (size_t)micro * g->batch };
        if ((st = ct_group_step(g, replica_compute, &a, t->parallel && last)) ||
            (last && (st = ct_scaler_check(&t->sc, g, step, &skip))) ||
            (last && (st = ct_finite_step(&t->fin, &t->s.net, t->o.seed, step, epoch + 1))))
            break;
        for (size_t i = 0; i < g->count && !st; i++) {
            if (last && skip)
                g->rep[i].net->grads_zero = 1; /* the scaler zeroed them: no update */
            else if (last)
                st = replica_update(&g->rep[i], &t->o, &t->od, &t->fz, step, *lr);
            if (!st)
                st = replica_account(&g->rep[i], cur);
            if (st && i)
                ct_fail_keep(ctx, st);
        }
        if (st)
            break;
        /* the loader may reuse b's memory at the next call: its uploads must be done */
        for (size_t i = 0; i < g->count && !st; i++) {
            st = ct_event_wait(g->rep[i].ctx, g->rep[i].wrote[cur], "waiting for a batch upload");
            clReleaseEvent(g->rep[i].wrote[cur]);
            g->rep[i].wrote[cur] = NULL;
        }
        if (st) {
            if (g->count > 1)
                ct_fail_keep(ctx, st);
            break;
        }
        if (--left && (st = ct_loader_next(t->ld, &b)) != CT_OK) {
            ct_fail_keep(ctx, st);
            break;
        }
        if (left && b.n && (st = upload_all(g, &b, 1 - cur)))
            break;
        cur = 1 - cur;
        *seen += g->batch;
        micro = last ? 0 : micro + 1;
        if (last) {
            ct_tboard_step(&t->tb, g, step, *seen / (size_t)g->world);
            st = report_step(t, epoch, *seen, *lr, t0, &last_draw);
        }
    }
    settle_events(g);
    return st;
}

/* The epoch's totals and report, the replicas' running statistics made
 * one, the non-finite check, and on rank 0 the evaluation, checkpoint and
 * reports. */
static int finish_epoch(run *t, int epoch, size_t seen, float lr, double t0)
{
    const ct_train_options *o = &t->o;
    double h[2];
    int st;
    if ((st = ct_group_totals(&t->g, 1, &h[0], &h[1])))
        return st;
    double secs = ct_now() - t0;
    ct_epoch_report r = make_report(t, epoch, seen, h, secs, lr);
    r.skipped_steps = ct_scaler_epoch(&t->sc, &r.first_skipped);
    if (t->lead && o->on_progress) {
        ct_progress p = { epoch + 1, o->epochs, seen, (size_t)t->per_epoch * (size_t)t->accum * (size_t)o->batch,
                          r.train_loss,
                          r.train_accuracy, r.samples_per_second, 0, 1, t->regression, r.train_rmse,
                          r.train_mae };
        o->on_progress(o->user, &p);
    }
    if (t->parallel && (st = ct_group_average_buffers(&t->g)))
        return st;
    if ((st = ct_finite_epoch(&t->fin, &t->s.net, o->seed, r.train_loss, t->step, epoch + 1)))
        return st;
    if (!t->lead)
        return CT_OK; /* evaluation, checkpoints and reports: rank 0 */
    if (ct_dataset_count(t->s.test) && t->regression) {
        if ((st = ct_session_evaluate_targets(&t->s, t->s.test, &r.test_loss, &r.test_mae, NULL)))
            return st;
        r.test_rmse = sqrt(r.test_loss);
    } else if (ct_dataset_count(t->s.test) &&
               (st = ct_session_evaluate(&t->s, t->s.test, &r.test_loss, &r.test_accuracy, NULL))) {
        return st;
    }
    if (o->out) {
        ct_ckpt_meta meta = { epoch + 1, t->step, o->seed, "", o->batch, "", t->tokens_json, t->classes_json,
                              t->norm_json, t->accum, t->precision, t->sc.on ? t->sc.scale : 0.0f };
        snprintf(meta.optimizer, sizeof meta.optimizer, "%s", ct_optim_name(t->od.kind));
        snprintf(meta.data, sizeof meta.data, "%s", t->data);
        if ((st = ct_checkpoint_save(&t->s.net, t->g.rep[0].state, t->state_n, &meta, o->out)))
            return st;
        ct_finite_saved(&t->fin, o->out, epoch + 1, t->step, 0);
    }
    ct_session_skipped(&t->s, t->ld, epoch + 1);
    ct_log_json(o->log, &r, "epoch");
    ct_tboard_epoch(&t->tb, &t->g, &t->s.net, &r);
    if (o->on_epoch)
        o->on_epoch(o->user, &r);
    return CT_OK;
}

int ct_train_parallel(ct_context *const *ctxs, size_t count, const double *shares,
                      const ct_train_options *opt)
{
    CT_VALIDATE(NULL, ctxs && count >= 1 && ctxs[0] && opt);
    for (size_t i = 1; i < count; i++)
        CT_VALIDATE(ctxs[0], ctxs[i]);
    int st = ct_train_options_check(ctxs[0], opt);
    if (st)
        return st;
    run t;
    memset(&t, 0, sizeof t);
    t.o = *opt;
    t.given = opt;
    t.ctx = t.s.ctx = ctxs[0];
    if ((st = open_and_plan(&t, ctxs, count, shares)))
        goto done;
    if (t.o.dry_run) {
        if (t.lead)
            st = report_plan(t.ctx, &t.s.net, &t.o);
        goto done;
    }
    if ((st = verify_devices(&t)) || (st = open_data(&t)) || (st = agree_across_ranks(&t)) || (st = allocate(&t)) ||
        (st = start_state(&t)) || (st = make_loader(&t)) ||
        (st = ct_tboard_open(&t.tb, &t.o, &t.g, t.lead, t.labels_per, t.regression)))
        goto done;
    for (int epoch = t.first_epoch; epoch < t.o.epochs && !st; epoch++) {
        double t0 = ct_now();
        size_t seen = 0;
        float lr = 0;
        if (!(st = run_epoch(&t, epoch, &seen, &lr, t0)))
            st = finish_epoch(&t, epoch, seen, lr, t0);
    }
done:
    ct_tboard_close(&t.tb);
    free(t.tokens_json);
    free(t.classes_json);
    free(t.norm_json);
    free(t.fz.train);
    free(t.fz.frozen);
    ct_finite_release(&t.fin);
    ct_scaler_release(&t.sc);
    ct_loader_free(&t.ld);
    ct_group_free(&t.g);
    ct_session_free(&t.s);
    return st;
}
