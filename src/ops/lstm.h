/*
 * lstm.h - multi-layer LSTM over a whole sequence, as PyTorch's nn.LSTM
 * (unidirectional, h0 = c0 = 0, no projection, no dropout).
 *
 * Layout (T, N, F): sequence, batch, feature. Gate order i, f, g, o:
 *   gates = x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh          (N, 4H)
 *   i, f, o = sigmoid(.), g = tanh(.)
 *   c_t = f c_{t-1} + i g,  h_t = o tanh(c_t)
 *
 * Parameters: ops/rnn.h's flat layout with G = 4 gate blocks
 * (ct_lstm_offsets); the gradient buffer has the same layout.
 *
 * The caller owns a workspace of ct_lstm_workspace_size bytes (floats): the
 * forward saves every layer's gate activations, c_t and h_t in it, the
 * backward reads them and uses the tail as scratch. The backward must see
 * the workspace of the forward on the same x and parameters.
 *
 * Work per layer: one GEMM projects the inputs of all T steps at once, then
 * each step one GEMM adds h_{t-1} W_hhᵀ and one fused kernel applies the
 * gates. Backward runs time in reverse with a fused gate-backward kernel
 * and one GEMM per step for dh_{t-1}; dW_hh, dW_ih, dx come from single
 * GEMMs over all steps after the loop, the bias gradients from a
 * fixed-order column sum. Nothing uses atomics, so results are
 * deterministic.
 */
#ifndef CT_OPS_LSTM_H
#define CT_OPS_LSTM_H

#include "ops/rnn.h"

typedef ct_rnn_desc ct_lstm_desc;
typedef ct_rnn_offsets ct_lstm_offsets;

/* CT_OK if the descriptor is usable (every field >= 1, sizes in range);
 * otherwise a CT_ERR_INVALID_ARG naming the field. */
int ct_lstm_validate(ct_context *ctx, const ct_lstm_desc *d);
/* Floats in the flat parameter (and gradient) buffer. */
size_t ct_lstm_param_count(const ct_lstm_desc *d);
ct_lstm_offsets ct_lstm_layer_offsets(const ct_lstm_desc *d, int layer);
/* Bytes of workspace: the saved activations, 6 T N H floats per layer
 * (gates (T, N, 4H), c (T, N, H), h (T, N, H)), then the backward's
 * scratch, 5 T N H + N H floats and the bias gradient's partial sums
 * (at most about 16384 + 4H floats). */
size_t ct_lstm_workspace_size(const ct_lstm_desc *d);

/* y (T, N, H) = top layer's h_t; h_n, c_n (layers, N, H) final states (each
 * may have a NULL mem to skip it); x (T, N, input); params (flat);
 * ws (workspace) receives what backward needs. */
int ct_lstm_forward(ct_context *ctx, const ct_lstm_desc *d, ct_buf y, ct_buf h_n, ct_buf c_n,
                    ct_buf x, ct_buf params, ct_buf ws);
/* dx (T, N, input) =, dparams (flat) +=, from dy (T, N, H) on the top
 * layer's outputs (the final states get no gradient). x, params and ws as
 * the forward left them; ws's scratch is overwritten. */
int ct_lstm_backward(ct_context *ctx, const ct_lstm_desc *d, ct_buf dx, ct_buf dparams, ct_buf dy,
                     ct_buf x, ct_buf params, ct_buf ws);

#endif /* CT_OPS_LSTM_H */
