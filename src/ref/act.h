/*
 * act.h - reference activations.
 */
#ifndef CT_REF_ACT_H
#define CT_REF_ACT_H

#include "ops/act.h"
#include "ref/ref.h"

double ct_ref_act_f(ct_act act, double x);
double ct_ref_act_df(ct_act act, double x);
void ct_ref_act_forward(ct_act act, double *y, const double *x, size_t n);
void ct_ref_act_backward(ct_act act, double *dx, const double *dy, const double *x, size_t n);

#endif /* CT_REF_ACT_H */
