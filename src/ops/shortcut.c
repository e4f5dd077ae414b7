/*
 * shortcut.c - option-A shortcut launchers (cl_kernels/shortcut.cl), with
 * 16-bit activation storage (ct_context_set_act16) through their program's
 * storage variant.
 */
#include "ops/shortcut.h"

#include "host/eltwise_host.h"

int ct_shortcut_a_out_dim(int in, int stride)
{
    return stride < 1 || in < 1 ? 0 : (in - 1) / stride + 1;
}

/* The kernels' shape arguments, validated. */
typedef struct sc_args {
    cl_uint n, c, h, w, co, oh, ow, s;
} sc_args;

static int validate(ct_context *ctx, const char *who, int n, int c, int h, int w, int stride,
                    int out_channels, sc_args *a)
{
    if (n < 1 || c < 1 || h < 1 || w < 1)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: input (%d, %d, %d, %d) has an empty dimension", who,
                       n, c, h, w);
    if (stride < 1)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: stride %d: HINT: the stride must be >= 1",
                       who, stride);
    if (out_channels < c)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: %d output channels for %d input channels: HINT: "
                       "option A only appends zero channels; use a projection shortcut to "
                       "reduce channels", who, out_channels, c);
    unsigned long long in = (unsigned long long)n * (unsigned long long)c *
                            (unsigned long long)h * (unsigned long long)w;
    unsigned long long out = (unsigned long long)n * (unsigned long long)out_channels *
                             (unsigned long long)ct_shortcut_a_out_dim(h, stride) *
                             (unsigned long long)ct_shortcut_a_out_dim(w, stride);
    if (in > UINT32_MAX || out > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: tensors of more than 2^32 elements: HINT: "
                       "split the batch", who);
    a->n = (cl_uint)n;
    a->c = (cl_uint)c;
    a->h = (cl_uint)h;
    a->w = (cl_uint)w;
    a->co = (cl_uint)out_channels;
    a->oh = (cl_uint)ct_shortcut_a_out_dim(h, stride);
    a->ow = (cl_uint)ct_shortcut_a_out_dim(w, stride);
    a->s = (cl_uint)stride;
    return CT_OK;
}

#define SC_ARGS(a)                                                                               \
    CT_ARG((a).n), CT_ARG((a).c), CT_ARG((a).h), CT_ARG((a).w), CT_ARG((a).co), CT_ARG((a).oh),    \
        CT_ARG((a).ow), CT_ARG((a).s)

int ct_shortcut_a_forward(ct_context *ctx, ct_buf y, ct_buf x, int n, int c, int h, int w,
                          int stride, int out_channels)
{
    sc_args a = { 0, 0, 0, 0, 0, 0, 0, 0 };
    int st = validate(ctx, "ct_shortcut_a_forward", n, c, h, w, stride, out_channels, &a);
    if (st)
        return st;
    if (!ctx->act16 && ct_eltwise_host_ok(ctx, (size_t)a.n * a.co * a.oh * a.ow))
        return ct_host_shortcut_a_forward(ctx, y, x, n, c, h, w, stride, out_channels, (int)a.oh,
                                          (int)a.ow);
    size_t g[1] = { (size_t)a.n * a.co * a.oh * a.ow };
    /* reads the subsampled copied channels of x, writes all of y */
    size_t es = ct_act_size(ctx);
    ct_launch_bytes(ctx, (size_t)a.n * a.c * a.oh * a.ow * es, g[0] * es);
    return CT_RUN(ctx, ct_program_store(ctx, CT_PROG_shortcut), "shortcut_a_fwd_f32", 1, g, NULL, CT_BUF(y), CT_BUF(x),
                  SC_ARGS(a));
}

int ct_shortcut_a_backward(ct_context *ctx, ct_buf dx, ct_buf dy, int n, int c, int h, int w,
                           int stride, int out_channels)
{
    sc_args a = { 0, 0, 0, 0, 0, 0, 0, 0 };
    int st = validate(ctx, "ct_shortcut_a_backward", n, c, h, w, stride, out_channels, &a);
    if (st)
        return st;
    if (!ctx->act16 && ct_eltwise_host_ok(ctx, (size_t)a.n * a.c * a.h * a.w))
        return ct_host_shortcut_a_backward(ctx, dx, dy, n, c, h, w, stride, out_channels, (int)a.oh,
                                           (int)a.ow);
    size_t g[1] = { (size_t)a.n * a.c * a.h * a.w };
    /* reads dy's copied channels, writes all of dx */
    size_t es = ct_act_size(ctx);
    ct_launch_bytes(ctx, (size_t)a.n * a.c * a.oh * a.ow * es, g[0] * es);
    return CT_RUN(ctx, ct_program_store(ctx, CT_PROG_shortcut), "shortcut_a_bwd_f32", 1, g, NULL, CT_BUF(dx), CT_BUF(dy),
                  SC_ARGS(a));
}
