/*
 * mpi_none.c - the processes of a data-parallel run in a build without
 * MPI: always one process, rank 0 of 1, whose collectives are identities.
 */
#include <string.h>

#include "cltrain/parallel.h"
#include "train/mpi.h"

int ct_mpi_built(void)
{
    return 0;
}

int ct_mpi_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return CT_OK;
}

int ct_mpi_rank(void)
{
    return 0;
}

int ct_mpi_size(void)
{
    return 1;
}

void ct_mpi_finalize(void)
{
}

void ct_mpi_abort(int code)
{
    (void)code;
}

int ct_mpi_sum_f32(ct_context *ctx, float *buf, size_t n)
{
    (void)ctx;
    (void)buf;
    (void)n;
    return CT_OK;
}

int ct_mpi_sum_f64(ct_context *ctx, double *buf, size_t n)
{
    (void)ctx;
    (void)buf;
    (void)n;
    return CT_OK;
}

int ct_mpi_bcast(ct_context *ctx, void *buf, size_t bytes)
{
    (void)ctx;
    (void)buf;
    (void)bytes;
    return CT_OK;
}

int ct_mpi_allgather(ct_context *ctx, const void *mine, void *all, size_t bytes)
{
    (void)ctx;
    memcpy(all, mine, bytes);
    return CT_OK;
}
