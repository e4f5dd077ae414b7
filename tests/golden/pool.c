/*
 * pool.c - golden adapter for pooling: maxpool_*, avgpool_* (op "maxpool",
 * "avgpool": kernel, stride, padding, count_include_pad) and
 * global_avgpool_0 (op "global_avgpool").
 *
 * Tolerances:
 *   - max pool y: a copy of one input, exact (atol 0, rtol 0);
 *   - every other tensor 1e-5 + 1e-4 |b|: PyTorch sums at most 9 floats
 *     per window (max pool dx: the dy of up to 9 overlapping windows; avg
 *     pool: 9 inputs or 9 quotients; global: 24 inputs) and divides once,
 *     so its float rounding is below 1e-6 relative to the summed
 *     magnitudes of these O(1) values.
 */
#include <string.h>

#include "golden.h"
#include "ref/pool.h"

static void window_op(golden *g, int is_max)
{
    int shape[8] = { 0 }, ndim = 0, yshape[8] = { 0 }, yndim = 0;
    size_t nx = 0, ny = 0;
    double *x = golden_tensor(g, "x", &nx, shape, &ndim);
    double *dy = golden_tensor(g, "dy", &ny, yshape, &yndim);
    if (!x || !dy)
        return;
    int k = golden_meta_int(g, "kernel", 0), s = golden_meta_int(g, "stride", k);
    ct_pool2d p = ct_pool2d_square(shape[0], shape[1], shape[2], shape[3], k,
                                   s, golden_meta_int(g, "padding", 0));
    p.count_include_pad = golden_meta_bool(g, "count_include_pad", 1);
    int oh = 0, ow = 0;
    ct_context *ctx = golden_ctx(g);
    if (ndim != 4 || yndim != 4 || golden_status(g, ct_pool2d_validate(ctx, &p, "golden", &oh, &ow),
                                                 "pool geometry"))
        return;
    if (yshape[0] != p.n || yshape[1] != p.c || yshape[2] != oh || yshape[3] != ow) {
        golden_failf(g, "dy is (%d, %d, %d, %d), the geometry gives (%d, %d, %d, %d)", yshape[0],
                     yshape[1], yshape[2], yshape[3], p.n, p.c, oh, ow);
        return;
    }
    double y_atol = is_max ? 0 : 1e-5, y_rtol = is_max ? 0 : 1e-4;
    double *y = golden_host(g, ny), *dx = golden_host(g, nx);
    if (is_max) {
        ct_ref_maxpool_forward(&p, y, x);
        ct_ref_maxpool_backward(&p, dx, dy, x);
    } else {
        ct_ref_avgpool_forward(&p, y, x);
        ct_ref_avgpool_backward(&p, dx, dy);
    }
    golden_expect_host(g, "y", y, "y", y_atol, y_rtol);
    golden_expect_host(g, "dx", dx, "dx", 1e-5, 1e-4);

    ct_buf d_x = golden_dev(g, x, nx), d_dy = golden_dev(g, dy, ny);
    ct_buf d_y = golden_dev_zero(g, ny), d_dx = golden_dev_zero(g, nx);
    ct_buf d_am = { NULL, 0 }; /* the int32 argmax record, (N, C, OH, OW) */
    if (is_max)
        d_am = golden_dev_zero(g, ny);
    int st = is_max ? ct_maxpool_forward(ctx, &p, d_y, d_x, d_am) :
                      ct_avgpool_forward(ctx, &p, d_y, d_x);
    if (golden_status(g, st, "pool forward"))
        return;
    st = is_max ? ct_maxpool_backward(ctx, &p, d_dx, d_dy, d_x, d_am) :
                  ct_avgpool_backward(ctx, &p, d_dx, d_dy);
    if (golden_status(g, st, "pool backward"))
        return;
    golden_expect_dev(g, "y", d_y, "y", y_atol, y_rtol);
    golden_expect_dev(g, "dx", d_dx, "dx", 1e-5, 1e-4);
}

static void global_op(golden *g)
{
    int shape[8] = { 0 }, ndim = 0;
    size_t nx = 0, ny = 0;
    double *x = golden_tensor(g, "x", &nx, shape, &ndim);
    double *dy = golden_tensor(g, "dy", &ny, NULL, NULL);
    if (!x || !dy)
        return;
    if (ndim != 4 || ny != (size_t)shape[0] * (size_t)shape[1]) {
        golden_failf(g, "x must be (N, C, H, W) and dy (N, C)");
        return;
    }
    int n = shape[0], c = shape[1], h = shape[2], w = shape[3];
    double *y = golden_host(g, ny), *dx = golden_host(g, nx);
    ct_ref_global_avgpool_forward(y, x, n, c, h, w);
    ct_ref_global_avgpool_backward(dx, dy, n, c, h, w);
    golden_expect_host(g, "y", y, "y", 1e-5, 1e-4);
    golden_expect_host(g, "dx", dx, "dx", 1e-5, 1e-4);

    ct_context *ctx = golden_ctx(g);
    ct_buf d_x = golden_dev(g, x, nx), d_dy = golden_dev(g, dy, ny);
    ct_buf d_y = golden_dev_zero(g, ny), d_dx = golden_dev_zero(g, nx);
    if (golden_status(g, ct_global_avgpool_forward(ctx, d_y, d_x, n, c, h, w), "global forward") ||
        golden_status(g, ct_global_avgpool_backward(ctx, d_dx, d_dy, n, c, h, w),
                      "global backward"))
        return;
    golden_expect_dev(g, "y", d_y, "y", 1e-5, 1e-4);
    golden_expect_dev(g, "dx", d_dx, "dx", 1e-5, 1e-4);
}

void golden_pool(golden *g)
{
    const char *op = golden_op(g);
    if (!strcmp(op, "global_avgpool"))
        global_op(g);
    else
        window_op(g, !strcmp(op, "maxpool"));
}
