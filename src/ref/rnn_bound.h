/*
 * rnn_bound.h - what products of 16-bit operands add to the recurrent
 * layers' results (ref/lstm.c, ref/gru.c), as bounds per element computed
 * beside the double reference.
 *
 * Every product's operands are rounded with relative error u and absolute
 * error s (fp16's subnormal step; 0 for bf16): x, params and dy exactly as
 * given, the hidden states and gradients as the device holds them, within
 * their own bounds (ct_ref_perr16). The cells' arithmetic runs in float32
 * on the device's values, so only their inputs' bounds carry through it:
 * a sum's bounds add, a product's follow |a b - a~ b~| <= ea |b| + |a| eb +
 * ea eb, sigmoid and tanh move by at most a quarter of and as much as
 * their argument's (and stay in their ranges); the bias gradients are
 * float32 sums of the device's gate gradients. Beyond float32's own
 * rounding, which the caller's float32 tolerance covers.
 *
 * Outputs as the forward and backward give them: ey (T, N, H), ehn and ecn
 * (layers, N, H; the LSTM's cell state), edx (T, N, input), edp (flat
 * parameters); any may be NULL but edp. CT_OK or CT_ERR_NO_MEMORY.
 */
#ifndef CT_REF_RNN_BOUND_H
#define CT_REF_RNN_BOUND_H

#include "ops/gru.h"
#include "ops/lstm.h"
#include "ref/ref.h"

int ct_ref_lstm_bound16(const ct_lstm_desc *d, double u, double s, double *ey, double *ehn, double *ecn,
                        double *edx, double *edp, const double *dy, const double *x, const double *params);
int ct_ref_gru_bound16(const ct_gru_desc *d, double u, double s, double *ey, double *ehn, double *edx,
                       double *edp, const double *dy, const double *x, const double *params);

#endif /* CT_REF_RNN_BOUND_H */
