/*
 * mpi.h - the processes of a data-parallel run. With MPI (src/train/mpi.c)
 * they are the ranks of the job mpirun started; without it, or when the
 * process was not started by a launcher, one process of rank 0
 * (src/train/mpi_none.c). Collectives return a status and put an MPI
 * failure into ctx's message; they are called from one thread only.
 */
#ifndef CT_TRAIN_MPI_H
#define CT_TRAIN_MPI_H

#include <stddef.h>

#include "cltrain/context.h"

/* sum over the ranks, in place; every rank receives the same values */
int ct_mpi_sum_f32(ct_context *ctx, float *buf, size_t n);
int ct_mpi_sum_f64(ct_context *ctx, double *buf, size_t n);
/* Non-blocking sums (MPI_Iallreduce, in place), for the gradient buckets
 * of one step: `count` slots, each started by ct_mpi_isum_f32 (n below
 * 2^31) and finished by ct_mpi_wait before its buffer is read or the slot
 * is started again. Every rank starts the slots in the same order. */
typedef struct ct_mpi_pending ct_mpi_pending;
int ct_mpi_pending_new(ct_context *ctx, size_t count, ct_mpi_pending **out);
void ct_mpi_pending_free(ct_mpi_pending *p);
int ct_mpi_isum_f32(ct_context *ctx, ct_mpi_pending *p, size_t slot, float *buf, size_t n);
/* *done: 1 when slot's sum has arrived (it is then finished), else 0 */
int ct_mpi_test(ct_context *ctx, ct_mpi_pending *p, size_t slot, int *done);
int ct_mpi_wait(ct_context *ctx, ct_mpi_pending *p, size_t slot);
/* rank 0's bytes to every rank */
int ct_mpi_bcast(ct_context *ctx, void *buf, size_t bytes);
/* every rank's `bytes` at all[rank * bytes] on every rank */
int ct_mpi_allgather(ct_context *ctx, const void *mine, void *all, size_t bytes);

#endif /* CT_TRAIN_MPI_H */
