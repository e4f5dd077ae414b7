/*
 * dense.c - golden adapter for the dense layer (dense_*.safetensors: x (N, IN),
 * weight (OUT, IN), bias (OUT), y, dy, dx, dweight, dbias).
 *
 * Tolerances: every result is a float32 sum of T products (T = IN for y,
 * OUT for dx, N for dweight and dbias). In any summation order it is within
 * T * u * sum|products| of the exact sum (u = 2^-24; Higham's gamma_T
 * bound), and sum|products| is computed exactly by running the reference on
 * |inputs|. PyTorch's float32 result and ours each carry such an error (+2
 * roundings for the bias add or accumulation and the store), so the device
 * is held to 2 (T + 2) u max sum|products|, the double reference to
 * (T + 2) u max sum|products|.
 */
#include <math.h>

#include "golden.h"
#include "ops/dense.h"
#include "ref/dense.h"


void golden_dense(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    size_t nx = 0, nw = 0, ny = 0;
    int xs[8] = { 0 }, ws[8] = { 0 }, xd = 0, wd = 0;
    double *x = golden_tensor(g, "x", &nx, xs, &xd);
    double *w = golden_tensor(g, "weight", &nw, ws, &wd);
    double *dy = golden_tensor(g, "dy", &ny, NULL, NULL);
    int has_bias = golden_has(g, "bias");
    double *b = has_bias ? golden_tensor(g, "bias", NULL, NULL, NULL) : NULL;
    if (!x || !w || !dy || (has_bias && !b))
        return;
    if (xd != 2 || wd != 2 || xs[1] != ws[1] || ny != (size_t)xs[0] * ws[0]) {
        golden_failf(g, "expected x (N, IN), weight (OUT, IN), dy (N, OUT)");
        return;
    }
    int n = xs[0], in = xs[1], out = ws[0];
    size_t nb = (size_t)out;
    double *y = golden_host(g, ny), *dx = golden_host(g, nx), *dw = golden_host(g, nw);
    double *db = golden_host(g, nb);
    double *ay = golden_host(g, ny), *adx = golden_host(g, nx), *adw = golden_host(g, nw);
    double *adb = golden_host(g, nb);
    double *ax = golden_abs(g, x, nx), *aw = golden_abs(g, w, nw), *ady = golden_abs(g, dy, ny);
    double *ab = has_bias ? golden_abs(g, b, nb) : NULL;
    if (!y || !dx || !dw || !db || !ay || !adx || !adw || !adb || !ax || !aw || !ady ||
        (has_bias && !ab))
        return;
    ct_ref_dense_forward(y, x, w, b, n, in, out);
    ct_ref_dense_backward(dx, dw, has_bias ? db : NULL, dy, x, w, n, in, out);
    ct_ref_dense_forward(ay, ax, aw, ab, n, in, out);
    ct_ref_dense_backward(adx, adw, adb, ady, ax, aw, n, in, out);
    double ty = ck_sum_atol((size_t)in, ay, ny), tdx = ck_sum_atol((size_t)out, adx, nx);
    double tdw = ck_sum_atol((size_t)n, adw, nw), tdb = ck_sum_atol((size_t)n, adb, nb);
    double amax = fmax(fmax(ck_amax(x, nx), ck_amax(w, nw)), ck_amax(dy, ny));
    double py = golden_prec_bound(g, (size_t)in, ay, ny, amax), pdx = golden_prec_bound(g, (size_t)out, adx, nx, amax);
    double pdw = golden_prec_bound(g, (size_t)n, adw, nw, amax);
    golden_expect_host(g, "y", y, "y", ty, 0);
    golden_expect_host(g, "dx", dx, "dx", tdx, 0);
    golden_expect_host(g, "dweight", dw, "dweight", tdw, 0);
    if (has_bias)
        golden_expect_host(g, "dbias", db, "dbias", tdb, 0);

    ct_buf d_x = golden_dev(g, x, nx), d_w = golden_dev(g, w, nw), d_dy = golden_dev(g, dy, ny);
    ct_buf d_b = has_bias ? golden_dev(g, b, nb) : (ct_buf){ NULL, 0 };
    ct_buf d_y = golden_dev_zero(g, ny), d_dx = golden_dev_zero(g, nx);
    ct_buf d_dw = golden_dev_zero(g, nw), d_db = golden_dev_zero(g, nb);
    if (!d_x.mem || !d_w.mem || !d_dy.mem || (has_bias && !d_b.mem) || !d_y.mem || !d_dx.mem ||
        !d_dw.mem || !d_db.mem)
        return;
    if (golden_status(g, ct_dense_forward(ctx, d_y, d_x, d_w, d_b, n, in, out), "dense forward") ||
        golden_status(g, ct_dense_backward(ctx, d_dx, d_dw, has_bias ? d_db : (ct_buf){ NULL, 0 },
                                           d_dy, d_x, d_w, n, in, out), "dense backward"))
        return;
    golden_expect_dev(g, "y", d_y, "y", 2 * ty + py, 0);
    golden_expect_dev(g, "dx", d_dx, "dx", 2 * tdx + pdx, 0);
    golden_expect_dev(g, "dweight", d_dw, "dweight", 2 * tdw + pdw, 0);
    if (has_bias)
        golden_expect_dev(g, "dbias", d_db, "dbias", 2 * tdb, 0);
}
