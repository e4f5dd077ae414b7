/*
 * eltwise.c - checks of the element-wise launchers (src/ops/eltwise.c)
 * against src/ref/eltwise.c, including in-place (aliased) calls.
 *
 * Tolerances, with u = 2^-24 (half a float ulp, relative) and operands the
 * device sees exactly:
 *   - add, accumulate, scale: one float rounding of an exact result,
 *     |err| <= u |ref|; checked at atol 0, rtol 2u (one ulp, so the bound
 *     is not a knife edge in the double comparison);
 *   - add backward: copies, atol 0, rtol 0;
 *   - axpy with |a| <= 2, |x|, |y| <= 2: the product may round before the
 *     add (or fuse into one fma): |err| <= u |a x| + u |ref| <= 4u + u |ref|;
 *     checked at atol 8u, rtol 2u (one ulp of each);
 *   - the gating multiply (x (rows, hw) times g (rows)): y and dx one
 *     rounding of an exact product, rtol 2u; added into a gradient two
 *     roundings, atol 4u, rtol 2u (|operands| <= 1); dg a sum of hw
 *     products, ck_sum_atol(hw) of the sums of |dy x| (a sum with a
 *     compensated or a plain float accumulation stays inside hw + 2 ulp of
 *     the absolute sum), plus the addend's rounding when added;
 *   - copies of row blocks (the concatenation): exact (atol 0, rtol 0);
 *     added into a gradient, one rounding (rtol 2u);
 *   - 16-bit activation storage (runs at bf16 or fp16 precision, GPU
 *     class): the residual add's kernels with operands exact in the
 *     format; a sum, exact in float or rounded once (2^-24), rounded to
 *     the format (unit roundoff u 2^-8 bf16, 2^-11 fp16; fp16's subnormal
 *     half step s 2^-25): rtol u (1 + 2^-24) + 2^-24, atol s; copies
 *     exact;
 *   - the non-finite count: an integer, exact (atol 0, rtol 0). Its inputs
 *     plant NaN, +Inf and -Inf at random places among finite values chosen
 *     to look suspicious (+-FLT_MAX, subnormals, -0), and the harness's NaN
 *     guard bands around x make any read out of bounds count one too many.
 */
#include <float.h>
#include <math.h>

#include "check/check.h"
#include "host/eltwise_host.h"
#include "ref/eltwise.h"

#define U 5.9604644775390625e-8 /* 2^-24 */

typedef struct add_loss {
    const double *a, *b, *w;
    double *y;
    size_t n;
} add_loss;

static double loss_of_ab(void *user)
{
    add_loss *l = user;
    ct_ref_add_forward(l->y, l->a, l->b, l->n);
    return ck_dot(l->y, l->w, l->n);
}

/* uniform in [lo, hi), rounded to float so the device sees the same values */
static void fill_f(ct_check *c, double *x, size_t n, double lo, double hi)
{
    ck_fill(c, x, n, lo, hi);
    for (size_t i = 0; i < n; i++)
        x[i] = (double)(float)x[i];
}

/* A device copy of x that is also an output (in-place calls write it):
 * output guard bands, so ck_expect checks them, filled from x. */
static ct_buf dev_inout(ct_check *c, const double *x, size_t n)
{
    ct_buf out = ck_dev_out(c, n), in = ck_dev_in(c, x, n);
    if (!ck_failed(c))
        ck_status(c, ct_copy(ck_ctx(c), out, in, n), "copying an in-place operand");
    return out;
}

static void one_case(ct_check *c, size_t n)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "eltwise n=%zu", n);
    double *a = ck_host(c, n), *b = ck_host(c, n), *dy = ck_host(c, n), *y = ck_host(c, n);
    double *da = ck_host(c, n), *db = ck_host(c, n), *r = ck_host(c, n);
    if (ck_failed(c))
        return;
    fill_f(c, a, n, -1, 1);
    fill_f(c, b, n, -1, 1);
    fill_f(c, dy, n, -1, 1);
    float s = (float)ck_uniform(c, -2, 2), alpha = (float)ck_uniform(c, -2, 2);

    /* add: into a fresh output, then in place over a */
    ct_buf d_a = dev_inout(c, a, n), d_b = dev_inout(c, b, n), d_dy = dev_inout(c, dy, n);
    ct_buf d_y = ck_dev_out(c, n), d_da = ck_dev_out(c, n), d_db = ck_dev_out(c, n);
    ct_buf d_db_only = ck_dev_out(c, n);
    if (ck_failed(c))
        return;
    ct_ref_add_forward(y, a, b, n);
    if (ck_status(c, ct_add_forward(ctx, d_y, d_a, d_b, n), "add forward"))
        return;
    ck_expect(c, "add y", d_y, n, y, 0, 2 * U);
    if (ck_status(c, ct_add_forward(ctx, d_a, d_a, d_b, n), "add forward in place"))
        return;
    ck_expect(c, "add y over a", d_a, n, y, 0, 2 * U);

    /* backward: both targets, one target, and a target that is dy itself */
    ct_ref_add_backward(da, db, dy, n);
    ct_buf none = { NULL, 0 };
    if (ck_status(c, ct_add_backward(ctx, d_da, d_db, d_dy, n), "add backward") ||
        ck_status(c, ct_add_backward(ctx, none, d_db_only, d_dy, n), "add backward, db only") ||
        ck_status(c, ct_add_backward(ctx, d_dy, none, d_dy, n), "add backward, da = dy"))
        return;
    ck_expect(c, "add da", d_da, n, da, 0, 0);
    ck_expect(c, "add db", d_db, n, db, 0, 0);
    ck_expect(c, "add db only", d_db_only, n, db, 0, 0);
    ck_expect(c, "add dy after da = dy", d_dy, n, dy, 0, 0);

    /* backward adding into one target and writing the other: d_da (= dy
     * now) += dy, d_db_only = dy; then adding into both */
    for (size_t i = 0; i < n; i++)
        r[i] = (double)(float)(da[i] + dy[i]);
    if (ck_status(c, ct_add_backward_acc(ctx, d_da, 1, d_db_only, 0, d_dy, n), "add backward acc"))
        return;
    ck_expect(c, "add da += dy", d_da, n, r, 0, 2 * U);
    ck_expect(c, "add db beside da += dy", d_db_only, n, db, 0, 0);
    for (size_t i = 0; i < n; i++)
        r[i] = (double)(float)(db[i] + dy[i]);
    if (ck_status(c, ct_add_backward_acc(ctx, d_db, 1, d_db_only, 1, d_dy, n), "add backward acc both"))
        return;
    ck_expect(c, "add da += dy, both", d_db, n, r, 0, 2 * U);
    ck_expect(c, "add db += dy, both", d_db_only, n, r, 0, 2 * U);

    /* accumulate: dst = b += dy */
    for (size_t i = 0; i < n; i++)
        r[i] = b[i];
    ct_ref_add_accumulate(r, dy, n);
    if (ck_status(c, ct_add_accumulate(ctx, d_b, d_dy, n), "add accumulate"))
        return;
    ck_expect(c, "accumulate dst", d_b, n, r, 0, 2 * U);

    /* fill and copy (zeroing and handing gradients on) */
    float v = (float)ck_uniform(c, -2, 2);
    for (size_t i = 0; i < n; i++)
        r[i] = v;
    ct_buf d_f = ck_dev_out(c, n), d_c = ck_dev_out(c, n);
    if (ck_failed(c) || ck_status(c, ct_fill(ctx, d_f, n, v), "fill") ||
        ck_status(c, ct_copy(ctx, d_c, d_b, n), "copy"))
        return;
    ck_expect(c, "fill x", d_f, n, r, 0, 0);
    for (size_t i = 0; i < n; i++)
        r[i] = (double)(float)(b[i] + dy[i]);
    ck_expect(c, "copy dst", d_c, n, r, 0, 0);

    /* scale dy in place by s */
    for (size_t i = 0; i < n; i++)
        r[i] = dy[i];
    ct_ref_scale(r, s, n);
    if (ck_status(c, ct_scale(ctx, d_dy, s, n), "scale"))
        return;
    ck_expect(c, "scale x", d_dy, n, r, 0, 2 * U);

    /* axpy: y (the add's output, a + b in float) += alpha * a_new, where
     * a_new is the in-place sum now in d_a: both read back as the floats */
    double *yf = ck_host(c, n);
    if (ck_failed(c))
        return;
    for (size_t i = 0; i < n; i++)
        yf[i] = (double)(float)y[i];
    for (size_t i = 0; i < n; i++)
        r[i] = yf[i];
    ct_ref_axpy(r, alpha, yf, n);
    if (ck_status(c, ct_axpy(ctx, d_y, alpha, d_a, n), "axpy"))
        return;
    ck_expect(c, "axpy y", d_y, n, r, 8 * U, 2 * U);

    add_loss l = { a, b, dy, ck_host(c, n), n };
    ck_gradcheck(c, "reference da", loss_of_ab, &l, a, n, da, 16);
    ck_gradcheck(c, "reference db", loss_of_ab, &l, b, n, db, 16);
}

/* The residual add's kernels with activations stored in 16 bits (the run's
 * precision, on the GPU class): forward, in place, backward written and
 * added, accumulate. */
static void add16_case(ct_check *c, size_t n)
{
    ck_act16_state st;
    if (!ck_act16_begin(c, &st))
        return;
    const int f = ck_act16(c);
    ck_case(c, "add n=%zu, 16-bit activations", n);
    ct_context *ctx = ck_ctx(c);
    double *a = ck_host(c, n), *b = ck_host(c, n), *dy = ck_host(c, n), *y = ck_host(c, n);
    double *r = ck_host(c, n);
    const double rtol = ck_prec_u((ct_precision)f) * (1 + U) + U, atol = ck_prec_sub((ct_precision)f);
    if (ck_failed(c))
        goto out;
    ck_fill(c, a, n, -1, 1);
    ck_fill(c, b, n, -1, 1);
    ck_fill(c, dy, n, -1, 1);
    ck_round_act(c, a, n);
    ck_round_act(c, b, n);
    ck_round_act(c, dy, n);
    ct_buf d_a = ck_act_inout(c, a, n), d_b = ck_act_in(c, b, n), d_dy = ck_act_in(c, dy, n);
    ct_buf d_y = ck_act_out(c, n), d_da = ck_act_out(c, n), d_db = ck_act_inout(c, b, n);
    if (ck_failed(c))
        goto out;
    ct_ref_add_forward(y, a, b, n);
    if (ck_status(c, ct_add_forward(ctx, d_y, d_a, d_b, n), "add forward") ||
        ck_status(c, ct_add_forward(ctx, d_a, d_a, d_b, n), "add forward in place"))
        goto out;
    ck_expect(c, "add y", d_y, n, y, atol, rtol);
    ck_expect(c, "add y over a", d_a, n, y, atol, rtol);
    /* da = dy written, db = b + dy added */
    for (size_t i = 0; i < n; i++)
        r[i] = b[i] + dy[i];
    if (ck_status(c, ct_add_backward_acc(ctx, d_da, 0, d_db, 1, d_dy, n), "add backward acc"))
        goto out;
    ck_expect(c, "add da = dy", d_da, n, dy, 0, 0);
    ck_expect(c, "add db += dy", d_db, n, r, atol, rtol);
    /* accumulate: da (= dy) += b */
    for (size_t i = 0; i < n; i++)
        r[i] = dy[i] + b[i];
    if (ck_status(c, ct_add_accumulate(ctx, d_da, d_b, n), "add accumulate"))
        goto out;
    ck_expect(c, "accumulate dst", d_da, n, r, atol, rtol);
out:
    ck_case_end(c);
    ck_act16_end(c, &st);
}

/* The conversions between 16-bit activations and floats, and their copy
 * and zero fill: exact (bound 0). From float32 the device rounds once to
 * nearest even, which the reference repeats on the float32 inputs (the
 * magnitudes span 2^-20 .. 2^4: fp16's subnormals and bf16's full
 * mantissa are both met); back to float32, a copy and a fill lose nothing. */
static void convert16_case(ct_check *c, size_t n)
{
    ck_act16_state st;
    if (!ck_act16_begin(c, &st))
        return;
    ck_case(c, "activation conversions n=%zu, 16-bit activations", n);
    ct_context *ctx = ck_ctx(c);
    double *x = ck_host(c, n), *r = ck_host(c, n), *zero = ck_host(c, n);
    if (ck_failed(c))
        goto out;
    ck_fill(c, x, n, -1, 1);
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)(float)ldexp(x[i], ck_int(c, -20, 4));
        r[i] = x[i];
        zero[i] = 0;
    }
    ck_round_act(c, r, n);
    ct_buf d_x = ck_dev_in(c, x, n), d_y = ck_act_out(c, n), d_r = ck_act_in(c, r, n);
    ct_buf d_f = ck_dev_out(c, n), d_c = ck_act_out(c, n), d_z = ck_act_inout(c, r, n);
    if (ck_failed(c))
        goto out;
    if (ck_status(c, ct_act_from_f32(ctx, d_y, d_x, n), "act_from_f32") ||
        ck_status(c, ct_act_to_f32(ctx, d_f, d_r, n), "act_to_f32") ||
        ck_status(c, ct_act_copy(ctx, d_c, d_r, n), "act_copy") ||
        ck_status(c, ct_act_zero(ctx, d_z, n), "act_zero"))
        goto out;
    ck_expect(c, "from float32", d_y, n, r, 0, 0);
    ck_expect(c, "to float32", d_f, n, r, 0, 0);
    ck_expect(c, "copy", d_c, n, r, 0, 0);
    ck_expect(c, "zero", d_z, n, zero, 0, 0);
out:
    ck_case_end(c);
    ck_act16_end(c, &st);
}

/* x with `bad` non-finite values at distinct random places (bad <= n). */
static void fill_nonfinite(ct_check *c, double *x, size_t n, size_t bad)
{
    static const double edge[] = { FLT_MAX, -FLT_MAX, FLT_MIN, 1e-45, -1e-45, -0.0, 0.0, 3e38 };
    for (size_t i = 0; i < n; i++) {
        int pick = ck_int(c, 0, 15);
        x[i] = pick < (int)CT_ARRAY_LEN(edge) ? edge[pick] : (double)(float)ck_uniform(c, -1e30, 1e30);
    }
    /* a partial Fisher-Yates draw of `bad` distinct positions */
    size_t *pos = (size_t *)(void *)ck_host(c, n);
    if (ck_failed(c))
        return;
    for (size_t i = 0; i < n; i++)
        pos[i] = i;
    for (size_t k = 0; k < bad; k++) {
        size_t j = k + (size_t)ck_u32(c) % (n - k), t = pos[k];
        pos[k] = pos[j];
        pos[j] = t;
        int kind = ck_int(c, 0, 2);
        x[pos[k]] = kind == 0 ? NAN : kind == 1 ? INFINITY : -INFINITY;
    }
}

static void nonfinite_case(ct_check *c, size_t n)
{
    ct_context *ctx = ck_ctx(c);
    /* none, all, one, or a random share */
    int mode = ck_int(c, 0, 3);
    size_t bad = mode == 0 ? 0 : mode == 1 ? n : mode == 2 ? (n ? 1 : 0) : (size_t)ck_u32(c) % (n + 1);
    ck_case(c, "nonfinite count n=%zu bad=%zu", n, bad);
    double *x = ck_host(c, n), *x2 = ck_host(c, n);
    if (ck_failed(c))
        return;
    fill_nonfinite(c, x, n, bad);
    /* a second input with another count, through the same workspace */
    fill_nonfinite(c, x2, n, n - bad);
    size_t wn = ct_nonfinite_count_workspace_size(n);
    ct_buf d_x = n ? ck_dev_in(c, x, n) : (ct_buf){ NULL, 0 };
    ct_buf d_x2 = n ? ck_dev_in(c, x2, n) : (ct_buf){ NULL, 0 };
    ct_buf ws = ck_dev_out(c, wn), d_c = ck_dev_out(c, 1), d_c2 = ck_dev_out(c, 1);
    if (ck_failed(c))
        return;
    double want = (double)ct_ref_nonfinite_count(x, n), want2 = (double)ct_ref_nonfinite_count(x2, n);
    if (want != (double)bad || want2 != (double)(n - bad)) {
        ck_status(c, CT_ERR_INTERNAL, "the reference miscounts the planted values");
        return;
    }
    if (ck_status(c, ct_nonfinite_count(ctx, d_c, d_x, n, ws), "nonfinite count") ||
        ck_status(c, ct_nonfinite_count(ctx, d_c2, d_x2, n, ws), "nonfinite count, reused workspace"))
        return;
    ck_expect(c, "nonfinite count", d_c, 1, &want, 0, 0);
    ck_expect(c, "nonfinite count, second input", d_c2, 1, &want2, 0, 0);
}

typedef struct mul_loss {
    const double *x, *g, *w;
    double *y;
    size_t rows, hw;
} mul_loss;

/* The count over activations in 16-bit storage (ct_nonfinite_count_act,
 * --check-finite's per-layer diagnosis): the same inputs rounded to the
 * format first, where the large finite ones (FLT_MAX, and everything
 * above 65504 in fp16) become infinities the reference counts too; exact. */
static void nonfinite16_case(ct_check *c, size_t n)
{
    ck_act16_state st;
    if (!ck_act16_begin(c, &st))
        return;
    size_t bad = (size_t)ck_u32(c) % (n + 1);
    ck_case(c, "nonfinite count n=%zu bad=%zu, 16-bit activations", n, bad);
    double *x = ck_host(c, n);
    if (ck_failed(c))
        goto out;
    fill_nonfinite(c, x, n, bad);
    ck_round_act(c, x, n);
    ct_buf d_x = ck_act_in(c, x, n), ws = ck_dev_out(c, ct_nonfinite_count_workspace_size(n));
    ct_buf d_c = ck_dev_out(c, 1);
    if (ck_failed(c))
        goto out;
    double want = (double)ct_ref_nonfinite_count(x, n);
    if (!ck_status(c, ct_nonfinite_count_act(ck_ctx(c), d_c, d_x, n, ws), "nonfinite count over activations"))
        ck_expect(c, "nonfinite count over activations", d_c, 1, &want, 0, 0);
out:
    ck_case_end(c);
    ck_act16_end(c, &st);
}

static double loss_of_mul(void *user)
{
    mul_loss *l = user;
    ct_ref_mul_forward(l->y, l->x, l->g, l->rows, l->hw);
    return ck_dot(l->y, l->w, l->rows * l->hw);
}

/* The gating multiply in the context's class: y = x g, then dx and dg
 * written (dx over dy itself when `alias`) or added (acc) */
static void mul_case_on(ct_check *c, size_t rows, size_t hw, int acc, int alias)
{
    ct_context *ctx = ck_ctx(c);
    size_t n = rows * hw;
    double *x = ck_host(c, n), *g = ck_host(c, rows), *dy = ck_host(c, n), *y = ck_host(c, n);
    double *dx = ck_host(c, n), *dg = ck_host(c, rows), *dx0 = ck_host(c, n), *dg0 = ck_host(c, rows);
    double *adg = ck_host(c, rows);
    if (ck_failed(c))
        return;
    fill_f(c, x, n, -1, 1);
    fill_f(c, g, rows, -1, 1);
    fill_f(c, dy, n, -1, 1);
    fill_f(c, dx0, n, -1, 1);
    fill_f(c, dg0, rows, -1, 1);
    ct_ref_mul_forward(y, x, g, rows, hw);
    ct_ref_mul_backward(dx, dg, dy, x, g, rows, hw);
    for (size_t r = 0; r < rows; r++) {
        adg[r] = 0;
        for (size_t p = 0; p < hw; p++)
            adg[r] += fabs(dy[r * hw + p] * x[r * hw + p]);
    }
    ct_buf d_x = ck_dev_in(c, x, n), d_g = ck_dev_in(c, g, rows), d_dy = dev_inout(c, dy, n);
    ct_buf d_y = ck_dev_out(c, n), d_dx = acc ? dev_inout(c, dx0, n) : ck_dev_out(c, n);
    ct_buf d_dg = acc ? dev_inout(c, dg0, rows) : ck_dev_out(c, rows);
    if (ck_failed(c) || ck_status(c, ct_mul_forward(ctx, d_y, d_x, d_g, rows, hw), "mul forward"))
        return;
    ck_expect(c, "mul y", d_y, n, y, 0, 2 * U);
    if (alias) /* dx over dy: dg must read dy first */
        d_dx = d_dy;
    if (ck_status(c, ct_mul_backward(ctx, d_dx, acc && !alias, d_dg, acc, d_dy, d_x, d_g, rows, hw),
                  "mul backward"))
        return;
    double at = ck_sum_atol(hw, adg, rows);
    if (acc) {
        for (size_t i = 0; i < n && !alias; i++)
            dx[i] += dx0[i];
        for (size_t r = 0; r < rows; r++)
            dg[r] += dg0[r];
        at += 2 * U;
    }
    ck_expect(c, "mul dx", d_dx, n, dx, acc && !alias ? 4 * U : 0, 2 * U);
    ck_expect(c, "mul dg", d_dg, rows, dg, at, 2 * U);
    /* the reference's gradients by finite differences (unaccumulated) */
    ct_ref_mul_backward(dx, dg, dy, x, g, rows, hw);
    mul_loss l = { x, g, dy, ck_host(c, n), rows, hw };
    ck_gradcheck(c, "reference dx", loss_of_mul, &l, x, n, dx, 16);
    mul_loss lg = { x, g, dy, ck_host(c, n), rows, hw };
    ck_gradcheck(c, "reference dg", loss_of_mul, &lg, g, rows, dg, 16);
}

/* ... in both classes (a row per work-item in the CPU class's dg) */
static void mul_case(ct_check *c, size_t rows, size_t hw, int acc, int alias)
{
    for (int cpu = 0; cpu <= 1 && !ck_failed(c); cpu++) {
        ct_kernels real = ck_use_class(c, cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
        ck_case(c, "mul %zu rows of %zu%s%s, %s class", rows, hw, acc ? ", added" : "",
                alias ? ", dx over dy" : "", cpu ? "cpu" : "gpu");
        mul_case_on(c, rows, hw, acc, alias);
        ck_case_end(c);
        ck_use_class(c, real);
    }
}

/* Row blocks: src (rows, sld) -> dst (rows, dld) at column `at`, len wide,
 * written then added, in the context's class; the columns of dst outside
 * the block keep their values */
static void rows_case_on(ct_check *c, size_t rows, size_t len, size_t dld, size_t sld, size_t at)
{
    ct_context *ctx = ck_ctx(c);
    double *src = ck_host(c, rows * sld), *dst = ck_host(c, rows * dld), *want = ck_host(c, rows * dld);
    if (ck_failed(c))
        return;
    fill_f(c, src, rows * sld, -1, 1);
    fill_f(c, dst, rows * dld, -1, 1);
    for (size_t i = 0; i < rows * dld; i++)
        want[i] = dst[i];
    for (size_t r = 0; r < rows; r++)
        for (size_t p = 0; p < len; p++)
            want[r * dld + at + p] = src[r * sld + p];
    ct_buf d_src = ck_dev_in(c, src, rows * sld), d_dst = dev_inout(c, dst, rows * dld);
    if (ck_failed(c) ||
        ck_status(c, ct_copy_rows(ctx, ct_buf_at(d_dst, at), dld, d_src, sld, len, rows, 0), "copy rows"))
        return;
    ck_expect(c, "rows copied", d_dst, rows * dld, want, 0, 0);
    for (size_t r = 0; r < rows; r++)
        for (size_t p = 0; p < len; p++)
            want[r * dld + at + p] = (double)(float)(want[r * dld + at + p] + src[r * sld + p]);
    if (ck_status(c, ct_copy_rows(ctx, ct_buf_at(d_dst, at), dld, d_src, sld, len, rows, 1), "add rows"))
        return;
    ck_expect(c, "rows added", d_dst, rows * dld, want, 0, 2 * U);
}

static void rows_case(ct_check *c, size_t rows, size_t len, size_t dld, size_t sld, size_t at)
{
    for (int cpu = 0; cpu <= 1 && !ck_failed(c); cpu++) {
        ct_kernels real = ck_use_class(c, cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
        ck_case(c, "copy rows %zu x %zu into %zu at %zu from %zu, %s class", rows, len, dld, at, sld,
                cpu ? "cpu" : "gpu");
        rows_case_on(c, rows, len, dld, sld, at);
        ck_case_end(c);
        ck_use_class(c, real);
    }
}

typedef struct eltwise_bench {
    ct_context *ctx;
    ct_buf a, b, y, g;
    size_t n;
} eltwise_bench;

/* A residual join: y = a + b forward, then the fan-out's second gradient
 * accumulated into the first. */
static int bench_run(void *user)
{
    eltwise_bench *e = user;
    int st = ct_add_forward(e->ctx, e->y, e->a, e->b, e->n);
    return st ? st : ct_add_accumulate(e->ctx, e->a, e->g, e->n);
}

void ct_check_eltwise(ct_check *c)
{
    one_case(c, 1);
    ck_case_end(c);
    /* the CPU class's host loops (eltwise_host.h) take CT_ELTWISE_HOST_MIN
     * elements and up, in items of 16384: just below, and three items with
     * a ragged last one */
    static const size_t fixed[] = { CT_ELTWISE_HOST_MIN - 1, 2 * 16384 + CT_ELTWISE_HOST_MIN + 77 };
    for (size_t k = 0; k < CT_ARRAY_LEN(fixed) && !ck_failed(c); k++) {
        one_case(c, fixed[k]);
        ck_case_end(c);
    }
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        one_case(c, (size_t)ck_dim(c, 5000));
        ck_case_end(c);
    }
    add16_case(c, 1); /* (at bf16 or fp16 precision: ck_act16_begin) */
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c) && ct_context_precision(ck_ctx(c)); it++)
        add16_case(c, (size_t)ck_dim(c, 5000));
    convert16_case(c, 1);
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c) && ct_context_precision(ck_ctx(c)); it++)
        convert16_case(c, (size_t)ck_dim(c, 5000));
    /* the gating multiply: one element; a squeeze-and-excitation shape
     * (rows longer than a 256-item group); one shape (hw 1); random */
    static const size_t mul_fixed[][2] = { { 1, 1 }, { 6, 300 }, { 300, 1 }, { 5, 49 } };
    for (size_t k = 0; k < CT_ARRAY_LEN(mul_fixed) && !ck_failed(c); k++)
        mul_case(c, mul_fixed[k][0], mul_fixed[k][1], (int)k & 1, k == 3);
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++)
        mul_case(c, (size_t)ck_dim(c, 40), (size_t)ck_dim(c, 400), ck_int(c, 0, 1), ck_int(c, 0, 3) == 0);
    /* row blocks: one element; a concatenation's middle piece; rows wider
     * than a 256-item group; random */
    rows_case(c, 1, 1, 1, 1, 0);
    rows_case(c, 5, 60, 100, 60, 17);
    rows_case(c, 3, 700, 1000, 701, 300);
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        size_t len = (size_t)ck_dim(c, 300), dld = len + (size_t)ck_int(c, 0, 50);
        rows_case(c, (size_t)ck_dim(c, 30), len, dld, len + (size_t)ck_int(c, 0, 3),
                  (size_t)ck_int(c, 0, (int)(dld - len)));
    }
    /* the count: nothing to count, then a size whose work-items loop over
     * several elements each (about 16, src/ops/eltwise.c), then random ones */
    nonfinite_case(c, 0);
    ck_case_end(c);
    if (!ck_failed(c)) {
        nonfinite_case(c, 2 * 65536 + 77);
        ck_case_end(c);
    }
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        nonfinite_case(c, (size_t)ck_dim(c, 5000));
        ck_case_end(c);
    }
    nonfinite16_case(c, 2 * 65536 + 77); /* (at bf16 or fp16 precision) */
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c) && ct_context_precision(ck_ctx(c)); it++)
        nonfinite16_case(c, (size_t)ck_dim(c, 5000));
    if (ck_benchmarking(c) && !ck_failed(c)) {
        size_t n = (size_t)1 << 22;
        ck_case(c, "bench add + accumulate n=%zu", n);
        eltwise_bench e = { ck_ctx(c), ck_dev_const(c, n, 0.5), ck_dev_const(c, n, 0.25),
                            ck_dev_out(c, n), ck_dev_const(c, n, 0), n };
        if (!ck_failed(c))
            ck_bench(c, "add + accumulate 4M", 2.0 * (double)n, 6.0 * 4 * (double)n, bench_run, &e);
        ck_case_end(c);
    }
}
