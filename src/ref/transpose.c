/*
 * transpose.c - reference batched transpose, element by element.
 */
#include "ref/transpose.h"

void ct_ref_transpose(double *dst, const double *src, size_t batch, size_t R, size_t C, size_t sn, size_t rs,
                      size_t dn, size_t cs)
{
    for (size_t b = 0; b < batch; b++)
        for (size_t r = 0; r < R; r++)
            for (size_t c = 0; c < C; c++)
                dst[b * dn + c * cs + r] = src[b * sn + r * rs + c];
}
