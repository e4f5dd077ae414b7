/*
 * conv_lane.c - conv2d on the GPU class as direct convolutions for
 * runtimes that run work-items as SIMD lanes (cl_kernels/conv_lane.cl):
 * one launch for the forward (bias included), one for the input gradient,
 * one for the weight gradient plus a fixed-order sum of its slices where
 * its blocks alone would leave the device's threads idle.
 *
 * Work-groups of CT_LANE_WG work-items (one 256-bit vector of floats on
 * llvmpipe) spread over dimension 0 (the channel or tap blocks) first and
 * over dimension 1 where dimension 0 has fewer blocks.
 */
#include <limits.h>

#include "ops/conv_lane.h"
#include "ops/gemm_cl.h"
#include "ops/ops.h"

enum { CT_LANE_WG = 8 };

int ct_conv2d_lane_ok(const ct_context *ctx, const ct_conv2d_desc *d)
{
    (void)d;
    /* 16-bit operands: im2col and the products' 16-bit kernels (these do
     * not round) */
    if (ctx->cls.kernels != CT_KERNELS_GPU || !ctx->conv_direct || ctx->precision != CT_PRECISION_FP32)
        return 0;
    if (ctx->dev.max_alloc_bytes / sizeof(float) > (uint64_t)INT_MAX)
        return 0;
    return ctx->conv_direct == 2 || ct_gemm_cl_reg_device(ctx);
}

/* The range of b0 x b1 x b2 blocks: l0 the least power of two >= b0 up
 * to CT_LANE_WG, the rest of the group along dimension 1. */
static void lane_range(size_t b0, size_t b1, size_t b2, size_t g[3], size_t l[3])
{
    size_t l0 = 1;
    while (l0 < b0 && l0 < CT_LANE_WG)
        l0 *= 2;
    l[0] = l0, l[1] = CT_LANE_WG / l0, l[2] = 1;
    g[0] = ct_cdiv(b0, l[0]) * l[0], g[1] = ct_cdiv(b1, l[1]) * l[1], g[2] = b2;
}

/* a buffer offset as the kernels' int (ct_conv2d_lane_ok keeps buffers
 * below 2^31 floats; this guards a caller's offset all the same) */
static int int_off(ct_context *ctx, const char *what, size_t off, size_t extent, cl_int *out)
{
    if (off > (size_t)INT_MAX || extent > (size_t)INT_MAX - off)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "conv2d: %s at float offset %zu (+%zu) is past the "
                       "direct kernels' 2^31 - 1 index", what, off, extent);
    *out = (cl_int)off;
    return CT_OK;
}

int ct_conv2d_lane_forward(ct_context *ctx, const ct_conv2d_desc *d, int oh, int ow, ct_buf y,
                           ct_buf x, ct_buf w, ct_buf b)
{
    size_t P = (size_t)oh * ow, co = (size_t)d->c_out;
    size_t nx = (size_t)d->n * d->c_in * d->h * d->w, nw = co * d->c_in * d->kh * d->kw;
    cl_int xo, wo, bo = 0, has_b = b.mem != NULL;
    int st = int_off(ctx, "x", x.off, nx, &xo);
    if (!st)
        st = int_off(ctx, "w", w.off, nw, &wo);
    if (!st && b.mem)
        st = int_off(ctx, "the bias", b.off, co, &bo);
    if (st)
        return st;
    cl_int16 g = ct_conv2d_geom16(d, oh, ow);
    cl_uint2 div_ow = ct_fastdiv((uint32_t)ow);
    cl_ulong yo = y.off;
    cl_mem bm = b.mem ? b.mem : w.mem; /* any valid buffer when there is none */
    size_t gl[3], lc[3];
    lane_range(ct_cdiv(co, 4), P, ct_cdiv((size_t)d->n, 4), gl, lc);
    ct_launch_bytes(ctx, (nx + nw + (b.mem ? co : 0)) * sizeof(float),
                    (size_t)d->n * co * P * sizeof(float));
    return CT_RUN(ctx, CT_PROG_conv_lane, "conv_lane_fwd", 3, gl, lc, CT_ARG(y.mem), CT_ARG(yo),
                  CT_ARG(x.mem), CT_ARG(xo), CT_ARG(w.mem), CT_ARG(wo), CT_ARG(bm), CT_ARG(bo),
                  CT_ARG(has_b), CT_ARG(g), CT_ARG(div_ow));
}

/* dw += the weight gradient: slices of the rows (image, oy) where the
 * blocks alone would give the device fewer than 4 work-groups per compute
 * unit, each slice at least 4 rows, summed in slice order */
static int weight_grad(ct_context *ctx, const ct_conv2d_desc *d, int oh, int ow, ct_buf dw,
                       ct_buf dy, cl_int dyo, ct_buf x, cl_int xo)
{
    size_t co = (size_t)d->c_out, taps = (size_t)d->kh * d->kw, K = (size_t)d->c_in * taps;
    size_t b0 = taps * ct_cdiv((size_t)d->c_in, 4), b1 = ct_cdiv(co, 4), rows = (size_t)d->n * oh;
    size_t want = ct_cdiv(4 * (size_t)(ctx->dev.compute_units ? ctx->dev.compute_units : 1) * CT_LANE_WG,
                       b0 * b1);
    size_t s = 1, per = rows;
    ct_slices(rows, want, 4, &s, &per);
    cl_mem out = dw.mem;
    cl_ulong out_off = dw.off;
    float beta = 1.0f;
    int st;
    if (s > 1) {
        if ((st = ct_gemm_cl_workspace(ctx, s * co * K, &out)))
            return st;
        out_off = 0, beta = 0.0f;
    }
    cl_int16 g = ct_conv2d_geom16(d, oh, ow);
    cl_int rows_per = (cl_int)per;
    size_t gl[3], lc[3];
    lane_range(b0, b1, s, gl, lc);
    size_t nx = (size_t)d->n * d->c_in * d->h * d->w, ny = (size_t)d->n * co * oh * ow;
    ct_launch_bytes(ctx, (nx + ny + (s > 1 ? 0 : co * K)) * sizeof(float), s * co * K * sizeof(float));
    st = CT_RUN(ctx, CT_PROG_conv_lane, "conv_lane_dw", 3, gl, lc, CT_ARG(out), CT_ARG(out_off),
                CT_ARG(dy.mem), CT_ARG(dyo), CT_ARG(x.mem), CT_ARG(xo), CT_ARG(g), CT_ARG(rows_per),
                CT_ARG(beta));
    if (!st && s > 1)
        st = ct_gemm_cl_sum(ctx, out, s, co, K, 1.0f, 1.0f, dw.mem, dw.off, K, NULL);
    return st;
}

int ct_conv2d_lane_backward(ct_context *ctx, const ct_conv2d_desc *d, int oh, int ow, ct_buf dx,
                            ct_buf dw, ct_buf dy, ct_buf x, ct_buf w)
{
    size_t co = (size_t)d->c_out, ci = (size_t)d->c_in, K = ci * d->kh * d->kw;
    size_t nx = (size_t)d->n * ci * d->h * d->w, ny = (size_t)d->n * co * oh * ow;
    cl_int dyo, xo = 0, wo = 0;
    int st = int_off(ctx, "dy", dy.off, ny, &dyo);
    if (!st && dw.mem)
        st = int_off(ctx, "x", x.off, nx, &xo);
    if (!st && dx.mem)
        st = int_off(ctx, "w", w.off, co * K, &wo);
    if (!st && dw.mem)
        st = weight_grad(ctx, d, oh, ow, dw, dy, dyo, x, xo);
    if (st || !dx.mem)
        return st;
    cl_int16 g = ct_conv2d_geom16(d, oh, ow);
    cl_uint2 div_w = ct_fastdiv((uint32_t)d->w);
    cl_ulong dxo = dx.off;
    size_t gl[3], lc[3];
    lane_range(ct_cdiv(ci, 4), (size_t)d->h * d->w, ct_cdiv((size_t)d->n, 4), gl, lc);
    ct_launch_bytes(ctx, (ny + co * K) * sizeof(float), nx * sizeof(float));
    return CT_RUN(ctx, CT_PROG_conv_lane, "conv_lane_dx", 3, gl, lc, CT_ARG(dx.mem), CT_ARG(dxo),
                  CT_ARG(dy.mem), CT_ARG(dyo), CT_ARG(w.mem), CT_ARG(wo), CT_ARG(g), CT_ARG(div_w));
}
