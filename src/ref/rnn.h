/*
 * rnn.h - what the recurrent references (ref/lstm.c, ref/gru.c) share: a
 * layer's weights and gradients in the flat layout of ops/rnn.h, the
 * forward's saved state and pre-activations, and backpropagation through
 * time around a cell's own gate derivatives.
 */
#ifndef CT_REF_RNN_H
#define CT_REF_RNN_H

#include "ops/rnn.h"
#include "ref/ref.h"

/* Layer k of a G-gate RNN: rows = G H, in its input features; the
 * gradients NULL where dparams is (a forward). */
typedef struct ct_ref_rnn_layer {
    size_t rows, in, H;
    const double *wih, *whh, *bih, *bhh; /* (rows, in), (rows, H), (rows), (rows) */
    double *dwih, *dwhh, *dbih, *dbhh;
} ct_ref_rnn_layer;

ct_ref_rnn_layer ct_ref_rnn_layer_at(const ct_rnn_desc *d, int G, int k, const double *params,
                                     double *dparams);

/* What a forward saves for its backward, every layer's: gates (L, T, N, G H)
 * after their nonlinearities, aux (L, T, N, H), the cell's own state (the
 * LSTM's c, the GRU's W_hn h_{t-1} + b_hn), and h (L, T, N, H). */
typedef struct ct_ref_rnn_state {
    double *gates, *aux, *h;
} ct_ref_rnn_state;

/* CT_OK or CT_ERR_NO_MEMORY (then nothing stays allocated). */
int ct_ref_rnn_state_alloc(const ct_rnn_desc *d, int G, ct_ref_rnn_state *s);
void ct_ref_rnn_state_free(ct_ref_rnn_state *s);

/* One batch row's pre-activations: gi (rows) = W_ih x + b_ih and
 * gh (rows) = W_hh hp + b_hh, just b_hh at the first step (hp NULL). */
void ct_ref_rnn_preact(const ct_ref_rnn_layer *l, const double *x, const double *hp, double *gi,
                       double *gh);

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
