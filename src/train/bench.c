/*
 * bench.c - training-step timing on synthetic data. Inputs and labels are
 * random (uniform floats, or token ids below the embedding's vocabulary),
 * uploaded once; each timed step is zero-grad, forward, backward and an SGD
 * step with momentum (as the seed benchmark's scripts), ended by a clFinish
 * so the step's time is the device's. Each step uploads its batch without
 * blocking and adds its loss and accuracy to device accumulators, as a
 * training step does.
 *
 * With profile: the same steps once more back to back with no clFinish
 * between them, counting what they ask of the host (launches, blocking
 * calls, bytes each way; the clFinish that ends the run is not a step's),
 * then once more serialized, layer by layer, for each layer's time and
 * launches.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer.h"
#include "cltrain/bench.h"
#include "cltrain/tune.h"
#include "nn/net.h"
#include "ops/eltwise.h"
#include "optim/optim.h"
#include "train/parallel.h"

static const struct {
    const char *model;
    int batch;
} seed_batches[] = {
    { "fcn-s", 64 }, { "alexnet-s", 16 }, { "resnet50", 16 }, { "fcn-r", 1024 },
    { "alexnet-r", 1024 }, { "resnet56", 128 }, { "lstm", 128 },
};

void ct_bench_defaults(ct_bench_options *o)
{
    memset(o, 0, sizeof *o);
    o->model = "resnet56";
    o->steps = 10;
    o->warmup = 2;
    o->seed = 1;
}

int ct_bench_seed_batch(const char *model)
{
    for (size_t i = 0; model && i < CT_ARRAY_LEN(seed_batches); i++)
        if (!strcmp(seed_batches[i].model, model))
            return seed_batches[i].batch;
    return 0;
}

/* Forward multiply-adds x 2 of the layers that do matrix work (each type's
 * own count: src/nn/layer.h). */
static double forward_flops(const ct_net *net)
{
    double f = 0;
    for (size_t i = 0; i < net->model->count; i++)
        if (net->model->layers[i].type->flops)
            f += net->model->layers[i].type->flops(net, i);
    return f;
}

/* Random inputs and labels, on the host (*x, *y: nin and nlab entries). */
static int make_batch(ct_net *net, uint64_t seed, float **px, int32_t **py)
{
    float *x = malloc(net->rt[0].out_n * sizeof *x);
    int32_t *y = malloc(ct_net_label_elems(net) * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        *px = NULL;
        *py = NULL;
        return ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    }
    ct_net_random_batch(net, seed, x, y);
    *px = x;
    *py = y;
    return CT_OK;
}

typedef struct bench_step {
    ct_net *net;
    ct_optim_desc od;
    cl_mem state, acc;
    const float *x;   /* (batch, ...) the batch, uploaded every step */
    const int32_t *y; /* (batch) */
    uint64_t seed;
    double *prof;     /* NULL, or seconds of zero-grad [0] and the optimizer [1] */
    cl_event wrote[2]; /* slot k's upload done */
    cl_event used[2];  /* the last step that read slot k done */
} bench_step;

/* Step `step`'s batch into slot step % 2 on the transfer queue, after the
 * step that last read that slot, as training uploads (src/train/trainer.c):
 * the next batch crosses the bus while this step computes. */
static int upload(bench_step *b, long step)
{
    ct_net *net = b->net;
    int k = (int)(step & 1);
    if (b->wrote[k])
        clReleaseEvent(b->wrote[k]);
    b->wrote[k] = NULL;
    ct_slot_part x = { b->x, net->rt[0].out_n * sizeof(float), 1, 0 };
    ct_slot_part y = { b->y, ct_net_label_elems(net) * sizeof(int32_t), 1, 0 };
    return ct_slot_upload(net->ctx, net, k, &x, &y, b->used[k], &b->wrote[k]);
}

/* One training step on slot step % 2, whose upload upload() enqueued
 * before: zero-grad, forward, backward, SGD, accumulators; then the next
 * step's upload (not blocking: the host copy never changes). */
static int run_step(bench_step *b, long step)
{
    ct_net *net = b->net;
    ct_context *ctx = net->ctx;
    int k = (int)(step & 1);
    cl_int err = clEnqueueBarrierWithWaitList(ctx->queue, 1, &b->wrote[k], NULL);
    if (err != CL_SUCCESS)
        return ct_cl_fail(ctx, err, "waiting for a batch upload");
    ct_net_use_slot(net, k);
    int st;
    double t0 = b->prof ? ct_now() : 0; /* with prof: each phase timed, serialized */
    if ((st = ct_net_zero_grads(net)) || (b->prof && (st = ct_context_finish(ctx))))
        return st;
    double t1 = b->prof ? ct_now() : 0;
    if ((st = ct_net_forward(net, 1, b->seed, step)) || (st = ct_net_backward(net, b->seed, step)) ||
        (b->prof && (st = ct_context_finish(ctx))))
        return st;
    double t2 = b->prof ? ct_now() : 0;
    if ((st = ct_optim_step_zero_grads(ctx, &b->od, (ct_buf){ net->arena[CT_ARENA_PARAMS].mem, 0 },
                                       (ct_buf){ net->arena[CT_ARENA_GRADS].mem, 0 },
                                       (ct_buf){ b->state, 0 }, net->arena_size[CT_ARENA_PARAMS], step,
                                       b->od.lr)) ||
        (b->prof && (st = ct_context_finish(ctx))))
        return st;
    net->grads_zero = 1;
    if (b->prof) {
        b->prof[0] += t1 - t0;
        b->prof[1] += ct_now() - t2;
    }
    if ((st = ct_axpy(ctx, (ct_buf){ b->acc, 0 }, (float)net->batch, net->loss, 1)) ||
        (st = ct_add_accumulate_f32(ctx, (ct_buf){ b->acc, 1 }, net->correct, 1)))
        return st;
    if (b->used[k])
        clReleaseEvent(b->used[k]);
    b->used[k] = NULL;
    if ((err = clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &b->used[k])) != CL_SUCCESS ||
        (err = clFlush(ctx->queue)) != CL_SUCCESS)
        return ct_cl_fail(ctx, err, "marking a step");
    int st2 = upload(b, step + 1);
    /* profiled: the next step's phases time the device's work, not the
     * wait for its batch */
    if (!st2 && b->prof)
        st2 = ct_event_wait(ctx, b->wrote[(step + 1) & 1], "waiting for a batch upload");
    return st2;
}

/* The floor of one step (bytes): see ct_bench_result. */
static double floor_bytes(const ct_net *net, size_t state_n)
{
    const ct_model *m = net->model;
    /* activations and their gradients at the storage's bytes, the rest float32 */
    const double a = (double)ct_net_arena_esize(net, CT_ARENA_ACTS), w = sizeof(float);
    double f = 0;
    for (size_t i = 0; i < m->count; i++) {
        const ct_layer *l = &m->layers[i];
        if (net->rt[i].view || l->ninputs == 0)
            continue; /* views and the input move nothing */
        double in = 0, din = 0;
        for (int j = 0; j < l->ninputs; j++) {
            size_t p = (size_t)l->inputs[j];
            in += (double)net->rt[p].out_n;
            din += net->rt[p].needs_dout ? (double)net->rt[p].out_n : 0;
        }
        double out = (double)net->rt[i].out_n;
        double saved = (double)net->rt[i].saved_n * (net->rt[i].saved_act ? a : w);
        double par = (double)l->param_count + (double)l->buffer_count;
        f += (in + out) * a + saved + par * w;                                    /* forward */
        f += (out + in + din) * a + saved + (par + (double)l->param_count) * w; /* backward */
    }
    /* the input's conversion into 16-bit storage: read as floats, written */
    if (net->act16)
        f += (double)net->rt[0].out_n * (w + a);
    /* optimizer: parameters and state read and written, gradients read and zeroed */
    f += (4.0 * (double)net->nparams + 2.0 * (double)state_n) * w;
    return f;
}

static int by_time(const void *a, const void *b)
{
    double x = ((const ct_bench_kernel *)a)->ms, y = ((const ct_bench_kernel *)b)->ms;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* `steps` more steps with every launch timed (res->kernel_times). */
static int kernel_times(bench_step *b, long *step, int steps, ct_bench_result *res)
{
    ct_context *ctx = b->net->ctx;
    int st = CT_OK;
    ct_ktime_start(ctx);
    for (int i = 0; i < steps && !st; i++)
        if (!(st = run_step(b, ++*step)))
            st = ct_context_finish(ctx);
    ct_ktime_stop(ctx);
    if (st)
        return st;
    size_t n = ctx->ktime.n;
    res->kernel_times = calloc(n ? n : 1, sizeof *res->kernel_times);
    if (!res->kernel_times)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    for (size_t i = 0; i < n; i++)
        res->kernel_times[i] = (ct_bench_kernel){ ctx->ktime.t[i].name,
                                                  (double)ctx->ktime.t[i].launches / steps,
                                                  1e3 * ctx->ktime.t[i].seconds / steps };
    qsort(res->kernel_times, n, sizeof *res->kernel_times, by_time);
    res->nkernel_times = (int)n;
    return CT_OK;
}

/* One more step with every launch recorded (res->launch_list). */
static int record_step(bench_step *b, long step, ct_bench_result *res)
{
    ct_context *ctx = b->net->ctx;
    int st = ct_launch_recording(ctx, 1);
    if (!st)
        st = run_step(b, step);
    ct_launch_recording(ctx, 0);
    if (st || (st = ct_context_finish(ctx)))
        return st;
    size_t n = ctx->lrec.n;
    res->launch_list = calloc(n ? n : 1, sizeof *res->launch_list);
    if (!res->launch_list)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    res->nlaunch_list = (int)n;
    for (size_t i = 0; i < n; i++) {
        const ct_launch_rec *r = &ctx->lrec.recs[i];
        ct_bench_launch *o = &res->launch_list[i];
        o->layer = r->layer;
        if (r->kernel)
            snprintf(o->kernel, sizeof o->kernel, "%s", r->kernel);
        o->global = r->global, o->local = r->local;
        o->bytes_read = r->rd, o->bytes_written = r->wr;
        o->m = r->m, o->n = r->n, o->k = r->k, o->batch = r->batch, o->k_splits = r->k_splits;
        o->ta = r->ta, o->tb = r->tb, o->conv = r->conv;
        if (r->rd < 0 || r->wr < 0)
            res->unstated_launches++;
        else
            res->bytes_moved += (double)r->rd + (double)r->wr;
    }
    return CT_OK;
}

int ct_bench_run(ct_context *ctx, const ct_bench_options *opt, ct_bench_result *res)
{
    CT_VALIDATE(ctx, ctx && opt && opt->model && res);
    memset(res, 0, sizeof *res);
    int batch = opt->batch > 0 ? opt->batch : ct_bench_seed_batch(opt->model);
    if (batch <= 0)
        batch = 64;
    int steps = opt->steps > 0 ? opt->steps : 10, warmup = opt->warmup >= 0 ? opt->warmup : 2;
    if (steps > 10000)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "bench: at most 10000 steps");
    ct_model *m = NULL;
    ct_net net;
    memset(&net, 0, sizeof net);
    cl_mem state = NULL, acc = NULL;
    bench_step bs;
    memset(&bs, 0, sizeof bs);
    float *x = NULL;
    int32_t *y = NULL;
    double *t = NULL;
    int planned = 0;
    int st = opt->record ? CT_OK : ct_tune_check_imported(ctx, NULL, NULL);
    if (st)
        goto done;
    if ((st = ct_model_open(opt->model, &m))) {
        ct_fail_keep(ctx, st);
        goto done;
    }
    if (strcmp(m->layers[m->count - 1].type->name, "softmax_cross_entropy")) {
        st = ct_fail(ctx, CT_ERR_UNSUPPORTED, "bench: model %s does not end in softmax_cross_entropy",
                     opt->model);
        goto done;
    }
    if ((st = ct_net_choose_storage(ctx, m, &res->act16)) || (st = ct_net_plan(ctx, m, batch, &net)))
        goto done;
    planned = 1;
    ct_optim_desc od;
    ct_optim_defaults(&od, CT_OPT_SGD);
    od.lr = 0.01f;
    od.momentum = 0.9f;
    size_t state_n = ct_optim_state_size(&od, net.nparams);
    res->plan_mib = ((double)ct_net_plan_bytes(&net) + (double)state_n * sizeof(float)) / 1048576.0;
    res->batch = batch;
    res->flops_per_step = 3.0 * forward_flops(&net);
    res->kernels = ct_context_kernels(ctx);
    res->gemm = ct_gemm_get_path(ctx);
    res->batch_bytes = (double)(net.rt[0].out_n * sizeof(float) + ct_net_label_elems(&net) * sizeof(int32_t));
    bs.net = &net;
    bs.od = od;
    bs.seed = opt->seed;
    if ((st = ct_net_alloc(&net)) || (st = ct_net_init_params(&net, opt->seed)) ||
        (st = make_batch(&net, opt->seed, &x, &y)) ||
        (state_n && (st = ct_buffer_create(ctx, state_n * sizeof(float), &state))) ||
        (state_n && (st = ct_fill(ctx, (ct_buf){ state, 0 }, state_n, 0.0f))) ||
        (st = ct_buffer_create(ctx, 4 * sizeof(float), &acc)) ||
        (st = ct_fill(ctx, (ct_buf){ acc, 0 }, 4, 0.0f)))
        goto done;
    bs.state = state;
    bs.acc = acc;
    bs.x = x;
    bs.y = y;
    t = malloc((size_t)steps * sizeof *t);
    if (!t) {
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
        goto done;
    }
    long step = 0;
    if ((st = upload(&bs, step + 1)))
        goto done;
    if (opt->record) {
        st = record_step(&bs, ++step, res);
        goto done;
    }
    for (int i = 0; i < warmup + steps; i++) {
        double t0 = ct_now();
        if ((st = run_step(&bs, ++step)) || (st = ct_context_finish(ctx)))
            goto done;
        if (i >= warmup)
            t[i - warmup] = ct_now() - t0;
    }
    if (opt->profile) {
        /* the steps back to back, as training runs them: what they cost the host */
        ct_counters c0, c1;
        ct_context_counters(ctx, &c0);
        for (int i = 0; i < steps && !st; i++)
            st = run_step(&bs, ++step);
        ct_context_counters(ctx, &c1);
        if (st || (st = ct_context_finish(ctx)))
            goto done;
        if ((st = record_step(&bs, ++step, res)))
            goto done;
        res->bytes_floor = floor_bytes(&net, state_n);
        res->launches_per_step = (double)(c1.launches - c0.launches) / steps;
        res->blocking_calls_per_step = (double)(c1.blocking_calls - c0.blocking_calls) / steps;
        res->h2d_bytes_per_step = (double)(c1.h2d_bytes - c0.h2d_bytes) / steps;
        res->d2h_bytes_per_step = (double)(c1.d2h_bytes - c0.d2h_bytes) / steps;
        /* and once more, each layer timed (serialized) */
        if ((st = ct_net_profile(&net, 1)))
            goto done;
        double prof[2] = { 0, 0 };
        bs.prof = prof;
        for (int i = 0; i < steps; i++)
            if ((st = run_step(&bs, ++step)) || (st = ct_context_finish(ctx)))
                goto done;
        bs.prof = NULL;
        res->zero_grad_ms = 1e3 * prof[0] / steps;
        res->optimizer_ms = 1e3 * prof[1] / steps;
        res->layers = calloc(m->count, sizeof *res->layers);
        if (!res->layers) {
            st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
            goto done;
        }
        res->nlayers = (int)m->count;
        for (size_t i = 0; i < m->count; i++) {
            res->layers[i].name = m->layers[i].name;
            res->layers[i].type = m->layers[i].type->name;
            res->layers[i].forward_ms = 1e3 * net.prof_fwd[i] / steps;
            res->layers[i].backward_ms = 1e3 * net.prof_bwd[i] / steps;
            res->layers[i].forward_launches = net.prof_fwd[m->count + i] / steps;
            res->layers[i].backward_launches = net.prof_bwd[m->count + i] / steps;
        }
        if ((st = ct_net_profile(&net, 0)) || (st = kernel_times(&bs, &step, steps, res)))
            goto done;
    }
    float loss = 0;
    if ((st = ct_buffer_read(ctx, net.loss.mem, net.loss.off * sizeof(float), sizeof loss, &loss)))
        goto done;
    if (!isfinite(loss)) {
        st = ct_fail(ctx, CT_ERR_CORRUPT, "bench: the loss of %s became %g", opt->model, loss);
        goto done;
    }
    res->steps = steps;
    res->median_ms = 1e3 * ct_median(t, (size_t)steps); /* sorts t */
    res->min_ms = 1e3 * t[0];
    res->samples_per_second = batch / t[steps / 2];
    res->gflops = res->flops_per_step / t[steps / 2] * 1e-9;
done:
    if (planned)
        ct_context_finish(ctx); /* nothing may still read x and y */
    ct_slot_events_settle(bs.wrote, bs.used);
    free(t);
    free(x);
    free(y);
    ct_buffer_release(&state);
    ct_buffer_release(&acc);
    if (planned)
        ct_net_release(&net);
    ct_context_set_act16(ctx, CT_PRECISION_FP32); /* the next model chooses its own */
    if (st || (!res->layers && !res->launch_list))
        ct_model_free(&m);
    else
        res->model_keep = m; /* the layer names point into it */
    return st;
}

void ct_bench_result_free(ct_bench_result *r)
{
    if (!r)
        return;
    free(r->layers);
    free(r->launch_list);
    free(r->kernel_times);
    r->kernel_times = NULL;
    r->nkernel_times = 0;
    r->launch_list = NULL;
    r->nlaunch_list = 0;
    ct_model_free(&r->model_keep);
    r->layers = NULL;
    r->nlayers = 0;
}
