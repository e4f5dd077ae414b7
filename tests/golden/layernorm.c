/*
 * layernorm.c - golden adapter for layer normalization
 * (layernorm_*.safetensors: x (..., F), `weight` and `bias` (F), y, dy,
 * dx, dweight, dbias; metadata "eps"): rows are every leading index.
 *
 * Tolerances: y is element-wise after a mean and a variance over F <= 33
 * terms (|x| < 7 in the files), each within ~F 2^-24 relative in float on
 * either side: 1e-5 + 1e-4 |b|. dx sums F products twice and dweight and
 * dbias sum over the rows (15 at most): 2e-5 + 1e-4 |b|. The reference
 * in double meets the same bounds.
 */
#include "golden.h"
#include "ops/layernorm.h"
#include "ref/layernorm.h"

void golden_layernorm(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    size_t nx = 0, nw = 0, nb = 0;
    int xs[8] = { 0 }, xd = 0;
    double *x = golden_tensor(g, "x", &nx, xs, &xd);
    double *w = golden_tensor(g, "weight", &nw, NULL, NULL);
    double *b = golden_tensor(g, "bias", &nb, NULL, NULL);
    double *dy = golden_tensor(g, "dy", NULL, NULL, NULL);
    if (!x || !w || !b || !dy)
        return;
    double eps = golden_meta_double(g, "eps", 1e-5);
    size_t F = xd >= 1 ? (size_t)xs[xd - 1] : 0;
    if (F == 0 || nw != F || nb != F || nx % F) {
        golden_failf(g, "x must be (..., F) with weight and bias (F)");
        return;
    }
    size_t R = nx / F;
    double *y = golden_host(g, nx), *dx = golden_host(g, nx);
    double *dw = golden_host(g, F), *db = golden_host(g, F);
    ct_ref_layernorm_forward(y, NULL, NULL, x, w, b, R, F, eps);
    ct_ref_layernorm_backward(dx, dw, db, dy, x, w, R, F, eps);
    golden_expect_host(g, "y", y, "y", 1e-5, 1e-4);
    golden_expect_host(g, "dx", dx, "dx", 2e-5, 1e-4);
    golden_expect_host(g, "dweight", dw, "dweight", 2e-5, 1e-4);
    golden_expect_host(g, "dbias", db, "dbias", 2e-5, 1e-4);

    ct_buf d_x = golden_dev(g, x, nx), d_w = golden_dev(g, w, F), d_b = golden_dev(g, b, F);
    ct_buf d_dy = golden_dev(g, dy, nx), d_y = golden_dev_zero(g, nx), d_dx = golden_dev_zero(g, nx);
    ct_buf d_mean = golden_dev_zero(g, R), d_rstd = golden_dev_zero(g, R);
    ct_buf d_dw = golden_dev_zero(g, F), d_db = golden_dev_zero(g, F);
    ct_buf d_work = golden_dev_zero(g, ct_layernorm_workspace_size(R, F));
    if (!d_x.mem || !d_w.mem || !d_b.mem || !d_dy.mem || !d_y.mem || !d_dx.mem || !d_mean.mem ||
        !d_rstd.mem || !d_dw.mem || !d_db.mem || !d_work.mem)
        return;
    if (golden_status(g, ct_layernorm_forward(ctx, d_y, d_mean, d_rstd, d_x, d_w, d_b, R, F,
                                              (float)eps), "layernorm forward") ||
        golden_status(g, ct_layernorm_backward(ctx, d_dx, d_dw, d_db, d_dy, d_x, d_w, d_mean,
                                               d_rstd, R, F, d_work), "layernorm backward")) {
        ct_context_finish(ctx);
        return;
    }
    golden_expect_dev(g, "y", d_y, "y", 1e-5, 1e-4);
    golden_expect_dev(g, "dx", d_dx, "dx", 2e-5, 1e-4);
    golden_expect_dev(g, "dweight", d_dw, "dweight", 2e-5, 1e-4);
    golden_expect_dev(g, "dbias", d_db, "dbias", 2e-5, 1e-4);
}
