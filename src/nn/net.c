/*
 * net.c - the memory plan, initialization and the forward and backward
 * passes of a model on one device.
 *
 * Plan: every layer's output gets its own slice of the activation arena;
 * output gradients share theirs by liveness (from the first backward that
 * writes one to its own layer's backward); what a backward needs beyond its inputs
 * and output (batch-norm statistics, LSTM gates, a fused gelu's
 * pre-activation, an overlapping max pool's argmax, an LRN's scale) is
 * "saved" in the activation arena; workspaces only used inside one call
 * (convolution columns, the embedding's chains) share one scratch slice.
 * Activations, their gradients and scratch are split into chunks no larger
 * than one allocation; parameters, gradients and buffers stay flat.
 * Gradients: a layer's output gradient is written by its only reader, or,
 * when several layers read it, zeroed first and accumulated.
 */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
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

/* Hands out back-to-back slices of a flat arena being sized: parameters,
 * gradients and buffers hold exactly nparams (nbuffers) floats, no gaps, as
 * the optimizer, its state, the gradient norm and checkpoints count them. */
static size_t take(size_t *used, size_t n)
{
    size_t at = *used;
    *used = at + n;
    return at;
}

#define ALIGN16(n) (((n) + 15) & ~(size_t)15)
#define MAX_CHUNKS 4096
#define ALWAYS INT_MAX /* the end of a lifetime that spans both passes */

/* Until ct_net_alloc patches in the buffers, (arena, chunk) is a small
 * integer in place of the cl_mem: no real object has such an address. */
static ct_buf at_chunk(int arena, int chunk, size_t off)
{
    ct_buf b = { (cl_mem)(uintptr_t)(1 + arena + CT_ARENA_COUNT * chunk), off };
    return b;
}

static ct_buf at_arena(int arena, size_t off)
{
    return at_chunk(arena, 0, off);
}

static const char *arena_names[CT_ARENA_COUNT] = { "parameters", "gradients", "buffers",
                                                    "activations", "activation gradients", "scratch" };

static void free_plan(ct_net *net);

/* A tensor waiting for its place in a chunked arena, alive over backward
 * steps [start, end] (step s runs layer count-1-s); activations and scratch
 * live from 0 to ALWAYS. */
typedef struct want {
    int arena, start, end, chunk;
    size_t n, off;
    ct_buf *dst;
    const char *layer;
} want;

typedef struct wants {
    want *w;
    size_t n, cap;
} wants;

static int wish(wants *ws, int arena, size_t n, int start, int end, ct_buf *dst, const char *layer)
{
    if (ws->n == ws->cap) {
        size_t cap = ws->cap ? 2 * ws->cap : 64;
        want *w = realloc(ws->w, cap * sizeof *w);
        if (!w)
            return CT_ERR_NO_MEMORY;
        ws->w = w;
        ws->cap = cap;
    }
    want x = { arena, start, end, -1, n ? n : 1, 0, dst, layer };
    ws->w[ws->n++] = x;
    return CT_OK;
}

/* Largest first (then by first use): "greedy by size", which packs the
 * intervals of a chain of layers tighter than placing them in time order. */
static int by_size(const void *a, const void *b)
{
    const want *x = *(const want *const *)a, *y = *(const want *const *)b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The lowest offset in chunk c at which x overlaps no placed tensor alive
 * at the same time and stays within cap floats; SIZE_MAX if none. */
static size_t lowest_fit(want *const *order, size_t placed, const want *x, int c, size_t cap)
{
    size_t best = SIZE_MAX;
    for (size_t i = 0; i <= placed; i++) {
        size_t cand = 0;
        if (i < placed) {
            const want *y = order[i];
            if (y->chunk != c || y->end < x->start || x->end < y->start)
                continue;
            cand = ALIGN16(y->off + y->n);
        }
        if (cand >= best || cand > cap || x->n > cap - cand)
            continue;
        int clash = 0;
        for (size_t j = 0; j < placed && !clash; j++) {
            const want *y = order[j];
            clash = y->chunk == c && y->end >= x->start && x->end >= y->start && y->off < cand + x->n &&
                    cand < y->off + y->n;
        }
        if (!clash)
            best = cand;
    }
    return best;
}

/* Places the tensors of one arena in chunks of at most cap floats: each at
 * the lowest offset of the first chunk where it overlaps nothing alive at
 * the same time (first fit, largest tensors first); a tensor larger
 * than cap gets a chunk of its own, which the fit check then reports. */
static int place(ct_net *net, wants *ws, int arena, size_t cap)
{
    size_t n = 0, always = 1;
    want **order = malloc((ws->n + 1) * sizeof *order);
    size_t *size = calloc(MAX_CHUNKS, sizeof *size);
    int nch = 0, st = CT_OK;
    if (!order || !size) {
        st = CT_ERR_NO_MEMORY;
        goto done;
    }
    for (size_t i = 0; i < ws->n; i++)
        if (ws->w[i].arena == arena) {
            order[n++] = &ws->w[i];
            always &= ws->w[i].start == 0 && ws->w[i].end == ALWAYS;
        }
    if (!always)
        qsort(order, n, sizeof *order, by_size);
    for (size_t i = 0; i < n; i++) {
        want *x = order[i];
        if (x->n > net->largest_n[arena]) {
            net->largest_n[arena] = x->n;
            net->largest_layer[arena] = x->layer;
        }
        for (int c = 0; c < nch && x->chunk < 0; c++) {
            /* alive with everything: only the chunk's end can hold it */
            size_t off = always ? (ALIGN16(size[c]) <= cap && x->n <= cap - ALIGN16(size[c])
                                       ? ALIGN16(size[c]) : SIZE_MAX)
                                : lowest_fit(order, i, x, c, cap);
            if (off != SIZE_MAX) {
                x->chunk = c;
                x->off = off;
            }
        }
        if (x->chunk < 0) {
            if (nch == MAX_CHUNKS) {
                st = CT_ERR_UNSUPPORTED;
                goto done;
            }
            x->chunk = nch++;
            x->off = 0;
        }
        if (x->off + x->n > size[x->chunk])
            size[x->chunk] = x->off + x->n;
        *x->dst = at_chunk(arena, x->chunk, x->off);
    }
    if (!nch)
        nch = 1; /* an empty arena still has a (small) buffer */
    net->chunk_size[arena] = malloc((size_t)nch * sizeof(size_t));
    net->chunk[arena] = calloc((size_t)nch, sizeof(cl_mem));
    if (!net->chunk_size[arena] || !net->chunk[arena]) {
        st = CT_ERR_NO_MEMORY;
        goto done;
    }
    net->nchunks[arena] = nch;
    net->arena_size[arena] = 0;
    for (int c = 0; c < nch; c++) {
        net->chunk_size[arena][c] = ALIGN16(size[c] ? size[c] : 16);
        net->arena_size[arena] += net->chunk_size[arena][c];
    }
done:
    free(order);
    free(size);
    return st;
}

/* "512M", "2G", "1048576": bytes, with binary suffixes K, M, G, T (an
 * optional "iB" or "B" after them). */
static int parse_bytes(const char *s, uint64_t *out)
{
    char *end = NULL;
    if (!s || *s < '0' || *s > '9')
        return 0;
    unsigned long long v = strtoull(s, &end, 10);
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    case 't': case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
        end += strlen(end);
    if (*end || v == 0 || v > (UINT64_MAX >> shift))
        return 0;
    *out = (uint64_t)v << shift;
    return 1;
}

/* The limits a plan must meet: the device's, lowered by CLTRAIN_MEM_LIMIT
 * (global memory to use) and CLTRAIN_MAX_ALLOC (bytes per buffer), so a
 * run can keep to a share of a device and tests can pin both. */
static int plan_limits(ct_context *ctx, ct_net *net)
{
    const ct_device_info *dev = ctx ? ct_context_device(ctx) : NULL;
    net->limit_global = dev ? dev->global_mem_bytes : UINT64_MAX;
    net->limit_alloc = dev ? dev->max_alloc_bytes : UINT64_MAX;
    static const char *const vars[2] = { "CLTRAIN_MEM_LIMIT", "CLTRAIN_MAX_ALLOC" };
    for (int k = 0; k < 2; k++) {
        const char *s = getenv(vars[k]);
        uint64_t v;
        if (!s || !*s)
            continue;
        if (!parse_bytes(s, &v))
            return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s='%s' is not a size. HINT: give bytes or a "
                           "size like 512M or 2G, or unset it", vars[k], s);
        uint64_t *lim = k ? &net->limit_alloc : &net->limit_global;
        if (v < *lim) {
            *lim = v;
            net->limit_env |= 1 << k;
        }
    }
    if (net->limit_alloc > net->limit_global)
        net->limit_alloc = net->limit_global;
    return CT_OK;
}

int ct_net_plan(ct_context *ctx, const ct_model *m, int batch, ct_net *net)
{
    return ct_net_plan_grouped(ctx, m, batch, 1, net);
}

int ct_net_plan_grouped(ct_context *ctx, const ct_model *m, int batch, int bn_groups, ct_net *net)
{
    memset(net, 0, sizeof *net);
    net->ctx = ctx;
    net->model = m;
    net->batch = batch;
    net->bn_groups = bn_groups;
    if (batch < 1 || batch > (1 << 24))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "batch size %d is out of range [1, 2^24]", batch);
    if (bn_groups < 1 || batch % bn_groups)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "batch-norm groups %d do not divide the batch %d "
                       "into equal parts. HINT: use a batch that is a multiple of the groups",
                       bn_groups, batch);
    wants ws = { NULL, 0, 0 };
    size_t *lastw = NULL;
    int st = plan_limits(ctx, net);
    if (st)
        return st;
    net->rt = calloc(m->count, sizeof *net->rt);
    lastw = calloc(m->count, sizeof *lastw);
    if (!net->rt || !lastw)
        goto oom;
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
        if (r->out_n > (size_t)UINT32_MAX / 2) {
            st = ct_fail(ctx, CT_ERR_SHAPE, "layer '%s' output of %zu elements at batch %d is too "
                         "large. HINT: use a smaller batch", l->name, r->out_n, batch);
            goto fail;
        }
        if (k == K_FLATTEN) {
            /* a view: the producer's output (copied once placed), and its
             * gradient too when nobody else writes that gradient */
            const ct_lrt *p = &net->rt[l->inputs[0]];
            r->needs_dout = 1;
            r->view = p->needs_dout && m->layers[l->inputs[0]].consumers == 1;
        } else if (k == K_INPUT) {
            /* in the batch slots, set by ct_net_alloc */
            net->slot_label_off = (r->out_n + 15) & ~(size_t)15;
        } else if (!l->type->is_loss) {
            if (wish(&ws, CT_ARENA_ACTS, r->out_n, 0, ALWAYS, &r->out, l->name))
                goto oom;
            r->needs_dout = 1;
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
            if (r->act == CT_ACT_GELU && wish(&ws, CT_ARENA_ACTS, r->out_n, 0, ALWAYS, &r->preact, l->name))
                goto oom;
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
            r->saved_n = 2 * (size_t)l->out.d[0] * (size_t)bn_groups; /* mean, 1/std per group */
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
            if (wish(&ws, CT_ARENA_ACTS, p->out_n, 0, ALWAYS, &net->targets, l->name))
                goto oom;
            break;
        }
        default:
            break;
        }
        if (r->saved_n && wish(&ws, CT_ARENA_ACTS, r->saved_n, 0, ALWAYS, &r->saved, l->name))
            goto oom;
        if (scratch > net->scratch_n)
            net->scratch_n = scratch;
    }
    if (net->slot_n < net->slot_label_off)
        net->slot_n = net->slot_label_off;
    if (wish(&ws, CT_ARENA_ACTS, 1, 0, ALWAYS, &net->loss, "loss") ||
        wish(&ws, CT_ARENA_ACTS, 1, 0, ALWAYS, &net->correct, "loss") ||
        wish(&ws, CT_ARENA_SCRATCH, net->scratch_n, 0, ALWAYS, &net->scratch, NULL) ||
        wish(&ws, CT_ARENA_SCRATCH, gtmp_n, 0, ALWAYS, &net->gtmp, NULL))
        goto oom;

    /* An output gradient lives from the first backward that writes it (its
     * last reader's: backward runs in reverse) to its own layer's backward,
     * the last to read it; a flatten view's gradient is its producer's, so
     * the pair lives from the later of their last readers. Backward step s
     * runs layer count-1-s. */
    int last = (int)m->count - 1;
    for (size_t i = 0; i < m->count; i++)
        for (int j = 0; j < m->layers[i].ninputs; j++)
            net->rt[m->layers[i].inputs[j]].last_reader = i;
    for (size_t i = m->count; i-- > 0;) {
        ct_lrt *r = &net->rt[i];
        if (!r->needs_dout)
            continue;
        size_t lw = r->last_reader > lastw[i] ? r->last_reader : lastw[i];
        if (r->view) {
            size_t p = m->layers[i].inputs[0];
            lastw[p] = lw > lastw[p] ? lw : lastw[p];
            continue;
        }
        int end = last - (int)i, start = lw > i ? last - (int)lw : end;
        net->dacts_unshared += ALIGN16(r->out_n);
        if (wish(&ws, CT_ARENA_DACTS, r->out_n, start, end, &r->dout, m->layers[i].name))
            goto oom;
    }

    /* parameters, gradients and buffers stay one flat buffer each */
    for (int a = CT_ARENA_PARAMS; a <= CT_ARENA_BUFFERS; a++) {
        net->nchunks[a] = 1;
        net->chunk_size[a] = malloc(sizeof(size_t));
        net->chunk[a] = calloc(1, sizeof(cl_mem));
        if (!net->chunk_size[a] || !net->chunk[a])
            goto oom;
        net->chunk_size[a][0] = use[a] ? use[a] : 16; /* the optimizer steps over arena_size */
    }
    uint64_t capf = net->limit_alloc / sizeof(float);
    size_t cap = capf > (uint64_t)SIZE_MAX ? SIZE_MAX & ~(size_t)15 : (size_t)capf & ~(size_t)15;
    for (int a = CT_ARENA_ACTS; a <= CT_ARENA_SCRATCH; a++) {
        st = place(net, &ws, a, cap);
        if (st == CT_ERR_NO_MEMORY)
            goto oom;
        if (st) {
            st = ct_fail(ctx, CT_ERR_UNSUPPORTED, "the %s arena at batch %d needs more than %d buffers "
                         "of %.1f MiB. HINT: raise CLTRAIN_MAX_ALLOC or use a smaller batch",
                         arena_names[a], batch, MAX_CHUNKS, (double)cap * 4.0 / 1048576.0);
            goto fail;
        }
    }
    /* views follow their producers, which come first in file order */
    for (size_t i = 1; i < m->count; i++) {
        ct_lrt *r = &net->rt[i];
        if (r->kind != K_FLATTEN)
            continue;
        r->out = net->rt[m->layers[i].inputs[0]].out;
        if (r->view)
            r->dout = net->rt[m->layers[i].inputs[0]].dout;
    }
    free(ws.w);
    free(lastw);
    return CT_OK;

oom:
    st = ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory planning the network");
fail:
    free(ws.w);
    free(lastw);
    free_plan(net);
    return st;
}

static void patch(ct_net *net, ct_buf *b)
{
    uintptr_t id = (uintptr_t)b->mem;
    if (id >= 1 && id <= (uintptr_t)CT_ARENA_COUNT * MAX_CHUNKS) {
        int a = (int)((id - 1) % CT_ARENA_COUNT), c = (int)((id - 1) / CT_ARENA_COUNT);
        b->mem = net->chunk[a][c];
    }
}

static double mib(uint64_t bytes)
{
    return (double)bytes / 1048576.0;
}

static uint64_t plan_bytes(const ct_net *net)
{
    uint64_t total = 2 * (uint64_t)net->slot_n * sizeof(float);
    for (int a = 0; a < CT_ARENA_COUNT; a++)
        total += (uint64_t)net->arena_size[a] * sizeof(float);
    return total;
}

static size_t largest_chunk(const ct_net *net, int a)
{
    size_t n = 0;
    for (int c = 0; c < net->nchunks[a]; c++)
        n = net->chunk_size[a][c] > n ? net->chunk_size[a][c] : n;
    return n;
}

/* Why the plan exceeds the limits when at most `global` bytes may be used
 * in all (empty when it fits); *batch_helps: whether a smaller batch can
 * help (the parameters do not shrink with it). */
static void misfit(const ct_net *net, uint64_t global, char *why, size_t cap, int *batch_helps)
{
    uint64_t alloc = net->limit_alloc < global ? net->limit_alloc : global;
    why[0] = '\0';
    *batch_helps = 1;
    for (int a = 0; a < CT_ARENA_COUNT; a++) {
        uint64_t big = (uint64_t)largest_chunk(net, a) * sizeof(float);
        if (big <= alloc)
            continue;
        if (a <= CT_ARENA_BUFFERS) {
            *batch_helps = 0;
            snprintf(why, cap, "the %s are one buffer of %.2f MiB (the optimizer and checkpoints "
                     "need them flat), more than the %.2f MiB one allocation may have",
                     arena_names[a], mib(big), mib(alloc));
        } else {
            const char *who = net->largest_layer[a];
            snprintf(why, cap, "%s%s%s needs a tensor of %.2f MiB in the %s, more than the %.2f MiB one "
                     "allocation may have", who ? "layer '" : "the largest workspace", who ? who : "",
                     who ? "'" : "", mib((uint64_t)net->largest_n[a] * sizeof(float)), arena_names[a],
                     mib(alloc));
        }
        return;
    }
    if ((uint64_t)net->slot_n * sizeof(float) > alloc) {
        snprintf(why, cap, "a batch slot (input and labels) of %.2f MiB is more than the %.2f MiB one "
                 "allocation may have", mib((uint64_t)net->slot_n * sizeof(float)), mib(alloc));
        return;
    }
    if (plan_bytes(net) > global)
        snprintf(why, cap, "it needs %.2f MiB in all, more than the %.2f MiB there are",
                 mib(plan_bytes(net)), mib(global));
}

static void free_plan(ct_net *net)
{
    for (int a = 0; a < CT_ARENA_COUNT; a++) {
        free(net->chunk[a]);
        free(net->chunk_size[a]);
        net->chunk[a] = NULL;
        net->chunk_size[a] = NULL;
        net->nchunks[a] = 0;
    }
    free(net->rt);
    net->rt = NULL;
}

static int fits_at(const ct_net *net, int batch, uint64_t global)
{
    ct_net t;
    int ok = 0, helps;
    char why[8];
    if (!ct_net_plan_grouped(net->ctx, net->model, batch, net->bn_groups, &t)) {
        misfit(&t, global, why, sizeof why, &helps);
        ok = !why[0];
    }
    free_plan(&t);
    return ok;
}

int ct_net_largest_batch(const ct_net *net, uint64_t global)
{
    /* the planner does not allocate, so bisect over it: fits(lo), !fits(hi) */
    int g = net->bn_groups > 0 ? net->bn_groups : 1, lo = 0, hi = net->batch / g + 1;
    if (fits_at(net, (hi - 1) * g, global))
        return (hi - 1) * g;
    hi--;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (fits_at(net, mid * g, global))
            lo = mid;
        else
            hi = mid;
    }
    return lo * g;
}

/* "parameters 97.5 MiB, ..., 4391.4 MiB in all" and the limits, for messages */
static void describe(const ct_net *net, char *plan, size_t pcap, char *lim, size_t lcap)
{
    size_t at = 0;
    for (int a = 0; a < CT_ARENA_COUNT && at < pcap; a++) {
        int n = snprintf(plan + at, pcap - at, "%s %.2f MiB", arena_names[a],
                         mib((uint64_t)net->arena_size[a] * sizeof(float)));
        at += n > 0 ? (size_t)n : 0;
        if (net->nchunks[a] > 1 && at < pcap) {
            n = snprintf(plan + at, pcap - at, " in %d buffers", net->nchunks[a]);
            at += n > 0 ? (size_t)n : 0;
        }
        if (at < pcap)
            at += (size_t)snprintf(plan + at, pcap - at, ", ");
    }
    if (at < pcap)
        snprintf(plan + at, pcap - at, "batch slots 2 x %.2f MiB; %.2f MiB in all",
                 mib((uint64_t)net->slot_n * sizeof(float)), mib(plan_bytes(net)));
    const ct_device_info *dev = net->ctx ? ct_context_device(net->ctx) : NULL;
    static const char *const env[4] = { "", " (lowered by CLTRAIN_MEM_LIMIT)", " (lowered by CLTRAIN_MAX_ALLOC)",
                                        " (lowered by CLTRAIN_MEM_LIMIT and CLTRAIN_MAX_ALLOC)" };
    snprintf(lim, lcap, "%.2f MiB per allocation and %.2f MiB in all on %s%s", mib(net->limit_alloc),
             mib(net->limit_global), dev ? dev->name : "any device", env[net->limit_env & 3]);
}

int ct_net_check_fit(ct_net *net)
{
    char why[384], plan[768], lim[640];
    int helps;
    misfit(net, net->limit_global, why, sizeof why, &helps);
    if (!why[0])
        return CT_OK;
    describe(net, plan, sizeof plan, lim, sizeof lim);
    int best = helps ? ct_net_largest_batch(net, net->limit_global) : 0;
    if (best > 0)
        return ct_fail(net->ctx, CT_ERR_NO_MEMORY, "the memory plan at batch %d does not fit: %s. Plan: "
                       "%s. Limits: %s. The largest batch that fits is %d. HINT: use a batch of %d or "
                       "less%s", net->batch, why, plan, lim, best, best,
                       net->limit_env ? ", or raise the limit in the environment" : "");
    return ct_fail(net->ctx, CT_ERR_NO_MEMORY, "the memory plan at batch %d does not fit: %s. Plan: %s. "
                   "Limits: %s. No batch fits. HINT: use a smaller model or a device with more memory%s",
                   net->batch, why, plan, lim, net->limit_env ? ", or raise the limit in the environment" : "");
}

/* The device refused memory the limits allowed: report it with the plan and
 * the largest batch whose plan fits in what the device did give. */
static int alloc_failed(ct_net *net, int st, const char *where, uint64_t given)
{
    char cause[512], plan[768], lim[640];
    snprintf(cause, sizeof cause, "%s", ct_context_last_error(net->ctx));
    describe(net, plan, sizeof plan, lim, sizeof lim);
    int best = ct_net_largest_batch(net, given);
    return ct_fail(net->ctx, st, "allocating the memory plan at batch %d failed at %s: %s. Plan: %s. "
                   "Limits: %s. The device gave %.2f MiB before; the largest batch that fits in that is "
                   "%d. HINT: use a batch of %d or less, or set CLTRAIN_MEM_LIMIT to what the device can "
                   "give", net->batch, where, cause, plan, lim, mib(given), best, best);
}

static void release_buffers(ct_net *net)
{
    for (int a = 0; a < CT_ARENA_COUNT; a++) {
        for (int c = 0; c < net->nchunks[a]; c++)
            ct_buffer_release(&net->chunk[a][c]);
        memset(&net->arena[a], 0, sizeof net->arena[a]);
    }
    ct_buffer_release(&net->slot[0]);
    ct_buffer_release(&net->slot[1]);
}

/* A driver may defer the allocation to first use (pocl maps host memory
 * then): a zero fill of each buffer, waited for, makes that happen here. */
static int touch(ct_net *net, cl_mem mem, size_t n)
{
    int st = CT_OK;
    for (size_t at = 0; at < n && !st; at += (size_t)1 << 30) {
        size_t k = n - at < ((size_t)1 << 30) ? n - at : (size_t)1 << 30;
        st = ct_fill(net->ctx, (ct_buf){ mem, at }, k, 0.0f);
    }
    return st ? st : ct_context_finish(net->ctx);
}

int ct_net_alloc(ct_net *net)
{
    int st = ct_net_check_fit(net);
    if (st)
        return st;
    uint64_t given = 0;
    char where[160];
    for (int a = 0; a < CT_ARENA_COUNT; a++)
        for (int c = 0; c < net->nchunks[a]; c++) {
            uint64_t bytes = (uint64_t)net->chunk_size[a][c] * sizeof(float);
            if ((st = ct_buffer_create(net->ctx, (size_t)bytes, &net->chunk[a][c]))) {
                snprintf(where, sizeof where, "buffer %d of %d of the %s (%.2f MiB)", c + 1,
                         net->nchunks[a], arena_names[a], mib(bytes));
                goto fail;
            }
            given += bytes;
        }
    for (int k = 0; k < 2; k++) {
        if ((st = ct_buffer_create(net->ctx, net->slot_n * sizeof(float), &net->slot[k]))) {
            snprintf(where, sizeof where, "batch slot %d (%.2f MiB)", k + 1,
                     mib((uint64_t)net->slot_n * sizeof(float)));
            goto fail;
        }
        given += (uint64_t)net->slot_n * sizeof(float);
    }
    given = 0;
    for (int a = 0; a < CT_ARENA_COUNT; a++)
        for (int c = 0; c < net->nchunks[a]; c++) {
            if ((st = touch(net, net->chunk[a][c], net->chunk_size[a][c]))) {
                snprintf(where, sizeof where, "the first use of buffer %d of %d of the %s (%.2f MiB)",
                         c + 1, net->nchunks[a], arena_names[a],
                         mib((uint64_t)net->chunk_size[a][c] * sizeof(float)));
                goto fail;
            }
            given += (uint64_t)net->chunk_size[a][c] * sizeof(float);
        }
    for (int k = 0; k < 2; k++) {
        if ((st = touch(net, net->slot[k], net->slot_n))) {
            snprintf(where, sizeof where, "the first use of batch slot %d", k + 1);
            goto fail;
        }
        given += (uint64_t)net->slot_n * sizeof(float);
    }
    for (int a = 0; a < CT_ARENA_COUNT; a++) {
        net->arena[a].mem = net->chunk[a][0];
        net->arena[a].capacity = net->arena[a].used = net->arena_size[a];
        net->arena[a].name = arena_names[a];
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
    ct_net_use_slot(net, 0);
    net->allocated = 1;
    return CT_OK;

fail:
    st = alloc_failed(net, st, where, given);
    release_buffers(net);
    return st;
}

/* Appends printf-style text to buf (size cap) at *at; *at counts what the
 * whole text needs even when it is cut short. */
static void put(char *buf, size_t cap, size_t *at, const char *fmt, ...) CT_PRINTF(4, 5);
static void put(char *buf, size_t cap, size_t *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(*at < cap ? buf + *at : NULL, *at < cap ? cap - *at : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        *at += (size_t)n;
}

size_t ct_net_format_plan(const ct_net *net, char *buf, size_t cap)
{
    static const char *const names[CT_ARENA_COUNT] = { "parameters", "gradients", "buffers",
                                                        "activations", "activation grads", "scratch" };
    size_t at = 0;
    if (cap)
        buf[0] = '\0';
    put(buf, cap, &at, "memory plan at batch %d:\n", net->batch);
    double total = 0;
    for (int a = 0; a < CT_ARENA_COUNT; a++) {
        double mb = mib((uint64_t)net->arena_size[a] * sizeof(float));
        total += mb;
        put(buf, cap, &at, "  %-18s %10.2f MiB", names[a], mb);
        if (net->nchunks[a] > 1)
            put(buf, cap, &at, " in %d buffers of at most %.2f MiB", net->nchunks[a],
                mib((uint64_t)largest_chunk(net, a) * sizeof(float)));
        if (a == CT_ARENA_DACTS)
            put(buf, cap, &at, " (shared by liveness; %.2f MiB without)",
                mib((uint64_t)net->dacts_unshared * sizeof(float)));
        put(buf, cap, &at, "\n");
    }
    double slots = mib(2 * (uint64_t)net->slot_n * sizeof(float));
    total += slots;
    put(buf, cap, &at, "  %-18s %10.2f MiB (two, so uploads overlap compute)\n", "batch slots", slots);
    put(buf, cap, &at, "  %-18s %10.2f MiB (plus optimizer state)\n", "total", total);
    char plan[768], lim[640], why[384];
    int helps;
    describe(net, plan, sizeof plan, lim, sizeof lim);
    put(buf, cap, &at, "  %-18s %s\n", "limits", lim);
    misfit(net, net->limit_global, why, sizeof why, &helps);
    if (!why[0])
        put(buf, cap, &at, "  %-18s yes\n", "fits");
    else if (helps)
        put(buf, cap, &at, "  %-18s no: %s; the largest batch that fits is %d\n", "fits", why,
            ct_net_largest_batch(net, net->limit_global));
    else
        put(buf, cap, &at, "  %-18s no: %s; no batch fits\n", "fits", why);
    return at;
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
    release_buffers(net);
    ct_net_profile(net, 0);
    free_plan(net);
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

void ct_net_random_batch(const ct_net *net, uint64_t seed, float *x, int32_t *y)
{
    const ct_model *m = net->model;
    const ct_layer *in = &m->layers[0], *loss = &m->layers[m->count - 1];
    const ct_layer *lg = &m->layers[loss->inputs[0]];
    size_t nin = net->rt[0].out_n, nlab = ct_net_label_elems(net);
    int classes = lg->out.d[lg->out.ndim - 1];
    int vocab = 0;
    for (size_t i = 0; i < m->count; i++)
        if (kind_of(&m->layers[i]) == K_EMBEDDING)
            vocab = (int)ct_layer_key(&m->layers[i], "vocab");
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

/* Ghost batch norm: each of the G parts of the batch is normalized with its
 * own statistics. The running statistics take part g with momentum
 * a_g = (m/G) / (1 - (G-g) m/G), g = 1..G, so that after all parts they are
 * (1 - m) r + (m/G) sum_g stat_g: the average of what G replicas, each
 * updating from its own part with momentum m, hold (the data-parallel
 * trainer averages the replicas' running statistics). */
static int bn_forward_groups(ct_net *net, ct_lrt *r, ct_buf x, size_t C, size_t HW, float m, float eps)
{
    size_t G = (size_t)net->bn_groups, part = (size_t)net->batch / G, each = part * C * HW;
    int st = CT_OK;
    for (size_t g = 1; g <= G && !st; g++) {
        double share = (double)m / (double)G;
        float a = (float)(share / (1.0 - (double)(G - g) * share));
        st = ct_batchnorm_forward_train(net->ctx, ct_buf_at(r->out, (g - 1) * each),
                                        ct_buf_at(r->saved, 2 * C * (g - 1)),
                                        ct_buf_at(r->saved, 2 * C * (g - 1) + C), r->buffers,
                                        ct_buf_at(r->buffers, C), ct_buf_at(x, (g - 1) * each), r->param,
                                        ct_buf_at(r->param, C), part, C, HW, a, eps, r->act != 0);
    }
    return st;
}

/* The index of a dropout layer's element 0 in the global batch's tensor.
 * Sequence layers are (T, N, F): a replica's rows are not one slice there,
 * but sequence models are not trained data-parallel (no text datasets). */
static size_t dropout_first(const ct_net *net, const ct_lrt *r)
{
    return net->seq ? 0 : net->row_base * (r->out_n / (size_t)net->batch);
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
        /* On the CPU class the bias goes with the product (a rank-1 GEMM on
         * the host path, free in the direct convolution) and the activation
         * runs on its own in vector chunks; on the GPU class one kernel
         * fuses them. */
        int fuse = r->act && ctx->cls.fuse_bias_act;
        if (k == K_DENSE)
            st = ct_dense_forward(ctx, z, x, r->param, fuse ? none() : b, (int)r->rows,
                                  (int)(in->out_n / r->rows), outF);
        else
            st = ct_conv2d_forward(ctx, &r->conv, z, x, r->param, fuse ? none() : b, net->scratch,
                                   net->scratch_n);
        if (st || !r->act)
            return st;
        if (!fuse)
            return ct_act_forward(ctx, (ct_act)r->act, r->out, z, r->out_n);
        int hw = k == K_CONV ? l->out.d[1] * l->out.d[2] : 1;
        return ct_bias_act_forward(ctx, r->out, z, b, k == K_CONV ? net->batch : (int)r->rows, outF,
                                   hw, (ct_act)r->act);
    }
    case K_BN: {
        size_t C = (size_t)l->out.d[0], HW = l->out.ndim == 3 ? (size_t)l->out.d[1] * l->out.d[2] : 1;
        ct_buf gamma = r->param, beta = ct_buf_at(r->param, C);
        ct_buf rm = r->buffers, rv = ct_buf_at(r->buffers, C);
        float eps = (float)ct_layer_key(l, "eps");
        if (training && net->bn_groups > 1)
            return bn_forward_groups(net, r, x, C, HW, (float)ct_layer_key(l, "momentum"), eps);
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
        return ct_dropout_forward_at(ctx, r->out, x, r->out_n, dropout_first(net, r), p,
                                     step_seed(seed, step), (uint32_t)i);
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
    /* per layer: seconds, then launches (net.h) */
    net->prof_fwd = calloc(2 * net->model->count, sizeof(double));
    net->prof_bwd = calloc(2 * net->model->count, sizeof(double));
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
        uint64_t l0 = net->ctx->count.launches;
        int st = forward_layer(net, i, training, seed, step);
        if (!st && net->prof_fwd) {
            net->prof_fwd[net->model->count + i] += (double)(net->ctx->count.launches - l0);
            if (!(st = ct_context_finish(net->ctx)))
                net->prof_fwd[i] += ct_now() - t0;
        }
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
        ct_buf db = grad_bias_of(l, r), z = r->act == CT_ACT_GELU ? r->preact : r->out;
        int outF = (int)ct_layer_key(l, "out");
        if (r->act && db.mem && ctx->cls.fuse_bias_act) {
            /* the activation's backward and the bias sum in one pass */
            int hw = k == K_CONV ? l->out.d[1] * l->out.d[2] : 1;
            st = ct_bias_act_backward(ctx, db, dy, (ct_act)r->act, z, r->out,
                                      k == K_CONV ? net->batch : (int)r->rows, outF, hw);
            db = none();
        } else if (r->act) {
            st = ct_act_backward(ctx, (ct_act)r->act, dy, dy, z, r->out, r->out_n);
        }
        if (st)
            return st;
        ct_buf gdx = input_needs ? dx : none();
        if (k == K_DENSE)
            st = ct_dense_backward(ctx, gdx, r->grad, db, dy, x, r->param, (int)r->rows,
                                   (int)(in->out_n / r->rows), outF);
        else
            st = ct_conv2d_backward(ctx, &r->conv, gdx, r->grad, db, dy, x, r->param, net->scratch,
                                    net->scratch_n);
        if (!input_needs)
            return st;
        break;
    }
    case K_BN: {
        size_t C = (size_t)l->out.d[0], HW = l->out.ndim == 3 ? (size_t)l->out.d[1] * l->out.d[2] : 1;
        size_t G = (size_t)net->bn_groups, part = (size_t)net->batch / G, each = part * C * HW;
        for (size_t g = 0; g < G && !st; g++)
            st = ct_batchnorm_backward_train(ctx, ct_buf_at(dx, g * each), r->grad, ct_buf_at(r->grad, C),
                                             ct_buf_at(dy, g * each), ct_buf_at(x, g * each),
                                             ct_buf_at(r->out, g * each), r->param,
                                             ct_buf_at(r->saved, 2 * C * g),
                                             ct_buf_at(r->saved, 2 * C * g + C), part, C, HW,
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
                    : ct_dropout_backward_at(ctx, dx, dy, r->out_n, dropout_first(net, r), p,
                                             step_seed(seed, step), (uint32_t)i);
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
    for (size_t i = m->count; i-- > 0;) {
        double t0 = net->prof_bwd ? ct_now() : 0;
        uint64_t l0 = net->ctx->count.launches;
        int st = CT_OK;
        /* a gradient with several writers is accumulated: zero it when the
         * first writer runs, not earlier, as the plan lets its memory serve
         * other gradients until then */
        for (int j = 0; j < m->layers[i].ninputs && !st; j++) {
            size_t p = (size_t)m->layers[i].inputs[j];
            if (m->layers[p].consumers > 1 && net->rt[p].needs_dout && net->rt[p].last_reader == i)
                st = ct_fill(net->ctx, net->rt[p].dout, net->rt[p].out_n, 0.0f);
        }
        if (!st && net->probe)
            st = net->probe(net->probe_user, net, i);
        if (!st)
            st = backward_layer(net, i, seed, step);
        if (!st && net->prof_bwd) {
            net->prof_bwd[m->count + i] += (double)(net->ctx->count.launches - l0);
            if (!(st = ct_context_finish(net->ctx)))
                net->prof_bwd[i] += ct_now() - t0;
        }
        if (st)
            return ct_fail(net->ctx, st, "backward of layer '%s' (%s): %s", m->layers[i].name,
                           m->layers[i].type->name, ct_context_last_error(net->ctx));
    }
    return CT_OK;
}
