/*
 * transpose.h - batched 2-D transposes between strided layouts
 * (cl_kernels/transpose.cl), and the image <-> sequence reorders built on
 * them.
 */
#ifndef CT_OPS_TRANSPOSE_H
#define CT_OPS_TRANSPOSE_H

#include "ops/ops.h"

/* For b < batch, r < R, c < C: dst[b dn + c cs + r] = src[b sn + r rs + c].
 * The regions must not overlap. */
int ct_transpose(ct_context *ctx, ct_buf dst, ct_buf src, size_t batch, size_t R, size_t C, size_t sn, size_t rs,
                 size_t dn, size_t cs);

/* Images (n, e, t) as a sequence (t, n, e) (t = H W steps of e features,
 * the batch after the step) and back: y[t][i][k] = x[i][k][t]. */
int ct_image_to_seq(ct_context *ctx, ct_buf y, ct_buf x, size_t n, size_t e, size_t t);
int ct_seq_to_image(ct_context *ctx, ct_buf x, ct_buf y, size_t n, size_t e, size_t t);

#endif /* CT_OPS_TRANSPOSE_H */
