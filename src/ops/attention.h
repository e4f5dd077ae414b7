/*
 * attention.h - multi-head self-attention on a sequence, as PyTorch's
 * nn.MultiheadAttention with query = key = value = x:
 *
 *   [q k v] = x W_in^T + b_in                 (T, N, 3E)
 *   P_nh    = softmax(q_nh k_nh^T / sqrt(D))  (T, T) per sample n, head h
 *   o_nh    = P_nh v_nh                       (T, D), D = E / H
 *   y       = o W_out^T + b_out               (T, N, E)
 *
 * where q_nh is the (T, D) slice of sample n's queries in columns
 * h D .. h D + D - 1. Causal: position i's softmax covers keys 0 .. i only
 * (the others get probability 0).
 *
 * Layout: x, y, o, qkv are time-major, element [t][n][e] at (t N + n) E' + e
 * (E' = E or 3E), so a head's slice is a strided matrix (row stride N E')
 * that ct_gemm reads in place: no reorder. The parameters are one flat
 * array in PyTorch's order: in_proj_weight (3E, E), in_proj_bias (3E),
 * out_proj.weight (E, E), out_proj.bias (E).
 *
 * The products go through ct_gemm, one call per (sample, head) pair for
 * the per-head ones (CLBlast on the GPU class, the host BLAS on the CPU
 * class); the masked softmax and its backward are one kernel each
 * (cl_kernels/attention.cl), one work-item per row, max-subtracted, in a
 * fixed order: deterministic.
 */
#ifndef CT_OPS_ATTENTION_H
#define CT_OPS_ATTENTION_H

#include "ops/ops.h"

typedef struct ct_attention_desc {
    size_t T, N, E, H; /* steps, batch, embedding, heads (H divides E) */
    int causal;        /* a query sees its own position and earlier ones */
} ct_attention_desc;

/* Floats of the flat parameters: 3E E + 3E + E E + E. */
size_t ct_attention_params(const ct_attention_desc *d);
/* Floats the forward saves for the backward: qkv (T, N, 3E), o (T, N, E)
 * and the probabilities P (N, H, T, T), in that order. */
size_t ct_attention_saved(const ct_attention_desc *d);
/* Floats of the backward's workspace: do (T, N, E), dqkv (T, N, 3E) and
 * dP (N, H, T, T). */
size_t ct_attention_work(const ct_attention_desc *d);

/* y (T, N, E) from x (T, N, E) and w (flat parameters); saved
 * (ct_attention_saved floats) receives qkv, o and P. */
int ct_attention_forward(ct_context *ctx, const ct_attention_desc *d, ct_buf y, ct_buf saved,
                         ct_buf x, ct_buf w);
/* dx (T, N, E) = (written; skipped when dx.mem is NULL), dw (flat) +=,
 * from dy (T, N, E), x, w and the forward's saved tensors; work holds
 * ct_attention_work floats. */
int ct_attention_backward(ct_context *ctx, const ct_attention_desc *d, ct_buf dx, ct_buf dw,
                          ct_buf dy, ct_buf x, ct_buf w, ct_buf saved, ct_buf work);

#endif /* CT_OPS_ATTENTION_H */
