/*
 * lstm.c - LSTM launchers: ct_gemm for the matrix products, the kernels of
 * cl_kernels/lstm.cl for biases, gates and bias gradients.
 *
 * Workspace layout (floats), with S = T N H:
 *   layer k at 6 S k: gates (T, N, 4H) activations i, f, g, o; c (T, N, H);
 *                     h (T, N, H)
 *   scratch at 6 S L: dgates (T, N, 4H); dseq (T, N, H), the gradient
 *                     reaching the current layer's outputs; dc (N, H)
 */
#include "ops/lstm.h"

#include "host/lstm_host.h"

int ct_lstm_validate(ct_context *ctx, const ct_lstm_desc *d)
{
    return ct_rnn_validate(ctx, "lstm", d, 4);
}

ct_lstm_offsets ct_lstm_layer_offsets(const ct_lstm_desc *d, int layer)
{
    return ct_rnn_layer_offsets(d, 4, layer);
}

size_t ct_lstm_param_count(const ct_lstm_desc *d)
{
    return ct_lstm_layer_offsets(d, d->layers).w_ih;
}

/* Slices of rows for the GPU path's two-stage bias gradient: enough
 * work-items in all (DBIAS_ITEMS) to fill a device of 130 compute units,
 * each slice at least DBIAS_MIN_ROWS rows unless there are fewer. The
 * shape alone decides them, so the summation order is fixed. */
#define DBIAS_ITEMS 16384
#define DBIAS_MIN_ROWS 16

static void dbias_slices(size_t rows, size_t G, size_t *S, size_t *L)
{
    ct_slices(G ? rows : 0, G ? (DBIAS_ITEMS + G - 1) / G : 1, DBIAS_MIN_ROWS, S, L);
}

size_t ct_lstm_workspace_size(const ct_lstm_desc *d)
{
    size_t s = (size_t)d->T * (size_t)d->N * (size_t)d->hidden, S, L;
    dbias_slices((size_t)d->T * (size_t)d->N, 4 * (size_t)d->hidden, &S, &L);
    return (6 * s * (size_t)d->layers + 5 * s + (size_t)d->N * (size_t)d->hidden +
            S * 4 * (size_t)d->hidden) * sizeof(float);
}

/* Views of the workspace. */
typedef struct lstm_ws {
    size_t S, NH, G; /* T N H, N H, 4H */
    ct_buf base;
} lstm_ws;

static ct_buf ws_gates(const lstm_ws *w, int k, size_t t)
{
    return ct_buf_at(w->base, 6 * w->S * (size_t)k + t * w->NH * 4);
}

static ct_buf ws_c(const lstm_ws *w, int k, size_t t)
{
    return ct_buf_at(w->base, 6 * w->S * (size_t)k + 4 * w->S + t * w->NH);
}

static ct_buf ws_h(const lstm_ws *w, int k, size_t t)
{
    return ct_buf_at(w->base, 6 * w->S * (size_t)k + 5 * w->S + t * w->NH);
}

static int check_bufs(ct_context *ctx, const char *fn, const ct_lstm_desc *d, const ct_buf *bufs,
                      const char *const *names, int count)
{
    return ct_rnn_check_bufs(ctx, fn, "ct_lstm_workspace_size", bufs, names, count,
                             ct_lstm_workspace_size(d));
}

int ct_lstm_forward(ct_context *ctx, const ct_lstm_desc *d, ct_buf y, ct_buf h_n, ct_buf c_n,
                    ct_buf x, ct_buf params, ct_buf ws)
{
    int st = ct_lstm_validate(ctx, d);
    if (st)
        return st;
    const ct_buf need[] = { y, x, params, ws };
    const char *const names[] = { "y", "x", "params", "ws" };
    if ((st = check_bufs(ctx, "ct_lstm_forward", d, need, names, 4)))
        return st;
    size_t T = (size_t)d->T, N = (size_t)d->N, H = (size_t)d->hidden, G = 4 * H;
    lstm_ws w = { T * N * H, N * H, G, ws };
    cl_uint nn = (cl_uint)N, hh = (cl_uint)H, gg = (cl_uint)G, rows = (cl_uint)(T * N);
    int host = ct_lstm_host_ok(ctx);
    for (int k = 0; k < d->layers; k++) {
        ct_lstm_offsets o = ct_lstm_layer_offsets(d, k);
        size_t in = ct_rnn_layer_in(d, k);
        ct_buf X = k == 0 ? x : ws_h(&w, k - 1, 0);
        ct_buf gates = ws_gates(&w, k, 0), bih = ct_buf_at(params, o.b_ih),
               bhh = ct_buf_at(params, o.b_hh);
        size_t gb[2] = { G, T * N };
        if (!host)
            ct_launch_bytes(ctx, 2 * G * sizeof(float), T * N * G * sizeof(float));
        st = host ? ct_lstm_host_bias(ctx, gates, bih, bhh, T * N, G)
                  : CT_RUN(ctx, CT_PROG_lstm, "lstm_bias_f32", 2, gb, NULL, CT_BUF(gates), CT_BUF(bih),
                           CT_BUF(bhh), CT_ARG(rows), CT_ARG(gg));
        if (!st)
            st = ct_rnn_gemm(ctx, 0, 1, T * N, G, in, X, in, ct_buf_at(params, o.w_ih), in, 1.0f,
                             gates, G);
        for (size_t t = 0; t < T && !st; t++) {
            ct_buf gt = ws_gates(&w, k, t), cp = ws_c(&w, k, t ? t - 1 : 0), ct = ws_c(&w, k, t),
                   ht = ws_h(&w, k, t);
            if (t > 0)
                st = ct_rnn_gemm(ctx, 0, 1, N, G, H, ws_h(&w, k, t - 1), H,
                                 ct_buf_at(params, o.w_hh), H, 1.0f, gt, G);
            cl_int has_prev = t > 0;
            size_t g[2] = { H, N };
            if (!host) /* gates in place; c_prev read; c, h written */
                ct_launch_bytes(ctx, (N * G + (has_prev ? N * H : 0)) * sizeof(float),
                                (N * G + 2 * N * H) * sizeof(float));
            if (!st)
                st = host ? ct_lstm_host_fwd(ctx, gt, cp, ct, ht, N, H, has_prev)
                          : CT_RUN(ctx, CT_PROG_lstm, "lstm_fwd_f32", 2, g, NULL, CT_BUF(gt), CT_BUF(cp),
                                   CT_BUF(ct), CT_BUF(ht), CT_ARG(nn), CT_ARG(hh), CT_ARG(has_prev));
        }
        if (!st && h_n.mem)
            st = ct_copy(ctx, ct_buf_at(h_n, (size_t)k * N * H), ws_h(&w, k, T - 1), N * H);
        if (!st && c_n.mem)
            st = ct_copy(ctx, ct_buf_at(c_n, (size_t)k * N * H), ws_c(&w, k, T - 1), N * H);
        if (st)
            return st;
    }
    return ct_copy(ctx, y, ws_h(&w, d->layers - 1, 0), T * N * H);
}

int ct_lstm_backward(ct_context *ctx, const ct_lstm_desc *d, ct_buf dx, ct_buf dparams, ct_buf dy,
                     ct_buf x, ct_buf params, ct_buf ws)
{
    int st = ct_lstm_validate(ctx, d);
    if (st)
        return st;
    const ct_buf need[] = { dx, dparams, dy, x, params, ws };
    const char *const names[] = { "dx", "dparams", "dy", "x", "params", "ws" };
    if ((st = check_bufs(ctx, "ct_lstm_backward", d, need, names, 6)))
        return st;
    size_t T = (size_t)d->T, N = (size_t)d->N, H = (size_t)d->hidden, G = 4 * H;
    lstm_ws w = { T * N * H, N * H, G, ws };
    cl_uint nn = (cl_uint)N, hh = (cl_uint)H, gg = (cl_uint)G, rows = (cl_uint)(T * N);
    int host = ct_lstm_host_ok(ctx);
    ct_buf dgates = ct_buf_at(ws, 6 * w.S * (size_t)d->layers);
    ct_buf dseq = ct_buf_at(dgates, 4 * w.S), dc = ct_buf_at(dseq, w.S);
    ct_buf dbias_part = ct_buf_at(dc, N * H); /* (S, G): the bias gradient's partial sums */
    if ((st = ct_copy(ctx, dseq, dy, T * N * H)))
        return st;
    for (int k = d->layers - 1; k >= 0 && !st; k--) {
        ct_lstm_offsets o = ct_lstm_layer_offsets(d, k);
        size_t in = ct_rnn_layer_in(d, k);
        ct_buf X = k == 0 ? x : ws_h(&w, k - 1, 0);
        st = ct_fill(ctx, dc, N * H, 0.0f);
        for (size_t t = T; t-- > 0 && !st;) {
            ct_buf dgt = ct_buf_at(dgates, t * N * G), gt = ws_gates(&w, k, t),
                   ct = ws_c(&w, k, t), cp = ws_c(&w, k, t ? t - 1 : 0),
                   dht = ct_buf_at(dseq, t * N * H);
            cl_int has_prev = t > 0;
            size_t g[2] = { H, N };
            if (!host) /* gates, c, c_prev, dh, dc read; dgates and dc written */
                ct_launch_bytes(ctx, (N * G + (3 + (has_prev ? 1 : 0)) * N * H) * sizeof(float),
                                (N * G + N * H) * sizeof(float));
            st = host ? ct_lstm_host_bwd(ctx, dgt, gt, ct, cp, dht, dc, N, H, has_prev)
                      : CT_RUN(ctx, CT_PROG_lstm, "lstm_bwd_f32", 2, g, NULL, CT_BUF(dgt), CT_BUF(gt),
                               CT_BUF(ct), CT_BUF(cp), CT_BUF(dht), CT_BUF(dc), CT_ARG(nn), CT_ARG(hh),
                               CT_ARG(has_prev));
            /* dh_{t-1} += dgates_t W_hh, onto the gradient from above */
            if (!st && t > 0)
                st = ct_rnn_gemm(ctx, 0, 0, N, H, G, dgt, G, ct_buf_at(params, o.w_hh), H, 1.0f,
                                 ct_buf_at(dseq, (t - 1) * N * H), H);
        }
        /* dW_hh += sum_t dgates_tᵀ h_{t-1}: steps 1..T-1 are contiguous rows,
         * so one GEMM with k = (T-1) N does it */
        if (!st && T > 1)
            st = ct_rnn_gemm(ctx, 1, 0, G, H, (T - 1) * N, ct_buf_at(dgates, N * G), G,
                             ws_h(&w, k, 0), H, 1.0f, ct_buf_at(dparams, o.w_hh), H);
        if (!st)
            st = ct_rnn_gemm(ctx, 1, 0, G, in, T * N, dgates, G, X, in, 1.0f,
                             ct_buf_at(dparams, o.w_ih), in);
        /* the input gradient: dx for layer 0, else the gradient reaching the
         * outputs of layer k - 1 (dseq is free again) */
        if (!st)
            st = ct_rnn_gemm(ctx, 0, 0, T * N, in, G, dgates, G, ct_buf_at(params, o.w_ih), in,
                             0.0f, k == 0 ? dx : dseq, in);
        if (!st) {
            ct_buf dbih = ct_buf_at(dparams, o.b_ih), dbhh = ct_buf_at(dparams, o.b_hh);
            if (host) {
                st = ct_lstm_host_dbias(ctx, dbih, dbhh, dgates, T * N, G);
            } else {
                size_t S, L, lc;
                dbias_slices(T * N, G, &S, &L);
                cl_uint ns = (cl_uint)S, nl = (cl_uint)L;
                st = ct_kernel_pow2_wg(ctx, CT_PROG_lstm, "lstm_dbias_partial_f32", 64, G, &lc);
                size_t g1[2] = { G, S }, l1[2] = { lc, 1 }, g2[1] = { G };
                if (!st)
                    ct_launch_bytes(ctx, T * N * G * sizeof(float), S * G * sizeof(float));
                if (!st)
                    st = CT_RUN(ctx, CT_PROG_lstm, "lstm_dbias_partial_f32", 2, g1, l1,
                                CT_BUF(dbias_part), CT_BUF(dgates), CT_ARG(rows), CT_ARG(gg),
                                CT_ARG(ns), CT_ARG(nl));
                if (!st)
                    ct_launch_bytes(ctx, (S * G + 2 * G) * sizeof(float), 2 * G * sizeof(float));
                if (!st)
                    st = CT_RUN(ctx, CT_PROG_lstm, "lstm_dbias_final_f32", 1, g2, NULL, CT_BUF(dbih),
                                CT_BUF(dbhh), CT_BUF(dbias_part), CT_ARG(gg), CT_ARG(ns));
            }
        }
    }
    return st;
}
