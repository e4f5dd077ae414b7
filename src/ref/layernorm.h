/*
 * layernorm.h - reference layer normalization (same contract as
 * src/ops/layernorm.h), in double.
 */
#ifndef CT_REF_LAYERNORM_H
#define CT_REF_LAYERNORM_H

#include "ref/ref.h"

/* y (R, F), mean (R), rstd (R) (either may be NULL) from x (R, F), w, b (F) */
void ct_ref_layernorm_forward(double *y, double *mean, double *rstd, const double *x,
                              const double *w, const double *b, size_t R, size_t F, double eps);
/* dx (R, F) written (unless NULL), dw and db (F) accumulated; the row
 * statistics are computed again from x */
void ct_ref_layernorm_backward(double *dx, double *dw, double *db, const double *dy,
                               const double *x, const double *w, size_t R, size_t F, double eps);

#endif /* CT_REF_LAYERNORM_H */
