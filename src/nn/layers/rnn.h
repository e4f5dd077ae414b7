/*
 * rnn.h - what the recurrent layer types (lstm.c, gru.c) share: the keys
 * hidden= and layers=, parameters named as torch.nn.LSTM and torch.nn.GRU
 * name them (weight_ih_lK (G H, in), weight_hh_lK (G H, H), bias_ih_lK,
 * bias_hh_lK (G H) per layer K), PyTorch's init, the plan's descriptor,
 * the flops, and the ONNX form (one ONNX recurrent node per stacked layer).
 * A type's variant is its gate count G.
 */
#ifndef CT_NN_LAYERS_RNN_H
#define CT_NN_LAYERS_RNN_H

#include "nn/layer.h"
#include "ops/rnn.h"

#define CT_RNN_MAX_LAYERS 4

extern const ct_key_spec ct_rnn_keys[2];
#define CT_RNN_KEYS .keys = ct_rnn_keys, .nkeys = 2

typedef struct ct_rnn_layer_state {
    ct_rnn_desc d;
} ct_rnn_layer_state;

/* infer: a sequence of vectors (T x F) in, (T x hidden) out, the
 * parameters of every layer. */
int ct_rnn_layer_infer(ct_layer *l, const ct_shape *in, int nin, char *err, size_t n);
/* init: every parameter uniform in +-1/sqrt(hidden), as PyTorch's. */
void ct_rnn_layer_init(const ct_layer *l, float *params, float *buffers, ct_init_rng *g);
/* The plan's part the types share: the descriptor (time steps and
 * features from the input, the net's batch) into the layer's state,
 * returned for the type's workspace size. */
const ct_rnn_desc *ct_rnn_layer_plan(ct_plan *p, const ct_layer *l, ct_lrt *r);
const ct_rnn_desc *ct_rnn_layer_desc(const ct_lrt *r);
double ct_rnn_layer_flops(const ct_net *net, size_t i);

/* The ONNX form: (N, T, F) transposed to time-major, then per stacked
 * layer one node `op` (LSTM, GRU) with W (1, G H, in), R (1, G H, H) and
 * B (1, 2 G H) = [Wb, Rb], their gate blocks from PyTorch's order to
 * ONNX's (ONNX's block b is PyTorch's gate[b]), hidden_size and the
 * attribute `extra` if any; each layer's Y (T, 1, N, H) squeezed to the
 * next one's input, the last transposed back to (N, T, H). Zero initial
 * states, as cltrain's. */
typedef struct ct_rnn_onnx {
    const char *op;
    const int *gate;
    const ct_onnx_attr *extra; /* NULL: none */
} ct_rnn_onnx;
int ct_rnn_layer_export(const ct_layer_export *e, const ct_rnn_onnx *form);

#endif /* CT_NN_LAYERS_RNN_H */
