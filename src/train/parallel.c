/*
 * parallel.c - replicas of one model on several devices and ranks, and the
 * host-side reductions between them.
 *
 * Gradients: each replica's are the gradient of the mean loss over its own
 * rows; the global batch's mean loss has the gradient sum_i (rows_i /
 * batch) g_i, which is what is summed, in replica order and then over the
 * ranks, so every replica receives the same floats and applies the same
 * optimizer step: by default in buckets while the backward runs
 * (src/train/bucket.c), here after it (CLTRAIN_REDUCE_OVERLAP=0), with the
 * same per-element sum (ct_group_sum_range). Contexts are never shared (devices
 * of different vendors), so everything crosses the host. Each replica's
 * forward and backward run on a thread of their own: host-path GEMMs block
 * their caller, and one thread driving two devices would serialize them.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/runtime.h"
#include "cltrain/parallel.h"
#include "core/sha256.h"
#include "core/util.h"
#include "train/bucket.h"
#include "train/mpi.h"
#include "train/parallel.h"

/* floats per piece of the write-back, so one piece's writes overlap the
 * next piece's MPI sum */
#define PIECE ((size_t)1 << 20)

int ct_group_init(ct_group *g, ct_context *const *ctxs, size_t count, const double *shares,
                  size_t batch)
{
    memset(g, 0, sizeof *g);
    ct_context *ctx = ctxs[0];
    g->rank = ct_mpi_rank();
    g->world = ct_mpi_size();
    g->batch = batch;
    if (batch % (size_t)g->world)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "the batch (%zu) does not split into %d equal slices, "
                       "one per rank. HINT: use a batch that is a multiple of the rank count", batch,
                       g->world);
    if (count > 64)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%zu devices; one process drives at most 64. HINT: "
                       "use more ranks", count);
    g->local = batch / (size_t)g->world;
    if (g->local < count)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "the batch slice of this rank (%zu rows) is smaller "
                       "than its %zu devices. HINT: use a larger batch", g->local, count);
    g->rep = calloc(count, sizeof *g->rep);
    if (!g->rep)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    g->count = count;
    /* rows by share: floor of each exact share (at least one), the rest to
     * the largest remainders, ties to the first */
    double total = 0;
    for (size_t i = 0; i < count; i++) {
        double s = shares ? shares[i] : 1.0;
        if (!(s > 0 && s < 1e9))
            return ct_fail(ctx, CT_ERR_INVALID_ARG, "device share %g is not a positive number", s);
        total += s;
    }
    size_t given = 0;
    for (size_t i = 0; i < count; i++) {
        double exact = (double)g->local * (shares ? shares[i] : 1.0) / total;
        g->rep[i].rows = exact < 1 ? 1 : (size_t)exact;
        given += g->rep[i].rows;
    }
    while (given > g->local) { /* minimums pushed it over: take from the largest */
        size_t big = 0;
        for (size_t i = 1; i < count; i++)
            if (g->rep[i].rows > g->rep[big].rows)
                big = i;
        g->rep[big].rows--;
        given--;
    }
    while (given < g->local) {
        size_t best = 0;
        double most = -1;
        for (size_t i = 0; i < count; i++) {
            double exact = (double)g->local * (shares ? shares[i] : 1.0) / total;
            double rem = exact - (double)g->rep[i].rows;
            if (rem > most) {
                most = rem;
                best = i;
            }
        }
        g->rep[best].rows++;
        given++;
    }
    size_t at = 0;
    for (size_t i = 0; i < count; i++) {
        g->rep[i].ctx = ctxs[i];
        g->rep[i].row0 = at;
        g->rep[i].base = (size_t)g->rank * g->local + at;
        at += g->rep[i].rows;
    }
    return CT_OK;
}

void ct_group_free(ct_group *g)
{
    for (size_t i = 0; i < g->count; i++) {
        ct_replica *r = &g->rep[i];
        for (int k = 0; k < 2; k++) {
            if (r->wrote[k])
                clReleaseEvent(r->wrote[k]);
            if (r->used[k])
                clReleaseEvent(r->used[k]);
        }
        ct_buffer_release(&r->state);
        ct_buffer_release(&r->norm_ws);
        ct_buffer_release(&r->acc);
        ct_bucket_host_free(r);
        if (i > 0 && r->planned)
            ct_net_release(&r->own);
    }
    free(g->rep);
    free(g->sum);
    free(g->bucket);
    memset(g, 0, sizeof *g);
}

int ct_group_parallel(const ct_group *g)
{
    return g->count > 1 || g->world > 1;
}

int ct_group_plan(ct_group *g, const ct_model *m, int bn_groups)
{
    ct_net *net0 = g->rep[0].net;
    for (size_t i = 1; i < g->count; i++) {
        ct_replica *r = &g->rep[i];
        r->net = &r->own;
        int st = ct_net_plan_grouped(r->ctx, m, (int)r->rows, bn_groups, &r->own);
        r->planned = 1;
        if (!st)
            st = ct_net_alloc(&r->own);
        if (st)
            return ct_fail(g->rep[0].ctx, st, "device %u:%u: %s", ct_context_device(r->ctx)->platform_index,
                           ct_context_device(r->ctx)->device_index, ct_context_last_error(r->ctx));
    }
    for (size_t i = 0; i < g->count; i++)
        g->rep[i].net->row_base = g->rep[i].base;
    size_t n = net0->arena_size[CT_ARENA_PARAMS];
    if (net0->arena_size[CT_ARENA_BUFFERS] > n)
        n = net0->arena_size[CT_ARENA_BUFFERS];
    for (size_t i = 0; i < g->count; i++) {
        int st = ct_bucket_host_alloc(&g->rep[i], n);
        if (st)
            return i ? ct_fail_keep(g->rep[0].ctx, st) : st;
    }
    g->sum_n = n;
    if (!(g->sum = malloc(n * sizeof(float))))
        return ct_fail(g->rep[0].ctx, CT_ERR_NO_MEMORY, "out of host memory for the gradients");
    return ct_bucket_plan(g);
}

/* ---- one step on every replica ---- */

typedef struct job {
    ct_group *g;
    ct_replica *r;
    int (*fn)(ct_replica *, void *);
    void *user;
    int reduce;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    ct_replica *r = j->r;
    r->status = j->fn(r, j->user);
    if (!r->status && j->reduce && !(r->status = ct_context_finish(r->ctx))) {
        const ct_net *net = r->net;
        r->bwd_end = ct_now();
        r->status = ct_buffer_read(r->ctx, net->arena[CT_ARENA_GRADS].mem, 0,
                                   net->arena_size[CT_ARENA_PARAMS] * sizeof(float), r->host);
    }
    return NULL;
}

int ct_group_replica_fail(ct_group *g, size_t i)
{
    const ct_device_info *d = ct_context_device(g->rep[i].ctx);
    if (i == 0)
        return g->rep[0].status;
    return ct_fail(g->rep[0].ctx, g->rep[i].status, "device %u:%u (%s): %s", d->platform_index,
                   d->device_index, d->name, ct_context_last_error(g->rep[i].ctx));
}

void ct_group_sum_range(ct_group *g, size_t off, size_t n)
{
    float *sum = g->sum + off;
    for (size_t i = 0; i < g->count; i++) {
        float w = (float)((double)g->rep[i].rows / (double)g->batch);
        const float *h = g->rep[i].host + off;
        if (i == 0)
            for (size_t k = 0; k < n; k++)
                sum[k] = w * h[k];
        else
            for (size_t k = 0; k < n; k++)
                sum[k] += w * h[k];
    }
}

/* the weighted sum over replicas into g->sum, then over the ranks, and the
 * result written to every replica */
static int reduce_grads(ct_group *g)
{
    ct_context *ctx = g->rep[0].ctx;
    size_t n = g->rep[0].net->arena_size[CT_ARENA_PARAMS];
    float *sum = g->sum;
    ct_group_sum_range(g, 0, n);
    for (size_t at = 0; at < n; at += PIECE) {
        size_t len = n - at < PIECE ? n - at : PIECE;
        int st = ct_mpi_sum_f32(ctx, sum + at, len);
        if (st)
            return st;
        for (size_t i = 0; i < g->count; i++) {
            ct_replica *r = &g->rep[i];
            /* the host buffer stays untouched until the next step's sum,
             * which comes after this queue's next reads */
            ct_count_h2d(r->ctx, len * sizeof(float));
            st = ct_hold_sync(r->ctx);
            if (st)
                return st;
            cl_int err = clEnqueueWriteBuffer(ct_context_queue(r->ctx), r->net->arena[CT_ARENA_GRADS].mem,
                                              CL_FALSE, at * sizeof(float), len * sizeof(float), sum + at,
                                              0, NULL, NULL);
            if (err != CL_SUCCESS)
                return ct_fail(ctx, err, "writing the summed gradients to device %u:%u: %s",
                               ct_context_device(r->ctx)->platform_index,
                               ct_context_device(r->ctx)->device_index, ct_status_str(err));
        }
    }
    /* the writes landed: the reduction's end (the update would wait for them) */
    for (size_t i = 0; i < g->count; i++) {
        int st = ct_context_finish(g->rep[i].ctx);
        if (st)
            return i ? ct_fail_keep(ctx, st) : st;
    }
    ct_group_count_exposed(g, ct_now());
    return CT_OK;
}

void ct_group_count_exposed(ct_group *g, double end)
{
    double last = 0;
    for (size_t i = 0; i < g->count; i++)
        if (g->rep[i].bwd_end > last)
            last = g->rep[i].bwd_end;
    g->exposed_s += end > last ? end - last : 0;
    g->reductions++;
}

double ct_group_exposed_ms(const ct_group *g)
{
    if (!ct_group_parallel(g))
        return -1;
    return g->reductions ? 1e3 * g->exposed_s / (double)g->reductions : 0;
}

int ct_group_step(ct_group *g, int (*fn)(ct_replica *r, void *user), void *user, int reduce)
{
    if (reduce && g->overlap)
        return ct_bucket_step(g, fn, user);
    job jobs[64];
    pthread_t th[64];
    int started[64] = { 0 };
    size_t n = g->count < 64 ? g->count : 64;
    memset(jobs, 0, sizeof jobs);
    for (size_t i = 0; i < n; i++) {
        jobs[i] = (job){ g, &g->rep[i], fn, user, reduce };
        g->rep[i].status = CT_OK;
    }
    for (size_t i = 1; i < n; i++) {
        int e = pthread_create(&th[i], NULL, run_job, &jobs[i]);
        started[i] = e == 0;
        if (e)
            g->rep[i].status = ct_fail(g->rep[i].ctx, CT_ERR_NO_MEMORY, "cannot start a thread for "
                                       "this device: %s", strerror(e));
    }
    run_job(&jobs[0]);
    for (size_t i = 1; i < n; i++)
        if (started[i])
            pthread_join(th[i], NULL);
    for (size_t i = 0; i < n; i++)
        if (g->rep[i].status)
            return ct_group_replica_fail(g, i);
    return reduce ? reduce_grads(g) : CT_OK;
}

/* ---- state ---- */

/* rank 0's replica 0's n floats of mem at every replica's */
static int broadcast_one(ct_group *g, cl_mem (*mem_of)(ct_replica *), size_t n)
{
    ct_context *ctx = g->rep[0].ctx;
    int st = CT_OK;
    for (size_t at = 0; at < n && !st; at += g->sum_n) {
        size_t len = n - at < g->sum_n ? n - at : g->sum_n;
        if (g->rank == 0)
            st = ct_buffer_read(ctx, mem_of(&g->rep[0]), at * sizeof(float), len * sizeof(float), g->sum);
        if (!st)
            st = ct_mpi_bcast(ctx, g->sum, len * sizeof(float));
        for (size_t i = g->rank == 0 ? 1 : 0; i < g->count && !st; i++)
            st = ct_buffer_write(g->rep[i].ctx, mem_of(&g->rep[i]), at * sizeof(float), len * sizeof(float),
                                 g->sum);
        if (st)
            st = ct_fail_keep(ctx, st);
    }
    return st;
}

static cl_mem params_of(ct_replica *r)
{
    return r->net->arena[CT_ARENA_PARAMS].mem;
}

static cl_mem buffers_of(ct_replica *r)
{
    return r->net->arena[CT_ARENA_BUFFERS].mem;
}

static cl_mem state_of(ct_replica *r)
{
    return r->state;
}

int ct_group_broadcast(ct_group *g, size_t state_n)
{
    const ct_net *net = g->rep[0].net;
    int st = broadcast_one(g, params_of, net->arena_size[CT_ARENA_PARAMS]);
    if (!st && net->nbuffers)
        st = broadcast_one(g, buffers_of, net->arena_size[CT_ARENA_BUFFERS]);
    if (!st && state_n)
        st = broadcast_one(g, state_of, state_n);
    return st;
}

int ct_group_average_buffers(ct_group *g)
{
    ct_context *ctx = g->rep[0].ctx;
    size_t n = g->rep[0].net->arena_size[CT_ARENA_BUFFERS];
    if (!g->rep[0].net->nbuffers)
        return CT_OK;
    int st = CT_OK;
    for (size_t i = 0; i < g->count && !st; i++)
        st = ct_buffer_read(g->rep[i].ctx, buffers_of(&g->rep[i]), 0, n * sizeof(float), g->rep[i].host);
    if (st)
        return ct_fail_keep(ctx, st);
    for (size_t k = 0; k < n; k++) {
        float s = 0;
        for (size_t i = 0; i < g->count; i++)
            s += (float)((double)g->rep[i].rows / (double)g->batch) * g->rep[i].host[k];
        g->sum[k] = s;
    }
    if ((st = ct_mpi_sum_f32(ctx, g->sum, n)))
        return st;
    for (size_t i = 0; i < g->count && !st; i++)
        st = ct_buffer_write(g->rep[i].ctx, buffers_of(&g->rep[i]), 0, n * sizeof(float), g->sum);
    return st ? ct_fail_keep(ctx, st) : CT_OK;
}

int ct_group_totals(ct_group *g, int all_ranks, double *loss_sum, double *correct)
{
    double t[2] = { 0, 0 };
    for (size_t i = 0; i < g->count; i++) {
        float h[2];
        int st = ct_buffer_read(g->rep[i].ctx, g->rep[i].acc, 0, sizeof h, h);
        if (st)
            return ct_fail_keep(g->rep[0].ctx, st);
        t[0] += h[0];
        t[1] += h[1];
    }
    if (all_ranks) {
        int st = ct_mpi_sum_f64(g->rep[0].ctx, t, 2);
        if (st)
            return st;
    }
    *loss_sum = t[0];
    *correct = t[1];
    return CT_OK;
}

/* ---- the same run on every rank ---- */

#define MAX_FACTS 16

int ct_group_check_same(ct_group *g, const char *model_text, const uint64_t *facts,
                        const char *const *names, size_t nfacts)
{
    ct_context *ctx = g->rep[0].ctx;
    if (g->world <= 1)
        return CT_OK;
    if (nfacts > MAX_FACTS)
        return ct_fail(ctx, CT_ERR_INTERNAL, "ct_group_check_same: %zu facts", nfacts);
    typedef struct print {
        uint8_t hash[32];
        uint64_t facts[MAX_FACTS];
    } print;
    print mine;
    memset(&mine, 0, sizeof mine);
    ct_sha256 h;
    ct_sha256_init(&h);
    ct_sha256_update(&h, model_text, strlen(model_text));
    ct_sha256_final(&h, mine.hash);
    memcpy(mine.facts, facts, nfacts * sizeof *facts);
    print *all = calloc((size_t)g->world, sizeof *all);
    if (!all)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    int st = ct_mpi_allgather(ctx, &mine, all, sizeof mine);
    for (int r = 1; r < g->world && !st; r++) {
        if (memcmp(all[r].hash, all[0].hash, sizeof all[0].hash)) {
            char a[65], b[65];
            ct_sha256_hex(all[0].hash, a);
            ct_sha256_hex(all[r].hash, b);
            st = ct_fail(ctx, CT_ERR_INVALID_ARG, "rank %d trains another model than rank 0 (model "
                         "text SHA-256 %.16s... on rank 0, %.16s... on rank %d). HINT: give every "
                         "rank the same --model file (or checkpoint)", r, a, b, r);
            break;
        }
        for (size_t k = 0; k < nfacts; k++)
            if (all[r].facts[k] != all[0].facts[k]) {
                st = ct_fail(ctx, CT_ERR_INVALID_ARG, "rank %d differs from rank 0 in the %s: %llu "
                             "there, %llu on rank 0. HINT: start every rank with the same options "
                             "and data", r, names[k], (unsigned long long)all[r].facts[k],
                             (unsigned long long)all[0].facts[k]);
                break;
            }
    }
    free(all);
    return st;
}

void ct_slot_events_settle(cl_event wrote[2], cl_event used[2])
{
    for (int k = 0; k < 2; k++) {
        if (wrote[k]) {
            clWaitForEvents(1, &wrote[k]);
            clReleaseEvent(wrote[k]);
        }
        if (used[k])
            clReleaseEvent(used[k]);
        wrote[k] = used[k] = NULL;
    }
}

/* one part of a slot from byte `at` on, plain or strided */
static cl_int write_part(cl_command_queue q, cl_mem slot, size_t at, const ct_slot_part *part, cl_uint nwait,
                         const cl_event *wait, cl_event *done)
{
    if (part->height <= 1 || part->width == part->pitch)
        return clEnqueueWriteBuffer(q, slot, CL_FALSE, at, part->width * (part->height ? part->height : 1),
                                    part->p, nwait, wait, done);
    const size_t origin[3] = { at, 0, 0 }, host[3] = { 0, 0, 0 }, region[3] = { part->width, part->height, 1 };
    return clEnqueueWriteBufferRect(q, slot, CL_FALSE, origin, host, region, part->width, 0, part->pitch, 0,
                                    part->p, nwait, wait, done);
}

int ct_slot_upload(ct_context *ctx, ct_net *net, int k, const ct_slot_part *x, const ct_slot_part *y,
                   cl_event after, cl_event *wrote)
{
    cl_command_queue q = ctx->transfer;
    cl_event x_done = NULL;
    ct_count_h2d(ctx, x->width * x->height + y->width * y->height);
    cl_int err = write_part(q, net->slot[k], 0, x, after ? 1 : 0, after ? &after : NULL, &x_done);
    if (err == CL_SUCCESS) {
        err = write_part(q, net->slot[k], net->slot_label_off * sizeof(float), y, 1, &x_done, wrote);
        clReleaseEvent(x_done);
    }
    if (err == CL_SUCCESS)
        err = clFlush(q);
    return err == CL_SUCCESS ? CT_OK : ct_cl_fail(ctx, err, "uploading a batch");
}
