/*
 * gru.c - GRU launchers: ct_gemm for the matrix products, the step kernels
 * of cl_kernels/gru.cl (or their host twins, host/gru_host.c, where the
 * CPU class runs host ops), ct_bias_backward for the bias gradients.
 *
 * Workspace layout (floats), with S = T N H:
 *   layer k at 5 S k: gates (T, N, 3H) activations r, z, n; ghn (T, N, H),
 *                     W_hn h_{t-1} + b_hn; h (T, N, H)
 *   scratch at 5 S L: forward: gh (N, 3H), one step's h_{t-1} W_hhᵀ;
 *                     backward: dgi (T, N, 3H), dgh (T, N, 3H), dseq
 *                     (T, N, H), the gradient reaching the current layer's
 *                     outputs
 */
#include "ops/gru.h"

#include "host/gru_host.h"
#include "ops/dense.h"

#define G3 3 /* gate blocks */

int ct_gru_validate(ct_context *ctx, const ct_gru_desc *d)
{
    return ct_rnn_validate(ctx, "gru", d, G3);
}

ct_gru_offsets ct_gru_layer_offsets(const ct_gru_desc *d, int layer)
{
    return ct_rnn_layer_offsets(d, G3, layer);
}

size_t ct_gru_param_count(const ct_gru_desc *d)
{
    return ct_gru_layer_offsets(d, d->layers).w_ih;
}

size_t ct_gru_workspace_size(const ct_gru_desc *d)
{
    size_t s = (size_t)d->T * (size_t)d->N * (size_t)d->hidden;
    return (5 * s * (size_t)d->layers + 7 * s) * sizeof(float);
}

/* Views of the workspace. */
typedef struct gru_ws {
    size_t S, NH; /* T N H, N H */
    ct_buf base;
} gru_ws;

static ct_buf ws_gates(const gru_ws *w, int k, size_t t)
{
    return ct_buf_at(w->base, 5 * w->S * (size_t)k + t * w->NH * G3);
}

static ct_buf ws_ghn(const gru_ws *w, int k, size_t t)
{
    return ct_buf_at(w->base, 5 * w->S * (size_t)k + 3 * w->S + t * w->NH);
}

static ct_buf ws_h(const gru_ws *w, int k, size_t t)
{
    return ct_buf_at(w->base, 5 * w->S * (size_t)k + 4 * w->S + t * w->NH);
}

static int check_bufs(ct_context *ctx, const char *fn, const ct_gru_desc *d, const ct_buf *bufs,
                      const char *const *names, int count)
{
    int st = ct_gru_validate(ctx, d);
    return st ? st
              : ct_rnn_check_bufs(ctx, fn, "ct_gru_workspace_size", bufs, names, count,
                                  ct_gru_workspace_size(d));
}

int ct_gru_forward(ct_context *ctx, const ct_gru_desc *d, ct_buf y, ct_buf h_n, ct_buf x,
                   ct_buf params, ct_buf ws)
{
    const ct_buf need[] = { y, x, params, ws };
    const char *const names[] = { "y", "x", "params", "ws" };
    int st = check_bufs(ctx, "ct_gru_forward", d, need, names, 4);
    if (st)
        return st;
    size_t T = (size_t)d->T, N = (size_t)d->N, H = (size_t)d->hidden, G = G3 * H;
    gru_ws w = { T * N * H, N * H, ws };
    ct_buf gh = ct_buf_at(ws, 5 * w.S * (size_t)d->layers);
    cl_uint nn = (cl_uint)N, hh = (cl_uint)H;
    int host = ct_gru_host_ok(ctx);
    for (int k = 0; k < d->layers && !st; k++) {
        ct_gru_offsets o = ct_gru_layer_offsets(d, k);
        size_t in = ct_rnn_layer_in(d, k);
        ct_buf X = k == 0 ? x : ws_h(&w, k - 1, 0), bih = ct_buf_at(params, o.b_ih),
               bhh = ct_buf_at(params, o.b_hh);
        /* x W_ihᵀ for all steps; the step kernel adds the biases */
        st = ct_rnn_gemm(ctx, 0, 1, T * N, G, in, X, in, ct_buf_at(params, o.w_ih), in, 0.0f,
                         ws_gates(&w, k, 0), G);
        for (size_t t = 0; t < T && !st; t++) {
            ct_buf hp = ws_h(&w, k, t ? t - 1 : 0), gates = ws_gates(&w, k, t),
                   ghn = ws_ghn(&w, k, t), ht = ws_h(&w, k, t);
            cl_int has_prev = t > 0;
            if (has_prev)
                st = ct_rnn_gemm(ctx, 0, 1, N, G, H, hp, H, ct_buf_at(params, o.w_hh), H, 0.0f, gh, G);
            size_t g[2] = { H, N };
            /* gates in place; gh, h_prev read after the first step; both
             * biases read; ghn and h written */
            if (!host)
                ct_launch_bytes(ctx, (N * G + (has_prev ? N * G + N * H : 0) + 2 * G) * sizeof(float),
                                (N * G + 2 * N * H) * sizeof(float));
            if (!st)
                st = host ? ct_gru_host_fwd(ctx, gates, gh, bih, bhh, hp, ghn, ht, N, H, has_prev)
                          : CT_RUN(ctx, CT_PROG_gru, "gru_fwd_f32", 2, g, NULL, CT_BUF(gates), CT_BUF(gh),
                                   CT_BUF(bih), CT_BUF(bhh), CT_BUF(hp), CT_BUF(ghn), CT_BUF(ht),
                                   CT_ARG(nn), CT_ARG(hh), CT_ARG(has_prev));
        }
        if (!st && h_n.mem)
            st = ct_copy(ctx, ct_buf_at(h_n, (size_t)k * N * H), ws_h(&w, k, T - 1), N * H);
    }
    return st ? st : ct_copy(ctx, y, ws_h(&w, d->layers - 1, 0), T * N * H);
}

int ct_gru_backward(ct_context *ctx, const ct_gru_desc *d, ct_buf dx, ct_buf dparams, ct_buf dy,
                    ct_buf x, ct_buf params, ct_buf ws)
{
    const ct_buf need[] = { dx, dparams, dy, x, params, ws };
    const char *const names[] = { "dx", "dparams", "dy", "x", "params", "ws" };
    int st = check_bufs(ctx, "ct_gru_backward", d, need, names, 6);
    if (st)
        return st;
    size_t T = (size_t)d->T, N = (size_t)d->N, H = (size_t)d->hidden, G = G3 * H;
    gru_ws w = { T * N * H, N * H, ws };
    cl_uint nn = (cl_uint)N, hh = (cl_uint)H;
    int host = ct_gru_host_ok(ctx);
    ct_buf dgi = ct_buf_at(ws, 5 * w.S * (size_t)d->layers);
    ct_buf dgh = ct_buf_at(dgi, G3 * w.S), dseq = ct_buf_at(dgh, G3 * w.S);
    if ((st = ct_copy(ctx, dseq, dy, T * N * H)))
        return st;
    for (int k = d->layers - 1; k >= 0 && !st; k--) {
        ct_gru_offsets o = ct_gru_layer_offsets(d, k);
        size_t in = ct_rnn_layer_in(d, k);
        ct_buf X = k == 0 ? x : ws_h(&w, k - 1, 0);
        for (size_t t = T; t-- > 0 && !st;) {
            ct_buf dgit = ct_buf_at(dgi, t * N * G), dght = ct_buf_at(dgh, t * N * G),
                   gates = ws_gates(&w, k, t), ghn = ws_ghn(&w, k, t),
                   hp = ws_h(&w, k, t ? t - 1 : 0), dh = ct_buf_at(dseq, t * N * H),
                   dprev = ct_buf_at(dseq, (t ? t - 1 : 0) * N * H);
            cl_int has_prev = t > 0;
            size_t g[2] = { H, N };
            /* gates, ghn, dh read, h_prev and dh_prev too after the first
             * step; dgi, dgh and dh_prev written */
            if (!host)
                ct_launch_bytes(ctx, (N * G + 2 * N * H + (has_prev ? 2 * N * H : 0)) * sizeof(float),
                                (2 * N * G + (has_prev ? N * H : 0)) * sizeof(float));
            st = host ? ct_gru_host_bwd(ctx, dgit, dght, gates, ghn, hp, dh, dprev, N, H, has_prev)
                      : CT_RUN(ctx, CT_PROG_gru, "gru_bwd_f32", 2, g, NULL, CT_BUF(dgit), CT_BUF(dght),
                               CT_BUF(gates), CT_BUF(ghn), CT_BUF(hp), CT_BUF(dh), CT_BUF(dprev),
                               CT_ARG(nn), CT_ARG(hh), CT_ARG(has_prev));
            /* dh_{t-1} += dgh_t W_hh, onto the gradient from above and dh_t z */
            if (!st && has_prev)
                st = ct_rnn_gemm(ctx, 0, 0, N, H, G, dght, G, ct_buf_at(params, o.w_hh), H, 1.0f,
                                 dprev, H);
        }
        /* dW_hh += sum_t dgh_tᵀ h_{t-1}: steps 1..T-1 are contiguous rows,
         * so one GEMM with k = (T-1) N does it */
        if (!st && T > 1)
            st = ct_rnn_gemm(ctx, 1, 0, G, H, (T - 1) * N, ct_buf_at(dgh, N * G), G, ws_h(&w, k, 0),
                             H, 1.0f, ct_buf_at(dparams, o.w_hh), H);
        if (!st)
            st = ct_rnn_gemm(ctx, 1, 0, G, in, T * N, dgi, G, X, in, 1.0f,
                             ct_buf_at(dparams, o.w_ih), in);
        /* the input gradient: dx for layer 0, else the gradient reaching the
         * outputs of layer k - 1 (dseq is free again) */
        if (!st)
            st = ct_rnn_gemm(ctx, 0, 0, T * N, in, G, dgi, G, ct_buf_at(params, o.w_ih), in, 0.0f,
                             k == 0 ? dx : dseq, in);
        if (!st)
            st = ct_bias_backward(ctx, ct_buf_at(dparams, o.b_ih), dgi, (int)(T * N), (int)G, 1);
        if (!st)
            st = ct_bias_backward(ctx, ct_buf_at(dparams, o.b_hh), dgh, (int)(T * N), (int)G, 1);
    }
    return st;
}
