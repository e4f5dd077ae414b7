/*
 * shortcut.c - golden adapter for the option-A shortcut (shortcut_a_0:
 * stride, out_channels). Both passes copy floats or write zeros, so they
 * must equal PyTorch exactly: atol 0, rtol 0.
 */
#include "golden.h"
#include "ref/shortcut.h"

void golden_shortcut(golden *g)
{
    int shape[8] = { 0 }, ndim = 0;
    size_t nx = 0, ny = 0;
    double *x = golden_tensor(g, "x", &nx, shape, &ndim);
    double *dy = golden_tensor(g, "dy", &ny, NULL, NULL);
    if (!x || !dy)
        return;
    int stride = golden_meta_int(g, "stride", 2), co = golden_meta_int(g, "out_channels", 0);
    int n = shape[0], c = shape[1], h = shape[2], w = shape[3];
    if (ndim != 4 || co < c || stride < 1 ||
        ny != (size_t)n * (size_t)co * (size_t)ct_shortcut_a_out_dim(h, stride) *
                  (size_t)ct_shortcut_a_out_dim(w, stride)) {
        golden_failf(g, "x must be (N, C, H, W) and dy (N, out_channels, ceil(H/stride), "
                     "ceil(W/stride))");
        return;
    }
    double *y = golden_host(g, ny), *dx = golden_host(g, nx);
    ct_ref_shortcut_a_forward(y, x, n, c, h, w, stride, co);
    ct_ref_shortcut_a_backward(dx, dy, n, c, h, w, stride, co);
    golden_expect_host(g, "y", y, "y", 0, 0);
    golden_expect_host(g, "dx", dx, "dx", 0, 0);

    ct_context *ctx = golden_ctx(g);
    ct_buf d_x = golden_dev(g, x, nx), d_dy = golden_dev(g, dy, ny);
    ct_buf d_y = golden_dev_zero(g, ny), d_dx = golden_dev_zero(g, nx);
    if (golden_status(g, ct_shortcut_a_forward(ctx, d_y, d_x, n, c, h, w, stride, co),
                      "shortcut forward") ||
        golden_status(g, ct_shortcut_a_backward(ctx, d_dx, d_dy, n, c, h, w, stride, co),
                      "shortcut backward"))
        return;
    golden_expect_dev(g, "y", d_y, "y", 0, 0);
    golden_expect_dev(g, "dx", d_dx, "dx", 0, 0);
}
