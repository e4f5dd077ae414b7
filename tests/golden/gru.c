/*
 * gru.c - golden adapter for the multi-layer GRU (gru_*.safetensors:
 * metadata seq_len, batch, input_size, hidden_size, num_layers; x (T, N, in),
 * per-layer weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k},
 * gates r, z, n; y, h_n and the gradients dx, d<parameter>).
 *
 * Tolerances: as src/check/gru.c reasons, float rounding grows like
 * 4 u sqrt(K) T L (u = 2^-24, K = max(in, H) + H + 2 terms per gate,
 * T L steps it travels); here both sides are float (PyTorch and ours), which
 * doubles it: atol = rtol = 2 * 4 u sqrt(Kb) T L, with Kb = max(K, 3H, T N)
 * the longest sum, forward and backward alike (2 ck_rnn_tol; gru_0:
 * 2.0e-5, gru_1: 1.1e-5, about the 1e-5 + 1e-4 |b| element-wise default).
 * The double reference is held to the same bounds.
 * In bf16 or fp16 (golden --precision) the device's atol adds the largest
 * of ct_ref_gru_bound16's bounds for the tensor.
 */
#include "check/rnn.h"
#include "golden.h"
#include "ops/gru.h"
#include "ref/gru.h"

void golden_gru(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    ct_gru_desc d = golden_rnn_desc(g);
    if (golden_status(g, ct_gru_validate(ctx, &d), "gru metadata"))
        return;
    size_t T = (size_t)d.T, N = (size_t)d.N, H = (size_t)d.hidden, L = (size_t)d.layers;
    size_t nx = T * N * (size_t)d.input, ny = T * N * H, ns = L * N * H;
    size_t np = ct_gru_param_count(&d);
    double *x, *dy, *p = golden_rnn_inputs(g, &d, 3, &x, &dy);
    if (!p)
        return;
    double tol = 2 * ck_rnn_tol(&d, 3, 1);

    double *y = golden_host(g, ny), *hn = golden_host(g, ns);
    double *dx = golden_host(g, nx), *dp = golden_host(g, np);
    if (golden_status(g, ct_ref_gru_forward(&d, y, hn, x, p), "reference forward") ||
        golden_status(g, ct_ref_gru_backward(&d, dx, dp, dy, x, p), "reference backward"))
        return;
    /* what 16-bit operands add (0 in float32): y, h_n, dx, dparams */
    double b16[4];
    if (golden_status(g, ck_rnn_bound16(ct_context_precision(ctx), &d, 3, dy, x, p, b16), "16-bit bound"))
        return;

    ct_buf d_x = golden_dev(g, x, nx), d_p = golden_dev(g, p, np), d_dy = golden_dev(g, dy, ny);
    ct_buf d_y = golden_dev_zero(g, ny), d_hn = golden_dev_zero(g, ns), d_dx = golden_dev_zero(g, nx),
           d_dp = golden_dev_zero(g, np);
    ct_buf d_ws = golden_dev_zero(g, ct_gru_workspace_size(&d) / sizeof(float));
    if (golden_status(g, ct_gru_forward(ctx, &d, d_y, d_hn, d_x, d_p, d_ws), "gru forward") ||
        golden_status(g, ct_gru_backward(ctx, &d, d_dx, d_dp, d_dy, d_x, d_p, d_ws), "gru backward"))
        return;

    static const char *const outs[3] = { "y", "h_n", "dx" };
    const double *refs[3] = { y, hn, dx };
    const ct_buf devs[3] = { d_y, d_hn, d_dx };
    for (int i = 0; i < 3; i++) {
        golden_expect_host(g, outs[i], refs[i], outs[i], tol, tol);
        golden_expect_dev(g, outs[i], devs[i], outs[i], tol + b16[i], tol);
    }
    golden_rnn_expect_dparams(g, &d, 3, dp, d_dp, tol, b16[3]);
}
