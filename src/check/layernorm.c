/*
 * layernorm.c - checks of layer normalization (src/ops/layernorm.c)
 * against src/ref/layernorm.c: forward (y and the saved mean and rstd) and
 * backward (dx written, dw and db accumulated onto random values), both
 * device classes, rows of 1 feature (variance 0), of sizes no multiple of
 * the work-group size and beyond it, and rows far from zero (|mean| >> std,
 * where a one-pass variance loses every digit).
 *
 * Tolerances, with u = 2^-24 and per row r: m1 = mean|x|, X = max|xhat|,
 * G = max|dy w|. A float sum of F terms errs by (F - 1) u sum|x|, so the
 * mean by ~F u m1, and xhat = (x - mean) rstd by about
 * E = (F + 8) u (rstd m1 + X) (the mean's error times rstd, plus the
 * variance's sum relative error passing half into rstd). Then
 *   - y: 4 max|w| E + 2 u max|b|, rtol 4u;
 *   - mean: (F + 2) u m1; rstd: 2 (F + 8) u rstd (relative);
 *   - dx = rstd (g - mean g - xhat mean(g xhat)): each term's error is at
 *     most E or F u relative to rstd G (1 + X)^2, taken with a factor 8:
 *     8 (F + 8) u rstd G (1 + X)^2 (1 + rstd m1);
 *   - dw: R terms of dy xhat, (R + 2) u max_f sum_r |dy xhat| plus
 *     2 max_f sum_r |dy| E_r (xhat's own error); db: ck_sum_atol over R.
 * The reference's dx, dw and db are checked against central finite
 * differences of sum(y * dy).
 *
 * At bf16 or fp16 precision every GPU-class case runs again with x, y, dy
 * and dx stored in that format (ck_act16_begin). x and dy are rounded to
 * it first, so the reference sees the device's inputs exactly and the
 * float arithmetic on them keeps the bounds above (atol32, rtol32, taken
 * from the rounded inputs). y and dx are then rounded once more on store:
 * by at most u16 |v| (unit roundoff u16 = 2^-8 bf16, 2^-11 fp16) plus
 * fp16's subnormal half step s = 2^-25, where |v| <= |ref| + atol32 +
 * rtol32 |ref| is the float result: atol (1 + u16) atol32 + s, rtol
 * (1 + u16) rtol32 + u16. dx += rounds the float sum once the same way
 * (the 0.5 it adds to is exact in both formats). mean, rstd, dw and db are
 * float results of those exact inputs: their bounds stay. Finite
 * differences check the reference in the float pass only.
 */
#include <math.h>

#include "check/check.h"
#include "ops/layernorm.h"
#include "ref/layernorm.h"

#define U 5.9604644775390625e-8 /* 2^-24 */

typedef struct ln_loss {
    const double *x, *w, *b, *dy;
    double *y;
    size_t R, F;
    double eps;
} ln_loss;

static double loss_fn(void *user)
{
    ln_loss *l = user;
    ct_ref_layernorm_forward(l->y, NULL, NULL, l->x, l->w, l->b, l->R, l->F, l->eps);
    return ck_dot(l->y, l->dy, l->R * l->F);
}

static double maxabs(const double *v, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fabs(v[i]) > m ? fabs(v[i]) : m;
    return m;
}

/* offset: rows shifted by up to +-offset (|mean| >> std when large) */
static void one_case(ct_check *c, size_t R, size_t F, double offset, float eps)
{
    ct_context *ctx = ck_ctx(c);
    const int f16 = ck_act16(c);
    const double u16 = f16 ? ck_prec_u((ct_precision)f16) : 0;
    const double s16 = f16 ? ck_prec_sub((ct_precision)f16) : 0, k16 = 1 + u16;
    ck_case(c, "R=%zu F=%zu, offset %g, eps %g, %s class%s", R, F, offset, (double)eps,
            ct_kernels_str(ct_context_kernels(ctx)), f16 ? ", 16-bit activations" : "");
    size_t n = R * F;
    double *x = ck_host(c, n), *w = ck_host(c, F), *b = ck_host(c, F), *dy = ck_host(c, n);
    double *y = ck_host(c, n), *mean = ck_host(c, R), *rstd = ck_host(c, R), *dx = ck_host(c, n);
    double *dw0 = ck_host(c, F), *db0 = ck_host(c, F), *dw = ck_host(c, F), *db = ck_host(c, F);
    double *absdyxh = ck_host(c, F), *absdy = ck_host(c, F), *dyE = ck_host(c, F);
    if (ck_failed(c))
        return;
    ck_fill(c, x, n, -1, 1);
    for (size_t r = 0; r < R && offset > 0; r++) {
        double o = ck_uniform(c, -offset, offset);
        for (size_t f = 0; f < F; f++)
            x[r * F + f] += o;
    }
    ck_fill(c, w, F, -1.5, 1.5);
    ck_fill(c, b, F, -1, 1);
    ck_fill(c, dy, n, -1, 1);
    ck_fill(c, dw0, F, -1, 1);
    ck_fill(c, db0, F, -1, 1);
    ck_round_f32(x, n);
    ck_round_f32(w, F);
    ck_round_f32(b, F);
    ck_round_f32(dy, n);
    ck_round_f32(dw0, F);
    ck_round_f32(db0, F);
    ck_round_act(c, x, n);
    ck_round_act(c, dy, n);
    for (size_t f = 0; f < F; f++) {
        dw[f] = dw0[f];
        db[f] = db0[f];
    }
    ct_ref_layernorm_forward(y, mean, rstd, x, w, b, R, F, eps);
    ct_ref_layernorm_backward(dx, dw, db, dy, x, w, R, F, eps);

    double wmax = maxabs(w, F), bmax = maxabs(b, F);
    double ytol = 0, mtol = 0, dxtol = 0, dwtol = 0;
    for (size_t r = 0; r < R; r++) {
        double m1 = 0, X = 0, G = 0;
        for (size_t f = 0; f < F; f++) {
            double xh = (x[r * F + f] - mean[r]) * rstd[r];
            m1 += fabs(x[r * F + f]) / (double)F;
            X = fabs(xh) > X ? fabs(xh) : X;
            G = fabs(dy[r * F + f] * w[f]) > G ? fabs(dy[r * F + f] * w[f]) : G;
        }
        double E = (double)(F + 8) * U * (rstd[r] * m1 + X);
        ytol = fmax(ytol, 4 * wmax * E + 2 * U * bmax);
        mtol = fmax(mtol, (double)(F + 2) * U * m1);
        dxtol = fmax(dxtol, 8 * (double)(F + 8) * U * rstd[r] * G * (1 + X) * (1 + X) *
                                (1 + rstd[r] * m1));
        for (size_t f = 0; f < F; f++) {
            double xh = (x[r * F + f] - mean[r]) * rstd[r];
            absdyxh[f] += fabs(dy[r * F + f] * xh);
            absdy[f] += fabs(dy[r * F + f]);
            dyE[f] += fabs(dy[r * F + f]) * E;
        }
    }
    for (size_t f = 0; f < F; f++)
        dwtol = fmax(dwtol, (double)(R + 2) * U * (absdyxh[f] + fabs(dw0[f])) + 2 * dyE[f]);
    for (size_t f = 0; f < F; f++)
        absdy[f] += fabs(db0[f]);

    ct_buf d_x = ck_act_in(c, x, n), d_w = ck_dev_in(c, w, F), d_b = ck_dev_in(c, b, F);
    ct_buf d_dy = ck_act_in(c, dy, n), d_y = ck_act_out(c, n), d_dx = ck_act_out(c, n);
    ct_buf d_mean = ck_dev_out(c, R), d_rstd = ck_dev_out(c, R);
    ct_buf d_dw = ck_dev_inout(c, dw0, F), d_db = ck_dev_inout(c, db0, F);
    ct_buf d_work = ck_dev_out(c, ct_layernorm_workspace_size(R, F));
    if (ck_failed(c))
        return;
    if (ck_status(c, ct_layernorm_forward(ctx, d_y, d_mean, d_rstd, d_x, d_w, d_b, R, F, eps),
                  "layernorm forward"))
        return;
    ck_expect(c, "forward y", d_y, n, y, k16 * ytol + s16, k16 * 4 * U + u16);
    ck_expect(c, "forward mean", d_mean, R, mean, mtol, 4 * U);
    ck_expect(c, "forward rstd", d_rstd, R, rstd, 0, 2 * (double)(F + 8) * U);
    if (ck_status(c, ct_layernorm_backward(ctx, d_dx, d_dw, d_db, d_dy, d_x, d_w, d_mean, d_rstd,
                                           R, F, d_work), "layernorm backward"))
        return;
    ck_expect(c, "backward dx", d_dx, n, dx, k16 * dxtol + s16, k16 * 8 * U + u16);
    ck_expect(c, "backward dweight (+=)", d_dw, F, dw, dwtol, 4 * U);
    ck_expect(c, "backward dbias (+=)", d_db, F, db, ck_sum_atol(R, absdy, F), 4 * U);

    /* dx added into a gradient holding 0.5 (the same pass: one more
     * rounding); then the parameters alone (dx skipped: on the GPU class
     * their second stage runs as a kernel of its own); each call adds the
     * same gradient to dbias once more */
    double *dx2 = ck_host(c, n), *db2 = ck_host(c, F);
    if (ck_failed(c))
        return;
    for (size_t i = 0; i < n; i++)
        dx2[i] = 0.5;
    ct_buf d_dx2 = ck_act_inout(c, dx2, n);
    if (ck_failed(c))
        return;
    for (size_t i = 0; i < n; i++)
        dx2[i] = dx[i] + 0.5;
    for (size_t f = 0; f < F; f++)
        db2[f] = db[f] + 2 * (db[f] - db0[f]);
    if (ck_status(c, ct_layernorm_backward_acc(ctx, d_dx2, 1, d_dw, d_db, d_dy, d_x, d_w, d_mean,
                                               d_rstd, R, F, d_work), "layernorm backward, dx +=") ||
        ck_status(c, ct_layernorm_backward(ctx, (ct_buf){ NULL, 0 }, d_dw, d_db, d_dy, d_x, d_w,
                                           d_mean, d_rstd, R, F, d_work), "layernorm backward, no dx"))
        return;
    ck_expect(c, "backward dx (+=)", d_dx2, n, dx2, k16 * dxtol + s16, k16 * 10 * U + u16);
    ck_expect(c, "backward dbias (+= twice more)", d_db, F, db2, 3 * ck_sum_atol(R, absdy, F), 8 * U);

    if (f16)
        return; /* the reference's gradients are checked in the float pass */
    /* finite differences of the reference's gradients (from zero) */
    double *gdx = ck_host(c, n), *gdw = ck_host(c, F), *gdb = ck_host(c, F);
    if (ck_failed(c))
        return;
    ct_ref_layernorm_backward(gdx, gdw, gdb, dy, x, w, R, F, eps);
    ln_loss l = { x, w, b, dy, ck_host(c, n), R, F, eps };
    ck_gradcheck(c, "reference dx", loss_fn, &l, x, n, gdx, 32);
    ck_gradcheck(c, "reference dweight", loss_fn, &l, w, F, gdw, 32);
    ck_gradcheck(c, "reference dbias", loss_fn, &l, b, F, gdb, 32);
}

/* A case on one class; a GPU-class case again with 16-bit activation
 * storage at bf16 or fp16 precision (the storage runs the GPU class). */
static void run_case(ct_check *c, size_t R, size_t F, double offset, float eps, int cpu)
{
    ct_kernels real = ck_use_class(c, cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
    if (!ck_failed(c))
        one_case(c, R, F, offset, eps);
    ck_case_end(c);
    ck_use_class(c, real);
    ck_act16_state s;
    if (!cpu && ck_act16_begin(c, &s)) {
        one_case(c, R, F, offset, eps);
        ck_case_end(c);
        ck_act16_end(c, &s);
    }
}

/* Arguments the launchers must refuse. */
static void bad_args(ct_check *c)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "refused arguments");
    ct_buf none = { NULL, 0 }, v = ck_dev_out(c, 4);
    if (ck_failed(c))
        return;
    if (ct_layernorm_forward(ctx, v, v, v, v, v, v, 2, 2, 0.0f) != CT_ERR_INVALID_ARG ||
        ct_layernorm_forward(ctx, v, v, v, v, v, v, 2, 0, 1e-5f) != CT_ERR_SHAPE ||
        ct_layernorm_forward(ctx, v, v, v, v, v, v, (size_t)1 << 20, (size_t)1 << 12, 1e-5f) !=
            CT_ERR_SHAPE ||
        ct_layernorm_backward(ctx, v, none, v, v, v, v, v, v, 2, 2, v) != CT_ERR_INVALID_ARG)
        ck_status(c, CT_ERR_INTERNAL, "eps 0, F 0, R F >= 2^32 or a NULL dweight was accepted");
}

void ct_check_layernorm(ct_check *c)
{
    for (int cpu = 0; cpu < 2 && !ck_failed(c); cpu++) {
        run_case(c, 1, 1, 0, 1e-5f, cpu);
        run_case(c, 5, 3, 0, 1e-5f, cpu);
        run_case(c, 7, 33, 0, 1e-5f, cpu);
        run_case(c, 3, 300, 20, 1e-5f, cpu);
        run_case(c, 4, 257, 0, 0.5f, cpu);
        /* 4,096 elements and more: the CPU class's host pool on AVX-512
         * CPUs (rows of 35: two vectors and a tail, 3 slices of rows) */
        run_case(c, 129, 35, 5, 1e-5f, cpu);
        /* the GPU class's parameter gradients in 63 and 21 slices of rows
         * (4 under --small) */
        run_case(c, ck_small(c) ? 50 : 1000, ck_small(c) ? 7 : 37, 0, 1e-5f, cpu);
        if (!ck_small(c))
            run_case(c, 333, 300, 10, 1e-5f, cpu);
    }
    int small = ck_small(c);
    for (int it = 0; it < 2 * ck_iterations(c) && !ck_failed(c); it++) {
        size_t R = (size_t)ck_dim(c, small ? 9 : 200), F = (size_t)ck_dim(c, small ? 40 : 600);
        double offset = ck_int(c, 0, 2) == 0 ? 10 : 0;
        run_case(c, R, F, offset, 1e-5f, it % 2);
    }
    if (!ck_failed(c))
        bad_args(c);
    ck_case_end(c);
}
