/*
 * dense.c - checks of the dense layer and the bias pieces (src/ops/dense.c)
 * against src/ref/dense.c.
 *
 * Tolerances. Inputs are rounded to float before the reference sees them,
 * so the only error is the device's float32 arithmetic. A float32 sum of K
 * products, in any order, with or without FMA, is off by at most
 * K * u * sum|a*b| (u = 2^-24; Higham's gamma_K bound to first order). The
 * checks compute sum|a*b| exactly, by running the reference on |inputs|,
 * and allow (K + 2) * u * max sum|a*b|: the +2 covers the bias add or the
 * += into an accumulating gradient, and the final rounding. That bound can
 * not be beaten by a correct kernel and is far below what a wrong index,
 * factor or missing term gives (inputs are in [-1, 1], a typical term
 * ~0.25 against a bound ~K^2/4 * 6e-8 ~ 1e-3 at K = 129).
 * The fused bias + activation: one rounding of x + b (|x + b| <= 5, the
 * activations' slopes <= 1.13, so <= 3.4e-7) plus the device libm, within
 * the activations' own 1e-6 + 1e-5 |y| (src/check/act.c).
 *
 * 16-bit activation storage (runs at bf16 or fp16 precision, GPU class):
 * the products read x, y's gradient or both in the format and write y or
 * dx in it (ct_dense_forward_s / _backward_s, each combination of
 * CT_DENSE_X16 and CT_DENSE_Y16). Stored inputs are exact in the format;
 * the products round every operand to it anyway (ck_prod_atol's bound);
 * a stored result adds one rounding: atol (1 + u) + s, rtol u (unit
 * roundoff u 2^-8 bf16, 2^-11 fp16; fp16's subnormal half step s 2^-25);
 * the forward's fused relu has slope 1 and no libm. The bias pieces over
 * 16-bit tensors (none, relu, gelu): inputs exact in the format, the
 * reference's pre-activation rounded as the net stores it; y and dz add
 * the store's rounding to the float bounds (rtol 1e-5 + 1.01 u, atol
 * 1.01e-6 + s), the bias sums are float sums of exact values (the fused
 * backward sums dz before its store rounds it): the float bounds.
 */
#include <math.h>

#include "check/check.h"
#include "ops/dense.h"
#include "ref/act.h"
#include "ref/dense.h"

/* ---- dense ---- */

typedef struct dense_loss {
    const double *x, *w, *b, *dy;
    double *y;
    int n, in, out;
} dense_loss;

static double dense_loss_fn(void *user)
{
    dense_loss *l = user;
    ct_ref_dense_forward(l->y, l->x, l->w, l->b, l->n, l->in, l->out);
    return ck_dot(l->y, l->dy, (size_t)l->n * (size_t)l->out);
}

/* One case: float32 activations (s16 0), or the products over 16-bit
 * activations: x and dx in the storage where s16 has CT_DENSE_X16, y and
 * dy where it has CT_DENSE_Y16 (bounds in the header); the forward with
 * the fused bias and relu (relu), or neither. The float32, relu-free
 * cases also check the reference's gradients by finite differences. */
static void dense_case(ct_check *c, int n, int in, int out, int s16, int has_bias, int relu)
{
    ct_context *ctx = ck_ctx(c);
    const int x16 = s16 & CT_DENSE_X16, y16 = s16 & CT_DENSE_Y16, plain = !s16 && !relu;
    if (s16)
        ck_case(c, "dense n=%d in=%d out=%d bias=%d relu=%d, 16-bit%s%s", n, in, out, has_bias, relu,
                x16 ? " x" : "", y16 ? " y" : "");
    else
        ck_case(c, "dense n=%d in=%d out=%d bias=%d relu=%d", n, in, out, has_bias, relu);
    const double u = s16 ? ck_prec_u((ct_precision)ck_act16(c)) : 0;
    const double sub = s16 ? ck_prec_sub((ct_precision)ck_act16(c)) : 0;
    size_t nx = (size_t)n * in, nw = (size_t)out * in, ny = (size_t)n * out, nb = (size_t)out;
    double *x = ck_host(c, nx), *w = ck_host(c, nw), *b = ck_host(c, nb), *dy = ck_host(c, ny);
    double *y = ck_host(c, ny), *dx = ck_host(c, nx), *dw = ck_host(c, nw), *db = ck_host(c, nb);
    double *ay = ck_host(c, ny), *adx = ck_host(c, nx), *adw = ck_host(c, nw), *adb = ck_host(c, nb);
    if (ck_failed(c))
        return;
    ck_fill(c, x, nx, -1, 1);
    ck_fill(c, w, nw, -1, 1);
    ck_fill(c, b, nb, -1, 1);
    ck_fill(c, dy, ny, -1, 1);
    if (x16)
        ck_round_act(c, x, nx);
    else
        ck_round_f32(x, nx);
    if (y16)
        ck_round_act(c, dy, ny);
    else
        ck_round_f32(dy, ny);
    ck_round_f32(w, nw);
    ck_round_f32(b, nb);
    const double *bias = has_bias ? b : NULL;
    ct_ref_dense_forward(y, x, w, bias, n, in, out);
    if (relu)
        for (size_t i = 0; i < ny; i++)
            y[i] = y[i] > 0 ? y[i] : 0;
    /* dw and db start at 0.5 and 0.25 on the device, to check that they
     * accumulate */
    for (size_t i = 0; i < nw; i++)
        dw[i] = 0.5, adw[i] = 0.5;
    for (size_t i = 0; i < nb; i++)
        db[i] = 0.25, adb[i] = 0.25;
    ct_ref_dense_backward(dx, dw, db, dy, x, w, n, in, out);
    double *ax = ck_abs(c, x, nx), *aw = ck_abs(c, w, nw), *ab = ck_abs(c, bias, nb), *ady = ck_abs(c, dy, ny);
    if (ck_failed(c))
        return;
    ct_ref_dense_forward(ay, ax, aw, ab, n, in, out);
    ct_ref_dense_backward(adx, adw, adb, ady, ax, aw, n, in, out);

    ct_buf d_x = x16 ? ck_act_in(c, x, nx) : ck_dev_in(c, x, nx), d_w = ck_dev_in(c, w, nw);
    ct_buf d_dy = y16 ? ck_act_in(c, dy, ny) : ck_dev_in(c, dy, ny);
    ct_buf d_b = has_bias ? ck_dev_in(c, b, nb) : (ct_buf){ NULL, 0 };
    ct_buf d_y = y16 ? ck_act_out(c, ny) : ck_dev_out(c, ny), d_dx = x16 ? ck_act_out(c, nx) : ck_dev_out(c, nx);
    ct_buf d_dw = ck_dev_const(c, nw, 0.5), d_db = ck_dev_const(c, nb, 0.25);
    ct_buf d_dbo = has_bias ? d_db : (ct_buf){ NULL, 0 };
    if (ck_failed(c))
        return;
    /* the float32 entry points where they serve, the storage ones else */
    if (ck_status(c, plain ? ct_dense_forward(ctx, d_y, d_x, d_w, d_b, n, in, out)
                           : ct_dense_forward_s(ctx, d_y, d_x, d_w, d_b, n, in, out,
                                                relu ? CT_ACT_RELU : CT_ACT_NONE, s16),
                  "dense forward"))
        return;
    double ey = ck_prod_atol(c, (size_t)in, ay, ny);
    ck_expect(c, "forward y", d_y, ny, y, y16 ? ey * (1 + u) + sub : ey, y16 ? u : 0);
    if (ck_status(c, plain ? ct_dense_backward(ctx, d_dx, d_dw, d_dbo, d_dy, d_x, d_w, n, in, out)
                           : ct_dense_backward_s(ctx, d_dx, d_dw, d_dbo, d_dy, d_x, d_w, n, in, out, 0, 0, s16),
                  "dense backward"))
        return;
    double ex = ck_prod_atol(c, (size_t)out, adx, nx);
    ck_expect(c, "backward dx", d_dx, nx, dx, x16 ? ex * (1 + u) + sub : ex, x16 ? u : 0);
    ck_expect(c, "backward dw", d_dw, nw, dw, ck_prod_atol(c, (size_t)n, adw, nw), 0);
    if (has_bias)
        ck_expect(c, "backward db", d_db, nb, db, ck_sum_atol((size_t)n, adb, nb), 0);
    if (!plain)
        return;

    /* the reference's own gradients, from zero, by finite differences */
    double *gx = ck_host(c, nx), *gw = ck_host(c, nw), *gb = ck_host(c, nb);
    dense_loss l = { x, w, bias, dy, ck_host(c, ny), n, in, out };
    if (ck_failed(c))
        return;
    ct_ref_dense_backward(gx, gw, gb, dy, x, w, n, in, out);
    ck_gradcheck(c, "reference dx", dense_loss_fn, &l, x, nx, gx, 24);
    ck_gradcheck(c, "reference dw", dense_loss_fn, &l, w, nw, gw, 24);
    if (has_bias)
        ck_gradcheck(c, "reference db", dense_loss_fn, &l, b, nb, gb, 24);
}

/* Reruns of random shapes in 16-bit storage (at bf16 or fp16 precision):
 * every combination of the storage flags */
static void dense16_cases(ct_check *c)
{
    for (int s16 = 1; s16 <= (CT_DENSE_X16 | CT_DENSE_Y16) && !ck_failed(c); s16++) {
        ck_act16_state st;
        if (!ck_act16_begin(c, &st))
            return;
        dense_case(c, ck_dim(c, 33), ck_dim(c, 129), ck_dim(c, 65), s16, ck_int(c, 0, 1), ck_int(c, 0, 1));
        ck_case_end(c);
        ck_act16_end(c, &st);
    }
}

/* ---- bias + activation, bias gradient ---- */

typedef struct bias_loss {
    const double *x, *dy;
    double *b, *y;
    int n, c, hw;
    ct_act act;
} bias_loss;

static double bias_loss_fn(void *user)
{
    bias_loss *l = user;
    ct_ref_bias_act_forward(l->y, l->x, l->b, l->n, l->c, l->hw, l->act);
    return ck_dot(l->y, l->dy, (size_t)l->n * (size_t)l->c * (size_t)l->hw);
}

static void bias_case_on(ct_check *c, int n, int ch, int hw, ct_act act, int in_place);

/* The reference bias gradient of d into db starting at 0.25 (the device's
 * db accumulates), and the same sums of |d| into adb for the tolerance. */
static void ref_db(ct_check *c, double *db, double *adb, const double *d, int n, int ch, int hw)
{
    const double *ad = ck_abs(c, d, (size_t)n * ch * hw);
    if (ck_failed(c))
        return;
    for (int k = 0; k < ch; k++)
        db[k] = adb[k] = 0.25;
    ct_ref_bias_backward(db, d, n, ch, hw);
    ct_ref_bias_backward(adb, ad, n, ch, hw);
}

/* in both device classes: the GPU class fuses the activation's backward
 * into the bias sum, the CPU class runs them apart */
static void bias_case(ct_check *c, int n, int ch, int hw, ct_act act, int in_place)
{
    for (int k = 0; k < 2 && !ck_failed(c); k++) {
        ct_kernels real = ck_use_class(c, k ? CT_KERNELS_GPU : CT_KERNELS_CPU);
        bias_case_on(c, n, ch, hw, act, in_place);
        ck_use_class(c, real);
    }
}

static void bias_case_on(ct_check *c, int n, int ch, int hw, ct_act act, int in_place)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "bias_act %s n=%d c=%d hw=%d%s, %s class%s", ct_act_name(act), n, ch, hw,
            in_place ? " in place" : "", ct_kernels_str(ct_context_kernels(ctx)),
            ck_act16(c) ? ", 16-bit activations" : "");
    size_t total = (size_t)n * ch * hw;
    double *x = ck_host(c, total), *b = ck_host(c, (size_t)ch), *dy = ck_host(c, total);
    double *y = ck_host(c, total), *g = ck_host(c, total), *pre = ck_host(c, total);
    double *db = ck_host(c, (size_t)ch), *gb = ck_host(c, (size_t)ch), *adb = ck_host(c, (size_t)ch);
    double *gb1 = ck_host(c, (size_t)ch), *agb = ck_host(c, (size_t)ch);
    if (ck_failed(c))
        return;
    const int f = ck_act16(c); /* activations in 16 bits: in_place is 0 */
    const double u = ck_prec_u((ct_precision)f), sub = ck_prec_sub((ct_precision)f);
    ck_fill(c, x, total, -4, 4);
    ck_fill(c, b, (size_t)ch, -1, 1);
    ck_fill(c, dy, total, -1, 1);
    ck_round_act(c, x, total);
    ck_round_f32(b, (size_t)ch);
    ck_round_act(c, dy, total);
    /* keep x + b off the relu-like kinks, for rounding and finite differences */
    for (size_t i = 0; i < total; i++) {
        double bb = b[(i / (size_t)hw) % (size_t)ch];
        if (fabs(x[i] + bb) < 1e-3)
            x[i] = (double)(float)(-bb + (x[i] + bb < 0 ? -2e-3 : 2e-3));
    }
    ck_round_act(c, x, total); /* (16 bits: the nudged values keep their side) */
    ct_ref_bias_act_forward(y, x, b, n, ch, hw, act);

    /* the reference bias gradient of sum(act(x + b) * dy): db = sums of dy * act'(x + b) */
    ct_ref_bias_act_forward(pre, x, b, n, ch, hw, CT_ACT_NONE);
    if (f) /* as the net stores the pre-activation */
        ck_round_act(c, pre, total);
    ct_ref_act_backward(act, g, dy, pre, total);
    ct_ref_bias_backward(gb, g, n, ch, hw);
    /* the device's bias gradients into db starting at 0.25: of dy itself,
     * and of the pre-activation's gradient g (the fused backward below) */
    ref_db(c, db, adb, dy, n, ch, hw);
    ref_db(c, gb1, agb, g, n, ch, hw);

    ct_buf d_x = ck_act_in(c, x, total), d_b = ck_dev_in(c, b, (size_t)ch);
    ct_buf d_dy = ck_act_in(c, dy, total), d_db = ck_dev_const(c, (size_t)ch, 0.25);
    ct_buf d_y = in_place ? ck_dev_const(c, total, 0) : ck_act_out(c, total);
    if (ck_failed(c))
        return;
    if (in_place && ck_status(c, ct_copy(ctx, d_y, d_x, total), "copy"))
        return;
    ct_buf src = in_place ? d_y : d_x;
    if (ck_status(c, ct_bias_act_forward(ctx, d_y, src, d_b, n, ch, hw, act), "bias_act forward"))
        return;
    ck_expect(c, "bias_act y", d_y, total, y, f ? 1.01e-6 + sub : 1e-6, f ? 1e-5 + 1.01 * u : 1e-5);
    if (ck_status(c, ct_bias_backward(ctx, d_db, d_dy, n, ch, hw), "bias backward"))
        return;
    ck_expect(c, "bias db", d_db, (size_t)ch, db, ck_sum_atol((size_t)n * hw, adb, (size_t)ch), 0);

    /* the activation's backward and the bias sum in one pass (in place on
     * dy), into db starting at 0.25: dz = dy * act'(x + b), db = sums of dz */
    ct_buf d_dz = ck_act_inout(c, dy, total), d_db2 = ck_dev_const(c, (size_t)ch, 0.25);
    ct_buf d_pre = ck_act_in(c, pre, total);
    if (ck_failed(c))
        return;
    /* pre is x + b rounded once; y from the forward above: as the net passes them */
    if (ck_status(c, ct_bias_act_backward(ctx, d_db2, d_dz, act, ct_act_needs_input(act) ? d_pre : d_y, d_y, n,
                                          ch, hw), "bias_act backward"))
        return;
    /* dz: one float derivative per element (as bias_act y above); db: the
     * sum's rounding plus every term's dz error (1e-6 + 1e-5 |dz|) */
    double most = 0;
    for (int k = 0; k < ch; k++)
        most = fmax(most, agb[k]);
    ck_expect(c, "bias_act dz", d_dz, total, g, f ? 1.01e-6 + sub : 1e-6, f ? 1e-5 + 1.01 * u : 1e-5);
    ck_expect(c, "bias_act db", d_db2, (size_t)ch, gb1,
              ck_sum_atol((size_t)n * hw, agb, (size_t)ch) + 1e-6 * (double)n * hw + 1e-5 * most, 0);

    /* (the reference's own gradient once, in the float pass: with 16 bits
     * g comes from the stored, rounded pre-activation) */
    bias_loss l = { x, dy, b, ck_host(c, total), n, ch, hw, act };
    if (!ck_failed(c) && !f)
        ck_gradcheck(c, "reference db", bias_loss_fn, &l, b, (size_t)ch, gb, 24);
}

/* The bias pieces over 16-bit activations (at bf16 or fp16 precision, the
 * GPU class): the single-stage, tree and two-stage sums, hw 1 and more */
static void bias16_cases(ct_check *c)
{
    static const int shapes[][4] = {
        { 3, 300, 1, CT_ACT_GELU }, { 37, 3, 101, CT_ACT_RELU }, { 257, 45, 1, CT_ACT_NONE },
        { 4099, 5, 1, CT_ACT_RELU }, { 5, 7, 33, CT_ACT_GELU },
    };
    for (size_t e = 0; e < CT_ARRAY_LEN(shapes) && !ck_failed(c); e++) {
        ck_act16_state st;
        if (!ck_act16_begin(c, &st))
            return;
        bias_case_on(c, shapes[e][0], shapes[e][1], shapes[e][2], (ct_act)shapes[e][3], 0);
        ck_case_end(c);
        ck_act16_end(c, &st);
    }
}

/* ---- benchmark ---- */

typedef struct dense_bench {
    ct_context *ctx;
    ct_buf x, w, b, y, dy, dx, dw, db;
    int n, in, out;
} dense_bench;

static int bench_run(void *user)
{
    dense_bench *d = user;
    int st = ct_dense_forward(d->ctx, d->y, d->x, d->w, d->b, d->n, d->in, d->out);
    return st ? st : ct_dense_backward(d->ctx, d->dx, d->dw, d->db, d->dy, d->x, d->w, d->n,
                                       d->in, d->out);
}

/* ct_bias_backward_skip: the column sums of dy (n, ch) into db starting
 * at 0.25, the columns [at, at + len) left at 0.25 exactly; in both classes
 * and, by n, through the single-stage sum (n <= 256), the tree (257..4095)
 * and the two stages (4099). Tolerance as ct_bias_backward's: n + 1 terms. */
static void bias_skip_case(ct_check *c, int n, int ch, size_t at, size_t len)
{
    for (int k = 0; k < 2 && !ck_failed(c); k++) {
        ct_kernels real = ck_use_class(c, k ? CT_KERNELS_GPU : CT_KERNELS_CPU);
        ct_context *ctx = ck_ctx(c);
        ck_case(c, "bias gradient n=%d c=%d skipping [%zu, %zu), %s class", n, ch, at, at + len,
                ct_kernels_str(ct_context_kernels(ctx)));
        size_t total = (size_t)n * ch;
        double *dy = ck_host(c, total), *db = ck_host(c, (size_t)ch), *adb = ck_host(c, (size_t)ch);
        if (!ck_failed(c)) {
            ck_fill(c, dy, total, -1, 1);
            ck_round_f32(dy, total);
            ref_db(c, db, adb, dy, n, ch, 1);
        }
        for (size_t j = at; j < at + len && !ck_failed(c); j++)
            db[j] = adb[j] = 0.25;
        ct_buf d_dy = ck_dev_in(c, dy, total), d_db = ck_dev_const(c, (size_t)ch, 0.25);
        if (!ck_failed(c) &&
            !ck_status(c, ct_bias_backward_skip(ctx, d_db, d_dy, n, ch, at, len), "bias backward skip"))
            ck_expect(c, "db", d_db, (size_t)ch, db, ck_sum_atol((size_t)n + 1, adb, (size_t)ch), 0);
        ck_case_end(c);
        ck_use_class(c, real);
    }
}

void ct_check_dense(ct_check *c)
{
    /* the key-bias skip of attention's input projection: in the middle, at
     * either end, through each of the three sums */
    static const int skips[][4] = { { 5, 23, 7, 5 }, { 300, 23, 0, 4 }, { 4099, 19, 15, 4 } };
    for (size_t e = 0; e < CT_ARRAY_LEN(skips) && !ck_failed(c); e++)
        bias_skip_case(c, skips[e][0], skips[e][1],
                       (size_t)skips[e][2], (size_t)skips[e][3]);

    /* size-1 edges: single sample, single input, single output */
    static const int edges[][4] = { { 1, 1, 1, 1 }, { 1, 7, 1, 0 }, { 5, 1, 3, 1 }, { 3, 4, 1, 1 } };
    for (size_t e = 0; e < CT_ARRAY_LEN(edges) && !ck_failed(c); e++) {
        dense_case(c, edges[e][0], edges[e][1], edges[e][2], 0, edges[e][3], 0);
        ck_case_end(c);
    }
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        dense_case(c, ck_dim(c, 33), ck_dim(c, 129), ck_dim(c, 65), 0, ck_int(c, 0, 1), 0);
        ck_case_end(c);
    }
    dense16_cases(c);
    /* bias + activation: dense-like (hw 1, the column kernels) and conv-like
     * (the work-group kernels); the GPU class's two-stage sums cut the large
     * ones into many slices (73, 19 and 17), lengths no multiple of a group;
     * columns of at most 256 rows take its single-stage sum (n 256 at the
     * edge, 3 and 100), one more row (below R x 256, R lanes of a
     * work-group: 4096 on 256-item groups) the one-launch tree (257, 301),
     * and longer columns the two stages (4099) */
    bias_case(c, 1, 1, 1, CT_ACT_RELU, 0);
    ck_case_end(c);
    if (!ck_failed(c))
        bias_case(c, 3, 300, 1, CT_ACT_GELU, 1);
    ck_case_end(c);
    if (!ck_failed(c))
        bias_case(c, 2, 3, 300, CT_ACT_TANH, 0); /* rows longer than a work-group */
    ck_case_end(c);
    int small = ck_small(c); /* simulators: 7 and 3 slices */
    if (!ck_failed(c))
        bias_case(c, small ? 3 : 37, small ? 2 : 3, small ? 1100 : 1001, CT_ACT_RELU, 0);
    ck_case_end(c);
    if (!ck_failed(c) && !small)
        bias_case(c, 301, 300, 1, CT_ACT_NONE, 1);
    ck_case_end(c);
    if (!ck_failed(c))
        bias_case(c, small ? 40 : 100, small ? 5 : 7, 1, CT_ACT_GELU, 0);
    ck_case_end(c);
    if (!ck_failed(c))
        bias_case(c, 256, small ? 3 : 67, 1, CT_ACT_TANH, 1);
    ck_case_end(c);
    if (!ck_failed(c))
        bias_case(c, 257, small ? 3 : 45, 1, CT_ACT_GELU, 0);
    ck_case_end(c);
    if (!ck_failed(c))
        bias_case(c, 4099, small ? 3 : 21, 1, CT_ACT_SIGMOID, 1);
    ck_case_end(c);
    for (int a = CT_ACT_NONE; a < CT_ACT_COUNT && !ck_failed(c); a++)
        for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
            int hw = ck_int(c, 0, 2) == 0 ? 1 : ck_dim(c, 300);
            bias_case(c, ck_dim(c, 9), ck_dim(c, 17), hw, (ct_act)a, ck_int(c, 0, 1));
            ck_case_end(c);
        }
    bias16_cases(c);

    if (ck_benchmarking(c) && !ck_failed(c)) {
        int n = 128, in = 1024, out = 1024;
        size_t nx = (size_t)n * in, nw = (size_t)out * in, ny = (size_t)n * out;
        ck_case(c, "bench dense %dx%d->%d", n, in, out);
        dense_bench d = { ck_ctx(c), ck_dev_const(c, nx, 0.5), ck_dev_const(c, nw, 0.01),
                          ck_dev_const(c, (size_t)out, 0.1), ck_dev_out(c, ny),
                          ck_dev_const(c, ny, 1), ck_dev_out(c, nx), ck_dev_const(c, nw, 0),
                          ck_dev_const(c, (size_t)out, 0), n, in, out };
        /* three GEMMs of 2 n in out flops; bytes: every operand read or
         * written once per GEMM (dw and y twice: read-modify-write, bias) */
        double flops = 3.0 * 2.0 * n * in * out;
        double bytes = 4.0 * (2.0 * nx + 3.0 * nw + 3.0 * ny + 2.0 * ny + nx);
        if (!ck_failed(c))
            ck_bench(c, "128x1024->1024", flops, bytes, bench_run, &d);
        ck_case_end(c);
    }
}
