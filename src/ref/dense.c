/*
 * dense.c - reference dense layer and bias pieces, in double.
 */
#include "ref/dense.h"
#include "ref/act.h"

void ct_ref_dense_forward(double *y, const double *x, const double *w, const double *b, int n,
                          int in, int out)
{
    for (int i = 0; i < n; i++)
        for (int o = 0; o < out; o++) {
            double s = b ? b[o] : 0.0;
            for (int k = 0; k < in; k++)
                s += x[(size_t)i * in + k] * w[(size_t)o * in + k];
            y[(size_t)i * out + o] = s;
        }
}

void ct_ref_dense_backward(double *dx, double *dw, double *db, const double *dy, const double *x,
                           const double *w, int n, int in, int out)
{
    if (dx)
        for (int i = 0; i < n; i++)
            for (int k = 0; k < in; k++) {
                double s = 0;
                for (int o = 0; o < out; o++)
                    s += dy[(size_t)i * out + o] * w[(size_t)o * in + k];
                dx[(size_t)i * in + k] = s;
            }
    if (dw)
        for (int o = 0; o < out; o++)
            for (int k = 0; k < in; k++) {
                double s = 0;
                for (int i = 0; i < n; i++)
                    s += dy[(size_t)i * out + o] * x[(size_t)i * in + k];
                dw[(size_t)o * in + k] += s;
            }
    if (db)
        ct_ref_bias_backward(db, dy, n, out, 1);
}

void ct_ref_bias_act_forward(double *y, const double *x, const double *b, int n, int c, int hw,
                             ct_act act)
{
    for (int i = 0; i < n; i++)
        for (int ch = 0; ch < c; ch++)
            for (int p = 0; p < hw; p++) {
                size_t at = ((size_t)i * c + ch) * hw + p;
                y[at] = ct_ref_act_f(act, x[at] + (b ? b[ch] : 0.0));
            }
}

void ct_ref_bias_backward(double *db, const double *dy, int n, int c, int hw)
{
    for (int ch = 0; ch < c; ch++) {
        double s = 0;
        for (int i = 0; i < n; i++)
            for (int p = 0; p < hw; p++)
                s += dy[((size_t)i * c + ch) * hw + p];
        db[ch] += s;
    }
}
