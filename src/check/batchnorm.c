/*
 * batchnorm.c - checks of batch normalisation (src/ops/batchnorm.c) against
 * src/ref/batchnorm.c, training and inference, with and without the fused
 * ReLU, conv-like (HW > 1) and dense (HW = 1) shapes.
 *
 * Tolerances scale with each case's conditioning rather than with m: every
 * device reduction is Kahan-compensated per vector lane, its lanes added
 * pairwise, tree-combined per slice and the slices Kahan-combined in the
 * GPU class (error <= ~(2 + 3 + log2 256 + 2) eps = 15 eps of the sum of
 * magnitudes, eps = FLT_EPSILON, whatever m is; ~6 eps on CPUs); the
 * variance combines the slices about their own means with the rounding of
 * each slice mean carried exactly (cl_kernels/batchnorm.cl), so it keeps a
 * two-pass variance's bound. The large cases cut channels into tens of
 * slices, and their samples drift (a mean that changes along the batch)
 * so the slices' means differ. Per channel let A = invstd * max|x| (how
 * much an eps-relative error in x or the mean is amplified; |xhat| <= 2A)
 * and G = max|g|, g the upstream gradient after the ReLU mask. Then
 *   mean:   <= 15 eps max|x|                    -> atol 16 eps max|x|
 *   invstd: <= 0.5 * 15 eps (variance sum, the rounded x - mean enters
 *           only at second order) + 3 ulp sqrt + 1 division -> rtol 32 eps
 *   y:      |gamma| (invstd * err(mean) + |xhat| * err(invstd)/invstd)
 *           <= |gamma| A (15 + 24) eps          -> atol 48 eps max|gamma| A
 *   dx:     gamma invstd (g - sum g/m - xhat sum(g xhat)/m): the two means
 *           carry 15 eps G and 30 eps G A, xhat's error 39 eps A multiplies
 *           sum(g xhat)/m <= 2 G A             -> atol 128 eps max(|gamma| invstd G (1 + A^2))
 *   dgamma: sum of g xhat, 15 eps of sum|g xhat| plus sum|g| * err(xhat)
 *                                              -> atol 64 eps max(A sum|g|)
 *   dbeta:  sum of g, 15 eps                  -> atol 16 eps max sum|g|
 *   running stats: two products and a sum of values up to |running| +
 *           max|x| (mean) or |running| + var (var) -> atol 16 eps of that
 * and rtol 8 eps everywhere for the final roundings. A wrong formula (biased
 * for unbiased variance, a missing term, a wrong channel) is off by orders
 * of magnitude more at these shapes.
 *
 * 16-bit activation storage (runs at bf16 or fp16 precision, GPU class):
 * x and dy are stored in the format (exact in it, the reference sees the
 * same values), y and dx rounded once more to it on store: unit roundoff u
 * (2^-8 bf16, 2^-11 fp16) of the float result, and fp16's subnormal half
 * step s = 2^-25 -> rtol 8 eps + u (1 + 8 eps), atol (1 + u) times the
 * float atol + s. With relu the backward's mask reads the stored y, whose
 * sign rounding keeps (fp16 may flush |y| < 2^-25 to 0, inside the 1e-3
 * band where dy is 0). The statistics, dgamma and dbeta are float sums of
 * the exact inputs: their bounds stay.
 */
#include <float.h>
#include <math.h>

#include "check/check.h"
#include "ref/batchnorm.h"

#define EPS FLT_EPSILON
#define AT(n, c, s) (((n) * C + (c)) * HW + (s))

typedef struct bn_case {
    size_t N, C, HW;
    int train, relu;
    double momentum, eps;
    const double *x, *gamma, *beta, *rmean, *rvar, *dy;
    double *y; /* scratch for the loss */
} bn_case;

/* sum(y * dy) through the reference forward (running stats left alone) */
static double bn_loss(void *user)
{
    bn_case *b = user;
    size_t n = b->N * b->C * b->HW;
    double *mean = b->y + n, *invstd = mean + b->C; /* scratch after y */
    if (b->train)
        ct_ref_batchnorm_forward_train(b->y, mean, invstd, NULL, NULL, b->x, b->gamma, b->beta,
                                       b->N, b->C, b->HW, b->momentum, b->eps, b->relu);
    else
        ct_ref_batchnorm_forward_eval(b->y, b->x, b->gamma, b->beta, b->rmean, b->rvar, b->N, b->C,
                                      b->HW, b->eps, b->relu);
    return ck_dot(b->y, b->dy, n);
}

typedef struct bn_bench {
    ct_context *ctx;
    ct_buf x, y, dy, dx, gamma, beta, mean, invstd, rmean, rvar, dgamma, dbeta, work;
    size_t N, C, HW;
} bn_bench;

static int bench_run(void *user)
{
    bn_bench *b = user;
    int st = ct_batchnorm_forward_train(b->ctx, b->y, b->mean, b->invstd, b->rmean, b->rvar, b->x,
                                        b->gamma, b->beta, b->N, b->C, b->HW, 0.1f, 1e-5f, 0, b->work);
    return st ? st : ct_batchnorm_backward_train(b->ctx, b->dx, b->dgamma, b->dbeta, b->dy, b->x,
                                                 b->y, b->gamma, b->beta, b->mean, b->invstd, b->N, b->C,
                                                 b->HW, 0, b->work);
}

static double dmax(double a, double b)
{
    return a > b ? a : b;
}

static void one_case(ct_check *c, size_t N, size_t C, size_t HW, int train, int relu, double drift)
{
    ct_context *ctx = ck_ctx(c);
    size_t n = N * C * HW;
    double momentum = ck_int(c, 0, 1) ? 0.1 : (double)(float)ck_uniform(c, 0, 1);
    double eps = ck_int(c, 0, 1) ? 1e-5 : 1e-3;
    eps = (double)(float)eps;
    ck_case(c, "batchnorm %s%s N=%zu C=%zu HW=%zu drift=%g momentum=%g eps=%g as %s%s",
            train ? "train" : "eval", relu ? "+relu" : "", N, C, HW, drift, momentum, eps,
            ct_kernels_str(ct_context_kernels(ctx)), ck_act16(c) ? ", 16-bit activations" : "");
    double *x = ck_host(c, n), *dy = ck_host(c, n), *y = ck_host(c, n), *dx = ck_host(c, n);
    double *gamma = ck_host(c, C), *beta = ck_host(c, C), *rmean = ck_host(c, C);
    double *rvar = ck_host(c, C), *rmean_out = ck_host(c, C), *rvar_out = ck_host(c, C);
    double *mean = ck_host(c, C), *invstd = ck_host(c, C), *dgamma = ck_host(c, C);
    double *dbeta = ck_host(c, C), *dg_acc = ck_host(c, C), *db_acc = ck_host(c, C);
    double *scratch = ck_host(c, n + 2 * C);
    const int f = ck_act16(c);
    const double u = f ? ck_prec_u((ct_precision)f) : 0, sub = f ? ck_prec_sub((ct_precision)f) : 0;
    if (ck_failed(c))
        return;
    /* channels with their own offset and spread, so the mean is not ~0 */
    for (size_t ch = 0; ch < C; ch++) {
        double off = ck_uniform(c, -2, 2), spread = ck_uniform(c, 0.2, 2);
        for (size_t b = 0; b < N; b++)
            for (size_t s = 0; s < HW; s++)
                x[AT(b, ch, s)] = (double)(float)(off + drift * (double)b / (double)N +
                                                  spread * ck_uniform(c, -1, 1));
        gamma[ch] = (double)(float)ck_uniform(c, -1.5, 1.5);
        beta[ch] = (double)(float)ck_uniform(c, -1, 1);
        rmean[ch] = rmean_out[ch] = (double)(float)ck_uniform(c, -1, 1);
        rvar[ch] = rvar_out[ch] = (double)(float)ck_uniform(c, 0.5, 2);
    }
    for (size_t i = 0; i < n; i++)
        dy[i] = (double)(float)ck_uniform(c, -1, 1);
    ck_round_act(c, x, n); /* the 16-bit storage's values (float: as they are) */
    ck_round_act(c, dy, n);
    if (train)
        ct_ref_batchnorm_forward_train(y, mean, invstd, rmean_out, rvar_out, x, gamma, beta, N, C,
                                       HW, momentum, eps, relu);
    else
        ct_ref_batchnorm_forward_eval(y, x, gamma, beta, rmean, rvar, N, C, HW, eps, relu);
    if (relu) {
        /* near the kink rounding decides the mask: zero dy there, so the
         * mask cannot matter (and finite differences stay off the kink) */
        double *z = ck_host(c, n);
        if (ck_failed(c))
            return;
        if (train)
            ct_ref_batchnorm_forward_train(z, scratch, scratch + C, NULL, NULL, x, gamma, beta, N,
                                           C, HW, momentum, eps, 0);
        else
            ct_ref_batchnorm_forward_eval(z, x, gamma, beta, rmean, rvar, N, C, HW, eps, 0);
        for (size_t i = 0; i < n; i++)
            if (fabs(z[i]) < 1e-3)
                dy[i] = 0;
    }
    if (train)
        ct_ref_batchnorm_backward_train(dx, dgamma, dbeta, dy, x, y, gamma, mean, invstd, N, C, HW,
                                        relu);
    else
        ct_ref_batchnorm_backward_eval(dx, dgamma, dbeta, dy, x, y, gamma, rmean, rvar, N, C, HW,
                                       eps, relu);
    /* device gradients accumulate onto 0.5 */
    for (size_t ch = 0; ch < C; ch++) {
        dg_acc[ch] = 0.5 + dgamma[ch];
        db_acc[ch] = 0.5 + dbeta[ch];
    }

    /* tolerance scales (see the top of the file) */
    double s_x = 0, s_y = 0, s_dx = 0, s_dg = 0, s_db = 0, s_rm = 0, s_rv = 0;
    for (size_t ch = 0; ch < C; ch++) {
        double is = train ? invstd[ch] : 1 / sqrt(rvar[ch] + eps);
        double xm = 0, gm = 0, gs = 0;
        for (size_t b = 0; b < N; b++)
            for (size_t s = 0; s < HW; s++) {
                size_t i = AT(b, ch, s);
                double g = relu && !(y[i] > 0) ? 0 : dy[i];
                xm = dmax(xm, fabs(x[i]));
                gm = dmax(gm, fabs(g));
                gs += fabs(g);
            }
        double A = is * xm;
        s_x = dmax(s_x, xm);
        s_y = dmax(s_y, fabs(gamma[ch]) * A);
        s_dx = dmax(s_dx, fabs(gamma[ch]) * is * gm * (1 + A * A));
        s_dg = dmax(s_dg, A * gs);
        s_db = dmax(s_db, gs);
        s_rm = dmax(s_rm, fabs(rmean[ch]) + xm);
        s_rv = dmax(s_rv, rvar[ch] + (train ? 1 / (invstd[ch] * invstd[ch]) : 0));
    }

    ct_buf d_x = ck_act_in(c, x, n), d_dy = ck_act_in(c, dy, n), d_g = ck_dev_in(c, gamma, C);
    ct_buf d_b = ck_dev_in(c, beta, C);
    /* updated in place by training: output guards around the input values */
    ct_buf d_rm = train ? ck_dev_inout(c, rmean, C) : ck_dev_in(c, rmean, C);
    ct_buf d_rv = train ? ck_dev_inout(c, rvar, C) : ck_dev_in(c, rvar, C);
    ct_buf d_y = ck_act_out(c, n), d_dx = ck_act_out(c, n);
    /* y's and dx's bounds with the storage's rounding (0 in float32) */
    const double at_y = 48 * EPS * s_y * (1 + u) + sub, at_dx = 128 * EPS * s_dx * (1 + u) + sub;
    const double rt16 = 8 * EPS + u * (1 + 8 * EPS);
    ct_buf d_dg = ck_dev_const(c, C, 0.5), d_db = ck_dev_const(c, C, 0.5);
    ct_buf d_mean = ck_dev_out(c, C), d_is = ck_dev_out(c, C);
    ct_buf d_w = ck_dev_out(c, ct_batchnorm_workspace_size(N, C, HW));
    if (ck_failed(c))
        return;
    if (train) {
        if (ck_status(c, ct_batchnorm_forward_train(ctx, d_y, d_mean, d_is, d_rm, d_rv, d_x, d_g,
                                                    d_b, N, C, HW, (float)momentum, (float)eps,
                                                    relu, d_w),
                      "batchnorm forward (train)"))
            return;
        ck_expect(c, "forward y", d_y, n, y, at_y, rt16);
        ck_expect(c, "saved mean", d_mean, C, mean, 16 * EPS * s_x, 8 * EPS);
        ck_expect(c, "saved invstd", d_is, C, invstd, 0, 32 * EPS);
        ck_expect(c, "running mean", d_rm, C, rmean_out, 16 * EPS * s_rm, 8 * EPS);
        ck_expect(c, "running var", d_rv, C, rvar_out, 16 * EPS * s_rv, 8 * EPS);
        if (ck_status(c, ct_batchnorm_backward_train(ctx, d_dx, d_dg, d_db, d_dy, d_x, d_y, d_g, d_b,
                                                     d_mean, d_is, N, C, HW, relu, d_w),
                      "batchnorm backward (train)"))
            return;
    } else {
        if (ck_status(c, ct_batchnorm_forward_eval(ctx, d_y, d_x, d_g, d_b, d_rm, d_rv, N, C, HW,
                                                   (float)eps, relu),
                      "batchnorm forward (eval)"))
            return;
        ck_expect(c, "forward y", d_y, n, y, at_y, rt16);
        if (ck_status(c, ct_batchnorm_backward_eval(ctx, d_dx, d_dg, d_db, d_dy, d_x, d_y, d_g, d_b,
                                                    d_rm, d_rv, N, C, HW, (float)eps, relu, d_w),
                      "batchnorm backward (eval)"))
            return;
    }
    ck_expect(c, "backward dx", d_dx, n, dx, at_dx, rt16);
    ck_expect(c, "backward dgamma (+= 0.5)", d_dg, C, dg_acc, 64 * EPS * s_dg, 8 * EPS);
    ck_expect(c, "backward dbeta (+= 0.5)", d_db, C, db_acc, 16 * EPS * s_db, 8 * EPS);

    bn_case l = { N, C, HW, train, relu, momentum, eps, x, gamma, beta, rmean, rvar, dy, scratch };
    ck_gradcheck(c, "reference dx", bn_loss, &l, x, n, dx, 32);
    ck_gradcheck(c, "reference dgamma", bn_loss, &l, gamma, C, dgamma, 32);
    ck_gradcheck(c, "reference dbeta", bn_loss, &l, beta, C, dbeta, 32);
}

/* The launchers pick per-channel kernels in the CPU class and
 * work-group trees in the GPU class: the case switches the context to
 * either (ck_use_class), so both are checked on any device. At 16-bit
 * precision a GPU-class case runs again with activations stored in that
 * format. */
static void case_as(ct_check *c, size_t N, size_t C, size_t HW, int train, int relu, int as_cpu,
                    double drift)
{
    ct_kernels real = ck_use_class(c, as_cpu ? CT_KERNELS_CPU : CT_KERNELS_GPU);
    one_case(c, N, C, HW, train, relu, drift);
    ck_act16_state s;
    if (!as_cpu && ck_act16_begin(c, &s)) {
        one_case(c, N, C, HW, train, relu, drift);
        ck_act16_end(c, &s);
    }
    ck_use_class(c, real);
}

void ct_check_batchnorm(ct_check *c)
{
    /* edges {N, C, HW, train, relu}: the smallest training batch, a single
     * value in eval, channels with more values than a work-group holds;
     * GPU class, the element-wise groups of up to 256 rows combining the
     * partials of the channels they hold: more channels than a group's
     * rows (dense, C 300; HW 3, C 700), rows wrapping round the channels
     * several times in a group (C 3, HW 5) */
    static const size_t edges[][5] = {
        { 2, 1, 1, 1, 0 }, { 1, 2, 1, 0, 1 }, { 1, 1, 1, 0, 0 }, { 2, 1, 1, 1, 1 },
        { 3, 1, 301, 1, 0 }, { 2, 3, 257, 0, 1 }, { 5, 300, 1, 1, 1 }, { 3, 700, 3, 1, 0 },
        { 300, 3, 5, 1, 1 }, { 90, 3, 5, 0, 0 },
    };
    for (int cpu = 0; cpu < 2; cpu++)
        for (size_t e = 0; e < CT_ARRAY_LEN(edges) && !ck_failed(c); e++) {
            case_as(c, edges[e][0], edges[e][1], edges[e][2], (int)edges[e][3], (int)edges[e][4], cpu, 0);
            ck_case_end(c);
        }
    /* many slices per channel (GPU class on 128 compute units or more:
     * 19, 4, 2, 12 and 89; on 2 units: 6, 1, 2, 4 and 6, so both the
     * one-slice and the combining element-wise kernels run), lengths no
     * multiple of a work-group, samples drifting by up to 4 */
    static const size_t large[][5] = {
        { 37, 3, 1001, 1, 1 }, { 9, 40, 777, 1, 0 }, { 3001, 2, 1, 1, 0 }, { 23, 5, 999, 0, 1 },
        { 70, 3, 2601, 1, 1 },
    };
    /* --small (simulators): 3 slices each on 1 or 2 compute units */
    static const size_t smaller[][5] = { { 5, 2, 1001, 1, 1 }, { 4100, 1, 1, 0, 0 } };
    size_t nl = ck_small(c) ? CT_ARRAY_LEN(smaller) : CT_ARRAY_LEN(large);
    for (int cpu = 0; cpu < 2; cpu++)
        for (size_t e = 0; e < nl && !ck_failed(c); e++) {
            const size_t *k = ck_small(c) ? smaller[e] : large[e];
            case_as(c, k[0], k[1], k[2], (int)k[3], (int)k[4], cpu, ck_uniform(c, -4, 4));
            ck_case_end(c);
        }
    for (int it = 0; it < ck_iterations(c) && !ck_failed(c); it++) {
        size_t N = (size_t)ck_dim(c, 12), C = (size_t)ck_dim(c, 9);
        size_t HW = it % 3 == 0 ? 1 : (size_t)ck_dim(c, 65); /* dense and conv shapes */
        int train = it % 4 != 3;
        if (train && N * HW < 2)
            N = 2;
        case_as(c, N, C, HW, train, it % 2, (it / 4) % 2, 0);
        ck_case_end(c);
    }
    if (ck_benchmarking(c) && !ck_failed(c)) {
        size_t N = 32, C = 64, HW = 32 * 32, n = N * C * HW;
        ck_case(c, "bench batchnorm train N=%zu C=%zu HW=%zu", N, C, HW);
        bn_bench b = { ck_ctx(c), ck_dev_const(c, n, 0.5), ck_dev_out(c, n), ck_dev_const(c, n, 1),
                       ck_dev_out(c, n), ck_dev_const(c, C, 1), ck_dev_const(c, C, 0),
                       ck_dev_out(c, C), ck_dev_out(c, C), ck_dev_const(c, C, 0),
                       ck_dev_const(c, C, 1), ck_dev_const(c, C, 0), ck_dev_const(c, C, 0),
                       ck_dev_out(c, ct_batchnorm_workspace_size(N, C, HW)), N, C, HW };
        /* per element: stats 4 (sum; subtract, square, sum), normalise 3,
         * backward 5 (two sums, xhat) + 4 (dx); Kahan's compensation not
         * counted. Bytes: x read twice by the stats, x read and y written by
         * the normalisation, dy and x read twice and dx written backward. */
        if (!ck_failed(c))
            ck_bench(c, "32x64x32x32", 16.0 * (double)n, 9.0 * 4 * (double)n, bench_run, &b);
        ck_case_end(c);
    }
}
