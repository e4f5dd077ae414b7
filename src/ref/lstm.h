/*
 * lstm.h - reference multi-layer LSTM (same layouts and contract as
 * src/ops/lstm.h; the backward recomputes the forward itself, so it needs
 * no workspace). Return CT_OK, or CT_ERR_NO_MEMORY.
 */
#ifndef CT_REF_LSTM_H
#define CT_REF_LSTM_H

#include "ops/lstm.h"
#include "ref/ref.h"

/* y (T, N, H); h_n, c_n (layers, N, H) or NULL; x (T, N, input);
 * params flat (ct_lstm_offsets) */
int ct_ref_lstm_forward(const ct_lstm_desc *d, double *y, double *h_n, double *c_n,
                        const double *x, const double *params);
/* dx (T, N, input) =, dparams (flat) +=, dy (T, N, H) */
int ct_ref_lstm_backward(const ct_lstm_desc *d, double *dx, double *dparams, const double *dy,
                         const double *x, const double *params);

#endif /* CT_REF_LSTM_H */
