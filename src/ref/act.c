/*
 * act.c - reference activations, in double.
 */
#include <math.h>

#include "ref/act.h"

double ct_ref_act_f(ct_act act, double x)
{
    switch (act) {
    case CT_ACT_RELU: return x > 0 ? x : 0;
    case CT_ACT_LEAKY_RELU: return x > 0 ? x : (double)CT_LEAKY_SLOPE * x;
    case CT_ACT_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case CT_ACT_TANH: return tanh(x);
    case CT_ACT_GELU: return 0.5 * x * (1.0 + erf(x / sqrt(2.0)));
    case CT_ACT_SILU: return x / (1.0 + exp(-x));
    case CT_ACT_HARDSWISH: return x * fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0;
    case CT_ACT_RELU6: return fmin(fmax(x, 0.0), 6.0);
    default: return x;
    }
}

double ct_ref_act_df(ct_act act, double x)
{
    switch (act) {
    case CT_ACT_RELU: return x > 0 ? 1 : 0;
    case CT_ACT_LEAKY_RELU: return x > 0 ? 1 : (double)CT_LEAKY_SLOPE;
    case CT_ACT_SIGMOID: {
        double s = 1.0 / (1.0 + exp(-x));
        return s * (1 - s);
    }
    case CT_ACT_TANH: {
        double t = tanh(x);
        return 1 - t * t;
    }
    case CT_ACT_GELU:
        return 0.5 * (1.0 + erf(x / sqrt(2.0))) + x * exp(-0.5 * x * x) / sqrt(2.0 * M_PI);
    case CT_ACT_SILU: {
        double s = 1.0 / (1.0 + exp(-x));
        return s * (1 + x * (1 - s));
    }
    /* PyTorch's: (2x + 3) / 6 on [-3, 3] (both ends included) */
    case CT_ACT_HARDSWISH: return x < -3 ? 0 : x <= 3 ? x / 3 + 0.5 : 1;
    case CT_ACT_RELU6: return x > 0 && x < 6 ? 1 : 0;
    default: return 1;
    }
}

void ct_ref_act_forward(ct_act act, double *y, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        y[i] = ct_ref_act_f(act, x[i]);
}

void ct_ref_act_backward(ct_act act, double *dx, const double *dy, const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dx[i] = dy[i] * ct_ref_act_df(act, x[i]);
}
