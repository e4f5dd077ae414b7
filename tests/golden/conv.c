/*
 * conv.c - golden adapter for conv2d (conv2d_*.safetensors: x (N, C, H, W),
 * weight (OUT, C, K, K), optional bias; metadata stride, padding, dilation,
 * kernel, bias, groups), run through both workspace regimes (one image per
 * GEMM, and the recommended size, several images per GEMM); grouped cases
 * (weight (OUT, C / groups, K, K)) through the grouped kernels.
 *
 * Tolerances: every result is a float32 sum of T products, T = C K K for y,
 * OUT K K for dx, N OH OW for dweight and dbias. In any summation order it
 * is within T * u * sum|products| of the exact sum (u = 2^-24; Higham's
 * gamma_T bound; grouped: C / groups K K for y, OUT / groups K K for dx);
 * sum|products| comes exact from the reference run on
 * |inputs|. PyTorch's float32 result and ours each carry such an error (+2
 * roundings for the bias add or accumulation and the store), so the device
 * is held to 2 (T + 2) u max sum|products| (our own bound, in
 * src/check/conv.c, is never above PyTorch's any-order one), the double
 * reference to (T + 2) u max sum|products|.
 */
#include <math.h>
#include <stdio.h>

#include "golden.h"
#include "ops/conv.h"
#include "ops/gconv.h"
#include "ref/conv.h"

/* groups > 1: the grouped kernels (no workspace) */
static void grouped(golden *g, const ct_conv2d_desc *d, int groups, const double *x, const double *w,
                    const double *b, const double *dy, size_t nx, size_t nw, size_t ny)
{
    ct_context *ctx = golden_ctx(g);
    int oh = 0, ow = 0;
    if (golden_status(g, ct_gconv2d_out_shape(ctx, d, groups, &oh, &ow), "conv2d shape"))
        return;
    if (ny != (size_t)d->n * d->c_out * oh * ow || nw != (size_t)d->c_out * (d->c_in / groups) * d->kh * d->kw) {
        golden_failf(g, "dy has %zu elements, the geometry gives (%d, %d, %d, %d)", ny, d->n, d->c_out, oh, ow);
        return;
    }
    size_t nb = (size_t)d->c_out, m = (size_t)d->n * oh * ow, kk = (size_t)d->kh * d->kw;
    double *y = golden_host(g, ny), *dx = golden_host(g, nx), *dw = golden_host(g, nw), *db = golden_host(g, nb);
    double *ay = golden_host(g, ny), *adx = golden_host(g, nx), *adw = golden_host(g, nw);
    double *adb = golden_host(g, nb);
    double *ax = golden_abs(g, x, nx), *aw = golden_abs(g, w, nw), *ady = golden_abs(g, dy, ny);
    double *ab = b ? golden_abs(g, b, nb) : NULL;
    if (!y || !dx || !dw || !db || !ay || !adx || !adw || !adb || !ax || !aw || !ady || (b && !ab))
        return;
    ct_ref_gconv2d_forward(d, groups, y, x, w, b);
    ct_ref_gconv2d_backward(d, groups, dx, dw, b ? db : NULL, dy, x, w);
    ct_ref_gconv2d_forward(d, groups, ay, ax, aw, ab);
    ct_ref_gconv2d_backward(d, groups, adx, adw, adb, ady, ax, aw);
    double ty = ck_sum_atol((size_t)(d->c_in / groups) * kk, ay, ny);
    double tdx = ck_sum_atol((size_t)(d->c_out / groups) * kk, adx, nx);
    double tdw = ck_sum_atol(m, adw, nw), tdb = ck_sum_atol(m, adb, nb);
    double amax = fmax(fmax(ck_amax(x, nx), ck_amax(w, nw)), ck_amax(dy, ny));
    double py = golden_prec_bound(g, (size_t)(d->c_in / groups) * kk, ay, ny, amax);
    double pdx = golden_prec_bound(g, (size_t)(d->c_out / groups) * kk, adx, nx, amax);
    double pdw = golden_prec_bound(g, m, adw, nw, amax);
    golden_expect_host(g, "y", y, "y", ty, 0);
    golden_expect_host(g, "dx", dx, "dx", tdx, 0);
    golden_expect_host(g, "dweight", dw, "dweight", tdw, 0);
    if (b)
        golden_expect_host(g, "dbias", db, "dbias", tdb, 0);
    ct_buf d_x = golden_dev(g, x, nx), d_w = golden_dev(g, w, nw), d_dy = golden_dev(g, dy, ny);
    ct_buf d_b = b ? golden_dev(g, b, nb) : (ct_buf){ NULL, 0 };
    ct_buf d_y = golden_dev_zero(g, ny), d_dx = golden_dev_zero(g, nx), d_dw = golden_dev_zero(g, nw);
    ct_buf d_db = golden_dev_zero(g, nb);
    if (!d_x.mem || !d_w.mem || !d_dy.mem || (b && !d_b.mem) || !d_y.mem || !d_dx.mem || !d_dw.mem || !d_db.mem)
        return;
    if (golden_status(g, ct_gconv2d_forward(ctx, d, groups, d_y, d_x, d_w, d_b), "grouped conv2d forward") ||
        golden_status(g, ct_gconv2d_backward(ctx, d, groups, d_dx, d_dw, b ? d_db : (ct_buf){ NULL, 0 }, d_dy,
                                             d_x, d_w), "grouped conv2d backward"))
        return;
    golden_expect_dev(g, "y (grouped)", d_y, "y", 2 * ty + py, 0);
    golden_expect_dev(g, "dx (grouped)", d_dx, "dx", 2 * tdx + pdx, 0);
    golden_expect_dev(g, "dweight (grouped)", d_dw, "dweight", 2 * tdw + pdw, 0);
    if (b)
        golden_expect_dev(g, "dbias (grouped)", d_db, "dbias", 2 * tdb, 0);
}

void golden_conv(golden *g)
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
    int groups = golden_meta_int(g, "groups", 1);
    if (xd != 4 || wd != 4 || groups < 1 || xs[1] != ws[1] * groups) {
        golden_failf(g, "expected x (N, C, H, W) and weight (OUT, C / groups, KH, KW), groups %d", groups);
        return;
    }
    int k = golden_meta_int(g, "kernel", ws[2]), s = golden_meta_int(g, "stride", 1);
    int pad = golden_meta_int(g, "padding", 0), dil = golden_meta_int(g, "dilation", 1);
    ct_conv2d_desc d = { xs[0], xs[1], xs[2], xs[3], ws[0], ws[2], ws[3], s, s, pad, pad, dil, dil };
    if (groups > 1) {
        grouped(g, &d, groups, x, w, b, dy, nx, nw, ny);
        return;
    }
    int oh = 0, ow = 0;
    if (k != ws[2] || k != ws[3]) {
        golden_failf(g, "metadata kernel %d but weight %dx%d", k, ws[2], ws[3]);
        return;
    }
    if (golden_status(g, ct_conv2d_out_shape(ctx, &d, &oh, &ow), "conv2d shape"))
        return;
    if (ny != (size_t)d.n * d.c_out * oh * ow) {
        golden_failf(g, "dy has %zu elements, the geometry gives (%d, %d, %d, %d)", ny, d.n,
                     d.c_out, oh, ow);
        return;
    }
    size_t nb = (size_t)d.c_out, P = (size_t)oh * ow;
    double *y = golden_host(g, ny), *dx = golden_host(g, nx), *dw = golden_host(g, nw);
    double *db = golden_host(g, nb);
    double *ay = golden_host(g, ny), *adx = golden_host(g, nx), *adw = golden_host(g, nw);
    double *adb = golden_host(g, nb);
    double *ax = golden_abs(g, x, nx), *aw = golden_abs(g, w, nw), *ady = golden_abs(g, dy, ny);
    double *ab = has_bias ? golden_abs(g, b, nb) : NULL;
    if (!y || !dx || !dw || !db || !ay || !adx || !adw || !adb || !ax || !aw || !ady ||
        (has_bias && !ab))
        return;
    ct_ref_conv2d_forward(&d, y, x, w, b);
    ct_ref_conv2d_backward(&d, dx, dw, has_bias ? db : NULL, dy, x, w);
    ct_ref_conv2d_forward(&d, ay, ax, aw, ab);
    ct_ref_conv2d_backward(&d, adx, adw, adb, ady, ax, aw);
    size_t kk = (size_t)d.kh * d.kw;
    double ty = ck_sum_atol((size_t)d.c_in * kk, ay, ny), tdx = ck_sum_atol(nb * kk, adx, nx);
    double tdw = ck_sum_atol((size_t)d.n * P, adw, nw), tdb = ck_sum_atol((size_t)d.n * P, adb, nb);
    double amax = fmax(fmax(ck_amax(x, nx), ck_amax(w, nw)), ck_amax(dy, ny));
    double py = golden_prec_bound(g, (size_t)d.c_in * kk, ay, ny, amax);
    double pdx = golden_prec_bound(g, nb * kk, adx, nx, amax), pdw = golden_prec_bound(g, (size_t)d.n * P, adw, nw, amax);
    golden_expect_host(g, "y", y, "y", ty, 0);
    golden_expect_host(g, "dx", dx, "dx", tdx, 0);
    golden_expect_host(g, "dweight", dw, "dweight", tdw, 0);
    if (has_bias)
        golden_expect_host(g, "dbias", db, "dbias", tdb, 0);

    ct_buf d_x = golden_dev(g, x, nx), d_w = golden_dev(g, w, nw), d_dy = golden_dev(g, dy, ny);
    ct_buf d_b = has_bias ? golden_dev(g, b, nb) : (ct_buf){ NULL, 0 };
    size_t ws_sizes[2] = { (size_t)d.c_in * kk * P, ct_conv2d_workspace(&d) };
    for (int r = 0; r < 2; r++) {
        ct_buf d_y = golden_dev_zero(g, ny), d_dx = golden_dev_zero(g, nx);
        ct_buf d_dw = golden_dev_zero(g, nw), d_db = golden_dev_zero(g, nb);
        ct_buf d_ws = golden_dev_zero(g, ws_sizes[r]);
        if (!d_x.mem || !d_w.mem || !d_dy.mem || (has_bias && !d_b.mem) || !d_y.mem ||
            !d_dx.mem || !d_dw.mem || !d_db.mem || !d_ws.mem)
            return;
        if (golden_status(g, ct_conv2d_forward(ctx, &d, d_y, d_x, d_w, d_b, d_ws, ws_sizes[r]),
                          "conv2d forward") ||
            golden_status(g, ct_conv2d_backward(ctx, &d, d_dx, d_dw,
                                                has_bias ? d_db : (ct_buf){ NULL, 0 }, d_dy, d_x,
                                                d_w, d_ws, ws_sizes[r]), "conv2d backward"))
            return;
        const char *tag = r == 0 ? " (one image per GEMM)" : " (batched GEMM)";
        char what[64];
        snprintf(what, sizeof what, "y%s", tag);
        golden_expect_dev(g, what, d_y, "y", 2 * ty + py, 0);
        snprintf(what, sizeof what, "dx%s", tag);
        golden_expect_dev(g, what, d_dx, "dx", 2 * tdx + pdx, 0);
        snprintf(what, sizeof what, "dweight%s", tag);
        golden_expect_dev(g, what, d_dw, "dweight", 2 * tdw + pdw, 0);
        if (has_bias) {
            snprintf(what, sizeof what, "dbias%s", tag);
            golden_expect_dev(g, what, d_db, "dbias", 2 * tdb, 0);
        }
    }
}
