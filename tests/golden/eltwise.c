/*
 * eltwise.c - golden adapters for the concatenation (below) and the gating
 * multiply (mul_*: x (N, C, H, W)
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

/*
 * concat_*: x (N, C1, H, W) and x2 (N, C2, H, W) along channels, gradients
 * dx and dx2. Copies: atol 0, rtol 0.
 */
void golden_concat(golden *g)
{
    int s1[8] = { 0 }, s2[8] = { 0 }, n1 = 0, n2 = 0;
    size_t na = 0, nb = 0, ny = 0;
    double *x = golden_tensor(g, "x", &na, s1, &n1);
    double *x2 = golden_tensor(g, "x2", &nb, s2, &n2);
    double *dy = golden_tensor(g, "dy", &ny, NULL, NULL);
    if (!x || !x2 || !dy)
        return;
    if (n1 != 4 || n2 != 4 || s1[0] != s2[0] || s1[2] != s2[2] || s1[3] != s2[3] || ny != na + nb) {
        golden_failf(g, "x and x2 must be (N, C, H, W) of one N, H, W, and dy their concatenation");
        return;
    }
    size_t rows = (size_t)s1[0], la = na / rows, lb = nb / rows, L = la + lb;
    ct_context *ctx = golden_ctx(g);
    ct_buf d_x = golden_dev(g, x, na), d_x2 = golden_dev(g, x2, nb), d_dy = golden_dev(g, dy, ny);
    ct_buf d_y = golden_dev_zero(g, ny), d_dx = golden_dev_zero(g, na), d_dx2 = golden_dev_zero(g, nb);
    if (golden_status(g, ct_copy_rows(ctx, d_y, L, d_x, la, la, rows, 0), "concat x") ||
        golden_status(g, ct_copy_rows(ctx, ct_buf_at(d_y, la), L, d_x2, lb, lb, rows, 0), "concat x2") ||
        golden_status(g, ct_copy_rows(ctx, d_dx, la, d_dy, L, la, rows, 0), "concat dx") ||
        golden_status(g, ct_copy_rows(ctx, d_dx2, lb, ct_buf_at(d_dy, la), L, lb, rows, 0), "concat dx2"))
        return;
    golden_expect_dev(g, "y", d_y, "y", 0, 0);
    golden_expect_dev(g, "dx", d_dx, "dx", 0, 0);
    golden_expect_dev(g, "dx2", d_dx2, "dx2", 0, 0);
}
