/*
 * bucket.c - the gradient all-reduce of a data-parallel step, overlapped
 * with the backward.
 *
 * The backward runs over the layers in reverse and a layer's backward is
 * the only writer of its parameter gradients, a contiguous range of the
 * gradient arena (layers in file order, src/nn/net.c). So the arena is cut
 * into buckets of whole layers from its end, and a bucket is final as soon
 * as the backward has been enqueued past its lowest layer: the net's probe
 * (called before each layer's backward) tells the replica's thread, which
 * enqueues the bucket's read on its transfer queue behind a marker of its
 * compute queue. The main thread sums bucket by bucket as the reads land,
 * in replica order per element exactly as the whole-arena reduction
 * (ct_group_sum_range), so the floats do not depend on the buckets or the
 * timing; over the ranks each bucket is one MPI_Iallreduce, started in
 * bucket order on every rank. MPI is joined MPI_THREAD_FUNNELED, so only
 * this thread calls it, and replica 0 runs on a thread of its own here.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cl/runtime.h"
#include "core/error.h"
#include "core/util.h"
#include "train/bucket.h"
#include "train/mpi.h"

int ct_bucket_plan(ct_group *g)
{
    ct_context *ctx = g->rep[0].ctx;
    const ct_net *net = g->rep[0].net;
    const char *env = getenv("CLTRAIN_REDUCE_OVERLAP");
    if (env && strcmp(env, "0") && strcmp(env, "1"))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "CLTRAIN_REDUCE_OVERLAP=%s: not 0 or 1. HINT: 0 reduces "
                       "the gradients after the whole backward, 1 (the default) while it runs", env);
    g->overlap = !env || !strcmp(env, "1");
    size_t total = net->arena_size[CT_ARENA_PARAMS], layers = net->model->count;
    size_t cap = total * sizeof(float) / 8;
    if (cap > CT_BUCKET_MAX_BYTES)
        cap = CT_BUCKET_MAX_BYTES;
    if (cap < CT_BUCKET_MIN_BYTES)
        cap = CT_BUCKET_MIN_BYTES;
    cap /= sizeof(float);
    free(g->bucket);
    g->nbuckets = 0;
    if (!(g->bucket = calloc(layers + 1, sizeof *g->bucket)))
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    /* from the arena's end down, whole layers, a bucket closed before the
     * layer that would take it past the cap; a bucket ends where the one
     * after it begins, so padding between layers travels with the layer
     * below it and the last bucket starts at 0 */
    size_t end = total, low = 0, off = total;
    int have = 0;
    for (size_t i = layers; i-- > 0;) {
        const ct_lrt *r = &net->rt[i];
        if (!net->model->layers[i].param_count || !r->grad.mem)
            continue;
        if (have && end - r->grad.off > cap) {
            g->bucket[g->nbuckets++] = (ct_bucket){ low, off, end - off };
            end = off;
        }
        low = i;
        off = r->grad.off;
        have = 1;
    }
    if (end > 0) /* final once the backward has passed its lowest layer (0: the whole backward) */
        g->bucket[g->nbuckets++] = (ct_bucket){ have ? low : 0, 0, end };
    return CT_OK;
}

int ct_bucket_host_alloc(ct_replica *r, size_t n)
{
    cl_int err = CL_SUCCESS;
    r->pinned = clCreateBuffer(ct_context_cl(r->ctx), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                               n * sizeof(float), NULL, &err);
    if (r->pinned && err == CL_SUCCESS && !ct_hold_sync(r->ctx))
        r->host = clEnqueueMapBuffer(ct_context_queue(r->ctx), r->pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                     n * sizeof(float), 0, NULL, NULL, &err);
    if (r->host && err == CL_SUCCESS)
        return CT_OK;
    /* no pinned memory from this driver: plain host memory works the same, slower */
    if (r->pinned)
        clReleaseMemObject(r->pinned);
    r->pinned = NULL;
    r->host = malloc(n * sizeof(float));
    return r->host ? CT_OK : ct_fail(r->ctx, CT_ERR_NO_MEMORY, "out of host memory for the gradients");
}

void ct_bucket_host_free(ct_replica *r)
{
    if (r->pinned) {
        if (r->host && clEnqueueUnmapMemObject(ct_context_queue(r->ctx), r->pinned, r->host, 0, NULL, NULL) ==
                           CL_SUCCESS)
            clFinish(ct_context_queue(r->ctx));
        clReleaseMemObject(r->pinned);
    } else {
        free(r->host);
    }
    r->pinned = NULL;
    r->host = NULL;
}

/* ---- one step ---- */

typedef struct step {
    ct_group *g;
    int (*fn)(ct_replica *, void *);
    void *user;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t nb;
    cl_event *read, *wrote; /* [replica * nb + bucket] */
    size_t *posted;         /* per replica: buckets whose read is enqueued */
    int *finished;          /* per replica: its thread posts nothing more */
} step;

typedef struct worker {
    step *s;
    size_t i;
} worker;

/* Enqueues replica i's read of its next bucket behind everything its
 * compute queue holds, and hands the read's event to the summing thread. */
static int post_next(step *s, size_t i)
{
    ct_replica *r = &s->g->rep[i];
    ct_context *ctx = r->ctx;
    const ct_bucket *b = &s->g->bucket[s->posted[i]];
    cl_event mark = NULL, ev = NULL;
    int st = ct_hold_sync(ctx);
    if (st)
        return st;
    cl_int err = clEnqueueMarkerWithWaitList(ctx->queue, 0, NULL, &mark);
    /* the transfer queue waits on the marker: its queue must be flushed */
    if (err == CL_SUCCESS)
        err = clFlush(ctx->queue);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(ctx->transfer, r->net->arena[CT_ARENA_GRADS].mem, CL_FALSE, b->off * sizeof(float),
                                  b->n * sizeof(float), r->host + b->off, 1, &mark, &ev);
    if (err == CL_SUCCESS)
        err = clFlush(ctx->transfer);
    if (mark)
        clReleaseEvent(mark);
    if (err != CL_SUCCESS) {
        if (ev)
            clReleaseEvent(ev);
        return ct_cl_fail(ctx, err, "reading a gradient bucket back");
    }
    ctx->count.d2h_bytes += b->n * sizeof(float);
    pthread_mutex_lock(&s->mu);
    s->read[i * s->nb + s->posted[i]++] = ev;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return CT_OK;
}

/* the net's probe, before layer `layer`'s backward: every bucket whose
 * lowest layer is above it is final */
static int probe(void *user, ct_net *net, size_t layer)
{
    worker *w = user;
    step *s = w->s;
    (void)net;
    int st = CT_OK;
    while (!st && s->posted[w->i] < s->nb && s->g->bucket[s->posted[w->i]].layer > layer)
        st = post_next(s, w->i);
    return st;
}

static void *run_replica(void *arg)
{
    worker *w = arg;
    step *s = w->s;
    ct_replica *r = &s->g->rep[w->i];
    r->net->probe = probe;
    r->net->probe_user = w;
    r->status = s->fn(r, s->user);
    r->net->probe = NULL;
    r->net->probe_user = NULL;
    while (!r->status && s->posted[w->i] < s->nb)
        r->status = post_next(s, w->i);
    /* the backward done on the device: where the exposed part of the
     * reduction starts (this thread has nothing else to do) */
    if (!r->status && !(r->status = ct_context_finish(r->ctx)))
        r->bwd_end = ct_now();
    pthread_mutex_lock(&s->mu);
    s->finished[w->i] = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* bucket k's sum to every replica, on its transfer queue after its read */
static int write_back(step *s, size_t k)
{
    ct_group *g = s->g;
    const ct_bucket *b = &g->bucket[k];
    for (size_t i = 0; i < g->count; i++) {
        ct_replica *r = &g->rep[i];
        cl_int err = clEnqueueWriteBuffer(r->ctx->transfer, r->net->arena[CT_ARENA_GRADS].mem, CL_FALSE,
                                          b->off * sizeof(float), b->n * sizeof(float), g->sum + b->off, 0, NULL,
                                          &s->wrote[i * s->nb + k]);
        if (err == CL_SUCCESS)
            err = clFlush(r->ctx->transfer);
        if (err != CL_SUCCESS)
            return ct_fail(NULL, err, "writing the summed gradients to device %u:%u: %s",
                           ct_context_device(r->ctx)->platform_index, ct_context_device(r->ctx)->device_index,
                           ct_status_str(err));
    }
    return CT_OK;
}

/* The summing side: bucket by bucket, as every replica's read lands. Its
 * errors stay in this thread's message (the replicas' threads own their
 * contexts until they are joined). */
static int reduce(step *s, ct_mpi_pending *mp)
{
    ct_group *g = s->g;
    size_t sent = 0; /* buckets written back */
    for (size_t k = 0; k < s->nb; k++) {
        for (size_t i = 0; i < g->count; i++) {
            pthread_mutex_lock(&s->mu);
            while (s->posted[i] <= k && !s->finished[i])
                pthread_cond_wait(&s->cv, &s->mu);
            cl_event ev = s->posted[i] > k ? s->read[i * s->nb + k] : NULL;
            pthread_mutex_unlock(&s->mu);
            if (!ev)
                return CT_ERR_INTERNAL; /* the replica failed: its message is the step's */
            cl_int err = clWaitForEvents(1, &ev);
            if (err != CL_SUCCESS)
                return ct_fail(NULL, err, "reading a gradient bucket back: %s", ct_status_str(err));
        }
        ct_group_sum_range(g, g->bucket[k].off, g->bucket[k].n);
        int st = ct_mpi_isum_f32(NULL, mp, k, g->sum + g->bucket[k].off, g->bucket[k].n);
        /* the buckets whose sums have arrived go back at once, in order */
        for (int done = 1; !st && sent <= k && done;)
            if (!(st = ct_mpi_test(NULL, mp, sent, &done)) && done)
                st = write_back(s, sent++);
        if (st)
            return st;
    }
    for (int st; sent < s->nb; sent++)
        if ((st = ct_mpi_wait(NULL, mp, sent)) || (st = write_back(s, sent)))
            return st;
    return CT_OK;
}

int ct_bucket_step(ct_group *g, int (*fn)(ct_replica *r, void *user), void *user)
{
    ct_context *ctx = g->rep[0].ctx;
    size_t n = g->count, nb = g->nbuckets;
    step s = { .g = g, .fn = fn, .user = user, .nb = nb };
    worker w[64];
    pthread_t th[64];
    int started[64] = { 0 };
    ct_mpi_pending *mp = NULL;
    s.read = calloc(n * nb, sizeof *s.read);
    s.wrote = calloc(n * nb, sizeof *s.wrote);
    s.posted = calloc(n, sizeof *s.posted);
    s.finished = calloc(n, sizeof *s.finished);
    int st = !s.read || !s.wrote || !s.posted || !s.finished
                 ? ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory")
                 : ct_mpi_pending_new(ctx, nb, &mp);
    if (st || n > 64) {
        free(s.read);
        free(s.wrote);
        free(s.posted);
        free(s.finished);
        return st ? st : ct_fail(ctx, CT_ERR_INTERNAL, "%zu replicas", n);
    }
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    for (size_t i = 0; i < n; i++) {
        w[i] = (worker){ &s, i };
        g->rep[i].status = CT_OK;
        int e = pthread_create(&th[i], NULL, run_replica, &w[i]);
        started[i] = e == 0;
        if (e) {
            g->rep[i].status = ct_fail(g->rep[i].ctx, CT_ERR_NO_MEMORY, "cannot start a thread for this device: %s",
                                       strerror(e));
            pthread_mutex_lock(&s.mu);
            s.finished[i] = 1;
            pthread_mutex_unlock(&s.mu);
        }
    }
    int red = reduce(&s, mp);
    for (size_t i = 0; i < n; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    /* a bucket's sum in flight over the ranks must land before its buffer goes */
    if (red)
        for (size_t k = 0; k < nb; k++)
            ct_mpi_wait(NULL, mp, k);
    ct_mpi_pending_free(mp);
    st = CT_OK;
    for (size_t i = 0; i < n && !st; i++)
        if (g->rep[i].status)
            st = ct_group_replica_fail(g, i);
    if (!st && red)
        st = ct_fail_keep(ctx, red);
    /* each replica's next commands (the update) wait for its writes */
    for (size_t i = 0; i < n; i++) {
        ct_replica *r = &g->rep[i];
        cl_uint nw = 0;
        cl_event *wr = &s.wrote[i * nb];
        for (size_t k = 0; k < nb; k++)
            if (wr[k]) {
                ct_count_h2d(r->ctx, g->bucket[k].n * sizeof(float));
                wr[nw++] = wr[k];
            }
        cl_int err = CL_SUCCESS;
        if (nw) {
            err = clEnqueueBarrierWithWaitList(ct_context_queue(r->ctx), nw, wr, NULL);
            if (err == CL_SUCCESS)
                err = clFlush(ct_context_queue(r->ctx));
            if (err != CL_SUCCESS && !st)
                st = ct_fail(ctx, err, "waiting for the summed gradients: %s", ct_status_str(err));
        }
        if (nw && !st && (err = clWaitForEvents(nw, wr)) != CL_SUCCESS)
            st = ct_fail(ctx, err, "writing the summed gradients: %s", ct_status_str(err));
        for (size_t k = 0; k < nw; k++)
            clReleaseEvent(wr[k]);
        for (size_t k = 0; k < s.posted[i]; k++) {
            /* a read still in flight (a failed step) writes into r->host: let it land */
            clWaitForEvents(1, &s.read[i * nb + k]);
            clReleaseEvent(s.read[i * nb + k]);
        }
    }
    if (!st)
        ct_group_count_exposed(g, ct_now());
    pthread_cond_destroy(&s.cv);
    pthread_mutex_destroy(&s.mu);
    free(s.read);
    free(s.wrote);
    free(s.posted);
    free(s.finished);
    return st;
}
