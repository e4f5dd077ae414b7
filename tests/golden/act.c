/*
 * act.c - golden adapter for the activations (act_*.safetensors).
 * Tolerance: 1e-5 + 1e-4|y|, the element-wise float32 bound (PyTorch and the
 * device libm each round once or twice).
 */
#include <string.h>

#include "golden.h"
#include "ref/act.h"

void golden_act(golden *g)
{
    const char *op = golden_op(g);
    ct_act act = !strcmp(op, "relu")         ? CT_ACT_RELU
                 : !strcmp(op, "leaky_relu") ? CT_ACT_LEAKY_RELU
                 : !strcmp(op, "sigmoid")    ? CT_ACT_SIGMOID
                 : !strcmp(op, "tanh")       ? CT_ACT_TANH
                 : !strcmp(op, "silu")       ? CT_ACT_SILU
                 : !strcmp(op, "hardswish")  ? CT_ACT_HARDSWISH
                 : !strcmp(op, "relu6")      ? CT_ACT_RELU6
                                             : CT_ACT_GELU;
    if (act == CT_ACT_LEAKY_RELU && golden_meta_double(g, "negative_slope", 0.01) != 0.01)
        golden_failf(g, "only the default slope 0.01 is supported");
    size_t n = 0;
    double *x = golden_tensor(g, "x", &n, NULL, NULL);
    double *dy = golden_tensor(g, "dy", NULL, NULL, NULL);
    if (!x || !dy)
        return;
    double *y = golden_host(g, n), *dx = golden_host(g, n);
    ct_ref_act_forward(act, y, x, n);
    ct_ref_act_backward(act, dx, dy, x, n);
    golden_expect_host(g, "y", y, "y", 1e-5, 1e-4);
    golden_expect_host(g, "dx", dx, "dx", 1e-5, 1e-4);

    ct_context *ctx = golden_ctx(g);
    ct_buf dx_ = golden_dev(g, x, n), ddy = golden_dev(g, dy, n);
    ct_buf dev_y = golden_dev_zero(g, n), dev_dx = golden_dev_zero(g, n);
    if (golden_status(g, ct_act_forward(ctx, act, dev_y, dx_, n), "act forward") ||
        golden_status(g, ct_act_backward(ctx, act, dev_dx, ddy, dx_, dev_y, n), "act backward"))
        return;
    golden_expect_dev(g, "y", dev_y, "y", 1e-5, 1e-4);
    golden_expect_dev(g, "dx", dev_dx, "dx", 1e-5, 1e-4);
}
