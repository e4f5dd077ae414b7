/*
 * loss.c - loss launchers (cl_kernels/loss.cl). Work-group sizes are powers
 * of two (the trees in local memory need one) that depend only on the
 * device and kernel, and so do the GPU class's lanes per softmax row, so a
 * device gives the same bits every run. Softmax cross-entropy past CT_LOSS_HOST_MIN logits
 * runs on the host pool where the class says so (loss_host.c).
 */
#include "ops/loss.h"

#include "host/loss_host.h"

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
    return 4 * N;
}

/* GPU class: lanes per row, the largest power of two that fits the
 * work-group and the row's whole chunks of 8 logits (lanes take chunks in
 * turn, so no lane idles on a short row; wg / L rows share a group). */
static size_t xent_lanes(size_t K, size_t wg)
{
    size_t L = 1;
    while (L * 2 <= K / 8 && L * 2 <= wg)
        L *= 2;
    return L;
}

/* With 16-bit activation storage only the softmax cross-entropy over rows
 * has its form (its GPU-class kernels' storage variant) */
static int no_act16(ct_context *ctx, const char *who)
{
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "%s: no 16-bit activation storage form (the softmax "
                   "cross-entropy over rows has one): HINT: train with fp32 activations", who);
}

int ct_softmax_xent_saves(const ct_context *ctx, size_t N, size_t K)
{
    return ctx->act16 || (!ct_loss_host_ok(ctx, N, K) && !ctx->cls.row_kernels);
}

int ct_softmax_xent_forward(ct_context *ctx, ct_buf loss, ct_buf correct, ct_buf x, ct_buf labels,
                            size_t N, size_t K, ct_buf ws)
{
    int st = xent_dims(ctx, "ct_softmax_xent_forward", x, labels, N, K);
    if (st)
        return st;
    if (!loss.mem || !ws.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_softmax_xent_forward: NULL loss buffer or "
                       "workspace (ct_softmax_xent_workspace(N) floats)");
    if (!ctx->act16 && ct_loss_host_ok(ctx, N, K))
        return ct_host_softmax_xent_forward(ctx, loss, correct, x, labels, N, K, ws);
    size_t wg;
    if ((st = ct_kernel_pow2_wg(ctx, CT_PROG_loss, "softmax_xent_sum_f32", LOSS_MAX_WG, N, &wg)))
        return st;
    cl_uint n = (cl_uint)N, k = (cl_uint)K;
    size_t xb = N * K * ct_act_size(ctx), lb = N * sizeof(cl_int), wb = 2 * N * sizeof(float);
    if (ctx->cls.row_kernels && !ctx->act16) {
        /* rows on every core, then the sum */
        size_t gr[1] = { N };
        ct_launch_bytes(ctx, xb + lb, wb);
        if ((st = CT_RUN(ctx, CT_PROG_loss, "softmax_xent_rows_f32", 1, gr, NULL, CT_BUF(ws),
                         CT_BUF(x), CT_BUF(labels), CT_ARG(n), CT_ARG(k))))
            return st;
    } else {
        size_t rwg;
        const int prog = ct_program_store(ctx, CT_PROG_loss); /* the logits' storage */
        if ((st = ct_kernel_pow2_wg(ctx, prog, "softmax_xent_fwd_f32", LOSS_MAX_WG, 0, &rwg)))
            return st;
        size_t L = xent_lanes(K, rwg), R = rwg / L;
        cl_uint lanes = (cl_uint)L;
        size_t gr[1] = { (N + R - 1) / R * rwg }, lr[1] = { rwg };
        ct_launch_bytes(ctx, xb + lb, 2 * wb);
        if ((st = CT_RUN(ctx, prog, "softmax_xent_fwd_f32", 1, gr, lr, CT_BUF(ws),
                         CT_BUF(x), CT_BUF(labels), CT_ARG(n), CT_ARG(k), CT_ARG(lanes),
                         CT_LOCAL(rwg * sizeof(cl_float)), CT_LOCAL(rwg * sizeof(cl_float)),
                         CT_LOCAL(rwg * sizeof(cl_uint)))))
            return st;
    }
    size_t g[1] = { wg }, l[1] = { wg };
    ct_launch_bytes(ctx, wb, (correct.mem ? 2 : 1) * sizeof(float));
    return CT_RUN(ctx, CT_PROG_loss, "softmax_xent_sum_f32", 1, g, l, CT_BUF(loss), CT_BUF(correct),
                  CT_BUF(ws), CT_ARG(n), CT_LOCAL(2 * wg * sizeof(cl_float)));
}

int ct_softmax_xent_backward_saved(ct_context *ctx, ct_buf dx, ct_buf x, ct_buf labels, size_t N,
                                   size_t K, float dloss_scale, ct_buf ws)
{
    int st = xent_dims(ctx, "ct_softmax_xent_backward", x, labels, N, K);
    if (st)
        return st;
    if (!dx.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_softmax_xent_backward: NULL dx buffer");
    cl_uint n = (cl_uint)N, k = (cl_uint)K;
    cl_float scale = dloss_scale / (float)N;
    if (!ctx->act16 && ct_loss_host_ok(ctx, N, K))
        return ct_host_softmax_xent_backward(ctx, dx, x, labels, N, K, scale);
    size_t xb = N * K * ct_act_size(ctx), lb = N * sizeof(cl_int);
    if (ctx->cls.row_kernels && !ctx->act16) {
        size_t gr[1] = { N };
        ct_launch_bytes(ctx, xb + lb, xb);
        return CT_RUN(ctx, CT_PROG_loss, "softmax_xent_bwd_rows_f32", 1, gr, NULL, CT_BUF(dx), CT_BUF(x),
                      CT_BUF(labels), CT_ARG(n), CT_ARG(k), CT_ARG(scale));
    }
    const char *name = ws.mem ? "softmax_xent_bwd_saved_f32" : "softmax_xent_bwd_f32";
    const int prog = ct_program_store(ctx, CT_PROG_loss); /* the logits' storage */
    size_t wg;
    if ((st = ct_kernel_pow2_wg(ctx, prog, name, LOSS_MAX_WG, 0, &wg)))
        return st;
    size_t L = xent_lanes(K, wg), R = wg / L;
    cl_uint lanes = (cl_uint)L;
    size_t g[1] = { (N + R - 1) / R * wg }, l[1] = { wg };
    if (ws.mem) {
        ct_launch_bytes(ctx, xb + lb + 2 * N * sizeof(float), xb);
        return CT_RUN(ctx, prog, name, 1, g, l, CT_BUF(dx), CT_BUF(x), CT_BUF(labels),
                      CT_BUF(ws), CT_ARG(n), CT_ARG(k), CT_ARG(lanes), CT_ARG(scale));
    }
    ct_launch_bytes(ctx, xb + lb, xb);
    return CT_RUN(ctx, prog, name, 1, g, l, CT_BUF(dx), CT_BUF(x), CT_BUF(labels),
                  CT_ARG(n), CT_ARG(k), CT_ARG(lanes), CT_ARG(scale), CT_LOCAL(wg * sizeof(cl_float)),
                  CT_LOCAL(wg * sizeof(cl_float)), CT_LOCAL(wg * sizeof(cl_uint)));
}

int ct_softmax_xent_backward(ct_context *ctx, ct_buf dx, ct_buf x, ct_buf labels, size_t N,
                             size_t K, float dloss_scale)
{
    return ct_softmax_xent_backward_saved(ctx, dx, x, labels, N, K, dloss_scale, (ct_buf){ NULL, 0 });
}

static int px_dims(ct_context *ctx, const char *who, ct_buf x, ct_buf labels, size_t n, size_t K, size_t P)
{
    int st = xent_dims(ctx, who, x, labels, n * P, K);
    if (!st && (P == 0 || n * K * P > UINT32_MAX))
        st = ct_fail(ctx, CT_ERR_SHAPE, "%s: scores (%zu, %zu, %zu) need 1 to 2^32 - 1 elements", who, n, K, P);
    return st;
}

int ct_softmax_xent_px_forward(ct_context *ctx, ct_buf loss, ct_buf correct, ct_buf x, ct_buf labels, size_t n,
                               size_t K, size_t P, ct_buf ws)
{
    if (ctx->act16)
        return no_act16(ctx, "ct_softmax_xent_px_forward");
    int st = px_dims(ctx, "ct_softmax_xent_px_forward", x, labels, n, K, P);
    if (st)
        return st;
    if (!loss.mem || !ws.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_softmax_xent_px_forward: NULL loss buffer or workspace");
    size_t N = n * P, wg;
    if ((st = ct_kernel_pow2_wg(ctx, CT_PROG_loss, "softmax_xent_sum_f32", LOSS_MAX_WG, N, &wg)))
        return st;
    cl_uint nn = (cl_uint)N, k = (cl_uint)K, pp = (cl_uint)P;
    cl_uint2 div_p = ct_fastdiv((uint32_t)P);
    size_t gr[1] = { N }, g[1] = { wg }, l[1] = { wg };
    ct_launch_bytes(ctx, N * K * sizeof(float) + N * sizeof(cl_int), 2 * N * sizeof(float));
    if ((st = CT_RUN(ctx, CT_PROG_loss, "softmax_xent_px_fwd_f32", 1, gr, NULL, CT_BUF(ws), CT_BUF(x),
                     CT_BUF(labels), CT_ARG(nn), CT_ARG(k), CT_ARG(pp), CT_ARG(div_p))))
        return st;
    ct_launch_bytes(ctx, 2 * N * sizeof(float), (correct.mem ? 2 : 1) * sizeof(float));
    return CT_RUN(ctx, CT_PROG_loss, "softmax_xent_sum_f32", 1, g, l, CT_BUF(loss), CT_BUF(correct), CT_BUF(ws),
                  CT_ARG(nn), CT_LOCAL(2 * wg * sizeof(cl_float)));
}

int ct_softmax_xent_px_backward(ct_context *ctx, ct_buf dx, ct_buf x, ct_buf labels, size_t n, size_t K, size_t P,
                                float dloss_scale)
{
    if (ctx->act16)
        return no_act16(ctx, "ct_softmax_xent_px_backward");
    int st = px_dims(ctx, "ct_softmax_xent_px_backward", x, labels, n, K, P);
    if (st)
        return st;
    if (!dx.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_softmax_xent_px_backward: NULL dx buffer");
    size_t N = n * P;
    cl_uint nn = (cl_uint)N, k = (cl_uint)K, pp = (cl_uint)P;
    cl_uint2 div_p = ct_fastdiv((uint32_t)P);
    cl_float scale = dloss_scale / (float)N;
    size_t gr[1] = { N };
    ct_launch_bytes(ctx, N * K * sizeof(float) + N * sizeof(cl_int), N * K * sizeof(float));
    return CT_RUN(ctx, CT_PROG_loss, "softmax_xent_px_bwd_f32", 1, gr, NULL, CT_BUF(dx), CT_BUF(x), CT_BUF(labels),
                  CT_ARG(nn), CT_ARG(k), CT_ARG(pp), CT_ARG(div_p), CT_ARG(scale));
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
    if (ctx->act16)
        return no_act16(ctx, "ct_mse_forward");
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
    if (ctx->act16)
        return no_act16(ctx, "ct_mse_backward");
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

int ct_bce_forward(ct_context *ctx, ct_buf loss, ct_buf correct, ct_buf x, ct_buf t, size_t n, size_t K)
{
    if (ctx->act16)
        return no_act16(ctx, "ct_bce_forward");
    int st = mse_dims(ctx, "ct_bce_forward", x, t, n);
    if (st)
        return st;
    if (!loss.mem || K == 0 || n % K)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_bce_forward: no loss buffer, or %zu elements in rows of %zu",
                       n, K);
    size_t wg;
    if ((st = ct_kernel_pow2_wg(ctx, CT_PROG_loss, "bce_fwd_f32", LOSS_MAX_WG, n, &wg)))
        return st;
    cl_uint nn = (cl_uint)n, kk = (cl_uint)K;
    size_t g[1] = { wg }, l[1] = { wg };
    ct_launch_bytes(ctx, 2 * n * sizeof(float), 2 * sizeof(float));
    return CT_RUN(ctx, CT_PROG_loss, "bce_fwd_f32", 1, g, l, CT_BUF(loss), CT_BUF(correct), CT_BUF(x), CT_BUF(t),
                  CT_ARG(nn), CT_ARG(kk), CT_LOCAL(2 * wg * sizeof(cl_float)));
}

int ct_bce_backward(ct_context *ctx, ct_buf dx, ct_buf dt, ct_buf x, ct_buf t, size_t n, float dloss_scale)
{
    if (ctx->act16)
        return no_act16(ctx, "ct_bce_backward");
    int st = mse_dims(ctx, "ct_bce_backward", x, t, n);
    if (st)
        return st;
    if (!dx.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_bce_backward: NULL dx buffer");
    cl_uint nn = (cl_uint)n;
    cl_float k = dloss_scale / (float)n;
    size_t g[1] = { n };
    ct_launch_bytes(ctx, 2 * n * sizeof(float), (dt.mem ? 2 : 1) * n * sizeof(float));
    return CT_RUN(ctx, CT_PROG_loss, "bce_bwd_f32", 1, g, NULL, CT_BUF(dx), CT_BUF(dt), CT_BUF(x), CT_BUF(t),
                  CT_ARG(nn), CT_ARG(k));
}
