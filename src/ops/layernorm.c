/*
 * layernorm.c - layer-normalization launchers (cl_kernels/layernorm.cl).
 *
 * With 16-bit activation storage (ct_context_set_act16) x, y, dy and dx
 * hold 16 bits: the GPU-class kernels of the storage variant run whatever
 * the class, as the CPU class's row kernels and host loops read floats;
 * w, b, mean, rstd, dw, db and the workspace stay float.
 */
#include "ops/layernorm.h"

#include "host/layernorm_host.h"

#define LN_MAX_WG 256
/* Slices of rows for the GPU class's parameter gradients: enough
 * work-items in all (LN_COL_ITEMS) to fill a device of 130 compute units,
 * each slice at least LN_MIN_ROWS rows unless R is shorter. */
#define LN_COL_ITEMS 16384
#define LN_MIN_ROWS 16

/* S slices of L rows (the last may be shorter, none empty); the shape
 * alone decides them, so the summation order is the same on every run. */
void ct_layernorm_slices(size_t R, size_t F, size_t *S, size_t *L)
{
    ct_slices(R, (LN_COL_ITEMS + F - 1) / F, LN_MIN_ROWS, S, L);
}

size_t ct_layernorm_workspace_size(size_t R, size_t F)
{
    size_t S, L;
    ct_layernorm_slices(R, F ? F : 1, &S, &L);
    return 2 * S * F;
}

int ct_layernorm_forward(ct_context *ctx, ct_buf y, ct_buf mean, ct_buf rstd, ct_buf x, ct_buf w,
                         ct_buf b, size_t R, size_t F, float eps)
{
    const char *who = "ct_layernorm_forward";
    int st = ct_rows_check(ctx, who, R, F);
    if (st)
        return st;
    if (!(eps > 0.0f))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: eps %g must be positive", who, (double)eps);
    if (!y.mem || !mean.mem || !rstd.mem || !x.mem || !w.mem || !b.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: a NULL buffer", who);
    if (R == 0)
        return CT_OK;
    if (!ctx->act16 && ct_layernorm_host_ok(ctx, R, F))
        return ct_layernorm_host_forward(ctx, y, mean, rstd, x, w, b, R, F, eps);
    cl_uint rr = (cl_uint)R, ff = (cl_uint)F;
    cl_float e = eps;
    int prog = ct_program_store(ctx, CT_PROG_layernorm);
    size_t es = ct_act_size(ctx);
    /* x, w, b read; y, mean, rstd written */
    ct_launch_bytes(ctx, R * F * es + 2 * F * sizeof(float), R * F * es + 2 * R * sizeof(float));
    if (ctx->cls.row_kernels && !ctx->act16) {
        size_t g[1] = { R };
        return CT_RUN(ctx, CT_PROG_layernorm, "ln_fwd_rows_f32", 1, g, NULL, CT_BUF(y), CT_BUF(mean),
                      CT_BUF(rstd), CT_BUF(x), CT_BUF(w), CT_BUF(b), CT_ARG(rr), CT_ARG(ff), CT_ARG(e));
    }
    size_t wg;
    if ((st = ct_kernel_pow2_wg(ctx, prog, "ln_fwd_f32", LN_MAX_WG, F, &wg)))
        return st;
    size_t g[1] = { R * wg }, l[1] = { wg };
    return CT_RUN(ctx, prog, "ln_fwd_f32", 1, g, l, CT_BUF(y), CT_BUF(mean),
                  CT_BUF(rstd), CT_BUF(x), CT_BUF(w), CT_BUF(b), CT_ARG(ff), CT_ARG(e),
                  CT_LOCAL(wg * sizeof(cl_float)));
}

int ct_layernorm_backward(ct_context *ctx, ct_buf dx, ct_buf dw, ct_buf db, ct_buf dy, ct_buf x,
                          ct_buf w, ct_buf mean, ct_buf rstd, size_t R, size_t F, ct_buf work)
{
    return ct_layernorm_backward_acc(ctx, dx, 0, dw, db, dy, x, w, mean, rstd, R, F, work);
}

int ct_layernorm_backward_acc(ct_context *ctx, ct_buf dx, int dx_acc, ct_buf dw, ct_buf db, ct_buf dy,
                              ct_buf x, ct_buf w, ct_buf mean, ct_buf rstd, size_t R, size_t F,
                              ct_buf work)
{
    const char *who = "ct_layernorm_backward";
    int st = ct_rows_check(ctx, who, R, F);
    if (st)
        return st;
    if (!dw.mem || !db.mem || !dy.mem || !x.mem || !w.mem || !mean.mem || !rstd.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: a NULL buffer (only dx may be NULL)", who);
    if (R == 0)
        return CT_OK;
    if (!ctx->act16 && ct_layernorm_host_ok(ctx, R, F))
        return ct_layernorm_host_backward(ctx, dx, dx_acc, dw, db, dy, x, w, mean, rstd, R, F);
    cl_uint rr = (cl_uint)R, ff = (cl_uint)F;
    size_t n = R * F;
    int prog = ct_program_store(ctx, CT_PROG_layernorm);
    size_t es = ct_act_size(ctx), fs = sizeof(float);
    if (ctx->cls.row_kernels && !ctx->act16) {
        size_t gp[1] = { F };
        ct_launch_bytes(ctx, (2 * n + 2 * R + 2 * F) * sizeof(float), 2 * F * sizeof(float));
        st = CT_RUN(ctx, CT_PROG_layernorm, "ln_bwd_params_f32", 1, gp, NULL, CT_BUF(dw), CT_BUF(db),
                    CT_BUF(dy), CT_BUF(x), CT_BUF(mean), CT_BUF(rstd), CT_ARG(rr), CT_ARG(ff));
    } else {
        if (!work.mem)
            return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: no workspace. HINT: pass one of "
                           "ct_layernorm_workspace_size(R, F) floats", who);
        size_t S, L, lc;
        ct_layernorm_slices(R, F, &S, &L);
        if ((st = ct_kernel_pow2_wg(ctx, prog, "ln_bwd_params_partial_f32", 64, F, &lc)))
            return st;
        cl_uint ns = (cl_uint)S, nl = (cl_uint)L;
        size_t g1[2] = { F, S }, l1[2] = { lc, 1 };
        ct_launch_bytes(ctx, 2 * n * es + 2 * R * fs, 2 * S * F * fs); /* dy, x; mean, rstd */
        st = CT_RUN(ctx, prog, "ln_bwd_params_partial_f32", 2, g1, l1, CT_BUF(work),
                    CT_BUF(dy), CT_BUF(x), CT_BUF(mean), CT_BUF(rstd), CT_ARG(rr), CT_ARG(ff),
                    CT_ARG(ns), CT_ARG(nl));
        if (st)
            return st;
        if (dx.mem) {
            /* stage two goes with dx's pass */
            size_t wg;
            if ((st = ct_kernel_pow2_wg(ctx, prog, "ln_bwd_f32", LN_MAX_WG, F, &wg)))
                return st;
            size_t g[1] = { R * wg }, l[1] = { wg };
            cl_int a = dx_acc != 0;
            /* dy, x (and dx when +=); mean, rstd, w, the partials, dw, db */
            ct_launch_bytes(ctx, (2 + (size_t)a) * n * es + (2 * R + F + 2 * S * F + 2 * F) * fs,
                            n * es + 2 * F * fs);
            return CT_RUN(ctx, prog, "ln_bwd_f32", 1, g, l, CT_BUF(dx), CT_BUF(dy), CT_BUF(x),
                          CT_BUF(w), CT_BUF(mean), CT_BUF(rstd), CT_ARG(ff),
                          CT_LOCAL(2 * wg * sizeof(cl_float)), CT_BUF(dw), CT_BUF(db), CT_BUF(work),
                          CT_ARG(ns), CT_ARG(a));
        }
        size_t g2[1] = { F };
        ct_launch_bytes(ctx, (2 * S * F + 2 * F) * fs, 2 * F * fs);
        return CT_RUN(ctx, prog, "ln_bwd_params_final_f32", 1, g2, NULL, CT_BUF(dw),
                      CT_BUF(db), CT_BUF(work), CT_ARG(ff), CT_ARG(ns));
    }
    if (st || !dx.mem)
        return st;
    size_t g[1] = { R };
    cl_int a = dx_acc != 0;
    ct_launch_bytes(ctx, (2 * n + 2 * R + F + (a ? n : 0)) * sizeof(float), n * sizeof(float));
    return CT_RUN(ctx, CT_PROG_layernorm, "ln_bwd_rows_f32", 1, g, NULL, CT_BUF(dx), CT_BUF(dy),
                  CT_BUF(x), CT_BUF(w), CT_BUF(mean), CT_BUF(rstd), CT_ARG(rr), CT_ARG(ff), CT_ARG(a));
}
