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

#endif /* CT_REF_ATTENTION_H */
