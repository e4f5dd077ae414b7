/*
 * rnn.h - what the recurrent references (ref/lstm.c, ref/gru.c) share: the
 * layers, steps and batch rows of a stacked RNN in the flat layout of
 * ops/rnn.h, forward and backpropagation through time, around a cell's
 * own gate functions and their derivatives.
 */
#ifndef CT_REF_RNN_H
#define CT_REF_RNN_H

#include "ops/rnn.h"
#include "ref/ref.h"

/* What a forward saves for its backward, every layer's: gates (L, T, N, G H)
 * after their nonlinearities, aux (L, T, N, H), the cell's own state (the
 * LSTM's c, the GRU's W_hn h_{t-1} + b_hn), and h (L, T, N, H). */
typedef struct ct_ref_rnn_state {
    double *gates, *aux, *h;
} ct_ref_rnn_state;

/* A cell's forward for one batch row of one step: from its pre-activations
 * gi = W_ih x + b_ih and gh = W_hh h_{t-1} + b_hh (G H each; gh = b_hh at
 * the first step), h_{t-1} and the cell's aux of step t - 1 (hp, aux_prev:
 * NULL at the first step), the row's gate activations (G H), aux and h (H). */
typedef void (*ct_ref_rnn_cell_forward)(size_t H, const double *gi, const double *gh, const double *hp,
                                        const double *aux_prev, double *gates, double *aux, double *h);

/* The forward of a G-gate RNN over x (T, N, input) into s, allocated here
 * (ct_ref_rnn_state_free releases it, also after a failure). CT_OK or
 * CT_ERR_NO_MEMORY. */
int ct_ref_rnn_forward(const ct_rnn_desc *d, int G, ct_ref_rnn_cell_forward fn, const double *x,
                       const double *params, ct_ref_rnn_state *s);
void ct_ref_rnn_state_free(ct_ref_rnn_state *s);

/* y (T, N, H) = the top layer's h, h_n (layers, N, H) each layer's last
 * (h_n NULL: skipped), from a forward's state. */
void ct_ref_rnn_outputs(const ct_rnn_desc *d, const ct_ref_rnn_state *s, double *y, double *h_n);

/* A cell's backward for batch row n of step t of layer k, called in
 * reverse time order: from dh (H), the whole gradient reaching h_t, and
 * the forward's state s, the gradients di and dg (G H each) of the row's
 * input and hidden pre-activations (W_ih x + b_ih, W_hh h_{t-1} + b_hh),
 * and dhp (H) = the gradient reaching h_{t-1} other than through W_hh
 * (zeros where there is none). `cell` holds the cell's own recurrent
 * gradients (the LSTM's dc). */
typedef void (*ct_ref_rnn_cell_backward)(const void *cell, const ct_ref_rnn_state *s, size_t k,
                                         size_t t, size_t n, const double *dh, double *di,
                                         double *dg, double *dhp);

/* Backpropagation through time of a G-gate RNN over the forward's state
 * s: dx (T, N, input) =, dparams (flat) +=, from dy (T, N, H), each
 * row's gate gradients from `fn`. CT_OK or CT_ERR_NO_MEMORY. */
int ct_ref_rnn_backward(const ct_rnn_desc *d, int G, const ct_ref_rnn_state *s,
                        ct_ref_rnn_cell_backward fn, const void *cell, double *dx, double *dparams,
                        const double *dy, const double *x, const double *params);

#endif /* CT_REF_RNN_H */
