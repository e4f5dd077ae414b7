/*
 * attention.c - multi-head self-attention launchers: the projections as
 * dense layers, the per-head products through ct_gemm on strided slices,
 * the masked softmax in cl_kernels/attention.cl.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/attention.h"

#include "host/attn_host.h"
#include "ops/dense.h"
#include "ops/gemm_cl.h"

size_t ct_attention_params(const ct_attention_desc *d)
{
    return 4 * d->E * d->E + 4 * d->E;
}

size_t ct_attention_saved(const ct_attention_desc *d)
{
    return 4 * d->T * d->N * d->E + d->N * d->H * d->T * d->T;
}

size_t ct_attention_work(const ct_attention_desc *d)
{
    return ct_attention_saved(d);
}

/* The dense launchers take int rows and features with (rows, 3E) below
 * 2^32; the softmax kernels a uint count of rows N H T. */
static int check_desc(ct_context *ctx, const char *fn, const ct_attention_desc *d)
{
    if (!d || !d->T || !d->N || !d->E || !d->H)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: (T, N, E, heads) = (%zu, %zu, %zu, %zu) has an empty "
                       "dimension", fn, d ? d->T : 0, d ? d->N : 0, d ? d->E : 0, d ? d->H : 0);
    if (d->E % d->H)
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: embedding %zu does not divide into %zu heads. HINT: "
                       "pick heads dividing the embedding", fn, d->E, d->H);
    if (d->T > INT_MAX / d->N || 3 * d->E > INT_MAX / (d->T * d->N) ||
        d->N * d->H > UINT32_MAX / d->T || d->T > (SIZE_MAX / 4) / (d->N * d->H * d->T))
        return ct_fail(ctx, CT_ERR_SHAPE, "%s: (T, N, E, heads) = (%zu, %zu, %zu, %zu) is too large "
                       "for the kernels' indices. HINT: split the batch", fn, d->T, d->N, d->E, d->H);
    return CT_OK;
}

/* The pieces of the flat parameters (or their gradients). */
typedef struct attn_params {
    ct_buf w_in, b_in, w_out, b_out;
} attn_params;

static attn_params split_params(ct_buf w, size_t E)
{
    attn_params p = { w, w, w, w };
    p.b_in.off += 3 * E * E;
    p.w_out.off = p.b_in.off + 3 * E;
    p.b_out.off = p.w_out.off + E * E;
    return p;
}

/* The masked softmax of the (N H T, T) scores in place (bwd: its backward,
 * s holding dP, p the probabilities): a work-group per row on the GPU
 * class, a work-item per row on the CPU class (cl_kernels/attention.cl),
 * or the host pool on AVX-512 CPUs (src/host/attn_host.c). */
#define ATTN_MAX_WG 256
static int softmax(ct_context *ctx, int bwd, const ct_attention_desc *d, ct_buf s, ct_buf p)
{
    cl_uint rows = (cl_uint)(d->N * d->H * d->T), tt = (cl_uint)d->T, causal = d->causal != 0;
    /* a causal row reads its keys 0 .. i only; every row is written whole
     * (bwd also reads p over the same keys) */
    size_t es = ct_act_size(ctx); /* 16-bit storage: scores and probabilities too */
    size_t all = (size_t)rows * d->T * es;
    size_t keys = causal ? d->N * d->H * (d->T * (d->T + 1) / 2) * es : all;
    if (ct_attn_host_ok(ctx, rows, d->T))
        return bwd ? ct_attn_host_softmax_backward(ctx, s, p, rows, d->T, causal)
                   : ct_attn_host_softmax_forward(ctx, s, rows, d->T, causal);
    if (ctx->cls.row_kernels) {
        size_t g[1] = { rows };
        ct_launch_bytes(ctx, (bwd ? 2 : 1) * keys, all);
        if (!bwd)
            return CT_RUN(ctx, CT_PROG_attention, "attn_softmax_fwd_rows_f32", 1, g, NULL, CT_BUF(s),
                          CT_ARG(rows), CT_ARG(tt), CT_ARG(causal));
        return CT_RUN(ctx, CT_PROG_attention, "attn_softmax_bwd_rows_f32", 1, g, NULL, CT_BUF(s),
                      CT_BUF(p), CT_ARG(rows), CT_ARG(tt), CT_ARG(causal));
    }
    const char *name = bwd ? "attn_softmax_bwd_f32" : "attn_softmax_fwd_f32";
    const int prog = ct_program_store(ctx, CT_PROG_attention);
    size_t wg;
    int st = ct_kernel_pow2_wg(ctx, prog, name, ATTN_MAX_WG, d->T, &wg);
    if (st)
        return st;
    size_t g[1] = { (size_t)rows * wg }, l[1] = { wg };
    ct_launch_bytes(ctx, (bwd ? 2 : 1) * keys, all);
    if (!bwd)
        return CT_RUN(ctx, prog, name, 1, g, l, CT_BUF(s), CT_ARG(tt), CT_ARG(causal),
                      CT_LOCAL(wg * sizeof(cl_float)));
    return CT_RUN(ctx, prog, name, 1, g, l, CT_BUF(s), CT_BUF(p), CT_ARG(tt), CT_ARG(causal),
                  CT_LOCAL(wg * sizeof(cl_float)));
}

/* The fused kernels' work-groups (cl_kernels/attention.cl): L lanes per
 * row x QB rows, 64 work-items, or 32 where the device allows no more;
 * 0 when the fused path does not run: the CPU class,
 * CLTRAIN_ATTENTION=unfused, GPU-type devices unless CLTRAIN_ATTENTION=fused
 * (an H200 ran the gpt step in 11.3 ms fused against 9.6 ms with the
 * products: the fused kernels' per-row loops leave its cores idle), Mesa's
 * llvmpipe (ct_gemm_cl_device_ok: 1.3x slower there than the products),
 * 16-bit precision, or a head too wide for the queries' block in half the
 * local memory. */
#define FUSED_QB 8
static int fused_lanes(ct_context *ctx, const ct_attention_desc *d, size_t *L)
{
    *L = 0;
    const char *env = getenv("CLTRAIN_ATTENTION");
    int forced = env && !strcmp(env, "fused");
    /* 16-bit operands: the products (the fused kernels do not round) */
    if (ctx->cls.kernels != CT_KERNELS_GPU || (env && !strcmp(env, "unfused")) || !ct_gemm_cl_device_ok(ctx) ||
        (ctx->dev.type != CT_DEVICE_CPU && !forced) || ctx->precision != CT_PRECISION_FP32)
        return CT_OK;
    size_t D = d->E / d->H;
    if ((FUSED_QB * D + FUSED_QB * 8) * sizeof(float) > ctx->dev.local_mem_bytes / 2)
        return CT_OK;
    ct_kernel_entry *e[3];
    static const char *const names[3] = { "attn_fused_fwd_f32", "attn_fused_bwd_q_f32",
                                          "attn_fused_bwd_kv_f32" };
    size_t most = SIZE_MAX;
    for (int i = 0; i < 3; i++) {
        int st = ct_kernel_get(ctx, CT_PROG_attention, names[i], &e[i]);
        if (st)
            return st;
        most = e[i]->max_wg < most ? e[i]->max_wg : most;
    }
    *L = most >= 8 * FUSED_QB ? 8 : most >= 4 * FUSED_QB ? 4 : 0;
    return CT_OK;
}

/* The three fused passes: 0 forward, 1 the queries' side of the backward,
 * 2 the keys' side */
static int fused(ct_context *ctx, int pass, const ct_attention_desc *d, size_t L, ct_buf out,
                 ct_buf out2, ct_buf p, ct_buf dout, ct_buf qkv)
{
    size_t T = d->T, N = d->N, E = d->E, H = d->H, D = E / H, NH = N * H;
    size_t keys = d->causal ? NH * (T * (T + 1) / 2) : NH * T * T, all = NH * T * T, x = T * N * E;
    size_t g[3] = { L, FUSED_QB * ((T + FUSED_QB - 1) / FUSED_QB), NH }, l[3] = { L, FUSED_QB, 1 };
    cl_uint tt = (cl_uint)T, nn = (cl_uint)N, hh = (cl_uint)H, dd = (cl_uint)D, causal = d->causal != 0;
    float scale = (float)(1.0 / sqrt((double)D));
    size_t lmem = (FUSED_QB * D) * sizeof(cl_float), lred = FUSED_QB * L * sizeof(cl_float);
    if (pass == 0) {
        /* q, k, v once, P written and read back once; o written */
        ct_launch_bytes(ctx, (3 * x + keys) * sizeof(float), (all + x) * sizeof(float));
        return CT_RUN(ctx, CT_PROG_attention, "attn_fused_fwd_f32", 3, g, l, CT_BUF(p), CT_BUF(out),
                      CT_BUF(qkv), CT_ARG(tt), CT_ARG(nn), CT_ARG(hh), CT_ARG(dd), CT_ARG(causal),
                      CT_ARG(scale), CT_LOCAL(lmem), CT_LOCAL(lred));
    }
    if (pass == 1) {
        /* dO, k, v, P read; dS written and read back; dq written */
        ct_launch_bytes(ctx, (3 * x + 2 * keys) * sizeof(float), (all + x) * sizeof(float));
        return CT_RUN(ctx, CT_PROG_attention, "attn_fused_bwd_q_f32", 3, g, l, CT_BUF(out2), CT_BUF(out),
                      CT_BUF(p), CT_BUF(dout), CT_BUF(qkv), CT_ARG(tt), CT_ARG(nn), CT_ARG(hh),
                      CT_ARG(dd), CT_ARG(causal), CT_ARG(scale), CT_LOCAL(lmem), CT_LOCAL(lred));
    }
    /* dS, P, q, dO read; dk, dv written */
    ct_launch_bytes(ctx, (2 * keys + 2 * x) * sizeof(float), 2 * x * sizeof(float));
    return CT_RUN(ctx, CT_PROG_attention, "attn_fused_bwd_kv_f32", 3, g, l, CT_BUF(out), CT_BUF(out2),
                  CT_BUF(p), CT_BUF(dout), CT_BUF(qkv), CT_ARG(tt), CT_ARG(nn), CT_ARG(hh), CT_ARG(dd),
                  CT_ARG(causal), CT_ARG(scale));
}

/* The N*H products C_nh (m, n, ldc) = alpha op(A_nh) op(B_nh) of the heads
 * in one ct_gemm_batched2: A_nh at a + n*as_n + h*as_h, likewise B and C */
static int mm_heads(ct_context *ctx, const ct_attention_desc *d, int ta, int tb, size_t m, size_t n, size_t k,
                    float alpha, ct_buf a, size_t an, size_t ah, size_t lda, ct_buf b, size_t bn, size_t bh,
                    size_t ldb, ct_buf c, size_t cn, size_t ch, size_t ldc)
{
    size_t as[2] = { an, ah }, bs[2] = { bn, bh }, cs[2] = { cn, ch };
    /* with 16-bit storage every operand here is (q, k, v, P, dO, dS, dq ...) */
    int s16 = ctx->act16 ? CT_S16_A | CT_S16_B | CT_S16_C : 0;
    return ct_gemm_batched2_s(ctx, ta, tb, m, n, k, alpha, a.mem, a.off, lda, as, b.mem, b.off, ldb, bs, 0.0f,
                              c.mem, c.off, ldc, cs, d->N, d->H, s16);
}

int ct_attention_forward(ct_context *ctx, const ct_attention_desc *d, ct_buf y, ct_buf saved,
                         ct_buf x, ct_buf w)
{
    int st = check_desc(ctx, "ct_attention_forward", d);
    if (st)
        return st;
    if (!y.mem || !saved.mem || !x.mem || !w.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_attention_forward: y %p, saved %p, x %p, w %p",
                       (void *)y.mem, (void *)saved.mem, (void *)x.mem, (void *)w.mem);
    size_t T = d->T, N = d->N, E = d->E, H = d->H, D = E / H, TT = T * T;
    attn_params pw = split_params(w, E);
    ct_buf qkv = saved, o = ct_buf_at(saved, 3 * T * N * E), p = ct_buf_at(saved, 4 * T * N * E);
    float scale = (float)(1.0 / sqrt((double)D));
    /* qkv (T N, 3E) = x (T N, E) W_in^T + b_in; with 16-bit activation
     * storage x, y, their gradients, what the layer saves and its
     * workspace are all 16-bit (the products and softmax in float) */
    const int s16 = ctx->act16 ? CT_DENSE_X16 | CT_DENSE_Y16 : 0;
    if ((st = ct_dense_forward_s(ctx, qkv, x, pw.w_in, pw.b_in, (int)(T * N), (int)E, (int)(3 * E), CT_ACT_NONE,
                                 s16)))
        return st;
    size_t L;
    if ((st = fused_lanes(ctx, d, &L)))
        return st;
    if (L) {
        /* scores, softmax and context in one pass */
        st = fused(ctx, 0, d, L, o, o, p, o, qkv);
    } else if (/* S_nh (T, T) = q_nh k_nh^T / sqrt(D); q_nh, k_nh (T, D) with row stride 3 N E */
               !(st = mm_heads(ctx, d, 0, 1, T, T, D, scale, qkv, 3 * E, D, 3 * N * E, ct_buf_at(qkv, E),
                               3 * E, D, 3 * N * E, p, H * TT, TT, T)) &&
               !(st = softmax(ctx, 0, d, p, (ct_buf){ NULL, 0 }))) {
        /* o_nh (T, D), row stride N E = P_nh (T, T) v_nh (T, D) */
        st = mm_heads(ctx, d, 0, 0, T, D, T, 1.0f, p, H * TT, TT, T, ct_buf_at(qkv, 2 * E), 3 * E, D, 3 * N * E,
                      o, E, D, N * E);
    }
    if (st)
        return st;
    /* y (T N, E) = o W_out^T + b_out */
    return ct_dense_forward_s(ctx, y, o, pw.w_out, pw.b_out, (int)(T * N), (int)E, (int)E, CT_ACT_NONE, s16);
}

int ct_attention_backward(ct_context *ctx, const ct_attention_desc *d, ct_buf dx, ct_buf dw,
                          ct_buf dy, ct_buf x, ct_buf w, ct_buf saved, ct_buf work)
{
    int st = check_desc(ctx, "ct_attention_backward", d);
    if (st)
        return st;
    if (!dw.mem || !dy.mem || !x.mem || !w.mem || !saved.mem || !work.mem)
        return ct_fail(ctx, CT_ERR_INVALID_ARG, "ct_attention_backward: dw %p, dy %p, x %p, w %p, "
                       "saved %p, work %p", (void *)dw.mem, (void *)dy.mem, (void *)x.mem,
                       (void *)w.mem, (void *)saved.mem, (void *)work.mem);
    size_t T = d->T, N = d->N, E = d->E, H = d->H, D = E / H, TT = T * T;
    attn_params pw = split_params(w, E), pd = split_params(dw, E);
    ct_buf qkv = saved, o = ct_buf_at(saved, 3 * T * N * E), p = ct_buf_at(saved, 4 * T * N * E);
    ct_buf dout = work, dqkv = ct_buf_at(work, T * N * E), ds = ct_buf_at(work, 4 * T * N * E);
    float scale = (float)(1.0 / sqrt((double)D));
    /* do (T N, E) = dy W_out; dW_out += dy^T o; db_out += sums of dy */
    const int s16 = ctx->act16 ? CT_DENSE_X16 | CT_DENSE_Y16 : 0;
    if ((st = ct_dense_backward_s(ctx, dout, pd.w_out, pd.b_out, dy, o, pw.w_out, (int)(T * N), (int)E, (int)E,
                                  0, 0, s16)))
        return st;
    size_t L;
    if ((st = fused_lanes(ctx, d, &L)))
        return st;
    size_t ld3 = 3 * N * E;
    if (L) {
        /* dS and dq from the queries' side, then dk and dv from the keys' */
        if (!(st = fused(ctx, 1, d, L, dqkv, ds, p, dout, qkv)))
            st = fused(ctx, 2, d, L, dqkv, ds, p, dout, qkv);
    } else if (/* dP_nh (T, T) = do_nh v_nh^T; dv_nh (T, D) = P_nh^T do_nh */
               !(st = mm_heads(ctx, d, 0, 1, T, T, D, 1.0f, dout, E, D, N * E, ct_buf_at(qkv, 2 * E), 3 * E,
                               D, ld3, ds, H * TT, TT, T)) &&
               !(st = mm_heads(ctx, d, 1, 0, T, D, T, 1.0f, p, H * TT, TT, T, dout, E, D, N * E,
                               ct_buf_at(dqkv, 2 * E), 3 * E, D, ld3)) &&
               !(st = softmax(ctx, 1, d, ds, p)) &&
               /* dq_nh = dS k_nh / sqrt(D); dk_nh = dS^T q_nh / sqrt(D) */
               !(st = mm_heads(ctx, d, 0, 0, T, D, T, scale, ds, H * TT, TT, T, ct_buf_at(qkv, E), 3 * E, D,
                               ld3, dqkv, 3 * E, D, ld3))) {
        st = mm_heads(ctx, d, 1, 0, T, D, T, scale, ds, H * TT, TT, T, qkv, 3 * E, D, ld3,
                      ct_buf_at(dqkv, E), 3 * E, D, ld3);
    }
    if (st)
        return st;
    /* dx = dqkv W_in; dW_in += dqkv^T x; db_in += sums of dqkv, except for
     * the key bias: its gradient is exactly zero. It adds q_i . b_k to every
     * score of query i alike, and a softmax row does not change when all its
     * scores move together. The column sums would leave float32 rounding
     * there (about 1e-13), which Adam's first steps, g / (|g| + eps), would
     * turn into moves of up to lr in random directions, so the key bias's
     * columns are left out of the sums: it gets += 0, as the exact gradient
     * says. */
    return ct_dense_backward_s(ctx, dx, pd.w_in, pd.b_in, dqkv, x, pw.w_in, (int)(T * N), (int)E, (int)(3 * E),
                               E, E, s16);
}
