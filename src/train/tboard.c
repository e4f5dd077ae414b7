/*
 * tboard.c - a training run's TensorBoard event file (see tboard.h).
 *
 * The per-step points cost no blocking call: every N steps a non-blocking
 * read of each replica's running totals (loss sum, correct count) is put on
 * its compute queue behind the step, and the host writes the point once the
 * read's event says it is done, at a later step or at the epoch's end
 * (whose totals read has drained the queue by then). Two consecutive
 * points give the mean loss and accuracy of the steps between them.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/runtime.h"
#include "core/error.h"
#include "nn/layer.h"
#include "train/tboard.h"

/* Every per-epoch scalar: its tag and its value from the report `r`. A NaN
 * is not written (no test split; the per-token metrics of other data;
 * metrics a task does not have). A metric added to ct_epoch_report gets its
 * line here; reduce_exposed_ms, a measurement of the data-parallel
 * reduction rather than of training, stays in the --log JSON. */
#define TB_EPOCH_SCALARS(X)                                                        \
    X("train/loss", r->train_loss)                                                 \
    X("train/accuracy", r->train_accuracy)                                         \
    X("test/loss", r->test_loss)                                                   \
    X("test/accuracy", r->test_accuracy)                                           \
    X("lr", (double)r->lr)                                                         \
    X("samples_per_second", r->samples_per_second)                                 \
    X("epoch", (double)r->epoch)                                                   \
    X("train/perplexity", r->tokens ? exp(r->train_loss) : NAN)                    \
    X("test/perplexity", r->tokens ? exp(r->test_loss) : NAN)                      \
    X("train/bits_per_byte", r->tokens && r->byte_tokens ? r->train_loss / log(2.0) : NAN) \
    X("test/bits_per_byte", r->tokens && r->byte_tokens ? r->test_loss / log(2.0) : NAN) \
    X("train/rmse", r->regression ? r->train_rmse : NAN)                           \
    X("train/mae", r->regression ? r->train_mae : NAN)                             \
    X("test/rmse", r->regression ? r->test_rmse : NAN)                             \
    X("test/mae", r->regression ? r->test_mae : NAN)                               \
    X("train/loss_scale", r->loss_scale > 0 ? (double)r->loss_scale : NAN)         \
    X("train/skipped_steps", r->loss_scale > 0 ? (double)r->skipped_steps : NAN)

/* the per-step points' tags */
#define TB_STEP_LOSS "train/step_loss"
#define TB_STEP_ACCURACY "train/step_accuracy"
#define TB_STEP_MAE "train/step_mae" /* regression: the running total is of absolute errors */
/* buckets of a parameter histogram (TensorFlow 2's default) */
#define TB_BUCKETS 30

/* Gives up writing after a failure: one warning naming the file and the
 * cause (the thread's last error), then the run goes on without events. */
static void stop(ct_tboard *tb)
{
    if (!tb->w)
        return;
    ct_log(tb->ctx, CT_LOG_WARN, "%s; no more TensorBoard events are written, training goes on",
           ct_last_error());
    ct_tfevents *w = tb->w;
    tb->w = NULL;
    ct_tfevents_close(&w); /* a second failure here says nothing new */
}

int ct_tboard_open(ct_tboard *tb, const ct_train_options *o, const ct_group *g, int lead, int tokens,
                   int regression)
{
    memset(tb, 0, sizeof *tb);
    ct_context *ctx = g->rep[0].ctx;
    tb->ctx = ctx;
    if (!o->tensorboard || !lead)
        return CT_OK;
    if (!o->tensorboard[0])
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "the TensorBoard directory is an empty string. HINT: "
                       "--tensorboard DIR");
    if (o->tensorboard_every < 0)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "tensorboard_every must be 0 (no per-step points) or "
                       "more, not %ld", o->tensorboard_every);
    tb->every = o->tensorboard_every;
    tb->histograms = o->tensorboard_histograms;
    tb->tokens = tokens > 0 ? tokens : 1;
    tb->regression = regression;
    tb->nrep = g->count;
    tb->ev = calloc(CT_TBOARD_RING * g->count, sizeof *tb->ev);
    tb->acc = calloc(CT_TBOARD_RING * g->count * 2, sizeof *tb->acc);
    if (!tb->ev || !tb->acc) {
        ct_tboard_close(tb);
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    }
    int st = ct_tfevents_open(o->tensorboard, &tb->w);
    if (st) {
        ct_tboard_close(tb);
        return ct_fail_keep(ctx, st);
    }
    return CT_OK;
}

/* Releases the oldest point's read events. */
static void drop_oldest(ct_tboard *tb)
{
    cl_event *ev = tb->ev + tb->head * tb->nrep;
    for (size_t i = 0; i < tb->nrep; i++) {
        if (ev[i])
            clReleaseEvent(ev[i]);
        ev[i] = NULL;
    }
    tb->head = (tb->head + 1) % CT_TBOARD_RING;
    tb->pending--;
}

/* Writes the oldest point if its reads are done (with `wait`, after
 * waiting for them). Returns 1 when it wrote it, 0 when not yet, -1 after
 * a failure (writing stopped). */
static int write_oldest(ct_tboard *tb, const ct_group *g, int wait)
{
    cl_event *ev = tb->ev + tb->head * tb->nrep;
    for (size_t i = 0; i < tb->nrep; i++) {
        cl_int state = CL_QUEUED;
        cl_int err = clGetEventInfo(ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, NULL);
        if (err == CL_SUCCESS && state == CL_COMPLETE)
            continue;
        if (err == CL_SUCCESS && state >= 0 && !wait)
            return 0;
        if (ct_event_wait(g->rep[i].ctx, ev[i], "reading the running loss for TensorBoard")) {
            stop(tb);
            return -1;
        }
    }
    const float *h = tb->acc + tb->head * tb->nrep * 2;
    double loss = 0, correct = 0;
    for (size_t i = 0; i < tb->nrep; i++) {
        loss += h[2 * i];
        correct += h[2 * i + 1];
    }
    const ct_tboard_point *p = &tb->point[tb->head];
    double rows = (double)(p->rows - tb->rows0);
    int st = ct_tfevents_scalar(tb->w, TB_STEP_LOSS, p->step, (loss - tb->loss0) / rows);
    if (!st)
        st = ct_tfevents_scalar(tb->w, tb->regression ? TB_STEP_MAE : TB_STEP_ACCURACY, p->step,
                                (correct - tb->correct0) / (rows * tb->tokens));
    tb->loss0 = loss;
    tb->correct0 = correct;
    tb->rows0 = p->rows;
    drop_oldest(tb);
    if (st) {
        stop(tb);
        return -1;
    }
    return 1;
}

void ct_tboard_step(ct_tboard *tb, const ct_group *g, long step, size_t rows)
{
    if (!tb->w)
        return;
    while (tb->pending && write_oldest(tb, g, 0) == 1) {
    }
    if (!tb->w || tb->every <= 0 || step % tb->every)
        return;
    if (tb->pending == CT_TBOARD_RING && write_oldest(tb, g, 1) < 0)
        return;
    size_t k = (tb->head + tb->pending) % CT_TBOARD_RING;
    cl_event *ev = tb->ev + k * tb->nrep;
    float *h = tb->acc + k * tb->nrep * 2;
    for (size_t i = 0; i < g->count; i++) {
        ct_context *c = g->rep[i].ctx;
        cl_int err = clEnqueueReadBuffer(c->queue, g->rep[i].acc, CL_FALSE, 0, 2 * sizeof(float), h + 2 * i,
                                         0, NULL, &ev[i]);
        if (err == CL_SUCCESS)
            err = clFlush(c->queue);
        if (err != CL_SUCCESS) {
            ct_cl_fail(c, err, "reading the running loss for TensorBoard");
            /* the reads already enqueued write into h: wait for them */
            for (size_t j = 0; j < g->count; j++)
                if (ev[j]) {
                    clWaitForEvents(1, &ev[j]);
                    clReleaseEvent(ev[j]);
                    ev[j] = NULL;
                }
            stop(tb);
            return;
        }
        c->count.d2h_bytes += 2 * sizeof(float);
    }
    tb->point[k] = (ct_tboard_point){ step, rows };
    tb->pending++;
}

/* Every trainable parameter tensor's histogram, tagged params/<layer>.<name>
 * as checkpoints name it. */
static int write_histograms(ct_tboard *tb, ct_net *net, long step)
{
    size_t n = net->arena_size[CT_ARENA_PARAMS];
    if (!n)
        return CT_OK;
    float *p = malloc(n * sizeof *p);
    if (!p)
        return ct_fail(NULL, CT_ERR_NO_MEMORY, "out of host memory (%zu floats) for the parameter "
                       "histograms", n);
    int st = ct_buffer_read(net->ctx, net->arena[CT_ARENA_PARAMS].mem, 0, n * sizeof *p, p);
    const ct_model *m = net->model;
    for (size_t i = 0; !st && i < m->count; i++) {
        const ct_layer *l = &m->layers[i];
        size_t off = net->rt[i].param.off;
        for (int j = 0; !st && j < l->nparams; j++) {
            const ct_param_spec *s = &l->params[j];
            if (!s->trainable)
                continue;
            size_t numel = 1;
            for (int d = 0; d < s->ndim; d++)
                numel *= (size_t)s->shape[d];
            char tag[256];
            snprintf(tag, sizeof tag, "params/%s.%s", l->name, s->suffix);
            st = ct_tfevents_histogram(tb->w, tag, step, p + off, numel, TB_BUCKETS);
            off += numel;
        }
    }
    free(p);
    return st;
}

void ct_tboard_epoch(ct_tboard *tb, const ct_group *g, ct_net *net, const ct_epoch_report *r)
{
    if (!tb->w)
        return;
    /* the epoch's totals were read: every point's read is done */
    while (tb->w && tb->pending)
        write_oldest(tb, g, 1);
    if (!tb->w)
        return;
    tb->loss0 = tb->correct0 = 0;
    tb->rows0 = 0;
    static const char *const tags[] = {
#define TB_TAG(tag, value) tag,
        TB_EPOCH_SCALARS(TB_TAG)
#undef TB_TAG
    };
    const double values[] = {
#define TB_VALUE(tag, value) value,
        TB_EPOCH_SCALARS(TB_VALUE)
#undef TB_VALUE
    };
    int st = CT_OK;
    for (size_t i = 0; !st && i < CT_ARRAY_LEN(tags); i++)
        if (!isnan(values[i]))
            st = ct_tfevents_scalar(tb->w, tags[i], r->step, values[i]);
    if (!st && tb->histograms)
        st = write_histograms(tb, net, r->step);
    if (!st)
        st = ct_tfevents_flush(tb->w);
    if (st)
        stop(tb);
}

void ct_tboard_close(ct_tboard *tb)
{
    for (size_t k = 0; tb->ev && k < CT_TBOARD_RING * tb->nrep; k++)
        if (tb->ev[k]) {
            clWaitForEvents(1, &tb->ev[k]); /* it writes into tb->acc */
            clReleaseEvent(tb->ev[k]);
        }
    if (tb->w && ct_tfevents_close(&tb->w))
        ct_log(tb->ctx, CT_LOG_WARN, "%s", ct_last_error());
    free(tb->ev);
    free(tb->acc);
    tb->ev = NULL;
    tb->acc = NULL;
    tb->pending = 0;
}
