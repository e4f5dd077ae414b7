/*
 * lrn.h - reference local response normalization, in double.
 */
#ifndef CT_REF_LRN_H
#define CT_REF_LRN_H

#include "ops/lrn.h"
#include "ref/ref.h"

/* x, y: (N, C, HW) */
void ct_ref_lrn_forward(const ct_lrn *p, double *y, const double *x, int n, int c, int hw);
/* dx (written), dy, x: (N, C, HW) */
void ct_ref_lrn_backward(const ct_lrn *p, double *dx, const double *dy, const double *x, int n,
                         int c, int hw);

#endif /* CT_REF_LRN_H */
