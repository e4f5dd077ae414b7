/*
 * posembed.h - a learned position embedding added to a sequence:
 * y[t, n, :] = x[t, n, :] + w[t, :], x and y (T, N, E) time-major (element
 * [t][n][e] at (t N + n) E + e, as the embedding's output), w (max_len, E)
 * of which rows 0 .. T-1 are used.
 *
 * The backward writes dx = dy and accumulates dw[t, :] += sum over n of
 * dy[t, n, :]: one work-item per (t, e) walks n in order, deterministic,
 * no atomics. Rows t >= T of dw are left as they are.
 *
 * x, y, dy and dx are activations in the context's storage
 * (ct_context_set_act16: 16 bits at bf16/fp16, y the float sum rounded
 * once); w and dw stay float.
 */
#ifndef CT_OPS_POSEMBED_H
#define CT_OPS_POSEMBED_H

#include "ops/ops.h"

/* y (T, N, E) = x (T, N, E) + w (max_len, E) per position; T <= max_len
 * is the caller's; y may alias x */
int ct_posembed_forward(ct_context *ctx, ct_buf y, ct_buf x, ct_buf w, size_t T, size_t N,
                        size_t E);
/* dx (T, N, E) = dy (skipped when dx.mem is NULL); dw (max_len, E): rows
 * 0 .. T-1 += dy summed over n */
int ct_posembed_backward(ct_context *ctx, ct_buf dx, ct_buf dw, ct_buf dy, size_t T, size_t N,
                         size_t E);

#endif /* CT_OPS_POSEMBED_H */
