/*
 * eltwise.c - reference element-wise arithmetic, in double.
 */
#include <math.h>

#include "ref/eltwise.h"

void ct_ref_add_forward(double *y, const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = a[i] + b[i];
}

void ct_ref_add_backward(double *da, double *db, const double *dy, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (da)
            da[i] = dy[i];
        if (db)
            db[i] = dy[i];
    }
}

void ct_ref_add_accumulate(double *dst, const double *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] += src[i];
}

void ct_ref_scale(double *x, double s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] *= s;
}

void ct_ref_axpy(double *y, double a, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] += a * x[i];
}

size_t ct_ref_nonfinite_count(const double *x, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += !isfinite((float)x[i]);
    return c;
}

void ct_ref_mul_forward(double *y, const double *x, const double *g, size_t rows, size_t hw)
{
    for (size_t r = 0; r < rows; r++)
        for (size_t p = 0; p < hw; p++)
            y[r * hw + p] = x[r * hw + p] * g[r];
}

void ct_ref_mul_backward(double *dx, double *dg, const double *dy, const double *x, const double *g,
                         size_t rows, size_t hw)
{
    for (size_t r = 0; r < rows; r++) {
        double s = 0;
        for (size_t p = 0; p < hw; p++) {
            if (dx)
                dx[r * hw + p] = dy[r * hw + p] * g[r];
            s += dy[r * hw + p] * x[r * hw + p];
        }
        if (dg)
            dg[r] = s;
    }
}
