/*
 * batchnorm.h - reference batch normalisation over (N, C, HW), the
 * launchers' arguments and contract (src/ops/batchnorm.h) in double.
 */
#ifndef CT_REF_BATCHNORM_H
#define CT_REF_BATCHNORM_H

#include "ops/batchnorm.h"
#include "ref/ref.h"

/* running_mean and running_var (updated in place) may both be NULL.
 * x, y: (N, C, HW); gamma, beta, save_mean, save_invstd, running_*: (C) */
void ct_ref_batchnorm_forward_train(double *y, double *save_mean, double *save_invstd,
                                    double *running_mean, double *running_var, const double *x,
                                    const double *gamma, const double *beta, size_t N, size_t C,
                                    size_t HW, double momentum, double eps, int relu);
void ct_ref_batchnorm_forward_eval(double *y, const double *x, const double *gamma,
                                   const double *beta, const double *running_mean,
                                   const double *running_var, size_t N, size_t C, size_t HW,
                                   double eps, int relu);
/* dx written, dgamma and dbeta accumulated; y read only when relu. */
void ct_ref_batchnorm_backward_train(double *dx, double *dgamma, double *dbeta, const double *dy,
                                     const double *x, const double *y, const double *gamma,
                                     const double *save_mean, const double *save_invstd, size_t N,
                                     size_t C, size_t HW, int relu);
void ct_ref_batchnorm_backward_eval(double *dx, double *dgamma, double *dbeta, const double *dy,
                                    const double *x, const double *y, const double *gamma,
                                    const double *running_mean, const double *running_var,
                                    size_t N, size_t C, size_t HW, double eps, int relu);

#endif /* CT_REF_BATCHNORM_H */
