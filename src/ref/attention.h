/*
 * attention.h - reference multi-head self-attention (same layouts and
 * contract as src/ops/attention.h), in double. The backward recomputes
 * the forward itself, so it needs no saved tensors. Return CT_OK, or
 * CT_ERR_NO_MEMORY.
 */
#ifndef CT_REF_ATTENTION_H
#define CT_REF_ATTENTION_H

#include "ops/attention.h"
#include "ref/ref.h"

/* y (T, N, E) from x (T, N, E) and w (flat: in_proj_weight, in_proj_bias,
 * out_proj.weight, out_proj.bias); p (N, H, T, T) gets the probabilities
 * unless NULL. */
int ct_ref_attention_forward(const ct_attention_desc *d, double *y, double *p, const double *x,
                             const double *w);
/* dx (T, N, E) = (unless NULL), dw (flat) +=, from dy (T, N, E). */
int ct_ref_attention_backward(const ct_attention_desc *d, double *dx, double *dw, const double *dy,
                              const double *x, const double *w);

/* What products of 16-bit operands add to the device's error, as bounds
 * per element: every product's operands (x, w, dy exact; the forward's and
 * backward's intermediates as the device holds them, within their own
 * bounds) rounded with relative error u and absolute error s (fp16's
 * subnormal step; 0 for bf16), each rounded pair's product off by at most
 * ra |b| + |a| rb + ra rb (ra = ea + u (|a| + ea) + s); the softmax's
 * probabilities within p (exp(e_i + max_j e_j) - 1) of the exact ones when
 * their scores are within e; the softmax's backward and the bias
 * gradients' column sums in float32, so only their inputs' bounds carry.
 * Beyond float32's own rounding (the caller's float32 tolerance adds to
 * these). With stored, every intermediate the device keeps (q, k, v, the
 * scores, probabilities, o, dO, dP, dS, dq, dk, dv: 16-bit activation
 * storage) is rounded once more when stored, e + u (|v| + e) + s; a bound
 * that also counts the product's own rounding of an operand already
 * stored (an upper bound, one rounding above the tightest). Any of ey
 * (T, N, E), edx (T, N, E), edw (flat) may be NULL but edw. CT_OK or
 * CT_ERR_NO_MEMORY. */
int ct_ref_attention_bound16(const ct_attention_desc *d, double u, double s, int stored, double *ey,
                             double *edx, double *edw, const double *dy, const double *x, const double *w);

#endif /* CT_REF_ATTENTION_H */
