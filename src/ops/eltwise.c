/*
 * eltwise.c - element-wise launchers (cl_kernels/eltwise.cl).
 */
#include "ops/eltwise.h"

static int check_n(ct_context *ctx, const char *who, size_t n)
{
    if (n > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: %zu elements is more than 2^32: HINT: split "
                       "the operation", who, n);
    return CT_OK;
}

static int same(ct_buf a, ct_buf b)
{
    return a.mem == b.mem && a.off == b.off;
}

int ct_add_forward(ct_context *ctx, ct_buf y, ct_buf a, ct_buf b, size_t n)
{
    int st = check_n(ctx, "ct_add_forward", n);
    if (st)
        return st;
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n };
    return CT_RUN(ctx, CT_PROG_eltwise, "add_fwd_f32", 1, g, NULL, CT_BUF(y), CT_BUF(a), CT_BUF(b),
                  CT_ARG(nn));
}

int ct_add_backward(ct_context *ctx, ct_buf da, ct_buf db, ct_buf dy, size_t n)
{
    int st = check_n(ctx, "ct_add_backward", n);
    if (st)
        return st;
    cl_int which = (da.mem && !same(da, dy) ? 1 : 0) | (db.mem && !same(db, dy) ? 2 : 0);
    if (!which)
        return CT_OK;
    /* a skipped target's argument must still be a valid buffer: pass dy */
    ct_buf a = which & 1 ? da : dy, b = which & 2 ? db : dy;
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n };
    return CT_RUN(ctx, CT_PROG_eltwise, "add_bwd_f32", 1, g, NULL, CT_BUF(a), CT_BUF(b), CT_BUF(dy),
                  CT_ARG(nn), CT_ARG(which));
}

int ct_add_accumulate(ct_context *ctx, ct_buf dst, ct_buf src, size_t n)
{
    int st = check_n(ctx, "ct_add_accumulate", n);
    if (st)
        return st;
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n };
    return CT_RUN(ctx, CT_PROG_eltwise, "add_accumulate_f32", 1, g, NULL, CT_BUF(dst), CT_BUF(src),
                  CT_ARG(nn));
}

int ct_scale(ct_context *ctx, ct_buf x, float s, size_t n)
{
    int st = check_n(ctx, "ct_scale", n);
    if (st)
        return st;
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n };
    return CT_RUN(ctx, CT_PROG_eltwise, "scale_f32", 1, g, NULL, CT_BUF(x), CT_ARG(nn), CT_ARG(s));
}

int ct_axpy(ct_context *ctx, ct_buf y, float a, ct_buf x, size_t n)
{
    int st = check_n(ctx, "ct_axpy", n);
    if (st)
        return st;
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n };
    return CT_RUN(ctx, CT_PROG_eltwise, "axpy_f32", 1, g, NULL, CT_BUF(y), CT_ARG(a), CT_BUF(x),
                  CT_ARG(nn));
}
