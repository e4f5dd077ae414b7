/*
 * attention.c - checks of multi-head self-attention (src/ops/attention.c)
 * against src/ref/attention.c: causal and not, odd T, E and heads (E = H D
 * with D odd too), forward y and backward dx and the flat parameter
 * gradient (accumulated onto a random start), in both device classes
 * (CLBlast or the host BLAS for the products, the same softmax kernels).
 *
 * The backward's workspace and the saved tensors start as NaN (ck_dev_out):
 * a product or softmax that reads an element nothing wrote fails.
 *
 * Tolerance: each result is a chain of float sums (the projections over
 * E or 3E terms, the scores over D, the softmax and the weighted values
 * over at most T, the parameter gradients over T N rows) whose terms the
 * softmax keeps within a small factor of the result's scale; the bound is
 * normalized to the tensor's largest value, as for reductions:
 * atol = 4 (3E + 2T + T N + 8) 2^-24 max|ref|, rtol 0. A wrong index,
 * mask or scale errs by the size of the values themselves.
 * With 16-bit products (selftest/checkcl --precision bf16|fp16) each
 * tolerance adds the largest of ct_ref_attention_bound16's per-element
 * bounds: every product's operands rounded, the error carried through the
 * softmax and the backward's chain (see src/ref/attention.h).
 * With 16-bit activation storage (at bf16 or fp16, the GPU class) x, y,
 * dy, dx, the saved q, k, v, o and probabilities and the workspace (dO,
 * dP, dS, dq, dk, dv) are 16-bit (buffers in the format, NaN-filled); x
 * and dy are exact in it, the intermediates' stores are in the 16-bit
 * bound (ct_ref_attention_bound16's stored), and y and dx add their own
 * store's rounding: atol (1 + u) times the float one plus s, rtol u (u 2^-8
 * bf16, 2^-11 fp16; s 2^-25, fp16's subnormal half step); the parameter
 * gradient is float as before.
 * The reference's gradients (x and every parameter) are checked against
 * central finite differences of sum(y * dy), in the float pass.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check/check.h"
#include "ops/attention.h"
#include "ref/attention.h"

#define U 5.9604644775390625e-8 /* 2^-24 */

typedef struct at_loss {
    const ct_attention_desc *d;
    const double *x, *w, *dy;
    double *y;
} at_loss;

static double loss(void *user)
{
    at_loss *l = user;
    size_t n = l->d->T * l->d->N * l->d->E;
    if (ct_ref_attention_forward(l->d, l->y, NULL, l->x, l->w))
        return NAN;
    return ck_dot(l->y, l->dy, n);
}

static double tol(const ct_attention_desc *d, const double *ref, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m = fmax(m, fabs(ref[i]));
    return 4.0 * (double)(3 * d->E + 2 * d->T + d->T * d->N + 8) * U * m;
}

static void one_case(ct_check *c, const ct_attention_desc *d)
{
    ct_context *ctx = ck_ctx(c);
    const char *unfused = getenv("CLTRAIN_ATTENTION");
    const int f = ck_act16(c);
    ck_case(c, "T=%zu N=%zu E=%zu heads=%zu%s, %s class%s%s", d->T, d->N, d->E, d->H,
            d->causal ? " causal" : "", ct_kernels_str(ct_context_kernels(ctx)),
            unfused && !strcmp(unfused, "unfused") ? ", unfused" : "", f ? ", 16-bit activations" : "");
    size_t nx = d->T * d->N * d->E, np = ct_attention_params(d);
    double *x = ck_host(c, nx), *w = ck_host(c, np), *dy = ck_host(c, nx), *y = ck_host(c, nx);
    double *dx = ck_host(c, nx), *dw0 = ck_host(c, np), *dw = ck_host(c, np);
    if (ck_failed(c))
        return;
    ck_fill(c, x, nx, -1, 1);
    ck_fill(c, w, np, -0.5, 0.5);
    ck_fill(c, dy, nx, -1, 1);
    ck_fill(c, dw0, np, -1, 1);
    ck_round_act(c, x, nx); /* (float32 storage: to float) */
    ck_round_f32(w, np);
    ck_round_act(c, dy, nx);
    ck_round_f32(dw0, np);
    for (size_t i = 0; i < np; i++)
        dw[i] = dw0[i];
    if (ck_status(c, ct_ref_attention_forward(d, y, NULL, x, w), "reference forward") ||
        ck_status(c, ct_ref_attention_backward(d, dx, dw, dy, x, w), "reference backward"))
        return;

    /* what 16-bit operands add (0 in float32) */
    double by = 0, bdx = 0, bdw = 0;
    ct_precision prec = ct_context_precision(ctx);
    if (prec != CT_PRECISION_FP32) {
        double *ey = ck_host(c, nx), *edx = ck_host(c, nx), *edw = ck_host(c, np);
        if (ck_failed(c) || ck_status(c, ct_ref_attention_bound16(d, ck_prec_u(prec), ck_prec_sub(prec), f, ey, edx,
                                                                 edw, dy, x, w), "16-bit bound"))
            return;
        by = ck_amax(ey, nx);
        bdx = ck_amax(edx, nx);
        bdw = ck_amax(edw, np);
    }

    ct_buf d_x = ck_act_in(c, x, nx), d_w = ck_dev_in(c, w, np), d_dy = ck_act_in(c, dy, nx);
    ct_buf d_y = ck_act_out(c, nx), d_saved = ck_act_out(c, ct_attention_saved(d));
    ct_buf d_dx = ck_act_out(c, nx), d_work = ck_act_out(c, ct_attention_work(d));
    const double u = ck_prec_u((ct_precision)f), sub = ck_prec_sub((ct_precision)f); /* 0 in float */
    ct_buf d_dw = ck_dev_inout(c, dw0, np);
    if (ck_failed(c))
        return;
    if (ck_status(c, ct_attention_forward(ctx, d, d_y, d_saved, d_x, d_w), "attention forward"))
        return;
    ck_expect(c, "forward y", d_y, nx, y, (tol(d, y, nx) + by) * (1 + u) + sub, u);
    if (ck_status(c, ct_attention_backward(ctx, d, d_dx, d_dw, d_dy, d_x, d_w, d_saved, d_work),
                  "attention backward"))
        return;
    ck_expect(c, "backward dx", d_dx, nx, dx, (tol(d, dx, nx) + bdx) * (1 + u) + sub, u);
    ck_expect(c, "backward dw (in_proj_weight, in_proj_bias, out_proj.weight, out_proj.bias)", d_dw,
              np, dw, tol(d, dw, np) + bdw, 0);

    if (ck_finite_diff(c) && !ck_failed(c) && !f) {
        /* the reference's own gradients, from a zero start */
        double *gx = ck_host(c, nx), *gw = ck_host(c, np);
        at_loss l = { d, x, w, dy, ck_host(c, nx) };
        if (ck_failed(c) ||
            ck_status(c, ct_ref_attention_backward(d, gx, gw, dy, x, w), "reference backward"))
            return;
        ck_gradcheck(c, "reference dx", loss, &l, x, nx, gx, 24);
        ck_gradcheck(c, "reference dw", loss, &l, w, np, gw, 48);
    }
}

/* way 0: the GPU class (its fused kernels), 1: the CPU class, 2: the GPU
 * class with CLTRAIN_ATTENTION=unfused (products and softmax passes) */
static void run_case(ct_check *c, size_t T, size_t N, size_t H, size_t D, int causal, int way)
{
    ct_attention_desc d = { T, N, H * D, H, causal };
    ct_kernels real = ck_use_class(c, way == 1 ? CT_KERNELS_CPU : CT_KERNELS_GPU);
    if (way == 2)
        setenv("CLTRAIN_ATTENTION", "unfused", 1);
    if (!ck_failed(c))
        one_case(c, &d);
    if (way == 2)
        unsetenv("CLTRAIN_ATTENTION");
    ck_case_end(c);
    ck_use_class(c, real);
}

/* A case rerun with 16-bit activations (at bf16 or fp16 precision) */
static void act16_case(ct_check *c, size_t T, size_t N, size_t H, size_t D, int causal)
{
    ck_act16_state st;
    if (!ck_act16_begin(c, &st))
        return;
    ct_attention_desc d = { T, N, H * D, H, causal };
    one_case(c, &d);
    ck_case_end(c);
    ck_act16_end(c, &st);
}

/* Arguments the launchers must refuse. */
static void bad_args(ct_check *c)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "refused arguments");
    ct_buf b = ck_dev_out(c, 64);
    if (ck_failed(c))
        return;
    ct_attention_desc odd = { 2, 1, 6, 4, 1 }, empty = { 0, 1, 4, 2, 1 };
    if (ct_attention_forward(ctx, &odd, b, b, b, b) != CT_ERR_SHAPE ||
        ct_attention_forward(ctx, &empty, b, b, b, b) != CT_ERR_SHAPE ||
        ct_attention_backward(ctx, &odd, b, b, b, b, b, b, b) != CT_ERR_SHAPE)
        ck_status(c, CT_ERR_INTERNAL, "an embedding not divisible by the heads, or T = 0, was accepted");
}

void ct_check_attention(ct_check *c)
{
    for (int way = 0; way < 3 && !ck_failed(c); way++) {
        run_case(c, 1, 1, 1, 1, 1, way);
        run_case(c, 7, 3, 3, 3, 1, way);
        run_case(c, 5, 2, 1, 7, 0, way);
        run_case(c, 6, 2, 2, 4, 0, way);
    }
    int small = ck_small(c);
    /* the CPU class's host softmax (4,096 scores and more, AVX-512 CPUs):
     * rows of 37 and 40 keys (two vectors and a tail), causal and not (not
     * on simulators, which never run the host path: half their time) */
    if (!small) {
        run_case(c, 37, 3, 2, 5, 1, 1);
        run_case(c, 40, 2, 2, 3, 0, 1);
    }
    /* more query rows than a fused work-group's 8 (blocks, a short last
     * one; simulators: two blocks) */
    run_case(c, small ? 11 : 19, 2, 3, 5, 1, 0);
    run_case(c, 17, 1, 2, 9, 0, 0);
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        size_t T = (size_t)ck_dim(c, small ? 9 : 33), N = (size_t)ck_dim(c, small ? 3 : 5);
        size_t H = (size_t)ck_int(c, 1, small ? 3 : 5), D = (size_t)ck_dim(c, small ? 5 : 17);
        run_case(c, T, N, H, D, ck_int(c, 0, 1), it % 3);
    }
    act16_case(c, 7, 3, 3, 3, 1);
    act16_case(c, 19, 2, 2, 5, 0);
    if (!ck_failed(c))
        bad_args(c);
    ck_case_end(c);
}
