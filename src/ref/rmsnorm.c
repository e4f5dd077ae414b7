/*
 * rmsnorm.c - reference RMS normalization, in double.
 */
#include <math.h>

#include "ref/rmsnorm.h"

static double row_rstd(const double *xr, size_t F, double eps)
{
    double s = 0;
    for (size_t f = 0; f < F; f++)
        s += xr[f] * xr[f];
    return 1.0 / sqrt(s / (double)F + eps);
}

void ct_ref_rmsnorm_forward(double *y, double *rstd, const double *x, const double *w, size_t R, size_t F,
                            double eps)
{
    for (size_t r = 0; r < R; r++) {
        const double *xr = x + r * F;
        double is = row_rstd(xr, F, eps);
        for (size_t f = 0; f < F; f++)
            y[r * F + f] = xr[f] * is * w[f];
        if (rstd)
            rstd[r] = is;
    }
}

void ct_ref_rmsnorm_backward(double *dx, double *dw, const double *dy, const double *x, const double *w,
                             size_t R, size_t F, double eps)
{
    for (size_t r = 0; r < R; r++) {
        const double *xr = x + r * F, *dr = dy + r * F;
        double is = row_rstd(xr, F, eps), sgx = 0;
        for (size_t f = 0; f < F; f++) {
            sgx += dr[f] * w[f] * xr[f] * is;
            dw[f] += dr[f] * xr[f] * is;
        }
        for (size_t f = 0; f < F && dx; f++)
            dx[r * F + f] = is * (dr[f] * w[f] - xr[f] * is * sgx / (double)F);
    }
}
