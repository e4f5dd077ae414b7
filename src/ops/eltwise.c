/*
 * eltwise.c - element-wise launchers (cl_kernels/eltwise.cl), and the
 * two-stage non-finite count.
 */
#include "ops/eltwise.h"

#include "host/eltwise_host.h"

static int check_n(ct_context *ctx, const char *who, size_t n)
{
    if (n > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: %zu elements is more than 2^32: HINT: split "
                       "the operation", who, n);
    return CT_OK;
}

/* The eltwise program for kernels over activations: its storage variant
 * (ct_program_store), whose elements take `*esize` bytes. */
static int store_prog(ct_context *ctx, size_t *esize)
{
    *esize = ct_act_size(ctx);
    return ct_program_store(ctx, CT_PROG_eltwise);
}

static int same(ct_buf a, ct_buf b)
{
    return a.mem == b.mem && a.off == b.off;
}

int ct_add_forward(ct_context *ctx, ct_buf y, ct_buf a, ct_buf b, size_t n)
{
    int st = check_n(ctx, "ct_add_forward", n);
    if (st)
        return st;
    if (!ctx->act16 && ct_eltwise_host_ok(ctx, n))
        return ct_host_add(ctx, y, a, b, n);
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n }, es;
    int prog = store_prog(ctx, &es);
    ct_launch_bytes(ctx, 2 * n * es, n * es);
    return CT_RUN(ctx, prog, "add_fwd_f32", 1, g, NULL, CT_BUF(y), CT_BUF(a), CT_BUF(b),
                  CT_ARG(nn));
}

int ct_add_backward(ct_context *ctx, ct_buf da, ct_buf db, ct_buf dy, size_t n)
{
    return ct_add_backward_acc(ctx, da, 0, db, 0, dy, n);
}

int ct_add_backward_acc(ct_context *ctx, ct_buf da, int acc_a, ct_buf db, int acc_b, ct_buf dy,
                        size_t n)
{
    int st = check_n(ctx, "ct_add_backward", n);
    if (st)
        return st;
    /* a target that is dy itself is written already; one it adds into is not */
    acc_a = acc_a && da.mem, acc_b = acc_b && db.mem;
    cl_int which = (da.mem && (acc_a || !same(da, dy)) ? 1 : 0) |
                   (db.mem && (acc_b || !same(db, dy)) ? 2 : 0);
    if (!which)
        return CT_OK;
    if (!ctx->act16 && ct_eltwise_host_ok(ctx, n)) {
        if (!acc_a && !acc_b)
            return ct_host_add_backward(ctx, da, db, dy, n, which);
        if (which & 1)
            st = acc_a ? ct_host_accumulate(ctx, da, dy, n) : ct_host_copy(ctx, da, dy, n);
        if (!st && (which & 2))
            st = acc_b ? ct_host_accumulate(ctx, db, dy, n) : ct_host_copy(ctx, db, dy, n);
        return st;
    }
    which |= (acc_a ? 4 : 0) | (acc_b ? 8 : 0);
    /* a skipped target's argument must still be a valid buffer: pass dy */
    ct_buf a = which & 1 ? da : dy, b = which & 2 ? db : dy;
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n }, es;
    int prog = store_prog(ctx, &es);
    size_t targets = (size_t)((which & 1) + ((which >> 1) & 1)), adds = (size_t)(acc_a + acc_b);
    ct_launch_bytes(ctx, (1 + adds) * n * es, targets * n * es);
    return CT_RUN(ctx, prog, "add_bwd_f32", 1, g, NULL, CT_BUF(a), CT_BUF(b), CT_BUF(dy),
                  CT_ARG(nn), CT_ARG(which));
}

int ct_add_accumulate(ct_context *ctx, ct_buf dst, ct_buf src, size_t n)
{
    int st = check_n(ctx, "ct_add_accumulate", n);
    if (st)
        return st;
    if (!ctx->act16 && ct_eltwise_host_ok(ctx, n))
        return ct_host_accumulate(ctx, dst, src, n);
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n }, es;
    int prog = store_prog(ctx, &es);
    ct_launch_bytes(ctx, 2 * n * es, n * es);
    return CT_RUN(ctx, prog, "add_accumulate_act", 1, g, NULL, CT_BUF(dst), CT_BUF(src), CT_ARG(nn));
}

int ct_add_accumulate_f32(ct_context *ctx, ct_buf dst, ct_buf src, size_t n)
{
    int st = check_n(ctx, "ct_add_accumulate_f32", n);
    if (st)
        return st;
    if (ct_eltwise_host_ok(ctx, n))
        return ct_host_accumulate(ctx, dst, src, n);
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n };
    ct_launch_bytes(ctx, 2 * n * sizeof(float), n * sizeof(float));
    return CT_RUN(ctx, CT_PROG_eltwise, "add_accumulate_f32", 1, g, NULL, CT_BUF(dst), CT_BUF(src),
                  CT_ARG(nn));
}

/* One of the conversions, copies or fills over activations (eltwise.cl);
 * ysize, xsize: the bytes of an element of y and x, 0 for the storage's
 * (x.mem NULL: a fill, no x) */
static int act_move(ct_context *ctx, const char *kernel, ct_buf y, size_t ysize, ct_buf x, size_t xsize,
                    size_t n)
{
    int st = check_n(ctx, kernel, n);
    if (st)
        return st;
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n }, es;
    int prog = store_prog(ctx, &es);
    ct_launch_bytes(ctx, n * (xsize ? xsize : es) * (x.mem != NULL), n * (ysize ? ysize : es));
    if (!x.mem)
        return CT_RUN(ctx, prog, kernel, 1, g, NULL, CT_BUF(y), CT_ARG(nn));
    return CT_RUN(ctx, prog, kernel, 1, g, NULL, CT_BUF(y), CT_BUF(x), CT_ARG(nn));
}

int ct_act_from_f32(ct_context *ctx, ct_buf y, ct_buf x, size_t n)
{
    if (!ctx->act16)
        return ct_copy(ctx, y, x, n);
    return act_move(ctx, "act_from_f32", y, 0, x, sizeof(float), n);
}

int ct_act_to_f32(ct_context *ctx, ct_buf y, ct_buf x, size_t n)
{
    if (!ctx->act16)
        return ct_copy(ctx, y, x, n);
    return act_move(ctx, "act_to_f32", y, sizeof(float), x, 0, n);
}

int ct_act_copy(ct_context *ctx, ct_buf y, ct_buf x, size_t n)
{
    if (!ctx->act16)
        return ct_copy(ctx, y, x, n);
    return act_move(ctx, "act_copy", y, 0, x, 0, n);
}

int ct_act_zero(ct_context *ctx, ct_buf y, size_t n)
{
    if (!ctx->act16)
        return ct_fill(ctx, y, n, 0.0f);
    return act_move(ctx, "act_zero", y, 0, (ct_buf){ NULL, 0 }, 0, n);
}

int ct_scale(ct_context *ctx, ct_buf x, float s, size_t n)
{
    int st = check_n(ctx, "ct_scale", n);
    if (st)
        return st;
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n };
    ct_launch_bytes(ctx, n * sizeof(float), n * sizeof(float));
    return CT_RUN(ctx, CT_PROG_eltwise, "scale_f32", 1, g, NULL, CT_BUF(x), CT_ARG(nn), CT_ARG(s));
}

int ct_axpy(ct_context *ctx, ct_buf y, float a, ct_buf x, size_t n)
{
    int st = check_n(ctx, "ct_axpy", n);
    if (st)
        return st;
    cl_uint nn = (cl_uint)n;
    size_t g[1] = { n };
    ct_launch_bytes(ctx, 2 * n * sizeof(float), n * sizeof(float));
    return CT_RUN(ctx, CT_PROG_eltwise, "axpy_f32", 1, g, NULL, CT_BUF(y), CT_ARG(a), CT_BUF(x),
                  CT_ARG(nn));
}

/* Stage one takes about NONFINITE_PER_ITEM elements per work-item, in as
 * many groups as that needs up to NONFINITE_MAX_GROUPS: 16 elements each
 * up to 16M elements (a ResNet-50's 25M gradients: 25 each, where a cap
 * of 256 groups gave 390); stage two sums at most 4096 partials. */
#define NONFINITE_MAX_WG 256
#define NONFINITE_MAX_GROUPS 4096
#define NONFINITE_PER_ITEM 16

/* The 2-D range of the gating multiply's kernels: rows of hw in groups of
 * up to 256 work-items (fewer where the kernel allows less), lx positions
 * of a row along dimension 0 (a power of two), ly rows */
static int mul_range(ct_context *ctx, const char *kernel, size_t rows, size_t hw, size_t g[2], size_t l[2])
{
    ct_kernel_entry *e;
    int st = ct_kernel_get(ctx, CT_PROG_eltwise, kernel, &e);
    if (st)
        return st;
    size_t cap = e->max_wg < 256 ? e->max_wg : 256, lx = 1;
    while (lx < hw && lx * 2 <= cap)
        lx *= 2;
    size_t ly = cap / lx < rows ? cap / lx : rows;
    l[0] = lx, l[1] = ly;
    g[0] = (hw + lx - 1) / lx * lx;
    g[1] = (rows + ly - 1) / ly * ly;
    return CT_OK;
}

static int mul_check(ct_context *ctx, const char *who, size_t rows, size_t hw)
{
    if (rows == 0 || hw == 0)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: empty operand (%zu rows of %zu)", who, rows, hw);
    return check_n(ctx, who, rows * hw);
}

int ct_mul_forward(ct_context *ctx, ct_buf y, ct_buf x, ct_buf g, size_t rows, size_t hw)
{
    int st = mul_check(ctx, "ct_mul_forward", rows, hw);
    if (st)
        return st;
    size_t gs[2], ls[2];
    if ((st = mul_range(ctx, "mul_fwd_f32", rows, hw, gs, ls)))
        return st;
    cl_uint h = (cl_uint)hw, r = (cl_uint)rows;
    ct_launch_bytes(ctx, (rows * hw + rows) * sizeof(float), rows * hw * sizeof(float));
    return CT_RUN(ctx, CT_PROG_eltwise, "mul_fwd_f32", 2, gs, ls, CT_BUF(y), CT_BUF(x), CT_BUF(g), CT_ARG(h),
                  CT_ARG(r));
}

int ct_mul_backward(ct_context *ctx, ct_buf dx, int acc_x, ct_buf dg, int acc_g, ct_buf dy, ct_buf x,
                    ct_buf g, size_t rows, size_t hw)
{
    int st = mul_check(ctx, "ct_mul_backward", rows, hw);
    if (st)
        return st;
    cl_uint h = (cl_uint)hw, r = (cl_uint)rows;
    if (dg.mem) { /* first: it reads dy, which dx may overwrite */
        /* a row per work-item on CPU devices (its loop runs along the
         * row) and for rows of one element; on GPUs up to 256
         * neighbouring work-items share a row */
        cl_int a = acc_g ? 1 : 0;
        ct_launch_bytes(ctx, (2 * rows * hw + (acc_g ? rows : 0)) * sizeof(float), rows * sizeof(float));
        if (ctx->cls.row_kernels || hw == 1) {
            size_t g1[1] = { rows };
            st = CT_RUN(ctx, CT_PROG_eltwise, "mul_bwd_dg_rows_f32", 1, g1, NULL, CT_BUF(dg), CT_BUF(dy),
                        CT_BUF(x), CT_ARG(h), CT_ARG(r), CT_ARG(a));
        } else {
            size_t gs[2], ls[2];
            if ((st = mul_range(ctx, "mul_bwd_dg_f32", rows, hw, gs, ls)))
                return st;
            gs[0] = ls[0]; /* one group along a row */
            st = CT_RUN(ctx, CT_PROG_eltwise, "mul_bwd_dg_f32", 2, gs, ls, CT_BUF(dg), CT_BUF(dy), CT_BUF(x),
                        CT_ARG(h), CT_ARG(r), CT_ARG(a), CT_LOCAL(ls[0] * ls[1] * sizeof(cl_float)));
        }
        if (st)
            return st;
    }
    if (!dx.mem)
        return CT_OK;
    size_t gs[2], ls[2];
    if ((st = mul_range(ctx, "mul_bwd_dx_f32", rows, hw, gs, ls)))
        return st;
    cl_int a = acc_x ? 1 : 0;
    ct_launch_bytes(ctx, ((acc_x ? 2 : 1) * rows * hw + rows) * sizeof(float), rows * hw * sizeof(float));
    return CT_RUN(ctx, CT_PROG_eltwise, "mul_bwd_dx_f32", 2, gs, ls, CT_BUF(dx), CT_BUF(dy), CT_BUF(g),
                  CT_ARG(h), CT_ARG(r), CT_ARG(a));
}

int ct_copy_rows(ct_context *ctx, ct_buf dst, size_t dld, ct_buf src, size_t sld, size_t len, size_t rows,
                 int acc)
{
    if (len == 0 || rows == 0)
        return CT_OK;
    if (len > dld || len > sld)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_copy_rows: rows of %zu wider than their strides %zu, %zu",
                       len, dld, sld);
    int st = check_n(ctx, "ct_copy_rows", rows * (dld > sld ? dld : sld));
    if (st)
        return st;
    size_t gs[2], ls[2];
    if ((st = mul_range(ctx, "copy_rows_f32", rows, len, gs, ls)))
        return st;
    cl_uint dl = (cl_uint)dld, sl = (cl_uint)sld, ln = (cl_uint)len, r = (cl_uint)rows;
    cl_int a = acc ? 1 : 0;
    ct_launch_bytes(ctx, (acc ? 2 : 1) * rows * len * sizeof(float), rows * len * sizeof(float));
    return CT_RUN(ctx, CT_PROG_eltwise, "copy_rows_f32", 2, gs, ls, CT_BUF(dst), CT_ARG(dl), CT_BUF(src),
                  CT_ARG(sl), CT_ARG(ln), CT_ARG(r), CT_ARG(a));
}

size_t ct_nonfinite_count_workspace_size(size_t n)
{
    (void)n; /* the group count is capped, so this bound serves every n */
    return NONFINITE_MAX_GROUPS;
}

/* act: x holds activations (the storage program's form of the kernel) */
static int nonfinite(ct_context *ctx, ct_buf count, ct_buf x, size_t n, ct_buf workspace, int act)
{
    int st = check_n(ctx, "ct_nonfinite_count", n);
    if (st)
        return st;
    if (!count.mem || !workspace.mem || (n && !x.mem))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_nonfinite_count: a NULL buffer (count, x or a "
                       "workspace of ct_nonfinite_count_workspace_size(n) floats)");
    size_t wg1, wg2, es = sizeof(float);
    int prog = act ? store_prog(ctx, &es) : CT_PROG_eltwise;
    if ((st = ct_kernel_pow2_wg(ctx, prog, "nonfinite_partial_f32", NONFINITE_MAX_WG, 0, &wg1)) ||
        (st = ct_kernel_pow2_wg(ctx, CT_PROG_eltwise, "nonfinite_final_f32", NONFINITE_MAX_WG, 0, &wg2)))
        return st;
    /* n == 0 still runs one group, which writes a zero partial */
    size_t groups = (n + wg1 * NONFINITE_PER_ITEM - 1) / (wg1 * NONFINITE_PER_ITEM);
    if (groups > NONFINITE_MAX_GROUPS)
        groups = NONFINITE_MAX_GROUPS;
    if (groups == 0)
        groups = 1;
    ct_buf in = x.mem ? x : workspace; /* never read when n == 0 */
    cl_uint nn = (cl_uint)n, ng = (cl_uint)groups;
    size_t g1[1] = { groups * wg1 }, l1[1] = { wg1 };
    ct_launch_bytes(ctx, n * es, groups * sizeof(cl_uint));
    st = CT_RUN(ctx, prog, "nonfinite_partial_f32", 1, g1, l1, CT_BUF(workspace), CT_BUF(in),
                CT_ARG(nn), CT_LOCAL(wg1 * sizeof(cl_uint)));
    if (st)
        return st;
    size_t g2[1] = { wg2 }, l2[1] = { wg2 };
    ct_launch_bytes(ctx, groups * sizeof(cl_uint), sizeof(float));
    return CT_RUN(ctx, CT_PROG_eltwise, "nonfinite_final_f32", 1, g2, l2, CT_BUF(count), CT_BUF(workspace),
                  CT_ARG(ng), CT_LOCAL(wg2 * sizeof(cl_uint)));
}

int ct_nonfinite_count(ct_context *ctx, ct_buf count, ct_buf x, size_t n, ct_buf workspace)
{
    return nonfinite(ctx, count, x, n, workspace, 0);
}

int ct_nonfinite_count_act(ct_context *ctx, ct_buf count, ct_buf x, size_t n, ct_buf workspace)
{
    return nonfinite(ctx, count, x, n, workspace, 1);
}
