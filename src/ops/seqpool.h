/*
 * seqpool.h - pooling a sequence over time, (T, N, F) -> (N, F): the mean,
 * the max or the last vector of each sample's positions that are not
 * padding.
 *
 * Layout: x and dx are time-major, element [t][n][f] at (t N + n) F + f, as
 * the LSTM's output; tokens (T, N) int32 are the model's token ids, laid
 * out the same way, and a position whose id is 0 (the pad id) is padding.
 * With no tokens (tokens.mem NULL) every position counts. A sample with no
 * position left gives zeros forward and a zero gradient.
 *
 * max: the first maximum, or the last NaN if the column holds any (the
 * maxpool's rule); the forward records its t as int32 in argmax (-1 for a
 * sample with no position) and the backward routes dy there. last: the
 * latest real position (for a sequence padded at its end, the last token).
 *
 * One work-item per (n, f) walks t in order: deterministic, no atomics.
 */
#ifndef CT_OPS_SEQPOOL_H
#define CT_OPS_SEQPOOL_H

#include "ops/ops.h"

typedef enum ct_seqpool_mode {
    CT_SEQPOOL_MEAN,
    CT_SEQPOOL_MAX,
    CT_SEQPOOL_LAST,
} ct_seqpool_mode;

/* y (N, F) = x (T, N, F) pooled over t; tokens (T, N) int32 or none;
 * argmax (N, F) int32, written for max when argmax.mem is set. */
int ct_seqpool_forward(ct_context *ctx, ct_seqpool_mode mode, ct_buf y, ct_buf argmax, ct_buf x,
                       ct_buf tokens, size_t T, size_t N, size_t F);
/* dx (T, N, F) = dy (N, F) spread over the positions y came from: dy / count
 * at every real position (mean), dy at the recorded argmax (N, F) int32
 * (max; required) or at the last real position (last); 0 elsewhere.
 * tokens as the forward's. dx is written. */
int ct_seqpool_backward(ct_context *ctx, ct_seqpool_mode mode, ct_buf dx, ct_buf dy, ct_buf argmax,
                        ct_buf tokens, size_t T, size_t N, size_t F);

#endif /* CT_OPS_SEQPOOL_H */
