/*
 * lstm.c - golden adapter for the multi-layer LSTM (lstm_*.safetensors:
 * metadata seq_len, batch, input_size, hidden_size, num_layers; x (T, N, in),
 * per-layer weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k};
 * y, h_n, c_n and the gradients dx, d<parameter>).
 *
 * Tolerances: as src/check/lstm.c reasons, float rounding grows like
 * 4 u sqrt(K) T L (u = 2^-24, K = max(in, H) + H + 2 terms per gate,
 * T L steps it travels); here both sides are float (PyTorch and ours), which
 * doubles it: atol = rtol = 2 * 4 u sqrt(Kb) T L, with Kb = max(K, 4H, T N)
 * the longest sum, forward and backward alike (2 ck_rnn_tol; lstm_0:
 * 1.9e-5, lstm_1: 1.3e-5, about the 1e-5 + 1e-4 |b| element-wise default). The file's
 * values exceed the unit range (|x| <= 3.4, |dy| <= 2.5), which the
 * relative part absorbs. The double reference is held to the same bounds.
 * In bf16 or fp16 (golden --precision) the device's atol adds the largest
 * of ct_ref_lstm_bound16's bounds for the tensor.
 */
#include "check/rnn.h"
#include "golden.h"
#include "ops/lstm.h"
#include "ref/lstm.h"

void golden_lstm(golden *g)
{
    ct_context *ctx = golden_ctx(g);
    ct_lstm_desc d = golden_rnn_desc(g);
    if (golden_status(g, ct_lstm_validate(ctx, &d), "lstm metadata"))
        return;
    size_t T = (size_t)d.T, N = (size_t)d.N, H = (size_t)d.hidden, L = (size_t)d.layers;
    size_t nx = T * N * (size_t)d.input, ny = T * N * H, ns = L * N * H;
    size_t np = ct_lstm_param_count(&d);
    double *x, *dy, *p = golden_rnn_inputs(g, &d, 4, &x, &dy);
    if (!p)
        return;
    double tol = 2 * ck_rnn_tol(&d, 4, 1);

    double *y = golden_host(g, ny), *hn = golden_host(g, ns), *cn = golden_host(g, ns);
    double *dx = golden_host(g, nx), *dp = golden_host(g, np);
    if (golden_status(g, ct_ref_lstm_forward(&d, y, hn, cn, x, p), "reference forward") ||
        golden_status(g, ct_ref_lstm_backward(&d, dx, dp, dy, x, p), "reference backward"))
        return;
    /* what 16-bit operands add (0 in float32): y, h_n, c_n, dx, dparams */
    double b16[5];
    if (golden_status(g, ck_rnn_bound16(ct_context_precision(ctx), &d, 4, dy, x, p, b16), "16-bit bound"))
        return;

    ct_buf d_x = golden_dev(g, x, nx), d_p = golden_dev(g, p, np), d_dy = golden_dev(g, dy, ny);
    ct_buf d_y = golden_dev_zero(g, ny), d_hn = golden_dev_zero(g, ns),
           d_cn = golden_dev_zero(g, ns), d_dx = golden_dev_zero(g, nx),
           d_dp = golden_dev_zero(g, np);
    ct_buf d_ws = golden_dev_zero(g, ct_lstm_workspace_size(&d) / sizeof(float));
    if (golden_status(g, ct_lstm_forward(ctx, &d, d_y, d_hn, d_cn, d_x, d_p, d_ws),
                      "lstm forward") ||
        golden_status(g, ct_lstm_backward(ctx, &d, d_dx, d_dp, d_dy, d_x, d_p, d_ws),
                      "lstm backward"))
        return;

    static const char *const outs[4] = { "y", "h_n", "c_n", "dx" };
    const double *refs[4] = { y, hn, cn, dx };
    const ct_buf devs[4] = { d_y, d_hn, d_cn, d_dx };
    for (int i = 0; i < 4; i++) {
        golden_expect_host(g, outs[i], refs[i], outs[i], tol, tol);
        golden_expect_dev(g, outs[i], devs[i], outs[i], tol + b16[i], tol);
    }
    golden_rnn_expect_dparams(g, &d, 4, dp, d_dp, tol, b16[4]);
}
