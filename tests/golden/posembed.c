/*
 * posembed.c - golden adapter for the position embedding
 * (posembed_*.safetensors: x (T, N, E), `weight` (max_len, E), y, dy, dx
 * and dweight; metadata "max_len").
 *
 * Tolerances: y is one float addition and dx a copy: 1e-6 + 1e-6 |b| and
 * exact. dweight sums N terms (3 in the file) per position, rows t >= T
 * zero: 1e-5 + 1e-5 |b|.
 */
#include "golden.h"
#include "ops/posembed.h"
#include "ref/posembed.h"

void golden_posembed(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    size_t nx = 0, nw = 0;
    int xs[8] = { 0 }, xd = 0, ws[8] = { 0 }, wd = 0;
    double *x = golden_tensor(g, "x", &nx, xs, &xd);
    double *w = golden_tensor(g, "weight", &nw, ws, &wd);
    double *dy = golden_tensor(g, "dy", NULL, NULL, NULL);
    if (!x || !w || !dy)
        return;
    int max_len = golden_meta_int(g, "max_len", -1);
    if (xd != 3 || wd != 2 || ws[1] != xs[2] || ws[0] < xs[0] || ws[0] != max_len) {
        golden_failf(g, "x must be (T, N, E), weight (max_len, E) with T <= max_len = metadata "
                     "max_len (%d)", max_len);
        return;
    }
    size_t T = (size_t)xs[0], N = (size_t)xs[1], E = (size_t)xs[2];
    double *y = golden_host(g, nx), *dx = golden_host(g, nx), *dw = golden_host(g, nw);
    ct_ref_posembed_forward(y, x, w, T, N, E);
    ct_ref_posembed_backward(dx, dw, dy, T, N, E);
    golden_expect_host(g, "y", y, "y", 1e-6, 1e-6);
    golden_expect_host(g, "dx", dx, "dx", 0, 0);
    golden_expect_host(g, "dweight", dw, "dweight", 1e-5, 1e-5);

    ct_buf d_x = golden_dev(g, x, nx), d_w = golden_dev(g, w, nw), d_dy = golden_dev(g, dy, nx);
    ct_buf d_y = golden_dev_zero(g, nx), d_dx = golden_dev_zero(g, nx), d_dw = golden_dev_zero(g, nw);
    if (!d_x.mem || !d_w.mem || !d_dy.mem || !d_y.mem || !d_dx.mem || !d_dw.mem)
        return;
    if (golden_status(g, ct_posembed_forward(ctx, d_y, d_x, d_w, T, N, E), "posembed forward") ||
        golden_status(g, ct_posembed_backward(ctx, d_dx, d_dw, d_dy, T, N, E), "posembed backward")) {
        ct_context_finish(ctx);
        return;
    }
    golden_expect_dev(g, "y", d_y, "y", 1e-6, 1e-6);
    golden_expect_dev(g, "dx", d_dx, "dx", 0, 0);
    golden_expect_dev(g, "dweight", d_dw, "dweight", 1e-5, 1e-5);
}
