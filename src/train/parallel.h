/*
 * parallel.h - the replicas of a data-parallel run in this process and the
 * reductions that keep them identical (src/train/parallel.c).
 *
 * A group holds one replica per device (each in its own ct_context) and
 * knows this process's rank among `world` MPI ranks. Rows: the global batch
 * is cut into `world` equal slices, rank r takes slice r (the loader deals
 * the epoch's order in blocks of a slice, so the ranks' batches together
 * are one process's batch); within the slice replica i takes `rows` rows
 * from `row0`, by share (of a text batch, (T, N) token ids, the columns
 * [row0, row0 + rows): ct_slot_part). With one replica and one rank
 * nothing here runs: the trainer's single-device path is the plain loop.
 */
#ifndef CT_TRAIN_PARALLEL_H
#define CT_TRAIN_PARALLEL_H

#include <stdint.h>

#include "nn/net.h"

typedef struct ct_replica {
    ct_context *ctx;
    ct_net *net;           /* replica 0's is the trainer's own net; the others point at `own` */
    ct_net own;
    int planned;
    cl_mem state;          /* optimizer state */
    cl_mem norm_ws;        /* gradient-norm workspace (clipping) */
    cl_mem acc;            /* (4) loss sum, correct count of the epoch so far */
    size_t row0, rows;     /* its rows of this process's batch */
    size_t base;           /* its first row in the global batch */
    cl_event wrote[2], used[2]; /* per batch slot: upload done, last step that read it */
    float *host;           /* its gradients (or buffers) on the host, for the reduction */
    cl_mem pinned;         /* what host is mapped from, when pinned (NULL: malloc) */
    int status;            /* of its part of a step */
    double bwd_end;        /* ct_now() when its last backward was done on the device */
} ct_replica;

/* A range of the gradient arena reduced as one piece: the parameter
 * gradients of consecutive layers [layer, ...), complete once the backward
 * has passed below `layer` (src/train/bucket.c). */
typedef struct ct_bucket {
    size_t layer;          /* its lowest layer */
    size_t off, n;         /* floats */
} ct_bucket;

typedef struct ct_group {
    ct_replica *rep;
    size_t count;
    int rank, world;
    size_t batch;          /* global rows per step */
    size_t local;          /* this process's rows per step: batch / world */
    float *sum;            /* the reduction buffer */
    size_t sum_n;
    ct_bucket *bucket;     /* in reduction order: the last layers' first */
    size_t nbuckets;
    int overlap;           /* reduce the buckets while the backward runs (CLTRAIN_REDUCE_OVERLAP) */
    double exposed_s;      /* summed over the reductions: last backward's end to the sums written */
    long reductions;
} ct_group;

/* Splits the batch: rows of this rank by `shares` (NULL: equal). Errors go
 * to ctxs[0]. */
int ct_group_init(ct_group *g, ct_context *const *ctxs, size_t count, const double *shares,
                  size_t batch);
void ct_group_free(ct_group *g);

/* What one part of a batch slot (the inputs, or the labels) is uploaded
 * from: `height` host rows of `width` bytes, `pitch` bytes apart, which
 * land contiguously in the slot (a replica's columns of a (T, N) block of
 * token ids or per-token labels: T rows of its columns' bytes, one row of
 * the block apart); height 1 is one run of `width` bytes. */
typedef struct ct_slot_part {
    const void *p;
    size_t width, height, pitch;
} ct_slot_part;

/* A batch's inputs x and labels y into net's slot k on ctx's transfer
 * queue (a strided part by clEnqueueWriteBufferRect, straight from the
 * host rows: no staging copy), after `after` (the last step that read the
 * slot; NULL: none), counted as host-to-device bytes and flushed, not
 * waited for; *wrote signals both done. */
int ct_slot_upload(ct_context *ctx, ct_net *net, int k, const ct_slot_part *x, const ct_slot_part *y,
                   cl_event after, cl_event *wrote);
/* Two batch slots' events (uploads done, last reads done): waits for the
 * uploads still in flight and releases both, leaving NULLs. */
void ct_slot_events_settle(cl_event wrote[2], cl_event used[2]);

/* Whether any reduction is needed: more than one replica or rank. */
int ct_group_parallel(const ct_group *g);

/* Plans replicas 1.. like replica 0 (already planned), allocates them, and
 * sizes the host buffers. */
int ct_group_plan(ct_group *g, const ct_model *m, int bn_groups);

/* Runs fn on every replica at once, replica 0 on this thread and each other
 * on its own, and returns the first failure (its message moved to replica
 * 0's context). With reduce, the gradients are summed over the replicas,
 * weighted by rows / batch in replica order, then over the ranks, and the
 * result is written to every replica (non-blocking; what the caller
 * enqueues next on a replica's queue comes after it). With g->overlap the
 * buckets are reduced while fn's backward runs (ct_bucket_step, every
 * replica then on a thread of its own and this thread summing); without,
 * each replica reads its whole gradient arena back on its thread after fn,
 * and this thread sums in pieces, so the writes of one piece overlap the
 * MPI sum of the next. Both give the same floats. */
int ct_group_step(ct_group *g, int (*fn)(ct_replica *r, void *user), void *user, int reduce);

/* sum[off, off + n) := sum_i (rows_i / batch) * rep[i].host[off, ...), in
 * replica order, the same floats whatever range a caller takes */
void ct_group_sum_range(ct_group *g, size_t off, size_t n);
/* A reduction that ended (its writes done) at `end`: its exposed time, from
 * the last replica's bwd_end, added to the group's. */
void ct_group_count_exposed(ct_group *g, double end);
/* The mean exposed ms per reduction so far (ct_epoch_report's
 * reduce_exposed_ms); -1 without replicas or ranks. */
double ct_group_exposed_ms(const ct_group *g);
/* Replica i's failed status, its message moved to replica 0's context. */
int ct_group_replica_fail(ct_group *g, size_t i);

/* Replica 0 of rank 0's parameters, running statistics and optimizer state
 * (state_n floats) to every replica of every rank. */
int ct_group_broadcast(ct_group *g, size_t state_n);

/* Running statistics := their average over the replicas and ranks,
 * weighted by rows / batch. */
int ct_group_average_buffers(ct_group *g);

/* The epoch's loss sum and correct count over the replicas (and, with
 * all_ranks, over the ranks: a collective). */
int ct_group_totals(ct_group *g, int all_ranks, double *loss_sum, double *correct);

/* Every rank's fingerprint (model text hash, parameter count, batch,
 * dataset size, ...) must equal rank 0's; a difference is an error on every
 * rank naming the ranks and what differs. */
int ct_group_check_same(ct_group *g, const char *model_text, const uint64_t *facts,
                        const char *const *names, size_t nfacts);

#endif /* CT_TRAIN_PARALLEL_H */
