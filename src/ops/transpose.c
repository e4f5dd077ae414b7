/*
 * transpose.c - transpose launchers: a 3-D range of TILE x TILE tiles per
 * batch, in work-groups of (TILE, TILE / 4) work-items (each moving four
 * elements a pass), or fewer rows where the kernel allows fewer.
 */
#include "ops/transpose.h"

#define TILE 16 /* CT_TP_TILE in cl_kernels/transpose.cl */

int ct_transpose(ct_context *ctx, ct_buf dst, ct_buf src, size_t batch, size_t R, size_t C, size_t sn, size_t rs,
                 size_t dn, size_t cs)
{
    if (!dst.mem || !src.mem || !batch || !R || !C || R > UINT32_MAX || C > UINT32_MAX || rs < C || cs < R)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_transpose: %zu batches of (%zu, %zu), row strides %zu and "
                       "%zu: HINT: non-empty, and strides at least the rows' lengths", batch, R, C, rs, cs);
    ct_kernel_entry *e;
    int st = ct_kernel_get(ctx, CT_PROG_transpose, "transpose_f32", &e);
    if (st)
        return st;
    size_t rows = TILE / 4;
    while (rows > 1 && TILE * rows > e->max_wg)
        rows /= 2;
    if (TILE * rows > e->max_wg)
        return ct_fail(ctx, CT_ERR_UNSUPPORTED, "ct_transpose: the device runs at most %zu work-items of the "
                       "transpose in a work-group, below %d", e->max_wg, TILE);
    size_t g[3] = { (C + TILE - 1) / TILE * TILE, (R + TILE - 1) / TILE * rows, batch }, l[3] = { TILE, rows, 1 };
    cl_uint r32 = (cl_uint)R, c32 = (cl_uint)C;
    cl_ulong a = sn, b = rs, c = dn, d = cs;
    ct_launch_bytes(ctx, batch * R * C * sizeof(float), batch * R * C * sizeof(float));
    return CT_RUN(ctx, CT_PROG_transpose, "transpose_f32", 3, g, l, CT_BUF(dst), CT_BUF(src), CT_ARG(r32),
                  CT_ARG(c32), CT_ARG(a), CT_ARG(b), CT_ARG(c), CT_ARG(d));
}

int ct_image_to_seq(ct_context *ctx, ct_buf y, ct_buf x, size_t n, size_t e, size_t t)
{
    /* per image: (e, t) rows of t -> (t, e) rows of e, a step's rows n e apart */
    return ct_transpose(ctx, y, x, n, e, t, e * t, t, e, n * e);
}

int ct_seq_to_image(ct_context *ctx, ct_buf x, ct_buf y, size_t n, size_t e, size_t t)
{
    /* per image: (t, e) rows n e apart -> (e, t) rows of t */
    return ct_transpose(ctx, x, y, n, t, e, e, n * e, e * t, t);
}
