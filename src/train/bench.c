/*
 * bench.c - training-step timing on synthetic data. Inputs and labels are
 * random (uniform floats, or token ids below the embedding's vocabulary),
 * uploaded once; each timed step is zero-grad, forward, backward and an SGD
 * step with momentum (as the seed benchmark's scripts), ended by a clFinish
 * so the step's time is the device's.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cltrain/bench.h"
#include "nn/net.h"
#include "optim/optim.h"

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

/* Forward multiply-adds x 2 of the layers that do matrix work. */
static double forward_flops(const ct_net *net)
{
    const ct_model *m = net->model;
    double f = 0, N = net->batch;
    for (size_t i = 0; i < m->count; i++) {
        const ct_layer *l = &m->layers[i];
        const ct_lrt *r = &net->rt[i];
        if (!strcmp(l->type->name, "dense")) {
            double in = (double)l->params[0].shape[1], out = (double)l->params[0].shape[0];
            f += 2.0 * (double)r->rows * in * out;
        } else if (!strcmp(l->type->name, "conv2d")) {
            const ct_param_spec *w = &l->params[0];
            f += 2.0 * N * (double)l->out.d[0] * l->out.d[1] * l->out.d[2] * w->shape[1] * w->shape[2] * w->shape[3];
        } else if (!strcmp(l->type->name, "lstm")) {
            const ct_lstm_desc *d = &r->lstm;
            for (int k = 0; k < d->layers; k++)
                f += 2.0 * d->T * d->N * 4.0 * d->hidden * ((k ? d->hidden : d->input) + d->hidden);
        }
    }
    return f;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Random inputs and labels in both batch slots. */
static int fill_slots(ct_net *net, uint64_t seed)
{
    const ct_model *m = net->model;
    const ct_layer *in = &m->layers[0], *loss = &m->layers[m->count - 1];
    const ct_layer *lg = &m->layers[loss->inputs[0]];
    size_t nin = net->rt[0].out_n, nlab = ct_net_label_elems(net);
    int classes = lg->out.d[lg->out.ndim - 1];
    int vocab = 0;
    for (size_t i = 0; i < m->count; i++)
        if (!strcmp(m->layers[i].type->name, "embedding"))
            vocab = (int)ct_layer_key(&m->layers[i], "vocab");
    float *x = malloc(nin * sizeof *x);
    int32_t *y = malloc(nlab * sizeof *y);
    int st = CT_OK;
    if (!x || !y) {
        st = ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory");
        goto done;
    }
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < nin; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t r = (uint32_t)(s >> 33);
        if (in->out.tokens) {
            int32_t t = (int32_t)(r % (uint32_t)(vocab > 0 ? vocab : 1));
            memcpy(&x[i], &t, sizeof t);
        } else {
            x[i] = (float)r / 2147483648.0f - 0.5f;
        }
    }
    for (size_t i = 0; i < nlab; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        y[i] = (int32_t)((s >> 33) % (uint64_t)classes);
    }
    for (int k = 0; k < 2 && !st; k++) {
        st = ct_buffer_write(net->ctx, net->slot[k], 0, nin * sizeof(float), x);
        if (!st)
            st = ct_buffer_write(net->ctx, net->slot[k], net->slot_label_off * sizeof(float),
                                 nlab * sizeof(int32_t), y);
    }
done:
    free(x);
    free(y);
    return st;
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
    cl_mem state = NULL;
    double *t = NULL;
    int planned = 0;
    int st = ct_model_open(opt->model, &m);
    if (st) {
        ct_fail_keep(ctx, st);
        goto done;
    }
    if (strcmp(m->layers[m->count - 1].type->name, "softmax_cross_entropy")) {
        st = ct_fail(ctx, CT_ERR_UNSUPPORTED, "bench: model %s does not end in softmax_cross_entropy",
                     opt->model);
        goto done;
    }
    if ((st = ct_net_plan(ctx, m, batch, &net)))
        goto done;
    planned = 1;
    ct_optim_desc od;
    ct_optim_defaults(&od, CT_OPT_SGD);
    od.lr = 0.01f;
    od.momentum = 0.9f;
    size_t state_n = ct_optim_state_size(&od, net.nparams);
    double bytes = 2.0 * (double)net.slot_n + (double)state_n;
    for (int a = 0; a < CT_ARENA_COUNT; a++)
        bytes += (double)net.arena_size[a];
    res->plan_mib = bytes * 4.0 / 1048576.0;
    res->batch = batch;
    res->flops_per_step = 3.0 * forward_flops(&net);
    if ((st = ct_net_alloc(&net)) || (st = ct_net_init_params(&net, opt->seed)) ||
        (st = fill_slots(&net, opt->seed)) ||
        (state_n && (st = ct_buffer_create(ctx, state_n * sizeof(float), &state))))
        goto done;
    t = malloc((size_t)steps * sizeof *t);
    if (!t) {
        st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
        goto done;
    }
    for (int i = 0; i < warmup + steps; i++) {
        double t0 = ct_now();
        ct_net_use_slot(&net, i & 1);
        if ((st = ct_net_zero_grads(&net)) || (st = ct_net_forward(&net, 1, opt->seed, i + 1)) ||
            (st = ct_net_backward(&net, opt->seed, i + 1)) ||
            (st = ct_optim_step(ctx, &od, (ct_buf){ net.arena[CT_ARENA_PARAMS].mem, 0 },
                                (ct_buf){ net.arena[CT_ARENA_GRADS].mem, 0 }, (ct_buf){ state, 0 },
                                net.arena_size[CT_ARENA_PARAMS], i + 1, od.lr)) ||
            (st = ct_context_finish(ctx)))
            goto done;
        if (i >= warmup)
            t[i - warmup] = ct_now() - t0;
    }
    if (opt->profile) {
        /* the same steps again, each layer timed */
        if ((st = ct_net_profile(&net, 1)))
            goto done;
        for (int i = 0; i < steps; i++) {
            ct_net_use_slot(&net, i & 1);
            if ((st = ct_net_zero_grads(&net)) || (st = ct_net_forward(&net, 1, opt->seed, i + 1)) ||
                (st = ct_net_backward(&net, opt->seed, i + 1)) || (st = ct_context_finish(ctx)))
                goto done;
        }
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
        }
    }
    float loss = 0;
    if ((st = ct_buffer_read(ctx, net.loss.mem, net.loss.off * sizeof(float), sizeof loss, &loss)))
        goto done;
    if (!isfinite(loss)) {
        st = ct_fail(ctx, CT_ERR_CORRUPT, "bench: the loss of %s became %g", opt->model, loss);
        goto done;
    }
    qsort(t, (size_t)steps, sizeof *t, cmp_double);
    res->steps = steps;
    res->median_ms = 1e3 * t[steps / 2];
    res->min_ms = 1e3 * t[0];
    res->samples_per_second = batch / t[steps / 2];
    res->gflops = res->flops_per_step / t[steps / 2] * 1e-9;
done:
    free(t);
    ct_buffer_release(&state);
    if (planned)
        ct_net_release(&net);
    if (st || !res->layers)
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
    ct_model_free(&r->model_keep);
    r->layers = NULL;
    r->nlayers = 0;
}
