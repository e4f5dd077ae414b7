/*
 * batchnorm.c - golden adapter for batch normalisation (batchnorm_train_*,
 * batchnorm_eval_*): x (N, C, H, W) or (N, F), weight/bias (C), running
 * statistics in (and, training, out).
 *
 * Tolerances (float32 against PyTorch's float32, m = N * HW <= 120 here):
 *   y, dx, running stats: 1e-5 + 1e-4 |b|, the element-wise bound: both sides
 *     compute the statistics to ~1e-6 relative at this m, and y, dx are
 *     O(1) values built from them with a handful of roundings;
 *   dweight, dbias: sums over m terms of O(1) magnitude. PyTorch sums them in
 *     float in an order of its own; the error of such a sum is up to
 *     ~log2(m) eps * sum|term| for a pairwise sum and m eps for a naive one,
 *     here sum|term| <= ~m, so atol 1e-5 * m / 8 (1.5e-4 at m = 120, ~10
 *     eps * m) + rtol 1e-4.
 */
#include <string.h>

#include "golden.h"
#include "ref/batchnorm.h"

void golden_batchnorm(golden *g)
{
    int train = !strcmp(golden_op(g), "batchnorm_train");
    double eps = golden_meta_double(g, "eps", 1e-5);
    double momentum = golden_meta_double(g, "momentum", 0.1);
    int shape[8], ndim = 0;
    size_t n = 0, C = 0;
    double *x = golden_tensor(g, "x", &n, shape, &ndim);
    double *dy = golden_tensor(g, "dy", NULL, NULL, NULL);
    double *gamma = golden_tensor(g, "weight", &C, NULL, NULL);
    double *beta = golden_tensor(g, "bias", NULL, NULL, NULL);
    double *rm = golden_tensor(g, train ? "running_mean_in" : "running_mean", NULL, NULL, NULL);
    double *rv = golden_tensor(g, train ? "running_var_in" : "running_var", NULL, NULL, NULL);
    if (!x || !dy || !gamma || !beta || !rm || !rv)
        return;
    if (ndim < 2 || (size_t)shape[1] != C) {
        golden_failf(g, "x has %d dims, channel dim %d, weight %zu", ndim, ndim > 1 ? shape[1] : -1,
                     C);
        return;
    }
    size_t N = (size_t)shape[0], HW = n / N / C;
    double tol_sum = 1e-5 * (double)(N * HW) / 8;

    /* reference */
    double *y = golden_host(g, n), *dx = golden_host(g, n), *dg = golden_host(g, C);
    double *db = golden_host(g, C), *mean = golden_host(g, C), *is = golden_host(g, C);
    double *rm_out = golden_host(g, C), *rv_out = golden_host(g, C);
    memcpy(rm_out, rm, C * sizeof *rm);
    memcpy(rv_out, rv, C * sizeof *rv);
    if (train) {
        ct_ref_batchnorm_forward_train(y, mean, is, rm_out, rv_out, x, gamma, beta, N, C, HW,
                                       momentum, eps, 0);
        ct_ref_batchnorm_backward_train(dx, dg, db, dy, x, y, gamma, mean, is, N, C, HW, 0);
        golden_expect_host(g, "running_mean", rm_out, "running_mean_out", 1e-5, 1e-4);
        golden_expect_host(g, "running_var", rv_out, "running_var_out", 1e-5, 1e-4);
    } else {
        ct_ref_batchnorm_forward_eval(y, x, gamma, beta, rm, rv, N, C, HW, eps, 0);
        ct_ref_batchnorm_backward_eval(dx, dg, db, dy, x, y, gamma, rm, rv, N, C, HW, eps, 0);
    }
    golden_expect_host(g, "y", y, "y", 1e-5, 1e-4);
    golden_expect_host(g, "dx", dx, "dx", 1e-5, 1e-4);
    golden_expect_host(g, "dweight", dg, "dweight", tol_sum, 1e-4);
    golden_expect_host(g, "dbias", db, "dbias", tol_sum, 1e-4);

    /* device */
    ct_context *ctx = golden_ctx(g);
    ct_buf d_x = golden_dev(g, x, n), d_dy = golden_dev(g, dy, n), d_g = golden_dev(g, gamma, C);
    ct_buf d_b = golden_dev(g, beta, C), d_rm = golden_dev(g, rm, C), d_rv = golden_dev(g, rv, C);
    ct_buf d_y = golden_dev_zero(g, n), d_dx = golden_dev_zero(g, n), d_dg = golden_dev_zero(g, C);
    ct_buf d_db = golden_dev_zero(g, C), d_mean = golden_dev_zero(g, C), d_is = golden_dev_zero(g, C);
    ct_buf d_w = golden_dev_zero(g, ct_batchnorm_workspace_size(N, C, HW));
    if (train) {
        if (golden_status(g, ct_batchnorm_forward_train(ctx, d_y, d_mean, d_is, d_rm, d_rv, d_x,
                                                        d_g, d_b, N, C, HW, (float)momentum,
                                                        (float)eps, 0, d_w),
                          "batchnorm forward (train)") ||
            golden_status(g, ct_batchnorm_backward_train(ctx, d_dx, d_dg, d_db, d_dy, d_x, d_y,
                                                         d_g, d_b, d_mean, d_is, N, C, HW, 0, d_w),
                          "batchnorm backward (train)"))
            return;
        golden_expect_dev(g, "running_mean", d_rm, "running_mean_out", 1e-5, 1e-4);
        golden_expect_dev(g, "running_var", d_rv, "running_var_out", 1e-5, 1e-4);
    } else {
        if (golden_status(g, ct_batchnorm_forward_eval(ctx, d_y, d_x, d_g, d_b, d_rm, d_rv, N, C,
                                                       HW, (float)eps, 0),
                          "batchnorm forward (eval)") ||
            golden_status(g, ct_batchnorm_backward_eval(ctx, d_dx, d_dg, d_db, d_dy, d_x, d_y, d_g,
                                                        d_b, d_rm, d_rv, N, C, HW, (float)eps, 0, d_w),
                          "batchnorm backward (eval)"))
            return;
    }
    golden_expect_dev(g, "y", d_y, "y", 1e-5, 1e-4);
    golden_expect_dev(g, "dx", d_dx, "dx", 1e-5, 1e-4);
    golden_expect_dev(g, "dweight", d_dg, "dweight", tol_sum, 1e-4);
    golden_expect_dev(g, "dbias", d_db, "dbias", tol_sum, 1e-4);
}
