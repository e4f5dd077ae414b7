/*
 * upsample.h - reference upsampling (same contract as src/ops/upsample.h),
 * in double.
 */
#ifndef CT_REF_UPSAMPLE_H
#define CT_REF_UPSAMPLE_H

#include "ref/ref.h"

void ct_ref_upsample_forward(double *y, const double *x, size_t planes, int h, int w, int S, int bilinear);
/* dx written */
void ct_ref_upsample_backward(double *dx, const double *dy, size_t planes, int h, int w, int S, int bilinear);

#endif /* CT_REF_UPSAMPLE_H */
