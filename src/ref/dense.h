/*
 * dense.h - reference dense layer and per-channel bias + activation.
 */
#ifndef CT_REF_DENSE_H
#define CT_REF_DENSE_H

#include "ops/act.h"
#include "ref/ref.h"

/* y = x W^T + b; b may be NULL.
 * x: (n, in); w: (out, in); b: (out); y: (n, out) */
void ct_ref_dense_forward(double *y, const double *x, const double *w, const double *b, int n,
                          int in, int out);
/* dx = dy W; dw += dy^T x; db += column sums of dy. NULL outputs are skipped.
 * dy: (n, out); x, dx: (n, in); w, dw: (out, in); db: (out) */
void ct_ref_dense_backward(double *dx, double *dw, double *db, const double *dy, const double *x,
                           const double *w, int n, int in, int out);
/* y = act(x + b[channel]); b may be NULL. x, y: (n, c, hw); b: (c) */
void ct_ref_bias_act_forward(double *y, const double *x, const double *b, int n, int c, int hw,
                             ct_act act);
/* db += sum of dy over n and hw. dy: (n, c, hw); db: (c) */
void ct_ref_bias_backward(double *db, const double *dy, int n, int c, int hw);

#endif /* CT_REF_DENSE_H */
