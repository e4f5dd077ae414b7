/*
 * posembed.c - position-embedding launchers (cl_kernels/posembed.cl). x, y,
 * dy and dx are activations, in the context's storage (ct_program_store:
 * the posembed_s* variants under 16-bit storage); the weight and its
 * gradient stay float.
 */
#include "ops/posembed.h"

/* The kernels index (t N + n) E + e with uint factors and ulong products;
 * T N and E each fit a uint, and so must T N E (the forward's rows). */
static int check_args(ct_context *ctx, const char *who, size_t T, size_t N, size_t E)
{
    if (T == 0 || N == 0 || E == 0)
        return CT_OK;
    if (T > UINT32_MAX / N || E > UINT32_MAX / (T * N))
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: (T, N, E) = (%zu, %zu, %zu) has 2^32 elements or "
                       "more. HINT: split the batch", who, T, N, E);
    return CT_OK;
}

int ct_posembed_forward(ct_context *ctx, ct_buf y, ct_buf x, ct_buf w, size_t T, size_t N,
                        size_t E)
{
    const char *who = "ct_posembed_forward";
    int st = check_args(ctx, who, T, N, E);
    if (st || T == 0 || N == 0 || E == 0)
        return st;
    if (!y.mem || !x.mem || !w.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: a NULL buffer", who);
    cl_uint tt = (cl_uint)T, nn = (cl_uint)N, ee = (cl_uint)E;
    size_t g[2] = { E, T * N }, es = ct_act_size(ctx);
    ct_launch_bytes(ctx, T * N * E * es + T * E * sizeof(float), T * N * E * es);
    return CT_RUN(ctx, ct_program_store(ctx, CT_PROG_posembed), "posembed_fwd_f32", 2, g, NULL,
                  CT_BUF(y), CT_BUF(x), CT_BUF(w), CT_ARG(tt), CT_ARG(nn), CT_ARG(ee));
}

int ct_posembed_backward(ct_context *ctx, ct_buf dx, ct_buf dw, ct_buf dy, size_t T, size_t N,
                         size_t E)
{
    const char *who = "ct_posembed_backward";
    int st = check_args(ctx, who, T, N, E);
    if (st || T == 0 || N == 0 || E == 0)
        return st;
    if (!dw.mem || !dy.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: a NULL buffer (only dx may be NULL)", who);
    cl_uint tt = (cl_uint)T, nn = (cl_uint)N, ee = (cl_uint)E;
    size_t g[2] = { E, T }, es = ct_act_size(ctx);
    /* dy and dw read; dx (when wanted) and dw written */
    ct_launch_bytes(ctx, T * N * E * es + T * E * sizeof(float),
                    (dx.mem ? T * N * E * es : 0) + T * E * sizeof(float));
    return CT_RUN(ctx, ct_program_store(ctx, CT_PROG_posembed), "posembed_bwd_f32", 2, g, NULL,
                  CT_BUF(dx), CT_BUF(dw), CT_BUF(dy), CT_ARG(tt), CT_ARG(nn), CT_ARG(ee));
}
