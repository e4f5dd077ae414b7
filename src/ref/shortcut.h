/*
 * shortcut.h - reference option-A shortcut, in double.
 */
#ifndef CT_REF_SHORTCUT_H
#define CT_REF_SHORTCUT_H

#include "ops/shortcut.h"
#include "ref/ref.h"

/* x: (N, C, H, W), y: (N, out_channels, ceil(H/stride), ceil(W/stride)) */
void ct_ref_shortcut_a_forward(double *y, const double *x, int n, int c, int h, int w, int stride,
                               int out_channels);
/* dx (written): (N, C, H, W), dy: (N, out_channels, ceil(H/stride), ceil(W/stride)) */
void ct_ref_shortcut_a_backward(double *dx, const double *dy, int n, int c, int h, int w,
                                int stride, int out_channels);

#endif /* CT_REF_SHORTCUT_H */
