/*
 * gconv.c - grouped convolution launchers (cl_kernels/gconv.cl): the
 * forward and the input gradient as 2-D ranges of whole rows, the weight
 * gradient as a two-stage reduction whose slices the shape alone decides
 * (ct_slices), so the bits are the same every run on a device.
 */
#include "ops/gconv.h"

#include "host/gconv_host.h"
#include "ops/dense.h"

#define GC_TAPS 16          /* CT_GC_TAPS in the kernels: taps per stage-one work-group */
#define GC_GROUPS 1024      /* stage-one work-groups wanted: a 130-unit device's worth */
#define GC_MIN_SLICE 1024   /* positions per slice, at least */
#define GC_MAX_WG 256

/* The stage-one sums, kept by the context (the layer plans no workspace) */
static const ct_ext_kind partials_kind = { "grouped convolution partial sums", ct_scratch_release };

typedef struct gc_geom {
    int oh, ow;
    cl_int g[12]; /* h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw: the kernels' last arguments */
} gc_geom;

int ct_gconv2d_out_shape(ct_context *ctx, const ct_conv2d_desc *d, int groups, int *oh, int *ow)
{
    int st = ct_conv2d_out_shape(ctx, d, oh, ow);
    if (st)
        return st;
    if (groups < 1 || d->c_in % groups || d->c_out % groups)
        return ct_fail(ctx, CT_ERR_SHAPE, "conv2d: %d groups do not divide %d input and %d output channels: "
                       "HINT: groups must divide both", groups, d->c_in, d->c_out);
    uint64_t in = (uint64_t)d->n * (uint64_t)d->c_in * (uint64_t)d->h * (uint64_t)d->w;
    uint64_t out = (uint64_t)d->n * (uint64_t)d->c_out * (uint64_t)*oh * (uint64_t)*ow;
    uint64_t wn = (uint64_t)d->c_out * (uint64_t)(d->c_in / groups) * (uint64_t)d->kh * (uint64_t)d->kw;
    if (in > UINT32_MAX || out > UINT32_MAX || wn > UINT32_MAX)
        return ct_fail(ctx, CT_ERR_SHAPE, "conv2d: input (%d, %d, %d, %d) or output (%d, %d, %d, %d) has 2^32 "
                       "elements or more: HINT: split the batch", d->n, d->c_in, d->h, d->w, d->n, d->c_out,
                       *oh, *ow);
    return CT_OK;
}

static int geom(ct_context *ctx, const ct_conv2d_desc *d, int groups, gc_geom *g)
{
    int st = ct_gconv2d_out_shape(ctx, d, groups, &g->oh, &g->ow);
    cl_int v[12] = { d->h, d->w, g->oh, g->ow, d->kh, d->kw, d->stride_h, d->stride_w,
                     d->pad_h, d->pad_w, d->dil_h, d->dil_w };
    for (int i = 0; i < 12; i++)
        g->g[i] = v[i];
    return st;
}

#define GC_GEOM(q)                                                                                          \
    CT_ARG((q).g[0]), CT_ARG((q).g[1]), CT_ARG((q).g[2]), CT_ARG((q).g[3]), CT_ARG((q).g[4]),             \
        CT_ARG((q).g[5]), CT_ARG((q).g[6]), CT_ARG((q).g[7]), CT_ARG((q).g[8]), CT_ARG((q).g[9]),         \
        CT_ARG((q).g[10]), CT_ARG((q).g[11])

int ct_gconv2d_forward(ct_context *ctx, const ct_conv2d_desc *d, int groups, ct_buf y, ct_buf x, ct_buf w,
                       ct_buf b)
{
    gc_geom q;
    int st = geom(ctx, d, groups, &q);
    if (st)
        return st;
    if (ctx->cls.host_pool)
        return ct_gconv2d_host_forward(ctx, d, groups, q.oh, q.ow, y, x, w, b);
    cl_uint C = (cl_uint)d->c_in, K = (cl_uint)d->c_out, Cg = C / (cl_uint)groups;
    cl_uint rows = (cl_uint)d->n * K * (cl_uint)q.oh;
    cl_uint2 div_oh = ct_fastdiv((uint32_t)q.oh), div_k = ct_fastdiv(K), div_kg = ct_fastdiv(K / (cl_uint)groups);
    cl_int has_bias = b.mem != NULL;
    ct_buf bb = has_bias ? b : w; /* any valid buffer where there is no bias */
    size_t gl[2], l[2];
    if ((st = ct_row_range(ctx, CT_PROG_gconv, "gconv_fwd_f32", (size_t)q.ow, rows, gl, l)))
        return st;
    size_t nx = (size_t)d->n * C * (size_t)d->h * (size_t)d->w, ny = (size_t)rows * (size_t)q.ow;
    ct_launch_bytes(ctx, (nx + (size_t)K * Cg * (size_t)d->kh * (size_t)d->kw) * sizeof(float),
                    ny * sizeof(float));
    return CT_RUN(ctx, CT_PROG_gconv, "gconv_fwd_f32", 2, gl, l, CT_BUF(y), CT_BUF(x), CT_BUF(w), CT_BUF(bb),
                  CT_ARG(has_bias), CT_ARG(rows), CT_ARG(C), CT_ARG(K), CT_ARG(Cg), CT_ARG(div_oh), CT_ARG(div_k),
                  CT_ARG(div_kg), GC_GEOM(q));
}

static int backward_data(ct_context *ctx, const ct_conv2d_desc *d, int groups, const gc_geom *q, ct_buf dx,
                         ct_buf dy, ct_buf w)
{
    cl_uint C = (cl_uint)d->c_in, K = (cl_uint)d->c_out, Cg = C / (cl_uint)groups, Kg = K / (cl_uint)groups;
    cl_uint rows = (cl_uint)d->n * C * (cl_uint)d->h;
    cl_uint2 div_h = ct_fastdiv((uint32_t)d->h), div_c = ct_fastdiv(C), div_cg = ct_fastdiv(Cg);
    size_t gl[2], l[2];
    int st = ct_row_range(ctx, CT_PROG_gconv, "gconv_bwd_data_f32", (size_t)d->w, rows, gl, l);
    if (st)
        return st;
    size_t nx = (size_t)rows * (size_t)d->w, ny = (size_t)d->n * K * (size_t)q->oh * (size_t)q->ow;
    ct_launch_bytes(ctx, (ny + (size_t)K * Cg * (size_t)d->kh * (size_t)d->kw) * sizeof(float),
                    nx * sizeof(float));
    return CT_RUN(ctx, CT_PROG_gconv, "gconv_bwd_data_f32", 2, gl, l, CT_BUF(dx), CT_BUF(dy), CT_BUF(w),
                  CT_ARG(rows), CT_ARG(C), CT_ARG(K), CT_ARG(Cg), CT_ARG(Kg), CT_ARG(div_h), CT_ARG(div_c),
                  CT_ARG(div_cg), GC_GEOM(*q));
}

static int backward_weight(ct_context *ctx, const ct_conv2d_desc *d, int groups, const gc_geom *q, ct_buf dw,
                           ct_buf dy, ct_buf x)
{
    cl_uint C = (cl_uint)d->c_in, K = (cl_uint)d->c_out, Cg = C / (cl_uint)groups, Kg = K / (cl_uint)groups;
    size_t taps = (size_t)d->kh * (size_t)d->kw, chunks = (taps + GC_TAPS - 1) / GC_TAPS;
    size_t wrows = (size_t)K * Cg, nw = wrows * taps, ohw = (size_t)q->oh * (size_t)q->ow;
    size_t m = (size_t)d->n * ohw, S, L;
    size_t per = wrows * chunks;
    ct_slices(m, per < GC_GROUPS ? (GC_GROUPS + per - 1) / per : 1, GC_MIN_SLICE, &S, &L);
    size_t wg;
    int st = ct_kernel_pow2_wg(ctx, CT_PROG_gconv, "gconv_bwd_w_part_f32", GC_MAX_WG, L, &wg);
    if (st)
        return st;
    ct_buf part = dw;
    if (S > 1) {
        part.off = 0;
        if ((st = ct_scratch(ctx, &partials_kind, S * nw, 4096, &part.mem)))
            return st;
    }
    cl_uint mm = (cl_uint)m, LL = (cl_uint)L, NW = (cl_uint)nw;
    cl_uint2 div_ohw = ct_fastdiv((uint32_t)ohw), div_ow = ct_fastdiv((uint32_t)q->ow), div_cg = ct_fastdiv(Cg);
    size_t g[3] = { S * wg, wrows, chunks }, l[3] = { wg, 1, 1 };
    size_t nx = (size_t)d->n * C * (size_t)d->h * (size_t)d->w;
    ct_launch_bytes(ctx, (m * K + nx * Kg) * sizeof(float), (S > 1 ? S : 2) * nw * sizeof(float));
    st = CT_RUN(ctx, CT_PROG_gconv, "gconv_bwd_w_part_f32", 3, g, l, CT_BUF(part), CT_BUF(dy), CT_BUF(x),
                CT_ARG(C), CT_ARG(K), CT_ARG(Cg), CT_ARG(Kg), CT_ARG(mm), CT_ARG(LL), CT_ARG(NW), CT_ARG(div_ohw),
                CT_ARG(div_ow), CT_ARG(div_cg), GC_GEOM(*q), CT_LOCAL(GC_TAPS * wg * sizeof(cl_float)));
    if (st || S == 1)
        return st;
    cl_uint SS = (cl_uint)S;
    size_t g2[1] = { nw };
    ct_launch_bytes(ctx, (S + 1) * nw * sizeof(float), nw * sizeof(float));
    return CT_RUN(ctx, CT_PROG_gconv, "gconv_bwd_w_sum_f32", 1, g2, NULL, CT_BUF(dw), CT_BUF(part), CT_ARG(NW),
                  CT_ARG(SS));
}

int ct_gconv2d_backward(ct_context *ctx, const ct_conv2d_desc *d, int groups, ct_buf dx, ct_buf dw, ct_buf db,
                        ct_buf dy, ct_buf x, ct_buf w)
{
    gc_geom q;
    int st = geom(ctx, d, groups, &q);
    if (st)
        return st;
    if (ctx->cls.host_pool && (dx.mem || dw.mem)) {
        if ((st = ct_gconv2d_host_backward(ctx, d, groups, q.oh, q.ow, dx, dw, dy, x, w)))
            return st;
    } else {
        if (dx.mem && (st = backward_data(ctx, d, groups, &q, dx, dy, w)))
            return st;
        if (dw.mem && (st = backward_weight(ctx, d, groups, &q, dw, dy, x)))
            return st;
    }
    if (db.mem)
        st = ct_bias_backward(ctx, db, dy, d->n, d->c_out, q.oh * q.ow);
    return st;
}
