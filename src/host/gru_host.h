/*
 * gru_host.h - the GRU's step kernels on the host pool (the CPU class on
 * the host GEMM path, CPUs with AVX-512), with the same meanings as
 * gru_fwd_f32 and gru_bwd_f32 of cl_kernels/gru.cl: with the products
 * already on the host BLAS, a layer's 2T steps then never leave the host
 * (no unmapping and mapping of the arenas around each step's kernel).
 * Exp, sigmoid and tanh come from host/vmath512.h (within 1-3 ulp), so the
 * bits differ from the kernels' by a few ulp per activation.
 */
#ifndef CT_HOST_GRU_HOST_H
#define CT_HOST_GRU_HOST_H

#include "ops/ops.h"

int ct_gru_host_ok(const ct_context *ctx);

/* one step forward (gru_fwd_f32): gates (N, 3H) in place, gh (N, 3H),
 * b_ih, b_hh (3H), h_prev (N, H) (gh, h_prev read when has_prev), ghn and
 * h (N, H) written */
int ct_gru_host_fwd(ct_context *ctx, ct_buf gates, ct_buf gh, ct_buf bih, ct_buf bhh, ct_buf h_prev,
                    ct_buf ghn, ct_buf h, size_t N, size_t H, int has_prev);
/* one step backward (gru_bwd_f32): dgi, dgh (N, 3H) written from gates
 * (N, 3H), ghn, h_prev and dh (N, H); dh_prev (N, H) += dh z when has_prev */
int ct_gru_host_bwd(ct_context *ctx, ct_buf dgi, ct_buf dgh, ct_buf gates, ct_buf ghn, ct_buf h_prev,
                    ct_buf dh, ct_buf dh_prev, size_t N, size_t H, int has_prev);

#endif /* CT_HOST_GRU_HOST_H */
