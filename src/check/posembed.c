/*
 * posembed.c - checks of the position embedding (src/ops/posembed.c)
 * against src/ref/posembed.c: forward and backward over (T, N, E) with a
 * table of max_len >= T rows, both device classes, the backward with and
 * without dx.
 *
 * Tolerances, with u = 2^-24 and inputs the device sees exactly:
 *   - y = x + w: one correctly rounded float addition, rtol u (reached at
 *     ties), atol 2^-126 for a device that flushes subnormal sums to 0;
 *   - dx = dy: a copy, exact;
 *   - dw: N terms summed in ascending n onto a random starting value
 *     (rows t >= T must keep it exactly): ck_sum_atol over N with the
 *     sums of |dy| and the start.
 * The reference's dx and dw are checked against central finite
 * differences of sum(y * dy).
 *
 * At bf16 or fp16 precision random cases (odd T, N and E: no global size
 * a multiple of a work-group's) run again on the GPU class with x, y, dy
 * and dx stored in the format (x and dy exact in it), w and dw float. With
 * u16 the format's unit roundoff (2^-8 bf16, 2^-11 fp16) and s16 its
 * subnormal half step (2^-25 fp16, 0 bf16):
 *   - y is the float sum z, |z - (x + w)| <= u |x + w| + 2^-126, rounded
 *     once more: |y - z| <= u16 |z| + s16, so rtol u + u16 (1 + u), atol
 *     (1 + u16) 2^-126 + s16;
 *   - dx = dy: the same 16 bits, exact;
 *   - dw: float sums of values exact in the format, the float bound above.
 * The finite-difference checks of the reference run in the float pass.
 */
#include <math.h>

#include "check/check.h"
#include "ops/posembed.h"
#include "ref/posembed.h"

#define U 5.9604644775390625e-8 /* 2^-24 */

typedef struct pe_loss {
    const double *x, *w, *dy;
    double *y;
    size_t T, N, E;
} pe_loss;

static double loss_fn(void *user)
{
    pe_loss *l = user;
    ct_ref_posembed_forward(l->y, l->x, l->w, l->T, l->N, l->E);
    return ck_dot(l->y, l->dy, l->T * l->N * l->E);
}

static void one_case(ct_check *c, size_t T, size_t N, size_t E, size_t L, int with_dx)
{
    ct_context *ctx = ck_ctx(c);
    const int f = ck_act16(c);
    const double u16 = f ? ck_prec_u((ct_precision)f) : 0, s16 = f ? ck_prec_sub((ct_precision)f) : 0;
    ck_case(c, "T=%zu N=%zu E=%zu max_len=%zu%s, %s class%s", T, N, E, L, with_dx ? "" : ", no dx",
            ct_kernels_str(ct_context_kernels(ctx)), f ? ", 16-bit activations" : "");
    size_t n = T * N * E, nw = L * E;
    double *x = ck_host(c, n), *w = ck_host(c, nw), *dy = ck_host(c, n), *y = ck_host(c, n);
    double *dx = ck_host(c, n), *dw0 = ck_host(c, nw), *dw = ck_host(c, nw);
    double *absdw = ck_host(c, nw);
    if (ck_failed(c))
        return;
    ck_fill(c, x, n, -1, 1);
    ck_fill(c, w, nw, -1, 1);
    ck_fill(c, dy, n, -1, 1);
    ck_fill(c, dw0, nw, -1, 1);
    ck_round_f32(x, n);
    ck_round_f32(w, nw);
    ck_round_f32(dy, n);
    ck_round_f32(dw0, nw);
    ck_round_act(c, x, n);
    ck_round_act(c, dy, n);
    for (size_t i = 0; i < nw; i++)
        dw[i] = dw0[i];
    ct_ref_posembed_forward(y, x, w, T, N, E);
    ct_ref_posembed_backward(dx, dw, dy, T, N, E);
    double *absdy = ck_abs(c, dy, n);
    ct_ref_posembed_backward(NULL, absdw, absdy, T, N, E);
    for (size_t i = 0; i < nw; i++)
        absdw[i] += fabs(dw0[i]);

    ct_buf d_x = ck_act_in(c, x, n), d_w = ck_dev_in(c, w, nw), d_dy = ck_act_in(c, dy, n);
    ct_buf d_y = ck_act_out(c, n), d_dw = ck_dev_inout(c, dw0, nw);
    ct_buf d_dx = with_dx ? ck_act_out(c, n) : (ct_buf){ NULL, 0 };
    if (ck_failed(c))
        return;
    if (ck_status(c, ct_posembed_forward(ctx, d_y, d_x, d_w, T, N, E), "posembed forward"))
        return;
    ck_expect(c, "forward y", d_y, n, y, (1 + u16) * 0x1p-126 + s16, U + u16 * (1 + U));
    if (ck_status(c, ct_posembed_backward(ctx, d_dx, d_dw, d_dy, T, N, E), "posembed backward"))
        return;
    if (with_dx)
        ck_expect(c, "backward dx", d_dx, n, dx, 0, 0);
    ck_expect(c, "backward dweight (+=)", d_dw, nw, dw, ck_sum_atol(N, absdw, nw), 0);
    if (f)
        return; /* the reference's gradients are checked in the float pass */

    double *gdw = ck_host(c, nw);
    if (ck_failed(c))
        return;
    ct_ref_posembed_backward(NULL, gdw, dy, T, N, E);
    pe_loss l = { x, w, dy, ck_host(c, n), T, N, E };
    ck_gradcheck(c, "reference dx", loss_fn, &l, x, n, dx, 32);
    ck_gradcheck(c, "reference dweight", loss_fn, &l, w, nw, gdw, 32);
}

static void run_case(ct_check *c, size_t T, size_t N, size_t E, size_t L, int with_dx, int cpu)
{
    ct_kernels real = ck_use_class(c, cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
    if (!ck_failed(c))
        one_case(c, T, N, E, L, with_dx);
    ck_case_end(c);
    ck_use_class(c, real);
}

/* Arguments the launchers must refuse. */
static void bad_args(ct_check *c)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "refused arguments");
    ct_buf none = { NULL, 0 }, v = ck_dev_out(c, 4);
    if (ck_failed(c))
        return;
    if (ct_posembed_forward(ctx, v, v, none, 1, 2, 2) != CT_ERR_INVALID_ARG ||
        ct_posembed_backward(ctx, v, none, v, 1, 2, 2) != CT_ERR_INVALID_ARG ||
        ct_posembed_forward(ctx, v, v, v, (size_t)1 << 10, (size_t)1 << 12, (size_t)1 << 10) !=
            CT_ERR_SHAPE)
        ck_status(c, CT_ERR_INTERNAL, "a NULL weight, a NULL dweight or T N E >= 2^32 was accepted");
}

void ct_check_posembed(ct_check *c)
{
    for (int cpu = 0; cpu < 2 && !ck_failed(c); cpu++) {
        run_case(c, 1, 1, 1, 1, 1, cpu);
        run_case(c, 7, 3, 5, 9, 1, cpu);
        run_case(c, 16, 4, 33, 32, 0, cpu);
    }
    int small = ck_small(c);
    for (int it = 0; it < 2 * ck_iterations(c) && !ck_failed(c); it++) {
        size_t T = (size_t)ck_dim(c, small ? 9 : 130), N = (size_t)ck_dim(c, small ? 5 : 40);
        size_t E = (size_t)ck_dim(c, small ? 40 : 300), L = T + (size_t)ck_int(c, 0, 5);
        run_case(c, T, N, E, L, ck_int(c, 0, 3) != 0, it % 2);
    }
    /* 16-bit storage, at bf16 or fp16 precision */
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        ck_act16_state s;
        if (!ck_act16_begin(c, &s))
            break;
        size_t T = (size_t)ck_dim(c, small ? 9 : 130) | 1;
        size_t N = (size_t)ck_dim(c, small ? 5 : 40) | 1, E = (size_t)ck_dim(c, small ? 40 : 300) | 1;
        size_t L = T + (size_t)ck_int(c, 0, 5);
        one_case(c, T, N, E, L, ck_int(c, 0, 3) != 0);
        ck_case_end(c);
        ck_act16_end(c, &s);
    }
    if (!ck_failed(c))
        bad_args(c);
    ck_case_end(c);
}
