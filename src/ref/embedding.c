/*
 * embedding.c - reference embedding lookup, in double.
 */
#include <math.h>

#include "ref/embedding.h"

void ct_ref_embedding_forward(double *y, const double *w, const int32_t *idx, size_t n, size_t V,
                              size_t D)
{
    for (size_t i = 0; i < n; i++) {
        int valid = idx[i] >= 0 && (size_t)idx[i] < V;
        for (size_t d = 0; d < D; d++)
            y[i * D + d] = valid ? w[(size_t)idx[i] * D + d] : NAN;
    }
}

void ct_ref_embedding_backward(double *dw, const double *dy, const int32_t *idx, size_t n,
                               size_t V, size_t D)
{
    for (size_t i = 0; i < n; i++) {
        if (idx[i] < 0 || (size_t)idx[i] >= V)
            continue;
        for (size_t d = 0; d < D; d++)
            dw[(size_t)idx[i] * D + d] += dy[i * D + d];
    }
}
