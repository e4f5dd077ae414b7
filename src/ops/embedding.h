/*
 * embedding.h - embedding lookup: y[i, :] = W[idx[i], :].
 *
 * Indices are int32 (a ct_buf whose buffer holds int32 elements; the
 * offset counts int32s). An index outside [0, V) gives a row of NaN in y
 * instead of reading out of bounds, and is skipped by the backward; the
 * trainer validates indices on the host, this only keeps a bad one loud.
 *
 * The backward is deterministic without float atomics: each distinct index
 * sums its dy rows in ascending i, so repeated indices accumulate in a fixed
 * order. It needs a workspace of n uint32 (ct_embedding_workspace_size) and
 * costs O(n^2) integer compares (linking equal indices) plus O(n D) adds,
 * independent of V.
 *
 * y and dy are activations in the context's storage (ct_context_set_act16:
 * 16 bits at bf16/fp16, y each weight rounded once); W, dW and the ids
 * stay 32-bit.
 */
#ifndef CT_OPS_EMBEDDING_H
#define CT_OPS_EMBEDDING_H

#include "ops/ops.h"

/* Bytes of the backward's workspace for n indices. */
size_t ct_embedding_workspace_size(size_t n);

/* y (n, D) = W (V, D) rows picked by idx (n) int32. */
int ct_embedding_forward(ct_context *ctx, ct_buf y, ct_buf w, ct_buf idx, size_t n, size_t V,
                         size_t D);
/* dW (V, D) += dy (n, D) rows scattered by idx (n) int32; ws: (n) uint32
 * scratch, overwritten. */
int ct_embedding_backward(ct_context *ctx, ct_buf dw, ct_buf dy, ct_buf idx, ct_buf ws, size_t n,
                          size_t V, size_t D);

#endif /* CT_OPS_EMBEDDING_H */
