/*
 * upsample.c - golden adapter for upsampling (upsample_*: x (N, C, H, W),
 * metadata mode nearest|bilinear, scale, align_corners false). Tolerances:
 * the element-wise bound, 1e-5 + 1e-4 |b|, for y and for dx (sums of S^2
 * or 4 S^2 weighted gradients).
 */
#include <stdlib.h>
#include <string.h>

#include "golden.h"
#include "ops/upsample.h"
#include "ref/upsample.h"

void golden_upsample(golden *g)
{
    int s[8] = { 0 }, nd = 0;
    size_t nx = 0, ny = 0;
    double *x = golden_tensor(g, "x", &nx, s, &nd);
    double *dy = golden_tensor(g, "dy", &ny, NULL, NULL);
    if (!x || !dy)
        return;
    const char *mode = golden_meta(g, "mode");
    int S = golden_meta_int(g, "scale", 0), bilinear = mode && !strcmp(mode, "bilinear");
    if (nd != 4 || S < 1 || !mode || (!bilinear && strcmp(mode, "nearest")) ||
        ny != nx * (size_t)S * (size_t)S) {
        golden_failf(g, "x must be (N, C, H, W), mode nearest or bilinear, dy (N, C, S H, S W)");
        return;
    }
    size_t planes = (size_t)s[0] * (size_t)s[1];
    double *y = golden_host(g, ny), *dx = golden_host(g, nx);
    ct_ref_upsample_forward(y, x, planes, s[2], s[3], S, bilinear);
    ct_ref_upsample_backward(dx, dy, planes, s[2], s[3], S, bilinear);
    golden_expect_host(g, "y", y, "y", 1e-5, 1e-4);
    golden_expect_host(g, "dx", dx, "dx", 1e-5, 1e-4);
    ct_context *ctx = golden_ctx(g);
    ct_buf d_x = golden_dev(g, x, nx), d_dy = golden_dev(g, dy, ny);
    ct_buf d_y = golden_dev_zero(g, ny), d_dx = golden_dev_zero(g, nx);
    if (golden_status(g, ct_upsample_forward(ctx, d_y, d_x, planes, s[2], s[3], S, bilinear), "upsample forward") ||
        golden_status(g, ct_upsample_backward(ctx, d_dx, d_dy, planes, s[2], s[3], S, bilinear), "upsample backward"))
        return;
    golden_expect_dev(g, "y", d_y, "y", 1e-5, 1e-4);
    golden_expect_dev(g, "dx", d_dx, "dx", 1e-5, 1e-4);
}
