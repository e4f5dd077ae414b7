/*
 * gconv.c - checks of grouped convolution (src/ops/gconv.c) against
 * src/ref/conv.c's grouped reference: depthwise (groups = channels, with
 * and without a channel multiplier), a few groups, and groups = 1; kernels
 * 1x1 to 7x7 (7x7 has 49 taps: four stage-one tap chunks), strides 1-3,
 * dilation 1-2, odd sizes that are no multiple of a work-group; batches
 * large enough for several weight-gradient slices and small enough for
 * one (stage one then adds into dw itself); in both device classes: the
 * GPU class's kernels, the CPU class's host planes (src/host/gconv_host.c).
 *
 * Tolerances, as in src/check/conv.c: a float32 sum of T products in any
 * order is within T u sum|products| of the exact sum (u = 2^-24), sum|.|
 * exact from the reference on |inputs|; atol = (T + 2) u max sum|.| (the
 * +2: the bias or the += into dw, and the store). T per result: y Cg kh kw
 * (+1 with the bias); dx Kg kh kw; dw n oh ow + S (the slices' sums, then
 * their sum and the +=); db n oh ow. A missing or misplaced term (inputs in
 * [-1, 1], ~0.25) is far above these bounds. The reference's gradients are
 * checked against finite differences of sum(y * dy).
 */
#include <math.h>

#include "check/check.h"
#include "ops/gconv.h"
#include "ref/conv.h"

#define U 5.9604644775390625e-8 /* 2^-24 */

typedef struct gc_loss {
    const ct_conv2d_desc *d;
    int groups;
    const double *x, *w, *b, *dy;
    double *y;
    size_t ny;
} gc_loss;

static double loss_fn(void *user)
{
    gc_loss *l = user;
    ct_ref_gconv2d_forward(l->d, l->groups, l->y, l->x, l->w, l->b);
    return ck_dot(l->y, l->dy, l->ny);
}

static void one_case(ct_check *c, const ct_conv2d_desc *d, int groups, int has_bias, int cpu)
{
    ct_kernels real = ck_use_class(c, cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
    ck_case(c, "conv2d groups %d: x (%d, %d, %d, %d), w (%d, %d, %d, %d), stride %d, pad %d, dilation %d, "
            "bias %d, %s class", groups, d->n, d->c_in, d->h, d->w, d->c_out, d->c_in / groups, d->kh, d->kw,
            d->stride_h, d->pad_h, d->dil_h, has_bias, cpu ? "cpu" : "gpu");
    ct_context *ctx = ck_ctx(c);
    int oh = 0, ow = 0;
    if (ck_status(c, ct_gconv2d_out_shape(ctx, d, groups, &oh, &ow), "geometry")) {
        ck_case_end(c);
        ck_use_class(c, real);
        return;
    }
    size_t nx = (size_t)d->n * d->c_in * d->h * d->w, ny = (size_t)d->n * d->c_out * oh * ow;
    size_t nw = (size_t)d->c_out * (d->c_in / groups) * d->kh * d->kw, nb = (size_t)d->c_out;
    size_t kk = (size_t)d->kh * d->kw, m = (size_t)d->n * oh * ow;
    double *x = ck_host(c, nx), *w = ck_host(c, nw), *b = ck_host(c, nb), *dy = ck_host(c, ny);
    double *y = ck_host(c, ny), *dx = ck_host(c, nx), *dw = ck_host(c, nw), *db = ck_host(c, nb);
    double *dw0 = ck_host(c, nw), *db0 = ck_host(c, nb);
    double *ay = ck_host(c, ny), *adx = ck_host(c, nx), *adw = ck_host(c, nw), *adb = ck_host(c, nb);
    if (!ck_failed(c)) {
        double *ins[] = { x, w, b, dy, dw0, db0 };
        size_t ns[] = { nx, nw, nb, ny, nw, nb };
        for (int i = 0; i < 6; i++) {
            ck_fill(c, ins[i], ns[i], -1, 1);
            ck_round_f32(ins[i], ns[i]);
        }
        const double *bias = has_bias ? b : NULL;
        ct_ref_gconv2d_forward(d, groups, y, x, w, bias);
        for (size_t i = 0; i < nw; i++)
            dw[i] = dw0[i];
        for (size_t i = 0; i < nb; i++)
            db[i] = db0[i];
        ct_ref_gconv2d_backward(d, groups, dx, dw, db, dy, x, w);
        double *ax = ck_abs(c, x, nx), *aw = ck_abs(c, w, nw), *ab = ck_abs(c, b, nb), *ady = ck_abs(c, dy, ny);
        ct_ref_gconv2d_forward(d, groups, ay, ax, aw, has_bias ? ab : NULL);
        for (size_t i = 0; i < nw; i++)
            adw[i] = fabs(dw0[i]);
        for (size_t i = 0; i < nb; i++)
            adb[i] = fabs(db0[i]);
        ct_ref_gconv2d_backward(d, groups, adx, adw, adb, ady, ax, aw);
        size_t cg = (size_t)(d->c_in / groups), kg = (size_t)(d->c_out / groups);
        ct_buf d_x = ck_dev_in(c, x, nx), d_w = ck_dev_in(c, w, nw), d_b = ck_dev_in(c, b, nb);
        ct_buf d_dy = ck_dev_in(c, dy, ny), d_y = ck_dev_out(c, ny), d_dx = ck_dev_out(c, nx);
        ct_buf d_dw = ck_dev_inout(c, dw0, nw), d_db = ck_dev_inout(c, db0, nb);
        if (!ck_failed(c) &&
            !ck_status(c, ct_gconv2d_forward(ctx, d, groups, d_y, d_x, d_w, has_bias ? d_b : (ct_buf){ NULL, 0 }),
                       "forward")) {
            ck_expect(c, "forward y", d_y, ny, y, ck_prod_atol(c, cg * kk + 1, ay, ny), 0);
            if (!ck_status(c, ct_gconv2d_backward(ctx, d, groups, d_dx, d_dw, d_db, d_dy, d_x, d_w), "backward")) {
                ck_expect(c, "backward dx", d_dx, nx, dx, ck_prod_atol(c, kg * kk, adx, nx), 0);
                /* S <= m / 1024 + 1 slices: their sums add S roundings */
                ck_expect(c, "backward dw", d_dw, nw, dw, ck_prod_atol(c, m + m / 1024 + 1, adw, nw), 0);
                ck_expect(c, "backward db", d_db, nb, db, ck_sum_atol(m, adb, nb), 0);
            }
            gc_loss l = { d, groups, x, w, bias, dy, ck_host(c, ny), ny };
            double *gx = ck_host(c, nx), *gw = ck_host(c, nw);
            ct_ref_gconv2d_backward(d, groups, gx, gw, NULL, dy, x, w);
            ck_gradcheck(c, "reference dx", loss_fn, &l, x, nx, gx, 24);
            ck_gradcheck(c, "reference dw", loss_fn, &l, w, nw, gw, 24);
        }
    }
    ck_case_end(c);
    ck_use_class(c, real);
}

void ct_check_gconv(ct_check *c)
{
    /* n, c_in, h, w, c_out, k, stride, pad, dilation, groups, bias */
    static const int fixed[][11] = {
        { 2, 6, 7, 9, 6, 3, 1, 1, 1, 6, 0 },     /* the golden depthwise case */
        { 2, 4, 8, 7, 6, 3, 2, 1, 1, 2, 1 },     /* two groups, strided */
        { 3, 5, 9, 11, 10, 3, 1, 1, 1, 5, 1 },   /* depthwise, channel multiplier 2 */
        { 1, 3, 13, 10, 3, 7, 2, 3, 1, 3, 0 },   /* 49 taps: four chunks */
        { 2, 8, 6, 5, 4, 1, 1, 0, 1, 4, 1 },     /* 1x1, two input channels per group */
        { 2, 4, 9, 9, 4, 3, 1, 2, 2, 1, 1 },     /* groups = 1, dilated */
        { 40, 3, 17, 19, 3, 3, 1, 1, 1, 3, 1 },  /* 12920 positions: several slices */
    };
    for (int cpu = 0; cpu < 2 && !ck_failed(c); cpu++)
        for (size_t k = 0; k < CT_ARRAY_LEN(fixed) && !ck_failed(c); k++) {
            const int *f = fixed[k];
            if (ck_small(c) && f[0] > 8)
                continue;
            ct_conv2d_desc d = { f[0], f[1], f[2], f[3], f[4], f[5], f[5], f[6], f[6], f[7], f[7], f[8], f[8] };
            one_case(c, &d, f[9], f[10], cpu);
        }
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        int groups = ck_int(c, 1, 6), kh = ck_int(c, 1, 5), kw = ck_int(c, 1, 5), dil = ck_int(c, 1, 2);
        int cg = ck_int(c, 1, 3), kg = ck_int(c, 1, 3), pad = ck_int(c, 0, 2), s = ck_int(c, 1, 3);
        int h = (kh - 1) * dil + ck_dim(c, ck_small(c) ? 6 : 15), w = (kw - 1) * dil + ck_dim(c, ck_small(c) ? 6 : 15);
        ct_conv2d_desc d = { ck_dim(c, ck_small(c) ? 2 : 9), groups * cg, h, w, groups * kg, kh, kw, s, s,
                             pad, pad, dil, dil };
        one_case(c, &d, groups, ck_int(c, 0, 1), it % 2);
    }
    if (ck_failed(c))
        return;
    ck_case(c, "refused groups");
    ct_buf v = ck_dev_out(c, 64);
    ct_conv2d_desc d = { 1, 6, 3, 3, 4, 1, 1, 1, 1, 0, 0, 1, 1 };
    if (!ck_failed(c) && (ct_gconv2d_forward(ck_ctx(c), &d, 4, v, v, v, (ct_buf){ NULL, 0 }) != CT_ERR_SHAPE ||
                          ct_gconv2d_forward(ck_ctx(c), &d, 0, v, v, v, (ct_buf){ NULL, 0 }) != CT_ERR_SHAPE))
        ck_status(c, CT_ERR_INTERNAL, "groups that do not divide the channels were accepted");
    ck_case_end(c);
}
