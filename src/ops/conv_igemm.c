/*
 * conv_igemm.c - conv2d on the GPU class as three implicit GEMMs
 * (cl_kernels/conv_igemm.cl): the products of im2col + GEMM, their
 * operands read in place from the NCHW tensors. No column matrix, no
 * reorders: the forward is one launch (bias included), the input gradient
 * one, the weight gradient one plus split-K's fixed-order sum where its
 * c_out x K product would not fill the device. Each tensor crosses memory
 * once per product, where im2col + GEMM moved kh kw times the activation
 * through the columns twice.
 */
#include "ops/conv_igemm.h"
#include "ops/gemm_cl.h"
#include "ops/ops.h"
#include "ops/tune_use.h"

enum { MODE_FWD, MODE_DX, MODE_DW };

static const char *const kernel_names[3][3] = { /* by mode, then tiles */
    { "conv_igemm_big_fwd", "conv_igemm_small_fwd", "conv_igemm_narrow_fwd" },
    { "conv_igemm_big_dx", "conv_igemm_small_dx", "conv_igemm_narrow_dx" },
    { "conv_igemm_big_dw", "conv_igemm_small_dw", "conv_igemm_narrow_dw" },
};

int ct_conv2d_igemm_ok(const ct_context *ctx, const ct_conv2d_desc *d)
{
    (void)d;
    return ctx->cls.kernels == CT_KERNELS_GPU && ctx->conv_direct && ct_gemm_cl_device_ok(ctx);
}

int ct_conv2d_igemm_dx_ok(const ct_context *ctx, const ct_conv2d_desc *d)
{
    /* strided: col2im, unless activations are stored in 16 bits (which
     * col2im does not read): then the product, most of its taps zeros */
    return (d->stride_h == 1 && d->stride_w == 1) || ctx->act16;
}

/* One product: C (m, n) over k, mode as cl_kernels/conv_igemm.cl's CT_CONV_*.
 * The weights' product accumulates (beta 1) and splits along k where its
 * tiles would leave the device idle. rd, wr: the bytes it reads and writes
 * (the weights' gradient's read for beta 1 and split-K's slices aside). */
static int product(ct_context *ctx, int mode, const ct_conv2d_desc *d, int oh, int ow, size_t m,
                   size_t n, size_t k, ct_buf c, ct_buf a, ct_buf b, ct_buf bias, size_t rd,
                   size_t wr)
{
    /* small tiles (16 rows) up to 32 rows of C, big ones above; narrow
     * ones in place of small ones where C's columns would leave over a
     * fifth of the small tiles empty (a weight gradient of 9 or 144 taps) */
    ct_gemm_cl_tiles t = m <= 32 ? CT_GEMM_CL_SMALL : CT_GEMM_CL_BIG;
    /* or the tiles (and k-slices) the tuner forces, or the tuned table's */
    int tiles = -1;
    size_t splits = 0;
    ct_tune_choice ch = ct_tune_choose(ctx, mode + 1, 0, 0, m, n, k, CT_PICK_OWN, CT_PICK_OWN);
    if (ch.pick == CT_PICK_OWN)
        tiles = ch.tiles, splits = ch.splits;
    if (tiles == CT_GEMM_CL_BIG || tiles == CT_GEMM_CL_SMALL)
        t = (ct_gemm_cl_tiles)tiles;
    ct_gemm_cl_tile ti, tn;
    ct_kernel_entry *en;
    int st = ct_gemm_cl_launchable(ctx, CT_PROG_conv_igemm, kernel_names[mode], &t, &ti);
    if (!st)
        st = ct_gemm_cl_kernel(ctx, CT_PROG_conv_igemm, kernel_names[mode][CT_GEMM_CL_NARROW],
                               CT_GEMM_CL_NARROW, &tn, &en);
    if (st)
        return st;
    int narrow = tiles == CT_GEMM_CL_NARROW ||
                 (tiles < 0 && m <= 32 && 4 * ct_cdiv(n, ti.tn) * ti.tn > 5 * ct_cdiv(n, tn.tn) * tn.tn);
    if (narrow && en->max_wg >= tn.wm * tn.wn)
        t = CT_GEMM_CL_NARROW, ti = tn;
    size_t s = mode != MODE_DW ? 1 : splits ? splits : ct_gemm_cl_slices(ctx, t, m, n, k);
    size_t kc = ct_gemm_cl_slice_depth(k, ti.tk, &s);
    cl_mem out = c.mem;
    cl_ulong out_off = c.off, stride = 0;
    float beta = mode == MODE_DW ? 1.0f : 0.0f;
    if (s > 1) {
        if ((st = ct_gemm_cl_workspace(ctx, s * m * n, &out)))
            return st;
        out_off = 0, stride = (cl_ulong)m * n, beta = 0.0f;
    }
    cl_int16 g = ct_conv2d_geom16(d, oh, ow);
    cl_mem bm = bias.mem ? bias.mem : c.mem; /* any valid buffer when there is none */
    cl_ulong ao = a.off, bo = b.off, bias_off = bias.mem ? bias.off : 0;
    cl_int has_bias = bias.mem != NULL;
    cl_uint ldc = (cl_uint)n, mm = (cl_uint)m, nn = (cl_uint)n, kk = (cl_uint)k, kcc = (cl_uint)kc;
    size_t global[3] = { ct_cdiv(n, ti.tn) * ti.wn, ct_cdiv(m, ti.tm) * ti.wm, s };
    size_t local[3] = { ti.wn, ti.wm, 1 };
    /* one record for the product (a GEMM in the launch list), not one per
     * kernel it launches */
    ct_launch_record(ctx, &(ct_launch_rec){ .m = m, .n = n, .k = k, .batch = 1, .k_splits = s, .conv = mode + 1,
                                            .tiles = (int)t,
                                            .conv_geom = { d->n, d->c_in, d->h, d->w, d->c_out, d->kh, d->kw,
                                                           d->stride_h, d->stride_w, d->pad_h, d->pad_w,
                                                           d->dil_h, d->dil_w, oh, ow },
                                            .rd = (int64_t)(rd + (mode == MODE_DW ? m * n * sizeof(float) : 0)),
                                            .wr = (int64_t)wr });
    ctx->lrec.mute++;
    ct_launch_bytes(ctx, rd + (beta != 0.0f ? m * n * sizeof(float) : 0),
                    s > 1 ? s * m * n * sizeof(float) : wr);
    st = CT_RUN(ctx, ct_program_for(ctx, CT_PROG_conv_igemm), kernel_names[mode][t], 3, global, local, CT_ARG(a.mem),
                CT_ARG(ao), CT_ARG(b.mem), CT_ARG(bo), CT_ARG(out), CT_ARG(out_off),
                CT_ARG(stride), CT_ARG(ldc), CT_ARG(mm), CT_ARG(nn), CT_ARG(kk), CT_ARG(kcc),
                CT_ARG(beta), CT_ARG(bm), CT_ARG(bias_off), CT_ARG(has_bias), CT_ARG(g));
    if (!st && s > 1)
        st = ct_gemm_cl_sum(ctx, out, s, m, n, 1.0f, 1.0f, c.mem, c.off, n, NULL);
    ctx->lrec.mute--;
    return st;
}

int ct_conv2d_igemm_forward(ct_context *ctx, const ct_conv2d_desc *d, int oh, int ow, ct_buf y,
                            ct_buf x, ct_buf w, ct_buf b)
{
    size_t K = (size_t)d->c_in * d->kh * d->kw, nP = (size_t)d->n * oh * ow;
    size_t nx = (size_t)d->n * d->c_in * d->h * d->w, co = (size_t)d->c_out, es = ct_act_size(ctx);
    return product(ctx, MODE_FWD, d, oh, ow, co, nP, K, y, w, x, b,
                   nx * es + (co * K + (b.mem ? co : 0)) * sizeof(float), co * nP * es);
}

int ct_conv2d_igemm_backward(ct_context *ctx, const ct_conv2d_desc *d, int oh, int ow, ct_buf dx,
                             ct_buf dw, ct_buf dy, ct_buf x, ct_buf w)
{
    size_t khw = (size_t)d->kh * d->kw, K = (size_t)d->c_in * khw, nP = (size_t)d->n * oh * ow;
    size_t nx = (size_t)d->n * d->c_in * d->h * d->w, co = (size_t)d->c_out, ny = co * nP;
    size_t es = ct_act_size(ctx), fs = sizeof(float);
    int st = CT_OK;
    if (dw.mem)
        st = product(ctx, MODE_DW, d, oh, ow, co, K, nP, dw, dy, x, (ct_buf){ NULL, 0 },
                     (ny + nx) * es, co * K * fs);
    if (!st && dx.mem)
        st = product(ctx, MODE_DX, d, oh, ow, (size_t)d->c_in, nx / d->c_in, co * khw, dx, w, dy,
                     (ct_buf){ NULL, 0 }, ny * es + co * K * fs, nx * es);
    return st;
}
