/*
 * net.c - the memory plan, initialization and the forward and backward
 * passes of a model on one device.
 *
 * Plan: every layer's output and output gradient get their own slice of the
 * activation arenas (no reuse yet); what a backward needs beyond its inputs
 * and output (batch-norm statistics, LSTM gates, a fused gelu's
 * pre-activation, an overlapping max pool's argmax, an LRN's scale) is
 * "saved" in the activation arena; workspaces only used inside one call
 * (convolution columns, the embedding's chains) share one scratch slice.
 * Gradients: a layer's output gradient is written by its only reader, or,
 * when several layers read it, zeroed first and accumulated.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/philox.h"
#include "nn/net.h"
#include "ops/act.h"
#include "ops/batchnorm.h"
#include "ops/dense.h"
#include "ops/dropout.h"
#include "ops/eltwise.h"
#include "ops/embedding.h"
#include "ops/loss.h"
#include "ops/shortcut.h"

enum kind {
    K_INPUT, K_DENSE, K_CONV, K_BN, K_RELU, K_LEAKY, K_SIGMOID, K_TANH, K_GELU, K_DROPOUT,
    K_MAXPOOL, K_AVGPOOL, K_GAP, K_FLATTEN, K_LRN, K_ADD, K_SHORTCUT, K_EMBEDDING, K_LSTM,
    K_XENT, K_MSE, K_COUNT
};

static const char *const kind_names[K_COUNT] = {
    "input", "dense", "conv2d", "batchnorm", "relu", "leaky_relu", "sigmoid", "tanh", "gelu",
    "dropout", "maxpool", "avgpool", "global_avgpool", "flatten", "lrn", "add", "shortcut_a",
    "embedding", "lstm", "softmax_cross_entropy", "mse",
};

static int kind_of(const ct_layer *l)
{
    for (int k = 0; k < K_COUNT; k++)
        if (!strcmp(l->type->name, kind_names[k]))
            return k;
    return -1;
}

static ct_act act_of_kind(int k)
{
    switch (k) {
    case K_RELU: return CT_ACT_RELU;
    case K_LEAKY: return CT_ACT_LEAKY_RELU;
    case K_SIGMOID: return CT_ACT_SIGMOID;
    case K_TANH: return CT_ACT_TANH;
    case K_GELU: return CT_ACT_GELU;
    default: return CT_ACT_NONE;
    }
}

/* Hands out 16-float-aligned slices of an arena being sized. */
static size_t take(size_t *used, size_t n)
{
    size_t at = (*used + 15) & ~(size_t)15;
    *used = at + (n ? n : 1);
    return at;
}

static ct_buf at_arena(int arena, size_t off)
{
    /* arena ids are patched into real buffers by ct_net_alloc */
    ct_buf b = { (cl_mem)(uintptr_t)(arena + 1), off };
    return b;
}

static const char *arena_names[CT_ARENA_COUNT] = { "parameters", "gradients", "buffers",
                                                    "activations", "activation gradients", "scratch" };

int ct_net_plan(ct_context *ctx, const ct_model *m, int batch, ct_net *net)
{
    memset(net, 0, sizeof *net);
    net->ctx = ctx;
    net->model = m;
    net->batch = batch;
    if (batch < 1 || batch > (1 << 24))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "batch size %d is out of range [1, 2^24]", batch);
    net->rt = calloc(m->count, sizeof *net->rt);
    if (!net->rt)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory planning the network");
    const ct_layer *in0 = &m->layers[0];
    net->seq = in0->out.sequence ? in0->out.d[0] : 0;
    size_t *use = net->arena_size;
    size_t N = (size_t)batch, gtmp_n = 0;

    for (size_t i = 0; i < m->count; i++) {
        const ct_layer *l = &m->layers[i];
        ct_lrt *r = &net->rt[i];
        int k = r->kind = kind_of(l);
        r->rows = l->out.sequence ? N * (size_t)l->out.d[0] : N;
        r->out_n = l->type->is_loss ? 1 : N * ct_shape_numel(&l->out);
        if (r->out_n > (size_t)UINT32_MAX / 2)
            return ct_fail(ctx, CT_ERR_SHAPE, "layer '%s' output of %zu elements at batch %d is too "
                           "large. HINT: use a smaller batch", l->name, r->out_n, batch);
        if (k == K_FLATTEN) {
            /* a view: the producer's output, and its gradient too when
             * nobody else writes that gradient */
            const ct_lrt *p = &net->rt[l->inputs[0]];
            r->out = p->out;
            r->needs_dout = 1;
            r->view = p->needs_dout && m->layers[l->inputs[0]].consumers == 1;
            r->dout = r->view ? p->dout : at_arena(CT_ARENA_DACTS, take(&use[CT_ARENA_DACTS], r->out_n));
        } else if (k == K_INPUT) {
            /* in the batch slots, set by ct_net_alloc */
            net->slot_label_off = (r->out_n + 15) & ~(size_t)15;
        } else if (!l->type->is_loss) {
            r->out = at_arena(CT_ARENA_ACTS, take(&use[CT_ARENA_ACTS], r->out_n));
            r->needs_dout = k != K_INPUT;
            if (r->needs_dout)
                r->dout = at_arena(CT_ARENA_DACTS, take(&use[CT_ARENA_DACTS], r->out_n));
        }
        if (l->consumers > 1 || (i > 0 && l->ninputs && l->inputs[0] == 0))
            gtmp_n = r->out_n > gtmp_n ? r->out_n : gtmp_n;
        if (k == K_INPUT && gtmp_n < r->out_n)
            gtmp_n = r->out_n; /* a sink for input gradients nobody needs */
        /* parameters (trainable, PyTorch order) and buffers */
        size_t pn = l->param_count, bn = l->buffer_count;
        if (pn) {
            size_t off = take(&use[CT_ARENA_PARAMS], pn);
            r->param = at_arena(CT_ARENA_PARAMS, off);
            /* gradients mirror parameters */
            r->grad = at_arena(CT_ARENA_GRADS, take(&use[CT_ARENA_GRADS], pn));
            net->nparams += pn;
        }
        if (bn) {
            r->buffers = at_arena(CT_ARENA_BUFFERS, take(&use[CT_ARENA_BUFFERS], bn));
            net->nbuffers += bn;
        }
        const ct_shape *is = l->ninputs ? &m->layers[l->inputs[0]].out : NULL;
        size_t scratch = 0;
        switch (k) {
        case K_DENSE:
        case K_CONV:
            r->act = (int)ct_layer_key(l, "act");
            if (r->act == CT_ACT_GELU)
                r->preact = at_arena(CT_ARENA_ACTS, take(&use[CT_ARENA_ACTS], r->out_n));
            if (k == K_CONV) {
                int kk = (int)ct_layer_key(l, "kernel");
                ct_conv2d_desc d = { batch, is->d[0], is->d[1], is->d[2], (int)ct_layer_key(l, "out"),
                                     kk, kk, (int)ct_layer_key(l, "stride"), (int)ct_layer_key(l, "stride"),
                                     (int)ct_layer_key(l, "pad"), (int)ct_layer_key(l, "pad"),
                                     (int)ct_layer_key(l, "dilation"), (int)ct_layer_key(l, "dilation") };
                r->conv = d;
                scratch = ct_conv2d_workspace(&d);
            }
            break;
        case K_BN:
            r->act = (int)ct_layer_key(l, "act");
            r->saved_n = 2 * (size_t)l->out.d[0];
            break;
        case K_MAXPOOL:
        case K_AVGPOOL: {
            int kk = (int)ct_layer_key(l, "kernel");
            r->pool = ct_pool2d_square(batch, is->d[0], is->d[1], is->d[2], kk,
                                       (int)ct_layer_key(l, "stride"), (int)ct_layer_key(l, "pad"));
            if (k == K_AVGPOOL)
                r->pool.count_include_pad = (int)ct_layer_key(l, "count_include_pad");
            else if (ct_maxpool_overlaps(&r->pool))
                r->saved_n = r->out_n; /* the forward's argmax record (int32) */
            break;
        }
        case K_LRN:
            r->lrn.size = (int)ct_layer_key(l, "size");
            r->lrn.alpha = (float)ct_layer_key(l, "alpha");
            r->lrn.beta = (float)ct_layer_key(l, "beta");
            r->lrn.k = (float)ct_layer_key(l, "k");
            r->saved_n = r->out_n; /* the forward's scale s^-beta */
            break;
        case K_EMBEDDING:
            scratch = (ct_embedding_workspace_size(r->rows) + sizeof(float) - 1) / sizeof(float);
            break;
        case K_LSTM: {
            ct_lstm_desc d = { is->d[0], batch, is->d[1], (int)ct_layer_key(l, "hidden"),
                               (int)ct_layer_key(l, "layers") };
            r->lstm = d;
            r->saved_n = (ct_lstm_workspace_size(&d) + sizeof(float) - 1) / sizeof(float);
            break;
        }
        case K_XENT: {
            const ct_lrt *p = &net->rt[l->inputs[0]];
            net->slot_n = net->slot_label_off + p->rows;
            scratch = ct_softmax_xent_workspace(p->rows);
            break;
        }
        case K_MSE: {
            const ct_lrt *p = &net->rt[l->inputs[0]];
            net->targets = at_arena(CT_ARENA_ACTS, take(&use[CT_ARENA_ACTS], p->out_n));
            break;
        }
        default:
            break;
        }
        if (r->saved_n)
            r->saved = at_arena(CT_ARENA_ACTS, take(&use[CT_ARENA_ACTS], r->saved_n));
        if (scratch > net->scratch_n)
            net->scratch_n = scratch;
    }
    if (net->slot_n < net->slot_label_off)
        net->slot_n = net->slot_label_off;
    net->loss = at_arena(CT_ARENA_ACTS, take(&use[CT_ARENA_ACTS], 1));
    net->correct = at_arena(CT_ARENA_ACTS, take(&use[CT_ARENA_ACTS], 1));
    net->scratch = at_arena(CT_ARENA_SCRATCH, take(&use[CT_ARENA_SCRATCH], net->scratch_n));
    net->gtmp = at_arena(CT_ARENA_SCRATCH, take(&use[CT_ARENA_SCRATCH], gtmp_n));
    return CT_OK;
}

static void patch(ct_net *net, ct_buf *b)
{
    uintptr_t id = (uintptr_t)b->mem;
    if (id >= 1 && id <= CT_ARENA_COUNT)
        b->mem = net->arena[id - 1].mem;
}

int ct_net_alloc(ct_net *net)
{
    const ct_device_info *dev = ct_context_device(net->ctx);
    uint64_t total = 2 * (uint64_t)net->slot_n * sizeof(float);
    for (int a = 0; a < CT_ARENA_COUNT; a++)
        total += (uint64_t)net->arena_size[a] * sizeof(float);
    for (int a = 0; a < CT_ARENA_COUNT; a++) {
        uint64_t bytes = (uint64_t)net->arena_size[a] * sizeof(float);
        if (bytes > dev->max_alloc_bytes || total > dev->global_mem_bytes) {
            return ct_fail(net->ctx, CT_ERR_NO_MEMORY,
                           "the memory plan does not fit on %s: the %s arena needs %.1f MiB (the "
                           "device allows %.1f MiB per allocation) and all arenas %.1f MiB (the "
                           "device has %.1f MiB). HINT: use a smaller batch than %d",
                           dev->name, arena_names[a], (double)bytes / 1048576.0,
                           (double)dev->max_alloc_bytes / 1048576.0, (double)total / 1048576.0,
                           (double)dev->global_mem_bytes / 1048576.0, net->batch);
        }
    }
    if ((uint64_t)net->slot_n * sizeof(float) > dev->max_alloc_bytes)
        return ct_fail(net->ctx, CT_ERR_NO_MEMORY,
                       "the memory plan does not fit on %s: a batch slot needs %.1f MiB (the device "
                       "allows %.1f MiB per allocation). HINT: use a smaller batch than %d", dev->name,
                       (double)net->slot_n * 4.0 / 1048576.0, (double)dev->max_alloc_bytes / 1048576.0,
                       net->batch);
    for (int a = 0; a < CT_ARENA_COUNT; a++) {
        int st = ct_arena_create(net->ctx, &net->arena[a], arena_names[a], net->arena_size[a]);
        if (st) {
            ct_net_release(net);
            return st;
        }
        net->arena[a].used = net->arena_size[a];
    }
    for (size_t i = 0; i < net->model->count; i++) {
        ct_lrt *r = &net->rt[i];
        ct_buf *bufs[] = { &r->out, &r->dout, &r->param, &r->grad, &r->buffers, &r->saved, &r->preact };
        for (size_t j = 0; j < CT_ARRAY_LEN(bufs); j++)
            patch(net, bufs[j]);
    }
    ct_buf *bufs[] = { &net->scratch, &net->gtmp, &net->targets, &net->loss, &net->correct };
    for (size_t j = 0; j < CT_ARRAY_LEN(bufs); j++)
        patch(net, bufs[j]);
    for (int k = 0; k < 2; k++) {
        int st = ct_buffer_create(net->ctx, net->slot_n * sizeof(float), &net->slot[k]);
        if (st) {
            ct_net_release(net);
            return st;
        }
    }
    ct_net_use_slot(net, 0);
    net->allocated = 1;
    return CT_OK;
}

void ct_net_use_slot(ct_net *net, int k)
{
    ct_buf in = { net->slot[k], 0 };
    net->rt[0].out = in;
    net->labels = ct_buf_at(in, net->slot_label_off);
    /* flatten views of the input follow it */
    for (size_t i = 1; i < net->model->count; i++)
        if (net->rt[i].kind == K_FLATTEN && net->model->layers[i].inputs[0] == 0)
            net->rt[i].out = in;
}

void ct_net_release(ct_net *net)
{
    for (int a = 0; a < CT_ARENA_COUNT; a++)
        ct_arena_release(&net->arena[a]);
    ct_buffer_release(&net->slot[0]);
    ct_buffer_release(&net->slot[1]);
    ct_net_profile(net, 0);
    free(net->rt);
    net->rt = NULL;
    net->allocated = 0;
}

size_t ct_net_input_elems(const ct_net *net)
{
    return net->rt[0].out_n;
}

size_t ct_net_label_elems(const ct_net *net)
{
    const ct_model *m = net->model;
    const ct_layer *loss = &m->layers[m->count - 1];
    const ct_lrt *p = &net->rt[loss->inputs[0]];
    return kind_of(loss) == K_MSE ? p->out_n : p->rows;
}

/* ---- initialization ---- */

typedef struct rng {
    uint32_t key[2];
    uint32_t ctr[4];
    uint32_t block[4];
    int used;
} rng;

static uint32_t rng_u32(rng *r)
{
    if (r->used == 4) {
        ct_philox4x32(r->ctr, r->key, r->block);
        if (++r->ctr[0] == 0)
            r->ctr[1]++;
        r->used = 0;
    }
    return r->block[r->used++];
}

static double rng_uniform(rng *r) /* [0, 1) with 53 bits */
{
    uint64_t hi = rng_u32(r) >> 5, lo = rng_u32(r) >> 6;
    return (double)(hi * 67108864u + lo) / 9007199254740992.0;
}

static double rng_normal(rng *r)
{
    double u1 = rng_uniform(r), u2 = rng_uniform(r);
    return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
}

int ct_net_init_params(ct_net *net, uint64_t seed)
{
    const ct_model *m = net->model;
    int st = CT_OK;
    for (size_t i = 0; i < m->count && !st; i++) {
        const ct_layer *l = &m->layers[i];
        ct_lrt *r = &net->rt[i];
        if (!l->param_count && !l->buffer_count)
            continue;
        int k = kind_of(l);
        float *p = malloc((l->param_count ? l->param_count : 1) * sizeof *p);
        float *b = malloc((l->buffer_count ? l->buffer_count : 1) * sizeof *b);
        if (!p || !b) {
            free(p);
            free(b);
            return ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory initializing %s", l->name);
        }
        /* each layer has its own stream: (seed, layer index) */
        rng g = { { (uint32_t)seed, (uint32_t)(seed >> 32) }, { 0, 0, (uint32_t)i, 0x1417u }, { 0 }, 4 };
        size_t at = 0, bat = 0;
        double bound = 0;
        if (k == K_DENSE || k == K_CONV) /* kaiming_uniform(a=sqrt(5)): 1/sqrt(fan_in), bias too */
            bound = 1.0 / sqrt((double)l->params[0].shape[1] *
                               (k == K_CONV ? (double)l->params[0].shape[2] * l->params[0].shape[3] : 1.0));
        else if (k == K_LSTM)
            bound = 1.0 / sqrt(ct_layer_key(l, "hidden"));
        for (int j = 0; j < l->nparams; j++) {
            const ct_param_spec *ps = &l->params[j];
            size_t n = 1;
            for (int d = 0; d < ps->ndim; d++)
                n *= (size_t)ps->shape[d];
            float *dst = ps->trainable ? p + at : b + bat;
            for (size_t e = 0; e < n; e++) {
                if (k == K_BN)
                    dst[e] = !strcmp(ps->suffix, "weight") || !strcmp(ps->suffix, "running_var") ? 1.0f : 0.0f;
                else if (k == K_EMBEDDING)
                    dst[e] = (float)rng_normal(&g);
                else
                    dst[e] = (float)((2.0 * rng_uniform(&g) - 1.0) * bound);
            }
            if (ps->trainable)
                at += n;
            else
                bat += n;
        }
        if (l->param_count)
            st = ct_buffer_write(net->ctx, r->param.mem, r->param.off * sizeof(float),
                                 l->param_count * sizeof(float), p);
        if (!st && l->buffer_count)
            st = ct_buffer_write(net->ctx, r->buffers.mem, r->buffers.off * sizeof(float),
                                 l->buffer_count * sizeof(float), b);
        free(p);
        free(b);
    }
    return st;
}

/* ---- forward ---- */

static ct_buf none(void)
{
    ct_buf b = { NULL, 0 };
    return b;
}

/* bias offset within a dense/conv layer's parameters: after the weight */
static ct_buf bias_of(const ct_layer *l, const ct_lrt *r)
{
    if (l->nparams < 2)
        return none();
    size_t wn = 1;
    for (int d = 0; d < l->params[0].ndim; d++)
        wn *= (size_t)l->params[0].shape[d];
    return ct_buf_at(r->param, wn);
}

static ct_buf grad_bias_of(const ct_layer *l, const ct_lrt *r)
{
    if (l->nparams < 2)
        return none();
    size_t wn = 1;
    for (int d = 0; d < l->params[0].ndim; d++)
        wn *= (size_t)l->params[0].shape[d];
    return ct_buf_at(r->grad, wn);
}

static uint64_t step_seed(uint64_t seed, long step)
{
    return seed ^ ((uint64_t)step * 0x9e3779b97f4a7c15ull);
}

static int forward_layer(ct_net *net, size_t i, int training, uint64_t seed, long step)
{
    ct_context *ctx = net->ctx;
    const ct_layer *l = &net->model->layers[i];
    ct_lrt *r = &net->rt[i];
    int k = r->kind;
    const ct_lrt *in = l->ninputs ? &net->rt[l->inputs[0]] : NULL;
    ct_buf x = in ? in->out : none();
    switch (k) {
    case K_INPUT:
        return CT_OK;
    case K_DENSE:
    case K_CONV: {
        ct_buf b = bias_of(l, r);
        ct_buf z = r->act == CT_ACT_GELU ? r->preact : r->out;
        int st;
        int outF = (int)ct_layer_key(l, "out");
        if (k == K_DENSE)
            st = ct_dense_forward(ctx, z, x, r->param, r->act ? none() : b, (int)r->rows,
                                  (int)(in->out_n / r->rows), outF);
        else
            st = ct_conv2d_forward(ctx, &r->conv, z, x, r->param, r->act ? none() : b, net->scratch,
                                   net->scratch_n);
        if (st || !r->act)
            return st;
        int hw = k == K_CONV ? l->out.d[1] * l->out.d[2] : 1;
        return ct_bias_act_forward(ctx, r->out, z, b, k == K_CONV ? net->batch : (int)r->rows, outF,
                                   hw, (ct_act)r->act);
    }
    case K_BN: {
        size_t C = (size_t)l->out.d[0], HW = l->out.ndim == 3 ? (size_t)l->out.d[1] * l->out.d[2] : 1;
        ct_buf gamma = r->param, beta = ct_buf_at(r->param, C);
        ct_buf rm = r->buffers, rv = ct_buf_at(r->buffers, C);
        float eps = (float)ct_layer_key(l, "eps");
        if (training)
            return ct_batchnorm_forward_train(ctx, r->out, r->saved, ct_buf_at(r->saved, C), rm, rv, x,
                                              gamma, beta, (size_t)net->batch, C, HW,
                                              (float)ct_layer_key(l, "momentum"), eps, r->act != 0);
        return ct_batchnorm_forward_eval(ctx, r->out, x, gamma, beta, rm, rv, (size_t)net->batch, C,
                                         HW, eps, r->act != 0);
    }
    case K_RELU:
    case K_LEAKY:
    case K_SIGMOID:
    case K_TANH:
    case K_GELU:
        return ct_act_forward(ctx, act_of_kind(k), r->out, x, r->out_n);
    case K_DROPOUT: {
        float p = (float)ct_layer_key(l, "p");
        if (!training || p == 0)
            return ct_copy(ctx, r->out, x, r->out_n);
        return ct_dropout_forward(ctx, r->out, x, r->out_n, p, step_seed(seed, step), (uint32_t)i);
    }
    case K_MAXPOOL:
        return ct_maxpool_forward(ctx, &r->pool, r->out, x, training ? r->saved : none());
    case K_AVGPOOL:
        return ct_avgpool_forward(ctx, &r->pool, r->out, x);
    case K_GAP: {
        const ct_shape *s = &net->model->layers[l->inputs[0]].out;
        return ct_global_avgpool_forward(ctx, r->out, x, net->batch, s->d[0], s->d[1], s->d[2]);
    }
    case K_FLATTEN:
        return CT_OK; /* a view of its input */
    case K_LRN:
        return ct_lrn_forward(ctx, &r->lrn, r->out, x, training ? r->saved : none(), net->batch,
                              l->out.d[0], l->out.d[1] * l->out.d[2]);
    case K_ADD:
        return ct_add_forward(ctx, r->out, x, net->rt[l->inputs[1]].out, r->out_n);
    case K_SHORTCUT: {
        const ct_shape *s = &net->model->layers[l->inputs[0]].out;
        return ct_shortcut_a_forward(ctx, r->out, x, net->batch, s->d[0], s->d[1], s->d[2],
                                     (int)ct_layer_key(l, "stride"), l->out.d[0]);
    }
    case K_EMBEDDING:
        return ct_embedding_forward(ctx, r->out, r->param, x, r->rows, (size_t)ct_layer_key(l, "vocab"),
                                    (size_t)ct_layer_key(l, "dim"));
    case K_LSTM:
        return ct_lstm_forward(ctx, &r->lstm, r->out, none(), none(), x, r->param, r->saved);
    case K_XENT:
        return ct_softmax_xent_forward(ctx, net->loss, net->correct, x, net->labels, in->rows,
                                       in->out_n / in->rows, net->scratch);
    case K_MSE:
        return ct_mse_forward(ctx, net->loss, x, net->targets, in->out_n);
    default:
        return ct_fail(ctx, CT_ERR_INTERNAL, "layer '%s': no forward for type %s", l->name, l->type->name);
    }
}

int ct_net_profile(ct_net *net, int on)
{
    free(net->prof_fwd);
    free(net->prof_bwd);
    net->prof_fwd = net->prof_bwd = NULL;
    if (!on)
        return CT_OK;
    net->prof_fwd = calloc(net->model->count, sizeof(double));
    net->prof_bwd = calloc(net->model->count, sizeof(double));
    if (!net->prof_fwd || !net->prof_bwd) {
        ct_net_profile(net, 0);
        return ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    }
    return CT_OK;
}

int ct_net_forward(ct_net *net, int training, uint64_t seed, long step)
{
    for (size_t i = 0; i < net->model->count; i++) {
        double t0 = net->prof_fwd ? ct_now() : 0;
        int st = forward_layer(net, i, training, seed, step);
        if (!st && net->prof_fwd && !(st = ct_context_finish(net->ctx)))
            net->prof_fwd[i] += ct_now() - t0;
        if (st)
            return ct_fail(net->ctx, st, "forward of layer '%s' (%s): %s", net->model->layers[i].name,
                           net->model->layers[i].type->name, ct_context_last_error(net->ctx));
    }
    return CT_OK;
}

/* ---- backward ---- */

int ct_net_zero_grads(ct_net *net)
{
    if (!net->nparams)
        return CT_OK;
    return ct_fill(net->ctx, net->arena[CT_ARENA_GRADS].mem ? (ct_buf){ net->arena[CT_ARENA_GRADS].mem, 0 }
                                                            : none(),
                   net->arena_size[CT_ARENA_GRADS], 0.0f);
}

/* Where layer i's backward puts the gradient of its input k, and whether
 * it must then be accumulated into the producer's dout. */
static ct_buf grad_sink(ct_net *net, const ct_layer *l, int k, int *accumulate)
{
    int p = l->inputs[k];
    const ct_lrt *pr = &net->rt[p];
    *accumulate = 0;
    if (!pr->needs_dout)
        return net->gtmp; /* nobody needs it (the input layer) */
    if (net->model->layers[p].consumers > 1) {
        *accumulate = 1;
        return net->gtmp;
    }
    return pr->dout;
}

static int deliver(ct_net *net, const ct_layer *l, int k, int accumulate)
{
    if (!accumulate)
        return CT_OK;
    const ct_lrt *pr = &net->rt[l->inputs[k]];
    return ct_add_accumulate(net->ctx, pr->dout, net->gtmp, pr->out_n);
}

static int backward_layer(ct_net *net, size_t i, uint64_t seed, long step)
{
    ct_context *ctx = net->ctx;
    const ct_layer *l = &net->model->layers[i];
    ct_lrt *r = &net->rt[i];
    int k = r->kind;
    if (k == K_INPUT)
        return CT_OK;
    const ct_lrt *in = &net->rt[l->inputs[0]];
    int input_needs = in->needs_dout;
    int acc = 0, st = CT_OK;
    ct_buf dx = grad_sink(net, l, 0, &acc);
    ct_buf x = in->out, dy = r->dout;
    switch (k) {
    case K_DENSE:
    case K_CONV: {
        if (r->act)
            st = ct_act_backward(ctx, (ct_act)r->act, dy, dy, r->act == CT_ACT_GELU ? r->preact : r->out,
                                 r->out, r->out_n);
        if (st)
            return st;
        ct_buf gdx = input_needs ? dx : none();
        if (k == K_DENSE) {
            int outF = (int)ct_layer_key(l, "out");
            st = ct_dense_backward(ctx, gdx, r->grad, grad_bias_of(l, r), dy, x, r->param, (int)r->rows,
                                   (int)(in->out_n / r->rows), outF);
        } else {
            st = ct_conv2d_backward(ctx, &r->conv, gdx, r->grad, grad_bias_of(l, r), dy, x, r->param,
                                    net->scratch, net->scratch_n);
        }
        if (!input_needs)
            return st;
        break;
    }
    case K_BN: {
        size_t C = (size_t)l->out.d[0], HW = l->out.ndim == 3 ? (size_t)l->out.d[1] * l->out.d[2] : 1;
        st = ct_batchnorm_backward_train(ctx, dx, r->grad, ct_buf_at(r->grad, C), dy, x, r->out, r->param,
                                         r->saved, ct_buf_at(r->saved, C), (size_t)net->batch, C, HW,
                                         r->act != 0);
        break;
    }
    case K_RELU:
    case K_LEAKY:
    case K_SIGMOID:
    case K_TANH:
    case K_GELU:
        if (!input_needs)
            return CT_OK;
        st = ct_act_backward(ctx, act_of_kind(k), dx, dy, x, r->out, r->out_n);
        break;
    case K_DROPOUT: {
        if (!input_needs)
            return CT_OK;
        float p = (float)ct_layer_key(l, "p");
        st = p == 0 ? ct_copy(ctx, dx, dy, r->out_n)
                    : ct_dropout_backward(ctx, dx, dy, r->out_n, p, step_seed(seed, step), (uint32_t)i);
        break;
    }
    case K_MAXPOOL:
        if (!input_needs)
            return CT_OK;
        st = ct_maxpool_backward(ctx, &r->pool, dx, dy, x, r->saved);
        break;
    case K_AVGPOOL:
        if (!input_needs)
            return CT_OK;
        st = ct_avgpool_backward(ctx, &r->pool, dx, dy);
        break;
    case K_GAP: {
        if (!input_needs)
            return CT_OK;
        const ct_shape *s = &net->model->layers[l->inputs[0]].out;
        st = ct_global_avgpool_backward(ctx, dx, dy, net->batch, s->d[0], s->d[1], s->d[2]);
        break;
    }
    case K_FLATTEN:
        if (!input_needs || r->view)
            return CT_OK; /* the gradient is already in place */
        st = ct_copy(ctx, dx, dy, r->out_n);
        break;
    case K_LRN:
        if (!input_needs)
            return CT_OK;
        st = ct_lrn_backward(ctx, &r->lrn, dx, dy, x, r->saved, net->batch, l->out.d[0],
                             l->out.d[1] * l->out.d[2]);
        break;
    case K_ADD:
        for (int j = 0; j < 2 && !st; j++) {
            const ct_lrt *pr = &net->rt[l->inputs[j]];
            if (!pr->needs_dout)
                continue;
            st = net->model->layers[l->inputs[j]].consumers > 1
                     ? ct_add_accumulate(ctx, pr->dout, dy, r->out_n)
                     : ct_copy(ctx, pr->dout, dy, r->out_n);
        }
        return st;
    case K_SHORTCUT: {
        if (!input_needs)
            return CT_OK;
        const ct_shape *s = &net->model->layers[l->inputs[0]].out;
        st = ct_shortcut_a_backward(ctx, dx, dy, net->batch, s->d[0], s->d[1], s->d[2],
                                    (int)ct_layer_key(l, "stride"), l->out.d[0]);
        break;
    }
    case K_EMBEDDING:
        return ct_embedding_backward(ctx, r->grad, dy, x, net->scratch, r->rows,
                                     (size_t)ct_layer_key(l, "vocab"), (size_t)ct_layer_key(l, "dim"));
    case K_LSTM:
        st = ct_lstm_backward(ctx, &r->lstm, dx, r->grad, dy, x, r->param, r->saved);
        break;
    case K_XENT:
        st = ct_softmax_xent_backward(ctx, dx, x, net->labels, in->rows, in->out_n / in->rows, 1.0f);
        break;
    case K_MSE:
        st = ct_mse_backward(ctx, dx, none(), x, net->targets, in->out_n, 1.0f);
        break;
    default:
        return ct_fail(ctx, CT_ERR_INTERNAL, "layer '%s': no backward for type %s", l->name, l->type->name);
    }
    if (st || !input_needs)
        return st;
    return deliver(net, l, 0, acc);
}

int ct_net_backward(ct_net *net, uint64_t seed, long step)
{
    const ct_model *m = net->model;
    for (size_t i = 0; i < m->count; i++)
        if (m->layers[i].consumers > 1 && net->rt[i].needs_dout) {
            int st = ct_fill(net->ctx, net->rt[i].dout, net->rt[i].out_n, 0.0f);
            if (st)
                return st;
        }
    for (size_t i = m->count; i-- > 0;) {
        double t0 = net->prof_bwd ? ct_now() : 0;
        int st = backward_layer(net, i, seed, step);
        if (!st && net->prof_bwd && !(st = ct_context_finish(net->ctx)))
            net->prof_bwd[i] += ct_now() - t0;
        if (st)
            return ct_fail(net->ctx, st, "backward of layer '%s' (%s): %s", m->layers[i].name,
                           m->layers[i].type->name, ct_context_last_error(net->ctx));
    }
    return CT_OK;
}
