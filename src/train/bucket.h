/*
 * bucket.h - the gradient all-reduce overlapped with the backward
 * (src/train/bucket.c): the gradient arena cut into buckets of whole
 * layers, each read back, summed over the replicas and the ranks and
 * written back while the layers below it still run their backward.
 */
#ifndef CT_TRAIN_BUCKET_H
#define CT_TRAIN_BUCKET_H

#include "train/parallel.h"

/* Bytes a bucket collects before it is closed: 25 MB, or an eighth of the
 * gradients when that is less (at least 256 KiB), so that a small model
 * still has buckets to overlap; a layer is never split. */
#define CT_BUCKET_MAX_BYTES ((size_t)25 << 20)
#define CT_BUCKET_MIN_BYTES ((size_t)256 << 10)

/* The buckets of g's nets (replica 0's plan; the replicas' are the same)
 * and whether to overlap: CLTRAIN_REDUCE_OVERLAP=0 turns it off, 1 or
 * unset leaves it on, anything else is an error. */
int ct_bucket_plan(ct_group *g);

/* Host memory for a replica's gradients: pinned (a buffer allocated by the
 * driver in host memory, CL_MEM_ALLOC_HOST_PTR, mapped for good) where the
 * driver gives one, else plain; ct_bucket_host_free releases either. */
int ct_bucket_host_alloc(ct_replica *r, size_t n);
void ct_bucket_host_free(ct_replica *r);

/* ct_group_step with reduce and g->overlap: every replica runs fn on a
 * thread of its own, with its net's probe set to enqueue each bucket's
 * read (non-blocking, on its transfer queue, after what its queue holds)
 * as soon as the backward has enqueued the bucket's lowest layer; this
 * thread waits for bucket b's reads of every replica, sums them in
 * replica order, starts its sum over the ranks (MPI_Iallreduce) and, when
 * that arrives, writes it to every replica on its transfer queue; each
 * replica's queue then waits for its writes. */
int ct_bucket_step(ct_group *g, int (*fn)(ct_replica *r, void *user), void *user);

#endif /* CT_TRAIN_BUCKET_H */
