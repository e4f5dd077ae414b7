/*
 * lstm.c - checks of the multi-layer LSTM (src/ops/lstm.c) against
 * src/ref/lstm.c, on both GEMM paths and in both device classes (each case
 * runs its launchers in the CPU class, then in the GPU class).
 *
 * Tolerances (u = 2^-24, float's unit roundoff). Every gate pre-activation
 * is a float dot product of K = in + H + 2 terms (in = max(input, H)), and
 * each step's error reaches later steps through c_t (damped by f < 1) and
 * through h_{t-1} W_hhᵀ, and the next layer's inputs; so errors add up
 * over the T steps and L layers. With |terms| <= 1 rounding errors grow
 * like sqrt(K) (they are not all of one sign; GEMMs block their sums), so
 * forward:  atol = rtol = 4 u sqrt(K) T L.
 * The backward repeats this in reverse (dh_{t-1} = dgates W_hh has 4H
 * terms) and then sums T N products for dW and db:
 * backward: atol = rtol = 4 u sqrt(max(K, 4H, T N)) T L
 * (ck_rnn_tol, check/rnn.c, with G = 4 gates).
 * The factor 4 covers the device's tanh/exp (up to 4 ulp in OpenCL) and
 * the gate derivatives built from rounded activations; over 240 random cases
 * (seeds 1-12) the worst error was 9% of this tolerance, and the sqrt(K)
 * T L growth keeps that margin as shapes grow (the recurrence adds errors
 * more slowly than T L). For the largest random case (T 9, L 3, K 32) it is
 * 3.7e-5 forward: a wrong gate order, bias or time index errs by 1e-2 or
 * more, and leaving out the recurrent product of a single step (forward or
 * backward) is caught too (tried by mutating the launcher).
 * With 16-bit products (--precision bf16|fp16) each atol adds the largest
 * of ct_ref_lstm_bound16's per-element bounds for the tensor (every
 * product's operands rounded, the errors carried through the cells and
 * through time: ref/rnn_bound.h); over seeds 1-4 the worst error was 0.40
 * of the tolerance.
 */
#include <math.h>

#include "check/rnn.h"
#include "ref/lstm.h"

typedef struct lstm_loss {
    const ct_lstm_desc *d;
    const double *x, *params, *dy;
    double *y;
} lstm_loss;

static double loss(void *user)
{
    lstm_loss *l = user;
    if (ct_ref_lstm_forward(l->d, l->y, NULL, NULL, l->x, l->params))
        return NAN;
    return ck_dot(l->y, l->dy, (size_t)l->d->T * (size_t)l->d->N * (size_t)l->d->hidden);
}

/* the forward without final states, for the benchmark */
static int forward_y(ct_context *ctx, const ct_rnn_desc *d, ct_buf y, ct_buf x, ct_buf params, ct_buf ws)
{
    ct_buf none = { NULL, 0 };
    return ct_lstm_forward(ctx, d, y, none, none, x, params, ws);
}

/* The launchers in the context's current class against the reference's
 * y, h_n, c_n, dx and accumulated dparams (dp). */
static void run_device(ct_check *c, const ct_lstm_desc *d, const ck_rnn_data *r, const double *y, const double *hn,
                       const double *cn, const double *dx, const double *dp, const double *b16)
{
    ct_context *ctx = ck_ctx(c);
    size_t ns = (size_t)d->layers * (size_t)d->N * (size_t)d->hidden, np = ct_lstm_param_count(d);
    size_t nws = ct_lstm_workspace_size(d) / sizeof(float), nx = r->nx, ny = r->ny;
    double tol_f = ck_rnn_tol(d, 4, 0), tol_b = ck_rnn_tol(d, 4, 1);
    ct_buf d_x = ck_dev_in(c, r->x, nx), d_p = ck_dev_in(c, r->p, np), d_dy = ck_dev_in(c, r->dy, ny);
    ct_buf d_y = ck_dev_out(c, ny), d_hn = ck_dev_out(c, ns), d_cn = ck_dev_out(c, ns);
    ct_buf d_ws = ck_dev_out(c, nws), d_dx = ck_dev_out(c, nx);
    ct_buf d_dp0 = ck_dev_in(c, r->dp0, np), d_dp = ck_dev_out(c, np);
    if (ck_failed(c))
        return;
    /* the accumulated gradient goes to a buffer with output guards */
    if (ck_status(c, ct_copy(ctx, d_dp, d_dp0, np), "copy") ||
        ck_status(c, ct_lstm_forward(ctx, d, d_y, d_hn, d_cn, d_x, d_p, d_ws), "lstm forward"))
        return;
    ck_expect(c, "forward y", d_y, ny, y, tol_f + b16[0], tol_f);
    ck_expect(c, "forward h_n", d_hn, ns, hn, tol_f + b16[1], tol_f);
    ck_expect(c, "forward c_n", d_cn, ns, cn, tol_f + b16[2], tol_f);
    if (ck_status(c, ct_lstm_backward(ctx, d, d_dx, d_dp, d_dy, d_x, d_p, d_ws), "lstm backward"))
        return;
    ck_expect(c, "backward dx", d_dx, nx, dx, tol_b + b16[3], tol_b);
    ck_expect(c, "backward dparams (accumulated)", d_dp, np, dp, tol_b + b16[4], tol_b);
}

static void one_case(ct_check *c, const ct_lstm_desc *d)
{
    ck_case(c, "T=%d N=%d input=%d hidden=%d layers=%d", d->T, d->N, d->input, d->hidden,
            d->layers);
    size_t N = (size_t)d->N, H = (size_t)d->hidden, L = (size_t)d->layers, ns = L * N * H;
    size_t np = ct_lstm_param_count(d);
    ck_rnn_data r;
    if (!ck_rnn_data_make(c, d, np, &r))
        return;
    size_t nx = r.nx, ny = r.ny;
    double *x = r.x, *p = r.p, *dy = r.dy, *y = ck_host(c, ny);
    double *hn = ck_host(c, ns), *cn = ck_host(c, ns), *dx = ck_host(c, nx);
    double *g = ck_host(c, np), *dp = ck_host(c, np);
    if (ck_failed(c))
        return;
    if (ck_status(c, ct_ref_lstm_forward(d, y, hn, cn, x, p), "reference forward") ||
        ck_status(c, ct_ref_lstm_backward(d, dx, g, dy, x, p), "reference backward"))
        return;
    for (size_t i = 0; i < np; i++)
        dp[i] = r.dp0[i] + g[i];
    /* what 16-bit operands add (0 in float32): y, h_n, c_n, dx, dparams */
    double b16[5];
    if (ck_status(c, ck_rnn_bound16(ct_context_precision(ck_ctx(c)), d, 4, dy, x, p, b16), "16-bit bound"))
        return;
    /* each case in the CPU class, then in the GPU class (ck_use_class) */
    for (int cls = 0; cls < 2 && !ck_failed(c); cls++) {
        ct_kernels real = ck_use_class(c, cls ? CT_KERNELS_GPU : CT_KERNELS_CPU);
        if (!ck_failed(c))
            run_device(c, d, &r, y, hn, cn, dx, dp, b16);
        ck_use_class(c, real);
    }
    lstm_loss l = { d, x, p, dy, ck_host(c, ny) };
    ck_gradcheck(c, "reference dx", loss, &l, x, nx, dx, 24);
    ck_rnn_gradcheck_params(c, d, 4, loss, &l, p, g);
}

void ct_check_lstm(ct_check *c)
{
    static const ck_rnn_family f = { 4, ct_lstm_workspace_size, forward_y, ct_lstm_backward, one_case };
    ck_rnn_run(c, &f);
}
