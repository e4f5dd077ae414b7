/*
 * dense.c - dense layer launchers (two GEMMs and the bias kernels of
 * cl_kernels/dense.cl).
 */
#include "ops/dense.h"

#include <stdlib.h>

#include "ops/gemm_cl.h"

/* Slices of the bias gradient's two-stage sums: enough work-groups (a
 * channel's (n, hw)) or work-items (columns of (n, c)) in all to fill a
 * device of 130 compute units, none shorter than the minimum. */
#define BIAS_GROUPS 1024
#define BIAS_MIN_SLICE 512
#define BIAS_COL_ITEMS 16384
#define BIAS_MIN_ROWS 16
#define BIAS_MAX_ROWS 256
#define BIAS_MAX_WG 256
#define BIAS_TREE_COLS 16 /* columns per work-group of the one-launch tree */

/* The stage-one partial sums live in a device buffer the context keeps
 * (grown on demand): the bias gradient runs inside ops (convolution,
 * attention, dense) whose callers plan no workspace for it, and the buffer
 * stays small (about BIAS_COL_ITEMS + c floats, or c rows/256 for wide
 * rows). */
static const ct_ext_kind partials_kind = { "bias-gradient partial sums", ct_scratch_release };

static int partials_get(ct_context *ctx, size_t n, ct_buf *out)
{
    out->off = 0;
    return ct_scratch(ctx, &partials_kind, n, 4096, &out->mem);
}


/* n * c * hw elements must be indexable by the kernels' uint indices. */
static int check_dims(ct_context *ctx, const char *fn, int n, int c, int hw)
{
    if (n < 1 || c < 1 || hw < 1)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: shape (%d, %d, %d) has an empty or negative "
                       "dimension", fn, n, c, hw);
    if ((uint64_t)n * (uint64_t)c * (uint64_t)hw > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: shape (%d, %d, %d) has more than 2^32 - 1 "
                       "elements. HINT: split the batch", fn, n, c, hw);
    return CT_OK;
}

int ct_bias_act_forward(ct_context *ctx, ct_buf y, ct_buf x, ct_buf b, int n, int c, int hw,
                        ct_act act)
{
    int st = check_dims(ctx, "ct_bias_act_forward", n, c, hw);
    if (st)
        return st;
    if (act < 0 || act >= CT_ACT_COUNT || !y.mem || !x.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_bias_act_forward: activation %d, y %p, x %p",
                       (int)act, (void *)y.mem, (void *)x.mem);
    size_t total = (size_t)n * (size_t)c * (size_t)hw;
    if (!b.mem)
        return ct_act_forward(ctx, act, y, x, total);
    cl_uint nn = (cl_uint)n, cc = (cl_uint)c, hh = (cl_uint)hw;
    cl_int a = act;
    size_t g[1] = { total }, es = ct_act_size(ctx);
    ct_launch_bytes(ctx, total * es + (size_t)c * sizeof(float), total * es);
    return CT_RUN(ctx, ct_program_for(ctx, CT_PROG_dense), "bias_act_fwd_f32", 1, g, NULL, CT_BUF(y), CT_BUF(x),
                  CT_BUF(b), CT_ARG(nn), CT_ARG(cc), CT_ARG(hh), CT_ARG(a));
}

int ct_bias_backward(ct_context *ctx, ct_buf db, ct_buf dy, int n, int c, int hw)
{
    return ct_bias_act_backward(ctx, db, dy, CT_ACT_NONE, dy, dy, n, c, hw);
}

static int bias_backward(ct_context *ctx, ct_buf db, ct_buf dy, ct_act act, ct_buf x, ct_buf y, int n,
                         int c, int hw, size_t skip_at, size_t skip_len, int dy16);

/* A product with the ones vector (a bias broadcast or summed): in float32
 * whatever the context's precision, as every bias and its gradient are
 * (16-bit operands would round the bias and dy before the sum) */
static int ones_gemm(ct_context *ctx, size_t m, size_t n, size_t k, cl_mem a, size_t a_off, size_t lda,
                     cl_mem b, size_t b_off, size_t ldb, float beta, cl_mem c, size_t c_off, size_t ldc)
{
    int precision = ctx->precision;
    ctx->precision = CT_PRECISION_FP32;
    int st = ct_gemm(ctx, 0, 0, m, n, k, 1.0f, a, a_off, lda, b, b_off, ldb, beta, c, c_off, ldc);
    ctx->precision = precision;
    return st;
}

int ct_bias_act_backward(ct_context *ctx, ct_buf db, ct_buf dy, ct_act act, ct_buf x, ct_buf y, int n,
                         int c, int hw)
{
    return bias_backward(ctx, db, dy, act, x, y, n, c, hw, 0, 0, ctx->act16 != 0);
}

static int bias_skip(ct_context *ctx, ct_buf db, ct_buf dy, int n, int c, size_t skip_at, size_t skip_len,
                     int dy16)
{
    if (c < 0 || skip_at > (size_t)c || skip_len > (size_t)c - skip_at)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_bias_backward_skip: columns [%zu, %zu) are not "
                       "within the %d of a row", skip_at, skip_at + skip_len, c);
    return bias_backward(ctx, db, dy, CT_ACT_NONE, dy, dy, n, c, 1, skip_at, skip_len, dy16);
}

int ct_bias_backward_skip(ct_context *ctx, ct_buf db, ct_buf dy, int n, int c, size_t skip_at,
                          size_t skip_len)
{
    return bias_skip(ctx, db, dy, n, c, skip_at, skip_len, ctx->act16 != 0);
}

/* db += the bias gradient, leaving out (hw == 1 only) the columns [skip_at,
 * skip_at + skip_len) of each row; dy16: dy, x and y in the context's
 * 16-bit storage (the kernels' storage variant), else float32 */
static int bias_backward(ct_context *ctx, ct_buf db, ct_buf dy, ct_act act, ct_buf x, ct_buf y, int n,
                         int c, int hw, size_t skip_at, size_t skip_len, int dy16)
{
    int st = check_dims(ctx, "ct_bias_act_backward", n, c, hw);
    if (st)
        return st;
    if (dy16 && (!ctx->act16 || ctx->cls.row_kernels || ctx->cls.gemm == CT_GEMM_HOST))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_bias_act_backward: a 16-bit dy needs the GPU class with "
                       "16-bit activation storage set");
    /* the kernels' program: the storage variant for a 16-bit dy (the
     * partial sums stay float), the float one otherwise */
    const int prog = dy16 ? ct_program_store(ctx, CT_PROG_dense) : CT_PROG_dense;
    const size_t es = dy16 ? 2 : sizeof(float);
    if (skip_len && hw != 1)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_bias_act_backward: skipping columns needs hw = 1");
    if (act < 0 || act >= CT_ACT_COUNT || !db.mem || !dy.mem || !x.mem || !y.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_bias_act_backward: activation %d, db %p, dy %p, "
                       "x %p, y %p", (int)act, (void *)db.mem, (void *)dy.mem, (void *)x.mem,
                       (void *)y.mem);
    cl_uint nn = (cl_uint)n, cc = (cl_uint)c, hh = (cl_uint)hw;
    cl_int a = act;
    /* The CPU class keeps the activation apart: its chunked float8 pass
     * uses the SIMD math library, which the per-term derivative here would
     * not (and the host BLAS sums the bias below). */
    if (act != CT_ACT_NONE && (ctx->cls.row_kernels || (hw == 1 && ctx->cls.gemm == CT_GEMM_HOST))) {
        if ((st = ct_act_backward(ctx, act, dy, dy, x, y, (size_t)n * (size_t)c * (size_t)hw)))
            return st;
        a = CT_ACT_NONE;
    }
    /* Where GEMMs run on the host BLAS, db += ones (1, n) . dy (n, c) streams
     * dy once at memory speed, far faster than column kernels on a CPU. */
    if (hw == 1 && ctx->cls.gemm == CT_GEMM_HOST) {
        ct_buf ones;
        if ((st = ct_ones(ctx, (size_t)n, &ones)))
            return st;
        /* the columns before the skipped ones, then those after */
        size_t after = skip_at + skip_len;
        if (skip_at && (st = ones_gemm(ctx, 1, skip_at, (size_t)n, ones.mem, ones.off, (size_t)n, dy.mem, dy.off,
                                       (size_t)c, 1.0f, db.mem, db.off, (size_t)c)))
            return st;
        if (after < (size_t)c)
            st = ones_gemm(ctx, 1, (size_t)c - after, (size_t)n, ones.mem, ones.off, (size_t)n, dy.mem,
                           dy.off + after, (size_t)c, 1.0f, db.mem, db.off + after, (size_t)c);
        return st;
    }
    /* C: the columns summed (skipped ones left out; cc, the row, keeps them) */
    size_t C = (size_t)c - skip_len, HW = (size_t)hw, N = (size_t)n, S, L;
    size_t terms = N * C * HW, act_in = a == CT_ACT_NONE ? 0 : 2 * terms; /* x, y with act */
    cl_uint at = (cl_uint)skip_at, len = (cl_uint)skip_len;
    ct_buf part;
    cl_uint ns, nl, cs, ss;
    if (hw == 1 && N <= BIAS_MAX_ROWS) {
        /* Short columns (an MLP's or a classifier head's batch): one launch,
         * a work-item per channel summing its n rows in order into db,
         * without the partials and the final kernel (a launch costs more
         * than the sum here). */
        size_t lc;
        if ((st = ct_kernel_pow2_wg(ctx, prog, "bias_bwd_cols_partial_f32", 64, C, &lc)))
            return st;
        cl_uint one = 1;
        cl_int accum = 1;
        size_t g[2] = { C, 1 }, l[2] = { lc, 1 };
        ct_launch_bytes(ctx, (terms + act_in) * es + C * sizeof(float),
                        (a != CT_ACT_NONE ? terms : 0) * es + C * sizeof(float));
        return CT_RUN(ctx, prog, "bias_bwd_cols_partial_f32", 2, g, l, CT_BUF(db),
                      CT_BUF(dy), CT_BUF(x), CT_BUF(y), CT_ARG(nn), CT_ARG(cc), CT_ARG(one),
                      CT_ARG(nn), CT_ARG(a), CT_ARG(accum), CT_ARG(at), CT_ARG(len));
    }
    if (hw == 1) {
        /* Fewer than R x BIAS_MAX_ROWS rows (a transformer's tokens): one launch
         * of work-groups of cw columns x R lanes and a tree in local memory */
        size_t wg;
        if ((st = ct_kernel_pow2_wg(ctx, prog, "bias_bwd_cols_tree_f32", BIAS_MAX_WG, BIAS_MAX_WG,
                                    &wg)))
            return st;
        size_t cw = wg < BIAS_TREE_COLS ? wg : BIAS_TREE_COLS, R = wg / cw;
        if (R > 1 && N < R * BIAS_MAX_ROWS) {
            size_t g[2] = { (C + cw - 1) / cw * cw, R }, l[2] = { cw, R };
            ct_launch_bytes(ctx, (terms + act_in) * es + C * sizeof(float),
                            (a != CT_ACT_NONE ? terms : 0) * es + C * sizeof(float));
            return CT_RUN(ctx, prog, "bias_bwd_cols_tree_f32", 2, g, l, CT_BUF(db), CT_BUF(dy),
                          CT_BUF(x), CT_BUF(y), CT_ARG(nn), CT_ARG(cc), CT_ARG(a),
                          CT_LOCAL(wg * sizeof(cl_float)), CT_ARG(at), CT_ARG(len));
        }
    }
    /* Two stages: partial sums per (slice, channel), then per channel
     * (see cl_kernels/dense.cl). */
    if (hw == 1) {
        /* about BIAS_COL_ITEMS work-items, and at most BIAS_MAX_ROWS rows
         * each (wide rows: a decoder's 10,000 columns) */
        size_t want = (BIAS_COL_ITEMS + C - 1) / C, most = (N + BIAS_MAX_ROWS - 1) / BIAS_MAX_ROWS;
        ct_slices(N, want > most ? want : most, BIAS_MIN_ROWS, &S, &L);
        if ((st = partials_get(ctx, S * C, &part)))
            return st;
        size_t lc;
        if ((st = ct_kernel_pow2_wg(ctx, prog, "bias_bwd_cols_partial_f32", 64, C, &lc)))
            return st;
        ns = (cl_uint)S, nl = (cl_uint)L, cs = 1, ss = (cl_uint)C;
        cl_int accum = 0;
        size_t g[2] = { C, S }, l[2] = { lc, 1 };
        ct_launch_bytes(ctx, (terms + act_in) * es,
                        (a != CT_ACT_NONE ? terms : 0) * es + S * C * sizeof(float));
        st = CT_RUN(ctx, prog, "bias_bwd_cols_partial_f32", 2, g, l, CT_BUF(part),
                    CT_BUF(dy), CT_BUF(x), CT_BUF(y), CT_ARG(nn), CT_ARG(cc), CT_ARG(ns), CT_ARG(nl),
                    CT_ARG(a), CT_ARG(accum), CT_ARG(at), CT_ARG(len));
    } else {
        ct_slices(N * HW, (BIAS_GROUPS + C - 1) / C, BIAS_MIN_SLICE, &S, &L);
        if ((st = partials_get(ctx, S * C, &part)))
            return st;
        size_t wg;
        if ((st = ct_kernel_pow2_wg(ctx, prog, "bias_bwd_partial_f32", BIAS_MAX_WG, L, &wg)))
            return st;
        ns = (cl_uint)S, nl = (cl_uint)L, cs = ns, ss = 1;
        size_t g[2] = { S * wg, C }, l[2] = { wg, 1 };
        ct_launch_bytes(ctx, (terms + act_in) * es,
                        (a != CT_ACT_NONE ? terms : 0) * es + S * C * sizeof(float));
        st = CT_RUN(ctx, prog, "bias_bwd_partial_f32", 2, g, l, CT_BUF(part), CT_BUF(dy),
                    CT_BUF(x), CT_BUF(y), CT_ARG(nn), CT_ARG(cc), CT_ARG(hh), CT_ARG(nl), CT_ARG(a),
                    CT_LOCAL(wg * sizeof(cl_float)));
    }
    if (st)
        return st;
    size_t g[1] = { C };
    ct_launch_bytes(ctx, (S * C + C) * sizeof(float), C * sizeof(float));
    cl_uint ncols = (cl_uint)C;
    return CT_RUN(ctx, CT_PROG_dense, "bias_bwd_final_f32", 1, g, NULL, CT_BUF(db), CT_BUF(part),
                  CT_ARG(ncols), CT_ARG(ns), CT_ARG(cs), CT_ARG(ss), CT_ARG(at), CT_ARG(len));
}

int ct_dense_forward(ct_context *ctx, ct_buf y, ct_buf x, ct_buf w, ct_buf b, int n, int in,
                     int out)
{
    return ct_dense_forward_act(ctx, y, x, w, b, n, in, out, CT_ACT_NONE);
}

int ct_dense_forward_act(ct_context *ctx, ct_buf y, ct_buf x, ct_buf w, ct_buf b, int n, int in,
                         int out, ct_act act)
{
    return ct_dense_forward_s(ctx, y, x, w, b, n, in, out, act, 0);
}

/* The products' 16-bit operands (ct_gemm_cl_epi.s16) of a dense layer's
 * storage flags: x (or dx), y (or dy) */
static int s16_of(int s16, int x_as, int y_as)
{
    return (s16 & CT_DENSE_X16 ? x_as : 0) | (s16 & CT_DENSE_Y16 ? y_as : 0);
}

int ct_dense_forward_s(ct_context *ctx, ct_buf y, ct_buf x, ct_buf w, ct_buf b, int n, int in, int out,
                       ct_act act, int s16)
{
    int st;
    if (act < 0 || act >= CT_ACT_COUNT)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_dense_forward: activation %d", (int)act);
    if ((st = check_dims(ctx, "ct_dense_forward", n, in, 1)) ||
        (st = check_dims(ctx, "ct_dense_forward", n, out, 1)) ||
        (st = check_dims(ctx, "ct_dense_forward", out, in, 1)))
        return st;
    if (!y.mem || !x.mem || !w.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_dense_forward: y %p, x %p, w %p",
                       (void *)y.mem, (void *)x.mem, (void *)w.mem);
    size_t N = (size_t)n, I = (size_t)in, O = (size_t)out;
    if (b.mem && ctx->cls.gemm == CT_GEMM_HOST) {
        /* on the host BLAS: y = ones (n, 1) . b (1, out), then y += x . w^T,
         * two GEMMs instead of a GEMM and a slower bias kernel */
        ct_buf ones;
        if ((st = ct_ones(ctx, N, &ones)) ||
            (st = ones_gemm(ctx, N, O, 1, ones.mem, ones.off, 1, b.mem, b.off, O, 0.0f, y.mem, y.off, O)) ||
            (st = ct_gemm(ctx, 0, 1, N, O, I, 1.0f, x.mem, x.off, I, w.mem, w.off, I, 1.0f, y.mem, y.off, O)))
            return st;
        return act ? ct_act_forward(ctx, act, y, y, N * O) : CT_OK;
    }
    /* y (n, out) = act(x (n, in) . w^T (in, out) + b): the bias and the
     * activation in the product's last pass where cltrain's own kernel runs
     * it, else a bias_act_fwd_f32 pass after it */
    ct_gemm_cl_epi epi = { b.mem, b.off, act, s16_of(s16, CT_S16_A, CT_S16_C) };
    int fused = 0;
    if ((st = ct_gemm_epi(ctx, 0, 1, N, O, I, 1.0f, x.mem, x.off, I, w.mem, w.off, I, 0.0f, y.mem,
                          y.off, O, &epi, &fused)))
        return st;
    if (fused || (!b.mem && !act))
        return CT_OK;
    if (s16) /* (16-bit operands take the own kernels, which fuse) */
        return ct_fail(ctx, CT_ERR_INTERNAL, "ct_dense_forward: a 16-bit product ran unfused");
    return ct_bias_act_forward(ctx, y, y, b, n, out, 1, act);
}

int ct_dense_backward(ct_context *ctx, ct_buf dx, ct_buf dw, ct_buf db, ct_buf dy, ct_buf x,
                      ct_buf w, int n, int in, int out)
{
    return ct_dense_backward_s(ctx, dx, dw, db, dy, x, w, n, in, out, 0, 0, 0);
}

int ct_dense_backward_s(ct_context *ctx, ct_buf dx, ct_buf dw, ct_buf db, ct_buf dy, ct_buf x, ct_buf w,
                        int n, int in, int out, size_t skip_at, size_t skip_len, int s16)
{
    int st;
    if ((st = check_dims(ctx, "ct_dense_backward", n, in, 1)) ||
        (st = check_dims(ctx, "ct_dense_backward", n, out, 1)) ||
        (st = check_dims(ctx, "ct_dense_backward", out, in, 1)))
        return st;
    if (!dy.mem || (dx.mem && !w.mem) || (dw.mem && !x.mem))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_dense_backward: dy %p, w %p (needed for dx), "
                       "x %p (needed for dw)", (void *)dy.mem, (void *)w.mem, (void *)x.mem);
    size_t N = (size_t)n, I = (size_t)in, O = (size_t)out;
    /* dx (n, in) = dy (n, out) . w (out, in) */
    ct_gemm_cl_epi ex = { NULL, 0, 0, s16_of(s16, CT_S16_C, CT_S16_A) };
    if (dx.mem && (st = ct_gemm_epi(ctx, 0, 0, N, I, O, 1.0f, dy.mem, dy.off, O, w.mem, w.off, I, 0.0f, dx.mem,
                                    dx.off, I, s16 ? &ex : NULL, NULL)))
        return st;
    /* dw (out, in) += dy^T (out, n) . x (n, in) */
    ct_gemm_cl_epi ew = { NULL, 0, 0, s16_of(s16, CT_S16_B, CT_S16_A) };
    if (dw.mem && (st = ct_gemm_epi(ctx, 1, 0, O, I, N, 1.0f, dy.mem, dy.off, O, x.mem, x.off, I, 1.0f, dw.mem,
                                    dw.off, I, s16 ? &ew : NULL, NULL)))
        return st;
    if (db.mem)
        return bias_skip(ctx, db, dy, n, out, skip_at, skip_len, (s16 & CT_DENSE_Y16) != 0);
    return CT_OK;
}
