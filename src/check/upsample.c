/*
 * upsample.c - checks of upsampling (src/ops/upsample.c) against
 * src/ref/upsample.c, nearest and bilinear, scales 1 to 4, planes of sizes
 * no multiple of a work-group, in both device classes (the same kernels).
 *
 * Tolerances, u = 2^-24: nearest copies (forward atol 0) and sums S^2
 * gradients per input (ck_sum_atol over S^2 terms of the sums of |dy|);
 * bilinear's weights carry the float source index's rounding, a few u
 * each: forward 16u max|x| (4 terms), rtol 4u; backward (4 S^2 + 16) u
 * times the largest sum of |dy| weights an input gathers. A wrong source
 * index or weight is off by a whole input step. The reference's dx is
 * checked against finite differences of sum(y * dy).
 */
#include <math.h>

#include "check/check.h"
#include "ops/upsample.h"
#include "ref/upsample.h"

#define U 5.9604644775390625e-8 /* 2^-24 */

typedef struct up_loss {
    const double *x, *dy;
    double *y;
    size_t planes;
    int h, w, S, bilinear;
} up_loss;

static double loss_fn(void *user)
{
    up_loss *l = user;
    ct_ref_upsample_forward(l->y, l->x, l->planes, l->h, l->w, l->S, l->bilinear);
    return ck_dot(l->y, l->dy, l->planes * (size_t)(l->h * l->S) * (size_t)(l->w * l->S));
}

static void one_case(ct_check *c, size_t planes, int h, int w, int S, int bilinear, int cpu)
{
    ct_kernels real = ck_use_class(c, cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
    ck_case(c, "upsample %s %zu planes %dx%d by %d, %s class", bilinear ? "bilinear" : "nearest", planes, h, w,
            S, cpu ? "cpu" : "gpu");
    ct_context *ctx = ck_ctx(c);
    size_t n = planes * (size_t)h * (size_t)w, m = n * (size_t)S * (size_t)S;
    double *x = ck_host(c, n), *y = ck_host(c, m), *dy = ck_host(c, m), *dx = ck_host(c, n);
    double *ady = ck_host(c, m), *adx = ck_host(c, n);
    if (!ck_failed(c)) {
        ck_fill(c, x, n, -1, 1);
        ck_fill(c, dy, m, -1, 1);
        ck_round_f32(x, n);
        ck_round_f32(dy, m);
        ct_ref_upsample_forward(y, x, planes, h, w, S, bilinear);
        ct_ref_upsample_backward(dx, dy, planes, h, w, S, bilinear);
        for (size_t i = 0; i < m; i++)
            ady[i] = fabs(dy[i]);
        ct_ref_upsample_backward(adx, ady, planes, h, w, S, bilinear);
        double most = 0;
        for (size_t i = 0; i < n; i++)
            most = fmax(most, adx[i]);
        ct_buf d_x = ck_dev_in(c, x, n), d_dy = ck_dev_in(c, dy, m), d_y = ck_dev_out(c, m), d_dx = ck_dev_out(c, n);
        if (!ck_failed(c) && !ck_status(c, ct_upsample_forward(ctx, d_y, d_x, planes, h, w, S, bilinear),
                                        "upsample forward")) {
            ck_expect(c, "forward y", d_y, m, y, bilinear ? 16 * U : 0, bilinear ? 4 * U : 0);
            if (!ck_status(c, ct_upsample_backward(ctx, d_dx, d_dy, planes, h, w, S, bilinear), "upsample backward"))
                ck_expect(c, "backward dx", d_dx, n, dx,
                          bilinear ? (4.0 * S * S + 16) * U * most : ck_sum_atol((size_t)(S * S), adx, n), 4 * U);
            up_loss l = { x, dy, ck_host(c, m), planes, h, w, S, bilinear };
            ck_gradcheck(c, "reference dx", loss_fn, &l, x, n, dx, 32);
        }
    }
    ck_case_end(c);
    ck_use_class(c, real);
}

void ct_check_upsample(ct_check *c)
{
    static const int fixed[][5] = { { 1, 1, 1, 2, 0 }, { 1, 1, 1, 2, 1 }, { 2, 3, 5, 2, 1 },
                                    { 3, 7, 2, 3, 1 }, { 2, 4, 9, 4, 0 }, { 2, 1, 300, 2, 1 } };
    for (int cpu = 0; cpu < 2 && !ck_failed(c); cpu++)
        for (size_t k = 0; k < CT_ARRAY_LEN(fixed) && !ck_failed(c); k++)
            one_case(c, (size_t)fixed[k][0], fixed[k][1], fixed[k][2], fixed[k][3], fixed[k][4], cpu);
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++)
        one_case(c, (size_t)ck_dim(c, 6), ck_dim(c, ck_small(c) ? 7 : 20), ck_dim(c, ck_small(c) ? 7 : 20),
                 ck_int(c, 1, 4), ck_int(c, 0, 1), it % 2);
    if (ck_failed(c))
        return;
    ck_case(c, "refused arguments");
    ct_buf v = ck_dev_out(c, 4);
    if (!ck_failed(c) && (ct_upsample_forward(ck_ctx(c), v, v, 1, 2, 2, 0, 0) != CT_ERR_INVALID_ARG ||
                          ct_upsample_backward(ck_ctx(c), v, v, 0, 2, 2, 2, 1) != CT_ERR_INVALID_ARG))
        ck_status(c, CT_ERR_INTERNAL, "a zero scale or no planes was accepted");
    ck_case_end(c);
}
