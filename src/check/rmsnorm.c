/*
 * rmsnorm.c - checks of RMS normalization (src/ops/rmsnorm.c) against
 * src/ref/rmsnorm.c: forward (y and the saved rstd) and backward (dx
 * written, then added; dw accumulated onto random values), both device
 * classes, a row of 1 feature, rows of sizes no multiple of the work-group
 * size and beyond it, and rows far from zero.
 *
 * Tolerances, with u = 2^-24 and per row r: X = max|xhat| (xhat = x rstd),
 * G = max|dy w|. The row's float sum of F squares errs by (F - 1) u of
 * itself, so rstd by about (F / 2 + 4) u relative, and xhat by
 * E = (F + 8) u X. Then
 *   - y: 2 max|w| E, rtol 4u; rstd: (F + 8) u relative;
 *   - dx = rstd (g - xhat mean(g xhat)): each term's error at most E or F u
 *     relative to rstd G (1 + X)^2, taken with a factor 8:
 *     8 (F + 8) u rstd G (1 + X)^2; added into 0.5, 2u more relative;
 *   - dw: R terms of dy xhat, (R + 2) u max_f sum_r |dy xhat| (and the
 *     starting value) plus 2 max_f sum_r |dy| E_r (xhat's own error).
 * The reference's dx and dw are checked against central finite differences
 * of sum(y * dy).
 */
#include <math.h>

#include "check/check.h"
#include "ops/rmsnorm.h"
#include "ref/rmsnorm.h"

#define U 5.9604644775390625e-8 /* 2^-24 */

typedef struct rms_loss {
    const double *x, *w, *dy;
    double *y;
    size_t R, F;
    double eps;
} rms_loss;

static double loss_fn(void *user)
{
    rms_loss *l = user;
    ct_ref_rmsnorm_forward(l->y, NULL, l->x, l->w, l->R, l->F, l->eps);
    return ck_dot(l->y, l->dy, l->R * l->F);
}

static void one_case(ct_check *c, size_t R, size_t F, double offset, float eps)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "rmsnorm R=%zu F=%zu, offset %g, eps %g, %s class", R, F, offset, (double)eps,
            ct_kernels_str(ct_context_kernels(ctx)));
    size_t n = R * F;
    double *x = ck_host(c, n), *w = ck_host(c, F), *dy = ck_host(c, n), *y = ck_host(c, n);
    double *rstd = ck_host(c, R), *dx = ck_host(c, n), *dw0 = ck_host(c, F), *dw = ck_host(c, F);
    double *absdyxh = ck_host(c, F), *dyE = ck_host(c, F), *dx2 = ck_host(c, n);
    if (ck_failed(c))
        return;
    ck_fill(c, x, n, -1, 1);
    for (size_t r = 0; r < R && offset > 0; r++) {
        double o = ck_uniform(c, -offset, offset);
        for (size_t f = 0; f < F; f++)
            x[r * F + f] += o;
    }
    ck_fill(c, w, F, -1.5, 1.5);
    ck_fill(c, dy, n, -1, 1);
    ck_fill(c, dw0, F, -1, 1);
    ck_round_f32(x, n);
    ck_round_f32(w, F);
    ck_round_f32(dy, n);
    ck_round_f32(dw0, F);
    for (size_t f = 0; f < F; f++)
        dw[f] = dw0[f];
    ct_ref_rmsnorm_forward(y, rstd, x, w, R, F, eps);
    ct_ref_rmsnorm_backward(dx, dw, dy, x, w, R, F, eps);

    double wmax = 0, ytol = 0, dxtol = 0, dwtol = 0;
    for (size_t f = 0; f < F; f++)
        wmax = fmax(wmax, fabs(w[f]));
    for (size_t r = 0; r < R; r++) {
        double X = 0, G = 0;
        for (size_t f = 0; f < F; f++) {
            X = fmax(X, fabs(x[r * F + f] * rstd[r]));
            G = fmax(G, fabs(dy[r * F + f] * w[f]));
        }
        double E = (double)(F + 8) * U * X;
        ytol = fmax(ytol, 2 * wmax * E);
        dxtol = fmax(dxtol, 8 * (double)(F + 8) * U * rstd[r] * G * (1 + X) * (1 + X));
        for (size_t f = 0; f < F; f++) {
            absdyxh[f] += fabs(dy[r * F + f] * x[r * F + f] * rstd[r]);
            dyE[f] += fabs(dy[r * F + f]) * E;
        }
    }
    for (size_t f = 0; f < F; f++)
        dwtol = fmax(dwtol, (double)(R + 2) * U * (absdyxh[f] + fabs(dw0[f])) + 2 * dyE[f]);

    ct_buf d_x = ck_dev_in(c, x, n), d_w = ck_dev_in(c, w, F), d_dy = ck_dev_in(c, dy, n);
    ct_buf d_y = ck_dev_out(c, n), d_dx = ck_dev_out(c, n), d_rstd = ck_dev_out(c, R);
    ct_buf d_dw = ck_dev_inout(c, dw0, F), d_dx2 = ck_dev_const(c, n, 0.5);
    ct_buf d_work = ck_dev_out(c, ct_rmsnorm_workspace_size(R, F));
    if (ck_failed(c) || ck_status(c, ct_rmsnorm_forward(ctx, d_y, d_rstd, d_x, d_w, R, F, eps), "rmsnorm forward"))
        return;
    ck_expect(c, "forward y", d_y, n, y, ytol, 4 * U);
    ck_expect(c, "forward rstd", d_rstd, R, rstd, 0, (double)(F + 8) * U);
    if (ck_status(c, ct_rmsnorm_backward(ctx, d_dx, 0, d_dw, d_dy, d_x, d_w, d_rstd, R, F, d_work),
                  "rmsnorm backward"))
        return;
    ck_expect(c, "backward dx", d_dx, n, dx, dxtol, 8 * U);
    ck_expect(c, "backward dweight (+=)", d_dw, F, dw, dwtol, 4 * U);
    /* dx added into 0.5 (the same pass: one more rounding), then dw alone
     * (the GPU class's second stage as a kernel of its own): dw gets the
     * gradient twice more */
    for (size_t i = 0; i < n; i++)
        dx2[i] = dx[i] + 0.5;
    for (size_t f = 0; f < F; f++)
        dw[f] += 2 * (dw[f] - dw0[f]);
    if (ck_status(c, ct_rmsnorm_backward(ctx, d_dx2, 1, d_dw, d_dy, d_x, d_w, d_rstd, R, F, d_work),
                  "rmsnorm backward, dx +=") ||
        ck_status(c, ct_rmsnorm_backward(ctx, (ct_buf){ NULL, 0 }, 0, d_dw, d_dy, d_x, d_w, d_rstd, R, F, d_work),
                  "rmsnorm backward, no dx"))
        return;
    ck_expect(c, "backward dx (+=)", d_dx2, n, dx2, dxtol, 10 * U);
    ck_expect(c, "backward dweight (+= twice more)", d_dw, F, dw, 3 * dwtol, 8 * U);

    /* finite differences of the reference's gradients (from zero) */
    double *gdx = ck_host(c, n), *gdw = ck_host(c, F);
    if (ck_failed(c))
        return;
    ct_ref_rmsnorm_backward(gdx, gdw, dy, x, w, R, F, eps);
    rms_loss l = { x, w, dy, ck_host(c, n), R, F, eps };
    ck_gradcheck(c, "reference dx", loss_fn, &l, x, n, gdx, 32);
    ck_gradcheck(c, "reference dweight", loss_fn, &l, w, F, gdw, 32);
}

static void run_case(ct_check *c, size_t R, size_t F, double offset, float eps, int cpu)
{
    ct_kernels real = ck_use_class(c, cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
    if (!ck_failed(c))
        one_case(c, R, F, offset, eps);
    ck_case_end(c);
    ck_use_class(c, real);
}

void ct_check_rmsnorm(ct_check *c)
{
    for (int cpu = 0; cpu < 2 && !ck_failed(c); cpu++) {
        run_case(c, 1, 1, 0, 1e-6f, cpu);
        run_case(c, 5, 3, 0, 1e-6f, cpu);
        run_case(c, 7, 33, 0, 1e-6f, cpu);
        run_case(c, 3, 300, 20, 1e-6f, cpu);
        run_case(c, 4, 257, 0, 0.5f, cpu);
        /* the GPU class's dweight in 63 slices of rows (4 under --small) */
        run_case(c, ck_small(c) ? 50 : 1000, ck_small(c) ? 7 : 37, 0, 1e-6f, cpu);
    }
    int small = ck_small(c);
    for (int it = 0; it < 2 * ck_iterations(c) && !ck_failed(c); it++) {
        size_t R = (size_t)ck_dim(c, small ? 9 : 200), F = (size_t)ck_dim(c, small ? 40 : 600);
        run_case(c, R, F, ck_int(c, 0, 2) == 0 ? 10 : 0, 1e-6f, it % 2);
    }
    if (ck_failed(c))
        return;
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "refused arguments");
    ct_buf none = { NULL, 0 }, v = ck_dev_out(c, 4);
    if (!ck_failed(c) &&
        (ct_rmsnorm_forward(ctx, v, v, v, v, 2, 2, 0.0f) != CT_ERR_INVALID_ARG ||
         ct_rmsnorm_forward(ctx, v, v, v, v, 2, 0, 1e-6f) != CT_ERR_SHAPE ||
         ct_rmsnorm_backward(ctx, v, 0, none, v, v, v, v, 2, 2, v) != CT_ERR_INVALID_ARG))
        ck_status(c, CT_ERR_INTERNAL, "eps 0, F 0 or a NULL dweight was accepted");
    ck_case_end(c);
}
