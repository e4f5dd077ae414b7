/*
 * batchnorm.c - batch-norm launchers (cl_kernels/batchnorm.cl). GPU class:
 * two-stage reductions (a work-group per (slice, channel) writes partial
 * sums to the caller's workspace; the element-wise pass that follows
 * combines them per work-group, so each direction takes two launches);
 * CPU class: a work-item per channel for the reductions and one per (n, c)
 * row for the normalisation, several times faster there (a work-group runs on one core; see the .cl file).
 */
#include "ops/batchnorm.h"

#include "host/batchnorm_host.h"

#define BN_MAX_WG 256
/* Slices: enough work-groups in all to give each compute unit 8
 * (BN_PER_UNIT), at most BN_GROUPS (a device of 130 units), none shorter
 * than BN_MIN_SLICE elements (8 per work-item of the largest group) unless
 * a channel has fewer. Fewer slices on smaller devices: each element-wise
 * group combines its channels' slices again, so slices beyond what fills
 * the device are work repeated in every group (on a 2-unit CPU the cnn's
 * first batch norm went from 24 slices to 1). */
#define BN_GROUPS 1024
#define BN_PER_UNIT 8
#define BN_MIN_SLICE 2048
/* S slices of L consecutive elements of a channel's m (the last may be
 * shorter, none empty) for a device of `units` compute units (0: the
 * most, BN_GROUPS); the shape and the device decide them, so the
 * summation order is the same on every run on a device. */
static void bn_slices(size_t m, size_t C, size_t units, size_t *S, size_t *L)
{
    size_t groups = units && units * BN_PER_UNIT < BN_GROUPS ? units * BN_PER_UNIT : BN_GROUPS;
    ct_slices(m, (groups + C - 1) / C, BN_MIN_SLICE, S, L);
}

size_t ct_batchnorm_workspace_size(size_t N, size_t C, size_t HW)
{
    size_t S, L;
    bn_slices(N * HW, C, 0, &S, &L); /* the most slices any device takes */
    return 4 * C * S; /* stats: (C, S, 4); backward: (C, S, 2) */
}

/* A CPU device's local size for `items` work-items of `kernel` that need no
 * group: a power of two <= 64 that leaves about 4 groups per compute unit, so
 * the cores share the work evenly while per-group overhead stays small, and
 * no larger than the kernel's CL_KERNEL_WORK_GROUP_SIZE (32 on Mesa's
 * llvmpipe through rusticl). */
static int cpu_local(ct_context *ctx, const char *kernel, size_t items, size_t *w)
{
    size_t units = ctx->dev.compute_units ? ctx->dev.compute_units : 1;
    size_t per = items / (4 * units);
    return ct_kernel_pow2_wg(ctx, CT_PROG_batchnorm, kernel, 64, per ? per : 1, w);
}

/* The 2-D layout of the element-wise kernels (bn_fwd_f32, bn_fwd_train_f32,
 * bn_bwd_dx_f32, bn_bwd_dx1_f32): a work-item per element, groups of lx
 * positions by ly rows; lx the smallest power of two holding a row of HW
 * <= 32 (1 for a dense layer's HW = 1: its rows are neighbours), else the
 * one from 32 to 256 that pads a row least (ties to the wider); ly as many
 * rows as make 256 work-items (fewer if the kernel allows less). The shape
 * and the device's limit decide; the results do not depend on them. */
/* The GPU-class kernels' program: with 16-bit activation storage
 * (ct_context_set_act16) its variant, whose x, y, dy and dx hold 16 bits */
static int gpu_prog(ct_context *ctx)
{
    return ct_program_store(ctx, CT_PROG_batchnorm);
}

static int elt_layout(ct_context *ctx, const char *kernel, size_t HW, size_t rows, size_t g[2],
                      size_t l[2])
{
    size_t cap;
    int st = ct_kernel_pow2_wg(ctx, gpu_prog(ctx), kernel, BN_MAX_WG, 0, &cap);
    if (st)
        return st;
    size_t lx = 1, best = (size_t)-1;
    if (HW <= 32) {
        while (lx < HW)
            lx *= 2;
    } else {
        for (size_t w = 32; w <= 256 && w <= cap; w *= 2) {
            size_t padded = (HW + w - 1) / w * w;
            if (padded <= best) {
                best = padded;
                lx = w;
            }
        }
    }
    if (lx > cap)
        lx = cap;
    size_t ly = cap / lx < rows ? cap / lx : rows;
    l[0] = lx;
    l[1] = ly ? ly : 1;
    g[0] = (HW + lx - 1) / lx * lx;
    g[1] = (rows + l[1] - 1) / l[1] * l[1];
    return CT_OK;
}

static int check_dims(ct_context *ctx, const char *who, size_t N, size_t C, size_t HW, float eps)
{
    if (N == 0 || C == 0 || HW == 0)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: empty input (N=%zu, C=%zu, HW=%zu)", who, N, C, HW);
    if (N > UINT32_MAX / C / HW)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: (%zu, %zu, %zu) has 2^32 elements or more. "
                       "HINT: split the batch", who, N, C, HW);
    if (!(eps > 0.0f))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: eps %g must be positive", who, (double)eps);
    return CT_OK;
}

static int launch_fwd(ct_context *ctx, ct_buf y, ct_buf x, ct_buf mean, ct_buf stat, ct_buf gamma,
                      ct_buf beta, size_t N, size_t C, size_t HW, float eps, int from_var, int relu)
{
    cl_uint n = (cl_uint)N, c = (cl_uint)C, hw = (cl_uint)HW;
    cl_float e = eps;
    cl_int fv = from_var, r = relu ? 1 : 0;
    size_t es = ct_act_size(ctx);
    ct_launch_bytes(ctx, N * C * HW * es + 4 * C * sizeof(float), N * C * HW * es);
    if (ctx->cls.row_kernels && !ctx->act16) {
        size_t g[1] = { N * C }, l[1];
        int st = cpu_local(ctx, "bn_fwd_rows_f32", N * C, &l[0]);
        if (st)
            return st;
        return CT_RUN(ctx, CT_PROG_batchnorm, "bn_fwd_rows_f32", 1, g, l, CT_BUF(y), CT_BUF(x),
                      CT_BUF(mean), CT_BUF(stat), CT_BUF(gamma), CT_BUF(beta), CT_ARG(n),
                      CT_ARG(c), CT_ARG(hw), CT_ARG(e), CT_ARG(fv), CT_ARG(r));
    }
    size_t g[2], l[2];
    int st = elt_layout(ctx, "bn_fwd_f32", HW, N * C, g, l);
    if (st)
        return st;
    cl_uint2 md = ct_fastdiv(c);
    return CT_RUN(ctx, gpu_prog(ctx), "bn_fwd_f32", 2, g, l, CT_BUF(y), CT_BUF(x),
                  CT_BUF(mean), CT_BUF(stat), CT_BUF(gamma), CT_BUF(beta), CT_ARG(n), CT_ARG(c),
                  CT_ARG(hw), CT_ARG(md), CT_ARG(e), CT_ARG(fv), CT_ARG(r));
}

int ct_batchnorm_forward_train(ct_context *ctx, ct_buf y, ct_buf save_mean, ct_buf save_invstd,
                               ct_buf running_mean, ct_buf running_var, ct_buf x, ct_buf gamma,
                               ct_buf beta, size_t N, size_t C, size_t HW, float momentum,
                               float eps, int relu, ct_buf work)
{
    const char *who = "ct_batchnorm_forward_train";
    int st = check_dims(ctx, who, N, C, HW, eps);
    if (st)
        return st;
    if (N * HW < 2)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: one value per channel (N=%zu, HW=%zu) has no batch "
                       "variance. HINT: train with a batch of 2 or more, as PyTorch requires", who,
                       N, HW);
    if (!(momentum >= 0.0f && momentum <= 1.0f))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: momentum %g is outside [0, 1]", who,
                       (double)momentum);
    if (!y.mem || !x.mem || !gamma.mem || !beta.mem || !save_mean.mem || !save_invstd.mem ||
        !running_mean.mem != !running_var.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: a NULL buffer (only the running statistics "
                       "may be NULL, and then both)", who);
    if (!ctx->act16 && ct_batchnorm_host_ok(ctx))
        return ct_batchnorm_host_forward(ctx, y, save_mean, save_invstd, running_mean, running_var,
                                         x, gamma, beta, N, C, HW, momentum, eps, 1, relu);
    cl_uint n = (cl_uint)N, c = (cl_uint)C, hw = (cl_uint)HW;
    cl_float mom = momentum, e = eps;
    size_t running = running_mean.mem ? 2 * C : 0, es = ct_act_size(ctx);
    if (ctx->cls.row_kernels && !ctx->act16) {
        size_t g[1] = { C }, l[1];
        if ((st = cpu_local(ctx, "bn_stats_cpu_f32", C, &l[0])))
            return st;
        ct_launch_bytes(ctx, (N * C * HW + running) * sizeof(float), (2 * C + running) * sizeof(float));
        st = CT_RUN(ctx, CT_PROG_batchnorm, "bn_stats_cpu_f32", 1, g, l, CT_BUF(save_mean),
                    CT_BUF(save_invstd), CT_BUF(running_mean), CT_BUF(running_var), CT_BUF(x),
                    CT_ARG(n), CT_ARG(c), CT_ARG(hw), CT_ARG(mom), CT_ARG(e));
        if (st)
            return st;
        return launch_fwd(ctx, y, x, save_mean, save_invstd, gamma, beta, N, C, HW, eps, 0, relu);
    }
    if (!work.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: no workspace. HINT: pass one of "
                       "ct_batchnorm_workspace_size(N, C, HW) floats", who);
    size_t S, L, wg;
    bn_slices(N * HW, C, ctx->dev.compute_units, &S, &L);
    if ((st = ct_kernel_pow2_wg(ctx, gpu_prog(ctx), "bn_stats_partial_f32", BN_MAX_WG, L, &wg)))
        return st;
    cl_uint ns = (cl_uint)S, nl = (cl_uint)L;
    size_t g1[2] = { S * wg, C }, l1[2] = { wg, 1 };
    /* one slice: the group finishes the statistics (mean, invstd, running) */
    size_t fin = S == 1 ? 2 * C + running : 0;
    ct_launch_bytes(ctx, N * C * HW * es + (S == 1 ? running : 0) * sizeof(float),
                    (4 * C * S + fin) * sizeof(float));
    st = CT_RUN(ctx, gpu_prog(ctx), "bn_stats_partial_f32", 2, g1, l1, CT_BUF(work),
                CT_BUF(save_mean), CT_BUF(save_invstd), CT_BUF(running_mean), CT_BUF(running_var),
                CT_BUF(x), CT_ARG(n), CT_ARG(c), CT_ARG(hw), CT_ARG(nl), CT_ARG(mom), CT_ARG(e),
                CT_LOCAL(2 * wg * sizeof(cl_float)));
    if (st)
        return st;
    if (S == 1) /* then the normalisation is element-wise */
        return launch_fwd(ctx, y, x, save_mean, save_invstd, gamma, beta, N, C, HW, eps, 0, relu);
    /* stage two inside the normalisation (bn_fwd_train_f32) */
    size_t n_el = N * C * HW, g2[2], l2[2];
    if ((st = elt_layout(ctx, "bn_fwd_train_f32", HW, N * C, g2, l2)))
        return st;
    cl_uint2 md = ct_fastdiv(c);
    cl_int r = relu ? 1 : 0;
    ct_launch_bytes(ctx, n_el * es + (4 * C * S + 2 * C + running) * sizeof(float),
                    n_el * es + (2 * C + running) * sizeof(float));
    return CT_RUN(ctx, gpu_prog(ctx), "bn_fwd_train_f32", 2, g2, l2, CT_BUF(y),
                  CT_BUF(save_mean), CT_BUF(save_invstd), CT_BUF(running_mean),
                  CT_BUF(running_var), CT_BUF(x), CT_BUF(work), CT_BUF(gamma), CT_BUF(beta),
                  CT_ARG(n), CT_ARG(c), CT_ARG(hw), CT_ARG(ns), CT_ARG(nl), CT_ARG(md),
                  CT_ARG(mom), CT_ARG(e), CT_ARG(r), CT_LOCAL(4 * l2[1] * sizeof(cl_float)));
}

int ct_batchnorm_forward_eval(ct_context *ctx, ct_buf y, ct_buf x, ct_buf gamma, ct_buf beta,
                              ct_buf running_mean, ct_buf running_var, size_t N, size_t C,
                              size_t HW, float eps, int relu)
{
    const char *who = "ct_batchnorm_forward_eval";
    int st = check_dims(ctx, who, N, C, HW, eps);
    if (st)
        return st;
    if (!y.mem || !x.mem || !gamma.mem || !beta.mem || !running_mean.mem || !running_var.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: a NULL buffer", who);
    if (!ctx->act16 && ct_batchnorm_host_ok(ctx))
        return ct_batchnorm_host_forward(ctx, y, (ct_buf){ NULL, 0 }, (ct_buf){ NULL, 0 }, running_mean, running_var, x,
                                         gamma, beta, N, C, HW, 0.0f, eps, 0, relu);
    return launch_fwd(ctx, y, x, running_mean, running_var, gamma, beta, N, C, HW, eps, 1, relu);
}

static int launch_bwd(ct_context *ctx, const char *who, ct_buf dx, ct_buf dgamma, ct_buf dbeta,
                      ct_buf dy, ct_buf x, ct_buf y, ct_buf gamma, ct_buf beta, ct_buf mean,
                      ct_buf stat, size_t N, size_t C, size_t HW, float eps, int train, int relu,
                      ct_buf work)
{
    int st = check_dims(ctx, who, N, C, HW, eps);
    if (st)
        return st;
    if (!dx.mem || !dgamma.mem || !dbeta.mem || !dy.mem || !x.mem || !gamma.mem || !mean.mem ||
        !stat.mem || (relu && (!y.mem || !beta.mem)))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: a NULL buffer (y and beta are needed with relu)",
                       who);
    if (!ctx->act16 && ct_batchnorm_host_ok(ctx))
        return ct_batchnorm_host_backward(ctx, dx, dgamma, dbeta, dy, x, gamma, beta, mean, stat, N,
                                          C, HW, eps, train, relu);
    cl_uint n = (cl_uint)N, c = (cl_uint)C, hw = (cl_uint)HW;
    cl_float e = eps;
    cl_int t = train, r = relu ? 1 : 0;
    size_t n_el = N * C * HW, streams = relu ? 3 : 2; /* dy, x and y with relu */
    size_t es = ct_act_size(ctx);
    if (ctx->cls.row_kernels && !ctx->act16) {
        size_t g[1] = { C }, l[1];
        if ((st = cpu_local(ctx, "bn_bwd_cpu_f32", C, &l[0])))
            return st;
        ct_launch_bytes(ctx, (streams * n_el + 5 * C) * sizeof(float), (n_el + 2 * C) * sizeof(float));
        return CT_RUN(ctx, CT_PROG_batchnorm, "bn_bwd_cpu_f32", 1, g, l, CT_BUF(dx),
                      CT_BUF(dgamma), CT_BUF(dbeta), CT_BUF(dy), CT_BUF(x), CT_BUF(y),
                      CT_BUF(gamma), CT_BUF(mean), CT_BUF(stat), CT_ARG(n), CT_ARG(c),
                      CT_ARG(hw), CT_ARG(e), CT_ARG(t), CT_ARG(r));
    }
    if (!work.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: no workspace. HINT: pass one of "
                       "ct_batchnorm_workspace_size(N, C, HW) floats", who);
    size_t S, L, wg;
    bn_slices(N * HW, C, ctx->dev.compute_units, &S, &L);
    if ((st = ct_kernel_pow2_wg(ctx, gpu_prog(ctx), "bn_bwd_partial_f32", BN_MAX_WG, L, &wg)))
        return st;
    cl_uint ns = (cl_uint)S, nl = (cl_uint)L;
    size_t g1[2] = { S * wg, C }, l1[2] = { wg, 1 };
    /* one slice: the group adds its sums to dgamma and dbeta too */
    size_t fin = S == 1 ? 2 * C : 0;
    ct_launch_bytes(ctx, streams * n_el * es + (2 * C + fin) * sizeof(float),
                    (2 * C * S + fin) * sizeof(float));
    ct_buf yr = relu ? y : dy; /* read unconditionally, used with relu only */
    st = CT_RUN(ctx, gpu_prog(ctx), "bn_bwd_partial_f32", 2, g1, l1, CT_BUF(work),
                CT_BUF(dgamma), CT_BUF(dbeta), CT_BUF(dy), CT_BUF(x), CT_BUF(yr), CT_BUF(mean),
                CT_BUF(stat), CT_ARG(n), CT_ARG(c), CT_ARG(hw), CT_ARG(nl), CT_ARG(e), CT_ARG(t),
                CT_ARG(r), CT_LOCAL(2 * wg * sizeof(cl_float)));
    if (st)
        return st;
    if (S == 1) { /* then the input gradient is element-wise */
        size_t g2[2], l2[2];
        if ((st = elt_layout(ctx, "bn_bwd_dx1_f32", HW, N * C, g2, l2)))
            return st;
        cl_uint2 md = ct_fastdiv(c);
        ct_launch_bytes(ctx, streams * n_el * es + 5 * C * sizeof(float), n_el * es);
        return CT_RUN(ctx, gpu_prog(ctx), "bn_bwd_dx1_f32", 2, g2, l2, CT_BUF(dx), CT_BUF(dy),
                      CT_BUF(x), CT_BUF(yr), CT_BUF(gamma), CT_BUF(mean), CT_BUF(stat),
                      CT_BUF(work), CT_ARG(n), CT_ARG(c), CT_ARG(hw), CT_ARG(md), CT_ARG(e),
                      CT_ARG(t), CT_ARG(r));
    }
    /* stage two inside the input gradient (bn_bwd_dx_f32) */
    size_t g2[2], l2[2];
    if ((st = elt_layout(ctx, "bn_bwd_dx_f32", HW, N * C, g2, l2)))
        return st;
    cl_uint2 md = ct_fastdiv(c);
    /* reads dy, x (y), the partials, gamma, mean, stat, dgamma, dbeta */
    ct_launch_bytes(ctx, streams * n_el * es + (2 * C * S + 5 * C) * sizeof(float),
                    n_el * es + 2 * C * sizeof(float));
    return CT_RUN(ctx, gpu_prog(ctx), "bn_bwd_dx_f32", 2, g2, l2, CT_BUF(dx), CT_BUF(dgamma),
                  CT_BUF(dbeta), CT_BUF(dy), CT_BUF(x), CT_BUF(yr), CT_BUF(gamma), CT_BUF(mean),
                  CT_BUF(stat), CT_BUF(work), CT_ARG(n), CT_ARG(c), CT_ARG(hw), CT_ARG(ns),
                  CT_ARG(md), CT_ARG(e), CT_ARG(t), CT_ARG(r), CT_LOCAL(5 * l2[1] * sizeof(cl_float)));
}

int ct_batchnorm_backward_train(ct_context *ctx, ct_buf dx, ct_buf dgamma, ct_buf dbeta, ct_buf dy,
                                ct_buf x, ct_buf y, ct_buf gamma, ct_buf beta, ct_buf save_mean,
                                ct_buf save_invstd, size_t N, size_t C, size_t HW, int relu,
                                ct_buf work)
{
    /* eps is unused in training (invstd is saved); 1 passes the check */
    return launch_bwd(ctx, "ct_batchnorm_backward_train", dx, dgamma, dbeta, dy, x, y, gamma, beta,
                      save_mean, save_invstd, N, C, HW, 1.0f, 1, relu, work);
}

int ct_batchnorm_backward_eval(ct_context *ctx, ct_buf dx, ct_buf dgamma, ct_buf dbeta, ct_buf dy,
                               ct_buf x, ct_buf y, ct_buf gamma, ct_buf beta, ct_buf running_mean,
                               ct_buf running_var, size_t N, size_t C, size_t HW, float eps,
                               int relu, ct_buf work)
{
    return launch_bwd(ctx, "ct_batchnorm_backward_eval", dx, dgamma, dbeta, dy, x, y, gamma, beta,
                      running_mean, running_var, N, C, HW, eps, 0, relu, work);
}
