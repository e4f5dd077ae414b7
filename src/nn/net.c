/*
 * net.c - a model on one device: the memory plan, initialization, and the
 * executor of the forward and backward passes. Every layer type is a module
 * (src/nn/layer.h); this file runs any of them through their tables and
 * knows none by name.
 *
 * Plan: every layer's output gets its own slice of the activation arena
 * (a view's is its producer's); output gradients share theirs by liveness
 * (from the first backward that writes one to its own layer's backward);
 * what a backward needs beyond its inputs and output is "saved" (r->saved_n,
 * which the type's plan sets) in the saved arena, or in the activation
 * arena when it is an activation itself (r->saved_act); workspaces
 * used only inside one call share one scratch slice. Activations, their
 * gradients and scratch are split into chunks no larger than one
 * allocation; parameters, gradients and buffers stay flat.
 * Gradients: a layer's output gradient is written by its only reader, or,
 * when several layers read it, zeroed first and accumulated.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/half.h"
#include "nn/layer.h"
#include "ops/eltwise.h"

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

const char *const ct_arena_names[CT_ARENA_COUNT] = { "parameters", "gradients", "buffers",
                                                    "activations", "activation gradients", "scratch",
                                                    "saved state" };

size_t ct_net_arena_esize(const ct_net *net, int a)
{
    return net->act16 && (a == CT_ARENA_ACTS || a == CT_ARENA_DACTS) ? 2 : sizeof(float);
}

int ct_net_act16_blocker(const ct_model *m)
{
    for (size_t i = 0; i < m->count; i++)
        if (!(m->layers[i].type->flags & CT_LAYER_ACT16))
            return (int)i;
    return -1;
}

int ct_net_choose_storage(ct_context *ctx, const ct_model *m, int *act16)
{
    const char *env = getenv("CLTRAIN_ACT16");
    int blocker = ct_net_act16_blocker(m);
    int want = ctx->precision != CT_PRECISION_FP32 && ctx->cls.kernels == CT_KERNELS_GPU;
    ctx->act16_why[0] = '\0';
    if (want && env && !strcmp(env, "0")) {
        snprintf(ctx->act16_why, sizeof ctx->act16_why, "CLTRAIN_ACT16=0");
        want = 0;
    } else if (want && ctx->cls.gemm == CT_GEMM_HOST) {
        snprintf(ctx->act16_why, sizeof ctx->act16_why, "the products run on the host (CLTRAIN_GEMM=host)");
        want = 0;
    } else if (want && blocker >= 0) {
        snprintf(ctx->act16_why, sizeof ctx->act16_why, "layer '%s' (%s) has no 16-bit form",
                 m->layers[blocker].name, m->layers[blocker].type->name);
        want = 0;
    }
    int st = ct_context_set_act16(ctx, want ? ctx->precision : CT_PRECISION_FP32);
    if (!st && want) {
        /* a layer of a type with the form may still lack it (a grouped
         * convolution): a plan at batch 1 finds out, allocating nothing */
        ct_net t;
        if (ct_net_plan(ctx, m, 1, &t)) {
            snprintf(ctx->act16_why, sizeof ctx->act16_why, "%s", ct_context_last_error(ctx));
            st = ct_context_set_act16(ctx, CT_PRECISION_FP32);
        }
        ct_net_free_plan(&t);
    }
    if (act16)
        *act16 = st ? 0 : ctx->act16;
    return st;
}


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
    size_t *size = calloc(CT_NET_MAX_CHUNKS, sizeof *size);
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
            if (nch == CT_NET_MAX_CHUNKS) {
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

/* ---- what a layer's plan may ask for ---- */

struct ct_plan {
    ct_net *net;
    wants *ws;
    size_t scratch;     /* the largest workspace asked for */
};

ct_net *ct_plan_net(ct_plan *p)
{
    return p->net;
}

int ct_plan_activation(ct_plan *p, size_t n, ct_buf *dst, const char *layer)
{
    return wish(p->ws, CT_ARENA_ACTS, n, 0, ALWAYS, dst, layer);
}

void ct_plan_scratch(ct_plan *p, size_t n)
{
    if (n > p->scratch)
        p->scratch = n;
}

void ct_plan_labels(ct_plan *p, size_t n, int in_slot)
{
    p->net->label_n = n;
    if (in_slot)
        p->net->slot_n = p->net->slot_label_off + n;
}

/* ---- the plan ---- */

int ct_net_plan(ct_context *ctx, const ct_model *m, int batch, ct_net *net)
{
    return ct_net_plan_grouped(ctx, m, batch, 1, net);
}

/* Layer i's output, its parameters and what its type asks for. */
static int plan_layer(ct_net *net, wants *ws, size_t i, size_t *gtmp_n)
{
    const ct_model *m = net->model;
    const ct_layer *l = &m->layers[i];
    const ct_layer_type *t = l->type;
    ct_lrt *r = &net->rt[i];
    size_t N = (size_t)net->batch, *use = net->arena_size;
    r->type = t;
    r->rows = l->out.sequence ? N * (size_t)l->out.d[0] : N;
    r->out_n = t->flags & CT_LAYER_LOSS ? 1 : N * ct_shape_numel(&l->out);
    if (r->out_n > (size_t)UINT32_MAX / 2)
        return ct_fail(net->ctx, CT_ERR_SHAPE, "layer '%s' output of %zu elements at batch %d is too "
                       "large. HINT: use a smaller batch", l->name, r->out_n, net->batch);
    if (t->flags & CT_LAYER_VIEW) {
        /* the producer's output (copied once placed), and its gradient too
         * when nobody else writes that gradient */
        const ct_lrt *p = &net->rt[l->inputs[0]];
        r->needs_dout = 1;
        r->view = p->needs_dout && m->layers[l->inputs[0]].consumers == 1;
    } else if (!t->max_inputs) {
        /* the input: in the batch slots, set by ct_net_alloc; with 16-bit
         * storage the forward converts it into an activation of its own
         * (token ids stay where they are: ids, not activations) */
        net->slot_label_off = (r->out_n + 15) & ~(size_t)15;
        if (net->act16 && !l->out.tokens && wish(ws, CT_ARENA_ACTS, r->out_n, 0, ALWAYS, &r->out, l->name))
            return CT_ERR_NO_MEMORY;
    } else if (!(t->flags & CT_LAYER_LOSS)) {
        if (wish(ws, CT_ARENA_ACTS, r->out_n, 0, ALWAYS, &r->out, l->name))
            return CT_ERR_NO_MEMORY;
        r->needs_dout = 1;
    }
    if (l->consumers > 1 || (i > 0 && l->ninputs && l->inputs[0] == 0))
        *gtmp_n = r->out_n > *gtmp_n ? r->out_n : *gtmp_n;
    if (!t->max_inputs && *gtmp_n < r->out_n)
        *gtmp_n = r->out_n; /* a sink for input gradients nobody needs */
    /* parameters (trainable, PyTorch order), their gradients, buffers */
    if (l->param_count) {
        r->param = at_arena(CT_ARENA_PARAMS, take(&use[CT_ARENA_PARAMS], l->param_count));
        r->grad = at_arena(CT_ARENA_GRADS, take(&use[CT_ARENA_GRADS], l->param_count));
        net->nparams += l->param_count;
    }
    if (l->buffer_count) {
        r->buffers = at_arena(CT_ARENA_BUFFERS, take(&use[CT_ARENA_BUFFERS], l->buffer_count));
        net->nbuffers += l->buffer_count;
    }
    ct_plan pl = { net, ws, 0 };
    int st = t->plan ? t->plan(&pl, l, r) : CT_OK;
    if (st)
        return st;
    if (r->saved_n && wish(ws, r->saved_act ? CT_ARENA_ACTS : CT_ARENA_SAVED, r->saved_n, 0, ALWAYS,
                           &r->saved, l->name))
        return CT_ERR_NO_MEMORY;
    if (pl.scratch > net->scratch_n)
        net->scratch_n = pl.scratch;
    return CT_OK;
}

int ct_net_plan_grouped(ct_context *ctx, const ct_model *m, int batch, int bn_groups, ct_net *net)
{
    memset(net, 0, sizeof *net);
    net->ctx = ctx;
    net->model = m;
    net->batch = batch;
    net->bn_groups = bn_groups;
    net->loss_scale = 1.0f;
    net->act16 = ctx ? ctx->act16 : 0;
    if (batch < 1 || batch > (1 << 24))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "batch size %d is out of range [1, 2^24]", batch);
    if (bn_groups < 1 || batch % bn_groups)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "batch-norm groups %d do not divide the batch %d "
                       "into equal parts. HINT: use a batch that is a multiple of the groups",
                       bn_groups, batch);
    wants ws = { NULL, 0, 0 };
    size_t *lastw = NULL;
    int st = ct_net_plan_limits(ctx, net);
    if (st)
        return st;
    net->rt = calloc(m->count, sizeof *net->rt);
    lastw = calloc(m->count, sizeof *lastw);
    if (!net->rt || !lastw)
        goto oom;
    const ct_layer *in0 = &m->layers[0];
    net->seq = in0->out.sequence ? in0->out.d[0] : 0;
    int blocker = ct_net_act16_blocker(m);
    if (net->act16 && blocker >= 0) {
        st = ct_fail(ctx, CT_ERR_UNSUPPORTED, "layer '%s' (%s) has no form for 16-bit activation "
                     "storage. HINT: plan the model with float32 activations (the context's storage "
                     "off: ct_context_set_act16(ctx, 0))", m->layers[blocker].name,
                     m->layers[blocker].type->name);
        goto fail;
    }
    size_t gtmp_n = 0;
    for (size_t i = 0; i < m->count; i++) {
        st = plan_layer(net, &ws, i, &gtmp_n);
        if (st == CT_ERR_NO_MEMORY)
            goto oom;
        if (st)
            goto fail;
    }
    if (net->slot_n < net->slot_label_off)
        net->slot_n = net->slot_label_off;
    /* gtmp holds gradients of activations: in their format */
    if (net->act16)
        net->dacts_unshared += ALIGN16(gtmp_n);
    if (wish(&ws, CT_ARENA_SAVED, 1, 0, ALWAYS, &net->loss, "loss") ||
        wish(&ws, CT_ARENA_SAVED, 1, 0, ALWAYS, &net->correct, "loss") ||
        wish(&ws, CT_ARENA_SCRATCH, net->scratch_n, 0, ALWAYS, &net->scratch, NULL) ||
        wish(&ws, net->act16 ? CT_ARENA_DACTS : CT_ARENA_SCRATCH, gtmp_n, 0, ALWAYS, &net->gtmp, NULL))
        goto oom;

    /* An output gradient lives from the first backward that writes it (its
     * last reader's: backward runs in reverse) to its own layer's backward,
     * the last to read it; a view's gradient is its producer's, so
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
        net->chunk_size[a][0] = net->arena_size[a] ? net->arena_size[a] : 16; /* the optimizer steps over arena_size */
    }
    for (int a = CT_ARENA_ACTS; a < CT_ARENA_COUNT; a++) {
        uint64_t capf = net->limit_alloc / ct_net_arena_esize(net, a);
        size_t cap = capf > (uint64_t)SIZE_MAX ? SIZE_MAX & ~(size_t)15 : (size_t)capf & ~(size_t)15;
        st = place(net, &ws, a, cap);
        if (st == CT_ERR_NO_MEMORY)
            goto oom;
        if (st) {
            st = ct_fail(ctx, CT_ERR_UNSUPPORTED, "the %s arena at batch %d needs more than %d buffers "
                         "of %.1f MiB. HINT: raise CLTRAIN_MAX_ALLOC or use a smaller batch",
                         ct_arena_names[a], batch, CT_NET_MAX_CHUNKS,
                         (double)cap * (double)ct_net_arena_esize(net, a) / 1048576.0);
            goto fail;
        }
    }
    /* views follow their producers, which come first in file order */
    for (size_t i = 1; i < m->count; i++) {
        ct_lrt *r = &net->rt[i];
        if (!(r->type->flags & CT_LAYER_VIEW))
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
    ct_net_free_plan(net);
    return st;
}


/* Until ct_net_alloc creates the buffers, every ct_buf of the plan holds a
 * placeholder (at_chunk); this puts the real buffers in. */
static void patch(ct_net *net, ct_buf *b)
{
    uintptr_t id = (uintptr_t)b->mem;
    if (id >= 1 && id <= (uintptr_t)CT_ARENA_COUNT * CT_NET_MAX_CHUNKS) {
        int a = (int)((id - 1) % CT_ARENA_COUNT), c = (int)((id - 1) / CT_ARENA_COUNT);
        b->mem = net->chunk[a][c];
    }
}

void ct_net_patch_buffers(ct_net *net)
{
    for (size_t i = 0; i < net->model->count; i++) {
        ct_lrt *r = &net->rt[i];
        ct_buf *bufs[] = { &r->out, &r->dout, &r->param, &r->grad, &r->buffers, &r->saved };
        for (size_t j = 0; j < CT_ARRAY_LEN(bufs); j++)
            patch(net, bufs[j]);
    }
    ct_buf *bufs[] = { &net->scratch, &net->gtmp, &net->loss, &net->correct, &net->input };
    for (size_t j = 0; j < CT_ARRAY_LEN(bufs); j++)
        patch(net, bufs[j]);
}

void ct_net_free_plan(ct_net *net)
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

void ct_net_use_slot(ct_net *net, int k)
{
    ct_buf in = { net->slot[k], 0 };
    net->input = in;
    net->labels = ct_buf_at(in, net->slot_label_off);
    if (net->act16 && !net->model->layers[0].out.tokens)
        return; /* the input's activation stays; the forward converts into it */
    net->rt[0].out = in;
    /* views of the input follow it */
    for (size_t i = 1; i < net->model->count; i++)
        if ((net->rt[i].type->flags & CT_LAYER_VIEW) && net->model->layers[i].inputs[0] == 0)
            net->rt[i].out = in;
}

int ct_net_read_out(ct_net *net, size_t i, size_t off, size_t n, float *dst)
{
    ct_buf o = net->rt[i].out;
    if (!net->act16)
        return ct_buffer_read(net->ctx, o.mem, (o.off + off) * sizeof(float), n * sizeof(float), dst);
    uint16_t *h = malloc((n ? n : 1) * sizeof *h);
    if (!h)
        return ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory reading an output");
    int st = ct_buffer_read(net->ctx, o.mem, (o.off + off) * 2, n * 2, h);
    for (size_t e = 0; e < n && !st; e++)
        dst[e] = net->act16 == CT_PRECISION_BF16 ? ct_f32_from_bf16(h[e]) : ct_f32_from_fp16(h[e]);
    free(h);
    return st;
}

size_t ct_net_input_elems(const ct_net *net)
{
    return net->rt[0].out_n;
}

size_t ct_net_label_elems(const ct_net *net)
{
    return net->label_n;
}

void ct_net_random_batch(const ct_net *net, uint64_t seed, float *x, int32_t *y)
{
    const ct_model *m = net->model;
    const ct_layer *in = &m->layers[0], *loss = &m->layers[m->count - 1];
    const ct_layer *lg = &m->layers[loss->inputs[0]];
    size_t nin = net->rt[0].out_n, nlab = ct_net_label_elems(net);
    int classes = lg->out.d[lg->out.ndim - 1];
    int vocab = 0; /* token ids go below the vocabulary of the layer that reads them */
    for (size_t i = 1; i < m->count; i++)
        if (m->layers[i].ninputs && m->layers[i].inputs[0] == 0 && ct_layer_key(&m->layers[i], "vocab") > 0)
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
    int floats = loss->type->id == CT_LAYER_ID_mse || loss->type->id == CT_LAYER_ID_bce_logits;
    for (size_t i = 0; i < nlab; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        float t = (float)(uint32_t)(s >> 33) / 2147483648.0f - 0.5f;
        if (floats)
            memcpy(&y[i], &t, sizeof t);
        else
            y[i] = (int32_t)((s >> 33) % (uint64_t)classes);
    }
}

/* ---- initialization ---- */

int ct_net_init_params(ct_net *net, uint64_t seed)
{
    const ct_model *m = net->model;
    int st = CT_OK;
    for (size_t i = 0; i < m->count && !st; i++) {
        const ct_layer *l = &m->layers[i];
        ct_lrt *r = &net->rt[i];
        if ((!l->param_count && !l->buffer_count) || !l->type->init)
            continue;
        float *p = malloc((l->param_count ? l->param_count : 1) * sizeof *p);
        float *b = malloc((l->buffer_count ? l->buffer_count : 1) * sizeof *b);
        if (!p || !b) {
            free(p);
            free(b);
            return ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory initializing %s", l->name);
        }
        /* each layer has its own stream: (seed, layer index) */
        ct_init_rng g = { { (uint32_t)seed, (uint32_t)(seed >> 32) }, { 0, 0, (uint32_t)i, 0x1417u }, { 0 }, 4 };
        l->type->init(l, p, b, &g);
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

/* ---- the executor ---- */

static uint64_t step_seed(uint64_t seed, long step)
{
    return seed ^ ((uint64_t)step * 0x9e3779b97f4a7c15ull);
}

static ct_layer_call call_of(ct_net *net, size_t i, int training, uint64_t seed, long step)
{
    const ct_layer *l = &net->model->layers[i];
    const ct_lrt *in = l->ninputs ? &net->rt[l->inputs[0]] : NULL;
    ct_layer_call c = { .net = net, .ctx = net->ctx, .l = l, .r = &net->rt[i], .index = i, .in = in,
                        .x = in ? in->out : ct_none(), .training = training, .seed = step_seed(seed, step) };
    return c;
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
        const ct_layer_type *t = net->model->layers[i].type;
        ct_layer_call c = call_of(net, i, training, seed, step);
        ct_launch_layer(net->ctx, net->model->layers[i].name);
        int st = t->forward ? t->forward(&c) : CT_OK;
        if (!st && !t->max_inputs && net->act16 && !net->model->layers[i].out.tokens) /* into 16 bits */
            st = ct_act_from_f32(net->ctx, net->rt[0].out, net->input, net->rt[0].out_n);
        ct_launch_layer(net->ctx, NULL);
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
    if (!net->nparams || net->grads_zero) {
        net->grads_zero = 0;
        return CT_OK;
    }
    return ct_fill(net->ctx, net->arena[CT_ARENA_GRADS].mem ? (ct_buf){ net->arena[CT_ARENA_GRADS].mem, 0 }
                                                            : ct_none(),
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
    if (net->model->layers[p].consumers > 1 && !ct_net_grad_first(net, (size_t)(l - net->model->layers), k)) {
        *accumulate = 1;
        return net->gtmp;
    }
    return pr->dout;
}

int ct_net_grad_first(const ct_net *net, size_t i, int j)
{
    const ct_layer *l = &net->model->layers[i];
    int p = l->inputs[j];
    if (net->model->layers[p].consumers < 2 || net->rt[p].last_reader != i || !l->type->backward)
        return 0;
    /* input 0 is what the net delivers; other inputs only a layer that
     * delivers its own gradients writes, and an input named twice is
     * written first where it is named first */
    if (j > 0 && !(l->type->flags & CT_LAYER_OWN_GRADS))
        return 0;
    for (int k = 0; k < j; k++)
        if (l->inputs[k] == p)
            return 0;
    return 1;
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
    const ct_layer *l = &net->model->layers[i];
    const ct_layer_type *t = l->type;
    if (!t->max_inputs || !t->backward)
        return CT_OK;
    ct_layer_call c = call_of(net, i, 1, seed, step);
    int acc = 0;
    c.dy = c.r->dout;
    c.dx = grad_sink(net, l, 0, &acc);
    c.dx_needed = c.in->needs_dout;
    if (acc && (t->flags & CT_LAYER_ACCUM_DX)) {
        /* the layer adds into the gradient itself */
        c.dx = net->rt[l->inputs[0]].dout;
        c.dx_accumulate = 1;
        acc = 0;
    }
    int st = t->backward(&c);
    if (st || !c.dx_needed || (t->flags & CT_LAYER_OWN_GRADS))
        return st;
    return deliver(net, l, 0, acc);
}

int ct_net_backward(ct_net *net, uint64_t seed, long step)
{
    const ct_model *m = net->model;
    net->grads_zero = 0;
    for (size_t i = m->count; i-- > 0;) {
        double t0 = net->prof_bwd ? ct_now() : 0;
        uint64_t l0 = net->ctx->count.launches;
        int st = CT_OK;
        /* a gradient with several writers: the first writer (its last
         * reader, backward runs in reverse) overwrites it and the others
         * add to it (ct_net_grad_first); where that reader writes no
         * gradient there, it is zeroed then, not earlier, as the plan lets
         * its memory serve other gradients until then */
        for (int j = 0; j < m->layers[i].ninputs && !st; j++) {
            size_t p = (size_t)m->layers[i].inputs[j];
            int named_before = 0;
            for (int k = 0; k < j; k++)
                named_before |= (size_t)m->layers[i].inputs[k] == p;
            if (m->layers[p].consumers > 1 && net->rt[p].needs_dout && net->rt[p].last_reader == i &&
                !named_before && !ct_net_grad_first(net, i, j))
                st = ct_act_zero(net->ctx, net->rt[p].dout, net->rt[p].out_n);
        }
        ct_launch_layer(net->ctx, m->layers[i].name);
        if (!st && net->probe)
            st = net->probe(net->probe_user, net, i);
        if (!st)
            st = backward_layer(net, i, seed, step);
        ct_launch_layer(net->ctx, NULL);
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
