/*
 * act.c - checks of the activations (src/ops/act.c) against src/ref/act.c.
 *
 * Tolerance: one float rounding of x plus the device's libm (OpenCL allows
 * up to 4 ulp for exp/tanh, 16 for erf): atol 1e-6, rtol 1e-5 forward and
 * backward, well below any wrong formula.
 *
 * 16-bit activation storage (runs at bf16 or fp16 precision, GPU class):
 * x, y, dy and dx are stored in the format (unit roundoff u: 2^-8 bf16,
 * 2^-11 fp16; fp16's subnormal half step s = 2^-25), x and dy exact in it.
 * The float result within the float32 tolerance above is rounded once to
 * the format: rtol 1e-5 + u (1 + 1e-5), atol 1e-6 (1 + u) + s. Sigmoid's
 * and tanh's derivatives read the stored y, off by u |y| + s: dx moves by
 * |dy| |d f'/dy| (u |y| + s) on top, |1 - 2y| for sigmoid and 2|y| for
 * tanh; the largest such term over the case joins atol.
 */
#include <math.h>

#include "check/check.h"
#include "host/eltwise_host.h"
#include "ref/act.h"

typedef struct act_loss {
    ct_act act;
    const double *x, *w;
    double *y;
    size_t n;
} act_loss;

static double loss_of_x(void *user)
{
    act_loss *l = user;
    ct_ref_act_forward(l->act, l->y, l->x, l->n);
    return ck_dot(l->y, l->w, l->n);
}

typedef struct act_bench {
    ct_context *ctx;
    ct_act act;
    ct_buf x, y, dy, dx;
    size_t n;
} act_bench;

static int bench_run(void *user)
{
    act_bench *b = user;
    int st = ct_act_forward(b->ctx, b->act, b->y, b->x, b->n);
    return st ? st : ct_act_backward(b->ctx, b->act, b->dx, b->dy, b->x, b->y, b->n);
}

static void one_case_on(ct_check *c, ct_act act, size_t n);

/* Each case runs the per-element kernels of the GPU class and the float8
 * chunk kernels of the CPU class, switching the context to each
 * (ck_use_class; src/ops/act.c), and at 16-bit precision the GPU class's
 * kernels again with activations stored in that format. */
static void one_case(ct_check *c, ct_act act, size_t n)
{
    for (int cpu = 0; cpu <= 1 && !ck_failed(c); cpu++) {
        ct_kernels real = ck_use_class(c, cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
        ck_case(c, "%s n=%zu, %s kernels", ct_act_name(act), n, cpu ? "cpu" : "gpu");
        one_case_on(c, act, n);
        if (!cpu)
            ck_case_end(c);
        ck_use_class(c, real);
    }
    ck_act16_state s;
    if (ck_act16_begin(c, &s)) {
        ck_case(c, "%s n=%zu, gpu kernels, 16-bit activations", ct_act_name(act), n);
        one_case_on(c, act, n);
        ck_act16_end(c, &s);
    }
}

static void one_case_on(ct_check *c, ct_act act, size_t n)
{
    ct_context *ctx = ck_ctx(c);
    double *x = ck_host(c, n), *y = ck_host(c, n), *dy = ck_host(c, n), *dx = ck_host(c, n);
    if (ck_failed(c))
        return;
    /* relu6 over [-8, 8], so that both its flat parts are reached */
    double span = act == CT_ACT_RELU6 ? 8 : 4;
    ck_fill(c, x, n, -span, span);
    ck_fill(c, dy, n, -1, 1);
    /* keep the kinks (0; hardswish's -3 and 3; relu6's 6) out of reach of
     * rounding and finite differences: 1e-3 in float, 1/16 in 16 bits (the
     * kinks +- 1/16 are exact in both formats, so rounding, monotonic,
     * brings no input nearer) */
    static const double kinks[] = { 0, -3, 3, 6 };
    const int f = ck_act16(c);
    const double clear = f ? 0.0625 : 1e-3;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < CT_ARRAY_LEN(kinks); k++)
            if (fabs(x[i] - kinks[k]) < clear)
                x[i] = x[i] < kinks[k] ? kinks[k] - clear : kinks[k] + clear;
    /* the device sees these exact values */
    ck_round_act(c, x, n);
    ck_round_act(c, dy, n);
    ct_ref_act_forward(act, y, x, n);
    ct_ref_act_backward(act, dx, dy, x, n);

    const double u = f ? ck_prec_u((ct_precision)f) : 0, s = f ? ck_prec_sub((ct_precision)f) : 0;
    const double rtol = 1e-5 + u * (1 + 1e-5);
    double atol = 1e-6 * (1 + u) + s, ydep = 0;
    for (size_t i = 0; f && i < n && (act == CT_ACT_SIGMOID || act == CT_ACT_TANH); i++) {
        double slope = act == CT_ACT_SIGMOID ? fabs(1 - 2 * y[i]) : 2 * fabs(y[i]);
        ydep = fmax(ydep, fabs(dy[i]) * slope * (u * fabs(y[i]) + s));
    }
    ct_buf dx_in = ck_act_in(c, x, n), dy_in = ck_act_in(c, dy, n);
    ct_buf d_y = ck_act_out(c, n), d_dx = ck_act_out(c, n);
    if (ck_failed(c))
        return;
    if (ck_status(c, ct_act_forward(ctx, act, d_y, dx_in, n), "act forward"))
        return;
    ck_expect(c, "forward y", d_y, n, y, atol, rtol);
    if (ck_status(c, ct_act_backward(ctx, act, d_dx, dy_in, dx_in, d_y, n), "act backward"))
        return;
    ck_expect(c, "backward dx", d_dx, n, dx, atol + ydep * (1 + 1e-5), rtol);

    act_loss l = { act, x, dy, ck_host(c, n), n };
    ck_gradcheck(c, "reference dx", loss_of_x, &l, x, n, dx, 32);
}

void ct_check_act(ct_check *c)
{
    for (int a = CT_ACT_RELU; a < CT_ACT_COUNT && !ck_failed(c); a++) {
        one_case(c, (ct_act)a, 1);
        ck_case_end(c);
        if (ct_eltwise_host_act((ct_act)a) && !ck_failed(c)) {
            /* the CPU class's host loops: three items of 16384, the last ragged */
            one_case(c, (ct_act)a, 2 * 16384 + CT_ELTWISE_HOST_MIN + 77);
            ck_case_end(c);
        }
        for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
            /* up to a few chunks of the CPU kernels, ragged at the end */
            one_case(c, (ct_act)a, (size_t)ck_dim(c, 9000));
            ck_case_end(c);
        }
    }
    if (ck_benchmarking(c) && !ck_failed(c)) {
        size_t n = (size_t)1 << 22;
        ck_case(c, "bench gelu n=%zu", n);
        act_bench b = { ck_ctx(c), CT_ACT_GELU, ck_dev_const(c, n, 0.5), ck_dev_out(c, n),
                        ck_dev_const(c, n, 1), ck_dev_out(c, n), n };
        if (!ck_failed(c))
            ck_bench(c, "gelu 4M", 0.0, 5.0 * 4 * (double)n, bench_run, &b);
        ck_case_end(c);
    }
}
