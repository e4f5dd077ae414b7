/*
 * dropout.c - dropout launchers (cl_kernels/dropout.cl).
 */
#include "ops/dropout.h"

float ct_dropout_scale(float p)
{
    return p >= 1.0f ? 0.0f : 1.0f / (1.0f - p);
}

static int launch(ct_context *ctx, const char *who, const char *kernel, ct_buf out, ct_buf in,
                  size_t n, size_t first, float p, uint64_t seed, uint32_t stream)
{
    if (n > UINT32_MAX - 3 || first > UINT32_MAX - 3 - n)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: elements %zu .. %zu; the counters index at "
                       "most 2^32 - 4. HINT: split the tensor", who, first, first + n);
    if (!(p >= 0.0f && p <= 1.0f))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: drop probability %g is outside [0, 1]", who,
                       (double)p);
    if (n && (!out.mem || !in.mem))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: a NULL buffer", who);
    cl_uint nn = (cl_uint)n, at = (cl_uint)first, lo = (cl_uint)seed, hi = (cl_uint)(seed >> 32), st = stream;
    cl_float pp = p, scale = ct_dropout_scale(p);
    size_t g[1] = { (n + 3) / 4 }; /* a work-item per Philox block of four elements */
    return CT_RUN(ctx, CT_PROG_dropout, kernel, 1, g, NULL, CT_BUF(out), CT_BUF(in), CT_ARG(nn), CT_ARG(at),
                  CT_ARG(pp), CT_ARG(scale), CT_ARG(lo), CT_ARG(hi), CT_ARG(st));
}

int ct_dropout_forward(ct_context *ctx, ct_buf y, ct_buf x, size_t n, float p, uint64_t seed,
                       uint32_t stream)
{
    return launch(ctx, "ct_dropout_forward", "dropout_fwd_f32", y, x, n, 0, p, seed, stream);
}

int ct_dropout_backward(ct_context *ctx, ct_buf dx, ct_buf dy, size_t n, float p, uint64_t seed,
                        uint32_t stream)
{
    return launch(ctx, "ct_dropout_backward", "dropout_bwd_f32", dx, dy, n, 0, p, seed, stream);
}

int ct_dropout_forward_at(ct_context *ctx, ct_buf y, ct_buf x, size_t n, size_t first, float p,
                          uint64_t seed, uint32_t stream)
{
    return launch(ctx, "ct_dropout_forward", "dropout_fwd_f32", y, x, n, first, p, seed, stream);
}

int ct_dropout_backward_at(ct_context *ctx, ct_buf dx, ct_buf dy, size_t n, size_t first, float p,
                           uint64_t seed, uint32_t stream)
{
    return launch(ctx, "ct_dropout_backward", "dropout_bwd_f32", dx, dy, n, first, p, seed, stream);
}
