/*
 * eltwise.h - reference element-wise arithmetic, in double.
 */
#ifndef CT_REF_ELTWISE_H
#define CT_REF_ELTWISE_H

#include "ops/eltwise.h"
#include "ref/ref.h"

/* y = a + b; all (n), y may alias a or b */
void ct_ref_add_forward(double *y, const double *a, const double *b, size_t n);
/* da = dy, db = dy (written; either may be NULL); all (n) */
void ct_ref_add_backward(double *da, double *db, const double *dy, size_t n);
/* dst += src; (n) */
void ct_ref_add_accumulate(double *dst, const double *src, size_t n);
/* x *= s; (n) */
void ct_ref_scale(double *x, double s, size_t n);
/* y += a x; (n) */
void ct_ref_axpy(double *y, double a, const double *x, size_t n);
/* y = x g, g one value per row of hw: y, x (rows hw), g (rows) */
void ct_ref_mul_forward(double *y, const double *x, const double *g, size_t rows, size_t hw);
/* dx = dy g, dg = the rows' sums of dy x (written; either may be NULL) */
void ct_ref_mul_backward(double *dx, double *dg, const double *dy, const double *x, const double *g,
                         size_t rows, size_t hw);
/* how many x[i] are NaN or +-Inf once rounded to float; (n) */
size_t ct_ref_nonfinite_count(const double *x, size_t n);

#endif /* CT_REF_ELTWISE_H */
