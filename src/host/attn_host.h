/*
 * attn_host.h - attention's masked softmax over rows of scores and its
 * backward on the host pool (attn_host.c), for the CPU class on AVX-512
 * CPUs, with the meanings of attn_softmax_fwd_rows_f32 and
 * attn_softmax_bwd_rows_f32 (cl_kernels/attention.cl): rows (N H T, T),
 * row r is query i = r mod T; causal rows cover keys 0 .. i and the rest
 * are written 0. src/ops/attention.c calls these where
 * ct_attn_host_ok says so; the per-head products around them already run
 * on the host (the CPU class's GEMM path).
 */
#ifndef CT_HOST_ATTN_HOST_H
#define CT_HOST_ATTN_HOST_H

#include "ops/ops.h"

/* Score counts (rows T) below this stay with the kernels (a host op maps
 * its buffers: a blocking call where no mapping is held). */
#define CT_ATTN_HOST_MIN 4096

int ct_attn_host_ok(const ct_context *ctx, size_t rows, size_t T);

/* p (rows, T): scaled scores in, probabilities out */
int ct_attn_host_softmax_forward(ct_context *ctx, ct_buf p, size_t rows, size_t T, int causal);
/* d (rows, T): dP in, dS = P (dP - sum_j dP_j P_j) out; p the probabilities */
int ct_attn_host_softmax_backward(ct_context *ctx, ct_buf d, ct_buf p, size_t rows, size_t T, int causal);

#endif /* CT_HOST_ATTN_HOST_H */
