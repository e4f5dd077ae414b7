/*
 * dropout.h - reference dropout: the mask from the host Philox
 * (src/core/philox.c), the same counters as cl_kernels/dropout.cl.
 */
#ifndef CT_REF_DROPOUT_H
#define CT_REF_DROPOUT_H

#include <stdint.h>

#include "ops/dropout.h"
#include "ref/ref.h"

/* keep[i] = 1 if element i survives, else 0. keep: (n) */
void ct_ref_dropout_mask(double *keep, size_t n, float p, uint64_t seed, uint32_t stream);
/* y = x * keep * ct_dropout_scale(p). x, y: (n) */
void ct_ref_dropout_forward(double *y, const double *x, size_t n, float p, uint64_t seed,
                            uint32_t stream);
/* dx = dy * keep * ct_dropout_scale(p). dy, dx: (n) */
void ct_ref_dropout_backward(double *dx, const double *dy, size_t n, float p, uint64_t seed,
                             uint32_t stream);

#endif /* CT_REF_DROPOUT_H */
