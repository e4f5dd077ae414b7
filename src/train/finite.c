/*
 * finite.c - the trainer's NaN/Inf check and the search for where a
 * non-finite value first appeared (see finite.h).
 *
 * The regular check costs two device reductions over the parameters (their
 * gradients and their values), one over the loss, and one read of a few
 * floats; the search, which runs only once training has already failed,
 * counts every layer's output, output gradient and parameter tensors and
 * reads all the counts at once. Counts rather than a gradient norm: a norm of huge but finite
 * gradients overflows to Inf in float, which would blame a healthy step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layer.h"
#include "ops/eltwise.h"
#include "train/finite.h"

enum { SLOT_GRADS, SLOT_PARAMS, SLOT_BUFFERS, SLOT_LOSS, SLOT_TMP, SLOT_LAYERS };

static size_t spec_numel(const ct_param_spec *p)
{
    size_t n = 1;
    for (int d = 0; d < p->ndim; d++)
        n *= (size_t)p->shape[d];
    return n;
}

static ct_buf slot(const ct_finite *f, size_t k)
{
    return (ct_buf){ f->ws, k };
}

static ct_buf workspace(const ct_finite *f)
{
    return (ct_buf){ f->ws, (f->nslots + 15) & ~(size_t)15 };
}

int ct_finite_init(ct_finite *f, const ct_net *net, long every)
{
    const ct_model *m = net->model;
    if (every < 0)
        return ct_fail(net->ctx, CT_ERR_INVALID_ARG, "the non-finite check interval must be >= 0 "
                       "steps (0: only at epoch ends), not %ld", every);
    f->every = every;
    f->base = malloc(m->count * sizeof *f->base);
    if (!f->base)
        return ct_fail(net->ctx, CT_ERR_NO_MEMORY, "out of host memory");
    size_t k = SLOT_LAYERS;
    for (size_t i = 0; i < m->count; i++) {
        f->base[i] = k;
        k += 2 + 2 * (size_t)m->layers[i].nparams;
    }
    f->nslots = k;
    size_t total = ((k + 15) & ~(size_t)15) + ct_nonfinite_count_workspace_size(0);
    int st = ct_buffer_create(net->ctx, total * sizeof(float), &f->ws);
    return st ? st : ct_fill(net->ctx, slot(f, 0), k, 0.0f);
}

void ct_finite_release(ct_finite *f)
{
    ct_buffer_release(&f->ws);
    free(f->base);
    f->base = NULL;
}

void ct_finite_saved(ct_finite *f, const char *path, int epoch, long step, int resumed)
{
    f->last_ok = step; /* a checkpoint holds only finite values */
    f->ckpt = path;
    f->ckpt_epoch = epoch;
    f->ckpt_resumed = resumed;
}

/* slot k = the count of x[0..n); the kernel takes fewer than 2^32 values,
 * so longer ranges are counted in pieces whose counts are added */
static int count_in(const ct_finite *f, ct_context *ctx, size_t k, ct_buf x, size_t n, int act)
{
    const size_t piece = (size_t)1 << 31;
    int (*fn)(ct_context *, ct_buf, ct_buf, size_t, ct_buf) = act ? ct_nonfinite_count_act : ct_nonfinite_count;
    int st = fn(ctx, slot(f, k), x, n < piece ? n : piece, workspace(f));
    for (size_t done = piece; !st && done < n; done += piece) {
        size_t len = n - done < piece ? n - done : piece;
        st = fn(ctx, slot(f, SLOT_TMP), ct_buf_at(x, done), len, workspace(f));
        if (!st)
            st = ct_add_accumulate_f32(ctx, slot(f, k), slot(f, SLOT_TMP), 1);
    }
    return st;
}

/* over floats (parameters, their gradients, buffers, the loss) */
static int count(const ct_finite *f, ct_context *ctx, size_t k, ct_buf x, size_t n)
{
    return count_in(f, ctx, k, x, n, 0);
}

static int same_buf(ct_buf a, ct_buf b)
{
    return a.mem == b.mem && a.off == b.off;
}

/* What layer i's output slot counts: the loss layer's is the loss; a view
 * (flatten) shares its producer's, counted there. */
static ct_buf output_of(const ct_net *net, size_t i, size_t *n)
{
    const ct_layer *l = &net->model->layers[i];
    const ct_lrt *r = &net->rt[i];
    *n = 0;
    if (ct_layer_is_loss(l)) {
        *n = 1;
        return net->loss;
    }
    if (!r->out.mem || (i > 0 && l->ninputs && same_buf(r->out, net->rt[l->inputs[0]].out)))
        return r->out;
    *n = r->out_n;
    return r->out;
}

/* The probe of ct_net_backward: layer i's output gradient, counted just
 * before its backward, while it is complete and still in its memory. */
typedef struct probe_ctx {
    const ct_finite *f;
} probe_ctx;

static int count_dout(void *user, ct_net *net, size_t i)
{
    const ct_finite *f = ((probe_ctx *)user)->f;
    const ct_lrt *r = &net->rt[i];
    if (!r->needs_dout || r->view || !r->dout.mem)
        return CT_OK;
    return count_in(f, net->ctx, f->base[i] + 1, r->dout, r->out_n, 1);
}

/* Counts every layer's output, output gradient, and per parameter tensor
 * its gradient and value, into the layer slots; h receives all slots.
 * The output gradients share memory in the plan, so after the step only
 * the last ones are still there: the backward pass is run again (the
 * forward's outputs are all kept; parameters are those of the step) with
 * a probe counting each output gradient as it is consumed. That recomputes
 * the parameter gradients too, the same way, so they are counted after. */
static int count_layers(const ct_finite *f, ct_net *net, uint64_t seed, long step, float *h)
{
    const ct_model *m = net->model;
    ct_context *ctx = net->ctx;
    int st = ct_fill(ctx, slot(f, SLOT_LAYERS), f->nslots - SLOT_LAYERS, 0.0f);
    probe_ctx pc = { f };
    if (!st && !(st = ct_net_zero_grads(net))) {
        net->probe = count_dout;
        net->probe_user = &pc;
        st = ct_net_backward(net, seed, step);
        net->probe = NULL;
        net->probe_user = NULL;
    }
    for (size_t i = 0; !st && i < m->count; i++) {
        const ct_layer *l = &m->layers[i];
        const ct_lrt *r = &net->rt[i];
        size_t k = f->base[i], n;
        ct_buf out = output_of(net, i, &n);
        if (n)
            st = count_in(f, ctx, k, out, n, !ct_layer_is_loss(&net->model->layers[i]));
        size_t po = 0, bo = 0;
        for (int j = 0; !st && j < l->nparams; j++) {
            const ct_param_spec *p = &l->params[j];
            size_t pn = spec_numel(p), g = k + 2 + 2 * (size_t)j;
            if (p->trainable) {
                st = count(f, ctx, g, ct_buf_at(r->grad, po), pn);
                if (!st)
                    st = count(f, ctx, g + 1, ct_buf_at(r->param, po), pn);
                po += pn;
            } else {
                st = count(f, ctx, g + 1, ct_buf_at(r->buffers, bo), pn);
                bo += pn;
            }
        }
    }
    if (!st)
        st = ct_buffer_read(ctx, f->ws, 0, f->nslots * sizeof(float), h);
    return st;
}

/* "layer 'fc1' (dense, mlp:2)" */
static void layer_text(const ct_model *m, size_t i, char *buf, size_t len)
{
    const ct_layer *l = &m->layers[i];
    snprintf(buf, len, "layer '%s' (%s, %s:%d)", l->name, l->type->name, m->source, l->line);
}

/* The first parameter tensor (trainable or a running statistic) holding a
 * non-finite value, described into buf; 0 if none. */
static int find_param(const ct_finite *f, const ct_model *m, const float *h, char *buf, size_t len)
{
    for (size_t i = 0; i < m->count; i++) {
        const ct_layer *l = &m->layers[i];
        for (int j = 0; j < l->nparams; j++) {
            float c = h[f->base[i] + 3 + 2 * (size_t)j];
            if (c > 0) {
                char lt[256];
                layer_text(m, i, lt, sizeof lt);
                snprintf(buf, len, "%s '%s.%s' of %s (%.0f of %zu values)",
                         l->params[j].trainable ? "parameter" : "running statistic", l->name,
                         l->params[j].suffix, lt, (double)c, spec_numel(&l->params[j]));
                return 1;
            }
        }
    }
    return 0;
}

/* The error after a failed check: where the first non-finite value is,
 * the step, and the last good checkpoint. `loss_what` names the loss seen. */
static int report(ct_finite *f, ct_net *net, uint64_t seed, long step, int epoch,
                  const char *loss_what, double loss)
{
    const ct_model *m = net->model;
    ct_context *ctx = net->ctx;
    float *h = malloc(f->nslots * sizeof *h);
    if (!h)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory (after non-finite values at step %ld)",
                       step);
    int st = count_layers(f, net, seed, step, h);
    if (st) {
        free(h);
        return st;
    }
    char where[1024] = "", lt[256], param[640];
    int near_data = 0; /* the culprit reads the input: the data may be at fault */
    /* Non-finite parameters come first: the outputs and gradients computed
     * from them are consequences. The step checks run before the optimizer,
     * so this happens only between checks, or in the last step of an epoch. */
    if (find_param(f, m, h, param, sizeof param)) {
        char when[96] = "since the start";
        if (f->last_ok)
            snprintf(when, sizeof when, "after the check at step %ld (the last that passed)", f->last_ok);
        snprintf(where, sizeof where, "the first non-finite value is in %s: an update %s made it so%s",
                 param, when, f->every == 1 ? "" : " (--check-finite 1 checks every step)");
    }
    /* else the first forward output, in file order */
    for (size_t i = 0; !where[0] && i < m->count; i++) {
        size_t n;
        output_of(net, i, &n);
        float c = h[f->base[i]];
        if (c > 0) {
            layer_text(m, i, lt, sizeof lt);
            snprintf(where, sizeof where, "the first non-finite value is in the output of %s "
                     "(%.0f of %zu values)", lt, (double)c, n);
            near_data = i == 0 || m->layers[i].inputs[0] == 0;
        }
    }
    /* else the first gradient, in backward order: a layer's output gradient
     * comes before the parameter gradients its backward computes from it */
    for (size_t i = m->count; !where[0] && i-- > 0;) {
        const ct_layer *l = &m->layers[i];
        float c = h[f->base[i] + 1];
        layer_text(m, i, lt, sizeof lt);
        if (c > 0) {
            snprintf(where, sizeof where, "the first non-finite value is in the gradient of the "
                     "output of %s (%.0f of %zu values)", lt, (double)c, net->rt[i].out_n);
            break;
        }
        for (int j = 0; j < l->nparams; j++) {
            c = h[f->base[i] + 2 + 2 * (size_t)j];
            if (c > 0) {
                snprintf(where, sizeof where, "the first non-finite value is in the gradient of "
                         "'%s.%s' of %s (%.0f of %zu values)", l->name, l->params[j].suffix, lt,
                         (double)c, spec_numel(&l->params[j]));
                break;
            }
        }
    }
    free(h);
    if (!where[0])
        snprintf(where, sizeof where, "no layer holds a non-finite value now (the loss went "
                 "non-finite in a step after step %ld, the last one checked)", f->last_ok);
    char ck[600];
    if (f->ckpt)
        snprintf(ck, sizeof ck, "the last good checkpoint is %s (epoch %d%s)", f->ckpt, f->ckpt_epoch,
                 f->ckpt_resumed ? ", the one this run resumed from" : "");
    else
        snprintf(ck, sizeof ck, "no checkpoint was written (--out saves one after every epoch)");
    return ct_fail(ctx, CT_ERR_CORRUPT, "non-finite values in training at step %ld (epoch %d): %s is "
                   "%g; %s. Training stopped; %s. HINT: %slower the learning rate (--lr) or clip "
                   "gradients (--clip), then resume from the last good checkpoint or start over",
                   step, epoch, loss_what, loss, where, ck,
                   near_data ? "look for extreme values in the data (it reads them directly), or " : "");
}

int ct_finite_step(ct_finite *f, ct_net *net, uint64_t seed, long step, int epoch)
{
    if (f->every <= 0 || step % f->every)
        return CT_OK;
    ct_context *ctx = net->ctx;
    float h[SLOT_LOSS + 1];
    int st = count(f, ctx, SLOT_GRADS, (ct_buf){ net->arena[CT_ARENA_GRADS].mem, 0 },
                   net->arena_size[CT_ARENA_GRADS]);
    if (!st)
        st = count(f, ctx, SLOT_PARAMS, (ct_buf){ net->arena[CT_ARENA_PARAMS].mem, 0 },
                   net->arena_size[CT_ARENA_PARAMS]);
    if (!st)
        st = count(f, ctx, SLOT_LOSS, net->loss, 1);
    if (!st)
        st = ct_buffer_read(ctx, f->ws, 0, sizeof h, h);
    if (st)
        return st;
    if (h[SLOT_GRADS] == 0 && h[SLOT_PARAMS] == 0 && h[SLOT_LOSS] == 0) {
        f->last_ok = step;
        return CT_OK;
    }
    float loss;
    if ((st = ct_buffer_read(ctx, net->loss.mem, net->loss.off * sizeof(float), sizeof loss, &loss)))
        return st;
    return report(f, net, seed, step, epoch, "the batch's loss", loss);
}

int ct_finite_epoch(ct_finite *f, ct_net *net, uint64_t seed, double train_loss, long step,
                    int epoch)
{
    ct_context *ctx = net->ctx;
    float h[SLOT_BUFFERS + 1] = { 0, 0, 0 };
    int st = count(f, ctx, SLOT_PARAMS, (ct_buf){ net->arena[CT_ARENA_PARAMS].mem, 0 },
                   net->arena_size[CT_ARENA_PARAMS]);
    if (!st)
        st = count(f, ctx, SLOT_BUFFERS, (ct_buf){ net->arena[CT_ARENA_BUFFERS].mem, 0 },
                   net->arena_size[CT_ARENA_BUFFERS]);
    if (!st)
        st = ct_buffer_read(ctx, f->ws, 0, sizeof h, h);
    if (st)
        return st;
    if (isfinite(train_loss) && h[SLOT_PARAMS] == 0 && h[SLOT_BUFFERS] == 0) {
        f->last_ok = step;
        return CT_OK;
    }
    return report(f, net, seed, step, epoch, "the epoch's mean training loss", train_loss);
}
