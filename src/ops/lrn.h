/*
 * lrn.h - local response normalization across channels, PyTorch semantics
 * (torch.nn.functional.local_response_norm):
 *
 *   y_c = x_c / (k + alpha/size * sum_{c' = c - size/2}^{c + (size-1)/2} x_{c'}^2)^beta
 *
 * channels outside [0, C) counting as zeros (for an even size the window
 * reaches one channel further back than forward, as PyTorch pads).
 */
#ifndef CT_OPS_LRN_H
#define CT_OPS_LRN_H

#include "ops/ops.h"

typedef struct ct_lrn {
    int size;    /* channels in the window, >= 1 */
    float alpha; /* >= 0; divided by size, as PyTorch does */
    float beta;
    float k;     /* > 0, so the base of the power stays positive */
} ct_lrn;

/* y = lrn(x); when scale.mem is set, also saves scale = (k + alpha/size *
 * sum x^2)^-beta, the factor y = x * scale, for the backward.
 * x, y, scale: (N, C, HW) with HW = H*W (1 after a dense layer). */
int ct_lrn_forward(ct_context *ctx, const ct_lrn *p, ct_buf y, ct_buf x, ct_buf scale, int n,
                   int c, int hw);
/* dx from dy, the forward input x and the scale the forward saved (same
 * parameters and x). dx, dy, x, scale: (N, C, HW). dx is written. */
int ct_lrn_backward(ct_context *ctx, const ct_lrn *p, ct_buf dx, ct_buf dy, ct_buf x, ct_buf scale,
                    int n, int c, int hw);

#endif /* CT_OPS_LRN_H */
