/*
 * rnn.h - what the recurrent references (ref/lstm.c, ref/gru.c) share: a
 * layer's weights and gradients in the flat layout of ops/rnn.h, and one
 * batch row's step of backpropagation through time from its gate
 * gradients.
 */
#ifndef CT_REF_RNN_H
#define CT_REF_RNN_H

#include "ops/rnn.h"
#include "ref/ref.h"

/* Layer k of a G-gate RNN: rows = G H, in its input features. */
typedef struct ct_ref_rnn_layer {
    size_t rows, in, H;
    const double *wih, *whh; /* (rows, in), (rows, H) */
    double *dwih, *dwhh, *dbih, *dbhh;
} ct_ref_rnn_layer;

ct_ref_rnn_layer ct_ref_rnn_layer_at(const ct_rnn_desc *d, int G, int k, const double *params,
                                     double *dparams);

/* One batch row of one step, from the gradients of its input and hidden
 * pre-activations di and dg (rows each; the same array where the two
 * sums meet before the nonlinearity, as in the LSTM): db_ih += di,
 * db_hh += dg, dW_ih += di xᵀ, dx (in) += W_ihᵀ di, and, where h_{t-1}
 * exists (hp not NULL), dW_hh += dg hpᵀ and dhp (H) += W_hhᵀ dg. */
void ct_ref_rnn_step_backward(const ct_ref_rnn_layer *l, const double *di, const double *dg,
                              const double *x, const double *hp, double *dx, double *dhp);

#endif /* CT_REF_RNN_H */
