/*
 * conv.c - conv2d launchers: im2col + ct_gemm, col2im for the input
 * gradient, GEMM accumulation for the weight gradient (cl_kernels/conv.cl).
 *
 * With room for several images' columns in the workspace, one GEMM covers
 * `nb` images: the columns sit side by side (K, nb P), so the product comes
 * out channel-major (c_out, nb P) and a reorder pass (which also adds the
 * bias) puts it into NCHW; the backward pass reorders dy the other way.
 * With room for one image only, the GEMMs read and write the NCHW tensors
 * directly, and a 1x1, stride-1, unpadded convolution needs no im2col at
 * all (an image (c_in, h w) already is its column matrix).
 *
 * On the CPU class with the host GEMM path, stride-1 convolutions go to the
 * direct host convolution of conv_host.c instead (after the same checks,
 * so both paths accept and refuse the same arguments).
 */
#include <limits.h>

#include "ops/conv.h"
#include "ops/conv_igemm.h"
#include "ops/conv_lane.h"
#include "host/conv_host.h"
#include "ops/dense.h"

typedef struct conv_plan {
    int oh, ow;
    size_t K, P;  /* rows of the column matrix, output pixels per image */
    size_t in_img, out_img; /* elements per image of x and y */
    int nb;       /* images per GEMM; 1: direct on the NCHW tensors */
    int identity; /* the column matrix of an image is the image itself */
} conv_plan;

/* floor division for the output size, whose numerator may be negative */
static long floor_div(long a, long b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

int ct_conv2d_out_shape(ct_context *ctx, const ct_conv2d_desc *d, int *oh, int *ow)
{
    if (!d)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "conv2d: the descriptor is NULL");
    if (d->n < 1 || d->c_in < 1 || d->h < 1 || d->w < 1 || d->c_out < 1 || d->kh < 1 ||
        d->kw < 1 || d->stride_h < 1 || d->stride_w < 1 || d->pad_h < 0 || d->pad_w < 0 ||
        d->dil_h < 1 || d->dil_w < 1)
        return ct_fail(ctx, CT_ERR_SHAPE, "conv2d: invalid geometry: input (%d, %d, %d, %d), "
                       "weights (%d, %d, %d, %d), stride %dx%d, padding %dx%d, dilation %dx%d. "
                       "HINT: sizes, strides and dilations must be >= 1, padding >= 0",
                       d->n, d->c_in, d->h, d->w, d->c_out, d->c_in, d->kh, d->kw, d->stride_h,
                       d->stride_w, d->pad_h, d->pad_w, d->dil_h, d->dil_w);
    long eh = (long)d->h + 2L * d->pad_h - (long)d->dil_h * (d->kh - 1) - 1;
    long ew = (long)d->w + 2L * d->pad_w - (long)d->dil_w * (d->kw - 1) - 1;
    long h_out = floor_div(eh, d->stride_h) + 1, w_out = floor_div(ew, d->stride_w) + 1;
    if (h_out < 1 || w_out < 1)
        return ct_fail(ctx, CT_ERR_SHAPE, "conv2d: input (%d, %d, %d, %d) with a %dx%d kernel, "
                       "stride %dx%d, padding %dx%d, dilation %dx%d gives output (%d, %d, %ld, %ld). "
                       "HINT: the dilated kernel (%ldx%ld) must fit in the padded input (%ldx%ld)",
                       d->n, d->c_in, d->h, d->w, d->kh, d->kw, d->stride_h, d->stride_w,
                       d->pad_h, d->pad_w, d->dil_h, d->dil_w, d->n, d->c_out, h_out, w_out,
                       (long)d->dil_h * (d->kh - 1) + 1, (long)d->dil_w * (d->kw - 1) + 1,
                       (long)d->h + 2L * d->pad_h, (long)d->w + 2L * d->pad_w);
    if (h_out > INT_MAX || w_out > INT_MAX)
        return ct_fail(ctx, CT_ERR_SHAPE, "conv2d: output %ldx%ld is too large", h_out, w_out);
    if (oh)
        *oh = (int)h_out;
    if (ow)
        *ow = (int)w_out;
    return CT_OK;
}

cl_int16 ct_conv2d_geom16(const ct_conv2d_desc *d, int oh, int ow)
{
    return (cl_int16){ { d->n, d->c_in, d->h, d->w, d->c_out, d->kh, d->kw, d->stride_h, d->stride_w,
                         d->pad_h, d->pad_w, d->dil_h, d->dil_w, oh, ow, 0 } };
}

/* Images per GEMM for a workspace of ws_elems floats: 1 (direct) unless two
 * or more images' columns and products fit; capped so that every index the
 * kernels compute fits in an int. */
static int images_per_gemm(const ct_conv2d_desc *d, size_t K, size_t P, size_t ws_elems)
{
    size_t per = (K + (size_t)d->c_out) * P;
    size_t nb = ws_elems / per;
    size_t cap = (size_t)INT_MAX / per;
    if (nb > cap)
        nb = cap;
    if (nb > (size_t)d->n)
        nb = (size_t)d->n;
    return nb >= 2 ? (int)nb : 1;
}

static int make_plan(ct_context *ctx, const char *fn, const ct_conv2d_desc *d, ct_buf ws,
                     size_t ws_elems, conv_plan *p)
{
    int st = ct_conv2d_out_shape(ctx, d, &p->oh, &p->ow);
    if (st)
        return st;
    p->K = (size_t)d->c_in * d->kh * d->kw;
    p->P = (size_t)p->oh * p->ow;
    p->in_img = (size_t)d->c_in * d->h * d->w;
    p->out_img = (size_t)d->c_out * p->P;
    /* the kernels index with int: every tensor and one image's columns must fit */
    if (p->in_img * d->n > INT_MAX || p->out_img * d->n > INT_MAX || p->K * p->P > INT_MAX ||
        (p->K + d->c_out) * p->P > INT_MAX || (size_t)d->c_out * p->K > INT_MAX)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: input (%d, %d, %d, %d) -> output (%d, %d, %d, %d) "
                       "has more than 2^31 - 1 elements in a tensor or an image's columns. "
                       "HINT: split the batch", fn, d->n, d->c_in, d->h, d->w, d->n, d->c_out,
                       p->oh, p->ow);
    if (!ws.mem || ws_elems < p->K * p->P)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "%s: the workspace (%zu floats%s) is smaller than "
                       "one image's columns, %zu x %zu = %zu floats. HINT: size it with "
                       "ct_conv2d_workspace() (%zu floats for this layer)", fn, ws_elems,
                       ws.mem ? "" : ", NULL buffer", p->K, p->P, p->K * p->P,
                       ct_conv2d_workspace(d));
    p->nb = images_per_gemm(d, p->K, p->P, ws_elems);
    p->identity = d->kh == 1 && d->kw == 1 && d->stride_h == 1 && d->stride_w == 1 &&
                  d->pad_h == 0 && d->pad_w == 0;
    return CT_OK;
}

static size_t workspace_within(const ct_conv2d_desc *d, size_t target)
{
    int oh = 0, ow = 0;
    if (!d || ct_conv2d_out_shape(NULL, d, &oh, &ow))
        return 0;
    size_t K = (size_t)d->c_in * d->kh * d->kw, P = (size_t)oh * ow;
    int nb = images_per_gemm(d, K, P, target);
    return nb > 1 ? (size_t)nb * (K + (size_t)d->c_out) * P : K * P;
}

size_t ct_conv2d_workspace(const ct_conv2d_desc *d)
{
    return workspace_within(d, CT_CONV_WS_TARGET);
}

size_t ct_conv2d_workspace_for(const ct_context *ctx, const ct_conv2d_desc *d)
{
    size_t target = CT_CONV_WS_TARGET;
    if (ctx && ((ct_conv2d_igemm_ok(ctx, d) && ct_conv2d_igemm_dx_ok(ctx, d)) || ct_conv2d_lane_ok(ctx, d)))
        return workspace_within(d, 0); /* the implicit GEMMs and the direct kernels use none: the
                                          least allowed */
    if (ctx && ctx->cls.kernels == CT_KERNELS_GPU) {
        uint64_t mem = ctx->dev.global_mem_bytes / 32, alloc = ctx->dev.max_alloc_bytes;
        uint64_t t = (uint64_t)CT_CONV_WS_TARGET_GPU * sizeof(float);
        t = mem < t ? mem : t;
        t = alloc < t ? alloc : t;
        if (t / sizeof(float) > target)
            target = (size_t)(t / sizeof(float));
    }
    return workspace_within(d, target);
}

/* im2col (dir 0) or col2im (dir 1) of `cnt` images between img and col.
 * The CPU class gets the per-plane kernels (heavy work-items, in work-groups
 * of one so the cores share them evenly); the GPU class gets the
 * per-element ones, in work-groups of up to 256 along the contiguous index
 * (im2col: a column-matrix row; col2im: the NCHW images). */
static int columns(ct_context *ctx, const ct_conv2d_desc *d, const conv_plan *p, int dir,
                   ct_buf img, ct_buf col, int cnt)
{
    cl_int g[14] = { cnt, d->c_in, d->h, d->w, d->kh, d->kw, d->stride_h, d->stride_w,
                     d->pad_h, d->pad_w, d->dil_h, d->dil_w, p->oh, p->ow };
    size_t img_n = (size_t)cnt * p->in_img, ncols = (size_t)cnt * p->P, col_n = p->K * ncols;
    ct_buf dst = dir == 0 ? col : img, src = dir == 0 ? img : col;
    const char *k;
    size_t gl[2], lc[2] = { 1, 1 };
    unsigned dims = 1;
    int st;
    if (ctx->cls.row_kernels) {
        /* im2col: input planes times kernel rows; col2im: input planes */
        gl[0] = (size_t)cnt * (size_t)d->c_in * (size_t)(dir == 0 ? d->kh : 1);
        k = dir == 0 ? "conv_im2col_plane_f32" : "conv_col2im_plane_f32";
    } else {
        /* one work-item per element: whole rows (ox or ix) along dimension
         * 0, the rows of the column matrix (k, i, oy) or of dx (i, ci, iy)
         * along 1, 256 work-items a group where the rows allow */
        size_t wd = (size_t)(dir == 0 ? p->ow : d->w);
        gl[0] = wd;
        gl[1] = dir == 0 ? p->K * (size_t)cnt * (size_t)p->oh : (size_t)cnt * d->c_in * d->h;
        dims = 2;
        k = dir == 0 ? "conv_im2col_f32" : "conv_col2im_f32";
        if ((st = ct_row_range(ctx, CT_PROG_conv, k, wd, gl[1], NULL, lc)))
            return st;
    }
    ct_launch_bytes(ctx, (dir == 0 ? img_n : col_n) * sizeof(float),
                    (dir == 0 ? col_n : img_n) * sizeof(float));
    ct_karg args[2 * 2 + 14 + 4] = { CT_BUF(dst), CT_BUF(src) };
    size_t na = 4;
    for (int i = 0; i < 14; i++)
        args[na++] = CT_ARG(g[i]);
    /* the per-element kernels divide by multiplies: im2col its row (k, i,
     * oy), col2im its row (i, ci, iy) and the strides */
    const int by[2][4] = { { p->oh, cnt, d->kh * d->kw, d->kw }, { d->h, d->c_in, d->stride_h, d->stride_w } };
    cl_uint2 dv[4];
    for (int i = 0; dims == 2 && i < 4; i++) {
        dv[i] = ct_fastdiv((uint32_t)by[dir][i]);
        args[na++] = CT_ARG(dv[i]);
    }
    return ct_run(ctx, CT_PROG_conv, k, dims, gl, lc, na, args);
}

int ct_conv2d_im2col(ct_context *ctx, const ct_conv2d_desc *d, ct_buf col, size_t col_elems, ct_buf x,
                     int cnt)
{
    conv_plan p = { 0 };
    int st = make_plan(ctx, "ct_conv2d_im2col", d, col, col_elems, &p);
    if (st)
        return st;
    if (cnt < 1 || cnt > d->n || col_elems / p.K / p.P < (size_t)cnt)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_conv2d_im2col: %d images' columns (%zu x %zu each) "
                       "in %zu floats of %d images", cnt, p.K, p.P, col_elems, d->n);
    return columns(ctx, d, &p, 0, x, col, cnt);
}

/* The 2-D range of the reorder kernels: P along dimension 0, one (image,
 * channel) row of P each along 1, in work-groups of whole rows (up to 256
 * work-items, as the column kernels'). */
static int reorder_range(ct_context *ctx, const char *kernel, size_t P, size_t rows, size_t g[2],
                         size_t l[2])
{
    g[0] = P;
    g[1] = rows;
    return ct_row_range(ctx, CT_PROG_conv, kernel, P, rows, NULL, l);
}

static int gemm(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, ct_buf a,
                size_t lda, ct_buf b, size_t ldb, float beta, ct_buf c, size_t ldc)
{
    return ct_gemm(ctx, ta, tb, m, n, k, 1.0f, a.mem, a.off, lda, b.mem, b.off, ldb, beta, c.mem,
                   c.off, ldc);
}

/* With 16-bit activation storage only the implicit GEMMs (and the bias
 * pieces) read and write the activations */
static int act16_refused(ct_context *ctx, const char *who)
{
    return ct_fail(ctx, CT_ERR_UNSUPPORTED, "%s: 16-bit activation storage runs the implicit-GEMM "
                   "convolution only (GPU class, CLTRAIN_CONV not im2col); HINT: train in fp32 activations (--precision fp32)", who);
}

int ct_conv2d_forward(ct_context *ctx, const ct_conv2d_desc *d, ct_buf y, ct_buf x, ct_buf w,
                      ct_buf b, ct_buf ws, size_t ws_elems)
{
    conv_plan p;
    int st = make_plan(ctx, "ct_conv2d_forward", d, ws, ws_elems, &p);
    if (st)
        return st;
    if (!y.mem || !x.mem || !w.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_conv2d_forward: y %p, x %p, w %p",
                       (void *)y.mem, (void *)x.mem, (void *)w.mem);
    if (ctx->act16 && !ct_conv2d_igemm_ok(ctx, d))
        return act16_refused(ctx, "ct_conv2d_forward");
    if (ct_conv2d_host_ok(ctx, d))
        return ct_conv2d_host_forward(ctx, d, y, x, w, b);
    if (ct_conv2d_lane_ok(ctx, d))
        return ct_conv2d_lane_forward(ctx, d, p.oh, p.ow, y, x, w, b);
    if (ct_conv2d_igemm_ok(ctx, d))
        return ct_conv2d_igemm_forward(ctx, d, p.oh, p.ow, y, x, w, b);
    size_t co = (size_t)d->c_out;
    for (int n0 = 0; n0 < d->n; n0 += p.nb) {
        int cnt = d->n - n0 < p.nb ? d->n - n0 : p.nb;
        size_t ncols = (size_t)cnt * p.P;
        ct_buf xi = ct_buf_at(x, (size_t)n0 * p.in_img), yi = ct_buf_at(y, (size_t)n0 * p.out_img);
        ct_buf col = ws;
        if (p.nb == 1 && p.identity)
            col = xi;
        else if ((st = columns(ctx, d, &p, 0, xi, ws, cnt)))
            return st;
        if (p.nb == 1) {
            /* y_i (c_out, P) = w (c_out, K) . col (K, P) */
            if ((st = gemm(ctx, 0, 0, co, p.P, p.K, w, p.K, col, p.P, 0.0f, yi, p.P)))
                return st;
            continue;
        }
        /* t (c_out, cnt P) = w (c_out, K) . col (K, cnt P), then into NCHW with the bias */
        ct_buf t = ct_buf_at(ws, p.K * (size_t)p.nb * p.P);
        if ((st = gemm(ctx, 0, 0, co, ncols, p.K, w, p.K, col, ncols, 0.0f, t, ncols)))
            return st;
        cl_int has_b = b.mem != NULL, nb = cnt, c_out = d->c_out, P = (cl_int)p.P;
        cl_uint2 by_cout = ct_fastdiv((uint32_t)d->c_out);
        ct_buf bb = b.mem ? b : t; /* any valid buffer when there is no bias */
        size_t gl[2], lc[2];
        if ((st = reorder_range(ctx, "conv_scatter_f32", p.P, (size_t)cnt * co, gl, lc)))
            return st;
        ct_launch_bytes(ctx, (ncols * co + (b.mem ? co : 0)) * sizeof(float),
                        ncols * co * sizeof(float));
        if ((st = CT_RUN(ctx, CT_PROG_conv, "conv_scatter_f32", 2, gl, lc, CT_BUF(yi), CT_BUF(t),
                         CT_BUF(bb), CT_ARG(has_b), CT_ARG(nb), CT_ARG(c_out), CT_ARG(P), CT_ARG(by_cout))))
            return st;
    }
    if (p.nb == 1 && b.mem)
        return ct_bias_act_forward(ctx, y, y, b, d->n, d->c_out, (int)p.P, CT_ACT_NONE);
    return CT_OK;
}

int ct_conv2d_backward(ct_context *ctx, const ct_conv2d_desc *d, ct_buf dx, ct_buf dw, ct_buf db,
                       ct_buf dy, ct_buf x, ct_buf w, ct_buf ws, size_t ws_elems)
{
    conv_plan p;
    int st = make_plan(ctx, "ct_conv2d_backward", d, ws, ws_elems, &p);
    if (st)
        return st;
    if (!dy.mem || (dx.mem && !w.mem) || (dw.mem && !x.mem))
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_conv2d_backward: dy %p, w %p (needed for dx), "
                       "x %p (needed for dw)", (void *)dy.mem, (void *)w.mem, (void *)x.mem);
    if (ctx->act16 && !ct_conv2d_igemm_ok(ctx, d))
        return act16_refused(ctx, "ct_conv2d_backward");
    if (ct_conv2d_host_ok(ctx, d))
        return ct_conv2d_host_backward(ctx, d, dx, dw, db, dy, x, w);
    if (ct_conv2d_lane_ok(ctx, d)) {
        if ((st = ct_conv2d_lane_backward(ctx, d, p.oh, p.ow, dx, dw, dy, x, w)))
            return st;
        dx = dw = (ct_buf){ NULL, 0 };
    } else if (ct_conv2d_igemm_ok(ctx, d)) {
        /* a strided input gradient stays with col2im below (as an implicit
         * GEMM most of its taps would be zeros) */
        int dx_here = ct_conv2d_igemm_dx_ok(ctx, d);
        st = ct_conv2d_igemm_backward(ctx, d, p.oh, p.ow, dx_here ? dx : (ct_buf){ NULL, 0 }, dw,
                                      dy, x, w);
        if (st)
            return st;
        dw = (ct_buf){ NULL, 0 };
        if (dx_here)
            dx = (ct_buf){ NULL, 0 };
    }
    size_t co = (size_t)d->c_out;
    for (int n0 = 0; n0 < d->n && (dx.mem || dw.mem); n0 += p.nb) {
        int cnt = d->n - n0 < p.nb ? d->n - n0 : p.nb;
        size_t ncols = (size_t)cnt * p.P;
        ct_buf xi = ct_buf_at(x, (size_t)n0 * p.in_img), dyi = ct_buf_at(dy, (size_t)n0 * p.out_img);
        ct_buf dxi = ct_buf_at(dx, (size_t)n0 * p.in_img);
        int direct = p.nb == 1, ident = direct && p.identity;
        /* dy in GEMM layout t (c_out, cnt P): dy_i itself when direct */
        ct_buf t = dyi;
        if (!direct) {
            t = ct_buf_at(ws, p.K * (size_t)p.nb * p.P);
            cl_int nb = cnt, c_out = d->c_out, P = (cl_int)p.P;
            cl_uint2 by_cout = ct_fastdiv((uint32_t)d->c_out);
            size_t gl[2], lc[2];
            if ((st = reorder_range(ctx, "conv_gather_f32", p.P, (size_t)cnt * co, gl, lc)))
                return st;
            ct_launch_bytes(ctx, ncols * co * sizeof(float), ncols * co * sizeof(float));
            if ((st = CT_RUN(ctx, CT_PROG_conv, "conv_gather_f32", 2, gl, lc, CT_BUF(t),
                             CT_BUF(dyi), CT_ARG(nb), CT_ARG(c_out), CT_ARG(P), CT_ARG(by_cout))))
                return st;
        }
        if (dw.mem) {
            /* dw (c_out, K) += t (c_out, cnt P) . col^T (cnt P, K) */
            ct_buf col = ws;
            if (ident)
                col = xi;
            else if ((st = columns(ctx, d, &p, 0, xi, ws, cnt)))
                return st;
            if ((st = gemm(ctx, 0, 1, co, p.K, ncols, t, ncols, col, ncols, 1.0f, dw, p.K)))
                return st;
        }
        if (dx.mem) {
            /* dcol (K, cnt P) = w^T (K, c_out) . t (c_out, cnt P), then summed into dx */
            if ((st = gemm(ctx, 1, 0, p.K, ncols, co, w, p.K, t, ncols, 0.0f, ident ? dxi : ws,
                           ncols)))
                return st;
            if (!ident && (st = columns(ctx, d, &p, 1, dxi, ws, cnt)))
                return st;
        }
    }
    if (db.mem)
        return ct_bias_backward(ctx, db, dy, d->n, d->c_out, (int)p.P);
    return CT_OK;
}
