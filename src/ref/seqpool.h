/*
 * seqpool.h - reference sequence pooling (same contract as
 * src/ops/seqpool.h), in double.
 */
#ifndef CT_REF_SEQPOOL_H
#define CT_REF_SEQPOOL_H

#include <stdint.h>

#include "ops/seqpool.h"
#include "ref/ref.h"

/* y (N, F), x (T, N, F), tokens (T, N) int32 or NULL; argmax (N, F) gets
 * the chosen t for max (-1 with no position) unless NULL. */
void ct_ref_seqpool_forward(ct_seqpool_mode mode, double *y, int32_t *argmax, const double *x,
                            const int32_t *tokens, size_t T, size_t N, size_t F);
/* dx (T, N, F) written, dy (N, F); x (T, N, F) gives max its argmax again. */
void ct_ref_seqpool_backward(ct_seqpool_mode mode, double *dx, const double *dy, const double *x,
                             const int32_t *tokens, size_t T, size_t N, size_t F);

#endif /* CT_REF_SEQPOOL_H */
