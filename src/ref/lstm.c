/*
 * lstm.c - reference multi-layer LSTM in double: the textbook recurrences
 * step by step, and backpropagation through time over the saved states.
 */
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "ref/lstm.h"
#include "ref/rnn.h"

static double sigm(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

/* Activations of every layer: gates (L, T, N, 4H) as i, f, g, o after
 * their nonlinearities, c and h (L, T, N, H). */
typedef struct ref_state {
    double *gates, *c, *h;
} ref_state;

static void state_free(ref_state *s)
{
    free(s->gates);
    free(s->c);
    free(s->h);
}

static int run_forward(const ct_lstm_desc *d, const double *x, const double *params, ref_state *s)
{
    size_t T = (size_t)d->T, N = (size_t)d->N, H = (size_t)d->hidden, L = (size_t)d->layers;
    size_t S = T * N * H;
    s->gates = malloc(4 * S * L * sizeof(double));
    s->c = malloc(S * L * sizeof(double));
    s->h = malloc(S * L * sizeof(double));
    if (!s->gates || !s->c || !s->h) {
        state_free(s);
        return CT_ERR_NO_MEMORY;
    }
    for (size_t k = 0; k < L; k++) {
        ct_lstm_offsets o = ct_lstm_layer_offsets(d, (int)k);
        size_t in = k == 0 ? (size_t)d->input : H;
        const double *X = k == 0 ? x : s->h + (k - 1) * S;
        const double *wih = params + o.w_ih, *whh = params + o.w_hh, *bih = params + o.b_ih,
                     *bhh = params + o.b_hh;
        double *gk = s->gates + 4 * S * k, *ck = s->c + S * k, *hk = s->h + S * k;
        for (size_t t = 0; t < T; t++)
            for (size_t n = 0; n < N; n++) {
                const double *xr = X + (t * N + n) * in;
                const double *hp = t ? hk + ((t - 1) * N + n) * H : NULL;
                double *gr = gk + (t * N + n) * 4 * H;
                for (size_t r = 0; r < 4 * H; r++) {
                    double z = bih[r] + bhh[r];
                    for (size_t i = 0; i < in; i++)
                        z += wih[r * in + i] * xr[i];
                    for (size_t i = 0; hp && i < H; i++)
                        z += whh[r * H + i] * hp[i];
                    gr[r] = r / H == 2 ? tanh(z) : sigm(z);
                }
                for (size_t j = 0; j < H; j++) {
                    double cp = t ? ck[((t - 1) * N + n) * H + j] : 0.0;
                    double cv = gr[H + j] * cp + gr[j] * gr[2 * H + j];
                    ck[(t * N + n) * H + j] = cv;
                    hk[(t * N + n) * H + j] = gr[3 * H + j] * tanh(cv);
                }
            }
    }
    return CT_OK;
}

int ct_ref_lstm_forward(const ct_lstm_desc *d, double *y, double *h_n, double *c_n,
                        const double *x, const double *params)
{
    ref_state s = { NULL, NULL, NULL };
    int st = run_forward(d, x, params, &s);
    if (st)
        return st;
    size_t T = (size_t)d->T, N = (size_t)d->N, H = (size_t)d->hidden, L = (size_t)d->layers;
    size_t S = T * N * H;
    for (size_t i = 0; i < S; i++)
        y[i] = s.h[(L - 1) * S + i];
    for (size_t k = 0; k < L; k++)
        for (size_t i = 0; i < N * H; i++) {
            if (h_n)
                h_n[k * N * H + i] = s.h[k * S + (T - 1) * N * H + i];
            if (c_n)
                c_n[k * N * H + i] = s.c[k * S + (T - 1) * N * H + i];
        }
    state_free(&s);
    return CT_OK;
}

int ct_ref_lstm_backward(const ct_lstm_desc *d, double *dx, double *dparams, const double *dy,
                         const double *x, const double *params)
{
    size_t T = (size_t)d->T, N = (size_t)d->N, H = (size_t)d->hidden, L = (size_t)d->layers;
    size_t S = T * N * H, in0 = (size_t)d->input;
    ref_state s = { NULL, NULL, NULL };
    int st = run_forward(d, x, params, &s);
    if (st)
        return st;
    /* dseq: gradient reaching the current layer's outputs h_t (T, N, H);
     * dprev: the one reaching its inputs; dz: pre-activation gradients of
     * one step (4H); dc, dh: the recurrent gradients (N, H) */
    size_t wide = in0 > H ? in0 : H;
    double *dseq = malloc(S * sizeof(double)), *dprev = malloc(T * N * wide * sizeof(double));
    double *dz = malloc(4 * H * sizeof(double)), *dc = malloc(N * H * sizeof(double));
    double *dh = malloc(N * H * sizeof(double)), *dhn = malloc(N * H * sizeof(double));
    if (!dseq || !dprev || !dz || !dc || !dh || !dhn) {
        st = CT_ERR_NO_MEMORY;
        goto done;
    }
    for (size_t i = 0; i < S; i++)
        dseq[i] = dy[i];
    for (size_t k = L; k-- > 0;) {
        ct_ref_rnn_layer rl = ct_ref_rnn_layer_at(d, 4, (int)k, params, dparams);
        size_t in = rl.in;
        const double *X = k == 0 ? x : s.h + (k - 1) * S;
        const double *gk = s.gates + 4 * S * k, *ck = s.c + S * k, *hk = s.h + S * k;
        for (size_t i = 0; i < N * H; i++)
            dc[i] = dh[i] = 0;
        for (size_t i = 0; i < T * N * in; i++)
            dprev[i] = 0;
        for (size_t t = T; t-- > 0;) {
            for (size_t i = 0; i < N * H; i++)
                dhn[i] = 0;
            for (size_t n = 0; n < N; n++) {
                const double *gr = gk + (t * N + n) * 4 * H;
                for (size_t j = 0; j < H; j++) {
                    size_t q = n * H + j;
                    double i_ = gr[j], f = gr[H + j], g = gr[2 * H + j], og = gr[3 * H + j];
                    double tc = tanh(ck[(t * N + n) * H + j]);
                    double cp = t ? ck[((t - 1) * N + n) * H + j] : 0.0;
                    double dht = dseq[(t * N + n) * H + j] + dh[q];
                    double dct = dc[q] + dht * og * (1 - tc * tc);
                    dz[j] = dct * g * i_ * (1 - i_);
                    dz[H + j] = dct * cp * f * (1 - f);
                    dz[2 * H + j] = dct * i_ * (1 - g * g);
                    dz[3 * H + j] = dht * tc * og * (1 - og);
                    dc[q] = dct * f;
                }
                ct_ref_rnn_step_backward(&rl, dz, dz, X + (t * N + n) * in,
                                         t ? hk + ((t - 1) * N + n) * H : NULL,
                                         dprev + (t * N + n) * in, dhn + n * H);
            }
            for (size_t i = 0; i < N * H; i++)
                dh[i] = dhn[i];
        }
        double *dst = k == 0 ? dx : dseq;
        for (size_t i = 0; i < T * N * in; i++)
            dst[i] = dprev[i];
    }
done:
    free(dseq);
    free(dprev);
    free(dz);
    free(dc);
    free(dh);
    free(dhn);
    state_free(&s);
    return st;
}
