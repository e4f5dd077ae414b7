/*
 * eltwise.c - golden adapter for the gating multiply (mul_*: x (N, C, H, W)
 * times gate (N, C, 1, 1), broadcast over H, W). Tolerance: y and dx are one
 * float product, 1e-6 + 1e-5 |y|; dgate sums H W products, 1e-5 + 1e-4 |y|
 * (the element-wise bound of the README, looser than the sums need).
 */
#include "golden.h"
#include "ref/eltwise.h"

void golden_mul(golden *g)
{
    int shape[8] = { 0 }, gshape[8] = { 0 }, ndim = 0, gndim = 0;
    size_t nx = 0, ng = 0, ny = 0;
    double *x = golden_tensor(g, "x", &nx, shape, &ndim);
    double *gate = golden_tensor(g, "gate", &ng, gshape, &gndim);
    double *dy = golden_tensor(g, "dy", &ny, NULL, NULL);
    if (!x || !gate || !dy)
        return;
    if (ndim != 4 || gndim != 4 || gshape[0] != shape[0] || gshape[1] != shape[1] || gshape[2] != 1 ||
        gshape[3] != 1 || ny != nx) {
        golden_failf(g, "x must be (N, C, H, W), gate (N, C, 1, 1) and dy x's shape");
        return;
    }
    size_t rows = ng, hw = nx / ng;
    double *y = golden_host(g, nx), *dx = golden_host(g, nx), *dg = golden_host(g, ng);
    ct_ref_mul_forward(y, x, gate, rows, hw);
    ct_ref_mul_backward(dx, dg, dy, x, gate, rows, hw);
    golden_expect_host(g, "y", y, "y", 1e-6, 1e-5);
    golden_expect_host(g, "dx", dx, "dx", 1e-6, 1e-5);
    golden_expect_host(g, "dgate", dg, "dgate", 1e-5, 1e-4);

    ct_context *ctx = golden_ctx(g);
    ct_buf d_x = golden_dev(g, x, nx), d_g = golden_dev(g, gate, ng), d_dy = golden_dev(g, dy, ny);
    ct_buf d_y = golden_dev_zero(g, nx), d_dx = golden_dev_zero(g, nx), d_dg = golden_dev_zero(g, ng);
    if (golden_status(g, ct_mul_forward(ctx, d_y, d_x, d_g, rows, hw), "mul forward") ||
        golden_status(g, ct_mul_backward(ctx, d_dx, 0, d_dg, 0, d_dy, d_x, d_g, rows, hw), "mul backward"))
        return;
    golden_expect_dev(g, "y", d_y, "y", 1e-6, 1e-5);
    golden_expect_dev(g, "dx", d_dx, "dx", 1e-6, 1e-5);
    golden_expect_dev(g, "dgate", d_dg, "dgate", 1e-5, 1e-4);
}
