/*
 * mpi_none.c - the processes of a data-parallel run in a build without
 * MPI: always one process, rank 0 of 1, whose collectives are identities.
 */
#include <stdlib.h>
#include <string.h>

#include "cltrain/parallel.h"
#include "core/error.h"
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

struct ct_mpi_pending {
    size_t count;
};

int ct_mpi_pending_new(ct_context *ctx, size_t count, ct_mpi_pending **out)
{
    ct_mpi_pending *p = malloc(sizeof *p);
    *out = p;
    if (!p)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    p->count = count;
    return CT_OK;
}

void ct_mpi_pending_free(ct_mpi_pending *p)
{
    free(p);
}

int ct_mpi_isum_f32(ct_context *ctx, ct_mpi_pending *p, size_t slot, float *buf, size_t n)
{
    (void)buf;
    (void)n;
    if (slot >= p->count)
        return ct_fail(ctx, CT_ERR_INTERNAL, "ct_mpi_isum_f32: slot %zu of %zu", slot, p->count);
    return CT_OK;
}

int ct_mpi_test(ct_context *ctx, ct_mpi_pending *p, size_t slot, int *done)
{
    (void)ctx;
    (void)p;
    (void)slot;
    *done = 1;
    return CT_OK;
}

int ct_mpi_wait(ct_context *ctx, ct_mpi_pending *p, size_t slot)
{
    (void)ctx;
    (void)p;
    (void)slot;
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
