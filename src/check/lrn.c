/*
 * lrn.c - checks of local response normalization (src/ops/lrn.c) against
 * src/ref/lrn.c.
 *
 * Tolerances, with u = 2^-24 (half a float ulp, relative), x in [-2, 2]:
 *   s = k + alpha/size * sum x^2 adds only positive terms, so its relative
 *   error is at most (size + 3) u (size squares and additions, the rounding
 *   of alpha/size, its product and the add of k), which s^-beta multiplies
 *   by |beta|. The kernels raise s to -beta as exp2(-beta log2 s): log2's
 *   3 ulp (6 u relative) and the product's u make an error of 7 u |t| in
 *   t = -beta log2 s, which exp2 turns into ln 2 * 7 u |t| < 5 u |t|
 *   relative, plus its own 3 ulp (6 u): pow_err = (5 t_max + 6) u with
 *   t_max the largest |beta log2 s| of the case.
 *   Forward, one more u for the product with x: atol 0, rtol e_f =
 *   |beta| (size + 3) u + pow_err + u.
 *   Backward dx_j = dy_j s_j^-beta - 2 alpha/size beta x_j sum_c dy_c x_c
 *   s_c^(-beta-1): each term carries the forward's error (s_c and its
 *   power) plus a division (2.5 ulp = 5 u) and its products; the sum of at
 *   most size terms adds size u and the constant factor a few u. The two
 *   parts can cancel, so the bound is absolute: atol e_b * max_j(|first
 *   part| + |the second part's terms|) with e_b = (|beta| + 2) (size + 3) u
 *   + pow_err + 16 u, rtol 0.
 * These are what float rounding and pow can lose; a wrong window edge,
 * divisor or exponent is off by orders of magnitude more.
 */
#include <math.h>

#include "check/check.h"
#include "ref/lrn.h"

#define U 5.9604644775390625e-8 /* 2^-24 */

typedef struct lrn_loss {
    const ct_lrn *p;
    const double *x, *w;
    double *y;
    int n, c, hw;
} lrn_loss;

static double loss_of_x(void *user)
{
    lrn_loss *l = user;
    ct_ref_lrn_forward(l->p, l->y, l->x, l->n, l->c, l->hw);
    return ck_dot(l->y, l->w, (size_t)l->n * (size_t)l->c * (size_t)l->hw);
}

/* The largest |beta log2 s| over the case: how much the exp2/log2 power
 * can amplify log2's rounding. */
static double max_log_exponent(const ct_lrn *p, const double *x, int n, int c, int hw)
{
    double worst = 0, an = (double)p->alpha / p->size;
    size_t st = (size_t)hw;
    for (size_t b = 0; b < (size_t)n; b++)
        for (size_t r = 0; r < st; r++)
            for (int ch = 0; ch < c; ch++) {
                const double *xc = x + b * (size_t)c * st + r;
                int lo = ch - p->size / 2 > 0 ? ch - p->size / 2 : 0;
                int hi = ch + (p->size - 1) / 2 < c - 1 ? ch + (p->size - 1) / 2 : c - 1;
                double s = 0;
                for (int q = lo; q <= hi; q++)
                    s += xc[(size_t)q * st] * xc[(size_t)q * st];
                double t = fabs((double)p->beta * log2(p->k + an * s));
                if (t > worst)
                    worst = t;
            }
    return worst;
}

/* max over elements of |dy_j s_j^-beta| + 2 alpha/size |beta x_j| sum_c
 * |dy_c x_c| s_c^(-beta-1): the magnitude the backward's rounding scales with */
static double backward_magnitude(const ct_lrn *p, const double *dy, const double *x, int n, int c,
                                 int hw)
{
    double worst = 0, an = (double)p->alpha / p->size, beta = p->beta;
    size_t st = (size_t)hw;
    for (size_t b = 0; b < (size_t)n; b++)
        for (size_t r = 0; r < st; r++) {
            const double *xc = x + b * (size_t)c * st + r, *dyc = dy + b * (size_t)c * st + r;
            for (int j = 0; j < c; j++) {
                double own = 0, parts = 0;
                int lo = j - (p->size - 1) / 2 > 0 ? j - (p->size - 1) / 2 : 0;
                int hi = j + p->size / 2 < c - 1 ? j + p->size / 2 : c - 1;
                for (int ch = lo; ch <= hi; ch++) {
                    int wlo = ch - p->size / 2 > 0 ? ch - p->size / 2 : 0;
                    int whi = ch + (p->size - 1) / 2 < c - 1 ? ch + (p->size - 1) / 2 : c - 1;
                    double s = 0;
                    for (int q = wlo; q <= whi; q++)
                        s += xc[(size_t)q * st] * xc[(size_t)q * st];
                    s = p->k + an * s;
                    if (ch == j)
                        own = fabs(dyc[(size_t)j * st]) * pow(s, -beta);
                    parts += fabs(dyc[(size_t)ch * st] * xc[(size_t)ch * st]) * pow(s, -beta - 1);
                }
                double m = own + 2 * an * fabs(beta * xc[(size_t)j * st]) * parts;
                if (m > worst)
                    worst = m;
            }
        }
    return worst;
}

static void one_case_on(ct_check *c, const ct_lrn *p, int n, int ch, int hw);

/* Each case runs the per-element kernels of the GPU class and the per-row
 * vector kernels of the CPU class, switching the context to each
 * (ck_use_class; src/ops/lrn.c). */
static void one_case(ct_check *c, const ct_lrn *p, int n, int ch, int hw)
{
    for (int cpu = 0; cpu <= 1 && !ck_failed(c); cpu++) {
        ct_kernels real = ck_use_class(c, cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
        ck_case(c, "lrn x (%d, %d, %d) size %d alpha %g beta %g k %g, %s kernels", n, ch, hw,
                p->size, (double)p->alpha, (double)p->beta, (double)p->k, cpu ? "cpu" : "gpu");
        one_case_on(c, p, n, ch, hw);
        if (!cpu)
            ck_case_end(c);
        ck_use_class(c, real);
    }
}

static void one_case_on(ct_check *c, const ct_lrn *p, int n, int ch, int hw)
{
    ct_context *ctx = ck_ctx(c);
    size_t nx = (size_t)n * (size_t)ch * (size_t)hw;
    double *x = ck_host(c, nx), *y = ck_host(c, nx), *dy = ck_host(c, nx), *dx = ck_host(c, nx);
    if (ck_failed(c))
        return;
    ck_fill(c, x, nx, -2, 2);
    ck_fill(c, dy, nx, -1, 1);
    for (size_t i = 0; i < nx; i++) {
        x[i] = (double)(float)x[i];
        dy[i] = (double)(float)dy[i];
    }
    ct_ref_lrn_forward(p, y, x, n, ch, hw);
    ct_ref_lrn_backward(p, dx, dy, x, n, ch, hw);
    double beta = fabs((double)p->beta);
    double pow_err = (5 * max_log_exponent(p, x, n, ch, hw) + 6) * U;
    double e_f = beta * (p->size + 3) * U + pow_err + U;
    double e_b = (beta + 2) * (p->size + 3) * U + pow_err + 16 * U;

    ct_buf d_x = ck_dev_in(c, x, nx), d_dy = ck_dev_in(c, dy, nx);
    ct_buf d_y = ck_dev_out(c, nx), d_dx = ck_dev_out(c, nx), d_scale = ck_dev_out(c, nx);
    ct_buf d_y2 = ck_dev_out(c, nx), none = { NULL, 0 };
    if (ck_failed(c))
        return;
    /* the forward without and with the saved scale */
    if (ck_status(c, ct_lrn_forward(ctx, p, d_y, d_x, none, n, ch, hw), "lrn forward"))
        return;
    ck_expect(c, "forward y", d_y, nx, y, 0, e_f);
    if (ck_status(c, ct_lrn_forward(ctx, p, d_y2, d_x, d_scale, n, ch, hw), "lrn forward (save)"))
        return;
    ck_expect(c, "forward y (saving the scale)", d_y2, nx, y, 0, e_f);
    if (ck_status(c, ct_lrn_backward(ctx, p, d_dx, d_dy, d_x, d_scale, n, ch, hw), "lrn backward"))
        return;
    ck_expect(c, "backward dx", d_dx, nx, dx, e_b * backward_magnitude(p, dy, x, n, ch, hw), 0);

    lrn_loss l = { p, x, dy, ck_host(c, nx), n, ch, hw };
    ck_gradcheck(c, "reference dx", loss_of_x, &l, x, nx, dx, 32);
}

typedef struct lrn_bench {
    ct_context *ctx;
    ct_lrn p;
    ct_buf x, y, dy, dx, scale;
    int n, c, hw;
} lrn_bench;

static int bench_run(void *user)
{
    lrn_bench *b = user;
    int st = ct_lrn_forward(b->ctx, &b->p, b->y, b->x, b->scale, b->n, b->c, b->hw);
    return st ? st : ct_lrn_backward(b->ctx, &b->p, b->dx, b->dy, b->x, b->scale, b->n, b->c,
                                     b->hw);
}

static void rejects(ct_check *c)
{
    ck_case(c, "invalid LRN parameters");
    ct_context *ctx = ck_ctx(c);
    ct_buf none = { NULL, 0 };
    ct_lrn zero_size = { 0, 1e-4f, 0.75f, 1.0f }, zero_k = { 5, 1e-4f, 0.75f, 0.0f };
    ct_lrn ok = { 5, 1e-4f, 0.75f, 1.0f };
    if (ct_lrn_forward(ctx, &zero_size, none, none, none, 1, 1, 1) != CT_ERR_INVALID_ARG ||
        ct_lrn_backward(ctx, &zero_k, none, none, none, none, 1, 1, 1) != CT_ERR_INVALID_ARG ||
        ct_lrn_forward(ctx, &ok, none, none, none, 1, 0, 1) != CT_ERR_SHAPE ||
        ct_lrn_backward(ctx, &ok, none, none, none, none, 1, 1, 1) != CT_ERR_INVALID_ARG)
        ck_status(c, CT_ERR_INTERNAL, "invalid LRN parameters were accepted");
}

void ct_check_lrn(ct_check *c)
{
    rejects(c);
    ck_case_end(c);

    /* edges: one channel (window clipped on both sides), a window wider
     * than the channels, even sizes (asymmetric windows), hw = 1 */
    static const struct { int size, n, c, hw; } edges[] = {
        { 1, 1, 1, 1 }, { 5, 1, 1, 3 }, { 7, 2, 3, 1 }, { 4, 1, 6, 5 }, { 2, 3, 5, 2 },
    };
    for (size_t e = 0; e < CT_ARRAY_LEN(edges) && !ck_failed(c); e++) {
        ct_lrn p = { edges[e].size, 0.5f, 0.75f, 1.0f };
        one_case(c, &p, edges[e].n, edges[e].c, edges[e].hw);
        ck_case_end(c);
    }
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        ct_lrn p = { ck_int(c, 1, 7), (float)ck_uniform(c, 0, 2), (float)ck_uniform(c, 0.25, 1),
                     (float)ck_uniform(c, 0.5, 2) };
        one_case(c, &p, ck_dim(c, 3), ck_dim(c, 17), ck_dim(c, 53));
        ck_case_end(c);
    }

    if (ck_benchmarking(c) && !ck_failed(c)) {
        /* AlexNet's first LRN: 96 channels of 55 x 55, size 5 */
        lrn_bench b = { ck_ctx(c), { 5, 1e-4f, 0.75f, 2.0f }, { 0 }, { 0 }, { 0 }, { 0 },
                        { 0 }, 8, 96, 55 * 55 };
        size_t nx = (size_t)b.n * (size_t)b.c * (size_t)b.hw;
        ck_case(c, "bench lrn 8x96x55x55 size 5");
        b.x = ck_dev_const(c, nx, 0.5);
        b.y = ck_dev_out(c, nx);
        b.dy = ck_dev_const(c, nx, 1);
        b.dx = ck_dev_out(c, nx);
        b.scale = ck_dev_out(c, nx);
        /* flops per element: forward 2 size for the window, 3 for scale and
         * product (pow counted as 1); backward size windows of 2 size + 5 */
        double size = 5, flops = (double)nx * ((2 * size + 3) + size * (2 * size + 5) + 4);
        /* x, y, scale forward; dy, x, scale, dx backward */
        double bytes = 4.0 * 7.0 * (double)nx;
        if (!ck_failed(c))
            ck_bench(c, "lrn 8x96x55x55 size 5", flops, bytes, bench_run, &b);
        ck_case_end(c);
    }
}
