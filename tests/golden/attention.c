/*
 * attention.c - golden adapter for multi-head self-attention
 * (attention_*.safetensors: x (T, N, E), in_proj_weight (3E, E),
 * in_proj_bias (3E), out_proj_weight (E, E), out_proj_bias (E), y, dy, dx
 * and d<parameter>; metadata "heads", "causal").
 *
 * Tolerances: the results are chains of float sums over at most
 * 3E + 2T + T N terms (projections, scores, the softmax and weighted
 * values, the parameter gradients over the T N rows), values of order 1;
 * PyTorch's float32 and ours each err by about that many units of 2^-24
 * of the largest value. Held to 1e-5 + 1e-4 |b| for y and dx (the
 * element-wise tolerance) and 3e-5 + 1e-4 |b| for the parameter
 * gradients, whose sums are T N terms longer; the double reference and
 * the kernels are held to the same. In bf16 or fp16 (golden --precision)
 * the kernels' tolerances add the largest of ct_ref_attention_bound16's
 * bounds for the tensor: what rounding every product's operands can add.
 */
#include <string.h>

#include "golden.h"
#include "ops/attention.h"
#include "ref/attention.h"

static const char *const pnames[4] = { "in_proj_weight", "in_proj_bias", "out_proj_weight",
                                       "out_proj_bias" };
static const char *const dnames[4] = { "din_proj_weight", "din_proj_bias", "dout_proj_weight",
                                       "dout_proj_bias" };

void golden_attention(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    size_t nx = 0, ny = 0;
    int xs[8] = { 0 }, xd = 0;
    double *x = golden_tensor(g, "x", &nx, xs, &xd);
    double *dy = golden_tensor(g, "dy", &ny, NULL, NULL);
    int heads = golden_meta_int(g, "heads", 0);
    const char *causal = golden_meta(g, "causal");
    if (!x || !dy)
        return;
    if (xd != 3 || ny != nx || heads < 1 || xs[2] % heads || !causal ||
        (strcmp(causal, "true") && strcmp(causal, "false"))) {
        golden_failf(g, "expected x and dy (T, N, E), metadata heads dividing E and causal "
                     "true or false");
        return;
    }
    ct_attention_desc d = { (size_t)xs[0], (size_t)xs[1], (size_t)xs[2], (size_t)heads,
                            !strcmp(causal, "true") };
    size_t E = d.E, np = ct_attention_params(&d);
    size_t sizes[4] = { 3 * E * E, 3 * E, E * E, E }, offs[4] = { 0 };
    double *w = golden_host(g, np), *dw = golden_host(g, np);
    double *y = golden_host(g, nx), *dx = golden_host(g, nx);
    for (int i = 0; i < 4; i++) {
        size_t n = 0;
        double *p = golden_tensor(g, pnames[i], &n, NULL, NULL);
        if (!p)
            return;
        if (n != sizes[i]) {
            golden_failf(g, "%s has %zu elements, not %zu", pnames[i], n, sizes[i]);
            return;
        }
        offs[i] = i ? offs[i - 1] + sizes[i - 1] : 0;
        memcpy(w + offs[i], p, n * sizeof *p);
    }
    if (golden_status(g, ct_ref_attention_forward(&d, y, NULL, x, w), "reference forward") ||
        golden_status(g, ct_ref_attention_backward(&d, dx, dw, dy, x, w), "reference backward"))
        return;
    golden_expect_host(g, "y", y, "y", 1e-5, 1e-4);
    golden_expect_host(g, "dx", dx, "dx", 1e-5, 1e-4);
    for (int i = 0; i < 4; i++)
        golden_expect_host(g, dnames[i], dw + offs[i], dnames[i], 3e-5, 1e-4);

    /* what 16-bit operands add: y, dx, then each parameter's gradient */
    double b16[6] = { 0 };
    ct_precision prec = ct_context_precision(ctx);
    if (prec != CT_PRECISION_FP32) {
        double *ey = golden_host(g, nx), *edx = golden_host(g, nx), *edw = golden_host(g, np);
        if (!ey || !edx || !edw ||
            golden_status(g, ct_ref_attention_bound16(&d, ck_prec_u(prec), ck_prec_sub(prec), 0, ey, edx, edw, dy, x, w),
                          "16-bit bound"))
            return;
        b16[0] = ck_amax(ey, nx);
        b16[1] = ck_amax(edx, nx);
        for (int i = 0; i < 4; i++)
            b16[2 + i] = ck_amax(edw + offs[i], sizes[i]);
    }

    ct_buf d_x = golden_dev(g, x, nx), d_w = golden_dev(g, w, np), d_dy = golden_dev(g, dy, nx);
    ct_buf d_y = golden_dev_zero(g, nx), d_dx = golden_dev_zero(g, nx);
    ct_buf d_dw = golden_dev_zero(g, np), d_saved = golden_dev_zero(g, ct_attention_saved(&d));
    ct_buf d_work = golden_dev_zero(g, ct_attention_work(&d));
    if (!d_x.mem || !d_w.mem || !d_dy.mem || !d_y.mem || !d_dx.mem || !d_dw.mem || !d_saved.mem ||
        !d_work.mem)
        return;
    if (!golden_status(g, ct_attention_forward(ctx, &d, d_y, d_saved, d_x, d_w), "attention forward") &&
        !golden_status(g, ct_attention_backward(ctx, &d, d_dx, d_dw, d_dy, d_x, d_w, d_saved, d_work),
                       "attention backward")) {
        golden_expect_dev(g, "y", d_y, "y", 1e-5 + b16[0], 1e-4);
        golden_expect_dev(g, "dx", d_dx, "dx", 1e-5 + b16[1], 1e-4);
        for (int i = 0; i < 4; i++)
            golden_expect_dev(g, dnames[i], ct_buf_at(d_dw, offs[i]), dnames[i], 3e-5 + b16[2 + i], 1e-4);
    }
    /* the reads above were blocking; a failed launch may still be queued */
    ct_context_finish(ctx);
}
