/*
 * seqpool.c - reference sequence pooling, in double.
 */
#include <math.h>

#include "ref/seqpool.h"

static int real(const int32_t *tokens, size_t t, size_t n, size_t N)
{
    return !tokens || tokens[t * N + n] != 0;
}

/* The t that y[n][f] comes from (mean: none, -1), or -1 with no position;
 * *count gets the real positions of sample n. */
static long pick(ct_seqpool_mode mode, const double *x, const int32_t *tokens, size_t T, size_t N,
                 size_t F, size_t n, size_t f, size_t *count)
{
    long best = -1;
    *count = 0;
    for (size_t t = 0; t < T; t++) {
        if (!real(tokens, t, n, N))
            continue;
        ++*count;
        double v = x[(t * N + n) * F + f];
        if (mode == CT_SEQPOOL_LAST ||
            (mode == CT_SEQPOOL_MAX && (best < 0 || v > x[((size_t)best * N + n) * F + f] || isnan(v))))
            best = (long)t;
    }
    return mode == CT_SEQPOOL_MEAN ? -1 : best;
}

void ct_ref_seqpool_forward(ct_seqpool_mode mode, double *y, int32_t *argmax, const double *x,
                            const int32_t *tokens, size_t T, size_t N, size_t F)
{
    for (size_t n = 0; n < N; n++)
        for (size_t f = 0; f < F; f++) {
            size_t count = 0;
            long t = pick(mode, x, tokens, T, N, F, n, f, &count);
            double out = 0;
            if (mode == CT_SEQPOOL_MEAN) {
                for (size_t s = 0; s < T; s++)
                    if (real(tokens, s, n, N))
                        out += x[(s * N + n) * F + f];
                out = count ? out / (double)count : 0.0;
            } else if (t >= 0) {
                out = x[((size_t)t * N + n) * F + f];
            }
            y[n * F + f] = out;
            if (argmax && mode == CT_SEQPOOL_MAX)
                argmax[n * F + f] = (int32_t)t;
        }
}

void ct_ref_seqpool_backward(ct_seqpool_mode mode, double *dx, const double *dy, const double *x,
                             const int32_t *tokens, size_t T, size_t N, size_t F)
{
    for (size_t n = 0; n < N; n++)
        for (size_t f = 0; f < F; f++) {
            size_t count = 0;
            long at = pick(mode, x, tokens, T, N, F, n, f, &count);
            double g = dy[n * F + f];
            for (size_t t = 0; t < T; t++) {
                double d = 0;
                if (mode == CT_SEQPOOL_MEAN)
                    d = real(tokens, t, n, N) ? g / (double)count : 0.0;
                else
                    d = (long)t == at ? g : 0.0;
                dx[(t * N + n) * F + f] = d;
            }
        }
}
