/*
 * embedding.h - reference embedding lookup (same contract as
 * src/ops/embedding.h: an index outside [0, V) gives NaN forward and is
 * skipped backward).
 */
#ifndef CT_REF_EMBEDDING_H
#define CT_REF_EMBEDDING_H

#include <stdint.h>

#include "ref/ref.h"

/* y (n, D), w (V, D), idx (n) */
void ct_ref_embedding_forward(double *y, const double *w, const int32_t *idx, size_t n, size_t V,
                              size_t D);
/* dw (V, D) +=, dy (n, D), idx (n) */
void ct_ref_embedding_backward(double *dw, const double *dy, const int32_t *idx, size_t n,
                               size_t V, size_t D);

#endif /* CT_REF_EMBEDDING_H */
