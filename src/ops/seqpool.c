/*
 * seqpool.c - sequence pooling launchers (cl_kernels/seqpool.cl).
 */
#include "ops/seqpool.h"

/* The kernels index (t N + n) F + f with uint factors and ulong products;
 * T, N and F each fit a uint, and so must T N (the tokens) and N F. */
static int check_args(ct_context *ctx, const char *fn, ct_seqpool_mode mode, size_t T, size_t N,
                      size_t F)
{
    if (mode != CT_SEQPOOL_MEAN && mode != CT_SEQPOOL_MAX && mode != CT_SEQPOOL_LAST)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: mode %d is none of mean (0), max (1), last (2)",
                       fn, (int)mode);
    if (T > UINT32_MAX || N > UINT32_MAX || F > UINT32_MAX || (N && T > UINT32_MAX / N) ||
        (N && F > UINT32_MAX / N))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: (T, N, F) = (%zu, %zu, %zu): T N and N F must "
                       "stay below 2^32. HINT: split the batch", fn, T, N, F);
    return CT_OK;
}

/* The bytes of a (T, N, F) float tensor, of the (N, F) one and of the
 * tokens (T, N) int32: the last-position walk from the end may read them
 * all, so they count whole. */
static void sizes(ct_buf tokens, size_t T, size_t N, size_t F, size_t *full, size_t *pooled,
                  size_t *tok)
{
    *full = T * N * F * sizeof(float);
    *pooled = N * F * sizeof(float);
    *tok = tokens.mem ? T * N * sizeof(cl_int) : 0;
}

int ct_seqpool_forward(ct_context *ctx, ct_seqpool_mode mode, ct_buf y, ct_buf argmax, ct_buf x,
                       ct_buf tokens, size_t T, size_t N, size_t F)
{
    int st = check_args(ctx, "ct_seqpool_forward", mode, T, N, F);
    if (st || N == 0 || F == 0)
        return st;
    cl_uint m = (cl_uint)mode, tt = (cl_uint)T, nn = (cl_uint)N, ff = (cl_uint)F;
    size_t g[2] = { F, N };
    size_t full, pooled, tok;
    sizes(tokens, T, N, F, &full, &pooled, &tok);
    /* last reads one x vector per sample; max may record its argmax */
    ct_launch_bytes(ctx, (mode == CT_SEQPOOL_LAST ? pooled : full) + tok,
                    (mode == CT_SEQPOOL_MAX && argmax.mem ? 2 : 1) * pooled);
    return CT_RUN(ctx, CT_PROG_seqpool, "seqpool_fwd_f32", 2, g, NULL, CT_BUF(y), CT_BUF(argmax),
                  CT_BUF(x), CT_BUF(tokens), CT_ARG(m), CT_ARG(tt), CT_ARG(nn), CT_ARG(ff));
}

int ct_seqpool_backward(ct_context *ctx, ct_seqpool_mode mode, ct_buf dx, ct_buf dy, ct_buf argmax,
                        ct_buf tokens, size_t T, size_t N, size_t F)
{
    int st = check_args(ctx, "ct_seqpool_backward", mode, T, N, F);
    if (st || N == 0 || F == 0 || T == 0)
        return st;
    if (mode == CT_SEQPOOL_MAX && !argmax.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_seqpool_backward: max needs the argmax record. "
                       "HINT: pass the buffer ct_seqpool_forward filled");
    cl_uint m = (cl_uint)mode, tt = (cl_uint)T, nn = (cl_uint)N, ff = (cl_uint)F;
    size_t g[2] = { F, N };
    size_t full, pooled, tok;
    sizes(tokens, T, N, F, &full, &pooled, &tok);
    /* dy, and the argmax (max) or the tokens (mean, last); dx */
    ct_launch_bytes(ctx, pooled + (mode == CT_SEQPOOL_MAX ? pooled : tok), full);
    return CT_RUN(ctx, CT_PROG_seqpool, "seqpool_bwd_f32", 2, g, NULL, CT_BUF(dx), CT_BUF(dy),
                  CT_BUF(argmax), CT_BUF(tokens), CT_ARG(m), CT_ARG(tt), CT_ARG(nn), CT_ARG(ff));
}
