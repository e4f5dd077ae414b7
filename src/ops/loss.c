/*
 * loss.c - loss launchers (cl_kernels/loss.cl). The reductions run in one
 * work-group of a power-of-two size (the tree in local memory needs one);
 * the size depends only on the device and kernel, so a device gives the
 * same bits every run. Softmax cross-entropy past CT_LOSS_HOST_MIN logits
 * runs on the host pool where the class says so (loss_host.c).
 */
#include "ops/loss.h"

#include "ops/loss_host.h"

#define LOSS_MAX_WG 256


static int xent_dims(ct_context *ctx, const char *who, ct_buf x, ct_buf labels, size_t N, size_t K)
{
    if (N == 0 || K == 0)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: empty logits (N=%zu, K=%zu)", who, N, K);
    if (N >= ((size_t)1 << 24) || K > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: logits (%zu, %zu) too large: N must stay below "
                       "2^24 (the correct count is a float) and K below 2^32. HINT: split the "
                       "batch", who, N, K);
    if (!x.mem || !labels.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: a NULL buffer", who);
    return CT_OK;
}

size_t ct_softmax_xent_workspace(size_t N)
{
    return 2 * N;
}

int ct_softmax_xent_forward(ct_context *ctx, ct_buf loss, ct_buf correct, ct_buf x, ct_buf labels,
                            size_t N, size_t K, ct_buf ws)
{
    int st = xent_dims(ctx, "ct_softmax_xent_forward", x, labels, N, K);
    if (st)
        return st;
    if (!loss.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_softmax_xent_forward: NULL loss buffer");
    if (ws.mem && ct_loss_host_ok(ctx, N, K))
        return ct_host_softmax_xent_forward(ctx, loss, correct, x, labels, N, K, ws);
    size_t wg;
    if ((st = ct_kernel_pow2_wg(ctx, CT_PROG_loss, "softmax_xent_fwd_f32", LOSS_MAX_WG, N, &wg)))
        return st;
    cl_uint n = (cl_uint)N, k = (cl_uint)K;
    size_t g[1] = { wg }, l[1] = { wg };
    if (ws.mem && ctx->cls.row_kernels) {
        /* rows on every core, then the same sum as the one-group kernel */
        size_t gr[1] = { N };
        if ((st = CT_RUN(ctx, CT_PROG_loss, "softmax_xent_rows_f32", 1, gr, NULL, CT_BUF(ws),
                         CT_BUF(x), CT_BUF(labels), CT_ARG(n), CT_ARG(k))))
            return st;
        return CT_RUN(ctx, CT_PROG_loss, "softmax_xent_sum_f32", 1, g, l, CT_BUF(loss), CT_BUF(correct),
                      CT_BUF(ws), CT_ARG(n), CT_LOCAL(2 * wg * sizeof(cl_float)));
    }
    return CT_RUN(ctx, CT_PROG_loss, "softmax_xent_fwd_f32", 1, g, l, CT_BUF(loss),
                  CT_BUF(correct), CT_BUF(x), CT_BUF(labels), CT_ARG(n), CT_ARG(k),
                  CT_LOCAL(2 * wg * sizeof(cl_float)));
}

int ct_softmax_xent_backward(ct_context *ctx, ct_buf dx, ct_buf x, ct_buf labels, size_t N,
                             size_t K, float dloss_scale)
{
    int st = xent_dims(ctx, "ct_softmax_xent_backward", x, labels, N, K);
    if (st)
        return st;
    if (!dx.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_softmax_xent_backward: NULL dx buffer");
    cl_uint n = (cl_uint)N, k = (cl_uint)K;
    cl_float scale = dloss_scale / (float)N;
    if (ct_loss_host_ok(ctx, N, K))
        return ct_host_softmax_xent_backward(ctx, dx, x, labels, N, K, scale);
    if (ctx->cls.row_kernels) {
        size_t gr[1] = { N };
        return CT_RUN(ctx, CT_PROG_loss, "softmax_xent_bwd_rows_f32", 1, gr, NULL, CT_BUF(dx), CT_BUF(x),
                      CT_BUF(labels), CT_ARG(n), CT_ARG(k), CT_ARG(scale));
    }
    size_t wg;
    if ((st = ct_kernel_pow2_wg(ctx, CT_PROG_loss, "softmax_xent_bwd_f32", LOSS_MAX_WG, K, &wg)))
        return st;
    size_t g[1] = { N * wg }, l[1] = { wg };
    return CT_RUN(ctx, CT_PROG_loss, "softmax_xent_bwd_f32", 1, g, l, CT_BUF(dx), CT_BUF(x),
                  CT_BUF(labels), CT_ARG(n), CT_ARG(k), CT_ARG(scale),
                  CT_LOCAL(wg * sizeof(cl_float)));
}

static int mse_dims(ct_context *ctx, const char *who, ct_buf x, ct_buf t, size_t n)
{
    if (n == 0 || n > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: %zu elements (need 1 to 2^32 - 1)", who, n);
    if (!x.mem || !t.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: a NULL buffer", who);
    return CT_OK;
}

int ct_mse_forward(ct_context *ctx, ct_buf loss, ct_buf mae, ct_buf x, ct_buf t, size_t n)
{
    int st = mse_dims(ctx, "ct_mse_forward", x, t, n);
    if (st)
        return st;
    if (!loss.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_mse_forward: NULL loss buffer");
    size_t wg;
    if ((st = ct_kernel_pow2_wg(ctx, CT_PROG_loss, "mse_fwd_f32", LOSS_MAX_WG, n, &wg)))
        return st;
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { wg }, l[1] = { wg };
    return CT_RUN(ctx, CT_PROG_loss, "mse_fwd_f32", 1, g, l, CT_BUF(loss), CT_BUF(mae), CT_BUF(x),
                  CT_BUF(t), CT_ARG(nn), CT_LOCAL(2 * wg * sizeof(cl_float)));
}

int ct_mse_backward(ct_context *ctx, ct_buf dx, ct_buf dt, ct_buf x, ct_buf t, size_t n,
                    float dloss_scale)
{
    int st = mse_dims(ctx, "ct_mse_backward", x, t, n);
    if (st)
        return st;
    if (!dx.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_mse_backward: NULL dx buffer");
    cl_uint nn = (cl_uint)n;
    cl_float k = 2.0f * dloss_scale / (float)n;
    size_t g[1] = { n };
    return CT_RUN(ctx, CT_PROG_loss, "mse_bwd_f32", 1, g, NULL, CT_BUF(dx), CT_BUF(dt), CT_BUF(x),
                  CT_BUF(t), CT_ARG(nn), CT_ARG(k));
}
