/*
 * convt.c - checks of transposed convolution (src/ops/convt.c, which runs
 * on conv2d's launchers) against src/ref/convt.c, written from the
 * definition (a scatter) rather than from the convolution it is the
 * gradient of: kernels 1 to 5, strides 1 to 3, output_padding below the
 * stride, padding up to the kernel, dilation 1-2, odd sizes; with the
 * workspace the layer plans and with one image's columns; in both device
 * classes (the class picks conv2d's paths: im2col or the implicit GEMMs,
 * the direct host convolution on the CPU class).
 *
 * Tolerances, as src/check/conv.c's: a float32 sum of T products in any
 * order is within T u sum|products| (u = 2^-24); atol = (T + 2) u times the
 * largest exact sum|products| (the reference on |inputs|). T per result:
 * y c_in k k + k k + 1 (conv2d's input gradient: a GEMM over c_in and
 * col2im's k k partial sums, or one implicit-GEMM sum of c_in k k; the bias
 * add); dx c_out k k (conv2d's forward); dw n h w + n (its weight gradient,
 * += per chunk of images); db n oh ow. The reference's gradients are
 * checked against finite differences of sum(y * dy).
 */
#include <math.h>

#include "check/check.h"
#include "ops/convt.h"
#include "ref/convt.h"

typedef struct ct_loss {
    const ct_convt2d_desc *d;
    int oh, ow;
    const double *x, *w, *b, *dy;
    double *y;
    size_t ny;
} ct_loss;

static double loss_fn(void *user)
{
    ct_loss *l = user;
    ct_ref_convt2d_forward(l->d, l->oh, l->ow, l->y, l->x, l->w, l->b);
    return ck_dot(l->y, l->dy, l->ny);
}

static void one_case(ct_check *c, const ct_convt2d_desc *d, int has_bias, int small_ws, int cpu)
{
    ct_kernels real = ck_use_class(c, cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
    ck_case(c, "conv_transpose2d x (%d, %d, %d, %d), %d out, kernel %d, stride %d, pad %d, output_padding %d, "
            "dilation %d, bias %d, %s workspace, %s class", d->n, d->c_in, d->h, d->w, d->c_out, d->k, d->stride,
            d->pad, d->out_pad, d->dil, has_bias, small_ws ? "one image's" : "planned", cpu ? "cpu" : "gpu");
    ct_context *ctx = ck_ctx(c);
    int oh = 0, ow = 0;
    if (ck_status(c, ct_convt2d_out_shape(ctx, d, &oh, &ow), "geometry")) {
        ck_case_end(c);
        ck_use_class(c, real);
        return;
    }
    size_t kk = (size_t)d->k * d->k, nx = (size_t)d->n * d->c_in * d->h * d->w;
    size_t ny = (size_t)d->n * d->c_out * oh * ow, nw = (size_t)d->c_in * d->c_out * kk, nb = (size_t)d->c_out;
    size_t ws_n = small_ws ? (size_t)d->c_out * kk * d->h * d->w : ct_convt2d_workspace_for(ctx, d);
    double *x = ck_host(c, nx), *w = ck_host(c, nw), *b = ck_host(c, nb), *dy = ck_host(c, ny);
    double *dw0 = ck_host(c, nw), *db0 = ck_host(c, nb);
    double *y = ck_host(c, ny), *dx = ck_host(c, nx), *dw = ck_host(c, nw), *db = ck_host(c, nb);
    double *ay = ck_host(c, ny), *adx = ck_host(c, nx), *adw = ck_host(c, nw), *adb = ck_host(c, nb);
    if (!ck_failed(c)) {
        double *ins[] = { x, w, b, dy, dw0, db0 };
        size_t ns[] = { nx, nw, nb, ny, nw, nb };
        for (int i = 0; i < 6; i++) {
            ck_fill(c, ins[i], ns[i], -1, 1);
            ck_round_f32(ins[i], ns[i]);
        }
        const double *bias = has_bias ? b : NULL;
        ct_ref_convt2d_forward(d, oh, ow, y, x, w, bias);
        for (size_t i = 0; i < nw; i++)
            adw[i] = fabs(dw[i] = dw0[i]);
        for (size_t i = 0; i < nb; i++)
            adb[i] = fabs(db[i] = db0[i]);
        ct_ref_convt2d_backward(d, oh, ow, dx, dw, db, dy, x, w);
        double *ax = ck_abs(c, x, nx), *aw = ck_abs(c, w, nw), *ady = ck_abs(c, dy, ny);
        ct_ref_convt2d_forward(d, oh, ow, ay, ax, aw, has_bias ? ck_abs(c, b, nb) : NULL);
        ct_ref_convt2d_backward(d, oh, ow, adx, adw, adb, ady, ax, aw);
        ct_buf d_x = ck_dev_in(c, x, nx), d_w = ck_dev_in(c, w, nw), d_b = ck_dev_in(c, b, nb);
        ct_buf d_dy = ck_dev_in(c, dy, ny), d_y = ck_dev_out(c, ny), d_dx = ck_dev_out(c, nx);
        ct_buf d_dw = ck_dev_inout(c, dw0, nw), d_db = ck_dev_inout(c, db0, nb), d_ws = ck_dev_out(c, ws_n);
        ct_buf none = { NULL, 0 };
        if (!ck_failed(c) &&
            !ck_status(c, ct_convt2d_forward(ctx, d, d_y, d_x, d_w, has_bias ? d_b : none, d_ws, ws_n),
                       "forward")) {
            ck_expect(c, "forward y", d_y, ny, y, ck_prod_atol(c, (size_t)d->c_in * kk + kk + 1, ay, ny), 0);
            if (!ck_status(c, ct_convt2d_backward(ctx, d, d_dx, d_dw, d_db, d_dy, d_x, d_w, d_ws, ws_n),
                           "backward")) {
                ck_expect(c, "backward dx", d_dx, nx, dx, ck_prod_atol(c, (size_t)d->c_out * kk, adx, nx), 0);
                ck_expect(c, "backward dw", d_dw, nw, dw,
                          ck_prod_atol(c, (size_t)d->n * d->h * d->w + (size_t)d->n, adw, nw), 0);
                ck_expect(c, "backward db", d_db, nb, db, ck_sum_atol((size_t)d->n * oh * ow, adb, nb), 0);
            }
            ct_loss l = { d, oh, ow, x, w, bias, dy, ck_host(c, ny), ny };
            double *gx = ck_host(c, nx), *gw = ck_host(c, nw);
            ct_ref_convt2d_backward(d, oh, ow, gx, gw, NULL, dy, x, w);
            ck_gradcheck(c, "reference dx", loss_fn, &l, x, nx, gx, 24);
            ck_gradcheck(c, "reference dw", loss_fn, &l, w, nw, gw, 24);
        }
    }
    ck_case_end(c);
    ck_use_class(c, real);
}

void ct_check_convt(ct_check *c)
{
    /* n, c_in, h, w, c_out, k, stride, pad, output_padding, dilation, bias */
    static const int fixed[][11] = {
        { 2, 3, 5, 6, 4, 2, 2, 0, 0, 1, 1 },  /* U-Net's 2x2/2 up-convolution (golden case 0) */
        { 1, 4, 4, 5, 2, 4, 2, 1, 0, 1, 0 },  /* DCGAN's 4x4/2 (golden case 1) */
        { 2, 2, 5, 5, 3, 3, 2, 1, 1, 1, 1 },  /* output_padding (golden case 2) */
        { 3, 5, 7, 3, 6, 3, 1, 1, 0, 1, 1 },  /* stride 1: a "same" convolution's gradient */
        { 2, 3, 4, 6, 5, 3, 3, 2, 2, 2, 0 },  /* stride 3, dilated */
        { 2, 7, 3, 3, 9, 1, 2, 0, 1, 1, 1 },  /* 1x1, strided: zeros between the pixels */
    };
    for (int cpu = 0; cpu < 2 && !ck_failed(c); cpu++)
        for (size_t k = 0; k < CT_ARRAY_LEN(fixed) && !ck_failed(c); k++) {
            const int *f = fixed[k];
            ct_convt2d_desc d = { f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9] };
            one_case(c, &d, f[10], (int)(k % 2), cpu);
        }
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        int k = ck_int(c, 1, 5), s = ck_int(c, 1, 3), dil = ck_int(c, 1, 2);
        int pad = ck_int(c, 0, (k - 1) * dil / 2), hi = ck_small(c) ? 5 : 11;
        ct_convt2d_desc d = { ck_dim(c, ck_small(c) ? 2 : 4), ck_dim(c, 6), ck_dim(c, hi), ck_dim(c, hi),
                              ck_dim(c, 6), k, s, pad, ck_int(c, 0, s - 1), dil };
        one_case(c, &d, ck_int(c, 0, 1), ck_int(c, 0, 1), it % 2);
    }
    if (ck_failed(c))
        return;
    ck_case(c, "refused geometry");
    ct_buf v = ck_dev_out(c, 64), none = { NULL, 0 };
    ct_convt2d_desc d = { 1, 1, 3, 3, 1, 2, 2, 0, 2, 1 }; /* output_padding = stride */
    if (!ck_failed(c) && ct_convt2d_forward(ck_ctx(c), &d, v, v, v, none, v, 64) != CT_ERR_SHAPE)
        ck_status(c, CT_ERR_INTERNAL, "output_padding equal to the stride was accepted");
    ck_case_end(c);
}
