/*
 * gru.h - multi-layer GRU over a whole sequence, as PyTorch's nn.GRU
 * (unidirectional, h0 = 0, no dropout).
 *
 * Layout (T, N, F): sequence, batch, feature. Gate order r, z, n:
 *   r = sigmoid(x_t W_irᵀ + b_ir + h_{t-1} W_hrᵀ + b_hr)
 *   z = sigmoid(x_t W_izᵀ + b_iz + h_{t-1} W_hzᵀ + b_hz)
 *   n = tanh(x_t W_inᵀ + b_in + r (h_{t-1} W_hnᵀ + b_hn))
 *   h_t = (1 - z) n + z h_{t-1}
 *
 * Parameters: ops/rnn.h's flat layout with G = 3 gate blocks
 * (ct_gru_offsets); the gradient buffer has the same layout.
 *
 * The caller owns a workspace of ct_gru_workspace_size bytes (floats): the
 * forward saves every layer's gate activations, W_hn h_{t-1} + b_hn and h_t
 * in it, the backward reads them and uses the tail as scratch. The
 * backward must see the workspace of the forward on the same x and
 * parameters.
 *
 * Work per layer: one GEMM projects the inputs of all T steps at once, then
 * each step one GEMM computes h_{t-1} W_hhᵀ and one fused kernel applies
 * the biases and the gates. Backward runs time in reverse with a fused
 * gate-backward kernel and one GEMM per step for dh_{t-1}; dW_hh, dW_ih, dx
 * come from single GEMMs over all steps after the loop, the bias gradients
 * from ct_bias_backward's fixed-order column sums. Nothing uses atomics,
 * so results are deterministic.
 */
#ifndef CT_OPS_GRU_H
#define CT_OPS_GRU_H

#include "ops/rnn.h"

typedef ct_rnn_desc ct_gru_desc;
typedef ct_rnn_offsets ct_gru_offsets;

/* CT_OK if the descriptor is usable (every field >= 1, sizes in range);
 * otherwise a CT_ERR_INVALID_ARG naming the field. */
int ct_gru_validate(ct_context *ctx, const ct_gru_desc *d);
/* Floats in the flat parameter (and gradient) buffer. */
size_t ct_gru_param_count(const ct_gru_desc *d);
ct_gru_offsets ct_gru_layer_offsets(const ct_gru_desc *d, int layer);
/* Bytes of workspace: the saved activations, 5 T N H floats per layer
 * (gates (T, N, 3H), W_hn h + b_hn (T, N, H), h (T, N, H)), then the
 * scratch, 7 T N H floats (the forward's step product, the backward's
 * gradients). */
size_t ct_gru_workspace_size(const ct_gru_desc *d);

/* y (T, N, H) = top layer's h_t; h_n (layers, N, H) final states (a NULL
 * mem skips it); x (T, N, input); params (flat); ws (workspace) receives
 * what backward needs. */
int ct_gru_forward(ct_context *ctx, const ct_gru_desc *d, ct_buf y, ct_buf h_n, ct_buf x,
                   ct_buf params, ct_buf ws);
/* dx (T, N, input) =, dparams (flat) +=, from dy (T, N, H) on the top
 * layer's outputs (the final states get no gradient). x, params and ws as
 * the forward left them; ws's scratch is overwritten. */
int ct_gru_backward(ct_context *ctx, const ct_gru_desc *d, ct_buf dx, ct_buf dparams, ct_buf dy,
                    ct_buf x, ct_buf params, ct_buf ws);

#endif /* CT_OPS_GRU_H */
