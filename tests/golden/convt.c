/*
 * convt.c - golden adapter for conv_transpose2d (conv_transpose2d_*:
 * x (N, C, H, W), weight (C, OUT, K, K), optional bias; metadata stride,
 * padding, output_padding, kernel, bias), with the workspace the layer
 * plans.
 *
 * Tolerances as tests/golden/conv.c's: each result is a float32 sum of T
 * products, T = C K K + K K for y (the convolution's input gradient: a GEMM
 * and col2im's partial sums), OUT K K for dx, N H W + N for dweight, N OH OW
 * for dbias; the device is held to 2 (T + 2) u max sum|products| (PyTorch's
 * error and ours), the double reference to (T + 2) u max sum|products|.
 */
#include <math.h>

#include "golden.h"
#include "ops/convt.h"
#include "ref/convt.h"

void golden_convt(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    size_t nx = 0, nw = 0, ny = 0;
    int xs[8] = { 0 }, ws[8] = { 0 }, xd = 0, wd = 0;
    double *x = golden_tensor(g, "x", &nx, xs, &xd);
    double *w = golden_tensor(g, "weight", &nw, ws, &wd);
    double *dy = golden_tensor(g, "dy", &ny, NULL, NULL);
    int has_bias = golden_meta_bool(g, "bias", 1);
    double *b = has_bias ? golden_tensor(g, "bias", NULL, NULL, NULL) : NULL;
    if (!x || !w || !dy || (has_bias && !b))
        return;
    if (xd != 4 || wd != 4 || xs[1] != ws[0] || ws[2] != ws[3]) {
        golden_failf(g, "expected x (N, C, H, W) and weight (C, OUT, K, K)");
        return;
    }
    ct_convt2d_desc d = { xs[0], xs[1], xs[2], xs[3], ws[1], ws[2], golden_meta_int(g, "stride", 1),
                          golden_meta_int(g, "padding", 0), golden_meta_int(g, "output_padding", 0), 1 };
    int oh = 0, ow = 0;
    if (golden_status(g, ct_convt2d_out_shape(ctx, &d, &oh, &ow), "conv_transpose2d shape"))
        return;
    if (ny != (size_t)d.n * d.c_out * oh * ow) {
        golden_failf(g, "dy has %zu elements, the geometry gives (%d, %d, %d, %d)", ny, d.n, d.c_out, oh, ow);
        return;
    }
    size_t nb = (size_t)d.c_out, kk = (size_t)d.k * d.k;
    double *y = golden_host(g, ny), *dx = golden_host(g, nx), *dw = golden_host(g, nw), *db = golden_host(g, nb);
    double *ay = golden_host(g, ny), *adx = golden_host(g, nx), *adw = golden_host(g, nw);
    double *adb = golden_host(g, nb);
    double *ax = golden_abs(g, x, nx), *aw = golden_abs(g, w, nw), *ady = golden_abs(g, dy, ny);
    double *ab = has_bias ? golden_abs(g, b, nb) : NULL;
    if (!y || !dx || !dw || !db || !ay || !adx || !adw || !adb || !ax || !aw || !ady || (has_bias && !ab))
        return;
    ct_ref_convt2d_forward(&d, oh, ow, y, x, w, b);
    ct_ref_convt2d_backward(&d, oh, ow, dx, dw, has_bias ? db : NULL, dy, x, w);
    ct_ref_convt2d_forward(&d, oh, ow, ay, ax, aw, ab);
    ct_ref_convt2d_backward(&d, oh, ow, adx, adw, adb, ady, ax, aw);
    double ty = ck_sum_atol((size_t)d.c_in * kk + kk, ay, ny), tdx = ck_sum_atol(nb * kk, adx, nx);
    double tdw = ck_sum_atol((size_t)d.n * d.h * d.w + (size_t)d.n, adw, nw);
    double tdb = ck_sum_atol((size_t)d.n * oh * ow, adb, nb);
    double amax = fmax(fmax(ck_amax(x, nx), ck_amax(w, nw)), ck_amax(dy, ny));
    double py = golden_prec_bound(g, (size_t)d.c_in * kk + kk, ay, ny, amax);
    double pdx = golden_prec_bound(g, nb * kk, adx, nx, amax);
    double pdw = golden_prec_bound(g, (size_t)d.n * d.h * d.w + (size_t)d.n, adw, nw, amax);
    golden_expect_host(g, "y", y, "y", ty, 0);
    golden_expect_host(g, "dx", dx, "dx", tdx, 0);
    golden_expect_host(g, "dweight", dw, "dweight", tdw, 0);
    if (has_bias)
        golden_expect_host(g, "dbias", db, "dbias", tdb, 0);

    size_t ws_n = ct_convt2d_workspace_for(ctx, &d);
    ct_buf d_x = golden_dev(g, x, nx), d_w = golden_dev(g, w, nw), d_dy = golden_dev(g, dy, ny);
    ct_buf none = { NULL, 0 }, d_b = has_bias ? golden_dev(g, b, nb) : none;
    ct_buf d_y = golden_dev_zero(g, ny), d_dx = golden_dev_zero(g, nx), d_dw = golden_dev_zero(g, nw);
    ct_buf d_db = golden_dev_zero(g, nb), d_ws = golden_dev_zero(g, ws_n);
    if (!d_x.mem || !d_w.mem || !d_dy.mem || (has_bias && !d_b.mem) || !d_y.mem || !d_dx.mem || !d_dw.mem ||
        !d_db.mem || !d_ws.mem)
        return;
    if (golden_status(g, ct_convt2d_forward(ctx, &d, d_y, d_x, d_w, d_b, d_ws, ws_n), "conv_transpose2d forward") ||
        golden_status(g, ct_convt2d_backward(ctx, &d, d_dx, d_dw, has_bias ? d_db : none, d_dy, d_x, d_w, d_ws,
                                             ws_n), "conv_transpose2d backward"))
        return;
    golden_expect_dev(g, "y", d_y, "y", 2 * ty + py, 0);
    golden_expect_dev(g, "dx", d_dx, "dx", 2 * tdx + pdx, 0);
    golden_expect_dev(g, "dweight", d_dw, "dweight", 2 * tdw + pdw, 0);
    if (has_bias)
        golden_expect_dev(g, "dbias", d_db, "dbias", 2 * tdb, 0);
}
