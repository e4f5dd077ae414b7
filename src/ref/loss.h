/*
 * loss.h - reference losses, mean over the batch (see src/ops/loss.h).
 */
#ifndef CT_REF_LOSS_H
#define CT_REF_LOSS_H

#include <stdint.h>

#include "ops/loss.h"
#include "ref/ref.h"

/* *loss = mean_r (logsumexp(x_r) - x_r[labels_r]), *correct = #rows whose
 * first argmax is the label; a label outside [0, K) gives a NaN loss and
 * is not counted. x: (N, K), labels: (N) */
void ct_ref_softmax_xent_forward(double *loss, double *correct, const double *x,
                                 const int32_t *labels, size_t N, size_t K);
/* dx = (softmax(x) - onehot) / N * dloss_scale; NaN rows for bad labels.
 * x, dx: (N, K), labels: (N) */
void ct_ref_softmax_xent_backward(double *dx, const double *x, const int32_t *labels, size_t N,
                                  size_t K, double dloss_scale);

/* *loss = mean((x - t)^2), *mae = mean(|x - t|) (mae may be NULL). x, t: (n) */
void ct_ref_mse_forward(double *loss, double *mae, const double *x, const double *t, size_t n);
/* binary cross-entropy on logits: the mean loss and the right labels'
 * count / K (correct may be NULL); its gradients (dt may be NULL) */
void ct_ref_bce_forward(double *loss, double *correct, const double *x, const double *t, size_t n, size_t K);
void ct_ref_bce_backward(double *dx, double *dt, const double *x, const double *t, size_t n, double dloss_scale);
/* dx = 2 (x - t) / n * dloss_scale, dt = -dx (dt may be NULL). x, t, dx, dt: (n) */
void ct_ref_mse_backward(double *dx, double *dt, const double *x, const double *t, size_t n,
                         double dloss_scale);

#endif /* CT_REF_LOSS_H */
