/*
 * loss.c - reference losses, in double; the row maximum is subtracted
 * before exp so large logits stay finite, as in the kernels.
 */
#include <math.h>

#include "ref/loss.h"

/* The row's maximum m (at its first index *argmax) and s = sum_k exp(row[k]
 * - m); log sum_k exp(row[k]) = m + log(s) */
static double row_max_sum(const double *row, size_t K, size_t *argmax, double *s)
{
    size_t am = 0;
    for (size_t k = 1; k < K; k++)
        if (row[k] > row[am])
            am = k;
    double sum = 0;
    for (size_t k = 0; k < K; k++)
        sum += exp(row[k] - row[am]);
    if (argmax)
        *argmax = am;
    *s = sum;
    return row[am];
}

/* log sum_k exp(row[k]) and the first index of the maximum */
static double row_lse(const double *row, size_t K, size_t *argmax)
{
    double s;
    double m = row_max_sum(row, K, argmax, &s);
    return m + log(s);
}

void ct_ref_softmax_xent_forward(double *loss, double *correct, const double *x,
                                 const int32_t *labels, size_t N, size_t K)
{
    double sum = 0, hits = 0;
    for (size_t r = 0; r < N; r++) {
        const double *row = x + r * K;
        size_t am;
        double lse = row_lse(row, K, &am);
        int32_t lab = labels[r];
        if (lab < 0 || (size_t)lab >= K) {
            sum += NAN;
            continue;
        }
        sum += lse - row[lab];
        hits += am == (size_t)lab;
    }
    *loss = sum / (double)N;
    if (correct)
        *correct = hits;
}

void ct_ref_softmax_xent_backward(double *dx, const double *x, const int32_t *labels, size_t N,
                                  size_t K, double dloss_scale)
{
    for (size_t r = 0; r < N; r++) {
        const double *row = x + r * K;
        double *drow = dx + r * K;
        /* exp(x - m) / s, not exp(x - (m + log s)): past 2^53 log s is
         * lost in m + log s (logits near 1e30 tied after a 16-bit rounding
         * would each get probability 1) */
        double s;
        double m = row_max_sum(row, K, NULL, &s);
        int32_t lab = labels[r];
        int valid = lab >= 0 && (size_t)lab < K;
        for (size_t k = 0; k < K; k++)
            drow[k] = valid ? (exp(row[k] - m) / s - (k == (size_t)lab)) / (double)N * dloss_scale
                            : NAN;
    }
}

void ct_ref_mse_forward(double *loss, double *mae, const double *x, const double *t, size_t n)
{
    double s = 0, a = 0;
    for (size_t i = 0; i < n; i++) {
        s += (x[i] - t[i]) * (x[i] - t[i]);
        a += fabs(x[i] - t[i]);
    }
    *loss = s / (double)n;
    if (mae)
        *mae = a / (double)n;
}

void ct_ref_mse_backward(double *dx, double *dt, const double *x, const double *t, size_t n,
                         double dloss_scale)
{
    for (size_t i = 0; i < n; i++) {
        double g = 2 * (x[i] - t[i]) / (double)n * dloss_scale;
        dx[i] = g;
        if (dt)
            dt[i] = -g;
    }
}

void ct_ref_bce_forward(double *loss, double *correct, const double *x, const double *t, size_t n, size_t K)
{
    double s = 0, right = 0;
    for (size_t i = 0; i < n; i++) {
        s += (x[i] > 0 ? x[i] : 0) - x[i] * t[i] + log1p(exp(-fabs(x[i])));
        right += (x[i] > 0) == (t[i] > 0.5);
    }
    *loss = s / (double)n;
    if (correct)
        *correct = right / (double)K;
}

void ct_ref_bce_backward(double *dx, double *dt, const double *x, const double *t, size_t n, double dloss_scale)
{
    for (size_t i = 0; i < n; i++) {
        dx[i] = (1 / (1 + exp(-x[i])) - t[i]) / (double)n * dloss_scale;
        if (dt)
            dt[i] = -x[i] / (double)n * dloss_scale;
    }
}
