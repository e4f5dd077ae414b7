/*
 * lrn.c - local response normalization launchers (cl_kernels/lrn.cl).
 */
#include <math.h>

#include "ops/lrn.h"

static int validate(ct_context *ctx, const char *who, const ct_lrn *p, int n, int c, int hw)
{
    if (!p)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: no LRN parameters given", who);
    if (p->size < 1 || !(p->k > 0) || !(p->alpha >= 0) || !isfinite(p->beta) ||
        !isfinite(p->alpha) || !isfinite(p->k))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: size %d, alpha %g, beta %g, k %g: HINT: "
                       "size must be >= 1, k > 0 and alpha >= 0 (finite), so that the base "
                       "k + alpha/size * sum x^2 stays positive", who, p->size, (double)p->alpha,
                       (double)p->beta, (double)p->k);
    if (n < 1 || c < 1 || hw < 1)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: input (%d, %d, %d) has an empty dimension", who, n,
                       c, hw);
    if ((unsigned long long)n * (unsigned long long)c * (unsigned long long)hw > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: input (%d, %d, %d) has more than 2^32 "
                       "elements: HINT: split the batch", who, n, c, hw);
    return CT_OK;
}

int ct_lrn_forward(ct_context *ctx, const ct_lrn *p, ct_buf y, ct_buf x, ct_buf scale, int n,
                   int c, int hw)
{
    int st = validate(ctx, "ct_lrn_forward", p, n, c, hw);
    if (st)
        return st;
    cl_uint nn = (cl_uint)n, hh = (cl_uint)hw;
    cl_int cc = c, size = p->size;
    cl_float alpha_n = (cl_float)((double)p->alpha / p->size), beta = p->beta, k = p->k;
    /* scale.mem may be NULL: the kernel then saves nothing */
    size_t bytes = (size_t)n * (size_t)c * (size_t)hw * sizeof(float);
    ct_launch_bytes(ctx, bytes, (scale.mem ? 2 : 1) * bytes);
    if (ctx->cls.row_kernels) {
        cl_uint rows = (cl_uint)n * (cl_uint)c;
        size_t g[1] = { rows }, l[1] = { 1 };
        return CT_RUN(ctx, CT_PROG_lrn, "lrn_fwd_rows_f32", 1, g, l, CT_BUF(y), CT_BUF(scale),
                      CT_BUF(x), CT_ARG(rows), CT_ARG(cc), CT_ARG(hh), CT_ARG(size),
                      CT_ARG(alpha_n), CT_ARG(beta), CT_ARG(k));
    }
    size_t g[1] = { (size_t)n * (size_t)c * (size_t)hw };
    return CT_RUN(ctx, CT_PROG_lrn, "lrn_fwd_f32", 1, g, NULL, CT_BUF(y), CT_BUF(scale), CT_BUF(x),
                  CT_ARG(nn), CT_ARG(cc), CT_ARG(hh), CT_ARG(size), CT_ARG(alpha_n), CT_ARG(beta),
                  CT_ARG(k));
}

int ct_lrn_backward(ct_context *ctx, const ct_lrn *p, ct_buf dx, ct_buf dy, ct_buf x, ct_buf scale,
                    int n, int c, int hw)
{
    int st = validate(ctx, "ct_lrn_backward", p, n, c, hw);
    if (st)
        return st;
    if (!scale.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_lrn_backward: no scale given: HINT: pass the "
                       "scale buffer ct_lrn_forward saved for this x");
    cl_uint nn = (cl_uint)n, hh = (cl_uint)hw;
    cl_int cc = c, size = p->size;
    cl_float alpha_n = (cl_float)((double)p->alpha / p->size), beta = p->beta, k = p->k;
    size_t bytes = (size_t)n * (size_t)c * (size_t)hw * sizeof(float);
    ct_launch_bytes(ctx, 3 * bytes, bytes); /* dy, x and scale; dx */
    if (ctx->cls.row_kernels) {
        cl_uint rows = (cl_uint)n * (cl_uint)c;
        size_t g[1] = { rows }, l[1] = { 1 };
        return CT_RUN(ctx, CT_PROG_lrn, "lrn_bwd_rows_f32", 1, g, l, CT_BUF(dx), CT_BUF(dy),
                      CT_BUF(x), CT_BUF(scale), CT_ARG(rows), CT_ARG(cc), CT_ARG(hh), CT_ARG(size),
                      CT_ARG(alpha_n), CT_ARG(beta), CT_ARG(k));
    }
    size_t g[1] = { (size_t)n * (size_t)c * (size_t)hw };
    return CT_RUN(ctx, CT_PROG_lrn, "lrn_bwd_f32", 1, g, NULL, CT_BUF(dx), CT_BUF(dy), CT_BUF(x),
                  CT_BUF(scale), CT_ARG(nn), CT_ARG(cc), CT_ARG(hh), CT_ARG(size),
                  CT_ARG(alpha_n), CT_ARG(beta), CT_ARG(k));
}
