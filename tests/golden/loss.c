/*
 * loss.c - golden adapter for the losses: softmax_cross_entropy (x (N, K)
 * logits, or (N, K, H, W) scores with (N, H, W) labels, per pixel; int64
 * labels, y the mean loss, dy the scalar upstream gradient)
 * mse and bce_logits (x, target, y, dx, dtarget).
 *
 * Tolerances: the scalar losses are means of O(1) terms computed in float
 * on both sides: 1e-5 + 1e-4 |b| (each side's error is ~1e-6 at these
 * sizes; see src/check/loss.c). Gradients are element-wise given the row's
 * log-sum-exp: 1e-5 + 1e-4 |b| as well, tighter than any wrong term
 * (their magnitudes are ~1/N = 1e-2 here).
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "golden.h"
#include "ref/loss.h"

static void xent(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    int shape[8], ndim = 0;
    size_t n = 0, nl = 0;
    double *x = golden_tensor(g, "x", &n, shape, &ndim);
    double *lab = golden_tensor(g, "labels", &nl, NULL, NULL);
    double *dy = golden_tensor(g, "dy", NULL, NULL, NULL);
    if (!x || !lab || !dy)
        return;
    size_t P = ndim == 4 ? (size_t)shape[2] * (size_t)shape[3] : 1;
    if ((ndim != 2 && ndim != 4) || (size_t)shape[0] * P != nl) {
        golden_failf(g, "logits must be (N, K) with N labels, or (N, K, H, W) with N H W");
        return;
    }
    size_t B = (size_t)shape[0], K = (size_t)shape[1], N = B * P; /* N: rows, a pixel's or a sample's */
    int32_t *labels = (int32_t *)golden_host(g, N); /* N int32 in N doubles' room */
    for (size_t r = 0; r < N; r++)
        labels[r] = (int32_t)lab[r];
    /* the reference takes rows (N, K): per pixel, the scores transposed */
    double loss, correct, *dx = golden_host(g, n), *rows = golden_host(g, n), *drows = golden_host(g, n);
    for (size_t i = 0; i < B; i++)
        for (size_t k = 0; k < K; k++)
            for (size_t p = 0; p < P; p++)
                rows[(i * P + p) * K + k] = x[(i * K + k) * P + p];
    ct_ref_softmax_xent_forward(&loss, &correct, rows, labels, N, K);
    ct_ref_softmax_xent_backward(drows, rows, labels, N, K, dy[0]);
    for (size_t i = 0; i < B; i++)
        for (size_t k = 0; k < K; k++)
            for (size_t p = 0; p < P; p++)
                dx[(i * K + k) * P + p] = drows[(i * P + p) * K + k];
    golden_expect_host(g, "loss", &loss, "y", 1e-5, 1e-4);
    golden_expect_host(g, "dx", dx, "dx", 1e-5, 1e-4);

    cl_mem d_lab = NULL;
    int st = ct_buffer_create(ctx, N * sizeof(int32_t), &d_lab);
    if (!st)
        st = ct_buffer_write(ctx, d_lab, 0, N * sizeof(int32_t), labels);
    if (golden_status(g, st, "labels buffer"))
        goto done;
    ct_buf b_lab = { d_lab, 0 }, d_x = golden_dev(g, x, n), d_loss = golden_dev_zero(g, 1);
    ct_buf d_corr = golden_dev_zero(g, 1), d_dx = golden_dev_zero(g, n);
    ct_buf d_ws = golden_dev_zero(g, ct_softmax_xent_workspace(N));
    if (P > 1 ? golden_status(g, ct_softmax_xent_px_forward(ctx, d_loss, d_corr, d_x, b_lab, B, K, P, d_ws),
                              "softmax_xent per-pixel forward") ||
                    golden_status(g, ct_softmax_xent_px_backward(ctx, d_dx, d_x, b_lab, B, K, P, (float)dy[0]),
                                  "softmax_xent per-pixel backward")
              : golden_status(g, ct_softmax_xent_forward(ctx, d_loss, d_corr, d_x, b_lab, N, K, d_ws),
                              "softmax_xent forward") ||
                    golden_status(g, ct_softmax_xent_backward(ctx, d_dx, d_x, b_lab, N, K, (float)dy[0]),
                                  "softmax_xent backward"))
        goto done;
    golden_expect_dev(g, "loss", d_loss, "y", 1e-5, 1e-4);
    golden_expect_dev(g, "dx", d_dx, "dx", 1e-5, 1e-4);
    /* the file has no accuracy: the device count must match the reference */
    float got = -1;
    if (!golden_status(g, ct_buffer_read(ctx, d_corr.mem, 0, sizeof got, &got), "reading correct") &&
        (double)got != correct)
        golden_failf(g, "OpenCL correct count %g, the reference counts %g", (double)got, correct);
done:
    if (d_lab)
        ct_context_finish(ctx);
    ct_buffer_release(&d_lab);
}

static void mse(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    size_t n = 0;
    double *x = golden_tensor(g, "x", &n, NULL, NULL);
    double *t = golden_tensor(g, "target", NULL, NULL, NULL);
    double *dy = golden_tensor(g, "dy", NULL, NULL, NULL);
    if (!x || !t || !dy)
        return;
    double loss, *dx = golden_host(g, n), *dt = golden_host(g, n);
    ct_ref_mse_forward(&loss, NULL, x, t, n);
    ct_ref_mse_backward(dx, dt, x, t, n, dy[0]);
    golden_expect_host(g, "loss", &loss, "y", 1e-5, 1e-4);
    golden_expect_host(g, "dx", dx, "dx", 1e-5, 1e-4);
    golden_expect_host(g, "dtarget", dt, "dtarget", 1e-5, 1e-4);

    ct_buf d_x = golden_dev(g, x, n), d_t = golden_dev(g, t, n), d_loss = golden_dev_zero(g, 1);
    ct_buf d_dx = golden_dev_zero(g, n), d_dt = golden_dev_zero(g, n);
    if (golden_status(g, ct_mse_forward(ctx, d_loss, (ct_buf){ NULL, 0 }, d_x, d_t, n), "mse forward") ||
        golden_status(g, ct_mse_backward(ctx, d_dx, d_dt, d_x, d_t, n, (float)dy[0]),
                      "mse backward"))
        return;
    golden_expect_dev(g, "loss", d_loss, "y", 1e-5, 1e-4);
    golden_expect_dev(g, "dx", d_dx, "dx", 1e-5, 1e-4);
    golden_expect_dev(g, "dtarget", d_dt, "dtarget", 1e-5, 1e-4);
}

/* bce_logits_*: x, target (N, K), y, dx, dtarget */
static void bce(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    size_t n = 0;
    int s[8] = { 0 }, nd = 0;
    double *x = golden_tensor(g, "x", &n, s, &nd);
    double *t = golden_tensor(g, "target", NULL, NULL, NULL);
    double *dy = golden_tensor(g, "dy", NULL, NULL, NULL);
    if (!x || !t || !dy)
        return;
    size_t K = nd >= 2 ? (size_t)s[nd - 1] : n;
    double loss, *dx = golden_host(g, n), *dt = golden_host(g, n);
    ct_ref_bce_forward(&loss, NULL, x, t, n, K);
    ct_ref_bce_backward(dx, dt, x, t, n, dy[0]);
    golden_expect_host(g, "loss", &loss, "y", 1e-5, 1e-4);
    golden_expect_host(g, "dx", dx, "dx", 1e-5, 1e-4);
    golden_expect_host(g, "dtarget", dt, "dtarget", 1e-5, 1e-4);
    ct_buf d_x = golden_dev(g, x, n), d_t = golden_dev(g, t, n), d_loss = golden_dev_zero(g, 1);
    ct_buf d_dx = golden_dev_zero(g, n), d_dt = golden_dev_zero(g, n);
    if (golden_status(g, ct_bce_forward(ctx, d_loss, (ct_buf){ NULL, 0 }, d_x, d_t, n, K), "bce forward") ||
        golden_status(g, ct_bce_backward(ctx, d_dx, d_dt, d_x, d_t, n, (float)dy[0]), "bce backward"))
        return;
    golden_expect_dev(g, "loss", d_loss, "y", 1e-5, 1e-4);
    golden_expect_dev(g, "dx", d_dx, "dx", 1e-5, 1e-4);
    golden_expect_dev(g, "dtarget", d_dt, "dtarget", 1e-5, 1e-4);
}

void golden_loss(golden *g)
{
    if (!strcmp(golden_op(g), "bce_logits"))
        bce(g);
    else if (!strcmp(golden_op(g), "mse"))
        mse(g);
    else
        xent(g);
}
