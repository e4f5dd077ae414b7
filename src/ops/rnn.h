/*
 * rnn.h - what the recurrent families (ops/lstm.h, ops/gru.h) share: the
 * descriptor of a stacked, unidirectional RNN over a whole sequence
 * (T, N, F), PyTorch's flat parameter layout with G gate blocks of H rows
 * per layer, the argument checks, and ct_gemm on ct_bufs.
 *
 * Parameters of all layers live in one flat buffer in PyTorch's order:
 * weight_ih_l0 (G H, input), weight_hh_l0 (G H, H), bias_ih_l0 (G H),
 * bias_hh_l0 (G H), weight_ih_l1 (G H, H), ...; the gradient buffer has
 * the same layout. G is 4 for the LSTM, 3 for the GRU.
 */
#ifndef CT_OPS_RNN_H
#define CT_OPS_RNN_H

#include "ops/ops.h"

typedef struct ct_rnn_desc {
    int T;      /* sequence length */
    int N;      /* batch */
    int input;  /* features of x */
    int hidden; /* H: features of h and y */
    int layers;
} ct_rnn_desc;

/* Element offsets of one layer's tensors in the flat parameter buffer. */
typedef struct ct_rnn_offsets {
    size_t w_ih; /* (G H, in): in = input for layer 0, H above */
    size_t w_hh; /* (G H, H) */
    size_t b_ih; /* (G H) */
    size_t b_hh; /* (G H) */
} ct_rnn_offsets;

/* CT_OK if the descriptor is usable (every field >= 1, the per-layer
 * tensors of G gates below 2^31 elements); otherwise a CT_ERR_INVALID_ARG
 * naming `who` and the fields. */
int ct_rnn_validate(ct_context *ctx, const char *who, const ct_rnn_desc *d, int G);
/* Features of layer k's input: input for layer 0, hidden above. */
size_t ct_rnn_layer_in(const ct_rnn_desc *d, int layer);
/* Layer `layer`'s offsets; layer == d->layers gives the parameter count in w_ih. */
ct_rnn_offsets ct_rnn_layer_offsets(const ct_rnn_desc *d, int G, int layer);

/* The buffers bufs[0..count) must exist, and the workspace (the last one)
 * must hold `need` bytes from its offset: a short one would be written out
 * of bounds by the kernels. `fn` names the launcher in the messages, `hint`
 * the function that sizes the workspace. */
int ct_rnn_check_bufs(ct_context *ctx, const char *fn, const char *hint, const ct_buf *bufs,
                      const char *const *names, int count, size_t need);

/* c = op(a) op(b) + beta c on ct_bufs (ct_gemm with alpha 1) */
int ct_rnn_gemm(ct_context *ctx, int ta, int tb, size_t m, size_t n, size_t k, ct_buf a, size_t lda,
                ct_buf b, size_t ldb, float beta, ct_buf c, size_t ldc);

#endif /* CT_OPS_RNN_H */
