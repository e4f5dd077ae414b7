/*
 * cltrain/parallel.h - data-parallel training: one model replica per
 * OpenCL device in this process (each device in its own context, so
 * devices of different vendors work together), and one process per rank of
 * an MPI job (each rank may drive several devices).
 *
 * Every step the global mini-batch (ct_train_options.batch) is split:
 * rank r takes the r-th of `world` equal slices, and within a process each
 * device a share of the slice. Each replica computes the gradient of the
 * mean loss over its rows; the gradients are summed on the host weighted by
 * rows / batch (a fixed order, so the result is deterministic), summed over
 * the ranks (MPI_Allreduce), written back, and every replica runs the same
 * optimizer step, so all replicas hold the same parameters. Batch norm
 * keeps per-replica statistics (as PyTorch's DataParallel does); the
 * running statistics are averaged over the replicas, weighted by share, at
 * every epoch's end. Checkpoints, logs and epoch reports come from rank 0
 * only. docs/PARALLEL.md has the details and a cost model.
 */
#ifndef CLTRAIN_PARALLEL_H
#define CLTRAIN_PARALLEL_H

#include <stddef.h>

#include "cltrain/common.h"
#include "cltrain/context.h"
#include "cltrain/train.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this library was built with MPI. */
CT_API int ct_mpi_built(void);

/* Joins the MPI job when the process was started by an MPI launcher
 * (mpirun sets OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK), else stays a
 * world of one process and never touches MPI. Call it once, before any
 * other cltrain function that trains. */
CT_API int ct_mpi_init(int *argc, char ***argv);
/* This process's rank and the number of ranks (0 and 1 outside a job). */
CT_API int ct_mpi_rank(void);
CT_API int ct_mpi_size(void);
/* Leaves the job normally; every rank must call it. */
CT_API void ct_mpi_finalize(void);
/* For the application's error path only: ends every process of the job
 * with `code` (MPI_Abort), so the other ranks do not wait in a collective
 * for a rank that has given up. Outside a job it returns. */
CT_API void ct_mpi_abort(int code);

/* ct_train over `count` contexts (one replica each; count 1 is ct_train).
 * shares: relative rows per replica (count values > 0), NULL for equal
 * shares; each replica gets at least one row. Under MPI every rank calls
 * it with the same options; its devices share the rank's slice. */
CT_API int ct_train_parallel(ct_context *const *ctxs, size_t count, const double *shares,
                             const ct_train_options *options);

#ifdef __cplusplus
}
#endif

#endif /* CLTRAIN_PARALLEL_H */
