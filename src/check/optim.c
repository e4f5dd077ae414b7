/*
 * optim.c - checks of the optimizers and gradient clipping (src/optim/)
 * against src/ref/optim.c.
 *
 * Finite differences do not apply: an optimizer step is an update rule,
 * not the gradient of a loss, so there is no reference gradient to probe;
 * the references are checked against PyTorch's own steps by the golden
 * vectors instead (tests/golden/optim.c).
 *
 * Each case runs several steps with a scheduled learning rate, the state
 * living on the device between steps (it starts as the NaN canary: the
 * first step must write it without reading it). After every step params and
 * state are compared, then the reference takes the device's float values as
 * its next starting point, so a comparison covers one step's rounding, not
 * an accumulated drift.
 *
 * Tolerances, u = 2^-24 = 6e-8 (a float rounding; OpenCL's sqrt may err by
 * 3 ulp, division by 2.5 ulp), one step from float inputs. The draws bound
 * |p| <= ~3, |g| <= 1 (with weight decay <= 1.2), lr <= 0.1 (Adam 0.01),
 * mu <= 0.95 and <= 5 steps, so |b| <= 6 and |g + mu b| <= 7:
 *   params: SGD rounds g + wd p, the momentum sums, g + mu b, lr g and p - lr g:
 *     <= u (|p| + |lr g_eff|) + lr 34 u (g_eff's own error) <= u (|p| + 4.1);
 *     Adam's update is <= ~0.02 with <= 20 u relative error, plus the decay
 *     (the float 1 - lr wd and its product): <= u (2 |p| + 1). atol 1e-6
 *     (16 u), rtol 1e-6 (16 u).
 *   SGD momentum b = mu b + (1 - d) g: <= u (|mu b| + 2 |g| + |b_new|)
 *     <= 8.1 u + u |b|: atol 1e-6, rtol 1e-6.
 *   Adam m = b1 m + (1 - b1) g, likewise with |m| <= 1.2, and the float
 *     1 - b1: <= u (|b1 m| + 3 |(1 - b1) g| + |m_new|) <= 1.9 u + u |m|:
 *     atol 3e-7 (5 u), rtol 1e-6 (the whole state buffer, guards included).
 *     v: positive terms, <= 5 u relative: rtol 1e-6, atol 1e-12 (v is 0
 *     only where g was), through a view of the second half.
 *   grad norm: squares (u each), per-work-item Kahan (~2 u), two trees of
 *     <= 8 levels on positive values (<= 16 u), sqrt (<= 3 ulp, and it
 *     halves the sum's relative error): <= ~15 u ~ 9e-7 relative: rtol 2e-6.
 *   clipped g: the coefficient max_norm / (norm + 1e-6) inherits the norm's
 *     error plus the division's 2.5 ulp and 2 roundings: rtol 3e-6.
 */
#include <math.h>

#include "check/check.h"
#include "optim/schedule.h"
#include "ref/optim.h"

/* x = the device's floats (the reference's next starting point). */
static int read_back(ct_check *c, double *x, ct_buf b, size_t n)
{
    float *h = (float *)(void *)ck_host(c, n);
    if (ck_failed(c))
        return -1;
    if (ck_status(c, ct_buffer_read(ck_ctx(c), b.mem, (size_t)b.off * sizeof(float),
                                    n * sizeof(float), h),
                  "reading back"))
        return -1;
    for (size_t i = 0; i < n; i++)
        x[i] = h[i];
    return 0;
}

static void round_f(double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(float)x[i];
}

/* The variants: 0 sgd, 1 sgd + momentum (+ dampening), 2 sgd nesterov,
 * 3 adam, 4 adamw. Weight decay is drawn on or off for each. */
enum { V_SGD, V_MOMENTUM, V_NESTEROV, V_ADAM, V_ADAMW, V_COUNT };

static ct_optim_desc draw_desc(ct_check *c, int variant)
{
    ct_optim_desc d;
    ct_optim_defaults(&d, variant == V_ADAM ? CT_OPT_ADAM : variant == V_ADAMW ? CT_OPT_ADAMW
                                                                              : CT_OPT_SGD);
    d.weight_decay = ck_int(c, 0, 1) ? (float)ck_uniform(c, 0.001, 0.1) : 0.0f;
    switch (variant) {
    case V_MOMENTUM:
        d.momentum = (float)ck_uniform(c, 0.5, 0.95);
        d.dampening = ck_int(c, 0, 1) ? (float)ck_uniform(c, 0.1, 0.5) : 0.0f;
        break;
    case V_NESTEROV:
        d.momentum = (float)ck_uniform(c, 0.5, 0.95);
        d.nesterov = 1;
        break;
    case V_ADAM:
    case V_ADAMW:
        d.beta1 = (float)ck_uniform(c, 0.8, 0.95);
        d.beta2 = (float)ck_uniform(c, 0.99, 0.9999);
        d.eps = ck_int(c, 0, 1) ? 1e-8f : 1e-6f;
        break;
    default:
        break;
    }
    return d;
}

/* A schedule of any kind, with or without warm-up, around base_lr. */
static ct_lr_schedule draw_schedule(ct_check *c, double base_lr)
{
    ct_lr_schedule s = { .kind = (ct_lr_kind)ck_int(c, 0, CT_LR_COUNT - 1),
                         .base_lr = (float)base_lr,
                         .step_size = ck_int(c, 1, 3),
                         .gamma = (float)ck_uniform(c, 0.1, 0.9),
                         .total = ck_int(c, 1, 6),
                         .min_lr = (float)(base_lr * ck_uniform(c, 0, 0.1)),
                         .warmup = ck_int(c, 0, 2),
                         .warmup_start = (float)ck_uniform(c, 0.1, 1) };
    return s;
}

static void optim_case(ct_check *c, int variant, size_t n, int steps, int clip)
{
    ct_context *ctx = ck_ctx(c);
    ct_optim_desc d = draw_desc(c, variant);
    int sgd = d.kind == CT_OPT_SGD;
    ct_lr_schedule sched = draw_schedule(c, sgd ? ck_uniform(c, 0.01, 0.1) : ck_uniform(c, 1e-3, 1e-2));
    size_t ns = ct_optim_state_size(&d, n);
    ck_case(c, "%s mu=%g damp=%g nesterov=%d wd=%g betas=(%g,%g) eps=%g schedule=%s warmup=%ld "
            "n=%zu steps=%d clip=%d", ct_optim_name(d.kind), (double)d.momentum,
            (double)d.dampening, d.nesterov, (double)d.weight_decay, (double)d.beta1,
            (double)d.beta2, (double)d.eps, ct_lr_kind_name(sched.kind), sched.warmup, n, steps,
            clip);
    double *p = ck_host(c, n), *g = ck_host(c, n), *state = ck_host(c, ns ? ns : 1);
    double *norm_ref = ck_host(c, 1);
    if (ck_failed(c) || ck_status(c, ct_optim_validate(ctx, &d), "optimizer description") ||
        ck_status(c, ct_lr_schedule_validate(ctx, &sched), "schedule"))
        return;
    ck_fill(c, p, n, -2, 2);
    round_f(p, n);
    ct_buf d_p = ck_dev_inout(c, p, n);
    ct_buf d_state = ns ? ck_dev_out(c, ns) : (ct_buf){ NULL, 0 };
    ct_buf d_norm = ck_dev_out(c, 1), d_ws = ck_dev_out(c, ct_grad_norm_workspace_size(n));
    for (int s = 1; s <= steps && !ck_failed(c); s++) {
        double lr = ct_lr_at(&sched, s - 1);
        ck_fill(c, g, n, -1, 1);
        round_f(g, n);
        ct_buf d_g = ck_dev_inout(c, g, n);
        if (ck_failed(c))
            return;
        if (clip) {
            /* about half the steps clip: the norm of n uniform(-1, 1) is ~sqrt(n / 3) */
            double max_norm = (float)(sqrt((double)n / 3) * ck_uniform(c, 0.5, 1.5));
            norm_ref[0] = ct_ref_grad_norm(g, n);
            ct_ref_grad_clip(g, n, norm_ref[0], max_norm);
            if (ck_status(c, ct_grad_norm(ctx, d_norm, d_g, n, d_ws), "grad norm"))
                return;
            ck_expect(c, "grad norm", d_norm, 1, norm_ref, 0, 2e-6);
            if (ck_status(c, ct_grad_clip(ctx, d_g, n, d_norm, (float)max_norm), "grad clip"))
                return;
            ck_expect(c, "clipped grads", d_g, n, g, 0, 3e-6);
            if (read_back(c, g, d_g, n))
                return;
        }
        ct_ref_optim_step(&d, p, g, state, n, s, lr);
        /* the last step also zeroes the gradients (the same update, then 0) */
        int zero = s == steps;
        if (ck_status(c, (zero ? ct_optim_step_zero_grads : ct_optim_step)(ctx, &d, d_p, d_g, d_state, n,
                                                                           s, (float)lr),
                      "optimizer step"))
            return;
        if (zero) {
            for (size_t i = 0; i < n; i++)
                g[i] = 0;
            ck_expect(c, "gradients zeroed", d_g, n, g, 0, 0);
        }
        ck_expect(c, "params", d_p, n, p, 1e-6, 1e-6);
        if (sgd && ns)
            ck_expect(c, "momentum buffer", d_state, n, state, 1e-6, 1e-6);
        if (!sgd) {
            /* the whole state with m's tolerance (and its guard bands), then
             * v, which is much smaller, through a view with its own */
            ck_expect(c, "adam state (m, v)", d_state, ns, state, 3e-7, 1e-6);
            ck_expect(c, "adam v", ct_buf_at(d_state, n), n, state + n, 1e-12, 1e-6);
        }
        if (read_back(c, p, d_p, n) || (ns && read_back(c, state, d_state, ns)))
            return;
    }
}

/* The norm of an empty buffer is 0, a large one takes every group (with
 * strided shares), and every one is reproducible bit for bit. */
static void norm_case(ct_check *c, size_t n)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "grad norm n=%zu", n);
    double *g = ck_host(c, n), *norm = ck_host(c, 1);
    if (ck_failed(c))
        return;
    ck_fill(c, g, n, -1, 1);
    round_f(g, n);
    norm[0] = ct_ref_grad_norm(g, n);
    ct_buf d_g = n ? ck_dev_in(c, g, n) : (ct_buf){ NULL, 0 };
    ct_buf d_norm = ck_dev_out(c, 1), d_ws = ck_dev_out(c, ct_grad_norm_workspace_size(n));
    if (ck_failed(c) || ck_status(c, ct_grad_norm(ctx, d_norm, d_g, n, d_ws), "grad norm"))
        return;
    ck_expect(c, "grad norm", d_norm, 1, norm, 0, 2e-6);
    /* the reduction order is fixed: a second run gives the same bits */
    double *first = ck_host(c, 1);
    ct_buf d_again = ck_dev_out(c, 1);
    if (read_back(c, first, d_norm, 1) ||
        ck_status(c, ct_grad_norm(ctx, d_again, d_g, n, d_ws), "grad norm, second run"))
        return;
    ck_expect(c, "grad norm, second run (bitwise)", d_again, 1, first, 0, 0);
}

typedef struct optim_bench {
    ct_context *ctx;
    ct_optim_desc d;
    ct_buf p, g, state;
    size_t n;
    long step;
} optim_bench;

static int bench_run(void *user)
{
    optim_bench *b = user;
    b->step++;
    return ct_optim_step(b->ctx, &b->d, b->p, b->g, b->state, b->n, b->step, 1e-3f);
}

void ct_check_optim(ct_check *c)
{
    norm_case(c, 0);
    ck_case_end(c);
    norm_case(c, 1);
    ck_case_end(c);
    norm_case(c, 200003); /* > 256 groups of 256: strided shares */
    ck_case_end(c);
    for (int v = 0; v < V_COUNT && !ck_failed(c); v++) {
        optim_case(c, v, 1, 3, 0);
        ck_case_end(c);
        optim_case(c, v, 1, 2, 1);
        ck_case_end(c);
        /* past the host threshold (optim_host.h) on the CPU class: more than
         * one 65536-element item and a tail that is not a whole vector (not
         * on simulators: the kernels' paths are the random cases', and the
         * host path runs no kernel) */
        if (!ck_small(c)) {
            optim_case(c, v, 65536 + 4096 + 37, 3, v & 1);
            ck_case_end(c);
        }
        for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
            optim_case(c, v, (size_t)ck_dim(c, 5000), ck_int(c, 1, 5), ck_int(c, 0, 1));
            ck_case_end(c);
        }
    }
    if (ck_benchmarking(c) && !ck_failed(c)) {
        size_t n = (size_t)1 << 22;
        ck_case(c, "bench adamw n=%zu", n);
        optim_bench b = { ck_ctx(c), { 0 }, ck_dev_const(c, n, 0.5), ck_dev_const(c, n, 0.01),
                          ck_dev_const(c, 2 * n, 0), n, 0 };
        ct_optim_defaults(&b.d, CT_OPT_ADAMW);
        /* per element: p, g, m, v read; p, m, v written; ~16 flops */
        if (!ck_failed(c))
            ck_bench(c, "adamw 4M", 16.0 * (double)n, 7.0 * 4 * (double)n, bench_run, &b);
        ck_case_end(c);
    }
}
