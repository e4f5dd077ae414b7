/*
 * loss.c - checks of the losses (src/ops/loss.c) against src/ref/loss.c.
 *
 * Tolerances, with eps = FLT_EPSILON = 1.19e-7 (the device may use exp/log
 * within 3-4 ulp, division within 2.5 ulp, as OpenCL allows):
 *   softmax-xent loss: a row's loss (m - x_label) + log(s) has error
 *     <= ~eps |m - x_label| (one subtraction) + ~6 eps (s, a Kahan sum of
 *     exps each within 4 ulp, enters log) + ~3 eps |log s| (log's own
 *     ulps, log s <= log K <= 6) ~ 26 eps + eps * loss; the mean over rows
 *     adds (2 + log2 wg) eps of the sum: atol 4e-6 (> 26 eps = 3.1e-6),
 *     rtol 1e-5 (> 11 eps = 1.3e-6). Independent of N: each work-item's
 *     share is Kahan-summed and the tree has log2(wg) <= 8 levels. The
 *     GPU class's s: each lane's Kahan sum of exp(x - m) with the row's
 *     maximum m already known (no rescaling), the lanes merged by a tree
 *     of up to 8 levels that carries each addition's rounding error (exact
 *     by TwoSum) into the compensation, so s keeps the ~6 eps above: seeds
 *     1-5 at 40 iterations stay within 0.21 of these tolerances.
 *   correct count: exact (same float logits, same first-index rule).
 *   softmax-xent dx: p = exp(x - m) / s has relative error <= ~14 eps, and
 *     p - 1 for the label keeps that error absolutely: atol 4e-6 * scale / N,
 *     rtol 4e-6 (~33 eps).
 *   mse loss: positive terms, each (x - t)^2 within 3 eps, Kahan + tree
 *     ~10 eps, the division 1 eps: rtol 2e-6 (~17 eps), atol 0. Its mean
 *     absolute error likewise (each |x - t| within 1 eps): rtol 2e-6.
 *   mse dx, dt: x - t exact up to one rounding, times k = 2 scale / n
 *     (two float roundings): rtol 1e-6 (~8 eps), atol 0.
 *   bce loss: positive terms max(x, 0) - x t + log1p(exp(-|x|)) (|x|, |t|
 *     <= 3: each within ~8 eps of itself and of |x t| + 1.05), Kahan + tree
 *     ~10 eps of the sum of those: atol 2e-6 * (mean |x t| + 1.05) rtol 0;
 *     its right-label count is an integer (exact) over K: one rounding,
 *     rtol 1.2e-7.
 *   bce dx: sigmoid within ~4 eps of 1 minus t, times k: atol 1e-6 * k,
 *     rtol 1e-6; dt = -k x, two roundings: rtol 1e-6, atol 0.
 * 16-bit activation storage (runs at bf16 or fp16 precision): the softmax
 * cross-entropy's GPU-class cases run again with the logits and dx stored
 * in the format, the logits exact in it (fp16 skips the huge kind: 1e30
 * is past its range). The loss and the count are float computations on
 * those exact logits: bounds as above. dx is rounded once more on store:
 * unit roundoff u (2^-8 bf16, 2^-11 fp16) of the float result, fp16's
 * subnormal half step s = 2^-25: atol (1 + u) 4e-6 scale / N + s, rtol
 * 4e-6 + u (1 + 4e-6).
 */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "check/check.h"
#include "ref/loss.h"

/* ---- int32 labels: the harness makes float buffers only ---- */

static cl_mem labels_dev(ct_check *c, const int32_t *labels, size_t n)
{
    cl_mem m = NULL;
    int st = ct_buffer_create(ck_ctx(c), n * sizeof(int32_t), &m);
    if (!st)
        st = ct_buffer_write(ck_ctx(c), m, 0, n * sizeof(int32_t), labels);
    if (st) {
        ck_status(c, st, "allocating the labels buffer");
        ct_buffer_release(&m);
    }
    return m;
}

/* Releases after the queue drains (the kernels may still read the labels). */
static void labels_release(ct_check *c, cl_mem *m)
{
    if (*m)
        ct_context_finish(ck_ctx(c));
    ct_buffer_release(m);
}

/* ---- softmax + cross-entropy ---- */

typedef struct xent_loss {
    const double *x;
    const int32_t *labels;
    size_t N, K;
    double scale;
} xent_loss;

static double xent_of_x(void *user)
{
    xent_loss *l = user;
    double loss;
    ct_ref_softmax_xent_forward(&loss, NULL, l->x, l->labels, l->N, l->K);
    return loss * l->scale;
}

/* kind: 0 plain, 1 wide logits (exp overflows without the max shift),
 * 2 ties for the maximum, 3 one label out of range, 4 huge logits (+-1e30:
 * x - m far below exp's range, where a vector exp's range reduction fails) */
static void xent_case_on(ct_check *c, size_t N, size_t K, int kind, double scale);

/* The launchers pick row-per-work-item kernels in the CPU class (the host
 * pool past ops/loss_host.h's threshold on the host GEMM path) and
 * work-group trees in the GPU class: the case switches the context to
 * either (ck_use_class), so both are checked on any device. */
static void xent_case(ct_check *c, size_t N, size_t K, int kind, double scale, int as_cpu)
{
    ct_kernels real = ck_use_class(c, as_cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
    xent_case_on(c, N, K, kind, scale);
    /* at 16-bit precision the GPU class's case again with 16-bit logits */
    ck_act16_state s;
    if (!as_cpu && !(ct_context_precision(ck_ctx(c)) == CT_PRECISION_FP16 && kind == 4) &&
        ck_act16_begin(c, &s)) {
        xent_case_on(c, N, K, kind, scale);
        ck_act16_end(c, &s);
    }
    ck_use_class(c, real);
}

static void xent_case_on(ct_check *c, size_t N, size_t K, int kind, double scale)
{
    ct_context *ctx = ck_ctx(c);
    static const char *const kinds[] = { "plain", "wide", "ties", "bad label", "huge" };
    const int f = ck_act16(c);
    const double u = f ? ck_prec_u((ct_precision)f) : 0, sub = f ? ck_prec_sub((ct_precision)f) : 0;
    ck_case(c, "softmax_xent N=%zu K=%zu %s scale=%g as %s%s", N, K, kinds[kind], scale,
            ct_kernels_str(ct_context_kernels(ctx)), f ? ", 16-bit activations" : "");
    double *x = ck_host(c, N * K), *dx = ck_host(c, N * K);
    int32_t *labels = (int32_t *)ck_host(c, N); /* N int32 in N doubles' room */
    cl_mem d_lab = NULL;
    if (ck_failed(c))
        return;
    double span = kind == 1 ? 150 : kind == 4 ? 1e30 : 5;
    ck_fill(c, x, N * K, -span, span);
    for (size_t r = 0; r < N; r++)
        labels[r] = (int32_t)ck_int(c, 0, (int)K - 1);
    for (size_t r = 0; kind == 2 && K > 1 && r < N; r += 2) {
        /* copy the row's maximum elsewhere; the label sits on either copy */
        double *row = x + r * K;
        size_t am = 0, other = (size_t)ck_int(c, 0, (int)K - 2);
        for (size_t k = 1; k < K; k++)
            if (row[k] > row[am])
                am = k;
        other += other >= am;
        row[other] = row[am];
        labels[r] = (int32_t)(ck_int(c, 0, 1) ? am : other);
    }
    if (kind == 3)
        labels[ck_int(c, 0, (int)N - 1)] = ck_int(c, 0, 1) ? (int32_t)K : -1;
    for (size_t i = 0; i < N * K; i++)
        x[i] = (double)(float)x[i];
    ck_round_act(c, x, N * K);
    double loss, correct;
    ct_ref_softmax_xent_forward(&loss, &correct, x, labels, N, K);
    ct_ref_softmax_xent_backward(dx, x, labels, N, K, scale);

    ct_buf d_x = ck_act_in(c, x, N * K), d_loss = ck_dev_out(c, 1), d_corr = ck_dev_out(c, 1);
    ct_buf d_dx = ck_act_out(c, N * K), d_ws = ck_dev_out(c, ct_softmax_xent_workspace(N));
    /* the recomputing backward's output: a second buffer in 16 bits (ct_fill writes floats) */
    ct_buf d_dx2 = f ? ck_act_out(c, N * K) : d_dx;
    const double dx_atol = 4e-6 * scale / (double)N * (1 + u) + sub, dx_rtol = 4e-6 + u * (1 + 4e-6);
    d_lab = labels_dev(c, labels, N);
    ct_buf b_lab = { d_lab, 0 };
    if (ck_failed(c))
        goto done;
    if (ck_status(c, ct_softmax_xent_forward(ctx, d_loss, d_corr, d_x, b_lab, N, K, d_ws),
                  "softmax_xent forward"))
        goto done;
    ck_expect(c, "forward loss", d_loss, 1, &loss, 4e-6, 1e-5);
    ck_expect(c, "forward correct count", d_corr, 1, &correct, 0, 0);
    /* with the row statistics the forward left in ws, then recomputed */
    if (ck_status(c, ct_softmax_xent_backward_saved(ctx, d_dx, d_x, b_lab, N, K, (float)scale, d_ws),
                  "softmax_xent backward (saved)"))
        goto done;
    ck_expect(c, "backward dx (saved)", d_dx, N * K, dx, dx_atol, dx_rtol);
    if (ck_failed(c) || (!f && ck_status(c, ct_fill(ctx, d_dx, N * K, NAN), "refilling dx")) ||
        ck_status(c, ct_softmax_xent_backward(ctx, d_dx2, d_x, b_lab, N, K, (float)scale),
                  "softmax_xent backward"))
        goto done;
    ck_expect(c, "backward dx", d_dx2, N * K, dx, dx_atol, dx_rtol);

    if (kind != 3 && kind != 4) { /* huge: no finite differences at 1e30 */
        xent_loss l = { x, labels, N, K, scale };
        ck_gradcheck(c, "reference dx", xent_of_x, &l, x, N * K, dx, 32);
    }
done:
    labels_release(c, &d_lab);
}

/* ---- per pixel: scores (n, K, P), a label per pixel ---- */

typedef struct px_loss {
    const double *x; /* (n, K, P) */
    double *rows;    /* (n P, K) */
    const int32_t *labels;
    size_t n, K, P;
    double scale;
} px_loss;

/* (n, K, P) -> rows (n P, K), or back (to_rows 0) */
static void px_transpose(double *dst, const double *src, size_t n, size_t K, size_t P, int to_rows)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < K; k++)
            for (size_t p = 0; p < P; p++) {
                size_t a = (i * K + k) * P + p, r = (i * P + p) * K + k;
                if (to_rows)
                    dst[r] = src[a];
                else
                    dst[a] = src[r];
            }
}

static double px_of_x(void *user)
{
    px_loss *l = user;
    double loss;
    px_transpose(l->rows, l->x, l->n, l->K, l->P, 1);
    ct_ref_softmax_xent_forward(&loss, NULL, l->rows, l->labels, l->n * l->P, l->K);
    return loss * l->scale;
}

/* The per-pixel kernels (the same in both classes) against the row
 * reference on the transposed scores; kind as xent_case_on's (0 to 3).
 * Tolerances as the row kernels': the loss is a mean of rows each within a
 * few ulp (4e-6 absolute, 1e-5 relative), dx elements 4e-6 relative with
 * 4e-6 scale / N absolute. */
static void px_case(ct_check *c, size_t n, size_t K, size_t P, int kind, double scale, int as_cpu)
{
    ct_kernels real = ck_use_class(c, as_cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
    ct_context *ctx = ck_ctx(c);
    size_t N = n * P, E = N * K;
    ck_case(c, "softmax_xent per pixel n=%zu K=%zu P=%zu kind %d scale=%g as %s", n, K, P, kind, scale,
            ct_kernels_str(ct_context_kernels(ctx)));
    double *x = ck_host(c, E), *rows = ck_host(c, E), *drows = ck_host(c, E), *dx = ck_host(c, E);
    int32_t *labels = (int32_t *)ck_host(c, N);
    cl_mem d_lab = NULL;
    if (ck_failed(c))
        goto done;
    ck_fill(c, x, E, kind == 1 ? -150 : -5, kind == 1 ? 150 : 5);
    ck_round_f32(x, E);
    for (size_t r = 0; r < N; r++)
        labels[r] = (int32_t)ck_int(c, 0, (int)K - 1);
    if (kind == 2 && K > 1) /* a tie for the maximum: pixel 0's scores all equal */
        for (size_t k = 0; k < K; k++)
            x[k * P] = 1.0;
    if (kind == 3)
        labels[ck_int(c, 0, (int)N - 1)] = ck_int(c, 0, 1) ? (int32_t)K : -1;
    double loss, correct;
    px_transpose(rows, x, n, K, P, 1);
    ct_ref_softmax_xent_forward(&loss, &correct, rows, labels, N, K);
    ct_ref_softmax_xent_backward(drows, rows, labels, N, K, scale);
    px_transpose(dx, drows, n, K, P, 0);
    ct_buf d_x = ck_dev_in(c, x, E), d_loss = ck_dev_out(c, 1), d_corr = ck_dev_out(c, 1);
    ct_buf d_dx = ck_dev_out(c, E), d_ws = ck_dev_out(c, ct_softmax_xent_workspace(N));
    d_lab = labels_dev(c, labels, N);
    ct_buf b_lab = { d_lab, 0 };
    if (ck_failed(c) ||
        ck_status(c, ct_softmax_xent_px_forward(ctx, d_loss, d_corr, d_x, b_lab, n, K, P, d_ws), "forward"))
        goto done;
    ck_expect(c, "forward loss", d_loss, 1, &loss, 4e-6, 1e-5);
    ck_expect(c, "forward correct count", d_corr, 1, &correct, 0, 0);
    if (ck_status(c, ct_softmax_xent_px_backward(ctx, d_dx, d_x, b_lab, n, K, P, (float)scale), "backward"))
        goto done;
    ck_expect(c, "backward dx", d_dx, E, dx, 4e-6 * scale / (double)N, 4e-6);
    if (kind != 3) {
        px_loss l = { x, ck_host(c, E), labels, n, K, P, scale };
        ck_gradcheck(c, "reference dx", px_of_x, &l, x, E, dx, 32);
    }
done:
    labels_release(c, &d_lab);
    ck_use_class(c, real);
}

/* ---- mean-squared error ---- */

typedef struct mse_loss {
    const double *x, *t;
    size_t n;
    double scale;
} mse_loss;

static double mse_of(void *user)
{
    mse_loss *l = user;
    double loss;
    ct_ref_mse_forward(&loss, NULL, l->x, l->t, l->n);
    return loss * l->scale;
}

static void mse_case(ct_check *c, size_t n, double scale, int with_dt)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "mse n=%zu scale=%g%s", n, scale, with_dt ? "" : " no dt");
    double *x = ck_host(c, n), *t = ck_host(c, n), *dx = ck_host(c, n), *dt = ck_host(c, n);
    if (ck_failed(c))
        return;
    ck_fill(c, x, n, -3, 3);
    ck_fill(c, t, n, -3, 3);
    for (size_t i = 0; i < n; i++) {
        x[i] = (double)(float)x[i];
        t[i] = (double)(float)t[i];
    }
    double loss, mae;
    ct_ref_mse_forward(&loss, &mae, x, t, n);
    ct_ref_mse_backward(dx, dt, x, t, n, scale);

    ct_buf d_x = ck_dev_in(c, x, n), d_t = ck_dev_in(c, t, n), d_loss = ck_dev_out(c, 1);
    ct_buf d_mae = with_dt ? ck_dev_out(c, 1) : (ct_buf){ NULL, 0 };
    ct_buf d_dx = ck_dev_out(c, n), d_dt = with_dt ? ck_dev_out(c, n) : (ct_buf){ NULL, 0 };
    if (ck_failed(c))
        return;
    if (ck_status(c, ct_mse_forward(ctx, d_loss, d_mae, d_x, d_t, n), "mse forward"))
        return;
    ck_expect(c, "mse loss", d_loss, 1, &loss, 0, 2e-6);
    if (with_dt) /* the cases without dt run the forward without the mean absolute error */
        ck_expect(c, "mse mean absolute error", d_mae, 1, &mae, 0, 2e-6);
    if (ck_status(c, ct_mse_backward(ctx, d_dx, d_dt, d_x, d_t, n, (float)scale), "mse backward"))
        return;
    ck_expect(c, "mse dx", d_dx, n, dx, 0, 1e-6);
    if (with_dt)
        ck_expect(c, "mse dt", d_dt, n, dt, 0, 1e-6);

    mse_loss l = { x, t, n, scale };
    ck_gradcheck(c, "reference mse dx", mse_of, &l, x, n, dx, 32);
    ck_gradcheck(c, "reference mse dt", mse_of, &l, t, n, dt, 32);
}

/* ---- binary cross-entropy on logits ---- */

typedef struct bce_loss {
    const double *x, *t;
    size_t n;
    double scale;
} bce_loss;

static double bce_of(void *user)
{
    bce_loss *l = user;
    double loss;
    ct_ref_bce_forward(&loss, NULL, l->x, l->t, l->n, 1);
    return loss * l->scale;
}

/* n elements in rows of K, targets in [0, 1] (soft labels) or {0, 1} */
static void bce_case(ct_check *c, size_t n, size_t K, double scale, int hard, int with_dt)
{
    ct_context *ctx = ck_ctx(c);
    ck_case(c, "bce n=%zu K=%zu scale=%g%s%s", n, K, scale, hard ? " 0/1 targets" : "", with_dt ? "" : " no dt");
    double *x = ck_host(c, n), *t = ck_host(c, n), *dx = ck_host(c, n), *dt = ck_host(c, n);
    if (ck_failed(c))
        return;
    ck_fill(c, x, n, -3, 3);
    ck_fill(c, t, n, 0, 1);
    double mag = 0;
    for (size_t i = 0; i < n; i++) {
        if (hard)
            t[i] = t[i] > 0.5;
        x[i] = (double)(float)x[i];
        t[i] = (double)(float)t[i];
        mag += (fabs(x[i] * t[i]) + 1.05) / (double)n;
    }
    double loss, right;
    ct_ref_bce_forward(&loss, &right, x, t, n, K);
    ct_ref_bce_backward(dx, dt, x, t, n, scale);
    ct_buf d_x = ck_dev_in(c, x, n), d_t = ck_dev_in(c, t, n), d_loss = ck_dev_out(c, 1), d_right = ck_dev_out(c, 1);
    ct_buf d_dx = ck_dev_out(c, n), d_dt = with_dt ? ck_dev_out(c, n) : (ct_buf){ NULL, 0 };
    if (ck_failed(c) || ck_status(c, ct_bce_forward(ctx, d_loss, d_right, d_x, d_t, n, K), "bce forward"))
        return;
    ck_expect(c, "bce loss", d_loss, 1, &loss, 2e-6 * mag, 0);
    ck_expect(c, "bce right labels / K", d_right, 1, &right, 0, 1.2e-7);
    if (ck_status(c, ct_bce_backward(ctx, d_dx, d_dt, d_x, d_t, n, (float)scale), "bce backward"))
        return;
    ck_expect(c, "bce dx", d_dx, n, dx, 1e-6 * scale / (double)n, 1e-6);
    if (with_dt)
        ck_expect(c, "bce dt", d_dt, n, dt, 0, 1e-6);
    bce_loss l = { x, t, n, scale };
    ck_gradcheck(c, "reference bce dx", bce_of, &l, x, n, dx, 32);
    if (with_dt)
        ck_gradcheck(c, "reference bce dt", bce_of, &l, t, n, dt, 32);
}

/* ---- benchmark: softmax-xent at an ImageNet-like classifier head ---- */

typedef struct xent_bench {
    ct_context *ctx;
    ct_buf x, loss, correct, dx, labels, ws;
    size_t N, K;
} xent_bench;

static int bench_run(void *user)
{
    xent_bench *b = user;
    int st = ct_softmax_xent_forward(b->ctx, b->loss, b->correct, b->x, b->labels, b->N, b->K, b->ws);
    return st ? st : ct_softmax_xent_backward(b->ctx, b->dx, b->x, b->labels, b->N, b->K, 1.0f);
}

static void bench(ct_check *c)
{
    size_t N = 128, K = 1000;
    ck_case(c, "bench softmax_xent N=%zu K=%zu", N, K);
    int32_t *labels = (int32_t *)ck_host(c, N);
    if (ck_failed(c))
        return;
    for (size_t r = 0; r < N; r++)
        labels[r] = (int32_t)(r * 7 % K);
    cl_mem d_lab = labels_dev(c, labels, N);
    xent_bench b = { ck_ctx(c), ck_dev_const(c, N * K, 0.25), ck_dev_out(c, 1), ck_dev_out(c, 1),
                     ck_dev_out(c, N * K), { d_lab, 0 }, ck_dev_out(c, ct_softmax_xent_workspace(N)),
                     N, K };
    /* per logit: forward max, exp of the difference, sum (3, exp as one);
     * backward max, exp, sum, exp, multiply, subtract-scale (6). Bytes: the
     * logits read by both passes, dx written. */
    if (!ck_failed(c))
        ck_bench(c, "xent 128x1000", 9.0 * (double)(N * K), 12.0 * (double)(N * K), bench_run, &b);
    labels_release(c, &d_lab);
}

void ct_check_loss(ct_check *c)
{
    for (int cpu = 0; cpu < 2; cpu++) {
        if (!ck_failed(c))
            xent_case(c, 1, 1, 0, 1.0, cpu);
        ck_case_end(c);
        if (!ck_failed(c))
            xent_case(c, 5, 1, 3, 1.0, cpu);
        ck_case_end(c);
    }
    /* past the host pool's threshold (ops/loss_host.h: N K >= 4096), which
     * the CPU class on the host GEMM path takes: rows of whole vectors and
     * a tail (517 = 32 x 16 + 5), many short rows (a pool item holds a run
     * of them), rows shorter than one vector; every kind on each */
    static const size_t host_dims[][2] = { { 37, 517 }, { 300, 50 }, { 600, 7 } };
    /* the GPU class's lanes per row: rows longer than a work-group (10000,
     * the LSTM benchmark's vocabulary), many rows of a few lanes each;
     * not in simulator-sized runs (host_dims take the same paths) */
    static const size_t long_dims[][2] = { { 3, 10000 }, { 4099, 3 }, { 70, 1025 } };
    /* (simulator-sized runs keep the first, whose rows of whole vectors and
     * a tail the kernels see too, and leave the host pool's row runs out) */
    size_t nhost = ck_small(c) ? 1 : CT_ARRAY_LEN(host_dims);
    for (int cpu = 0; cpu < 2; cpu++)
        for (size_t d = 0; d < nhost; d++)
            for (int kind = 0; kind < 5; kind++) {
                if (!ck_failed(c))
                    xent_case(c, host_dims[d][0], host_dims[d][1], kind, kind % 2 ? 1.0 : 2.5, cpu);
                ck_case_end(c);
            }
    for (int cpu = 0; cpu < 2; cpu++)
        for (size_t d = 0; d < CT_ARRAY_LEN(long_dims); d++)
            for (int kind = 0; kind < 5 && !ck_small(c); kind++) {
                if (!ck_failed(c))
                    xent_case(c, long_dims[d][0], long_dims[d][1], kind, kind % 2 ? 2.5 : 1.0, cpu);
                ck_case_end(c);
            }
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        double scale = it % 2 ? 1.0 : ck_uniform(c, 0.25, 4);
        xent_case(c, (size_t)ck_dim(c, 300), (size_t)ck_dim(c, 130), it % 4, scale, (it / 4) % 2);
        ck_case_end(c);
    }
    static const size_t px_dims[][3] = { { 2, 4, 15 }, { 1, 1, 7 }, { 3, 21, 257 }, { 2, 2, 1 } };
    for (int cpu = 0; cpu < 2; cpu++)
        for (size_t d = 0; d < CT_ARRAY_LEN(px_dims); d++)
            for (int kind = 0; kind < 4; kind++) {
                if (!ck_failed(c))
                    px_case(c, px_dims[d][0], px_dims[d][1], px_dims[d][2], kind, kind % 2 ? 1.0 : 2.5, cpu);
                ck_case_end(c);
            }
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        px_case(c, (size_t)ck_dim(c, 5), (size_t)ck_dim(c, 12), (size_t)ck_dim(c, 400), it % 4,
                it % 2 ? 1.0 : ck_uniform(c, 0.25, 4), (it / 4) % 2);
        ck_case_end(c);
    }
    if (!ck_failed(c))
        mse_case(c, 1, 1.0, 1);
    ck_case_end(c);
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        mse_case(c, (size_t)ck_dim(c, 5000), it % 2 ? 1.0 : ck_uniform(c, 0.25, 4), it % 3 != 2);
        ck_case_end(c);
    }
    if (!ck_failed(c))
        bce_case(c, 1, 1, 1.0, 1, 1);
    ck_case_end(c);
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        size_t K = (size_t)ck_dim(c, 40), rows = (size_t)ck_dim(c, 100);
        bce_case(c, K * rows, K, it % 2 ? 1.0 : ck_uniform(c, 0.25, 4), it % 2, it % 3 != 2);
        ck_case_end(c);
    }
    if (ck_benchmarking(c) && !ck_failed(c))
        bench(c);
    ck_case_end(c);
}
