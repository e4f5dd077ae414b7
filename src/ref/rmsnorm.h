/*
 * rmsnorm.h - reference RMS normalization (same contract as
 * src/ops/rmsnorm.h), in double.
 */
#ifndef CT_REF_RMSNORM_H
#define CT_REF_RMSNORM_H

#include "ref/ref.h"

/* y (R, F), rstd (R) (may be NULL) from x (R, F), w (F) */
void ct_ref_rmsnorm_forward(double *y, double *rstd, const double *x, const double *w, size_t R, size_t F,
                            double eps);
/* dx (R, F) written (unless NULL), dw (F) accumulated; rstd computed again
 * from x */
void ct_ref_rmsnorm_backward(double *dx, double *dw, const double *dy, const double *x, const double *w,
                             size_t R, size_t F, double eps);

#endif /* CT_REF_RMSNORM_H */
