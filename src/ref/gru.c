/*
 * gru.c - reference multi-layer GRU in double: the textbook recurrences
 * step by step, and backpropagation through time over the saved states.
 */
#include <math.h>

#include "ref/act.h"
#include "ref/gru.h"
#include "ref/rnn.h"

/* The GRU cell (ct_ref_rnn_cell_forward): gates r, z, n after their
 * nonlinearities, W_hn h_{t-1} + b_hn in aux. */
static void cell_forward(size_t H, const double *gi, const double *gh, const double *hp,
                         const double *aux_prev, double *gates, double *hn, double *h)
{
    (void)aux_prev;
    for (size_t j = 0; j < H; j++) {
        double r = ct_ref_act_f(CT_ACT_SIGMOID, gi[j] + gh[j]);
        double z = ct_ref_act_f(CT_ACT_SIGMOID, gi[H + j] + gh[H + j]);
        double nv = tanh(gi[2 * H + j] + r * gh[2 * H + j]);
        gates[j] = r;
        gates[H + j] = z;
        gates[2 * H + j] = nv;
        hn[j] = gh[2 * H + j];
        h[j] = (1 - z) * nv + z * (hp ? hp[j] : 0.0);
    }
}

int ct_ref_gru_forward(const ct_gru_desc *d, double *y, double *h_n, const double *x,
                       const double *params)
{
    ct_ref_rnn_state s = { NULL, NULL, NULL };
    int st = ct_ref_rnn_forward(d, 3, cell_forward, x, params, &s);
    if (!st)
        ct_ref_rnn_outputs(d, &s, y, h_n);
    ct_ref_rnn_state_free(&s);
    return st;
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
    int st = ct_ref_rnn_forward(d, 3, cell_forward, x, params, &s);
    if (!st)
        st = ct_ref_rnn_backward(d, 3, &s, cell_backward, d, dx, dparams, dy, x, params);
    ct_ref_rnn_state_free(&s);
    return st;
}
