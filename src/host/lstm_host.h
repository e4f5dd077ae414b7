/*
 * lstm_host.h - the LSTM's element-wise parts on the host pool (the CPU
 * class on the host GEMM path, CPUs with AVX-512), with the same meanings
 * as the kernels of cl_kernels/lstm.cl: with the products already on the
 * host BLAS, a layer's 2T steps then never leave the host. Exp, sigmoid and
 * tanh come from host/vmath512.h (within 1-3 ulp), so the bits differ from
 * the kernels' by a few ulp per activation; the bias sums are the kernels'
 * own order (bit for bit).
 */
#ifndef CT_HOST_LSTM_HOST_H
#define CT_HOST_LSTM_HOST_H

#include "ops/ops.h"

int ct_lstm_host_ok(const ct_context *ctx);

/* gates (rows, G) = b_ih + b_hh */
int ct_lstm_host_bias(ct_context *ctx, ct_buf gates, ct_buf bih, ct_buf bhh, size_t rows, size_t G);
/* one step forward (lstm_fwd_f32) */
int ct_lstm_host_fwd(ct_context *ctx, ct_buf gates, ct_buf c_prev, ct_buf c, ct_buf h, size_t N,
                     size_t H, int has_prev);
/* one step backward (lstm_bwd_f32) */
int ct_lstm_host_bwd(ct_context *ctx, ct_buf dgates, ct_buf gates, ct_buf c, ct_buf c_prev, ct_buf dh,
                     ct_buf dc, size_t N, size_t H, int has_prev);
/* db_ih, db_hh (G) += column sums of dgates (rows, G), rows in order */
int ct_lstm_host_dbias(ct_context *ctx, ct_buf dbih, ct_buf dbhh, ct_buf dgates, size_t rows, size_t G);

#endif /* CT_HOST_LSTM_HOST_H */
