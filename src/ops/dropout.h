/*
 * dropout.h - inverted dropout (training only; at inference the layer is
 * the identity and no launcher is called). The mask comes from Philox keyed
 * by (seed, stream): the trainer passes its run seed and a stream that
 * changes every step and layer, and the backward regenerates the same mask
 * from the same pair. Layout of the counters: cl_kernels/dropout.cl.
 */
#ifndef CT_OPS_DROPOUT_H
#define CT_OPS_DROPOUT_H

#include <stdint.h>

#include "ops/ops.h"

/* The float factor kept elements are multiplied by: 1 / (1 - p), or 0 when
 * p = 1 (nothing is kept). Shared with the reference so both use one value. */
float ct_dropout_scale(float p);

/* y = x * keep / (1 - p), keep = u01(philox) >= p; y may alias x.
 * p in [0, 1]. x, y: (n) */
int ct_dropout_forward(ct_context *ctx, ct_buf y, ct_buf x, size_t n, float p, uint64_t seed,
                       uint32_t stream);
/* dx = dy * keep / (1 - p) with the forward's mask (same p, seed, stream);
 * dx may alias dy. dy, dx: (n) */
int ct_dropout_backward(ct_context *ctx, ct_buf dx, ct_buf dy, size_t n, float p, uint64_t seed,
                        uint32_t stream);

/* The same on elements [first, first + n) of a larger tensor: the mask is
 * that slice of the whole tensor's mask (a data-parallel replica's rows). */
int ct_dropout_forward_at(ct_context *ctx, ct_buf y, ct_buf x, size_t n, size_t first, float p,
                          uint64_t seed, uint32_t stream);
int ct_dropout_backward_at(ct_context *ctx, ct_buf dx, ct_buf dy, size_t n, size_t first, float p,
                           uint64_t seed, uint32_t stream);

#endif /* CT_OPS_DROPOUT_H */
