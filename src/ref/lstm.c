/*
 * lstm.c - reference multi-layer LSTM in double: the textbook recurrences
 * step by step, and backpropagation through time over the saved states.
 */
#include <math.h>
#include <stdlib.h>

#include "core/error.h"
#include "ref/act.h"
#include "ref/lstm.h"
#include "ref/rnn.h"

/* The LSTM cell (ct_ref_rnn_cell_forward): gates i, f, g, o after their
 * nonlinearities, c in aux. */
static void cell_forward(size_t H, const double *gi, const double *gh, const double *hp,
                         const double *cp, double *gates, double *c, double *h)
{
    (void)hp;
    for (size_t r = 0; r < 4 * H; r++)
        gates[r] = r / H == 2 ? tanh(gi[r] + gh[r]) : ct_ref_act_f(CT_ACT_SIGMOID, gi[r] + gh[r]);
    for (size_t j = 0; j < H; j++) {
        c[j] = gates[H + j] * (cp ? cp[j] : 0.0) + gates[j] * gates[2 * H + j];
        h[j] = gates[3 * H + j] * tanh(c[j]);
    }
}

int ct_ref_lstm_forward(const ct_lstm_desc *d, double *y, double *h_n, double *c_n,
                        const double *x, const double *params)
{
    ct_ref_rnn_state s = { NULL, NULL, NULL };
    int st = ct_ref_rnn_forward(d, 4, cell_forward, x, params, &s);
    if (st) {
        ct_ref_rnn_state_free(&s);
        return st;
    }
    ct_ref_rnn_outputs(d, &s, y, h_n);
    size_t NH = (size_t)d->N * (size_t)d->hidden, S = (size_t)d->T * NH;
    for (size_t k = 0; c_n && k < (size_t)d->layers; k++)
        for (size_t i = 0; i < NH; i++)
            c_n[k * NH + i] = s.aux[k * S + S - NH + i];
    ct_ref_rnn_state_free(&s);
    return CT_OK;
}

/* The LSTM cell's backward (ct_ref_rnn_cell_backward); dc (N, H) is the
 * gradient reaching c_t from step t + 1, zero at the last step. */
typedef struct lstm_cell {
    const ct_lstm_desc *d;
    double *dc;
} lstm_cell;

static void cell_backward(const void *user, const ct_ref_rnn_state *s, size_t k, size_t t, size_t n,
                          const double *dh, double *di, double *dg, double *dhp)
{
    const lstm_cell *c = user;
    size_t T = (size_t)c->d->T, N = (size_t)c->d->N, H = (size_t)c->d->hidden, S = T * N * H;
    const double *gr = s->gates + 4 * S * k + (t * N + n) * 4 * H, *ck = s->aux + S * k;
    double *dc = c->dc + n * H;
    for (size_t j = 0; j < H; j++) {
        double i_ = gr[j], f = gr[H + j], g = gr[2 * H + j], og = gr[3 * H + j];
        double tc = tanh(ck[(t * N + n) * H + j]);
        double cp = t ? ck[((t - 1) * N + n) * H + j] : 0.0;
        double dct = (t + 1 < T ? dc[j] : 0.0) + dh[j] * og * (1 - tc * tc);
        di[j] = dct * g * i_ * (1 - i_);
        di[H + j] = dct * cp * f * (1 - f);
        di[2 * H + j] = dct * i_ * (1 - g * g);
        di[3 * H + j] = dh[j] * tc * og * (1 - og);
        dc[j] = dct * f;
        dhp[j] = 0; /* h_{t-1} reaches h_t only through W_hh */
    }
    for (size_t r = 0; r < 4 * H; r++)
        dg[r] = di[r]; /* the input and hidden sums meet before the gates */
}

int ct_ref_lstm_backward(const ct_lstm_desc *d, double *dx, double *dparams, const double *dy,
                         const double *x, const double *params)
{
    ct_ref_rnn_state s = { NULL, NULL, NULL };
    int st = ct_ref_rnn_forward(d, 4, cell_forward, x, params, &s);
    lstm_cell c = { d, st ? NULL : malloc((size_t)d->N * (size_t)d->hidden * sizeof(double)) };
    if (!st)
        st = c.dc ? ct_ref_rnn_backward(d, 4, &s, cell_backward, &c, dx, dparams, dy, x, params)
                  : CT_ERR_NO_MEMORY;
    free(c.dc);
    ct_ref_rnn_state_free(&s);
    return st;
}
