/*
 * transpose.c - golden adapter for to_sequence (to_sequence_*: x (N, C, H,
 * W), y (H W, N, C)). A reorder moves values: y and dx must be exact
 * (tolerance 0) on the host reference and the device.
 */
#include "golden.h"
#include "ops/transpose.h"
#include "ref/transpose.h"

void golden_transpose(golden *g)
{
    int s[8] = { 0 }, nd = 0;
    size_t nx = 0, ny = 0;
    double *x = golden_tensor(g, "x", &nx, s, &nd);
    double *dy = golden_tensor(g, "dy", &ny, NULL, NULL);
    if (!x || !dy)
        return;
    if (nd != 4 || ny != nx) {
        golden_failf(g, "x must be (N, C, H, W) and dy (H W, N, C)");
        return;
    }
    size_t n = (size_t)s[0], e = (size_t)s[1], t = (size_t)s[2] * (size_t)s[3];
    double *y = golden_host(g, ny), *dx = golden_host(g, nx);
    ct_ref_transpose(y, x, n, e, t, e * t, t, e, n * e);  /* (n, e, t) -> (t, n, e) */
    ct_ref_transpose(dx, dy, n, t, e, e, n * e, e * t, t); /* and back */
    golden_expect_host(g, "y", y, "y", 0, 0);
    golden_expect_host(g, "dx", dx, "dx", 0, 0);
    ct_context *ctx = golden_ctx(g);
    ct_buf d_x = golden_dev(g, x, nx), d_dy = golden_dev(g, dy, ny);
    ct_buf d_y = golden_dev_zero(g, ny), d_dx = golden_dev_zero(g, nx);
    if (golden_status(g, ct_image_to_seq(ctx, d_y, d_x, n, e, t), "image to sequence") ||
        golden_status(g, ct_seq_to_image(ctx, d_dx, d_dy, n, e, t), "sequence to image"))
        return;
    golden_expect_dev(g, "y", d_y, "y", 0, 0);
    golden_expect_dev(g, "dx", d_dx, "dx", 0, 0);
}
