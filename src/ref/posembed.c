/*
 * posembed.c - reference position embedding, in double.
 */
#include "ref/posembed.h"

void ct_ref_posembed_forward(double *y, const double *x, const double *w, size_t T, size_t N,
                             size_t E)
{
    for (size_t t = 0; t < T; t++)
        for (size_t n = 0; n < N; n++)
            for (size_t e = 0; e < E; e++)
                y[(t * N + n) * E + e] = x[(t * N + n) * E + e] + w[t * E + e];
}

void ct_ref_posembed_backward(double *dx, double *dw, const double *dy, size_t T, size_t N,
                              size_t E)
{
    for (size_t t = 0; t < T; t++)
        for (size_t n = 0; n < N; n++)
            for (size_t e = 0; e < E; e++) {
                double g = dy[(t * N + n) * E + e];
                dw[t * E + e] += g;
                if (dx)
                    dx[(t * N + n) * E + e] = g;
            }
}
