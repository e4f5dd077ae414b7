/*
 * pool.h - reference pooling (max, average, global average), in double.
 */
#ifndef CT_REF_POOL_H
#define CT_REF_POOL_H

#include "ops/pool.h"
#include "ref/ref.h"

/* The geometry must be valid (ct_pool2d_validate); the output is
 * (N, C, OH, OW) with OH, OW from ct_pool_out_dim. */

/* x: (N, C, H, W), y: (N, C, OH, OW) */
void ct_ref_maxpool_forward(const ct_pool2d *p, double *y, const double *x);
/* dx = (written) (N, C, H, W), dy: (N, C, OH, OW), x: (N, C, H, W) */
void ct_ref_maxpool_backward(const ct_pool2d *p, double *dx, const double *dy, const double *x);
/* x: (N, C, H, W), y: (N, C, OH, OW) */
void ct_ref_avgpool_forward(const ct_pool2d *p, double *y, const double *x);
/* dx (written): (N, C, H, W), dy: (N, C, OH, OW) */
void ct_ref_avgpool_backward(const ct_pool2d *p, double *dx, const double *dy);
/* x: (N, C, H, W), y: (N, C) */
void ct_ref_global_avgpool_forward(double *y, const double *x, int n, int c, int h, int w);
/* dx (written): (N, C, H, W), dy: (N, C) */
void ct_ref_global_avgpool_backward(double *dx, const double *dy, int n, int c, int h, int w);

#endif /* CT_REF_POOL_H */
