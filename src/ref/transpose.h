/*
 * transpose.h - reference batched transpose (see src/ops/transpose.h).
 */
#ifndef CT_REF_TRANSPOSE_H
#define CT_REF_TRANSPOSE_H

#include <stddef.h>

#include "ref/ref.h"

/* dst[b dn + c cs + r] = src[b sn + r rs + c] for b < batch, r < R, c < C */
void ct_ref_transpose(double *dst, const double *src, size_t batch, size_t R, size_t C, size_t sn, size_t rs,
                      size_t dn, size_t cs);

#endif /* CT_REF_TRANSPOSE_H */
