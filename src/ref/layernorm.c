/*
 * layernorm.c - reference layer normalization, in double.
 */
#include <math.h>

#include "ref/layernorm.h"

static void stats(const double *xr, size_t F, double eps, double *mu, double *is)
{
    double s = 0, v = 0;
    for (size_t f = 0; f < F; f++)
        s += xr[f];
    *mu = s / (double)F;
    for (size_t f = 0; f < F; f++)
        v += (xr[f] - *mu) * (xr[f] - *mu);
    *is = 1.0 / sqrt(v / (double)F + eps);
}

void ct_ref_layernorm_forward(double *y, double *mean, double *rstd, const double *x,
                              const double *w, const double *b, size_t R, size_t F, double eps)
{
    for (size_t r = 0; r < R; r++) {
        double mu, is;
        stats(x + r * F, F, eps, &mu, &is);
        for (size_t f = 0; f < F; f++)
            y[r * F + f] = (x[r * F + f] - mu) * is * w[f] + b[f];
        if (mean)
            mean[r] = mu;
        if (rstd)
            rstd[r] = is;
    }
}

void ct_ref_layernorm_backward(double *dx, double *dw, double *db, const double *dy,
                               const double *x, const double *w, size_t R, size_t F, double eps)
{
    for (size_t r = 0; r < R; r++) {
        const double *xr = x + r * F, *gr = dy + r * F;
        double mu, is, sg = 0, sgx = 0;
        stats(xr, F, eps, &mu, &is);
        for (size_t f = 0; f < F; f++) {
            double xh = (xr[f] - mu) * is;
            sg += gr[f] * w[f];
            sgx += gr[f] * w[f] * xh;
            dw[f] += gr[f] * xh;
            db[f] += gr[f];
        }
        for (size_t f = 0; dx && f < F; f++) {
            double xh = (xr[f] - mu) * is;
            dx[r * F + f] = is * (gr[f] * w[f] - sg / (double)F - xh * sgx / (double)F);
        }
    }
}
