/*
 * rmsnorm.c - golden adapter for RMS normalization (rmsnorm_*.safetensors:
 * x (..., F), `weight` (F), y, dy, dx, dweight; metadata "eps"): rows are
 * every leading index. Tolerances as layer norm's (golden/layernorm.c): y
 * after a sum of F squares, 1e-5 + 1e-4 |b|; dx and dweight, 2e-5 + 1e-4 |b|.
 */
#include "golden.h"
#include "ops/rmsnorm.h"
#include "ref/rmsnorm.h"

void golden_rmsnorm(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    size_t nx = 0, nw = 0;
    int xs[8] = { 0 }, xd = 0;
    double *x = golden_tensor(g, "x", &nx, xs, &xd);
    double *w = golden_tensor(g, "weight", &nw, NULL, NULL);
    double *dy = golden_tensor(g, "dy", NULL, NULL, NULL);
    if (!x || !w || !dy)
        return;
    double eps = golden_meta_double(g, "eps", 1e-6);
    size_t F = xd >= 1 ? (size_t)xs[xd - 1] : 0;
    if (F == 0 || nw != F || nx % F) {
        golden_failf(g, "x must be (..., F) with weight (F)");
        return;
    }
    size_t R = nx / F;
    double *y = golden_host(g, nx), *dx = golden_host(g, nx), *dw = golden_host(g, F);
    ct_ref_rmsnorm_forward(y, NULL, x, w, R, F, eps);
    ct_ref_rmsnorm_backward(dx, dw, dy, x, w, R, F, eps);
    golden_expect_host(g, "y", y, "y", 1e-5, 1e-4);
    golden_expect_host(g, "dx", dx, "dx", 2e-5, 1e-4);
    golden_expect_host(g, "dweight", dw, "dweight", 2e-5, 1e-4);

    ct_buf d_x = golden_dev(g, x, nx), d_w = golden_dev(g, w, F), d_dy = golden_dev(g, dy, nx);
    ct_buf d_y = golden_dev_zero(g, nx), d_dx = golden_dev_zero(g, nx), d_rstd = golden_dev_zero(g, R);
    ct_buf d_dw = golden_dev_zero(g, F), d_work = golden_dev_zero(g, ct_rmsnorm_workspace_size(R, F));
    if (!d_x.mem || !d_w.mem || !d_dy.mem || !d_y.mem || !d_dx.mem || !d_rstd.mem || !d_dw.mem || !d_work.mem)
        return;
    if (golden_status(g, ct_rmsnorm_forward(ctx, d_y, d_rstd, d_x, d_w, R, F, (float)eps), "rmsnorm forward") ||
        golden_status(g, ct_rmsnorm_backward(ctx, d_dx, 0, d_dw, d_dy, d_x, d_w, d_rstd, R, F, d_work),
                      "rmsnorm backward")) {
        ct_context_finish(ctx);
        return;
    }
    golden_expect_dev(g, "y", d_y, "y", 1e-5, 1e-4);
    golden_expect_dev(g, "dx", d_dx, "dx", 2e-5, 1e-4);
    golden_expect_dev(g, "dweight", d_dw, "dweight", 2e-5, 1e-4);
}
