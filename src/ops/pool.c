/*
 * pool.c - pooling launchers (cl_kernels/pool.cl).
 */
#include "ops/pool.h"

#include "host/pool_host.h"

ct_pool2d ct_pool2d_square(int n, int c, int h, int w, int kernel, int stride, int pad)
{
    ct_pool2d p = { n, c, h, w, kernel, kernel, stride, stride, pad, pad, 1 };
    return p;
}

int ct_pool_out_dim(int in, int k, int stride, int pad)
{
    if (stride < 1)
        return 0;
    long long span = (long long)in + 2LL * pad - k;
    /* floor division: a negative span means no full window fits */
    return span < 0 ? 0 : (int)(span / stride + 1);
}

int ct_pool2d_validate(ct_context *ctx, const ct_pool2d *p, const char *who, int *oh, int *ow)
{
    if (!p)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: no pooling geometry given", who);
    if (p->n < 1 || p->c < 1 || p->h < 1 || p->w < 1)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: input (%d, %d, %d, %d) has an empty dimension", who,
                       p->n, p->c, p->h, p->w);
    if (p->kh < 1 || p->kw < 1 || p->sh < 1 || p->sw < 1 || p->ph < 0 || p->pw < 0)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: kernel %dx%d, stride %dx%d, padding %dx%d: "
                       "HINT: kernel and stride must be >= 1 and padding >= 0", who, p->kh, p->kw,
                       p->sh, p->sw, p->ph, p->pw);
    /* PyTorch's rule: beyond half a window, some window would hold only
     * padding (all -inf for max, a zero divisor without count_include_pad). */
    if (p->ph > p->kh / 2 || p->pw > p->kw / 2)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: padding %dx%d exceeds half the kernel %dx%d: "
                       "HINT: pad should be at most half of the kernel size, as in PyTorch", who,
                       p->ph, p->pw, p->kh, p->kw);
    int h_out = ct_pool_out_dim(p->h, p->kh, p->sh, p->ph);
    int w_out = ct_pool_out_dim(p->w, p->kw, p->sw, p->pw);
    if (h_out < 1 || w_out < 1)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: input %dx%d with kernel %dx%d and padding %dx%d "
                       "gives an empty output: HINT: the padded input must be at least as large "
                       "as the kernel", who, p->h, p->w, p->kh, p->kw, p->ph, p->pw);
    unsigned long long planes = (unsigned long long)p->n * (unsigned long long)p->c;
    if (planes * (unsigned long long)p->h * (unsigned long long)p->w > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: input (%d, %d, %d, %d) has more than 2^32 "
                       "elements: HINT: split the batch", who, p->n, p->c, p->h, p->w);
    *oh = h_out;
    *ow = w_out;
    return CT_OK;
}

/* The geometry arguments every pooling kernel takes after its buffers. */
typedef struct pool_args {
    cl_uint planes;
    cl_int h, w, oh, ow, kh, kw, sh, sw, ph, pw, include_pad;
} pool_args;

static pool_args args_of(const ct_pool2d *p, int oh, int ow)
{
    pool_args a = { (cl_uint)p->n * (cl_uint)p->c, p->h, p->w, oh, ow, p->kh, p->kw, p->sh,
                    p->sw, p->ph, p->pw, p->count_include_pad ? 1 : 0 };
    return a;
}

#define POOL_GEOM(a)                                                                            \
    CT_ARG((a).planes), CT_ARG((a).h), CT_ARG((a).w), CT_ARG((a).oh), CT_ARG((a).ow),             \
        CT_ARG((a).kh), CT_ARG((a).kw), CT_ARG((a).sh), CT_ARG((a).sw), CT_ARG((a).ph),           \
        CT_ARG((a).pw)

/* How many of `in` input positions some window reaches (out windows of
 * length k every s from -p), for the bytes a launch reads. */
static size_t covered(int in, int out, int k, int s, int p)
{
    size_t n = 0;
    int end = 0;
    for (int o = 0; o < out; o++) {
        int a = o * s - p > end ? o * s - p : end, b = o * s - p + k < in ? o * s - p + k : in;
        if (b > a) {
            n += (size_t)(b - a);
            end = b;
        }
    }
    return n;
}

/* The input bytes the windows read, and an (planes, oh, ow) tensor's
 * bytes, at es bytes an element (the activation storage's; the argmax
 * records are 4). */
static size_t window_bytes(const ct_pool2d *p, int oh, int ow, size_t es)
{
    return (size_t)p->n * (size_t)p->c * covered(p->h, oh, p->kh, p->sh, p->ph) *
           covered(p->w, ow, p->kw, p->sw, p->pw) * es;
}

static size_t out_bytes(const ct_pool2d *p, int oh, int ow, size_t es)
{
    return (size_t)p->n * (size_t)p->c * (size_t)oh * (size_t)ow * es;
}

static size_t in_bytes(const ct_pool2d *p, size_t es)
{
    return (size_t)p->n * (size_t)p->c * (size_t)p->h * (size_t)p->w * es;
}

int ct_maxpool_overlaps(const ct_pool2d *p)
{
    return p->sh < p->kh || p->sw < p->kw;
}

/* 2x2 windows, stride 2, no padding: the straight-line kernels */
static int is_2x2(const ct_pool2d *p)
{
    return p->kh == 2 && p->kw == 2 && p->sh == 2 && p->sw == 2 && p->ph == 0 && p->pw == 0;
}

int ct_maxpool_forward(ct_context *ctx, const ct_pool2d *p, ct_buf y, ct_buf x, ct_buf argmax)
{
    int oh = 0, ow = 0;
    int st = ct_pool2d_validate(ctx, p, "ct_maxpool_forward", &oh, &ow);
    if (st)
        return st;
    int prog = ct_program_store(ctx, CT_PROG_pool); /* the activations' storage */
    size_t es = ct_act_size(ctx);
    pool_args a = args_of(p, oh, ow);
    /* argmax.mem may be NULL: nothing is recorded then. On the CPU class
     * with the host GEMM path the host scans the windows:
     * pocl's code for this kernel ran at ~0.5 GB/s. */
    if (ctx->cls.host_pool)
        return ct_maxpool_host_forward(ctx, p, oh, ow, y, x, argmax);
    const char *kernel = is_2x2(p) ? "maxpool2_fwd_f32" : "maxpool_fwd_f32";
    size_t g[2], l[2];
    if ((st = ct_row_range(ctx, prog, kernel, (size_t)ow, (size_t)a.planes * (size_t)oh, g, l)))
        return st;
    ct_launch_bytes(ctx, window_bytes(p, oh, ow, es),
                    out_bytes(p, oh, ow, es) + (argmax.mem ? out_bytes(p, oh, ow, sizeof(cl_int)) : 0));
    if (is_2x2(p))
        return CT_RUN(ctx, prog, kernel, 2, g, l, CT_BUF(y), CT_BUF(argmax), CT_BUF(x),
                      CT_ARG(a.planes), CT_ARG(a.h), CT_ARG(a.w), CT_ARG(a.oh), CT_ARG(a.ow));
    return CT_RUN(ctx, prog, kernel, 2, g, l, CT_BUF(y), CT_BUF(argmax), CT_BUF(x), POOL_GEOM(a));
}

int ct_maxpool_backward(ct_context *ctx, const ct_pool2d *p, ct_buf dx, ct_buf dy, ct_buf x,
                        ct_buf argmax)
{
    int oh = 0, ow = 0;
    int st = ct_pool2d_validate(ctx, p, "ct_maxpool_backward", &oh, &ow);
    if (st)
        return st;
    int prog = ct_program_store(ctx, CT_PROG_pool);
    size_t es = ct_act_size(ctx);
    pool_args a = args_of(p, oh, ow);
    if (!ct_maxpool_overlaps(p)) {
        if (!x.mem)
            return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_maxpool_backward: no input x given: "
                           "HINT: disjoint windows (stride >= kernel) find the argmax from x");
        if (ctx->cls.host_pool)
            return ct_maxpool_host_backward(ctx, p, oh, ow, dx, dy, x, argmax);
        ct_launch_bytes(ctx, window_bytes(p, oh, ow, es) + out_bytes(p, oh, ow, es), in_bytes(p, es));
        /* 2x2/2 on even planes: the windows are the tiles */
        if (is_2x2(p) && p->h % 2 == 0 && p->w % 2 == 0) {
            size_t g[2], l[2];
            if ((st = ct_row_range(ctx, prog, "maxpool2_bwd_f32", (size_t)ow, (size_t)a.planes * (size_t)oh,
                                   g, l)))
                return st;
            return CT_RUN(ctx, prog, "maxpool2_bwd_f32", 2, g, l, CT_BUF(dx), CT_BUF(dy),
                          CT_BUF(x), CT_ARG(a.planes), CT_ARG(a.h), CT_ARG(a.w), CT_ARG(a.oh),
                          CT_ARG(a.ow));
        }
        /* disjoint windows: one work-item per window writes its tile, the
         * argmax found once instead of once per element (several times
         * faster at 2x2/2); same results */
        size_t g[1] = { (size_t)a.planes * (size_t)oh * (size_t)ow };
        return CT_RUN(ctx, prog, "maxpool_bwd_tile_f32", 1, g, NULL, CT_BUF(dx),
                      CT_BUF(dy), CT_BUF(x), POOL_GEOM(a));
    }
    if (!argmax.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_maxpool_backward: kernel %dx%d with stride "
                       "%dx%d overlaps but no argmax record was given: HINT: pass the argmax "
                       "buffer ct_maxpool_forward filled (see ct_maxpool_overlaps)", p->kh, p->kw,
                       p->sh, p->sw);
    if (ctx->cls.host_pool)
        return ct_maxpool_host_backward(ctx, p, oh, ow, dx, dy, x, argmax);
    size_t g[1] = { (size_t)a.planes * (size_t)p->h }; /* one work-item per input row */
    /* dy and argmax; dx */
    ct_launch_bytes(ctx, out_bytes(p, oh, ow, es) + out_bytes(p, oh, ow, sizeof(cl_int)), in_bytes(p, es));
    return CT_RUN(ctx, prog, "maxpool_bwd_f32", 1, g, NULL, CT_BUF(dx), CT_BUF(dy),
                  CT_BUF(argmax), POOL_GEOM(a));
}

int ct_avgpool_forward(ct_context *ctx, const ct_pool2d *p, ct_buf y, ct_buf x)
{
    int oh = 0, ow = 0;
    int st = ct_pool2d_validate(ctx, p, "ct_avgpool_forward", &oh, &ow);
    if (st)
        return st;
    pool_args a = args_of(p, oh, ow);
    size_t g[1] = { (size_t)a.planes * (size_t)oh * (size_t)ow }, es = ct_act_size(ctx);
    ct_launch_bytes(ctx, window_bytes(p, oh, ow, es), out_bytes(p, oh, ow, es));
    return CT_RUN(ctx, ct_program_store(ctx, CT_PROG_pool), "avgpool_fwd_f32", 1, g, NULL, CT_BUF(y), CT_BUF(x),
                  POOL_GEOM(a), CT_ARG(a.include_pad));
}

int ct_avgpool_backward(ct_context *ctx, const ct_pool2d *p, ct_buf dx, ct_buf dy)
{
    int oh = 0, ow = 0;
    int st = ct_pool2d_validate(ctx, p, "ct_avgpool_backward", &oh, &ow);
    if (st)
        return st;
    pool_args a = args_of(p, oh, ow);
    size_t g[1] = { (size_t)a.planes * (size_t)p->h * (size_t)p->w }, es = ct_act_size(ctx);
    ct_launch_bytes(ctx, out_bytes(p, oh, ow, es), in_bytes(p, es));
    return CT_RUN(ctx, ct_program_store(ctx, CT_PROG_pool), "avgpool_bwd_f32", 1, g, NULL, CT_BUF(dx), CT_BUF(dy),
                  POOL_GEOM(a), CT_ARG(a.include_pad));
}

/* Validates a global pooling shape; stores planes = N*C and hw = H*W. */
static int global_shape(ct_context *ctx, const char *who, int n, int c, int h, int w,
                        cl_uint *planes, cl_uint *hw)
{
    if (n < 1 || c < 1 || h < 1 || w < 1)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: input (%d, %d, %d, %d) has an empty dimension", who,
                       n, c, h, w);
    unsigned long long total = (unsigned long long)n * (unsigned long long)c *
                               (unsigned long long)h * (unsigned long long)w;
    if (total > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: input (%d, %d, %d, %d) has more than 2^32 "
                       "elements: HINT: split the batch", who, n, c, h, w);
    *planes = (cl_uint)n * (cl_uint)c;
    *hw = (cl_uint)h * (cl_uint)w;
    return CT_OK;
}

int ct_global_avgpool_forward(ct_context *ctx, ct_buf y, ct_buf x, int n, int c, int h, int w)
{
    cl_uint planes = 0, hw = 0;
    int st = global_shape(ctx, "ct_global_avgpool_forward", n, c, h, w, &planes, &hw);
    if (st)
        return st;
    cl_float inv = (cl_float)(1.0 / hw);
    size_t g[1] = { planes };
    size_t es = ct_act_size(ctx);
    ct_launch_bytes(ctx, (size_t)planes * hw * es, planes * es);
    return CT_RUN(ctx, ct_program_store(ctx, CT_PROG_pool), "global_avgpool_fwd_f32", 1, g, NULL, CT_BUF(y), CT_BUF(x),
                  CT_ARG(planes), CT_ARG(hw), CT_ARG(inv));
}

int ct_global_avgpool_backward(ct_context *ctx, ct_buf dx, ct_buf dy, int n, int c, int h, int w)
{
    cl_uint planes = 0, hw = 0;
    int st = global_shape(ctx, "ct_global_avgpool_backward", n, c, h, w, &planes, &hw);
    if (st)
        return st;
    cl_float inv = (cl_float)(1.0 / hw);
    size_t g[1] = { (size_t)planes * hw };
    size_t es = ct_act_size(ctx);
    ct_launch_bytes(ctx, planes * es, g[0] * es);
    return CT_RUN(ctx, ct_program_store(ctx, CT_PROG_pool), "global_avgpool_bwd_f32", 1, g, NULL, CT_BUF(dx), CT_BUF(dy),
                  CT_ARG(planes), CT_ARG(hw), CT_ARG(inv));
}
