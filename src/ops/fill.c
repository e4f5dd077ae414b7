/*
 * fill.c - fills and copies (cl_kernels/fill.cl).
 */
#include "ops/ops.h"

int ct_fill(ct_context *ctx, ct_buf x, size_t n, float value)
{
    if (n > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_fill: %zu elements is too many", n);
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n };
    return CT_RUN(ctx, CT_PROG_fill, "fill_f32", 1, g, NULL, CT_BUF(x), CT_ARG(nn), CT_ARG(value));
}

int ct_copy(ct_context *ctx, ct_buf dst, ct_buf src, size_t n)
{
    if (n > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_copy: %zu elements is too many", n);
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n };
    return CT_RUN(ctx, CT_PROG_fill, "copy_f32", 1, g, NULL, CT_BUF(dst), CT_BUF(src), CT_ARG(nn));
}
