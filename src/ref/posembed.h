/*
 * posembed.h - reference position embedding (same contract as
 * src/ops/posembed.h), in double.
 */
#ifndef CT_REF_POSEMBED_H
#define CT_REF_POSEMBED_H

#include "ref/ref.h"

/* y (T, N, E) = x (T, N, E) + w (>= T, E) per position */
void ct_ref_posembed_forward(double *y, const double *x, const double *w, size_t T, size_t N,
                             size_t E);
/* dx (T, N, E) = dy (unless NULL); dw rows 0 .. T-1 += dy summed over n */
void ct_ref_posembed_backward(double *dx, double *dw, const double *dy, size_t T, size_t N,
                              size_t E);

#endif /* CT_REF_POSEMBED_H */
