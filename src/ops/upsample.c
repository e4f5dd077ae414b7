/*
 * upsample.c - upsampling launchers (cl_kernels/upsample.cl): 2-D ranges of
 * whole rows, as the pooling kernels.
 */
#include "ops/upsample.h"

static int check(ct_context *ctx, const char *who, size_t planes, int h, int w, int S)
{
    if (planes == 0 || h < 1 || w < 1 || S < 1 || S > 64)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: %zu planes of %dx%d by %d: HINT: the scale is 1 to 64 "
                       "and the planes not empty", who, planes, h, w, S);
    if ((unsigned long long)planes * (unsigned long long)h * (unsigned long long)w * (unsigned long long)S *
            (unsigned long long)S > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: the output has 2^32 elements or more: HINT: split the batch", who);
    return CT_OK;
}

static int run(ct_context *ctx, const char *kernel, ct_buf out, ct_buf in, size_t planes, int h, int w, int S,
               int bilinear, size_t cols, size_t rows)
{
    size_t g[2], l[2];
    int st = ct_row_range(ctx, CT_PROG_upsample, kernel, cols, rows, g, l);
    if (st)
        return st;
    cl_uint p = (cl_uint)planes;
    cl_int hh = h, ww = w, ss = S, b = bilinear ? 1 : 0;
    return CT_RUN(ctx, CT_PROG_upsample, kernel, 2, g, l, CT_BUF(out), CT_BUF(in), CT_ARG(p), CT_ARG(hh),
                  CT_ARG(ww), CT_ARG(ss), CT_ARG(b));
}

int ct_upsample_forward(ct_context *ctx, ct_buf y, ct_buf x, size_t planes, int h, int w, int S, int bilinear)
{
    int st = check(ctx, "ct_upsample_forward", planes, h, w, S);
    if (st)
        return st;
    size_t in = planes * (size_t)h * (size_t)w;
    ct_launch_bytes(ctx, in * sizeof(float), in * (size_t)S * (size_t)S * sizeof(float));
    return run(ctx, "upsample_fwd_f32", y, x, planes, h, w, S, bilinear, (size_t)w * (size_t)S,
               planes * (size_t)h * (size_t)S);
}

int ct_upsample_backward(ct_context *ctx, ct_buf dx, ct_buf dy, size_t planes, int h, int w, int S, int bilinear)
{
    int st = check(ctx, "ct_upsample_backward", planes, h, w, S);
    if (st)
        return st;
    size_t in = planes * (size_t)h * (size_t)w;
    ct_launch_bytes(ctx, in * (size_t)S * (size_t)S * sizeof(float), in * sizeof(float));
    return run(ctx, "upsample_bwd_f32", dx, dy, planes, h, w, S, bilinear, (size_t)w, planes * (size_t)h);
}
