/*
 * gru.c - checks of the multi-layer GRU (src/ops/gru.c) against
 * src/ref/gru.c, on both GEMM paths and in both device classes (each case
 * runs its launchers in the CPU class, then in the GPU class: ck_use_class;
 * the CPU class on the host GEMM path of an AVX-512 CPU runs the host
 * steps of host/gru_host.c, elsewhere the kernels of gru.cl).
 *
 * Tolerances: the LSTM's reasoning (check/lstm.c) holds step for step.
 * Every gate pre-activation is a float dot product of K = in + H + 2 terms
 * (in = max(input, H)); each step's error reaches later steps through
 * z h_{t-1} (damped by z < 1) and through h_{t-1} W_hhᵀ, and the next
 * layer's inputs, so errors add up over the T steps and L layers:
 * forward:  atol = rtol = 4 u sqrt(K) T L,
 * backward: atol = rtol = 4 u sqrt(max(K, 3H, T N)) T L
 * (u = 2^-24; dh_{t-1} = dgh W_hh has 3H terms, dW and db sum T N
 * products; ck_rnn_tol with G = 3). The factor 4 covers the device's
 * tanh/exp (up to 4 ulp in OpenCL) and the gate derivatives built from
 * rounded activations. Over seeds 1-12 (8 random cases each, both classes,
 * both GEMM paths) the worst error was 7% of this tolerance; a gate order,
 * bias or time index gone wrong errs by 1e-2 or more, and leaving out the
 * r scaling of the hidden n block or the recurrent product of a single
 * backward step is caught too (tried by mutating the kernel and launcher).
 */
#include <math.h>
#include <stdio.h>

#include "check/rnn.h"
#include "ref/gru.h"

typedef struct gru_loss {
    const ct_gru_desc *d;
    const double *x, *params, *dy;
    double *y;
} gru_loss;

static double loss(void *user)
{
    gru_loss *l = user;
    if (ct_ref_gru_forward(l->d, l->y, NULL, l->x, l->params))
        return NAN;
    return ck_dot(l->y, l->dy, (size_t)l->d->T * (size_t)l->d->N * (size_t)l->d->hidden);
}

/* The launchers on the device in the context's current class, against the
 * reference's y, h_n, dx and dp (= dp0 + its gradient). */
static void run_device(ct_check *c, const ct_gru_desc *d, const ck_rnn_data *r, const double *y,
                       const double *hn, const double *dx, const double *dp, const double *b16)
{
    ct_context *ctx = ck_ctx(c);
    size_t ns = (size_t)d->layers * (size_t)d->N * (size_t)d->hidden;
    size_t nws = ct_gru_workspace_size(d) / sizeof(float);
    ct_buf d_x = ck_dev_in(c, r->x, r->nx), d_p = ck_dev_in(c, r->p, r->np);
    ct_buf d_dy = ck_dev_in(c, r->dy, r->ny), d_y = ck_dev_out(c, r->ny), d_hn = ck_dev_out(c, ns);
    ct_buf d_ws = ck_dev_out(c, nws), d_dx = ck_dev_out(c, r->nx);
    ct_buf d_dp = ck_dev_inout(c, r->dp0, r->np);
    double tol_f = ck_rnn_tol(d, 3, 0), tol_b = ck_rnn_tol(d, 3, 1);
    const char *cls = ct_kernels_str(ct_context_kernels(ctx));
    char what[4][64];
    static const char *const whats[4] = { "forward y", "forward h_n", "backward dx",
                                          "backward dparams (accumulated)" };
    for (int i = 0; i < 4; i++)
        snprintf(what[i], sizeof what[i], "%s, %s class", whats[i], cls);
    if (ck_failed(c) ||
        ck_status(c, ct_gru_forward(ctx, d, d_y, d_hn, d_x, d_p, d_ws), "gru forward"))
        return;
    ck_expect(c, what[0], d_y, r->ny, y, tol_f + b16[0], tol_f);
    ck_expect(c, what[1], d_hn, ns, hn, tol_f + b16[1], tol_f);
    if (ck_status(c, ct_gru_backward(ctx, d, d_dx, d_dp, d_dy, d_x, d_p, d_ws), "gru backward"))
        return;
    ck_expect(c, what[2], d_dx, r->nx, dx, tol_b + b16[2], tol_b);
    ck_expect(c, what[3], d_dp, r->np, dp, tol_b + b16[3], tol_b);
}

static void one_case(ct_check *c, const ct_gru_desc *d)
{
    ck_case(c, "T=%d N=%d input=%d hidden=%d layers=%d", d->T, d->N, d->input, d->hidden,
            d->layers);
    size_t ns = (size_t)d->layers * (size_t)d->N * (size_t)d->hidden, np = ct_gru_param_count(d);
    ck_rnn_data r;
    if (!ck_rnn_data_make(c, d, np, &r))
        return;
    double *y = ck_host(c, r.ny), *hn = ck_host(c, ns), *dx = ck_host(c, r.nx);
    double *g = ck_host(c, np), *dp = ck_host(c, np);
    if (ck_failed(c) ||
        ck_status(c, ct_ref_gru_forward(d, y, hn, r.x, r.p), "reference forward") ||
        ck_status(c, ct_ref_gru_backward(d, dx, g, r.dy, r.x, r.p), "reference backward"))
        return;
    for (size_t i = 0; i < np; i++)
        dp[i] = r.dp0[i] + g[i];
    /* what 16-bit operands add (0 in float32): y, h_n, dx, dparams */
    double b16[4];
    if (ck_status(c, ck_rnn_bound16(ct_context_precision(ck_ctx(c)), d, 3, r.dy, r.x, r.p, b16), "16-bit bound"))
        return;
    for (int cls = 0; cls < 2 && !ck_failed(c); cls++) {
        ct_kernels real = ck_use_class(c, cls ? CT_KERNELS_GPU : CT_KERNELS_CPU);
        if (!ck_failed(c))
            run_device(c, d, &r, y, hn, dx, dp, b16);
        ck_use_class(c, real);
    }
    gru_loss l = { d, r.x, r.p, r.dy, ck_host(c, r.ny) };
    ck_gradcheck(c, "reference dx", loss, &l, r.x, r.nx, dx, 24);
    ck_rnn_gradcheck_params(c, d, 3, loss, &l, r.p, g);
}

/* the forward without final states, for the benchmark */
static int forward_y(ct_context *ctx, const ct_rnn_desc *d, ct_buf y, ct_buf x, ct_buf params, ct_buf ws)
{
    ct_buf none = { NULL, 0 };
    return ct_gru_forward(ctx, d, y, none, x, params, ws);
}

void ct_check_gru(ct_check *c)
{
    static const ck_rnn_family f = { 3, ct_gru_workspace_size, forward_y, ct_gru_backward, one_case };
    ck_rnn_run(c, &f);
}
