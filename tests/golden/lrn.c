/*
 * lrn.c - golden adapter for local response normalization (lrn_*: size,
 * alpha, beta, k). Tolerance 1e-5 + 1e-4 |b|: a window of at most 5
 * squares and a pow per element; float rounding and pow's few ulp stay
 * below 1e-6 relative.
 */
#include "golden.h"
#include "ref/lrn.h"

void golden_lrn(golden *g)
{
    int shape[8] = { 0 }, ndim = 0;
    size_t nx = 0, ny = 0;
    double *x = golden_tensor(g, "x", &nx, shape, &ndim);
    double *dy = golden_tensor(g, "dy", &ny, NULL, NULL);
    if (!x || !dy)
        return;
    if (ndim < 2 || ny != nx) {
        golden_failf(g, "x must be (N, C, ...) and dy the same size");
        return;
    }
    int hw = 1;
    for (int i = 2; i < ndim; i++)
        hw *= shape[i];
    int n = shape[0], c = shape[1];
    ct_lrn p = { golden_meta_int(g, "size", 0), (float)golden_meta_double(g, "alpha", 1e-4),
                 (float)golden_meta_double(g, "beta", 0.75), (float)golden_meta_double(g, "k", 1) };
    double *y = golden_host(g, nx), *dx = golden_host(g, nx);
    ct_ref_lrn_forward(&p, y, x, n, c, hw);
    ct_ref_lrn_backward(&p, dx, dy, x, n, c, hw);
    golden_expect_host(g, "y", y, "y", 1e-5, 1e-4);
    golden_expect_host(g, "dx", dx, "dx", 1e-5, 1e-4);

    ct_context *ctx = golden_ctx(g);
    ct_buf d_x = golden_dev(g, x, nx), d_dy = golden_dev(g, dy, nx);
    ct_buf d_y = golden_dev_zero(g, nx), d_dx = golden_dev_zero(g, nx);
    ct_buf d_scale = golden_dev_zero(g, nx);
    if (golden_status(g, ct_lrn_forward(ctx, &p, d_y, d_x, d_scale, n, c, hw), "lrn forward") ||
        golden_status(g, ct_lrn_backward(ctx, &p, d_dx, d_dy, d_x, d_scale, n, c, hw),
                      "lrn backward"))
        return;
    golden_expect_dev(g, "y", d_y, "y", 1e-5, 1e-4);
    golden_expect_dev(g, "dx", d_dx, "dx", 1e-5, 1e-4);
}
