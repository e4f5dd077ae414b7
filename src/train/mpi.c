/*
 * mpi.c - the ranks of an MPI job (built when meson finds MPI).
 *
 * MPI is joined only when a launcher started the process, so a plain
 * `cltrain train` never loads or initializes it. Errors come back as codes
 * (MPI_ERRORS_RETURN) and become messages naming the call and the rank.
 * A rank that dies is noticed by mpirun, which ends the other ranks; a rank
 * that fails with an error calls ct_mpi_abort so the others do not wait in
 * a collective for it.
 */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>

#include "cltrain/parallel.h"
#include "core/error.h"
#include "train/mpi.h"

static int joined, rank, size = 1;

int ct_mpi_built(void)
{
    return 1;
}

static int launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

static int mpi_fail(ct_context *ctx, int err, const char *call)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, text, &len) != MPI_SUCCESS)
        len = 0;
    text[len] = '\0';
    return ct_fail(ctx, CT_ERR_IO, "%s failed on rank %d of %d: %s. HINT: another rank has probably "
                   "failed or died; its messages say why", call, rank, size, len ? text : "unknown error");
}

int ct_mpi_init(int *argc, char ***argv)
{
    if (joined || !launched())
        return CT_OK;
    int provided = 0, err = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (err != MPI_SUCCESS)
        return ct_fail(NULL, CT_ERR_IO, "cannot join the MPI job (MPI_Init_thread failed). HINT: "
                       "start cltrain with mpirun from the same MPI installation it was built with");
    joined = 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return CT_OK;
}

int ct_mpi_rank(void)
{
    return rank;
}

int ct_mpi_size(void)
{
    return size;
}

void ct_mpi_finalize(void)
{
    if (joined)
        MPI_Finalize();
    joined = 0;
    rank = 0;
    size = 1;
}

void ct_mpi_abort(int code)
{
    if (joined && size > 1)
        MPI_Abort(MPI_COMM_WORLD, code);
}

/* MPI counts are int: large buffers go in pieces */
#define PIECE ((size_t)1 << 28)

int ct_mpi_sum_f32(ct_context *ctx, float *buf, size_t n)
{
    for (size_t at = 0; size > 1 && at < n; at += PIECE) {
        int k = (int)(n - at < PIECE ? n - at : PIECE);
        int err = MPI_Allreduce(MPI_IN_PLACE, buf + at, k, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        if (err != MPI_SUCCESS)
            return mpi_fail(ctx, err, "MPI_Allreduce of the gradients");
    }
    return CT_OK;
}

struct ct_mpi_pending {
    size_t count;
    MPI_Request req[]; /* MPI_REQUEST_NULL: nothing in flight */
};

int ct_mpi_pending_new(ct_context *ctx, size_t count, ct_mpi_pending **out)
{
    ct_mpi_pending *p = malloc(sizeof *p + count * sizeof(MPI_Request));
    *out = p;
    if (!p)
        return ct_fail(ctx, CT_ERR_NO_MEMORY, "out of host memory");
    p->count = count;
    for (size_t i = 0; i < count; i++)
        p->req[i] = MPI_REQUEST_NULL;
    return CT_OK;
}

void ct_mpi_pending_free(ct_mpi_pending *p)
{
    free(p);
}

int ct_mpi_isum_f32(ct_context *ctx, ct_mpi_pending *p, size_t slot, float *buf, size_t n)
{
    if (size <= 1)
        return CT_OK;
    if (slot >= p->count || n > INT_MAX || p->req[slot] != MPI_REQUEST_NULL)
        return ct_fail(ctx, CT_ERR_INTERNAL, "ct_mpi_isum_f32: slot %zu of %zu, %zu floats", slot, p->count, n);
    int err = MPI_Iallreduce(MPI_IN_PLACE, buf, (int)n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &p->req[slot]);
    return err == MPI_SUCCESS ? CT_OK : mpi_fail(ctx, err, "MPI_Iallreduce of a gradient bucket");
}

int ct_mpi_test(ct_context *ctx, ct_mpi_pending *p, size_t slot, int *done)
{
    *done = 1;
    if (size <= 1 || p->req[slot] == MPI_REQUEST_NULL)
        return CT_OK;
    int err = MPI_Test(&p->req[slot], done, MPI_STATUS_IGNORE);
    return err == MPI_SUCCESS ? CT_OK : mpi_fail(ctx, err, "MPI_Test of a gradient bucket's sum");
}

int ct_mpi_wait(ct_context *ctx, ct_mpi_pending *p, size_t slot)
{
    if (size <= 1 || p->req[slot] == MPI_REQUEST_NULL)
        return CT_OK;
    int err = MPI_Wait(&p->req[slot], MPI_STATUS_IGNORE);
    return err == MPI_SUCCESS ? CT_OK : mpi_fail(ctx, err, "MPI_Wait for a gradient bucket's sum");
}

int ct_mpi_sum_f64(ct_context *ctx, double *buf, size_t n)
{
    if (size <= 1)
        return CT_OK;
    int err = MPI_Allreduce(MPI_IN_PLACE, buf, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return err == MPI_SUCCESS ? CT_OK : mpi_fail(ctx, err, "MPI_Allreduce of the loss");
}

int ct_mpi_bcast(ct_context *ctx, void *buf, size_t bytes)
{
    for (size_t at = 0; size > 1 && at < bytes; at += PIECE) {
        int k = (int)(bytes - at < PIECE ? bytes - at : PIECE);
        int err = MPI_Bcast((char *)buf + at, k, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (err != MPI_SUCCESS)
            return mpi_fail(ctx, err, "MPI_Bcast of the initial state");
    }
    return CT_OK;
}

int ct_mpi_allgather(ct_context *ctx, const void *mine, void *all, size_t bytes)
{
    if (size <= 1)
        return CT_OK;
    if (bytes > INT_MAX)
        return ct_fail(ctx, CT_ERR_INTERNAL, "ct_mpi_allgather of %zu bytes", bytes);
    int err = MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
    return err == MPI_SUCCESS ? CT_OK : mpi_fail(ctx, err, "MPI_Allgather of the run's fingerprint");
}
