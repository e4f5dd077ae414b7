/*
 * rmsnorm.c - RMS-normalization launchers (cl_kernels/rmsnorm.cl).
 */
#include "ops/rmsnorm.h"

#include "ops/layernorm.h"

#define RMS_MAX_WG 256

size_t ct_rmsnorm_workspace_size(size_t R, size_t F)
{
    size_t S, L;
    ct_layernorm_slices(R, F ? F : 1, &S, &L); /* layer norm's slices of rows */
    return S * F;
}


/* A work-group per row: a power of two up to RMS_MAX_WG near F, at least 2
 * (see the .cl file) */
static int row_wg(ct_context *ctx, const char *kernel, size_t F, size_t *wg)
{
    int st = ct_kernel_pow2_wg(ctx, CT_PROG_rmsnorm, kernel, RMS_MAX_WG, F < 2 ? 2 : F, wg);
    if (!st && *wg < 2)
        st = ct_fail(ctx, CT_ERR_UNSUPPORTED, "%s: the device allows work-groups of 1", kernel);
    return st;
}

int ct_rmsnorm_forward(ct_context *ctx, ct_buf y, ct_buf rstd, ct_buf x, ct_buf w, size_t R, size_t F,
                       float eps)
{
    const char *who = "ct_rmsnorm_forward";
    int st = ct_rows_check(ctx, who, R, F);
    if (st)
        return st;
    if (!(eps > 0.0f))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: eps %g must be positive", who, (double)eps);
    if (!y.mem || !rstd.mem || !x.mem || !w.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: a NULL buffer", who);
    if (R == 0)
        return CT_OK;
    cl_uint rr = (cl_uint)R, ff = (cl_uint)F;
    cl_float e = eps;
    ct_launch_bytes(ctx, (R * F + F) * sizeof(float), (R * F + R) * sizeof(float));
    if (ctx->cls.row_kernels) {
        size_t g[1] = { R };
        return CT_RUN(ctx, CT_PROG_rmsnorm, "rms_fwd_rows_f32", 1, g, NULL, CT_BUF(y), CT_BUF(rstd), CT_BUF(x),
                      CT_BUF(w), CT_ARG(rr), CT_ARG(ff), CT_ARG(e));
    }
    size_t wg;
    if ((st = row_wg(ctx, "rms_fwd_f32", F, &wg)))
        return st;
    size_t g[1] = { R * wg }, l[1] = { wg };
    return CT_RUN(ctx, CT_PROG_rmsnorm, "rms_fwd_f32", 1, g, l, CT_BUF(y), CT_BUF(rstd), CT_BUF(x), CT_BUF(w),
                  CT_ARG(ff), CT_ARG(e), CT_LOCAL(wg * sizeof(cl_float)));
}

int ct_rmsnorm_backward(ct_context *ctx, ct_buf dx, int dx_acc, ct_buf dw, ct_buf dy, ct_buf x, ct_buf w,
                        ct_buf rstd, size_t R, size_t F, ct_buf work)
{
    const char *who = "ct_rmsnorm_backward";
    int st = ct_rows_check(ctx, who, R, F);
    if (st)
        return st;
    if (!dw.mem || !dy.mem || !x.mem || !w.mem || !rstd.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: a NULL buffer (only dx may be NULL)", who);
    if (R == 0)
        return CT_OK;
    cl_uint rr = (cl_uint)R, ff = (cl_uint)F;
    cl_int a = dx_acc != 0;
    size_t n = R * F;
    if (ctx->cls.row_kernels) {
        size_t gp[1] = { F };
        ct_launch_bytes(ctx, (2 * n + R + F) * sizeof(float), F * sizeof(float));
        st = CT_RUN(ctx, CT_PROG_rmsnorm, "rms_bwd_params_f32", 1, gp, NULL, CT_BUF(dw), CT_BUF(dy), CT_BUF(x),
                    CT_BUF(rstd), CT_ARG(rr), CT_ARG(ff));
        if (st || !dx.mem)
            return st;
        size_t g[1] = { R };
        ct_launch_bytes(ctx, ((a ? 3 : 2) * n + R + F) * sizeof(float), n * sizeof(float));
        return CT_RUN(ctx, CT_PROG_rmsnorm, "rms_bwd_rows_f32", 1, g, NULL, CT_BUF(dx), CT_BUF(dy), CT_BUF(x),
                      CT_BUF(w), CT_BUF(rstd), CT_ARG(rr), CT_ARG(ff), CT_ARG(a));
    }
    if (!work.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: no workspace. HINT: pass one of "
                       "ct_rmsnorm_workspace_size(R, F) floats", who);
    size_t S, L, lc;
    ct_layernorm_slices(R, F, &S, &L);
    if ((st = ct_kernel_pow2_wg(ctx, CT_PROG_rmsnorm, "rms_bwd_params_partial_f32", 64, F, &lc)))
        return st;
    cl_uint ns = (cl_uint)S, nl = (cl_uint)L;
    size_t g1[2] = { F, S }, l1[2] = { lc, 1 };
    ct_launch_bytes(ctx, (2 * n + R) * sizeof(float), S * F * sizeof(float));
    st = CT_RUN(ctx, CT_PROG_rmsnorm, "rms_bwd_params_partial_f32", 2, g1, l1, CT_BUF(work), CT_BUF(dy),
                CT_BUF(x), CT_BUF(rstd), CT_ARG(rr), CT_ARG(ff), CT_ARG(ns), CT_ARG(nl));
    if (st)
        return st;
    if (!dx.mem) {
        size_t g2[1] = { F };
        ct_launch_bytes(ctx, (S * F + F) * sizeof(float), F * sizeof(float));
        return CT_RUN(ctx, CT_PROG_rmsnorm, "rms_bwd_params_final_f32", 1, g2, NULL, CT_BUF(dw), CT_BUF(work),
                      CT_ARG(ff), CT_ARG(ns));
    }
    /* stage two goes with dx's pass */
    size_t wg;
    if ((st = row_wg(ctx, "rms_bwd_f32", F, &wg)))
        return st;
    size_t g[1] = { R * wg }, l[1] = { wg };
    ct_launch_bytes(ctx, ((a ? 3 : 2) * n + R + F + S * F + F) * sizeof(float), (n + F) * sizeof(float));
    return CT_RUN(ctx, CT_PROG_rmsnorm, "rms_bwd_f32", 1, g, l, CT_BUF(dx), CT_BUF(dy), CT_BUF(x), CT_BUF(w),
                  CT_BUF(rstd), CT_ARG(ff), CT_ARG(a), CT_BUF(dw), CT_BUF(work), CT_ARG(ns),
                  CT_LOCAL(wg * sizeof(cl_float)));
}
