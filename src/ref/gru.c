/*
 * gru.c - reference multi-layer GRU in double: the textbook recurrences
 * step by step, and backpropagation through time over the saved states.
 */
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "ref/act.h"
#include "ref/gru.h"
#include "ref/rnn.h"

/* The saved activations: gates (L, T, N, 3H) as r, z, n after their
 * nonlinearities, W_hn h_{t-1} + b_hn in aux, h. */
static int run_forward(const ct_gru_desc *d, const double *x, const double *params,
                       ct_ref_rnn_state *s)
{
    size_t T = (size_t)d->T, N = (size_t)d->N, H = (size_t)d->hidden, L = (size_t)d->layers;
    size_t S = T * N * H;
    int st = ct_ref_rnn_state_alloc(d, 3, s);
    double *gi = malloc(6 * H * sizeof(double)), *gh = gi + 3 * H;
    if (st || !gi) {
        ct_ref_rnn_state_free(s);
        free(gi);
        return CT_ERR_NO_MEMORY;
    }
    for (size_t k = 0; k < L; k++) {
        ct_ref_rnn_layer rl = ct_ref_rnn_layer_at(d, 3, (int)k, params, NULL);
        const double *X = k == 0 ? x : s->h + (k - 1) * S;
        double *gk = s->gates + 3 * S * k, *nk = s->aux + S * k, *hk = s->h + S * k;
        for (size_t t = 0; t < T; t++)
            for (size_t n = 0; n < N; n++) {
                const double *hp = t ? hk + ((t - 1) * N + n) * H : NULL;
                double *gr = gk + (t * N + n) * 3 * H;
                size_t q = (t * N + n) * H;
                ct_ref_rnn_preact(&rl, X + (t * N + n) * rl.in, hp, gi, gh);
                for (size_t j = 0; j < H; j++) {
                    double r = ct_ref_act_f(CT_ACT_SIGMOID, gi[j] + gh[j]);
                    double z = ct_ref_act_f(CT_ACT_SIGMOID, gi[H + j] + gh[H + j]);
                    double nv = tanh(gi[2 * H + j] + r * gh[2 * H + j]);
                    gr[j] = r;
                    gr[H + j] = z;
                    gr[2 * H + j] = nv;
                    nk[q + j] = gh[2 * H + j];
                    hk[q + j] = (1 - z) * nv + z * (hp ? hp[j] : 0.0);
                }
            }
    }
    free(gi);
    return CT_OK;
}

int ct_ref_gru_forward(const ct_gru_desc *d, double *y, double *h_n, const double *x,
                       const double *params)
{
    ct_ref_rnn_state s = { NULL, NULL, NULL };
    int st = run_forward(d, x, params, &s);
    if (st)
        return st;
    ct_ref_rnn_outputs(d, &s, y, h_n);
    ct_ref_rnn_state_free(&s);
    return CT_OK;
}

/* The GRU cell's backward (ct_ref_rnn_cell_backward). */
static void cell_backward(const void *user, const ct_ref_rnn_state *s, size_t k, size_t t, size_t n,
                          const double *dh, double *di, double *dg, double *dhp)
{
    const ct_gru_desc *d = user;
    size_t N = (size_t)d->N, H = (size_t)d->hidden, S = (size_t)d->T * N * H, q = (t * N + n) * H;
    const double *gr = s->gates + 3 * S * k + 3 * q, *hn = s->aux + S * k + q;
    const double *hp = t ? s->h + S * k + q - N * H : NULL;
    for (size_t j = 0; j < H; j++) {
        double r = gr[j], z = gr[H + j], nv = gr[2 * H + j];
        double an = dh[j] * (1 - z) * (1 - nv * nv);
        double ar = an * hn[j] * r * (1 - r);
        double az = dh[j] * ((hp ? hp[j] : 0.0) - nv) * z * (1 - z);
        di[j] = dg[j] = ar;
        di[H + j] = dg[H + j] = az;
        di[2 * H + j] = an;
        dg[2 * H + j] = an * r; /* r scales the hidden part of n's sum */
        dhp[j] = dh[j] * z;     /* h_t = (1 - z) n + z h_{t-1} */
    }
}

int ct_ref_gru_backward(const ct_gru_desc *d, double *dx, double *dparams, const double *dy,
                        const double *x, const double *params)
{
    ct_ref_rnn_state s = { NULL, NULL, NULL };
    int st = run_forward(d, x, params, &s);
    if (!st)
        st = ct_ref_rnn_backward(d, 3, &s, cell_backward, d, dx, dparams, dy, x, params);
    ct_ref_rnn_state_free(&s);
    return st;
}
